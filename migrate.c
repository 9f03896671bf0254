// SPDX-License-Identifier: GPL-2.0
/*
 * Background page moves: a tier asks for some of its pages to go elsewhere
 * (a Network RAM server that needs its memory back, a server being drained)
 * and the mover copies them to a new home chosen by the placement policy
 * (or by the job, which may keep part of the old one: new_home()), in
 * batches, on its own ordered workqueue.
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
 * uses too, with a batch of its own, to move pages to flash.  The mover
 * keeps two batches of MOVER_BATCH pages in flight: one is read while the
 * one before is written, and each waits for the bios in flight twice (before
 * its reads, before freeing its old homes) while the other's I/O runs.
 *
 * Recovery follows the device's recovery_rate, as md's resync follows
 * speed_limit_min and speed_limit_max: it always goes at the minimum at
 * least, at the maximum at most, and above the minimum only while no
 * foreground bio is in flight or has completed since its last look.
 *
 * Everything is preallocated in the constructor: two batches of
 * MOVER_BATCH pages and bios (1 MiB and about 50 KiB with 4 KiB pages),
 * reused for every batch.  While the device is suspended the mover is
 * paused between batches; a job keeps its place in the map and goes on
 * after resume.
 */
#include <linux/bio.h>
#include <linux/completion.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "core.h"
#include "map.h"
#include "mover.h"
#include "profiler.h"

/*
 * Pages per batch of the mover's jobs: two such batches in flight keep
 * Network RAM's connections busy (a server answers many pages per message)
 * at 1 MiB of pages per device.  Prefetching keeps NSWAP2L_MOVE_BATCH.
 */
#define MOVER_BATCH		128

/*
 * recovery_rate defaults, pages/s.  The minimum is what recovery keeps
 * while foreground I/O runs: 500 pages/s (2 MiB/s, md's speed_limit_min is
 * 1 MiB/s) keeps foreground reads at 0.8 of their rate in the reliability
 * benchmark.  The maximum, 2^20 pages/s (4 GiB/s), is more than a 25 GbE
 * link or a flash drive moves: an idle device recovers as fast as its
 * tiers go, unless the operator lowers it.
 */
#define MOVER_RATE_MIN		500
#define MOVER_RATE_MAX		(1U << 20)
/* A rate is measured over the last one to two steps, as md's marks do. */
#define MOVER_RATE_STEP		HZ
/* How often recovery above its minimum looks whether the device is idle again. */
#define MOVER_BUSY_LOOK		(HZ / 50)

struct move_page {
	u64 page;
	u64 old_entry;			/* the home, as flagged */
	u64 new_entry;			/* installed */
	u64 write_entry;		/* written: new_entry but for job->new_home() */
	struct page *data;
	struct bio bio;
	struct bio_vec bvec;
	bool bio_in_use;
	bool relabelled;		/* job->relabel(): neither read nor written */
	bool relabel_later;		/* asked again in move_batch_finish() */
	blk_status_t status;
};

struct nswap2l_move_batch {
	struct nswap2l_move_job *job;	/* the mover's, NULL for prefetching */
	unsigned int size;		/* pages it can take */
	unsigned int nr_pages;
	atomic_t pending_io;
	struct completion io_done;
	struct move_page pages[];
};

struct nswap2l_mover {
	struct nswap2l *nc;
	struct workqueue_struct *wq;
	struct work_struct work;
	spinlock_t lock;		/* protects jobs, stopped, paused and the rates */
	struct list_head jobs;
	bool stopped;			/* the device is going away */
	bool paused;			/* the device is suspended */
	/* Filled, then sent while the other is written, then finished. */
	struct nswap2l_move_batch *batch[2];
	unsigned int filling;
	/* recovery_rate, pages/s, under lock; rate_gen counts changes. */
	unsigned int rate_min, rate_max;
	unsigned int rate_gen;
	wait_queue_head_t wake;		/* a throttled job: rate changed, pause, stop */
	/*
	 * The mover's own: pages that rate-limited jobs sent, at two marks;
	 * of them, those the client read or wrote itself (not server copies).
	 */
	u64 paced, paced_by_client;
	unsigned long mark[2];
	u64 mark_paced[2], mark_by_client[2];
	u64 last_done;			/* foreground bios completed at the last look */
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
 * good; move_io_wait() waits for them.  Reads count in flight like bios,
 * and look at the entry once counted (move_read()): a discard that cleared
 * it before frees the old slot only after they are done, or they skip the
 * page.
 */
static void move_io_submit(struct nswap2l *nc, struct nswap2l_move_batch *batch, enum req_op op)
{
	unsigned int i;

	atomic_set(&batch->pending_io, 1);
	reinit_completion(&batch->io_done);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];
		u64 entry = op == REQ_OP_READ ? mp->old_entry : mp->write_entry;
		struct nswap2l_tier *tier;

		/* Neither read nor written: a race shows in its entry when it is finished. */
		if (mp->relabelled)
			continue;
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
}

static void move_io_wait(struct nswap2l_move_batch *batch)
{
	unsigned int i;

	if (!atomic_dec_and_test(&batch->pending_io))
		wait_for_completion(&batch->io_done);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (mp->bio_in_use)
			bio_uninit(&mp->bio);
		mp->bio_in_use = false;
	}
}

static void move_read(struct nswap2l *nc, struct nswap2l_move_batch *batch)
{
	unsigned int epoch = nswap2l_inflight_enter(&nc->map.inflight);

	move_io_submit(nc, batch, REQ_OP_READ);
	move_io_wait(batch);
	nswap2l_inflight_exit(&nc->map.inflight, epoch);
}

static int alloc_new_home(struct nswap2l *nc, u64 page, int to_tier, u64 *entry)
{
	struct nswap2l_tier *tier;
	u64 slot;

	if (to_tier < 0)
		return nswap2l_alloc_home(nc, page, 1, 0, entry);
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

	if (batch->nr_pages == batch->size ||
	    !nswap2l_map_flag_moving(&nc->map, page, home))
		return false;
	mp = &batch->pages[batch->nr_pages++];
	mp->page = page;
	mp->old_entry = home;
	mp->new_entry = 0;
	mp->write_entry = 0;
	mp->status = BLK_STS_OK;
	mp->relabelled = false;
	mp->relabel_later = false;
	return true;
}

unsigned int nswap2l_move_batch_size(struct nswap2l_move_batch *batch)
{
	return batch->nr_pages;
}

/* Asks job->relabel() about every flagged page, before the batch is paced and sent. */
static void move_batch_relabel(struct nswap2l *nc, struct nswap2l_move_batch *batch)
{
	struct nswap2l_move_job *job = batch->job;
	unsigned int i;

	/* Bios that saw the page before it was flagged may still write the old home. */
	nswap2l_inflight_wait(&nc->map.inflight);
	for (i = 0; job && job->relabel && i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		enum nswap2l_relabel how = job->relabel(job, mp->page, mp->old_entry,
							&mp->new_entry, &mp->write_entry, false);

		mp->relabelled = how != NSWAP2L_MOVE_IT;
		mp->relabel_later = how == NSWAP2L_RELABEL_LATER;
		job->paced_extra -= mp->relabelled;
	}
	if (job && job->relabels_asked)
		job->relabels_asked(job);
}

/* Read the pages not relabelled, and send them to new homes: move_batch_finish() waits. */
static void move_batch_send(struct nswap2l *nc, struct nswap2l_move_batch *batch, int to_tier)
{
	unsigned int i;

	move_read(nc, batch);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];

		if (!mp->status && !mp->relabelled && move_new_home(nc, batch, mp, to_tier) < 0)
			mp->status = BLK_STS_NOSPC;
	}
	move_io_submit(nc, batch, REQ_OP_WRITE);
}

/* Once written: the new homes installed where still flagged, the old ones freed. */
static void move_batch_finish(struct nswap2l *nc, struct nswap2l_move_batch *batch, u64 flags,
			      struct nswap2l_move_result *result)
{
	unsigned int i;

	memset(result, 0, sizeof(*result));
	move_io_wait(batch);
	for (i = 0; i < batch->nr_pages; i++) {
		struct move_page *mp = &batch->pages[i];
		struct nswap2l_move_job *job = batch->job;

		if (!mp->relabel_later)
			continue;
		/*
		 * A write took the page: it stays, so it need not wait for its
		 * relabel (parity's, for its group's repair).  A write after
		 * this look fails replace_flagged() below, as before.
		 */
		if ((!job->relabel_raced && !still_flagged(nc, mp)) ||
		    job->relabel(job, mp->page, mp->old_entry, &mp->new_entry,
				 &mp->write_entry, true) != NSWAP2L_RELABEL_IT)
			mp->status = BLK_STS_AGAIN;
	}
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
		if (mp->relabelled && !mp->write_entry)
			continue;	/* its old home is its new one's data */
		if (mp->write_entry != mp->new_entry)
			batch->job->release_old(batch->job, mp->old_entry, mp->new_entry);
		else
			nswap2l_free_home(nc, mp->old_entry, true);
		result->moved++;
	}
	batch->nr_pages = 0;
}

void nswap2l_move_batch_run(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    int to_tier, u64 flags, struct nswap2l_move_result *result)
{
	move_batch_relabel(nc, batch);
	move_batch_send(nc, batch, to_tier);
	move_batch_finish(nc, batch, flags, result);
}

void nswap2l_move_batch_free(struct nswap2l_move_batch *batch)
{
	unsigned int i;

	if (!batch)
		return;
	for (i = 0; i < batch->size; i++)
		if (batch->pages[i].data)
			__free_page(batch->pages[i].data);
	kvfree(batch);
}

/* A batch of @size pages and bios, reused for every batch. */
static struct nswap2l_move_batch *move_batch_alloc(unsigned int size)
{
	struct nswap2l_move_batch *batch = kvzalloc(struct_size(batch, pages, size), GFP_KERNEL);
	unsigned int i;

	if (!batch)
		return NULL;
	batch->size = size;
	init_completion(&batch->io_done);
	for (i = 0; i < size; i++) {
		batch->pages[i].data = alloc_page(GFP_KERNEL);
		if (!batch->pages[i].data) {
			nswap2l_move_batch_free(batch);
			return NULL;
		}
	}
	return batch;
}

struct nswap2l_move_batch *nswap2l_move_batch_alloc(void)
{
	return move_batch_alloc(NSWAP2L_MOVE_BATCH);
}

static bool mover_paused(struct nswap2l_mover *mover)
{
	return READ_ONCE(mover->paused) || READ_ONCE(mover->stopped);
}

/* md's is_mddev_idle(): no foreground bio in flight, nor completed since the last look. */
static bool device_idle(struct nswap2l_mover *mover)
{
	struct nswap2l_io_stats io;
	s64 inflight = 0;
	u64 done = 0;
	bool idle;
	int id, dir;

	nswap2l_stats_sum(mover->nc, &io);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		for (dir = 0; dir < 2; dir++) {
			inflight += io.inflight[id][dir];
			done += io.done[id][dir];
		}
	idle = inflight <= 0 && done == mover->last_done;
	mover->last_done = done;
	return idle;
}

static void mover_rate_start(struct nswap2l_mover *mover)
{
	mover->mark[0] = mover->mark[1] = jiffies;
	mover->mark_paced[0] = mover->mark_paced[1] = mover->paced;
	mover->mark_by_client[0] = mover->mark_by_client[1] = mover->paced_by_client;
	device_idle(mover);
}

/* A batch sent, if not finished yet; false if it was. */
static bool finish_batch(struct nswap2l_mover *mover, struct nswap2l_move_job *job,
			 struct nswap2l_move_batch *batch)
{
	struct nswap2l *nc = mover->nc;
	struct nswap2l_move_result result;

	if (!nswap2l_move_batch_size(batch))
		return false;
	move_batch_finish(nc, batch, 0, &result);
	job->moved += result.moved;
	job->left += result.raced + result.failed;
	atomic64_add(result.moved, &nc->moved_pages);
	return true;
}

/*
 * Before a batch of @pages of a rate-limited job: wait until the pages sent
 * since the older mark, at the maximum rate, would have taken until now;
 * and, while the device is busy, until those of them the client read or
 * wrote itself (@by_client of the batch's, its relabels asked already), at
 * the minimum rate: pages the servers copy between themselves cost the
 * foreground no client I/O.  The batch sent before is finished first, so
 * that its pages do not stay flagged.
 */
static void mover_throttle(struct nswap2l_mover *mover, struct nswap2l_move_job *job,
			   unsigned int pages, unsigned int by_client)
{
	for (;;) {
		unsigned long now = jiffies, go;
		unsigned int gen, rate_min, rate_max;
		u64 sent;

		spin_lock_irq(&mover->lock);
		gen = mover->rate_gen;
		rate_min = mover->rate_min;
		rate_max = mover->rate_max;
		spin_unlock_irq(&mover->lock);
		if (time_after_eq(now, mover->mark[1] + MOVER_RATE_STEP)) {
			mover->mark[0] = mover->mark[1];
			mover->mark_paced[0] = mover->mark_paced[1];
			mover->mark[1] = now;
			mover->mark_paced[1] = mover->paced;
			mover->mark_by_client[0] = mover->mark_by_client[1];
			mover->mark_by_client[1] = mover->paced_by_client;
		}
		sent = (mover->paced - mover->mark_paced[0]) * HZ;
		go = mover->mark[0] + div_u64(sent, rate_max);
		if (!time_before(now, go)) {
			sent = (mover->paced_by_client - mover->mark_by_client[0]) * HZ;
			go = mover->mark[0] + div_u64(sent, rate_min);
			if (!time_before(now, go) || device_idle(mover))
				break;
			go = min(go, now + MOVER_BUSY_LOOK);
		}
		/* That took a while: look at the time again. */
		if (finish_batch(mover, job, mover->batch[mover->filling ^ 1]))
			continue;
		wait_event_idle_timeout(mover->wake, mover_paused(mover) ||
					READ_ONCE(mover->rate_gen) != gen, go - now);
		if (mover_paused(mover))
			break;
	}
	mover->paced += pages;
	mover->paced_by_client += by_client;
}

/* A rate-limited job's batch is at most a tenth of a second at the maximum. */
static unsigned int batch_limit(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	if (!job->rate_limited)
		return MOVER_BATCH;
	return clamp_t(unsigned int, READ_ONCE(mover->rate_max) / 10, 1, MOVER_BATCH);
}

/*
 * Send the batch filled, then finish the one sent before: its writes ran
 * meanwhile.  Its relabels are asked before it is paced, so that the pages
 * the servers copy count as such in this batch.
 */
static void move_batch(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	struct nswap2l_move_batch *batch = mover->batch[mover->filling];
	struct nswap2l_move_batch *sent = mover->batch[mover->filling ^ 1];

	batch->job = job;
	job->server_copied = 0;
	move_batch_relabel(mover->nc, batch);
	if (job->rate_limited) {
		int pages = max_t(int, nswap2l_move_batch_size(batch) + job->paced_extra, 0);

		mover_throttle(mover, job, pages, max_t(int, pages - job->server_copied, 0));
	}
	job->paced_extra = 0;
	move_batch_send(mover->nc, batch, -1);
	mover->filling ^= 1;
	finish_batch(mover, job, sent);
}

/* Both batches done: before a pause, and when the job ends. */
static void flush_batches(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	if (nswap2l_move_batch_size(mover->batch[mover->filling]))
		move_batch(mover, job);
	finish_batch(mover, job, mover->batch[mover->filling ^ 1]);
}

/* Pages scanned between two looks at the CPU and at a pause request. */
#define MOVE_SCAN_STRETCH	1024

/* Returns false if the device was suspended: the job goes on from next_page. */
static bool run_job(struct nswap2l_mover *mover, struct nswap2l_move_job *job)
{
	struct nswap2l *nc = mover->nc;
	struct nswap2l_map *map = &nc->map;
	u64 page;

	if (job->rate_limited)
		mover_rate_start(mover);
	for (page = job->next_page; page < map->nr_pages; page++) {
		u64 home = nswap2l_map_lookup(map, page) & ~NSWAP2L_ENTRY_REFERENCED;

		if (!(page % MOVE_SCAN_STRETCH)) {
			if (mover_paused(mover)) {
				flush_batches(mover, job);
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
		    !nswap2l_move_batch_add(nc, mover->batch[mover->filling], page, home))
			continue;
		if (nswap2l_move_batch_size(mover->batch[mover->filling]) >=
		    batch_limit(mover, job))
			move_batch(mover, job);
	}
	flush_batches(mover, job);
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
	job->paced_extra = 0;
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
	wake_up(&mover->wake);
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
	wake_up(&mover->wake);
	cancel_work_sync(&mover->work);
}

void nswap2l_mover_destroy(struct nswap2l *nc)
{
	struct nswap2l_mover *mover = nc->mover;

	if (!mover)
		return;
	if (mover->wq)
		destroy_workqueue(mover->wq);
	nswap2l_move_batch_free(mover->batch[0]);
	nswap2l_move_batch_free(mover->batch[1]);
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
	init_waitqueue_head(&mover->wake);
	mover->rate_min = MOVER_RATE_MIN;
	mover->rate_max = MOVER_RATE_MAX;
	mover->batch[0] = move_batch_alloc(MOVER_BATCH);
	mover->batch[1] = move_batch_alloc(MOVER_BATCH);
	if (!mover->batch[0] || !mover->batch[1])
		return -ENOMEM;
	/* Ordered: one job at a time, with the preallocated batches. */
	mover->wq = alloc_ordered_workqueue("nswap2l-move-%s", WQ_MEM_RECLAIM, nc->name);
	return mover->wq ? 0 : -ENOMEM;
}

/* recovery_rate MIN MAX, pages/s: md's speed_limit_min and speed_limit_max. */
int nswap2l_mover_set_rate(struct nswap2l *nc, unsigned int rate_min, unsigned int rate_max)
{
	struct nswap2l_mover *mover = nc->mover;

	if (!rate_min || rate_min > rate_max) {
		DMERR("%s: recovery_rate %u %u: the minimum must be at least 1 and at most the maximum (pages/s)",
		      nc->name, rate_min, rate_max);
		return -EINVAL;
	}
	spin_lock_irq(&mover->lock);
	mover->rate_min = rate_min;
	mover->rate_max = rate_max;
	mover->rate_gen++;
	spin_unlock_irq(&mover->lock);
	wake_up(&mover->wake);
	return 0;
}

void nswap2l_mover_get_rate(struct nswap2l *nc, unsigned int *rate_min, unsigned int *rate_max)
{
	struct nswap2l_mover *mover = nc->mover;

	spin_lock_irq(&mover->lock);
	*rate_min = mover->rate_min;
	*rate_max = mover->rate_max;
	spin_unlock_irq(&mover->lock);
}
