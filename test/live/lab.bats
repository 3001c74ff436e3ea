#!/usr/bin/env bats
# Live lab (issue 8): produce each problem for real, capture it with the real
# `flamediag capture`, diagnose the bundle and check the expected finding plus at least
# one corroborating metric/setting. Needs root; artefacts of a failing scenario stay in
# test-artifacts/live/<scenario>/ (bundle, report.md, findings.json, logs).
load ../bats/test_helper

# up to one other scenario's wait for the lab lock + this one
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-400}

setup_file() {
	export LIVE_ARTIFACTS=$FLAMEDIAG_ROOT/test-artifacts/live
}

# live_scenario NAME: run it; pass, skip with its reason, or fail keeping the artefacts.
live_scenario() {
	require_root
	[ "${FLAMEDIAG_SKIP_LIVE:-0}" = 0 ] || skip "FLAMEDIAG_SKIP_LIVE is set"
	local out=$LIVE_ARTIFACTS/$1
	run "$FLAMEDIAG_ROOT/test/live/run-scenario" "$1" "$out"
	if [ "$status" -eq 77 ]; then
		rm -rf "$out"
		skip "$(cut -f8 <<<"$output")"
	fi
	echo "$output"
	[ "$status" -eq 0 ] || { echo "artefacts kept in $out"; return 1; }
	rm -rf "$out"
}

@test "live: thp-compaction is diagnosed with compact_* evidence" {
	live_scenario thp-compaction
}

@test "live: memcg-reclaim is diagnosed with the cgroup's failcnt" {
	live_scenario memcg-reclaim
}

@test "live: nic-softirq names CPU 0 with NET_RX / %soft evidence" {
	live_scenario nic-softirq
}

@test "live: futex-contention is diagnosed" {
	live_scenario futex-contention
}

@test "live: sched-overhead is diagnosed" {
	live_scenario sched-overhead
}

@test "live: tlb-shootdown is diagnosed with TLB IPI evidence" {
	live_scenario tlb-shootdown
}

@test "live: a healthy host (user-space burner) has no finding at medium or high" {
	live_scenario healthy
}
