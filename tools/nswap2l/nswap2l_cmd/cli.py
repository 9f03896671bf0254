# SPDX-License-Identifier: GPL-2.0
"""Interface: the nswap2l command line.  Each subcommand checks its input,
then calls the mechanism (device.py) or the analysis (blktrace.py,
analysis.py, plots.py)."""

import argparse
import datetime
import json
import os
import subprocess
import sys
import textwrap
import time

from . import __version__, config, device, recorder, report, table
from .device import Failure
from .report import human

EXIT_CODES = """exit status:
  0  done
  1  the operation failed (dmsetup, the kernel or a tool said no; see the message)
  2  bad option or value (also a --flash or --disk that is not a block device,
     a server name that does not resolve): nothing was printed, created or changed
  3  no such device, not an nswap2l device, or a file that cannot be read
  4  not root
  5  a tool is missing (blktrace, blkparse, matplotlib)"""

DEFAULT_SWAP_PRIORITY = 100     # above disk swap, as zram-generator's default
DEFAULT_WATCH_SECONDS = 2.0
# status and create mark Network RAM with reliability=none: one donor's
# loss loses the pages it holds
NO_REDUNDANCY = "no redundancy"


def pages(n):
    return human(n * device.PAGE_SIZE)


# ---- create / remove ------------------------------------------------------------

def create_settings(args):
    settings = config.load(args.config) if args.config else {}
    for setting in config.SETTINGS:     # the options are named as the settings
        value = getattr(args, setting)
        if setting in config.BOOLEANS:
            if value:
                settings[setting] = True
        elif value is not None:
            settings[setting] = value
    return settings


def cmd_create(args):
    if not args.print_table:
        device.require_root("create")
    settings = create_settings(args)
    priority = settings.get("priority", DEFAULT_SWAP_PRIORITY)
    if not str(priority).lstrip("-").isdigit() or not -1 <= int(priority) <= 32767:
        raise table.bad_value("--priority", priority, "a whole number, -1..32767")
    line, key = table.build(args.name, settings)
    if args.print_table:
        print(line)
        return
    if device.dmsetup("info", args.name, check=False).returncode == 0:
        raise Failure(f"{args.name}: a device-mapper device of that name exists", device.EXIT_FAILED)
    if key:
        device.load_key(args.name, key)
    try:
        device.create(args.name, line)
    except Failure:
        device.drop_key(args.name)
        raise
    if settings.get("swap"):
        try:
            device.swap_on(args.name, int(priority), swapon=not args.no_swapon)
        except Failure:
            device.dmsetup("remove", args.name, check=False)
            device.drop_key(args.name)
            raise
    if args.config:
        config.remember(args.name, args.config)
    sectors = int(line.split()[1])
    print(f"created {device.dev_path(args.name)}: {human(sectors * table.SECTOR)}"
          + redundancy_said(device.table_args(line))
          + ((", mkswap done (its .swap unit swaps on)" if args.no_swapon else f", swap with priority {priority}")
             if settings.get("swap") else ""))


def redundancy_said(words):
    """', reliability R' of a table with Network RAM (its table arguments)."""
    if "netram" not in words:
        return ""
    reliability = words.get("reliability", "none")
    return f", reliability {reliability}" + (f" ({NO_REDUNDANCY})" if reliability == "none" else "")


def cmd_remove(args):
    device.require_root("remove")
    device.table_of(args.name)
    where = device.mount_point(args.name)
    if where:
        raise Failure(f"{args.name}: mounted on {where}; unmount it first", device.EXIT_FAILED)
    if device.swap_entry(args.name):
        device.swap_off(args.name)
    device.remove(args.name)
    device.drop_key(args.name)
    config.forget(args.name)
    print(f"removed {device.dev_path(args.name)}")


# ---- status ---------------------------------------------------------------------

def status_record(name):
    return report.record(name, device.status_of(name), device.swap_entry(name))


def format_status(st):
    size = human(st["size_bytes"])
    use = (f"swap, priority {st['swap']['priority']}, {human(st['swap']['used_bytes'])} used"
           if st["swap"] else "not swap")
    out = [f"{st['name']}: {size}, {use}, placement {st['placement']}"]
    out.append(f"  {'tier':<8} {'used':>11} {'capacity':>11} {'use%':>5} "
               f"{'reads':>10} {'writes':>10} {'discards':>10}")
    for t in st["tiers"]:
        share = f"{100 * t['used_bytes'] / t['capacity_bytes']:.0f}" if t["capacity_bytes"] else "-"
        out.append(f"  {t['tier']:<8} {human(t['used_bytes']):>11} {human(t['capacity_bytes']):>11} "
                   f"{share:>5} {t['read_bytes'] // device.PAGE_SIZE:>10} "
                   f"{t['written_bytes'] // device.PAGE_SIZE:>10} {t['discarded_bytes'] // device.PAGE_SIZE:>10}")
    if st["netram"]:
        out.append(f"  {'server':<21} {'state':<10} {'held':>11} {'free':>11} {'inflight':>8} "
                   f"{'errors':>6} {'reconn':>6}")
        for s in st["servers"]:
            out.append(f"  {s['address']:<21} {s['state']:<10} {human(s['held_bytes']):>11} "
                       f"{human(s['free_bytes']):>11} {s['inflight']:>8} {s['errors']:>6} {s['reconnects']:>6}")
        n = st["netram"]
        out.append(f"  reliability {n['reliability']}"
                   + (f" ({NO_REDUNDANCY}: a lost server loses its pages)" if n["no_redundancy"] else "")
                   + f", protect {n['protect']}: "
                   f"{n['copies_lost']} copies lost, {n['pages_lost']} pages lost, "
                   f"{n['refused']} pages refused"
                   + (", recovering" if n["recovering"] else ""))
    p = st["prefetch"]
    out.append(f"  prefetch {p['prefetch_policy']}: {human(p['prefetched_bytes'])} moved to flash, "
               f"{human(p['prefetched_read_bytes'])} read from there, {p['cancelled']} moves cancelled")
    out.append(f"  in flight when busy: reads {p['read_parallelism']:.2f}, "
               f"writes {p['write_parallelism']:.2f}")
    out.append(f"  zero reads {human(st['zero_read_bytes'])}, no space {st['nospace_errors']}, "
               f"rerouted writes {st['rerouted_writes']}, moved {human(st['moved_bytes'])}")
    return "\n".join(out)


def watch_interval(args):
    """Seconds between refreshes, or None.  `status --watch NAME` names a
    device, not an interval: --watch takes only a number as its value."""
    if args.watch is None:
        return None
    try:
        seconds = float(args.watch)
    except ValueError:
        args.names.insert(0, args.watch)
        return DEFAULT_WATCH_SECONDS
    if not 0.1 <= seconds <= 3600:
        raise table.bad(f"--watch {args.watch}: expected seconds, 0.1..3600")
    return seconds


def cmd_status(args):
    interval = watch_interval(args)
    if not args.names:
        device.require_root("status")
    names = args.names or device.nswap2l_devices()
    while True:
        records = [status_record(n) for n in names]
        if args.json:
            # a list however many devices: one shape for scripts
            text = json.dumps(records, indent=2)
        elif args.prometheus:
            text = report.prometheus(records).rstrip("\n")
        elif args.columns:
            text = report.rows(records, args.columns, headings=not args.noheadings)
        else:
            text = "\n\n".join(format_status(r) for r in records) or "no nswap2l devices"
        if interval is None:
            print(text)
            return
        sys.stdout.write("\033[H\033[2J" if sys.stdout.isatty() else "\n")
        print(f"{datetime.datetime.now():%H:%M:%S}, every {interval:g} s (Ctrl-C to stop)\n{text}",
              flush=True)
        time.sleep(interval)


# ---- servers, prefetch, profile -------------------------------------------------

def cmd_servers(args):
    if args.action is None:
        st = device.status_of(args.name)
        if "servers" not in st:
            raise Failure(f"{args.name}: no Network RAM tier", device.EXIT_FAILED)
        for s in st["servers"]:
            print(f"{s['address']} {s['state']} held {pages(s['held'])} free {pages(s['free'])}")
        return
    if not args.server:
        raise table.bad(f"servers {args.action}: which server ({table.SERVER_FORMS})?")
    server = table.parse_server(args.server, "server")
    device.require_root(f"servers {args.action}")
    device.table_of(args.name)
    device.message(args.name, f"{args.action}_server", server)
    print(f"{args.action} {server}: done" if args.action == "add"
          else f"remove {server}: its pages are being moved off (see nswap2l status {args.name})")
    save(args.name, [("device", "netram", lambda old: servers_saved(old, args.action, args.server, server))])


def cmd_resize(args):
    size = table.parse_size(args.size, "SIZE")
    device.require_root("resize")
    words = device.table_of(args.name).split()
    old = int(words[1]) * table.SECTOR
    if size < old:
        raise table.bad(f"SIZE {args.size}: smaller than {args.name}'s {human(old)}; a device does not "
                        "shrink (the pages past its new end would be lost)")
    if size == old:
        print(f"{device.dev_path(args.name)} is {human(old)} already")
        return
    words[1] = str(size // table.SECTOR)
    device.reload(args.name, " ".join(words))
    print(f"resized {device.dev_path(args.name)}: {human(old)} -> {human(size)}")
    if device.swap_entry(args.name):
        print(f"nswap2l: the swap area on {args.name} keeps its old size until swapoff, mkswap and "
              "swapon (nswap2l remove and create, or a reboot with the config saved below)", file=sys.stderr)
    save(args.name, [("device", "size", size_text(size))])


def size_text(size):
    """SIZE in bytes as a config file writes it: 16G, 1536M, 4096"""
    for shift, unit in ((50, "P"), (40, "T"), (30, "G"), (20, "M"), (10, "K")):
        if size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def servers_saved(old, action, text, server):
    """The config's netram list after adding or removing a server (given
    as TEXT, SERVER resolved): as written there, host names kept"""
    kept = [s.strip() for s in (old or "").split(",") if s.strip()]

    def same(entry):
        try:
            return table.parse_server(entry, "netram") == server
        except Failure:         # a name that no longer resolves: not this one
            return False
    kept = [s for s in kept if not same(s)]
    return ",".join(kept + ([text] if action == "add" else [])) or None


def save(name, changes):
    """Writes live CHANGES, [(section, key, value or function of the old
    value)], to the config file NAME was created from, and says so; or
    says that nothing was saved."""
    path = config.source_of(name)
    if path is None:
        print(f"nswap2l: not saved: {name} was not created from a config file "
              "(create --config); the change lasts until the device is removed", file=sys.stderr)
        return
    if any(callable(value) for _, _, value in changes):
        old = config.load(path)
        changes = [(section, key, value(old.get(config.KEYS[section][key])) if callable(value)
                    else value) for section, key, value in changes]
    config.update(path, changes)
    print(f"nswap2l: saved in {path}", file=sys.stderr)


# (argument, sysfs file, check, the argument's name in a refusal)
PREFETCH_SETTINGS = (("policy", "policy", table.check_policy, "POLICY"),
                     ("when", "when", table.check_when, "--when"),
                     ("amount", "amount", table.check_amount, "--amount"),
                     ("interval", "interval_ms", table.check_interval, "--interval"))


def prefetch_policies(name):
    """The policies the device's kernel has registered, from its 'help'
    message; table's fallback list when it cannot be asked yet (not root, or
    no such device: its refusal comes later, from table_of())."""
    if os.geteuid() == 0 and os.path.isdir(os.path.join(device.SYSFS_ROOT, name)):
        names = device.registered_policies(name)[1]
        if names:
            return names
    return table.PREFETCH_POLICIES


def cmd_prefetch(args):
    policies = prefetch_policies(args.name) if args.policy is not None else ()
    checks = {"policy": lambda value, option: table.check_policy(value, option, policies)}
    changes = [(sysfs, checks.get(opt, check)(getattr(args, opt), option))
               for opt, sysfs, check, option in PREFETCH_SETTINGS if getattr(args, opt) is not None]
    if changes:
        device.require_root("prefetch")
    device.table_of(args.name)
    for sysfs, value in changes:
        device.sysfs_write(args.name, f"prefetch/{sysfs}", value)
    if changes:
        keys = {sysfs: key for key, sysfs, _, _ in PREFETCH_SETTINGS}
        save(args.name, [("prefetch", keys[sysfs], value) for sysfs, value in changes])
    current = {sysfs: device.sysfs_read(args.name, f"prefetch/{sysfs}").strip()
               for _, sysfs, _, _ in PREFETCH_SETTINGS}
    stats = device.parse_key_values(device.sysfs_read(args.name, "prefetch/stats"))
    if args.json:
        print(json.dumps({"settings": current, "stats": stats}, indent=2))
        return
    print(" ".join(f"{k}={v}" for k, v in current.items()))
    for key, value in stats.items():
        print(f"  {key} {value}")


def histogram_lines(hist, width=40):
    """Text bars of the share of busy samples (1 or more in flight)."""
    busy = hist[1:]
    total = sum(busy)
    if not total:
        return ["    (no samples with I/O in flight)"]
    last = max(k for k, n in enumerate(busy) if n)
    lines = []
    for k, n in enumerate(busy[:last + 1], start=1):
        label = f"{k}" if k < len(hist) - 1 else f">={k}"
        lines.append(f"    {label:>4} {'#' * round(width * n / total):<{width}} {100 * n / total:5.1f} %")
    return lines


def load_plots():
    """The plots module, once matplotlib is known to be there."""
    from . import plots
    try:
        plots.require_matplotlib()
    except RuntimeError as err:
        raise Failure(str(err), device.EXIT_MISSING_TOOL) from None
    return plots


def cmd_profile(args):
    device.table_of(args.name)
    plots = load_plots() if args.plot else None
    if args.reset:
        device.require_root("profile --reset")
        device.message(args.name, "profile", "reset")
    profile = device.parse_key_values(device.sysfs_read(args.name, "profile"))
    if args.plot:
        plots.profile_histograms(profile, args.plot, title=f"{args.name}: bios in flight")
    if args.json:
        print(json.dumps(profile, indent=2))
    else:
        print(f"{args.name}: {profile.get('samples', 0)} samples every "
              f"{profile.get('sample_ms', '?')} ms")
        for key, hist in profile.items():
            if key.endswith("_hist") and isinstance(hist, list):
                prefix = key[:-len("_hist")]
                print(f"  {prefix}: average in flight when busy "
                      f"{profile.get(prefix + '_parallelism', 0)}")
                print("\n".join(histogram_lines(hist)))
    if args.plot:
        print(f"wrote {args.plot}", file=sys.stderr if args.json else sys.stdout)


# ---- trace ----------------------------------------------------------------------

def progress(text):
    """What a long trace is doing now, on stderr (stdout has the summary)."""
    print(f"nswap2l trace: {text}", file=sys.stderr, flush=True)


def make_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise Failure(f"output directory {path}: {err.strerror}", device.EXIT_FAILED) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise Failure(f"output directory {path}: not writable", device.EXIT_FAILED)


def draw_access_map(trace, picture):
    """The picture, if matplotlib is there: the summary does not need it."""
    from . import plots
    try:
        plots.require_matplotlib()
    except RuntimeError as err:
        progress(f"no {os.path.basename(picture)}: {err}")
        return False
    progress(f"drawing {picture}")
    plots.access_map(trace, picture)
    return True


def trace_input(args):
    """(Recording, output directory) of a device traced now or of --from."""
    from . import recorder
    if args.name:
        if not args.seconds or args.seconds < 1:
            raise table.bad("--seconds N (1 or more) says how long to record")
        device.table_of(args.name)
        device.require_root("trace")
        out = args.out or f"nswap2l-trace-{args.name}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
        make_dir(out)
        return recorder.record(args.name, args.seconds, out, progress,
                               keep_raw=args.keep_raw, max_bios=args.max_bios), out
    if args.keep_raw:
        raise table.bad("--keep-raw keeps what a recording reads; --from reads a kept trace")
    path = args.from_file
    out = args.out or (path if os.path.isdir(path) else os.path.dirname(path) or ".")
    make_dir(out)
    progress(f"reading {path}")
    try:
        return recorder.load(path), out
    except (OSError, UnicodeDecodeError) as err:
        raise Failure(f"{path}: {getattr(err, 'strerror', None) or 'not blkparse text'}",
                      device.EXIT_NO_DEVICE) from None


def cmd_trace(args):
    if bool(args.name) == bool(args.from_file):
        raise table.bad("give a device NAME (with --seconds) or --from FILE")
    if args.max_bios < 1:
        raise table.bad(f"--max-bios {args.max_bios}: need 1 or more")
    from . import analysis
    try:
        analysis.check_replay_settings(args.when, args.amount, args.interval)
    except ValueError as err:
        raise table.bad(str(err)) from None
    recording, out = trace_input(args)
    trace = recording.trace
    if recording.stopped:
        progress(f"stopped early: {recording.stopped}")
    if not trace.nr_bios and not recording.out_of_space:
        if args.name:
            raise Failure(f"{args.name}: no I/O in {args.seconds} s: nothing to analyse",
                          device.EXIT_FAILED)
        raise Failure(f"{recording.source}: no I/O in the trace (is it blkparse output?)",
                      device.EXIT_NO_DEVICE)
    progress(f"analysing {trace.nr_bios} bios")
    summary = analysis.summarise(trace)
    replays = analysis.replay_all(trace, when=args.when, amount=args.amount,
                                  interval_ms=args.interval)
    if recording.stopped:
        summary["stopped_early"] = recording.stopped
    summary["events_dropped"] = recording.dropped
    report = analysis.format_summary(summary, replays)
    if recording.stopped:
        report += f"\nrecording stopped early: {recording.stopped}"
    if recording.dropped:
        report += (f"\nblktrace dropped {recording.dropped} events: the I/O outran the analysis "
                   f"(the counts above are short by as many bios)")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(report + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"summary": summary, "replays": replays}, f, indent=2)
    print(report)
    wrote = ["summary.txt", "summary.json"]
    if not args.no_picture and draw_access_map(trace, os.path.join(out, "access-map.png")):
        wrote.append("access-map.png")
    print(f"\nwrote {', '.join(wrote)} in {out}")
    if recording.out_of_space:
        raise Failure(f"{out} ran out of space: the summary covers the {trace.nr_bios} bios "
                      f"recorded until then (without --keep-raw a trace takes no room there)",
                      device.EXIT_FAILED)


# ---- the parser -----------------------------------------------------------------

DEVICE_HELP = "the device: /dev/mapper/NAME"


def status_columns(text):
    try:
        return report.parse_columns(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (valid: {', '.join(report.COLUMNS)})") from None


def build_parser():
    top = argparse.ArgumentParser(
        prog="nswap2l", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Create, watch, tune and trace dm-nswap2l devices (one block device "
                    "over Network RAM, flash and disk).",
        epilog=EXIT_CODES)
    top.add_argument("--version", action="version", version=f"nswap2l {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name, func, help_text, epilog=None):
        p = sub.add_parser(name, help=help_text, description=help_text,
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog=(epilog + "\n\n" if epilog else "") + EXIT_CODES)
        p.set_defaults(func=func)
        return p

    p = command("create", cmd_create, "create a device (and swap on it with --swap)",
                "Settings come from --config FILE (INI, e.g. /etc/nswap2l/NAME.conf) and the "
                "options,\nthe options winning.  The key file is loaded into the session keyring "
                "as logon key\nnswap2l:NAME (the table names it) and linked into root's user keyring.\n"
                f"The servers know this client by --client NAME, \"{table.DEFAULT_CLIENT}\" if not given: "
                f"a server run\nwith --clients DIR must hold the key as DIR/{table.DEFAULT_CLIENT} "
                "(or DIR/NAME).\n"
                "Without --reliability (or reliability = in the config file) Network RAM gets "
                "the\nredundancy its servers allow, so that one donor's crash loses no page: "
                "none with one\nserver, mirror with 2 to "
                f"{table.PARITY_MIN_SERVERS - 1}, parity (groups of {table.DEFAULT_PARITY_GROUP}) "
                f"with {table.PARITY_MIN_SERVERS} or more; "
                "--reliability none\nturns it off (status then says \"no redundancy\").\n\nexample:\n"
                "  nswap2l create nswap --netram 10.0.0.21:7000,10.0.0.22:7000 "
                "--key-file /etc/nswap2l/web1.key \\\n"
                "      --client web1 --flash /dev/nvme0n1p3 --disk /dev/sdb2 --prefetch lrs --swap")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)
    p.add_argument("--config", metavar="FILE", help="read the settings from FILE first")
    p.add_argument("--netram", metavar="H:P,...",
                   help="Network RAM servers (nswapd): IPv4:PORT or HOST:PORT, a HOST "
                        "resolved to its IPv4 address once, now")
    p.add_argument("--key-file", metavar="FILE", help="the key the servers know this client by")
    p.add_argument("--client", metavar="NAME",
                   help=f"client name on the servers (default \"{table.DEFAULT_CLIENT}\": a server run "
                        f"with --clients DIR needs the key in DIR/{table.DEFAULT_CLIENT}, "
                        "or in DIR/NAME with --client NAME)")
    p.add_argument("--flash", metavar="DEV", help="flash tier block device")
    p.add_argument("--disk", metavar="DEV", help="disk tier block device")
    p.add_argument("--size", metavar="SIZE",
                   help=f"device size, e.g. 8G or 1.5G ({table.SIZE_HELP}; default: flash + disk; "
                        "needed with Network RAM only)")
    p.add_argument("--timeout", metavar="S",
                   help=f"Network RAM request timeout in seconds (default {table.DEFAULT_TIMEOUT})")
    p.add_argument("--reliability", metavar="R",
                   help="none, mirror or parity[,group=N] (default: none with one server, mirror "
                        f"with 2 to {table.PARITY_MIN_SERVERS - 1}, parity with "
                        f"{table.PARITY_MIN_SERVERS} or more; said on stderr)")
    p.add_argument("--protect", metavar="AEAD",
                   help=f"page protection: {', '.join(table.PROTECTS)} (default {table.DEFAULT_PROTECT})")
    p.add_argument("--placement", metavar="POLICY",
                   help=f"placement policy: {', '.join(table.PLACEMENTS)} (default {table.DEFAULT_PLACEMENT})")
    p.add_argument("--prefetch", metavar="POLICY", help=f"prefetch policy: {', '.join(table.PREFETCH_POLICIES)}")
    p.add_argument("--when", metavar="WHEN", help="prefetch when: pays[:P] (default), always, swapping, idle[:N]")
    p.add_argument("--amount", metavar="AMOUNT", help="prefetch amount: written:P[:CAP], held:P[:CAP] or free:P[:CAP]")
    p.add_argument("--interval", metavar="MS", help="prefetch interval in ms")
    p.add_argument("--overcommit", action="store_true", help="allow a device larger than its tiers")
    p.add_argument("--swap", action="store_true", help="mkswap and swapon --discard it")
    p.add_argument("--priority", metavar="N", help=f"swap priority (default {DEFAULT_SWAP_PRIORITY})")
    p.add_argument("--no-swapon", action="store_true",
                   help="with --swap: mkswap only, the .swap unit of nswap2l-generator swaps on")
    p.add_argument("--print-table", action="store_true", help="print the table line, load nothing")

    p = command("remove", cmd_remove, "swapoff (if swap) and remove a device")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)

    p = command("status", cmd_status, "tiers, servers and counters of devices (default: all)",
                textwrap.fill("-o takes columns from: " + ", ".join(report.COLUMNS) + " (default: " +
                              ", ".join(report.DEFAULT_COLUMNS) + ").", 80) + "\n"
                "--json: a list of records, one per device, every amount of memory or data in\n"
                "bytes (*_bytes).  --prometheus: node_exporter's textfile collector format, e.g.\n"
                "  nswap2l status --prometheus > /var/lib/prometheus/node-exporter/nswap2l.prom.$$ &&\n"
                "  mv /var/lib/prometheus/node-exporter/nswap2l.prom.$$ /var/lib/prometheus/node-exporter/nswap2l.prom")
    p.add_argument("names", metavar="NAME", nargs="*", help="the devices to show (default: every nswap2l device)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="machine-readable: one record per device, in bytes")
    form.add_argument("--prometheus", action="store_true",
                      help="Prometheus text (metrics in bytes and totals, labelled by device)")
    form.add_argument("-l", "--list", dest="columns", action="store_const", const=list(report.DEFAULT_COLUMNS),
                      help="one row per device, with the default columns")
    form.add_argument("-o", "--options", dest="columns", metavar="COLS", type=status_columns,
                      help="one row per device, with these columns (comma-separated; +COLS adds them "
                           "to the default ones)")
    p.add_argument("--noheadings", action="store_true", help="with -l or -o: no heading line")
    p.add_argument("--watch", metavar="S", nargs="?", const=str(DEFAULT_WATCH_SECONDS),
                   help=f"refresh every S seconds (default {DEFAULT_WATCH_SECONDS:g})")

    p = command("servers", cmd_servers, "list, add or remove Network RAM servers",
                "remove drains the server: its pages move elsewhere in the background.")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)
    p.add_argument("action", nargs="?", choices=("add", "remove"),
                   help="add or remove a server (none: list them)")
    p.add_argument("server", metavar="H:P", nargs="?", help="the server: IPv4:PORT or HOST:PORT")

    p = command("resize", cmd_resize, "grow a device (a reload with a larger length)",
                "The pages stay where they are; the new space is empty.  A swap area keeps its\n"
                "size until swapoff, mkswap and swapon.  A device does not shrink.  Without\n"
                "overcommit the device may not outgrow its tiers (the kernel says so).")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)
    p.add_argument("size", metavar="SIZE", help=f"the new size, e.g. 16G ({table.SIZE_HELP})")

    p = command("prefetch", cmd_prefetch, "show or set prefetching (through sysfs)")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)
    p.add_argument("policy", metavar="POLICY", nargs="?",
                   help=f"one of {', '.join(table.PREFETCH_POLICIES)}")
    p.add_argument("--when", metavar="WHEN", help="pays[:P] (default), always, swapping or idle[:N]")
    p.add_argument("--amount", metavar="AMOUNT", help="written:P[:CAP], held:P[:CAP] or free:P[:CAP]")
    p.add_argument("--interval", metavar="MS", help="milliseconds between wake-ups")
    p.add_argument("--json", action="store_true", help="the settings and counters as JSON")

    p = command("profile", cmd_profile, "read/write concurrency histograms")
    p.add_argument("name", metavar="NAME", help=DEVICE_HELP)
    p.add_argument("--reset", action="store_true", help="start the profile again")
    p.add_argument("--plot", metavar="PNG", help="also draw the histograms")
    p.add_argument("--json", action="store_true", help="the histograms as JSON")

    p = command("trace", cmd_trace, "record the device's I/O with blktrace and analyse it",
                "Writes to --out DIR: summary.txt, summary.json and access-map.png (page or swap\n"
                "slot over time, reads and writes; only the picture needs matplotlib).  The\n"
                "summary replays the prefetch policies on the trace: how many reads each would\n"
                "have served from flash, with --when/--amount/--interval as the device would use\n"
                "them.  blktrace's records stream straight into the analysis: nothing\n"
                "else is written unless --keep-raw keeps them (trace.bin and trace.info); then\n"
                "the recording stops when --out runs short of space, and the command writes the\n"
                "summary of what it recorded and exits with status 1.  Memory grows with the\n"
                "bios recorded, up to --max-bios (the README says what a million bios cost).")
    p.add_argument("name", metavar="NAME", nargs="?", help=DEVICE_HELP + " (none with --from)")
    p.add_argument("--seconds", metavar="N", type=int, help="how long to record")
    p.add_argument("--out", metavar="DIR",
                   help="output directory (default: a new one here; with --from, FILE's own)")
    p.add_argument("--keep-raw", action="store_true",
                   help="also keep the raw records in --out, for --from")
    p.add_argument("--max-bios", metavar="N", type=int, default=recorder.DEFAULT_MAX_BIOS,
                   help=f"stop recording after N bios (default {recorder.DEFAULT_MAX_BIOS})")
    p.add_argument("--no-picture", action="store_true",
                   help="write no access-map.png (the summary alone, sooner)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="analyse a trace recorded earlier: its --out DIR, its trace.bin, "
                        "or blkparse text (- for stdin)")
    p.add_argument("--when", default="always",
                   help="prefetch when, for the replay: always or swapping (default always)")
    p.add_argument("--amount", default="written:10", help="prefetch amount, for the replay (default written:10)")
    p.add_argument("--interval", metavar="MS", type=int, default=500,
                   help="prefetch interval, for the replay (default 500)")
    return top


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except Failure as failure:
        print(f"nswap2l {args.command}: {failure}", file=sys.stderr)
        return failure.code
    except OSError as err:      # a file the user named, or a system call, said no
        where = f"{err.filename}: " if err.filename else ""
        print(f"nswap2l {args.command}: {where}{err.strerror or err}", file=sys.stderr)
        return device.EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    return 0
