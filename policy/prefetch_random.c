// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "random": each page taken is the first page in Network RAM
 * within RANDOM_WINDOW pages of a random place in the device; a place with
 * none there is given up for another, so that a sparse device does not
 * spend the wake-up's scan on long empty stretches.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "../nswap2l.h"

#define RANDOM_WINDOW	64

struct random_picker {
	struct nswap2l_picker picker;
	struct nswap2l_hand hand;
};

static u64 random_begin(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
			struct nswap2l_map *map, u64 quota)
{
	nswap2l_hand_begin(&container_of(p, struct random_picker, picker)->hand, map);
	return quota;
}

static unsigned int random_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
				unsigned int nr, unsigned int *arm)
{
	struct random_picker *rp = container_of(p, struct random_picker, picker);
	unsigned int n = 0;
	u64 page;

	*arm = p->type->arm;
	while (n < nr) {
		unsigned int window = RANDOM_WINDOW;

		rp->hand.pos = get_random_u64() % READ_ONCE(map->nr_pages);
		while (window--) {
			if (!nswap2l_hand_next(&rp->hand, map, &page))
				return n;
			if (nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page))) {
				pages[n++] = page;
				break;
			}
		}
	}
	return n;
}

static void random_destroy(struct nswap2l_picker *p)
{
	kfree(container_of(p, struct random_picker, picker));
}

static struct nswap2l_picker *random_create(void)
{
	struct random_picker *rp = kzalloc(sizeof(*rp), GFP_KERNEL);

	if (!rp)
		return ERR_PTR(-ENOMEM);
	rp->picker.begin = random_begin;
	rp->picker.pick = random_pick;
	rp->picker.destroy = random_destroy;
	return &rp->picker;
}

static struct nswap2l_prefetch_which random_policy = {
	.type = { .name = "random", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 1,
	.create = random_create,
};

static struct nswap2l_prefetch_type *const types[] = { &random_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(random, types)
