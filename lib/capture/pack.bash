# pack.bash - manifest.json, SHA256SUMS and the .tar.gz (sourced by lib/capture.bash).
# shellcheck shell=bash disable=SC2034

# self_cpu_seconds -> user+sys CPU of this shell and every child it reaped (perf included), from
# the `times` output main saved (`times` in a $(...) subshell would report the subshell).
self_cpu_seconds() {
	[ -f "$STATE_DIR/times" ] || { echo null; return 0; }
	tr ' ' '\n' <"$STATE_DIR/times" | sed -n 's/^\([0-9]*\)m\([0-9.]*\)s$/\1 \2/p' |
		awk '{ total += $1 * 60 + $2 } END { printf "%.2f\n", total }'
}

# write_manifest COMPLETE STATE -> manifest.json, atomically (a reader never sees half a file).
write_manifest() {
	local complete=$1 state=$2 collectors="" tmp=$BUNDLE_DIR/.manifest.json.tmp end_utc=null actual=null
	local perf_j cpu_j
	# defaults: a Ctrl-C can kill a $(...) subshell and leave its value empty
	perf_j=$(perf_json)
	[ -n "$perf_j" ] || perf_j='{}'
	cpu_j=$(self_cpu_seconds)
	[ -n "$cpu_j" ] || cpu_j=null
	[ -f "$STATE_DIR/collectors.jsonl" ] && collectors=$(sed '$!s/$/,/' "$STATE_DIR/collectors.jsonl")
	[ -n "${DURATION_ACTUAL:-}" ] && actual=$DURATION_ACTUAL
	local version_j host_j kernel_j arch_j start_j label_j cmd_j signal_j=null notes_j="" note root_j=false
	json_q "$VERSION"; version_j=$REPLY
	json_q "$HOST"; host_j=$REPLY
	json_q "$KERNEL"; kernel_j=$REPLY
	json_q "$ARCH"; arch_j=$REPLY
	json_q "$START_UTC"; start_j=$REPLY
	json_q "$OPT_LABEL"; label_j=$REPLY
	json_q "$COMMAND_LINE"; cmd_j=$REPLY
	[ -n "${END_UTC:-}" ] && json_q "$END_UTC" && end_utc=$REPLY
	[ -n "${END_SIGNAL:-}" ] && json_q "$END_SIGNAL" && signal_j=$REPLY
	for note in "${NOTES[@]}"; do json_q "$note"; notes_j+="${notes_j:+,}$REPLY"; done
	[ "$EUID" -eq 0 ] && root_j=true
	{
		printf '{\n"schema": 1,\n"flamediag_version": %s,\n' "$version_j"
		printf '"host": %s, "kernel": %s, "arch": %s,\n' "$host_j" "$kernel_j" "$arch_j"
		printf '"cpus": %s, "numa_nodes": %s,\n' "$CPUS" "$NUMA_NODES"
		printf '"start_utc": %s, "end_utc": %s,\n' "$start_j" "$end_utc"
		printf '"duration_requested": %s, "duration_actual": %s,\n' "$OPT_DURATION" "$actual"
		printf '"frequency": %s, "label": %s, "command_line": %s,\n' "$OPT_HZ" "$label_j" "$cmd_j"
		printf '"state": "%s", "complete": %s, "end_signal": %s,\n' "$state" "$complete" "$signal_j"
		printf '"root": %s, "max_size_mb": %s, "notes": [%s],\n' "$root_j" "${OPT_MAX_MB:-null}" "$notes_j"
		[ -n "${TRIGGER_JSON:-}" ] && printf '"trigger": %s,\n' "$TRIGGER_JSON"	# flamediag watch
		printf '"perf": %s,\n' "$perf_j"
		printf '"self_cpu_seconds": %s,\n' "$cpu_j"
		printf '"collectors": [\n%s\n]\n}\n' "$collectors"
	} >"$tmp" 2>/dev/null && mv -f "$tmp" "$BUNDLE_DIR/manifest.json" && return 0
	# the output filled up: the last complete manifest stays; the next one goes into the reserve
	rm -f "$tmp"
	[ "${DISK_FULL:-0}" = 1 ] || ! out_of_room || disk_full "manifest.json could not be written"
	return 1
}

# enforce_max_size -> with --max-size, drop the optional big files first if the bundle would
# exceed it (perf record --max-size already capped perf.data).
enforce_max_size() {
	local kib
	[ -n "$OPT_MAX_MB" ] || return 0
	kib=$(du -sk "$BUNDLE_DIR" | cut -f1)
	[ "$kib" -gt $((OPT_MAX_MB * 1024)) ] || return 0
	rm -f "$BUNDLE_DIR/perf/perf.data" "$BUNDLE_DIR/perf/perf.data.tar.bz2"
	# the manifest must not list what is gone
	sed -i 's|"perf/perf.data",||; s|"perf/perf.data.tar.bz2"||' "$STATE_DIR/collectors.jsonl"
	NOTES+=("bundle over --max-size ${OPT_MAX_MB} MB: perf.data and perf archive dropped")
	kib=$(du -sk "$BUNDLE_DIR" | cut -f1)
	[ "$kib" -gt $((OPT_MAX_MB * 1024)) ] && NOTES+=("bundle still ${kib} KiB, over --max-size ${OPT_MAX_MB} MB")
	return 0
}

write_sums() {
	(cd "$BUNDLE_DIR" && find . -type f ! -name SHA256SUMS ! -name '.*' -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 -r sha256sum >SHA256SUMS 2>/dev/null) && return 0
	# a cut-short list would mark the files it misses as tampered: better none (unverified)
	rm -f "$BUNDLE_DIR/SHA256SUMS"
	warn "SHA256SUMS could not be written ($OUT full?): the bundle's files will read as unverified"
	return 1
}

# pack -> OUT/NAME.tar.gz with manifest.json as the first member; written under a temporary
# name and renamed, so no file claims to be a bundle unless it is complete.
pack() {
	local list=$STATE_DIR/members rc
	(cd "$OUT" && {
		printf '%s\0' "$NAME/manifest.json"
		find "$NAME" ! -name manifest.json ! -name '.*' -printf '%p\0' | LC_ALL=C sort -z
	}) >"$list"
	TAR_TMP=$OUT/.$NAME.tar.gz.partial
	LC_ALL=C "${PRIO[@]}" tar --no-recursion --null -czf "$TAR_TMP" -C "$OUT" -T "$list" 2>"$STATE_DIR/tar.err" 9>&- &
	WAIT_KEEP=1 wait_current "$!"
	rc=$?
	if [ $rc -ne 0 ]; then
		rm -f "$TAR_TMP"
		warn "packing failed: $(tail -n 1 "$STATE_DIR/tar.err"). Data left in $BUNDLE_DIR (not a bundle). Free space in $OUT and pack it: tar -czf $NAME.tar.gz -C $OUT $NAME"
		return 1
	fi
	mv -f "$TAR_TMP" "$OUT/$NAME.tar.gz" || return 1
	TAR_TMP=""
	rm -rf "$BUNDLE_DIR"
	BUNDLE=$OUT/$NAME.tar.gz
}
