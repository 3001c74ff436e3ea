"""`ss -tiepm` (iproute2): per TCP socket state, addresses, process, rto, cwnd, retransmits, loss, algo.

Sample input::

    State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
    ESTAB 0      0          127.0.0.1:47321    127.0.0.1:40186 users:(("python3",pid=14195,fd=5))
    	 skmem:(r0,rb189476,t0,tb3939840,f0,w0,o0,bl0,d0) ts sack cubic wscale:10,10 rto:204 cwnd:10 retrans:0/3 lost:1

Result: {"sockets": [{"state", "local", "peer", "process", "congestion", "rto", "cwnd",
"retrans_now", "retrans_total", "lost", ...}], "notes": [...]}.

Examples:
    >>> r = parse('''State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
    ... ESTAB 0      0          127.0.0.1:47321    127.0.0.1:40186 users:(("python3",pid=14195,fd=5))
    ... \\t skmem:(r0,rb189476) ts sack cubic wscale:10,10 rto:204 cwnd:10 retrans:0/3 lost:1''')
    >>> s = r["sockets"][0]
    >>> s["congestion"], s["rto"], s["cwnd"], s["retrans_total"], s["lost"], s["process"]
    ('cubic', 204.0, 10, 3, 1, 'python3')
"""
from __future__ import annotations

import re
from typing import List, Optional

from ._builder import builds
from ._common import add_note, integer, lines, number

COLLECTORS = ("ss",)

ALGORITHMS = frozenset({
    "cubic", "reno", "bbr", "bbr2", "bbr3", "dctcp", "htcp", "vegas", "westwood", "bic", "highspeed",
    "hybla", "illinois", "lp", "scalable", "veno", "yeah", "cdg", "nv", "prague",
})
STATES = frozenset({
    "ESTAB", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "UNCONN", "CLOSE-WAIT",
    "LAST-ACK", "LISTEN", "CLOSING", "CLOSED", "UNKNOWN",
})


def parse(text: str) -> dict:
    notes: List[str] = []
    sockets: List[dict] = []
    for line in lines(text, notes):
        tokens = line.split()
        if not tokens or tokens[0] == "State" or tokens[0] == "Netid":
            continue
        if tokens[0] in ("tcp", "TCP") and len(tokens) > 1 and tokens[1] in STATES:
            tokens = tokens[1:]
        if tokens[0] in STATES:
            sockets.append(_socket_line(tokens))
        elif line[:1].isspace() and sockets:
            _details(tokens, sockets[-1])
        else:
            add_note(notes, "ss: unknown line(s) ignored")
    return {"sockets": sockets, "notes": notes}


def _socket_line(tokens: List[str]) -> dict:
    sock = {"state": tokens[0], "local": None, "peer": None, "process": None, "congestion": None,
            "rto": None, "cwnd": None, "retrans_now": 0, "retrans_total": 0, "lost": 0}
    if len(tokens) >= 5:
        sock["local"], sock["peer"] = tokens[3], tokens[4]
    users = re.search(r'users:\(\("([^"]*)"', " ".join(tokens))
    if users:
        sock["process"] = users.group(1)
    # ss prints the details on the same line when stdout is not a terminal and -i lines are short
    _details(tokens[5:], sock)
    return sock


def _details(tokens: List[str], sock: dict) -> None:
    for token in tokens:
        key, _, value = token.partition(":")
        if token in ALGORITHMS:
            sock["congestion"] = token
        elif key == "rto":
            sock["rto"] = number(value)
        elif key == "cwnd":
            sock["cwnd"] = integer(value)
        elif key == "retrans":
            _retrans(value, sock)
        elif key == "lost":
            sock["lost"] = integer(value) or 0


def _retrans(value: str, sock: dict) -> None:
    now, _, total = value.partition("/")
    sock["retrans_now"] = integer(now) or 0
    total_value: Optional[int] = integer(total) if total else None
    sock["retrans_total"] = total_value if total_value is not None else sock["retrans_now"]


@builds("ss.sockets", "ss.retrans_total", "ss.lost_total", "ss.sockets_retrans", "ss.congestion")
def ss_facts(src) -> None:
    result, path, bad = src.parsed("ss", parse, phase="end")
    if result is None:
        return
    sockets = result["sockets"]
    facts = src.facts
    facts.set("ss.sockets", len(sockets), path, bad)
    facts.set("ss.retrans_total", sum(s["retrans_total"] for s in sockets), path, bad)
    facts.set("ss.lost_total", sum(s["lost"] for s in sockets), path, bad)
    facts.set("ss.sockets_retrans", sum(1 for s in sockets if s["retrans_total"] > 0), path, bad)
    facts.set("ss.congestion", sorted({s["congestion"] for s in sockets if s["congestion"]}), path, bad)
