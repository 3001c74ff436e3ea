#!/usr/bin/env bash
# futex-contention.sh - live-lab load: many threads hammering two futexes.
#
# USAGE: test/live/futex-contention.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/futex-contention.sh -d 20
#
# Builds and runs test/live/src/futex_hammer.c: 4 threads, 2 futex words, half
# FUTEX_WAIT_PRIVATE and half FUTEX_WAKE_PRIVATE in a loop. Changes no setting.
LAB_NAME="futex-contention"
LAB_EXPECT="futex-contention"
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

hammer=$(lab_build futex_hammer) || exit $?
# Not boosted: a futex storm at raised priority slowed the capture itself ~4x (145 s per run);
# at nice 0 it still takes ~60 % of busy samples.
LAB_NICE=0 lab_spawn "$hammer" 4 2 "${LAB_LOAD_SECONDS}"
sleep 1
lab_ready
lab_hold
