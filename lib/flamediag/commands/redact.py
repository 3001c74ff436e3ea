"""flamediag redact — placeholder until its issue lands (see README)."""
from __future__ import annotations

from .. import exitcodes
from ..cli import make_parser, UserError

EXAMPLES = """
    flamediag redact --help
"""


def main(argv) -> int:
    parser = make_parser("redact", "not implemented yet", EXAMPLES)
    parser.parse_args(argv)
    raise UserError("redact is not implemented yet", exitcodes.USAGE)
