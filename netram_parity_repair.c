// SPDX-License-Identifier: GPL-2.0
/*
 * reliability=parity: recovery repairs a group that lost one run in place.
 *
 * A protected group that lost exactly one run (a member's or its parity)
 * stays whole when a spare server takes pages, holds no run of the group
 * and has room: the lost run is rebuilt from the rest of the group (every
 * page the parity covers, stale ones too, as the parity XOR includes them;
 * or, for the parity, the XOR of the members' pages), PUT to the spare
 * under the same keys, and the group's table names the spare for that run.
 * Only the lost pages are written again, not every page of the group.
 *
 * It is driven by the recovery job (netram_recover.c) over the map: the
 * first page of such a group it meets starts the repair (at most
 * NETRAM_REPAIRS groups at a time, with preallocated pages and bios) and is
 * left where it is, unless it is one of the lost run's: those are taken by
 * the mover, flagged like pages it moves, and relabelled to the spare once
 * the repair is in (netram_parity_relabel()), so a write racing the repair
 * wins (it clears the flag) and no data moves.  The pages a repair stores
 * count against recovery_rate as moved pages do (the job's paced_extra),
 * the relabelled ones not.
 *
 * A repair ends without touching the group when anything changed that it
 * relied on: a read or PUT failed, another run or the spare was lost, the
 * group emptied or a server moved the run (MOVED).  Its keys on the spare
 * are freed, the group is remembered (NETRAM_REPAIRS_FAILED) and the next
 * pass moves its pages into new groups as before, or counts them lost.
 * Every repair has ended before a pass is done, and before the servers
 * stop (netram_parity_stop()).
 */
#include "netram_group.h"

#define NETRAM_REPAIRS		16	/* groups repaired at once: two batches' */
#define NETRAM_REPAIRS_FAILED	256	/* groups whose repair gave up, remembered */

struct netram_repair {
	struct netram_tier *nt;
	bool busy;			/* under the repairs' lock */
	u64 serial;			/* of its group, while busy */
	u64 key;			/* the run's first key */
	unsigned int run;
	u16 bits;			/* the run's keys: rebuilt and stored */
	u8 lost, spare;			/* the run's server, and the one it goes to */
	bool sent;			/* PUTs went out: the spare may hold the keys */
	atomic_t puts;			/* PUT bios out, and one while they are sent */
	blk_status_t status;
	struct bio rebuild;		/* the run, rebuilt from the rest of its group */
	struct bio_vec rebuild_vecs[NETRAM_PARITY_RUN];
	struct bio put_bios[NETRAM_PARITY_RUN];
	struct bio_vec put_vecs[NETRAM_PARITY_RUN];	/* each PUT's from its first page on */
	struct page *pages[NETRAM_PARITY_RUN];
};

struct netram_repairs {
	spinlock_t lock;		/* busy, serial, in_flight, failed */
	wait_queue_head_t ended;	/* a repair ended */
	unsigned int in_flight;
	u64 failed[NETRAM_REPAIRS_FAILED];	/* serials, a ring */
	unsigned int next_failed;
	atomic64_t groups, pages;	/* repaired in place */
	atomic64_t pass_pages;		/* of which since the last pass_done */
	struct netram_repair slots[NETRAM_REPAIRS];
};

/* The busy repair of group @serial, or NULL.  Lock held. */
static struct netram_repair *netram_repair_of(struct netram_repairs *rp, u64 serial)
{
	unsigned int i;

	lockdep_assert_held(&rp->lock);
	for (i = 0; i < NETRAM_REPAIRS; i++)
		if (rp->slots[i].busy && rp->slots[i].serial == serial)
			return &rp->slots[i];
	return NULL;
}

static bool netram_repair_gave_up(struct netram_repairs *rp, u64 serial)
{
	unsigned int i;

	lockdep_assert_held(&rp->lock);
	for (i = 0; i < NETRAM_REPAIRS_FAILED; i++)
		if (rp->failed[i] == serial)
			return true;
	return false;
}

static bool netram_repair_running(struct netram_repairs *rp, u64 serial)
{
	unsigned long flags;
	bool running;

	spin_lock_irqsave(&rp->lock, flags);
	running = netram_repair_of(rp, serial);
	spin_unlock_irqrestore(&rp->lock, flags);
	return running;
}

/* The one run of the group that was lost, if it can be repaired; else -1. */
static int netram_repair_run(struct netram_tier *nt, const struct netram_group *g)
{
	int lost = -1;
	unsigned int run;

	if (g->state != NETRAM_GROUP_PROTECTED)
		return -1;
	for (run = 0; run <= NETRAM_PARITY_INDEX; run++) {
		u16 keys = run == NETRAM_PARITY_INDEX ? netram_run_bits(0, g->parity_pages) :
			   run < g->nr_members ? g->pages[run] : 0;

		if (!keys || !netram_copy_lost(nt->servers[netram_group_server(g, run)],
					       netram_group_key(g, run, 0)))
			continue;
		/* Two lost, or one the parity does not cover (its write failed). */
		if (lost >= 0 || keys != netram_run_held(g, run))
			return -1;
		lost = run;
	}
	return lost;
}

/* A spare for run @run of the group: takes pages, has room, holds none of the group. */
static bool netram_pick_spare(struct netram_tier *nt, const struct netram_group *g,
			      unsigned int run, unsigned int *spare)
{
	struct nswap2l_server_room rooms[NETRAM_MAX_SERVERS];
	unsigned int i, nr_servers = netram_nr_servers(nt);
	unsigned int nr = hweight16(netram_run_held(g, run));
	u64 key = netram_group_key(g, run, 0);
	unsigned long candidates = netram_server_rooms(nt, rooms);

	for_each_set_bit(i, &candidates, nr_servers)
		if (rooms[i].free < nr || !netram_run_alone_on(g, run, i) ||
		    netram_copy_lost(nt->servers[i], key))
			__clear_bit(i, &candidates);
	if (nswap2l_pick_servers(nt->choice, rooms, nr_servers, candidates, 1, spare))
		return false;
	atomic64_sub(nr, &nt->servers[*spare]->free_estimate);
	return true;
}

/*
 * Still what the repair found, but for its run's server, which it may
 * replace: protected, the run lost and on its server as it was, no other
 * run lost, the spare not lost and alone.  p->lock held.
 */
static bool netram_repair_applies(struct netram_tier *nt, const struct netram_group *g,
				  const struct netram_repair *r)
{
	struct netram_server *spare = nt->servers[r->spare];

	return g && netram_repair_run(nt, g) == r->run &&
	       netram_group_server(g, r->run) == r->lost &&
	       netram_run_held(g, r->run) == r->bits &&
	       !netram_copy_lost(spare, r->key) && !READ_ONCE(spare->failed) &&
	       netram_run_alone_on(g, r->run, r->spare);
}

/* The slot is free again; @gave_up: the group is left to the whole-group move. */
static void netram_repair_free(struct netram_repairs *rp, struct netram_repair *r, bool gave_up)
{
	unsigned long flags;

	spin_lock_irqsave(&rp->lock, flags);
	if (gave_up) {
		rp->failed[rp->next_failed] = r->serial;
		rp->next_failed = (rp->next_failed + 1) % NETRAM_REPAIRS_FAILED;
	}
	r->busy = false;
	rp->in_flight--;
	spin_unlock_irqrestore(&rp->lock, flags);
	wake_up_all(&rp->ended);
}

/*
 * The repair is over: its run is on the spare now, or (@status, or the
 * group changed) the spare frees the keys it may have stored, and the
 * group is left to the whole-group move in the next pass.  Any context.
 */
static void netram_repair_end(struct netram_repair *r, blk_status_t status)
{
	struct netram_tier *nt = r->nt;
	struct netram_parity *p = netram_parity_of(nt);
	struct netram_repairs *rp = p->repairs;
	struct netram_server *spare = nt->servers[r->spare];
	unsigned int nr = hweight16(r->bits), i;
	struct netram_group *g;
	bool repaired, damaged;
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	g = netram_find_group(p, r->key);
	repaired = !status && netram_repair_applies(nt, g, r);
	if (repaired)
		netram_rehome_run(nt, g, r->run, spare, false);
	damaged = !repaired && g;
	spin_unlock_irqrestore(&p->lock, flags);

	if (repaired) {
		atomic64_inc(&rp->groups);
		atomic64_add(nr, &rp->pages);
		atomic64_add(nr, &rp->pass_pages);
	} else {
		spin_lock_irqsave(&spare->lock, flags);
		atomic64_add(nr, &spare->free_estimate);
		for (i = 0; i < NETRAM_PARITY_RUN && r->sent; i++)
			if (r->bits & BIT(i) && !netram_copy_lost(spare, r->key + i))
				netram_add_free_key(spare, r->key + i);
		spin_unlock_irqrestore(&spare->lock, flags);
		if (r->sent)
			netram_queue_io(spare);
	}
	if (damaged) {
		/* The pass skipped the group's pages: the next one moves them. */
		spin_lock_irqsave(&nt->recovery.lock, flags);
		nt->recovery.again = true;
		spin_unlock_irqrestore(&nt->recovery.lock, flags);
	}

	netram_repair_free(rp, r, !repaired);
}

static void netram_repair_put_done(struct netram_repair *r, blk_status_t status)
{
	if (status)
		WRITE_ONCE(r->status, status);
	if (atomic_dec_and_test(&r->puts))
		netram_repair_end(r, READ_ONCE(r->status));
}

static void netram_repair_put_endio(struct bio *bio)
{
	struct netram_repair *r = bio->bi_private;
	blk_status_t status = bio->bi_status;

	bio_uninit(bio);
	netram_repair_put_done(r, status);
}

/* The run is rebuilt: its pages go to the spare, at most its max_pages per PUT. */
static void netram_repair_rebuilt(struct bio *rebuild)
{
	struct netram_repair *r = rebuild->bi_private;
	struct netram_server *spare = r->nt->servers[r->spare];
	unsigned long bits = r->bits;
	blk_status_t status = rebuild->bi_status;
	unsigned int start, end, at, len, i, nr_bios = 0;

	bio_uninit(rebuild);
	if (status) {
		netram_repair_end(r, status);
		return;
	}
	r->status = BLK_STS_OK;
	r->sent = true;
	atomic_set(&r->puts, 1);
	for_each_set_bitrange(start, end, &bits, NETRAM_PARITY_RUN) {
		for (at = start; at < end; at += len) {
			struct bio *bio = &r->put_bios[nr_bios++];

			len = min(end - at, READ_ONCE(spare->max_pages));
			bio_init(bio, NULL, &r->put_vecs[at], len, REQ_OP_WRITE);
			for (i = 0; i < len; i++)
				__bio_add_page(bio, r->pages[at + i], PAGE_SIZE, 0);
			bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(r->key + at);
			bio->bi_end_io = netram_repair_put_endio;
			bio->bi_private = r;
			atomic_inc(&r->puts);
			netram_queue_bio(spare, bio);
		}
	}
	netram_repair_put_done(r, BLK_STS_OK);
}

/* Rebuild the lost run @run of @g (a snapshot) onto a spare; false if it cannot start. */
static bool netram_repair_start(struct netram_tier *nt, const struct netram_group *g,
				unsigned int run, struct netram_repair *r)
{
	unsigned int i, lost = netram_group_server(g, run), spare;

	if (!netram_pick_spare(nt, g, run, &spare))
		return false;
	r->nt = nt;
	r->key = netram_group_key(g, run, 0);
	r->run = run;
	r->sent = false;
	r->bits = netram_run_held(g, run);
	r->lost = lost;
	r->spare = spare;
	bio_init(&r->rebuild, NULL, r->rebuild_vecs, NETRAM_PARITY_RUN, REQ_OP_READ);
	for (i = 0; i < fls(r->bits); i++)
		__bio_add_page(&r->rebuild, r->pages[i], PAGE_SIZE, 0);
	r->rebuild.bi_end_io = netram_repair_rebuilt;
	r->rebuild.bi_private = r;
	if (netram_parity_rebuild(nt, &r->rebuild, netram_make_slot(r->key, &lost, 1)))
		return true;
	bio_uninit(&r->rebuild);
	atomic64_add(hweight16(r->bits), &nt->servers[spare]->free_estimate);
	return false;
}

/* A slot for group @g's repair, waiting for one; NULL if it is under way or gave up. */
static struct netram_repair *netram_repair_slot(struct netram_repairs *rp,
						const struct netram_group *g, bool *running)
{
	struct netram_repair *r = NULL;
	unsigned int i;

	for (;;) {
		spin_lock_irq(&rp->lock);
		*running = netram_repair_of(rp, g->serial);
		if (*running || netram_repair_gave_up(rp, g->serial)) {
			spin_unlock_irq(&rp->lock);
			return NULL;
		}
		for (i = 0; i < NETRAM_REPAIRS && !r; i++)
			if (!rp->slots[i].busy)
				r = &rp->slots[i];
		if (r) {
			r->busy = true;
			r->serial = g->serial;
			rp->in_flight++;
		}
		spin_unlock_irq(&rp->lock);
		if (r)
			return r;
		wait_event(rp->ended, READ_ONCE(rp->in_flight) < NETRAM_REPAIRS);
	}
}

int netram_repair_wants(struct netram_tier *nt, const struct netram_group *g, u64 slot)
{
	struct netram_repairs *rp = netram_parity_of(nt)->repairs;
	u64 key = netram_slot_key(slot);
	unsigned int own = netram_key_run(key), index = netram_group_server(g, own);
	struct netram_server *home = nt->servers[index];
	struct netram_repair *r;
	bool running;
	int run;

	/* Its run was repaired onto another server: the entry follows. */
	if (netram_slot_server_index(slot, 0) != index)
		return netram_copy_lost(home, key) || READ_ONCE(home->failed) ? -1 : 1;
	run = netram_repair_run(nt, g);
	if (run < 0)
		return -1;
	r = netram_repair_slot(rp, g, &running);
	if (r && !netram_repair_start(nt, g, run, r)) {
		netram_repair_free(rp, r, true);
		return -1;
	}
	/* Its pages count against recovery_rate as the mover's do. */
	if (r)
		nt->recovery.job.paced_extra += hweight16(r->bits);
	if (!r && !running)
		return -1;	/* gave up on it before */
	return own == run;
}

/*
 * The recovery job's relabel(): a page of a run repaired in place names
 * the spare now, once the repair of its group has ended (later, while it
 * runs); NSWAP2L_MOVE_IT if it gave up.
 */
enum nswap2l_relabel netram_parity_relabel(struct nswap2l_move_job *job, u64 page, u64 old_entry,
					   u64 *entry, u64 *write, bool wait)
{
	struct netram_tier *nt = netram_recovery_tier(job);
	struct netram_parity *p = netram_parity_of(nt);
	u64 slot = nswap2l_entry_slot(old_entry), key = netram_slot_key(slot);
	unsigned int index = netram_slot_server_index(slot, 0);
	struct netram_group *g;
	struct netram_server *srv;

	if (netram_repair_running(p->repairs, netram_key_serial(key))) {
		if (!wait)
			return NSWAP2L_RELABEL_LATER;
		wait_event(p->repairs->ended,
			   !netram_repair_running(p->repairs, netram_key_serial(key)));
	}
	spin_lock_irq(&p->lock);
	g = netram_find_group(p, key);
	if (g && g->state == NETRAM_GROUP_PROTECTED)
		index = netram_group_server(g, netram_key_run(key));
	spin_unlock_irq(&p->lock);
	srv = nt->servers[index];
	if (index == netram_slot_server_index(slot, 0) || netram_copy_lost(srv, key) ||
	    READ_ONCE(srv->failed))
		return NSWAP2L_MOVE_IT;
	/* Its other flags stay (replace_flagged() keeps the referenced bit). */
	*entry = nswap2l_entry(nswap2l_entry_tier(old_entry), netram_make_slot(key, &index, 1)) |
		 (old_entry & NSWAP2L_ENTRY_FLAGS & ~NSWAP2L_ENTRY_REFERENCED);
	return NSWAP2L_RELABEL_IT;
}

void netram_repairs_wait(struct netram_tier *nt)
{
	struct netram_parity *p = netram_parity_of(nt);

	if (p && p->repairs)
		wait_event(p->repairs->ended, !READ_ONCE(p->repairs->in_flight));
}

u64 netram_repairs_pass_done(struct netram_tier *nt)
{
	netram_repairs_wait(nt);
	return atomic64_xchg(&netram_parity_of(nt)->repairs->pass_pages, 0);
}

void netram_repairs_report(struct netram_tier *nt)
{
	struct netram_repairs *rp = netram_parity_of(nt)->repairs;

	DMINFO("%s: %llu parity groups repaired in place so far (%llu pages rebuilt onto spare servers)",
	       netram_dev_name(nt), atomic64_read(&rp->groups), atomic64_read(&rp->pages));
}

int netram_repairs_create(struct netram_parity *p)
{
	struct netram_repairs *rp;
	unsigned int i, j;

	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp)
		return -ENOMEM;
	p->repairs = rp;
	spin_lock_init(&rp->lock);
	init_waitqueue_head(&rp->ended);
	memset(rp->failed, 0xff, sizeof(rp->failed));	/* no serial is that high */
	for (i = 0; i < NETRAM_REPAIRS; i++)
		for (j = 0; j < NETRAM_PARITY_RUN; j++) {
			rp->slots[i].pages[j] = alloc_page(GFP_KERNEL);
			if (!rp->slots[i].pages[j])
				return -ENOMEM;
		}
	return 0;
}

void netram_repairs_destroy(struct netram_parity *p)
{
	struct netram_repairs *rp = p->repairs;
	unsigned int i, j;

	if (!rp)
		return;
	for (i = 0; i < NETRAM_REPAIRS; i++)
		for (j = 0; j < NETRAM_PARITY_RUN; j++)
			if (rp->slots[i].pages[j])
				__free_page(rp->slots[i].pages[j]);
	kfree(rp);
}
