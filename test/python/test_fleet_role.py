"""The fleet role without a fleet: the playbook parses, and every variable is declared and documented.

The real run (sshd, Ansible over SSH, captures) is test/fleet/fleet-demo.bats.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "contrib/ansible/roles/flamediag_capture"
PLAYBOOK = ROOT / "contrib/ansible/fleet-capture.yml"
ANSIBLE_PLAYBOOK = ROOT / ".venv/bin/ansible-playbook"


def defaults() -> dict:
    return yaml.safe_load((ROLE / "defaults/main.yml").read_text())


def test_every_default_is_in_the_argument_spec_and_the_guide():
    spec = yaml.safe_load((ROLE / "meta/argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert set(defaults()) == set(spec)
    guide = (ROOT / "doc/fleet.md").read_text()
    missing = [name for name in defaults() if f"`{name}`" not in guide]
    assert not missing, f"doc/fleet.md does not document {missing}"


def test_every_variable_the_tasks_read_has_a_default():
    used = set()
    for path in (ROLE / "tasks").glob("*.yml"):
        used |= set(re.findall(r"\b(flamediag_[a-z_]+)\b", path.read_text()))
    derived = set(yaml.safe_load((ROLE / "vars/main.yml").read_text()))
    registered = {"flamediag_kits", "flamediag_job", "flamediag_run", "flamediag_bundle", "flamediag_argv",
                  "flamediag_async_limit", "flamediag_start_epoch", "flamediag_fleet_dir", "flamediag_sums",
                  "flamediag_python_probe", "flamediag_diag_job", "flamediag_diag_run", "flamediag_diagnosed",
                  "flamediag_fetched", "flamediag_summary_run", "flamediag_wanted_dir"}
    assert used - set(defaults()) - derived - registered == set()


@pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-core not in .venv (make venv-dev)")
def test_playbook_passes_ansible_syntax_check(tmp_path):
    env = dict(os.environ, ANSIBLE_HOME=str(tmp_path), ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_CONFIG=str(tmp_path / "none.cfg"))
    out = subprocess.run([str(ANSIBLE_PLAYBOOK), "--syntax-check", "-i", "localhost,", str(PLAYBOOK)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
