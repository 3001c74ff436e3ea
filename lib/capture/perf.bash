# perf.bash - the perf collectors: preflight, record (window), script, archive (sourced).
# shellcheck shell=bash disable=SC2034
#
# perf's lines in collectors.tsv say @perf: they are run here, not by the runner. perf must get
# SIGINT (so perf.data is finalised), it runs at normal priority, and its failure text decides the
# user's fix.

PERF_SCRIPT_FIELDS=comm,pid,tid,cpu,time,period,event,ip,sym,dso
PERF_STATUS=""      # status of perf.record (ok when a usable profile exists)
PERF_PROBLEM=""     # one line naming the cause and the fix, when perf cannot be used
PERF_WARNINGS=()
PERF_LOST=0
PERF_KSYMS=unknown
PERF_ENABLED_EPOCH=null   # epoch seconds when perf acknowledged "enable" (the first sample's instant)

sysctl_value() {
	cat "$PROC_ROOT/sys/kernel/$1" 2>/dev/null || echo null
}

# perf_preflight -> does perf WORK here (not merely exist)? sets PERF_STATUS/PERF_PROBLEM.
perf_preflight() {
	local out=$BUNDLE_DIR/perf/preflight.txt rc t0 reason="" fix="" status
	mkdir -p "$BUNDLE_DIR/perf"
	ARGV=(perf record -a -g -F "$OPT_HZ" -o /dev/null -q -- true)
	if ! command -v perf >/dev/null 2>&1; then
		perf_fail missing "perf not installed" "install perf: apt-get install linux-perf (Ubuntu: linux-tools-\$(uname -r); RHEL: dnf install perf)"
		return 0
	fi
	t0=$(now_s)
	LC_ALL=C "${ORPHAN_TERM[@]}" timeout -k 2 30 "${ARGV[@]}" >"$out" 2>&1 </dev/null 9>&- &
	wait_current "$!"
	rc=$?
	status=ok
	if [ $rc -ne 0 ]; then
		status=failed
		classify_perf_failure "$out" "$rc"
		reason=$PF_REASON fix=$PF_FIX
		PERF_PROBLEM="perf cannot record: $reason. Fix: $fix"
		[ "$PF_STATUS" = missing ] && status=missing
	fi
	[ "$rc" = 124 ] && status=timeout
	record_entry perf.preflight once "" "$(json_array "${ARGV[@]}")" "$status" "$rc" "$(elapsed "$t0")" \
		"$(json_array perf/preflight.txt)" "$(file_bytes "$out")" false "$(tail -n 3 "$out" | tail -c 800)" "$reason" "$fix"
	[ "$status" = ok ] || PERF_STATUS=$status
	return 0
}

perf_fail() {
	PERF_STATUS=$1
	PERF_PROBLEM="perf cannot record: $2. Fix: $3"
	record_entry perf.preflight once "" "$(json_array "${ARGV[@]}")" "$1" "" 0 "[]" 0 false "" "$2" "$3"
}

# classify_perf_failure FILE RC -> PF_STATUS PF_REASON PF_FIX (perf's own texts, reliability B1/B2)
classify_perf_failure() {
	local file=$1 rc=$2 paranoid
	paranoid=$(sysctl_value perf_event_paranoid)
	PF_STATUS=failed
	if grep -qs 'perf not found for kernel\|linux-tools' "$file"; then
		PF_STATUS=missing
		PF_REASON="perf is a wrapper without the tools for kernel $(uname -r) (exit $rc)"
		PF_FIX="apt-get install linux-tools-\$(uname -r) linux-tools-generic"
	elif grep -qs 'Permission error mapping pages' "$file"; then
		PF_REASON="perf ring buffer exceeds perf_event_mlock_kb ($(sysctl_value perf_event_mlock_kb))"
		PF_FIX="run as root, or: sudo sysctl -w kernel.perf_event_mlock_kb=2048"
	elif grep -qsiE 'perf_event_paranoid|Access to performance monitoring|No permission|Permission denied' "$file" || ! is_root; then
		PF_REASON="permission: $(is_root && echo root || echo "not root") and kernel.perf_event_paranoid=$paranoid"
		PF_FIX="run as root (sudo flamediag capture ...), or: sudo sysctl -w kernel.perf_event_paranoid=-1"
	elif [ "$rc" = 124 ]; then
		PF_REASON="perf record -- true did not finish in 30 s (host overloaded, or perf stuck)"
		PF_FIX="check perf by hand: perf record -a -o /dev/null -- true"
	else
		PF_REASON="perf record failed (exit $rc): $(grep -v '^$' "$file" | tail -n 1)"
		PF_FIX="check perf by hand: perf record -a -g -o /dev/null -- true"
	fi
}

# perf_record_start -> background perf record, events DISABLED (-D -1) behind a control fifo,
# so perf's own setup (seconds on big hosts) happens before the window and perf_enable starts
# sampling at a known instant (the ack). perf older than 5.11 lacks --control / -D -1: it is
# restarted without them (the window start is then approximate, and said so).
perf_record_start() {
	local size=()
	[ -z "$PERF_STATUS" ] || return 0
	[ -n "$OPT_MAX_MB" ] && size=(--max-size="$((OPT_MAX_MB * 1024 / 2))K")
	PERF_CTL=$STATE_DIR/perf-ctl PERF_ACK=$STATE_DIR/perf-ack
	mkfifo "$PERF_CTL" "$PERF_ACK" && exec 7<>"$PERF_CTL" 8<>"$PERF_ACK"
	PERF_ARGV=(perf record -a -g -F "$OPT_HZ" "${size[@]}" -D -1 --control "fifo:$PERF_CTL,$PERF_ACK" -o "$BUNDLE_DIR/perf/perf.data")
	perf_launch
}

perf_launch() {
	PERF_T0=$(now_s)
	LC_ALL=C "${ORPHAN_INT[@]}" timeout -s INT -k 10 "$((OPT_DURATION + SLACK))" "${PERF_ARGV[@]}" \
		>"$BUNDLE_DIR/perf/record.log" 2>&1 </dev/null 9>&- &
	PERF_PID=$!
}

# perf_control enable|disable -> true when perf acknowledged
perf_control() {
	local ack=""
	[ -n "${PERF_PID:-}" ] && [ -p "${PERF_CTL:-}" ] || return 1
	local tries=30
	echo "$1" >&7
	# a second at a time: a perf that died at start must not cost the full 30 s
	while [ $tries -gt 0 ]; do
		read -r -t 1 ack <&8 && break
		is_running "$PERF_PID" || break
		tries=$((tries - 1))
	done
	[ "$ack" = ack ]
}

perf_enable() {
	[ -n "${PERF_PID:-}" ] || return 0
	# the acknowledgement's wall-clock time: perf's sample clock is not wall time, so the
	# diagnoser maps sample times to UTC through it (manifest perf.enabled_epoch)
	perf_control enable && PERF_ENABLED_EPOCH=$(now_s) && return 0
	if ! is_running "$PERF_PID" && grep -qsiE 'unknown option|unknown switch|usage:' "$BUNDLE_DIR/perf/record.log"; then
		wait "$PERF_PID" 2>/dev/null
		PERF_ARGV=("${PERF_ARGV[@]:0:$((${#PERF_ARGV[@]} - 6))}" -o "$BUNDLE_DIR/perf/perf.data")
		PERF_WARNINGS+=("perf has no --control/-D -1: recording began without a start acknowledgement")
		PERF_CTL=""
		perf_launch
		return 0
	fi
	PERF_WARNINGS+=("perf did not acknowledge 'enable' within 30 s: window start approximate")
}

# perf_stop -> end of the window: disable sampling, then SIGINT so perf finalises perf.data.
perf_stop() {
	[ -n "${PERF_PID:-}" ] || return 0
	perf_control disable
	kill -INT "$PERF_PID" 2>/dev/null
	return 0
}

# perf_record_finish STOPPED -> wait for perf, read its log, record perf.record.
perf_record_finish() {
	local stopped=$1 rc log=$BUNDLE_DIR/perf/record.log status=ok reason="" fix="" samples outputs
	if [ -n "$PERF_STATUS" ]; then
		record_entry perf.record window "" "[]" skipped "" 0 "[]" 0 false "" "perf unusable: see perf.preflight" ""
		return 0
	fi
	wait_child "$PERF_PID"
	rc=$?
	kill -KILL -- "-$PERF_PID" 2>/dev/null
	PERF_LOST=$(sed -n 's/.*lost \([0-9]*\) chunks.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	mapfile -t PERF_WARNINGS < <(grep -iE 'warning|lost|throttl|restricted' "$log" | head -n 10)
	samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$log" | tail -n 1)
	if grep -qs 'Kernel address maps.*restricted\|kptr_restrict' "$log"; then
		PERF_KSYMS=restricted
	fi
	if [ ! -s "$BUNDLE_DIR/perf/perf.data" ] || [ "${samples:-1}" = 0 ]; then
		status=failed reason="perf record wrote no samples (exit $rc): $(tail -n 1 "$log")"
		fix="check perf by hand: perf record -a -g -- sleep 1"
		rm -f "$BUNDLE_DIR/perf/perf.data"
	elif [ "$stopped" = 1 ]; then
		status=interrupted reason="stopped early by ${END_SIGNAL:-$OUT filling up} (perf got SIGINT; perf.data finalised)"
	elif [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
		# 130: perf record without a workload ends on our SIGINT, by design
		status=failed reason="perf record exited $rc: $(tail -n 1 "$log")"
		fix="see perf/record.log"
	fi
	PERF_STATUS=$status
	[ "$status" = failed ] && PERF_PROBLEM="perf.record failed: $reason. Fix: $fix"
	outputs=$(json_array perf/record.log)
	{ [ "$OPT_KEEP" = 1 ] || [ "$DISK_FULL" = 1 ]; } && [ -s "$BUNDLE_DIR/perf/perf.data" ] &&
		outputs=$(json_array perf/perf.data perf/record.log)
	record_entry perf.record window "" "$(json_array "${PERF_ARGV[@]}")" "$status" "$rc" "$(elapsed "$PERF_T0")" \
		"$outputs" "$(file_bytes "$BUNDLE_DIR/perf/perf.data")" false "$(tail -n 3 "$log" | tail -c 800)" "$reason" "$fix"
}

# perf_script -> perf/perf.script.gz at nice 19 / ionice idle (never during the window: perf
# script's own syscalls would be sampled, perf-tools' feedback-loop warning).
perf_script() {
	local data=$BUNDLE_DIR/perf/perf.data rc t0 status=ok reason="" fix="" log=$STATE_DIR/perf-script.err
	local script_later="after freeing space: perf script -i perf/perf.data -F $PERF_SCRIPT_FIELDS | gzip > perf/perf.script.gz"
	if [ ! -s "$data" ]; then
		record_entry perf.script once "" "[]" skipped "" 0 "[]" 0 false "" "no perf.data to post-process" ""
		return 0
	fi
	if [ "$DISK_FULL" = 1 ]; then
		record_entry perf.script once "" "[]" skipped "" 0 "[]" 0 false "" "not run: $OUT is full; perf/perf.data is kept instead" "$script_later"
		return 0
	fi
	ARGV=(bash "$CAPTURE_LIB/snippets.bash" perf-script "$data" "$BUNDLE_DIR/perf/perf.script.gz" "$PERF_SCRIPT_FIELDS")
	t0=$(now_s)
	LC_ALL=C "${PRIO[@]}" timeout -k 5 "${FLAMEDIAG_PERF_SCRIPT_TIMEOUT:-600}" "${ARGV[@]}" 2>"$log" </dev/null 9>&- &
	wait_current "$!"
	rc=$?
	grep -q 'fields used:' "$log" && PERF_WARNINGS+=("$(grep 'fields used:' "$log" | tail -n 1)")
	if [ "$rc" -ne 0 ]; then
		status=failed reason="perf script exited $rc: $(tail -n 1 "$log")" fix="run by hand: perf script -i perf.data (kept with --keep-perf-data)"
		if says_disk_full "$log"; then
			disk_full "perf script could not write perf.script.gz"
			rm -f "$BUNDLE_DIR/perf/perf.script.gz"
			reason="$OUT is full: perf script could not write; perf/perf.data is kept instead"
			fix=$script_later
		fi
		[ "$rc" = 124 ] && status=timeout
		# perf script can stop part-way (e.g. "failed to process type: 17 [Bad address]" under
		# mmap-heavy load): the stacks it printed before are still good, so keep a complete gzip.
		if [ "$rc" != 124 ] && [ -s "$BUNDLE_DIR/perf/perf.script.gz" ] && gzip -t "$BUNDLE_DIR/perf/perf.script.gz" 2>/dev/null; then
			reason="$reason; the stacks printed before it stopped are kept"
		else
			rm -f "$BUNDLE_DIR/perf/perf.script.gz"
		fi
	fi
	record_entry perf.script once "" "$(json_array perf script -i perf/perf.data -F "$(sed -n 's/.*fields used: //p' "$log" | tail -n 1)")" \
		"$status" "$rc" "$(elapsed "$t0")" "$( [ -s "$BUNDLE_DIR/perf/perf.script.gz" ] && json_array perf/perf.script.gz || echo '[]')" \
		"$(file_bytes "$BUNDLE_DIR/perf/perf.script.gz")" false "$(tail -n 3 "$log" | tail -c 800)" "$reason" "$fix"
}

# perf_archive -> with --keep-perf-data: perf archive (build-id files for offline symbols).
perf_archive() {
	local data=$BUNDLE_DIR/perf/perf.data rc t0 status=ok reason=""
	# the output filled up before perf script finished: perf.data is all the stacks there are
	[ "$DISK_FULL" = 1 ] && [ ! -s "$BUNDLE_DIR/perf/perf.script.gz" ] && return 0
	[ "$OPT_KEEP" = 1 ] || { rm -f "$data"; return 0; }
	[ -s "$data" ] || return 0
	ARGV=(perf archive "$data")
	t0=$(now_s)
	LC_ALL=C "${PRIO[@]}" timeout -k 5 120 "${ARGV[@]}" >"$STATE_DIR/perf-archive.err" 2>&1 </dev/null 9>&- &
	wait_current "$!"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		status=failed reason="perf archive exited $rc (partial archive removed)"
		[ "$rc" = 124 ] && status=timeout
		rm -f "$data.tar.bz2"
	fi
	record_entry perf.archive once "" "$(json_array "${ARGV[@]}")" "$status" "$rc" "$(elapsed "$t0")" \
		"$( [ -f "$data.tar.bz2" ] && json_array perf/perf.data.tar.bz2 || echo '[]')" "$(file_bytes "$data.tar.bz2")" false \
		"$(tail -n 3 "$STATE_DIR/perf-archive.err" | tail -c 800)" "$reason" ""
}

# The manifest's "perf" object.
perf_json() {
	local ksyms=$PERF_KSYMS kptr
	kptr=$(sysctl_value kptr_restrict)
	if [ "$ksyms" = unknown ]; then
		case $PERF_STATUS in
		ok | interrupted)
			ksyms=ok
			{ [ "$kptr" = 2 ] || { [ "$kptr" = 1 ] && ! is_root; }; } && ksyms=restricted
			;;
		esac
	fi
	printf '{"paranoid":%s,"kptr_restrict":%s,"max_sample_rate":%s,"mlock_kb":%s,"kernel_symbols":"%s","lost_chunks":%s,"warnings":%s,"enabled_epoch":%s}' \
		"$(sysctl_value perf_event_paranoid)" "$kptr" "$(sysctl_value perf_event_max_sample_rate)" \
		"$(sysctl_value perf_event_mlock_kb)" "$ksyms" "${PERF_LOST:-0}" "$(json_array "${PERF_WARNINGS[@]}")" \
		"${PERF_ENABLED_EPOCH:-null}"
}
