#!/usr/bin/env bash
# thp-compaction.sh - live-lab load: THP faults stalling in direct compaction.
#
# USAGE: test/live/thp-compaction.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/thp-compaction.sh -d 20
#
# Sets THP enabled=always and defrag=always, then leaves no free 2 MiB block anywhere:
#  1. drops the page cache, then reserves all free memory but LAB_THP_LEAVE_MIB (default 3072)
#     as hugetlb pages (vm.nr_hugepages: taken in about a second, without touching the memory);
#  2. thp_frag fills 2 GiB with two interleaved 4 KiB arenas, frees one and mlock()s the
#     other (vm.compact_unevictable_allowed=0, so compaction cannot move them; the 1 GiB of
#     holes is the margin for every other allocation), holds the
#     remaining free 2 MiB blocks as huge pages, then faults MADV_HUGEPAGE regions in a loop:
#     every fault enters direct compaction, which scans the holes and fails (compact_stall,
#     compact_fail), and falls back to 4 KiB pages.
# Why the reservation: this kernel initialises memory lazily (deferred_init=lazy) and a
# 24 GiB host has ~23 GiB free, so fragmenting by touching pages would take minutes
# (~0.5 GiB/s here); without it a THP fault always finds a free block (compact_stall +0).
# Restores THP, both sysctls and removes every process on exit (see lib.bash); loads stop
# before vm.nr_hugepages is given back.
LAB_NAME="thp-compaction"
LAB_EXPECT="thp-compaction"
LAB_EVIDENCE='compact_'
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"

LAB_THP_LEAVE_MIB=${LAB_THP_LEAVE_MIB:-3072}
FRAG_MIB=1024

# The expected finding needs THP faults entering direct compaction. If the bundle shows none
# (compact_stall +0) the kernel found free 2 MiB blocks despite the reservation: skip with the
# numbers rather than fail flamediag for the kernel's choice. Any other miss fails, and its
# reason carries the THP counters of the window.
lab_explain_miss() {
	local bundle=$1 stall fallback
	stall=$(lab_vmstat_delta "$bundle" compact_stall)
	fallback=$(lab_vmstat_delta "$bundle" thp_fault_fallback)
	if [ "$stall" -ne 0 ]; then
		echo "MISS: thp-compaction: window counters compact_stall +$stall, compact_fail +$(lab_vmstat_delta "$bundle" compact_fail), thp_fault_alloc +$(lab_vmstat_delta "$bundle" thp_fault_alloc), thp_fault_fallback +$fallback" >&2
		return 1
	fi
	echo "SKIP: thp-compaction: THP faults never entered direct compaction on this kernel (compact_stall +0, thp_fault_fallback +$fallback) although the load held every free 2 MiB block it found; playbook thp-compaction needs that stall" >&2
	exit 77
}

# free_mib: free memory now, in MiB (memory a lazily initialising kernel has not touched yet counts).
free_mib() {
	awk '/^MemFree:/ { print int($2 / 1024) }' /proc/meminfo
}

# reserve_hugetlb: hold all free memory but LAB_THP_LEAVE_MIB as hugetlb pages. The page cache
# is dropped first (a one-off action, nothing to restore): left in place, THP faults reclaim it
# and get whole 2 MiB blocks without compacting (seen in CI after the test suite had filled the
# cache: compact_stall +721, thp_fault_alloc +34 k, no compaction in the stacks).
reserve_hugetlb() {
	sync
	echo 3 >/proc/sys/vm/drop_caches || lab_die "cannot drop the page cache (/proc/sys/vm/drop_caches)"
	local pages=$((($(free_mib) - LAB_THP_LEAVE_MIB) / 2))
	[ "$pages" -gt 0 ] || return 0
	lab_sysctl vm.nr_hugepages "$pages"
	lab_log "reserved $(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo) hugetlb pages; $(free_mib) MiB left free"
}

compact_stalls() {
	awk '$1 == "compact_stall" { print $2 }' /proc/vmstat
}

# wait_for_compaction_stalls: until THP faults stall in direct compaction (at most 30 s).
wait_for_compaction_stalls() {
	local start tries
	start=$(compact_stalls)
	for tries in $(seq 150); do
		lab_loads_alive || lab_die "thp_frag exited during setup"
		[ "$(compact_stalls)" = "$start" ] || return 0
		sleep 0.2
	done
	lab_log "no compaction stall after $((tries / 5)) s; capturing anyway"
}

lab_start "$@"

thp=/sys/kernel/mm/transparent_hugepage
[ -d "$thp" ] || lab_skip "kernel has no transparent hugepages ($thp missing)"
[ -w /proc/sys/vm/compact_memory ] || lab_skip "kernel built without CONFIG_COMPACTION (/proc/sys/vm/compact_memory missing)"
frag=$(lab_build thp_frag) || exit $?

lab_write "$thp/enabled" always
lab_write "$thp/defrag" always
lab_sysctl vm.compact_unevictable_allowed 0
reserve_hugetlb
THP_FRAG_MLOCK=1 THP_FRAG_TAKE_MIB=$LAB_THP_LEAVE_MIB lab_spawn "$frag" "$FRAG_MIB" "${LAB_LOAD_SECONDS}"
wait_for_compaction_stalls
lab_ready
lab_hold
