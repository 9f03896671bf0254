// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: a device-mapper target presenting one block device over
 * Network RAM, flash and disk tiers (the interface layer).
 *
 * Every 4 KiB page of the device has an 8-byte map entry naming the tier and
 * slot that hold it (map.c).  Reads and writes of a mapped page are remapped
 * to the tier; the first write of a page asks the placement policy for a
 * tier and allocates a slot there.  Discard frees slots.  Contents are not
 * persistent: the map lives in RAM, as a swap device or a scratch
 * filesystem needs.
 *
 * The device's state (map, tiers, connections, mover) lives as long as the
 * mapped device, not as long as one table: a table reload that keeps every
 * page reachable finds the state through the mapped device (dm-thin's pool
 * registry), prepares its changes in its constructor and applies them when
 * it is resumed; any other reload is refused before anything changes.
 *
 * Table line:
 *   <start> <len> nswap2l <#args> [netram=<addr:port>[,...] key=<keyspec> [client=<name>]]
 *                                 [flash=<dev>] [disk=<dev>] [timeout=<s>]
 *                                 [placement=<policy>] [overcommit]
 *                                 [prefetch=<policy>[,when=..][,amount=..][,interval=..]]
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "nswap2l.h"

unsigned int nswap2l_fault_hold_ms;
module_param_named(fault_hold_ms, nswap2l_fault_hold_ms, uint, 0644);
MODULE_PARM_DESC(fault_hold_ms,
		 "Testing only: hold every read and write up to this many ms (a random time each) between its map lookup and its tier (0: off)");

/* Per-bio state. */
struct nswap2l_bio {
	u64 page;
	u64 slot;		/* where the bio was sent: tier and slot */
	unsigned long held_until;	/* fault injection */
	u64 start_ns;		/* profiler */
	u8 tier;
	u8 profiled_tier;	/* the tier it is counted in flight on */
	u8 epoch;		/* for end_io */
	u8 read_tries;		/* failed reads: the next goes to another copy */
	bool give_up;		/* failed for good: end_io completes it */
};

/* One loaded table: ti->private.  Several may share one device (reload). */
struct nswap2l_table {
	struct dm_target *ti;
	struct nswap2l *nc;
	struct dm_dev *devs[NSWAP2L_NR_TIERS];	/* this table's device references */
	u64 nr_pages;

	/* The options of this table line. */
	const char *placement_name;		/* a policy type's static name */
	bool overcommit;
	struct nswap2l_prefetch_config prefetch;
	void *tier_args[NSWAP2L_NR_TIERS];	/* the tier types' own options */

	/* A reload: changes prepared by the constructor, applied on resume. */
	bool pending;
	atomic64_t *grown_map;
	struct nswap2l_placement *new_placement;
	struct nswap2l_picker *new_picker;
	void *tier_changes[NSWAP2L_NR_TIERS];
};

/* A table line, parsed; the strings point into the constructor's argv. */
struct table_args {
	const char *tiers[NSWAP2L_NR_TIERS];
	/* The words a tier type owns, by its opts->keys[]. */
	const char *tier_opts[NSWAP2L_NR_TIERS][NSWAP2L_TIER_MAX_OPTS];
	const char *placement;
	const char *prefetch;
	bool overcommit;
};

static const struct nswap2l_tier_type *const tier_types[] = {
	&nswap2l_netram_tier,
	&nswap2l_flash_tier,
	&nswap2l_disk_tier,
};

/* Devices by mapped device: a reload finds the state of its device here. */
static LIST_HEAD(registry);
static DEFINE_MUTEX(registry_mutex);

/*----------------------------------------------------------------
 * Bio path
 *--------------------------------------------------------------*/
static void defer_bio(struct nswap2l *nc, struct bio *bio)
{
	nswap2l_add_bio(&nc->deferred_lock, &nc->deferred_bios, bio);
	queue_work(nc->bio_wq, &nc->deferred_work);
}

static void defer_discard(struct nswap2l *nc, struct bio *bio)
{
	nswap2l_add_bio(&nc->discard_lock, &nc->discard_bios, bio);
	queue_work(nc->discard_wq, &nc->discard_work);
}

/*
 * A place on the release queue, taken before a write replaces the entry so
 * that queueing the old home cannot fail; false when the queue is full.
 */
static bool reserve_release(struct nswap2l *nc)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&nc->discard_lock, flags);
	ok = nc->nr_releases < NSWAP2L_RELEASE_RUNS;
	if (ok)
		nc->releases[nc->nr_releases++].nr = 0;
	spin_unlock_irqrestore(&nc->discard_lock, flags);
	return ok;
}

/*
 * A refused write that found the release queue full waits until the
 * discard worker takes the queued runs.  That worker then waits for
 * in-flight bios, so the write leaves its epoch meanwhile (it sends
 * nothing while it waits, and no piece of it is in flight: it waits before
 * it splits) and enters a new one when it goes on.
 */
static void wait_for_release(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	unsigned long flags;
	bool room;

	nswap2l_inflight_exit(&nc->map.inflight, nb->epoch);
	nb->epoch = NSWAP2L_NO_EPOCH;
	spin_lock_irqsave(&nc->discard_lock, flags);
	room = nc->nr_releases < NSWAP2L_RELEASE_RUNS;
	if (!room)
		bio_list_add(&nc->release_waiters, bio);
	spin_unlock_irqrestore(&nc->discard_lock, flags);
	if (room)
		defer_bio(nc, bio);
}

/* Fill the reservation (@nr == 0: give it back). */
static void queue_release(struct nswap2l *nc, u64 home, unsigned int nr, u64 keep)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&nc->discard_lock, flags);
	for (i = 0; i < nc->nr_releases && nc->releases[i].nr; i++)
		;
	if (nr) {
		nc->releases[i].home = home;
		nc->releases[i].nr = nr;
		nc->releases[i].keep = keep;
	} else {
		nc->releases[i] = nc->releases[--nc->nr_releases];
	}
	spin_unlock_irqrestore(&nc->discard_lock, flags);
	if (nr)
		queue_work(nc->discard_wq, &nc->discard_work);
}

/*
 * Free the queued slots once the bios that may still read them are done.
 * Taking them makes room at once: writes waiting for room go on.
 */
static void release_slots(struct nswap2l *nc)
{
	struct nswap2l_release runs[NSWAP2L_RELEASE_RUNS];
	unsigned int i, n = 0, page;
	struct bio_list waiters;
	struct bio *bio;

	spin_lock_irq(&nc->discard_lock);
	for (i = 0; i < nc->nr_releases; ) {
		if (nc->releases[i].nr) {
			runs[n++] = nc->releases[i];
			nc->releases[i] = nc->releases[--nc->nr_releases];
		} else {
			i++;	/* reserved, not filled yet */
		}
	}
	waiters = nc->release_waiters;
	bio_list_init(&nc->release_waiters);
	spin_unlock_irq(&nc->discard_lock);
	while ((bio = bio_list_pop(&waiters)))
		defer_bio(nc, bio);
	if (!n)
		return;
	nswap2l_inflight_wait(&nc->map.inflight);
	for (i = 0; i < n; i++)
		for (page = 0; page < runs[i].nr; page++)
			if (page >= 64 || !(runs[i].keep & BIT_ULL(page)))
				nswap2l_free_home(nc, nswap2l_run_home(nc, runs[i].home, page), true);
}

/*
 * Wait until the slots queued for release so far are freed (the discard
 * worker frees them once the bios that may read them are done).
 */
void nswap2l_flush_releases(struct nswap2l *nc)
{
	flush_work(&nc->discard_work);
}

static void discard_work(struct work_struct *work)
{
	struct nswap2l *nc = container_of(work, struct nswap2l, discard_work);
	struct bio_list bios = nswap2l_take_bios(&nc->discard_lock, &nc->discard_bios);
	struct bio *bio;

	release_slots(nc);
	while ((bio = bio_list_pop(&bios))) {
		/* nswap2l_dm_map() made bi_sector relative to the target. */
		sector_t start = bio->bi_iter.bi_sector;

		/* Only whole pages lose their data; partial ones are left alone. */
		nswap2l_map_discard(nc, NSWAP2L_SECTOR_TO_PAGE(start + NSWAP2L_PAGE_SECTORS - 1),
				    NSWAP2L_SECTOR_TO_PAGE(start + bio_sectors(bio)));
		bio_endio(bio);
	}
}

static unsigned int bio_pages(struct bio *bio)
{
	return bio_sectors(bio) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT);
}

/*
 * A write to pages that prefetching moved to flash, or that a write-once
 * tier holds: new contents, which the placement policy places (Network RAM
 * first) as it places any new page; their old slots are freed once the bios
 * that may read them are done.  Returns the run placed, with its entry in
 * *@entry; 0 if the release queue is full or no tier has room (the caller
 * updates in place, or on a write-once tier reroutes the write); -EAGAIN
 * if the first page changed meanwhile.
 */
static int place_again(struct nswap2l *nc, u64 page, unsigned int nr, u64 *entry)
{
	bool prefetched = *entry & NSWAP2L_ENTRY_PREFETCHED;
	u64 home = nswap2l_entry_home(*entry);
	int r;

	if (!reserve_release(nc))
		return 0;
	r = nswap2l_map_place(nc, page, nr, home, entry);
	if (r > 0) {
		queue_release(nc, home, r, 0);
		if (prefetched)
			nswap2l_prefetch_note_rewritten(nc, r);
		return r;
	}
	queue_release(nc, 0, 0, 0);
	return r == -EAGAIN ? r : 0;
}

/*
 * A write-once tier never takes a page again under its slot (a donor
 * could give back either version): a write that found no new home now
 * goes through reroute_write(), which waits for the release queue or fails
 * the bio with no space.  The bio is cut to the run of its old home.
 */
static void reroute_write_once(struct nswap2l *nc, struct bio *bio, u64 entry)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	unsigned int nr = nswap2l_map_note_run(nc, nb->page, bio_pages(bio), &entry, true);

	dm_accept_partial_bio(bio, NSWAP2L_PAGE_TO_SECTOR(nr));
	nb->tier = nswap2l_entry_tier(entry);
	nb->slot = nswap2l_entry_slot(entry);
	defer_bio(nc, bio);
}

/*
 * Find the home of the bio's first page, placing pages written for the
 * first time, and keep the longest run of pages from there that goes to one
 * home (dm sends the rest of the bio again).  False if the bio was
 * completed here (a read of pages never written, or no room for a page) or
 * handed to the worker (reroute_write_once()).
 */
static bool find_home(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	bool write = bio_data_dir(bio) == WRITE;
	unsigned int nr;
	u64 entry;
	int r;

again:
	nr = bio_pages(bio);
	entry = nswap2l_map_lookup(&nc->map, nb->page);
	if (entry && write && ((entry & NSWAP2L_ENTRY_PREFETCHED) ||
			       nc->tiers[nswap2l_entry_tier(entry)]->write_once)) {
		r = place_again(nc, nb->page, nr, &entry);
		if (r < 0)
			goto again;
		if (!r && nc->tiers[nswap2l_entry_tier(entry)]->write_once) {
			reroute_write_once(nc, bio, entry);
			return false;
		}
		if (r)
			nr = r;
	} else if (!entry) {
		nr = nswap2l_map_unwritten_run(&nc->map, nb->page, nr);
		if (!write) {
			dm_accept_partial_bio(bio, NSWAP2L_PAGE_TO_SECTOR(nr));
			zero_fill_bio(bio);
			this_cpu_add(nc->stats->zero_reads, nr);
			bio_endio(bio);
			return false;
		}
		r = nswap2l_map_place(nc, nb->page, nr, 0, &entry);
		if (r == -ENOSPC) {
			atomic64_inc(&nc->nospace_errors);
			nb->give_up = true;
			bio->bi_status = BLK_STS_NOSPC;
			bio_endio(bio);
			return false;
		}
		/* A concurrent write placed the first page: look at its home again. */
		if (r == -EAGAIN)
			goto again;
		nr = r;
	}
	nr = nswap2l_map_note_run(nc, nb->page, nr, &entry, write);
	dm_accept_partial_bio(bio, NSWAP2L_PAGE_TO_SECTOR(nr));
	nb->tier = nswap2l_entry_tier(entry);
	nb->slot = nswap2l_entry_slot(entry);
	nswap2l_stats_count_bio(nc, bio, nb->tier, nr);
	if (!write && (entry & NSWAP2L_ENTRY_PREFETCHED))
		this_cpu_add(nc->stats->prefetched_reads[nswap2l_entry_arm(entry)], nr);
	nb->profiled_tier = nb->tier;
	nb->start_ns = nswap2l_profile_start(nc, nb->tier, bio_data_dir(bio));
	return true;
}

/* To the home find_home() chose; a DM_MAPIO_* code. */
static int send_to_home(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	struct nswap2l_tier *tier = nc->tiers[nb->tier];

	return nswap2l_tier_map(tier, bio, nb->slot);
}

static void submit_to_home(struct nswap2l *nc, struct bio *bio)
{
	if (send_to_home(nc, bio) == DM_MAPIO_REMAPPED)
		submit_bio_noacct(bio);
}

/*
 * Split the first @nr pages off a bio the core sends again: sent to
 * @entry's home on their own (0: completed, there is nothing to write),
 * chained to the bio, which keeps the pages after them.  The caller counts
 * the pages.
 */
static void split_front(struct nswap2l *nc, struct bio *bio, unsigned int nr, u64 entry)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	struct bio *front = bio_split(bio, NSWAP2L_PAGE_TO_SECTOR(nr), GFP_NOIO, &nc->split_bios);
	u64 old_home = nswap2l_entry(nb->tier, nb->slot);

	/*
	 * A bio split before, whose pieces all completed, has no count left;
	 * chained again from there, its first piece would complete it while
	 * the rest is in flight.  Not chained now, nobody reads the count:
	 * start it where bio_init() does.
	 */
	if (!bio_flagged(bio, BIO_CHAIN))
		atomic_set(&bio->__bi_remaining, 1);
	bio_chain(front, bio);
	if (!entry) {
		bio_endio(front);
	} else {
		struct nswap2l_tier *tier = nc->tiers[nswap2l_entry_tier(entry)];

		if (nswap2l_tier_map(tier, front, nswap2l_entry_slot(entry)) == DM_MAPIO_REMAPPED)
			submit_bio_noacct(front);
	}
	nb->page += nr;
	nb->slot = nswap2l_entry_slot(nswap2l_run_home(nc, old_home, nr));
	/* dm's end_io sees only this bio: it cannot retry a piece. */
	nb->give_up = true;
}

/*
 * A write its tier could not store (a full or failed server): give its pages
 * new homes and send it there, in one piece if one run takes every page.
 * The old homes, one run (a Network RAM bio has at most 64 pages), are
 * freed after the bios that may still read them (a move copying a page, a
 * read racing the write).  Returns false to complete the bio with
 * bio->bi_status; true if sent, or waiting for room to queue the old homes.
 */
static bool reroute_write(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	u64 old_home = nswap2l_entry(nb->tier, nb->slot), keep = 0, entry;
	unsigned int done, handled = 0, nr = bio_pages(bio);
	int r;

	if (nb->epoch == NSWAP2L_NO_EPOCH)	/* back from wait_for_release() */
		nb->epoch = nswap2l_inflight_enter(&nc->map.inflight);
	if (!reserve_release(nc)) {
		wait_for_release(nc, bio);
		return true;
	}
	for (;;) {
		r = nswap2l_map_place(nc, nb->page, nr, nswap2l_run_home(nc, old_home, handled),
				      &entry);
		if (r == -ENOSPC) {
			atomic64_inc(&nc->nospace_errors);
			bio->bi_status = BLK_STS_NOSPC;
			break;
		}
		if (r > 0) {
			done = r;
		} else {
			/*
			 * The first page was discarded meanwhile (the write lost
			 * the race, nothing to keep) or another write gave it a
			 * new home: follow that one, unless its tier is
			 * write-once, which never takes a slot twice: there the
			 * other write, placed last, wins.  Either freed the old
			 * home.
			 */
			done = 1;
			if (handled < 64)
				keep |= BIT_ULL(handled);
			if (entry && nc->tiers[nswap2l_entry_tier(entry)]->write_once)
				entry = 0;
			if (entry)
				entry = nswap2l_map_note_access(&nc->map, nb->page, entry, true);
		}
		handled += done;
		if (done == nr) {
			bio->bi_status = BLK_STS_OK;
			break;
		}
		if (entry)
			nswap2l_stats_count_bio(nc, bio, nswap2l_entry_tier(entry), done);
		split_front(nc, bio, done, entry);
		nr -= done;
	}
	/* Part of the pages may have reached the old homes. */
	queue_release(nc, old_home, handled, keep);
	if (bio->bi_status || !entry)
		return false;
	nb->tier = nswap2l_entry_tier(entry);
	nb->slot = nswap2l_entry_slot(entry);
	nswap2l_stats_count_bio(nc, bio, nb->tier, nr);
	submit_to_home(nc, bio);
	return true;
}

/*
 * A failed read longer than its tier now takes in one bio (mapped before a
 * Network RAM server came back with a smaller message limit): read it again
 * in pieces the tier takes, chained to it.  False if its length was not
 * the reason.
 */
static bool split_read(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	unsigned int max = nswap2l_tier_max_run(nc->tiers[nb->tier], nb->slot);

	if (bio_pages(bio) <= max)
		return false;
	bio->bi_status = BLK_STS_OK;
	/* find_home() counted its pages already. */
	while (bio_pages(bio) > max)
		split_front(nc, bio, max, nswap2l_entry(nb->tier, nb->slot));
	submit_to_home(nc, bio);
	return true;
}

/*
 * A failed read goes to the next copy of its pages, if the tier keeps
 * more than one; false when none is left.
 */
static bool read_other_copy(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	struct nswap2l_tier *tier = nc->tiers[nb->tier];

	if (!nswap2l_tier_can_retry(tier))
		return false;
	nb->read_tries++;
	bio->bi_status = BLK_STS_OK;
	if (nswap2l_tier_map_retry(tier, bio, nb->slot, nb->read_tries) == DM_MAPIO_SUBMITTED)
		return true;
	bio->bi_status = BLK_STS_IOERR;
	return false;
}

/*
 * Bios a tier failed, on a worker, never in the completion that failed them
 * (which may run inside the tier's own submission path): writes go to a new
 * home; reads go to another copy, or complete with their error unless they
 * were too long for the tier.
 */
static void deferred_work(struct work_struct *work)
{
	struct nswap2l *nc = container_of(work, struct nswap2l, deferred_work);
	struct bio_list bios = nswap2l_take_bios(&nc->deferred_lock, &nc->deferred_bios);
	struct bio *bio;

	while ((bio = bio_list_pop(&bios))) {
		struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

		if (bio_data_dir(bio) == WRITE ? reroute_write(nc, bio) :
		    split_read(nc, bio) || read_other_copy(nc, bio))
			continue;
		nb->give_up = true;
		bio_endio(bio);
	}
}

/*
 * Fault injection: bios held between the map lookup and their tier, each
 * for a random time up to the limit, so that a later bio can overtake an
 * earlier one; meanwhile the slot they looked up may be freed and reused,
 * which the in-flight tracking must prevent.
 */
static void hold_bio(struct nswap2l *nc, struct bio *bio, unsigned int ms)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

	nb->held_until = jiffies + get_random_u32_below(msecs_to_jiffies(ms) + 1);
	nswap2l_add_bio(&nc->deferred_lock, &nc->held_bios, bio);
	queue_delayed_work(nc->bio_wq, &nc->held_work, 1);
}

static void held_work(struct work_struct *work)
{
	struct nswap2l *nc = container_of(to_delayed_work(work), struct nswap2l, held_work);
	struct bio_list held = nswap2l_take_bios(&nc->deferred_lock, &nc->held_bios);
	bool more = false;
	struct bio *bio;

	while ((bio = bio_list_pop(&held))) {
		struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

		if (time_after_eq(jiffies, nb->held_until)) {
			submit_to_home(nc, bio);
		} else {
			nswap2l_add_bio(&nc->deferred_lock, &nc->held_bios, bio);
			more = true;
		}
	}
	if (more)
		queue_delayed_work(nc->bio_wq, &nc->held_work, 1);
}

static int map_flush(struct nswap2l *nc, struct bio *bio)
{
	unsigned int nr = dm_bio_get_target_bio_nr(bio);
	int id;

	/* The nr-th tier that has a volatile cache. */
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier && nswap2l_tier_has_flush(tier) && !nr--)
			return nswap2l_tier_map_flush(tier, bio);
	}
	return DM_MAPIO_KILL;
}

static int nswap2l_dm_map(struct dm_target *ti, struct bio *bio)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	unsigned int hold_ms;

	nb->epoch = NSWAP2L_NO_EPOCH;
	nb->profiled_tier = NSWAP2L_NR_TIERS;
	nb->read_tries = 0;
	nb->give_up = false;

	if (bio->bi_opf & REQ_PREFLUSH)
		return map_flush(nc, bio);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		break;
	case REQ_OP_DISCARD:
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
		defer_discard(nc, bio);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}

	nb->page = NSWAP2L_SECTOR_TO_PAGE(dm_target_offset(ti, bio->bi_iter.bi_sector));
	nb->epoch = nswap2l_inflight_enter(&nc->map.inflight);
	if (!find_home(nc, bio))
		return DM_MAPIO_SUBMITTED;
	hold_ms = READ_ONCE(nswap2l_fault_hold_ms);
	if (unlikely(hold_ms)) {
		hold_bio(nc, bio, hold_ms);
		return DM_MAPIO_SUBMITTED;
	}
	return send_to_home(nc, bio);
}

static int nswap2l_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

	if (nb->epoch == NSWAP2L_NO_EPOCH)
		return DM_ENDIO_DONE;
	if (*error && !nb->give_up && nc->tiers[nb->tier]->type->retry_failed_bios) {
		if (bio_data_dir(bio) == WRITE)
			atomic64_inc(&nc->rerouted_writes);
		bio->bi_status = *error;
		defer_bio(nc, bio);
		return DM_ENDIO_INCOMPLETE;
	}
	if (nb->profiled_tier < NSWAP2L_NR_TIERS)
		nswap2l_profile_end(nc, nb->profiled_tier, bio_data_dir(bio), nb->start_ns);
	nswap2l_inflight_exit(&nc->map.inflight, nb->epoch);
	return DM_ENDIO_DONE;
}

/*----------------------------------------------------------------
 * Parsing a table line
 *--------------------------------------------------------------*/
static const struct nswap2l_tier_type *find_tier_type(const char *key)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++)
		if (!strcmp(tier_types[i]->name, key))
			return tier_types[i];
	return NULL;
}

/* Options given twice are refused: the later one would silently win. */
static int set_once(struct dm_target *ti, const char **slot, const char *value,
		    const char *name)
{
	if (*slot) {
		nswap2l_bad_table(ti, "Option given twice", "%s given twice", name);
		return -EINVAL;
	}
	*slot = value;
	return 0;
}

/* A word a tier type owns: 1 if none does. */
static int collect_tier_opt(struct dm_target *ti, const char *key, const char *value,
			    struct table_args *args)
{
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_opts_ops *opts = tier_types[i]->opts;
		const char **slot;

		for (k = 0; opts && opts->keys[k]; k++) {
			if (strcmp(opts->keys[k], key))
				continue;
			slot = &args->tier_opts[tier_types[i]->id][k];
			if (*slot) {
				nswap2l_bad_table(ti, "Option given twice", "%s= given twice", key);
				return -EINVAL;
			}
			*slot = value;
			return opts->check_word ? opts->check_word(ti, k, value) : 0;
		}
	}
	return 1;
}

static int parse_arg(struct dm_target *ti, char *arg, struct table_args *args)
{
	const struct nswap2l_tier_type *type;
	char *value = strchr(arg, '=');
	int r;

	if (!strcmp(arg, "overcommit")) {
		if (args->overcommit) {
			nswap2l_bad_table(ti, "overcommit given twice", "overcommit given twice");
			return -EINVAL;
		}
		args->overcommit = true;
		return 0;
	}
	if (!value) {
		nswap2l_bad_table(ti, "Unknown option", "unknown option '%s'", arg);
		return -EINVAL;
	}
	*value++ = '\0';

	type = find_tier_type(arg);
	if (type) {
		if (!*value) {
			nswap2l_bad_table(ti, "Tier without a device", "%s= names no device",
					  type->name);
			return -EINVAL;
		}
		return set_once(ti, &args->tiers[type->id], value, arg);
	}
	if (!strcmp(arg, "placement"))
		return set_once(ti, &args->placement, value, "placement=");
	if (!strcmp(arg, "prefetch"))
		return set_once(ti, &args->prefetch, value, "prefetch=");
	r = collect_tier_opt(ti, arg, value, args);
	if (r <= 0)
		return r;
	nswap2l_bad_table(ti, "Unknown option", "unknown option '%s='", arg);
	return -EINVAL;
}

static int parse_table_args(struct dm_target *ti, struct dm_arg_set *as,
			    struct table_args *args)
{
	static const struct dm_arg nr_args = {
		0, 16, "Invalid number of arguments: need <#args> and that many arguments"
	};
	unsigned int argc, i;
	int r, id;

	r = dm_read_arg_group(&nr_args, as, &argc, &ti->error);
	if (r)
		return r;
	if (as->argc != argc) {
		nswap2l_bad_table(ti, "Too many arguments",
				  "%u arguments where <#args> announces %u",
				  as->argc, argc);
		return -EINVAL;
	}
	while (argc--) {
		r = parse_arg(ti, (char *)dm_shift_arg(as), args);
		if (r)
			return r;
	}

	for (id = 0; id < NSWAP2L_NR_TIERS && !args->tiers[id]; id++)
		;
	if (id == NSWAP2L_NR_TIERS) {
		nswap2l_bad_table(ti, "No tier given",
				  "no tier given: need at least one of netram=<servers>, flash=<dev>, disk=<dev>");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_type *type = tier_types[i];

		if (!type->opts)
			continue;
		r = type->opts->check(ti, args->tier_opts[type->id], args->tiers[type->id]);
		if (r)
			return r;
	}
	if (!args->placement)
		args->placement = NSWAP2L_DEFAULT_PLACEMENT;
	return 0;
}

/* Runs once the devices are open: their errors come first. */
static int parse_tier_options(struct nswap2l_table *t, const struct table_args *args)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_type *type = tier_types[i];
		void *parsed;

		if (!type->opts)
			continue;
		parsed = type->opts->parse(t->ti, args->tier_opts[type->id], args->tiers[type->id]);
		if (IS_ERR(parsed))
			return PTR_ERR(parsed);
		t->tier_args[type->id] = parsed;
	}
	return 0;
}

static int parse_prefetch(struct dm_target *ti, const struct table_args *args,
			  struct nswap2l_prefetch_config *cfg)
{
	const char *dev = dm_table_device_name(ti->table);
	char value[NSWAP2L_PREFETCH_CONFIG_LEN];

	nswap2l_prefetch_default_config(cfg);
	if (!args->prefetch)
		return 0;
	if (strscpy(value, args->prefetch, sizeof(value)) < 0) {
		nswap2l_bad_table(ti, "Bad prefetch= option", "prefetch=%s: too long",
				  args->prefetch);
		return -EINVAL;
	}
	if (nswap2l_prefetch_parse(dev, value, cfg)) {
		ti->error = "Bad prefetch= option";
		return -EINVAL;
	}
	if (nswap2l_prefetch_check_tiers(cfg, dev, args->tiers[NSWAP2L_TIER_NETRAM],
					 args->tiers[NSWAP2L_TIER_FLASH])) {
		ti->error = "prefetch= needs netram= and flash=";
		return -EINVAL;
	}
	return 0;
}

/* The table's own references to its block devices, distinct from each other. */
static int open_tier_devices(struct nswap2l_table *t, const struct table_args *args)
{
	struct dm_target *ti = t->ti;
	unsigned int i, j;
	int r;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_type *type = tier_types[i];
		const char *path = args->tiers[type->id];

		if (!type->has_device || !path)
			continue;
		r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &t->devs[type->id]);
		if (r) {
			nswap2l_bad_table(ti, "Cannot open tier device",
					  "%s=%s: cannot open device (error %d)", type->name, path, r);
			return r;
		}
		for (j = 0; j < NSWAP2L_NR_TIERS; j++) {
			/* Two tiers on one device would hand out the same sectors twice. */
			if (j != type->id && t->devs[j] &&
			    t->devs[j]->bdev == t->devs[type->id]->bdev) {
				nswap2l_bad_table(ti, "Tiers share a device",
						  "two tiers name the same device %s",
						  t->devs[j]->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static struct nswap2l_placement *create_placement(struct dm_target *ti, const char *name,
						  struct nswap2l_tier *const *tiers)
{
	struct nswap2l_placement *placement = nswap2l_placement_create(name, tiers);

	if (!placement) {
		nswap2l_bad_table(ti, "Unknown placement policy",
				  "placement=%s: unknown policy ('help' message lists them)", name);
		return ERR_PTR(-EINVAL);
	}
	if (IS_ERR(placement))
		ti->error = "Cannot allocate placement policy";
	return placement;
}

/* Without overcommit, every page of the device must have a slot somewhere. */
static int check_capacity(struct dm_target *ti, struct nswap2l *nc, u64 nr_pages,
			  bool overcommit)
{
	u64 capacity = 0;
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier)
			capacity += tier->dev ? nswap2l_block_slots(tier->dev, nr_pages) :
						READ_ONCE(tier->capacity);
	}
	if (nr_pages > capacity && !overcommit) {
		nswap2l_bad_table(ti, "Device larger than its tiers",
				  "device of %llu pages is larger than its tiers' %llu pages (add 'overcommit' to allow)",
				  nr_pages, capacity);
		return -EINVAL;
	}
	return 0;
}

/*----------------------------------------------------------------
 * The device: created by the first table, destroyed with the last
 *--------------------------------------------------------------*/

/* Copes with a half-built device: every constructor failure ends here. */
static void destroy_device(struct nswap2l *nc)
{
	struct nswap2l_placement *placement;
	int id;

	nswap2l_sysfs_remove(nc);
	/* Every thread that could touch the device stops before anything goes. */
	nswap2l_prefetch_pause(nc);
	nswap2l_profiler_destroy(nc);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_stop(nc->tiers[id]);
	nswap2l_mover_stop(nc);
	if (nc->bio_wq) {
		cancel_delayed_work_sync(&nc->held_work);
		destroy_workqueue(nc->bio_wq);
	}
	if (nc->discard_wq)
		destroy_workqueue(nc->discard_wq);
	placement = rcu_dereference_protected(nc->placement, 1);
	if (placement)
		placement->destroy(placement);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_destroy(nc->tiers[id]);
	nswap2l_mover_destroy(nc);
	nswap2l_prefetch_destroy(nc);
	bioset_exit(&nc->split_bios);
	nswap2l_map_exit(&nc->map);
	nswap2l_stats_destroy(nc);
	kfree(nc);
}

static int create_tiers(struct nswap2l_table *t, struct nswap2l *nc,
			const struct table_args *args)
{
	unsigned int i;
	int r;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_type *type = tier_types[i];
		struct nswap2l_tier_options opts = {
			.args = t->tier_args[type->id],
			.device_pages = t->nr_pages,
		};

		if (!args->tiers[type->id])
			continue;
		r = nswap2l_tier_create(type, t->ti, args->tiers[type->id], t->devs[type->id],
					&opts, &nc->tiers[type->id]);
		if (r)
			return r;
		nc->tiers[type->id]->nc = nc;
	}
	return 0;
}

/* Tiers start last: a server may talk to us the moment it is connected. */
static int start_tiers(struct nswap2l_table *t, struct nswap2l *nc)
{
	int id, r;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		r = nswap2l_tier_start(tier, t->ti);
		if (r)
			return r;
	}
	return 0;
}

static int create_device(struct nswap2l_table *t, const struct table_args *args,
			 struct nswap2l **result)
{
	struct dm_target *ti = t->ti;
	struct nswap2l_placement *placement;
	struct nswap2l *nc;
	int r = -ENOMEM;

	nc = kzalloc(sizeof(*nc), GFP_KERNEL);
	if (!nc) {
		ti->error = "Cannot allocate device state";
		return -ENOMEM;
	}
	nc->md = dm_table_get_md(ti->table);
	strscpy(nc->name, dm_table_device_name(ti->table), sizeof(nc->name));
	nc->overcommit = args->overcommit;
	nc->suspended = true;	/* until the first resume */
	mutex_init(&nc->control_mutex);
	spin_lock_init(&nc->deferred_lock);
	bio_list_init(&nc->deferred_bios);
	bio_list_init(&nc->held_bios);
	INIT_WORK(&nc->deferred_work, deferred_work);
	INIT_DELAYED_WORK(&nc->held_work, held_work);
	spin_lock_init(&nc->discard_lock);
	bio_list_init(&nc->discard_bios);
	bio_list_init(&nc->release_waiters);
	INIT_WORK(&nc->discard_work, discard_work);

	r = nswap2l_map_init(nc, t->nr_pages, ti);
	if (r)
		goto bad;
	r = create_tiers(t, nc, args);
	if (r)
		goto bad;

	placement = create_placement(ti, args->placement, nc->tiers);
	if (IS_ERR(placement)) {
		r = PTR_ERR(placement);
		goto bad;
	}
	RCU_INIT_POINTER(nc->placement, placement);

	r = nswap2l_stats_create(nc);
	if (r) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	r = bioset_init(&nc->split_bios, BIO_POOL_SIZE, 0, 0);
	if (r) {
		ti->error = "Cannot allocate bio set";
		goto bad;
	}
	r = -ENOMEM;
	nc->bio_wq = alloc_workqueue("nswap2l-io-%s", WQ_MEM_RECLAIM, 1, nc->name);
	nc->discard_wq = alloc_workqueue("nswap2l-discard-%s", WQ_MEM_RECLAIM, 1, nc->name);
	if (!nc->bio_wq || !nc->discard_wq) {
		ti->error = "Cannot allocate workqueue";
		goto bad;
	}
	r = nswap2l_mover_create(nc);
	if (r) {
		ti->error = "Cannot allocate page mover";
		goto bad;
	}
	r = nswap2l_profiler_create(nc);
	if (r) {
		ti->error = "Cannot allocate profiler";
		goto bad;
	}
	r = nswap2l_prefetch_create(nc, &t->prefetch);
	if (r) {
		ti->error = "Cannot allocate prefetching";
		goto bad;
	}

	r = start_tiers(t, nc);
	if (r)
		goto bad;
	r = check_capacity(ti, nc, t->nr_pages, nc->overcommit);
	if (r)
		goto bad;
	*result = nc;
	return 0;

bad:
	destroy_device(nc);
	return r;
}

/*----------------------------------------------------------------
 * Reload: a new table over an existing device
 *--------------------------------------------------------------*/
static void cancel_reload(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (t->tier_changes[id])
			nswap2l_tier_cancel_reload(nc->tiers[id], t->tier_changes[id]);
	kvfree(t->grown_map);
	if (t->new_placement)
		t->new_placement->destroy(t->new_placement);
	if (t->new_picker)
		t->new_picker->destroy(t->new_picker);
	t->pending = false;
}

/* Checks everything and prepares the changes; changes nothing. */
static int prepare_reload(struct nswap2l_table *t, const struct table_args *args)
{
	struct dm_target *ti = t->ti;
	struct nswap2l *nc = t->nc;
	struct nswap2l_placement *placement;
	int id, r;

	t->pending = true;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (!nc->tiers[id] != !args->tiers[id]) {
			nswap2l_bad_table(ti, "A reload must keep the device's tiers",
					  "reload %s the %s tier: a reload keeps the tiers of the live table (its pages must stay reachable)",
					  nc->tiers[id] ? "drops" : "adds", tier_types[id]->name);
			return -EINVAL;
		}
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier || !tier->type->opts)
			continue;
		r = tier->type->opts->check_reload(tier, ti, t->tier_args[id]);
		if (r)
			return r;
	}
	if (t->nr_pages < nc->map.nr_pages) {
		nswap2l_bad_table(ti, "A reload cannot shrink the device",
				  "reload shrinks the device from %llu to %llu pages: pages past the end would be lost",
				  nc->map.nr_pages, t->nr_pages);
		return -EINVAL;
	}
	r = check_capacity(ti, nc, t->nr_pages, args->overcommit);
	if (r)
		return r;

	placement = create_placement(ti, args->placement, nc->tiers);
	if (IS_ERR(placement))
		return PTR_ERR(placement);
	t->new_placement = placement;
	t->new_picker = nswap2l_prefetch_prepare(&t->prefetch);
	if (IS_ERR(t->new_picker)) {
		r = PTR_ERR(t->new_picker);
		t->new_picker = NULL;
		ti->error = "Cannot allocate prefetch policy";
		return r;
	}
	if (t->nr_pages > nc->map.nr_pages) {
		t->grown_map = nswap2l_map_prepare_grow(nc, t->nr_pages, ti);
		if (!t->grown_map)
			return -ENOMEM;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];
		struct nswap2l_tier_options opts = {
			.args = t->tier_args[id],
			.device_pages = t->nr_pages,
		};

		if (!tier)
			continue;
		r = nswap2l_tier_prepare_reload(tier, ti, args->tiers[id], t->devs[id],
						&opts, &t->tier_changes[id]);
		if (r)
			return r;
	}
	return 0;
}

/* The device is suspended and its background work paused. */
static void commit_reload(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	struct nswap2l_placement *old;
	int id;

	if (t->grown_map) {
		nswap2l_map_commit_grow(&nc->map, t->grown_map, t->nr_pages);
		t->grown_map = NULL;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (!t->tier_changes[id])
			continue;
		nswap2l_tier_commit_reload(nc->tiers[id], t->tier_changes[id]);
		t->tier_changes[id] = NULL;
	}
	old = rcu_replace_pointer(nc->placement, t->new_placement,
				  lockdep_is_held(&nc->control_mutex));
	t->new_placement = NULL;
	synchronize_rcu();
	old->destroy(old);
	nswap2l_prefetch_commit(nc, &t->prefetch, t->new_picker);
	t->new_picker = NULL;
	nc->overcommit = t->overcommit;
	t->pending = false;
}

/*----------------------------------------------------------------
 * Constructor and destructor
 *--------------------------------------------------------------*/
static void destroy_table(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	int id;

	mutex_lock(&registry_mutex);
	if (t->pending)
		cancel_reload(t);
	if (nc && !--nc->tables) {
		list_del(&nc->registry);
		destroy_device(nc);
	}
	mutex_unlock(&registry_mutex);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (t->devs[id])
			dm_put_device(t->ti, t->devs[id]);
		if (t->tier_args[id])
			tier_types[id]->opts->free(t->tier_args[id]);
	}
	kfree(t);
}

static struct nswap2l *find_device(struct mapped_device *md)
{
	struct nswap2l *nc;

	list_for_each_entry(nc, &registry, registry)
		if (nc->md == md)
			return nc;
	return NULL;
}

static int nswap2l_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct table_args args = { };
	struct nswap2l_table *t;
	struct nswap2l *nc;
	int id, r;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}
	t->ti = ti;

	if (!ti->len || ti->len & (NSWAP2L_PAGE_SECTORS - 1)) {
		nswap2l_bad_table(ti, "Length must be a non-zero multiple of 8 sectors",
				  "length %llu sectors is not a non-zero multiple of %u sectors (4 KiB)",
				  (unsigned long long)ti->len, NSWAP2L_PAGE_SECTORS);
		r = -EINVAL;
		goto bad;
	}
	t->nr_pages = NSWAP2L_SECTOR_TO_PAGE(ti->len);
	r = parse_table_args(ti, &as, &args);
	if (r)
		goto bad;
	r = open_tier_devices(t, &args);
	if (r)
		goto bad;
	t->overcommit = args.overcommit;
	r = parse_tier_options(t, &args);
	if (r)
		goto bad;
	r = parse_prefetch(ti, &args, &t->prefetch);
	if (r)
		goto bad;

	mutex_lock(&registry_mutex);
	nc = find_device(dm_table_get_md(ti->table));
	if (nc) {
		t->nc = nc;
		nc->tables++;
		r = prepare_reload(t, &args);
	} else {
		r = create_device(t, &args, &nc);
		if (!r) {
			t->nc = nc;
			nc->tables = 1;
			list_add(&nc->registry, &registry);
		}
	}
	mutex_unlock(&registry_mutex);
	if (r)
		goto bad;
	t->placement_name = t->new_placement ? t->new_placement->type->name :
			    nswap2l_placement_name(nc);

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		ti->num_flush_bios += nc->tiers[id] && nswap2l_tier_has_flush(nc->tiers[id]);
	ti->num_discard_bios = 1;
	ti->discards_supported = true;
	ti->per_io_data_size = sizeof(struct nswap2l_bio);
	/* Swap must not queue more bios than it can be given memory for. */
	ti->limit_swap_bios = true;
	ti->private = t;
	return 0;

bad:
	destroy_table(t);
	return r;
}

static void nswap2l_dtr(struct dm_target *ti)
{
	destroy_table(ti->private);
}

/*----------------------------------------------------------------
 * Suspend and resume: nothing reaches a tier while suspended
 *--------------------------------------------------------------*/
static void nswap2l_postsuspend(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	int id;

	nswap2l_sysfs_remove(nc);
	mutex_lock(&nc->control_mutex);
	nswap2l_prefetch_pause(nc);
	nswap2l_profiler_stop(nc);
	nswap2l_mover_pause(nc);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_suspend(nc->tiers[id]);
	nc->suspended = true;
	mutex_unlock(&nc->control_mutex);
}

static int nswap2l_preresume(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;

	mutex_lock(&t->nc->control_mutex);
	if (t->pending)
		commit_reload(t);
	mutex_unlock(&t->nc->control_mutex);
	return 0;
}

/*
 * A page must not change while it is written (swap maps pages under
 * writeback writable, unless told not to): a Network RAM page goes out
 * under a MAC computed before it is sent, and a parity page is the XOR of
 * its group's pages as they were.  A page changed in between would fail
 * its MAC at the server, or no longer match its parity, and rebuilding any
 * other page of the group would go wrong.
 */
static bool nswap2l_needs_stable_writes(const struct nswap2l_table *t)
{
	return t->nc->tiers[NSWAP2L_TIER_NETRAM];
}

static void nswap2l_resume(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	int id;

	mutex_lock(&nc->control_mutex);
	nc->suspended = false;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_resume(nc->tiers[id]);
	nswap2l_mover_resume(nc);
	nswap2l_profiler_start(nc);
	nswap2l_prefetch_resume(nc);
	mutex_unlock(&nc->control_mutex);
	if (nswap2l_needs_stable_writes(t))
		nswap2l_resume_stable_writes(ti);
	nswap2l_sysfs_add(nc);
}

/*----------------------------------------------------------------
 * Status, messages, limits
 *--------------------------------------------------------------*/
static void emit_table(struct nswap2l_table *t, char *result, unsigned int maxlen,
		       unsigned int *sz_ptr)
{
	struct nswap2l *nc = t->nc;
	/* A table not resumed yet shows its own options, a live one the device's. */
	const char *placement = t->pending ? t->placement_name : nswap2l_placement_name(nc);
	bool overcommit = t->pending ? t->overcommit : nc->overcommit;
	bool default_placement = !strcmp(placement, NSWAP2L_DEFAULT_PLACEMENT);
	struct nswap2l_prefetch_config prefetch;
	char prefetch_arg[NSWAP2L_PREFETCH_CONFIG_LEN];
	bool default_prefetch;
	unsigned int sz = *sz_ptr, nr_args;
	int id;

	if (t->pending)
		prefetch = t->prefetch;
	else
		nswap2l_prefetch_get_config(nc, &prefetch);
	default_prefetch = nswap2l_prefetch_config_is_default(&prefetch);
	nswap2l_prefetch_format(&prefetch, prefetch_arg, sizeof(prefetch_arg));

	nr_args = !default_placement + overcommit + !default_prefetch;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		nr_args += !!nc->tiers[id];
		if (t->tier_args[id])
			nr_args += tier_types[id]->opts->count(t->tier_args[id]);
	}

	DMEMIT("%u", nr_args);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		DMEMIT(" %s=", tier->type->name);
		nswap2l_tier_emit_table_arg(tier, result, maxlen, &sz);
	}
	/* The tier types' options: the table's own, equal to the device's but a reloaded timeout=. */
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (t->tier_args[id])
			tier_types[id]->opts->emit(t->tier_args[id], result, maxlen, &sz);
	if (!default_placement)
		DMEMIT(" placement=%s", placement);
	if (overcommit)
		DMEMIT(" overcommit");
	if (!default_prefetch)
		DMEMIT(" prefetch=%s", prefetch_arg);
	*sz_ptr = sz;
}

static void nswap2l_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	struct nswap2l_io_stats io;
	unsigned int sz = 0, nr_tiers = 0;
	int id;

	switch (type) {
	case STATUSTYPE_INFO:
		nswap2l_stats_sum(nc, &io);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			nr_tiers += !!nc->tiers[id];
		DMEMIT("%s %u", nswap2l_placement_name(nc), nr_tiers);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (!tier)
				continue;
			DMEMIT(" %s %llu %lld %llu %llu %lld", tier->type->name,
			       READ_ONCE(tier->capacity), atomic64_read(&tier->used),
			       io.reads[id], io.writes[id], atomic64_read(&tier->discards));
		}
		DMEMIT(" %llu %lld %lld %lld", io.zero_reads, atomic64_read(&nc->nospace_errors),
		       atomic64_read(&nc->rerouted_writes), atomic64_read(&nc->moved_pages));
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (tier)
				nswap2l_tier_emit_status(tier, result, maxlen, &sz);
		}
		nswap2l_prefetch_status(nc, result, maxlen, &sz);
		nswap2l_profiler_status(nc, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		emit_table(t, result, maxlen, &sz);
		break;
	default:
		break;
	}
}

/* By message or sysfs. */
int nswap2l_set_placement(struct nswap2l *nc, const char *name)
{
	struct nswap2l_placement *new, *old;

	new = nswap2l_placement_create(name, nc->tiers);
	if (!new) {
		DMERR("%s: placement %s: unknown policy ('help' lists them)", nc->name, name);
		return -EINVAL;
	}
	if (IS_ERR(new))
		return PTR_ERR(new);
	mutex_lock(&nc->control_mutex);
	old = rcu_replace_pointer(nc->placement, new, lockdep_is_held(&nc->control_mutex));
	mutex_unlock(&nc->control_mutex);
	synchronize_rcu();
	old->destroy(old);
	return 0;
}

/* Type names are static: safe to use after the policy is replaced. */
const char *nswap2l_placement_name(struct nswap2l *nc)
{
	const char *name;

	rcu_read_lock();
	name = rcu_dereference(nc->placement)->type->name;
	rcu_read_unlock();
	return name;
}

static int nswap2l_message(struct dm_target *ti, unsigned int argc, char **argv,
			   char *result, unsigned int maxlen)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	unsigned int sz = 0;
	char names[96];
	int id, r;

	/*
	 * The policy names come from the registry (policy/registry.c), in
	 * registration order; nswap2l (tools/nswap2l) reads them from here.
	 */
	if (argc == 1 && !strcasecmp(argv[0], "help")) {
		DMEMIT("help                      this list\n");
		DMEMIT("placement <policy>        place new pages with <policy>:");
		nswap2l_placement_list(result, maxlen, &sz);
		DMEMIT("\n");
		nswap2l_prefetch_names(NSWAP2L_PREFETCH_WHICH, names, sizeof(names));
		DMEMIT("prefetch policy <policy>  which pages to prefetch: none%s\n", names);
		DMEMIT("prefetch when <when>      always, swapping, idle[:<bios in flight>]\n");
		DMEMIT("prefetch amount <amount>  written:<percent>[:<cap>] or held:<percent>[:<cap>]\n");
		DMEMIT("prefetch interval <ms>    wake-up interval, 10-60000\n");
		DMEMIT("profile reset             clear the concurrency profile\n");
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			if (nc->tiers[id] && nc->tiers[id]->type->messages_help)
				DMEMIT("%s", nc->tiers[id]->type->messages_help);
		return 1;
	}
	if (argc == 2 && !strcasecmp(argv[0], "placement"))
		return nswap2l_set_placement(nc, argv[1]);
	if (argc == 3 && !strcasecmp(argv[0], "prefetch"))
		return nswap2l_prefetch_set(nc, argv[1], argv[2]);
	if (argc == 2 && !strcasecmp(argv[0], "profile") && !strcasecmp(argv[1], "reset")) {
		nswap2l_profiler_reset(nc);
		return 0;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		r = nswap2l_tier_message(tier, argc, argv);
		if (r != -ENOTTY)
			return r;
	}

	DMERR("%s: unknown message '%s' with %u argument(s); try 'help'",
	      nc->name, argc ? argv[0] : "", argc ? argc - 1 : 0);
	return -EINVAL;
}

static int nswap2l_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	struct nswap2l_table *t = ti->private;
	int id, r = 0;

	for (id = 0; id < NSWAP2L_NR_TIERS && !r; id++)
		if (t->devs[id])
			r = fn(ti, t->devs[id], 0,
			       NSWAP2L_PAGE_TO_SECTOR(nswap2l_block_slots(t->devs[id], t->nr_pages)), data);
	return r;
}

static void nswap2l_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct nswap2l_table *t = ti->private;

	if (nswap2l_needs_stable_writes(t))
		nswap2l_limit_stable_writes(limits);
	limits->logical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->physical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->io_min = 1 << NSWAP2L_PAGE_SHIFT;
	/* Discards only drop map entries, so any size is cheap. */
	limits->discard_granularity = 1 << NSWAP2L_PAGE_SHIFT;
	nswap2l_set_max_discard_sectors(limits, UINT_MAX >> SECTOR_SHIFT);
}

static struct target_type nswap2l_target = {
	.name = "nswap2l",
	.version = {0, 2, 0},
	.module = THIS_MODULE,
	.ctr = nswap2l_ctr,
	.dtr = nswap2l_dtr,
	.map = nswap2l_dm_map,
	.end_io = nswap2l_end_io,
	.postsuspend = nswap2l_postsuspend,
	.preresume = nswap2l_preresume,
	.resume = nswap2l_resume,
	.status = nswap2l_status,
	.message = nswap2l_message,
	.iterate_devices = nswap2l_iterate_devices,
	.io_hints = nswap2l_io_hints,
};

static int __init dm_nswap2l_init(void)
{
	int r;

	r = nswap2l_policies_init();
	if (r)
		return r;
	r = nswap2l_sysfs_init();
	if (r)
		goto bad_sysfs;
	r = dm_register_target(&nswap2l_target);
	if (r) {
		DMERR("register failed %d", r);
		goto bad_register;
	}
	return 0;

bad_register:
	nswap2l_sysfs_exit();
bad_sysfs:
	nswap2l_policies_exit();
	return r;
}

static void __exit dm_nswap2l_exit(void)
{
	dm_unregister_target(&nswap2l_target);
	nswap2l_sysfs_exit();
	nswap2l_policies_exit();
}

module_init(dm_nswap2l_init);
module_exit(dm_nswap2l_exit);

MODULE_DESCRIPTION(DM_NAME " target over Network RAM, flash and disk tiers");
MODULE_AUTHOR("dm-nswap2l developers");
MODULE_LICENSE("GPL");
