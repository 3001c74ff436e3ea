"""`python -m flamediag SUBCOMMAND ...` — Python subcommands live in flamediag.commands.<name>.

Each command module defines `main(argv) -> int`; adding a subcommand is adding a module (bin/flamediag
finds it by the same file name).
"""
import importlib
import pkgutil
import sys

from . import cli, commands, errors

COMMANDS = tuple(sorted(m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        sys.stderr.write(f"flamediag: unknown subcommand {argv[0]!r}\n" if argv else "flamediag: no subcommand\n")
        sys.stderr.write("Try 'flamediag --help'.\n")
        return errors.USAGE
    sub, rest = argv[0], argv[1:]
    cli.install_sigterm_handler()
    # imported inside run(): a Python lacking a requirement gets the one-line error, not a traceback
    return cli.run(sub, lambda args: importlib.import_module(f"flamediag.commands.{sub}").main(args), rest)


if __name__ == "__main__":
    sys.exit(main())
