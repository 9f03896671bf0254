/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-nswap2l: one block device over Network RAM, flash and disk tiers.
 *
 * Shared structures and prototypes of the interface layer (the target),
 * the policies and the tier mechanisms.
 */
#ifndef NSWAP2L_H
#define NSWAP2L_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#define DM_MSG_PREFIX "nswap2l"

/* The device is managed in pages of 4 KiB, the unit swap writes. */
#define NSWAP2L_PAGE_SHIFT	12
#define NSWAP2L_PAGE_SECTORS	(1U << (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))
#define NSWAP2L_SECTOR_TO_PAGE(s)	((s) >> (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))
#define NSWAP2L_PAGE_TO_SECTOR(p)	((sector_t)(p) << (NSWAP2L_PAGE_SHIFT - SECTOR_SHIFT))

/*
 * Tiers in placement order, fastest first.  The id is also the tier's
 * index in struct nswap2l.tiers[].
 */
enum nswap2l_tier_id {
	NSWAP2L_TIER_NETRAM,
	NSWAP2L_TIER_FLASH,
	NSWAP2L_TIER_DISK,
	NSWAP2L_NR_TIERS
};

/*
 * One map entry per page, 64 bits, 0 meaning "never written / discarded"
 * (reads as zeros):
 *
 *   bits  0-2   location: 0 = unmapped, otherwise tier id + 1
 *   bit   3     referenced (set on access, cleared by clock-style policies)
 *   bit   4     migrating: the mover is copying the page; a write clears it
 *               so that the mover keeps the page where it is (migrate.c)
 *   bits  5-7   reserved for redundancy: a page with a second home or in a
 *               parity group is flagged here and its extra homes live in a
 *               side table, so the common case stays at 8 bytes a page
 *   bits  8-63  slot within the tier (2^56 slots of 4 KiB)
 */
#define NSWAP2L_ENTRY_LOC_MASK		0x7ULL
#define NSWAP2L_ENTRY_REFERENCED	0x8ULL
#define NSWAP2L_ENTRY_MIGRATING		0x10ULL
#define NSWAP2L_ENTRY_SLOT_SHIFT	8

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

struct nswap2l_tier;
struct nswap2l_tier_type;

/*
 * Bio status from a tier meaning "I could not store this write, put the page
 * on another tier".  Never seen above the target: the bios we send down
 * never carry REQ_NOWAIT, so no device below returns it for its own reasons.
 */
#define NSWAP2L_STS_TRY_ELSEWHERE	BLK_STS_AGAIN

/* Table options a tier may need when it is created. */
struct nswap2l_tier_options {
	const char *key_spec;		/* key=:<size>:<type>:<desc>, or NULL */
	unsigned int timeout_secs;	/* Network RAM request timeout */
};

#define NSWAP2L_DEFAULT_TIMEOUT_SECS	30

/*
 * Fail a table load: log the details (which dmesg keeps) and set the
 * summary that dmsetup reports in ti->error.
 */
__printf(3, 4)
void nswap2l_bad_table(struct dm_target *ti, const char *error, const char *fmt, ...);

/*
 * Mechanism of one tier.  alloc_slot() and map() run in the bio submission
 * path and must not block; free_slots() runs on the worker.
 */
struct nswap2l_tier_ops {
	/* Parse @arg (the value after "name="), open the tier. Sets ti->error. */
	int (*create)(struct dm_target *ti, const struct nswap2l_tier_type *type,
		      const char *arg, const struct nswap2l_tier_options *opts,
		      struct nswap2l_tier **result);
	void (*destroy)(struct dm_target *ti, struct nswap2l_tier *tier);

	/* Reserve a free slot; -ENOSPC when the tier is full. */
	int (*alloc_slot)(struct nswap2l_tier *tier, u64 *slot);
	/*
	 * Give slots back.  @written: data may have reached them, so the tier
	 * may discard them (may block); otherwise this only undoes alloc_slot()
	 * and never blocks.
	 */
	void (*free_slots)(struct nswap2l_tier *tier, const u64 *slots,
			   unsigned int nr, bool written);

	/*
	 * Send a read or write of @slot; returns a DM_MAPIO_* code.  A tier
	 * that cannot store a write it took completes it with
	 * NSWAP2L_STS_TRY_ELSEWHERE, and the core places the page elsewhere.
	 */
	int (*map)(struct nswap2l_tier *tier, struct bio *bio, u64 slot);
	/* Send an empty flush; NULL when the tier has no volatile cache. */
	int (*map_flush)(struct nswap2l_tier *tier, struct bio *bio);

	/* Table argument value, as dmsetup table shows it. */
	void (*emit_table_arg)(struct nswap2l_tier *tier, char *result,
			       unsigned int maxlen, unsigned int *sz);
	int (*iterate_devices)(struct dm_target *ti, struct nswap2l_tier *tier,
			       iterate_devices_callout_fn fn, void *data);
	/* Extra status fields (optional), appended after the common ones. */
	void (*emit_status)(struct nswap2l_tier *tier, char *result,
			    unsigned int maxlen, unsigned int *sz);
	/* sysfs "servers" file contents (optional). */
	ssize_t (*show_servers)(struct nswap2l_tier *tier, char *buf);
	/* A dmsetup message for this tier (optional); -ENOTTY if not ours. */
	int (*message)(struct nswap2l_tier *tier, unsigned int argc, char **argv);
};

/* A kind of tier, named by its table key ("flash=..."). */
struct nswap2l_tier_type {
	const char *name;
	enum nswap2l_tier_id id;
	const struct nswap2l_tier_ops *ops;
	const char *messages_help;	/* lines for the 'help' message, or NULL */
	/* Tell the device which slots no longer hold data (SSDs want this). */
	bool discard_freed_slots;
};

extern const struct nswap2l_tier_type nswap2l_netram_tier;
extern const struct nswap2l_tier_type nswap2l_flash_tier;
extern const struct nswap2l_tier_type nswap2l_disk_tier;

/* Common part of every tier; counters are in pages. */
struct nswap2l_tier {
	const struct nswap2l_tier_type *type;
	struct nswap2l *nc;		/* the target, set once the tier is created */
	u64 capacity;			/* changes at run time for Network RAM */
	atomic64_t used;
	atomic64_t discards;
};

static inline u64 nswap2l_tier_free(struct nswap2l_tier *tier)
{
	u64 capacity = READ_ONCE(tier->capacity);
	s64 used = atomic64_read(&tier->used);

	return used >= (s64)capacity ? 0 : capacity - used;
}


/* Block-device tiers (tier_block.c), shared by flash and disk. */
extern const struct nswap2l_tier_ops nswap2l_block_tier_ops;

/*
 * In-flight I/O epochs.  A slot freed by discard must not be reused while a
 * bio that looked the page up before the discard can still reach it.  Bios
 * count themselves in the current epoch; the freer flips the epoch and waits
 * for the old one to drain before it frees the slots.
 */
struct nswap2l_epochs {
	unsigned int current_epoch;
	atomic_t inflight[2];
	wait_queue_head_t drained;
};

/* Counted on every bio: per CPU, so that CPUs do not share a cache line. */
struct nswap2l_io_stats {
	u64 reads[NSWAP2L_NR_TIERS];
	u64 writes[NSWAP2L_NR_TIERS];
	u64 zero_reads;				/* reads of never-written pages */
};

struct nswap2l {
	struct dm_target *ti;
	u64 nr_pages;
	atomic64_t *map;			/* one entry per page, see nswap2l.h */

	struct nswap2l_tier *tiers[NSWAP2L_NR_TIERS];	/* by id, NULL if absent */
	struct nswap2l_tier *flush_tiers[NSWAP2L_NR_TIERS];
	unsigned int nr_flush_tiers;

	struct nswap2l_placement __rcu *placement;
	struct mutex placement_mutex;		/* replacing the policy */
	bool overcommit;
	struct nswap2l_tier_options tier_options;
	char *key_spec;				/* as given, for the table line */

	struct nswap2l_epochs epochs;

	struct workqueue_struct *wq;
	struct work_struct discard_work;
	spinlock_t discard_lock;		/* protects discard_bios */
	struct bio_list discard_bios;
	/* Slots cleared from the map, awaiting the epoch drain; worker only. */
	u64 *freed[NSWAP2L_NR_TIERS];
	unsigned int nr_freed[NSWAP2L_NR_TIERS];

	struct nswap2l_mover *mover;
	struct nswap2l_sysfs *sysfs;		/* while the table is live */

	struct nswap2l_io_stats __percpu *stats;
	atomic64_t nospace_errors;		/* writes that found no free slot */
	atomic64_t rerouted_writes;		/* writes a tier gave back */
	atomic64_t moved_pages;			/* by the mover */
};

/* Interface shared by messages and sysfs (sysfs.c). */
int nswap2l_set_placement(struct nswap2l *nc, const char *name);
const char *nswap2l_placement_name(struct nswap2l *nc);
ssize_t nswap2l_show_tiers(struct nswap2l *nc, char *buf);
void nswap2l_sysfs_add(struct nswap2l *nc);
void nswap2l_sysfs_remove(struct nswap2l *nc);
int nswap2l_sysfs_init(void);
void nswap2l_sysfs_exit(void);

/* Wait until every bio that started before this call has completed. */
void nswap2l_wait_inflight(struct nswap2l_epochs *e);

/*
 * Choose a home for @page with the placement policy and reserve its slot;
 * the caller installs the entry or frees the slot.  -ENOSPC if no tier has
 * room.
 */
int nswap2l_alloc_home(struct nswap2l *nc, u64 page, u64 *entry);

/*
 * Background moves (migrate.c): every page of @tier whose slot @wants is
 * moved to a new home; then done() runs on the mover's thread.
 */
#define NSWAP2L_MOVE_BATCH	32

struct nswap2l_move_job {
	struct nswap2l_tier *tier;
	bool (*wants)(struct nswap2l_move_job *job, u64 slot);
	void (*done)(struct nswap2l_move_job *job);
	unsigned int moved, left;	/* pages moved, pages that had to stay */
	struct list_head list;
};

int nswap2l_mover_create(struct nswap2l *nc);
/* Stop taking jobs and finish the queued ones; then tiers can go. */
void nswap2l_mover_stop(struct nswap2l *nc);
void nswap2l_mover_destroy(struct nswap2l *nc);
void nswap2l_mover_flush(struct nswap2l *nc);
/* False if the mover is stopped: the job will not run. */
bool nswap2l_queue_move(struct nswap2l *nc, struct nswap2l_move_job *job);

/*
 * Placement policy: decides which tier a newly written page goes to.  The
 * core does the allocation; the policy only chooses, never blocks and never
 * allocates memory on the I/O path (dm-cache's split).
 */
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

int nswap2l_policies_init(void);
void nswap2l_policies_exit(void);

/* One registration pair per policy file in policy/. */
int nswap2l_fastest_free_init(void);
void nswap2l_fastest_free_exit(void);

#endif /* NSWAP2L_H */
