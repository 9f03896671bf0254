# SPDX-License-Identifier: GPL-2.0
"""Unit tests of what nswap2l status prints (issue 34): the JSON record in
bytes and of one shape, one row per device with -o and --noheadings, and
Prometheus text that prometheus_client's own parser reads."""
import contextlib
import io
import json
import os
import re
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nswap2l_cmd import cli, device, report  # noqa: E402

PAGE = 4096
# two devices: "t" on Network RAM (2 servers, one failed) and flash, swap;
# "u" on flash only
LINES = {
    "t": ("0 2048 nswap2l fastest_free 2 netram 100 10 7 9 1 flash 200 20 3 4 0 5 0 2 6 "
          "2 10.0.0.1:7000 up 10 90 0 100 200 0 0 3 2 10.0.0.2:7000 failed 0 0 1 300 400 5 1 0 0 "
          "mirror 4 1 1 1500 rfc7539(chacha20,poly1305) 2 lrs 8 3 1 1.50 2.25"),
    "u": "0 16 nswap2l fastest_free 1 flash 2 1 3 4 0 0 0 0 0 none 0 0 0 0.00 0.00",
}
SWAPS = {"t": ["/dev/dm-0", "partition", "1024", "512", "100"], "u": None}


def status(*argv):
    """(exit status, stdout) of nswap2l status ARGV over the devices above"""
    out = io.StringIO()
    with mock.patch.object(device, "table_of", return_value="0 16 nswap2l ..."), \
            mock.patch.object(device, "dmsetup", side_effect=lambda _, name: mock.Mock(stdout=LINES[name])), \
            mock.patch.object(device, "swap_entry", side_effect=lambda name: SWAPS[name]), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(["status", *argv])
        except SystemExit as exit:
            code = exit.code
    return code, out.getvalue()


def keys(value):
    """every key of a JSON value, nested ones too"""
    if isinstance(value, dict):
        return set(value) | set().union(*(keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys(v) for v in value)) if value else set()
    return set()


class Json(unittest.TestCase):
    def test_bytes(self):
        code, out = status("t", "u", "--json")
        self.assertEqual(code, 0)
        t, u = json.loads(out)
        self.assertEqual(t["size_bytes"], 2048 * 512)
        self.assertEqual(t["swap"], {"size_bytes": 1024 * 1024, "used_bytes": 512 * 1024, "priority": 100})
        self.assertEqual(t["tiers"][0], {"tier": "netram", "capacity_bytes": 100 * PAGE, "used_bytes": 10 * PAGE,
                                         "read_bytes": 7 * PAGE, "written_bytes": 9 * PAGE,
                                         "discarded_bytes": 1 * PAGE})
        self.assertEqual(t["servers"][0]["held_bytes"], 10 * PAGE)
        self.assertEqual(t["servers"][0]["free_bytes"], 90 * PAGE)
        self.assertEqual(t["servers"][0]["evict_moved_bytes"], 2 * PAGE)
        self.assertEqual(t["servers"][1]["sent_bytes"], 300)
        self.assertEqual((t["zero_read_bytes"], t["moved_bytes"]), (5 * PAGE, 6 * PAGE))
        self.assertEqual(t["prefetch"]["prefetched_bytes"], 8 * PAGE)
        # no count of pages or sectors or KiB left under its old name
        for old in ("sectors", "capacity", "used", "reads", "writes", "discards", "held", "free",
                    "zero_reads", "moved_pages", "prefetched", "size_kib", "used_kib"):
            self.assertNotIn(old, keys(t) | keys(u))

    def test_one_shape(self):
        t, u = json.loads(status("t", "u", "--json")[1])
        self.assertEqual(set(t), set(u))
        self.assertEqual((u["servers"], u["netram"], u["swap"]), ([], None, None))


class Rows(unittest.TestCase):
    def test_columns(self):
        code, out = status("t", "u", "-o", "name,size,netram_used,flash_used,servers,swap_used")
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual(len(lines), 3)
        self.assertEqual(lines[0].split(), ["NAME", "SIZE", "NETRAM", "FLASH", "SERVERS", "SWAPUSED"])
        self.assertEqual(re.split(r"\s{2,}|\s(?=\S)", lines[1].strip())[0], "t")
        self.assertIn("1.0 MiB", lines[1])      # size
        self.assertIn("40.0 KiB", lines[1])     # netram used
        self.assertIn("80.0 KiB", lines[1])     # flash used
        self.assertIn("1/2", lines[1])
        self.assertIn("512.0 KiB", lines[1])    # swap used
        self.assertEqual(lines[2].split()[:2], ["u", "8.0"])
        self.assertIn(" - ", lines[2])          # no Network RAM, no servers
        # the columns line up: each heading ends where its right-aligned values end
        self.assertEqual(lines[0].index("SIZE") + 4, lines[1].index("1.0 MiB") + 7)

    def test_noheadings_list_plus(self):
        self.assertEqual(len(status("t", "u", "-l", "--noheadings")[1].splitlines()), 2)
        head = status("t", "-l")[1].splitlines()[0].split()
        self.assertEqual(head, [report.COLUMNS[c][0] for c in report.DEFAULT_COLUMNS])
        head = status("t", "-o", "+protect")[1].splitlines()[0].split()
        self.assertEqual(head[-1], "PROTECT")
        self.assertEqual(len(head), len(report.DEFAULT_COLUMNS) + 1)

    def test_bad_column(self):
        code, out = status("t", "-o", "name,bogus")
        self.assertEqual((code, out), (2, ""))
        code, out = status("t", "--json", "-l")
        self.assertEqual((code, out), (2, ""))


class Prometheus(unittest.TestCase):
    def families(self):
        from prometheus_client.parser import text_string_to_metric_families
        code, out = status("t", "u", "--prometheus")
        self.assertEqual(code, 0)
        return out, {f.name: f for f in text_string_to_metric_families(out)}

    def value(self, fams, family, sample_name=None, **labels):
        for s in fams[family].samples:
            if s.labels == labels and (sample_name is None or s.name == sample_name):
                return s.value
        self.fail(f"no {family} {labels}")

    def test_parses(self):
        out, fams = self.families()
        self.assertEqual(self.value(fams, "nswap2l_tier_used_bytes", device="t", tier="netram"), 10 * PAGE)
        self.assertEqual(self.value(fams, "nswap2l_tier_used_bytes", device="u", tier="flash"), PAGE)
        self.assertEqual(self.value(fams, "nswap2l_tier_read_bytes", device="t", tier="flash"), 3 * PAGE)
        self.assertEqual(fams["nswap2l_tier_read_bytes"].type, "counter")
        self.assertEqual(self.value(fams, "nswap2l_server_up", device="t", server="10.0.0.2:7000"), 0)
        self.assertEqual(self.value(fams, "nswap2l_server_state", device="t", server="10.0.0.2:7000",
                                    state="failed"), 1)
        self.assertEqual(self.value(fams, "nswap2l_netram_last_recovery_seconds", device="t"), 1.5)
        self.assertEqual(self.value(fams, "nswap2l_swap_used_bytes", device="t"), 512 * 1024)
        self.assertEqual(self.value(fams, "nswap2l_write_parallelism", device="t"), 2.25)
        info = [s for s in fams["nswap2l_device_info"].samples if s.labels.get("device") == "t"][0]
        self.assertEqual((info.labels["reliability"], info.labels["prefetch_policy"]), ("mirror", "lrs"))
        # one HELP and one TYPE a metric, the samples of both devices under them
        for name in report.METRICS:
            self.assertLessEqual(out.count(f"# TYPE {name} "), 1, name)
        # conventions: counters end in _total, amounts of memory in _bytes
        for name, (kind, _) in report.METRICS.items():
            self.assertEqual(kind == "counter", name.endswith("_total"), name)


if __name__ == "__main__":
    unittest.main()
