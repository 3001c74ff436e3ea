#!/usr/bin/env bash
# shellcheck disable=SC2034 # OPT_* / window globals are read by the sourced lib/capture/*.bash
# capture - record perf stacks and system metrics of one time window into one bundle.
#           Uses perf, sysstat, procfs/sysfs; bcc or bpftrace when they work.
#
# USAGE: flamediag capture [-d SECONDS] [-F HZ] [-o DIR] [--label TEXT] [--no-bpf]
#                          [--keep-perf-data] [--max-size MB] [--quiet] [--diagnose] [--redact]
#    eg,
#        sudo flamediag capture                  # 30 s at 99 Hz into ./flamediag-<host>-<UTC>.tar.gz
#        sudo flamediag capture -d 10 -o /var/tmp --label "softirq spike CPU0"
#
# REQUIREMENTS: bash 4.4+, coreutils, tar, gzip; perf (linux-perf / linux-tools-$(uname -r)),
#   sysstat, numactl, iproute2, ethtool, procps (each optional: a missing tool is recorded).
#   No Python on the host.
# OVERHEAD: perf record -a -g at 99 Hz plus one-second samplers; measured by bench/capture-overhead
#   (doc/capture.md, OVERHEAD). perf script / gzip / tar run after the window at nice 19, idle I/O.
# Changes nothing on the system: no sysctl writes, no module loads (ss only runs when inet_diag and
#   tcp_diag are already loaded), debugfs is not mounted.
# Exit: 0 ok, 1 partial bundle, 2 usage, 65 output location unusable (missing dir, too little
#   space), 75 another capture running, 77 cannot write the output dir / nothing collectable,
#   130/143 interrupted (a partial bundle is still written).
#
# 22-Nov-2026	flamediag	Created this (issue 4).

set -u
umask 077
export LC_ALL=C

FLAMEDIAG_HOME=${FLAMEDIAG_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CAPTURE_LIB=$FLAMEDIAG_HOME/lib/capture
# shellcheck source=lib/python.bash
. "$FLAMEDIAG_HOME/lib/python.bash"
# shellcheck source=lib/capture/util.bash
. "$CAPTURE_LIB/util.bash"
# shellcheck source=lib/capture/runner.bash
. "$CAPTURE_LIB/runner.bash"
# shellcheck source=lib/capture/perf.bash
. "$CAPTURE_LIB/perf.bash"
# shellcheck source=lib/capture/pack.bash
. "$CAPTURE_LIB/pack.bash"

### default variables
OPT_DURATION=30 OPT_HZ=99 OPT_OUTDIR=. OPT_LABEL="" OPT_NO_BPF=0 OPT_KEEP=0 OPT_MAX_MB=""
OPT_QUIET=0 OPT_DIAGNOSE=0 OPT_REDACT=0
PROC_ROOT=${FLAMEDIAG_PROC_ROOT:-/proc}
SYS_ROOT=${FLAMEDIAG_SYS_ROOT:-/sys}
SLACK=${FLAMEDIAG_SLACK:-120}                     # whole-run deadline = duration + SLACK
BYTES_PER_SAMPLE=1536                             # perf.data + script.gz per -g sample, measured
SPACE_FLOOR_MB=${FLAMEDIAG_SPACE_FLOOR_MB:-64}    # metrics, tar copy, headroom
RESERVE_KB=1024        # held in the bundle directory, given back when the output fills up mid-capture
ROOM_FLOOR_KB=128      # less free than this in the output directory during the capture = full
DISK_FULL=0 DISK_FULL_FAILS=0
DISK_FULL_ERRORS='no space left on device|file too large|disk quota exceeded'   # ENOSPC, EFBIG, EDQUOT
VERSION=$(cat "$FLAMEDIAG_HOME/lib/VERSION" 2>/dev/null || echo unknown)
COMMAND_LINE="flamediag capture $*"
END_SIGNAL="" NOTES=() TAR_TMP="" BUNDLE="" BUNDLE_DIR="" STATE_DIR="" DEADLINE=0
SENTINEL_PID="" SENTINEL_LOG="" SIGNALS_TRAPPED=0 SIGNALS_HANDLED=0

usage() {
	cat <<-'END'
	USAGE: flamediag capture [-d SECONDS] [-F HZ] [-o DIR] [--label TEXT] [--no-bpf]
	                         [--keep-perf-data] [--max-size MB] [--quiet] [--diagnose] [--redact]
	                 -d, --duration SECONDS   recording window (default 30)
	                 -F, --frequency HZ       perf sampling frequency (default 99)
	                 -o, --output DIR         where the bundle goes (default .)
	                 --label TEXT             free text stored in the manifest (ticket id...)
	                 --no-bpf                 do not run bcc / bpftrace tools
	                 --keep-perf-data         also keep perf.data and perf archive output
	                 --max-size MB            cap perf.data (perf record --max-size) and the bundle
	                 --quiet                  no progress on stderr (errors still printed)
	                 --diagnose               run flamediag diagnose on the bundle (needs python3)
	                 --redact                 replace host names/addresses (flamediag redact)
	   The bundle path is the last line on stdout. Needs root for perf -a and BPF.
	   Exit: 0 ok, 1 partial, 2 usage, 65 output unusable/too little space, 75 already running,
	         77 output not writable / nothing collectable, 130/143 interrupted.
	   eg,
	       sudo flamediag capture                       # 30 s at 99 Hz into the current directory
	       sudo flamediag capture -d 10 -o /var/tmp     # 10 s, bundle in /var/tmp
	       sudo flamediag capture --label INC-1234 --diagnose   # and print the diagnosis headline
	See doc/capture.md and doc/examples/capture_example.txt for more.
	END
}

usage_error() {
	echo "flamediag capture: $*" >&2
	usage >&2
	exit 2
}

### process options
parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage; exit 0 ;;
		-d | --duration | -F | --frequency | -o | --output | --label | --max-size)
			[ $# -ge 2 ] || usage_error "option $1 needs a value"
			set_option "$1" "$2"
			shift 2
			;;
		--duration=* | --frequency=* | --output=* | --label=* | --max-size=*) set_option "${1%%=*}" "${1#*=}"; shift ;;
		--no-bpf) OPT_NO_BPF=1; shift ;;
		--keep-perf-data) OPT_KEEP=1; shift ;;
		--quiet | -q) OPT_QUIET=1; shift ;;
		--diagnose) OPT_DIAGNOSE=1; shift ;;
		--redact) OPT_REDACT=1; shift ;;
		*) usage_error "unknown option '$1'" ;;
		esac
	done
	is_uint "$OPT_DURATION" && [ "$OPT_DURATION" -ge 1 ] || usage_error "-d needs whole seconds >= 1 (got '$OPT_DURATION')"
	is_uint "$OPT_HZ" && [ "$OPT_HZ" -ge 1 ] && [ "$OPT_HZ" -le 100000 ] || usage_error "-F needs a frequency 1..100000 Hz (got '$OPT_HZ')"
	[ -z "$OPT_MAX_MB" ] || { is_uint "$OPT_MAX_MB" && [ "$OPT_MAX_MB" -ge 1 ]; } || usage_error "--max-size needs whole MB >= 1 (got '$OPT_MAX_MB')"
	return 0
}

set_option() {
	case $1 in
	-d | --duration) OPT_DURATION=$2 ;;
	-F | --frequency) OPT_HZ=$2 ;;
	-o | --output) OPT_OUTDIR=$2 ;;
	--label) OPT_LABEL=$2 ;;
	--max-size) OPT_MAX_MB=$2 ;;
	esac
}

### option logic: host facts
count_cpus() {
	local n
	n=$(grep -c '^cpu[0-9]' "$PROC_ROOT/stat" 2>/dev/null)
	[ "${n:-0}" -gt 0 ] || n=$(getconf _NPROCESSORS_ONLN)
	echo "$n"
}

count_numa_nodes() {
	local nodes
	nodes=$(find "$SYS_ROOT/devices/system/node" -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l)
	[ "$nodes" -gt 0 ] || nodes=1
	echo "$nodes"
}

host_name() {
	uname -n | cut -d. -f1 | tr -c 'A-Za-z0-9_.\n-' '_'
}

### check the output location, the lock and the space
check_output_dir() {
	local probe
	[ -d "$OPT_OUTDIR" ] || die 65 "output directory $OPT_OUTDIR does not exist. Create it (mkdir -p $OPT_OUTDIR) or pick another: -o /var/tmp"
	OUT=$(cd "$OPT_OUTDIR" && pwd -P)
	DISK_FULL_FIX="free space in $OUT, or capture with -o on a bigger file system"
	if ! probe=$(mktemp "$OUT/.flamediag-probe.XXXXXX" 2>&1); then
		die 77 "cannot write to $OUT (${probe##*: }). Not root, or a read-only file system? Pick a writable directory: -o /var/tmp"
	fi
	rm -f "$probe"
}

lock_path() {
	if [ -n "${FLAMEDIAG_LOCK:-}" ]; then
		echo "$FLAMEDIAG_LOCK"
	elif [ -d /run/lock ] && { [ -w /run/lock ] || [ -e /run/lock/flamediag-capture.lock ]; }; then
		echo /run/lock/flamediag-capture.lock
	else
		echo "${TMPDIR:-/tmp}/flamediag-capture.lock"
	fi
}

# flock on fd 9: the kernel drops it when we die, so `kill -9` leaves no stale lock.
take_lock() {
	local lock holder
	lock=$(lock_path)
	# `exec 9<>F 2>/dev/null` would silence stderr for good: the group keeps it local
	if ! { exec 9<>"$lock"; } 2>/dev/null; then
		{ exec 9<"$lock"; } 2>/dev/null || die 77 "cannot open the lock file $lock. Run as root, or set FLAMEDIAG_LOCK to a writable path"
	fi
	if ! flock -n 9; then
		holder=$(cat "$lock" 2>/dev/null)
		die 75 "flamediag capture or watch already running (pid ${holder%% *}${holder#* }; lock $lock). Wait for it to finish, or stop it: kill -INT ${holder%% *}"
	fi
	[ -w "$lock" ] && chmod 644 "$lock" 2>/dev/null && printf '%s, since %s\n' "$$" "$(utc_iso)" >"$lock"
	return 0
}

# Free space against CPUs x Hz x seconds x bytes per sample + a floor; refuse with the numbers.
check_space() {
	local free_kb need_mb perf_mb
	free_kb=$(df -Pk "$OUT" | awk 'NR == 2 { print $4 }')
	perf_mb=$(((CPUS * OPT_HZ * OPT_DURATION * BYTES_PER_SAMPLE + 1048575) / 1048576))
	[ -n "$OPT_MAX_MB" ] && [ "$perf_mb" -gt "$OPT_MAX_MB" ] && perf_mb=$OPT_MAX_MB
	need_mb=$((perf_mb + SPACE_FLOOR_MB))
	if [ "${free_kb:-0}" -lt $((need_mb * 1024)) ]; then
		die 65 "not enough space in $OUT: $((free_kb / 1024)) MiB free, capture needs about $need_mb MiB ($CPUS CPUs x $OPT_HZ Hz x $OPT_DURATION s x $BYTES_PER_SAMPLE B = $perf_mb MiB + $SPACE_FLOOR_MB MiB floor). Use -o on a bigger file system, or lower -d / -F / --max-size"
	fi
}

make_bundle_dir() {
	local try
	for try in 1 2 3; do
		NAME=flamediag-$HOST-$(date -u +%Y%m%dT%H%M%SZ)
		if [ ! -e "$OUT/$NAME.tar.gz" ] && mkdir "$OUT/$NAME" 2>/dev/null; then
			BUNDLE_DIR=$OUT/$NAME
			STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/flamediag-capture.XXXXXX") || die 77 "cannot create a temporary directory in ${TMPDIR:-/tmp}"
			make_reserve
			return 0
		fi
		[ $try = 3 ] || sleep 1
	done
	die 77 "cannot create $OUT/$NAME (exists, or not writable). Pick another directory: -o /var/tmp"
}

### the output filling up mid-capture (sos: ENOSPC is fatal to collection, never to what was collected)
# make_reserve -> a 1 MiB file in the bundle directory: given back when the output fills up, so
# the manifest and SHA256SUMS still fit. Never packed (a dot file), removed on exit.
make_reserve() {
	head -c $((RESERVE_KB * 1024)) /dev/zero >"$BUNDLE_DIR/.reserve" 2>/dev/null && return 0
	rm -rf "$BUNDLE_DIR"
	BUNDLE_DIR=""
	die 65 "not enough space in $OUT for the bundle's 1 MiB reserve. Use -o on a bigger file system"
}

# out_of_room -> true when the output directory has (almost) no space left.
out_of_room() {
	local avail
	avail=$(df -Pk "$OUT" 2>/dev/null | awk 'NR == 2 { print $4 }')
	is_uint "$avail" && [ "$avail" -lt "$ROOM_FLOOR_KB" ]
}

# says_disk_full FILE -> true when a tool's stderr there says it could not write for lack of space.
says_disk_full() {
	grep -qsiE "$DISK_FULL_ERRORS" "$1"
}

# disk_full WHAT -> once: give the reserve back, start no more collectors, say so on one line.
disk_full() {
	[ "$DISK_FULL" = 1 ] && return 0
	DISK_FULL=1
	rm -f "$BUNDLE_DIR/.reserve"
	NOTES+=("ENOSPC: $OUT filled up at $(utc_iso) ($1); the collectors after that were skipped, the bundle is partial")
	warn "$OUT is full ($1): stopping the capture and keeping what was collected. Fix: free space there, or capture with -o on a bigger file system"
}

### signals
# First INT/TERM: stop recording (perf gets SIGINT: perf.data is finalised), start nothing new,
# pack what exists. Second: leave the directory with a manifest, no tarball.
#
# Bash 5.2 can lose a trapped INT/TERM that lands while it reads a $(...): 1 capture in 12
# signalled as its window started ran on to the end, and 2 double Ctrl-C in 10 on a loaded host
# packed anyway. So a sentinel, a small bash in our process group, writes one line per INT/TERM
# it receives; signals received = the larger of what our trap and the sentinel counted (a group
# signal reaches both; a late trap for a signal already handled adds nothing). The trap and every
# checkpoint (check_sentinel) act on the signals not yet handled.
on_trap() {
	# only the capture's own shell acts (a trap can fire in a $(...) child forked as it arrived)
	[ "$BASHPID" = "$$" ] || return 0
	SIGNALS_TRAPPED=$((SIGNALS_TRAPPED + 1))
	handle_signals "$1"
}

# handle_signals [TRAPPED_NAME] -> on_signal once per signal received and not yet handled.
# No job is started here: it runs in traps, where a new job would change $! under the
# interrupted code's feet.
handle_signals() {
	local seen=() received name
	[ -n "$SENTINEL_LOG" ] && [ -s "$SENTINEL_LOG" ] && mapfile -t seen <"$SENTINEL_LOG"
	received=${#seen[@]}
	[ "$SIGNALS_TRAPPED" -gt "$received" ] && received=$SIGNALS_TRAPPED
	while [ "$SIGNALS_HANDLED" -lt "$received" ]; do
		name=${seen[$SIGNALS_HANDLED]:-${1:-SIGINT}}
		case $name in SIGINT | SIGTERM) ;; *) name=SIGINT ;; esac
		on_signal "$name"
	done
}

on_signal() {
	SIGNALS_HANDLED=$((SIGNALS_HANDLED + 1))
	if [ -z "$END_SIGNAL" ]; then
		END_SIGNAL=$1
		warn "$1 received: stopping the capture and packing what exists ($1 again: stop packing)."
		return 0
	fi
	[ -n "$CURRENT_PID" ] && kill -TERM "$CURRENT_PID" 2>/dev/null
	stop_window KILL
	[ -n "${PERF_PID:-}" ] && kill -INT "$PERF_PID" 2>/dev/null
	[ -n "$TAR_TMP" ] && rm -f "$TAR_TMP"
	if [ -n "$BUNDLE_DIR" ] && [ -d "$BUNDLE_DIR" ]; then
		NOTES+=("second $1: not packed; this directory is the partial capture")
		END_UTC=$(utc_iso)
		write_manifest false interrupted
		rm -f "$BUNDLE_DIR/SHA256SUMS"
		warn "second $1: not packing. Partial capture (with manifest.json) left in $BUNDLE_DIR"
		printf '%s\n' "$BUNDLE_DIR"
	fi
	exit "$(signal_exit_code)"
}

# The sentinel ends within 2 s of the capture's end, even after a kill -9 (it polls our pid).
start_sentinel() {
	# background jobs start with INT ignored; env --default-signal (coreutils 8.31+) restores it
	local reset=()
	env --default-signal=INT true 2>/dev/null && reset=(env "--default-signal=INT,TERM")
	[ -n "$SENTINEL_LOG" ] ||
		SENTINEL_LOG=$(mktemp "${TMPDIR:-/tmp}/flamediag-signals.XXXXXX") || { SENTINEL_LOG=""; return 0; }
	# shellcheck disable=SC2016  # expanded by the sentinel's bash
	"${reset[@]}" bash -c 'trap "echo SIGINT" INT; trap "echo SIGTERM" TERM
		while kill -0 "$1" 2>/dev/null; do sleep 2 & wait $!; done' flamediag-sentinel "$$" \
		</dev/null >>"$SENTINEL_LOG" 2>/dev/null 9>&- &
	SENTINEL_PID=$!
	disown "$SENTINEL_PID" 2>/dev/null   # no "Killed" line when cleanup ends it
}

# check_sentinel -> at a checkpoint: act on signals whose trap was lost; keep a sentinel running.
check_sentinel() {
	[ "$BASHPID" = "$$" ] || return 0
	if [ -z "$SENTINEL_PID" ] || ! kill -0 "$SENTINEL_PID" 2>/dev/null; then start_sentinel; fi
	handle_signals
	return 0
}

signal_exit_code() {
	case $END_SIGNAL in SIGTERM) echo 143 ;; *) echo 130 ;; esac
}

cleanup() {
	[ -n "$SENTINEL_PID" ] && kill -KILL "$SENTINEL_PID" 2>/dev/null
	[ -n "$SENTINEL_LOG" ] && rm -f "$SENTINEL_LOG"
	[ -n "$STATE_DIR" ] && rm -rf "$STATE_DIR"
	[ -n "$BUNDLE_DIR" ] && rm -f "$BUNDLE_DIR/.reserve"
	[ -n "$TAR_TMP" ] && rm -f "$TAR_TMP"
	return 0
}

### record
banner() {
	say "Capturing $OPT_DURATION s at $OPT_HZ Hz on $CPUS CPUs into $OUT/$NAME.tar.gz. Ctrl-C to end."
}

# Sleep a second (or less), interruptible by a trapped signal.
nap() {
	local pid
	sleep "$1" 9>&- &
	pid=$!	# not $! after the wait: a trap that ran meanwhile may have started another job
	wait "$pid" 2>/dev/null || kill "$pid" 2>/dev/null
}

record_window() {
	local t0 end_us left_us
	# samplers first (their first sample is 1 s after start), then perf: t0 is perf's ack
	set_now
	WINDOW_END=$(us_to_s $((NOW_US + OPT_DURATION * 1000000)))
	start_window
	perf_enable
	t0=$(now_s)
	set_now
	end_us=$((NOW_US + OPT_DURATION * 1000000))
	WINDOW_END=$(us_to_s "$end_us")
	while check_sentinel && [ -z "$END_SIGNAL" ] && [ "$DISK_FULL" = 0 ]; do
		out_of_room && disk_full "during the recording window" && break
		set_now
		left_us=$((end_us - NOW_US))
		[ "$left_us" -gt 0 ] || break
		[ -t 2 ] && [ "$OPT_QUIET" = 0 ] && printf '\r  recording: %3d s left ' $(((left_us + 999999) / 1000000)) >&2
		[ "$left_us" -gt 1000000 ] && left_us=1000000
		nap "$(us_to_s "$left_us")"
		set_now
		# the window's end is not delayed by bookkeeping
		[ "$NOW_US" -lt "$end_us" ] && reap_window
	done
	[ -t 2 ] && [ "$OPT_QUIET" = 0 ] && printf '\r%30s\r' '' >&2
	perf_stop
	DURATION_ACTUAL=$(elapsed "$t0")
	WINDOW_STOPPED=0
	if [ -n "$END_SIGNAL" ] || [ "$DISK_FULL" = 1 ]; then
		WINDOW_STOPPED=1
		stop_window INT
		wait_window_exit "$KILL_GRACE" || stop_window KILL
	fi
}

# end_window -> after the end snapshots: collect perf and the window collectors.
end_window() {
	perf_record_finish "$WINDOW_STOPPED"
	reap_window all
}

# The exit status from what the manifest says.
capture_exit_code() {
	local ok_count
	[ -n "$END_SIGNAL" ] && { signal_exit_code; return; }
	[ "$DISK_FULL" = 1 ] && { echo 1; return; }   # partial, whatever was collected before
	ok_count=$(grep -c '"status":"ok"' "$STATE_DIR/collectors.jsonl" 2>/dev/null)
	if [ "${ok_count:-0}" -le 1 ] && [ "$PERF_STATUS" != ok ]; then
		echo 77
	elif [ "$PERF_STATUS" != ok ] || [ "$PARTIAL" = 1 ]; then
		echo 1
	else
		echo 0
	fi
}

report_problems() {
	local line
	[ -n "$PERF_PROBLEM" ] && [ "$PERF_PROBLEM" != "${PERF_PROBLEM_SHOWN:-}" ] && warn "$PERF_PROBLEM"
	for line in "${PROBLEMS[@]}"; do
		case $line in perf.preflight* | perf.record*) continue ;; esac
		warn "$line"
	done
	[ "$DISK_FULL_FAILS" = 0 ] || warn "$DISK_FULL_FAILS collector(s) could not write their output: $OUT is full (see manifest.json)"
	return 0
}

### after packing: --redact, --diagnose
python_available() {
	flamediag_python >/dev/null
}

run_redact() {
	local redacted=$OUT/flamediag-redacted-${NAME##*-}.tar.gz rc
	say "Redacting: flamediag redact"
	"${PRIO[@]}" "$FLAMEDIAG_HOME/bin/flamediag" redact "$BUNDLE" -o "$redacted" >&2 9>&-
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$redacted" ]; then
		rm -f "$BUNDLE"
		BUNDLE=$redacted
		return 0
	fi
	rm -f "$redacted"
	warn "redaction failed (flamediag redact exited $rc): kept the UNREDACTED bundle $BUNDLE. Redact it later: flamediag redact $BUNDLE -o ${redacted##*/}"
	return 1
}

run_diagnose() {
	local dest=$OUT/${NAME}-diagnosis rc
	if ! python_available; then
		warn "--diagnose: no python3 on this host; diagnose elsewhere: flamediag diagnose ${BUNDLE##*/}"
		return 0
	fi
	say "Diagnosing: flamediag diagnose (nice 19)"
	nice -n 19 "$FLAMEDIAG_HOME/bin/flamediag" diagnose "$BUNDLE" -o "$dest" >&2 9>&-
	rc=$?
	[ $rc -le 1 ] && return 0
	warn "--diagnose failed (exit $rc); the bundle is fine: run flamediag diagnose $BUNDLE elsewhere"
	return 1
}

# seal_and_pack -> final manifest, SHA256SUMS, the tarball, --redact / --diagnose, the path on
# stdout; PACK_RC = the exit status. False when packing failed (the directory is left).
seal_and_pack() {
	local state="done"
	rm -f "$BUNDLE_DIR/.reserve"
	[ "$DISK_FULL" = 1 ] && state=disk_full
	write_manifest "$([ -z "$END_SIGNAL" ] && [ "$DISK_FULL" = 0 ] && echo true || echo false)" "$state"
	write_sums
	PACK_RC=$(capture_exit_code)
	report_problems
	pack || return 1
	if [ "$OPT_REDACT" = 1 ]; then run_redact || { [ "$PACK_RC" = 0 ] && PACK_RC=1; }; fi
	if [ "$OPT_DIAGNOSE" = 1 ]; then run_diagnose || { [ "$PACK_RC" = 0 ] && PACK_RC=1; }; fi
	say "Bundle: $BUNDLE ($(file_bytes "$BUNDLE") bytes)"
	printf '%s\n' "$BUNDLE"
}

# FLAMEDIAG_TRACE=FILE: an xtrace of the run (debugging)
start_trace() {
	[ -n "${FLAMEDIAG_TRACE:-}" ] || return 0
	exec 6>>"$FLAMEDIAG_TRACE"
	BASH_XTRACEFD=6 PS4='+ ${EPOCHREALTIME:-} ${FUNCNAME[0]:-main}: '
	set -x
}

read_host() {
	CPUS=$(count_cpus)
	NUMA_NODES=$(count_numa_nodes)
	HOST=$(host_name)
	KERNEL=$(uname -r)
	ARCH=$(uname -m)
}

### main
main() {
	start_trace
	parse_args "$@"
	read_host
	check_output_dir
	take_lock
	check_space
	load_declarations "$FLAMEDIAG_HOME/lib/collectors.tsv"
	mapfile -t NICS < <(physical_nics "$SYS_ROOT")
	trap 'on_trap SIGINT' INT
	trap 'on_trap SIGTERM' TERM
	trap cleanup EXIT
	start_sentinel
	make_bundle_dir
	START_UTC=$(utc_iso)
	DEADLINE=$(awk -v n="$(now_s)" -v d="$OPT_DURATION" -v s="$SLACK" 'BEGIN { printf "%.0f\n", n + d + s }')
	banner
	is_root || warn "not root: perf -a and BPF need root; metrics only. Fix: sudo flamediag capture ..."
	write_manifest false capturing
	perf_preflight
	[ -n "$PERF_PROBLEM" ] && warn "$PERF_PROBLEM" && PERF_PROBLEM_SHOWN=$PERF_PROBLEM
	perf_record_start
	run_phase start
	write_manifest false recording
	record_window
	END_UTC=$(utc_iso)
	run_phase end
	end_window
	check_sentinel
	say "Packing: once-only collectors, perf script, SHA256SUMS, tar (nice 19, ionice idle)"
	run_phase once
	check_sentinel
	perf_script
	check_sentinel
	perf_archive
	enforce_max_size
	times >"$STATE_DIR/times"
	check_sentinel
	seal_and_pack || exit 1
	exit "$PACK_RC"
}

# run when executed; lib/watch.bash sources this file for its functions and runs its own main
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
