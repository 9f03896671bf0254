# SPDX-License-Identifier: GPL-2.0
"""What a trace says about the workload, and a replay of the prefetch
policies on it.  Pages are 4 KiB (8 sectors): a bio covering sectors
[S, S+N) touches pages S//8 .. (S+N-1)//8; on a swap device a page is a
swap slot.  Only bios count (Trace.bios: the Q events with data)."""
import itertools
import random
import statistics

from .blktrace import KINDS, main_device

PAGE_SECTORS = 8
REPLAYED = ("rr", "random", "lrs", "mrs")      # the fixed Q3 policies
WHEN = ("always", "swapping")
AMOUNTS = ("written", "held")

# The replay's page states, one byte per page.
NETRAM, FLASH = 1, 2
STATE = 3
REFERENCED = 4      # the clock's bit: read or written since the hand passed
UNREAD = 8          # moved to flash and not read there since
# The clock hand passing a page: clears the bit of a page in Network RAM only.
AGE = bytes(b & ~REFERENCED if b & STATE == NETRAM else b for b in range(256))
SCAN_PAGES = 1 << 20    # NSWAP2L_PREFETCH_SCAN_PAGES: most a hand passes per wake-up
RANDOM_WINDOW = 64


def page_range(sector, nsect):
    """The pages a bio of @nsect sectors from @sector touches."""
    return range(sector // PAGE_SECTORS, (sector + nsect - 1) // PAGE_SECTORS + 1)


# ---- summary -------------------------------------------------------------------

def summarise(trace, dev=None):
    """Per-device bios and pages, and on @dev (default the main device) the
    page statistics and sequential runs; a JSON-serialisable dict."""
    if dev is None:
        dev = main_device(trace)
    first, last = trace.span
    summary = {"device": dev, "duration": last - first, "devices": _devices(trace)}
    summary.update(_page_statistics(trace.bios(dev)))
    summary["sequential"] = _sequential(trace.bios(dev))
    return summary


def _devices(trace):
    """Every device of the comments or the event lines, with its bios and pages."""
    table = {}
    for dev in dict.fromkeys(itertools.chain(trace.devices, trace.devices_seen)):
        info = trace.devices.get(dev, {})
        bios, pages = dict.fromkeys(KINDS, 0), dict.fromkeys(KINDS, 0)
        for _, what, sector, nsect in trace.bios(dev):
            bios[what] += 1
            pages[what] += len(page_range(sector, nsect))
        row = table[dev] = {"role": info.get("role", "unknown"), "name": info.get("name", dev)}
        for what in KINDS:
            row[what + "s"], row[what + "_pages"] = bios[what], pages[what]
    return table


def _page_statistics(bios):
    """Distinct pages, pages written once and read many times, and re-reads:
    reads of a page already read since its last write (or discard, which
    forgets it too)."""
    write_bios = {}             # page -> write bios touching it
    read_bios = {}              # page -> read bios touching it
    last_read = {}              # page -> time of its last read since its last write
    page_reads = 0
    intervals = []
    for now, what, sector, nsect in bios:
        pages = page_range(sector, nsect)
        if what == "read":
            page_reads += len(pages)
            for page in pages:
                read_bios[page] = read_bios.get(page, 0) + 1
                before = last_read.get(page)
                if before is not None:
                    intervals.append(now - before)
                last_read[page] = now
            continue
        for page in pages:
            last_read.pop(page, None)
        if what == "write":
            for page in pages:
                write_bios[page] = write_bios.get(page, 0) + 1
    return {
        "pages_touched": len(read_bios.keys() | write_bios.keys()),
        "pages_written": len(write_bios),
        "pages_read": len(read_bios),
        "written_once_read_many": sum(1 for page, n in read_bios.items()
                                      if n >= 2 and write_bios.get(page) == 1),
        "reread_ratio": len(intervals) / page_reads if page_reads else 0.0,
        "reread_interval": {"mean": statistics.fmean(intervals),
                            "median": statistics.median(intervals)} if intervals else None,
    }


class _Runs:
    """Runs of bios of one kind, each starting at the sector where the one
    before it (of that kind) ended."""

    def __init__(self):
        self.bios = self.runs = self.run_bios = self.run_pages = self.longest = 0
        self.start = self.end = None
        self.length = 0     # bios in the run going on

    def add(self, sector, nsect):
        self.bios += 1
        if sector != self.end:
            self.close()
            self.start = sector
        self.length += 1
        self.end = sector + nsect

    def close(self):
        if self.length >= 2:
            pages = (self.end - 1) // PAGE_SECTORS - self.start // PAGE_SECTORS + 1
            self.runs += 1
            self.run_bios += self.length
            self.run_pages += pages
            self.longest = max(self.longest, pages)
        self.length = 0

    def result(self):
        self.close()
        return {"bios": self.bios, "runs": self.runs, "run_bios": self.run_bios,
                "sequential_fraction": self.run_bios / self.bios if self.bios else 0.0,
                "longest_run_pages": self.longest,
                "mean_run_pages": self.run_pages / self.runs if self.runs else 0.0}


def _sequential(bios):
    runs = {"read": _Runs(), "write": _Runs()}
    for _, what, sector, nsect in bios:
        if what in runs:
            runs[what].add(sector, nsect)
    return {what: r.result() for what, r in runs.items()}


# ---- replay of the prefetch policies -------------------------------------------

class _Hand:
    """A place among the pages that keeps it across wake-ups and passes at
    most one lap (and SCAN_PAGES) per wake-up, as nswap2l_hand."""

    def __init__(self, nr_pages):
        self.nr_pages = nr_pages
        self.pos = 0
        self.left = 0

    def begin(self):
        self.left = min(self.nr_pages, SCAN_PAGES)

    def find(self, pages, value, window=None, passed=None):
        """The next page whose byte is @value (None: none is), within
        @window pages of the lap left; the hand stops past it, or where the
        search ended.  @passed(start, end) is told of each stretch passed
        over before it."""
        budget = self.left if window is None else min(window, self.left)
        while budget:
            if self.pos >= self.nr_pages:
                self.pos = 0
            end = min(self.nr_pages, self.pos + budget)
            found = -1 if value is None else pages.find(value, self.pos, end)
            stop = end if found < 0 else found
            if passed:
                passed(self.pos, stop)
            step = stop - self.pos + (found >= 0)
            budget -= step
            self.left -= step
            self.pos += step
            if found >= 0:
                return found
        return None


class _Replay:
    """The device's map as the replay sees it, and a Q3 picker on it."""

    def __init__(self, policy, nr_pages, seed):
        self.pages = bytearray(nr_pages)
        self.hand = _Hand(nr_pages)
        self.rng = random.Random(seed)
        self.touch = REFERENCED if policy in ("lrs", "mrs") else 0
        self.pick = {"none": None, "rr": self.pick_rr, "random": self.pick_random,
                     "lrs": self.pick_lrs, "mrs": self.pick_mrs}[policy]
        self.held = 0
        self.written = 0    # page writes since the last wake-up
        self.prefetched = self.reads = self.flash_reads = self.read_back = 0

    def read(self, pages):
        for page in pages:
            byte = self.pages[page]
            if not byte & STATE:
                continue        # never written: the target reads zeros, no tier
            self.reads += 1
            if byte & STATE == FLASH:
                self.flash_reads += 1
                if byte & UNREAD:
                    self.read_back += 1
            self.pages[page] = (byte & ~UNREAD) | self.touch

    def write(self, pages):
        for page in pages:
            if self.pages[page] & STATE != NETRAM:
                self.held += 1
            self.pages[page] = NETRAM | self.touch
        self.written += len(pages)

    def discard(self, pages):
        stretch = self.pages[pages.start:pages.stop]
        self.held -= stretch.count(NETRAM) + stretch.count(NETRAM | REFERENCED)
        self.pages[pages.start:pages.stop] = bytes(len(pages))

    def wake(self, quota):
        if self.pick:
            self.hand.begin()
            self.pick(quota)

    def move(self, page):
        self.pages[page] = FLASH | UNREAD
        self.held -= 1
        self.prefetched += 1

    def take(self, quota, value, passed=None):
        """Move up to @quota pages whose byte is @value, from the hand on."""
        while quota:
            page = self.hand.find(self.pages, value, passed=passed)
            if page is None:
                return
            self.move(page)
            quota -= 1

    def age(self, start, end):
        self.pages[start:end] = self.pages[start:end].translate(AGE)

    def pick_rr(self, quota):
        self.take(quota, NETRAM)

    def pick_random(self, quota):
        hand = self.hand
        while quota and hand.left:
            hand.pos = self.rng.randrange(hand.nr_pages)
            page = hand.find(self.pages, NETRAM, window=RANDOM_WINDOW)
            if page is not None:
                self.move(page)
                quota -= 1

    def pick_clock(self, quota, value):
        if quota:
            self.take(quota, value, passed=self.age)
        elif value & REFERENCED:
            self.hand.find(self.pages, None, passed=self.age)   # mrs: a lap that only ages

    def pick_lrs(self, quota):
        self.pick_clock(quota, NETRAM)

    def pick_mrs(self, quota):
        self.pick_clock(quota, NETRAM | REFERENCED)


def _amount(amount, default_cap):
    """(basis, percent, cap) of "written:P[:CAP]" or "held:P[:CAP]"."""
    basis, *numbers = str(amount).split(":")
    if basis in AMOUNTS and len(numbers) in (1, 2) and all(n.isdecimal() for n in numbers):
        percent = int(numbers[0])
        cap = int(numbers[1]) if len(numbers) == 2 else default_cap
        if percent <= 100 and cap >= 1:
            return basis, percent, cap
    raise ValueError(f"prefetch amount '{amount}': expected written:P[:CAP] or held:P[:CAP], "
                     f"P 0-100, CAP (default {default_cap}) 1 or more")


def check_replay_settings(when, amount, interval_ms, cap=4096):
    """(basis, percent, cap) of settings replay_policies() can model;
    ValueError saying what is wrong otherwise."""
    if when not in WHEN:
        raise ValueError(f"prefetch when '{when}': the replay models {' and '.join(WHEN)} "
                         "(idle needs the bios in flight, and the trace records only their queueing)")
    if str(amount).startswith("free:"):
        raise ValueError(f"prefetch amount '{amount}': the replay gives Network RAM no size, "
                         "so it is never short of room (model written:P or held:P)")
    basis, percent, cap = _amount(amount, cap)
    if not interval_ms > 0:
        raise ValueError(f"prefetch interval '{interval_ms}': must be more than 0 ms")
    return basis, percent, cap


def _ns(seconds):
    return round(seconds * 1e9)


def replay_policies(trace, policies, dev=None, when="always", amount="written:10", cap=4096,
                    interval_ms=500, nr_pages=None, seed=1):
    """How much of the read traffic of @dev (default the main device) each
    Q3 policy of @policies would have served from flash: the policies side
    by side, in one pass over the bios.  The model mirrors prefetch.c and
    policy/prefetch_*.c:

    - Every written page goes to Network RAM ("netram"); a write to a page on
      flash puts it back in Network RAM; a discard forgets the page.  A read
      of a page never written is no tier's and is not counted.
    - Wake-ups every @interval_ms of trace time from the trace's first event,
      up to the last bio; a wake-up comes before a bio of the same time.
      written = page writes since the last wake-up, held = pages now in
      Network RAM.  Q1 @when: "always", or "swapping" (only if written > 0).
      Q2 @amount: "written:P[:CAP]" -> written*P//100, "held:P[:CAP]" ->
      held*P//100, at most CAP (default @cap) pages.
    - Q3 moves that many pages from Network RAM to flash, at once (the
      kernel moves them 32 at a time, and a racing write wins; flash never
      fills here).  A hand over page numbers 0..nr_pages-1 (default: the
      highest page seen + 1) keeps its place across wake-ups and passes at
      most one lap per wake-up:
        rr      takes every Network RAM page it reaches;
        random  starts at a random page (random.Random(@seed)) for each
                page and takes the first Network RAM page within 64 pages
                up, or gives the start up for another;
        lrs/mrs a clock over a referenced bit that every read and write
                sets: at each Network RAM page it passes the hand clears
                the bit; lrs takes the pages whose bit was clear, mrs
                those whose bit was set.  At a wake-up with nothing to
                take, mrs's hand still sweeps its lap, ageing the bits;
                lrs's moves only while it looks for pages (CLOCK).
        none    never prefetches (its wake-ups are counted all the same).
    - A read of a page on flash is served from flash.

    Returns, for each policy, {"policy", "when", "amount", "interval_ms",
    "wakeups", "prefetched" (pages moved), "reads" (page reads of written
    pages), "flash_reads", "served_fraction", "prefetched_never_read" (moved
    pages not read from flash before being rewritten, discarded or the end)}.
    """
    for policy in policies:
        if policy != "none" and policy not in REPLAYED:
            raise ValueError(f"prefetch policy '{policy}': unknown to the replay "
                             f"(valid: none {' '.join(REPLAYED)})")
    basis, percent, cap = check_replay_settings(when, amount, interval_ms, cap)
    if dev is None:
        dev = main_device(trace)
    # The pages up to that of the last sector a bio touches.
    end = max((sector + nsect for _, _, sector, nsect in trace.bios(dev)), default=0)
    needed = -(-end // PAGE_SECTORS)
    if nr_pages is None:
        nr_pages = needed
    elif needed > nr_pages:
        raise ValueError(f"nr_pages {nr_pages}: the trace touches page {needed - 1}")

    models = [_Replay(policy, nr_pages, seed) for policy in policies]
    # kind -> the models' methods of that name
    access = {what: [getattr(model, what) for model in models] for what in KINDS}
    step = max(1, _ns(interval_ms / 1000))
    next_wakeup = _ns(trace.span[0]) + step
    wakeups = 0
    for time, what, sector, nsect in trace.bios(dev):
        now = _ns(time)
        while next_wakeup <= now:
            wakeups += 1
            next_wakeup += step
            for model in models:
                written, model.written = model.written, 0
                quota = 0
                if when == "always" or written:
                    wanted = written if basis == "written" else model.held
                    quota = min(wanted * percent // 100, cap)
                model.wake(quota)
        pages = page_range(sector, nsect)
        for apply in access[what]:
            apply(pages)
    return [{"policy": policy, "when": when, "amount": amount, "interval_ms": interval_ms,
             "wakeups": wakeups, "prefetched": model.prefetched, "reads": model.reads,
             "flash_reads": model.flash_reads,
             "served_fraction": model.flash_reads / model.reads if model.reads else 0.0,
             "prefetched_never_read": model.prefetched - model.read_back}
            for policy, model in zip(policies, models)]


def replay(trace, policy, dev=None, **kw):
    """replay_policies() of one @policy."""
    return replay_policies(trace, [policy], dev, **kw)[0]


def replay_all(trace, dev=None, **kw):
    """replay_policies() of each fixed Q3 policy: rr, random, lrs, mrs."""
    return replay_policies(trace, REPLAYED, dev, **kw)


# ---- report ----------------------------------------------------------------------

def _table(rows, left=1):
    """Aligned lines: the first @left columns to the left, the others to the right."""
    rows = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if i < left else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def _percent(fraction):
    return f"{100 * fraction:.1f} %"


def _duration(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def format_summary(summary, replays):
    """A plain-text report of summarise() and replay_all()."""
    dev = summary["device"]
    devices = summary["devices"]
    name = devices.get(dev, {}).get("name", dev)
    title = f"Trace of {name} ({dev})" if dev else "Trace without bios"
    lines = [f"{title}: {summary['duration']:.3f} s, {len(devices)} devices", ""]

    rows = [["device", "role", "name"] +
            [f"{what} {unit}" for what in KINDS for unit in ("bios", "pages")]]
    for d, row in devices.items():
        rows.append([d, row["role"], row["name"]] +
                    [row[what + key] for what in KINDS for key in ("s", "_pages")])
    lines += _table(rows, left=3)

    interval = summary["reread_interval"]
    lines += ["", f"Pages of {dev or 'no device'} (4 KiB; swap slots on a swap device):"]
    lines += ["  " + line for line in _table([
        ["read or written", summary["pages_touched"]],
        ["written", summary["pages_written"]],
        ["read", summary["pages_read"]],
        ["written once, read 2+ times", summary["written_once_read_many"]],
        ["re-reads (of page reads)", _percent(summary["reread_ratio"])],
        ["re-read interval", f"mean {_duration(interval['mean'])}, median "
                             f"{_duration(interval['median'])}" if interval else "none"],
    ], left=2)]

    lines += ["", "Sequential runs (bios of a kind, each starting where the one before ended):"]
    rows = [["", "bios", "runs", "bios in runs", "sequential", "longest run", "mean run"]]
    for what, runs in summary["sequential"].items():
        rows.append([what, runs["bios"], runs["runs"], runs["run_bios"],
                     _percent(runs["sequential_fraction"]), f"{runs['longest_run_pages']} pages",
                     f"{runs['mean_run_pages']:.1f} pages"])
    lines += _table(rows)

    if replays:
        first = replays[0]
        lines += ["", "Prefetch replay: reads of written pages that flash would have served",
                  f"(when={first['when']}, amount={first['amount']}, a wake-up every "
                  f"{first['interval_ms']} ms, {first['wakeups']} wake-ups):"]
        rows = [["policy", "prefetched", "reads from flash", "served", "prefetched never read"]]
        for r in replays:
            rows.append([r["policy"], r["prefetched"], f"{r['flash_reads']} of {r['reads']}",
                         _percent(r["served_fraction"]), r["prefetched_never_read"]])
        lines += _table(rows)
    best = max(replays, key=lambda r: r["flash_reads"], default=None)
    lines.append("")
    if best and best["flash_reads"]:
        lines.append(f"best policy on this trace: {best['policy']} "
                     f"({_percent(best['served_fraction'])} of reads from flash)")
    else:
        lines.append("no policy helped on this trace: none would have served a read from flash")
    return "\n".join(lines)
