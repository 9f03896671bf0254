// SPDX-License-Identifier: GPL-2.0
/*
 * Disk tier: the slowest, largest tier.  Freed slots are not discarded: a
 * rotating disk gains nothing from it and thin-provisioned disks can still
 * get space back through a discard sent to the device itself.
 */
#include "nswap2l_types.h"

const struct nswap2l_tier_type nswap2l_disk_tier = {
	.name = "disk",
	.id = NSWAP2L_TIER_DISK,
	.ops = &nswap2l_block_tier_ops,
	.has_device = true,
	.discard_freed_slots = false,
};
