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

# system_state: everything the scenarios may change, in one comparable text.
system_state() {
	cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
	cat /proc/sys/vm/nr_hugepages /proc/sys/vm/compact_unevictable_allowed
	find /sys/fs/cgroup/memory /sys/fs/cgroup -maxdepth 1 -name 'flamediag-lab-*' 2>/dev/null
	ip netns list 2>/dev/null | grep fdlab
	find /var/tmp -maxdepth 1 -name 'flamediag-lab-*' 2>/dev/null
	local load
	for load in thp_frag udp_flood futex_hammer tlb_storm pingpong; do pgrep -x "$load"; done
	true
}

@test "live: scenarios restore THP, cgroups, netns, files and processes when interrupted" {
	require_root
	[ "${FLAMEDIAG_SKIP_LIVE:-0}" = 0 ] || skip "FLAMEDIAG_SKIP_LIVE is set"
	exec 8<>"${LAB_LOCK:-/run/lock/flamediag-live-lab.lock}"
	flock -w 300 8	# no other live-lab scenario may change the state meanwhile
	local before scenario signal ready pid expected ignored
	# a shell ignores SIGINT for good when it was started as a background job of a shell without job
	# control (`cmd &` in a script); its children cannot trap it then, and a scenario would run to its end
	ignored=$(awk '/^SigIgn:/ {print $2}' "/proc/$BASHPID/status")
	(( (16#$ignored & 2) == 0 )) || { echo "SIGINT is ignored in this shell: start the suite in the foreground, or from a shell with job control (set -m)"; false; }
	before=$(system_state)
	for scenario in thp-compaction memcg-reclaim nic-softirq; do
		for signal in INT TERM; do
			expected=143
			[ "$signal" = TERM ] || expected=130
			ready=$BATS_TEST_TMPDIR/$scenario.$signal.ready
			set -m	# else a background job starts with SIGINT ignored, and bash cannot trap it
			"$FLAMEDIAG_ROOT/test/live/$scenario.sh" -d 60 -r "$ready" 2>"$BATS_TEST_TMPDIR/$scenario.log" 8>&- &
			pid=$!
			set +m
			while [ ! -s "$ready" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
			[ -s "$ready" ] || { cat "$BATS_TEST_TMPDIR/$scenario.log"; false; }
			[ "$(system_state)" != "$before" ] || { echo "$scenario changed nothing visible"; false; }
			kill "-$signal" "$pid"
			status=0
			wait "$pid" || status=$?
			[ "$status" -eq "$expected" ] || { echo "$scenario exited $status on SIG$signal"; false; }
			[ "$(system_state)" = "$before" ] || { echo "$scenario left after SIG$signal:"; diff <(echo "$before") <(system_state); false; }
		done
	done
	exec 8>&-
}
