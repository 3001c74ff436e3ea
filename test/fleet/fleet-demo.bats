#!/usr/bin/env bats
# make fleet-demo inside the suite (root): real sshd, real Ansible over SSH, real captures on every
# "host" at once; afterwards nothing of it may be left: no process, user, sudo rule, UTS namespace,
# state directory, /run/sshd it made, or change to root's ~/.ssh. Leftovers are removed (the
# demo's --cleanup) before the test fails, so a failure does not spoil the next run.
load ../bats/test_helper

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-900}
DEMO=$BATS_TEST_DIRNAME/fleet-demo

# everything a demo could leave behind, as one comparable text
leftovers() {
	local pid
	for pid in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$pid/cmdline"; } 2>/dev/null | grep -q 'flamediag-fleet-demo\.' && echo "process ${pid#/proc/}"
	done
	getent passwd | cut -d: -f1 | grep '^fdfleet-' || true
	find /etc/sudoers.d -name 'flamediag-fleet-demo-*' || true
	find /tmp -maxdepth 1 -name 'flamediag-fleet-demo.*' || true
	lsns -n -t uts -o NS | sort -u
	ls -la --time-style=+%s /root/.ssh 2>/dev/null || echo "no /root/.ssh"
	[ -d /run/sshd ] && echo "/run/sshd" || true
}

# run_demo ARGS...: the demo, then the leftover check (restoring before failing)
run_demo() {
	require_root
	before=$(leftovers)
	run "$DEMO" "$@"
	if [ "$status" -eq 77 ]; then skip "$(grep -o 'SKIP: .*' <<<"$output" | tail -n 1)"; fi
	after=$(leftovers)
	if [ "$after" != "$before" ]; then
		echo "left behind:"
		diff <(echo "$before") <(echo "$after") || true
		"$DEMO" --cleanup
		return 1
	fi
}

@test "fleet demo: Ansible captures on 3 hosts at the same moment, fetches, summarises, leaves nothing" {
	out=$BATS_TEST_TMPDIR/fleet
	run_demo --out "$out"
	echo "$output" | tail -n 30
	[ "$status" -eq 0 ]
	"$FLAMEDIAG_ROOT/.venv/bin/python" - "$out" "$FLAMEDIAG_ROOT" <<-'PY'
		import json, sys
		from pathlib import Path
		import jsonschema
		out, root = Path(sys.argv[1]), Path(sys.argv[2])
		doc = json.loads((out / "summary.json").read_text())
		jsonschema.validate(doc, json.loads((root / "lib/flamediag/schemas/summary.schema.json").read_text()))
		rows = {c["host"]: c for c in doc["captures"]}
		assert sorted(rows) == ["fleet-a", "fleet-b", "fleet-c"], rows        # one bundle per UTS host name
		assert doc["refused"] == [], doc["refused"]
		# fleet-a/b diagnosed on the host (only findings.json, report.md, facts.json fetched);
		# fleet-c's Python cannot, so its bundle came back and was diagnosed here
		for host in ("fleet-a", "fleet-b"):
		    assert rows[host]["kind"] == "diagnosis", rows[host]
		    assert sorted(p.name for p in (out / host / "diagnosis").iterdir()) == ["facts.json", "findings.json", "report.md"]
		    assert rows[host]["sys_pct"] is not None
		assert rows["fleet-c"]["kind"] == "bundle"
		assert [p.name.endswith(".tar.gz") for p in (out / "fleet-c").iterdir()] == [True]
		# the same moment: the windows overlap (the spread is below one window)
		assert doc["start_spread_seconds"] is not None
		assert doc["start_spread_seconds"] < min(c["seconds"] for c in doc["captures"]), doc["start_spread_seconds"]
	PY
	grep -q '^| fleet-a |' <<<"$output"
	grep -q 'dry run (--check)' <<<"$output"
}

@test "fleet demo: a failing play still tears everything down" {
	# capture refuses -d 0 (usage error) on every host: the play fails after sshd, the user and
	# the sudo rule were set up
	run_demo --duration 0 --out "$BATS_TEST_TMPDIR/fail"
	[ "$status" -ne 0 ]
	grep -q -- '-d needs whole seconds' <<<"$output"
}
