# SPDX-License-Identifier: GPL-2.0
"""Policy: from the user's settings (options or a config file) to a checked
table line.  Everything here is checked before anything is loaded, so a bad
value changes nothing on the system."""

import decimal
import ipaddress
import math
import os
import re
import socket
import stat
import sys

from . import device
from .device import Failure, EXIT_USAGE, EXIT_NO_DEVICE

SECTOR = 512
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
# The policies are the kernel's: its "dmsetup message DEV 0 help" lists the
# ones registered (policy/registry.c), and nswap2l reads them from there when
# it talks to a device (device.registered_policies()).  These two lists are
# the FALLBACK, the names policy/ registers today, for when there is no device
# to ask (create, --print-table: issue 28 wants a bad value refused before
# anything is loaded) and for --help.  A new policy file adds its name here.
PREFETCH_POLICIES = ("none", "rr", "random", "lrs", "mrs", "auto")   # policy/prefetch_*.c
PLACEMENTS = ("fastest_free",)      # policy/*.c: each nswap2l_placement_register()
# protect=: none, or a synchronous AEAD with a 12-byte nonce, a 16-byte tag and
# a 256-bit key (netram_protect.c).  The crypto API would take other names
# too; these are the ones known to pass all three checks.
PROTECTS = ("none", "rfc7539(chacha20,poly1305)", "gcm(aes)")
DEFAULT_PROTECT = "rfc7539(chacha20,poly1305)"     # nswap2l.h: NSWAP2L_DEFAULT_PROTECT
DEFAULT_PLACEMENT = "fastest_free"                 # NSWAP2L_DEFAULT_PLACEMENT
DEFAULT_CLIENT = "default"                         # NSWAP2L_DEFAULT_CLIENT_NAME
DEFAULT_TIMEOUT = 30                               # NSWAP2L_DEFAULT_TIMEOUT_SECS
RELIABILITY = re.compile(r"^(none|mirror|parity(,group=[2-7])?)$")
# The default reliability of nswap2l create (the table's own is none): a
# server's death must not cost pages once there is a second server to hold
# a copy.  Parity from the servers that full groups need on distinct
# servers: DEFAULT_PARITY_GROUP members and their parity (README, "The
# nswap2l command", says why not sooner).
DEFAULT_PARITY_GROUP = 5                           # netram_args.c: NETRAM_DEFAULT_PARITY_GROUP
PARITY_MIN_SERVERS = DEFAULT_PARITY_GROUP + 1
CLIENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,30}$")
WHEN = re.compile(r"^(always|swapping|(pays|idle)(:[0-9]+)?)$")
AMOUNT = re.compile(r"^(written|held|free):[0-9]+(:[0-9]+)?$")
MAX_SERVERS = 16
MIN_KEY, MAX_KEY = 16, 256          # NSWAP2L_PROTO_{MIN,MAX}_KEY_SIZE
MIN_INTERVAL, MAX_INTERVAL = 10, 60000   # prefetch.c
MAX_PREFETCH_CAP = 1 << 20               # prefetch.c: PREFETCH_MAX_CAP


def bad(message):
    return Failure(message, EXIT_USAGE)


def bad_value(option, value, expected):
    """The refusal of one value, naming the option (or setting) and the value."""
    return bad(f"{option} '{value}': expected {expected}")


def one_of(option, value, accepted):
    if value not in accepted:
        raise bad_value(option, value, "one of " + ", ".join(accepted))
    return value


SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([KMGTP]?)(?:i?B)?\s*", re.IGNORECASE)
SIZE_HELP = "K, M, G, T, P are powers of 1024; rounded up to whole 4 KiB pages"


def parse_size(text, option="--size"):
    """'8G', '1.5G', '512MiB', '1048576' (bytes) -> bytes, rounded up to
    whole pages as lvcreate rounds up to whole extents."""
    match = SIZE.fullmatch(str(text))
    if not match:
        raise bad_value(option, text, f"a size such as 8G or 1.5G ({SIZE_HELP})")
    size = decimal.Decimal(match.group(1)) * SIZE_UNITS[match.group(2).upper()]
    if size == 0:
        raise bad_value(option, text, "a size of more than 0")
    return math.ceil(size / device.PAGE_SIZE) * device.PAGE_SIZE


def parse_servers(text):
    """--netram's list -> ['IPv4:PORT', ...], host names resolved."""
    servers = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not servers:
        raise bad("--netram: no server given")
    if len(servers) > MAX_SERVERS:
        raise bad(f"--netram: {len(servers)} servers, at most {MAX_SERVERS}")
    parsed = [parse_server(s) for s in servers]
    seen = set()
    for server in parsed:
        # the kernel refuses a server named twice (by address and port)
        host, _, port = server.rpartition(":")
        key = (host, int(port))
        if key in seen:
            raise bad(f"--netram: server {server} given twice")
        seen.add(key)
    return parsed


SERVER_FORMS = "IPv4-ADDRESS:PORT or HOST-NAME:PORT, e.g. 10.0.0.21:7000 or donor1:7000"
# RFC 1123 labels; a last label of digits only is a mistyped address, not a
# name (getaddrinfo would read 10.1 as 10.0.0.1)
HOST_NAME = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
                       r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?")


def parse_server(text, option="--netram"):
    """HOST:PORT -> 'IPv4:PORT' as netram= takes it (tier_netram.c: IPv4 only)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise bad_value(option, text, SERVER_FORMS + ", PORT 1-65535")
    return f"{ipv4_address(host, option, text)}:{port}"


def ipv4_address(host, option, text):
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    if ":" in host or host.startswith("["):
        raise bad_value(option, text, "an IPv4 address or a host name: the kernel's netram= takes no IPv6")
    if not HOST_NAME.fullmatch(host) or host.rstrip(".").rsplit(".", 1)[-1].isdigit():
        raise bad_value(option, text, SERVER_FORMS)
    try:
        found = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        raise bad(f"{option} '{text}': cannot resolve {host} to an IPv4 address "
                  f"({getattr(err, 'strerror', None) or err})") from None
    address = found[0][4][0]
    # the table holds the address; say which one, as the name may move later
    print(f"nswap2l: {host} is {address}", file=sys.stderr)
    return address


def default_reliability(nr_servers):
    """(reliability, the line that says why) for NR_SERVERS servers and no
    --reliability."""
    if nr_servers < 2:
        return "none", ("reliability: none (one server: no redundancy possible, its loss loses "
                        "its pages; add a server for mirror)")
    chosen = "parity" if nr_servers >= PARITY_MIN_SERVERS else "mirror"
    return chosen, (f"reliability: {chosen} (chosen for {nr_servers} servers; "
                    "--reliability none to turn it off)")


def parse_seconds(text, option, low, high):
    if not str(text).isdigit() or not low <= int(text) <= high:
        raise bad_value(option, text, f"whole seconds, {low}..{high}")
    return int(text)


def check_policy(value, option="--prefetch", accepted=PREFETCH_POLICIES):
    """@accepted: the device's registered policies if there is one to ask."""
    return one_of(option, value, accepted)


def check_when(value, option="--when"):
    match = WHEN.match(value)
    if not match or (match.group(3) and not 1 <= int(match.group(3)[1:]) < 1 << 32):
        raise bad_value(option, value, "pays[:P], always, swapping or idle[:N], P and N 1 or more")
    return value


def check_amount(value, option="--amount"):
    """As prefetch.c checks it, so that no setting is half applied."""
    match = AMOUNT.match(value)
    numbers = [int(n) for n in value.split(":")[1:]] if match else []
    if not match or numbers[0] > 100 or (len(numbers) == 2 and not 1 <= numbers[1] <= MAX_PREFETCH_CAP):
        raise bad_value(option, value, "written:P[:CAP], held:P[:CAP] or free:P[:CAP], "
                        f"P a percentage 0-100, CAP pages per wake-up 1-{MAX_PREFETCH_CAP}")
    return value


def check_interval(value, option="--interval"):
    if not str(value).isdigit() or not MIN_INTERVAL <= int(value) <= MAX_INTERVAL:
        raise bad_value(option, value, f"milliseconds, {MIN_INTERVAL}..{MAX_INTERVAL}")
    return str(int(value))


def block_device(path, what):
    """Checks that PATH is a block device; returns its size in bytes and device number."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise Failure(f"{what} {path}: {err.strerror}", EXIT_NO_DEVICE) from None
    if not stat.S_ISBLK(st.st_mode):
        raise bad(f"{what} {path}: not a block device")
    try:
        return device.block_device_size(path), st.st_rdev
    except OSError as err:
        raise Failure(f"{what} {path}: {err.strerror}", EXIT_NO_DEVICE) from None


def read_key(path):
    try:
        with open(path, "rb") as f:
            key = f.read(MAX_KEY + 1)
    except OSError as err:
        raise Failure(f"key file {path}: {err.strerror}", EXIT_NO_DEVICE) from None
    if not MIN_KEY <= len(key) <= MAX_KEY:
        raise bad(f"key file {path}: {len(key)} bytes; a key has {MIN_KEY} to {MAX_KEY} "
                  "(e.g. head -c 32 /dev/urandom)")
    return key


def build(name, settings):
    """(table line, key bytes or None) from the settings dict of the CLI or
    the config file (keys as the long options: netram, key_file, client,
    flash, disk, size, timeout, reliability, protect, overcommit, placement,
    prefetch, when, amount, interval)."""
    if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", name) or name in (".", ".."):
        raise bad(f"device name '{name}': use 1 to 64 of A-Z a-z 0-9 _ . + -")
    args = []
    capacity = 0
    key = None
    why = None      # the default reliability's reason, said once all is checked
    if settings.get("netram"):
        if not settings.get("key_file"):
            raise bad("--netram needs --key-file: the servers admit only clients that prove the key")
        key = read_key(settings["key_file"])
        servers = parse_servers(settings["netram"])
        args.append("netram=" + ",".join(servers))
        args.append(f"key=:{len(key)}:logon:{device.key_description(name)}")
        if settings.get("client"):
            if not CLIENT.match(settings["client"]) or settings["client"].startswith("."):
                raise bad_value("--client", settings["client"],
                                "1 to 31 of A-Z a-z 0-9 _ . - (not starting with .)")
            args.append("client=" + settings["client"])
        if settings.get("timeout") is not None:
            args.append(f"timeout={parse_seconds(settings['timeout'], '--timeout', 1, 3600)}")
        given = settings.get("reliability")
        if given and not RELIABILITY.match(given):
            raise bad_value("--reliability", given, "none, mirror or parity[,group=2..7]")
        reliability, why = (given, None) if given else default_reliability(len(servers))
        if given or reliability != "none":      # none is the table's default
            args.append("reliability=" + reliability)
        if settings.get("protect"):
            args.append("protect=" + one_of("--protect", settings["protect"], PROTECTS))
    else:
        for option in ("key_file", "client", "timeout", "reliability", "protect"):
            if settings.get(option) is not None:
                raise bad(f"--{option.replace('_', '-')} needs --netram")
    devices = {}
    for tier in ("flash", "disk"):
        if settings.get(tier):
            size, rdev = block_device(settings[tier], f"--{tier}")
            capacity += size
            if rdev in devices:
                # the kernel refuses two tiers on one device: the same sectors twice
                raise bad(f"--{tier} {settings[tier]} is the device --{devices[rdev]} names")
            devices[rdev] = tier
            args.append(f"{tier}={settings[tier]}")
    if not args:
        raise bad("no tier: give --netram, --flash and/or --disk")
    if settings.get("placement"):
        args.append("placement=" + one_of("--placement", settings["placement"], PLACEMENTS))
    prefetch = prefetch_arg(settings)
    if prefetch:
        if not settings.get("netram") or not settings.get("flash"):
            raise bad("--prefetch needs --netram and --flash (it moves pages from one to the other)")
        args.append(prefetch)
    if settings.get("overcommit"):
        args.append("overcommit")
    if settings.get("size"):
        size = parse_size(settings["size"])
    elif capacity:
        size = capacity // device.PAGE_SIZE * device.PAGE_SIZE
    else:
        raise bad("--size is needed when the only tier is Network RAM (its capacity changes)")
    if not settings.get("netram") and not settings.get("overcommit") and size > capacity:
        raise bad(f"size {size} bytes is larger than the tiers' {capacity} bytes "
                  "(a smaller --size, or --overcommit)")
    if why:
        print(f"nswap2l: {why}", file=sys.stderr)
    return f"0 {size // SECTOR} nswap2l {len(args)} {' '.join(args)}", key


def prefetch_arg(settings):
    """prefetch=POLICY[,when=..][,amount=..][,interval=..], or None."""
    policy = settings.get("prefetch")
    extra = [(k, settings.get(k)) for k in ("when", "amount", "interval")]
    if not policy or policy == "none":
        if any(v for _, v in extra):
            raise bad("--when, --amount and --interval need --prefetch POLICY")
        return None
    checks = {"when": check_when, "amount": check_amount, "interval": check_interval}
    words = [check_policy(policy)] + [f"{k}={checks[k](v)}" for k, v in extra if v]
    return "prefetch=" + ",".join(words)
