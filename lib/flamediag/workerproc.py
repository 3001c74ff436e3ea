"""What a pool's worker process does first: die of SIGTERM and SIGINT as any process does.

The CLI turns SIGTERM into SystemExit so that the parent can clean up
(`cli.install_sigterm_handler`). A forked worker inherits that handler. When a pool ends a worker
that is already on its way out, the SystemExit can escape multiprocessing's bootstrap, and the
child then runs on in the parent's code, where it waits forever on the pool's lock: a
`flamediag collapse` that never returns. Ctrl-C reaches every process of the terminal's group;
a worker that dies of it quietly leaves the parent to report the interruption once.
"""
from __future__ import annotations

import signal


def default_signals() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
