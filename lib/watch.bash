#!/usr/bin/env bash
# shellcheck disable=SC2034 # OPT_* / window globals are read by the sourced capture functions
# watch - a flight recorder: wait for a CPU-system spike, then write the bundle of its window,
#         seconds before the trigger included.
#
# USAGE: flamediag watch [--sys-above PCT] [--soft-above PCT] [--cpu-sys-above PCT]
#                        [--cpu-soft-above PCT] [--for S] [--pre S] [--post S] [--cooldown S]
#                        [--max-bundles N] [--max-disk MB] [--once] [-d SECONDS] [-F HZ] [-o DIR] ...
#    eg,
#        sudo flamediag watch --sys-above 30 -o /var/tmp --once
#        sudo flamediag watch --cpu-soft-above 90 --for 3 -o /var/lib/flamediag
#
# Every second it reads /proc/stat (and keeps /proc/{softirqs,interrupts,vmstat,...} for the last
# --pre seconds in memory) while `perf record --overwrite` samples into an in-kernel ring. When a
# rule holds for --for seconds it records --post seconds more, dumps the ring (SIGUSR2), and
# writes a normal bundle (doc/bundle-format.md) whose manifest has a "trigger" object.
# Built on capture: the same lock, space checks, collectors, signals and packing (lib/capture.bash
# is sourced for its functions). No fork per second but the sleep; see doc/watch.md, OVERHEAD.
# Exit: 0 ok (bundles written, or --duration over, or a cap reached), 1 last bundle partial,
#   2 usage, 65 output unusable / too little space / cap reached before arming, 75 another
#   capture or watch running, 77 output not writable, 130/143 interrupted.

set -u
WATCH_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/capture.bash
. "$WATCH_LIB/capture.bash"
COMMAND_LINE="flamediag watch $*"

### default variables
OPT_SYS="" OPT_SOFT="" OPT_CPU_SYS="" OPT_CPU_SOFT="" OPT_FOR=5 OPT_PRE=10 OPT_POST=10
OPT_COOLDOWN=300 OPT_MAX_BUNDLES=5 OPT_MAX_DISK_MB=1024 OPT_ONCE=0 OPT_WATCH_SECONDS=0 OPT_RING_MB=""
RING_BYTES_PER_SAMPLE=512      # perf.data bytes per -g sample, with margin (measured ~300)
# start,end collectors the ring keeps every second (plain procfs reads, no process): name -> source
declare -A KEPT=([proc.stat]=stat [proc.softirqs]=softirqs [proc.interrupts]=interrupts
	[proc.vmstat]=vmstat [proc.softnet_stat]=net/softnet_stat [proc.meminfo]=meminfo
	[proc.pressure]=pressure [loadavg]=loadavg)
# window collectors the ring's /proc/stat series replaces (they would cover --post only)
RING_REPLACES="mpstat mpstat.json procstat"
WATCH_STATE="" RING_DIR="" RING_PERF_PID="" WATCH_RC=0 BUNDLES_WRITTEN=0 TRIGGER_JSON=""

warn() {
	printf 'flamediag watch: %s\n' "$*" >&2
}

usage() {
	cat <<-'END'
	USAGE: flamediag watch [--sys-above PCT] [--soft-above PCT] [--cpu-sys-above PCT]
	                       [--cpu-soft-above PCT] [--for S] [--pre S] [--post S] [--cooldown S]
	                       [--max-bundles N] [--max-disk MB] [--once] [-d SECONDS] [-F HZ]
	                       [-o DIR] [--label TEXT] [--no-bpf] [--keep-perf-data] [--ring-mb MB]
	                       [--quiet] [--diagnose] [--redact]
	   triggers (any one fires; default: --sys-above 30 --soft-above 20 --cpu-soft-above 80):
	                 --sys-above PCT          overall %sys (all CPUs) above PCT
	                 --soft-above PCT         overall %soft above PCT
	                 --cpu-sys-above PCT      %sys of any one CPU above PCT
	                 --cpu-soft-above PCT     %soft of any one CPU above PCT
	                 --for S                  ... for S consecutive seconds (default 5)
	   what is kept:
	                 --pre S                  seconds kept before the trigger (default 10)
	                 --post S                 seconds recorded after it (default 10)
	                 -F, --frequency HZ       perf sampling frequency (default 99)
	                 --ring-mb MB             perf ring per CPU (default: sized for pre + post)
	                 --no-bpf, --keep-perf-data, --label TEXT, --diagnose, --redact: as capture
	   limits:
	                 --cooldown S             no new trigger for S seconds after a bundle (default 300)
	                 --max-bundles N          stop once DIR holds N bundles (default 5)
	                 --max-disk MB            stop before DIR's bundles would pass MB (default 1024)
	                 --once                   exit after the first bundle
	                 -d, --duration SECONDS   stop watching after SECONDS (default: until stopped)
	                 -o, --output DIR         where bundles go (default .)
	                 --quiet                  no progress on stderr
	   Each bundle path is printed on stdout when written (with --once: the last line).
	   Needs root (perf -a). One capture or watch at a time (the capture lock).
	   Exit: 0 ok (also: --duration over without a trigger, cap reached), 1 partial bundle,
	         2 usage, 65 output unusable / too little space / cap already reached, 75 already
	         running, 77 output not writable, 130/143 interrupted.
	   eg,
	       sudo flamediag watch --sys-above 30 -o /var/tmp --once     # wait for the next spike
	       sudo flamediag watch --cpu-soft-above 90 --for 3 --pre 20  # one CPU's softirq storm
	       sudo flamediag watch -d 3600 --max-bundles 3 -o /var/tmp    # an hour, 3 bundles at most
	       systemctl enable --now flamediag-watch                      # as a service (doc/watch.md)
	See doc/watch.md and doc/examples/watch_example.txt for more.
	END
}

usage_error() {
	echo "flamediag watch: $*" >&2
	usage >&2
	exit 2
}

### process options
parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage; exit 0 ;;
		--*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;;
		--sys-above | --soft-above | --cpu-sys-above | --cpu-soft-above | --for | --pre | --post | --cooldown | \
			--max-bundles | --max-disk | -d | --duration | -F | --frequency | -o | --output | --label | --ring-mb)
			[ $# -ge 2 ] || usage_error "option $1 needs a value"
			set_watch_option "$1" "$2"
			shift 2
			;;
		--once) OPT_ONCE=1; shift ;;
		--no-bpf) OPT_NO_BPF=1; shift ;;
		--keep-perf-data) OPT_KEEP=1; shift ;;
		--quiet | -q) OPT_QUIET=1; shift ;;
		--diagnose) OPT_DIAGNOSE=1; shift ;;
		--redact) OPT_REDACT=1; shift ;;
		*) usage_error "unknown option '$1'" ;;
		esac
	done
	check_options
}

set_watch_option() {
	case $1 in
	--sys-above) OPT_SYS=$2 ;;
	--soft-above) OPT_SOFT=$2 ;;
	--cpu-sys-above) OPT_CPU_SYS=$2 ;;
	--cpu-soft-above) OPT_CPU_SOFT=$2 ;;
	--for) OPT_FOR=$2 ;;
	--pre) OPT_PRE=$2 ;;
	--post) OPT_POST=$2 ;;
	--cooldown) OPT_COOLDOWN=$2 ;;
	--max-bundles) OPT_MAX_BUNDLES=$2 ;;
	--max-disk) OPT_MAX_DISK_MB=$2 ;;
	-d | --duration) OPT_WATCH_SECONDS=$2 ;;
	--ring-mb) OPT_RING_MB=$2 ;;
	*) set_option "$1" "$2" ;;   # capture's: -F, -o, --label
	esac
}

# in_range VALUE MIN MAX -> true for a whole number in [MIN, MAX]
in_range() {
	is_uint "$1" && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

check_options() {
	local opt
	if [ -z "$OPT_SYS$OPT_SOFT$OPT_CPU_SYS$OPT_CPU_SOFT" ]; then
		OPT_SYS=30 OPT_SOFT=20 OPT_CPU_SOFT=80
	fi
	for opt in "sys-above:$OPT_SYS" "soft-above:$OPT_SOFT" "cpu-sys-above:$OPT_CPU_SYS" "cpu-soft-above:$OPT_CPU_SOFT"; do
		[ -z "${opt#*:}" ] || in_range "${opt#*:}" 1 100 || usage_error "--${opt%%:*} needs a whole percentage 1..100 (got '${opt#*:}')"
	done
	in_range "$OPT_FOR" 1 3600 || usage_error "--for needs whole seconds 1..3600 (got '$OPT_FOR')"
	in_range "$OPT_PRE" 1 600 || usage_error "--pre needs whole seconds 1..600 (got '$OPT_PRE')"
	in_range "$OPT_POST" 1 600 || usage_error "--post needs whole seconds 1..600 (got '$OPT_POST')"
	in_range "$OPT_COOLDOWN" 0 604800 || usage_error "--cooldown needs whole seconds >= 0 (got '$OPT_COOLDOWN')"
	in_range "$OPT_MAX_BUNDLES" 1 100000 || usage_error "--max-bundles needs a count >= 1 (got '$OPT_MAX_BUNDLES')"
	in_range "$OPT_MAX_DISK_MB" 1 100000000 || usage_error "--max-disk needs whole MB >= 1 (got '$OPT_MAX_DISK_MB')"
	in_range "$OPT_WATCH_SECONDS" 0 31622400 || usage_error "-d needs whole seconds >= 0 (got '$OPT_WATCH_SECONDS')"
	in_range "$OPT_HZ" 1 100000 || usage_error "-F needs a frequency 1..100000 Hz (got '$OPT_HZ')"
	[ -z "$OPT_RING_MB" ] || in_range "$OPT_RING_MB" 1 4096 || usage_error "--ring-mb needs whole MB 1..4096 (got '$OPT_RING_MB')"
	return 0
}

rules_text() {
	local out=""
	[ -n "$OPT_SYS" ] && out+=", %sys > $OPT_SYS %"
	[ -n "$OPT_SOFT" ] && out+=", %soft > $OPT_SOFT %"
	[ -n "$OPT_CPU_SYS" ] && out+=", one CPU's %sys > $OPT_CPU_SYS %"
	[ -n "$OPT_CPU_SOFT" ] && out+=", one CPU's %soft > $OPT_CPU_SOFT %"
	printf '%s\n' "${out#, }"
}

### caps: the bundles in the output directory (earlier runs and captures count: it is one disk)
# dir_bundles -> DIR_COUNT, DIR_MB (flamediag-*.tar.gz in OUT)
dir_bundles() {
	local f bytes=0
	DIR_COUNT=0
	for f in "$OUT"/flamediag-*.tar.gz; do
		[ -f "$f" ] || continue
		DIR_COUNT=$((DIR_COUNT + 1))
		bytes=$((bytes + $(file_bytes "$f")))
	done
	DIR_MB=$(((bytes + 1048575) / 1048576))
}

# bundle_estimate_mb -> MB one bundle may take (capture's per-sample figure, pre + post seconds)
bundle_estimate_mb() {
	echo $(((CPUS * OPT_HZ * (OPT_PRE + 1 + OPT_POST) * BYTES_PER_SAMPLE + 1048575) / 1048576 + 1))
}

# cap_reached -> true (CAP_TEXT set) when one more bundle would pass --max-bundles / --max-disk
cap_reached() {
	dir_bundles
	if [ "$DIR_COUNT" -ge "$OPT_MAX_BUNDLES" ]; then
		CAP_TEXT="$OUT holds $DIR_COUNT bundles (--max-bundles $OPT_MAX_BUNDLES)"
	elif [ $((DIR_MB + $(bundle_estimate_mb))) -gt "$OPT_MAX_DISK_MB" ]; then
		CAP_TEXT="$OUT holds $DIR_MB MB of bundles and one more may take $(bundle_estimate_mb) MB (--max-disk $OPT_MAX_DISK_MB)"
	else
		return 1
	fi
	return 0
}

### the ring: counters in memory, perf in the kernel
# ring_pages -> perf -m pages per CPU: a power of two holding pre + post (+2) s at HZ
ring_pages() {
	local bytes pages=8
	if [ -n "$OPT_RING_MB" ]; then
		bytes=$((OPT_RING_MB * 1048576))
	else
		bytes=$((OPT_HZ * (OPT_PRE + OPT_POST + 2) * RING_BYTES_PER_SAMPLE))
	fi
	while [ $((pages * 4096)) -lt "$bytes" ]; do pages=$((pages * 2)); done
	echo "$pages"
}

# ring_perf_start -> perf record into an overwritable ring (nothing written until SIGUSR2);
# sample times are CLOCK_REALTIME so the bundle's window can be cut by wall-clock time.
ring_perf_start() {
	local tries=50
	[ -z "$PERF_STATUS" ] || return 0
	RING_PAGES=$(ring_pages)
	PERF_ARGV=(perf record -a -g -F "$OPT_HZ" -k CLOCK_REALTIME --overwrite --switch-output=signal
		-m "$RING_PAGES" -o "$RING_DIR/perf.data")
	PERF_T0=$(now_s)
	# timeout 0: no time limit, but its own process group (a terminal's Ctrl-C reaches watch only,
	# which stops perf itself) and it forwards INT/TERM to perf
	LC_ALL=C "${ORPHAN_INT[@]}" timeout -s INT -k 10 0 "${PERF_ARGV[@]}" >"$RING_DIR/record.log" 2>&1 </dev/null 9>&- &
	PERF_PID=$!
	while [ $tries -gt 0 ] && [ -z "$RING_PERF_PID" ]; do
		read -r RING_PERF_PID _ 2>/dev/null <"/proc/$PERF_PID/task/$PERF_PID/children"
		[ -n "$RING_PERF_PID" ] || sleep 0.1
		tries=$((tries - 1))
	done
	sleep 1
	if [ -z "$RING_PERF_PID" ] || ! is_running "$RING_PERF_PID"; then
		PERF_STATUS=failed
		PERF_PROBLEM="perf record --overwrite failed: $(grep -v '^$' "$RING_DIR/record.log" | tail -n 1). Fix: check by hand: ${PERF_ARGV[*]}"
		warn "$PERF_PROBLEM; watching without stacks"
	fi
}

ring_perf_stop() {
	[ -n "${PERF_PID:-}" ] || return 0
	kill -INT "$PERF_PID" 2>/dev/null
	wait_exit "$PERF_PID" 10 || kill -KILL -- "-$PERF_PID" 2>/dev/null
	PERF_PID="" RING_PERF_PID=""
}

# wait_exit PID SECONDS -> true when PID ended within SECONDS
wait_exit() {
	local tries=$(($2 * 10))
	while is_running "$1" && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	! is_running "$1"
}

# ring_dump DEST -> SIGUSR2: perf writes what the ring holds; moved to DEST. False when it did not.
ring_dump() {
	local log=$RING_DIR/record.log before file tries=300
	[ -n "$RING_PERF_PID" ] && is_running "$RING_PERF_PID" || return 1
	before=$(grep -c 'perf record: Dump' "$log")
	kill -USR2 "$RING_PERF_PID" 2>/dev/null || return 1
	while [ "$(grep -c 'perf record: Dump' "$log")" -le "$before" ]; do
		tries=$((tries - 1))
		[ $tries -gt 0 ] && is_running "$RING_PERF_PID" || return 1
		sleep 0.1
	done
	file=$(sed -n 's/.*perf record: Dump \(.*\) \]$/\1/p' "$log" | tail -n 1)
	[ -s "$file" ] && mv -f "$file" "$1"
}

# The counters: slot = tick % RING_SLOTS; pre + 1 snapshots before the trigger tick are kept.
declare -A RING=()      # "slot:name" -> file content
RING_T=()               # slot -> epoch of the snapshot (EPOCHREALTIME)
TICK=0 NEXT_US=0

# read_file PATH -> REPLY = content, without a fork
read_file() {
	REPLY=""
	IFS= read -r -d '' REPLY <"$1" 2>/dev/null
	return 0
}

# snapshot_pressure -> REPLY in proc.pressure's format (== cpu == sections)
snapshot_pressure() {
	local res out=""
	for res in cpu memory io; do
		[ -r "$PROC_ROOT/pressure/$res" ] || continue
		read_file "$PROC_ROOT/pressure/$res"
		out+="== $res ==
$REPLY"
	done
	REPLY=$out
}

# tick -> sleep to the next whole second of the watch's clock, then read every kept counter.
tick() {
	local slot name
	set_now
	if [ "$NEXT_US" -eq 0 ] || [ "$NOW_US" -gt $((NEXT_US + 1000000)) ]; then
		NEXT_US=$NOW_US   # first tick, or late by more than a second (host stalled): resync
	else
		NEXT_US=$((NEXT_US + 1000000))
		[ "$NEXT_US" -gt "$NOW_US" ] && nap "$(us_to_s $((NEXT_US - NOW_US)))"
	fi
	TICK=$((TICK + 1))
	slot=$((TICK % RING_SLOTS))
	RING_T[slot]=${EPOCHREALTIME/,/.}
	mapfile -t STAT <"$PROC_ROOT/stat"
	printf -v "RING[$slot:proc.stat]" '%s\n' "${STAT[@]}"
	for name in "${!KEPT[@]}"; do
		case $name in
		proc.stat) ;;
		proc.pressure) snapshot_pressure; RING[$slot:$name]=$REPLY ;;
		*) read_file "$PROC_ROOT/${KEPT[$name]}"; RING[$slot:$name]=$REPLY ;;
		esac
	done
}

### the rules
declare -A PREV_TOTAL=() PREV_SYS=() PREV_SOFT=() STREAK=() SUM_X=() SUM_T=()

# evaluate -> FIRED_RULE set when a rule held for --for seconds (reads STAT of this tick)
evaluate() {
	local line cpu total d_total d_sys d_soft
	local -a f
	FIRED_RULE=""
	for line in "${STAT[@]}"; do
		case $line in cpu*) ;; *) break ;; esac
		# shellcheck disable=SC2206 # word splitting of the numeric fields is the point
		f=($line)
		cpu=${f[0]}
		total=$((f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7] + ${f[8]:-0}))
		if [ -n "${PREV_TOTAL[$cpu]:-}" ] && [ "$ARMED" = 1 ]; then
			d_total=$((total - PREV_TOTAL[$cpu]))
			d_sys=$((f[3] - PREV_SYS[$cpu]))
			d_soft=$((f[7] - PREV_SOFT[$cpu]))
			if [ "$cpu" = cpu ]; then
				streak sys-above "$OPT_SYS" "" "$d_sys" "$d_total"
				streak soft-above "$OPT_SOFT" "" "$d_soft" "$d_total"
			else
				streak cpu-sys-above "$OPT_CPU_SYS" "${cpu#cpu}" "$d_sys" "$d_total"
				streak cpu-soft-above "$OPT_CPU_SOFT" "${cpu#cpu}" "$d_soft" "$d_total"
			fi
		fi
		PREV_TOTAL[$cpu]=$total PREV_SYS[$cpu]=${f[3]} PREV_SOFT[$cpu]=${f[7]}
	done
}

# streak RULE THRESHOLD CPU DELTA_X DELTA_TOTAL -> count consecutive seconds above; fire at --for
streak() {
	local rule=$1 threshold=$2 cpu=$3 dx=$4 dt=$5 key=$1:$3
	[ -n "$threshold" ] && [ "$dt" -gt 0 ] || return 0
	if [ $((dx * 100)) -gt $((threshold * dt)) ]; then
		STREAK[$key]=$((${STREAK[$key]:-0} + 1))
		SUM_X[$key]=$((${SUM_X[$key]:-0} + dx)) SUM_T[$key]=$((${SUM_T[$key]:-0} + dt))
	else
		STREAK[$key]=0 SUM_X[$key]=0 SUM_T[$key]=0
	fi
	if [ -z "$FIRED_RULE" ] && [ "${STREAK[$key]}" -ge "$OPT_FOR" ]; then
		FIRED_RULE=$rule FIRED_CPU=$cpu FIRED_THRESHOLD=$threshold
		# the rule's value over the --for seconds, one decimal
		FIRED_VALUE=$(((SUM_X[$key] * 1000 + SUM_T[$key] / 2) / SUM_T[$key]))
		FIRED_VALUE=$((FIRED_VALUE / 10)).$((FIRED_VALUE % 10))
	fi
}

reset_streaks() {
	STREAK=() SUM_X=() SUM_T=()
}

### one bundle
# reset_bundle_state -> the per-bundle globals capture's functions accumulate
reset_bundle_state() {
	NOTES=() PROBLEMS=() PARTIAL=0 ENTRY_SEQ=0 DISK_FULL=0 DISK_FULL_FAILS=0 DURATION_ACTUAL=""
	STATUS_OF=() REASON_OF=() FIX_OF=() WPID=() WT0=() DEFERRED=() PERF_WARNINGS=() PERF_LOST=0
	PERF_KSYMS=unknown END_UTC="" BUNDLE="" WINDOW_STOPPED=0
	PERF_STATUS=$RING_PERF_STATUS
}

# trigger_json -> the manifest's "trigger" object
trigger_json() {
	local cpu_j=null time_j
	[ -n "$FIRED_CPU" ] && cpu_j=$FIRED_CPU
	json_q "$TRIGGER_UTC"; time_j=$REPLY
	printf '{"rule": "%s", "threshold": %s, "cpu": %s, "value": %s, "for_seconds": %s, "time": %s, "epoch": %s, "pre_seconds": %s, "post_seconds": %s, "window_start_epoch": %s}' \
		"$FIRED_RULE" "$FIRED_THRESHOLD" "$cpu_j" "$FIRED_VALUE" "$OPT_FOR" "$time_j" "$TRIGGER_EPOCH" \
		"$OPT_PRE" "$OPT_POST" "$WINDOW_START"
}

# oldest_slot -> the slot of the snapshot pre + 1 ticks before this one
oldest_slot() {
	echo $(((TICK - OPT_PRE - 1) % RING_SLOTS))
}

# write_start_snapshots -> snap/start/ from the ring's oldest snapshot; start,end collectors the
# ring does not keep are recorded as skipped (their end snapshot is taken as usual).
write_start_snapshots() {
	local i slot rel inst
	slot=$(oldest_slot)
	for i in "${!C_NAME[@]}"; do
		case ",${C_PHASE[$i]}," in *,start,*) ;; *) continue ;; esac
		expand_argv "$i" ""
		if [ -n "${KEPT[${C_NAME[$i]}]:-}" ] && [ -z "${RING[$slot:${C_NAME[$i]}]}" ]; then
			record_entry "${C_NAME[$i]}" start "" "$(json_array "${ARGV[@]}")" skipped "" 0 "[]" 0 false "" \
				"not present on this host (empty or unreadable)" ""
			continue
		elif [ -n "${KEPT[${C_NAME[$i]}]:-}" ]; then
			rel=$(output_path "$i" start "")
			mkdir -p "$BUNDLE_DIR/$(dirname "$rel")"
			printf '%s' "${RING[$slot:${C_NAME[$i]}]}" >"$BUNDLE_DIR/$rel"
			STATUS_OF[${C_NAME[$i]}]=ok
			record_entry "${C_NAME[$i]}" start "" "$(json_array "${ARGV[@]}")" ok 0 0.00 "$(json_array "$rel")" \
				"$(file_bytes "$BUNDLE_DIR/$rel")" false "" "" ""
			continue
		fi
		for inst in $([ "${C_EACH[$i]}" = nic ] && printf '%s\n' "${NICS[@]}" || echo -); do
			[ "$inst" = - ] && inst=""
			record_entry "${C_NAME[$i]}" start "$inst" "$(json_array "${ARGV[@]}")" skipped "" 0 "[]" 0 false "" \
				"not kept before the trigger: watch keeps only procfs counters in memory (no process runs every second)" ""
		done
	done
}

# ring_series_start -> SERIES: the ring's /proc/stat snapshots from the window start to now
ring_series_start() {
	local k slot
	SERIES=""
	for ((k = TICK - OPT_PRE - 1; k <= TICK; k++)); do
		slot=$((k % RING_SLOTS))
		SERIES+="--- ${RING_T[$slot]%.*}
${RING[$slot:proc.stat]}"
	done
}

# write_series -> metrics/proc-stat.txt (the procstat collector's format) covering the window;
# mpstat / mpstat.json are recorded as skipped: run now, they would cover --post only.
write_series() {
	local i rel
	for i in "${!C_NAME[@]}"; do
		case " $RING_REPLACES " in *" ${C_NAME[$i]} "*) ;; *) continue ;; esac
		expand_argv "$i" ""
		if [ "${C_NAME[$i]}" = procstat ]; then
			rel=$(output_path "$i" window "")
			mkdir -p "$BUNDLE_DIR/$(dirname "$rel")"
			printf '%s' "$SERIES" >"$BUNDLE_DIR/$rel"
			record_entry procstat window "" "$(json_array "${ARGV[@]}")" ok 0 "$(elapsed "$WINDOW_START")" \
				"$(json_array "$rel")" "$(file_bytes "$BUNDLE_DIR/$rel")" false "" "" ""
		else
			record_entry "${C_NAME[$i]}" window "" "$(json_array "${ARGV[@]}")" skipped "" 0 "[]" 0 false "" \
				"watch reads /proc/stat every second from before the trigger instead (metrics/proc-stat.txt)" ""
		fi
	done
}

# record_post -> --post seconds with the window collectors running; /proc/stat keeps ticking.
record_post() {
	local end_us
	set_now
	end_us=$((NOW_US + OPT_POST * 1000000))
	WINDOW_END=$(us_to_s "$end_us")
	start_window
	while check_sentinel && [ -z "$END_SIGNAL" ] && [ "$DISK_FULL" = 0 ]; do
		out_of_room && disk_full "during the recording window" && break
		tick
		SERIES+="--- ${RING_T[$((TICK % RING_SLOTS))]%.*}
${RING[$((TICK % RING_SLOTS)):proc.stat]}"
		set_now
		[ "$NOW_US" -lt "$end_us" ] || break
		reap_window
	done
	WINDOW_END_EPOCH=$(now_s)
	DURATION_ACTUAL=$(elapsed "$WINDOW_START" "$WINDOW_END_EPOCH")
	if [ -n "$END_SIGNAL" ] || [ "$DISK_FULL" = 1 ]; then
		WINDOW_STOPPED=1
		stop_window INT
		wait_window_exit "$KILL_GRACE" || stop_window KILL
	fi
}

# perf_window_end -> where the bundle's samples end: --post seconds after the trigger, or
# earlier when the window was stopped early. On a busy host the post window starts and ends
# seconds late (bundle directory, start snapshots); the samples keep to the promised window.
perf_window_end() {
	awk -v t="$TRIGGER_EPOCH" -v p="$OPT_POST" -v e="$WINDOW_END_EPOCH" \
		'BEGIN { if (e + 0 < t + p) print e; else printf "%.6f\n", t + p }'
}

# perf_ring_entry -> dump the ring into perf/perf.data and record perf.record
perf_ring_entry() {
	local data=$BUNDLE_DIR/perf/perf.data status=ok reason="" fix="" log=$BUNDLE_DIR/perf/record.log
	mkdir -p "$BUNDLE_DIR/perf"
	if [ -n "$PERF_STATUS" ]; then
		record_entry perf.record window "" "[]" skipped "" 0 "[]" 0 false "" "perf unusable: see perf.preflight" ""
		return 0
	fi
	if ! ring_dump "$data"; then
		status=failed reason="the perf ring could not be dumped (perf record stopped?): $(grep -v '^$' "$RING_DIR/record.log" | tail -n 1)"
		fix="check perf by hand: ${PERF_ARGV[*]}"
		RING_PERF_STATUS=failed
	elif [ "$WINDOW_STOPPED" = 1 ]; then
		status=interrupted reason="stopped early by ${END_SIGNAL:-$OUT filling up}; the ring was dumped"
	fi
	cp "$RING_DIR/record.log" "$log"
	PERF_STATUS=$status
	[ "$status" = failed ] && PERF_PROBLEM="perf.record failed: $reason. Fix: $fix"
	local outputs
	outputs=$(json_array perf/record.log)
	[ "$OPT_KEEP" = 1 ] && [ -s "$data" ] && outputs=$(json_array perf/perf.data perf/record.log)
	record_entry perf.record window "" "$(json_array "${PERF_ARGV[@]}")" "$status" "" "$(elapsed "$WINDOW_START")" \
		"$outputs" "$(file_bytes "$data")" false "$(tail -n 3 "$log" | tail -c 800)" "$reason" "$fix"
}

# check_coverage -> a note when the ring held less than the window (ring too small, or a
# previous bundle's dump took the start)
check_coverage() {
	local first
	[ -s "$BUNDLE_DIR/perf/perf.script.gz" ] || return 0
	first=$(gzip -dc "$BUNDLE_DIR/perf/perf.script.gz" 2>/dev/null | awk '
		/^[^ \t]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { sub(":", "", $i); print $i; exit } }')
	[ -n "$first" ] || return 0
	if awk -v f="$first" -v s="$WINDOW_START" 'BEGIN { exit !(f > s + 1.5) }'; then
		NOTES+=("perf samples start at $first, $(awk -v f="$first" -v t="$TRIGGER_EPOCH" 'BEGIN { printf "%.1f", t - f }') s before the trigger (wanted $OPT_PRE s): the ring was too small or a previous bundle took it; raise --ring-mb (now $((RING_PAGES * 4096 / 1048576)) MB per CPU) or --cooldown")
	fi
}

write_bundle() {
	reset_bundle_state
	TRIGGER_EPOCH=${RING_T[$((TICK % RING_SLOTS))]}
	TRIGGER_UTC=$(date -u -d "@${TRIGGER_EPOCH%.*}" +%Y-%m-%dT%H:%M:%SZ)
	WINDOW_START=${RING_T[$(oldest_slot)]}
	OPT_DURATION=$((OPT_PRE + 1 + OPT_POST))
	say "Trigger: $FIRED_RULE ${FIRED_CPU:+(CPU $FIRED_CPU) }${FIRED_VALUE} % > $FIRED_THRESHOLD % for $OPT_FOR s at $TRIGGER_UTC: recording $OPT_POST s more."
	TRIGGER_JSON=$(trigger_json)
	check_space       # too little left now: stop (65) rather than fill the disk
	make_bundle_dir
	START_UTC=$(date -u -d "@${WINDOW_START%.*}" +%Y-%m-%dT%H:%M:%SZ)
	DEADLINE=$((${EPOCHSECONDS:-$(date +%s)} + OPT_POST + SLACK))
	mkdir -p "$BUNDLE_DIR/perf"
	cp "$WATCH_STATE/collectors.jsonl" "$STATE_DIR/collectors.jsonl"
	cp "$WATCH_STATE/preflight/perf/preflight.txt" "$BUNDLE_DIR/perf/" 2>/dev/null
	ring_series_start
	write_start_snapshots
	write_manifest false recording
	OPT_DURATION=$OPT_POST    # the window collectors run (and time out) on --post seconds
	record_post
	END_UTC=$(utc_iso)
	perf_ring_entry
	run_phase end
	reap_window all
	OPT_DURATION=$((OPT_PRE + 1 + OPT_POST))
	write_series
	say "Packing: once-only collectors, perf script, SHA256SUMS, tar (nice 19, ionice idle)"
	run_phase once
	FLAMEDIAG_PERF_TIME="$WINDOW_START,$(perf_window_end)" perf_script
	perf_archive
	check_coverage
	times >"$STATE_DIR/times"
	seal_and_pack || return 1
	rm -rf "$STATE_DIR"
	STATE_DIR="" BUNDLE_DIR="" TRIGGER_JSON=""
	BUNDLES_WRITTEN=$((BUNDLES_WRITTEN + 1))
	return "$PACK_RC"
}

### arming, the loop, the end
banner() {
	say "Watching $(rules_text) for $OPT_FOR s on $CPUS CPUs; a trigger keeps $OPT_PRE s before it and records $OPT_POST s after, into $OUT. Ctrl-C to stop."
}

# arm_after SECONDS -> the rules are evaluated again once the rings hold --pre seconds afresh
arm_after() {
	ARMED=0
	ARM_AT_TICK=$((TICK + $1))
	reset_streaks
}

# after_bundle RC -> exit with --once or a cap; else the cooldown
after_bundle() {
	local rc=$1
	[ "$rc" -gt "$WATCH_RC" ] && [ "$rc" -le 1 ] && WATCH_RC=$rc
	[ -n "$END_SIGNAL" ] && exit "$(signal_exit_code)"
	[ "$OPT_ONCE" = 1 ] && exit "$rc"
	if cap_reached; then
		say "Cap reached: $CAP_TEXT. Stopping. Move the bundles elsewhere and start watch again."
		exit "$WATCH_RC"
	fi
	say "Cooling down for $OPT_COOLDOWN s."
	local cool=$OPT_COOLDOWN
	[ "$cool" -lt $((OPT_PRE + 1)) ] && cool=$((OPT_PRE + 1))
	arm_after "$cool"
}

watch_loop() {
	local end_tick=0 rc
	[ "$OPT_WATCH_SECONDS" -gt 0 ] && end_tick=$((TICK + OPT_WATCH_SECONDS))
	arm_after $((OPT_PRE + 1))
	while check_sentinel && [ -z "$END_SIGNAL" ]; do
		tick
		evaluate
		if [ "$ARMED" = 0 ] && [ "$TICK" -ge "$ARM_AT_TICK" ]; then
			ARMED=1
			[ "$BUNDLES_WRITTEN" = 0 ] && say "Armed: perf ring $((RING_PAGES * 4096 / 1024)) KiB per CPU, counters every second."
		fi
		if [ -n "$FIRED_RULE" ]; then
			rc=0
			write_bundle || rc=$?
			after_bundle "$rc"
		fi
		if [ "$end_tick" -gt 0 ] && [ "$TICK" -ge "$end_tick" ]; then
			say "Watched $OPT_WATCH_SECONDS s: $BUNDLES_WRITTEN bundle(s)."
			exit "$WATCH_RC"
		fi
	done
	exit "$(signal_exit_code)"
}

watch_cleanup() {
	ring_perf_stop
	[ -n "$RING_DIR" ] && rm -rf "$RING_DIR"
	[ -n "$WATCH_STATE" ] && rm -rf "$WATCH_STATE"
	cleanup
}

# perf_preflight writes into a bundle directory: run it once into the watch's state, and copy
# its entry into every bundle.
preflight_once() {
	BUNDLE_DIR=$WATCH_STATE/preflight STATE_DIR=$WATCH_STATE
	perf_preflight
	[ -n "$PERF_PROBLEM" ] && warn "$PERF_PROBLEM"
	BUNDLE_DIR="" STATE_DIR=""
	PROBLEMS=() PARTIAL=0
}

# replace_ring_collectors -> mpstat, mpstat.json and procstat are not started as window collectors
replace_ring_collectors() {
	local i
	for i in "${!C_NAME[@]}"; do
		case " $RING_REPLACES " in *" ${C_NAME[$i]} "*) C_PHASE[i]=ring ;; esac
	done
}

main() {
	start_trace
	parse_args "$@"
	read_host
	RING_SLOTS=$((OPT_PRE + 2))
	check_output_dir
	cap_reached && die 65 "$CAP_TEXT: not arming. Move the bundles elsewhere, or raise the cap"
	take_lock
	OPT_DURATION=$((OPT_PRE + 1 + OPT_POST))
	check_space
	load_declarations "$FLAMEDIAG_HOME/lib/collectors.tsv"
	replace_ring_collectors
	mapfile -t NICS < <(physical_nics "$SYS_ROOT")
	trap 'on_trap SIGINT' INT
	trap 'on_trap SIGTERM' TERM
	trap watch_cleanup EXIT
	start_sentinel
	WATCH_STATE=$(mktemp -d "${TMPDIR:-/tmp}/flamediag-watch.XXXXXX") || die 77 "cannot create a temporary directory in ${TMPDIR:-/tmp}"
	RING_DIR=$OUT/.flamediag-watch-ring.$$
	mkdir -p "$RING_DIR" "$WATCH_STATE/preflight"
	is_root || warn "not root: perf -a needs root; watching without stacks. Fix: sudo flamediag watch ..."
	banner
	preflight_once
	ring_perf_start
	RING_PERF_STATUS=$PERF_STATUS
	watch_loop
}

main "$@"
