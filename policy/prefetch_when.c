// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q1, "when": does the worker prefetch at this wake-up?
 *
 *   pays[:P]   (the default) only while a move pays, for one of Nswap2L's
 *              two reasons, as measured: flash reads are faster than
 *              Network RAM's, or Network RAM is scarce, less than P % of it
 *              free (default 25).  Until flash reads are measured it moves
 *              (the moved pages measure them); once they are slower and
 *              Network RAM has room, moving would only cost: a Network RAM
 *              read and a flash write per page, and a slower read back.
 *   always     at every wake-up
 *   swapping   only while pages are being written (Nswap2L: prefetch while
 *              the machine swaps out, when Network RAM fills)
 *   idle[:N]   only when fewer than N foreground bios (default 1) were in
 *              flight on average since the last wake-up
 */
#include "../policy.h"

static bool pays_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return nswap2l_netram_scarce(view, arg) || !nswap2l_flash_slower(view);
}

static bool always_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return true;
}

static bool swapping_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return view->written > 0;
}

static bool idle_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return view->busy_x100 < (u64)arg * 100;
}

static struct nswap2l_prefetch_when when_policies[] = {
	{ .type = { .name = "pays", .question = NSWAP2L_PREFETCH_WHEN }, .now = pays_now,
	  .default_arg = NSWAP2L_SCARCE_PCT },
	{ .type = { .name = "always", .question = NSWAP2L_PREFETCH_WHEN }, .now = always_now },
	{ .type = { .name = "swapping", .question = NSWAP2L_PREFETCH_WHEN }, .now = swapping_now },
	{ .type = { .name = "idle", .question = NSWAP2L_PREFETCH_WHEN }, .now = idle_now,
	  .default_arg = 1 },
};

static struct nswap2l_prefetch_type *const types[] = {
	&when_policies[0].type,
	&when_policies[1].type,
	&when_policies[2].type,
	&when_policies[3].type,
};

NSWAP2L_PREFETCH_POLICY_FILE(when, types)
