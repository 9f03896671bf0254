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
 *   bits  4-7   reserved for redundancy and migration state: a page with a
 *               second home or in a parity group is flagged here and its
 *               extra homes live in a side table, so the common case stays
 *               at 8 bytes a page
 *   bits  8-63  slot within the tier (2^56 slots of 4 KiB)
 */
#define NSWAP2L_ENTRY_LOC_MASK		0x7ULL
#define NSWAP2L_ENTRY_REFERENCED	0x8ULL
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
		      const char *arg, struct nswap2l_tier **result);
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

	/* Send a read or write of @slot; returns a DM_MAPIO_* code. */
	int (*map)(struct nswap2l_tier *tier, struct bio *bio, u64 slot);
	/* Send an empty flush; NULL when the tier has no volatile cache. */
	int (*map_flush)(struct nswap2l_tier *tier, struct bio *bio);

	/* Table argument value, as dmsetup table shows it. */
	void (*emit_table_arg)(struct nswap2l_tier *tier, char *result,
			       unsigned int maxlen, unsigned int *sz);
	int (*iterate_devices)(struct dm_target *ti, struct nswap2l_tier *tier,
			       iterate_devices_callout_fn fn, void *data);
};

/* A kind of tier, named by its table key ("flash=..."). */
struct nswap2l_tier_type {
	const char *name;
	enum nswap2l_tier_id id;
	const struct nswap2l_tier_ops *ops;
	/* Tell the device which slots no longer hold data (SSDs want this). */
	bool discard_freed_slots;
};

extern const struct nswap2l_tier_type nswap2l_flash_tier;
extern const struct nswap2l_tier_type nswap2l_disk_tier;

/* Common part of every tier; counters are in pages. */
struct nswap2l_tier {
	const struct nswap2l_tier_type *type;
	u64 capacity;
	atomic64_t used;
	atomic64_t discards;
};

static inline u64 nswap2l_tier_free(struct nswap2l_tier *tier)
{
	s64 used = atomic64_read(&tier->used);

	return used >= (s64)tier->capacity ? 0 : tier->capacity - used;
}

/* Block-device tiers (tier_block.c), shared by flash and disk. */
extern const struct nswap2l_tier_ops nswap2l_block_tier_ops;

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
