// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O statistics (pages and bios each tier read and wrote, per CPU) and
 * the concurrency profiler (Nswap2L's Tables V and VII): how many reads and
 * how many writes are in flight, on the device and on each tier, and how
 * long they take.
 *
 * The bio path only counts, per CPU and without a lock: a bio sent to a tier
 * is counted in flight until it completes, then its latency is added up
 * (nswap2l_profile_start/end).  A timer samples the in-flight counts every
 * NSWAP2L_PROFILE_SAMPLE_MS into histograms, while the device is resumed.
 * The average degree of parallelism is the mean count over the samples that
 * saw at least one bio in flight: how much I/O overlaps when there is some.
 */
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/timer.h>

#include "profiler.h"

int nswap2l_stats_create(struct nswap2l *nc)
{
	nc->stats = alloc_percpu(struct nswap2l_io_stats);
	return nc->stats ? 0 : -ENOMEM;
}

void nswap2l_stats_destroy(struct nswap2l *nc)
{
	free_percpu(nc->stats);
}

void nswap2l_stats_sum(struct nswap2l *nc, struct nswap2l_io_stats *sum)
{
	int cpu, id, dir;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct nswap2l_io_stats *s = per_cpu_ptr(nc->stats, cpu);

		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			sum->reads[id] += s->reads[id];
			sum->writes[id] += s->writes[id];
			sum->read_bios[id] += s->read_bios[id];
			sum->write_bios[id] += s->write_bios[id];
			for (dir = 0; dir < 2; dir++) {
				sum->inflight[id][dir] += s->inflight[id][dir];
				sum->done[id][dir] += s->done[id][dir];
				sum->time_ns[id][dir] += s->time_ns[id][dir];
				sum->max_ns[id][dir] = max(sum->max_ns[id][dir], s->max_ns[id][dir]);
			}
		}
		for (id = 0; id < NSWAP2L_PREFETCH_ARMS; id++)
			sum->prefetched_reads[id] += s->prefetched_reads[id];
		sum->zero_reads += s->zero_reads;
	}
}

ssize_t nswap2l_stats_show_tiers(struct nswap2l *nc, char *buf)
{
	struct nswap2l_io_stats io;
	ssize_t len = 0;
	int id;

	nswap2l_stats_sum(nc, &io);
	len += sysfs_emit_at(buf, len,
			     "tier capacity used reads writes discards read_bios write_bios\n");
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier)
			len += sysfs_emit_at(buf, len, "%s %llu %lld %llu %llu %lld %llu %llu\n",
					     tier->type->name, READ_ONCE(tier->capacity),
					     atomic64_read(&tier->used), io.reads[id],
					     io.writes[id], atomic64_read(&tier->discards),
					     io.read_bios[id], io.write_bios[id]);
	}
	return len;
}

/* 0 to 63 bios in flight, and 64 or more. */
#define PROFILE_BUCKETS		65
/* Histogram index of the whole device, after the tiers'. */
#define PROFILE_DEVICE		NSWAP2L_NR_TIERS

static const char *const dir_names[2] = { "read", "write" };

struct nswap2l_profiler {
	struct nswap2l *nc;
	struct timer_list timer;
	spinlock_t lock;		/* everything below; taken by the timer */
	bool running;
	u64 samples;
	u32 hist[NSWAP2L_NR_TIERS + 1][2][PROFILE_BUCKETS];
	/* Completions and their time when the profile was reset. */
	u64 base_done[NSWAP2L_NR_TIERS][2];
	u64 base_time_ns[NSWAP2L_NR_TIERS][2];
	/* For prefetching's Q1 "idle": never reset. */
	u64 busy_sum;
	u64 busy_samples;
};

static void sample(struct timer_list *timer)
{
	struct nswap2l_profiler *prof = from_timer(prof, timer, timer);
	struct nswap2l *nc = prof->nc;
	s64 count[NSWAP2L_NR_TIERS + 1][2] = { };
	int cpu, id, dir;

	for_each_possible_cpu(cpu) {
		struct nswap2l_io_stats *s = per_cpu_ptr(nc->stats, cpu);

		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			for (dir = 0; dir < 2; dir++)
				count[id][dir] += READ_ONCE(s->inflight[id][dir]);
	}
	spin_lock(&prof->lock);
	for (id = 0; id <= PROFILE_DEVICE; id++) {
		for (dir = 0; dir < 2; dir++) {
			/* Per-CPU counts are summed unlocked: a sum may be off by one for a moment. */
			s64 n = clamp_t(s64, count[id][dir], 0, PROFILE_BUCKETS - 1);

			if (id < PROFILE_DEVICE)
				count[PROFILE_DEVICE][dir] += n;
			prof->hist[id][dir][n]++;
		}
	}
	prof->samples++;
	prof->busy_sum += count[PROFILE_DEVICE][READ] + count[PROFILE_DEVICE][WRITE];
	prof->busy_samples++;
	if (prof->running)
		mod_timer(&prof->timer, jiffies + msecs_to_jiffies(NSWAP2L_PROFILE_SAMPLE_MS));
	spin_unlock(&prof->lock);
}

int nswap2l_profiler_create(struct nswap2l *nc)
{
	struct nswap2l_profiler *prof = kzalloc(sizeof(*prof), GFP_KERNEL);

	if (!prof)
		return -ENOMEM;
	prof->nc = nc;
	spin_lock_init(&prof->lock);
	timer_setup(&prof->timer, sample, 0);
	nc->profiler = prof;
	return 0;
}

void nswap2l_profiler_destroy(struct nswap2l *nc)
{
	if (!nc->profiler)
		return;
	nswap2l_profiler_stop(nc);
	kfree(nc->profiler);
	nc->profiler = NULL;
}

void nswap2l_profiler_start(struct nswap2l *nc)
{
	struct nswap2l_profiler *prof = nc->profiler;

	spin_lock_bh(&prof->lock);
	prof->running = true;
	mod_timer(&prof->timer, jiffies + msecs_to_jiffies(NSWAP2L_PROFILE_SAMPLE_MS));
	spin_unlock_bh(&prof->lock);
}

void nswap2l_profiler_stop(struct nswap2l *nc)
{
	struct nswap2l_profiler *prof = nc->profiler;

	spin_lock_bh(&prof->lock);
	prof->running = false;
	spin_unlock_bh(&prof->lock);
	del_timer_sync(&prof->timer);
}

void nswap2l_profiler_reset(struct nswap2l *nc)
{
	struct nswap2l_profiler *prof = nc->profiler;
	struct nswap2l_io_stats io;
	int cpu, id, dir;

	nswap2l_stats_sum(nc, &io);
	/* Racy against a completion: at worst one maximum survives the reset. */
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(nc->stats, cpu)->max_ns, 0, sizeof(io.max_ns));
	spin_lock_bh(&prof->lock);
	memset(prof->hist, 0, sizeof(prof->hist));
	prof->samples = 0;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		for (dir = 0; dir < 2; dir++) {
			prof->base_done[id][dir] = io.done[id][dir];
			prof->base_time_ns[id][dir] = io.time_ns[id][dir];
		}
	}
	spin_unlock_bh(&prof->lock);
}

u64 nswap2l_profiler_busy(struct nswap2l *nc, u64 *samples)
{
	struct nswap2l_profiler *prof = nc->profiler;
	u64 busy;

	spin_lock_bh(&prof->lock);
	busy = prof->busy_sum;
	*samples = prof->busy_samples;
	spin_unlock_bh(&prof->lock);
	return busy;
}

/* The mean of a histogram over its non-zero buckets. */
static int emit_parallelism(char *buf, size_t size, const u32 *hist)
{
	u64 sum = 0, samples = 0;
	int k;

	for (k = 1; k < PROFILE_BUCKETS; k++) {
		sum += (u64)k * hist[k];
		samples += hist[k];
	}
	return nswap2l_emit_ratio(buf, size, sum, samples);
}

/* "<prefix>read_parallelism ..." and the histogram lines of one tier or the device. */
static int emit_hists(char *buf, int len, const char *prefix, u32 (*hist)[PROFILE_BUCKETS])
{
	int dir, k;

	for (dir = 0; dir < 2; dir++) {
		len += sysfs_emit_at(buf, len, "%s%s_parallelism ", prefix, dir_names[dir]);
		len += emit_parallelism(buf + len, PAGE_SIZE - len, hist[dir]);
		len += sysfs_emit_at(buf, len, "\n%s%s_hist", prefix, dir_names[dir]);
		for (k = 0; k < PROFILE_BUCKETS; k++)
			len += sysfs_emit_at(buf, len, " %u", hist[dir][k]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	return len;
}

ssize_t nswap2l_profiler_show(struct nswap2l *nc, char *buf)
{
	struct nswap2l_profiler *prof = nc->profiler;
	struct nswap2l_io_stats io;
	int len, id, dir;

	nswap2l_stats_sum(nc, &io);
	spin_lock_bh(&prof->lock);
	len = sysfs_emit(buf, "samples %llu\nsample_ms %u\n", prof->samples,
			 NSWAP2L_PROFILE_SAMPLE_MS);
	len = emit_hists(buf, len, "", prof->hist[PROFILE_DEVICE]);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];
		char prefix[16];

		if (!tier)
			continue;
		snprintf(prefix, sizeof(prefix), "%s_", tier->type->name);
		len = emit_hists(buf, len, prefix, prof->hist[id]);
		for (dir = 0; dir < 2; dir++) {
			u64 done = io.done[id][dir] - prof->base_done[id][dir];
			u64 us = div_u64(io.time_ns[id][dir] - prof->base_time_ns[id][dir], 1000);

			len += sysfs_emit_at(buf, len, "%s%ss %llu\n%s%s_time_us %llu\n%s%s_mean_us %llu\n%s%s_max_us %llu\n",
					     prefix, dir_names[dir], done,
					     prefix, dir_names[dir], us,
					     prefix, dir_names[dir], done ? div64_u64(us, done) : 0,
					     prefix, dir_names[dir], div_u64(io.max_ns[id][dir], 1000));
		}
	}
	spin_unlock_bh(&prof->lock);
	return len;
}

void nswap2l_profiler_status(struct nswap2l *nc, char *result, unsigned int maxlen,
			     unsigned int *sz_ptr)
{
	struct nswap2l_profiler *prof = nc->profiler;
	unsigned int sz = *sz_ptr;
	int dir;

	spin_lock_bh(&prof->lock);
	for (dir = 0; dir < 2; dir++) {
		DMEMIT(" ");
		sz += emit_parallelism(result + sz, maxlen - sz, prof->hist[PROFILE_DEVICE][dir]);
	}
	spin_unlock_bh(&prof->lock);
	*sz_ptr = sz;
}
