#!/usr/bin/env bash
# sched-overhead.sh - live-lab load: context-switch storm (pipe ping-pong + sched_yield).
#
# USAGE: test/live/sched-overhead.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/sched-overhead.sh -d 20
#
# Runs stress-ng --switch (pairs of tasks ping-ponging one byte over pipes, so every
# message is a wakeup and a context switch) and --yield (sched_yield loops).
# Changes no setting; kills the stressors on exit.
LAB_NAME="sched-overhead"
LAB_EXPECT="sched-overhead"
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

command -v stress-ng >/dev/null || lab_skip "stress-ng is not installed (apt-get install stress-ng)"
lab_spawn stress-ng --switch 2 --yield 2 --timeout "${LAB_LOAD_SECONDS}s" --quiet
sleep 1
lab_ready
lab_hold
