// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "lrs" and "mrs" (least and most recently swapped, Nswap2L):
 * a clock hand over the map entries' referenced bit, which every read and
 * write of a page sets.  The hand clears the bit of every Network RAM page
 * it passes; "lrs" takes the pages whose bit was clear (not touched since
 * the hand last passed), "mrs" those whose bit was set.  With no page to
 * take, the hand still sweeps its lap, so that the bits age.
 */
#include <linux/slab.h>

#include "../nswap2l.h"

struct clock_picker {
	struct nswap2l_picker picker;
	struct nswap2l_hand hand;
	bool take_referenced;
};

static u64 clock_begin(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
		       struct nswap2l_map *map, u64 quota)
{
	nswap2l_hand_begin(&container_of(p, struct clock_picker, picker)->hand, map);
	return quota;
}

static unsigned int clock_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			       unsigned int nr, unsigned int *arm)
{
	struct clock_picker *clock = container_of(p, struct clock_picker, picker);
	unsigned int n = 0;
	u64 page;

	*arm = p->type->arm;
	while ((!nr || n < nr) && nswap2l_hand_next(&clock->hand, map, &page)) {
		if (!nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page)))
			continue;
		if (nswap2l_map_test_and_age(map, page) == clock->take_referenced && nr)
			pages[n++] = page;
		if (!(clock->hand.left % 4096))
			cond_resched();
	}
	return n;
}

static void clock_destroy(struct nswap2l_picker *p)
{
	kfree(container_of(p, struct clock_picker, picker));
}

static struct nswap2l_picker *clock_create(bool take_referenced)
{
	struct clock_picker *clock = kzalloc(sizeof(*clock), GFP_KERNEL);

	if (!clock)
		return ERR_PTR(-ENOMEM);
	clock->take_referenced = take_referenced;
	clock->picker.begin = clock_begin;
	clock->picker.pick = clock_pick;
	clock->picker.destroy = clock_destroy;
	return &clock->picker;
}

static struct nswap2l_picker *lrs_create(void)
{
	return clock_create(false);
}

static struct nswap2l_picker *mrs_create(void)
{
	return clock_create(true);
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
