// SPDX-License-Identifier: GPL-2.0
/*
 * Background page moves: a tier asks for some of its pages to go elsewhere
 * (a Network RAM server that needs its memory back, a server being drained)
 * and the mover copies them to a new home chosen by the placement policy
 * (or by the job, which may keep part of the old one: new_home()),
 * NSWAP2L_MOVE_BATCH pages at a time, on its own ordered workqueue.
 *
 * A move never loses a write.  The mover flags each entry MIGRATING, waits
 * for bios that looked the page up before (they may be writing the old
 * home), copies, and installs the new home only if the entry is still the
 * flagged one: a write meanwhile clears the flag
 * (nswap2l_map_note_access()), a discard clears the entry, and the page then
 * stays where it is.  The old home is freed only after bios that may still
 * read it have completed.
 *
 * The moving itself is a batch object (nswap2l_move_batch) that prefetching
 * uses too, with a batch of its own, to move pages to flash.
 *
 * Everything is preallocated in the constructor: one batch of pages and
 * bios, reused for every batch.  While the device is suspended the mover is
 * paused between batches; a job keeps its place in the map and goes on
 * after resume.
 */
#include <linux/bio.h>
#include <linux/completion.h>
#include <linux/slab.h>

#include "core.h"
#include "map.h"
#include "mover.h"

struct move_page {
	u64 page;
	u64 old_entry;			/* the home, as flagged */
	u64 new_entry;			/* installed */
	u64 write_entry;		/* written: new_entry but for job->new_home() */
	struct page *data;
	struct bio bio;
	struct bio_vec bvec;
	bool bio_in_use;
	blk_status_t status;
};

struct nswap2l_move_batch {
	struct nswap2l_move_job *job;	/* the mover's, NULL for prefetching */
	struct move_page pages[NSWAP2L_MOVE_BATCH];
	unsigned int nr_pages;
	atomic_t pending_io;
	struct completion io_done;
};

struct nswap2l_mover {
	struct nswap2l *nc;
	struct workqueue_struct *wq;
	struct work_struct work;
	spinlock_t lock;		/* protects jobs, stopped and paused */
	struct list_head jobs;
	bool stopped;			/* the device is going away */
	bool paused;			/* the device is suspended */
	struct nswap2l_move_batch *batch;
};

static void move_end_io(struct bio *bio)
{
	struct move_page *mp = container_of(bio, struct move_page, bio);
	struct nswap2l_move_batch *batch = bio->bi_private;

	mp->status = bio->bi_status;
	if (atomic_dec_and_test(&batch->pending_io))
		complete(&batch->io_done);
}

/* Still flagged at the home it was flagged at: no write or discard since. */
static bool still_flagged(struct nswap2l *nc, struct move_page *mp)
{
	u64 cur = nswap2l_map_lookup(&nc->map, mp->page) & ~NSWAP2L_ENTRY_REFERENCED;

	return cur == (mp->old_entry | NSWAP2L_ENTRY_MIGRATING);
}

/*
 * Read (old home) or write (new home) every page of the batch that is still
 * good.  Reads count in flight like bios, and look at the entry once
 * counted: a discard that cleared it before frees the old slot only after
 * they are done, or they skip the page.
 */
static void move_io(struct nswap2l *nc, struct nswap2l_move_batch *batch, enum req_op op)
{
	unsigned int i, epoch = 0;

	if (op == REQ_OP_READ)
		epoch = nswap2l_inflight_enter(&nc->map.inflight);
	atomic_set(&batch->pending_io, 1);
	reinit_completion(&batch->io_done);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];
		u64 entry = op == REQ_OP_READ ? mp->old_entry : mp->write_entry;
		struct nswap2l_tier *tier;

		if (op == REQ_OP_READ && !still_flagged(nc, mp))
			mp->status = BLK_STS_AGAIN;
		if (mp->status)
			continue;	/* raced, no new home for it, or its read failed */
		tier = nc->tiers[nswap2l_entry_tier(entry)];
		bio_init(&mp->bio, NULL, &mp->bvec, 1, op);
		mp->bio_in_use = true;
		__bio_add_page(&mp->bio, mp->data, PAGE_SIZE, 0);
		mp->bio.bi_end_io = move_end_io;
		mp->bio.bi_private = batch;
		atomic_inc(&batch->pending_io);
		if (nswap2l_tier_map(tier, &mp->bio, nswap2l_entry_slot(entry)) == DM_MAPIO_REMAPPED)
			submit_bio_noacct(&mp->bio);
	}
	if (!atomic_dec_and_test(&batch->pending_io))
		wait_for_completion(&batch->io_done);
	if (op == REQ_OP_READ)
		nswap2l_inflight_exit(&nc->map.inflight, epoch);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (mp->bio_in_use)
			bio_uninit(&mp->bio);
		mp->bio_in_use = false;
	}
}

static int alloc_new_home(struct nswap2l *nc, u64 page, int to_tier, u64 *entry)
{
	struct nswap2l_tier *tier;
	u64 slot;

	if (to_tier < 0)
		return nswap2l_alloc_home(nc, page, 1, entry);
	tier = nc->tiers[to_tier];
	if (nswap2l_tier_alloc_slots(tier, 1, &slot) < 0)
		return -ENOSPC;
	*entry = nswap2l_entry(to_tier, slot);
	return 1;
}

static int move_new_home(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			 struct move_page *mp, int to_tier)
{
	struct nswap2l_move_job *job = batch->job;
	int r;

	if (job && job->new_home &&
	    job->new_home(job, mp->page, mp->old_entry, &mp->new_entry, &mp->write_entry))
		return 1;
	r = alloc_new_home(nc, mp->page, to_tier, &mp->new_entry);
	mp->write_entry = mp->new_entry;
	return r;
}

bool nswap2l_move_batch_add(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    u64 page, u64 home)
{
	struct move_page *mp;

	if (batch->nr_pages == NSWAP2L_MOVE_BATCH ||
	    !nswap2l_map_flag_moving(&nc->map, page, home))
		return false;
	mp = &batch->pages[batch->nr_pages++];
	mp->page = page;
	mp->old_entry = home;
	mp->new_entry = 0;
	mp->write_entry = 0;
	mp->status = BLK_STS_OK;
	return true;
}

unsigned int nswap2l_move_batch_size(struct nswap2l_move_batch *batch)
{
	return batch->nr_pages;
}

void nswap2l_move_batch_run(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    int to_tier, u64 flags, struct nswap2l_move_result *result)
{
	unsigned int i;

	memset(result, 0, sizeof(*result));
	/* Bios that saw the page before it was flagged may still write the old home. */
	nswap2l_inflight_wait(&nc->map.inflight);
	move_io(nc, batch, REQ_OP_READ);

	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (!mp->status && move_new_home(nc, batch, mp, to_tier) < 0)
			mp->status = BLK_STS_NOSPC;
	}
	move_io(nc, batch, REQ_OP_WRITE);

	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (!mp->status &&
		    nswap2l_map_replace_flagged(&nc->map, mp->page, mp->old_entry,
						mp->new_entry | flags))
			continue;
		if (mp->write_entry)
			nswap2l_free_home(nc, mp->write_entry, !mp->status);
		nswap2l_map_replace_flagged(&nc->map, mp->page, mp->old_entry, 0);
		if (mp->status && mp->status != BLK_STS_AGAIN) {
			result->failed++;
		} else {
			result->raced++;
			mp->status = BLK_STS_AGAIN;
		}
	}

	/* Bios that saw the old home may still be reading it. */
	nswap2l_inflight_wait(&nc->map.inflight);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (mp->status)
			continue;
		if (mp->write_entry != mp->new_entry)
			batch->job->release_old(batch->job, mp->old_entry, mp->new_entry);
		else
			nswap2l_free_home(nc, mp->old_entry, true);
		result->moved++;
	}
	batch->nr_pages = 0;
}

void nswap2l_move_batch_free(struct nswap2l_move_batch *batch)
{
	unsigned int i;

	if (!batch)
		return;
	for (i = 0; i < NSWAP2L_MOVE_BATCH; i++)
		if (batch->pages[i].data)
			__free_page(batch->pages[i].data);
	kfree(batch);
}

/* One batch of pages and bios, reused for every batch. */
struct nswap2l_move_batch *nswap2l_move_batch_alloc(void)
{
	struct nswap2l_move_batch *batch = kzalloc(sizeof(*batch), GFP_KERNEL);
	unsigned int i;

	if (!batch)
		return NULL;
	init_completion(&batch->io_done);
	for (i = 0; i < NSWAP2L_MOVE_BATCH; i++) {
		batch->pages[i].data = alloc_page(GFP_KERNEL);
		if (!batch->pages[i].data) {
			nswap2l_move_batch_free(batch);
			return NULL;
		}
	}
	return batch;
}

static void move_batch(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	struct nswap2l *nc = mover->nc;
	struct nswap2l_move_result result;

	mover->batch->job = job;
	nswap2l_move_batch_run(nc, mover->batch, -1, 0, &result);
	job->moved += result.moved;
	job->left += result.raced + result.failed;
	atomic64_add(result.moved, &nc->moved_pages);
}

/* Pages scanned between two looks at the CPU and at a pause request. */
#define MOVE_SCAN_STRETCH	1024

static bool mover_paused(struct nswap2l_mover *mover)
{
	return READ_ONCE(mover->paused) || READ_ONCE(mover->stopped);
}

/* Returns false if the device was suspended: the job goes on from next_page. */
static bool run_job(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	struct nswap2l *nc = mover->nc;
	struct nswap2l_map *map = &nc->map;
	u64 page;

	for (page = job->next_page; page < map->nr_pages; page++) {
		u64 home = nswap2l_map_lookup(map, page) & ~NSWAP2L_ENTRY_REFERENCED;

		if (!(page % MOVE_SCAN_STRETCH)) {
			if (mover_paused(mover)) {
				if (nswap2l_move_batch_size(mover->batch))
					move_batch(mover, job);
				job->next_page = page;
				return false;
			}
			cond_resched();
		}
		if (!home || nc->tiers[nswap2l_entry_tier(home)] != job->tier)
			continue;
		if (job->visit) {
			job->visit(job, page);
			continue;
		}
		if (home & NSWAP2L_ENTRY_MIGRATING ||
		    !job->wants(job, nswap2l_entry_slot(home)) ||
		    !nswap2l_move_batch_add(nc, mover->batch, page, home))
			continue;
		if (nswap2l_move_batch_size(mover->batch) == NSWAP2L_MOVE_BATCH)
			move_batch(mover, job);
	}
	if (nswap2l_move_batch_size(mover->batch))
		move_batch(mover, job);
	return true;
}

static void mover_work(struct work_struct *work)
{
	struct nswap2l_mover *mover = container_of(work, struct nswap2l_mover, work);
	struct nswap2l_move_job *job;

	for (;;) {
		spin_lock_irq(&mover->lock);
		job = mover->paused || mover->stopped ? NULL :
		      list_first_entry_or_null(&mover->jobs, struct nswap2l_move_job, list);
		if (job)
			list_del(&job->list);
		spin_unlock_irq(&mover->lock);
		if (!job)
			return;
		if (!run_job(mover, job)) {
			/* Suspended: first again after resume. */
			spin_lock_irq(&mover->lock);
			list_add(&job->list, &mover->jobs);
			spin_unlock_irq(&mover->lock);
			return;
		}
		job->done(job);
	}
}

bool nswap2l_queue_move(struct nswap2l *nc, struct nswap2l_move_job *job)
{
	struct nswap2l_mover *mover = nc->mover;
	unsigned long flags;
	bool queued, run;

	job->moved = 0;
	job->left = 0;
	job->next_page = 0;
	spin_lock_irqsave(&mover->lock, flags);
	queued = !mover->stopped;
	if (queued && job->visit)
		list_add(&job->list, &mover->jobs);
	else if (queued)
		list_add_tail(&job->list, &mover->jobs);
	run = queued && !mover->paused;
	spin_unlock_irqrestore(&mover->lock, flags);
	if (run)
		queue_work(mover->wq, &mover->work);
	return queued;
}

void nswap2l_mover_pause(struct nswap2l *nc)
{
	struct nswap2l_mover *mover = nc->mover;

	spin_lock_irq(&mover->lock);
	mover->paused = true;
	spin_unlock_irq(&mover->lock);
	flush_work(&mover->work);
}

void nswap2l_mover_resume(struct nswap2l *nc)
{
	struct nswap2l_mover *mover = nc->mover;
	bool run;

	spin_lock_irq(&mover->lock);
	mover->paused = false;
	run = !mover->stopped && !list_empty(&mover->jobs);
	spin_unlock_irq(&mover->lock);
	if (run)
		queue_work(mover->wq, &mover->work);
}

/* Queued jobs are dropped: the tiers that own them are going away. */
void nswap2l_mover_stop(struct nswap2l *nc)
{
	struct nswap2l_mover *mover = nc->mover;

	if (!mover || !mover->wq)
		return;
	spin_lock_irq(&mover->lock);
	mover->stopped = true;
	INIT_LIST_HEAD(&mover->jobs);
	spin_unlock_irq(&mover->lock);
	cancel_work_sync(&mover->work);
}

void nswap2l_mover_destroy(struct nswap2l *nc)
{
	struct nswap2l_mover *mover = nc->mover;

	if (!mover)
		return;
	if (mover->wq)
		destroy_workqueue(mover->wq);
	nswap2l_move_batch_free(mover->batch);
	kfree(mover);
	nc->mover = NULL;
}

/* A new device starts paused: jobs run once its first table is resumed. */
int nswap2l_mover_create(struct nswap2l *nc)
{
	struct nswap2l_mover *mover;

	mover = kzalloc(sizeof(*mover), GFP_KERNEL);
	if (!mover)
		return -ENOMEM;
	nc->mover = mover;
	mover->nc = nc;
	mover->paused = true;
	spin_lock_init(&mover->lock);
	INIT_LIST_HEAD(&mover->jobs);
	INIT_WORK(&mover->work, mover_work);
	mover->batch = nswap2l_move_batch_alloc();
	if (!mover->batch)
		return -ENOMEM;
	/* Ordered: one batch at a time, with the preallocated pages. */
	mover->wq = alloc_ordered_workqueue("nswap2l-move-%s", WQ_MEM_RECLAIM, nc->name);
	return mover->wq ? 0 : -ENOMEM;
}
