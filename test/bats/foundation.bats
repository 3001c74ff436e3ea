#!/usr/bin/env bats
# The entrypoint's contract: dispatch, usage blocks with examples, exit codes, symlinks, install.
load test_helper

@test "flamediag --help prints usage with examples, exit 0" {
	run -0 "$FLAMEDIAG" --help
	assert_output --partial "USAGE: flamediag SUBCOMMAND"
	assert_output --partial "eg,"
}

@test "no arguments: usage on stderr, exit 2" {
	run -2 --separate-stderr "$FLAMEDIAG"
	assert_equal "$output" ""
	[[ $stderr == *"USAGE: flamediag"* ]] || false
}

@test "unknown subcommand: usage on stderr, exit 2" {
	run -2 --separate-stderr "$FLAMEDIAG" frobnicate
	[[ $stderr == *"unknown subcommand 'frobnicate'"* ]] || false
	[[ $stderr == *"USAGE: flamediag"* ]] || false
}

@test "unknown top-level flag: exit 2" {
	run -2 --separate-stderr "$FLAMEDIAG" --frobnicate
	[[ $stderr == *"unknown option"* ]] || false
}

@test "version prints the VERSION file" {
	run -0 "$FLAMEDIAG" version
	assert_output "flamediag $(cat "$FLAMEDIAG_ROOT/lib/VERSION")"
}

@test "the usage lists every subcommand: bin/flamediag's shell ones and lib/flamediag/commands/*.py" {
	local shell_subs modules
	shell_subs=$(sed -n 's/^SHELL_SUBCOMMANDS="\(.*\)"$/\1/p' "$FLAMEDIAG")
	modules=$(find "$FLAMEDIAG_ROOT/lib/flamediag/commands" -name '[a-z]*.py' -printf '%f\n' | sed 's/\.py$//')
	[ -n "$shell_subs" ] && [ -n "$modules" ]
	assert_equal "$(usage_subcommands | sort)" "$(printf '%s\n' $shell_subs $modules | sort)"
}

@test "every subcommand's --help ends with examples" {
	for sub in $(usage_subcommands); do
		run -0 "$FLAMEDIAG" "$sub" --help
		[[ $output == *"examples:"* || $output == *"eg,"* ]] || { echo "$sub: no examples"; false; }
	done
}

@test "help SUB equals SUB --help" {
	run -0 "$FLAMEDIAG" diagnose --help
	local direct=$output
	run -0 "$FLAMEDIAG" help diagnose
	assert_equal "$output" "$direct"
}

@test "every subcommand rejects an unknown flag with exit 2 and usage on stderr" {
	for sub in $(usage_subcommands); do
		run --separate-stderr "$FLAMEDIAG" "$sub" --no-such-flag
		[ "$status" -eq 2 ] || { echo "$sub exited $status"; false; }
		[[ ${stderr,,} == *usage* ]] || { echo "$sub: no usage on stderr"; false; }
	done
}

@test "works from another directory and through a symlink" {
	ln -s "$FLAMEDIAG" "$BATS_TEST_TMPDIR/fd"
	cd /
	run -0 "$BATS_TEST_TMPDIR/fd" version
	assert_output --partial "flamediag "
	mkdir -p "$BATS_TEST_TMPDIR/a/b"
	ln -s ../../fd "$BATS_TEST_TMPDIR/a/b/fd2"
	run -0 "$BATS_TEST_TMPDIR/a/b/fd2" version
}

@test "make install PREFIX=tmp gives a working flamediag" {
	local prefix=$BATS_TEST_TMPDIR/prefix
	FLAMEDIAG_INSTALL_NO_VENV=1 run -0 make -s -C "$FLAMEDIAG_ROOT" install PREFIX="$prefix"
	cd "$BATS_TEST_TMPDIR"
	run -0 "$prefix/bin/flamediag" version
	assert_output "flamediag $(cat "$FLAMEDIAG_ROOT/lib/VERSION")"
	assert_dir_exists "$prefix/lib/flamediag/playbooks"
}
