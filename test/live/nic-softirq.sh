#!/usr/bin/env bash
# nic-softirq.sh - live-lab load: NET_RX softirq concentrated on CPU 0.
#
# USAGE: test/live/nic-softirq.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/nic-softirq.sh -d 20
#
# Builds a veth pair between two network namespaces of its own (10.249.<pid>/30,
# nothing outside them), floods 64-byte UDP datagrams from a sender pinned to CPU 0 to
# a sink pinned to the last CPU. veth hands each packet to the per-CPU backlog of the
# sending CPU, so the whole receive path (net_rx_action -> process_backlog) runs in
# NET_RX softirq on CPU 0. Deletes both namespaces and the processes on exit.
LAB_NAME="nic-softirq"
LAB_EXPECT="nic-softirq"
LAB_EVIDENCE='NET_RX|soft'
LAB_CPU=0
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"

command -v ip >/dev/null || lab_skip "iproute2 is not installed (apt-get install iproute2)"
lab_cpus
[ "${#LAB_CPUS[@]}" -ge 2 ] || lab_skip "needs >= 2 CPUs to show softirq concentrated on one CPU (have ${#LAB_CPUS[@]})"
[ "${LAB_CPUS[0]}" = "$LAB_CPU" ] || lab_skip "CPU $LAB_CPU is not in this process's affinity (${LAB_CPUS[*]})"
last_cpu=${LAB_CPUS[-1]}
flood=$(lab_build udp_flood) || exit $?

lab_netns tx
tx=$REPLY
lab_netns rx
rx=$REPLY
net="10.249.$(($$ % 250)).0"
ip link add fdlab0 netns "$tx" type veth peer name fdlab1 netns "$rx" ||
	lab_skip "cannot create a veth pair (kernel without CONFIG_VETH?)"
ip -n "$tx" addr add "${net%.0}.1/30" dev fdlab0 || lab_die "cannot address fdlab0"
ip -n "$rx" addr add "${net%.0}.2/30" dev fdlab1 || lab_die "cannot address fdlab1"
ip -n "$tx" link set fdlab0 up || lab_die "cannot bring fdlab0 up"
ip -n "$rx" link set fdlab1 up || lab_die "cannot bring fdlab1 up"

lab_spawn ip netns exec "$rx" taskset -c "$last_cpu" "$flood" recv 9000 "${LAB_LOAD_SECONDS}"
sleep 0.3
lab_spawn ip netns exec "$tx" taskset -c 0 "$flood" send "${net%.0}.2" 9000 "${LAB_LOAD_SECONDS}"
sleep 1
lab_ready
lab_hold
