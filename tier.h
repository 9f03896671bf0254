/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-nswap2l: the interface of a tier (Network RAM, flash, disk) and the
 * wrappers the core calls it through.  Optional operations are tested in the
 * wrappers only, so that callers need not know which ones may be missing.
 */
#ifndef NSWAP2L_TIER_H
#define NSWAP2L_TIER_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/types.h>

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

struct nswap2l;
struct nswap2l_tier;
struct nswap2l_tier_options;
struct nswap2l_tier_type;

/*
 * Mechanism of one tier.  alloc_slots() and map() run in the bio submission
 * path and must not block (map() may wait for an element of a mempool set
 * up in the constructor, never for reclaim); free_slots() runs on a worker.
 *
 * A bio may span a run of pages: pages whose slots follow each other, each
 * run_stride above the one before (struct nswap2l_tier).  map() gets the
 * first page's slot and sends the whole bio there.
 *
 * Life of a tier: create() when the first table of a device is loaded, then
 * start() once everything a tier may call into exists; reloads go through
 * prepare_reload() (in the new table's constructor: check and allocate,
 * change nothing), then commit_reload() while the device is suspended, or
 * cancel_reload() if the new table is never resumed.  stop() ends every
 * thread and work of the tier before the device is taken down; destroy()
 * copes with a half-built tier.
 */
struct nswap2l_tier_ops {
	/*
	 * Parse @arg (the value after "name="), set the tier up.  @dev is the
	 * table's device for block tiers, NULL otherwise.  Sets ti->error.
	 */
	int (*create)(struct dm_target *ti, const struct nswap2l_tier_type *type,
		      const char *arg, struct dm_dev *dev,
		      const struct nswap2l_tier_options *opts,
		      struct nswap2l_tier **result);
	int (*start)(struct nswap2l_tier *tier, struct dm_target *ti);	/* optional */
	void (*stop)(struct nswap2l_tier *tier);			/* optional */
	void (*destroy)(struct nswap2l_tier *tier);

	/*
	 * A new table names this tier with @arg: fail (ti->error, dmesg) unless
	 * every page the tier holds stays reachable; prepare what the change
	 * needs in *@change (NULL if nothing).
	 */
	int (*prepare_reload)(struct nswap2l_tier *tier, struct dm_target *ti,
			      const char *arg, struct dm_dev *dev,
			      const struct nswap2l_tier_options *opts, void **change);
	void (*commit_reload)(struct nswap2l_tier *tier, void *change);
	void (*cancel_reload)(struct nswap2l_tier *tier, void *change);

	/* Hold and release the tier's own background traffic (optional). */
	void (*suspend)(struct nswap2l_tier *tier);
	void (*resume)(struct nswap2l_tier *tier);

	/*
	 * Reserve a run of at most @nr free slots, the first in *@slot; returns
	 * how many (at least one), -ENOSPC when the tier is full.
	 */
	int (*alloc_slots)(struct nswap2l_tier *tier, unsigned int nr, u64 *slot);
	/*
	 * Give slots back.  @written: data may have reached them, so the tier
	 * may discard them (may block); otherwise this only undoes alloc_slot()
	 * and never blocks.
	 */
	void (*free_slots)(struct nswap2l_tier *tier, const u64 *slots,
			   unsigned int nr, bool written);

	/* Send a read or write of the run that starts at @slot; a DM_MAPIO_* code. */
	int (*map)(struct nswap2l_tier *tier, struct bio *bio, u64 slot);
	/*
	 * A read of the run at @slot failed @tries times: send it to the copy
	 * the next try goes to.  DM_MAPIO_SUBMITTED, or DM_MAPIO_KILL when
	 * no copy is left (optional: one copy).  Called from a worker.
	 */
	int (*map_retry)(struct nswap2l_tier *tier, struct bio *bio, u64 slot,
			 unsigned int tries);
	/* Most pages one bio to the run at @slot may span (optional: no limit). */
	unsigned int (*max_run)(struct nswap2l_tier *tier, u64 slot);
	/*
	 * @cur holds the data @old held, under another label (a server moved
	 * the page: MOVED).  Optional: never.
	 */
	bool (*relabelled)(struct nswap2l_tier *tier, u64 old, u64 cur);
	/* Send an empty flush; NULL when the tier has no volatile cache. */
	int (*map_flush)(struct nswap2l_tier *tier, struct bio *bio);

	/* Table argument value, as dmsetup table shows it. */
	void (*emit_table_arg)(struct nswap2l_tier *tier, char *result,
			       unsigned int maxlen, unsigned int *sz);
	/* Extra status fields (optional), appended after the common ones. */
	void (*emit_status)(struct nswap2l_tier *tier, char *result,
			    unsigned int maxlen, unsigned int *sz);
	/* sysfs "servers" file contents (optional). */
	ssize_t (*show_servers)(struct nswap2l_tier *tier, char *buf);
	/* A dmsetup message for this tier (optional); -ENOTTY if not ours. */
	int (*message)(struct nswap2l_tier *tier, unsigned int argc, char **argv);
};

/* A kind of tier, named by its table key ("flash=..."). */
/*
 * Table options a tier type owns: "<key>=<value>" words of the table line
 * (dm-cache's policy arguments, in this table's syntax).  The core collects
 * the words named in keys[] into values[], in the same order (NULL: not
 * given), and leaves checking, parsing and printing them to the type; the
 * parsed options are the type's own, opaque to the core.  check_word() is
 * optional, every other op required.
 */
#define NSWAP2L_TIER_MAX_OPTS	8

struct nswap2l_tier_opts_ops {
	const char *const *keys;	/* NULL-terminated, at most NSWAP2L_TIER_MAX_OPTS */
	/* One word, as the line is read: ti->error and dmesg if it is wrong. */
	int (*check_word)(struct dm_target *ti, unsigned int key, const char *value);
	/* Every word read; @present: the table names the tier. */
	int (*check)(struct dm_target *ti, const char *const *values, bool present);
	/* Once the table's devices are open: the options, or an ERR_PTR. */
	void *(*parse)(struct dm_target *ti, const char *const *values, bool present);
	void (*free)(void *args);
	/* A reload: refuse changes that the pages the tier holds cannot follow. */
	int (*check_reload)(struct nswap2l_tier *tier, struct dm_target *ti, const void *args);
	/* The words emit() prints back into the table line, and printing them. */
	unsigned int (*count)(const void *args);
	void (*emit)(const void *args, char *result, unsigned int maxlen, unsigned int *sz);
};

struct nswap2l_tier_type {
	const char *name;
	enum nswap2l_tier_id id;
	const struct nswap2l_tier_ops *ops;
	const struct nswap2l_tier_opts_ops *opts;	/* NULL: no options */
	const char *messages_help;	/* lines for the 'help' message, or NULL */
	/* The table argument names a block device (opened by the table). */
	bool has_device;
	/* Tell the device which slots no longer hold data (SSDs want this). */
	bool discard_freed_slots;
	/*
	 * A write that fails on this tier was not stored and may go to another
	 * home (a full or failed server); reads that fail may be retried.
	 * Failed bios of other tiers complete with their error.
	 */
	bool retry_failed_bios;
};

extern const struct nswap2l_tier_type nswap2l_netram_tier;
extern const struct nswap2l_tier_type nswap2l_flash_tier;
extern const struct nswap2l_tier_type nswap2l_disk_tier;

/* Common part of every tier; counters are in pages. */
struct nswap2l_tier {
	const struct nswap2l_tier_type *type;
	struct nswap2l *nc;		/* the device, set once the tier is created */
	struct dm_dev *dev;		/* block tiers: the device, else NULL */
	u64 capacity;			/* changes at run time for Network RAM */
	u64 run_stride;			/* slot of a run's next page minus this one's */
	/*
	 * Each slot is written once: a write to a page stored here gets a new
	 * home, and the old one is freed (reliability=parity's groups).
	 */
	bool write_once;
	atomic64_t used;
	atomic64_t discards;
};

static inline u64 nswap2l_tier_free(struct nswap2l_tier *tier)
{
	u64 capacity = READ_ONCE(tier->capacity);
	s64 used = atomic64_read(&tier->used);

	return used >= (s64)capacity ? 0 : capacity - used;
}

/*----------------------------------------------------------------
 * The core calls a tier only through these.
 *--------------------------------------------------------------*/
static inline int nswap2l_tier_create(const struct nswap2l_tier_type *type, struct dm_target *ti,
				      const char *arg, struct dm_dev *dev,
				      const struct nswap2l_tier_options *opts,
				      struct nswap2l_tier **result)
{
	return type->ops->create(ti, type, arg, dev, opts, result);
}

/* 0 for a tier without start(). */
static inline int nswap2l_tier_start(struct nswap2l_tier *tier, struct dm_target *ti)
{
	return tier->type->ops->start ? tier->type->ops->start(tier, ti) : 0;
}

static inline void nswap2l_tier_stop(struct nswap2l_tier *tier)
{
	if (tier->type->ops->stop)
		tier->type->ops->stop(tier);
}

static inline void nswap2l_tier_destroy(struct nswap2l_tier *tier)
{
	tier->type->ops->destroy(tier);
}

/* 0, leaving *@change alone, for a tier without prepare_reload(). */
static inline int nswap2l_tier_prepare_reload(struct nswap2l_tier *tier, struct dm_target *ti,
					      const char *arg, struct dm_dev *dev,
					      const struct nswap2l_tier_options *opts,
					      void **change)
{
	if (!tier->type->ops->prepare_reload)
		return 0;
	return tier->type->ops->prepare_reload(tier, ti, arg, dev, opts, change);
}

/* Only for a @change that prepare_reload() made. */
static inline void nswap2l_tier_commit_reload(struct nswap2l_tier *tier, void *change)
{
	tier->type->ops->commit_reload(tier, change);
}

static inline void nswap2l_tier_cancel_reload(struct nswap2l_tier *tier, void *change)
{
	tier->type->ops->cancel_reload(tier, change);
}

static inline void nswap2l_tier_suspend(struct nswap2l_tier *tier)
{
	if (tier->type->ops->suspend)
		tier->type->ops->suspend(tier);
}

static inline void nswap2l_tier_resume(struct nswap2l_tier *tier)
{
	if (tier->type->ops->resume)
		tier->type->ops->resume(tier);
}

static inline int nswap2l_tier_alloc_slots(struct nswap2l_tier *tier, unsigned int nr, u64 *slot)
{
	return tier->type->ops->alloc_slots(tier, nr, slot);
}

static inline void nswap2l_tier_free_slots(struct nswap2l_tier *tier, const u64 *slots,
					   unsigned int nr, bool written)
{
	tier->type->ops->free_slots(tier, slots, nr, written);
}

static inline int nswap2l_tier_map(struct nswap2l_tier *tier, struct bio *bio, u64 slot)
{
	return tier->type->ops->map(tier, bio, slot);
}

/*
 * A tier with one copy has no map_retry(): the caller gives up before it
 * counts a try, so this is asked apart from nswap2l_tier_map_retry().
 */
static inline bool nswap2l_tier_can_retry(struct nswap2l_tier *tier)
{
	return tier->type->ops->map_retry;
}

/* Only for a tier where nswap2l_tier_can_retry(). */
static inline int nswap2l_tier_map_retry(struct nswap2l_tier *tier, struct bio *bio, u64 slot,
					 unsigned int tries)
{
	return tier->type->ops->map_retry(tier, bio, slot, tries);
}

/* Most pages one bio to the run at @slot of @tier may span now. */
static inline unsigned int nswap2l_tier_max_run(struct nswap2l_tier *tier, u64 slot)
{
	return tier->type->ops->max_run ? tier->type->ops->max_run(tier, slot) : UINT_MAX;
}

static inline bool nswap2l_tier_relabelled(struct nswap2l_tier *tier, u64 old, u64 cur)
{
	return tier->type->ops->relabelled && tier->type->ops->relabelled(tier, old, cur);
}

/* The tier has a volatile cache: dm sends it a flush bio of its own. */
static inline bool nswap2l_tier_has_flush(struct nswap2l_tier *tier)
{
	return tier->type->ops->map_flush;
}

/* Only for a tier where nswap2l_tier_has_flush(). */
static inline int nswap2l_tier_map_flush(struct nswap2l_tier *tier, struct bio *bio)
{
	return tier->type->ops->map_flush(tier, bio);
}

static inline void nswap2l_tier_emit_table_arg(struct nswap2l_tier *tier, char *result,
					       unsigned int maxlen, unsigned int *sz)
{
	tier->type->ops->emit_table_arg(tier, result, maxlen, sz);
}

static inline void nswap2l_tier_emit_status(struct nswap2l_tier *tier, char *result,
					    unsigned int maxlen, unsigned int *sz)
{
	if (tier->type->ops->emit_status)
		tier->type->ops->emit_status(tier, result, maxlen, sz);
}

/* 0 (an empty file) for a tier without servers. */
static inline ssize_t nswap2l_tier_show_servers(struct nswap2l_tier *tier, char *buf)
{
	return tier->type->ops->show_servers ? tier->type->ops->show_servers(tier, buf) : 0;
}

/* -ENOTTY when the message is not the tier's, or it takes none. */
static inline int nswap2l_tier_message(struct nswap2l_tier *tier, unsigned int argc, char **argv)
{
	return tier->type->ops->message ? tier->type->ops->message(tier, argc, argv) : -ENOTTY;
}

#endif /* NSWAP2L_TIER_H */
