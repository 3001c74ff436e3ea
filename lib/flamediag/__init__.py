"""flamediag: diagnose Linux CPU-system spikes from perf stacks and system metrics."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _find_home() -> Path:
    """The tree holding bin/, lib/ and playbooks/: the checkout (or `make install` / .deb tree),
    or, in a pip-installed wheel, the copy shipped inside the package as `_home/`."""
    shipped = PACKAGE_DIR / "_home"
    return shipped if (shipped / "bin").is_dir() else PACKAGE_DIR.parent.parent


HOME = _find_home()


def _read_version() -> str:
    try:
        return (HOME / "lib" / "VERSION").read_text().strip()
    except OSError:
        return "0+unknown"


__version__ = _read_version()
