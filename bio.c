// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: the bio path.  A read or write is remapped to the tier and
 * slot its page's map entry names (a first write asks the placement policy
 * for a home); bios a tier fails are rerouted or completed on a worker;
 * discards free slots on another, after the bios in flight on them end.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>

#include "compat.h"
#include "bio.h"

static unsigned int nswap2l_fault_hold_ms;
module_param_named(fault_hold_ms, nswap2l_fault_hold_ms, uint, 0644);
MODULE_PARM_DESC(fault_hold_ms,
		 "Testing only: hold every read and write up to this many ms (a random time each) between its map lookup and its tier (0: off)");

static unsigned int nswap2l_fault_reroute_ms;
module_param_named(fault_reroute_ms, nswap2l_fault_reroute_ms, uint, 0644);
MODULE_PARM_DESC(fault_reroute_ms,
		 "Testing only: a rewrite of a page on a write-once tier finds no new home at once (as with the release queue full) and waits this many ms before the worker places it (0: off)");

static unsigned int nswap2l_fault_park_ms;
module_param_named(fault_park_ms, nswap2l_fault_park_ms, uint, 0644);
MODULE_PARM_DESC(fault_park_ms,
		 "Testing only: a write the worker gives a new home first finds the release queue full and waits this many ms out of the in-flight count, as such a write does (0: off)");

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

/* Out of the in-flight count: waiters for it no longer wait for this bio. */
static void leave_epoch(struct nswap2l *nc, struct nswap2l_bio *nb)
{
	nswap2l_inflight_exit(&nc->map.inflight, nb->epoch);
	nb->epoch = NSWAP2L_NO_EPOCH;
}

/*
 * A refused write that found the release queue full waits until the
 * discard worker takes the queued runs.  That worker then waits for
 * in-flight bios, so the write leaves its epoch meanwhile (it sends
 * nothing while it waits, and no piece of it is in flight: it waits before
 * it splits) and enters a new one when it goes on.  The page mover, which
 * waits for that count too, may move its page meanwhile: reroute_write()
 * then replaces the page's new home.
 */
static void wait_for_release(struct nswap2l *nc, struct bio *bio)
{
	leave_epoch(nc, dm_per_bio_data(bio, sizeof(struct nswap2l_bio)));
	if (nswap2l_release_park(&nc->map, bio))
		defer_bio(nc, bio);
}

/*
 * A refused write that found no tier with room may wait for slots queued for
 * release: its own old home can be one (a page placed again from flash into
 * Network RAM, refused there: its flash slot waits for the bios in flight,
 * this one among them, so the write leaves its epoch to let it go).  It
 * waits before any piece of it is out, as wait_for_release() does, at most
 * REROUTE_SPACE_WAITS times; false (still in its epoch) if no slot is
 * coming or it waited enough: the device is full.
 */
#define REROUTE_SPACE_WAITS	8

static bool wait_for_space(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

	if (nb->space_waits >= REROUTE_SPACE_WAITS)
		return false;
	nb->space_waits++;
	leave_epoch(nc, nb);
	if (nswap2l_release_park_for_space(&nc->map, bio))
		return true;
	nb->epoch = nswap2l_inflight_enter(&nc->map.inflight);
	return false;
}

/* Fill the reservation (@nr == 0: give it back); the discard worker frees it. */
static void queue_release(struct nswap2l *nc, u64 home, unsigned int nr, u64 keep)
{
	nswap2l_release_fill(&nc->map, home, nr, keep);
	if (nr)
		queue_work(nc->discard_wq, &nc->discard_work);
}

/*
 * Free the queued slots once the bios that may still read them are done;
 * the writes that waited for room go on first.
 */
static void release_slots(struct nswap2l *nc)
{
	struct nswap2l_release_batch batch;
	struct bio_list waiters = nswap2l_release_take(&nc->map, &batch);
	struct bio *bio;

	while ((bio = bio_list_pop(&waiters)))
		defer_bio(nc, bio);
	waiters = nswap2l_release_free(nc, &batch);
	while ((bio = bio_list_pop(&waiters)))
		defer_bio(nc, bio);
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
		/* nswap2l_bio_map() made bi_sector relative to the target. */
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
 * Whether a write of @nr pages at @entry places them again, on no tier of
 * *@skip: a prefetched page (its flash copy is stale), one on a write-once
 * tier, and one on a slower tier while a faster one has room.  Pages go to
 * the fastest tier with room also when written again: a page that spilled
 * to flash while Network RAM was full goes back once it has room
 * (prefetching moved cold pages out, a server grew), so that the pages
 * written most stay in the fastest tier (Nswap2L).  Such a page goes only
 * to a faster tier: a new slot on its own would be a copy for nothing, and
 * could fill a tier that has just enough room for its pages.
 */
static bool place_again_wanted(struct nswap2l *nc, u64 entry, unsigned int nr,
			       unsigned long *skip)
{
	int tier = nswap2l_entry_tier(entry), id;

	*skip = 0;
	if ((entry & NSWAP2L_ENTRY_PREFETCHED) || nc->tiers[tier]->write_once)
		return true;
	*skip = GENMASK(NSWAP2L_NR_TIERS - 1, tier);
	for (id = 0; id < tier; id++)
		if (nc->tiers[id] && nswap2l_tier_free(nc->tiers[id]) >= nr)
			return true;
	return false;
}

/*
 * A write that place_again_wanted(): new contents, which the placement
 * policy places (Network RAM first, on no tier of @skip) as it places any
 * new page; their old slots are freed once the bios that may read them are
 * done.  Returns the run placed, with its entry in *@entry; 0 if the
 * release queue is full or no tier has room (the caller updates in place,
 * or on a write-once tier reroutes the write); -EAGAIN if the first page
 * changed meanwhile.
 */
static int place_again(struct nswap2l *nc, u64 page, unsigned int nr, unsigned long skip,
		       u64 *entry)
{
	bool prefetched = *entry & NSWAP2L_ENTRY_PREFETCHED;
	unsigned int arm = nswap2l_entry_arm(*entry);
	u64 home = nswap2l_entry_home(*entry);
	int r;

	if (!nswap2l_release_reserve(&nc->map))
		return 0;
	nr = nswap2l_map_flags_run(&nc->map, page, nr, *entry);
	r = nswap2l_map_place(nc, page, nr, home, skip, entry);
	if (r > 0) {
		queue_release(nc, home, r, 0);
		if (prefetched)
			nswap2l_prefetch_note_rewritten(nc, r, arm);
		return r;
	}
	queue_release(nc, 0, 0, 0);
	return r == -EAGAIN ? r : 0;
}

static void hold_bio(struct nswap2l *nc, struct bio *bio, unsigned long until);

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
	unsigned int hold_ms = READ_ONCE(nswap2l_fault_reroute_ms);

	dm_accept_partial_bio(bio, NSWAP2L_PAGE_TO_SECTOR(nr));
	nb->tier = nswap2l_entry_tier(entry);
	nb->slot = nswap2l_entry_slot(entry);
	if (unlikely(hold_ms)) {
		/* Fault injection: a long way to the worker, for a move to race. */
		nb->held_reroute = true;
		hold_bio(nc, bio, jiffies + msecs_to_jiffies(hold_ms));
		return;
	}
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
	unsigned long skip;
	unsigned int nr;
	u64 entry;
	int r;

again:
	nr = bio_pages(bio);
	entry = nswap2l_map_lookup(&nc->map, nb->page);
	if (entry && write && place_again_wanted(nc, entry, nr, &skip)) {
		if (unlikely(READ_ONCE(nswap2l_fault_reroute_ms)) &&
		    nc->tiers[nswap2l_entry_tier(entry)]->write_once)
			r = 0;
		else
			r = place_again(nc, nb->page, nr, skip, &entry);
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
		r = nswap2l_map_place(nc, nb->page, nr, 0, 0, &entry);
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
	u64 old_home, keep, entry;
	unsigned int done, handled, nr;
	int r;

	if (nb->epoch == NSWAP2L_NO_EPOCH)	/* back from wait_for_release() */
		nb->epoch = nswap2l_inflight_enter(&nc->map.inflight);
	if (unlikely(READ_ONCE(nswap2l_fault_park_ms)) && !nb->fault_parked) {
		/* Fault injection: parked as in wait_for_release(), for a move to race. */
		nb->fault_parked = true;
		nb->held_reroute = true;
		leave_epoch(nc, nb);
		hold_bio(nc, bio, jiffies + msecs_to_jiffies(READ_ONCE(nswap2l_fault_park_ms)));
		return true;
	}
	if (!nswap2l_release_reserve(&nc->map)) {
		wait_for_release(nc, bio);
		return true;
	}
reserved:
	old_home = nswap2l_entry(nb->tier, nb->slot);
	keep = 0;
	handled = 0;
	nr = bio_pages(bio);
	for (;;) {
		r = nswap2l_map_place(nc, nb->page, nr, nswap2l_run_home(nc, old_home, handled),
				      0, &entry);
		if (r == -ENOSPC) {
			bio->bi_status = BLK_STS_NOSPC;
			break;
		}
		if (r > 0) {
			done = r;
		} else if (entry && (nc->tiers[nswap2l_entry_tier(entry)]->write_once ||
				     (nswap2l_entry_tier(entry) == nb->tier &&
				      nswap2l_tier_relabelled(nc->tiers[nb->tier], nb->slot,
							      nswap2l_entry_slot(entry))))) {
			/*
			 * The page has a new home on this tier, which this
			 * write replaces from there: a server moved it (the
			 * same data under a new label), or, on a write-once
			 * tier, the page mover did or another write placed it.
			 * A move happens while this write waits for the
			 * release queue, out of the in-flight count that
			 * moves wait for: it copied the data this write
			 * replaces, and it frees the old home itself.  Two
			 * writes of one page in flight at once may end either
			 * way.  The pages before it release their old homes;
			 * it takes another reservation, waiting for one only
			 * if no piece of it is out (those must stay counted).
			 */
			queue_release(nc, old_home, handled, keep);
			nb->tier = nswap2l_entry_tier(entry);
			nb->slot = nswap2l_entry_slot(entry);
			if (nswap2l_release_reserve(&nc->map))
				goto reserved;
			if (!handled) {
				wait_for_release(nc, bio);
				return true;
			}
			/* Rare (the queue filled meanwhile): an error, not a write lost. */
			DMERR_LIMIT("%s: write of page %llu failed: release queue full after a move",
				    nc->name, nb->page);
			bio->bi_status = BLK_STS_IOERR;
			return false;
		} else {
			/*
			 * The first page was discarded meanwhile (the write lost
			 * the race, nothing to keep), or a move or another
			 * write gave it a new home on a tier that is not
			 * write-once: this write goes there.  Either freed the
			 * old home.
			 */
			done = 1;
			if (handled < 64)
				keep |= BIT_ULL(handled);
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
	if (bio->bi_status == BLK_STS_NOSPC) {
		if (!handled && wait_for_space(nc, bio))
			return true;
		atomic64_inc(&nc->nospace_errors);
	}
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
 * which the in-flight tracking must prevent.  Writes to reroute
 * (fault_reroute_ms) go to the worker once held.
 */
static void hold_bio(struct nswap2l *nc, struct bio *bio, unsigned long until)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

	nb->held_until = until;
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

		if (time_after_eq(jiffies, nb->held_until) && nb->held_reroute) {
			nb->held_reroute = false;
			defer_bio(nc, bio);
		} else if (time_after_eq(jiffies, nb->held_until)) {
			submit_to_home(nc, bio);
		} else {
			nswap2l_add_bio(&nc->deferred_lock, &nc->held_bios, bio);
			more = true;
		}
	}
	if (more)
		queue_delayed_work(nc->bio_wq, &nc->held_work, 1);
}

void nswap2l_bio_init(struct nswap2l *nc)
{
	spin_lock_init(&nc->deferred_lock);
	bio_list_init(&nc->deferred_bios);
	bio_list_init(&nc->held_bios);
	INIT_WORK(&nc->deferred_work, deferred_work);
	INIT_DELAYED_WORK(&nc->held_work, held_work);
	spin_lock_init(&nc->discard_lock);
	bio_list_init(&nc->discard_bios);
	INIT_WORK(&nc->discard_work, discard_work);
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

int nswap2l_bio_map(struct nswap2l *nc, struct dm_target *ti, struct bio *bio)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	unsigned int hold_ms;

	nb->epoch = NSWAP2L_NO_EPOCH;
	nb->profiled_tier = NSWAP2L_NR_TIERS;
	nb->read_tries = 0;
	nb->space_waits = 0;
	nb->give_up = false;
	nb->held_reroute = false;
	nb->fault_parked = false;

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
		hold_bio(nc, bio,
			 jiffies + get_random_u32_below(msecs_to_jiffies(hold_ms) + 1));
		return DM_MAPIO_SUBMITTED;
	}
	return send_to_home(nc, bio);
}

int nswap2l_bio_end_io(struct nswap2l *nc, struct bio *bio, blk_status_t *error)
{
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

