# SPDX-License-Identifier: GPL-2.0
"""Interface: /etc/nswap2l/NAME.conf, the settings of `nswap2l create` as an
INI file (what nswap2l@NAME.service creates at boot)."""

import configparser
import os
import re

from .device import Failure, EXIT_USAGE, EXIT_NO_DEVICE

CONFIG_DIR = "/etc/nswap2l"
# section -> {key in the file: key in the settings dict of table.build()}
KEYS = {
    "device": {k: k.replace("-", "_") for k in (
        "netram", "key-file", "client", "flash", "disk", "size", "timeout",
        "reliability", "protect", "placement", "overcommit")},
    "prefetch": {"policy": "prefetch", "when": "when", "amount": "amount", "interval": "interval"},
    "swap": {"enable": "swap", "priority": "priority"},
}
BOOLEANS = ("overcommit", "swap")
SETTINGS = [setting for keys in KEYS.values() for setting in keys.values()]


def default_path(name):
    return f"{CONFIG_DIR}/{name}.conf"


def load(path):
    """The settings in PATH; Failure naming the file and the bad line."""
    # "key = value   # why": a '#' after whitespace starts a comment, a '#'
    # inside a word (a path like /dev/disk/by-label/a#b) is kept
    parser = configparser.ConfigParser(interpolation=None, empty_lines_in_values=False,
                                       inline_comment_prefixes=("#",))
    try:
        with open(path) as f:
            parser.read_file(f)
    except OSError as err:
        raise Failure(f"config {path}: {err.strerror}", EXIT_NO_DEVICE) from None
    except configparser.Error as err:
        raise Failure(f"config {path}: {err.message.splitlines()[0]}", EXIT_USAGE) from None
    except UnicodeDecodeError as err:
        raise Failure(f"config {path}: not UTF-8 text (byte {err.start})", EXIT_USAGE) from None
    settings = {}
    for section in parser.sections():
        if section not in KEYS:
            raise Failure(f"config {path}: unknown section [{section}] "
                          f"(valid: {', '.join(f'[{s}]' for s in KEYS)})", EXIT_USAGE)
        for key, value in parser.items(section):
            if key not in KEYS[section]:
                raise Failure(f"config {path}: unknown key '{key}' in [{section}] "
                              f"(valid: {', '.join(KEYS[section])})", EXIT_USAGE)
            setting = KEYS[section][key]
            if setting in BOOLEANS:
                try:
                    settings[setting] = parser.getboolean(section, key)
                except ValueError:
                    raise Failure(f"config {path}: {key} = {value}: expected yes or no",
                                  EXIT_USAGE) from None
            else:
                settings[setting] = value
    return settings


# ---- live changes written back --------------------------------------------------

# Which config file a device was created from (`create --config`), so that
# servers, prefetch and resize can save their changes there: one file per
# device, gone at reboot as the device is.
RUN_DIR = "/run/nswap2l"


def remember(name, path):
    os.makedirs(RUN_DIR, mode=0o755, exist_ok=True)
    with open(os.path.join(RUN_DIR, f"{name}.config"), "w") as f:
        f.write(os.path.abspath(path) + "\n")


def source_of(name):
    """The config file NAME was created from, or None"""
    try:
        with open(os.path.join(RUN_DIR, f"{name}.config")) as f:
            path = f.read().strip()
    except OSError:
        return None
    return path if os.path.isfile(path) else None


def forget(name):
    try:
        os.unlink(os.path.join(RUN_DIR, f"{name}.config"))
    except FileNotFoundError:
        pass


_SECTION = re.compile(r"^\s*\[([^]]*)\]")
_COMMENT = re.compile(r"(\s#.*)$")


def _set_key(lines, section, key, value):
    """LINES with KEY = VALUE in [SECTION] (None: without the key), every
    other line as it was, comments too; a missing key goes at the end of its
    section, a missing section at the end."""
    key_line = re.compile(rf"^\s*{re.escape(key)}\s*[=:]")
    new = f"{key} = {value}"
    current, end_of_section, done = None, None, False
    out = []
    for line in lines:
        m = _SECTION.match(line)
        if m:
            current = m.group(1).strip()
        elif current == section and key_line.match(line) and not done:
            done = True
            if value is None:
                continue
            comment = _COMMENT.search(line.split("=", 1)[-1] if "=" in line else line)
            line = new + ("   " + comment.group(1).strip() if comment else "")
        out.append(line)
        if current == section and line.strip() and not line.lstrip().startswith("#"):
            end_of_section = len(out)
    if not done and value is not None:
        if end_of_section is None:
            out += ([""] if out and out[-1].strip() else []) + [f"[{section}]", new]
        else:
            out.insert(end_of_section, new)
    return out


def update(path, changes):
    """Applies CHANGES, [(section, key, value)], to the file at PATH as
    _set_key() does, in order, and replaces the file once (a crash leaves
    the old one or the new one)."""
    with open(path) as f:
        out = f.read().splitlines()
    for section, key, value in changes:
        out = _set_key(out, section, key, value)
    tmp = f"{path}.nswap2l.tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    os.replace(tmp, path)
