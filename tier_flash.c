// SPDX-License-Identifier: GPL-2.0
/*
 * Flash tier: an SSD used as an array of 4 KiB slots.  Freed slots are
 * discarded so that the SSD's garbage collection knows they hold nothing.
 */
#include "nswap2l_types.h"

const struct nswap2l_tier_type nswap2l_flash_tier = {
	.name = "flash",
	.id = NSWAP2L_TIER_FLASH,
	.ops = &nswap2l_block_tier_ops,
	.has_device = true,
	.discard_freed_slots = true,
};
