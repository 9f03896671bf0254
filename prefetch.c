// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetching (Nswap2L): pages are written to Network RAM, and a worker
 * moves some of them to flash, so that later reads are served by flash and
 * Network RAM in parallel and Network RAM is freed for new writes.
 *
 * One delayed work per device wakes every interval and asks three policies
 * (policy/prefetch_*.c): Q1 "when" (now?), Q2 "amount" (how many pages,
 * within a cap per wake-up) and Q3 "which" (a picker).  It moves the pages
 * the picker names, NSWAP2L_MOVE_BATCH at a time, with the mover's
 * protocol (migrate.c): a racing write or discard always wins and the page
 * stays where it is.  A moved page's entry says it was prefetched and by
 * which arm, so flash reads of it are counted, and a write to it places it
 * again (Network RAM first) instead of updating it on flash.
 *
 * Foreground I/O keeps priority: prefetching runs on its own workqueue, not
 * on the mover's, so it never delays the answer to a server that asks for
 * its memory back; it has one batch in flight at a time (one Network RAM
 * request of 32 pages among the foreground ones); and it moves at most the
 * cap per wake-up, which bounds its share of the bandwidth.  Q1 "idle"
 * stops it altogether while the device is busy; with "idle" and Q3 "auto"
 * it also moves less while its moves slow foreground reads (back_off()).
 *
 * Settings change under a mutex that the worker holds only while it asks
 * the policies, never during I/O.  Suspend stops the worker between two
 * batches, resume starts it again, removal stops it for good.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core.h"
#include "map.h"
#include "mover.h"
#include "prefetch.h"
#include "profiler.h"
#include "policy.h"

#define PREFETCH_DEFAULT_WHEN		"pays"
#define PREFETCH_DEFAULT_AMOUNT		"written"
#define PREFETCH_DEFAULT_PERCENT	10
#define PREFETCH_DEFAULT_CAP		4096
#define PREFETCH_DEFAULT_INTERVAL_MS	500
#define PREFETCH_MIN_INTERVAL_MS	10
#define PREFETCH_MAX_INTERVAL_MS	60000
#define PREFETCH_MAX_CAP		(1U << 20)

/* Flash's reads against Network RAM's over a set of intervals (compare_tier_reads()). */
struct tier_comparison {
	u64 reads;			/* flash reads compared */
	u64 flash_ns, netram_ns;	/* their time, and what as many Network RAM reads cost */
};

/* Backing off (back_off()): foreground read latency after moves and after none. */
struct prefetch_backoff {
	u64 read_ns_moved, read_ns_control;
	bool moved_last, control_last;	/* at the last wake-up */
	u64 first_wakeup;		/* since the policy: a control one */
	unsigned int rate;		/* share of the quota */
};

struct nswap2l_prefetch {
	struct nswap2l *nc;
	struct workqueue_struct *wq;
	struct delayed_work work;

	struct mutex lock;		/* cfg, picker, choice, paused, largest_wakeup */
	struct nswap2l_prefetch_config cfg;
	struct nswap2l_picker *picker;	/* NULL: prefetching off */
	const char *choice;		/* the arm in use, for stats */
	bool paused;			/* suspended, or removed */

	/* The worker's own. */
	struct nswap2l_move_batch *batch;
	u64 pages[NSWAP2L_MOVE_BATCH];
	u64 last_written;
	u64 last_busy, last_samples;
	/* Each tier's reads until the last wake-up, and the two compared (compare_tier_reads()). */
	u64 last_tier_reads[NSWAP2L_NR_TIERS], last_tier_read_ns[NSWAP2L_NR_TIERS];
	struct tier_comparison compared;	/* every interval: as the moves load the tiers */
	struct tier_comparison compared_quiet;	/* the intervals after a wake-up that moved nothing */
	bool moved_last;			/* the last wake-up moved pages */
	u64 compared_at;			/* the wake-up whose interval was last compared */
	struct prefetch_backoff backoff;	/* starts again when the policy changes */
	u64 largest_wakeup;		/* most pages moved at one wake-up since cfg changed */

	atomic64_t wakeups;
	atomic64_t prefetched;
	atomic64_t cancelled;		/* a racing write or discard won */
	atomic64_t failed;		/* no room on flash, or an I/O error */
	atomic64_t arm_prefetched[NSWAP2L_PREFETCH_ARMS];
	atomic64_t arm_rewritten[NSWAP2L_PREFETCH_ARMS];
};

/*----------------------------------------------------------------
 * Settings
 *--------------------------------------------------------------*/
void nswap2l_prefetch_default_config(struct nswap2l_prefetch_config *cfg)
{
	cfg->which = NULL;
	cfg->when = container_of(nswap2l_prefetch_find(NSWAP2L_PREFETCH_WHEN,
						       PREFETCH_DEFAULT_WHEN),
				 struct nswap2l_prefetch_when, type);
	cfg->when_arg = cfg->when->default_arg;
	cfg->amount = container_of(nswap2l_prefetch_find(NSWAP2L_PREFETCH_AMOUNT,
							 PREFETCH_DEFAULT_AMOUNT),
				   struct nswap2l_prefetch_amount, type);
	cfg->percent = PREFETCH_DEFAULT_PERCENT;
	cfg->cap = PREFETCH_DEFAULT_CAP;
	cfg->interval_ms = PREFETCH_DEFAULT_INTERVAL_MS;
}

bool nswap2l_prefetch_config_is_default(const struct nswap2l_prefetch_config *cfg)
{
	struct nswap2l_prefetch_config def;

	nswap2l_prefetch_default_config(&def);
	return cfg->which == def.which && cfg->when == def.when && cfg->when_arg == def.when_arg &&
	       cfg->amount == def.amount && cfg->percent == def.percent && cfg->cap == def.cap &&
	       cfg->interval_ms == def.interval_ms;
}

static const char *which_name(const struct nswap2l_prefetch_config *cfg)
{
	return cfg->which ? cfg->which->type.name : "none";
}

static int show_when(const struct nswap2l_prefetch_config *cfg, char *buf, size_t size)
{
	if (!cfg->when->default_arg)
		return scnprintf(buf, size, "%s", cfg->when->type.name);
	return scnprintf(buf, size, "%s:%u", cfg->when->type.name, cfg->when_arg);
}

static int show_amount(const struct nswap2l_prefetch_config *cfg, char *buf, size_t size)
{
	return scnprintf(buf, size, "%s:%u:%u", cfg->amount->type.name, cfg->percent, cfg->cap);
}

void nswap2l_prefetch_format(const struct nswap2l_prefetch_config *cfg, char *buf, size_t size)
{
	size_t len = scnprintf(buf, size, "%s,when=", which_name(cfg));

	len += show_when(cfg, buf + len, size - len);
	len += scnprintf(buf + len, size - len, ",amount=");
	len += show_amount(cfg, buf + len, size - len);
	scnprintf(buf + len, size - len, ",interval=%u", cfg->interval_ms);
}

static int bad_name(const char *dev, enum nswap2l_prefetch_question q, const char *key,
		    const char *value)
{
	char names[96];

	nswap2l_prefetch_names(q, names, sizeof(names));
	DMERR("%s: prefetch %s '%s': unknown (valid:%s%s)", dev, key, value,
	      q == NSWAP2L_PREFETCH_WHICH ? " none" : "", names);
	return -EINVAL;
}

/* "name" or "name:N[:M]": the name into @name, the numbers into @nums. */
static int split_numbers(const char *value, char *name, size_t size, unsigned int *nums,
			 unsigned int max_nums)
{
	char copy[32], *rest = copy, *word;
	unsigned int n = 0;

	if (strscpy(copy, value, sizeof(copy)) < 0 ||
	    strscpy(name, strsep(&rest, ":"), size) < 0)
		return -EINVAL;
	while ((word = strsep(&rest, ":"))) {
		if (n == max_nums || kstrtouint(word, 10, &nums[n]))
			return -EINVAL;
		n++;
	}
	return n;
}

static int parse_when(const char *dev, const char *value, struct nswap2l_prefetch_config *cfg)
{
	const struct nswap2l_prefetch_type *type;
	unsigned int arg;
	char name[16];
	int n;

	n = split_numbers(value, name, sizeof(name), &arg, 1);
	type = n < 0 ? NULL : nswap2l_prefetch_find(NSWAP2L_PREFETCH_WHEN, name);
	if (!type)
		return bad_name(dev, NSWAP2L_PREFETCH_WHEN, "when", value);
	cfg->when = container_of(type, struct nswap2l_prefetch_when, type);
	if (n && (!cfg->when->default_arg || !arg)) {
		DMERR("%s: prefetch when '%s': %s", dev, value,
		      cfg->when->default_arg ? "the number must be at least 1" :
					       "takes no number");
		return -EINVAL;
	}
	cfg->when_arg = n ? arg : cfg->when->default_arg;
	return 0;
}

static int parse_amount(const char *dev, const char *value, struct nswap2l_prefetch_config *cfg)
{
	const struct nswap2l_prefetch_type *type;
	unsigned int nums[2];
	char name[16];
	int n;

	n = split_numbers(value, name, sizeof(name), nums, 2);
	type = n < 0 ? NULL : nswap2l_prefetch_find(NSWAP2L_PREFETCH_AMOUNT, name);
	if (!type)
		return bad_name(dev, NSWAP2L_PREFETCH_AMOUNT, "amount", value);
	if (n < 1 || nums[0] > 100 || (n == 2 && (!nums[1] || nums[1] > PREFETCH_MAX_CAP))) {
		DMERR("%s: prefetch amount '%s': need <name>:<percent 0-100>[:<pages per wake-up 1-%u>]",
		      dev, value, PREFETCH_MAX_CAP);
		return -EINVAL;
	}
	cfg->amount = container_of(type, struct nswap2l_prefetch_amount, type);
	cfg->percent = nums[0];
	cfg->cap = n == 2 ? nums[1] : PREFETCH_DEFAULT_CAP;
	return 0;
}

static int parse_setting(const char *dev, const char *key, const char *value,
			 struct nswap2l_prefetch_config *cfg)
{
	const struct nswap2l_prefetch_type *type;

	if (!strcmp(key, "policy")) {
		if (!strcmp(value, "none")) {
			cfg->which = NULL;
			return 0;
		}
		type = nswap2l_prefetch_find(NSWAP2L_PREFETCH_WHICH, value);
		if (!type)
			return bad_name(dev, NSWAP2L_PREFETCH_WHICH, "policy", value);
		cfg->which = container_of(type, struct nswap2l_prefetch_which, type);
		return 0;
	}
	if (!strcmp(key, "when"))
		return parse_when(dev, value, cfg);
	if (!strcmp(key, "amount"))
		return parse_amount(dev, value, cfg);
	if (!strcmp(key, "interval") || !strcmp(key, "interval_ms")) {
		unsigned int ms;

		if (kstrtouint(value, 10, &ms) || ms < PREFETCH_MIN_INTERVAL_MS ||
		    ms > PREFETCH_MAX_INTERVAL_MS) {
			DMERR("%s: prefetch interval '%s': need %u..%u ms", dev, value,
			      PREFETCH_MIN_INTERVAL_MS, PREFETCH_MAX_INTERVAL_MS);
			return -EINVAL;
		}
		cfg->interval_ms = ms;
		return 0;
	}
	DMERR("%s: prefetch '%s': unknown setting (valid: policy when amount interval)", dev, key);
	return -EINVAL;
}

int nswap2l_prefetch_parse(const char *dev, char *value, struct nswap2l_prefetch_config *cfg)
{
	char *word = strsep(&value, ",");
	int r = parse_setting(dev, "policy", word, cfg);

	while (!r && value) {
		char *setting = strsep(&value, ",");
		char *eq = strchr(setting, '=');

		if (!eq) {
			DMERR("%s: prefetch=...,%s: need <setting>=<value> after the policy",
			      dev, setting);
			return -EINVAL;
		}
		*eq = '\0';
		r = parse_setting(dev, setting, eq + 1, cfg);
	}
	return r;
}

int nswap2l_prefetch_check_tiers(const struct nswap2l_prefetch_config *cfg, const char *dev,
				 bool has_netram, bool has_flash)
{
	if (!cfg->which || (has_netram && has_flash))
		return 0;
	DMERR("%s: prefetch policy %s: prefetching moves pages from Network RAM to flash, and the table has no %s tier",
	      dev, cfg->which->type.name, has_netram ? "flash" : "netram");
	return -EINVAL;
}

/*----------------------------------------------------------------
 * The worker
 *--------------------------------------------------------------*/
/*
 * Flash's reads against Network RAM's under the same load: a tier's mean
 * since the device was made mixes loads (a swap fill's reads are slower
 * than a quiet phase's), so a probe read back in a quiet phase made flash
 * look faster than it was and when=pays moved pages at full rate.  Over
 * every interval in which both tiers served reads, sum flash's reads and
 * what as many Network RAM reads cost at that interval's mean.  Trusted
 * after COMPARED_MIN_READS flash reads; halved at COMPARED_FADE_READS, so
 * that a change of the tiers shows.  @reads, @read_ns: each tier's, this
 * interval.
 *
 * Two such comparisons: over every interval, as the moves load the tiers,
 * and over the quiet intervals, after a wake-up that moved nothing.  The
 * moves' own requests slow Network RAM (foreground reads queue behind
 * theirs; in a guest each one also costs the CPU the workload runs on), so
 * under them a flash slower than an idle Network RAM looked faster, and
 * moving justified itself.  Whether flash reads are faster is asked of the
 * quiet intervals; whether Network RAM, with the moves, is still faster
 * than flash (so the room they make there is worth having) of all of them
 * (policy.h).
 */
#define COMPARED_MIN_READS	64
#define COMPARED_FADE_READS	8192

/* False if this interval had nothing to compare. */
static bool compare_tier_reads(struct tier_comparison *c, const u64 *reads, const u64 *read_ns)
{
	if (!reads[NSWAP2L_TIER_FLASH] || !reads[NSWAP2L_TIER_NETRAM])
		return false;
	c->reads += reads[NSWAP2L_TIER_FLASH];
	c->flash_ns += read_ns[NSWAP2L_TIER_FLASH];
	c->netram_ns += div64_u64(read_ns[NSWAP2L_TIER_NETRAM], reads[NSWAP2L_TIER_NETRAM]) *
			reads[NSWAP2L_TIER_FLASH];
	if (c->reads >= COMPARED_FADE_READS) {
		c->reads /= 2;
		c->flash_ns /= 2;
		c->netram_ns /= 2;
	}
	return true;
}

/* The two tiers' mean read latencies of @c; 0 until it is trusted. */
static void compared_means(const struct tier_comparison *c, u64 *flash_ns, u64 *netram_ns)
{
	bool trusted = c->reads >= COMPARED_MIN_READS;

	*flash_ns = trusted ? div64_u64(c->flash_ns, c->reads) : 0;
	*netram_ns = trusted ? div64_u64(c->netram_ns, c->reads) : 0;
}

/* The view since the last look; returns the foreground read latency, mean (0: no reads). */
static u64 look(struct nswap2l_prefetch *pf, struct nswap2l_prefetch_view *view)
{
	struct nswap2l *nc = pf->nc;
	struct nswap2l_io_stats io;
	u64 reads[NSWAP2L_NR_TIERS], read_ns[NSWAP2L_NR_TIERS];
	u64 written = 0, all_reads = 0, all_read_ns = 0, busy, samples;
	unsigned int arm;
	int id;

	nswap2l_stats_sum(nc, &io);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		written += io.writes[id];
		reads[id] = io.done[id][READ] - pf->last_tier_reads[id];
		read_ns[id] = io.time_ns[id][READ] - pf->last_tier_read_ns[id];
		pf->last_tier_reads[id] = io.done[id][READ];
		pf->last_tier_read_ns[id] = io.time_ns[id][READ];
		all_reads += reads[id];
		all_read_ns += read_ns[id];
	}
	view->written = written - pf->last_written;
	pf->last_written = written;
	/* A picker is only installed on a device with Network RAM and flash. */
	if (compare_tier_reads(&pf->compared, reads, read_ns))
		pf->compared_at = atomic64_read(&pf->wakeups);
	view->uncompared_wakeups = atomic64_read(&pf->wakeups) - pf->compared_at;
	if (!pf->moved_last)
		compare_tier_reads(&pf->compared_quiet, reads, read_ns);
	compared_means(&pf->compared, &view->flash_read_ns, &view->netram_read_ns);
	compared_means(&pf->compared_quiet, &view->quiet_flash_read_ns,
		       &view->quiet_netram_read_ns);
	view->held = max_t(s64, atomic64_read(&nc->tiers[NSWAP2L_TIER_NETRAM]->used), 0);
	view->room = nswap2l_tier_free(nc->tiers[NSWAP2L_TIER_NETRAM]);

	busy = nswap2l_profiler_busy(nc, &samples);
	view->busy_x100 = samples == pf->last_samples ? 0 :
			  div64_u64((busy - pf->last_busy) * 100, samples - pf->last_samples);
	pf->last_busy = busy;
	pf->last_samples = samples;

	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++) {
		view->prefetched[arm] = atomic64_read(&pf->arm_prefetched[arm]);
		view->reads[arm] = io.prefetched_reads[arm];
		view->rewritten[arm] = atomic64_read(&pf->arm_rewritten[arm]);
	}
	return all_reads ? div64_u64(all_read_ns, all_reads) : 0;
}

/*
 * Backing off (when=idle, auto): moves must not slow foreground reads.  One
 * wake-up in BACKOFF_CONTROL_ONE_IN moves nothing, a policy's first among
 * them (the reads before any move: after a run of moves a throttled flash
 * still drains their writes into the next interval, and the average kept
 * that one sample for dozens of wake-ups), and the mean foreground read
 * latency of the interval after it is compared with that of the
 * intervals after wake-ups that moved pages (moving averages over about
 * four of each).  While reads after moves are slower by BACKOFF_SLOWER_PCT,
 * the rate halves at every wake-up that moved, down to 1/NSWAP2L_SHARE_FULL
 * of the quota; otherwise it doubles back (moves during which nothing was read
 * slowed nothing).
 */
#define BACKOFF_CONTROL_ONE_IN	8
#define BACKOFF_SLOWER_PCT	10

static void average(u64 *avg, u64 ns)
{
	*avg = *avg ? *avg - div_u64(*avg, 4) + div_u64(ns, 4) : ns;
}

static void reset_backoff(struct nswap2l_prefetch *pf)
{
	memset(&pf->backoff, 0, sizeof(pf->backoff));
	pf->backoff.rate = NSWAP2L_SHARE_FULL;
	pf->backoff.first_wakeup = atomic64_read(&pf->wakeups) + 1;
}

/*
 * What the interval since the last wake-up taught (@read_ns: its mean
 * foreground read latency, 0 if none); the part of @quota to move now.
 */
static u64 back_off(struct nswap2l_prefetch *pf, u64 read_ns, u64 quota, u64 wakeup)
{
	struct prefetch_backoff *b = &pf->backoff;
	bool slower;

	if (read_ns && b->moved_last)
		average(&b->read_ns_moved, read_ns);
	else if (read_ns && b->control_last)
		average(&b->read_ns_control, read_ns);
	if (b->moved_last) {
		slower = read_ns && b->read_ns_control &&
			 b->read_ns_moved * 100 > b->read_ns_control * (100 + BACKOFF_SLOWER_PCT);
		b->rate = nswap2l_share_step(b->rate, slower);
	}
	b->control_last = !((wakeup - b->first_wakeup) % BACKOFF_CONTROL_ONE_IN);
	if (b->control_last)
		return 0;
	return nswap2l_share_of(quota, b->rate);
}

/*
 * Room the worker leaves on flash: a write that Network RAM refuses (a
 * server full before the client counts it so) goes to flash, and with
 * flash filled by moves it had nowhere to go and failed (ENOSPC; case 62,
 * Network RAM scarce).  1/64 of flash, at least FLASH_RESERVE_MIN pages.
 */
#define FLASH_RESERVE_MIN	256

static u64 flash_room(struct nswap2l_tier *flash)
{
	u64 reserve = max_t(u64, READ_ONCE(flash->capacity) >> 6, FLASH_RESERVE_MIN);
	u64 free = nswap2l_tier_free(flash);

	return free > reserve ? free - reserve : 0;
}

/* Flag what the picker named and move it to flash; false when the wake-up is over. */
static bool move_picked(struct nswap2l_prefetch *pf, unsigned int n, unsigned int arm)
{
	struct nswap2l *nc = pf->nc;
	struct nswap2l_move_result result;
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 home = nswap2l_map_lookup(&nc->map, pf->pages[i]) & ~NSWAP2L_ENTRY_REFERENCED;

		if (nswap2l_entry_prefetchable(home))
			nswap2l_move_batch_add(nc, pf->batch, pf->pages[i], home);
	}
	if (!nswap2l_move_batch_size(pf->batch))
		return true;
	nswap2l_move_batch_run(nc, pf->batch, NSWAP2L_TIER_FLASH,
			       nswap2l_entry_prefetched(arm), &result);
	atomic64_add(result.moved, &pf->prefetched);
	atomic64_add(result.moved, &pf->arm_prefetched[arm]);
	atomic64_add(result.raced, &pf->cancelled);
	atomic64_add(result.failed, &pf->failed);
	/* Flash is full or failing: try again next time. */
	return !result.failed;
}

static void prefetch_work(struct work_struct *work)
{
	struct nswap2l_prefetch *pf = container_of(to_delayed_work(work),
						   struct nswap2l_prefetch, work);
	struct nswap2l *nc = pf->nc;
	struct nswap2l_tier *flash = nc->tiers[NSWAP2L_TIER_FLASH];
	struct nswap2l_prefetch_config *cfg = &pf->cfg;
	struct nswap2l_prefetch_view view;
	unsigned int interval, n, arm;
	u64 quota, before, moved, wakeup, read_ns;

	mutex_lock(&pf->lock);
	/* Prefetching was switched off: the worker stops until it is on again. */
	if (!pf->picker) {
		mutex_unlock(&pf->lock);
		return;
	}
	read_ns = look(pf, &view);
	interval = cfg->interval_ms;
	wakeup = atomic64_inc_return(&pf->wakeups);
	quota = cfg->when->now(&view, cfg->when_arg);
	if (quota)
		quota = min(quota, min_t(u64, cfg->amount->pages(&view, cfg->percent), cfg->cap));
	quota = pf->picker->begin(pf->picker, &view, &nc->map, quota);
	if (cfg->when->backs_off || pf->picker->type->backs_off)
		quota = back_off(pf, read_ns, quota, wakeup);
	quota = min(quota, flash_room(flash));
	if (!quota)
		pf->picker->pick(pf->picker, &nc->map, pf->pages, 0, &arm);
	pf->choice = pf->picker->choice ? pf->picker->choice(pf->picker) :
					  pf->picker->type->type.name;
	mutex_unlock(&pf->lock);

	before = atomic64_read(&pf->prefetched);
	while (quota && !READ_ONCE(pf->paused)) {
		mutex_lock(&pf->lock);
		n = pf->picker ? pf->picker->pick(pf->picker, &nc->map, pf->pages,
						  min_t(u64, quota, NSWAP2L_MOVE_BATCH), &arm) : 0;
		mutex_unlock(&pf->lock);
		if (!n || !move_picked(pf, n, arm))
			break;
		quota -= n;
		cond_resched();
	}
	/* Only this worker adds to prefetched. */
	moved = atomic64_read(&pf->prefetched) - before;
	mutex_lock(&pf->lock);
	pf->largest_wakeup = max(pf->largest_wakeup, moved);
	pf->backoff.moved_last = moved;
	pf->moved_last = moved;
	mutex_unlock(&pf->lock);
	if (!READ_ONCE(pf->paused))
		queue_delayed_work(pf->wq, &pf->work, msecs_to_jiffies(interval));
}

/*----------------------------------------------------------------
 * Life
 *--------------------------------------------------------------*/
int nswap2l_prefetch_create(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg)
{
	struct nswap2l_prefetch *pf = kzalloc(sizeof(*pf), GFP_KERNEL);

	if (!pf)
		return -ENOMEM;
	nc->prefetch = pf;
	pf->nc = nc;
	pf->cfg = *cfg;
	pf->paused = true;	/* until the first resume */
	pf->choice = "none";
	reset_backoff(pf);
	mutex_init(&pf->lock);
	INIT_DELAYED_WORK(&pf->work, prefetch_work);
	pf->batch = nswap2l_move_batch_alloc();
	if (!pf->batch)
		return -ENOMEM;
	pf->picker = nswap2l_prefetch_prepare(cfg);
	if (IS_ERR(pf->picker)) {
		int r = PTR_ERR(pf->picker);

		pf->picker = NULL;
		return r;
	}
	pf->wq = alloc_workqueue("nswap2l-prefetch-%s", WQ_MEM_RECLAIM, 1, nc->name);
	return pf->wq ? 0 : -ENOMEM;
}

void nswap2l_prefetch_pause(struct nswap2l *nc)
{
	struct nswap2l_prefetch *pf = nc->prefetch;

	if (!pf || !pf->wq)
		return;
	mutex_lock(&pf->lock);
	WRITE_ONCE(pf->paused, true);
	mutex_unlock(&pf->lock);
	cancel_delayed_work_sync(&pf->work);
}

void nswap2l_prefetch_resume(struct nswap2l *nc)
{
	struct nswap2l_prefetch *pf = nc->prefetch;

	mutex_lock(&pf->lock);
	WRITE_ONCE(pf->paused, false);
	if (pf->picker)
		queue_delayed_work(pf->wq, &pf->work, msecs_to_jiffies(pf->cfg.interval_ms));
	mutex_unlock(&pf->lock);
}

void nswap2l_prefetch_destroy(struct nswap2l *nc)
{
	struct nswap2l_prefetch *pf = nc->prefetch;

	if (!pf)
		return;
	if (pf->wq)
		destroy_workqueue(pf->wq);
	if (pf->picker)
		pf->picker->destroy(pf->picker);
	nswap2l_move_batch_free(pf->batch);
	kfree(pf);
	nc->prefetch = NULL;
}

struct nswap2l_picker *nswap2l_prefetch_prepare(const struct nswap2l_prefetch_config *cfg)
{
	if (!cfg->which)
		return NULL;
	return nswap2l_picker_create(cfg->which->type.name) ?: ERR_PTR(-ENOENT);
}

/* Install @cfg and @picker; a picker of the same policy keeps its place. */
static void install(struct nswap2l_prefetch *pf, const struct nswap2l_prefetch_config *cfg,
		    struct nswap2l_picker *picker)
{
	struct nswap2l_prefetch_view view;
	struct nswap2l_picker *old;
	bool same = cfg->which == pf->cfg.which;

	mutex_lock(&pf->lock);
	old = same ? picker : pf->picker;
	if (!same) {
		pf->picker = picker;
		pf->choice = picker ? picker->type->type.name : "none";
		/* The first wake-up counts from now, not from the last one of another policy. */
		if (picker)
			look(pf, &view);
	}
	/* what one policy learnt about its moves says nothing of another's */
	if (!same || cfg->when != pf->cfg.when)
		reset_backoff(pf);
	pf->cfg = *cfg;
	pf->largest_wakeup = 0;
	/* A new interval applies now, not after the old one. */
	if (!pf->paused && pf->picker)
		mod_delayed_work(pf->wq, &pf->work, msecs_to_jiffies(cfg->interval_ms));
	mutex_unlock(&pf->lock);
	if (old)
		old->destroy(old);
}

void nswap2l_prefetch_commit(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg,
			     struct nswap2l_picker *picker)
{
	install(nc->prefetch, cfg, picker);
}

void nswap2l_prefetch_get_config(struct nswap2l *nc, struct nswap2l_prefetch_config *cfg)
{
	mutex_lock(&nc->prefetch->lock);
	*cfg = nc->prefetch->cfg;
	mutex_unlock(&nc->prefetch->lock);
}

/*----------------------------------------------------------------
 * Control and counters
 *--------------------------------------------------------------*/
int nswap2l_prefetch_set(struct nswap2l *nc, const char *key, const char *value)
{
	struct nswap2l_prefetch *pf = nc->prefetch;
	struct nswap2l_prefetch_config cfg;
	struct nswap2l_picker *picker = NULL;
	int r;

	/* One change at a time: two could both start from the old settings. */
	mutex_lock(&nc->control_mutex);
	nswap2l_prefetch_get_config(nc, &cfg);
	r = parse_setting(nc->name, key, value, &cfg);
	if (!r)
		r = nswap2l_prefetch_check_tiers(&cfg, nc->name, nc->tiers[NSWAP2L_TIER_NETRAM],
						 nc->tiers[NSWAP2L_TIER_FLASH]);
	if (!r && cfg.which != pf->cfg.which) {
		picker = nswap2l_prefetch_prepare(&cfg);
		if (IS_ERR(picker))
			r = PTR_ERR(picker);
	}
	if (!r)
		install(pf, &cfg, picker);
	mutex_unlock(&nc->control_mutex);
	return r;
}

ssize_t nswap2l_prefetch_show(struct nswap2l *nc, const char *key, char *buf)
{
	struct nswap2l_prefetch_config cfg;
	int len;

	nswap2l_prefetch_get_config(nc, &cfg);
	if (!strcmp(key, "policy"))
		len = scnprintf(buf, PAGE_SIZE, "%s", which_name(&cfg));
	else if (!strcmp(key, "when"))
		len = show_when(&cfg, buf, PAGE_SIZE);
	else if (!strcmp(key, "amount"))
		len = show_amount(&cfg, buf, PAGE_SIZE);
	else
		len = scnprintf(buf, PAGE_SIZE, "%u", cfg.interval_ms);
	return len + sysfs_emit_at(buf, len, "\n");
}

static u64 prefetched_reads(struct nswap2l *nc)
{
	struct nswap2l_io_stats io;
	u64 sum = 0;
	unsigned int arm;

	nswap2l_stats_sum(nc, &io);
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		sum += io.prefetched_reads[arm];
	return sum;
}

int nswap2l_prefetch_emit_counters(struct nswap2l *nc, char *buf, int len)
{
	struct nswap2l_prefetch *pf = nc->prefetch;
	u64 prefetched = atomic64_read(&pf->prefetched);
	u64 reads = prefetched_reads(nc);
	const char *choice;

	mutex_lock(&pf->lock);
	choice = pf->picker ? pf->choice : "none";
	mutex_unlock(&pf->lock);
	len += sysfs_emit_at(buf, len, "choice %s\nprefetched %llu\nprefetched_reads %llu\nreads_per_prefetch ",
			     choice, prefetched, reads);
	len += nswap2l_emit_ratio(buf + len, PAGE_SIZE - len, reads, prefetched);
	return len + sysfs_emit_at(buf, len, "\ncancelled %lld\n", atomic64_read(&pf->cancelled));
}

/* "<prefix>reads", "<prefix>flash_read_us", "<prefix>netram_read_us" of @c. */
static int emit_comparison(char *buf, int len, const char *prefix, const struct tier_comparison *c)
{
	u64 per_read = max_t(u64, c->reads, 1) * NSEC_PER_USEC;

	return len + sysfs_emit_at(buf, len, "%sreads %llu\n%sflash_read_us %llu\n%snetram_read_us %llu\n",
				   prefix, c->reads, prefix, div64_u64(c->flash_ns, per_read),
				   prefix, div64_u64(c->netram_ns, per_read));
}

ssize_t nswap2l_prefetch_show_stats(struct nswap2l *nc, char *buf)
{
	struct nswap2l_prefetch *pf = nc->prefetch;
	struct nswap2l_io_stats io;
	const char *policy;
	unsigned int arm;
	u64 largest, rewritten = 0;
	int len;

	mutex_lock(&pf->lock);
	policy = which_name(&pf->cfg);
	largest = pf->largest_wakeup;
	len = sysfs_emit(buf, "policy %s\nwakeups %lld\n", policy, atomic64_read(&pf->wakeups));
	len = emit_comparison(buf, len, "compared_", &pf->compared);
	len = emit_comparison(buf, len, "quiet_compared_", &pf->compared_quiet);
	len += sysfs_emit_at(buf, len, "rate_pct %u\nread_after_moves_us %llu\nread_after_control_us %llu\n",
			     pf->backoff.rate * 100 / NSWAP2L_SHARE_FULL,
			     div_u64(pf->backoff.read_ns_moved, NSEC_PER_USEC),
			     div_u64(pf->backoff.read_ns_control, NSEC_PER_USEC));
	if (pf->picker && pf->picker->emit_stats)
		len = pf->picker->emit_stats(pf->picker, buf, len);
	mutex_unlock(&pf->lock);
	len = nswap2l_prefetch_emit_counters(nc, buf, len);
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++)
		rewritten += atomic64_read(&pf->arm_rewritten[arm]);
	len += sysfs_emit_at(buf, len, "failed %lld\nrewritten %llu\nlargest_wakeup %llu\n",
			     atomic64_read(&pf->failed), rewritten, largest);
	nswap2l_stats_sum(nc, &io);
	for (arm = 0; arm < NSWAP2L_PREFETCH_ARMS; arm++) {
		const struct nswap2l_prefetch_which *which = nswap2l_prefetch_arm(arm);

		if (which)
			len += sysfs_emit_at(buf, len, "%s_prefetched %lld\n%s_reads %llu\n%s_rewritten %lld\n",
					     which->type.name,
					     atomic64_read(&pf->arm_prefetched[arm]),
					     which->type.name, io.prefetched_reads[arm],
					     which->type.name, atomic64_read(&pf->arm_rewritten[arm]));
	}
	return len;
}

void nswap2l_prefetch_status(struct nswap2l *nc, char *result, unsigned int maxlen,
			     unsigned int *sz_ptr)
{
	struct nswap2l_prefetch *pf = nc->prefetch;
	unsigned int sz = *sz_ptr;
	const char *policy;

	mutex_lock(&pf->lock);
	policy = which_name(&pf->cfg);
	mutex_unlock(&pf->lock);
	DMEMIT(" %s %lld %llu %lld", policy, atomic64_read(&pf->prefetched),
	       prefetched_reads(nc), atomic64_read(&pf->cancelled));
	*sz_ptr = sz;
}

void nswap2l_prefetch_note_rewritten(struct nswap2l *nc, unsigned int nr, unsigned int arm)
{
	atomic64_add(nr, &nc->prefetch->arm_rewritten[arm]);
}
