/* SPDX-License-Identifier: GPL-2.0 */
/* Policies (policy/): the only header that the policy files include. */
#ifndef NSWAP2L_POLICY_H
#define NSWAP2L_POLICY_H

#include <linux/math64.h>
#include <linux/minmax.h>

#include "map_types.h"

/*----------------------------------------------------------------
 * Policies (policy/): they decide, the core executes.  They never block
 * and never allocate memory on the I/O path (dm-cache's split).
 *--------------------------------------------------------------*/

/* Placement: which tier a newly written page goes to. */
struct nswap2l_placement {
	/*
	 * Next tier to try for @page, skipping the tiers whose bit is set in
	 * @tried (they were full); -ENOSPC when no tier is left.
	 */
	int (*next_tier)(struct nswap2l_placement *p, u64 page,
			 unsigned long tried);
	void (*destroy)(struct nswap2l_placement *p);
	const struct nswap2l_placement_type *type;
};

struct nswap2l_placement_type {
	struct list_head list;
	const char *name;
	struct nswap2l_placement *(*create)(struct nswap2l_tier *const *tiers);
};

#define NSWAP2L_DEFAULT_PLACEMENT "fastest_free"

int nswap2l_placement_register(struct nswap2l_placement_type *type);
void nswap2l_placement_unregister(struct nswap2l_placement_type *type);
struct nswap2l_placement *nswap2l_placement_create(const char *name,
						   struct nswap2l_tier *const *tiers);
void nswap2l_placement_list(char *result, unsigned int maxlen, unsigned int *sz);

/*
 * Server choice: which Network RAM server takes a new page.  The tier hands
 * the policy what it knows of each server's room; the policy picks one of
 * those allowed in @candidates (a bit per server index).  A page with
 * copies asks again with the servers already chosen excluded: copies never
 * share a server.
 */
struct nswap2l_server_room {
	s64 free;	/* its last word, minus the pages we sent since */
	s64 held;	/* pages of ours it holds */
};

struct nswap2l_server_choice {
	const char *name;
	/* Index of the server to take the page, or -ENOSPC. */
	int (*pick)(const struct nswap2l_server_room *rooms, unsigned int nr,
		    unsigned long candidates);
};

/* @copies distinct servers into @picked; -ENOSPC unless there are that many. */
static inline int nswap2l_pick_servers(const struct nswap2l_server_choice *choice,
				       const struct nswap2l_server_room *rooms, unsigned int nr,
				       unsigned long candidates, unsigned int copies,
				       unsigned int *picked)
{
	unsigned int i;

	for (i = 0; i < copies; i++) {
		int pick = choice->pick(rooms, nr, candidates);

		if (pick < 0)
			return -ENOSPC;
		picked[i] = pick;
		__clear_bit(pick, &candidates);
	}
	return 0;
}

extern const struct nswap2l_server_choice nswap2l_most_free_server;

/*
 * Prefetching (prefetch.c) asks three questions at every wake-up, each
 * answered by a policy registered by name: Q1 "when" (prefetch now?),
 * Q2 "amount" (how many pages?) and Q3 "which" (which pages?).
 */
enum nswap2l_prefetch_question {
	NSWAP2L_PREFETCH_WHEN,
	NSWAP2L_PREFETCH_AMOUNT,
	NSWAP2L_PREFETCH_WHICH,
};

/* What the prefetch worker tells the policies at a wake-up. */
struct nswap2l_prefetch_view {
	u64 written;		/* pages written since the last wake-up */
	u64 held;		/* pages in Network RAM */
	u64 room;		/* pages Network RAM can take now */
	u64 busy_x100;		/* foreground bios in flight, mean since last wake-up, x100 */
	/*
	 * Each tier's mean foreground read latency over the intervals in which
	 * both served reads (0: too few flash reads yet to tell): over all of
	 * them, the moves' load included, and over the quiet ones, after a
	 * wake-up that moved nothing (prefetch.c, compare_tier_reads()).
	 */
	u64 netram_read_ns;
	u64 flash_read_ns;
	u64 quiet_netram_read_ns;
	u64 quiet_flash_read_ns;
	u64 uncompared_wakeups;	/* since an interval in which both tiers served reads */
	u64 prefetched[NSWAP2L_PREFETCH_ARMS];	/* pages each arm moved, ever */
	u64 reads[NSWAP2L_PREFETCH_ARMS];	/* flash reads of those pages */
	u64 rewritten[NSWAP2L_PREFETCH_ARMS];	/* of those pages, placed again by a write */
};

/* Network RAM is scarce below this % of its capacity free: auto's view, when=pays' default. */
#define NSWAP2L_SCARCE_PCT	25

/* Network RAM has less than @pct % of its capacity free. */
static inline bool nswap2l_netram_scarce(const struct nswap2l_prefetch_view *view,
					 unsigned int pct)
{
	return view->room * 100 < (view->held + view->room) * pct;
}

/*
 * Moves pay for reads, both tiers measured: flash reads are not slower than
 * Network RAM's while nothing moves (not as loaded by the moves, which
 * slow Network RAM themselves), and by at least as much as the moves slow
 * Network RAM's reads (all intervals against the quiet ones): what a read
 * of a moved page saves on flash must not be lost again on each Network
 * RAM read beside the moves (issue 33's benchmark at flash 0.9x: flash
 * 0.2-0.9 ms faster than an idle Network RAM, which the moves slowed by
 * 0.9-1.4 ms, and moving cost 19-26 % of the run).
 */
static inline bool nswap2l_reads_pay(const struct nswap2l_prefetch_view *view)
{
	u64 quiet = view->quiet_netram_read_ns;

	if (!quiet || view->quiet_flash_read_ns > quiet)
		return false;
	return view->netram_read_ns <= quiet ||
	       view->netram_read_ns - quiet <= quiet - view->quiet_flash_read_ns;
}

/*
 * Room made in Network RAM pays: it is scarce (below @pct % free), and its
 * reads, under the moves that make the room, are faster than flash's by
 * NSWAP2L_ROOM_MARGIN_PCT (or not measured yet).  A move costs a Network
 * RAM read, a flash write and the CPU of both: room in a Network RAM no
 * faster than flash holds pages read slower than from flash, and in one
 * barely faster it does not pay the moves back (issue 33's benchmark, a
 * round at flash 1.2x: Network RAM read 3 % faster than flash under the
 * moves, and moving cost 5-12 % of the run).
 */
#define NSWAP2L_ROOM_MARGIN_PCT	12

static inline bool nswap2l_room_pays(const struct nswap2l_prefetch_view *view, unsigned int pct)
{
	return nswap2l_netram_scarce(view, pct) &&
	       !(view->flash_read_ns &&
		 view->netram_read_ns * (100 + NSWAP2L_ROOM_MARGIN_PCT) > view->flash_read_ns * 100);
}

/* Common head of the three kinds, for the registry. */
struct nswap2l_prefetch_type {
	struct list_head list;
	const char *name;
	enum nswap2l_prefetch_question question;
};

/*
 * Q1: prefetch at this wake-up?  The most pages it lets move now (0: none,
 * U64_MAX: no bound of its own).  @arg: the policy's number (when=idle:<n>).
 */
struct nswap2l_prefetch_when {
	struct nswap2l_prefetch_type type;
	unsigned int default_arg;
	bool backs_off;		/* moves less while moves slow foreground reads */
	u64 (*now)(const struct nswap2l_prefetch_view *view, unsigned int arg);
};

/* Q2: how many pages, given @percent (amount=<name>:<percent>). */
struct nswap2l_prefetch_amount {
	struct nswap2l_prefetch_type type;
	u64 (*pages)(const struct nswap2l_prefetch_view *view, unsigned int percent);
};

/*
 * Q3: which pages.  A picker keeps its cursor or clock hand across
 * wake-ups; it reads the map and may clear referenced bits, nothing else.
 */
struct nswap2l_picker {
	/*
	 * A wake-up starts with @quota pages to take (nswap2l_hand_begin());
	 * returns the quota to use (an adaptive picker changes it).
	 */
	u64 (*begin)(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
		     struct nswap2l_map *map, u64 quota);
	/*
	 * Up to @nr pages now in Network RAM, into @pages, the arm that chose
	 * them in *@arm; returns how many, 0 when this wake-up found no more.
	 * With @nr == 0 (a wake-up that takes nothing), a clock may age pages.
	 */
	unsigned int (*pick)(struct nswap2l_picker *p, struct nswap2l_map *map,
			     u64 *pages, unsigned int nr, unsigned int *arm);
	/* The arm in use, for stats. */
	const char *(*choice)(struct nswap2l_picker *p);	/* optional */
	/* More "key value" stats lines into a sysfs @buf from @len; the new length. */
	int (*emit_stats)(struct nswap2l_picker *p, char *buf, int len);	/* optional */
	void (*destroy)(struct nswap2l_picker *p);
	const struct nswap2l_prefetch_which *type;
};

struct nswap2l_prefetch_which {
	struct nswap2l_prefetch_type type;
	unsigned int arm;	/* its counters' index; NSWAP2L_PREFETCH_ARMS: none of its own */
	bool backs_off;		/* as nswap2l_prefetch_when's */
	struct nswap2l_picker *(*create)(void);
};

/*
 * A share of a quota, in 1/NSWAP2L_SHARE_FULL: halved while what it answers
 * lasts, down to 1/NSWAP2L_SHARE_FULL, doubled back otherwise (the worker's
 * back-off, auto's score).
 */
#define NSWAP2L_SHARE_FULL	16

static inline unsigned int nswap2l_share_step(unsigned int share, bool halve)
{
	return halve ? max(share / 2, 1U) : min(share * 2, (unsigned int)NSWAP2L_SHARE_FULL);
}

static inline u64 nswap2l_share_of(u64 quota, unsigned int share)
{
	return DIV_ROUND_UP_ULL(quota * share, NSWAP2L_SHARE_FULL);
}

int nswap2l_prefetch_register(struct nswap2l_prefetch_type *type);
void nswap2l_prefetch_unregister(struct nswap2l_prefetch_type *type);
/* The policies of one file, all or none. */
int nswap2l_prefetch_register_all(struct nswap2l_prefetch_type *const *types, unsigned int nr);
void nswap2l_prefetch_unregister_all(struct nswap2l_prefetch_type *const *types,
				     unsigned int nr);
/* The registered type or NULL; types are static, never freed while loaded. */
struct nswap2l_prefetch_type *nswap2l_prefetch_find(enum nswap2l_prefetch_question q,
						    const char *name);
/* " name1 name2 ..." of one question's policies, into @buf of @size. */
void nswap2l_prefetch_names(enum nswap2l_prefetch_question q, char *buf, size_t size);
/* A picker of the Q3 policy @name, or NULL; ERR_PTR on no memory. */
struct nswap2l_picker *nswap2l_picker_create(const char *name);
/* The Q3 policy registered for @arm. */
const struct nswap2l_prefetch_which *nswap2l_prefetch_arm(unsigned int arm);

/* A page a picker may take: in Network RAM, not being moved. */
static inline bool nswap2l_entry_prefetchable(u64 entry)
{
	return entry && nswap2l_entry_tier(entry) == NSWAP2L_TIER_NETRAM &&
	       !(entry & NSWAP2L_ENTRY_MIGRATING);
}

int nswap2l_policies_init(void);
void nswap2l_policies_exit(void);

/* One registration pair per policy file in policy/. */
int nswap2l_fastest_free_init(void);
void nswap2l_fastest_free_exit(void);
int nswap2l_prefetch_when_init(void);
void nswap2l_prefetch_when_exit(void);
int nswap2l_prefetch_amount_init(void);
void nswap2l_prefetch_amount_exit(void);
int nswap2l_prefetch_rr_init(void);
void nswap2l_prefetch_rr_exit(void);
int nswap2l_prefetch_random_init(void);
void nswap2l_prefetch_random_exit(void);
int nswap2l_prefetch_clock_init(void);
void nswap2l_prefetch_clock_exit(void);
int nswap2l_prefetch_auto_init(void);
void nswap2l_prefetch_auto_exit(void);

/* The init and exit of a prefetch policy file that registers @types. */
#define NSWAP2L_PREFETCH_POLICY_FILE(file, types)				\
int nswap2l_prefetch_##file##_init(void)					\
{										\
	return nswap2l_prefetch_register_all(types, ARRAY_SIZE(types));		\
}										\
void nswap2l_prefetch_##file##_exit(void)					\
{										\
	nswap2l_prefetch_unregister_all(types, ARRAY_SIZE(types));		\
}

/*
 * A hand over the map for the Q3 pickers: it keeps its place across
 * wake-ups and passes at most one lap (and at most
 * NSWAP2L_PREFETCH_SCAN_PAGES entries) per wake-up.
 */
#define NSWAP2L_PREFETCH_SCAN_PAGES	(1ULL << 20)

struct nswap2l_hand {
	u64 pos;
	u64 left;	/* entries it may still pass in this wake-up */
};

static inline void nswap2l_hand_begin(struct nswap2l_hand *hand, struct nswap2l_map *map)
{
	hand->left = min_t(u64, READ_ONCE(map->nr_pages), NSWAP2L_PREFETCH_SCAN_PAGES);
}

/*
 * A picker that is a hand and a pick function (rr, random, lrs, mrs):
 * begin() and destroy() are common; @arg is the policy's own.
 */
struct nswap2l_hand_picker {
	struct nswap2l_picker picker;
	struct nswap2l_hand hand;
	unsigned long arg;
};

static inline struct nswap2l_hand_picker *nswap2l_hand_picker(struct nswap2l_picker *p)
{
	return container_of(p, struct nswap2l_hand_picker, picker);
}

struct nswap2l_picker *nswap2l_hand_picker_create(
	unsigned int (*pick)(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			     unsigned int nr, unsigned int *arm),
	unsigned long arg);

/* The next page under the hand, false when this wake-up's scan is over. */
static inline bool nswap2l_hand_next(struct nswap2l_hand *hand, struct nswap2l_map *map,
				     u64 *page)
{
	if (!hand->left)
		return false;
	hand->left--;
	if (hand->pos >= map->nr_pages)
		hand->pos = 0;
	*page = hand->pos++;
	return true;
}

#endif /* NSWAP2L_POLICY_H */
