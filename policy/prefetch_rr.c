// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "rr": round-robin over the device's pages, taking every page
 * in Network RAM that the cursor reaches.  The cursor goes on where the
 * last wake-up left it.
 */
#include "../policy.h"

static unsigned int rr_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			    unsigned int nr, unsigned int *arm)
{
	struct nswap2l_hand *hand = &nswap2l_hand_picker(p)->hand;
	unsigned int n = 0;
	u64 page;

	while (n < nr && nswap2l_hand_next(hand, map, &page))
		if (nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page)))
			pages[n++] = page;
	*arm = p->type->arm;
	return n;
}

static struct nswap2l_picker *rr_create(void)
{
	return nswap2l_hand_picker_create(rr_pick, 0);
}

static struct nswap2l_prefetch_which rr_policy = {
	.type = { .name = "rr", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 0,
	.create = rr_create,
};

static struct nswap2l_prefetch_type *const types[] = { &rr_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(rr, types)
