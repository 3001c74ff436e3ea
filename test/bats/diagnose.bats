#!/usr/bin/env bats
# diagnose / playbooks from the shell: exit codes, headline on stderr, outputs, usage.
load test_helper

setup() {
	OUT=$(mktemp -d)
}

teardown() {
	rm -rf "$OUT"
}

@test "diagnose: zone-reclaim sample -> exit 0, headline on stderr, four files" {
	run --separate-stderr "$FLAMEDIAG" diagnose "$FLAMEDIAG_ROOT/samples/zone-reclaim-rhel6" -o "$OUT/dx"
	assert_success
	assert_output ""
	[[ "${stderr_lines[0]}" == "zone-reclaim (high confidence):"* ]]
	assert_file_exists "$OUT/dx/report.md"
	assert_file_exists "$OUT/dx/report.txt"
	assert_file_exists "$OUT/dx/flamegraph.svg"
	assert_file_exists "$OUT/dx/findings.json"
}

@test "diagnose: --format json prints findings.json to stdout" {
	run --separate-stderr "$FLAMEDIAG" diagnose "$FLAMEDIAG_ROOT/samples/healthy-6.1" -o "$OUT/dx" --format json
	assert_success
	assert_output --partial '"schema": 2'
	assert_output --partial '"headline": "CPUs 90 % idle in this window'
	assert_output --partial '"findings": []'
}

@test "diagnose: --format text prints report.txt to stdout" {
	run --separate-stderr "$FLAMEDIAG" diagnose "$FLAMEDIAG_ROOT/samples/zone-reclaim-rhel6" -o "$OUT/dx" --format text
	assert_success
	assert_output --partial 'sysctl -w vm.zone_reclaim_mode=0                                   # immediate, no restart'
	refute_output --partial '```'
	[ "$output" = "$(cat "$OUT/dx/report.txt")" ]
}

@test "diagnose: not a profile -> exit 65 with one line" {
	printf 'just some words\n' > "$OUT/note.txt"
	run --separate-stderr "$FLAMEDIAG" diagnose "$OUT/note.txt" -o "$OUT/dx"
	assert_failure 65
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_dir_not_exists "$OUT/dx"
}

@test "diagnose: no argument -> usage on stderr, exit 2" {
	run --separate-stderr "$FLAMEDIAG" diagnose
	assert_failure 2
	[[ "$stderr" == *"usage: flamediag diagnose"* ]]
}

@test "playbooks: lists the three seed playbooks" {
	run "$FLAMEDIAG" playbooks
	assert_success
	assert_output --partial "zone-reclaim  "
	assert_output --partial "nic-softirq  "
	assert_output --partial "thp-compaction  "
}
