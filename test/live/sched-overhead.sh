#!/usr/bin/env bash
# sched-overhead.sh - live-lab load: context-switch storm (pipe ping-pong + sched_yield).
#
# USAGE: test/live/sched-overhead.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/sched-overhead.sh -d 20
#
# Builds and runs test/live/src/pingpong.c, tasks ping-ponging one byte over pipes:
#  - one pair per CPU with both tasks on that CPU ("local"): every byte is a switch with no idle
#    time in between, so __schedule/finish_task_switch hold a steady ~40 % of busy samples;
#  - one pair split across two CPUs ("cross"): every byte is a cross-CPU wakeup, a
#    rescheduling IPI (the RES evidence).
# Cross pairs alone were not enough: with cpu-clock sampling, the wakeup cost (irqs off) lands
# on anon_pipe_write's _raw_spin_unlock_irqrestore, and the scheduler's share swung between
# 5 % and 25 % from run to run. (stress-ng --switch/--yield at raised priority starved the
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
lab_spawn "$pingpong" "$cpus" "$LAB_LOAD_SECONDS" local
lab_spawn "$pingpong" 1 "$LAB_LOAD_SECONDS" cross
sleep 1
lab_ready
lab_hold
