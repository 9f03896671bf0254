/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-nswap2l: one block device over Network RAM, flash and disk tiers.
 *
 * Shared structures and prototypes of the interface layer (the target), the
 * core state (the map and in-flight tracking), the policies, the background
 * mover and the tier mechanisms.
 */
#ifndef NSWAP2L_H
#define NSWAP2L_H

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#include "include/uapi/linux/nswap2l_proto.h"
#include "tier.h"
#include <linux/wait.h>
#include <linux/workqueue.h>

#define DM_MSG_PREFIX "nswap2l"

/* The device is managed in pages of 4 KiB, the unit swap writes. */
#define NSWAP2L_PAGE_SHIFT	12
#define NSWAP2L_PAGE_SECTORS	(1U << (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))
#define NSWAP2L_SECTOR_TO_PAGE(s)	((s) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))
#define NSWAP2L_PAGE_TO_SECTOR(p)	((sector_t)(p) << (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))

/*
 * One map entry per page, 64 bits, 0 meaning "never written / discarded"
 * (reads as zeros):
 *
 *   bits  0-2   location: 0 = unmapped, otherwise tier id + 1
 *   bit   3     referenced (set on access, cleared by clock-style policies)
 *   bit   4     migrating: the mover is copying the page; a write clears it
 *               so that the mover keeps the page where it is (migrate.c)
 *   bit   5     prefetched: prefetching put the page on flash and it has
 *               not been written since; a write places it again
 *   bits  6-7   the prefetch arm (Q3 policy) that moved it, for its counters
 *   bits  8-9   reserved for redundancy: a page with a second home or in a
 *               parity group is flagged here and its extra homes live in a
 *               side table, so the common case stays at 8 bytes a page
 *   bits 10-63  slot within the tier (2^54 slots of 4 KiB)
 */
#define NSWAP2L_ENTRY_LOC_MASK		0x7ULL
#define NSWAP2L_ENTRY_REFERENCED	0x8ULL
#define NSWAP2L_ENTRY_MIGRATING		0x10ULL
#define NSWAP2L_ENTRY_PREFETCHED	0x20ULL
#define NSWAP2L_ENTRY_ARM_SHIFT		6
#define NSWAP2L_ENTRY_ARM_MASK		(0x3ULL << NSWAP2L_ENTRY_ARM_SHIFT)
/* Bits that say something about the page, not where it lives. */
#define NSWAP2L_ENTRY_FLAGS		(NSWAP2L_ENTRY_REFERENCED | NSWAP2L_ENTRY_MIGRATING | \
					 NSWAP2L_ENTRY_PREFETCHED | NSWAP2L_ENTRY_ARM_MASK)
#define NSWAP2L_ENTRY_SLOT_SHIFT	10

static inline u64 nswap2l_entry(enum nswap2l_tier_id tier, u64 slot)
{
	return ((u64)tier + 1) | (slot << NSWAP2L_ENTRY_SLOT_SHIFT);
}

static inline enum nswap2l_tier_id nswap2l_entry_tier(u64 entry)
{
	return (entry & NSWAP2L_ENTRY_LOC_MASK) - 1;
}

static inline u64 nswap2l_entry_slot(u64 entry)
{
	return entry >> NSWAP2L_ENTRY_SLOT_SHIFT;
}

/* The home of a page: tier and slot, without the flag bits. */
static inline u64 nswap2l_entry_home(u64 entry)
{
	return entry & ~NSWAP2L_ENTRY_FLAGS;
}

/* Pages a prefetch arm (Q3 policy) moved are counted per arm. */
#define NSWAP2L_PREFETCH_ARMS	4

static inline u64 nswap2l_entry_prefetched(unsigned int arm)
{
	return NSWAP2L_ENTRY_PREFETCHED | ((u64)arm << NSWAP2L_ENTRY_ARM_SHIFT);
}

static inline unsigned int nswap2l_entry_arm(u64 entry)
{
	return (entry & NSWAP2L_ENTRY_ARM_MASK) >> NSWAP2L_ENTRY_ARM_SHIFT;
}

struct nswap2l;

/* Bio lists filled from any context and emptied by a worker. */
static inline void nswap2l_add_bio(spinlock_t *lock, struct bio_list *list, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(lock, flags);
}

static inline struct bio_list nswap2l_take_bios(spinlock_t *lock, struct bio_list *list)
{
	struct bio_list bios;

	spin_lock_irq(lock);
	bios = *list;
	bio_list_init(list);
	spin_unlock_irq(lock);
	return bios;
}

/* @x / @y with two decimals ("0.00" when @y is 0), as status and sysfs print ratios. */
static inline int nswap2l_emit_ratio(char *buf, size_t size, u64 x, u64 y)
{
	u64 x100 = y ? div64_u64(x * 100, y) : 0;

	return scnprintf(buf, size, "%llu.%02llu", div_u64(x100, 100), x100 % 100);
}

/* What a tier may need when it is created or reloaded. */
struct nswap2l_tier_options {
	const void *args;		/* its type's own options (opts->parse()), or NULL */
	u64 device_pages;		/* a tier never needs more slots than this */
};

/* Network RAM's option defaults and limits (netram_args.c parses them). */
#define NSWAP2L_DEFAULT_CLIENT_NAME	"default"
/*
 * protect= when the table names none: the crypto API picks the fastest
 * ChaCha20-Poly1305 it has (SIMD where the CPU has it, else generic C).
 */
#define NSWAP2L_DEFAULT_PROTECT		"rfc7539(chacha20,poly1305)"
#define NSWAP2L_PROTECT_NAME_SIZE	64
#define NSWAP2L_MAX_PARITY_GROUP	7

/*
 * Fail a table load: log the details (which dmesg keeps) and set the
 * summary that dmsetup reports in ti->error.  A macro, so that the files
 * below the target need not call up into it; @fmt is a string literal.
 */
#define nswap2l_bad_table(ti, summary, fmt, ...)					\
do {											\
	struct dm_target *__ti = (ti);							\
											\
	DMERR("%s: " fmt, dm_table_device_name(__ti->table), ##__VA_ARGS__);		\
	__ti->error = (char *)(summary);						\
} while (0)

/* Block-device tiers (tier_block.c), shared by flash and disk. */
extern const struct nswap2l_tier_ops nswap2l_block_tier_ops;

/* Slots a block tier on @dev needs: no more than the device has pages. */
static inline u64 nswap2l_block_slots(struct dm_dev *dev, u64 device_pages)
{
	return min_t(u64, NSWAP2L_SECTOR_TO_PAGE(bdev_nr_sectors(dev->bdev)), device_pages);
}

/*----------------------------------------------------------------
 * Core state (map.c): the per-page map, every transition of an entry,
 * and in-flight tracking.
 *--------------------------------------------------------------*/

/*
 * In-flight I/O, in two epochs.  A slot that is freed, or a page whose old
 * home is about to be freed, must wait until every bio that looked the page
 * up before has completed.  Bios count themselves in the current epoch; a
 * waiter flips the epoch and waits for the old one to drain.  One waiter at
 * a time (wait_mutex): a second flip while the first waits would let the
 * second waiter miss bios counted in the first epoch.
 */
struct nswap2l_inflight {
	unsigned int current_epoch;
	atomic_t count[2];
	wait_queue_head_t drained;
	struct mutex wait_mutex;
};

#define NSWAP2L_NO_EPOCH	0xff

/* Pages a discard clears before it waits once for in-flight I/O and frees them. */
#define NSWAP2L_FREE_BATCH	512

/*
 * Old homes of pages that a write placed again (a prefetched page rewritten,
 * a write its tier refused): freed by the discard worker once bios that may
 * still read them have completed.  Preallocated: when it is full, a write to
 * a prefetched page updates it where it is, and a refused write waits.
 */
#define NSWAP2L_RELEASE_RUNS	64

struct nswap2l_release {
	u64 home;
	unsigned int nr;
	u64 keep;	/* pages of the first 64 that others took meanwhile: not freed */
};

/*
 * Slots freed only after the bios in flight that may still read them: the
 * runs queued from the bio path, and the slots a discard cleared.
 */
struct nswap2l_releases {
	spinlock_t lock;		/* runs, nr_runs, waiters; taken in any context */
	struct nswap2l_release runs[NSWAP2L_RELEASE_RUNS];
	unsigned int nr_runs;
	struct bio_list waiters;	/* refused writes waiting for room */
	/* Slots cleared by discard, awaiting the in-flight wait; discard worker only. */
	u64 *freed[NSWAP2L_NR_TIERS];
	unsigned int nr_freed[NSWAP2L_NR_TIERS];
};

/* The runs the discard worker took, to free after the in-flight wait. */
struct nswap2l_release_batch {
	struct nswap2l_release runs[NSWAP2L_RELEASE_RUNS];
	unsigned int nr;
};

struct nswap2l_map {
	u64 nr_pages;
	atomic64_t *entries;
	struct nswap2l_inflight inflight;
	struct nswap2l_releases releases;
};

int nswap2l_map_init(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti);
void nswap2l_map_exit(struct nswap2l_map *map);
/* Bytes of RAM the map of @nr_pages takes. */
u64 nswap2l_map_bytes(u64 nr_pages);
/* Zeroed memory of any size the machine can hold, or NULL; kvfree() it. */
void *nswap2l_zalloc_large(u64 bytes);
/* Reload: a map for more pages is prepared, then the old entries move in. */
atomic64_t *nswap2l_map_prepare_grow(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti);
void nswap2l_map_commit_grow(struct nswap2l_map *map, atomic64_t *entries, u64 nr_pages);

static inline u64 nswap2l_map_lookup(struct nswap2l_map *map, u64 page)
{
	return atomic64_read(&map->entries[page]);
}

unsigned int nswap2l_inflight_enter(struct nswap2l_inflight *inflight);
void nswap2l_inflight_exit(struct nswap2l_inflight *inflight, unsigned int epoch);
/* Wait until every bio that started before this call has completed. */
void nswap2l_inflight_wait(struct nswap2l_inflight *inflight);

/*
 * Choose a home for @page with the placement policy and reserve a run of at
 * most @nr slots there; returns the run's length with its first entry in
 * *@entry, or -ENOSPC if no tier has room.  The caller installs the entries
 * or frees the slots.
 */
int nswap2l_alloc_home(struct nswap2l *nc, u64 page, unsigned int nr, u64 *entry);
/* Give the slot of @entry back to its tier. */
void nswap2l_free_home(struct nswap2l *nc, u64 entry, bool written);
void nswap2l_flush_releases(struct nswap2l *nc);
/*
 * The release queue.  A writer reserves a place before it replaces an entry
 * (false: full), then fills it with the old home's run, or gives it back
 * (@nr == 0).  A refused write that found it full parks on the waiters
 * (false) or may go on at once (true).  The discard worker takes the filled
 * runs and the waiters, sends the waiters on, then frees the runs.
 */
bool nswap2l_release_reserve(struct nswap2l_map *map);
bool nswap2l_release_park(struct nswap2l_map *map, struct bio *bio);
void nswap2l_release_fill(struct nswap2l_map *map, u64 home, unsigned int nr, u64 keep);
struct bio_list nswap2l_release_take(struct nswap2l_map *map, struct nswap2l_release_batch *batch);
void nswap2l_release_free(struct nswap2l *nc, struct nswap2l_release_batch *batch);
/*
 * Give the pages from @page, at most @nr, new homes in one run, replacing
 * the entries whose homes are the run at @expected (0: pages written for the
 * first time).  Returns how many pages it placed (at least one) with the
 * first new entry in *@entry; -EAGAIN if the first page's entry changed
 * meanwhile, with that entry in *@entry; -ENOSPC if no tier has room.
 */
int nswap2l_map_place(struct nswap2l *nc, u64 page, unsigned int nr, u64 expected, u64 *entry);
/*
 * Note a read or write of @page: set the referenced bit and, for a write,
 * clear the migrating bit.  Returns the entry to send the bio to.
 */
u64 nswap2l_map_note_access(struct nswap2l_map *map, u64 page, u64 entry, bool write);
/*
 * Note a read or write of the pages from @page, at most @nr, whose homes
 * form one run with the first page's home *@entry.  Returns the run's length,
 * with the entry to send the bio to in *@entry.
 */
unsigned int nswap2l_map_note_run(struct nswap2l *nc, u64 page, unsigned int nr, u64 *entry,
				  bool write);
/* How many pages from @page, at most @nr, were never written (or were discarded). */
unsigned int nswap2l_map_unwritten_run(struct nswap2l_map *map, u64 page, unsigned int nr);
/* Flag the page as moving if its home still is @home; false if it changed. */
bool nswap2l_map_flag_moving(struct nswap2l_map *map, u64 page, u64 home);
/*
 * Replace the flagged entry of a page nothing touched since it was flagged
 * at @home: with @new_home, or (0) with the old one unflagged.  Keeps the
 * referenced bit.  False if a write or a discard changed the entry.
 */
bool nswap2l_map_replace_flagged(struct nswap2l_map *map, u64 page, u64 home, u64 new_home);
/*
 * Discard the whole pages [@first, @end): clear their entries, wait for bios
 * that may still use their slots, give the slots back.  Worker only.
 */
void nswap2l_map_discard(struct nswap2l *nc, u64 first, u64 end);

/*----------------------------------------------------------------
 * The device: state that lives as long as the mapped device, across table
 * reloads (found by the mapped device, dm-thin's pool registry).
 *--------------------------------------------------------------*/

struct nswap2l {
	struct list_head registry;		/* registry list, under its mutex */
	struct mapped_device *md;
	unsigned int tables;			/* tables using it, registry mutex */
	struct dm_target *ti;			/* the bound (live) table */
	char name[16];				/* major:minor, for messages */

	struct nswap2l_map map;
	struct nswap2l_tier *tiers[NSWAP2L_NR_TIERS];	/* by id, NULL if absent */

	struct nswap2l_placement __rcu *placement;
	struct mutex control_mutex;		/* placement, suspend state */
	bool overcommit;
	bool suspended;				/* background I/O held */

	/* Bios that a tier failed: rerouted or completed here, never in end_io. */
	struct workqueue_struct *bio_wq;
	struct work_struct deferred_work;
	spinlock_t deferred_lock;		/* deferred_bios, held_bios */
	struct bio_list deferred_bios;
	/* Fault injection: bios held before they reach their tier. */
	struct bio_list held_bios;
	struct delayed_work held_work;

	/* Discards wait for in-flight I/O: on their own queue. */
	struct workqueue_struct *discard_wq;
	struct work_struct discard_work;
	spinlock_t discard_lock;		/* protects discard_bios */
	struct bio_list discard_bios;

	struct nswap2l_mover *mover;
	struct nswap2l_prefetch *prefetch;
	struct nswap2l_profiler *profiler;
	struct nswap2l_sysfs *sysfs;		/* while the table is live */

	/* Rerouted writes whose pages found no one run: split (reroute_write). */
	struct bio_set split_bios;

	struct nswap2l_io_stats __percpu *stats;
	atomic64_t nospace_errors;		/* writes that found no free slot */
	atomic64_t rerouted_writes;		/* writes a tier gave back */
	atomic64_t moved_pages;			/* by the mover */
};

/* The home of the page @n pages after the one at @home, in the same run. */
static inline u64 nswap2l_run_home(struct nswap2l *nc, u64 home, u64 n)
{
	u64 stride = nc->tiers[nswap2l_entry_tier(home)]->run_stride;

	return home + ((n * stride) << NSWAP2L_ENTRY_SLOT_SHIFT);
}

/* Interface shared by messages and sysfs (sysfs.c). */
int nswap2l_set_placement(struct nswap2l *nc, const char *name);
const char *nswap2l_placement_name(struct nswap2l *nc);
void nswap2l_sysfs_add(struct nswap2l *nc);
void nswap2l_sysfs_remove(struct nswap2l *nc);
int nswap2l_sysfs_init(void);
void nswap2l_sysfs_exit(void);

/*----------------------------------------------------------------
 * Background moves (migrate.c): every page of @tier whose slot @wants is
 * moved to a new home; then done() runs on the mover's thread.  Jobs wait
 * while the device is suspended and continue where they stopped.
 *--------------------------------------------------------------*/
#define NSWAP2L_MOVE_BATCH	32

struct nswap2l_move_job {
	struct nswap2l_tier *tier;
	bool (*wants)(struct nswap2l_move_job *job, u64 slot);
	void (*done)(struct nswap2l_move_job *job);
	unsigned int moved, left;	/* pages moved, pages that had to stay */
	u64 next_page;			/* where the scan goes on */
	struct list_head list;
};

/*
 * The moving itself, for the mover and for prefetching: up to
 * NSWAP2L_MOVE_BATCH pages flagged with add(), then moved by run() to
 * @to_tier (or, if negative, where the placement policy says), their new
 * entries carrying @flags.
 */
struct nswap2l_move_batch;

struct nswap2l_move_result {
	unsigned int moved;
	unsigned int raced;	/* a write or discard came first: left where they are */
	unsigned int failed;	/* no room on the new tier, or an I/O error */
};

struct nswap2l_move_batch *nswap2l_move_batch_alloc(void);
void nswap2l_move_batch_free(struct nswap2l_move_batch *batch);
/* Flag @page for the batch if its home still is @home; false if not (or full). */
bool nswap2l_move_batch_add(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    u64 page, u64 home);
unsigned int nswap2l_move_batch_size(struct nswap2l_move_batch *batch);
void nswap2l_move_batch_run(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    int to_tier, u64 flags, struct nswap2l_move_result *result);

int nswap2l_mover_create(struct nswap2l *nc);
/* Stop taking jobs and finish the queued ones; then tiers can go. */
void nswap2l_mover_stop(struct nswap2l *nc);
void nswap2l_mover_destroy(struct nswap2l *nc);
/* Suspend: return once no batch runs; queued jobs wait for resume. */
void nswap2l_mover_pause(struct nswap2l *nc);
void nswap2l_mover_resume(struct nswap2l *nc);
/* False if the mover is stopped: the job will not run. */
bool nswap2l_queue_move(struct nswap2l *nc, struct nswap2l_move_job *job);

/*----------------------------------------------------------------
 * Prefetching (prefetch.c): a worker per device that wakes every interval,
 * asks the Q1/Q2/Q3 policies, and moves the pages they name from Network
 * RAM to flash with the mover's protocol.
 *--------------------------------------------------------------*/
struct nswap2l_prefetch_config {
	const struct nswap2l_prefetch_which *which;	/* NULL: prefetching off */
	const struct nswap2l_prefetch_when *when;
	unsigned int when_arg;
	const struct nswap2l_prefetch_amount *amount;
	unsigned int percent;
	unsigned int cap;		/* pages per wake-up at most */
	unsigned int interval_ms;
};

#define NSWAP2L_PREFETCH_CONFIG_LEN	96

void nswap2l_prefetch_default_config(struct nswap2l_prefetch_config *cfg);
bool nswap2l_prefetch_config_is_default(const struct nswap2l_prefetch_config *cfg);
/*
 * Table option value "<policy>[,when=..][,amount=..][,interval=..]" into
 * @cfg (which holds the defaults); -EINVAL with a dmesg line naming @dev.
 */
int nswap2l_prefetch_parse(const char *dev, char *value, struct nswap2l_prefetch_config *cfg);
/* The table option's value, e.g. "lrs,when=always,amount=written:10:4096,interval=500". */
void nswap2l_prefetch_format(const struct nswap2l_prefetch_config *cfg, char *buf, size_t size);
/* Prefetching moves Network RAM pages to flash: both tiers are needed. */
int nswap2l_prefetch_check_tiers(const struct nswap2l_prefetch_config *cfg, const char *dev,
				 bool has_netram, bool has_flash);

int nswap2l_prefetch_create(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg);
void nswap2l_prefetch_destroy(struct nswap2l *nc);
/*
 * Suspend, and removal before destroy: returns once no batch runs; resume
 * starts the worker again.
 */
void nswap2l_prefetch_pause(struct nswap2l *nc);
void nswap2l_prefetch_resume(struct nswap2l *nc);
/*
 * Reload: the new table's picker is made in its constructor (NULL for
 * none, ERR_PTR on failure), installed on resume or dropped.
 */
struct nswap2l_picker *nswap2l_prefetch_prepare(const struct nswap2l_prefetch_config *cfg);
void nswap2l_prefetch_commit(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg,
			     struct nswap2l_picker *picker);
void nswap2l_prefetch_get_config(struct nswap2l *nc, struct nswap2l_prefetch_config *cfg);
/* Messages and sysfs: @key is policy, when, amount or interval. */
int nswap2l_prefetch_set(struct nswap2l *nc, const char *key, const char *value);
ssize_t nswap2l_prefetch_show(struct nswap2l *nc, const char *key, char *buf);
ssize_t nswap2l_prefetch_show_stats(struct nswap2l *nc, char *buf);
/* The counters the profile shows too, from @len in a sysfs @buf; the new length. */
int nswap2l_prefetch_emit_counters(struct nswap2l *nc, char *buf, int len);
/* Status fields: <policy> <prefetched> <prefetched_reads> <cancelled>. */
void nswap2l_prefetch_status(struct nswap2l *nc, char *result, unsigned int maxlen,
			     unsigned int *sz);
/* Pages a write placed again after prefetching had moved them. */
void nswap2l_prefetch_note_rewritten(struct nswap2l *nc, unsigned int nr);

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

/*----------------------------------------------------------------
 * Policies (policy/): they decide, the core executes.  They never block
 * and never allocate memory on the I/O path (dm-cache's split).
 *--------------------------------------------------------------*/

/* Placement: which tier a newly written page goes to. */
struct nswap2l_placement {
	/*
	 * Next tier to try for @page, skipping the tiers whose bit is set in
	 * @tried (they were full); -ENOSPC when no tier is left.
	 */
	int (*next_tier)(struct nswap2l_placement *p, u64 page,
			 unsigned long tried);
	void (*destroy)(struct nswap2l_placement *p);
	const struct nswap2l_placement_type *type;
};

struct nswap2l_placement_type {
	struct list_head list;
	const char *name;
	struct nswap2l_placement *(*create)(struct nswap2l_tier *const *tiers);
};

#define NSWAP2L_DEFAULT_PLACEMENT "fastest_free"

int nswap2l_placement_register(struct nswap2l_placement_type *type);
void nswap2l_placement_unregister(struct nswap2l_placement_type *type);
struct nswap2l_placement *nswap2l_placement_create(const char *name,
						   struct nswap2l_tier *const *tiers);
void nswap2l_placement_list(char *result, unsigned int maxlen, unsigned int *sz);

/*
 * Server choice: which Network RAM server takes a new page.  The tier hands
 * the policy what it knows of each server's room; the policy picks one of
 * those allowed in @candidates (a bit per server index).  A page with
 * copies asks again with the servers already chosen excluded: copies never
 * share a server.
 */
struct nswap2l_server_room {
	s64 free;	/* its last word, minus the pages we sent since */
	s64 held;	/* pages of ours it holds */
};

struct nswap2l_server_choice {
	const char *name;
	/* Index of the server to take the page, or -ENOSPC. */
	int (*pick)(const struct nswap2l_server_room *rooms, unsigned int nr,
		    unsigned long candidates);
};

/* @copies distinct servers into @picked; -ENOSPC unless there are that many. */
static inline int nswap2l_pick_servers(const struct nswap2l_server_choice *choice,
				       const struct nswap2l_server_room *rooms, unsigned int nr,
				       unsigned long candidates, unsigned int copies,
				       unsigned int *picked)
{
	unsigned int i;

	for (i = 0; i < copies; i++) {
		int pick = choice->pick(rooms, nr, candidates);

		if (pick < 0)
			return -ENOSPC;
		picked[i] = pick;
		__clear_bit(pick, &candidates);
	}
	return 0;
}

extern const struct nswap2l_server_choice nswap2l_most_free_server;

/*
 * Prefetching (prefetch.c) asks three questions at every wake-up, each
 * answered by a policy registered by name: Q1 "when" (prefetch now?),
 * Q2 "amount" (how many pages?) and Q3 "which" (which pages?).
 */
enum nswap2l_prefetch_question {
	NSWAP2L_PREFETCH_WHEN,
	NSWAP2L_PREFETCH_AMOUNT,
	NSWAP2L_PREFETCH_WHICH,
};

/* What the prefetch worker tells the policies at a wake-up. */
struct nswap2l_prefetch_view {
	u64 written;		/* pages written since the last wake-up */
	u64 held;		/* pages in Network RAM */
	u64 busy_x100;		/* foreground bios in flight, mean since last wake-up, x100 */
	u64 read_ns;		/* foreground read latency, mean since last wake-up (0: none) */
	u64 prefetched[NSWAP2L_PREFETCH_ARMS];	/* pages each arm moved, ever */
	u64 reads[NSWAP2L_PREFETCH_ARMS];	/* flash reads of those pages */
};

/* Common head of the three kinds, for the registry. */
struct nswap2l_prefetch_type {
	struct list_head list;
	const char *name;
	enum nswap2l_prefetch_question question;
};

/* Q1: prefetch at this wake-up?  @arg: the policy's number (when=idle:<n>). */
struct nswap2l_prefetch_when {
	struct nswap2l_prefetch_type type;
	unsigned int default_arg;
	bool (*now)(const struct nswap2l_prefetch_view *view, unsigned int arg);
};

/* Q2: how many pages, given @percent (amount=<name>:<percent>). */
struct nswap2l_prefetch_amount {
	struct nswap2l_prefetch_type type;
	u64 (*pages)(const struct nswap2l_prefetch_view *view, unsigned int percent);
};

/*
 * Q3: which pages.  A picker keeps its cursor or clock hand across
 * wake-ups; it reads the map and may clear referenced bits, nothing else.
 */
struct nswap2l_picker {
	/*
	 * A wake-up starts with @quota pages to take (nswap2l_hand_begin());
	 * returns the quota to use (an adaptive picker changes it).
	 */
	u64 (*begin)(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
		     struct nswap2l_map *map, u64 quota);
	/*
	 * Up to @nr pages now in Network RAM, into @pages, the arm that chose
	 * them in *@arm; returns how many, 0 when this wake-up found no more.
	 * With @nr == 0, a clock only ages pages.
	 */
	unsigned int (*pick)(struct nswap2l_picker *p, struct nswap2l_map *map,
			     u64 *pages, unsigned int nr, unsigned int *arm);
	/* The arm in use, for stats. */
	const char *(*choice)(struct nswap2l_picker *p);	/* optional */
	void (*destroy)(struct nswap2l_picker *p);
	const struct nswap2l_prefetch_which *type;
};

struct nswap2l_prefetch_which {
	struct nswap2l_prefetch_type type;
	unsigned int arm;	/* its counters' index; NSWAP2L_PREFETCH_ARMS: none of its own */
	struct nswap2l_picker *(*create)(void);
};

int nswap2l_prefetch_register(struct nswap2l_prefetch_type *type);
void nswap2l_prefetch_unregister(struct nswap2l_prefetch_type *type);
/* The policies of one file, all or none. */
int nswap2l_prefetch_register_all(struct nswap2l_prefetch_type *const *types, unsigned int nr);
void nswap2l_prefetch_unregister_all(struct nswap2l_prefetch_type *const *types,
				     unsigned int nr);
/* The registered type or NULL; types are static, never freed while loaded. */
struct nswap2l_prefetch_type *nswap2l_prefetch_find(enum nswap2l_prefetch_question q,
						    const char *name);
/* " name1 name2 ..." of one question's policies, into @buf of @size. */
void nswap2l_prefetch_names(enum nswap2l_prefetch_question q, char *buf, size_t size);
/* A picker of the Q3 policy @name, or NULL; ERR_PTR on no memory. */
struct nswap2l_picker *nswap2l_picker_create(const char *name);
/* The Q3 policy registered for @arm. */
const struct nswap2l_prefetch_which *nswap2l_prefetch_arm(unsigned int arm);

/* A page a picker may take: in Network RAM, not being moved. */
static inline bool nswap2l_entry_prefetchable(u64 entry)
{
	return entry && nswap2l_entry_tier(entry) == NSWAP2L_TIER_NETRAM &&
	       !(entry & NSWAP2L_ENTRY_MIGRATING);
}

/* Clock hands: clear the referenced bit of @page; true if it was set. */
bool nswap2l_map_test_and_age(struct nswap2l_map *map, u64 page);

int nswap2l_policies_init(void);
void nswap2l_policies_exit(void);

/* One registration pair per policy file in policy/. */
int nswap2l_fastest_free_init(void);
void nswap2l_fastest_free_exit(void);
int nswap2l_prefetch_when_init(void);
void nswap2l_prefetch_when_exit(void);
int nswap2l_prefetch_amount_init(void);
void nswap2l_prefetch_amount_exit(void);
int nswap2l_prefetch_rr_init(void);
void nswap2l_prefetch_rr_exit(void);
int nswap2l_prefetch_random_init(void);
void nswap2l_prefetch_random_exit(void);
int nswap2l_prefetch_clock_init(void);
void nswap2l_prefetch_clock_exit(void);
int nswap2l_prefetch_auto_init(void);
void nswap2l_prefetch_auto_exit(void);

/* The init and exit of a prefetch policy file that registers @types. */
#define NSWAP2L_PREFETCH_POLICY_FILE(file, types)				\
int nswap2l_prefetch_##file##_init(void)					\
{										\
	return nswap2l_prefetch_register_all(types, ARRAY_SIZE(types));		\
}										\
void nswap2l_prefetch_##file##_exit(void)					\
{										\
	nswap2l_prefetch_unregister_all(types, ARRAY_SIZE(types));		\
}

/*
 * A hand over the map for the Q3 pickers: it keeps its place across
 * wake-ups and passes at most one lap (and at most
 * NSWAP2L_PREFETCH_SCAN_PAGES entries) per wake-up.
 */
#define NSWAP2L_PREFETCH_SCAN_PAGES	(1ULL << 20)

struct nswap2l_hand {
	u64 pos;
	u64 left;	/* entries it may still pass in this wake-up */
};

static inline void nswap2l_hand_begin(struct nswap2l_hand *hand, struct nswap2l_map *map)
{
	hand->left = min_t(u64, READ_ONCE(map->nr_pages), NSWAP2L_PREFETCH_SCAN_PAGES);
}

/*
 * A picker that is a hand and a pick function (rr, random, lrs, mrs):
 * begin() and destroy() are common; @arg is the policy's own.
 */
struct nswap2l_hand_picker {
	struct nswap2l_picker picker;
	struct nswap2l_hand hand;
	unsigned long arg;
};

static inline struct nswap2l_hand_picker *nswap2l_hand_picker(struct nswap2l_picker *p)
{
	return container_of(p, struct nswap2l_hand_picker, picker);
}

struct nswap2l_picker *nswap2l_hand_picker_create(
	unsigned int (*pick)(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			     unsigned int nr, unsigned int *arm),
	unsigned long arg);

/* The next page under the hand, false when this wake-up's scan is over. */
static inline bool nswap2l_hand_next(struct nswap2l_hand *hand, struct nswap2l_map *map,
				     u64 *page)
{
	if (!hand->left)
		return false;
	hand->left--;
	if (hand->pos >= map->nr_pages)
		hand->pos = 0;
	*page = hand->pos++;
	return true;
}

/*----------------------------------------------------------------
 * Fault injection for the tests (bio.c), off by default.
 *--------------------------------------------------------------*/
/* Milliseconds a read or write is held between its map lookup and its tier. */
extern unsigned int nswap2l_fault_hold_ms;

#endif /* NSWAP2L_H */
