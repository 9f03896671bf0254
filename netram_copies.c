// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability schemes "none" and "mirror": every page has netram_scheme
 * copies (one, or two on distinct servers) under one key, named by its slot.
 *
 * Mirroring: a write goes to both copies and completes when both have it;
 * if either fails, the core writes the page again to a new pair.  A read
 * goes to the copy whose server is expected to answer first and, when it
 * fails, the core asks for the other (map_retry) from a worker.  A failed
 * server's copies are lost and copied again from their mirrors, each to a
 * new server under the page's key (netram_recover.c); without a mirror
 * they stay, as they may come back with their server.
 */
#include <linux/bsearch.h>
#include <linux/sort.h>

#include "netram_scheme.h"

/*
 * A run of consecutive keys with a copy on each of the scheme's copies'
 * distinct servers, no longer than each of them takes in one message.
 */
static int netram_copies_alloc(struct netram_tier *nt, unsigned int nr, u64 *slot)
{
	struct nswap2l_server_room rooms[NETRAM_MAX_SERVERS];
	unsigned int i, servers[NETRAM_MAX_COPIES], nr_servers = netram_nr_servers(nt);
	unsigned int copies = nt->scheme->copies;
	unsigned long candidates, flags;
	struct netram_server *srv;
	u64 key;

	candidates = netram_server_rooms(nt, rooms);
	if (nswap2l_pick_servers(nt->choice, rooms, nr_servers, candidates, copies, servers))
		return -ENOSPC;
	for (i = 0; i < copies; i++)
		nr = clamp_t(s64, rooms[servers[i]].free, 1,
			     min(nr, READ_ONCE(nt->servers[servers[i]]->max_pages)));
	/*
	 * The key and the held count change together under each server's
	 * lock (in index order), so that a loss of the server counts exactly
	 * the copies stored before it (netram_mark_lost()).
	 */
	if (copies > 1 && servers[0] > servers[1])
		swap(servers[0], servers[1]);
	local_irq_save(flags);
	for (i = 0; i < copies; i++)
		spin_lock_nested(&nt->servers[servers[i]]->lock, i);
	key = atomic64_add_return(nr, &nt->next_key) - nr + 1;
	for (i = 0; i < copies; i++) {
		srv = nt->servers[servers[i]];
		atomic64_sub(nr, &srv->free_estimate);
		atomic64_add(nr, &srv->held);
	}
	for (i = copies; i-- > 0; )
		spin_unlock(&nt->servers[servers[i]]->lock);
	local_irq_restore(flags);
	atomic64_add(nr, &nt->tier.used);
	*slot = netram_make_slot(key, servers, copies);
	return nr;
}

static void netram_copies_free(struct netram_tier *nt, const u64 *slots, unsigned int nr,
			       bool written)
{
	unsigned long to_send = 0, flags;
	unsigned int i, copy;

	BUILD_BUG_ON(NETRAM_MAX_SERVERS > BITS_PER_LONG);
	BUILD_BUG_ON(NETRAM_MAX_SERVERS > NETRAM_SLOT_SERVER_MASK + 1);
	for (i = 0; i < nr; i++) {
		u64 key = netram_slot_key(slots[i]);

		for (copy = 0; copy < netram_slot_copies(slots[i]); copy++) {
			struct netram_server *srv = netram_copy_server(nt, slots[i], copy);

			spin_lock_irqsave(&srv->lock, flags);
			if (netram_release_key(srv, key, written))
				__set_bit(srv->index, &to_send);
			spin_unlock_irqrestore(&srv->lock, flags);
		}
	}
	atomic64_sub(nr, &nt->tier.used);
	/* one FREE message per server for the whole batch */
	for_each_set_bit(i, &to_send, NETRAM_MAX_SERVERS)
		netram_queue_io(nt->servers[i]);
}

/*
 * A mirrored read goes out as a clone, whose completion times its server
 * (the bio itself is sent nowhere, as a mirrored write's); the bio's
 * sector, which the tier sets on every map, keeps the copy it was sent to.
 */
struct netram_mirror_read {
	struct bio *orig;
	struct netram_server *srv;
	u64 start_ns;
	struct bio clone;	/* last: a bio_set's front_pad */
};

/* A server with no read for this long is tried again, whatever it took then. */
#define NETRAM_READ_STALE_NS	(50 * NSEC_PER_MSEC)

/*
 * What a read sent to @srv now is expected to wait: its reads out, each
 * taking what they took lately, or longer if none has completed for longer
 * (a stalled server: no lock, no timer, it just stops being chosen).
 */
static u64 netram_read_cost(struct netram_server *srv, u64 now)
{
	unsigned int out = atomic_read(&srv->reads_out);
	/* A read completing on another CPU may have come after @now. */
	u64 since = max_t(s64, now - READ_ONCE(srv->read_done_ns), 0);
	u64 took = READ_ONCE(srv->read_ewma_ns);

	if (!out && since > NETRAM_READ_STALE_NS) {
		/* A slow spell long ago says little now: the next read finds out. */
		if (took)
			WRITE_ONCE(srv->read_ewma_ns, 0);
		return 0;
	}
	if (out)
		took = max(took, since);
	return (out + 1) * max_t(u64, took, 1);
}

/*
 * The copy a read tries after @tries failures, or -1 when none is left.
 * The first try skips a copy known to be lost, then takes the copy
 * expected to answer first, or (alike) spreads pages over both by key; a
 * retry takes the copy not tried, unless it is lost.
 */
static int netram_read_copy(struct netram_tier *nt, struct bio *bio, u64 slot,
			    unsigned int tries)
{
	unsigned int copies = netram_slot_copies(slot), tried;
	u64 key = netram_slot_key(slot), now, cost[NETRAM_MAX_COPIES];

	if (tries >= copies)
		return -1;
	if (copies == 1)
		return 0;
	if (tries) {
		tried = bio->bi_iter.bi_sector & 1;
		return netram_copy_lost(netram_copy_server(nt, slot, tried ^ 1), key) ?
		       tried : tried ^ 1;
	}
	if (netram_copy_lost(netram_copy_server(nt, slot, 0), key))
		return 1;
	if (netram_copy_lost(netram_copy_server(nt, slot, 1), key))
		return 0;
	now = ktime_get_ns();
	cost[0] = netram_read_cost(netram_copy_server(nt, slot, 0), now);
	cost[1] = netram_read_cost(netram_copy_server(nt, slot, 1), now);
	return cost[0] == cost[1] ? key & 1 : cost[1] < cost[0];
}

static void netram_mirror_read_endio(struct bio *clone)
{
	struct netram_mirror_read *mr = container_of(clone, struct netram_mirror_read, clone);
	struct netram_server *srv = mr->srv;
	struct bio *orig = mr->orig;

	if (!clone->bi_status) {
		u64 now = ktime_get_ns(), took = now - mr->start_ns;
		u64 avg = READ_ONCE(srv->read_ewma_ns);

		/* An eighth of each new time: one slow read does not turn reads away. */
		WRITE_ONCE(srv->read_ewma_ns, avg ? avg - (avg >> 3) + (took >> 3) : took);
		WRITE_ONCE(srv->read_done_ns, now);
	}
	atomic_dec(&srv->reads_out);
	orig->bi_status = clone->bi_status;
	bio_put(clone);
	bio_endio(orig);
}

static int netram_send_read(struct netram_tier *nt, struct bio *bio, u64 slot,
			    unsigned int copy)
{
	struct netram_server *srv = netram_copy_server(nt, slot, copy);
	struct netram_mirror_read *mr;
	struct bio *clone;

	/* Remapped, like a block tier: the key is the page number on the server. */
	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(netram_slot_key(slot));
	if (netram_slot_copies(slot) == 1) {
		netram_queue_bio(srv, bio);
		return DM_MAPIO_SUBMITTED;
	}
	clone = bio_alloc_clone(bio->bi_bdev, bio, GFP_NOIO, &nt->mirror_reads);
	if (!clone) {
		bio_io_error(bio);
		return DM_MAPIO_SUBMITTED;
	}
	bio->bi_iter.bi_sector += copy;
	mr = container_of(clone, struct netram_mirror_read, clone);
	mr->orig = bio;
	mr->srv = srv;
	mr->start_ns = ktime_get_ns();
	clone->bi_end_io = netram_mirror_read_endio;
	atomic_inc(&srv->reads_out);
	netram_queue_bio(srv, clone);
	return DM_MAPIO_SUBMITTED;
}

/*
 * A mirrored write goes out as two clones (dm-raid1's way: the bio itself
 * is sent nowhere), so that one sent again after a failure starts afresh;
 * the first clone carries the count of the two, and with protect= the
 * pages sealed once for both (a second encryption was most of a mirrored
 * write's CPU time).
 */
struct netram_mirror_write {
	struct bio *orig;
	atomic_t pending;
	blk_status_t status;
	struct netram_sealed_pages *sealed;
	struct bio first;	/* last: a bio_set's front_pad */
};

static void netram_mirror_endio(struct bio *clone)
{
	struct netram_mirror_write *mw = clone->bi_private;
	struct bio *orig = mw->orig;

	if (clone->bi_status)
		WRITE_ONCE(mw->status, clone->bi_status);
	if (clone != &mw->first)
		bio_put(clone);
	if (atomic_dec_and_test(&mw->pending)) {
		orig->bi_status = READ_ONCE(mw->status);
		/* The messages that sent them no longer look at them (their replies came). */
		netram_free_sealed_pages(mw->sealed);
		bio_put(&mw->first);
		bio_endio(orig);
	}
}

const struct netram_sealed_pages *netram_mirror_sealed(struct bio *bio)
{
	if (bio->bi_end_io != netram_mirror_endio)
		return NULL;
	return ((struct netram_mirror_write *)bio->bi_private)->sealed;
}

static int netram_single_map_write(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	netram_queue_bio(netram_copy_server(nt, slot, 0), bio);
	return DM_MAPIO_SUBMITTED;
}

static int netram_map_mirrored(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	struct netram_server *first = netram_copy_server(nt, slot, 0);
	struct netram_server *second = netram_copy_server(nt, slot, 1);
	u64 key = netram_slot_key(slot);
	struct netram_mirror_write *mw;
	struct bio *a, *b = NULL;

	/* The one copy mirror recovery writes (netram_mirror_new_home()). */
	if (netram_slot_copies(slot) == 1)
		return netram_single_map_write(nt, bio, slot);
	/* Both copies or neither: one that is lost sends the pages to a new pair. */
	if (netram_copy_lost(first, key) || netram_copy_lost(second, key)) {
		bio_io_error(bio);
		return DM_MAPIO_SUBMITTED;
	}
	/* From two pools: one allocation never waits for the other. */
	a = bio_alloc_clone(bio->bi_bdev, bio, GFP_NOIO, &nt->mirror_bios[0]);
	if (a)
		b = bio_alloc_clone(bio->bi_bdev, bio, GFP_NOIO, &nt->mirror_bios[1]);
	if (!b) {
		if (a)
			bio_put(a);
		bio_io_error(bio);
		return DM_MAPIO_SUBMITTED;
	}
	mw = container_of(a, struct netram_mirror_write, first);
	mw->orig = bio;
	mw->status = BLK_STS_OK;
	mw->sealed = nt->protect ? netram_seal_once(nt, bio, key) : NULL;
	atomic_set(&mw->pending, 2);
	a->bi_end_io = b->bi_end_io = netram_mirror_endio;
	a->bi_private = b->bi_private = mw;
	netram_queue_bio(second, b);
	netram_queue_bio(first, a);
	return DM_MAPIO_SUBMITTED;
}

static int netram_copies_map_read(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	return netram_send_read(nt, bio, slot, netram_read_copy(nt, bio, slot, 0));
}

static int netram_copies_map_retry(struct netram_tier *nt, struct bio *bio, u64 slot,
				   unsigned int tries)
{
	int copy = netram_read_copy(nt, bio, slot, tries);

	if (copy < 0)
		return DM_MAPIO_KILL;
	return netram_send_read(nt, bio, slot, copy);
}

static u64 netram_copies_capacity(struct netram_tier *nt, u64 pages)
{
	return div_u64(pages, nt->scheme->copies);
}

static bool netram_copies_lost_wants(struct netram_tier *nt, u64 slot,
				     struct netram_recovery *rec)
{
	unsigned int copy, lost = 0, lost_in_pass = 0, lost_before = 0;
	unsigned int copies = netram_slot_copies(slot);
	u64 key = netram_slot_key(slot);

	for (copy = 0; copy < copies; copy++) {
		unsigned int i = netram_slot_server_index(slot, copy);

		lost += netram_copy_lost(nt->servers[i], key);
		lost_in_pass += key < rec->pass_below[i];
		lost_before += key < rec->counted_below[i];
	}
	/* One look per page and pass, on the mover's thread alone. */
	if (lost_in_pass == copies && lost_before < copies)
		rec->pass_lost++;
	return lost && lost < copies;
}

/*
 * The servers of the repaired page: its survivor in servers[0], a new one
 * for the lost copy in servers[1]; false if the page has no single lost
 * copy or no server can take it.
 */
static bool netram_mirror_pick(struct netram_tier *nt, u64 slot, unsigned int *servers)
{
	unsigned int i, nr_servers = netram_nr_servers(nt);
	struct nswap2l_server_room rooms[NETRAM_MAX_SERVERS];
	u64 key = netram_slot_key(slot);
	unsigned long candidates;

	if (netram_slot_copies(slot) != 2 ||
	    netram_copy_lost(netram_copy_server(nt, slot, 0), key) ==
	    netram_copy_lost(netram_copy_server(nt, slot, 1), key))
		return false;
	servers[0] = netram_slot_server_index(slot,
					      netram_copy_lost(netram_copy_server(nt, slot, 0), key));
	candidates = netram_server_rooms(nt, rooms);
	__clear_bit(servers[0], &candidates);
	for (i = 0; i < nr_servers; i++)
		if (netram_copy_lost(nt->servers[i], key))
			__clear_bit(i, &candidates);
	return !nswap2l_pick_servers(nt->choice, rooms, nr_servers, candidates, 1, &servers[1]);
}

/* The new copy on servers[1] counted, and the entries naming it; false if it is lost there. */
static bool netram_mirror_take(struct netram_tier *nt, u64 old_entry, const unsigned int *servers,
			       u64 *install, u64 *write)
{
	u64 key = netram_slot_key(nswap2l_entry_slot(old_entry));
	struct netram_server *srv = nt->servers[servers[1]];
	unsigned int tier = nswap2l_entry_tier(old_entry);
	unsigned long flags;
	bool lost;

	/* As netram_copies_alloc(): held and lost_below change together. */
	spin_lock_irqsave(&srv->lock, flags);
	lost = netram_copy_lost(srv, key);
	if (!lost) {
		atomic64_dec(&srv->free_estimate);
		atomic64_inc(&srv->held);
	}
	spin_unlock_irqrestore(&srv->lock, flags);
	if (lost)
		return false;
	/* A page until release_old() or its free: netram_copies_free() counts it. */
	atomic64_inc(&nt->tier.used);
	*write = nswap2l_entry(tier, netram_make_slot(key, &servers[1], 1));
	*install = nswap2l_entry(tier, netram_make_slot(key, servers, 2));
	return true;
}

/*
 * Mirror recovery (netram_recover.c): a page with one copy lost gets a
 * new copy under its key on a server that takes pages, not the survivor's,
 * and the map names the survivor and that server.  Keys are handed out
 * once per tier, so the key is new to that server (a MOVED keeps a page's
 * key but takes it off its sender); one it is lost on (lost since, with a
 * new namespace) is not taken, as the new copy would count lost at once.
 * False when no server can: the page moves whole, by placement.  The
 * survivor's server may move the page (MOVED) to that same server
 * meanwhile, its PEER_PUT there before ours: we refuse the move (a copy is
 * there), and its PEER_FREE leaves the key, which our PUT made ours.
 */
bool netram_mirror_new_home(struct nswap2l_move_job *job, u64 page, u64 old_entry,
			    u64 *install, u64 *write)
{
	struct netram_tier *nt = netram_recovery_tier(job);
	unsigned int servers[NETRAM_MAX_COPIES];

	return netram_mirror_pick(nt, nswap2l_entry_slot(old_entry), servers) &&
	       netram_mirror_take(nt, old_entry, servers, install, write);
}

/*
 * The COPY collecting keys from @from to @to in this batch with room for
 * one more, else an idle one (not set up yet), else NULL.
 */
static struct netram_copy *netram_copy_for(struct netram_recovery *rec,
					   struct netram_server *from, struct netram_server *to)
{
	struct netram_copy *idle = NULL;
	unsigned int i;

	for (i = 0; i < NETRAM_RECOVERY_COPIES; i++) {
		struct netram_copy *c = &rec->copies[i];

		if (c->collecting && c->from == from && c->to == to &&
		    c->nr_keys < NSWAP2L_PROTO_MAX_COPY_KEYS)
			return c;
		if (!c->collecting && !c->unasked && !idle)
			idle = c;
	}
	return idle;
}

/* The COPY sent with @key; every page relabelled LATER is in one. */
static struct netram_copy *netram_copy_with(struct netram_recovery *rec, u64 key,
					    unsigned int *index)
{
	unsigned int i;

	for (i = 0; i < NETRAM_RECOVERY_COPIES; i++) {
		struct netram_copy *c = &rec->copies[i];
		u64 *at;

		if (!c->unasked)
			continue;
		at = bsearch(&key, c->keys, c->nr_keys, sizeof(u64), netram_cmp_u64);
		if (at) {
			*index = at - c->keys;
			return c;
		}
	}
	return NULL;
}

/* relabel(@wait): the survivor's COPY came back; the page is relabelled if its key was stored. */
static enum nswap2l_relabel netram_mirror_copied(struct netram_recovery *rec, u64 key)
{
	struct netram_copy *c;
	unsigned int index;
	bool stored;

	c = netram_copy_with(rec, key, &index);
	if (WARN_ON_ONCE(!c))
		return NSWAP2L_MOVE_IT;
	wait_for_completion(&c->done);
	stored = test_bit(index, c->stored);
	/*
	 * NOENT, NOSPC or a lost connection: the client copies the rest itself.
	 * Looked at once per COPY, by the first of its pages asked.
	 */
	if (c->unasked == c->nr_keys && bitmap_empty(c->stored, c->nr_keys))
		rec->copies_off = true;
	c->unasked--;
	rec->copied += stored;
	return stored ? NSWAP2L_RELABEL_IT : NSWAP2L_MOVE_IT;
}

/*
 * Mirror recovery's relabel(): with NSWAP2L_CAP_COPY the survivor copies
 * the page to its new server itself, seal and all, and the client neither
 * reads nor writes it; the map names both once the COPY says the new
 * server has it (*@write, the new copy alone, is freed if a write came
 * meanwhile).  A page the COPY did not store is moved by the next pass,
 * the client's way.
 */
enum nswap2l_relabel netram_mirror_relabel(struct nswap2l_move_job *job, u64 page, u64 old_entry,
					   u64 *entry, u64 *write, bool wait)
{
	struct netram_tier *nt = netram_recovery_tier(job);
	struct netram_recovery *rec = &nt->recovery;
	u64 slot = nswap2l_entry_slot(old_entry);
	unsigned int servers[NETRAM_MAX_COPIES];
	struct netram_server *from, *to;
	struct nswap2l_moved where;
	struct netram_copy *c;

	if (wait)
		return netram_mirror_copied(rec, netram_slot_key(slot));
	if (!rec->copies || rec->copies_off || !netram_mirror_pick(nt, slot, servers))
		return NSWAP2L_MOVE_IT;
	from = nt->servers[servers[0]];
	to = nt->servers[servers[1]];
	if (!(READ_ONCE(from->caps) & NSWAP2L_CAP_COPY) || !netram_takes_pages(from) ||
	    !netram_moved_where(to, &where))
		return NSWAP2L_MOVE_IT;
	c = netram_copy_for(rec, from, to);
	if (!c || !netram_mirror_take(nt, old_entry, servers, entry, write))
		return NSWAP2L_MOVE_IT;
	if (!c->collecting) {
		c->collecting = true;
		c->from = from;
		c->to = to;
		c->where = where;
		c->nr_keys = 0;
	}
	c->keys[c->nr_keys++] = netram_slot_key(slot);
	/* Paced like a moved page up to recovery_rate's maximum; not held to its minimum. */
	job->paced_extra++;
	job->server_copied++;
	return NSWAP2L_RELABEL_LATER;
}

/* The batch's pages are all asked: its COPYs go. */
void netram_mirror_relabels_asked(struct nswap2l_move_job *job)
{
	struct netram_recovery *rec = &netram_recovery_tier(job)->recovery;
	unsigned int i;

	for (i = 0; i < NETRAM_RECOVERY_COPIES; i++) {
		struct netram_copy *c = &rec->copies[i];

		if (!c->collecting)
			continue;
		c->collecting = false;
		c->unasked = c->nr_keys;
		sort(c->keys, c->nr_keys, sizeof(u64), netram_cmp_u64, NULL);
		netram_queue_copy(c);
	}
}

/* The repaired page's lost copy is let go; its survivor stays in @install. */
void netram_mirror_release_old(struct nswap2l_move_job *job, u64 old_entry, u64 install)
{
	struct netram_tier *nt = netram_recovery_tier(job);
	u64 old = nswap2l_entry_slot(old_entry), slot = nswap2l_entry_slot(install);
	unsigned int copy;

	for (copy = 0; copy < netram_slot_copies(old); copy++) {
		struct netram_server *srv = netram_copy_server(nt, old, copy);
		unsigned long flags;
		bool send;

		if (netram_slot_on(srv, slot))
			continue;
		spin_lock_irqsave(&srv->lock, flags);
		send = netram_release_key(srv, netram_slot_key(old), true);
		spin_unlock_irqrestore(&srv->lock, flags);
		if (send)
			netram_queue_io(srv);
	}
	atomic64_dec(&nt->tier.used);
}

static bool netram_copies_on_server(struct netram_tier *nt, u64 slot, struct netram_server *srv,
				    const u64 *keys, unsigned int nr_keys)
{
	u64 key = netram_slot_key(slot);

	return netram_slot_on(srv, slot) &&
	       (!keys || bsearch(&key, keys, nr_keys, sizeof(u64), netram_cmp_u64));
}

static int netram_mirror_create(struct netram_tier *nt, struct dm_target *ti,
				const struct nswap2l_tier_options *opts)
{
	unsigned int i;
	int r;

	r = bioset_init(&nt->mirror_bios[0], NETRAM_TAGS,
			offsetof(struct netram_mirror_write, first), 0);
	if (!r)
		r = bioset_init(&nt->mirror_bios[1], NETRAM_TAGS, 0, 0);
	if (!r)
		r = bioset_init(&nt->mirror_reads, NETRAM_TAGS,
				offsetof(struct netram_mirror_read, clone), 0);
	if (r) {
		ti->error = "Cannot allocate mirror bios";
		return r;
	}
	/* Used only with NSWAP2L_CAP_COPY, which a write-once tier (protect=) announces. */
	nt->recovery.copies = kvcalloc(NETRAM_RECOVERY_COPIES, sizeof(*nt->recovery.copies),
				       GFP_KERNEL);
	if (!nt->recovery.copies) {
		ti->error = "Cannot allocate mirror recovery copies";
		return -ENOMEM;
	}
	for (i = 0; i < NETRAM_RECOVERY_COPIES; i++)
		init_completion(&nt->recovery.copies[i].done);
	return 0;
}

/* bioset_exit() of one never initialised (zeroed) does nothing. */
static void netram_mirror_destroy(struct netram_tier *nt)
{
	bioset_exit(&nt->mirror_bios[0]);
	bioset_exit(&nt->mirror_bios[1]);
	bioset_exit(&nt->mirror_reads);
	kvfree(nt->recovery.copies);
	nt->recovery.copies = NULL;
}

const struct netram_scheme netram_single = {
	.name = "none",
	.copies = 1,
	.max_run = UINT_MAX,
	.lost_hint = "",
	.alloc = netram_copies_alloc,
	.free = netram_copies_free,
	.map_read = netram_copies_map_read,
	.map_write = netram_single_map_write,
	.map_retry = netram_copies_map_retry,
	.capacity = netram_copies_capacity,
	.lost_wants = netram_copies_lost_wants,
	.on_server = netram_copies_on_server,
};

const struct netram_scheme netram_mirror = {
	.name = "mirror",
	.copies = 2,
	.max_run = UINT_MAX,
	.redundant = true,
	.lost_hint = "; copying them again from their mirrors",
	.create = netram_mirror_create,
	.destroy = netram_mirror_destroy,
	.alloc = netram_copies_alloc,
	.free = netram_copies_free,
	.map_read = netram_copies_map_read,
	.map_write = netram_map_mirrored,
	.map_retry = netram_copies_map_retry,
	.capacity = netram_copies_capacity,
	.lost_wants = netram_copies_lost_wants,
	.on_server = netram_copies_on_server,
};
