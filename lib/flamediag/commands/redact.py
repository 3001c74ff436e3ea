"""flamediag redact — a copy of a bundle with host names, addresses and user names replaced."""
from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

from .. import errors
from ..bundle import open_bundle
from ..cli import make_parser, note_input, safe_for_terminal
from ..errors import UserError
from ..inputs import check_bundle_directory
from ..redact import KINDS, redact_bundle

DESCRIPTION = """\
Write a redacted copy of a capture bundle, safe to attach to a ticket: host names, IPv4/IPv6
addresses, MAC addresses, user names (from /home/<user>/ paths) and the capture's command-line
arguments are replaced by stable tokens (host-1, 10.255.0.1, fd00:ff::1, 02:00:00:00:00:01,
user-1, arg-1) in every text file, including perf script text, folded stacks, ss output, the
manifest and the bundle's own name. The same value gets the same token everywhere, so the
redacted bundle diagnoses the same. Loopback addresses, version strings, frame and comm names
are kept. Binary files (perf.data, archives) cannot be redacted and are dropped unless
--keep-binary. The token map is written beside the output as OUT.map.json (mode 0600): keep it,
never attach it. SHA256SUMS is regenerated; the manifest's "redaction" block lists what was
replaced, dropped, and what was already unverified in the source."""

EXAMPLES = """
    flamediag redact flamediag-web1-20261122T031500Z.tar.gz
                      # -> flamediag-host-1-20261122T031500Z-redacted.tar.gz (+ .map.json)
    flamediag redact bundle.tar.gz -o /tmp/ticket-1234.tar.gz
                      # choose the output; the map is /tmp/ticket-1234.tar.gz.map.json
    flamediag redact bundle.tar.gz --keep-binary
                      # also keep perf.data (NOT redacted: its header holds the host name)
"""


def build_parser():
    parser = make_parser("redact", DESCRIPTION, EXAMPLES)
    parser.add_argument("bundle", metavar="BUNDLE", help="a bundle (.tar.gz) or an extracted bundle directory")
    parser.add_argument("-o", "--output", metavar="OUT",
                        help="redacted bundle to write (default: <input>-redacted.tar.gz beside the input, "
                             "host name replaced in the file name too)")
    parser.add_argument("--keep-binary", action="store_true",
                        help="keep binary files such as perf.data, unredacted (they cannot be redacted)")
    return parser


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    note_input(args.bundle)
    source = Path(args.bundle)
    out = Path(args.output) if args.output else None
    _check_output(source, out)
    with open_bundle(source) as bundle:
        if "manifest.json" not in bundle.members:
            raise UserError(f"{source}: not a flamediag bundle (no manifest.json): give the .tar.gz written by "
                            "'flamediag capture' or its extracted directory")
        try:
            result = redact_bundle(bundle, source, out, keep_binary=args.keep_binary)
        except OSError as err:
            full = err.errno in (errno.ENOSPC, errno.EDQUOT)
            raise UserError(f"{err.filename or out}: cannot write ({err.strerror}): choose another -o",
                            errors.PARTIAL if full else errors.NOPERM)
    _report(source, result)
    return errors.PARTIAL if result.failed else errors.OK


def _check_output(source: Path, out) -> None:
    if not source.exists():
        raise UserError(f"{source}: no such bundle: give the .tar.gz written by 'flamediag capture'")
    if source.is_dir():
        check_bundle_directory(source, "give the .tar.gz written by 'flamediag capture' or its extracted directory")
    if out is None:
        return
    if out.exists() and out.resolve() == source.resolve():
        raise UserError(f"{out}: the output would overwrite the input: choose another -o", errors.USAGE)
    if out.is_dir():
        raise UserError(f"{out}: is a directory: give a file name such as {out}/ticket.tar.gz", errors.USAGE)
    if not out.parent.is_dir():
        raise UserError(f"{out.parent}: no such directory: create it or choose another -o", errors.USAGE)
    if not os.access(out.parent, os.W_OK):
        raise UserError(f"{out.parent}: not writable: choose another -o", errors.NOPERM)


def _report(source: Path, result) -> None:
    counts = result.redactor.summary()
    occurrences = sum(result.redactor.occurrences.values())
    names = {"hostnames": "host names", "domains": "domains", "ipv4": "IPv4", "ipv6": "IPv6", "mac": "MAC",
             "users": "user names", "args": "arguments"}
    replaced = ", ".join(f"{counts[kind]} {names[kind]}" for kind in KINDS)
    lines = [
        f"redacted: {result.output}",
        f"  replaced: {replaced} ({occurrences} occurrences)",
        f"  dropped: {', '.join(result.dropped) or 'nothing'}"
        + (" (binary; --keep-binary keeps them unredacted)" if result.dropped else ""),
    ]
    if result.kept_binary:
        lines.append(f"  WARNING: kept unredacted binaries: {', '.join(result.kept_binary)}")
    if result.failed:
        lines.append(f"  WARNING: left out (unreadable): {', '.join(result.failed)}")
    lines.append(f"  map: {result.map_path} (mode 0600: keep it private, do not attach it)")
    sys.stdout.write(safe_for_terminal("\n".join(lines)) + "\n")
