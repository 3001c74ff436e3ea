# runner.bash - reads lib/collectors.tsv and runs each declaration (sourced by lib/capture.bash).
# shellcheck shell=bash disable=SC2034
#
# Every collector runs as: LC_ALL=C timeout -k GRACE T argv, so it gets
# its own process group (GNU timeout calls setpgid) and on expiry the whole group dies: a
# grandchild holding stdout cannot hang the capture. fd 9 (the capture lock) is closed for the
# children so an orphan cannot keep the lock after `kill -9` of the capture.
# Globals used: BUNDLE_DIR STATE_DIR PROC_ROOT SYS_ROOT OPT_* END_SIGNAL DEADLINE.

C_NAME=() C_PHASE=() C_EACH=() C_TIMEOUT=() C_CAP=() C_NEEDS=() C_OUT=() C_ARGV=()
declare -A STATUS_OF=() REASON_OF=() FIX_OF=()   # collector name -> last status/reason/fix
ENTRY_SEQ=0
CURRENT_PID=""            # the synchronous collector running now (signal handler kills it)
KILL_GRACE=${FLAMEDIAG_KILL_GRACE:-2}
ORPHAN_TERM=() ORPHAN_INT=()
PRIO=(nice -n 19)         # post-processing (perf script, gzip, tar): nice 19 + ionice idle

# load_declarations TSV -> the C_* arrays; rows whose argv is @perf belong to perf.bash.
load_declarations() {
	local name phase each timeout cap needs out reader argv
	while IFS=$'\t' read -r name phase each timeout cap needs out reader argv; do
		case $name in '' | '#'*) continue ;; esac
		[ "$argv" = @perf ] && continue
		C_NAME+=("$name") C_PHASE+=("$phase") C_EACH+=("$each") C_TIMEOUT+=("$timeout")
		C_CAP+=("$cap") C_NEEDS+=("$needs") C_OUT+=("$out") C_ARGV+=("$argv")
	done <"$1"
	command -v ionice >/dev/null 2>&1 && PRIO+=(ionice -c3)
	# children get SIGTERM (perf: SIGINT) if the capture itself dies (kill -9): no orphan keeps
	# recording; util-linux >= 2.33 has setpriv --pdeathsig
	if setpriv --pdeathsig TERM true 2>/dev/null; then
		ORPHAN_TERM=(setpriv --pdeathsig TERM) ORPHAN_INT=(setpriv --pdeathsig INT)
	fi
	return 0
}

# has_need I TOKEN -> true when the needs list of declaration I holds TOKEN
has_need() {
	case ",${C_NEEDS[$1]}," in *",$2,"*) return 0 ;; *) return 1 ;; esac
}

# need_value I KEY -> the value of KEY:value in the needs list (empty when absent)
need_value() {
	local item
	local -a items
	IFS=, read -r -a items <<<"${C_NEEDS[$1]}"
	for item in "${items[@]}"; do
		case $item in "$2":*) printf '%s\n' "${item#*:}"; return 0 ;; esac
	done
	return 0
}

# Resolve @bcc:T / @snip words; prints the command words, one a line.
resolve_command() {
	case $1 in
	@snip) printf '%s\n' bash "$CAPTURE_LIB/snippets.bash" ;;
	@bcc:*)
		local tool=${1#@bcc:}
		if command -v "$tool-bpfcc" >/dev/null 2>&1; then
			command -v "$tool-bpfcc"
		elif [ -x "/usr/share/bcc/tools/$tool" ]; then
			echo "/usr/share/bcc/tools/$tool"
		else
			echo "$tool-bpfcc"
		fi
		;;
	*) printf '%s\n' "$1" ;;
	esac
}

# expand_argv I NIC -> fills ARGV with the declaration's words, placeholders filled in.
expand_argv() {
	local word
	local -a words
	ARGV=()
	read -r -a words <<<"${C_ARGV[$1]}"
	for word in "${words[@]}"; do
		word=${word//\{proc\}/$PROC_ROOT}
		word=${word//\{sys\}/$SYS_ROOT}
		word=${word//\{dur\}/$OPT_DURATION}
		word=${word//\{hz\}/$OPT_HZ}
		word=${word//\{nic\}/$2}
		case $word in *'{left}'*) word=${word//\{left\}/$(window_left)} ;; esac
		if [ "${word:0:1}" = @ ]; then
			mapfile -t -O "${#ARGV[@]}" ARGV < <(resolve_command "$word")
		else
			ARGV+=("$word")
		fi
	done
}

# Whole seconds left in the recording window (at least 1).
window_left() {
	awk -v e="${WINDOW_END:-0}" -v n="$(now_s)" -v d="$OPT_DURATION" \
		'BEGIN { l = (e > 0 ? int(e - n + 0.5) : d); print (l < 1 ? 1 : l) }'
}

output_path() {
	local path=${C_OUT[$1]}
	path=${path//\{phase\}/$2}
	printf '%s\n' "${path//\{nic\}/$3}"
}

# The program a collector needs: cmd:X in needs, else argv[0].
needed_program() {
	local cmd
	cmd=$(need_value "$1" cmd)
	if [ -n "$cmd" ]; then echo "$cmd"; else echo "${ARGV[0]}"; fi
}

# precheck I -> sets PRE_STATUS/PRE_REASON/PRE_FIX when the collector must not run (ARGV set).
precheck() {
	local i=$1 mods mod missing="" prog pkg
	PRE_STATUS="" PRE_REASON="" PRE_FIX=""
	if [ -n "${END_SIGNAL:-}" ]; then
		pre_set skipped "capture interrupted by $END_SIGNAL before it ran" ""
	elif [ "${DISK_FULL:-0}" = 1 ]; then
		pre_set skipped "not run: $OUT is full" "$DISK_FULL_FIX"
	elif has_need "$i" bpf && [ "$OPT_NO_BPF" = 1 ]; then
		pre_set skipped "--no-bpf given" ""
	elif has_need "$i" root && ! is_root; then
		pre_set skipped "needs root" "run as root: sudo flamediag capture ..."
	elif [ "${DEADLINE:-0}" -gt 0 ] && [ "${EPOCHSECONDS:-$(date +%s)}" -gt "$DEADLINE" ]; then
		pre_set skipped "capture deadline reached (duration + ${SLACK}s)" "rerun with a shorter -d, or find the slow collector in the manifest"
	fi
	[ -n "$PRE_STATUS" ] && return 0
	mods=$(need_value "$i" kmods)
	if [ -n "$mods" ] && [ -r /proc/modules ]; then
		for mod in ${mods//+/ }; do
			grep -q "^$mod " /proc/modules || missing+="${missing:+ }$mod"
		done
		if [ -n "$missing" ]; then
			pre_set skipped "kernel modules not loaded ($missing): running ${ARGV[0]} would load them" \
				"only if loading them is acceptable: modprobe -a $missing; then capture again"
			return 0
		fi
	fi
	prog=$(needed_program "$i")
	if ! command -v "$prog" >/dev/null 2>&1; then
		pkg=$(need_value "$i" pkg)
		pre_set missing "$prog not installed" "install ${pkg:-the package providing $prog} (apt-get install ${pkg:-...} / dnf install ${pkg:-...})"
	fi
	return 0
}

pre_set() {
	PRE_STATUS=$1 PRE_REASON=$2 PRE_FIX=$3
}

# effective_timeout I PHASE -> seconds (window collectors: duration + declared timeout)
effective_timeout() {
	local t=${C_TIMEOUT[$1]}
	[ -n "${FLAMEDIAG_COLLECTOR_TIMEOUT:-}" ] && t=$FLAMEDIAG_COLLECTOR_TIMEOUT
	[ "$2" = window ] && t=$((OPT_DURATION + t))
	echo "$t"
}

# launch I PHASE INSTANCE -> starts the collector in the background; sets LAUNCH_PID, LAUNCH_T0.
launch() {
	local i=$1 phase=$2 inst=$3 out err t sig=TERM
	out=$BUNDLE_DIR/$(output_path "$i" "$phase" "$inst")
	err=$STATE_DIR/$(entry_key "$i" "$phase" "$inst").err
	mkdir -p "$(dirname "$out")"
	t=$(effective_timeout "$i" "$phase")
	# INT lets mpstat/bcc/bpftrace print their summary before exiting
	[ "$phase" = window ] && sig=INT
	# Collectors keep normal priority: during a CPU spike a niced `cat /proc/interrupts` waits
	# seconds for a CPU (measured: 6 s at load 16 on 2 CPUs), snapshots stop bracketing the
	# window and once-only facts hit their timeouts. They are small; post-processing is niced.
	LAUNCH_T0=$(now_s)
	LC_ALL=C "${ORPHAN_TERM[@]}" timeout -s "$sig" -k "$KILL_GRACE" "$t" "${ARGV[@]}" \
		>"$out" 2>"$err" </dev/null 9>&- &
	LAUNCH_PID=$!
}

entry_key() {
	printf '%s.%s.%s\n' "${C_NAME[$1]}" "$2" "${3:--}"
}

# wait_current PID -> wait_child PID, with PID as CURRENT_PID meanwhile (the child a second
# signal kills).
wait_current() {
	local rc
	CURRENT_PID=$1
	wait_child "$1"
	rc=$?
	CURRENT_PID=""
	return "$rc"
}

# wait_child PID -> its exit status; a trapped signal interrupts `wait`, so wait again, and stop
# the child's group once the capture is being interrupted (unless WAIT_KEEP=1: post-processing
# of what exists goes on after the first signal).
wait_child() {
	local pid=$1 rc stopped=0
	while :; do
		# 2>/dev/null: no "Killed" job notice when a group had to be killed
		wait "$pid" 2>/dev/null
		rc=$?
		if [ "$rc" -gt 128 ] && is_running "$pid"; then
			if [ -n "${END_SIGNAL:-}" ] && [ $stopped = 0 ] && [ "${WAIT_KEEP:-0}" != 1 ]; then
				kill -TERM "$pid" 2>/dev/null
				stopped=1
			fi
			continue
		fi
		WAIT_STOPPED=$stopped
		return "$rc"
	done
}

# run_sync I PHASE INSTANCE -> run one collector to completion and record it.
run_sync() {
	local i=$1 phase=$2 inst=$3 rc
	check_sentinel
	expand_argv "$i" "$inst"
	precheck "$i"
	if [ -n "$PRE_STATUS" ]; then
		record_precheck "$i" "$phase" "$inst"
		return 0
	fi
	launch "$i" "$phase" "$inst"
	wait_current "$LAUNCH_PID"
	rc=$?
	finish "$i" "$phase" "$inst" "$LAUNCH_PID" "$rc" "$LAUNCH_T0" "$WAIT_STOPPED"
}

record_precheck() {
	local i=$1 phase=$2 inst=$3
	STATUS_OF[${C_NAME[$i]}]=$PRE_STATUS
	record_entry "${C_NAME[$i]}" "$phase" "$inst" "$(json_array "${ARGV[@]}")" "$PRE_STATUS" "" 0 "[]" 0 false "" "$PRE_REASON" "$PRE_FIX"
}

# finish I PHASE INSTANCE PID RC T0 STOPPED -> cap the output, classify, record.
finish() {
	local i=$1 phase=$2 inst=$3 pid=$4 rc=$5 t0=$6 stopped=$7
	local rel out err seconds bytes truncated=false tail status reason="" fix="" t
	# the group may still hold a grandchild (e.g. `sleep 1000 &` keeping stdout open)
	kill -KILL -- "-$pid" 2>/dev/null
	rel=$(output_path "$i" "$phase" "$inst")
	out=$BUNDLE_DIR/$rel
	err=$STATE_DIR/$(entry_key "$i" "$phase" "$inst").err
	seconds=$(elapsed "$t0")
	t=$(effective_timeout "$i" "$phase")
	cap_output "$out" "${C_CAP[$i]}" && truncated=true
	tail=$(stderr_tail "$err")
	classify "$i" "$rc" "$seconds" "$t" "$stopped" "$out" "$err"
	status=$CL_STATUS reason=$CL_REASON fix=$CL_FIX
	if [ "$status" != ok ] && [ "$status" != timeout ] && [ "$status" != interrupted ]; then
		# do not ship an error message as if it were data (bcc prints its failure on stdout)
		tail=$(printf '%s\n%s' "$(tail -n 3 "$out" 2>/dev/null)" "$tail" | tail -n 8)
		rm -f "$out"
	fi
	bytes=$(file_bytes "$out")
	local outputs="[]"
	[ -f "$out" ] && outputs=$(json_array "$rel")
	STATUS_OF[${C_NAME[$i]}]=$status REASON_OF[${C_NAME[$i]}]=$reason FIX_OF[${C_NAME[$i]}]=$fix
	record_entry "${C_NAME[$i]}" "$phase" "$inst" "$(json_array "${ARGV[@]}")" "$status" "$rc" "$seconds" \
		"$outputs" "$bytes" "$truncated" "$tail" "$reason" "$fix"
}

# cap_output FILE KIB -> keep the tail (whole lines) when bigger; true when it truncated.
cap_output() {
	local file=$1 cap=$(($2 * 1024))
	[ -f "$file" ] || return 1
	[ "$(file_bytes "$file")" -gt "$cap" ] || return 1
	tail -c "$cap" "$file" | sed '1d' >"$file.tail" && mv -f "$file.tail" "$file"
	return 0
}

stderr_tail() {
	[ -s "$1" ] || return 0
	tail -n 5 "$1" | tail -c 800
}

# classify I RC SECONDS TIMEOUT STOPPED OUT ERR -> CL_STATUS CL_REASON CL_FIX
classify() {
	local i=$1 rc=$2 seconds=$3 t=$4 stopped=$5 out=$6 err=$7 last
	CL_STATUS=failed CL_REASON="" CL_FIX=""
	last=$(tail -n 1 "$err" 2>/dev/null)
	if [ "$stopped" = 1 ]; then
		CL_STATUS=interrupted CL_REASON="stopped early: capture interrupted by ${END_SIGNAL:-$OUT filling up}"
	elif [ "$rc" = 124 ] || { [ "$rc" = 137 ] && awk -v s="$seconds" -v t="$t" 'BEGIN{exit !(s >= t)}'; }; then
		CL_STATUS=timeout CL_REASON="no result within ${t}s: killed (output so far kept)"
		CL_FIX="this command hangs on this host; run it by hand: ${ARGV[*]}"
	elif [ "$rc" = 0 ]; then
		CL_STATUS=ok
	elif grep -qs 'Unable to find kernel headers' "$out" "$err"; then
		CL_STATUS=skipped CL_REASON="bcc cannot compile BPF: kernel headers missing"
		CL_FIX="install linux-headers-\$(uname -r) (RHEL: kernel-devel), or use --no-bpf"
	elif [ "$rc" = 3 ] && [ "${ARGV[1]:-}" = "$CAPTURE_LIB/snippets.bash" ]; then
		CL_STATUS=skipped CL_REASON=${last:-not applicable on this host}
	elif [ "$rc" = 126 ] || [ "$rc" = 127 ]; then
		CL_STATUS=missing CL_REASON="${ARGV[0]} could not be run (exit $rc)"
		CL_FIX="install ${C_NEEDS[$i]#pkg:} or check PATH"
	elif says_disk_full "$err"; then
		CL_REASON="$OUT is full: ${last:-exit $rc}"
		CL_FIX=$DISK_FULL_FIX
		disk_full "${C_NAME[$i]} could not write its output"
	elif grep -qsiE 'permission denied|operation not permitted|not permitted' "$err" "$out"; then
		CL_REASON="permission denied: ${last:-exit $rc}"
		CL_FIX="run as root: sudo flamediag capture ..."
	else
		CL_REASON="exited $rc${last:+: $last}"
		CL_FIX="run it by hand to see why: ${ARGV[*]}"
	fi
}

# record_entry NAME PHASE INSTANCE ARGV_JSON STATUS RC SECONDS OUTPUTS_JSON BYTES TRUNC TAIL REASON FIX
record_entry() {
	local phase=$2 inst=$3 rc=$6 name_j phase_j inst_j=null tail_j reason_j=null fix_j=null
	ENTRY_SEQ=$((ENTRY_SEQ + 1))
	[ -n "$rc" ] || rc=null
	# a Ctrl-C reaches the whole process group, $(...) subshells included: a killed one yields
	# an empty value, so every non-string field gets a valid default (the manifest must parse)
	set -- "$1" "$2" "$3" "${4:-[]}" "$5" "$6" "${7:-0}" "${8:-[]}" "${9:-0}" "${10:-false}" "${11}" "${12}" "${13}"
	json_q "$1"; name_j=$REPLY
	json_q "$phase"; phase_j=$REPLY
	[ -n "$inst" ] && json_q "$inst" && inst_j=$REPLY
	json_q "${11}"; tail_j=$REPLY
	[ -n "${12}" ] && json_q "${12}" && reason_j=$REPLY
	[ -n "${13}" ] && json_q "${13}" && fix_j=$REPLY
	printf '{"name":%s,"phase":%s,"instance":%s,"argv":%s,"status":"%s","exit_code":%s,"seconds":%s,"outputs":%s,"bytes":%s,"truncated":%s,"stderr_tail":%s,"reason":%s,"fix":%s}\n' \
		"$name_j" "$phase_j" "$inst_j" "$4" "$5" "$rc" "$7" "$8" "$9" "${10}" "$tail_j" "$reason_j" "$fix_j" \
		>>"$STATE_DIR/collectors.jsonl"
	note_problem "$1" "$phase" "$inst" "$5" "${12}" "${13}" "$(declaration_index "$1")"
}

declaration_index() {
	local i
	for i in "${!C_NAME[@]}"; do
		[ "${C_NAME[$i]}" = "$1" ] && { echo "$i"; return 0; }
	done
	echo -1
}

# Remember what the user must hear about: one stderr line per failed collector, with the fix.
PROBLEMS=() PARTIAL=0
note_problem() {
	local name=$1 phase=$2 inst=$3 status=$4 reason=$5 fix=$6 i=$7 optional=0
	[ "$i" -ge 0 ] && has_need "$i" optional && optional=1
	case $status in
	failed | timeout | missing) ;;
	*) return 0 ;;
	esac
	[ $optional = 1 ] && [ "$status" = missing ] && return 0
	[ $optional = 0 ] && PARTIAL=1
	# one line for all of them (report_problems), not one per collector
	case $reason in *" is full: "*) DISK_FULL_FAILS=$((DISK_FULL_FAILS + 1)); PARTIAL=1; return 0 ;; esac
	PROBLEMS+=("$name${inst:+ ($inst)} [$phase] $status: $reason${fix:+. Fix: $fix}")
}

# run_phase PHASE -> every start|end|once declaration, in table order, one instance per NIC.
run_phase() {
	local phase=$1 i inst
	for i in "${!C_NAME[@]}"; do
		case ",${C_PHASE[$i]}," in *",$phase,"*) ;; *) continue ;; esac
		if [ "${C_EACH[$i]}" = nic ]; then
			for inst in "${NICS[@]}"; do run_sync "$i" "$phase" "$inst"; done
		else
			run_sync "$i" "$phase" ""
		fi
	done
}

# --- window collectors (background, polled) -----------------------------------------------------
declare -A WPID=() WT0=()   # declaration index -> pid / start time
DEFERRED=()                 # fallbacks waiting for their primary's result

start_window() {
	local i primary
	for i in "${!C_NAME[@]}"; do
		[ "${C_PHASE[$i]}" = window ] || continue
		primary=$(need_value "$i" fallback)
		[ -n "$primary" ] || primary=$(need_value "$i" after)
		if [ -n "$primary" ] && [ -z "${STATUS_OF[$primary]:-}" ]; then
			DEFERRED+=("$i")
			continue
		fi
		start_window_one "$i"
	done
}

start_window_one() {
	local i=$1 primary probe
	primary=$(need_value "$i" fallback)
	probe=$(need_value "$i" after)
	expand_argv "$i" ""
	if [ -n "$primary" ] && [ "${STATUS_OF[$primary]:-}" = ok ]; then
		pre_set skipped "fallback for $primary, not needed" ""
	elif [ -n "$probe" ] && [ -n "${STATUS_OF[$probe]:-}" ] && [ "${STATUS_OF[$probe]}" != ok ]; then
		pre_set "${STATUS_OF[$probe]}" "not run: $probe ${STATUS_OF[$probe]}: ${REASON_OF[$probe]:-}" "${FIX_OF[$probe]:-}"
		[ "$PRE_STATUS" = failed ] && PRE_STATUS=skipped
	else
		precheck "$i"
	fi
	if [ -n "$PRE_STATUS" ]; then
		record_precheck "$i" window ""
		return 0
	fi
	launch "$i" window ""
	WPID[$i]=$LAUNCH_PID WT0[$i]=$LAUNCH_T0
}

# index_of NAME -> declaration index of a window collector
probe_ready() {
	local probe=$1 j
	[ -n "${STATUS_OF[$probe]:-}" ] && return 0
	j=$(declaration_index "$probe")
	[ -n "${WT0[$j]:-}" ] || return 1
	awk -v t="${WT0[$j]}" -v n="$(now_s)" 'BEGIN { exit !(n - t >= 3) }'
}

# reap_window [all] -> record window collectors that ended; start deferred ones whose primary
# failed (fallback:) or whose probe has run long enough (after:).
reap_window() {
	local i rc pending=() primary probe
	for i in "${!WPID[@]}"; do
		if [ "${1:-}" = all ] || ! is_running "${WPID[$i]}"; then
			expand_argv "$i" ""
			wait_child "${WPID[$i]}"
			rc=$?
			finish "$i" window "" "${WPID[$i]}" "$rc" "${WT0[$i]}" "${WINDOW_STOPPED:-0}"
			unset "WPID[$i]"
		fi
	done
	for i in "${DEFERRED[@]}"; do
		primary=$(need_value "$i" fallback)
		probe=$(need_value "$i" after)
		if [ "${1:-}" = all ]; then
			expand_argv "$i" ""
			pre_set skipped "window over before ${primary:-$probe} gave a result" ""
			if [ -n "$primary" ] && [ "${STATUS_OF[$primary]:-}" = ok ]; then
				pre_set skipped "fallback for $primary, not needed" ""
			elif [ -n "$probe" ] && [ -n "${STATUS_OF[$probe]:-}" ]; then
				pre_set skipped "not run: $probe ${STATUS_OF[$probe]}: ${REASON_OF[$probe]:-}" ""
			fi
			record_precheck "$i" window ""
		elif { [ -n "$primary" ] && [ -n "${STATUS_OF[$primary]:-}" ]; } || { [ -n "$probe" ] && probe_ready "$probe"; }; then
			start_window_one "$i"
		else
			pending+=("$i")
		fi
	done
	DEFERRED=("${pending[@]}")
}

# stop_window SIGNAL -> ask every window collector's group to stop (INT first: summaries print).
stop_window() {
	local i
	for i in "${!WPID[@]}"; do
		if [ "$1" = KILL ]; then
			# timeout cannot forward KILL: kill its whole group
			kill -KILL -- "-${WPID[$i]}" 2>/dev/null
		else
			kill "-$1" "${WPID[$i]}" 2>/dev/null
		fi
	done
}

# wait_window_exit SECONDS -> true when every window collector ended within SECONDS
wait_window_exit() {
	local tries=$(($1 * 10))
	while [ "$tries" -gt 0 ]; do
		window_running || return 0
		check_sentinel
		sleep 0.1
		tries=$((tries - 1))
	done
	! window_running
}

window_running() {
	local i
	for i in "${!WPID[@]}"; do
		is_running "${WPID[$i]}" && return 0
	done
	return 1
}
