// SPDX-License-Identifier: GPL-2.0
/*
 * reliability=parity: the group table (netram_group.h).
 *
 * Groups are log-structured, never updated in place: keys are never
 * reused, so an overwrite, discard or move gives the page a new key in a
 * new group while the old version stays on its server, still part of its
 * old group's parity, until every page of the group has left it; then all
 * its keys are freed.  No parity ever disagrees with the data it covers,
 * whatever dies when, and no read-modify-write is needed (which would read
 * the old page and old parity on every overwrite).  The price is server
 * memory for stale versions until a group empties; when they pass half the
 * pages stored, a cleaner (a move job) moves the pages of groups at least
 * half stale into new groups, so small groups merge and the old ones go.
 *
 * A group's keys follow from its serial number (NETRAM_GROUP_KEYS keys:
 * NETRAM_PARITY_RUN for each member, then the parity run), and its entry
 * in a table allocated with the tier (serial modulo the table's size; a
 * new group takes the next free entry) holds the members' servers and
 * pages: 32 bytes per group, so between 32 bytes
 * (groups of one page) and 32 / (N * 16) bytes (full groups of full runs)
 * per page.  The page's map entry stays one 8-byte slot with one server.
 */
#include "netram_group.h"

#define NETRAM_MAX_GROUPS		(1U << 20)	/* 32 MiB of entries at most */
#define NETRAM_MIN_GROUPS		1024U
/*
 * Entries beyond one group per device page: groups being written, and the
 * old groups of pages being overwritten or moved.
 */
#define NETRAM_GROUP_SLACK		(2 * NETRAM_GROUP_IOS)
/* A clean pass starts past this many stale pages, and half the pages stored. */
#define NETRAM_CLEAN_MIN_STALE		1024

static inline void netram_group_set_server(struct netram_group *g, unsigned int run,
					   unsigned int index)
{
	g->servers &= ~(NETRAM_SLOT_SERVER_MASK << (run * NETRAM_SLOT_SERVER_BITS));
	g->servers |= index << (run * NETRAM_SLOT_SERVER_BITS);
}

/* The group of @key, or NULL if it is gone. */
struct netram_group *netram_find_group(struct netram_parity *p, u64 key)
{
	u64 serial = netram_key_serial(key);
	u32 index;
	struct netram_group *g;

	lockdep_assert_held(&p->lock);
	div_u64_rem(serial, p->nr_groups, &index);
	g = &p->groups[index];

	return g->state != NETRAM_GROUP_FREE && g->serial == serial ? g : NULL;
}

/* A copy of the group of @key; false if it is gone. */
bool netram_group_snapshot(struct netram_parity *p, u64 key, struct netram_group *copy)
{
	struct netram_group *g;
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	g = netram_find_group(p, key);
	if (g)
		*copy = *g;
	spin_unlock_irqrestore(&p->lock, flags);
	return g;
}

/*----------------------------------------------------------------
 * Server accounting of a group's keys
 *--------------------------------------------------------------*/

/* @nr keys from @key go to @srv: counted held, and lost if the server was lost meanwhile. */
void netram_hold_keys(struct netram_server *srv, u64 key, unsigned int nr)
{
	unsigned long flags;

	spin_lock_irqsave(&srv->lock, flags);
	atomic64_sub(nr, &srv->free_estimate);
	atomic64_add(nr, &srv->held);
	if (netram_copy_lost(srv, key))
		WRITE_ONCE(srv->lost_held, srv->lost_held + nr);
	spin_unlock_irqrestore(&srv->lock, flags);
}

/* The keys of @bits from @key leave @srv: freed there if @sent, never sent otherwise. */
static void netram_release_keys(struct netram_server *srv, u64 key, unsigned long bits,
				bool sent)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&srv->lock, flags);
	for_each_set_bit(i, &bits, NETRAM_PARITY_RUN)
		netram_release_key(srv, key + i, sent);
	spin_unlock_irqrestore(&srv->lock, flags);
}

/* No page is left in the group: free its keys everywhere. */
void netram_free_group(struct netram_tier *nt, struct netram_group *g)
{
	unsigned long to_send = 0;
	unsigned int m, i;

	lockdep_assert_held(&netram_parity_of(nt)->lock);
	for (m = 0; m < g->nr_members; m++) {
		if (!g->pages[m])
			continue;
		netram_parity_of(nt)->stale -= hweight16(g->pages[m]);
		netram_release_keys(nt->servers[netram_group_server(g, m)],
				    netram_group_key(g, m, 0), g->pages[m], true);
		__set_bit(netram_group_server(g, m), &to_send);
	}
	if (g->parity_pages) {
		netram_release_keys(nt->servers[netram_group_server(g, NETRAM_PARITY_INDEX)],
				    netram_group_key(g, NETRAM_PARITY_INDEX, 0),
				    netram_run_bits(0, g->parity_pages), true);
		__set_bit(netram_group_server(g, NETRAM_PARITY_INDEX), &to_send);
	}
	g->state = NETRAM_GROUP_FREE;
	__set_bit(g - netram_parity_of(nt)->groups, netram_parity_of(nt)->free_groups);
	for_each_set_bit(i, &to_send, NETRAM_MAX_SERVERS)
		netram_queue_io(nt->servers[i]);
}

/*----------------------------------------------------------------
 * Slots: joining groups, leaving them
 *--------------------------------------------------------------*/

/* A new group, with its first member's server and its parity's. */
static struct netram_group *netram_open_group(struct netram_tier *nt,
					      const struct nswap2l_server_room *rooms,
					      unsigned long candidates, unsigned int *server)
{
	struct netram_parity *p = netram_parity_of(nt);
	unsigned int picked[2];
	struct netram_group_io *io;
	struct netram_group *g;
	u32 start, index;
	u64 serial;

	lockdep_assert_held(&p->lock);
	if (!p->nr_free_ios ||
	    nswap2l_pick_servers(nt->choice, rooms, netram_nr_servers(nt), candidates, 2, picked))
		return NULL;
	/*
	 * The next free entry, and the first serial after the last one that
	 * lands there: keys only grow (netram_mark_lost()), and the serials
	 * skipped over entries in use are simply never used.
	 */
	div_u64_rem(p->next_serial, p->nr_groups, &start);
	index = find_next_bit(p->free_groups, p->nr_groups, start);
	if (index >= p->nr_groups) {
		index = find_first_bit(p->free_groups, start);
		if (index >= start)
			return NULL;	/* every entry in use */
	}
	serial = p->next_serial - start + index;
	if (index < start)
		serial += p->nr_groups;
	__clear_bit(index, p->free_groups);
	g = &p->groups[index];
	memset(g, 0, sizeof(*g));
	g->serial = serial;
	p->next_serial = serial + 1;
	g->state = NETRAM_GROUP_OPEN;
	g->io = p->free_ios[--p->nr_free_ios];
	netram_group_set_server(g, NETRAM_PARITY_INDEX, picked[1]);
	io = &p->ios[g->io];
	memset(io->pending, 0, sizeof(io->pending));
	memset(io->mapped, 0, sizeof(io->mapped));
	io->in_parity = 0;
	io->parity_done = false;
	io->parity_status = BLK_STS_OK;
	io->group = g;
	/* Keys handed out: a loss from now on covers this group's (netram_mark_lost()). */
	atomic64_set(&nt->next_key, netram_group_key(g, NETRAM_PARITY_INDEX, NETRAM_PARITY_RUN - 1));
	p->open = g;
	*server = picked[0];
	return g;
}

/*
 * A run of at most @nr pages joins the open group, or a new one: the
 * pages it takes, or -ENOSPC.  An open group that no server is left for
 * closes, and *@closed names it: the caller seals it if it can be now.
 */
int netram_join_group(struct netram_tier *nt, const struct nswap2l_server_room *rooms,
		      unsigned long candidates, unsigned int nr, u64 *slot,
		      struct netram_group **closed)
{
	struct netram_parity *p = netram_parity_of(nt);
	unsigned int i, m, server, nr_servers = netram_nr_servers(nt);
	struct netram_group *g = p->open;
	u64 key;

	lockdep_assert_held(&p->lock);
	*closed = NULL;
	if (g) {
		unsigned long others = candidates;

		__clear_bit(netram_group_server(g, NETRAM_PARITY_INDEX), &others);
		for (m = 0; m < g->nr_members; m++)
			__clear_bit(netram_group_server(g, m), &others);
		for_each_set_bit(i, &candidates, nr_servers)
			if (netram_copy_lost(nt->servers[i], netram_group_key(g, 0, 0)))
				__clear_bit(i, &others);
		if (nswap2l_pick_servers(nt->choice, rooms, nr_servers, others, 1, &server)) {
			/* No server left for another member. */
			g->state = NETRAM_GROUP_CLOSED;
			p->open = NULL;
			*closed = g;
			g = NULL;
		}
	}
	if (!g)
		g = netram_open_group(nt, rooms, candidates, &server);
	if (!g)
		return -ENOSPC;
	nr = clamp_t(s64, rooms[server].free, 1,
		     min3(nr, (unsigned int)NETRAM_PARITY_RUN,
			  READ_ONCE(nt->servers[server]->max_pages)));
	m = g->nr_members++;
	netram_group_set_server(g, m, server);
	g->pages[m] = netram_run_bits(0, nr);
	p->ios[g->io].pending[m] = g->pages[m];
	g->live += nr;
	key = netram_group_key(g, m, 0);
	netram_hold_keys(nt->servers[server], key, nr);
	if (g->nr_members == nt->parity_group) {
		/* Full: sealed once this run is sent too. */
		g->state = NETRAM_GROUP_CLOSED;
		p->open = NULL;
	}
	*slot = netram_make_slot(key, &server, 1);
	return nr;
}

/*
 * A page leaves its group.  One never sent (@written false, its group
 * still being written) is taken out of it, and its group returned: the
 * caller takes the page out of the group's write too.  The others stay
 * on their servers, in their group's parity, until the whole group is
 * empty.
 */
struct netram_group *netram_leave_group(struct netram_tier *nt, u64 slot, bool written)
{
	struct netram_parity *p = netram_parity_of(nt);
	u64 key = netram_slot_key(slot);
	struct netram_group *g = netram_find_group(p, key);
	unsigned int m = netram_key_run(key);
	u16 bit = BIT(netram_key_page(key));

	if (WARN_ON_ONCE(!g))
		return NULL;
	g->live--;
	p->stale++;
	if (!written && g->state <= NETRAM_GROUP_CLOSED && p->ios[g->io].pending[m] & bit &&
	    !(p->ios[g->io].mapped[m] & bit)) {
		g->pages[m] &= ~bit;
		p->stale--;	/* never stored */
		netram_release_keys(netram_copy_server(nt, slot, 0), key, 1, false);
		return g;
	}
	if (!g->live && g->state >= NETRAM_GROUP_PROTECTED)
		netram_free_group(nt, g);
	return NULL;
}

/*----------------------------------------------------------------
 * Runs a server moved to another (MOVED)
 *--------------------------------------------------------------*/

/* Keys of run @run of the group that its server holds. */
u16 netram_run_held(const struct netram_group *g, unsigned int run)
{
	if (run == NETRAM_PARITY_INDEX)
		return netram_run_bits(0, g->parity_pages);
	return run < g->nr_members ? netram_member_pages(g, run) : 0;
}

/* No other run of the group with keys is on server @index: a loss there costs one. */
bool netram_run_alone_on(const struct netram_group *g, unsigned int run, unsigned int index)
{
	unsigned int other;

	for (other = 0; other <= NETRAM_PARITY_INDEX; other++)
		if (other != run && (other < g->nr_members || other == NETRAM_PARITY_INDEX) &&
		    (other == NETRAM_PARITY_INDEX ? g->parity_pages : g->pages[other]) &&
		    netram_group_server(g, other) == index)
			return false;
	return true;
}

/*
 * Run @run of the group is on @to now, its held keys counted there; @moved:
 * by its server (MOVED), counted as such.  p->lock held.
 */
void netram_rehome_run(struct netram_tier *nt, struct netram_group *g, unsigned int run,
		       struct netram_server *to, bool moved)
{
	struct netram_server *from = nt->servers[netram_group_server(g, run)];
	unsigned int nr = hweight16(netram_run_held(g, run));
	u64 key = netram_group_key(g, run, 0);

	lockdep_assert_held(&netram_parity_of(nt)->lock);
	if (moved)
		netram_move_held(from, to, key, nr);
	else
		netram_transfer_held(from, to, key, nr);
	netram_group_set_server(g, run, to->index);
}

/*
 * A run moves only whole (its group names one server for it), in a
 * protected group (no write of it under way), onto a server holding no
 * other run of its group, and neither server lost it.
 */
static bool netram_move_run(struct netram_tier *nt, struct netram_group *g, unsigned int run,
			    u16 asked, struct netram_server *from, struct netram_server *to,
			    bool can_move)
{
	u16 held = netram_run_held(g, run);
	u64 key = netram_group_key(g, run, 0);

	if (!held || (asked & ~held))
		return false;
	if (netram_group_server(g, run) == to->index)
		return true;		/* an earlier MOVED whose answer was lost */
	if (!can_move || asked != held || g->state != NETRAM_GROUP_PROTECTED ||
	    netram_group_server(g, run) != from->index || !netram_run_alone_on(g, run, to->index) ||
	    netram_copy_lost(from, key) || netram_copy_lost(to, key))
		return false;
	netram_rehome_run(nt, g, run, to, true);
	return true;
}

void netram_group_move_keys(struct netram_tier *nt, struct netram_server *from,
			    struct netram_server *to, const u64 *keys, unsigned int nr_keys,
			    bool can_move, const unsigned long *blocked, unsigned long *taken)
{
	struct netram_parity *p = netram_parity_of(nt);
	unsigned int i, j;

	for (i = 0; i < nr_keys; i = j) {
		u64 serial = netram_key_serial(keys[i]);
		unsigned int run = netram_key_run(keys[i]);
		struct netram_group *g;
		u16 asked = 0;
		bool moved;

		/* sorted: a run's keys are next to each other */
		for (j = i; j < nr_keys && netram_key_serial(keys[j]) == serial &&
			    netram_key_run(keys[j]) == run; j++)
			asked |= BIT(netram_key_page(keys[j]));
		spin_lock_irq(&p->lock);
		g = netram_find_group(p, keys[i]);
		/* A run with a page being written stays (it may be there already). */
		moved = g && netram_move_run(nt, g, run, asked, from, to,
					     can_move && find_next_bit(blocked, j, i) >= j);
		spin_unlock_irq(&p->lock);
		if (moved)
			bitmap_set(taken, i, j - i);
	}
}

/*----------------------------------------------------------------
 * The cleaner
 *--------------------------------------------------------------*/

/* Groups at least half stale: their pages move to new groups. */
static bool netram_clean_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_parity *p = container_of(job, struct netram_parity, clean_job);
	unsigned int m, pages = 0;
	struct netram_group g;

	if (!netram_group_snapshot(p, netram_slot_key(slot), &g) ||
	    g.state != NETRAM_GROUP_PROTECTED)
		return false;
	for (m = 0; m < g.nr_members; m++)
		pages += hweight16(g.pages[m]);
	return g.live * 2 <= pages;
}

static void netram_clean_done(struct nswap2l_move_job *job)
{
	struct netram_parity *p = container_of(job, struct netram_parity, clean_job);
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	p->cleaning = false;
	spin_unlock_irqrestore(&p->lock, flags);
}

/* Pages left their groups: true if a clean pass is to start, now due. */
bool netram_want_cleaning(struct netram_tier *nt)
{
	struct netram_parity *p = netram_parity_of(nt);
	bool clean;

	lockdep_assert_held(&p->lock);
	clean = !p->cleaning && p->stale > NETRAM_CLEAN_MIN_STALE &&
		p->stale > atomic64_read(&nt->tier.used) / 2;
	p->cleaning |= clean;
	return clean;
}

void netram_start_cleaning(struct netram_tier *nt)
{
	struct netram_parity *p = netram_parity_of(nt);

	p->clean_job.tier = &nt->tier;
	p->clean_job.wants = netram_clean_wants;
	p->clean_job.done = netram_clean_done;
	if (!nswap2l_queue_move(nt->tier.nc, &p->clean_job))
		netram_clean_done(&p->clean_job);
}

/*----------------------------------------------------------------
 * Set up and take down
 *--------------------------------------------------------------*/

/* The table, in a zeroed netram_parity; netram_groups_exit() frees a half-built one. */
int netram_groups_init(struct netram_tier *nt, u64 device_pages)
{
	struct netram_parity *p = netram_parity_of(nt);
	unsigned int i;

	spin_lock_init(&p->lock);
	/* Groups of one page for a device that Network RAM could hold whole. */
	p->nr_groups = clamp_t(u64, device_pages + NETRAM_GROUP_SLACK, NETRAM_MIN_GROUPS,
			       NETRAM_MAX_GROUPS);
	p->groups = kvcalloc(p->nr_groups, sizeof(*p->groups), GFP_KERNEL);
	p->free_groups = kvmalloc_array(BITS_TO_LONGS(p->nr_groups), sizeof(long), GFP_KERNEL);
	p->ios = kvcalloc(NETRAM_GROUP_IOS, sizeof(*p->ios), GFP_KERNEL);
	if (!p->groups || !p->free_groups || !p->ios)
		return -ENOMEM;
	bitmap_fill(p->free_groups, p->nr_groups);
	for (i = 0; i < NETRAM_GROUP_IOS; i++) {
		p->ios[i].nt = nt;
		bio_list_init(&p->ios[i].bios);
		p->free_ios[p->nr_free_ios++] = i;
	}
	return 0;
}

void netram_groups_exit(struct netram_parity *p)
{
	kvfree(p->ios);
	kvfree(p->free_groups);
	kvfree(p->groups);
}
