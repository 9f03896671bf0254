// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q1, "when": does the worker prefetch at this wake-up?
 *
 *   always     at every wake-up
 *   swapping   only while pages are being written (Nswap2L: prefetch while
 *              the machine swaps out, when Network RAM fills)
 *   idle[:N]   only when fewer than N foreground bios (default 1) were in
 *              flight on average since the last wake-up
 */
#include "../policy.h"

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
	{ .type = { .name = "always", .question = NSWAP2L_PREFETCH_WHEN }, .now = always_now },
	{ .type = { .name = "swapping", .question = NSWAP2L_PREFETCH_WHEN }, .now = swapping_now },
	{ .type = { .name = "idle", .question = NSWAP2L_PREFETCH_WHEN }, .now = idle_now,
	  .default_arg = 1 },
};

static struct nswap2l_prefetch_type *const types[] = {
	&when_policies[0].type,
	&when_policies[1].type,
	&when_policies[2].type,
};

NSWAP2L_PREFETCH_POLICY_FILE(when, types)
