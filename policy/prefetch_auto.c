// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch Q3 "auto": chooses among the fixed Q3 policies (the arms) at
 * every wake-up, and sets the rate, from what prefetching has bought.
 *
 * The measure, per arm, is what its moved pages bought, per mille of them.
 * Prefetching pays for two reasons (Nswap2L): reads served by a faster
 * flash, and Network RAM kept free for new writes when it is scarce.  So
 * a page read back from flash counts for the arm (the paper's Table IV
 * metric) unless reads do not pay for moves (nswap2l_reads_pay(): flash
 * reads slower than Network RAM's while nothing moves, or faster by less
 * than the moves slow Network RAM's), and against it while they do not; a page
 * written again soon counts against it (its write took it back: a flash
 * write and a Network RAM read for nothing); a page left alone counts for
 * it while Network RAM is scarce (less than NSWAP2L_SCARCE_PCT of it free),
 * where it made room, unless Network RAM, under the moves, reads slower
 * than flash (nswap2l_room_pays()): then the room holds pages read slower
 * than from flash.  So with room to spare and a slower flash no arm
 * pays and auto nearly stops, and when room is scarce the arm that moves
 * cold pages wins (lrs, not mrs).  An epsilon-greedy bandit
 * picks the arm: every arm is tried first, then the best one, and a random
 * one at one wake-up in eight so that a change of workload is noticed; an
 * arm tried moves at most AUTO_TRIAL_PAGES at its wake-up.  The
 * counters are halved every AUTO_HALF_LIFE wake-ups, so old phases fade.
 *
 * The rate: while even the best arm's pages buy little (below AUTO_POOR
 * per mille), the quota is halved at every wake-up, down to 1/16 of what
 * Q2 asks; it doubles back while they buy more (above AUTO_GOOD).  So when
 * prefetching does not pay, auto nearly stops.  And the worker backs off
 * while the moves slow foreground reads (backs_off, prefetch.c).
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "../policy.h"

#define AUTO_TRIAL_PAGES	256	/* an arm is judged after this many pages */
#define AUTO_HALF_LIFE		64	/* wake-ups */
#define AUTO_EXPLORE_ONE_IN	8
#define AUTO_POOR		100	/* pages that paid, net, per 1000 prefetched */
#define AUTO_GOOD		300

struct auto_picker {
	struct nswap2l_picker picker;
	struct nswap2l_picker *arms[NSWAP2L_PREFETCH_ARMS];
	unsigned int chosen;		/* the arm of this wake-up */
	bool trying;			/* chosen to be tried, not for its score */
	unsigned int scale;		/* share of the quota that scores earned */
	unsigned int wakeups;
	/* What each arm moved, what was read back or written again, halved now and then. */
	u64 prefetched[NSWAP2L_PREFETCH_ARMS];
	u64 reads[NSWAP2L_PREFETCH_ARMS];
	u64 rewritten[NSWAP2L_PREFETCH_ARMS];
	u64 seen_prefetched[NSWAP2L_PREFETCH_ARMS];
	u64 seen_reads[NSWAP2L_PREFETCH_ARMS];
	u64 seen_rewritten[NSWAP2L_PREFETCH_ARMS];
	/* Why moving pays now: the last wake-up's view. */
	bool reads_pay;			/* flash's reads of moved pages */
	bool room_pays;			/* Network RAM has little room, and is faster */
};

/* Pages of @arm's that paid, net, per 1000 it moved: -1000..1000. */
static s64 score(struct auto_picker *ap, unsigned int arm)
{
	s64 moved = ap->prefetched[arm], reads = ap->reads[arm], rewritten = ap->rewritten[arm];
	s64 paid = (ap->reads_pay ? reads : -reads) - rewritten;

	if (!moved)
		return 0;
	if (ap->room_pays)
		paid += max_t(s64, moved - reads - rewritten, 0);
	return clamp_t(s64, div64_s64(paid * 1000, moved), -1000, 1000);
}

static unsigned int choose_arm(struct auto_picker *ap)
{
	unsigned int arm, best = ap->chosen;

	ap->trying = true;
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		if (ap->arms[arm] && ap->prefetched[arm] < AUTO_TRIAL_PAGES)
			return arm;
	if (!get_random_u32_below(AUTO_EXPLORE_ONE_IN)) {
		arm = get_random_u32_below(NSWAP2L_PREFETCH_ARMS);
		if (ap->arms[arm])
			return arm;
	}
	ap->trying = false;
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		if (ap->arms[arm] && score(ap, arm) > score(ap, best))
			best = arm;
	return best;
}

static void learn(struct auto_picker *ap, const struct nswap2l_prefetch_view *view)
{
	unsigned int arm;

	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++) {
		ap->prefetched[arm] += view->prefetched[arm] - ap->seen_prefetched[arm];
		ap->reads[arm] += view->reads[arm] - ap->seen_reads[arm];
		ap->rewritten[arm] += view->rewritten[arm] - ap->seen_rewritten[arm];
		ap->seen_prefetched[arm] = view->prefetched[arm];
		ap->seen_reads[arm] = view->reads[arm];
		ap->seen_rewritten[arm] = view->rewritten[arm];
		if (!(ap->wakeups % AUTO_HALF_LIFE) && ap->prefetched[arm] >= 2 * AUTO_TRIAL_PAGES) {
			ap->prefetched[arm] /= 2;
			ap->reads[arm] /= 2;
			ap->rewritten[arm] /= 2;
		}
	}
	/* unmeasured yet: the paper's metric, reads count for the arm */
	ap->reads_pay = !view->quiet_netram_read_ns || nswap2l_reads_pay(view);
	ap->room_pays = nswap2l_room_pays(view, NSWAP2L_SCARCE_PCT);
}

static u64 auto_begin(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
		      struct nswap2l_map *map, u64 quota)
{
	struct auto_picker *ap = container_of(p, struct auto_picker, picker);
	struct nswap2l_picker *arm;
	s64 best;

	ap->wakeups++;
	learn(ap, view);
	ap->chosen = choose_arm(ap);
	best = score(ap, ap->chosen);
	if (ap->prefetched[ap->chosen] >= AUTO_TRIAL_PAGES) {
		if (best < AUTO_POOR)
			ap->scale = nswap2l_share_step(ap->scale, true);
		else if (best > AUTO_GOOD)
			ap->scale = nswap2l_share_step(ap->scale, false);
	}
	/* An arm tried may move the hot set (mrs when room is scarce): a little at a time. */
	if (ap->trying)
		quota = min_t(u64, quota, AUTO_TRIAL_PAGES);
	arm = ap->arms[ap->chosen];
	quota = arm->begin(arm, view, map, quota);
	return nswap2l_share_of(quota, ap->scale);
}

static unsigned int auto_pick(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			      unsigned int nr, unsigned int *arm)
{
	struct auto_picker *ap = container_of(p, struct auto_picker, picker);
	struct nswap2l_picker *chosen = ap->arms[ap->chosen];

	return chosen->pick(chosen, map, pages, nr, arm);
}

static const char *auto_choice(struct nswap2l_picker *p)
{
	struct auto_picker *ap = container_of(p, struct auto_picker, picker);

	return ap->arms[ap->chosen]->type->type.name;
}

/* Why moving pays now, and each arm's score (per mille of its moved pages). */
static int auto_emit_stats(struct nswap2l_picker *p, char *buf, int len)
{
	struct auto_picker *ap = container_of(p, struct auto_picker, picker);
	unsigned int arm;

	len += sysfs_emit_at(buf, len, "auto_reads_pay %d\nauto_room_pays %d\n",
			     ap->reads_pay, ap->room_pays);
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		if (ap->arms[arm])
			len += sysfs_emit_at(buf, len, "%s_score %lld\n",
					     ap->arms[arm]->type->type.name, score(ap, arm));
	return len;
}

static void auto_destroy(struct nswap2l_picker *p)
{
	struct auto_picker *ap = container_of(p, struct auto_picker, picker);
	unsigned int arm;

	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		if (!IS_ERR_OR_NULL(ap->arms[arm]))
			ap->arms[arm]->destroy(ap->arms[arm]);
	kfree(ap);
}

static struct nswap2l_picker *auto_create(void)
{
	struct auto_picker *ap = kzalloc(sizeof(*ap), GFP_KERNEL);
	unsigned int arm;

	if (!ap)
		return ERR_PTR(-ENOMEM);
	ap->picker.begin = auto_begin;
	ap->picker.pick = auto_pick;
	ap->picker.choice = auto_choice;
	ap->picker.emit_stats = auto_emit_stats;
	ap->picker.destroy = auto_destroy;
	ap->scale = NSWAP2L_SHARE_FULL;
	ap->chosen = NSWAP2L_PREFETCH_ARMS;
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++) {
		const struct nswap2l_prefetch_which *which = nswap2l_prefetch_arm(arm);

		if (!which)
			continue;
		ap->arms[arm] = nswap2l_picker_create(which->type.name);
		if (IS_ERR(ap->arms[arm])) {
			struct nswap2l_picker *failed = ap->arms[arm];

			auto_destroy(&ap->picker);
			return failed;
		}
		if (ap->chosen == NSWAP2L_PREFETCH_ARMS)
			ap->chosen = arm;
	}
	if (ap->chosen == NSWAP2L_PREFETCH_ARMS) {
		auto_destroy(&ap->picker);
		return ERR_PTR(-ENOENT);
	}
	return &ap->picker;
}

static struct nswap2l_prefetch_which auto_policy = {
	.type = { .name = "auto", .question = NSWAP2L_PREFETCH_WHICH },
	.arm = NSWAP2L_PREFETCH_ARMS,
	.backs_off = true,
	.create = auto_create,
};

static struct nswap2l_prefetch_type *const types[] = { &auto_policy.type };

NSWAP2L_PREFETCH_POLICY_FILE(auto, types)
