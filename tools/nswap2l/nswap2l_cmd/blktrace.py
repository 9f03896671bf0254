# SPDX-License-Identifier: GPL-2.0
"""Parser of blkparse's default text output (blkparse -i NAME -D DIR, no -f).

An event line is "MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS" and then,
depending on the action, "SECTOR + NSECT [COMM]", "SECTOR + NSECT [ERROR]",
"SECTOR + NSECT <- (MAJ,MIN) SECTOR" (a remap), "SECTOR / NEW [COMM]" (a
split) or just "[COMM]".  Message lines ("m N text") and blkparse's own
chatter ("Input file ... added", the summary block after the events) are
passed over.  "# nswap2l-trace ..." comments, written by the tool that
records the trace, say which device plays which role.

A trace can have millions of lines: each is split once, no regex.
"""
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

COMMENT = "nswap2l-trace"
# Lines that open blkparse's summary block, besides "CPUn (NAME):"; what follows
# them is summary.
SUMMARY_OPENERS = ("Total (", "Throughput (", "Events (", "Skips:")


class Event(NamedTuple):
    dev: str                # "253,0"
    cpu: int
    seq: int
    time: float             # seconds since the start of the trace
    pid: int
    action: str             # Q, C, A, G, I, D, M, F, X, P, U, ...
    rwbs: str
    sector: Optional[int]   # None when the line has none (plug, pure flush)
    nsect: int              # 0 when the line has none


@dataclass
class Trace:
    events: list = field(default_factory=list)
    devices: dict = field(default_factory=dict)   # dev -> {"role", "name", ...}
    seconds: Optional[float] = None               # how long it was recorded
    skipped: int = 0                              # lines that made no sense

    def span(self):
        """(first, last) event time in seconds; (0.0, 0.0) without events."""
        if not self.events:
            return 0.0, 0.0
        times = [e.time for e in self.events]
        return min(times), max(times)


def kind(rwbs):
    """'read', 'write', 'discard' or None (no data: "N", "FN", a pure flush)."""
    if "D" in rwbs:
        return "discard"
    if "W" in rwbs:
        return "write"
    if "R" in rwbs:
        return "read"
    return None


# What _event() returns for a message line: not an event, not garbage either.
_MESSAGE = object()
# Event(...) without the Python-level __new__ of a NamedTuple: millions of them.
_new_tuple = tuple.__new__


def _event(fields, devs):
    """The Event of a split line, _MESSAGE, or None if it is not an event.
    @devs holds the device fields already found well-formed."""
    if len(fields) < 7:
        return None
    dev = fields[0]
    if dev not in devs:
        major, comma, minor = dev.partition(",")
        if not (comma and major.isdecimal() and minor.isdecimal()):
            return None
        devs.add(dev)
    try:
        cpu, seq, time, pid = int(fields[1]), int(fields[2]), float(fields[3]), int(fields[4])
    except ValueError:
        return None
    action = fields[5]
    if action == "m":
        return _MESSAGE
    sector, nsect = None, 0
    if len(fields) > 7 and fields[7][0] not in "[(":
        if not fields[7].isdecimal():
            return None
        sector = int(fields[7])
        if len(fields) > 9 and fields[8] == "+":
            if not fields[9].isdecimal():
                return None
            nsect = int(fields[9])
    # Interned: one string per device and per rwbs, not one per event.
    return _new_tuple(Event, (sys.intern(dev), cpu, seq, time, pid, action,
                              sys.intern(fields[6]), sector, nsect))


def _comment(trace, words):
    """# nswap2l-trace device MAJ,MIN role=R name=N ... | seconds S"""
    if len(words) < 4 or words[1] != COMMENT:
        return
    if words[2] == "device":
        attrs = dict(w.split("=", 1) for w in words[4:] if "=" in w)
        attrs.setdefault("role", "unknown")
        attrs.setdefault("name", words[3])
        trace.devices[words[3]] = attrs
    elif words[2] == "seconds":
        try:
            trace.seconds = float(words[3])
        except ValueError:
            pass


def _blkparse_chatter(line):
    """Lines blkparse prints besides the events, outside the summary block."""
    return line.startswith("Input file ") and line.endswith(" added")


def _opens_summary(line):
    return line.startswith(SUMMARY_OPENERS) or (line.startswith("CPU") and line.endswith("):"))


def parse(lines):
    """The Trace of blkparse output (any iterable of lines); never raises on
    a bad line, it counts it in Trace.skipped."""
    trace = Trace()
    events = trace.events
    devs = set()
    in_summary = False
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if fields[0].startswith("#"):
            _comment(trace, fields)
            continue
        event = _event(fields, devs)
        if event is _MESSAGE:
            continue
        if event is not None:
            events.append(event)
            in_summary = False      # outputs of several runs, one after the other
            continue
        line = line.strip()
        if _opens_summary(line):
            in_summary = True
        elif not in_summary and not _blkparse_chatter(line):
            trace.skipped += 1
    return trace


def parse_file(path):
    """parse() of a file; "-" is stdin."""
    if path == "-":
        return parse(sys.stdin)
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse(f)


def queued(trace, dev=None):
    """The Q events with data (of @dev only, if given): one per bio submitted
    to that device, which is what all the accounting counts."""
    for e in trace.events:
        if e.action == "Q" and e.nsect and (dev is None or e.dev == dev):
            yield e


def main_device(trace):
    """The dev the comments call "device", else the one with the most bios;
    None for a trace without bios."""
    for dev, info in trace.devices.items():
        if info.get("role") == "device":
            return dev
    bios = Counter(e.dev for e in queued(trace))
    return bios.most_common(1)[0][0] if bios else None
