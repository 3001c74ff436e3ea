#!/usr/bin/env bats
# flamediag capture under failure: real ones where this machine can produce them (signals,
# second run, non-root, read-only and full output directories, bcc without headers), fakes on
# PATH only for the rest (perf missing, Ubuntu's perf wrapper, hanging collectors, ixgbevf NIC,
# a 512-CPU /proc).
# shellcheck disable=SC2154 # $stderr is set by `run --separate-stderr`
load test_helper
load ../fixtures/capture/capture_helper

setup() {
	capture_setup
}

teardown() {
	# a mount made by a test is undone even when it failed
	if [ -n "${MOUNTED:-}" ]; then umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED"; fi
	return 0
}

# start_bg ARGS... -> capture in the background in its own process group (set -m), for signals
start_bg() {
	set -m
	# no `timeout` wrapper: it would forward the group's INT a second time (BATS_TEST_TIMEOUT bounds it)
	"$FLAMEDIAG" capture "$@" >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr" 3>&- &
	BG_PID=$!
	set +m
}

# wait_bg -> BG_RC
wait_bg() {
	BG_RC=0
	wait "$BG_PID" || BG_RC=$?
}

@test "usage: --help ends with examples; bad options and values exit 2 with usage on stderr" {
	run -0 "$FLAMEDIAG" capture --help
	assert_output --partial "USAGE: flamediag capture"
	assert_output --partial "eg,"
	for bad in "--frobnicate" "-d" "-d 0" "-d abc" "-F 0" "--max-size x"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr "$FLAMEDIAG" capture $bad
		[[ $stderr == *"USAGE: flamediag capture"* ]] || { echo "$bad: $stderr"; false; }
	done
}

@test "SIGINT mid-capture: exit 130, partial bundle with complete=false, end_signal, perf finalised" {
	require_root
	start_bg -d 60 -o "$OUT"
	latch "$OUT/flamediag-*/manifest.json" '"state": "recording"'
	sleep 2
	SECONDS=0
	kill -INT -- "-$BG_PID"
	wait_bg
	echo "stopped in $SECONDS s"
	cat "$BATS_TEST_TMPDIR/stderr"
	assert_equal "$BG_RC" 130
	local bundle
	bundle=$(tail -n 1 "$BATS_TEST_TMPDIR/stdout")
	[[ $bundle == "$OUT"/flamediag-*.tar.gz ]] || false
	run -0 tar -tzf "$bundle"
	run mq "$bundle" '[m["complete"], m["end_signal"], col("perf.record")["status"], col("perf.script")["status"]]'
	[ "$status" -eq 0 ] || manifest_of "$bundle"
	assert_output '[false, "SIGINT", "interrupted", "ok"]'
	run -0 mq "$bundle" 'm["duration_actual"] < 30 and col("mpstat")["status"] == "interrupted"'
	assert_output true
	# perf.data was finalised: its text has samples
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/perf/perf.script.gz' | gzip -dc | grep -c cpu-clock"
	[ "$output" -gt 0 ]
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/perf/record.log'"
	refute_output --partial "data size field is 0"
	# nothing claims to be a bundle but the bundle
	assert_equal "$(find "$OUT" -mindepth 1 -maxdepth 1 | wc -l)" 1
}

@test "SIGTERM mid-capture: exit 143, end_signal SIGTERM, bundle still written" {
	require_root
	start_bg -d 60 -o "$OUT" --no-bpf
	latch "$OUT/flamediag-*/manifest.json" '"state": "recording"'
	SECONDS=0
	kill -TERM -- "-$BG_PID"
	wait_bg
	echo "ended ${SECONDS}s after SIGTERM; its stderr:"
	cat "$BATS_TEST_TMPDIR/stderr"
	assert_equal "$BG_RC" 143
	local bundle
	bundle=$(tail -n 1 "$BATS_TEST_TMPDIR/stdout")
	run -0 mq "$bundle" '[m["complete"], m["end_signal"]]'
	assert_output '[false, "SIGTERM"]'
	# collectors that never ran say why
	run -0 mq "$bundle" 'col("lscpu")["reason"]'
	assert_output "capture interrupted by SIGTERM before it ran"
}

# start_slow_stopping_capture -> a capture recording whose sampler ignores INT/TERM: the shutdown
# stays busy for the kill grace, so a second signal lands while the first one is being handled
# (a grace of 10 s, not the default 2 s: on a loaded host the second signal came after packing
# had finished)
start_slow_stopping_capture() {
	use_fakes slow-stop
	export FLAMEDIAG_KILL_GRACE=10
	start_bg -d 60 -o "$OUT" --no-bpf
	latch "$OUT/flamediag-*/manifest.json" '"state": "recording"'
}

# second_sigint_leaves_the_directory KILL-TARGET... -> SIGINT, again once the capture reported the
# first; then: exit 130, the partial directory with its manifest on stdout, no tarball
second_sigint_leaves_the_directory() {
	kill -INT "$@"
	latch "$BATS_TEST_TMPDIR/stderr" "SIGINT received"
	kill -INT "$@"
	wait_bg
	cat "$BATS_TEST_TMPDIR/stderr"
	assert_equal "$BG_RC" 130
	local dir
	dir=$(tail -n 1 "$BATS_TEST_TMPDIR/stdout")
	assert_dir_exists "$dir"
	run -0 mq "$dir" '[m["complete"], m["end_signal"], m["state"]]'
	assert_output '[false, "SIGINT", "interrupted"]'
	run -0 bash -c "ls '$OUT' | grep -c 'tar.gz' || true"
	assert_output 0
}

@test "double Ctrl-C: no tarball, a readable directory with a manifest, exit 130" {
	require_root
	start_slow_stopping_capture
	second_sigint_leaves_the_directory -- "-$BG_PID"
}

@test "signals whose trap bash lost are counted by the sentinel: two INTs to it alone = double Ctrl-C" {
	require_root
	# bash 5.2 can drop a trapped signal that lands while it reads a $(...); the sentinel, a small
	# process in the capture's group, counts what it receives. Signalling only the sentinel is
	# what a lost trap looks like to the capture.
	start_slow_stopping_capture
	local sentinel
	sentinel=$(pgrep -g "$BG_PID" -f flamediag-sentinel)
	[ "$(wc -w <<<"$sentinel")" -eq 1 ] || { echo "sentinel: '$sentinel'"; ps -o pid,pgid,args -g "$BG_PID"; false; }
	second_sigint_leaves_the_directory "$sentinel"
	# the sentinel ends with the capture
	sleep 3
	run ! kill -0 "$sentinel"
}

@test "second capture while one runs: exit 75 naming the pid; after kill -9 no stale lock" {
	require_root
	start_bg -d 60 -o "$OUT" --no-bpf
	latch "$OUT/flamediag-*/manifest.json" '"state": "recording"'
	run_capture -d 1 -o "$OUT"
	assert_equal "$status" 75
	[[ $stderr == *"already running (pid $BG_PID"* ]] || { echo "$stderr"; false; }
	assert_equal "$output" ""
	kill -KILL -- "-$BG_PID"
	wait_bg
	# the next capture proceeds at once (the kernel dropped the flock with the process)
	run_capture -d 1 -o "$BATS_TEST_TMPDIR" --no-bpf
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ] || { echo "$stderr"; false; }
	# the killed capture's children died with it (pdeathsig)
	sleep 1
	run pgrep -f "perf record .*$OUT/"
	assert_failure
}

@test "not root: metrics still collected; perf skipped naming perf_event_paranoid and the fix, exit 1 (unless paranoid <= 0)" {
	require_root
	local dir
	dir=$(mktemp -d /tmp/flamediag-nonroot.XXXXXX)
	chmod 1777 "$dir"
	run --separate-stderr timeout -k 10 150 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env FLAMEDIAG_LOCK="$dir/lock" "$FLAMEDIAG" capture -d 2 -o "$dir" 3>&-
	echo "$stderr"
	local bundle
	bundle=$(last_line)
	local want_status=1 want_perf='"failed", "skipped"'
	if host_perf_open_to_users; then
		# kernel.perf_event_paranoid <= 0 here: an unprivileged user may record system-wide
		want_status="[01]" want_perf='"ok", "ok"'
	else
		[[ $stderr == *"perf_event_paranoid"* && $stderr == *"sudo"* ]] || { rm -rf "$dir"; false; }
	fi
	[[ $status =~ ^$want_status$ ]] || { rm -rf "$dir"; false; }
	run mq "$bundle" '[col("perf.preflight")["status"], col("perf.record")["status"], col("proc.vmstat","start")["status"], col("mpstat")["status"], col("bpf.profile")["status"], m["root"]]'
	rm -rf "$dir"
	assert_output "[$want_perf, \"ok\", \"ok\", \"skipped\", false]"
}

@test "read-only output directory: exit 77, clear error, nothing written" {
	require_root
	mkdir -p "$OUT/ro"
	mount -t tmpfs -o ro,size=1m tmpfs "$OUT/ro"
	MOUNTED=$OUT/ro
	run_capture -d 1 -o "$OUT/ro"
	assert_equal "$status" 77
	[[ $stderr == *"cannot write to $OUT/ro"*"Read-only file system"* ]] || { echo "$stderr"; false; }
	assert_equal "$output" ""
	assert_equal "$(find "$OUT/ro" -mindepth 1 | wc -l)" 0
}

@test "too little space: refused before starting, with the numbers, exit 65" {
	require_root
	mkdir -p "$OUT/small"
	mount -t tmpfs -o size=8m tmpfs "$OUT/small"
	MOUNTED=$OUT/small
	run_capture -d 30 -o "$OUT/small"
	assert_equal "$status" 65
	[[ $stderr == *"not enough space in $OUT/small: "*" MiB free, capture needs about "*" MiB ("*" CPUs x 99 Hz x 30 s"* ]] || { echo "$stderr"; false; }
	assert_equal "$(find "$OUT/small" -mindepth 1 | wc -l)" 0
}

@test "output fills up mid-capture: one line naming the fix, the rest skipped, partial bundle, exit 1" {
	require_root
	mkdir -p "$OUT/fills"
	mount -t tmpfs -o size=16m tmpfs "$OUT/fills"
	MOUNTED=$OUT/fills
	FLAMEDIAG_SPACE_FLOOR_MB=0 start_bg -d 20 -o "$OUT/fills"
	latch "$OUT/fills/flamediag-*/manifest.json" '"state": "recording"'
	# another process takes every free byte (the bundle's 1 MiB reserve is already held)
	dd if=/dev/zero of="$OUT/fills/filler" bs=64k 2>/dev/null || true
	SECONDS=0
	wait_bg
	echo "ended ${SECONDS}s after the disk filled"
	cat "$BATS_TEST_TMPDIR/stderr"
	assert_equal "$BG_RC" 1
	[ "$SECONDS" -lt 15 ]	# it stopped, rather than recording into a full disk for 20 s
	run -0 grep -c "$OUT/fills is full" "$BATS_TEST_TMPDIR/stderr"
	assert_output 1
	run -0 grep -c "Fix: free space there, or capture with -o on a bigger file system" "$BATS_TEST_TMPDIR/stderr"
	refute_output 0
	local bundle
	bundle=$(tail -n 1 "$BATS_TEST_TMPDIR/stdout")
	[[ $bundle == "$OUT/fills"/flamediag-*.tar.gz ]] || false
	run mq "$bundle" '[m["state"], m["complete"], m["end_signal"], col("perf.record")["status"], col("proc.vmstat", "start")["status"]]'
	[ "$status" -eq 0 ] || manifest_of "$bundle"
	assert_output '["disk_full", false, null, "interrupted", "ok"]'
	run -0 mq "$bundle" 'any(n.startswith("ENOSPC: ") for n in m["notes"]) and col("sysctl")["status"] == "skipped"'
	assert_output true
	# the stacks are not lost: perf.data stays in the bundle when perf script could not run
	run -0 tar -tzf "$bundle"
	assert_output --partial "/perf/perf.data"
	refute_output --partial ".reserve"
}

# path_without_perf -> prints a PATH directory holding every tool of this machine except perf
path_without_perf() {
	local bin=$BATS_TEST_TMPDIR/noperf d
	mkdir -p "$bin"
	for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
		# one ln per directory; names already linked from an earlier directory are kept
		ln -s "$d"/* "$bin"/ 2>/dev/null || true
	done
	rm -f "$bin"/perf "$bin"/perf_*
	[ ! -e "$bin/perf" ] && [ -e "$bin/mpstat" ] && echo "$bin"
}

@test "perf missing from PATH: bundle without perf, reason + install fix, exit 1, no perf.data" {
	require_root
	local bin
	bin=$(path_without_perf)
	PATH=$bin run_capture -d 1 -o "$OUT" --no-bpf
	assert_equal "$status" 1
	[[ $stderr == *"perf not installed"*"apt-get install linux-perf"* ]] || { echo "$stderr"; false; }
	local bundle
	bundle=$(last_line)
	run -0 mq "$bundle" '[col("perf.preflight")["status"], col("perf.record")["status"], col("perf.script")["status"], col("mpstat")["status"]]'
	assert_output '["missing", "skipped", "skipped", "ok"]'
	run -0 bash -c "tar -tzf '$bundle' | grep -c 'perf.data' || true"
	assert_output 0
}

@test "perf missing: the BPF profile (bcc, else bpftrace when bcc cannot compile) gives diagnose its stacks" {
	require_root
	command -v bpftrace >/dev/null || command -v profile-bpfcc >/dev/null || skip "neither bpftrace nor bcc installed"
	local bin bundle source
	bin=$(path_without_perf)
	start_kernel_load
	PATH=$bin run_capture -d 3 -o "$OUT"
	stop_kernel_load
	assert_equal "$status" 1
	bundle=$(last_line)
	# this host decides which one ran: bcc compiles only with kernel headers, bpftrace is its fallback
	if [ "$(mq "$bundle" 'col("bpf.profile")["status"]')" = ok ]; then
		source=bpf/profile.folded
	else
		run -0 mq "$bundle" 'col("bpftrace.profile")["status"]'
		assert_output ok
		source=bpf/bpftrace-profile.txt
	fi
	run -0 "$FLAMEDIAG" diagnose "$bundle" -o "$BATS_TEST_TMPDIR/diagnosis"
	grep -q "stacks from \`$source\`" "$BATS_TEST_TMPDIR/diagnosis/report.md"
	# dd reading /dev/zero: its kernel side is in the flame graph
	grep -qE 'read_zero|iov_iter_zero|clear_user|rep_stos' "$BATS_TEST_TMPDIR/diagnosis/flamegraph.svg"
}

@test "Ubuntu's perf wrapper (exits 2, no tools for this kernel): missing with linux-tools fix, exit 1" {
	use_fakes perf-ubuntu-wrapper
	require_root
	run_capture -d 1 -o "$OUT" --no-bpf
	assert_equal "$status" 1
	[[ $stderr == *"linux-tools-"* ]] || { echo "$stderr"; false; }
	local bundle
	bundle=$(last_line)
	run -0 mq "$bundle" '[col("perf.preflight")["status"], col("perf.preflight")["exit_code"], "wrapper" in col("perf.preflight")["reason"]]'
	assert_output '["missing", 2, true]'
	run -0 member "$bundle" perf/preflight.txt
	assert_output --partial "WARNING: perf not found for kernel"
}

@test "perf script stopping part-way: the stacks printed before are kept, status failed with reason, exit 1" {
	use_fakes perf-script-fails
	require_root
	run_capture -d 1 -o "$OUT" --no-bpf
	assert_equal "$status" 1
	local bundle
	bundle=$(last_line)
	run -0 mq "$bundle" '[col("perf.script")["status"], "kept" in col("perf.script")["reason"], col("perf.script")["outputs"]]'
	assert_output '["failed", true, ["perf/perf.script.gz"]]'
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/perf/perf.script.gz' | gzip -dc | grep -c 'cpu-clock'"
	[ "$output" -gt 0 ]
}

@test "hanging, TERM-ignoring and stdout-holding collectors time out; the rest is unaffected" {
	require_root
	use_fakes hang
	SECONDS=0
	# 4 s: short for the hanging fakes, long enough for the real collectors on a loaded CI host
	FLAMEDIAG_COLLECTOR_TIMEOUT=4 FLAMEDIAG_KILL_GRACE=1 run_capture -d 1 -o "$OUT" --no-bpf
	local took=$SECONDS
	echo "$stderr"
	assert_equal "$status" 1
	local bundle
	bundle=$(last_line)
	run -0 mq "$bundle" '[col("numastat","start")["status"], col("numastat","end")["status"], col("lscpu")["status"], col("numactl.hardware")["status"], col("uname")["status"], col("proc.vmstat","end")["status"]]'
	assert_output '["timeout", "timeout", "timeout", "ok", "ok", "ok"]'
	# the output so far is kept and labelled
	run -0 member "$bundle" snap/start/numastat.txt
	assert_output "partial numastat output"
	run -0 mq "$bundle" 'col("lscpu")["reason"]'
	assert_output --partial "killed"
	# every timeout line names the collector and a fix
	[[ $stderr == *"numastat [start] timeout: "*"Fix: "* ]] || false
	# bounded: 5 hung runs x (4 s + 1 s grace) plus the rest (generous for a loaded CI host)
	[ "$took" -lt 120 ] || { echo "took $took s"; false; }
	# the grandchild of the fake numactl did not survive its collector
	run pgrep -f '^sleep 1000$'
	assert_failure
}

@test "ixgbevf NIC: ethtool -i/-c/-l/-S, module parameters and modprobe.d lines are captured" {
	require_root
	use_fakes ixgbevf
	local sys=$BATS_TEST_TMPDIR/sys etc=$BATS_TEST_TMPDIR/etc
	mkdir -p "$sys/devices/pci0000:00/0000:00:03.0/net/eth0" "$sys/bus/pci/drivers/ixgbevf" \
		"$sys/module/ixgbevf/parameters" "$sys/class/net" "$etc/modprobe.d"
	ln -s ../../devices/pci0000:00/0000:00:03.0/net/eth0 "$sys/class/net/eth0"
	ln -s ../.. "$sys/devices/pci0000:00/0000:00:03.0/net/eth0/device"
	ln -s ../../../bus/pci/drivers/ixgbevf "$sys/devices/pci0000:00/0000:00:03.0/driver"
	ln -s ../../../../module/ixgbevf "$sys/bus/pci/drivers/ixgbevf/module"
	echo "1,1,1,1,1,1,1,1" >"$sys/module/ixgbevf/parameters/InterruptThrottleRate"
	echo "options ixgbevf InterruptThrottleRate=1,1,1,1,1,1,1,1" >"$etc/modprobe.d/ixgbevf.conf"
	FLAMEDIAG_SYS_ROOT=$sys FLAMEDIAG_ETC_ROOT=$etc run_capture -d 1 -o "$OUT" --no-bpf
	local bundle
	bundle=$(last_line)
	run -0 member "$bundle" net/ethtool-i-eth0.txt
	assert_line "driver: ixgbevf"
	assert_line "bus-info: 0000:00:03.0"
	run -0 member "$bundle" net/module-params.txt
	assert_output "/sys/module/ixgbevf/parameters/InterruptThrottleRate: 1,1,1,1,1,1,1,1"
	run -0 member "$bundle" net/modprobe.d.txt
	assert_output "/etc/modprobe.d/ixgbevf.conf: options ixgbevf InterruptThrottleRate=1,1,1,1,1,1,1,1"
	run -0 member "$bundle" snap/end/ethtool-S-eth0.txt
	assert_output --partial "rx_queue_0_packets: "
	run -0 mq "$bundle" '[col("ethtool.i")["instance"], col("ethtool.S","start")["instance"], col("ethtool.c")["status"], col("ethtool.l")["status"]]'
	assert_output '["eth0", "eth0", "ok", "ok"]'
}

@test "512-CPU /proc (root-prefix override): banner and manifest say 512, big files capped at the tail" {
	require_root
	local proc=$BATS_TEST_TMPDIR/proc f
	mkdir -p "$proc/net" "$proc/sys"
	for f in vmstat meminfo loadavg cmdline net/softnet_stat; do cat "/proc/$f" >"$proc/$f"; done
	ln -s /proc/sys/kernel "$proc/sys/kernel"
	awk 'BEGIN {
		print "cpu  1 2 3 4 5 6 7 8 0 0"
		for (c = 0; c < 512; c++) printf "cpu%d 1 2 3 4 5 6 7 8 0 0\n", c
		print "intr 0"; print "ctxt 1"; print "btime 1"; print "processes 1"; print "procs_running 1"; print "procs_blocked 0"
	}' >"$proc/stat"
	# 2,000 IRQ lines x 512 CPU columns: ~11 MB, over the 8 MiB cap of proc.interrupts
	awk 'BEGIN {
		printf "%4s", ""; for (c = 0; c < 512; c++) printf "       CPU%-4d", c; print ""
		for (i = 0; i < 2000; i++) { printf "%4d:", i; for (c = 0; c < 512; c++) printf " %10d", i + c; printf "  PCI-MSI-edge  eth0-TxRx-%d\n", i }
	}' >"$proc/interrupts"
	cp "$proc/interrupts" "$proc/softirqs"
	FLAMEDIAG_PROC_ROOT=$proc run_capture -d 1 -o "$OUT" --no-bpf
	echo "$stderr" | head -n 3
	[[ $stderr == *"Capturing 1 s at 99 Hz on 512 CPUs into "* ]] || false
	local bundle
	bundle=$(last_line)
	run -0 mq "$bundle" '[m["cpus"], col("proc.interrupts","start")["truncated"], col("proc.interrupts","start")["bytes"] <= 8 * 1024 * 1024, col("proc.stat","end")["truncated"]]'
	assert_output '[512, true, true, false]'
	# the tail is kept, whole lines only
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/snap/start/proc-interrupts.txt' | tail -n 1"
	assert_output --partial "eth0-TxRx-1999"
	run -0 bash -c "tar -xzOf '$bundle' --wildcards '*/snap/start/proc-interrupts.txt' | head -n 1 | grep -cE '^ *[0-9]+: '"
	assert_output 1
	# the bundle stays small
	[ "$(stat -c %s "$bundle")" -lt $((20 * 1024 * 1024)) ]
}

@test "--redact: redacted path last, or (redaction unavailable) unredacted kept + stderr + exit >= 1" {
	require_root
	run_capture -d 1 -o "$OUT" --no-bpf --redact
	local last
	last=$(last_line)
	assert_file_exists "$last"
	if [[ $last == *flamediag-redacted-* ]]; then
		assert_equal "$(find "$OUT" -name 'flamediag-*.tar.gz' ! -name 'flamediag-redacted-*' | wc -l)" 0
		assert_file_exists "$last.map.json"
	else
		[ "$status" -ge 1 ] || false
		[[ $stderr == *"redaction failed"*"UNREDACTED"* ]] || { echo "$stderr"; false; }
		assert_equal "$(find "$OUT" -name 'flamediag-redacted-*' | wc -l)" 0
	fi
}

@test "--diagnose: bundle path stays the last stdout line, the diagnosis goes beside it" {
	require_root
	run_capture -d 1 -o "$OUT" --no-bpf --diagnose
	local last
	last=$(last_line)
	[[ $last == "$OUT"/flamediag-*.tar.gz ]] || false
	assert_file_exists "$last"
	[ "$status" -le 1 ] || false
	[[ $stderr == *"Diagnosing"* ]] || false
	assert_equal "$(printf '%s\n' "$output" | grep -c .)" 1
}
