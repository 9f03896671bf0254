/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-nswap2l: what every part shares: pages, map entries, bio lists,
 * table-load failures, and the tier interface (tier.h).
 */
#ifndef NSWAP2L_TYPES_H
#define NSWAP2L_TYPES_H

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

#endif /* NSWAP2L_TYPES_H */
