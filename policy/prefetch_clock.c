// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "lrs" and "mrs" (least and most recently swapped, Nswap2L):
 * a clock hand over the map entries' referenced bit, which every read and
 * write of a page sets.  The hand clears the bit of every Network RAM page
 * it passes; "lrs" takes the pages whose bit was clear (not touched since
 * the hand last passed), "mrs" those whose bit was set.
 *
 * How fast bits age differs.  "mrs" wants the pages touched lately, so its
 * hand sweeps a lap at every wake-up, also one that takes nothing: a set
 * bit means touched since the last wake-up or so.  "lrs" wants the pages
 * not touched for long, so its hand moves only while it looks for pages to
 * take (CLOCK): bits age as fast as pages are wanted, and a page written
 * again before the hand comes round stays (with aging at every wake-up,
 * any page not written within one interval looked cold).
 */
#include "../policy.h"

/* The hand picker's arg: take the pages whose bit was set. */
#define TAKE_REFERENCED	1

static unsigned int clock_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			       unsigned int nr, unsigned int *arm)
{
	struct nswap2l_hand_picker *hp = nswap2l_hand_picker(p);
	bool take_referenced = hp->arg == TAKE_REFERENCED;
	unsigned int n = 0;
	u64 page;

	*arm = p->type->arm;
	if (!nr && !take_referenced)
		return 0;
	while ((!nr || n < nr) && nswap2l_hand_next(&hp->hand, map, &page)) {
		if (!nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page)))
			continue;
		if (nswap2l_map_test_and_age(map, page) == take_referenced && nr)
			pages[n++] = page;
		if (!(hp->hand.left % 4096))
			cond_resched();
	}
	return n;
}

static struct nswap2l_picker *lrs_create(void)
{
	return nswap2l_hand_picker_create(clock_pick, 0);
}

static struct nswap2l_picker *mrs_create(void)
{
	return nswap2l_hand_picker_create(clock_pick, TAKE_REFERENCED);
}

static struct nswap2l_prefetch_which lrs_policy = {
	.type = { .name = "lrs", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 2,
	.create = lrs_create,
};

static struct nswap2l_prefetch_which mrs_policy = {
	.type = { .name = "mrs", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 3,
	.create = mrs_create,
};

static struct nswap2l_prefetch_type *const types[] = { &lrs_policy.type, &mrs_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(clock, types)
