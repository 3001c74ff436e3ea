"""The `flamediag` console script of a pip/pipx install.

Python subcommands (flamediag.__main__.COMMANDS) run in this interpreter: no bash needed, so
diagnose, collapse, flamegraph, redact, facts and playbooks work on any OS. Everything else
(capture, watch, help, version, usage errors) goes to the shipped bin/flamediag, the same
dispatcher a checkout uses, told to run Python subcommands with this interpreter (capture
--diagnose calls back into it).
"""
from __future__ import annotations

import os
import shutil
import sys
from typing import List, Optional

from . import HOME, __main__ as python_main


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in python_main.COMMANDS:
        return python_main.main(args)
    bash = shutil.which("bash")
    if bash is None:
        sys.stderr.write("flamediag: bash not found: capture and watch need bash (Linux). "
                         "Python subcommands work without it: " + ", ".join(python_main.COMMANDS) + "\n")
        return 2
    env = dict(os.environ, FLAMEDIAG_PYTHON=sys.executable)
    os.execve(bash, [bash, str(HOME / "bin" / "flamediag"), *args], env)
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
