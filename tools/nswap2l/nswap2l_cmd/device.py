# SPDX-License-Identifier: GPL-2.0
"""Mechanism: what nswap2l does to the system.  dmsetup, the target's status
line and sysfs files, the kernel keyring, swap, the kernel log."""

import ctypes
import errno
import os
import shutil
import subprocess

SYSFS_ROOT = "/sys/kernel/nswap2l"
TIER_FIELDS = ("capacity", "used", "reads", "writes", "discards")
SERVER_FIELDS = ("address", "state", "held", "free", "inflight", "sent_bytes",
                 "received_bytes", "errors", "reconnects", "evict_asked", "evict_moved")
NETRAM_TAIL = ("reliability", "copies_lost", "pages_lost", "recovering", "recovery_ms",
               "protect", "refused")
STATUS_TAIL = ("prefetch_policy", "prefetched", "prefetched_reads", "cancelled",
               "read_parallelism", "write_parallelism")
PAGE_SIZE = 4096


class Failure(Exception):
    """An error to report to the user, with the exit code it deserves."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


# Exit codes: scripts tell "no such device" from "the kernel said no".
EXIT_FAILED = 1        # the operation was tried and failed
EXIT_USAGE = 2         # bad options or values (argparse uses 2 as well)
EXIT_NO_DEVICE = 3     # no such device, or not an nswap2l device
EXIT_NOT_ROOT = 4
EXIT_MISSING_TOOL = 5


def require_root(what):
    if os.geteuid() != 0:
        raise Failure(f"{what} needs root", EXIT_NOT_ROOT)


def require_tool(tool, package):
    path = shutil.which(tool)
    if not path:
        raise Failure(f"{tool} not found (apt-get install {package})", EXIT_MISSING_TOOL)
    return path


def run(argv, what, check=True):
    """Runs a command; on failure raises Failure with its stderr."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except FileNotFoundError:
        raise Failure(f"{argv[0]} not found", EXIT_MISSING_TOOL) from None
    if check and proc.returncode != 0:
        detail = proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"
        raise Failure(f"{what}: {detail}", EXIT_FAILED)
    return proc


# ---- kernel log: the target explains a refusal there, not in errno ------------

class KernelLog:
    """The kernel log lines written after it was opened (root only)."""

    def __init__(self):
        try:
            self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:
            self.fd = None

    def new_lines(self, match="nswap2l"):
        lines = []
        while self.fd is not None:
            try:
                record = os.read(self.fd, 8192).decode("utf-8", "replace")
            except BlockingIOError:
                break
            except OSError as err:
                if err.errno == errno.EPIPE:    # overwritten records: skip on
                    continue
                break
            text = record.split(";", 1)[-1].split("\n", 1)[0]
            if match in text:
                lines.append(text)
        return lines

    def explain(self, failure):
        """Failure with the target's own words appended, and what to do
        where the words alone do not say it."""
        lines = self.new_lines()
        if lines:
            failure.args = (failure.args[0] + "\n  kernel: " + "\n  kernel: ".join(lines),)
        if any("does not know client" in line for line in lines):
            failure.args = (failure.args[0] + "\n  hint: --client (client = in the config file) "
                            "names this client as the servers do: the name of its key's file "
                            "in their nswapd --clients directory",)
        return failure

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# ---- device-mapper ------------------------------------------------------------

def udev_running():
    return os.path.exists("/run/udev/control")


def dmsetup(*args, what=None, check=True):
    argv = ["dmsetup", *args]
    if args[0] in ("create", "remove", "resume") and not udev_running():
        argv.insert(2, "--noudevsync")    # nobody would ever answer the cookie
    return run(argv, what or "dmsetup " + args[0], check=check)


def nswap2l_devices():
    out = dmsetup("ls", "--target", "nswap2l").stdout
    return sorted(line.split()[0] for line in out.splitlines()
                  if line.strip() and not line.startswith("No devices"))


def table_of(name):
    """The device's table line; Failure if it is missing or not nswap2l."""
    proc = dmsetup("table", name, check=False)
    if proc.returncode != 0:
        if os.geteuid() != 0:
            raise Failure("dmsetup needs root", EXIT_NOT_ROOT)
        raise Failure(f"{name}: no such device-mapper device", EXIT_NO_DEVICE)
    words = proc.stdout.split()
    if len(words) < 3 or words[2] != "nswap2l":
        target = words[2] if len(words) >= 3 else "nothing"
        raise Failure(f"{name}: not an nswap2l device (its target is {target})", EXIT_NO_DEVICE)
    return proc.stdout.strip()


def table_args(table):
    """{key: value} of a table line's key=value arguments (flags map to True)."""
    args = {}
    for word in table.split()[4:]:
        key, sep, value = word.partition("=")
        args[key] = value if sep else True
    return args


def create(name, table):
    log = KernelLog()
    try:
        dmsetup("create", name, "--table", table, what=f"dmsetup create {name}")
    except Failure as failure:
        raise log.explain(failure) from None
    finally:
        log.close()
    if not os.path.exists(dev_path(name)):
        dmsetup("mknodes", name, check=False)


def reload(name, table):
    """Loads TABLE in place of the device's (reload, then resume); a table
    the target refuses changes nothing, and the kernel's reason is said."""
    log = KernelLog()
    try:
        dmsetup("reload", name, "--table", table, what=f"dmsetup reload {name}")
        dmsetup("resume", name, what=f"dmsetup resume {name}")
    except Failure as failure:
        raise log.explain(failure) from None
    finally:
        log.close()


def remove(name):
    dmsetup("remove", name, what=f"dmsetup remove {name}")


def message(name, *words):
    log = KernelLog()
    try:
        dmsetup("message", name, "0", *words, what=f"{' '.join(words)}")
    except Failure as failure:
        raise log.explain(failure) from None
    finally:
        log.close()


def registered_policies(name):
    """(placements, prefetch policies) the kernel has registered, as its
    'help' message lists them ("placement <policy> ...: NAMES" and
    "prefetch policy <policy> ...: NAMES"); needs root, as dmsetup does."""
    lists = {"placement": (), "prefetch policy": ()}
    for line in dmsetup("message", name, "0", "help", what="help").stdout.splitlines():
        head, sep, names = line.partition(":")
        for key in lists:
            if sep and head.startswith(key + " <policy>"):
                lists[key] = tuple(names.split())
    return lists["placement"], lists["prefetch policy"]


def dev_path(name):
    return f"/dev/mapper/{name}"


def dm_minor_name(name):
    """dm-N, the kernel's name of the device (for /sys/block and blktrace)."""
    out = dmsetup("info", "-c", "--noheadings", "-o", "major,minor", name).stdout.strip()
    return block_name(out.replace(" ", ""))


def block_name(majmin):
    """The kernel name of block device MAJ:MIN (vda, dm-0, nvme0n1p3)."""
    try:
        return os.path.basename(os.readlink(f"/sys/dev/block/{majmin}"))
    except OSError:
        raise Failure(f"no block device {majmin}", EXIT_NO_DEVICE) from None


# ---- status -------------------------------------------------------------------

def parse_status(line):
    """dmsetup status of an nswap2l device as a dict (README: Status)."""
    words = line.split()
    if len(words) < 5 or words[2] != "nswap2l":
        raise ValueError(f"not an nswap2l status line: {line!r}")
    status = {"start": int(words[0]), "sectors": int(words[1]), "placement": words[3]}
    pos = 5
    status["tiers"] = []
    for _ in range(int(words[4])):
        tier = {"tier": words[pos]}
        tier.update(zip(TIER_FIELDS, map(int, words[pos + 1:pos + 6])))
        status["tiers"].append(tier)
        pos += 6
    for key in ("zero_reads", "nospace_errors", "rerouted_writes", "moved_pages"):
        status[key] = int(words[pos])
        pos += 1
    if len(words) - pos > len(STATUS_TAIL):
        servers = []
        for _ in range(int(words[pos])):
            server = dict(zip(SERVER_FIELDS, words[pos + 1:pos + 12]))
            for key in SERVER_FIELDS[2:]:
                server[key] = int(server[key])
            servers.append(server)
            pos += 11
        pos += 1
        status["servers"] = servers
        netram = dict(zip(NETRAM_TAIL, words[pos:pos + len(NETRAM_TAIL)]))
        for key in NETRAM_TAIL:
            if key not in ("reliability", "protect"):
                netram[key] = int(netram[key])
        status["netram"] = netram
        pos += len(NETRAM_TAIL)
    tail = dict(zip(STATUS_TAIL, words[pos:]))
    if len(tail) != len(STATUS_TAIL) or pos + len(STATUS_TAIL) != len(words):
        raise ValueError(f"unexpected nswap2l status line: {line!r}")
    for key in ("prefetched", "prefetched_reads", "cancelled"):
        tail[key] = int(tail[key])
    for key in ("read_parallelism", "write_parallelism"):
        tail[key] = float(tail[key])
    status["prefetch"] = tail
    return status


def status_of(name):
    """parse_status() of the device, with its table line as "table"."""
    table = table_of(name)
    try:
        status = parse_status(dmsetup("status", name).stdout.strip())
    except (ValueError, IndexError) as err:
        raise Failure(f"{name}: a status line this nswap2l does not know (is the module "
                      f"of another version?): {err}", EXIT_FAILED) from None
    status["table"] = table
    return status


# ---- sysfs --------------------------------------------------------------------

def sysfs_dir(name):
    path = os.path.join(SYSFS_ROOT, name)
    if not os.path.isdir(path):
        raise Failure(f"{name}: no {path} (is the device suspended?)", EXIT_FAILED)
    return path


def sysfs_read(name, rel):
    with open(os.path.join(sysfs_dir(name), rel)) as f:
        return f.read()


def sysfs_write(name, rel, value):
    log = KernelLog()
    try:
        with open(os.path.join(sysfs_dir(name), rel), "w") as f:
            f.write(value)
    except OSError as err:
        raise log.explain(Failure(f"{rel} {value}: {err.strerror}", EXIT_FAILED)) from None
    finally:
        log.close()


def parse_key_values(text):
    """'key value' lines; numbers as int or float, lists of numbers as lists."""
    values = {}
    for line in text.splitlines():
        key, _, rest = line.strip().partition(" ")
        if key:
            values[key] = number_or_text(rest.strip())
    return values


def number_or_text(text):
    words = text.split()
    try:
        nums = [float(w) if "." in w else int(w) for w in words]
    except ValueError:
        return text
    return nums[0] if len(nums) == 1 else nums


# ---- keyring: the Network RAM key as a logon key -------------------------------

# The keyring calls have no libc wrapper: libkeyutils (keyctl's library,
# Debian's libkeyutils1) has them for every architecture.
_KEY_SPEC_SESSION_KEYRING = -3
_KEY_SPEC_USER_KEYRING = -4
_keyutils = None


def _keyutils_lib():
    """libkeyutils.so.1, its calls typed; Failure (exit 5) without it"""
    global _keyutils
    if _keyutils is None:
        try:
            lib = ctypes.CDLL("libkeyutils.so.1", use_errno=True)
        except OSError:
            raise Failure("libkeyutils.so.1 not found (apt-get install libkeyutils1)",
                          EXIT_MISSING_TOOL) from None
        serial, text = ctypes.c_int32, ctypes.c_char_p
        lib.add_key.argtypes = (text, text, ctypes.c_void_p, ctypes.c_size_t, serial)
        lib.add_key.restype = serial
        lib.keyctl_link.argtypes = (serial, serial)
        lib.keyctl_search.argtypes = (serial, text, text, serial)
        lib.keyctl_invalidate.argtypes = (serial,)
        for call in (lib.keyctl_link, lib.keyctl_search, lib.keyctl_invalidate):
            call.restype = ctypes.c_long
        _keyutils = lib
    return _keyutils


def _checked(ret):
    """a keyutils call's result, or OSError with its errno"""
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def key_description(name):
    return f"nswap2l:{name}"


def load_key(name, key):
    """Adds KEY as logon key nswap2l:NAME where the target's request_key()
    finds it, whoever loads the table: in this process's session keyring,
    which dmsetup inherits (a systemd service's own keyring is not linked
    to root's user keyring), and linked into root's user keyring, where
    later commands (remove, a reload by hand) find it."""
    lib = _keyutils_lib()
    try:
        serial = _checked(lib.add_key(b"logon", key_description(name).encode(), key, len(key),
                                      _KEY_SPEC_SESSION_KEYRING))
        _checked(lib.keyctl_link(serial, _KEY_SPEC_USER_KEYRING))
        return serial
    except OSError as err:
        raise Failure(f"cannot add the key to the keyring: {err.strerror}", EXIT_FAILED) from None


def drop_key(name):
    """Invalidates logon key nswap2l:NAME if there is one.  The search links
    it into this process's session keyring: only a key that the process
    possesses may be invalidated, and a service's own session keyring does
    not reach root's user keyring."""
    lib = _keyutils_lib()
    try:
        serial = _checked(lib.keyctl_search(_KEY_SPEC_USER_KEYRING, b"logon",
                                            key_description(name).encode(), _KEY_SPEC_SESSION_KEYRING))
        _checked(lib.keyctl_invalidate(serial))
    except OSError:
        pass


# ---- swap and mounts -----------------------------------------------------------

def same_device(path, name):
    try:
        return os.stat(path).st_rdev == os.stat(dev_path(name)).st_rdev
    except OSError:
        return False


def swap_entry(name):
    """The /proc/swaps line of the device, or None."""
    with open("/proc/swaps") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields and same_device(fields[0], name):
                return fields
    return None


def mount_point(name):
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[0].startswith("/dev/") and same_device(fields[0], name):
                return fields[1]
    return None


def swap_on(name, priority, swapon=True):
    """mkswap, then swapon unless a .swap unit does (swapon False)"""
    run(["mkswap", dev_path(name)], "mkswap")
    if swapon:
        run(["swapon", "--discard", "--priority", str(priority), dev_path(name)], "swapon")


def swap_off(name):
    run(["swapoff", dev_path(name)], f"swapoff {dev_path(name)}")


def block_device_size(path):
    with open(path, "rb") as f:
        return f.seek(0, os.SEEK_END)
