"""`pidstat -u -w [-t] 1` output (sysstat 9-12, 12/24-hour times, decimal commas).

With `-t` (TGID and TID columns) CPU rows are the processes' totals and switch rows are the
threads' own: a futex storm between threads of one process shows its real switch rate.

Sample input::

    07:08:10      UID       PID    %usr %system  %guest   %wait    %CPU   CPU  Command
    07:08:11        0     14120    1.00   11.00    0.00   19.00   12.00     1  stress-ng

    07:08:10      UID       PID   cswch/s nvcswch/s  Command
    07:08:11        0        15     19.00      0.00  rcu_preempt

Result: {"cpu": [row], "switches": [row], "intervals": int, "notes": [...]}; a row is
{"time", "pid", "command", <column>: float}. `Average:` rows are kept apart in
"average_cpu"/"average_switches".

Examples:
    >>> r = parse('''07:08:10      UID       PID   cswch/s nvcswch/s  Command
    ... 07:08:11        0        15     19.00      0.00  rcu_preempt
    ... 07:08:11        0        16      1,50      2.00  kworker/0:1 events''')
    >>> [(row["command"], row["cswch/s"]) for row in r["switches"]]
    [('rcu_preempt', 19.0), ('kworker/0:1 events', 1.5)]
    >>> parse('''14:02:11  UID  TGID  TID  %usr %system  %CPU  CPU  Command
    ... 99.60     2  kswapd0''')["notes"]
    ['pidstat: unreadable row(s) ignored']
"""
from __future__ import annotations

from collections import Counter

from typing import List, Optional

from ._builder import builds
from ._common import add_note, integer, lines, number

COLLECTORS = ("pidstat",)

AVERAGE_WORDS = ("average:", "moyenne:", "durchschn.:", "media:", "promedio:")


def parse(text: str) -> dict:
    notes: List[str] = []
    result = {"cpu": [], "switches": [], "average_cpu": [], "average_switches": [],
              "intervals": 0, "notes": notes}
    columns: Optional[List[str]] = None
    threads = False   # `pidstat -t` layout: TGID and TID columns
    leading = 1  # header tokens before PID: time, [AM|PM], [UID] (sysstat 9 has no UID column)
    times = set()
    for line in lines(text, notes):
        tokens = line.split()
        id_column = "PID" if "PID" in tokens else "TID" if "TID" in tokens else None
        if id_column and "Command" in tokens and tokens.index(id_column) < tokens.index("Command"):
            leading = tokens.index(id_column)
            columns = tokens[leading + 1:tokens.index("Command")]
            threads = id_column == "TID"
            continue
        if not tokens or columns is None or tokens[0] == "Linux":
            continue
        section = "switches" if "cswch/s" in columns else "cpu"
        if len(tokens) <= leading:   # a row cut short (a mail client wrapped it): no id columns
            add_note(notes, "pidstat: unreadable row(s) ignored")
            continue
        if threads:
            # `pidstat -t`: a process row (TID "-") carries the process's CPU total, thread rows
            # (TGID "-") each thread's own switches; keep one kind per section, never both.
            # A thread whose process row is not shown (process idle) prints both ids: it is the
            # only row for its CPU and a thread row for its switches.
            is_thread = tokens[leading] != "-"
            alone = is_thread and tokens[leading - 1] != "-"
            if not (is_thread if section == "switches" else (not is_thread or alone)):
                continue
            # keep one id column: time [UID] ID values... Command, as without -t
            tokens = tokens[:leading - 1] + tokens[leading:] if is_thread else tokens[:leading] + tokens[leading + 1:]
        row = _row(tokens, columns, leading - 1 if threads else leading)
        if row is None:
            add_note(notes, "pidstat: unreadable row(s) ignored")
            continue
        if threads:
            row["command"] = row["command"].removeprefix("|__")
        if row["time"].lower() in AVERAGE_WORDS:
            result["average_" + section].append(row)
        else:
            result[section].append(row)
            times.add((section, row["time"]))
    if columns is None and (text or "").strip():
        add_note(notes, "pidstat: no header with PID and Command found (unknown format)")
    result["intervals"] = max(sum(1 for s, _ in times if s == "switches"),
                              sum(1 for s, _ in times if s == "cpu"))
    return result


def _row(tokens: List[str], columns: List[str], leading: int) -> Optional[dict]:
    # time [AM|PM] [UID] PID cols... Command (the command may contain spaces); the header above
    # has the same leading layout, so PID sits at the same index
    if len(tokens) < leading + 1 + len(columns) + 1:
        return None
    pid = integer(tokens[leading])
    values = [None if t == "-" else number(t) for t in tokens[leading + 1:leading + 1 + len(columns)]]
    if pid is None or any(v is None and c != "CPU" for c, v in zip(columns, values)):
        return None
    has_uid = leading >= 2 and integer(tokens[leading - 1]) is not None and tokens[leading - 1] not in ("AM", "PM")
    when = tokens[:leading - 1] if has_uid else tokens[:leading]
    row = {"time": " ".join(when), "pid": pid, "command": " ".join(tokens[leading + 1 + len(columns):])}
    row.update(zip(columns, values))
    return row


@builds("pidstat.cswch_per_s", "pidstat.nvcswch_per_s", "pidstat.top_cswch_comm")
def pidstat_facts(src) -> None:
    result, path, bad = src.parsed("pidstat", parse)
    if result is None:
        return
    rows = result["switches"] or result["average_switches"]
    intervals = result["intervals"] or 1
    if not rows:
        return
    src.facts.set("pidstat.cswch_per_s", round(sum(r.get("cswch/s", 0) for r in rows) / intervals, 2), path, bad)
    src.facts.set("pidstat.nvcswch_per_s", round(sum(r.get("nvcswch/s", 0) for r in rows) / intervals, 2), path, bad)
    by_comm: Counter = Counter()
    for row in rows:
        by_comm[row["command"]] += row.get("cswch/s", 0) + row.get("nvcswch/s", 0)
    src.facts.set("pidstat.top_cswch_comm", by_comm.most_common(1)[0][0], path, bad)
