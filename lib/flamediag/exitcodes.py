"""Exit codes, the same for every subcommand (documented once in README.md)."""
OK = 0
PARTIAL = 1
USAGE = 2
DATAERR = 65      # unusable input (EX_DATAERR)
BUSY = 75         # already running (EX_TEMPFAIL)
NOPERM = 77       # permission denied (EX_NOPERM)
SIGINT = 130
SIGTERM = 143
