// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q2, "amount": how many pages to move at a wake-up, given a
 * percentage (the worker applies the cap per wake-up).
 *
 *   written:P   P% of the pages written since the last wake-up (Nswap2L
 *               prefetched 10% of what was swapped out)
 *   held:P      P% of the pages now in Network RAM
 *   free:P      what keeps P% of Network RAM free for new writes (Nswap2L's
 *               second reason to prefetch, when idle RAM is scarce): none
 *               while it has that much room
 */
#include <linux/math64.h>

#include "../policy.h"

static u64 written_pages(const struct nswap2l_prefetch_view *view, unsigned int percent)
{
	return div_u64(view->written * percent, 100);
}

static u64 held_pages(const struct nswap2l_prefetch_view *view, unsigned int percent)
{
	return div_u64(view->held * percent, 100);
}

static u64 room_pages(const struct nswap2l_prefetch_view *view, unsigned int percent)
{
	u64 want = div_u64((view->held + view->room) * percent, 100);

	return want > view->room ? want - view->room : 0;
}

static struct nswap2l_prefetch_amount amount_policies[] = {
	{ .type = { .name = "written", .question = NSWAP2L_PREFETCH_AMOUNT },
	  .pages = written_pages },
	{ .type = { .name = "held", .question = NSWAP2L_PREFETCH_AMOUNT }, .pages = held_pages },
	{ .type = { .name = "free", .question = NSWAP2L_PREFETCH_AMOUNT }, .pages = room_pages },
};

static struct nswap2l_prefetch_type *const types[] = {
	&amount_policies[0].type,
	&amount_policies[1].type,
	&amount_policies[2].type,
};

NSWAP2L_PREFETCH_POLICY_FILE(amount, types)
