#!/usr/bin/env bats
# shellcheck over every shell file we ship and test with (bats-core's shellcheck.sh idea).
load test_helper

@test "shellcheck is clean on bin/, lib/, bench/, test/ shell scripts" {
	command -v shellcheck >/dev/null || skip "shellcheck not installed (make deps)"
	cd "$FLAMEDIAG_ROOT"
	local files=()
	while IFS= read -r f; do
		head -c 80 "$f" | grep -qE '^#!.*(bash|/sh)' && files+=("$f")
	done < <(git ls-files --cached --others --exclude-standard bin lib bench test .ci packaging | grep -v '/fixtures/' | grep -vE '\.(py|md|json|txt|gz|svg|yaml|yml)$')
	[ ${#files[@]} -gt 0 ]
	run shellcheck -x -S warning "${files[@]}"
	assert_success
}
