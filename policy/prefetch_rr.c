// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "rr": round-robin over the device's pages, taking every page
 * in Network RAM that the cursor reaches.  The cursor goes on where the
 * last wake-up left it.
 */
#include <linux/slab.h>

#include "../nswap2l.h"

struct rr_picker {
	struct nswap2l_picker picker;
	struct nswap2l_hand hand;
};

static u64 rr_begin(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
		    struct nswap2l_map *map, u64 quota)
{
	nswap2l_hand_begin(&container_of(p, struct rr_picker, picker)->hand, map);
	return quota;
}

static unsigned int rr_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			    unsigned int nr, unsigned int *arm)
{
	struct rr_picker *rr = container_of(p, struct rr_picker, picker);
	unsigned int n = 0;
	u64 page;

	while (n < nr && nswap2l_hand_next(&rr->hand, map, &page))
		if (nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page)))
			pages[n++] = page;
	*arm = p->type->arm;
	return n;
}

static void rr_destroy(struct nswap2l_picker *p)
{
	kfree(container_of(p, struct rr_picker, picker));
}

static struct nswap2l_picker *rr_create(void)
{
	struct rr_picker *rr = kzalloc(sizeof(*rr), GFP_KERNEL);

	if (!rr)
		return ERR_PTR(-ENOMEM);
	rr->picker.begin = rr_begin;
	rr->picker.pick = rr_pick;
	rr->picker.destroy = rr_destroy;
	return &rr->picker;
}

static struct nswap2l_prefetch_which rr_policy = {
	.type = { .name = "rr", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 0,
	.create = rr_create,
};

static struct nswap2l_prefetch_type *const types[] = { &rr_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(rr, types)
