"""bcc and bpftrace `tcpretrans`: one line per retransmitted TCP segment, no stacks.

The tools trace the kernel's retransmit function (a kprobe on `tcp_retransmit_skb`, or the
`tcp:tcp_retransmit_skb` tracepoint; with `-l`, tail loss probes through `tcp_send_loss_probe`), so
every line is one retransmission by construction, as perf-tools' `tcpretrans -s` (the ftrace reader)
and a perf script of that tracepoint are:

    TIME     PID    IP LADDR:LPORT          T> RADDR:RPORT          STATE
    01:55:05 0      4  10.153.223.157:22    R> 69.53.245.40:34619   ESTABLISHED
    01:55:05 0      4  10.153.223.157:22    L> 69.53.245.40:34619   ESTABLISHED

bpftrace's `tcpretrans.bt` prints no `IP` and `T>` columns; `tcpretrans -c` counts per flow:

    LADDR:LPORT              RADDR:RPORT             RETRANSMITS
    192.168.10.50:60366  <-> 172.217.21.194:443         700

Each retransmission is an event whose stack is the traced function (`R`: `tcp_retransmit_skb`,
`L`: `tcp_send_loss_probe`), weighted by one, or by the flow's count.

    >>> block = read_tcpretrans([
    ...     "TIME     PID    IP LADDR:LPORT          T> RADDR:RPORT          STATE",
    ...     "01:55:05 0      4  10.153.223.157:22    R> 69.53.245.40:34619   ESTABLISHED",
    ...     "01:55:06 0      4  10.153.223.157:22    L> 69.53.245.40:34619   ESTABLISHED"], 0)
    >>> [(s[0][0].name, s[1]) for s in block.stacks]
    [('tcp_retransmit_skb', 1.0), ('tcp_send_loss_probe', 1.0)]
    >>> [(s[0][0].name, s[1]) for s in read_tcpretrans([
    ...     "LADDR:LPORT              RADDR:RPORT             RETRANSMITS",
    ...     "192.168.10.50:60366  <-> 172.217.21.194:443         700"], 0).stacks]
    [('tcp_retransmit_skb', 700.0)]
"""
from __future__ import annotations

import re
from typing import Sequence, Union

from ..profile import Frame
from .common import Block, Miss, finish, plural

_ADDR = r"\S+:\d+"
HEADER = re.compile(r"^\s*TIME(?:\(s\))?\s+PID\s+(?:IP\s+)?LADDR:LPORT\s+(?:T>\s+)?RADDR:RPORT\s+STATE\b")
COUNT_HEADER = re.compile(r"^\s*LADDR:LPORT\s+RADDR:RPORT\s+RETRANSMITS\s*$")
ROW = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+\d+\s+(?:[46]\s+)?" + _ADDR
                 + r"\s+(?:(?P<kind>[RLU])>\s+)?" + _ADDR + r"\s+[A-Z][A-Z0-9_]*\s*$")
COUNT_ROW = re.compile(r"^\s*" + _ADDR + r"\s+<->\s+" + _ADDR + r"\s+(?P<count>\d+)\s*$")
TRACED = {"R": "tcp_retransmit_skb", "L": "tcp_send_loss_probe", None: "tcp_retransmit_skb"}


def starts_tcpretrans(line: str) -> bool:
    return bool(HEADER.match(line) or COUNT_HEADER.match(line))


def read_tcpretrans(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The rows under a tcpretrans header, up to the first line that is neither a row nor blank."""
    counted = bool(COUNT_HEADER.match(lines[start]))
    block = Block("bcc-tcpretrans", start, start, unit="events", header=True)
    index = start + 1
    while index < len(lines):
        line = lines[index]
        row = (COUNT_ROW if counted else ROW).match(line)
        if row:
            weight = float(row["count"]) if counted else 1.0
            name = TRACED["R"] if counted else TRACED.get(row["kind"], TRACED["R"])
            if weight > 0:
                block.stacks.append(((Frame(name, "kernel"),), weight, "", None, None))
        elif line.strip():
            break
        index += 1
    events = int(sum(weight for _, weight, *_ in block.stacks))
    return finish(block, start, index,
                  f"read tcpretrans: {plural(events, 'retransmitted segment')} (the tool traces tcp_retransmit_skb: "
                  "each line is one retransmission by construction, no call stacks)")
