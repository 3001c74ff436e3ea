#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr is set by `run --separate-stderr`
# The packages, for real: `make dist` from a copy of the repository, `pip install` of that copy
# into a fresh venv (the diagnoser then runs from /tmp, its playbooks found inside the package),
# the bash-only capture kit capturing a real bundle with the repository hidden, and the .deb
# installed and removed with dpkg.
load test_helper

export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-600}

# One copy of the working tree and one `make dist` of it, shared by the tests of this file.
setup_file() {
	local copy=$BATS_FILE_TMPDIR/src
	mkdir -p "$copy"
	tar -C "$FLAMEDIAG_ROOT" --exclude=./.venv --exclude=./.git --exclude=./test-artifacts --exclude=./dist \
		--exclude=./build --exclude='*.egg-info' --exclude=./.hypothesis --exclude=__pycache__ -cf - . | tar -xf - -C "$copy"
	# the build front end comes from the project's venv (requirements-dev.txt)
	make -C "$copy" dist VENV="$FLAMEDIAG_ROOT/.venv" >"$BATS_FILE_TMPDIR/dist.out" 2>&1 3>&-
	echo $? >"$BATS_FILE_TMPDIR/dist.rc"
}

setup() {
	COPY=$BATS_FILE_TMPDIR/src
	VERSION=$(cat "$FLAMEDIAG_ROOT/lib/VERSION")
	KIT=$COPY/dist/flamediag-capture-$VERSION.tar.gz
}

@test "make dist: sdist, wheel and capture kit, each in dist/SHA256SUMS" {
	cat "$BATS_FILE_TMPDIR/dist.out"
	assert_equal "$(cat "$BATS_FILE_TMPDIR/dist.rc")" 0
	assert_file_exists "$COPY/dist/flamediag-$VERSION.tar.gz"
	assert_file_exists "$COPY/dist/flamediag-$VERSION-py3-none-any.whl"
	assert_file_exists "$KIT"
	run -0 bash -c "cd '$COPY/dist' && sha256sum -c SHA256SUMS"
	assert_equal "$(wc -l <"$COPY/dist/SHA256SUMS")" 3
	# the sdist holds what a wheel needs: the bash side and the playbooks
	run -0 tar -tzf "$COPY/dist/flamediag-$VERSION.tar.gz"
	assert_line "flamediag-$VERSION/playbooks/zone-reclaim.md"
	assert_line "flamediag-$VERSION/lib/capture/runner.bash"
	assert_line "flamediag-$VERSION/bin/flamediag"
}

@test "capture kit: one top directory, the bash side only, its own SHA256SUMS verifies" {
	local top=flamediag-capture-$VERSION dir=$BATS_TEST_TMPDIR/kit
	run -0 bash -c "tar -tzf '$KIT' | cut -d/ -f1 | sort -u"
	assert_output "$top"
	run -0 tar -tzf "$KIT"
	assert_line "$top/bin/flamediag"
	assert_line "$top/lib/capture.bash"
	assert_line "$top/lib/watch.bash"
	assert_line "$top/lib/collectors.tsv"
	assert_line "$top/README.md"
	refute_line --partial ".py"
	refute_line --partial "playbooks/"
	mkdir -p "$dir" && tar -xzf "$KIT" -C "$dir"
	run -0 bash -c "cd '$dir/$top' && sha256sum -c --quiet SHA256SUMS"
	run -0 "$dir/$top/bin/flamediag" version
	assert_output "flamediag $VERSION"
	# a Python subcommand says where to run it instead of a Python traceback
	run -2 "$dir/$top/bin/flamediag" diagnose x.tar.gz
	assert_output --partial "not in this capture-only kit"
}

@test "pip install of a repository copy into a fresh venv: diagnose runs from /tmp with the shipped playbooks" {
	local venv=$BATS_TEST_TMPDIR/venv out=$BATS_TEST_TMPDIR/diag n
	python3 -m venv "$venv"
	run -0 "$venv/bin/pip" install -q --disable-pip-version-check "$COPY"
	cd /tmp
	run -0 "$venv/bin/flamediag" version
	assert_output "flamediag $VERSION"
	# every playbook of the repository is found without the checkout
	n=$(find "$FLAMEDIAG_ROOT/playbooks" -name '*.md' | wc -l)
	run -0 "$venv/bin/flamediag" playbooks
	assert_equal "$(printf '%s\n' "$output" | grep -c '^[a-z0-9][a-z0-9-]*  ')" "$n"
	run -0 "$venv/bin/flamediag" diagnose "$FLAMEDIAG_ROOT/samples/zone-reclaim-rhel6" -o "$out" --format json
	assert_output --partial '"id": "zone-reclaim"'
	assert_file_exists "$out/report.md"
	assert_file_exists "$out/flamegraph.svg"
	# the bash side ships too: capture's usage comes from the installed copy
	run -0 "$venv/bin/flamediag" help capture
	assert_line --partial "USAGE: flamediag capture"
	run -2 "$venv/bin/flamediag" no-such-subcommand
	# no module of the package is left out of the explicit package list in pyproject.toml
	run -0 bash -c "cd '$FLAMEDIAG_ROOT/lib' && find flamediag -name '*.py' ! -path '*/__pycache__/*' | sort"
	local want=$output
	run -0 bash -c "cd \"\$('$venv/bin/python' -c 'import flamediag, os; print(os.path.dirname(flamediag.__path__[0]))')\" && find flamediag -name '*.py' ! -path '*/__pycache__/*' ! -path 'flamediag/_home/*' | sort"
	assert_equal "$output" "$want"
}

@test "capture kit extracted elsewhere captures a real bundle with the repository hidden" {
	require_root
	command -v perf >/dev/null || skip "perf not installed"
	local dir=$BATS_TEST_TMPDIR/host top=flamediag-capture-$VERSION
	mkdir -p "$dir/out" && tar -xzf "$KIT" -C "$dir"
	# a private mount namespace with an empty tmpfs over the repository: nothing can reach it
	run --separate-stderr timeout -k 10 180 unshare --mount --propagation private bash -c '
		mount -t tmpfs none "$1" || exit 99
		[ -z "$(ls -A "$1")" ] || exit 98
		cd "$2" && env -u FLAMEDIAG_HOME -u FLAMEDIAG_PYTHON FLAMEDIAG_LOCK="$2/lock" \
			"$2/'"$top"'/bin/flamediag" capture -d 2 --no-bpf -o "$2/out"' - "$FLAMEDIAG_ROOT" "$dir" 3>&-
	echo "$stderr"
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	local bundle
	bundle=$(printf '%s\n' "$output" | tail -n 1)
	[[ $bundle == "$dir"/out/flamediag-*.tar.gz ]] || false
	assert_file_exists "$bundle"
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/manifest.json' | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m[\"complete\"], [c[\"status\"] for c in m[\"collectors\"] if c[\"name\"] == \"perf.record\"])'"
	assert_output "True ['ok']"
	run -0 tar -tzf "$bundle"
	assert_line --partial "perf/perf.script.gz"
}

@test "make deb: dpkg -i puts flamediag under /usr/lib/flamediag and /usr/bin; dpkg -r removes every file" {
	require_root
	command -v dpkg-deb >/dev/null || skip "dpkg-deb not installed (not a Debian host)"
	! dpkg -s flamediag >/dev/null 2>&1 || skip "a flamediag package is already installed on this host: not touching it"
	[ ! -e /usr/bin/flamediag ] || skip "/usr/bin/flamediag exists already: not touching it"
	run -0 make -C "$COPY" deb
	local deb=$COPY/dist/flamediag_${VERSION}_all.deb
	assert_file_exists "$deb"
	DEB_INSTALLED=1
	run -0 dpkg -i "$deb"
	run -0 /usr/bin/flamediag version
	assert_output "flamediag $VERSION"
	assert_file_exists /usr/lib/flamediag/playbooks/zone-reclaim.md
	assert_file_exists /lib/systemd/system/flamediag-watch.service
	if command -v systemd-analyze >/dev/null; then
		run -0 systemd-analyze verify /lib/systemd/system/flamediag-watch.service
	fi
	run -0 /usr/bin/flamediag watch --help
	local py=python3
	python3 -c 'import jinja2, yaml, jsonschema, markdown_it' 2>/dev/null || py=$FLAMEDIAG_ROOT/.venv/bin/python
	cd /tmp
	run -0 env FLAMEDIAG_PYTHON="$py" /usr/bin/flamediag diagnose "$FLAMEDIAG_ROOT/samples/zone-reclaim-rhel6" \
		-o "$BATS_TEST_TMPDIR/deb-diag" --format json
	assert_output --partial '"id": "zone-reclaim"'
	run -0 dpkg -r flamediag
	DEB_INSTALLED=""
	assert_file_not_exists /usr/bin/flamediag
	assert_file_not_exists /usr/lib/flamediag
	assert_file_not_exists /lib/systemd/system/flamediag-watch.service
	run -0 dpkg -P flamediag
	run -1 dpkg -s flamediag
}

teardown() {
	# a failed assertion between install and removal must not leave the package on the host
	if [ -n "${DEB_INSTALLED:-}" ]; then
		dpkg -P flamediag >/dev/null 2>&1 || true
	fi
}
