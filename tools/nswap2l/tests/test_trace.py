# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the trace parser (blktrace.py), its analysis (analysis.py)
and the pictures (plots.py), on the committed sample.blkparse.

What the sample holds, on the device 253,0 (dm-0), pages of 8 sectors:

  time (ms)  bio                  pages
   0.0       Q R 0 + 8            0 (never written: the swap header)
   1.0-1.7   Q W 64..120 + 8      8, 9, ..., 15 (8 sequential single-page writes)
  12.0       Q R 96 + 8           12
  20.5       Q FWS, no sector     (a flush: no bio with data)
  22.0       Q W 256 + 32         32..35 (the 4-page write)
  23.0       Q R 104 + 8          13
  24.0       Q R 64 + 8           8
  31.0       Q R 104 + 8          13 (again)
  32.0       Q R 256 + 16         32, 33
  33.0       Q R 272 + 8          34
  34.0       Q W 72 + 8           9 (rewritten)
  35.0       Q DS 112 + 16        14, 15 (discarded)
  36.0       Q R 80 + 8           10
  37.0       Q R 64 + 8           8 (again)
  38.0       Q R 64 + 8           8 (a third time)

plus their C lines; on the flash tier 254,0 (vda): Q W 2048 + 32, Q W 2080
+ 8, Q W 2088 + 8 (moves), Q R 2048 + 8 and Q R 2080 + 8 (remapped reads,
after their A lines), with G, I, D, M, C, P and U lines; on the disk tier
254,16 (vdb): Q R 16384 + 8 and Q W 16392 + 8 (after their A lines); one
message line; blkparse's "Input file" lines and its summary block.
"""
import importlib.util
import json
import os
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nswap2l_cmd import analysis, blktrace, plots  # noqa: E402

SAMPLE = os.path.join(HERE, "sample.blkparse")
DEVICE, FLASH, DISK = "253,0", "254,0", "254,16"


def sample():
    return blktrace.parse_file(SAMPLE)


def sample_lines():
    with open(SAMPLE) as f:
        return f.read().splitlines()


class TestParse(unittest.TestCase):
    def test_sample(self):
        trace = sample()
        # 44 event lines on 253,0, 23 on 254,0, 10 on 254,16: 28 bios, 49
        # others; the message line, the comments, "Input file" lines and the
        # summary are not events.
        self.assertEqual((trace.nr_bios, trace.other_events), (28, 49))
        self.assertEqual(trace.skipped, 0)
        self.assertEqual(trace.seconds, 1.0)
        self.assertEqual(trace.devices, {
            DEVICE: {"role": "device", "name": "dm-0"},
            FLASH: {"role": "flash", "name": "vda"},
            DISK: {"role": "disk", "name": "vdb"},
        })
        self.assertEqual(trace.devices_seen, [DEVICE, FLASH, DISK])
        self.assertEqual(trace.span, (0.0, 0.0383))     # the last C line's time: not a bio
        self.assertEqual(blktrace.main_device(trace), DEVICE)
        # A bio is kept in 23 bytes.
        columns = (trace.times, trace.kinds, trace.sectors, trace.nsects, trace.devs)
        self.assertEqual(sum(column.itemsize for column in columns), 23)

    def test_bios(self):
        # The Q lines with data only: not the flush, nor the A, G, I, M, D
        # or C lines of the same bios.
        trace = sample()
        times = (0.001, 0.0011, 0.0012, 0.0013, 0.0014, 0.0015, 0.0016, 0.0017)
        writes = [(time, "write", sector, 8) for time, sector in zip(times, range(64, 128, 8))]
        self.assertEqual(list(trace.bios(DEVICE)), [(0.0, "read", 0, 8)] + writes + [
            (0.012, "read", 96, 8), (0.022, "write", 256, 32), (0.023, "read", 104, 8),
            (0.024, "read", 64, 8), (0.031, "read", 104, 8), (0.032, "read", 256, 16),
            (0.033, "read", 272, 8), (0.034, "write", 72, 8), (0.035, "discard", 112, 16),
            (0.036, "read", 80, 8), (0.037, "read", 64, 8), (0.038, "read", 64, 8)])
        self.assertEqual(list(trace.bios(FLASH)), [
            (0.0101, "write", 2048, 32), (0.024011, "read", 2048, 8),
            (0.0301, "write", 2080, 8), (0.03011, "write", 2088, 8),
            (0.031011, "read", 2080, 8)])
        self.assertEqual(list(trace.bios(DISK)),
                         [(0.033011, "read", 16384, 8), (0.034011, "write", 16392, 8)])
        self.assertEqual(list(trace.bios("8,0")), [])
        self.assertEqual(list(trace.bios(None)), [])

    def test_kind(self):
        cases = {"R": "read", "RA": "read", "RM": "read", "RS": "read", "RSM": "read",
                 "W": "write", "WS": "write", "WFS": "write", "FWS": "write", "WM": "write",
                 "D": "discard", "DS": "discard", "DE": "discard",
                 "N": None, "FN": None, "F": None, "FS": None, "": None}
        for rwbs, expected in cases.items():
            self.assertEqual(blktrace.kind(rwbs), expected, rwbs)

    def test_malformed_lines(self):
        good = "253,0    1        1     0.000100000   153  Q   W 2048 + 8 [dd]"
        trace = blktrace.parse([
            "garbage",
            "253,0    1        2",                                           # too short
            "253,0    x        3     0.1   153  Q   W 2048 + 8 [dd]",          # cpu
            "253,0    1        4     0.1   153  Q   W abc + 8 [dd]",           # sector
            "253,0    1        5     0.1   153  Q   W 2048 + x [dd]",          # nsect
            "8:0      1        6     0.1   153  Q   W 2048 + 8 [dd]",          # device
            "253,0    1        7     zero  153  Q   W 2048 + 8 [dd]",          # time
            "253,0    1        8     0.1   153  Q   W 18446744073709551616 + 8 [dd]",  # 2^64
            "253,0    1        9     0.1   153  Q   W 2048 + 4294967296 [dd]",          # 2^32
            "\x00\xff binary",
            "",
            "   ",
            good,
            "253,0    1       10     0.2     0  C   W 2048 + 8 [0]",
            "# a comment of someone else",
            "# nswap2l-trace device",                                          # too short
            "# nswap2l-trace seconds soon",
        ])
        self.assertEqual(trace.skipped, 10)
        self.assertEqual(list(trace.bios("253,0")), [(0.0001, "write", 2048, 8)])
        self.assertEqual((trace.other_events, trace.devices_seen, trace.span),
                         (1, ["253,0"], (0.0001, 0.2)))
        self.assertEqual(trace.devices, {})
        self.assertIsNone(trace.seconds)

    def test_too_many_devices(self):
        # The device column holds 2^16 of them; the lines of one more are skipped.
        trace = blktrace.parse(f"{n},0 1 1 0.1 1 Q R 0 + 8 [x]"
                               for n in range(blktrace.DEVICE_LIMIT + 1))
        self.assertEqual((trace.nr_bios, len(trace.devices_seen), trace.skipped),
                         (blktrace.DEVICE_LIMIT, blktrace.DEVICE_LIMIT, 1))

    def test_summary_then_more_events(self):
        # Outputs of two runs one after the other: events after a summary
        # count (here the sample's first two event lines, again).
        lines = sample_lines()
        trace = blktrace.parse(lines + lines[7:9] + ["not an event"])
        self.assertEqual((trace.nr_bios, trace.other_events), (29, 50))
        self.assertEqual(trace.skipped, 1)

    def test_main_device_without_comments(self):
        lines = [line for line in sample_lines() if not line.startswith("#")]
        # 21 bios on 253,0, 5 on 254,0, 2 on 254,16.
        self.assertEqual(blktrace.main_device(blktrace.parse(lines)), DEVICE)

    def test_out_of_order_lines(self):
        # Equal times keep the order of their lines.
        trace = blktrace.parse(["8,0 1 1 0.2 1 Q W 8 + 8 [a]", "8,0 0 1 0.1 1 Q R 0 + 8 [a]",
                                "8,0 0 2 0.2 1 Q R 16 + 8 [a]"])
        self.assertEqual(list(trace.bios("8,0")), [(0.1, "read", 0, 8), (0.2, "write", 8, 8),
                                                   (0.2, "read", 16, 8)])


def record(ns, sector, nbytes, category, action=blktrace.TA_QUEUE, dev=(8 << 20) | 16, pdu=b""):
    """One struct blk_io_trace and its payload."""
    return blktrace.RECORD.pack(blktrace.RECORD_MAGIC | 7, 0, ns, sector, nbytes,
                                action | category << blktrace.TC_SHIFT, 1, dev, 0, 0,
                                len(pdu)) + pdu


class TestRecords(unittest.TestCase):
    QUEUE = 1 << 4

    def records(self):
        return b"".join([
            record(3_000_000_000, 64, 8192, self.QUEUE | blktrace.TC_WRITE),
            record(1_000_000_000, 0, 0, blktrace.TC_NOTIFY, action=0, pdu=b"kswapd0\0"),
            record(1_000_000_000, 8, 4096, self.QUEUE | 1),                 # a read
            record(2_000_000_000, 16, 4096, self.QUEUE | blktrace.TC_DISCARD | blktrace.TC_WRITE),
            record(2_500_000_000, 16, 4096, self.QUEUE | 1, action=6),       # not a Q: counted
            record(2_600_000_000, 0, 0, self.QUEUE | blktrace.TC_WRITE),   # a flush: no data
        ])

    def read(self, data, piece):
        reader = blktrace.RecordReader()
        reader.comment("# nswap2l-trace device 8,16 role=device name=sdb")
        for start in range(0, len(data), piece):
            reader.feed(data[start:start + piece])
        return reader.close()

    def test_in_pieces_of_any_size(self):
        data = self.records()
        for piece in (1, 7, 48, 1000):
            trace = self.read(data, piece)
            self.assertEqual(list(trace.bios("8,16")), [(1.0, "read", 8, 8),
                                                        (2.0, "discard", 16, 8),
                                                        (3.0, "write", 64, 16)], piece)
            self.assertEqual((trace.other_events, trace.span, trace.skipped), (2, (1.0, 3.0), 0))
            self.assertEqual(trace.devices["8,16"]["role"], "device")

    def test_cut_short_and_not_records(self):
        data = self.records()
        self.assertEqual(self.read(data[:-10], 4096).skipped, 1)
        self.assertTrue(blktrace.is_records(data))
        self.assertFalse(blktrace.is_records(b"253,0 1 1 0.1"))
        with self.assertRaises(ValueError):
            self.read(b"x" * 48, 48)

    def test_a_record_without_its_magic_mid_stream(self):
        # One record lost, counted; the ones after it read, in pieces of any size.
        data = self.records()
        broken = data[:48] + b"\0" * 20 + data[48 + 8 + 48:]      # the notify record, mangled
        for piece in (1, 5, 48, 1000):
            trace = self.read(broken, piece)
            self.assertEqual(list(trace.bios("8,16")), [(1.0, "read", 8, 8),
                                                        (2.0, "discard", 16, 8),
                                                        (3.0, "write", 64, 16)], piece)
            self.assertEqual(trace.skipped, 1, piece)


class TestEmpty(unittest.TestCase):
    def test_empty(self):
        trace = blktrace.parse([])
        self.assertEqual((trace.nr_bios, trace.other_events, trace.devices_seen, trace.span,
                          trace.devices, trace.seconds, trace.skipped),
                         (0, 0, [], (0.0, 0.0), {}, None, 0))
        self.assertIsNone(blktrace.main_device(trace))
        summary = analysis.summarise(trace)
        self.assertEqual([summary[k] for k in ("device", "duration", "devices", "pages_touched",
                                               "reread_ratio", "reread_interval")],
                         [None, 0.0, {}, 0, 0.0, None])
        self.assertEqual(summary["sequential"]["read"]["bios"], 0)
        replays = analysis.replay_all(trace)
        self.assertEqual([(r["wakeups"], r["prefetched"], r["reads"]) for r in replays],
                         [(0, 0, 0)] * 4)
        self.assertIn("no policy helped", analysis.format_summary(summary, replays))


class TestSummary(unittest.TestCase):
    def setUp(self):
        self.summary = analysis.summarise(sample())

    def test_devices(self):
        # Device reads: 0+8, 96+8, 104+8, 64+8, 104+8, 256+16, 272+8, 80+8, 64+8,
        # 64+8 = 10 bios, 11 pages; writes: 8 single pages, 256+32 (4 pages),
        # 72+8 = 10 bios, 13 pages; the discard 112+16 = 2 pages.  Flash:
        # writes 2048+32, 2080+8, 2088+8 = 3 bios, 6 pages; reads 2048+8,
        # 2080+8.  Disk: one read, one write, a page each.
        def row(role, name, counts):
            keys = ("reads", "read_pages", "writes", "write_pages", "discards", "discard_pages")
            return dict(role=role, name=name, **dict(zip(keys, counts)))
        self.assertEqual(self.summary["devices"], {
            DEVICE: row("device", "dm-0", (10, 11, 10, 13, 1, 2)),
            FLASH: row("flash", "vda", (2, 2, 3, 6, 0, 0)),
            DISK: row("disk", "vdb", (1, 1, 1, 1, 0, 0)),
        })
        self.assertEqual(self.summary["device"], DEVICE)
        self.assertAlmostEqual(self.summary["duration"], 0.0383)   # the last C line

    def test_pages(self):
        # Written: 8..15 and 32..35 = 12 pages; read: 0, 8, 10, 12, 13, 32,
        # 33, 34 = 8; both: those 12 and page 0 = 13.  Written by one bio and
        # read by two or more: 8 (3 reads) and 13 (2 reads); 9 was written
        # twice, 12, 32, 33 read once.
        s = self.summary
        self.assertEqual((s["pages_touched"], s["pages_written"], s["pages_read"]), (13, 12, 8))
        self.assertEqual(s["written_once_read_many"], 2)
        # 11 page reads; re-reads since the last write: 13 at 31 ms (8 ms
        # after 23), 8 at 37 ms (13 ms after 24) and at 38 ms (1 ms after 37).
        self.assertAlmostEqual(s["reread_ratio"], 3 / 11)
        self.assertAlmostEqual(s["reread_interval"]["mean"], 0.022 / 3)
        self.assertAlmostEqual(s["reread_interval"]["median"], 0.008)

    def test_sequential(self):
        # Writes: 64, 72, ..., 120 each start where the last ended (one run of
        # 8 bios, 8 pages), then 256+32 and 72+8 do not.  Reads: 96+8 then
        # 104+8 (2 pages), 256+16 then 272+8 (3 pages).
        self.assertEqual(self.summary["sequential"], {
            "read": {"bios": 10, "runs": 2, "run_bios": 4, "sequential_fraction": 0.4,
                     "longest_run_pages": 3, "mean_run_pages": 2.5},
            "write": {"bios": 10, "runs": 1, "run_bios": 8, "sequential_fraction": 0.8,
                      "longest_run_pages": 8, "mean_run_pages": 8.0},
        })

    def test_json(self):
        self.assertEqual(json.loads(json.dumps(self.summary)), self.summary)


class TestReplay(unittest.TestCase):
    """Wake-ups every 10 ms from 0: at 10, 20 and 30 ms (the last bio is at
    38 ms).  nr_pages = 36 (page 35 is the highest).  Page writes: 8 before
    the first wake-up, none before the second, 4 before the third; so
    written:50 asks for 4, 0 and 2 pages.  The 10 reads of written pages
    (all but page 0): 12 @12, 13 @23, 8 @24, 13 @31, 32 and 33 @32, 34 @33,
    10 @36, 8 @37, 8 @38."""

    def setUp(self):
        self.trace = sample()

    def replay(self, policy, **kw):
        kw.setdefault("amount", "written:50")
        return analysis.replay(self.trace, policy, interval_ms=10, **kw)

    def check(self, result, prefetched, flash_reads, never_read):
        keys = ("wakeups", "reads", "prefetched", "flash_reads", "prefetched_never_read")
        self.assertEqual([result[k] for k in keys], [3, 10, prefetched, flash_reads, never_read])
        self.assertAlmostEqual(result["served_fraction"], flash_reads / 10)

    def test_rr(self):
        # 10 ms: the cursor from 0 takes 8, 9, 10, 11, stops at 12.  20 ms:
        # nothing.  30 ms: from 12 it takes 12, 13.  From flash: 8 @24, 13
        # @31, 10 @36, 8 @37, 8 @38 = 5.  Never read there: 9 (rewritten at
        # 34 ms), 11, 12.
        result = self.replay("rr")
        self.check(result, 6, 5, 3)
        self.assertEqual([result[k] for k in ("policy", "when", "amount", "interval_ms")],
                         ["rr", "always", "written:50", 10])

    def test_mrs(self):
        # 10 ms: 8..15 were written (bit set): the hand takes 8..11, stops at
        # 12.  20 ms: nothing to take: the hand's lap clears the bits of
        # 12..15.  Then 32..35 are written and 13 read (bits set).  30 ms:
        # from 12 the hand passes 12 (clear) and takes 13, passes 14, 15 and
        # takes 32.  From flash: 8 @24, 13 @31, 32 @32, 10 @36, 8 @37, 8 @38
        # = 6.  Never read there: 9 (rewritten), 11.
        self.check(self.replay("mrs"), 6, 6, 2)

    def test_lrs(self):
        # 10 ms: every page in Network RAM has its bit set: the lap takes
        # none and clears them all.  20 ms: nothing to take, and lrs's hand
        # moves only to take (12's bit, set at 12 ms, stays).  30 ms: 8 was
        # read at 24 ms (set, cleared now), 9 and 10 are clear: taken.  From
        # flash: 10 @36.  Never read there: 9.
        self.check(self.replay("lrs"), 2, 1, 1)

    def test_none(self):
        self.check(self.replay("none"), 0, 0, 0)

    def test_free_not_modelled(self):
        with self.assertRaisesRegex(ValueError, "never short of room"):
            self.replay("lrs", amount="free:25")

    def test_held(self):
        # held:50, always: 8 held at 10 ms -> 8..11; 4 held (12..15) at 20 ms
        # -> 12, 13; 6 held (14, 15, 32..35) at 30 ms -> 14, 15, 32.  From
        # flash: 13 @23, 8 @24, 13 @31, 32 @32, 10, 8, 8 = 7.  Never read
        # there: 9, 11, 12, 14, 15 (discarded).
        self.check(self.replay("rr", amount="held:50"), 9, 7, 5)
        # swapping: no prefetch at 20 ms (nothing written since 10 ms); at 30
        # ms 8 held (12..15, 32..35) -> 12..15.  From flash: 8 @24, 13 @31,
        # 10, 8, 8 = 5.  Never read there: 9, 11, 12, 14, 15.
        self.check(self.replay("rr", amount="held:50", when="swapping"), 8, 5, 5)

    def test_cap(self):
        # At most one page per wake-up: 8 at 10 ms, 9 at 30 ms.
        capped = self.replay("rr", amount="written:100:1")
        self.assertEqual(capped["prefetched"], 2)
        self.assertEqual(self.replay("rr", amount="written:100", cap=1),
                         capped | {"amount": "written:100"})

    def test_random(self):
        result = self.replay("random")
        self.assertEqual(result, self.replay("random"))     # the same seed, the same picks
        self.assertLessEqual(result["prefetched"], 6)       # 4 + 0 + 2 asked
        self.assertLessEqual(result["flash_reads"], result["reads"])

    def test_replay_all(self):
        # The policies side by side in one pass: each as if alone.
        results = analysis.replay_all(self.trace, amount="written:50", interval_ms=10)
        self.assertEqual([r["policy"] for r in results], ["rr", "random", "lrs", "mrs"])
        self.assertEqual(results, [self.replay(policy) for policy in analysis.REPLAYED])

    def test_nr_pages(self):
        self.check(self.replay("rr", nr_pages=100), 6, 5, 3)     # the cursor never wraps
        with self.assertRaisesRegex(ValueError, "touches page 35"):
            self.replay("rr", nr_pages=35)

    def test_bad_settings(self):
        with self.assertRaisesRegex(ValueError, "policy 'lru'.*none rr random lrs mrs"):
            self.replay("lru")
        expected = r"written:P\[:CAP\] or held:P\[:CAP\]"
        for amount in ("written", "written:101", "often:10", "held:10:0", "held:x", "w:1:2:3"):
            with self.assertRaisesRegex(ValueError, expected, msg=amount):
                self.replay("rr", amount=amount)
        with self.assertRaisesRegex(ValueError, "when 'idle'.*always and swapping"):
            self.replay("rr", when="idle")
        with self.assertRaisesRegex(ValueError, "interval"):
            analysis.replay(self.trace, "rr", interval_ms=0)

    def test_format_summary(self):
        summary = analysis.summarise(self.trace)
        results = [self.replay(policy) for policy in ("rr", "lrs", "mrs")]
        text = analysis.format_summary(summary, results)
        self.assertTrue(text.endswith(
            "\nbest policy on this trace: mrs (60.0 % of reads from flash)"))
        for words in ("253,0   device  dm-0", "254,16  disk    vdb", "27.3 %", "80.0 %",
                      "\nmrs              6           6 of 10  60.0 %                      2\n"):
            self.assertIn(words, text)
        nothing = analysis.format_summary(summary, [self.replay("none")])
        self.assertTrue(nothing.endswith("no policy helped on this trace: none would have served "
                                         "a read from flash"))


def png_size(path):
    """Width and height from the PNG's IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", head[16:24])


class TestAccessPoints(unittest.TestCase):
    def test_subsampled(self):
        # 26 page accesses on the device (11 read, 13 written, 2 discarded);
        # at most 10 drawn: one in 3, the 1st, 4th, ..., 25th.
        points, step, total = plots._access_points(sample(), DEVICE, 10)
        self.assertEqual((step, total), (3, 26))
        self.assertEqual(sum(len(pages) for _, pages in points.values()), 9)


@unittest.skipUnless(importlib.util.find_spec("matplotlib"), "no matplotlib")
class TestPlots(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_access_map(self):
        path = os.path.join(self.dir.name, "map.png")
        plots.access_map(sample(), path)
        self.assertEqual(png_size(path), plots.ACCESS_MAP_SIZE)
        empty = os.path.join(self.dir.name, "empty.png")
        plots.access_map(blktrace.parse([]), empty)
        self.assertEqual(png_size(empty), plots.ACCESS_MAP_SIZE)

    def test_profile_histograms(self):
        hist = [100, 50, 30, 20] + [0] * 60 + [1]
        profile = {"samples": 201, "sample_ms": 1, "read_parallelism": 1.5, "read_hist": hist,
                   "write_parallelism": 1.0, "write_hist": [200, 1] + [0] * 63,
                   "flash_read_parallelism": 2.0, "flash_read_hist": hist, "flash_reads": 7,
                   "netram_write_hist": [0] * 65}
        path = os.path.join(self.dir.name, "profile.png")
        plots.profile_histograms(profile, path, title="test")
        self.assertEqual(png_size(path), plots.PROFILE_SIZE)
        empty = os.path.join(self.dir.name, "empty.png")
        plots.profile_histograms({}, empty)
        self.assertEqual(png_size(empty), plots.PROFILE_SIZE)


if __name__ == "__main__":
    unittest.main()
