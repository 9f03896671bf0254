// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "random": each page taken is the first page in Network RAM
 * within RANDOM_WINDOW pages of a random place in the device; a place with
 * none there is given up for another, so that a sparse device does not
 * spend the wake-up's scan on long empty stretches.
 */
#include <linux/random.h>

#include "../policy.h"

#define RANDOM_WINDOW	64

static unsigned int random_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
				unsigned int nr, unsigned int *arm)
{
	struct nswap2l_hand *hand = &nswap2l_hand_picker(p)->hand;
	unsigned int n = 0;
	u64 page;

	*arm = p->type->arm;
	while (n < nr) {
		unsigned int window = RANDOM_WINDOW;

		hand->pos = get_random_u64() % READ_ONCE(map->nr_pages);
		while (window--) {
			if (!nswap2l_hand_next(hand, map, &page))
				return n;
			if (nswap2l_entry_prefetchable(nswap2l_map_lookup(map, page))) {
				pages[n++] = page;
				break;
			}
		}
	}
	return n;
}

static struct nswap2l_picker *random_create(void)
{
	return nswap2l_hand_picker_create(random_pick, 0);
}

static struct nswap2l_prefetch_which random_policy = {
	.type = { .name = "random", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = 1,
	.create = random_create,
};

static struct nswap2l_prefetch_type *const types[] = { &random_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(random, types)
