"""The exit codes, kept importable here; they live in errors.py with UserError."""
from .errors import BUSY, DATAERR, NOPERM, OK, SOFTWARE, PARTIAL, SIGINT, SIGTERM, USAGE  # noqa: F401
