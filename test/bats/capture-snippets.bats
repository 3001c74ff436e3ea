#!/usr/bin/env bats
# Capture's built-in collectors (lib/capture/snippets.bash) on made-up sysfs trees.
load test_helper

SNIPPETS=$FLAMEDIAG_ROOT/lib/capture/snippets.bash

# cgroup DIR USAGE [FAILCNT] -> a v1 memory cgroup directory
v1_cgroup() {
	mkdir -p "$1"
	echo "$2" >"$1/memory.usage_in_bytes"
	echo $((1 << 30)) >"$1/memory.limit_in_bytes"
	echo "${3:-0}" >"$1/memory.failcnt"
}

@test "memcg (v1): a small cgroup hitting its limit ranks before bigger ones that never do" {
	local mem=$BATS_TEST_TMPDIR/sys/fs/cgroup/memory
	v1_cgroup "$mem" 900000000
	for i in 1 2 3 4 5 6 7 8 9 10 11; do v1_cgroup "$mem/big$i" $((500000000 + i)); done
	v1_cgroup "$mem/small" 4096 731
	run -0 bash "$SNIPPETS" memcg "$BATS_TEST_TMPDIR/sys"
	assert_equal "$(printf '%s\n' "$output" | grep -m1 '^==')" "== /small =="
	assert_output --partial "memory.failcnt: 731"
	assert_equal "$(printf '%s\n' "$output" | grep -c '^==')" 10
}

@test "memcg (v2): memory.events high+max rank first" {
	local cg=$BATS_TEST_TMPDIR/sys/fs/cgroup
	mkdir -p "$cg/big" "$cg/tight"
	echo "cpu memory" >"$cg/cgroup.controllers"
	echo 900000000 >"$cg/big/memory.current"
	printf 'low 0\nhigh 0\nmax 0\noom 0\n' >"$cg/big/memory.events"
	echo 4096 >"$cg/tight/memory.current"
	printf 'low 0\nhigh 40\nmax 3\noom 0\n' >"$cg/tight/memory.events"
	run -0 bash "$SNIPPETS" memcg "$BATS_TEST_TMPDIR/sys"
	assert_equal "$(printf '%s\n' "$output" | grep -m1 '^==')" "== /tight =="
	assert_output --partial "memory.events: high 40"
}
