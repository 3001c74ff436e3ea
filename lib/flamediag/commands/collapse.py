"""flamediag collapse — placeholder until its issue lands (see README)."""
from __future__ import annotations

from .. import exitcodes
from ..cli import make_parser, UserError

EXAMPLES = """
    flamediag collapse --help
"""


def main(argv) -> int:
    parser = make_parser("collapse", "not implemented yet", EXAMPLES)
    parser.parse_args(argv)
    raise UserError("collapse is not implemented yet", exitcodes.USAGE)
