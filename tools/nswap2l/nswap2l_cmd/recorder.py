# SPDX-License-Identifier: GPL-2.0
"""Mechanism: recording a device's I/O with blktrace, and reading a trace
recorded earlier.

blktrace's binary records come through a pipe straight into the reader
(blktrace.RecordReader): no copy of the trace is written anywhere, so a
trace takes the same room on any machine however fast its I/O.  The records
are kept only when asked for (keep_raw: one file, which --from and blkparse
-i - read again); then the free space of the output directory is watched
and the recording stops before it runs out.
Memory grows with the bios recorded (the parser keeps 23 bytes a bio), which
max_bios bounds."""

import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

from . import blktrace, device
from .device import Failure

RAW_FILE = "trace.bin"          # blktrace's records as it wrote them: blkparse -i - reads them
INFO_FILE = "trace.info"        # the "# nswap2l-trace" lines: which device plays which role
TEXT_FILE = "trace.blkparse"    # what earlier versions kept; --from still reads it
# Kept free in the output directory for summary.txt, summary.json and the
# picture (under 1 MiB together), and with keep_raw for what blktrace's
# relay buffers (4 x 512 KiB a CPU and device) still hold when it is stopped.
OUTPUT_ROOM = 4 << 20
RAW_MARGIN = 32 << 20
DEFAULT_MAX_BIOS = 4_000_000    # about 90 MiB of parser columns, 300 MiB at the analysis's peak
CHUNK = 1 << 20                 # the most read from blktrace at once
WAKE = 0.5                      # seconds between two looks when no records come
# blktrace now and then hangs at the end of its -w in a pipe: past its time
# by OVERRUN it is told to stop (SIGINT), and killed KILL_AFTER after that.
OVERRUN, KILL_AFTER = 5, 5


@dataclass
class Recording:
    trace: blktrace.Trace
    source: str                 # what was read: a file, or the device's name
    stopped: Optional[str] = None   # why it ended before its time, if it did
    out_of_space: bool = False      # it did because the raw records filled --out
    dropped: int = 0                # events blktrace lost: the reader fell behind


def free_bytes(path):
    return shutil.disk_usage(path).free


def check_room(out, keep_raw):
    """Refuses to start when @out cannot even take the summary (and, with
    @keep_raw, a first stretch of records)."""
    need = OUTPUT_ROOM + (RAW_MARGIN if keep_raw else 0)
    free = free_bytes(out)
    if free < need:
        raise Failure(f"{out}: only {free >> 20} MiB free; a trace needs {need >> 20} MiB there"
                      + (" with --keep-raw" if keep_raw else ""), device.EXIT_FAILED)


def _devices(name):
    """[(kernel name, role)] of the device and its block tiers."""
    args = device.table_args(device.table_of(name))
    devs = [(device.dm_minor_name(name), "device")]
    for tier in ("flash", "disk"):
        if tier in args:
            devs.append((device.block_name(args[tier]), tier))
    return devs


def _info_lines(name, devs, seconds):
    """The comments that tell the parser which device is which."""
    lines = []
    for kname, role in devs:
        with open(f"/sys/class/block/{kname}/dev") as f:
            majmin = f.read().strip().replace(":", ",")
        label = name if role == "device" else kname
        lines.append(f"# {blktrace.COMMENT} device {majmin} role={role} name={label}\n")
    lines.append(f"# {blktrace.COMMENT} seconds {seconds}\n")
    return lines


class _Watch:
    """Looks at what bounds a recording: the bios kept (at every piece of
    records read), the output directory's free space (with the raw records)
    and the time (every WAKE); ends blktrace when one of them says so."""

    def __init__(self, tracer, trace, out, keep_raw, max_bios, seconds):
        self.tracer, self.trace, self.out = tracer, trace, out
        self.keep_raw, self.max_bios, self.seconds = keep_raw, max_bios, seconds
        self.start = time.monotonic()
        self.stopped = None
        self.out_of_space = False
        self.told_at = None             # when it was told to stop
        self.looked_at = 0.0            # when look() last did its full round
        self.tty = sys.stderr.isatty()

    def stop(self, why):
        if self.stopped is None:
            self.stopped = why
            self.end()

    def end(self):
        """Tells blktrace to end (it flushes what it has), then makes it."""
        if self.tracer.poll() is not None:
            return
        if self.told_at is None:
            self.told_at = time.monotonic()
            self.tracer.send_signal(signal.SIGINT)
        elif time.monotonic() - self.told_at > KILL_AFTER:
            self.tracer.kill()

    def wait(self):
        """blktrace has ended, or is ended (after an error here it must not
        run on): told first, killed if it does not end within KILL_AFTER.
        Not through end(): told_at says whether blktrace was stopped early,
        and one that failed on its own may still be exiting."""
        if self.tracer.poll() is None:
            self.tracer.send_signal(signal.SIGINT)
        try:
            self.tracer.wait(KILL_AFTER)
        except subprocess.TimeoutExpired:
            self.tracer.kill()
            self.tracer.wait()

    def look(self):
        now = time.monotonic()
        elapsed = now - self.start
        if self.trace.nr_bios >= self.max_bios:
            self.stop(f"--max-bios {self.max_bios} reached after {elapsed:.1f} s")
        # free space and progress every WAKE, not per piece: a piece can be
        # a few records, and a serial console is slow to write to
        if now - self.looked_at < WAKE and self.stopped is None:
            return
        self.looked_at = now
        if self.keep_raw and free_bytes(self.out) < OUTPUT_ROOM + RAW_MARGIN:
            if self.stopped is None:
                self.out_of_space = True
            self.stop(f"{self.out} ran out of space after {elapsed:.1f} s")
        if elapsed > self.seconds + OVERRUN or self.told_at is not None:
            self.end()
        if self.tty:
            sys.stderr.write(f"\r  {elapsed:4.0f} of {self.seconds} s, {self.trace.nr_bios} bios")


def _read_records(stream, reader, raw=None, watch=None):
    """Feeds @stream's records to @reader as they come, copying them into
    @raw if given; the Trace."""
    while True:
        if watch and not select.select([stream], [], [], WAKE)[0]:
            watch.look()
            continue
        piece = stream.read1(CHUNK)
        if not piece:
            break
        if raw:
            raw.write(piece)
        reader.feed(piece)
        if watch:
            watch.look()
    if watch and watch.tty:
        sys.stderr.write("\n")
    return reader.close()


def record(name, seconds, out, progress, keep_raw=False, max_bios=DEFAULT_MAX_BIOS):
    """Traces device @name and its block tiers for @seconds; a Recording."""
    blktrace_path = device.require_tool("blktrace", "blktrace")
    devs = _devices(name)
    check_room(out, keep_raw)
    if not os.path.ismount("/sys/kernel/debug"):
        device.run(["mount", "-t", "debugfs", "debugfs", "/sys/kernel/debug"], "mount debugfs")
    reader = blktrace.RecordReader()
    info = _info_lines(name, devs, seconds)
    for line in info:
        reader.comment(line)
    if keep_raw:
        with open(os.path.join(out, INFO_FILE), "w") as f:
            f.writelines(info)
    # Queue events only (one per bio, what the analysis counts): a sixth of
    # a full trace, which matters when the traced device is the swap of a
    # machine short of memory.
    argv = [blktrace_path, "-a", "queue", "-w", str(seconds), "-o", "-"]
    for kname, _ in devs:
        argv += ["-d", f"/dev/{kname}"]
    raw_path = os.path.join(out, RAW_FILE)
    progress(f"tracing {name} ({', '.join(f'{k} as {r}' for k, r in devs)}) for {seconds} s"
             + (f", records into {raw_path}" if keep_raw else ""))
    said = tempfile.TemporaryFile()     # not a pipe: nothing it says can block it
    tracer = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=said)
    watch = _Watch(tracer, reader.trace, out, keep_raw, max_bios, seconds)
    try:
        with open(raw_path, "wb") if keep_raw else contextlib.nullcontext() as raw:
            trace = _read_records(tracer.stdout, reader, raw, watch)
    except ValueError as err:
        raise Failure(f"blktrace's output: {err}", device.EXIT_FAILED) from None
    finally:
        watch.wait()
    said.seek(0)
    said = said.read().decode(errors="replace").strip()
    if tracer.returncode != 0 and watch.stopped is None and watch.told_at is None:
        raise Failure(f"blktrace failed: {said}", device.EXIT_FAILED)
    # blktrace ends with a "Total: N events (dropped D), ..." line a device
    dropped = sum(int(n) for n in re.findall(r"^\s*Total:.*\(dropped (\d+)\)", said, re.M))
    return Recording(trace, name, watch.stopped, watch.out_of_space, dropped)


def load(path):
    """The Recording of a trace recorded earlier: blkparse text (a file, or
    "-" for stdin), blktrace records (RAW_FILE, with INFO_FILE beside it),
    or a directory holding either."""
    if os.path.isdir(path):
        found = [os.path.join(path, f) for f in (RAW_FILE, TEXT_FILE)
                 if os.path.exists(os.path.join(path, f))]
        if not found:
            raise Failure(f"{path}: no {RAW_FILE} or {TEXT_FILE} in it", device.EXIT_NO_DEVICE)
        path = found[0]
    if path == "-":
        return Recording(blktrace.parse(sys.stdin), path)
    with open(path, "rb") as f:
        if not blktrace.is_records(f.peek(4)):
            return Recording(blktrace.parse_file(path), path)
        reader = blktrace.RecordReader()
        info = os.path.join(os.path.dirname(path), INFO_FILE)
        if os.path.exists(info):
            with open(info) as lines:
                for line in lines:
                    reader.comment(line)
        try:
            return Recording(_read_records(f, reader), path)
        except ValueError as err:
            raise Failure(f"{path}: {err}", device.EXIT_NO_DEVICE) from None
