# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the values nswap2l takes (table.py, config.py): sizes,
servers by name (resolved without a name service: getaddrinfo is replaced),
comments in config files.  Host test 28 runs the command itself."""
import contextlib
import io
import os
import socket
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from nswap2l_cmd import config, device, table  # noqa: E402
from nswap2l_cmd.device import EXIT_USAGE, Failure  # noqa: E402

GIB = 1 << 30


def fake_getaddrinfo(names):
    """getaddrinfo over the dict NAMES: name -> IPv4 address."""
    def getaddrinfo(host, port, family=0, type=0, *rest):
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], 0))]
    return getaddrinfo


class Sizes(unittest.TestCase):
    def test_decimal_and_suffixes(self):
        self.assertEqual(table.parse_size("1.5G"), 3 * GIB // 2)
        self.assertEqual(table.parse_size("1.5GiB"), 3 * GIB // 2)
        self.assertEqual(table.parse_size("0.5gb"), GIB // 2)
        self.assertEqual(table.parse_size(".25T"), 256 * GIB)
        self.assertEqual(table.parse_size("8192"), 8192)

    def test_rounded_up_to_pages(self):
        self.assertEqual(table.parse_size("1"), 4096)
        self.assertEqual(table.parse_size("4097"), 8192)
        self.assertEqual(table.parse_size("1.1G"), 288359 * 4096)   # 288358.4 pages

    def test_refused(self):
        for text in ("0", "0.0M", "-1G", "1.2.3G", "lots", "1X", "", "G", "1e3"):
            with self.subTest(text=text), self.assertRaises(Failure) as caught:
                table.parse_size(text)
            self.assertEqual(caught.exception.code, EXIT_USAGE)
            self.assertIn(f"--size '{text}'", str(caught.exception))


class Servers(unittest.TestCase):
    def resolve(self, text, names):
        err = io.StringIO()
        with mock.patch.object(socket, "getaddrinfo", fake_getaddrinfo(names)), \
                contextlib.redirect_stderr(err):
            return table.parse_servers(text), err.getvalue()

    def test_name_resolved_and_said(self):
        servers, said = self.resolve("donor1:7000,10.0.0.22:7000", {"donor1": "10.0.0.21"})
        self.assertEqual(servers, ["10.0.0.21:7000", "10.0.0.22:7000"])
        self.assertEqual(said, "nswap2l: donor1 is 10.0.0.21\n")

    def test_unresolvable_named(self):
        with self.assertRaises(Failure) as caught:
            self.resolve("donor9:7000", {})
        self.assertEqual(caught.exception.code, EXIT_USAGE)
        self.assertIn("--netram 'donor9:7000': cannot resolve donor9", str(caught.exception))

    def test_a_name_and_its_address_are_one_server(self):
        with self.assertRaises(Failure) as caught:
            self.resolve("donor1:7000,10.0.0.21:7000", {"donor1": "10.0.0.21"})
        self.assertIn("server 10.0.0.21:7000 given twice", str(caught.exception))

    def test_not_asked_of_the_name_service(self):
        # IPv6 (the kernel's netram= is IPv4 only) and malformed addresses
        for text in ("[::1]:7000", "::1:7000", "10.1:7000", "10.0.0.300:7000", "a_b:7000",
                     "donor1", "donor1:0", "donor1:65536"):
            with self.subTest(text=text), self.assertRaises(Failure) as caught:
                self.resolve(text, {"donor1": "10.0.0.21"})
            self.assertEqual(caught.exception.code, EXIT_USAGE)
            self.assertIn(f"'{text}'", str(caught.exception))


class ConfigComments(unittest.TestCase):
    def load(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return config.load(f.name)

    def test_inline_and_full_line(self):
        settings = self.load("# a device\n[device]  # its settings\n"
                             "netram = 10.0.0.21:7000   # the donor\n"
                             "  # indented\nsize = 4M\t# a tab\n"
                             "[swap]\nenable = yes # swap on it\n")
        self.assertEqual(settings, {"netram": "10.0.0.21:7000", "size": "4M", "swap": True})

    def test_hash_inside_a_value_kept(self):
        settings = self.load("[device]\nkey-file = /etc/nswap2l/a#b.key\n")
        self.assertEqual(settings, {"key_file": "/etc/nswap2l/a#b.key"})


class OnePlaceForTheKernelsValues(unittest.TestCase):
    def test_placement_and_protect_checked(self):
        with mock.patch.object(table, "read_key", return_value=b"k" * 32), \
                contextlib.redirect_stderr(io.StringIO()):     # one server: no redundancy, said
            for option, accepted in (("placement", table.PLACEMENTS), ("protect", table.PROTECTS)):
                with self.assertRaises(Failure) as caught:
                    table.build("t", {"netram": "10.0.0.1:1", "key_file": "k", option: "bogus",
                                      "size": "1G"})
                self.assertEqual(str(caught.exception),
                                 f"--{option} 'bogus': expected one of {', '.join(accepted)}")
                line, _ = table.build("t", {"netram": "10.0.0.1:1", "key_file": "k",
                                            option: accepted[0], "size": "1G"})
                self.assertIn(f" {option}={accepted[0]}", line)


class PoliciesFromTheKernelsHelp(unittest.TestCase):
    HELP = ("help                      this list\n"
            "placement <policy>        place new pages with <policy>: fastest_free other\n"
            "prefetch policy <policy>  which pages to prefetch: none rr random lrs mrs auto new\n"
            "prefetch when <when>      pays[:<% free scarce>], always, swapping, idle[:<bios in flight>]\n")

    def test_help_parsed(self):
        reply = mock.Mock(stdout=self.HELP)
        with mock.patch.object(device, "dmsetup", return_value=reply) as dmsetup:
            placements, policies = device.registered_policies("t")
        dmsetup.assert_called_once_with("message", "t", "0", "help", what="help")
        self.assertEqual(placements, ("fastest_free", "other"))
        self.assertEqual(policies, ("none", "rr", "random", "lrs", "mrs", "auto", "new"))


if __name__ == "__main__":
    unittest.main()
