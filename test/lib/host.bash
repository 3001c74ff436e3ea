# host.bash - what THIS host should give, read from the host itself (sourced by the bats suites
# and the live lab). A fresh CI host of the same kind may lack cpuidle states, cpufreq policies,
# the ss diag modules, PSI, a physical NIC or cgroup v1: a test asserts what the host in front of
# it gives, never what the machine it was written on had. The Python twin is
# test/python/hostinfo.py; test_hostinfo.py checks that both answer alike here.
# shellcheck shell=bash

# host_collector_status NAME -> ok, or skipped (the capture records a reason) when this host lacks
# the collector's source. Mirrors the applicability tests of lib/capture/snippets.bash and the
# kmods predicate of lib/capture/runner.bash; every other collector gives ok.
host_collector_status() {
	case $1 in
	cpuidle) [ -d /sys/devices/system/cpu/cpu0/cpuidle ] && echo ok || echo skipped ;;
	cpufreq) compgen -G '/sys/devices/system/cpu/cpufreq/policy*' >/dev/null && echo ok || echo skipped ;;
	thp) [ -d /sys/kernel/mm/transparent_hugepage ] && echo ok || echo skipped ;;
	clocksource) [ -d /sys/devices/system/clocksource/clocksource0 ] && echo ok || echo skipped ;;
	proc.pressure)
		if [ -r /proc/pressure/cpu ] || [ -r /proc/pressure/memory ] || [ -r /proc/pressure/io ]; then echo ok; else echo skipped; fi
		;;
	nic.irqs) [ -n "$(host_physical_nics)" ] && echo ok || echo skipped ;;
	memcg) [ -n "$(host_memcg_version)" ] && echo ok || echo skipped ;;
	ss)
		if [ ! -r /proc/modules ] || { grep -q '^inet_diag ' /proc/modules && grep -q '^tcp_diag ' /proc/modules; }; then
			echo ok
		else
			echo skipped
		fi
		;;
	*) echo ok ;;
	esac
}

# NUMA nodes as the capture counts them (a host without /sys/devices/system/node has one).
host_numa_nodes() {
	local nodes
	nodes=$(find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l)
	echo $((nodes > 0 ? nodes : 1))
}

# The memcg interface this host mounts: v1 or v2 (empty when none).
host_memcg_version() {
	if [ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ]; then
		echo v1
	elif grep -qsw memory /sys/fs/cgroup/cgroup.controllers; then
		echo v2
	fi
}

# Online CPU ids, one a line, as the capture and mpstat see them (the cpuN lines of /proc/stat);
# `nproc` counts the CPUs this process may use, fewer under taskset or a cpuset.
host_online_cpus() {
	awk '/^cpu[0-9]/ { print substr($1, 4) }' /proc/stat
}

# The CPUs this process may run on, one a line (for taskset): the online ones in its affinity.
host_allowed_cpus() {
	local list range cpu online
	list=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
	online=" $(host_online_cpus | tr '\n' ' ')"
	for range in ${list//,/ }; do
		for ((cpu = ${range%-*}; cpu <= ${range#*-}; cpu++)); do
			[[ $online == *" $cpu "* ]] && echo "$cpu"
		done
	done
	return 0
}

# Physical NICs the way the capture picks them: a device link, not under devices/virtual.
host_physical_nics() {
	local link
	for link in /sys/class/net/*; do
		[ -e "$link/device" ] || continue
		case $(readlink -f "$link") in */devices/virtual/*) continue ;; esac
		basename "$link"
	done
}

# What perf's kernel_symbols should say for a capture run as root: restricted only when
# kernel.kptr_restrict=2 hides kernel addresses even from root.
host_kernel_symbols_as_root() {
	[ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null)" = 2 ] && echo restricted || echo ok
}

# True when a user without privileges may record system-wide (perf_event_paranoid <= 0).
host_perf_open_to_users() {
	[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)" -le 0 ]
}

# True when bcc can find kernel headers to compile against: a build tree for this kernel, the
# in-kernel archive (CONFIG_IKHEADERS), or the kheaders module bcc would load for itself.
host_bcc_has_headers() {
	[ -e "/lib/modules/$(uname -r)/build" ] || [ -e "/lib/modules/$(uname -r)/source" ] ||
		[ -e /sys/kernel/kheaders.tar.xz ] || modinfo kheaders >/dev/null 2>&1
}
