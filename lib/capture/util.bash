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

# Seconds since the epoch with microseconds (bash 5 has EPOCHREALTIME; RHEL 8's bash 4.4 has not).
now_s() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		printf '%s\n' "${EPOCHREALTIME/,/.}"
	else
		date +%s.%N
	fi
}

# elapsed START [END] -> seconds with 2 decimals
elapsed() {
	awk -v a="$1" -v b="${2:-$(now_s)}" 'BEGIN { printf "%.2f\n", b - a }'
}

utc_iso() {
	date -u +%Y-%m-%dT%H:%M:%SZ
}

# JSON string literal: only printable ASCII survives, so the manifest always parses (a stderr tail
# may hold any bytes; readers decode manifest.json as strict UTF-8).
json_str() {
	local s
	s=$(printf '%s' "$1" | LC_ALL=C tr -c '\11\12\40-\176' '?')
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	s=${s//$'\n'/\\n}
	printf '"%s"' "$s"
}

# json_str or null when empty
json_str_or_null() {
	if [ -n "$1" ]; then json_str "$1"; else printf 'null'; fi
}

# json_array WORD... -> ["a","b"]
json_array() {
	local out="" word
	for word in "$@"; do
		out+="${out:+,}$(json_str "$word")"
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
