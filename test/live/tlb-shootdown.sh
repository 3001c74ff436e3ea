#!/usr/bin/env bash
# tlb-shootdown.sh - live-lab load: TLB-shootdown IPI storm.
#
# USAGE: test/live/tlb-shootdown.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/tlb-shootdown.sh -d 20
#
# Builds and runs test/live/src/tlb_storm.c: one thread pinned per CPU in one mm, each
# faulting a page in and zapping it with madvise(MADV_DONTNEED); every zap flushes
# the other CPUs' TLBs by IPI (flush_tlb_mm_range -> smp_call_function_many_cond,
# the TLB row of /proc/interrupts). Changes no setting.
LAB_NAME="tlb-shootdown"
LAB_EXPECT="tlb-shootdown"
LAB_EVIDENCE='TLB'
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

cpus=$(nproc)
[ "$cpus" -ge 2 ] || lab_skip "needs >= 2 CPUs (a TLB shootdown only goes to other CPUs; have $cpus)"
storm=$(lab_build tlb_storm) || exit $?
lab_spawn "$storm" "${LAB_LOAD_SECONDS}"
sleep 1
lab_ready
lab_hold
