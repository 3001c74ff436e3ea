#!/usr/bin/env bash
# sched-overhead.sh - live-lab load: context-switch storm (pipe ping-pong + sched_yield).
#
# USAGE: test/live/sched-overhead.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/sched-overhead.sh -d 20
#
# Builds and runs test/live/src/pingpong.c: two pairs of tasks, each pair pinned to two
# different CPUs, ping-ponging one byte over pipes, so every byte is a cross-CPU wakeup and a
# context switch on both sides. (stress-ng --switch/--yield at raised priority starved the
# capture itself for minutes on a loaded 2-CPU host: sched_yield loops never block.)
# Changes no setting; kills the tasks on exit.
LAB_NAME="sched-overhead"
LAB_EXPECT="sched-overhead"
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

cpus=$(nproc)
[ "$cpus" -ge 2 ] || lab_skip "needs >= 2 CPUs for cross-CPU wakeups (have $cpus)"
pingpong=$(lab_build pingpong) || exit $?
lab_spawn "$pingpong" 2 "$LAB_LOAD_SECONDS"
sleep 1
lab_ready
lab_hold
