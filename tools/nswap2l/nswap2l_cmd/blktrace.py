# SPDX-License-Identifier: GPL-2.0
"""Parser of blkparse's default text output (blkparse -i NAME -D DIR, no -f).

An event line is "MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS" and then,
depending on the action, "SECTOR + NSECT [COMM]", "SECTOR + NSECT [ERROR]",
"SECTOR + NSECT <- (MAJ,MIN) SECTOR" (a remap), "SECTOR / NEW [COMM]" (a
split) or just "[COMM]".  Message lines ("m N text") and blkparse's own
chatter ("Input file ... added", the summary block after the events) are
passed over.  "# nswap2l-trace ..." comments, written by the tool that
records the trace, say which device plays which role.  Of the events, only
the bios (Q events with data) are kept; the others are counted.

A trace can have millions of lines: each is split once, no regex.
"""
import sys
from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress
from typing import Optional

COMMENT = "nswap2l-trace"
# Lines that open blkparse's summary block, besides "CPUn (NAME):"; what follows
# them is summary.
SUMMARY_OPENERS = ("Total (", "Throughput (", "Events (", "Skips:")
KINDS = ("read", "write", "discard")    # of a bio; its index in KINDS is what is kept
# What the columns hold: blktrace's sectors are u64, its lengths come from
# a u32 of bytes, and a trace has a handful of devices.
SECTOR_LIMIT, NSECT_LIMIT, DEVICE_LIMIT = 1 << 64, 1 << 32, 1 << 16


def _column(typecode):
    """A field of Trace: an empty array of @typecode."""
    return field(default_factory=lambda: array(typecode))


@dataclass
class Trace:
    """The bios of a trace, in columns: 23 bytes a bio, where a tuple of
    Python objects takes ten times that, and a trace taken in a machine
    short of memory has hundreds of thousands of bios to analyse there.
    The other event lines are only counted: nothing analyses them."""
    devices: dict = field(default_factory=dict)   # dev -> {"role", "name", ...}
    seconds: Optional[float] = None               # how long it was recorded
    skipped: int = 0                              # lines that made no sense
    other_events: int = 0                         # event lines that are not bios
    span: tuple = (0.0, 0.0)                      # first and last time of an event line
    devices_seen: list = field(default_factory=list)    # devs of the event lines, in order
    # One item per bio, in the order of the lines:
    times: array = _column("d")                   # seconds since the start of the trace
    kinds: array = _column("B")                   # index in KINDS
    sectors: array = _column("Q")
    nsects: array = _column("I")
    devs: array = _column("H")                    # index in devices_seen

    @property
    def nr_bios(self):
        return len(self.times)

    def bios(self, dev):
        """(time, kind, sector, nsect) of each bio of @dev, made as it is
        consumed: one per bio submitted to that device, which is what all
        the accounting counts."""
        if dev not in self.devices_seen:
            return iter(())
        columns = zip(self.times, map(KINDS.__getitem__, self.kinds), self.sectors, self.nsects)
        return compress(columns, map(self.devices_seen.index(dev).__eq__, self.devs))


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
_KIND_INDEX = {what: index for index, what in enumerate(KINDS)}


def _event(fields, index):
    """(dev, time, kind index, sector, nsect) of a split event line, the
    last three None unless it is a bio; _MESSAGE; or None if it is not an
    event line (or does not fit the columns).  @index holds the device
    fields already found well-formed."""
    if len(fields) < 7:
        return None
    dev = fields[0]
    if dev not in index:
        major, comma, minor = dev.partition(",")
        if not (comma and major.isdecimal() and minor.isdecimal()) or len(index) == DEVICE_LIMIT:
            return None
    try:
        time = float(fields[3])
        int(fields[1]), int(fields[2]), int(fields[4])     # cpu, sequence, pid: not kept
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
    kind_index = _KIND_INDEX.get(kind(fields[6])) if action == "Q" and nsect else None
    if kind_index is None:
        return dev, time, None, None, None
    if sector >= SECTOR_LIMIT or nsect >= NSECT_LIMIT:
        return None
    return dev, time, kind_index, sector, nsect


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
    index = {}                  # dev -> its index in trace.devices_seen
    first, last = float("inf"), float("-inf")
    in_summary = False
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if fields[0].startswith("#"):
            _comment(trace, fields)
            continue
        event = _event(fields, index)
        if event is _MESSAGE:
            continue
        if event is not None:
            dev, time, kind_index, sector, nsect = event
            dev_index = index.get(dev)
            if dev_index is None:
                dev_index = index[dev] = len(index)
                trace.devices_seen.append(dev)
            if time < first:
                first = time
            if time > last:
                last = time
            in_summary = False      # outputs of several runs, one after the other
            if kind_index is None:
                trace.other_events += 1
                continue
            trace.times.append(time)
            trace.kinds.append(kind_index)
            trace.sectors.append(sector)
            trace.nsects.append(nsect)
            trace.devs.append(dev_index)
            continue
        line = line.strip()
        if _opens_summary(line):
            in_summary = True
        elif not in_summary and not _blkparse_chatter(line):
            trace.skipped += 1
    if first <= last:
        trace.span = (first, last)
    return trace


def parse_file(path):
    """parse() of a file; "-" is stdin."""
    if path == "-":
        return parse(sys.stdin)
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse(f)


def main_device(trace):
    """The dev the comments call "device", else the one with the most bios;
    None for a trace without bios."""
    for dev, info in trace.devices.items():
        if info.get("role") == "device":
            return dev
    bios = Counter(trace.devs)
    return trace.devices_seen[bios.most_common(1)[0][0]] if bios else None
