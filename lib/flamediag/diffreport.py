"""diff.md, diff.txt, diff.json and diff.svg from a Diff (templates/diff.md.j2, diff.txt.j2).

diff.md goes through the report's markdown environment (report.environment: data escaped where
CommonMark would misread it, identifiers in code spans), diff.txt through its plain-text one
(report.text_environment: control characters removed, prose wrapped), so a hostile frame or host
name can neither become markup nor drive a terminal.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

from . import __version__, report
from .diff import FACT_POINTS, TOLERANCE_POINTS, TOLERANCE_RELATIVE, Diff


def _side(diagnosis) -> dict:
    doc = diagnosis.findings_json()
    window = doc["window"]
    if window.get("start") and window.get("seconds") is not None:
        window_text = f"{window['start']} + {window['seconds']} s"
    elif window.get("seconds") is not None:
        window_text = f"{window['seconds']} s"
    else:
        window_text = "unknown"
    return {"name": diagnosis.input.name, "host": doc["host"], "kernel": doc["kernel"], "window": window_text,
            "samples": doc["samples"], "headline": diagnosis.headline}


def _fact_row(change) -> dict:
    return {"name": change.name, "before": change.shown(change.before), "after": change.shown(change.after),
            "source_after": change.source_after}


def context(result: Diff) -> dict:
    return {"headline": result.headline, "before": _side(result.before), "after": _side(result.after),
            "signatures": result.signatures, "facts": [_fact_row(f) for f in result.facts],
            "frames": [("Grew most", result.frames.get("grew", [])), ("Shrank most", result.frames.get("shrank", []))],
            "points": TOLERANCE_POINTS, "relative": TOLERANCE_RELATIVE, "fact_points": FACT_POINTS,
            "version": __version__}


def render_markdown(result: Diff) -> str:
    text = report.environment().get_template("diff.md.j2").render(d=context(result))
    return report.re.sub(r"\n{3,}", "\n\n", text)


def render_text(result: Diff) -> str:
    return report.text_environment().get_template("diff.txt.j2").render(d=context(result))


def render_svg(result: Diff) -> str:
    from .diffgraph import render

    return render(result.before.input.profile, result.after.input.profile,
                  f"flamediag diff: {result.before.input.name} -> {result.after.input.name}", result.headline)


def write_outputs(result: Diff, out_dir: Path) -> Dict[str, Path]:
    from .diagnose import write_texts

    return write_texts(out_dir, {"diff.json": lambda: json.dumps(result.to_json(), indent=2) + "\n",
                                 "diff.md": lambda: render_markdown(result), "diff.txt": lambda: render_text(result),
                                 "diff.svg": lambda: render_svg(result)})
