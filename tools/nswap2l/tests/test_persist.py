# SPDX-License-Identifier: GPL-2.0
"""Unit tests of live changes written back (issue 34): the config file
updated line by line (comments kept), and servers add/remove, prefetch and
resize saving to the file the device was created from, or saying that
nothing was saved; resize's reload."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nswap2l_cmd import cli, config, device  # noqa: E402

CONF = """\
# web1's swap
[device]
netram = 10.0.0.1:7000,10.0.0.2:7000
key-file = /etc/nswap2l/web1.key
client = web1              # the servers know this name
flash = /dev/vdb

[prefetch]
# when = always
policy = lrs

[swap]
enable = yes
"""


def config_file(test):
    """CONF in a directory of its own for TEST (removed after it): its path"""
    test.tmp = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, test.tmp)
    path = os.path.join(test.tmp, "t.conf")
    with open(path, "w") as f:
        f.write(CONF)
    os.chmod(path, 0o640)
    return path


class Update(unittest.TestCase):
    def setUp(self):
        self.path = config_file(self)

    def text(self):
        with open(self.path) as f:
            return f.read()

    def test_replace_keeps_the_rest(self):
        config.update(self.path, [("device", "client", "web2")])
        self.assertEqual(self.text(), CONF.replace("client = web1              # the servers",
                                                   "client = web2   # the servers"))
        self.assertEqual(os.stat(self.path).st_mode & 0o777, 0o640)

    def test_add_key_and_section(self):
        config.update(self.path, [("prefetch", "when", "idle"), ("device", "size", "16G")])
        self.assertEqual(config.load(self.path)["when"], "idle")
        config.update(self.path, [("nosuch", "x", "1")])
        text = self.text()
        self.assertIn("# when = always\npolicy = lrs\nwhen = idle\n\n[swap]", text)
        self.assertIn("flash = /dev/vdb\nsize = 16G\n\n[prefetch]", text)
        self.assertTrue(text.endswith("enable = yes\n\n[nosuch]\nx = 1\n"))

    def test_remove_key(self):
        config.update(self.path, [("prefetch", "policy", None)])
        self.assertNotIn("policy", self.text())
        self.assertIn("# when = always", self.text())


class Saved(unittest.TestCase):
    """The commands, with the device and dmsetup mocked."""

    def setUp(self):
        self.path = config_file(self)
        run = mock.patch.object(config, "RUN_DIR", os.path.join(self.tmp, "run"))
        run.start()
        self.addCleanup(run.stop)
        self.table = "0 16 nswap2l 1 flash=7:0"
        for name, value in (("require_root", None), ("message", None), ("sysfs_write", None),
                            ("swap_entry", None)):
            p = mock.patch.object(device, name, return_value=value)
            p.start()
            self.addCleanup(p.stop)
        for name, func in (("table_of", lambda _: self.table),
                           ("sysfs_read", lambda _, rel: "0\n" if rel.endswith("interval_ms") else "x\n")):
            p = mock.patch.object(device, name, side_effect=func)
            p.start()
            self.addCleanup(p.stop)
        self.reload = mock.patch.object(device, "reload").start()
        self.addCleanup(mock.patch.stopall)

    def run_cli(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(argv))
            except SystemExit as exit:
                code = exit.code
        return code, out.getvalue(), err.getvalue()

    def test_not_from_a_config(self):
        code, _, err = self.run_cli("servers", "t", "add", "10.0.0.3:7000")
        self.assertEqual(code, 0)
        self.assertIn("not saved: t was not created from a config file", err)
        self.assertEqual(config.load(self.path)["netram"], "10.0.0.1:7000,10.0.0.2:7000")

    def test_servers(self):
        config.remember("t", self.path)
        code, _, err = self.run_cli("servers", "t", "add", "10.0.0.3:7000")
        self.assertEqual(code, 0, err)
        self.assertIn(f"saved in {self.path}", err)
        self.assertEqual(config.load(self.path)["netram"], "10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000")
        code, _, err = self.run_cli("servers", "t", "remove", "10.0.0.1:7000")
        self.assertEqual(code, 0, err)
        self.assertEqual(config.load(self.path)["netram"], "10.0.0.2:7000,10.0.0.3:7000")

    def test_prefetch(self):
        config.remember("t", self.path)
        with mock.patch.object(config.os, "replace", wraps=os.replace) as replace:
            code, _, err = self.run_cli("prefetch", "t", "mrs", "--interval", "200", "--when", "idle")
        self.assertEqual(code, 0, err)
        self.assertEqual(replace.call_count, 1, "the file is replaced once for all the changes")
        saved = config.load(self.path)
        self.assertEqual((saved["prefetch"], saved["interval"], saved["when"]), ("mrs", "200", "idle"))

    def test_resize(self):
        config.remember("t", self.path)
        code, out, err = self.run_cli("resize", "t", "16K")
        self.assertEqual(code, 0, err)
        self.reload.assert_called_once_with("t", "0 32 nswap2l 1 flash=7:0")
        self.assertIn("8.0 KiB -> 16.0 KiB", out)
        self.assertEqual(config.load(self.path)["size"], "16K")

    def test_resize_refused(self):
        config.remember("t", self.path)
        code, out, err = self.run_cli("resize", "t", "4K")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("does not shrink", err)
        code, out, err = self.run_cli("resize", "t", "lots")
        self.assertEqual((code, out), (2, ""))
        self.reload.assert_not_called()
        self.assertNotIn("size", config.load(self.path))


if __name__ == "__main__":
    unittest.main()
