#!/usr/bin/env bash
# healthy.sh - live-lab load: a user-space CPU burner on one CPU, the rest idle.
#
# USAGE: test/live/healthy.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/healthy.sh -d 20
#
# Runs one pure user-space spin loop pinned to the last CPU (no syscalls). A correct
# diagnosis reports no finding at medium or high confidence. Changes no setting.
LAB_NAME="healthy"
LAB_EXPECT="none"
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

lab_cpus
lab_spawn taskset -c "${LAB_CPUS[-1]}" awk 'BEGIN { for (;;) x = (x * 7 + 1) % 1000003 }'
sleep 1
lab_ready
lab_hold
