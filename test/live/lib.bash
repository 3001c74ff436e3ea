# lib.bash - shared helpers for the live-lab scenario scripts (test/live/<scenario>.sh).
# shellcheck shell=bash
#
# A scenario sources this file, calls lab_start "$@", changes settings only through
# lab_write / lab_sysctl / lab_mkdir_cgroup / lab_netns / lab_tmpdir, starts its load
# with lab_spawn, then calls lab_ready and lab_hold. Every change registers its undo
# first, and the undo list runs (last change first) on any exit: normal end, error,
# SIGINT, SIGTERM. Exit codes: 0 ran, 1 failed, 2 usage, 77 cannot run here (the one
# line on stderr starting "SKIP:" says why).

LAB_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib/host.bash
. "$LAB_HOME/../lib/host.bash"
LAB_SECONDS=60
LAB_READY_FILE=
LAB_UNDO=()
LAB_PIDS=()
LAB_BUILD_DIR=${LAB_BUILD_DIR:-${TMPDIR:-/tmp}/flamediag-lab-build-$(id -u)}

lab_log() { echo "${LAB_NAME:-lab}: $*" >&2; }

lab_die() {
	lab_log "ERROR: $*"
	exit 1
}

lab_skip() {
	echo "SKIP: ${LAB_NAME:-lab}: $*" >&2
	exit 77
}

lab_usage() {
	cat <<-END
	USAGE: test/live/$LAB_NAME.sh [-d SECONDS] [-r READY_FILE] | --expect | --explain-miss BUNDLE | -h
	   -d SECONDS     stop the load after SECONDS (default 60, max 60)
	   -r READY_FILE  write "ready" there once the load is running
	   --expect       print what the lab expects (finding id, evidence regex, CPU), and exit
	   --explain-miss BUNDLE   exit 77 with the reason if this kernel cannot produce the finding
	   eg,
	       sudo test/live/$LAB_NAME.sh -d 20      # run the load for 20 s, then restore
	END
}

# Parse the common options and install the undo trap.
lab_start() {
	while [ $# -gt 0 ]; do
		case $1 in
		-d) LAB_SECONDS=${2:?-d needs seconds}; shift 2 ;;
		-r) LAB_READY_FILE=${2:?-r needs a file}; shift 2 ;;
		--explain-miss)
			# A scenario may define lab_explain_miss BUNDLE: exit 77 + "SKIP: why" when the kernel
			# cannot produce the expected finding (and the bundle proves it), else exit 1.
			declare -F lab_explain_miss >/dev/null || exit 1
			lab_explain_miss "${2:?--explain-miss needs a bundle}"
			exit 1 ;;
		--expect) printf '%s\t%s\t%s\n' "$LAB_EXPECT" "${LAB_EVIDENCE:--}" "${LAB_CPU:--}"; exit 0 ;;
		-h | --help) lab_usage; exit 0 ;;
		*) lab_usage >&2; exit 2 ;;
		esac
	done
	case $LAB_SECONDS in '' | *[!0-9]*) lab_usage >&2; exit 2 ;; esac
	[ "$LAB_SECONDS" -le 60 ] || LAB_SECONDS=60
	# shellcheck disable=SC2034 # used by the scenarios: a guard only, lab_stop_loads ends the loads
	LAB_LOAD_SECONDS=$((LAB_SECONDS + 120))
	trap lab_undo_all EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap lab_pause_loads USR1
	[ "$(id -u)" -eq 0 ] || lab_skip "needs root (changes kernel settings and runs perf); run as root"
}

# Register an undo command (a word list, run without eval).
lab_on_exit() {
	local encoded
	encoded=$(printf '%q ' "$@")
	LAB_UNDO+=("$encoded")
}

# lab_cpus: LAB_CPUS = the CPUs the lab may pin loads to (online and in its affinity), in order.
lab_cpus() {
	mapfile -t LAB_CPUS < <(host_allowed_cpus)
	[ "${#LAB_CPUS[@]}" -gt 0 ] || lab_die "no CPU in this process's affinity (Cpus_allowed_list)"
}

lab_undo_all() {
	local rc=$? i
	trap - EXIT TERM INT
	lab_stop_loads
	for ((i = ${#LAB_UNDO[@]} - 1; i >= 0; i--)); do
		eval "${LAB_UNDO[i]}" || lab_log "undo failed: ${LAB_UNDO[i]}"
	done
	LAB_UNDO=()
	exit "$rc"
}

# The active value of a sysfs/procfs knob: "always [madvise] never" -> madvise.
lab_current_value() {
	local content
	content=$(cat "$1") || return 1
	case $content in
	*\[*\]*) content=${content#*[}; echo "${content%%]*}" ;;
	*) echo "$content" ;;
	esac
}

# lab_bundle_file BUNDLE PATH: print one member of a capture bundle (.tar.gz), by path below its top dir.
lab_bundle_file() {
	tar -xzf "$1" -O --wildcards "*/$2" 2>/dev/null
}

# lab_vmstat_delta BUNDLE COUNTER: end - start of a /proc/vmstat counter in the bundle.
lab_vmstat_delta() {
	local start end
	start=$(lab_bundle_file "$1" snap/start/proc-vmstat.txt | awk -v k="$2" '$1 == k { print $2 }')
	end=$(lab_bundle_file "$1" snap/end/proc-vmstat.txt | awk -v k="$2" '$1 == k { print $2 }')
	echo $((${end:-0} - ${start:-0}))
}

lab_restore_value() {
	echo "$2" >"$1" 2>/dev/null || lab_log "could not restore $1 to '$2'"
}

# lab_write FILE VALUE: set a kernel knob, restoring its previous value on exit.
lab_write() {
	local file=$1 value=$2 old
	[ -w "$file" ] || lab_skip "$file is not writable on this kernel"
	old=$(lab_current_value "$file") || lab_skip "cannot read $file"
	lab_on_exit lab_restore_value "$file" "$old"
	echo "$value" >"$file" || lab_die "cannot write '$value' to $file"
}

lab_sysctl() {
	lab_write "/proc/sys/${1//.//}" "$2"
}

# lab_tmpdir: REPLY = a scratch directory on a real filesystem (/var/tmp), removed on exit.
# (Helpers that register an undo return through REPLY: a $(...) subshell would lose it.)
lab_tmpdir() {
	REPLY=$(mktemp -d "/var/tmp/flamediag-lab-$LAB_NAME.XXXXXX") || lab_die "cannot create a directory in /var/tmp"
	lab_on_exit rm -rf -- "$REPLY"
}

lab_rmdir_cgroup() {
	local dir=$1
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$dir" 2>/dev/null && return 0
		[ -d "$dir" ] || return 0
		sleep 0.2
	done
	lab_log "could not remove cgroup $dir (try: rmdir $dir)"
}

# lab_mkdir_cgroup CONTROLLER_DIR: REPLY = a fresh child cgroup, removed on exit (after its tasks died).
lab_mkdir_cgroup() {
	REPLY="$1/flamediag-lab-$LAB_NAME-$$"
	mkdir "$REPLY" || lab_die "cannot create cgroup $REPLY"
	lab_on_exit lab_rmdir_cgroup "$REPLY"
}

# lab_netns NAME: REPLY = a fresh network namespace, deleted on exit (taking its veth ends with it).
lab_netns() {
	REPLY="fdlab-$1-$$"
	ip netns add "$REPLY" || lab_skip "cannot create network namespace $REPLY (ip netns add failed)"
	lab_on_exit ip netns delete "$REPLY"
}

# lab_build NAME: compile test/live/src/NAME.c (cached), print the binary's path.
lab_build() {
	local name=$1 src="$LAB_HOME/src/$1.c" bin="$LAB_BUILD_DIR/$1"
	command -v gcc >/dev/null || lab_skip "gcc is not installed (apt-get install gcc) to build $name"
	mkdir -p "$LAB_BUILD_DIR" || lab_die "cannot create $LAB_BUILD_DIR"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		gcc -O2 -Wall -pthread -o "$bin.tmp.$$" "$src" >&2 || lab_die "cannot compile $src"
		mv -f "$bin.tmp.$$" "$bin"
	fi
	echo "$bin"
}

# lab_spawn CMD...: start a load in its own session, killed (whole group) on exit.
# Its oom_score_adj is 1000 so that, if the lab ever squeezes memory, the load dies first.
# It runs at nice $LAB_NICE (default -10), and so does its session's autogroup (with
# kernel.sched_autogroup_enabled, nice only counts inside a session): on a shared 2-CPU test
# host other jobs would otherwise take most samples and drown the signature being produced.
lab_spawn() {
	local nice=${LAB_NICE:--10}
	setsid nice -n "$nice" bash -c 'echo 1000 >/proc/self/oom_score_adj
		[ ! -w /proc/self/autogroup ] || echo "$0" >/proc/self/autogroup
		exec "$@"' "$nice" "$@" </dev/null >&2 &
	LAB_PIDS+=("$!")
}

# SIGUSR1 (sent by run-scenario when the capture window has ended): freeze the loads so the
# capture's packing gets the CPU, while every setting, cgroup and namespace stays in place
# for the collectors that run after the window (sysctl, thp, memcg).
lab_pause_loads() {
	local pid
	for pid in "${LAB_PIDS[@]}"; do kill -STOP -- "-$pid" 2>/dev/null; done
	LAB_PAUSED=1
	lab_log "loads paused (SIGUSR1)"
}

lab_stop_loads() {
	local pid
	for pid in "${LAB_PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; kill -CONT -- "-$pid" 2>/dev/null; done
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		lab_loads_gone && break
		sleep 0.2
	done
	for pid in "${LAB_PIDS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
	for pid in "${LAB_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	LAB_PIDS=()
}

lab_loads_gone() {
	local pid
	for pid in "${LAB_PIDS[@]}"; do
		kill -0 -- "-$pid" 2>/dev/null && return 1
	done
	return 0
}

lab_loads_alive() {
	local pid
	for pid in "${LAB_PIDS[@]}"; do
		kill -0 "$pid" 2>/dev/null || return 1
	done
	return 0
}

# lab_ready: the load runs; tell the driver (READY_FILE) and the human (stderr).
lab_ready() {
	lab_loads_alive || lab_die "a load process exited during setup"
	[ -z "$LAB_READY_FILE" ] || echo ready >"$LAB_READY_FILE"
	lab_log "ready: load running for up to $LAB_SECONDS s"
}

# lab_hold: keep the load running until the time is up or a signal arrives.
# Paused seconds do not count (the settings must outlive the capture's packing), but the
# whole hold never exceeds 3 x SECONDS. Counts one-second sleeps: the wall clock jumps on VMs.
lab_hold() {
	local held=0 waited=0
	while [ "$held" -lt "$LAB_SECONDS" ] && [ "$waited" -lt $((3 * LAB_SECONDS)) ]; do
		lab_loads_alive || lab_die "a load process exited early"
		sleep 1 &
		wait $! 2>/dev/null
		[ "${LAB_PAUSED:-0}" -eq 1 ] || held=$((held + 1))
		waited=$((waited + 1))
	done
}
