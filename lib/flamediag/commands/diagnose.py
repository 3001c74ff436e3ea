"""flamediag diagnose — placeholder until its issue lands (see README)."""
from __future__ import annotations

from .. import exitcodes
from ..cli import make_parser, UserError

EXAMPLES = """
    flamediag diagnose --help
"""


def main(argv) -> int:
    parser = make_parser("diagnose", "not implemented yet", EXAMPLES)
    parser.parse_args(argv)
    raise UserError("diagnose is not implemented yet", exitcodes.USAGE)
