// SPDX-License-Identifier: GPL-2.0
/*
 * Placement "fastest_free": a new page goes to the fastest tier that has a
 * free slot, in the order Network RAM, flash, disk (Nswap2L's default).
 * Pages only spill to a slower tier when the faster ones are full.
 */
#include <linux/slab.h>

#include "../policy.h"

struct fastest_free {
	struct nswap2l_placement policy;
	struct nswap2l_tier *const *tiers;
};

static int fastest_free_next_tier(struct nswap2l_placement *p, u64 page,
				  unsigned long tried)
{
	struct fastest_free *ff = container_of(p, struct fastest_free, policy);
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = ff->tiers[id];

		if (tier && !(tried & BIT(id)) && nswap2l_tier_free(tier))
			return id;
	}
	return -ENOSPC;
}

static void fastest_free_destroy(struct nswap2l_placement *p)
{
	kfree(container_of(p, struct fastest_free, policy));
}

static struct nswap2l_placement *fastest_free_create(struct nswap2l_tier *const *tiers)
{
	struct fastest_free *ff = kzalloc(sizeof(*ff), GFP_KERNEL);

	if (!ff)
		return ERR_PTR(-ENOMEM);
	ff->tiers = tiers;
	ff->policy.next_tier = fastest_free_next_tier;
	ff->policy.destroy = fastest_free_destroy;
	return &ff->policy;
}

static struct nswap2l_placement_type fastest_free_type = {
	.name = "fastest_free",
	.create = fastest_free_create,
};

int nswap2l_fastest_free_init(void)
{
	return nswap2l_placement_register(&fastest_free_type);
}

void nswap2l_fastest_free_exit(void)
{
	nswap2l_placement_unregister(&fastest_free_type);
}
