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

The `tcp:tcp_retransmit_skb` tracepoint's own events, recorded without call chains (`perf record -e
tcp:tcp_retransmit_skb` then `perf script`, or trace_pipe / trace-cmd report), are the same record,
one line per retransmitted segment with its task and CPU:

    rsync 21407 [004] 1184522.031877: tcp:tcp_retransmit_skb: sport=873 dport=50122 saddr=10.20.0.11 ...
    <idle>-0     [007] ..s1 1184522.032204: tcp_retransmit_skb: skbaddr=00000000a1b2c3d4 sport=873 ...

Each retransmission is an event whose stack is the traced function (`R`: `tcp_retransmit_skb`,
`L`: `tcp_send_loss_probe`), weighted by one, or by the flow's count.

bcc's and bpftrace's `tcpdrop` print the same kind of row for every segment the kernel drops (a
kprobe on `tcp_drop`, or the `skb:kfree_skb` tracepoint), each followed by the kernel stack of the
drop, so a receive path (`net_rx_action`, `tcp_v4_rcv`) is under every one of them:

    TIME     PID    IP SADDR:SPORT          > DADDR:DPORT          STATE (FLAGS)
    20:49:06 0      4  10.32.119.56:443     > 10.66.65.252:22912   CLOSE (ACK)
    	tcp_drop+0x1
    	tcp_v4_do_rcv+0x135

A drop is an event, not time: the stacks are counted drops, read and drawn, never diagnosed as CPU
time nor as retransmissions (rule V2 of doc/accuracy.md).

    >>> block = read_tcpretrans([
    ...     "TIME     PID    IP SADDR:SPORT          > DADDR:DPORT          STATE (FLAGS)",
    ...     "20:49:06 0      4  10.32.119.56:443     > 10.66.65.252:22912   CLOSE (ACK)",
    ...     "\ttcp_drop+0x1", "\ttcp_v4_rcv+0x9c7", "\tnet_rx_action+0x140", ""], 0)
    >>> [tuple(f.name for f in s[0]) for s in block.stacks], bool(block.not_cpu)
    ([('net_rx_action', 'tcp_v4_rcv', 'tcp_drop')], True)

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
    >>> [(s[0][0].name, s[2], s[3]) for s in read_tcpretrans([
    ...     "rsync 21407 [004] 1184522.031877: tcp:tcp_retransmit_skb: sport=873 dport=50122",
    ...     "  <idle>-0     [007] ..s1 1184522.032204: tcp_retransmit_skb: skbaddr=00000000a1b2c3d4 sport=873"], 0).stacks]
    [('tcp_retransmit_skb', 'rsync', 4), ('tcp_retransmit_skb', '<idle>', 7)]

`perf trace -e tcp:tcp_retransmit_skb` prints the same event as `msecs comm/pid event(fields)` (rule AA2):

    >>> [(s[0][0].name, s[2], s[3]) for s in read_tcpretrans([
    ...     "     0.000 java/9120 tcp:tcp_retransmit_skb(skbaddr: 0xffff9f1c22f1a400, sport: 51544, dport: 6379)",
    ...     "   201.331 :0/0 tcp:tcp_retransmit_skb(skbaddr: 0xffff9f1c3b1e6e00, sport: 38812, dport: 443)",
    ...     "   203.004 sshd/881 tcp:tcp_retransmit_skb:skbaddr=0xffff9f1c58a0b200 sport=22 dport=50122"], 0).stacks]
    [('tcp_retransmit_skb', 'java', None), ('tcp_retransmit_skb', '<idle>', None), ('tcp_retransmit_skb', 'sshd', None)]

A listing of retransmissions says they happened, not how often against what was sent: every path
loses a segment now and then. When the paste also holds the host's TCP segment counters (`nstat`
rows `TcpOutSegs` / `TcpRetransSegs`, or `netstat -s` lines `N segments sent out` / `N segments
retransmitted`, net-tools before 2.10 spelling them `send out` / `retransmited`), they give the
retransmission rate (rule AD2): below one segment in a thousand (`ORDINARY_LOSS`, over at least
`MIN_SEGMENTS` sent) the listed retransmissions are the ordinary loss of the paths, not a storm, and
the listing is read and drawn but not diagnosed (`rare_retransmits`). Unless the timeouts say
otherwise (rule CQ2): when the counters also hold the retransmission timeouts (nstat
`TcpExtTCPTimeouts`, netstat -s `N other TCP timeouts` or `TCPTimeouts: N`) and at least half of the
retransmitted segments (`RTO_SHARE`, at least `MIN_TIMEOUTS` of them) were sent by the retransmission
timer, the loss is not the ordinary kind that fast retransmit and tail loss probes repair: whole
flights are lost and each flow stalls for an RTO, as through a path that drops every full-size
segment (an MTU black hole, a firewall), on the few flows that cross it. A host-wide rate dilutes
those flows among the healthy ones, so it does not excuse them.

    >>> retransmit_rate(["TcpOutSegs                      2873190            0.0",
    ...                  "TcpRetransSegs                  9                  0.0"])
    (9, 2873190)
    >>> retransmit_rate(["    18811203 segments sent out", "    412093 segments retransmitted"])
    (412093, 18811203)
    >>> retransmit_rate(["    184211 segments retransmitted"]) is None
    True
    >>> rto_timeouts(["TcpRetransSegs  9113  0.0", "TcpExtTCPTimeouts  5201  0.0"])
    5201
    >>> rto_timeouts(["    61289 other TCP timeouts"]), rto_timeouts(["    TCPTimeouts: 41877"])
    (61289, 41877)
"""
from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple, Union

from ..profile import Frame
from .common import ELISION, Block, Miss, finish, plural, rows_of

_ADDR = r"\S+:\d+"
# the direction column is `T>` in bcc's header and `--` in perf-tools' (the ftrace-based script, rule CO1)
HEADER = re.compile(r"^\s*TIME(?:\(s\))?\s+PID\s+(?:IP\s+)?LADDR:LPORT\s+(?:(?:T>|--)\s+)?RADDR:RPORT\s+STATE\b")
COUNT_HEADER = re.compile(r"^\s*LADDR:LPORT\s+RADDR:RPORT\s+RETRANSMITS\s*$")
ROW = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+\d+\s+(?:[46]\s+)?" + _ADDR
                 + r"\s+(?:(?P<kind>[RLU])>\s+)?" + _ADDR + r"\s+[A-Z][A-Z0-9_]*\s*$")
COUNT_ROW = re.compile(r"^\s*" + _ADDR + r"\s+<->\s+" + _ADDR + r"\s+(?P<count>\d+)\s*$")
TRACED = {"R": "tcp_retransmit_skb", "L": "tcp_send_loss_probe", None: "tcp_retransmit_skb"}
# a tracepoint event line: perf script's `comm pid [cpu] secs: tcp:tcp_retransmit_skb: ...`, trace_pipe's
# `comm-pid [cpu] flags secs: tcp_retransmit_skb: ...`
EVENT = re.compile(r"^\s*(?P<comm>\S.*?)[-\s]+(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d{1,4})\]\s.*?"
                   r"\d+\.\d+:\s+(?:tcp:)?tcp_retransmit_skb:\s")
# `perf trace -e tcp:tcp_retransmit_skb` (rule AA2): milliseconds since the start, an optional duration,
# `comm/pid` (`:0/0` for a task perf trace has no name for) and the event with its fields in parentheses
# (libtraceevent / BTF pretty-printing) or after a colon (older perf)
TRACE = re.compile(r"^\s*\d+\.\d+\s+(?:\(\s*[\d.]+\s*ms\):\s+)?(?P<comm>\S*?)/(?P<pid>\d+)\s+"
                   r"tcp:tcp_retransmit_skb(?:\(|:\s*|\s*$)")


# tcpdrop: bcc `TIME PID IP SADDR:SPORT > DADDR:DPORT STATE (FLAGS)`, bpftrace `TIME PID COMM SADDR:SPORT DADDR:DPORT STATE`
DROP_HEADER = re.compile(r"^\s*TIME\s+PID\s+(?:IP\s+|COMM\s+)?SADDR:SPORT\s+>?\s*DADDR:DPORT(?:\s+STATE\b.*)?\s*$")
DROP_ROW = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+\d+\s+(?:[46]\s+|\S+\s+)?" + _ADDR
                      + r"\s+>?\s*" + _ADDR + r"(?:\s+[A-Z][A-Z0-9_]*(?:\s*\([A-Z|]*\))?)?\s*$")
# a row's or the header's state column wrapped onto a line of its own (a mail wrapped at 72 columns)
DROP_TAIL = re.compile(r"^\s*(?=\S)(?:[A-Z][A-Z0-9_]*)?(?:\s*\([A-Z|]*\))?\s*$")
DROP_FRAME = re.compile(r"^\s+(?:(?:0x)?[0-9a-f]{8,16}\s+)?(?P<sym>[A-Za-z_.][\w.$]*)(?:\+(?:0x[0-9a-f]+|\d+))?"
                        r"(?:/0x[0-9a-f]+)?\s*$")
DROP_NOT_CPU = ("these are TCP segments the kernel dropped (tcpdrop traces tcp_drop / kfree_skb): one stack per "
                "drop, counted events, neither CPU time nor retransmissions")


# the host's TCP segment counters: nstat rows (absolute with -a, increments since the last call without)
# and netstat -s lines (net-tools before 2.10: `segments send out`, `segments retransmited`)
NSTAT = re.compile(r"^\s*(?P<name>TcpOutSegs|TcpRetransSegs)\s+(?P<value>\d+)(?:\s+\d+(?:[.,]\d+)?)?\s*$")
NETSTAT = re.compile(r"^\s*(?P<value>\d+)\s+segments\s+(?P<what>sen[dt]\s+out|retransmit+ed)\s*$")
# one segment in a thousand: below it the loss of any path costs a flow little (throughput goes with
# 1/sqrt(loss)) and the retransmissions a listing shows are that ordinary loss, not a storm
ORDINARY_LOSS = 0.001
MIN_SEGMENTS = 10000
# rule CQ2: retransmissions sent mostly by the retransmission timer are whole flights lost (a black
# hole on some paths), not the ordinary loss that fast retransmit and loss probes repair
TIMEOUTS = re.compile(r"^\s*(?:TcpExtTCPTimeouts\s+(?P<nstat>\d+)(?:\s+\d+(?:[.,]\d+)?)?"
                      r"|(?P<netstat>\d+)\s+other\s+TCP\s+timeouts|TCPTimeouts:\s*(?P<ext>\d+))\s*$")
RTO_SHARE = 0.5
MIN_TIMEOUTS = 100
RETRANSMIT_LISTINGS = ("bcc-tcpretrans", "tcp-retransmit-events")


def retransmit_rate(lines: Sequence[str]) -> Optional[Tuple[int, int]]:
    """(segments retransmitted, segments sent) of the last counters the paste holds, or None."""
    sent = retransmitted = None
    for line in lines:
        row = NSTAT.match(line)
        if row:
            if row["name"] == "TcpOutSegs":
                sent = int(row["value"])
            else:
                retransmitted = int(row["value"])
            continue
        row = NETSTAT.match(line)
        if row:
            if row["what"].startswith("sen"):
                sent = int(row["value"])
            else:
                retransmitted = int(row["value"])
    return (retransmitted, sent) if sent is not None and retransmitted is not None else None


def rto_timeouts(lines: Sequence[str]) -> Optional[int]:
    """The last retransmission-timeout count the paste holds (rule CQ2), or None."""
    found = None
    for line in lines:
        row = TIMEOUTS.match(line)
        if row:
            found = int(row["nstat"] or row["netstat"] or row["ext"])
    return found


def rare_retransmits(block: Block, *layouts: Sequence[str]) -> None:
    """Rule AD2: a retransmission listing beside counters saying fewer than one segment in a thousand
    was retransmitted is ordinary loss: read, drawn, not diagnosed (Data quality says the rate). The
    counters are taken from the first layout of the paste that holds them whole (the one the stacks
    chose, then the others: a mail-wrapped listing may have been joined with the rows above it).

    >>> block = Block("bcc-tcpretrans", 0, 1, stacks=[((Frame("tcp_retransmit_skb", "kernel"),), 1.0, "", None, None)])
    >>> rare_retransmits(block, ["TcpOutSegs  2873190  0.0", "TcpRetransSegs  9  0.0"]); block.not_cpu[:52]
    'the TCP counters pasted beside them say 9 of 2873190'
    >>> block.not_cpu = None; rare_retransmits(block, ["TcpOutSegs  18811203  0.0", "TcpRetransSegs  412093  0.0"])
    >>> block.not_cpu is None
    True

    Rule CQ2: most of them sent by the retransmission timer is not ordinary loss, whatever the rate.

    >>> rare_retransmits(block, ["TcpOutSegs  18226301  0.0", "TcpRetransSegs  9113  0.0",
    ...                          "TcpExtTCPTimeouts  5201  0.0"]); block.not_cpu is None
    True
    """
    rate = next(filter(None, map(retransmit_rate, layouts)), None) if block.fmt in RETRANSMIT_LISTINGS else None
    if rate is None or rate[1] < MIN_SEGMENTS or rate[0] >= ORDINARY_LOSS * rate[1]:
        return
    timeouts = next((t for t in map(rto_timeouts, layouts) if t is not None), None)
    if timeouts is not None and timeouts >= MIN_TIMEOUTS and timeouts >= RTO_SHARE * rate[0]:
        return
    block.not_cpu = (f"the TCP counters pasted beside them say {rate[0]} of {rate[1]} segments sent "
                     f"({100.0 * rate[0] / rate[1]:.4f} %) were retransmitted: fewer than one in a thousand, "
                     "the ordinary loss of the paths, not a retransmission storm")


def starts_tcpretrans(line: str) -> bool:
    return bool(HEADER.match(line) or COUNT_HEADER.match(line) or DROP_HEADER.match(line)
                or ("tcp_retransmit_skb:" in line and EVENT.match(line))
                or ("tcp:tcp_retransmit_skb" in line and TRACE.match(line)))


def read_tcpretrans(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The rows under a tcpretrans header, up to the first line that is neither a row nor blank."""
    if EVENT.match(lines[start]) or TRACE.match(lines[start]):
        return _read_events(lines, start)
    if DROP_HEADER.match(lines[start]):
        return _read_drops(lines, start)
    counted = bool(COUNT_HEADER.match(lines[start]))
    block = Block("bcc-tcpretrans", start, start, unit="events", header=True)
    rows, index = rows_of(lines, start + 1, (COUNT_ROW if counted else ROW).match)
    if rows and index < len(lines) and lines[index].lstrip().startswith("=>"):
        # perf-tools' `tcpretrans -s`: each row is followed by its kernel stack, ftrace's `=>` lines,
        # which the ftrace reader reads with the rows (rule CO1 leaves that form to it)
        return Miss(start + 1)
    for row in rows:
        weight = float(row["count"]) if counted else 1.0
        name = TRACED["R"] if counted else TRACED.get(row["kind"], TRACED["R"])
        if weight > 0:
            block.stacks.append(((Frame(name, "kernel"),), weight, "", None, None))
    events = int(sum(weight for _, weight, *_ in block.stacks))
    return finish(block, start, index,
                  f"read tcpretrans: {plural(events, 'retransmitted segment')} (the tool traces tcp_retransmit_skb: "
                  "each line is one retransmission by construction, no call stacks)")


def _read_events(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Tracepoint event lines without stacks (a stack under one is the perf script reader's)."""
    block = Block("tcp-retransmit-events", start, start, unit="events")
    rows, index = rows_of(lines, start, lambda line: EVENT.match(line) or TRACE.match(line))
    for row in rows:
        if row.re is EVENT:
            block.stacks.append(((Frame(TRACED["R"], "kernel"),), 1.0, row["comm"].strip(), int(row["cpu"]), None))
        else:
            comm = row["comm"].lstrip(":") if row["comm"] != ":0" else "<idle>"
            block.stacks.append(((Frame(TRACED["R"], "kernel"),), 1.0, comm, None, None))
    return finish(block, start, index,
                  f"read tcp:tcp_retransmit_skb events: {plural(len(block.stacks), 'retransmitted segment')} "
                  "(the tracepoint fires in tcp_retransmit_skb: each line is one retransmission, no call stacks)")


def _read_drops(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """tcpdrop rows, each with the stack printed under it (innermost first): counted drops."""
    block = Block("bcc-tcpdrop", start, start, unit="events", header=True, not_cpu=DROP_NOT_CPU)
    frames: list = []
    rows = 0
    index = start + 1

    def close() -> None:
        if rows > len(block.stacks):     # a row without a stack (no kstack printed) is still one drop
            block.stacks.append((tuple(Frame(name, "kernel") for name in reversed(frames or ["tcp_drop"])),
                                 1.0, "", None, None))
        frames.clear()

    while index < len(lines):
        line = lines[index]
        frame = DROP_FRAME.match(line) if line[:1].isspace() else None
        if DROP_ROW.match(line):
            close()
            rows += 1
        elif frame and rows:
            frames.append(frame["sym"])
        elif DROP_TAIL.match(line) and not frames:
            pass
        elif line.strip() and not ELISION.match(line):
            break
        index += 1
    close()
    return finish(block, start, index, f"read tcpdrop: {plural(len(block.stacks), 'dropped segment')} with their "
                  "kernel stacks (counted drops, not CPU time)")
