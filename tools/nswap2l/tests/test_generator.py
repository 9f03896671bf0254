# SPDX-License-Identifier: GPL-2.0
"""Unit tests of nswap2l-generator (issue 34): for a sample config
directory, the units it makes (names, ordering, priority, discard, where
they are wanted), a bad file left out, and systemd-analyze verify of the
output with no warning (an ordering cycle included, which it reports)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.dirname(HERE)
sys.path.insert(0, TOOL)
_loader = SourceFileLoader("generator", os.path.join(TOOL, "nswap2l-generator"))
generator = module_from_spec(spec_from_loader("generator", _loader))
_loader.exec_module(generator)

CONFIGS = {
    # a local tier and numeric servers: early boot, part of swap.target
    "early": "[device]\nnetram = 10.0.0.1:7000\nkey-file = /k\nflash = /dev/vdb\n"
             "[swap]\nenable = yes\npriority = 5\n",
    # Network RAM only: after the network, with multi-user.target
    "net-only": "[device]\nnetram = 10.0.0.1:7000\nkey-file = /k\nsize = 1G\n[swap]\nenable = yes\n",
    # a host name needs the network to resolve
    "named": "[device]\nnetram = donor1:7000\nkey-file = /k\ndisk = /dev/vdc\n[swap]\nenable = yes\n",
    "not-swap": "[device]\nflash = /dev/vdd\n",
    "bad": "[device]\nsise = 1G\n[swap]\nenable = yes\n",
}


class Generator(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.conf = os.path.join(self.tmp, "conf")
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.conf)
        for name, text in CONFIGS.items():
            with open(os.path.join(self.conf, f"{name}.conf"), "w") as f:
                f.write(text)
        env = dict(os.environ, NSWAP2L_CONFIG_DIR=self.conf)
        self.proc = subprocess.run([os.path.join(TOOL, "nswap2l-generator"), self.out, self.out + ".early",
                                    self.out + ".late"], env=env, capture_output=True, text=True)

    def unit(self, name):
        with open(os.path.join(self.out, name)) as f:
            return f.read()

    def test_units(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("bad.conf: unknown key 'sise'", self.proc.stderr)
        made = sorted(os.listdir(self.out))
        self.assertEqual(made, ["dev-mapper-early.swap", "dev-mapper-named.swap", "dev-mapper-net\\x2donly.swap",
                                "multi-user.target.wants", "nswap2l@early.service", "nswap2l@named.service",
                                "nswap2l@net-only.service", "swap.target.wants"])
        self.assertEqual(os.listdir(os.path.join(self.out, "swap.target.wants")), ["dev-mapper-early.swap"])
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "multi-user.target.wants"))),
                         ["dev-mapper-named.swap", "dev-mapper-net\\x2donly.swap"])
        swap = self.unit("dev-mapper-early.swap")
        for line in ("What=/dev/mapper/early", "Priority=5", "Options=discard",
                     "Requires=nswap2l@early.service", "After=nswap2l@early.service"):
            self.assertIn(f"\n{line}\n", swap)
        self.assertNotIn("DefaultDependencies", swap)     # the defaults: before swap.target
        self.assertIn("\nPriority=100\n", self.unit("dev-mapper-named.swap"))
        service = self.unit("nswap2l@early.service")
        self.assertIn(f"--config {self.conf}/early.conf --no-swapon early\n", service)
        self.assertIn("\nBefore=swap.target shutdown.target\n", service)
        self.assertNotIn("network", service)
        self.assertIn("\nAfter=network-online.target\n", self.unit("nswap2l@named.service"))

    def test_escape(self):
        self.assertEqual(generator.unit_escape_path("/dev/mapper/a-b.c"), "dev-mapper-a\\x2db.c")
        if shutil.which("systemd-escape"):
            for path in ("/dev/mapper/net-only", "/dev/mapper/x_y:z", "/dev/mapper/.a"):
                want = subprocess.run(["systemd-escape", "--path", path], capture_output=True,
                                      text=True).stdout.strip()
                self.assertEqual(generator.unit_escape_path(path), want)

    def verify(self, units):
        """systemd-analyze verify of the output, the command where make
        install would put it (here: the tree's)"""
        for name in os.listdir(self.out):
            path = os.path.join(self.out, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path) as f:
                    text = f.read().replace(generator.NSWAP2L, os.path.join(TOOL, "nswap2l"))
                with open(path, "w") as f:
                    f.write(text)
        return subprocess.run(["systemd-analyze", "verify", "--man=no"] + [os.path.join(self.out, u) for u in units],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    @unittest.skipUnless(shutil.which("systemd-analyze"), "no systemd-analyze on this machine")
    @unittest.skipUnless(os.access("/sbin/modprobe", os.X_OK),
                         "no /sbin/modprobe (the units' ExecStartPre) for systemd-analyze to find")
    def test_systemd_analyze_verify(self):
        units = [u for u in os.listdir(self.out) if u.endswith((".swap", ".service"))]
        proc = self.verify(units)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        # the check is the real one: a network swap in swap.target is a cycle
        path = os.path.join(self.out, "nswap2l@named.service")
        with open(path, "a") as f:
            f.write("[Unit]\nBefore=swap.target\n")
        proc = self.verify(["nswap2l@named.service"])
        self.assertIn("ordering cycle", proc.stderr)


if __name__ == "__main__":
    unittest.main()
