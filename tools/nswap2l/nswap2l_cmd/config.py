# SPDX-License-Identifier: GPL-2.0
"""Interface: /etc/nswap2l/NAME.conf, the settings of `nswap2l create` as an
INI file (what nswap2l@NAME.service creates at boot)."""

import configparser

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
