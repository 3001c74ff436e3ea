"""Shared helpers for the diagnosis tests: build bundles from make-sample specs, run the CLI."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
FIXTURES = ROOT / "test" / "fixtures"
SAMPLES = ROOT / "samples"
FLAMEDIAG = ROOT / "bin" / "flamediag"


def make_sample_module():
    loader = importlib.machinery.SourceFileLoader("make_sample", str(SAMPLES / "tools" / "make-sample"))
    spec = importlib.util.spec_from_loader("make_sample", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


MAKE_SAMPLE = make_sample_module()


def load_spec(path: Path) -> dict:
    return MAKE_SAMPLE.load_spec(Path(path))


def build_bundle(spec: dict, out: Path) -> Path:
    """A bundle directory from a spec dict (make-sample defaults applied)."""
    full = dict(MAKE_SAMPLE.SPEC_DEFAULTS, **spec)
    return MAKE_SAMPLE.build(full, Path(out))


def spec_from_yaml(text: str) -> dict:
    return dict(MAKE_SAMPLE.SPEC_DEFAULTS, **yaml.safe_load(text))


def run_cli(*args, env=None, cwd=None):
    full_env = dict(os.environ, FLAMEDIAG_PYTHON=sys.executable)
    full_env.update(env or {})
    return subprocess.run([str(FLAMEDIAG), *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


def read_findings(out_dir: Path) -> dict:
    return json.loads((Path(out_dir) / "findings.json").read_text(encoding="utf-8"))


def confident(doc: dict):
    return [f for f in doc["findings"] if f["confidence"] in ("medium", "high")]
