"""flamediag: diagnose Linux CPU-system spikes from perf stacks and system metrics."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
HOME = PACKAGE_DIR.parent.parent  # checkout or install root: bin/, lib/, playbooks/


def _read_version() -> str:
    try:
        return (PACKAGE_DIR.parent / "VERSION").read_text().strip()
    except OSError:
        return "0+unknown"


__version__ = _read_version()
