"""verdict.py - judge one live-lab diagnosis (findings.json) against the scenario's expectation.

USAGE: python3 test/live/verdict.py FINDINGS_JSON EXPECTED_ID [EVIDENCE_REGEX] [--cpu N]
   eg,
       python3 test/live/verdict.py out/diagnosis/findings.json memcg-reclaim 'failcnt|memory\\.events'
       python3 test/live/verdict.py out/diagnosis/findings.json none      # healthy: nothing >= medium

Prints one tab-separated line: expected, diagnosed, confidence, share, evidence, verdict, reason.
A scenario passes when the top finding is EXPECTED_ID, at least one metric/setting evidence item
supports it (and matches EVIDENCE_REGEX when given), and with --cpu N the finding's busiest CPU
is N. EXPECTED_ID "none" passes when no finding has medium or high confidence.
Exit 0 pass, 1 fail, 65 unreadable findings.json.
"""
from __future__ import annotations

import json
import re
import sys
from typing import List, Optional, Tuple

CORROBORATING_KINDS = ("metric", "setting")


def load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as err:
        print(f"verdict: cannot read {path}: {err}: did diagnose run? see its log", file=sys.stderr)
        sys.exit(65)


def supports(evidence: dict) -> bool:
    """True only for evidence for the finding: false is a failed check, null a neutral one."""
    return evidence.get("supports") is True


def corroborating(finding: dict, pattern: Optional[str]) -> List[dict]:
    """Evidence items from metrics/settings that support the finding (and match pattern)."""
    items = [e for e in finding.get("evidence", [])
             if e.get("kind") in CORROBORATING_KINDS and supports(e)]
    if pattern:
        regex = re.compile(pattern, re.IGNORECASE)
        items = [e for e in items if regex.search(f"{e.get('text', '')} {e.get('source', '')}")]
    return items


def busiest_cpu(finding: dict) -> Optional[str]:
    cpus = finding.get("cpus") or {}
    return max(cpus, key=cpus.get) if cpus else None


def judge(doc: dict, expected: str, pattern: Optional[str], cpu: Optional[str]) -> Tuple[bool, str, List[str]]:
    findings = doc.get("findings") or []
    top = findings[0] if findings else {}
    row = [top.get("id", "none"), top.get("confidence", "-"),
           f"{top['share'] * 100:.1f}%" if "share" in top else "-"]
    if expected == "none":
        loud = [f["id"] for f in findings if f.get("confidence") in ("medium", "high")]
        return (not loud, f"findings at medium/high: {', '.join(loud)}" if loud else "no finding >= medium",
                row + ["-"])
    if top.get("id") != expected:
        others = [f"{f['id']}({f.get('confidence')})" for f in findings[:4]]
        ruled = [r.get("reason", "") for r in doc.get("ruled_out", []) if r.get("id") == expected]
        why = f"top findings: {', '.join(others) or 'none'}"
        return False, why + (f"; {expected} ruled out: {ruled[0]}" if ruled else ""), row + ["-"]
    support = corroborating(top, pattern)
    evidence = "; ".join(e.get("text", "") for e in support[:2]) or "-"
    if not support:
        want = f" matching /{pattern}/" if pattern else ""
        return False, f"no corroborating metric/setting evidence{want}", row + [evidence]
    if cpu is not None and busiest_cpu(top) != cpu:
        return False, f"busiest CPU is {busiest_cpu(top)}, expected {cpu}", row + [evidence]
    return True, f"{len(support)} corroborating evidence item(s)", row + [evidence]


def main(argv: List[str]) -> int:
    cpu = None
    if "--cpu" in argv:
        at = argv.index("--cpu")
        cpu = argv[at + 1] if at + 1 < len(argv) else None
        argv = argv[:at] + argv[at + 2:]
    if len(argv) not in (2, 3) or cpu == "":
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path, expected = argv[0], argv[1]
    pattern = argv[2] if len(argv) == 3 and argv[2] else None
    ok, reason, row = judge(load(path), expected, pattern, cpu)
    clean = [re.sub(r"[\t\n]", " ", str(cell)) for cell in [expected] + row + ["PASS" if ok else "FAIL", reason]]
    print("\t".join(clean))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
