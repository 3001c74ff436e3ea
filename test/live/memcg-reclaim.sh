#!/usr/bin/env bash
# memcg-reclaim.sh - live-lab load: page-cache reads in a small memory cgroup.
#
# USAGE: test/live/memcg-reclaim.sh [-d SECONDS] [-r READY_FILE] | --expect
#    eg,
#        sudo test/live/memcg-reclaim.sh -d 20
#
# Creates a memory cgroup limited to 224 MiB (v1 memory.limit_in_bytes, or v2 memory.max)
# (192 MiB of it held by anonymous memory, see below) and runs two dd readers of 2 GiB sparse files on /var/tmp in it. Reading holes fills
# the page cache by zeroing (no disk I/O), so each charge over the limit reclaims
# synchronously (try_charge_memcg -> try_to_free_mem_cgroup_pages) and reclaim becomes
# a large share of CPU (reading real data from disk leaves it at ~1 %).
# Removes the cgroup, the files and the processes on exit.
LAB_NAME="memcg-reclaim"
LAB_EXPECT="memcg-reclaim"
LAB_EVIDENCE='failcnt|memory\.events|memcg|cgroup'
# shellcheck source=test/live/lib.bash
. "$(dirname "$0")/lib.bash"
lab_start "$@"
# flamediag capture records the 10 memory cgroups with the largest usage; on a shared host a
# tiny cgroup would not be among them (its failcnt unseen). So the cgroup also holds 192 MiB of
# anonymous memory (unreclaimable: no swap) and the page cache gets the remaining 32 MiB: usage
# is large, reclaim pressure is that of a 32 MiB cgroup (a plain 256 MiB limit made reclaim ~2 %).
limit=224M

case $(host_memcg_version) in
v1)
	lab_mkdir_cgroup /sys/fs/cgroup/memory
	cgroup=$REPLY
	echo "$limit" >"$cgroup/memory.limit_in_bytes" || lab_die "cannot set $cgroup/memory.limit_in_bytes"
	;;
v2)
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || lab_skip "cgroup v2 memory controller not enabled in /sys/fs/cgroup/cgroup.subtree_control"
	lab_mkdir_cgroup /sys/fs/cgroup
	cgroup=$REPLY
	echo "$limit" >"$cgroup/memory.max" || lab_die "cannot set $cgroup/memory.max"
	;;
*) lab_skip "no memory cgroup controller mounted (neither /sys/fs/cgroup/memory nor v2 memory)" ;;
esac

command -v stress-ng >/dev/null || lab_skip "stress-ng is not installed (apt-get install stress-ng)"
lab_spawn bash -c 'echo $$ >"$1/cgroup.procs" || exit 1
	exec stress-ng --vm 1 --vm-bytes 192M --vm-keep --vm-hang 0 --vm-populate --timeout 300s --quiet' \
	memcg-anon "$cgroup"
sleep 2

lab_tmpdir
files=$REPLY
for reader in 1 2; do
	truncate -s 2G "$files/sparse$reader" || lab_die "cannot create sparse files in $files"
	lab_spawn bash -c 'echo $$ >"$1/cgroup.procs" || exit 1
		while :; do dd if="$2" of=/dev/null bs=1M status=none; done' \
		memcg-reader "$cgroup" "$files/sparse$reader"
done
sleep 1
lab_ready
lab_hold
