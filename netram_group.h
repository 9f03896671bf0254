/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reliability=parity's group table, shared by its files only:
 *
 *   netram_group.c   the table: which group a key is in, pages joining and
 *                    leaving groups, the cleaner, the servers' key counts
 *   netram_parity.c  the I/O: writing members and parity, rebuilds, recovery
 *   netram_parity_repair.c  recovery repairing a group's lost run in place
 *
 * The table calls no I/O function: what a change asks of the I/O (a group
 * closed, a member's page gone before it was sent) it returns to its caller.
 * They take p->lock alone (netram.h), the servers' locks inside it; the
 * repairs' lock is a leaf.
 */
#ifndef NSWAP2L_NETRAM_GROUP_H
#define NSWAP2L_NETRAM_GROUP_H

#include <linux/log2.h>

#include "netram_scheme.h"

#define NETRAM_PARITY_MEMBER_SHIFT	ilog2(NETRAM_PARITY_RUN)
#define NETRAM_GROUP_RUNS		(NETRAM_PARITY_MEMBERS + 1)
#define NETRAM_GROUP_KEYS		(NETRAM_GROUP_RUNS * NETRAM_PARITY_RUN)
#define NETRAM_GROUP_KEY_SHIFT		ilog2(NETRAM_GROUP_KEYS)
#define NETRAM_PARITY_INDEX		NETRAM_PARITY_MEMBERS	/* the run after the members */
#define NETRAM_GROUP_IOS		256	/* groups being written, at most */

enum netram_group_state {
	NETRAM_GROUP_FREE,
	NETRAM_GROUP_OPEN,		/* takes new members */
	NETRAM_GROUP_CLOSED,		/* takes none, members' writes in flight */
	NETRAM_GROUP_SEALED,		/* its parity is being written */
	NETRAM_GROUP_PROTECTED,		/* parity stored: any one page can be rebuilt */
	NETRAM_GROUP_UNPROTECTED,	/* parity write failed: its members are rewritten */
};

/*
 * A group's entry.  Members' servers and pages change only under the
 * parity lock and only until the group is sealed, except that a server
 * may move a protected group's run whole to another (MOVED); live counts
 * the pages the map still has in the group.
 */
struct netram_group {
	u64 serial;
	u32 servers;			/* a nibble per run: members', then the parity's */
	u16 pages[NETRAM_PARITY_MEMBERS];	/* pages sent (or to be sent) per member */
	u16 live;
	u8 left_out;			/* members whose write failed: not in the parity */
	u8 state;			/* enum netram_group_state */
	u8 nr_members;
	u8 parity_pages;
	u8 io;				/* index in ios[] until the group is protected */
};

/* A group being written: its members' bios wait here for the parity. */
struct netram_group_io {
	struct netram_tier *nt;
	struct netram_group *group;
	u16 pending[NETRAM_PARITY_MEMBERS];	/* pages not stored (or refused) yet */
	u16 mapped[NETRAM_PARITY_MEMBERS];	/* pages whose write was sent */
	u8 in_parity;			/* members whose pages the parity covers */
	bool parity_done;
	blk_status_t parity_status;
	/* the parity's bios still out (the server's max_pages cuts it), and their error */
	atomic_t parity_bios;
	blk_status_t parity_error;
	struct bio_list bios;
	struct list_head sealed;
};

struct netram_parity {
	spinlock_t lock;		/* groups, ios and everything below */
	struct netram_group *groups;
	u32 nr_groups;
	unsigned long *free_groups;	/* a bit per group table entry: FREE */
	u64 next_serial;
	struct netram_group *open;
	struct netram_group_io *ios;
	u8 free_ios[NETRAM_GROUP_IOS];
	unsigned int nr_free_ios;
	struct list_head sealed;	/* groups whose parity the worker writes */
	struct work_struct parity_work;
	struct bio_set member_bios;
	struct bio_set parity_bios;
	mempool_t *parity_pages;
	mempool_t *rebuilds;
	mempool_t *rebuild_pages;
	struct mutex rebuild_lock;	/* a rebuild that waits for pages */
	atomic64_t rebuilt;		/* pages */
	/*
	 * Server pages kept for pages that left their group; past half the
	 * pages stored, the cleaner moves the pages of mostly stale groups
	 * into new groups, and the old ones are freed.
	 */
	u64 stale;
	bool cleaning;
	struct nswap2l_move_job clean_job;
	struct netram_repairs *repairs;	/* netram_parity_repair.c */
};

static inline struct netram_parity *netram_parity_of(struct netram_tier *nt)
{
	return nt->scheme_data;
}

static inline u64 netram_key_serial(u64 key)
{
	return (key - 1) >> NETRAM_GROUP_KEY_SHIFT;
}

/* The run of the key: a member's, or NETRAM_PARITY_INDEX. */
static inline unsigned int netram_key_run(u64 key)
{
	return ((key - 1) >> NETRAM_PARITY_MEMBER_SHIFT) & (NETRAM_GROUP_RUNS - 1);
}

static inline unsigned int netram_key_page(u64 key)
{
	return (key - 1) & (NETRAM_PARITY_RUN - 1);
}

/* Key of page @page of run @run of the group; keys start at 1 (0 is the heartbeat's). */
static inline u64 netram_group_key(const struct netram_group *g, unsigned int run,
				   unsigned int page)
{
	return (g->serial << NETRAM_GROUP_KEY_SHIFT) + run * NETRAM_PARITY_RUN + page + 1;
}

static inline unsigned int netram_group_server(const struct netram_group *g, unsigned int run)
{
	return (g->servers >> (run * NETRAM_SLOT_SERVER_BITS)) & NETRAM_SLOT_SERVER_MASK;
}

static inline u16 netram_run_bits(unsigned int first, unsigned int nr)
{
	return GENMASK(first + nr - 1, first);
}

/* Pages of the group's member runs that its parity covers. */
static inline u16 netram_member_pages(const struct netram_group *g, unsigned int m)
{
	return g->left_out & BIT(m) ? 0 : g->pages[m];
}

/* The table (netram_group.c); "p->lock held" where they say so. */
int netram_groups_init(struct netram_tier *nt, u64 device_pages);
void netram_groups_exit(struct netram_parity *p);
struct netram_group *netram_find_group(struct netram_parity *p, u64 key);
bool netram_group_snapshot(struct netram_parity *p, u64 key, struct netram_group *copy);
void netram_hold_keys(struct netram_server *srv, u64 key, unsigned int nr);
void netram_free_group(struct netram_tier *nt, struct netram_group *g);
int netram_join_group(struct netram_tier *nt, const struct nswap2l_server_room *rooms,
		      unsigned long candidates, unsigned int nr, u64 *slot,
		      struct netram_group **closed);
struct netram_group *netram_leave_group(struct netram_tier *nt, u64 slot, bool written);
u16 netram_run_held(const struct netram_group *g, unsigned int run);
bool netram_run_alone_on(const struct netram_group *g, unsigned int run, unsigned int index);
void netram_rehome_run(struct netram_tier *nt, struct netram_group *g, unsigned int run,
		       struct netram_server *to, bool moved);
bool netram_want_cleaning(struct netram_tier *nt);
/* The scheme's move_keys (netram_scheme.h): whole runs, protected groups only. */
void netram_group_move_keys(struct netram_tier *nt, struct netram_server *from,
			    struct netram_server *to, const u64 *keys, unsigned int nr_keys,
			    bool can_move, const unsigned long *blocked, unsigned long *taken);
void netram_start_cleaning(struct netram_tier *nt);

/* The I/O (netram_parity.c) */
/* Read the run at @slot (the bio's pages) from the rest of its group; false if it cannot be. */
bool netram_parity_rebuild(struct netram_tier *nt, struct bio *bio, u64 slot);

/* Repairs in place (netram_parity_repair.c) */
int netram_repairs_create(struct netram_parity *p);
void netram_repairs_destroy(struct netram_parity *p);
/* Every repair started has ended. */
void netram_repairs_wait(struct netram_tier *nt);
/* The scheme's pass_done: the repairs ended, and the pages they stored since the last call. */
u64 netram_repairs_pass_done(struct netram_tier *nt);
/*
 * Recovery's look at a page of protected group @g (a snapshot) that lost
 * no page: 1 to relabel it (its run is repaired, or being repaired, on a
 * spare server), 0 to leave it (the repair takes its group), -1 for the
 * whole-group move.  Mover's thread.
 */
int netram_repair_wants(struct netram_tier *nt, const struct netram_group *g, u64 slot);
void netram_repairs_report(struct netram_tier *nt);

#endif
