# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the redundancy nswap2l chooses (issue 31): the default
reliability for 0, 1, 2, 3 and more servers, an explicit one kept (option
or config file), what create says; status marking Network RAM without
redundancy; the systemd unit as systemd-analyze reads it."""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nswap2l_cmd import cli, device, table  # noqa: E402


def servers(n):
    return ",".join(f"10.0.0.{i}:7000" for i in range(1, n + 1))


class Choice(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.key = os.path.join(self.tmp, "k.key")
        with open(self.key, "wb") as f:
            f.write(b"k" * 32)

    def create(self, *argv):
        """(exit status, table line, stderr) of create --print-table."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["create", "t", "--print-table", "--size", "1G", *argv])
        return code, out.getvalue().strip(), err.getvalue()

    def reliability(self, line):
        """reliability= of the table line, None if it has none."""
        return device.table_args(line).get("reliability")

    def config(self, text):
        path = os.path.join(self.tmp, "t.conf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_by_server_count(self):
        for n, want in ((1, None), (2, "mirror"), (3, "mirror"),
                        (table.PARITY_MIN_SERVERS - 1, "mirror"),
                        (table.PARITY_MIN_SERVERS, "parity"), (table.MAX_SERVERS, "parity")):
            with self.subTest(servers=n):
                code, line, err = self.create("--netram", servers(n), "--key-file", self.key)
                self.assertEqual(code, 0, err)
                self.assertEqual(self.reliability(line), want)
                if want:
                    self.assertIn(f"nswap2l: reliability: {want} (chosen for {n} servers; "
                                  "--reliability none to turn it off)", err)
                else:
                    # the table's own default, none, and said to be so
                    self.assertIn("nswap2l: reliability: none (one server: no redundancy "
                                  "possible", err)

    def test_parity_needs_full_groups_on_distinct_servers(self):
        self.assertEqual(table.PARITY_MIN_SERVERS, table.DEFAULT_PARITY_GROUP + 1)
        with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))),
                               "netram_args.c")) as f:
            kernel = re.search(r"#define NETRAM_DEFAULT_PARITY_GROUP\s+(\d+)", f.read())
        self.assertEqual(int(kernel.group(1)), table.DEFAULT_PARITY_GROUP)

    def test_no_servers_no_reliability(self):
        with mock.patch.object(table, "block_device", return_value=(1 << 30, 0x700)):
            code, line, err = self.create("--flash", "/dev/fake")
        self.assertEqual(code, 0, err)
        self.assertNotIn("reliability", line + err)
        code, line, err = self.create("--flash", "/dev/fake", "--reliability", "mirror")
        self.assertEqual(code, 2)
        self.assertIn("--reliability needs --netram", err)

    def test_explicit_kept(self):
        for n in (1, 2, 3, table.PARITY_MIN_SERVERS):
            for given in ("none", "mirror", "parity", "parity,group=3"):
                with self.subTest(servers=n, reliability=given):
                    code, line, err = self.create("--netram", servers(n), "--key-file", self.key,
                                                  "--reliability", given)
                    self.assertEqual(code, 0, err)
                    self.assertEqual(self.reliability(line), given)
                    self.assertNotIn("reliability", err)

    def test_bad_value_refused_not_replaced(self):
        code, line, err = self.create("--netram", servers(3), "--key-file", self.key,
                                      "--reliability", "raid5")
        self.assertEqual((code, line), (2, ""))
        self.assertIn("--reliability 'raid5': expected none, mirror or parity", err)
        self.assertNotIn("chosen", err)

    def test_config_file(self):
        base = f"[device]\nnetram = {servers(3)}\nkey-file = {self.key}\nsize = 1G\n"
        code, line, err = self.create("--config", self.config(base))
        self.assertEqual((code, self.reliability(line)), (0, "mirror"))
        self.assertIn("reliability: mirror (chosen for 3 servers", err)
        for given in ("none", "parity", "mirror"):
            with self.subTest(reliability=given):
                code, line, err = self.create("--config", self.config(base + f"reliability = {given}\n"))
                self.assertEqual((code, self.reliability(line)), (0, given))
                self.assertNotIn("chosen", err)
        # the option wins over the file, and the file's servers count
        code, line, err = self.create("--config", self.config(base + "reliability = parity\n"),
                                      "--reliability", "none")
        self.assertEqual((code, self.reliability(line)), (0, "none"))
        code, line, err = self.create("--config", self.config(base), "--netram", servers(7))
        self.assertEqual((code, self.reliability(line)), (0, "parity"))

    def test_help_says_the_default(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            cli.main(["create", "--help"])
        text = " ".join(out.getvalue().split())
        self.assertIn(f"none with one server, mirror with 2 to {table.PARITY_MIN_SERVERS - 1}, "
                      f"parity (groups of {table.DEFAULT_PARITY_GROUP}) with "
                      f"{table.PARITY_MIN_SERVERS} or more", text)
        self.assertIn("--reliability none turns it off", text)


def status_line(reliability, nr_servers=2):
    """A status line of a device with Network RAM on NR_SERVERS servers."""
    server = "{} up 10 90 0 100 200 0 0 0 0"
    return ("0 16 nswap2l fastest_free 1 netram 100 10 1 2 0 0 0 0 0 "
            f"{nr_servers} " + " ".join(server.format(f"10.0.0.{i}:7000")
                                        for i in range(1, nr_servers + 1))
            + f" {reliability} 0 0 0 0 rfc7539(chacha20,poly1305) 0 none 0 0 0 0.00 0.00")


class StatusMark(unittest.TestCase):
    def status(self, line, *argv):
        out = io.StringIO()
        with mock.patch.object(device, "table_of", return_value="0 16 nswap2l ..."), \
                mock.patch.object(device, "dmsetup", return_value=mock.Mock(stdout=line)), \
                mock.patch.object(device, "swap_entry", return_value=None), \
                contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(["status", "t", *argv]), 0)
        return out.getvalue()

    def test_text(self):
        text = self.status(status_line("none"))
        self.assertRegex(text, r"\n  reliability none \(no redundancy: a lost server loses its "
                               r"pages\), protect ")
        for reliability in ("mirror", "parity"):
            text = self.status(status_line(reliability))
            self.assertIn(f"\n  reliability {reliability}, protect ", text)
            self.assertNotIn("no redundancy", text)

    def test_json(self):
        import json
        record = json.loads(self.status(status_line("none", 3), "--json"))[0]
        self.assertIs(record["netram"]["no_redundancy"], True)
        record = json.loads(self.status(status_line("mirror", 3), "--json"))[0]
        self.assertIs(record["netram"]["no_redundancy"], False)

    def test_no_network_ram_no_mark(self):
        line = "0 16 nswap2l fastest_free 1 flash 2 1 3 4 0 0 0 0 0 none 0 0 0 0.00 0.00"
        self.assertNotIn("redundancy", self.status(line))
        self.assertNotIn("redundancy", self.status(line, "--json"))

    def test_created_says_it(self):
        said = cli.redundancy_said
        self.assertEqual(said(device.table_args("0 8 nswap2l 2 netram=a:1 key=x")),
                         ", reliability none (no redundancy)")
        self.assertEqual(said(device.table_args("0 8 nswap2l 3 netram=a:1,b:1 key=x "
                                                "reliability=mirror")), ", reliability mirror")
        self.assertEqual(said(device.table_args("0 8 nswap2l 1 flash=/dev/x")), "")


UNIT = os.path.join(os.path.dirname(HERE), "nswap2l@.service")
COMMAND = os.path.join(os.path.dirname(HERE), "nswap2l")


def unit_settings():
    """{(section, key): value} of nswap2l@.service."""
    settings, section = {}, None
    with open(UNIT) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif line and not line.startswith("#"):
                key, _, value = line.partition("=")
                settings[(section, key)] = value
    return settings


def seconds(text):
    units = {"s": 1, "min": 60, "h": 3600}
    return sum(int(n) * units[u or "s"] for n, u in re.findall(r"(\d+)\s*(min|h|s)?", text))


class SystemdUnit(unittest.TestCase):
    def test_retries_bounded_and_stop_covers_swapoff(self):
        s = unit_settings()
        self.assertEqual(s[("Service", "Type")], "oneshot")
        self.assertEqual(s[("Service", "RemainAfterExit")], "yes")
        self.assertEqual(s[("Service", "Restart")], "on-failure")
        # the start limit is the unit's, in [Unit] (systemd ignores it in [Service] since 230)
        burst = int(s[("Unit", "StartLimitBurst")])
        interval = seconds(s[("Unit", "StartLimitIntervalSec")])
        restart = seconds(s[("Service", "RestartSec")])
        self.assertGreaterEqual(restart, 5)
        # the burst is reached within the interval: the retries end
        self.assertLess(burst * restart, interval)
        self.assertGreaterEqual(burst * restart, 120, "retries cover a donor's reboot")
        self.assertGreaterEqual(seconds(s[("Service", "TimeoutStopSec")]), 10 * 60)

    def verify(self, text):
        """systemd-analyze verify of TEXT as nswap2l@.service, its command
        where make install puts it (here: the source tree's)."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "nswap2l@.service")
        with open(path, "w") as f:
            f.write(text.replace("/usr/local/sbin/nswap2l", COMMAND))
        return subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)

    @unittest.skipUnless(shutil.which("systemd-analyze"), "no systemd-analyze on this machine")
    @unittest.skipUnless(os.access("/sbin/modprobe", os.X_OK),
                         "no /sbin/modprobe (the unit's ExecStartPre) for systemd-analyze to find")
    def test_systemd_analyze_verify(self):
        with open(UNIT) as f:
            text = f.read()
        proc = self.verify(text)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        # and the check is the real one: systemd refuses Restart=always for a oneshot
        proc = self.verify(text.replace("Restart=on-failure", "Restart=always"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("isn't allowed for Type=oneshot", proc.stderr)


if __name__ == "__main__":
    unittest.main()
