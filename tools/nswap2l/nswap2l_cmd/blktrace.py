# SPDX-License-Identifier: GPL-2.0
"""Parsers of blktrace's binary records (RecordReader) and of blkparse's
default text output (parse: blkparse -i NAME -D DIR, no -f), into a Trace.

The records are what blktrace writes (-o -, or its per-CPU files): a
struct blk_io_trace each (include/uapi/linux/blktrace_api.h), then pdu_len
bytes.  Their times are the kernel's, absolute, so the CPUs' records sort
into one order; blkparse reading a pipe prints them with times that start
again from zero now and then, which no analysis can put back in order.

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
import struct
import sys
from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress, islice
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

    def sort_by_time(self):
        """Puts the bios in the order of their times, equal times in the
        order of their lines: blkparse merges the CPUs' records by time when
        it reads files, but passes them on in batches when it reads a pipe."""
        times = self.times
        if all(map(float.__le__, times, islice(times, 1, None))):
            return
        order = sorted(range(len(times)), key=times.__getitem__)
        for name in ("times", "kinds", "sectors", "nsects", "devs"):
            column = getattr(self, name)
            setattr(self, name, array(column.typecode, map(column.__getitem__, order)))

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


def parse(lines, trace=None):
    """The Trace of blkparse output (any iterable of lines), filled into
    @trace if given (a reader of a live trace watches it grow); never
    raises on a bad line, it counts it in Trace.skipped."""
    if trace is None:
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
    trace.sort_by_time()
    return trace


# struct blk_io_trace: magic, sequence, time (ns), sector, bytes, action,
# pid, device, cpu, error, pdu_len, in the byte order of the machine that
# recorded it
RECORD = struct.Struct("=IIQQIIIIIHH")
RECORD_MAGIC, MAGIC_MASK = 0x65617400, 0xffffff00      # the low byte is the version
# the three bytes of the magic that are not the version, and where they sit
_MAGIC_KEY, _MAGIC_AT = ((struct.pack("=I", RECORD_MAGIC)[1:], 1) if sys.byteorder == "little"
                         else (struct.pack("=I", RECORD_MAGIC)[:3], 0))
TC_SHIFT = 16                                         # the category bits, above the action
TC_WRITE, TC_NOTIFY, TC_DISCARD = 1 << 1, 1 << 10, 1 << 13
TA_QUEUE = 1
MINOR_BITS = 20                                       # the kernel's dev_t


def _record_kind(category, nbytes):
    """The index in KINDS of a queued bio, as blkparse's RWBS would say it."""
    if category & TC_DISCARD:
        return 2
    if category & TC_WRITE:
        return 1
    return 0 if nbytes else None


class RecordReader:
    """Fills a Trace from blktrace's records, fed in pieces of any size as
    they come (a record may span two pieces).  close() when they end."""

    def __init__(self, trace=None):
        self.trace = trace if trace is not None else Trace()
        self.pending = b""
        self.index = {}         # device number -> its index in trace.devices_seen
        self.first, self.last = float("inf"), float("-inf")
        self.synced = False     # a record was read: later garbage is skipped, not fatal
        self.lost = False       # skipping to the next magic

    def comment(self, line):
        """A "# nswap2l-trace ..." line, from outside the records."""
        _comment(self.trace, line.split())

    def _device(self, number):
        dev_index = self.index.get(number)
        if dev_index is None:
            dev_index = self.index[number] = len(self.index)
            self.trace.devices_seen.append(f"{number >> MINOR_BITS},{number & ((1 << MINOR_BITS) - 1)}")
        return dev_index

    def feed(self, data):
        """ValueError if @data is not blktrace records."""
        buf = self.pending + data if self.pending else data
        trace, unpack, size, offset = self.trace, RECORD.unpack_from, RECORD.size, 0
        while len(buf) - offset >= size:
            magic, _, ns, sector, nbytes, action, _, number, _, _, pdu_len = unpack(buf, offset)
            if magic & MAGIC_MASK != RECORD_MAGIC:
                if not self.synced:
                    raise ValueError(f"not blktrace records (no magic at byte {offset} of a piece)")
                # blktrace -o - has handed over a record without its magic in
                # the middle of a stream (several devices and CPUs, thousands
                # of bios a second): one record is lost, not the trace
                if not self.lost:
                    trace.skipped += 1
                    self.lost = True
                found = buf.find(_MAGIC_KEY, offset + 1 + _MAGIC_AT)
                if found < 0:
                    offset = max(offset + 1, len(buf) - len(_MAGIC_KEY))
                    break
                offset = found - _MAGIC_AT
                continue
            if len(buf) - offset < size + pdu_len:
                break
            self.synced, self.lost = True, False
            offset += size + pdu_len
            category = action >> TC_SHIFT
            if category & TC_NOTIFY:        # process names, timestamps, messages
                continue
            time = ns / 1e9
            self.first, self.last = min(self.first, time), max(self.last, time)
            kind_index = _record_kind(category, nbytes) if action & 0xffff == TA_QUEUE else None
            dev_index = self._device(number)
            if kind_index is None or nbytes >> 9 == 0:
                trace.other_events += 1
                continue
            trace.times.append(time)
            trace.kinds.append(kind_index)
            trace.sectors.append(sector)
            trace.nsects.append(nbytes >> 9)
            trace.devs.append(dev_index)
        self.pending = buf[offset:]

    def close(self):
        """The Trace, in time order."""
        if self.pending:
            self.trace.skipped += 1         # a record cut short at the end
            self.pending = b""
        if self.first <= self.last:
            self.trace.span = (self.first, self.last)
        self.trace.sort_by_time()
        return self.trace


def is_records(head):
    """Do the first bytes of a file, @head, open a blktrace record?"""
    return len(head) >= 4 and struct.unpack_from("=I", head)[0] & MAGIC_MASK == RECORD_MAGIC


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
