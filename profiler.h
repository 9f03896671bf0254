/* SPDX-License-Identifier: GPL-2.0 */
/* I/O statistics and the profiler (profiler.c). */
#ifndef NSWAP2L_PROFILER_H
#define NSWAP2L_PROFILER_H

#include "core.h"

/*----------------------------------------------------------------
 * I/O statistics and profiler (profiler.c): bios are counted, and those in
 * flight too, per CPU on the bio path (no lock); a timer samples the
 * in-flight counts into histograms of read and of write concurrency, per
 * tier and for the device.
 *--------------------------------------------------------------*/
/* Counted on every bio: per CPU, so that CPUs do not share a cache line. */
struct nswap2l_io_stats {
	u64 reads[NSWAP2L_NR_TIERS];		/* pages */
	u64 writes[NSWAP2L_NR_TIERS];
	u64 read_bios[NSWAP2L_NR_TIERS];	/* the bios that carried them */
	u64 write_bios[NSWAP2L_NR_TIERS];
	u64 zero_reads;				/* reads of never-written pages */
	/* Flash reads of pages prefetching put there, by the arm that did. */
	u64 prefetched_reads[NSWAP2L_PREFETCH_ARMS];
	/* The profiler's view (profiler.c): bios in flight, and completed. */
	s32 inflight[NSWAP2L_NR_TIERS][2];	/* by bio_data_dir() */
	u64 done[NSWAP2L_NR_TIERS][2];
	u64 time_ns[NSWAP2L_NR_TIERS][2];	/* their summed latency */
	u64 max_ns[NSWAP2L_NR_TIERS][2];
};

int nswap2l_stats_create(struct nswap2l *nc);
void nswap2l_stats_destroy(struct nswap2l *nc);
/* Sum the per-CPU counters. */
void nswap2l_stats_sum(struct nswap2l *nc, struct nswap2l_io_stats *sum);
/* sysfs "tiers" file contents. */
ssize_t nswap2l_stats_show_tiers(struct nswap2l *nc, char *buf);

/* @bio carries @pages pages to @tier. */
static inline void nswap2l_stats_count_bio(struct nswap2l *nc, struct bio *bio,
					   enum nswap2l_tier_id tier, unsigned int pages)
{
	if (bio_data_dir(bio) == WRITE) {
		this_cpu_add(nc->stats->writes[tier], pages);
		this_cpu_inc(nc->stats->write_bios[tier]);
	} else {
		this_cpu_add(nc->stats->reads[tier], pages);
		this_cpu_inc(nc->stats->read_bios[tier]);
	}
}

#define NSWAP2L_PROFILE_SAMPLE_MS	10

int nswap2l_profiler_create(struct nswap2l *nc);
void nswap2l_profiler_destroy(struct nswap2l *nc);
/* Sampling runs while the device is resumed. */
void nswap2l_profiler_start(struct nswap2l *nc);
void nswap2l_profiler_stop(struct nswap2l *nc);
void nswap2l_profiler_reset(struct nswap2l *nc);
ssize_t nswap2l_profiler_show(struct nswap2l *nc, char *buf);
/* Status fields: <read_parallelism> <write_parallelism>. */
void nswap2l_profiler_status(struct nswap2l *nc, char *result, unsigned int maxlen,
			     unsigned int *sz);
/* Foreground bios in flight, summed over every sample since creation, and the samples. */
u64 nswap2l_profiler_busy(struct nswap2l *nc, u64 *samples);

/* A bio goes to @tier: counted in flight until nswap2l_profile_end(). */
static inline u64 nswap2l_profile_start(struct nswap2l *nc, enum nswap2l_tier_id tier, int dir)
{
	this_cpu_inc(nc->stats->inflight[tier][dir]);
	return ktime_get_ns();
}

static inline void nswap2l_profile_end(struct nswap2l *nc, enum nswap2l_tier_id tier, int dir,
				       u64 start_ns)
{
	u64 ns = ktime_get_ns() - start_ns;

	this_cpu_dec(nc->stats->inflight[tier][dir]);
	this_cpu_inc(nc->stats->done[tier][dir]);
	this_cpu_add(nc->stats->time_ns[tier][dir], ns);
	/* Racy against an interrupt on this CPU: at worst a maximum is missed. */
	if (ns > this_cpu_read(nc->stats->max_ns[tier][dir]))
		this_cpu_write(nc->stats->max_ns[tier][dir], ns);
}

#endif /* NSWAP2L_PROFILER_H */
