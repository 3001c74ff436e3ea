"""flamediag playbooks — placeholder until its issue lands (see README)."""
from __future__ import annotations

from .. import exitcodes
from ..cli import make_parser, UserError

EXAMPLES = """
    flamediag playbooks --help
"""


def main(argv) -> int:
    parser = make_parser("playbooks", "not implemented yet", EXAMPLES)
    parser.parse_args(argv)
    raise UserError("playbooks is not implemented yet", exitcodes.USAGE)
