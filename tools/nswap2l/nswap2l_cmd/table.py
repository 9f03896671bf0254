# SPDX-License-Identifier: GPL-2.0
"""Policy: from the user's settings (options or a config file) to a checked
table line.  Everything here is checked before anything is loaded, so a bad
value changes nothing on the system."""

import ipaddress
import os
import re
import stat

from . import device
from .device import Failure, EXIT_USAGE, EXIT_NO_DEVICE

SECTOR = 512
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
PREFETCH_POLICIES = ("none", "rr", "random", "lrs", "mrs", "auto")
RELIABILITY = re.compile(r"^(none|mirror|parity(,group=[2-7])?)$")
CLIENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,30}$")
WHEN = re.compile(r"^(always|swapping|idle(:[0-9]+)?)$")
AMOUNT = re.compile(r"^(written|held):[0-9]+(:[0-9]+)?$")
MAX_SERVERS = 16
MIN_KEY, MAX_KEY = 16, 256          # NSWAP2L_PROTO_{MIN,MAX}_KEY_SIZE
MIN_INTERVAL, MAX_INTERVAL = 10, 60000   # prefetch.c
MAX_PREFETCH_CAP = 1 << 20               # prefetch.c: PREFETCH_MAX_CAP


def bad(message):
    return Failure(message, EXIT_USAGE)


def parse_size(text):
    """'8G', '512M', '1048576' (bytes, binary units) -> bytes, whole pages."""
    match = re.fullmatch(r"\s*([0-9]+)\s*([KMGTP]?)(i?B)?\s*", text or "", re.IGNORECASE)
    if not match:
        raise bad(f"size '{text}': expected a number of bytes with an optional K, M, G, T or P")
    size = int(match.group(1)) * SIZE_UNITS[match.group(2).upper()]
    if size == 0 or size % device.PAGE_SIZE:
        raise bad(f"size '{text}': must be a positive multiple of 4 KiB")
    return size


def parse_servers(text):
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


def parse_server(text):
    host, sep, port = text.rpartition(":")
    try:
        ipaddress.IPv4Address(host)
        ok = sep and port.isdigit() and 0 < int(port) < 65536
    except ValueError:
        ok = False
    if not ok:
        raise bad(f"server '{text}': expected IPv4-ADDRESS:PORT, e.g. 10.0.0.21:7000")
    return text


def parse_seconds(text, what, low, high):
    if not str(text).isdigit() or not low <= int(text) <= high:
        raise bad(f"{what} '{text}': expected whole seconds, {low}..{high}")
    return int(text)


def check_policy(value):
    if value not in PREFETCH_POLICIES:
        raise bad(f"prefetch policy '{value}': unknown (valid: {' '.join(PREFETCH_POLICIES)})")
    return value


def check_when(value):
    match = WHEN.match(value)
    if not match or (match.group(2) and not 1 <= int(match.group(2)[1:]) < 1 << 32):
        raise bad(f"prefetch when '{value}': expected always, swapping or idle[:N], N 1 or more")
    return value


def check_amount(value):
    """As prefetch.c checks it, so that no setting is half applied."""
    match = AMOUNT.match(value)
    numbers = [int(n) for n in value.split(":")[1:]] if match else []
    if not match or numbers[0] > 100 or (len(numbers) == 2 and not 1 <= numbers[1] <= MAX_PREFETCH_CAP):
        raise bad(f"prefetch amount '{value}': expected written:P[:CAP] or held:P[:CAP], "
                  f"P a percentage 0-100, CAP pages per wake-up 1-{MAX_PREFETCH_CAP}")
    return value


def check_interval(value):
    if not str(value).isdigit() or not MIN_INTERVAL <= int(value) <= MAX_INTERVAL:
        raise bad(f"prefetch interval '{value}': expected milliseconds, {MIN_INTERVAL}..{MAX_INTERVAL}")
    return str(int(value))


def block_device(path, what):
    """Checks that PATH is a block device; returns its size in bytes and device number."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise Failure(f"{what} {path}: {err.strerror}", EXIT_NO_DEVICE) from None
    if not stat.S_ISBLK(st.st_mode):
        raise Failure(f"{what} {path}: not a block device", EXIT_NO_DEVICE)
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
    if settings.get("netram"):
        if not settings.get("key_file"):
            raise bad("--netram needs --key-file: the servers admit only clients that prove the key")
        key = read_key(settings["key_file"])
        args.append("netram=" + ",".join(parse_servers(settings["netram"])))
        args.append(f"key=:{len(key)}:logon:{device.key_description(name)}")
        if settings.get("client"):
            if not CLIENT.match(settings["client"]) or settings["client"].startswith("."):
                raise bad(f"client '{settings['client']}': 1 to 31 of A-Z a-z 0-9 _ . - (not starting with .)")
            args.append("client=" + settings["client"])
        if settings.get("timeout") is not None:
            args.append(f"timeout={parse_seconds(settings['timeout'], 'timeout', 1, 3600)}")
        if settings.get("reliability"):
            if not RELIABILITY.match(settings["reliability"]):
                raise bad(f"reliability '{settings['reliability']}': expected none, mirror or parity[,group=2..7]")
            args.append("reliability=" + settings["reliability"])
        if settings.get("protect"):
            args.append("protect=" + settings["protect"])
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
        args.append("placement=" + settings["placement"])
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
