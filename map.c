// SPDX-License-Identifier: GPL-2.0
/*
 * The core state of a device: one map entry per 4 KiB page naming the tier
 * and slot that hold it (nswap2l.h has the layout), every transition of an
 * entry, and the in-flight tracking that keeps a slot alive while a bio
 * that looked it up may still use it.
 *
 * Entries change only by atomic compare-and-exchange, so the bio path takes
 * no lock: a write and the mover, or a write and a discard, race on one
 * entry and exactly one of them wins.  Everything above (the target, the
 * mover, sysfs, prefetching) goes through these functions; nothing here
 * calls back up.
 */
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "core.h"
#include "map.h"
#include "policy.h"

/*----------------------------------------------------------------
 * Memory
 *--------------------------------------------------------------*/
u64 nswap2l_map_bytes(u64 nr_pages)
{
	return nr_pages * sizeof(atomic64_t);
}

/* kvmalloc() refuses more than INT_MAX bytes; vmalloc() takes any size. */
void *nswap2l_zalloc_large(u64 bytes)
{
	if (bytes <= INT_MAX)
		return kvzalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
	return __vmalloc(bytes, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
}

/*
 * The map lives in RAM: refuse a device whose map would take more than
 * half of it, with the numbers, rather than fail an allocation later.
 */
static atomic64_t *alloc_entries(u64 nr_pages, struct dm_target *ti)
{
	u64 bytes = nswap2l_map_bytes(nr_pages);
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	atomic64_t *entries;

	if (bytes > ram / 2) {
		nswap2l_bad_table(ti, "Device too large for this machine's RAM",
				  "device of %llu pages needs %llu MiB of RAM for its page map (8 bytes a page), more than half of this machine's %llu MiB",
				  nr_pages, DIV_ROUND_UP_ULL(bytes, SZ_1M), ram / SZ_1M);
		return NULL;
	}
	entries = nswap2l_zalloc_large(bytes);
	if (!entries)
		nswap2l_bad_table(ti, "Cannot allocate page map",
				  "cannot allocate the page map of %llu pages (%llu MiB)",
				  nr_pages, DIV_ROUND_UP_ULL(bytes, SZ_1M));
	return entries;
}

int nswap2l_map_init(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti)
{
	struct nswap2l_map *map = &nc->map;
	int id;

	init_waitqueue_head(&map->inflight.drained);
	mutex_init(&map->inflight.wait_mutex);
	spin_lock_init(&map->releases.lock);
	bio_list_init(&map->releases.waiters);
	bio_list_init(&map->releases.space_waiters);
	map->entries = alloc_entries(nr_pages, ti);
	if (!map->entries)
		return -ENOMEM;
	map->nr_pages = nr_pages;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		map->releases.freed[id] = kvcalloc(NSWAP2L_FREE_BATCH, sizeof(u64), GFP_KERNEL);
		if (!map->releases.freed[id]) {
			ti->error = "Cannot allocate discard batch";
			return -ENOMEM;
		}
	}
	return 0;
}

void nswap2l_map_exit(struct nswap2l_map *map)
{
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		kvfree(map->releases.freed[id]);
	kvfree(map->entries);
}

atomic64_t *nswap2l_map_prepare_grow(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti)
{
	return alloc_entries(nr_pages, ti);
}

/* The device is suspended and the mover paused: no entry changes now. */
void nswap2l_map_commit_grow(struct nswap2l_map *map, atomic64_t *entries, u64 nr_pages)
{
	atomic64_t *old = map->entries;

	memcpy(entries, old, nswap2l_map_bytes(map->nr_pages));
	map->entries = entries;
	WRITE_ONCE(map->nr_pages, nr_pages);
	kvfree(old);
}

/*----------------------------------------------------------------
 * In-flight tracking
 *--------------------------------------------------------------*/
unsigned int nswap2l_inflight_enter(struct nswap2l_inflight *inflight)
{
	unsigned int epoch;

	for (;;) {
		epoch = READ_ONCE(inflight->current_epoch);
		atomic_inc(&inflight->count[epoch]);
		/* Pairs with the barrier in nswap2l_inflight_wait(). */
		smp_mb__after_atomic();
		if (READ_ONCE(inflight->current_epoch) == epoch)
			return epoch;
		/* Raced with a flip: join the new epoch instead. */
		nswap2l_inflight_exit(inflight, epoch);
	}
}

void nswap2l_inflight_exit(struct nswap2l_inflight *inflight, unsigned int epoch)
{
	/* A value-returning atomic is a full barrier: waitqueue_active() needs no other. */
	if (atomic_dec_and_test(&inflight->count[epoch]) && waitqueue_active(&inflight->drained))
		wake_up(&inflight->drained);
}

void nswap2l_inflight_wait(struct nswap2l_inflight *inflight)
{
	unsigned int old;

	mutex_lock(&inflight->wait_mutex);
	old = inflight->current_epoch;
	WRITE_ONCE(inflight->current_epoch, old ^ 1);
	smp_mb();
	wait_event(inflight->drained, !atomic_read(&inflight->count[old]));
	mutex_unlock(&inflight->wait_mutex);
}

/*----------------------------------------------------------------
 * Homes
 *--------------------------------------------------------------*/
int nswap2l_alloc_home(struct nswap2l *nc, u64 page, unsigned int nr, unsigned long skip,
		       u64 *entry)
{
	struct nswap2l_placement *placement;
	unsigned long tried = skip;
	int id, r = -ENOSPC;

	rcu_read_lock();
	placement = rcu_dereference(nc->placement);
	while ((id = placement->next_tier(placement, page, tried)) >= 0) {
		struct nswap2l_tier *tier = nc->tiers[id];
		u64 slot;

		tried |= BIT(id);
		r = nswap2l_tier_alloc_slots(tier, nr, &slot);
		if (r > 0) {
			*entry = nswap2l_entry(id, slot);
			break;
		}
	}
	rcu_read_unlock();
	return r;
}

void nswap2l_free_home(struct nswap2l *nc, u64 entry, bool written)
{
	struct nswap2l_tier *tier = nc->tiers[nswap2l_entry_tier(entry)];
	u64 slot = nswap2l_entry_slot(entry);

	nswap2l_tier_free_slots(tier, &slot, 1, written);
}

/*
 * Install @new over the entry whose home is @expected; false if it has
 * another, with that entry in *@seen.
 */
static bool replace_home(atomic64_t *e, u64 expected, u64 new, u64 *seen)
{
	u64 cur = atomic64_read(e);

	/* A write gives the page new contents: no flag of the old home applies. */
	while (nswap2l_entry_home(cur) == expected) {
		u64 old = atomic64_cmpxchg(e, cur, new);

		if (old == cur)
			return true;
		cur = old;	/* only a flag changed: try again */
	}
	*seen = cur;
	return false;
}

int nswap2l_map_place(struct nswap2l *nc, u64 page, unsigned int nr, u64 expected,
		      unsigned long skip, u64 *entry)
{
	atomic64_t *e = &nc->map.entries[page];
	u64 seen = atomic64_read(e);
	int placed, got;

	if (nswap2l_entry_home(seen) != expected) {
		*entry = seen;
		return -EAGAIN;
	}
	got = nswap2l_alloc_home(nc, page, nr, skip, entry);
	if (got < 0)
		return got;
	for (placed = 0; placed < got; placed++) {
		u64 old_home = expected ? nswap2l_run_home(nc, expected, placed) : 0;

		if (!replace_home(&e[placed], old_home, nswap2l_run_home(nc, *entry, placed), &seen))
			break;
	}
	/* Slots past a page that changed meanwhile were never written. */
	while (got > placed) {
		got--;
		nswap2l_free_home(nc, nswap2l_run_home(nc, *entry, got), false);
	}
	if (!placed) {
		*entry = seen;
		return -EAGAIN;
	}
	return placed;
}

/*
 * Test first: most accesses find the bits right and need not dirty the
 * line.  cmpxchg, not or: a lone bit must not resurrect an entry a discard
 * cleared (the epoch keeps the old slot valid for this bio).
 */
u64 nswap2l_map_note_access(struct nswap2l_map *map, u64 page, u64 entry, bool write)
{
	u64 clear = write ? NSWAP2L_ENTRY_MIGRATING : 0;

	for (;;) {
		u64 want = (entry | NSWAP2L_ENTRY_REFERENCED) & ~clear;
		u64 old;

		if (want == entry)
			return entry;
		old = atomic64_cmpxchg(&map->entries[page], entry, want);
		if (old == entry || !old)
			return entry;
		entry = old;	/* flagged, unflagged or moved meanwhile: look again */
	}
}

unsigned int nswap2l_map_note_run(struct nswap2l *nc, u64 page, unsigned int nr, u64 *entry,
				  bool write)
{
	struct nswap2l_map *map = &nc->map;
	u64 first = nswap2l_map_note_access(map, page, *entry, write);
	struct nswap2l_tier *tier = nc->tiers[nswap2l_entry_tier(first)];
	u64 home = nswap2l_entry_home(first);
	unsigned int n;

	nr = min(nr, nswap2l_tier_max_run(tier, nswap2l_entry_slot(first)));
	for (n = 1; n < nr; n++) {
		u64 want = nswap2l_run_home(nc, home, n);
		u64 cur = nswap2l_map_lookup(map, page + n);

		/*
		 * A write places a prefetched page again (find_home()), and a
		 * read counts as prefetched by the first page's bits: a page
		 * prefetched otherwise than the first starts a run of its own.
		 */
		if ((cur ^ first) & (NSWAP2L_ENTRY_PREFETCHED | NSWAP2L_ENTRY_ARM_MASK))
			break;
		if (nswap2l_entry_home(cur) != want ||
		    nswap2l_entry_home(nswap2l_map_note_access(map, page + n, cur, write)) != want)
			break;
	}
	*entry = first;
	return n;
}

unsigned int nswap2l_map_flags_run(struct nswap2l_map *map, u64 page, unsigned int nr, u64 entry)
{
	unsigned int n = 1;

	while (n < nr && !((nswap2l_map_lookup(map, page + n) ^ entry) &
			   (NSWAP2L_ENTRY_PREFETCHED | NSWAP2L_ENTRY_ARM_MASK)))
		n++;
	return n;
}

unsigned int nswap2l_map_unwritten_run(struct nswap2l_map *map, u64 page, unsigned int nr)
{
	unsigned int n = 1;

	while (n < nr && !nswap2l_map_lookup(map, page + n))
		n++;
	return n;
}

bool nswap2l_map_flag_moving(struct nswap2l_map *map, u64 page, u64 home)
{
	u64 cur = atomic64_read(&map->entries[page]);

	while ((cur & ~NSWAP2L_ENTRY_REFERENCED) == home) {
		u64 old = atomic64_cmpxchg(&map->entries[page], cur,
					   cur | NSWAP2L_ENTRY_MIGRATING);

		if (old == cur)
			return true;
		cur = old;
	}
	return false;
}

bool nswap2l_map_replace_flagged(struct nswap2l_map *map, u64 page, u64 home, u64 new_home)
{
	u64 flagged = home | NSWAP2L_ENTRY_MIGRATING;
	u64 cur = atomic64_read(&map->entries[page]);

	while ((cur & ~NSWAP2L_ENTRY_REFERENCED) == flagged) {
		u64 new = new_home ? new_home | (cur & NSWAP2L_ENTRY_REFERENCED) :
				     cur & ~NSWAP2L_ENTRY_MIGRATING;
		u64 old = atomic64_cmpxchg(&map->entries[page], cur, new);

		if (old == cur)
			return true;
		cur = old;
	}
	return false;
}

bool nswap2l_map_relabel(struct nswap2l_map *map, u64 page, u64 home, u64 new_home)
{
	u64 cur = atomic64_read(&map->entries[page]);

	while (nswap2l_entry_home(cur) == home) {
		u64 new = new_home | (cur & NSWAP2L_ENTRY_FLAGS & ~NSWAP2L_ENTRY_MIGRATING);
		u64 old = atomic64_cmpxchg(&map->entries[page], cur, new);

		if (old == cur)
			return true;
		cur = old;	/* only a flag changed: try again */
	}
	return false;
}

/*----------------------------------------------------------------
 * Release after the in-flight epoch: the release queue and discard
 *--------------------------------------------------------------*/
bool nswap2l_release_reserve(struct nswap2l_map *map)
{
	struct nswap2l_releases *rel = &map->releases;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&rel->lock, flags);
	ok = rel->nr_runs < NSWAP2L_RELEASE_RUNS;
	if (ok)
		rel->runs[rel->nr_runs++].nr = 0;
	spin_unlock_irqrestore(&rel->lock, flags);
	return ok;
}

bool nswap2l_release_park(struct nswap2l_map *map, struct bio *bio)
{
	struct nswap2l_releases *rel = &map->releases;
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&rel->lock, flags);
	room = rel->nr_runs < NSWAP2L_RELEASE_RUNS;
	if (!room)
		bio_list_add(&rel->waiters, bio);
	spin_unlock_irqrestore(&rel->lock, flags);
	return room;
}

void nswap2l_release_fill(struct nswap2l_map *map, u64 home, unsigned int nr, u64 keep)
{
	struct nswap2l_releases *rel = &map->releases;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&rel->lock, flags);
	for (i = 0; i < rel->nr_runs && rel->runs[i].nr; i++)
		;
	if (nr) {
		rel->runs[i].home = home;
		rel->runs[i].nr = nr;
		rel->runs[i].keep = keep;
	} else {
		rel->runs[i] = rel->runs[--rel->nr_runs];
	}
	spin_unlock_irqrestore(&rel->lock, flags);
}

/* Taking the runs makes room at once: the writes waiting for it may go on. */
struct bio_list nswap2l_release_take(struct nswap2l_map *map, struct nswap2l_release_batch *batch)
{
	struct nswap2l_releases *rel = &map->releases;
	struct bio_list waiters;
	unsigned int i;

	batch->nr = 0;
	spin_lock_irq(&rel->lock);
	for (i = 0; i < rel->nr_runs; ) {
		if (rel->runs[i].nr) {
			batch->runs[batch->nr++] = rel->runs[i];
			rel->runs[i] = rel->runs[--rel->nr_runs];
		} else {
			i++;	/* reserved, not filled yet */
		}
	}
	rel->freeing = batch->nr;
	waiters = rel->waiters;
	bio_list_init(&rel->waiters);
	spin_unlock_irq(&rel->lock);
	return waiters;
}

bool nswap2l_release_park_for_space(struct nswap2l_map *map, struct bio *bio)
{
	struct nswap2l_releases *rel = &map->releases;
	unsigned long flags;
	unsigned int i;
	bool coming;

	spin_lock_irqsave(&rel->lock, flags);
	coming = rel->freeing;
	for (i = 0; i < rel->nr_runs && !coming; i++)
		coming = rel->runs[i].nr;
	if (coming)
		bio_list_add(&rel->space_waiters, bio);
	spin_unlock_irqrestore(&rel->lock, flags);
	return coming;
}

struct bio_list nswap2l_release_free(struct nswap2l *nc, struct nswap2l_release_batch *batch)
{
	struct nswap2l_releases *rel = &nc->map.releases;
	struct bio_list space_waiters = BIO_EMPTY_LIST;
	unsigned int i, page;

	if (!batch->nr)
		return space_waiters;
	nswap2l_inflight_wait(&nc->map.inflight);
	for (i = 0; i < batch->nr; i++)
		for (page = 0; page < batch->runs[i].nr; page++)
			if (page >= 64 || !(batch->runs[i].keep & BIT_ULL(page)))
				nswap2l_free_home(nc, nswap2l_run_home(nc, batch->runs[i].home, page),
						  true);
	spin_lock_irq(&rel->lock);
	rel->freeing = false;
	space_waiters = rel->space_waiters;
	bio_list_init(&rel->space_waiters);
	spin_unlock_irq(&rel->lock);
	return space_waiters;
}

static void release_freed_slots(struct nswap2l *nc)
{
	struct nswap2l_releases *rel = &nc->map.releases;
	int id;

	nswap2l_inflight_wait(&nc->map.inflight);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!rel->nr_freed[id])
			continue;
		nswap2l_tier_free_slots(tier, rel->freed[id], rel->nr_freed[id], true);
		atomic64_add(rel->nr_freed[id], &tier->discards);
		rel->nr_freed[id] = 0;
	}
}

void nswap2l_map_discard(struct nswap2l *nc, u64 page, u64 end)
{
	struct nswap2l_map *map = &nc->map;
	struct nswap2l_releases *rel = &map->releases;
	bool pending = false;

	for (; page < end; page++) {
		enum nswap2l_tier_id id;
		u64 entry;

		if (!(page % 1024))
			cond_resched();
		if (!atomic64_read(&map->entries[page]))
			continue;
		entry = atomic64_xchg(&map->entries[page], 0);
		if (!entry)
			continue;

		id = nswap2l_entry_tier(entry);
		rel->freed[id][rel->nr_freed[id]++] = nswap2l_entry_slot(entry);
		pending = true;
		if (rel->nr_freed[id] == NSWAP2L_FREE_BATCH) {
			release_freed_slots(nc);
			pending = false;
		}
	}
	if (pending)
		release_freed_slots(nc);
}
