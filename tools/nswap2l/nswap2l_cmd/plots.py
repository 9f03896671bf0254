# SPDX-License-Identifier: GPL-2.0
"""Pictures: the swap-slot access map of a trace (Fig. 2 of the Nswap2L
paper) and the concurrency histograms of a device's profile.  matplotlib is
imported only here, and only when a picture is drawn."""
from .analysis import page_range
from .blktrace import main_device

DPI = 100
ACCESS_MAP_SIZE = (1200, 800)       # pixels
PROFILE_SIZE = (1200, 600)
MAX_POINTS = 200000                 # a big trace is drawn evenly subsampled
COLOURS = {"read": "tab:blue", "write": "tab:red", "discard": "#9ad59a"}
FEW_POINTS = 5000                   # below that, bigger markers
PROFILE_BUCKETS = 65                # profiler.c: 0..63 bios in flight, and 64 or more
MIN_BUCKETS_SHOWN = 8


def require_matplotlib():
    """matplotlib, set to draw with Agg; RuntimeError if it is missing."""
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("drawing a picture needs matplotlib "
                           "(apt-get install python3-matplotlib)") from None
    matplotlib.use("Agg")
    return matplotlib


def _figure(size):
    """A matplotlib Figure of @size pixels, drawn with Agg."""
    require_matplotlib()
    from matplotlib.figure import Figure
    return Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI)


def _save(fig, path):
    # No bbox_inches="tight": the picture keeps exactly the figure's size.
    fig.savefig(path, dpi=DPI)


def _access_points(trace, dev, limit):
    """({kind: (times, pages)}, every how many page accesses one is kept,
    page accesses in all) of @dev's bios, times from the trace's start."""
    total = sum(len(page_range(sector, nsect)) for _, _, sector, nsect in trace.bios(dev))
    step = max(1, -(-total // limit))
    start = trace.span[0]
    points = {}
    seen = 0
    for time, what, sector, nsect in trace.bios(dev):
        pages = page_range(sector, nsect)
        kept = pages[-seen % step::step]
        times, slots = points.setdefault(what, ([], []))
        times.extend([time - start] * len(kept))
        slots.extend(kept)
        seen += len(pages)
    return points, step, total


def access_map(trace, path, dev=None, title=None):
    """The pages (swap slots) each bio of @dev (default the main device)
    touched, over time: reads and writes (and discards) in their colours."""
    fig = _figure(ACCESS_MAP_SIZE)
    if dev is None:
        dev = main_device(trace)
    name = trace.devices.get(dev, {}).get("name", dev)
    points, step, total = _access_points(trace, dev, MAX_POINTS)
    size = 4 if total // step < FEW_POINTS else 1.5
    ax = fig.add_subplot()
    for what in ("discard", "write", "read"):     # reads on top
        if what in points:
            times, slots = points[what]
            ax.plot(times, slots, linestyle="none", marker="s", markersize=size,
                    markeredgewidth=0, color=COLOURS[what], label=f"{what}s")
    if points:
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], loc="upper right", markerscale=8 / size)
    else:
        ax.text(0.5, 0.5, "no bios on this device", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_xlabel("time since the start of the trace (s)")
    ax.set_ylabel("page (swap slot)")
    ax.grid(alpha=0.3)
    if title is None:
        title = f"Pages accessed on {name} ({dev})" if dev else "No bios in the trace"
    if step > 1:
        title += f"\n(one page access in {step} drawn, of {total:,})"
    ax.set_title(title)
    _save(fig, path)


def _hist(values):
    """A histogram of the profile as PROFILE_BUCKETS ints ([] if it has none)."""
    hist = [int(v) for v in values or []]
    return hist + [0] * (PROFILE_BUCKETS - len(hist)) if hist else []


def _busy_shares(hist, top):
    """Per cent of the samples with 1 or more bios in flight, at 1..@top."""
    busy = sum(hist[1:])
    return [100 * n / busy if busy else 0.0 for n in hist[1:top + 1]]


def _parallelism(profile, key, hist):
    """The profile's own figure, else the mean over the busy samples."""
    if key in profile:
        return float(profile[key])
    busy = sum(hist[1:])
    return sum(k * n for k, n in enumerate(hist)) / busy if busy else 0.0


def _concurrency_panel(ax, profile, direction):
    device = _hist(profile.get(f"{direction}_hist"))
    suffix = f"_{direction}_hist"
    tiers = {key[:-len(suffix)]: _hist(value) for key, value in profile.items()
             if key.endswith(suffix) and isinstance(value, list) and any(value[1:])}
    hists = [device] + list(tiers.values())
    top = max([MIN_BUCKETS_SHOWN] + [k for hist in hists for k, n in enumerate(hist) if k and n])
    counts = range(1, top + 1)
    parallelism = _parallelism(profile, f"{direction}_parallelism", device)
    if device:
        ax.bar(counts, _busy_shares(device, top), color="0.7", label=f"device ({parallelism:.2f})")
    for tier, hist in tiers.items():
        tier_parallelism = _parallelism(profile, f"{tier}_{direction}_parallelism", hist)
        ax.plot(counts, _busy_shares(hist, top), marker="o", markersize=3,
                label=f"{tier} ({tier_parallelism:.2f})")
    if device or tiers:
        ax.legend(title="average in flight")
    else:
        ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(f"{direction}s: average parallelism {parallelism:.2f}")
    last = f" ({top} = that many or more)" if top == PROFILE_BUCKETS - 1 else ""
    ax.set_xlabel(f"{direction} bios in flight at a sample{last}")
    ax.set_ylabel("share of the samples with bios in flight (%)")
    ax.set_xlim(0.5, top + 0.5)
    ax.grid(axis="y", alpha=0.3)


def profile_histograms(profile, path, title=None):
    """Reads and writes in flight, from /sys/kernel/nswap2l/<name>/profile
    parsed into a dict: bars for the device, a line per tier."""
    fig = _figure(PROFILE_SIZE)
    for ax, direction in zip(fig.subplots(1, 2), ("read", "write")):
        _concurrency_panel(ax, profile, direction)
    fig.suptitle(title or "Bios in flight")
    _save(fig, path)
