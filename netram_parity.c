// SPDX-License-Identifier: GPL-2.0
/*
 * reliability=parity: Nswap's dynamic parity, with parity logging.
 *
 * Pages form groups as they are written: up to N member runs (of at most
 * NETRAM_PARITY_RUN pages) on distinct servers, and a parity run, their XOR,
 * on yet another server.  Which servers is the server-choice policy's
 * decision, group by group, so parity spreads over every server.  A group
 * takes the writes that arrive while it is open.  It is sealed, and its
 * parity computed from the members' bios and sent, as soon as it is full
 * and all its pages are sent, or else once its members are stored (no other
 * write came).  The members' bios complete only once the parity is stored
 * too: a completed write always has its redundancy.  Under load a group
 * fills up (one parity page per N writes); a lone write makes a group of
 * one, whose parity is a copy.
 *
 * How groups are kept, and their keys: netram_group.c.
 *
 * A page whose server is lost or failed is rebuilt from the rest of its
 * group: on demand when it is read, in the background by recovery, which
 * also moves every page of a group that lost any of its pages or its
 * parity into a new group.
 */
#include <crypto/algapi.h>
#include <linux/bsearch.h>

#include "netram_group.h"

/*
 * Pages a rebuild reads at most: its range (at most a run) from each other
 * member and from the parity.
 */
#define NETRAM_REBUILD_PAGES		(NETRAM_PARITY_MEMBERS * NETRAM_PARITY_RUN)
/* Bios a rebuild has out at once: one per other run of a group, the usual whole plan. */
#define NETRAM_REBUILD_BIOS		NETRAM_PARITY_MEMBERS

/* A member's write: a clone, so that its bio can wait for the parity. */
struct netram_member_write {
	struct netram_tier *nt;
	u64 key;
	unsigned int nr;
	struct bio clone;	/* last: a bio_set's front_pad */
};

/*
 * One read of a rebuild: @nr pages at @key (at most what the server takes
 * in one message), into its pages from @page on, XORed into the bio from
 * its page @first on.
 */
struct netram_rebuild_piece {
	u8 server;
	u8 first;
	u8 nr;
	u8 page;
	u64 key;
};

struct netram_rebuild_bio {
	struct netram_rebuild *rb;
	struct bio bio;
	struct bio_vec bvecs[NETRAM_PARITY_RUN];
};

/*
 * The reads all go out at once (NETRAM_REBUILD_BIOS at a time, which is
 * every read unless a run's pages are scattered), each into pages of its
 * own, and the last one to complete XORs them all into the bio.
 */
struct netram_rebuild {
	struct netram_tier *nt;
	struct bio *orig;
	unsigned int nr_pieces, nr_pages;
	atomic_t next;			/* piece to send next */
	atomic_t in_flight;		/* bios */
	blk_status_t status;		/* a read's error */
	struct netram_rebuild_piece pieces[NETRAM_REBUILD_PAGES];
	struct page *pages[NETRAM_REBUILD_PAGES];
	struct netram_rebuild_bio bios[NETRAM_REBUILD_BIOS];
};

/*----------------------------------------------------------------
 * Writing: members, then the parity
 *--------------------------------------------------------------*/

/* Nothing can join the parity any more: write it. */
static void netram_seal_group(struct netram_tier *nt, struct netram_group *g)
{
	struct netram_parity *p = netram_parity_of(nt);

	lockdep_assert_held(&p->lock);
	if (p->open == g)
		p->open = NULL;
	g->state = NETRAM_GROUP_SEALED;
	list_add_tail(&p->ios[g->io].sealed, &p->sealed);
	queue_work(nt->wq, &p->parity_work);
}

static bool netram_group_stored(const struct netram_group_io *io)
{
	unsigned int m;

	for (m = 0; m < NETRAM_PARITY_MEMBERS; m++)
		if (io->pending[m])
			return false;
	return true;
}

/* Every page that joined the group was sent. */
static bool netram_group_sent(const struct netram_group *g, const struct netram_group_io *io)
{
	unsigned int m;

	for (m = 0; m < g->nr_members; m++)
		if ((io->mapped[m] & g->pages[m]) != g->pages[m])
			return false;
	return true;
}

/*
 * Seal as soon as the parity can be computed: a closed group (full, or no
 * server left for another member) once all its pages are sent, so that the
 * parity goes out while they are on the wire; an open one once they are
 * stored (no other write came meanwhile).
 */
static void netram_maybe_seal(struct netram_tier *nt, struct netram_group *g)
{
	struct netram_group_io *io = &netram_parity_of(nt)->ios[g->io];

	lockdep_assert_held(&netram_parity_of(nt)->lock);
	if (g->state > NETRAM_GROUP_CLOSED)
		return;
	if (netram_group_stored(io) ||
	    (g->state == NETRAM_GROUP_CLOSED && netram_group_sent(g, io)))
		netram_seal_group(nt, g);
}

/* The members and the parity are written, or failed.  Parity lock held. */
static bool netram_group_complete(const struct netram_group *g, const struct netram_group_io *io)
{
	return g->state == NETRAM_GROUP_SEALED && io->parity_done && netram_group_stored(io);
}

/*
 * @nr pages from @key are stored (or not, @status).
 * True when the group is complete: the caller calls netram_group_written().
 */
static bool netram_member_done(struct netram_tier *nt, struct netram_group *g, u64 key,
			       unsigned int nr, blk_status_t status)
{
	struct netram_group_io *io = &netram_parity_of(nt)->ios[g->io];
	unsigned int m = netram_key_run(key);

	lockdep_assert_held(&netram_parity_of(nt)->lock);
	io->pending[m] &= ~netram_run_bits(netram_key_page(key), nr);
	if (status)
		g->left_out |= BIT(m);
	netram_maybe_seal(nt, g);
	return netram_group_complete(g, io);
}

static void netram_group_written(struct netram_tier *nt, struct netram_group_io *io);

static void netram_member_endio(struct bio *clone)
{
	struct netram_member_write *mw = container_of(clone, struct netram_member_write, clone);
	struct netram_parity *p = netram_parity_of(mw->nt);
	struct netram_group_io *io;
	struct netram_group *g;
	unsigned long flags;
	bool complete;

	spin_lock_irqsave(&p->lock, flags);
	g = netram_find_group(p, mw->key);
	io = &p->ios[g->io];
	complete = netram_member_done(mw->nt, g, mw->key, mw->nr, clone->bi_status);
	spin_unlock_irqrestore(&p->lock, flags);
	bio_put(clone);
	if (complete)
		netram_group_written(mw->nt, io);
}

static int netram_parity_map_write(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	struct netram_parity *p = netram_parity_of(nt);
	u64 key = netram_slot_key(slot);
	unsigned int nr = bio_sectors(bio) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT);
	struct netram_member_write *mw;
	struct netram_group *g;
	struct bio *clone;
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	g = netram_find_group(p, key);
	if (g && g->state <= NETRAM_GROUP_CLOSED) {
		struct netram_group_io *io = &p->ios[g->io];
		unsigned int m = netram_key_run(key);
		u16 bits = netram_run_bits(netram_key_page(key), nr);

		if ((io->pending[m] & bits) == bits && !(io->mapped[m] & bits)) {
			io->mapped[m] |= bits;
			bio_list_add(&io->bios, bio);
			netram_maybe_seal(nt, g);
		} else {
			g = NULL;
		}
	} else {
		g = NULL;
	}
	spin_unlock_irqrestore(&p->lock, flags);
	/*
	 * Written already, or being written by another bio (the tier is
	 * write-once): the core gives the pages a new home.
	 */
	if (!g) {
		bio_io_error(bio);
		return DM_MAPIO_SUBMITTED;
	}

	clone = bio_alloc_clone(bio->bi_bdev, bio, GFP_NOIO, &p->member_bios);
	if (!clone) {
		bool complete;

		spin_lock_irqsave(&p->lock, flags);
		complete = netram_member_done(nt, g, key, nr, BLK_STS_RESOURCE);
		spin_unlock_irqrestore(&p->lock, flags);
		if (complete)
			netram_group_written(nt, &p->ios[g->io]);
		return DM_MAPIO_SUBMITTED;
	}
	mw = container_of(clone, struct netram_member_write, clone);
	mw->nt = nt;
	mw->key = key;
	mw->nr = nr;
	clone->bi_end_io = netram_member_endio;
	netram_queue_bio(netram_copy_server(nt, slot, 0), clone);
	return DM_MAPIO_SUBMITTED;
}

/*
 * XOR @nr pages of @pages with the bio's data from its page @first on:
 * into the bio (@into_bio) or into the pages.
 */
static void netram_xor_bio(struct bio *bio, unsigned int first, struct page **pages,
			   unsigned int nr, bool into_bio)
{
	size_t start = (size_t)first << PAGE_SHIFT, end = start + ((size_t)nr << PAGE_SHIFT);
	size_t pos = 0;
	struct bvec_iter iter;
	struct bio_vec bv;

	bio_for_each_segment(bv, bio, iter) {
		size_t done = 0;

		while (done < bv.bv_len) {
			size_t at = pos + done, len, off;
			u8 *data, *other;

			if (at < start) {
				done += min_t(size_t, bv.bv_len - done, start - at);
				continue;
			}
			if (at >= end)
				return;
			off = offset_in_page(at - start);
			len = min_t(size_t, bv.bv_len - done, PAGE_SIZE - off);
			data = bvec_kmap_local(&bv) + done;
			other = kmap_local_page(pages[(at - start) >> PAGE_SHIFT]) + off;
			if (into_bio)
				crypto_xor(data, other, len);
			else
				crypto_xor(other, data, len);
			kunmap_local(other);
			kunmap_local(data);
			done += len;
		}
		pos += bv.bv_len;
	}
}

/*
 * The members and the parity are written: the members' bios complete.  A
 * member whose write failed is left out, unless the parity covers it: then
 * no page of the group can be rebuilt, and all of them are written again.
 */
static void netram_group_written(struct netram_tier *nt, struct netram_group_io *io)
{
	struct netram_parity *p = netram_parity_of(nt);
	struct netram_group *g = io->group;
	blk_status_t status;
	struct bio_list bios;
	bool damaged = false;
	unsigned long flags;
	unsigned int m;
	struct bio *bio;
	u8 left_out;

	spin_lock_irqsave(&p->lock, flags);
	status = io->parity_status;
	if (g->left_out & io->in_parity)
		status = BLK_STS_IOERR;
	g->state = status ? NETRAM_GROUP_UNPROTECTED : NETRAM_GROUP_PROTECTED;
	left_out = g->left_out;
	bios = io->bios;
	bio_list_init(&io->bios);
	p->free_ios[p->nr_free_ios++] = g->io;
	/* A server lost while the group was written: recovery looks at it again. */
	for (m = 0; m < g->nr_members; m++)
		damaged |= g->pages[m] &&
			   netram_copy_lost(nt->servers[netram_group_server(g, m)],
					    netram_group_key(g, m, 0));
	if (!g->live)
		netram_free_group(nt, g);
	spin_unlock_irqrestore(&p->lock, flags);

	while ((bio = bio_list_pop(&bios))) {
		u64 key = NSWAP2L_SECTOR_TO_PAGE(bio->bi_iter.bi_sector);

		/* Not redundant: the core writes it again, in another group. */
		if (status || left_out & BIT(netram_key_run(key)))
			bio->bi_status = BLK_STS_IOERR;
		bio_endio(bio);
	}
	if (damaged)
		netram_queue_recovery(nt);
}

/* The parity is stored, or failed (or not written: no page to cover). */
static void netram_parity_written(struct netram_group_io *io, blk_status_t status)
{
	struct netram_parity *p = netram_parity_of(io->nt);
	unsigned long flags;
	bool complete;

	spin_lock_irqsave(&p->lock, flags);
	io->parity_done = true;
	io->parity_status = status;
	complete = netram_group_complete(io->group, io);
	spin_unlock_irqrestore(&p->lock, flags);
	if (complete)
		netram_group_written(io->nt, io);
}

/* One piece of the parity: the last one says how the whole went. */
static void netram_parity_piece_done(struct netram_group_io *io, blk_status_t status)
{
	if (status)
		WRITE_ONCE(io->parity_error, status);
	if (atomic_dec_and_test(&io->parity_bios))
		netram_parity_written(io, READ_ONCE(io->parity_error));
}

static void netram_parity_endio(struct bio *bio)
{
	struct netram_group_io *io = bio->bi_private;
	blk_status_t status = bio->bi_status;
	struct bvec_iter_all iter;
	struct bio_vec *bv;

	bio_for_each_segment_all(bv, bio, iter)
		mempool_free(bv->bv_page, netram_parity_of(io->nt)->parity_pages);
	bio_put(bio);
	netram_parity_piece_done(io, status);
}

/*
 * The parity of a sealed group: the XOR of its members' pages, page by
 * page, sent in bios of at most the parity server's max_pages (which it
 * may lower at any reconnect: a bio longer than that is refused, and the
 * group's pages are written again in a new group).
 */
static void netram_write_parity(struct netram_tier *nt, struct netram_group_io *io)
{
	struct netram_parity *p = netram_parity_of(nt);
	struct netram_group *g = io->group;
	struct netram_server *srv = nt->servers[netram_group_server(g, NETRAM_PARITY_INDEX)];
	struct page *pages[NETRAM_PARITY_RUN];
	unsigned int m, i, nr = 0, first, max;
	struct bio *member;
	u8 in_parity = 0;
	u64 key;

	/* Sealed: no page joins any more, but a member's write may still fail. */
	spin_lock_irq(&p->lock);
	for (m = 0; m < g->nr_members; m++) {
		if (!netram_member_pages(g, m))
			continue;
		in_parity |= BIT(m);
		nr = max_t(unsigned int, nr, fls(g->pages[m]));
	}
	io->in_parity = in_parity;
	spin_unlock_irq(&p->lock);
	if (!nr) {
		netram_parity_written(io, BLK_STS_IOERR);
		return;
	}
	for (i = 0; i < nr; i++) {
		pages[i] = mempool_alloc(p->parity_pages, GFP_NOIO);
		clear_highpage(pages[i]);
	}
	bio_list_for_each(member, &io->bios) {
		key = NSWAP2L_SECTOR_TO_PAGE(member->bi_iter.bi_sector);
		if (in_parity & BIT(netram_key_run(key)))
			netram_xor_bio(member, 0, pages + netram_key_page(key),
				       nr - netram_key_page(key), false);
	}
	key = netram_group_key(g, NETRAM_PARITY_INDEX, 0);
	g->parity_pages = nr;
	netram_hold_keys(srv, key, nr);

	max = READ_ONCE(srv->max_pages);
	io->parity_error = BLK_STS_OK;
	/* one for each piece, and one until the last is queued */
	atomic_set(&io->parity_bios, DIV_ROUND_UP(nr, max) + 1);
	for (first = 0; first < nr; first += max) {
		unsigned int len = min(max, nr - first);
		struct bio *bio = bio_alloc_bioset(NULL, len, REQ_OP_WRITE, GFP_NOIO,
						   &p->parity_bios);

		for (i = 0; i < len; i++)
			__bio_add_page(bio, pages[first + i], PAGE_SIZE, 0);
		bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(key + first);
		bio->bi_end_io = netram_parity_endio;
		bio->bi_private = io;
		netram_queue_bio(srv, bio);
	}
	netram_parity_piece_done(io, BLK_STS_OK);
}

/* One at a time: the page pool holds one parity run, so each one finishes its allocation. */
static void netram_parity_work(struct work_struct *work)
{
	struct netram_parity *p = container_of(work, struct netram_parity, parity_work);
	struct netram_group_io *io;

	for (;;) {
		spin_lock_irq(&p->lock);
		io = list_first_entry_or_null(&p->sealed, struct netram_group_io, sealed);
		if (io)
			list_del(&io->sealed);
		spin_unlock_irq(&p->lock);
		if (!io)
			return;
		netram_write_parity(io->nt, io);
	}
}

/*----------------------------------------------------------------
 * Slots: joining groups, leaving them
 *--------------------------------------------------------------*/

/* A run of at most @nr pages joins the open group, or a new one. */
static int netram_parity_alloc(struct netram_tier *nt, unsigned int nr, u64 *slot)
{
	struct netram_parity *p = netram_parity_of(nt);
	struct nswap2l_server_room rooms[NETRAM_MAX_SERVERS];
	unsigned long candidates, flags;
	struct netram_group *closed;
	int r;

	candidates = netram_server_rooms(nt, rooms);
	spin_lock_irqsave(&p->lock, flags);
	r = netram_join_group(nt, rooms, candidates, nr, slot, &closed);
	if (closed)
		netram_maybe_seal(nt, closed);
	spin_unlock_irqrestore(&p->lock, flags);
	if (r > 0)
		atomic64_add(r, &nt->tier.used);
	return r;
}

static void netram_parity_free(struct netram_tier *nt, const u64 *slots, unsigned int nr,
			       bool written)
{
	struct netram_parity *p = netram_parity_of(nt);
	unsigned long flags;
	unsigned int i;
	bool clean;

	spin_lock_irqsave(&p->lock, flags);
	for (i = 0; i < nr; i++) {
		struct netram_group *g = netram_leave_group(nt, slots[i], written);

		/* Never sent, and not sealed before: its parity cannot be written yet. */
		if (g)
			WARN_ON_ONCE(netram_member_done(nt, g, netram_slot_key(slots[i]), 1,
							BLK_STS_OK));
	}
	clean = netram_want_cleaning(nt);
	spin_unlock_irqrestore(&p->lock, flags);
	atomic64_sub(nr, &nt->tier.used);
	if (clean)
		netram_start_cleaning(nt);
}

/*----------------------------------------------------------------
 * Reading a page that is lost: rebuilt from its group
 *--------------------------------------------------------------*/

/* An element of a group is lost, by @below (the servers' lost_below if NULL). */
static bool netram_run_lost(struct netram_tier *nt, const struct netram_group *g,
			    unsigned int run, const u64 *below)
{
	unsigned int i = netram_group_server(g, run);
	u64 key = netram_group_key(g, run, 0);

	return below ? key < below[i] : netram_copy_lost(nt->servers[i], key);
}

/*
 * The reads that rebuild pages @first.. @first + @nr - 1 of run @own:
 * the same pages of every other member that has them, and of the parity.
 * False when one of them is lost, or the group has no parity.
 */
static bool netram_plan_rebuild(struct netram_tier *nt, const struct netram_group *g,
				unsigned int own, unsigned int first, unsigned int nr,
				struct netram_rebuild *rb)
{
	u16 range = netram_run_bits(first, nr);
	unsigned int run;

	if (g->state != NETRAM_GROUP_PROTECTED)
		return false;
	rb->nr_pieces = 0;
	rb->nr_pages = 0;
	for (run = 0; run <= NETRAM_PARITY_INDEX; run++) {
		struct netram_server *srv = nt->servers[netram_group_server(g, run)];
		unsigned int start, end, at, len;
		unsigned long bits;

		if (run == own || (run < NETRAM_PARITY_INDEX && run >= g->nr_members))
			continue;
		bits = (run == NETRAM_PARITY_INDEX ? netram_run_bits(0, g->parity_pages) :
			netram_member_pages(g, run)) & range;
		if (!bits)
			continue;
		if (netram_run_lost(nt, g, run, NULL) || READ_ONCE(srv->failed))
			return false;
		for_each_set_bitrange(start, end, &bits, NETRAM_PARITY_RUN) {
			for (at = start; at < end; at += len) {
				struct netram_rebuild_piece *pc = &rb->pieces[rb->nr_pieces++];

				len = min(end - at, READ_ONCE(srv->max_pages));
				pc->server = srv->index;
				pc->first = at - first;
				pc->nr = len;
				pc->page = rb->nr_pages;
				pc->key = netram_group_key(g, run, at);
				rb->nr_pages += len;
			}
		}
	}
	return true;
}

/*
 * The rebuild's pages, all or none: without waiting first, and if the pool
 * runs dry, one rebuild at a time may wait for it (the pages of the others
 * come back as their reads complete), so that none waits holding part of it.
 */
static void netram_rebuild_get_pages(struct netram_parity *p, struct netram_rebuild *rb)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned int i;

retry:
	if (gfp & __GFP_DIRECT_RECLAIM)
		mutex_lock(&p->rebuild_lock);
	for (i = 0; i < rb->nr_pages; i++) {
		rb->pages[i] = mempool_alloc(p->rebuild_pages, gfp);
		if (!rb->pages[i]) {
			while (i--)
				mempool_free(rb->pages[i], p->rebuild_pages);
			gfp = GFP_NOIO;
			goto retry;
		}
	}
	if (gfp & __GFP_DIRECT_RECLAIM)
		mutex_unlock(&p->rebuild_lock);
}

static void netram_rebuild_done(struct netram_rebuild *rb)
{
	struct netram_parity *p = netram_parity_of(rb->nt);
	blk_status_t status = READ_ONCE(rb->status);
	struct bio *orig = rb->orig;
	unsigned int i;

	if (!status) {
		for (i = 0; i < rb->nr_pieces; i++)
			netram_xor_bio(orig, rb->pieces[i].first, rb->pages + rb->pieces[i].page,
				       rb->pieces[i].nr, true);
		atomic64_add(bio_sectors(orig) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT), &p->rebuilt);
	}
	for (i = 0; i < rb->nr_pages; i++)
		mempool_free(rb->pages[i], p->rebuild_pages);
	mempool_free(rb, p->rebuilds);
	orig->bi_status = status;
	bio_endio(orig);
}

static void netram_rebuild_endio(struct bio *bio);

/* Piece @i goes out in @rbio; the rebuild may be gone once it is queued. */
static void netram_rebuild_send(struct netram_rebuild *rb, struct netram_rebuild_bio *rbio,
				unsigned int i)
{
	const struct netram_rebuild_piece *pc = &rb->pieces[i];
	unsigned int j;

	bio_init(&rbio->bio, NULL, rbio->bvecs, NETRAM_PARITY_RUN, REQ_OP_READ);
	for (j = 0; j < pc->nr; j++)
		__bio_add_page(&rbio->bio, rb->pages[pc->page + j], PAGE_SIZE, 0);
	rbio->bio.bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(pc->key);
	rbio->bio.bi_end_io = netram_rebuild_endio;
	netram_queue_bio(rb->nt->servers[pc->server], &rbio->bio);
}

/* A read is in: its bio takes the next one; a read that failed fails the rebuild. */
static void netram_rebuild_endio(struct bio *bio)
{
	struct netram_rebuild_bio *rbio = container_of(bio, struct netram_rebuild_bio, bio);
	struct netram_rebuild *rb = rbio->rb;
	unsigned int next;

	if (bio->bi_status)
		WRITE_ONCE(rb->status, bio->bi_status);
	bio_uninit(bio);
	if (!READ_ONCE(rb->status)) {
		next = atomic_inc_return(&rb->next) - 1;
		if (next < rb->nr_pieces) {
			netram_rebuild_send(rb, rbio, next);
			return;
		}
	}
	if (atomic_dec_and_test(&rb->in_flight))
		netram_rebuild_done(rb);
}

bool netram_parity_rebuild(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	struct netram_parity *p = netram_parity_of(nt);
	u64 key = netram_slot_key(slot);
	struct netram_rebuild *rb;
	struct netram_group g;
	unsigned int i, nr;
	bool planned;

	rb = mempool_alloc(p->rebuilds, GFP_NOIO);
	planned = netram_group_snapshot(p, key, &g) &&
		  netram_plan_rebuild(nt, &g, netram_key_run(key), netram_key_page(key),
				      bio_sectors(bio) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT), rb);
	if (!planned || !rb->nr_pieces) {
		mempool_free(rb, p->rebuilds);
		return false;
	}
	rb->nt = nt;
	rb->orig = bio;
	rb->status = BLK_STS_OK;
	netram_rebuild_get_pages(p, rb);
	zero_fill_bio(bio);
	nr = min_t(unsigned int, rb->nr_pieces, NETRAM_REBUILD_BIOS);
	atomic_set(&rb->next, nr);
	atomic_set(&rb->in_flight, nr);
	for (i = 0; i < nr; i++) {
		rb->bios[i].rb = rb;
		netram_rebuild_send(rb, &rb->bios[i], i);
	}
	return true;
}

static int netram_parity_map_read(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	struct netram_server *srv = netram_copy_server(nt, slot, 0);

	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(netram_slot_key(slot));
	if (!netram_copy_lost(srv, netram_slot_key(slot)) && !READ_ONCE(srv->failed))
		netram_queue_bio(srv, bio);
	else if (!netram_parity_rebuild(nt, bio, slot))
		bio_io_error(bio);
	return DM_MAPIO_SUBMITTED;
}

/*----------------------------------------------------------------
 * Recovery, eviction and draining: which pages move
 *--------------------------------------------------------------*/

/* Page @key of the group cannot be rebuilt, by the losses before @below. */
static bool netram_page_lost(struct netram_tier *nt, const struct netram_group *g, u64 key,
			     const u64 *below)
{
	unsigned int own = netram_key_run(key), run;
	u16 bit = BIT(netram_key_page(key));

	if (!netram_run_lost(nt, g, own, below))
		return false;
	if (g->state != NETRAM_GROUP_PROTECTED || netram_run_lost(nt, g, NETRAM_PARITY_INDEX, below))
		return true;
	for (run = 0; run < g->nr_members; run++)
		if (run != own && netram_member_pages(g, run) & bit &&
		    netram_run_lost(nt, g, run, below))
			return true;
	return false;
}

/*
 * Recovery repairs a group that lost one run in place, on a spare server
 * (netram_parity_repair.c); without one, it moves every page of a group
 * that lost a page or its parity (rebuilt if it is the lost one) into a
 * new group.  It counts the pages that cannot be rebuilt once, by the
 * pass's and the last pass's losses.
 */
static bool netram_parity_lost_wants(struct netram_tier *nt, u64 slot,
				     struct netram_recovery *rec)
{
	u64 key = netram_slot_key(slot);
	bool damaged = false;
	struct netram_group g;
	unsigned int run;
	int repair;

	/*
	 * A group being written is looked at when it is (netram_group_written()).
	 * An unprotected one stored nothing: its writes all failed, and until
	 * the core has written them again the map still names its keys.
	 * Counting those as lost when their server fails was a false loss.
	 */
	if (!netram_group_snapshot(netram_parity_of(nt), key, &g) || g.state != NETRAM_GROUP_PROTECTED)
		return false;
	if (netram_page_lost(nt, &g, key, rec->pass_below) &&
	    !netram_page_lost(nt, &g, key, rec->counted_below))
		rec->pass_lost++;
	if (netram_page_lost(nt, &g, key, NULL))
		return false;
	repair = netram_repair_wants(nt, &g, slot);
	if (repair >= 0)
		return repair;
	for (run = 0; run < g.nr_members; run++)
		damaged |= g.pages[run] && netram_run_lost(nt, &g, run, NULL);
	return damaged || (g.parity_pages && netram_run_lost(nt, &g, NETRAM_PARITY_INDEX, NULL));
}

/*
 * A page's group holds keys on @srv (of @keys, sorted, if given): moving
 * every page of the group out of it frees them.
 */
static bool netram_parity_group_on(struct netram_tier *nt, u64 slot, struct netram_server *srv,
				   const u64 *keys, unsigned int nr_keys)
{
	struct netram_group g;
	unsigned int run, i;

	if (!netram_group_snapshot(netram_parity_of(nt), netram_slot_key(slot), &g))
		return false;
	for (run = 0; run <= NETRAM_PARITY_INDEX; run++) {
		unsigned long bits;

		if (run < NETRAM_PARITY_INDEX && run >= g.nr_members)
			continue;
		bits = run == NETRAM_PARITY_INDEX ? netram_run_bits(0, g.parity_pages) : g.pages[run];
		if (!bits || netram_group_server(&g, run) != srv->index)
			continue;
		if (!keys)
			return true;
		for_each_set_bit(i, &bits, NETRAM_PARITY_RUN) {
			u64 key = netram_group_key(&g, run, i);

			if (bsearch(&key, keys, nr_keys, sizeof(u64), netram_cmp_u64))
				return true;
		}
	}
	return false;
}

static void netram_parity_recovered(struct netram_tier *nt)
{
	DMINFO("%s: %llu pages rebuilt from their parity groups so far",
	       netram_dev_name(nt), atomic64_read(&netram_parity_of(nt)->rebuilt));
	netram_repairs_report(nt);
}

/*----------------------------------------------------------------
 * Set up and take down
 *--------------------------------------------------------------*/
static int netram_parity_create(struct netram_tier *nt, struct dm_target *ti,
				const struct nswap2l_tier_options *opts)
{
	struct netram_parity *p;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		goto nomem;
	nt->scheme_data = p;
	INIT_LIST_HEAD(&p->sealed);
	INIT_WORK(&p->parity_work, netram_parity_work);
	mutex_init(&p->rebuild_lock);
	if (netram_groups_init(nt, opts->device_pages))
		goto nomem;
	if (bioset_init(&p->member_bios, NETRAM_TAGS,
			offsetof(struct netram_member_write, clone), 0) ||
	    bioset_init(&p->parity_bios, NETRAM_PARITY_RUN, 0, BIOSET_NEED_BVECS))
		goto nomem;
	p->parity_pages = mempool_create_page_pool(NETRAM_PARITY_RUN, 0);
	p->rebuild_pages = mempool_create_page_pool(NETRAM_REBUILD_PAGES, 0);
	p->rebuilds = mempool_create_kmalloc_pool(1, sizeof(struct netram_rebuild));
	if (!p->parity_pages || !p->rebuild_pages || !p->rebuilds || netram_repairs_create(p))
		goto nomem;
	return 0;
nomem:
	ti->error = "Cannot allocate parity groups";
	return -ENOMEM;
}

static void netram_parity_stop(struct netram_tier *nt)
{
	struct netram_parity *p = netram_parity_of(nt);

	if (!p)
		return;
	cancel_work_sync(&p->parity_work);
	/* The mover is paused (suspended): no repair starts, those under way end. */
	netram_repairs_wait(nt);
}

static void netram_parity_destroy(struct netram_tier *nt)
{
	struct netram_parity *p = netram_parity_of(nt);

	if (!p)
		return;
	netram_repairs_destroy(p);
	mempool_destroy(p->rebuilds);
	mempool_destroy(p->rebuild_pages);
	mempool_destroy(p->parity_pages);
	bioset_exit(&p->parity_bios);
	bioset_exit(&p->member_bios);
	netram_groups_exit(p);
	kfree(p);
}

/* The read's server failed it: rebuild the pages from their group. */
static int netram_parity_map_retry(struct netram_tier *nt, struct bio *bio, u64 slot,
				   unsigned int tries)
{
	return tries == 1 && netram_parity_rebuild(nt, bio, slot) ? DM_MAPIO_SUBMITTED :
								  DM_MAPIO_KILL;
}

/* A parity page per full group. */
static u64 netram_parity_capacity(struct netram_tier *nt, u64 pages)
{
	return div_u64(pages * nt->parity_group, nt->parity_group + 1);
}

const struct netram_scheme netram_parity_scheme = {
	.name = "parity",
	.copies = 1,
	.max_run = NETRAM_PARITY_RUN,
	.redundant = true,
	.write_once = true,
	.lost_hint = "; rebuilding them from their parity groups",
	.create = netram_parity_create,
	.stop = netram_parity_stop,
	.destroy = netram_parity_destroy,
	.alloc = netram_parity_alloc,
	.free = netram_parity_free,
	.map_read = netram_parity_map_read,
	.map_write = netram_parity_map_write,
	.map_retry = netram_parity_map_retry,
	.capacity = netram_parity_capacity,
	.lost_wants = netram_parity_lost_wants,
	.on_server = netram_parity_group_on,
	.recovered = netram_parity_recovered,
	.pass_done = netram_repairs_pass_done,
	.move_keys = netram_group_move_keys,
};
