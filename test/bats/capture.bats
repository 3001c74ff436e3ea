#!/usr/bin/env bats
# flamediag capture, for real: one 3 s capture as root under a synthetic kernel load (dd reading
# /dev/zero), shared by the tests of this file, then its bundle is checked piece by piece.
load test_helper
load ../fixtures/capture/capture_helper

setup_file() {
	[ "$(id -u)" -eq 0 ] || return 0
	export FLAMEDIAG_LOCK=$BATS_FILE_TMPDIR/capture.lock
	local dir=$BATS_FILE_TMPDIR
	mkdir -p "$dir/out"
	sysctl_snapshot >"$dir/sysctl.before"
	modules_snapshot >"$dir/modules.before"
	start_kernel_load
	local rc=0
	timeout -k 10 150 "$FLAMEDIAG" capture -d 3 -o "$dir/out" --label "bats real" >"$dir/stdout" 2>"$dir/stderr" 3>&- || rc=$?
	echo "$rc" >"$dir/rc"
	stop_kernel_load
	sysctl_snapshot >"$dir/sysctl.after"
	modules_snapshot >"$dir/modules.after"
}

setup() {
	require_root
	BUNDLE=$(tail -n 1 "$BATS_FILE_TMPDIR/stdout")
}

@test "real capture: exit 0, the bundle path is the last stdout line, banner on stderr" {
	cat "$BATS_FILE_TMPDIR/stderr"
	assert_equal "$(cat "$BATS_FILE_TMPDIR/rc")" 0
	[[ $BUNDLE == "$BATS_FILE_TMPDIR"/out/flamediag-*-*T*Z.tar.gz ]] || false
	assert_file_exists "$BUNDLE"
	grep -q "^Capturing 3 s at 99 Hz on $(host_online_cpus | wc -l) CPUs into .* Ctrl-C to end.$" "$BATS_FILE_TMPDIR/stderr"
	# one file, nothing else left behind (no work directory, no partial tarball)
	assert_equal "$(find "$BATS_FILE_TMPDIR/out" -mindepth 1 | wc -l)" 1
}

@test "real capture: manifest.json is the first member, one top directory named like the file" {
	local first top
	first=$(tar -tzf "$BUNDLE" | head -n 1)
	top=$(basename "$BUNDLE" .tar.gz)
	assert_equal "$first" "$top/manifest.json"
	run -0 bash -c "tar -tzf '$BUNDLE' | cut -d/ -f1 | sort -u"
	assert_output "$top"
}

@test "real capture: manifest has every contract field with sane values" {
	run -0 mq "$BUNDLE" 'sorted(k for k in ["schema","flamediag_version","host","kernel","arch","cpus","numa_nodes","start_utc","end_utc","duration_requested","duration_actual","frequency","label","command_line","complete","end_signal","perf","self_cpu_seconds","collectors"] if k not in m)'
	assert_output "[]"
	run -0 mq "$BUNDLE" '[m["schema"], m["cpus"], m["numa_nodes"], m["duration_requested"], m["frequency"], m["label"], m["complete"], m["end_signal"]]'
	assert_output "[1, $(host_online_cpus | wc -l), $(host_numa_nodes), 3, 99, \"bats real\", true, null]"
	run -0 mq "$BUNDLE" '2.5 <= m["duration_actual"] <= 6 and m["self_cpu_seconds"] > 0 and m["kernel"] == "'"$(uname -r)"'"'
	assert_output true
	run -0 mq "$BUNDLE" 'sorted(m["perf"])'
	assert_output '["enabled_epoch", "kernel_symbols", "kptr_restrict", "lost_chunks", "max_sample_rate", "mlock_kb", "paranoid", "warnings"]'
	# perf acknowledged "enable" inside the window: the diagnoser's clock for the sample times
	run -0 mq "$BUNDLE" '(lambda t: t(m["start_utc"]) <= m["perf"]["enabled_epoch"] <= t(m["end_utc"]) + 1)(lambda s: __import__("calendar").timegm(__import__("time").strptime(s, "%Y-%m-%dT%H:%M:%SZ")))'
	assert_output true
	run -0 mq "$BUNDLE" '[m["perf"]["paranoid"], m["perf"]["kptr_restrict"], m["perf"]["kernel_symbols"]]'
	assert_output "[$(cat /proc/sys/kernel/perf_event_paranoid), $(cat /proc/sys/kernel/kptr_restrict), \"$(host_kernel_symbols_as_root)\"]"
}

@test "real capture: every collector entry has the contract keys and a valid status" {
	run -0 mq "$BUNDLE" '[c["name"] for c in m["collectors"] if sorted(c) != sorted(["name","phase","instance","argv","status","exit_code","seconds","outputs","bytes","truncated","stderr_tail","reason","fix"])]'
	assert_output "[]"
	run -0 mq "$BUNDLE" '[c["name"] for c in m["collectors"] if c["status"] not in ("ok","failed","missing","timeout","skipped","interrupted") or (c["status"] != "ok" and not c["reason"])]'
	assert_output "[]"
	run -0 mq "$BUNDLE" '[c["name"] for c in m["collectors"] if c["phase"] not in ("start","end","window","once")]'
	assert_output "[]"
	# what this host can give, it gives; where its source is absent, the collector says skipped
	local name want
	for name in perf.preflight perf.record perf.script mpstat mpstat.json vmstat pidstat proc.vmstat \
		proc.interrupts proc.softirqs proc.stat proc.meminfo proc.pressure numastat numastat.m ss loadavg \
		numactl.hardware uname lscpu sysctl thp clocksource cpufreq cpuidle sched.debug nic.irqs memcg dmesg; do
		want=$(host_collector_status "$name")
		run -0 mq "$BUNDLE" "[c['status'] for c in m['collectors'] if c['name'] == '$name']"
		[[ $output == '["'"$want"'"'* ]] || { echo "$name: $output (this host should give $want)"; false; }
		[[ $output != *'"failed"'* ]] || { echo "$name: $output"; false; }
		[ "$want" = ok ] || mq "$BUNDLE" "[c['reason'] for c in m['collectors'] if c['name'] == '$name'][0]" | grep -q .
	done
	# the bytes and outputs fields describe real files
	run -0 mq "$BUNDLE" '[c["name"] for c in m["collectors"] if c["status"] == "ok" and c["bytes"] and not c["outputs"]]'
	assert_output "[]"
}

@test "real capture: every manifest collector is a line of lib/collectors.tsv, written at its declared path" {
	# perf.bash's own steps included: the table is the one list, the manifest must not disagree
	manifest_of "$BUNDLE" >"$BATS_TEST_TMPDIR/manifest.json"
	run -0 python3 - "$FLAMEDIAG_ROOT/lib/collectors.tsv" "$BATS_TEST_TMPDIR/manifest.json" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        fields = line.rstrip("\n").split("\t")
        rows[fields[0]] = (fields[1].split(","), fields[6])
for entry in json.load(open(sys.argv[2]))["collectors"]:
    phases, path = rows.get(entry["name"], ([], None))
    if path is None or entry["phase"] not in phases:
        print(f"{entry['name']} [{entry['phase']}]: not declared")
        continue
    path = path.replace("{phase}", entry["phase"]).replace("{nic}", entry["instance"] or "")
    if entry["outputs"] and path not in entry["outputs"]:
        print(f"{entry['name']}: wrote {entry['outputs']}, declared {path}")
PY
	assert_output ""
}

@test "real capture: bcc fails for real here (no kernel headers): recorded, not fatal, bpftrace used" {
	command -v profile-bpfcc >/dev/null || skip "bcc not installed"
	! host_bcc_has_headers || skip "kernel headers available to bcc here: it compiles"
	run -0 mq "$BUNDLE" 'col("bpf.profile")["status"] + "|" + col("bpf.profile")["reason"] + "|" + col("bpf.profile")["fix"]'
	assert_output --partial "skipped|bcc cannot compile BPF: kernel headers missing|install linux-headers"
	run -0 mq "$BUNDLE" 'col("bpf.profile")["outputs"] == [] and "kernel headers" in col("bpf.profile")["stderr_tail"]'
	assert_output true
	run -0 mq "$BUNDLE" '[col(n)["status"] for n in ("bpf.softirqs", "bpf.hardirqs", "bpf.runqlat")]'
	assert_output '["skipped", "skipped", "skipped"]'
	run -0 mq "$BUNDLE" 'col("bpftrace.profile")["status"]'
	assert_output ok
	run -0 member "$BUNDLE" bpf/bpftrace-profile.txt
	assert_output --regexp '@\['
}

@test "real capture: SHA256SUMS covers every other file and verifies with sha256sum -c" {
	local dir=$BATS_TEST_TMPDIR/x
	mkdir -p "$dir"
	tar -xzf "$BUNDLE" -C "$dir"
	cd "$dir"/flamediag-*
	run -0 sha256sum -c --strict SHA256SUMS
	refute_output --partial FAILED
	run -0 bash -c "find . -type f ! -name SHA256SUMS -printf '%P\n' | sort"
	local files=$output
	run -0 bash -c "cut -c67- SHA256SUMS | sort"
	assert_equal "$output" "$files"
	# tamper: the check must be able to fail
	echo x >>snap/start/proc-stat.txt
	run ! sha256sum -c --quiet SHA256SUMS
}

@test "real capture: perf text has kernel frames of the load, with CPU and time fields" {
	run -0 bash -c "tar -xzOf '$BUNDLE' --wildcards '*/perf/perf.script.gz' | gzip -dc"
	local text=$output
	# event line: comm pid/tid [cpu] time: period event:
	[[ $text =~ (^|$'\n')dd\ +[0-9]+/[0-9]+\ +\[[0-9]{3}\]\ +[0-9]+\.[0-9]{6}:\ +[0-9]+\ cpu-clock ]] || false
	# a dd stack with the kernel side of reading /dev/zero
	run -0 awk '/^dd / { in_dd = 1; next } /^$/ { in_dd = 0 } in_dd && /kernel.kallsyms/ && /(read_zero|iov_iter_zero|clear_user|rep_stos|vfs_read|ksys_read|__x64_sys_read)/ { n++ } END { print n + 0; exit !(n > 0) }' <<<"$text"
	run -0 mq "$BUNDLE" 'col("perf.script")["argv"]'
	assert_output --partial "comm,pid,tid,cpu,time,period,event,ip,sym,dso"
	# perf.data is not kept by default
	run -0 bash -c "tar -tzf '$BUNDLE' | grep -c 'perf.data$' || true"
	assert_output 0
}

@test "real capture: mpstat has per-CPU rows (24 h times) for each second of the window" {
	run -0 member "$BUNDLE" metrics/mpstat.txt
	local cpu rows
	for cpu in $(host_online_cpus); do
		rows=$(grep -cE "^[0-9]{2}:[0-9]{2}:[0-9]{2} +$cpu +[0-9]" <<<"$output")
		[ "$rows" -ge 3 ] || { echo "cpu $cpu: $rows rows"; false; }
	done
	refute_output --regexp ' (AM|PM) '
	run -0 member "$BUNDLE" metrics/mpstat.json
	run -0 python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["sysstat"]["hosts"][0]["statistics"]))' <<<"$output"
	[ "$output" -ge 3 ]
}

@test "real capture: start and end snapshots exist for every start/end collector" {
	run -0 bash -c "tar -tzf '$BUNDLE' | sed -n 's|^[^/]*/snap/\(start\|end\)/||p' | sort | uniq -c | awk '\$1 != 2'"
	assert_output ""
	for f in proc-vmstat proc-interrupts proc-softirqs proc-softnet_stat proc-meminfo proc-pressure proc-stat numastat numastat-m ss-tiepm loadavg; do
		run -0 member "$BUNDLE" "snap/start/$f.txt"
		run -0 member "$BUNDLE" "snap/end/$f.txt"
	done
	run -0 member "$BUNDLE" snap/end/proc-pressure.txt
	assert_output --partial "== cpu =="
	# the window lies between the snapshots: dd's CPU time grew between them
	local before after
	before=$(member "$BUNDLE" snap/start/proc-stat.txt | awk '/^cpu /{print $4}')
	after=$(member "$BUNDLE" snap/end/proc-stat.txt | awk '/^cpu /{print $4}')
	[ "$after" -gt "$before" ]
}

@test "real capture: once-only system facts in the documented format" {
	run -0 member "$BUNDLE" system/sysctl.txt
	# vm.zone_reclaim_mode exists only in NUMA kernels (CONFIG_NUMA)
	[ ! -e /proc/sys/vm/zone_reclaim_mode ] || assert_output --regexp '(^|'$'\n'')vm\.zone_reclaim_mode = [0-9]+'
	assert_output --partial "net.core.netdev_budget = "
	assert_output --partial "kernel.perf_event_paranoid = "
	if [ "$(host_collector_status thp)" = ok ]; then
		run -0 member "$BUNDLE" system/thp.txt
		assert_output --partial "/sys/kernel/mm/transparent_hugepage/enabled: "
		assert_output --partial "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag: "
	fi
	if [ "$(host_collector_status clocksource)" = ok ]; then
		run -0 member "$BUNDLE" system/clocksource.txt
		assert_output --regexp 'current_clocksource: [a-z_]+'
	fi
	if [ "$(host_collector_status cpufreq)" = ok ]; then
		run -0 member "$BUNDLE" system/cpufreq.txt
		assert_output --regexp 'policy[0-9]+: driver=[^ ]* governor='
	else  # a VM without a cpufreq driver: nothing to record
		run member "$BUNDLE" system/cpufreq.txt
		assert_failure
	fi
	case $(host_memcg_version) in
	v1) run -0 member "$BUNDLE" system/memcg.txt; assert_output --partial "memory.limit_in_bytes: " ;;
	v2) run -0 member "$BUNDLE" system/memcg.txt; assert_output --partial "memory.current: " ;;
	esac
	run -0 member "$BUNDLE" system/sched-knobs.txt
	assert_output --regexp 'sched_[a-z_]+: [0-9]'
	if [ "$(host_collector_status cpuidle)" = ok ]; then
		run -0 member "$BUNDLE" system/cpuidle.txt
		assert_output --regexp 'cpu0 state0 name=[^ ]+ latency=[0-9]+ disable=[01]'
	else  # no per-CPU idle states here (cpuidle driver "none", idle=poll): nothing to record
		run member "$BUNDLE" system/cpuidle.txt
		assert_failure
	fi
}

@test "real capture: the system is unchanged (no module loaded, no sysctl written)" {
	run diff "$BATS_FILE_TMPDIR/modules.before" "$BATS_FILE_TMPDIR/modules.after"
	assert_success
	run diff "$BATS_FILE_TMPDIR/sysctl.before" "$BATS_FILE_TMPDIR/sysctl.after"
	assert_success
	[ -s "$BATS_FILE_TMPDIR/sysctl.before" ]
}

@test "ss runs only when inet_diag and tcp_diag are loaded already (sos predicate)" {
	run -0 mq "$BUNDLE" 'col("ss", "start")["status"]'
	assert_output "$(host_collector_status ss)"
	if [ "$output" = skipped ]; then
		run -0 mq "$BUNDLE" 'col("ss", "start")["reason"]'
		assert_output --partial "kernel modules not loaded"
	fi
}
