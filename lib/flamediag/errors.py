"""Errors a user can fix, and the exit codes every subcommand shares (README.md "Exit codes").

    raise UserError(f"{path}: not a bundle: give the file written by 'flamediag capture'")   # exit 65
    raise UserError("--min-share must be between 0 and 100", USAGE)                          # exit 2
"""
OK = 0
PARTIAL = 1
USAGE = 2
DATAERR = 65      # unusable input (EX_DATAERR)
SOFTWARE = 70     # a bug in flamediag (EX_SOFTWARE): one line, the traceback in a file
BUSY = 75         # already running (EX_TEMPFAIL)
NOPERM = 77       # permission denied (EX_NOPERM)
SIGINT = 130
SIGTERM = 143


class UserError(Exception):
    """An error the user can fix; printed as one line, never as a traceback."""

    def __init__(self, message: str, code: int = DATAERR):
        super().__init__(message)
        self.code = code
