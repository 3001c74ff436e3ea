# util.bash - small helpers shared by lib/capture.bash and its parts (sourced, not run).
# shellcheck shell=bash

# Progress goes to stderr; --quiet silences it, never the errors.
say() {
	[ "${OPT_QUIET:-0}" = 1 ] || printf '%s\n' "$*" >&2
}

warn() {
	printf 'flamediag capture: %s\n' "$*" >&2
}

die() {
	local code=$1
	shift
	printf 'ERROR: %s\n' "$*" >&2
	exit "$code"
}

# Seconds since the epoch with 6 decimals (bash 5 has EPOCHREALTIME; RHEL 8's bash 4.4 has not).
now_s() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		printf '%s\n' "${EPOCHREALTIME/,/.}"
	else
		date +%s.%6N
	fi
}

# set_now -> NOW_US, microseconds since the epoch, without a fork when bash has EPOCHREALTIME
set_now() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		NOW_US=${EPOCHREALTIME//[.,]/}
	else
		NOW_US=$(date +%s%6N)
	fi
}

# elapsed START [END] -> seconds with 2 decimals (START/END as printed by now_s)
elapsed() {
	local a=${1//[.,]/} b=${2:-} cs
	if [ -z "$b" ]; then set_now; b=$NOW_US; else b=${b//[.,]/}; fi
	cs=$(((10#$b - 10#$a) / 10000))
	printf '%d.%02d\n' $((cs / 100)) $((cs % 100))
}

# us_to_s MICROSECONDS -> seconds with 6 decimals (for sleep)
us_to_s() {
	printf '%d.%06d\n' $(($1 / 1000000)) $(($1 % 1000000))
}

utc_iso() {
	date -u +%Y-%m-%dT%H:%M:%SZ
}

# json_q STRING -> REPLY = the JSON string literal, without a fork. Only printable ASCII
# survives (a stderr tail may hold any bytes; readers decode manifest.json as strict UTF-8).
json_q() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	s=${s//$'\n'/\\n}
	s=${s//$'\r'/\\r}
	s=${s//[^[:print:]]/?}
	REPLY="\"$s\""
}

json_str() {
	json_q "$1"
	printf '%s' "$REPLY"
}

# json_str or null when empty
json_str_or_null() {
	if [ -n "$1" ]; then json_str "$1"; else printf 'null'; fi
}

# json_array WORD... -> ["a","b"]
json_array() {
	local out="" word
	for word in "$@"; do
		json_q "$word"
		out+="${out:+,}$REPLY"
	done
	printf '[%s]' "$out"
}

# Byte size of a file (0 when absent).
file_bytes() {
	if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo 0; fi
}

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# Integer check for option values.
is_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

# Is PID alive and not a zombie? (kill -0 succeeds on zombies we have not reaped yet)
is_running() {
	local line state
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	state=${line##*) }
	state=${state%% *}
	[ -n "$state" ] && [ "$state" != Z ]
}

# physical_nics SYS -> the physical NICs, one a line: a class/net link with a device that is not
# under /devices/virtual (lo, bridges, ifb, veth are not)
physical_nics() {
	local link real
	for link in "$1"/class/net/*; do
		[ -e "$link/device" ] || continue
		real=$(readlink -f "$link")
		case $real in */devices/virtual/*) continue ;; esac
		basename "$link"
	done
}
