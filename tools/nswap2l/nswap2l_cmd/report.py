# SPDX-License-Identifier: GPL-2.0
"""Interface: what `nswap2l status` prints of a device: its record (one
shape, every amount of memory or data in bytes, for --json), a row of
columns chosen with -o (as lvs and zramctl print them), and Prometheus
text (node_exporter's textfile collector)."""

from .device import PAGE_SIZE

SECTOR = 512

# the kernel's counts in pages, by where they are in parse_status()'s
# dict: (its name, the record's name, in bytes)
TIER_BYTES = (("capacity", "capacity_bytes"), ("used", "used_bytes"), ("reads", "read_bytes"),
              ("writes", "written_bytes"), ("discards", "discarded_bytes"))
SERVER_BYTES = (("held", "held_bytes"), ("free", "free_bytes"),
                ("evict_asked", "evict_asked_bytes"), ("evict_moved", "evict_moved_bytes"))
DEVICE_BYTES = (("zero_reads", "zero_read_bytes"), ("moved_pages", "moved_bytes"))
PREFETCH_BYTES = (("prefetched", "prefetched_bytes"), ("prefetched_reads", "prefetched_read_bytes"))


def _in_bytes(d, renames):
    """@d with each page count of @renames as bytes under its new name"""
    out = dict(d)
    for old, new in renames:
        out[new] = out.pop(old) * PAGE_SIZE
    return out


def record(name, status, swap):
    """The device's record: parse_status()'s @status in bytes, with its
    name, its /proc/swaps line @swap (or None) and whether it has no
    redundancy; "servers" and "netram" are there (empty, None) without
    Network RAM too, so that every record has one shape."""
    rec = {"name": name, "size_bytes": status["sectors"] * SECTOR, "placement": status["placement"],
           "swap": ({"size_bytes": int(swap[2]) * 1024, "used_bytes": int(swap[3]) * 1024,
                     "priority": int(swap[4])} if swap else None),
           "tiers": [_in_bytes(t, TIER_BYTES) for t in status["tiers"]]}
    rec.update(_in_bytes({k: status[k] for k in ("zero_reads", "nospace_errors", "rerouted_writes",
                                                  "moved_pages")}, DEVICE_BYTES))
    rec["servers"] = [_in_bytes(s, SERVER_BYTES) for s in status.get("servers", [])]
    rec["netram"] = dict(status["netram"]) if "netram" in status else None
    if rec["netram"]:
        rec["netram"]["no_redundancy"] = rec["netram"]["reliability"] == "none"
    rec["prefetch"] = _in_bytes(status["prefetch"], PREFETCH_BYTES)
    rec["table"] = status.get("table")
    return rec


def human(nbytes):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return None


# ---- rows -----------------------------------------------------------------------

def _tier(rec, name):
    return next((t for t in rec["tiers"] if t["tier"] == name), None)


def _tier_bytes(name, key):
    def get(rec):
        t = _tier(rec, name)
        return human(t[key]) if t else "-"
    return get


def _servers_up(rec):
    if rec["netram"] is None:
        return "-"
    return f"{sum(s['state'] == 'up' for s in rec['servers'])}/{len(rec['servers'])}"


# name: (heading, value of a record, right-aligned)
COLUMNS = {
    "name": ("NAME", lambda r: r["name"], False),
    "size": ("SIZE", lambda r: human(r["size_bytes"]), True),
    "swap": ("SWAP", lambda r: "yes" if r["swap"] else "no", False),
    "swap_used": ("SWAPUSED", lambda r: human(r["swap"]["used_bytes"]) if r["swap"] else "-", True),
    "priority": ("PRIO", lambda r: str(r["swap"]["priority"]) if r["swap"] else "-", True),
    "placement": ("PLACEMENT", lambda r: r["placement"], False),
    "netram_used": ("NETRAM", _tier_bytes("netram", "used_bytes"), True),
    "netram_size": ("NETRAM_CAP", _tier_bytes("netram", "capacity_bytes"), True),
    "flash_used": ("FLASH", _tier_bytes("flash", "used_bytes"), True),
    "flash_size": ("FLASH_CAP", _tier_bytes("flash", "capacity_bytes"), True),
    "disk_used": ("DISK", _tier_bytes("disk", "used_bytes"), True),
    "disk_size": ("DISK_CAP", _tier_bytes("disk", "capacity_bytes"), True),
    "servers": ("SERVERS", _servers_up, True),
    "reliability": ("RELIABILITY", lambda r: r["netram"]["reliability"] if r["netram"] else "-", False),
    "protect": ("PROTECT", lambda r: r["netram"]["protect"] if r["netram"] else "-", False),
    "lost": ("LOST", lambda r: str(r["netram"]["pages_lost"]) if r["netram"] else "-", True),
    "prefetch": ("PREFETCH", lambda r: r["prefetch"]["prefetch_policy"], False),
    "prefetched": ("PREFETCHED", lambda r: human(r["prefetch"]["prefetched_bytes"]), True),
}
DEFAULT_COLUMNS = ("name", "size", "swap_used", "priority", "netram_used", "flash_used",
                   "disk_used", "servers", "reliability", "prefetch")


def parse_columns(text):
    """-o's comma-separated column names (a leading + adds them to the
    default ones, as lvs -o +FIELD); ValueError naming a bad one"""
    add = text.startswith("+")
    names = [c.strip() for c in text.lstrip("+").split(",") if c.strip()]
    bad = [c for c in names if c not in COLUMNS]
    if bad or not names:
        raise ValueError(f"unknown column {bad[0]!r}" if bad else "no column given")
    return list(DEFAULT_COLUMNS) + names if add else names


def rows(records, columns, headings=True):
    """One line per record, the columns aligned, with a heading line"""
    table = [[COLUMNS[c][1](r) for c in columns] for r in records]
    if headings:
        table.insert(0, [COLUMNS[c][0] for c in columns])
    widths = [max((len(line[i]) for line in table), default=0) for i in range(len(columns))]
    out = []
    for line in table:
        cells = [cell.rjust(w) if COLUMNS[c][2] else cell.ljust(w)
                 for cell, w, c in zip(line, widths, columns)]
        out.append(" ".join(cells).rstrip())
    return "\n".join(out)


# ---- Prometheus text ------------------------------------------------------------

# name: (type, help); every sample of a name is written under its header
METRICS = {
    "nswap2l_device_info": ("gauge", "A device: its placement, reliability, protection and prefetch policy"),
    "nswap2l_device_size_bytes": ("gauge", "The device's size"),
    "nswap2l_swap_size_bytes": ("gauge", "The device's swap area (swap devices only)"),
    "nswap2l_swap_used_bytes": ("gauge", "Swap in use on the device (swap devices only)"),
    "nswap2l_tier_capacity_bytes": ("gauge", "A tier's capacity"),
    "nswap2l_tier_used_bytes": ("gauge", "Data held on a tier"),
    "nswap2l_tier_read_bytes_total": ("counter", "Data read from a tier"),
    "nswap2l_tier_written_bytes_total": ("counter", "Data written to a tier"),
    "nswap2l_tier_discarded_bytes_total": ("counter", "Data freed on a tier by discards"),
    "nswap2l_zero_read_bytes_total": ("counter", "Reads of pages never written, answered with zeros"),
    "nswap2l_nospace_errors_total": ("counter", "Writes failed because no tier had room"),
    "nswap2l_rerouted_writes_total": ("counter", "Writes a tier gave back that went elsewhere"),
    "nswap2l_moved_bytes_total": ("counter", "Data moved to a new home in the background"),
    "nswap2l_server_up": ("gauge", "1 when a Network RAM server is up"),
    "nswap2l_server_state": ("gauge", "A Network RAM server's state (1 for the one it is in)"),
    "nswap2l_server_held_bytes": ("gauge", "The device's data on a server"),
    "nswap2l_server_free_bytes": ("gauge", "What a server last said it can still take"),
    "nswap2l_server_inflight_requests": ("gauge", "Requests sent to a server and not answered"),
    "nswap2l_server_sent_bytes_total": ("counter", "Bytes sent on a server's connections"),
    "nswap2l_server_received_bytes_total": ("counter", "Bytes received on a server's connections"),
    "nswap2l_server_errors_total": ("counter", "Failed connection attempts, protocol errors and unreadable pages"),
    "nswap2l_server_reconnects_total": ("counter", "Connections made again after a break"),
    "nswap2l_server_evict_asked_bytes_total": ("counter", "Data a server asked back for its machine"),
    "nswap2l_server_evict_moved_bytes_total": ("counter", "Data moved elsewhere in answer"),
    "nswap2l_netram_copies_lost": ("gauge", "Copies lost with a server and not yet made again"),
    "nswap2l_netram_pages_lost_total": ("counter", "Pages that lost every copy"),
    "nswap2l_netram_recovering": ("gauge", "1 while lost copies are being made again"),
    "nswap2l_netram_last_recovery_seconds": ("gauge", "How long the last recovery took"),
    "nswap2l_netram_refused_pages_total": ("counter", "Pages a server gave back that failed their check"),
    "nswap2l_prefetched_bytes_total": ("counter", "Data prefetching moved to flash"),
    "nswap2l_prefetched_read_bytes_total": ("counter", "Reads from flash of prefetched data"),
    "nswap2l_prefetch_cancelled_total": ("counter", "Moves a racing write or discard cancelled"),
    "nswap2l_read_parallelism": ("gauge", "Average reads in flight while there is one, since the last reset"),
    "nswap2l_write_parallelism": ("gauge", "Average writes in flight while there is one, since the last reset"),
}
SERVER_STATES = ("connecting", "up", "down", "failed", "draining", "removed")


def _labels(**labels):
    def escape(v):
        return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


def _samples(rec):
    """(metric name, labels, value) of one record"""
    dev = rec["name"]
    net = rec["netram"] or {}
    yield ("nswap2l_device_info", _labels(device=dev, placement=rec["placement"],
                                          reliability=net.get("reliability", "none"),
                                          protect=net.get("protect", "none"),
                                          prefetch_policy=rec["prefetch"]["prefetch_policy"]), 1)
    yield "nswap2l_device_size_bytes", _labels(device=dev), rec["size_bytes"]
    if rec["swap"]:
        yield "nswap2l_swap_size_bytes", _labels(device=dev), rec["swap"]["size_bytes"]
        yield "nswap2l_swap_used_bytes", _labels(device=dev), rec["swap"]["used_bytes"]
    for t in rec["tiers"]:
        lab = _labels(device=dev, tier=t["tier"])
        yield "nswap2l_tier_capacity_bytes", lab, t["capacity_bytes"]
        yield "nswap2l_tier_used_bytes", lab, t["used_bytes"]
        yield "nswap2l_tier_read_bytes_total", lab, t["read_bytes"]
        yield "nswap2l_tier_written_bytes_total", lab, t["written_bytes"]
        yield "nswap2l_tier_discarded_bytes_total", lab, t["discarded_bytes"]
    lab = _labels(device=dev)
    yield "nswap2l_zero_read_bytes_total", lab, rec["zero_read_bytes"]
    yield "nswap2l_nospace_errors_total", lab, rec["nospace_errors"]
    yield "nswap2l_rerouted_writes_total", lab, rec["rerouted_writes"]
    yield "nswap2l_moved_bytes_total", lab, rec["moved_bytes"]
    for s in rec["servers"]:
        lab = _labels(device=dev, server=s["address"])
        yield "nswap2l_server_up", lab, int(s["state"] == "up")
        for state in SERVER_STATES:
            yield ("nswap2l_server_state", _labels(device=dev, server=s["address"], state=state),
                   int(s["state"] == state))
        yield "nswap2l_server_held_bytes", lab, s["held_bytes"]
        yield "nswap2l_server_free_bytes", lab, s["free_bytes"]
        yield "nswap2l_server_inflight_requests", lab, s["inflight"]
        yield "nswap2l_server_sent_bytes_total", lab, s["sent_bytes"]
        yield "nswap2l_server_received_bytes_total", lab, s["received_bytes"]
        yield "nswap2l_server_errors_total", lab, s["errors"]
        yield "nswap2l_server_reconnects_total", lab, s["reconnects"]
        yield "nswap2l_server_evict_asked_bytes_total", lab, s["evict_asked_bytes"]
        yield "nswap2l_server_evict_moved_bytes_total", lab, s["evict_moved_bytes"]
    if net:
        lab = _labels(device=dev)
        yield "nswap2l_netram_copies_lost", lab, net["copies_lost"]
        yield "nswap2l_netram_pages_lost_total", lab, net["pages_lost"]
        yield "nswap2l_netram_recovering", lab, net["recovering"]
        yield "nswap2l_netram_last_recovery_seconds", lab, net["recovery_ms"] / 1000
        yield "nswap2l_netram_refused_pages_total", lab, net["refused"]
    p = rec["prefetch"]
    lab = _labels(device=dev)
    yield "nswap2l_prefetched_bytes_total", lab, p["prefetched_bytes"]
    yield "nswap2l_prefetched_read_bytes_total", lab, p["prefetched_read_bytes"]
    yield "nswap2l_prefetch_cancelled_total", lab, p["cancelled"]
    yield "nswap2l_read_parallelism", lab, p["read_parallelism"]
    yield "nswap2l_write_parallelism", lab, p["write_parallelism"]


def prometheus(records):
    """Prometheus text exposition of @records: each metric's samples, of
    every device, under its one HELP and TYPE"""
    by_name = {}
    for rec in records:
        for name, labels, value in _samples(rec):
            by_name.setdefault(name, []).append(f"{name}{labels} {value:g}" if isinstance(value, float)
                                                else f"{name}{labels} {value}")
    out = []
    for name, lines in by_name.items():
        kind, text = METRICS[name]
        out += [f"# HELP {name} {text}.", f"# TYPE {name} {kind}"] + lines
    return "\n".join(out) + "\n"
