// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q1, "when": does the worker prefetch at this wake-up, and how
 * many pages at most (Q2's amount and the cap bound it further)?
 *
 *   pays[:P]   (the default) only while a move pays, for one of Nswap2L's
 *              two reasons, as measured: flash reads are not slower than
 *              Network RAM's while nothing moves, by at least what the
 *              moves add to Network RAM's (nswap2l_reads_pay()), or Network RAM is scarce,
 *              less than P % of it free (default 25), and its reads, with
 *              the moves' load, not slower than flash's.  The tiers' reads
 *              are compared under the same load (prefetch.c,
 *              compare_tier_reads()); until
 *              flash's are measured so, it moves a probe of
 *              PAYS_PROBE_PAGES in all, whose reads measure flash:
 *              moving at full rate meanwhile (a fill writes and reads
 *              nothing) filled flash with pages that, read back slower,
 *              cost more than the moves.  Once flash reads are
 *              slower and Network RAM has room, moving would only cost: a
 *              Network RAM read and a flash write per page, and a slower
 *              read back; but after PAYS_REPROBE_WAKEUPS wake-ups without
 *              an interval in which both tiers served reads, a probe again
 *              (one wake-up's share of PAYS_PROBE_PAGES), so that a change
 *              of the tiers is seen.
 *   always     at every wake-up
 *   swapping   only while pages are being written (Nswap2L: prefetch while
 *              the machine swaps out, when Network RAM fills)
 *   idle[:N]   only when fewer than N foreground bios (default 1) were in
 *              flight on average since the last wake-up, and fewer pages
 *              while moves slow foreground reads (prefetch.c, back_off()):
 *              a device seldom busy can still be slowed by each move
 */
#include "../policy.h"

#define PAYS_PROBE_PAGES	256
#define PAYS_REPROBE_WAKEUPS	1024

static u64 pays_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	u64 moved = 0;
	unsigned int arm;

	if (nswap2l_room_pays(view, arg) || nswap2l_reads_pay(view))
		return U64_MAX;
	/*
	 * Measured, and no reason: the quiet intervals that follow measure
	 * flash against an idle Network RAM, while flash's pages are read.
	 * When none are, the last word would stand for good: a probe again.
	 */
	if (view->flash_read_ns && view->netram_read_ns)
		return view->uncompared_wakeups && !(view->uncompared_wakeups % PAYS_REPROBE_WAKEUPS) ?
		       PAYS_PROBE_PAGES : 0;
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		moved += view->prefetched[arm];
	return moved < PAYS_PROBE_PAGES ? PAYS_PROBE_PAGES - moved : 0;
}

static u64 always_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return U64_MAX;
}

static u64 swapping_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return view->written ? U64_MAX : 0;
}

static u64 idle_now(const struct nswap2l_prefetch_view *view, unsigned int arg)
{
	return view->busy_x100 < (u64)arg * 100 ? U64_MAX : 0;
}

static struct nswap2l_prefetch_when when_policies[] = {
	{ .type = { .name = "pays", .question = NSWAP2L_PREFETCH_WHEN }, .now = pays_now,
	  .default_arg = NSWAP2L_SCARCE_PCT },
	{ .type = { .name = "always", .question = NSWAP2L_PREFETCH_WHEN }, .now = always_now },
	{ .type = { .name = "swapping", .question = NSWAP2L_PREFETCH_WHEN }, .now = swapping_now },
	{ .type = { .name = "idle", .question = NSWAP2L_PREFETCH_WHEN }, .now = idle_now,
	  .default_arg = 1, .backs_off = true },
};

static struct nswap2l_prefetch_type *const types[] = {
	&when_policies[0].type,
	&when_policies[1].type,
	&when_policies[2].type,
	&when_policies[3].type,
};

NSWAP2L_PREFETCH_POLICY_FILE(when, types)
