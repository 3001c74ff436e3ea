#!/usr/bin/env bash
# snippets.bash - collectors too small for their own file; run as
#   bash snippets.bash NAME ARGS...        (argv of a collectors.tsv line: @snip NAME ARGS)
# NAME runs the function snip_NAME (dashes become underscores); there is no other list of them.
# Each writes its data to stdout. Exit 3 = not applicable here (the last stderr line says why;
# the runner records the collector as skipped with that reason).
# Paths under {proc}/{sys} honour FLAMEDIAG_PROC_ROOT / FLAMEDIAG_SYS_ROOT (tests use fake trees);
# printed names are the canonical /proc and /sys ones.
set -u
# shellcheck source=lib/capture/util.bash
. "$(dirname "${BASH_SOURCE[0]}")/util.bash"

not_applicable() {
	echo "$*" >&2
	exit 3
}

# canonical NAME ROOT CANON -> NAME with the root prefix replaced by the canonical one
canonical() {
	printf '%s\n' "$3${1#"$2"}"
}

# Print "path: value" for readable files; one line each (newlines folded).
print_values() {
	local root=$1 canon=$2 file value
	shift 2
	for file in "$@"; do
		[ -f "$file" ] && [ -r "$file" ] || continue
		value=$(tr '\n' ' ' <"$file" 2>/dev/null) || continue
		printf '%s: %s\n' "$(canonical "$file" "$root" "$canon")" "${value% }"
	done
}

snip_pressure() {
	local proc=$1 res found=0
	for res in cpu memory io; do
		[ -r "$proc/pressure/$res" ] || continue
		found=1
		echo "== $res =="
		cat "$proc/pressure/$res"
	done
	[ $found = 1 ] || not_applicable "no $proc/pressure (kernel without CONFIG_PSI, or booted with psi=0)"
}

snip_procstat() {
	local proc=$1 count=$2 n
	for ((n = 0; n < count; n++)); do
		echo "--- $(date +%s)"
		cat "$proc/stat"
		sleep 1
	done
	echo "--- $(date +%s)"
	cat "$proc/stat"
}

# sysctl: key = value for the families the playbooks read. One grep reads them all (a fork per
# file takes seconds on a saturated host); write-only files (vm.drop_caches...) are unreadable
# even for root, so nothing with a side effect is touched, and nothing is ever written.
snip_sysctl() {
	local sys=$1/sys
	grep -rsH '' "$sys/vm" "$sys/net/core" "$sys"/kernel/sched* "$sys"/kernel/numa* "$sys"/kernel/perf* \
		"$sys"/net/ipv4/tcp_* | awk -v prefix="$sys/" '
		{
			i = index($0, ":")
			key = substr($0, length(prefix) + 1, i - length(prefix) - 1)
			gsub("/", ".", key)
			print key " = " substr($0, i + 1)
		}' | LC_ALL=C sort -s -k1,1
}

snip_thp() {
	local sys=$1 thp=$1/kernel/mm/transparent_hugepage
	[ -d "$thp" ] || not_applicable "no $thp (kernel without CONFIG_TRANSPARENT_HUGEPAGE)"
	print_values "$sys" /sys "$thp/enabled" "$thp/defrag" "$thp"/khugepaged/*
}

snip_clocksource() {
	local dir=$1/devices/system/clocksource/clocksource0
	[ -d "$dir" ] || not_applicable "no $dir"
	echo "current_clocksource: $(cat "$dir/current_clocksource")"
	echo "available_clocksource: $(cat "$dir/available_clocksource")"
}

snip_cpufreq() {
	local policy found=0
	for policy in "$1"/devices/system/cpu/cpufreq/policy*; do
		[ -d "$policy" ] || continue
		found=1
		printf '%s: driver=%s governor=%s min=%s max=%s cur=%s\n' "$(basename "$policy")" \
			"$(cat "$policy/scaling_driver" 2>/dev/null)" "$(cat "$policy/scaling_governor" 2>/dev/null)" \
			"$(cat "$policy/scaling_min_freq" 2>/dev/null)" "$(cat "$policy/scaling_max_freq" 2>/dev/null)" \
			"$(cat "$policy/scaling_cur_freq" 2>/dev/null)"
	done
	[ $found = 1 ] || not_applicable "no cpufreq policies (virtual machine, or no cpufreq driver loaded)"
}

# cpuidle: cpu0 only, so the output does not grow with the CPU count (states are per-system in
# practice; a per-CPU `disable` is rare and visible in cpu0 when set globally).
snip_cpuidle() {
	local sys=$1 state
	local base=$sys/devices/system/cpu
	[ -d "$base/cpu0/cpuidle" ] || not_applicable "no cpuidle states (cpuidle disabled or idle=poll)"
	echo "# driver=$(cat "$base/cpuidle/current_driver" 2>/dev/null) governor=$(cat "$base/cpuidle/current_governor_ro" "$base/cpuidle/current_governor" 2>/dev/null | head -n 1)"
	for state in "$base"/cpu0/cpuidle/state*; do
		printf 'cpu0 %s name=%s latency=%s disable=%s usage=%s time=%s\n' "$(basename "$state")" \
			"$(cat "$state/name")" "$(cat "$state/latency")" "$(cat "$state/disable" 2>/dev/null)" \
			"$(cat "$state/usage" 2>/dev/null)" "$(cat "$state/time" 2>/dev/null)"
	done
}

# Scheduler knobs: debugfs (6.6+ EEVDF base_slice_ns, older CFS *_granularity_ns) when mounted
# (never mounted by us: that would change the system), else /proc/sys/kernel/sched_*.
snip_sched_knobs() {
	local proc=$1 sys=$2 file
	if [ -d "$sys/kernel/debug/sched" ]; then
		for file in "$sys"/kernel/debug/sched/*; do
			# `debug` dumps every runqueue: it grows with the CPU count
			case $(basename "$file") in debug | verbose) continue ;; esac
			[ -f "$file" ] || continue
			printf '%s: %s\n' "$(basename "$file")" "$(tr '\n' ' ' <"$file" 2>/dev/null)"
		done
		echo "# source: /sys/kernel/debug/sched"
	fi
	for file in "$proc"/sys/kernel/sched_*; do
		[ -f "$file" ] && [ -r "$file" ] || continue
		printf '%s: %s\n' "$(basename "$file")" "$(tr '\n' ' ' <"$file" 2>/dev/null)"
	done
}

# Driver modules of the physical NICs, one a line (ixgbevf, mlx5_core, virtio_net...).
nic_drivers() {
	local nic module
	for nic in $(physical_nics "$1"); do
		module=$(readlink -f "$1/class/net/$nic/device/driver/module" 2>/dev/null) || continue
		[ -n "$module" ] && basename "$module"
	done | sort -u
}

snip_nic_modparams() {
	local sys=$1 driver found=0
	for driver in $(nic_drivers "$sys"); do
		found=1
		[ -d "$sys/module/$driver/parameters" ] || { echo "# $driver: no parameters"; continue; }
		print_values "$sys" /sys "$sys/module/$driver/parameters"/*
	done
	[ $found = 1 ] || not_applicable "no physical NIC with a driver module"
}

snip_modprobe_d() {
	local sys=$1 etc=${FLAMEDIAG_ETC_ROOT:-/etc} driver file
	local -a files=()
	for file in "$etc"/modprobe.d/*.conf /lib/modprobe.d/*.conf /usr/lib/modprobe.d/*.conf /run/modprobe.d/*.conf; do
		[ -r "$file" ] && files+=("$file")
	done
	for driver in $(nic_drivers "$sys"); do
		[ ${#files[@]} -gt 0 ] || break
		grep -H -w -- "$driver" "${files[@]}" 2>/dev/null | sed "s|^$etc/|/etc/|; s|:|: |"
	done
	return 0
}

# NIC IRQs: /proc/interrupts lines naming the NIC (eth0-TxRx-0) or its device (virtio2-input.0).
snip_nic_irqs() {
	local proc=$1 sys=$2 nic names="" irq
	for nic in $(physical_nics "$sys"); do
		names+=" $nic $(basename "$(readlink -f "$sys/class/net/$nic/device")")"
	done
	[ -n "$names" ] || not_applicable "no physical NIC"
	awk -v names="$names" '
		BEGIN { n = split(names, want, " ") }
		$1 ~ /^[0-9]+:$/ {
			label = $NF
			for (i = 1; i <= n; i++)
				if (index(label, want[i]) == 1) { sub(":", "", $1); print $1, label; break }
		}' "$proc/interrupts" | while read -r irq name; do
		printf '%s %s %s\n' "$irq" "$name" "$(cat "$proc/irq/$irq/smp_affinity_list" 2>/dev/null || echo '?')"
	done
}

snip_irqbalance() {
	local proc=$1 pid comm found=""
	# read, not $(cat): a fork per process took over 10 s on a busy host with a few hundred tasks
	for pid in "$proc"/[0-9]*; do
		comm=""
		read -r comm 2>/dev/null <"$pid/comm"
		[ "$comm" = irqbalance ] && found=${pid##*/}
	done
	if [ -n "$found" ]; then echo "process: running (pid $found)"; else echo "process: not running"; fi
	if command -v systemctl >/dev/null 2>&1; then
		echo "service: $(systemctl is-active irqbalance 2>/dev/null | head -n 1)"
	fi
	[ -r /etc/default/irqbalance ] && grep -E '^[A-Z_]+=' /etc/default/irqbalance | sed 's/^/config: /'
	return 0
}

# memcg: the 10 busiest memory cgroups (by usage), v1 or v2, whichever is mounted. Bounded depth
# and count: hosts with thousands of containers must not make this grow.
# read_first FILE -> its first line, or 0
read_first() {
	local line=0
	[ -r "$1" ] && read -r line <"$1"
	echo "${line:-0}"
}

# memcg_pressure DIR -> how often the cgroup hit its limit (v1 failcnt, v2 events high + max)
memcg_pressure() {
	local key value sum=0
	if [ -r "$1/memory.failcnt" ]; then
		read_first "$1/memory.failcnt"
		return
	fi
	if [ -r "$1/memory.events" ]; then
		while read -r key value; do
			case $key in high | max) sum=$((sum + value)) ;; esac
		done <"$1/memory.events"
	fi
	echo "$sum"
}

snip_memcg() {
	local sys=$1 root usage_file files dir
	if [ -f "$sys/fs/cgroup/memory/memory.usage_in_bytes" ]; then
		root=$sys/fs/cgroup/memory usage_file=memory.usage_in_bytes
		files="memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes memory.failcnt memory.memsw.failcnt memory.soft_limit_in_bytes"
	elif grep -qsw memory "$sys/fs/cgroup/cgroup.controllers"; then
		root=$sys/fs/cgroup usage_file=memory.current
		files="memory.max memory.high memory.current memory.events memory.pressure"
	else
		not_applicable "no memory cgroup controller mounted"
	fi
	# Rank cgroups by limit pressure first (v1 failcnt, v2 memory.events high+max), then usage: a
	# small cgroup hitting its limit matters more than a big one that never does. Builtin reads
	# only: no fork per cgroup on hosts with thousands of them.
	find "$root" -maxdepth 4 -name "$usage_file" 2>/dev/null | head -n 5000 | while IFS= read -r file; do
		dir=${file%/*}
		printf '%s %s %s\n' "$(memcg_pressure "$dir")" "$(read_first "$file")" "$dir"
	done | sort -k1,1nr -k2,2nr | head -n 10 | while read -r _ _ dir; do
		echo "== $(canonical "$dir" "$root" "") =="
		for file in $files; do
			[ -r "$dir/$file" ] || continue
			sed "s|^|$file: |" "$dir/$file"
		done
		if [ -r "$dir/memory.stat" ]; then
			grep -E '^(total_)?(cache|rss|pgmajfault|pgscan|pgsteal|workingset)' "$dir/memory.stat" | head -n 12 | sed 's|^|memory.stat: |'
		fi
	done
}

snip_audit() {
	command -v auditctl >/dev/null 2>&1 || { echo "auditctl not installed" >&2; exit 127; }
	auditctl -s
	echo "rules: $(auditctl -l 2>/dev/null | grep -vc '^No rules')"
}

snip_dmesg() {
	dmesg 2>&1 | tail -n 500
	return "${PIPESTATUS[0]}"
}

snip_bpftrace_profile() {
	exec bpftrace -e "profile:hz:$1 { @[kstack] = count(); } interval:s:$2 { exit(); }"
}

# softirq time (ns) per vector and CPU; vec: 0 HI 1 TIMER 2 NET_TX 3 NET_RX 4 BLOCK 5 IRQ_POLL
# 6 TASKLET 7 SCHED 8 HRTIMER 9 RCU
snip_bpftrace_softirq() {
	[ -d /sys/kernel/tracing/events/irq ] || [ -d /sys/kernel/debug/tracing/events/irq ] ||
		not_applicable "tracefs not mounted: irq tracepoints unavailable (we do not mount it: that changes the system)"
	exec bpftrace -e "tracepoint:irq:softirq_entry { @start[cpu] = nsecs; }
tracepoint:irq:softirq_exit /@start[cpu]/ { @ns[args->vec, cpu] = sum(nsecs - @start[cpu]); delete(@start[cpu]); }
interval:s:$1 { clear(@start); exit(); }"
}

# perf script text, gzipped. Falls back without `period` if this perf rejects it for the event.
# FLAMEDIAG_PERF_TIME=START,END (perf script --time): flamediag watch keeps only its window of the
# ring perf recorded into.
snip_perf_script() {
	local data=$1 out=$2 fields=$3 clip=()
	set -o pipefail
	[ -n "${FLAMEDIAG_PERF_TIME:-}" ] && clip=(--time "$FLAMEDIAG_PERF_TIME")
	if perf script -i "$data" "${clip[@]}" -F "$fields" 2>"$out.err" | gzip -c >"$out"; then
		echo "fields used: $fields" >&2
		rm -f "$out.err"
		return 0
	fi
	if grep -qi 'period\|invalid field\|not valid' "$out.err"; then
		fields=${fields/,period/}
		echo "period rejected by perf: $(head -n 1 "$out.err")" >&2
		if perf script -i "$data" "${clip[@]}" -F "$fields" 2>"$out.err" | gzip -c >"$out"; then
			echo "fields used: $fields" >&2
			rm -f "$out.err"
			return 0
		fi
	fi
	cat "$out.err" >&2
	rm -f "$out.err"
	return 1
}

# main NAME ARGS -> runs snip_NAME (dashes in NAME become underscores: sched-knobs -> snip_sched_knobs)
main() {
	local name=${1:-} snippet
	shift || true
	snippet=snip_${name//-/_}
	if [ -z "$name" ] || ! declare -F "$snippet" >/dev/null; then
		echo "snippets.bash: unknown snippet '$name'" >&2
		exit 2
	fi
	"$snippet" "$@"
}

# sourced (the tests list the snippets): define only
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
