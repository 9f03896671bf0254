// SPDX-License-Identifier: GPL-2.0
/*
 * Mechanism shared by the tiers that are block devices (flash, disk): the
 * device is an array of 4 KiB slots, slot s at sector 8 * s, handed out by a
 * bitmap allocator in runs of consecutive slots, so that the pages of one
 * bio stay together.  Reads and writes are remapped bios, never copies.
 *
 * A tier uses no more slots than the mapped device has pages: a 20 TiB disk
 * under a 64 GiB device costs a bitmap of 64 GiB / 4 KiB bits.  A reload
 * that makes the device larger grows the bitmap.
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "map.h"

struct block_tier {
	struct nswap2l_tier tier;

	spinlock_t lock;		/* protects the bitmap, capacity and next_slot */
	unsigned long *slot_bitmap;	/* bit set = slot in use */
	u64 next_slot;			/* rotor: fill the device front to back */
};

/* A reload that gives the tier more slots. */
struct block_tier_growth {
	unsigned long *slot_bitmap;
	u64 capacity;
};

static struct block_tier *to_block_tier(struct nswap2l_tier *tier)
{
	return container_of(tier, struct block_tier, tier);
}

static unsigned long *alloc_slot_bitmap(u64 slots)
{
	return nswap2l_zalloc_large(BITS_TO_LONGS(slots) * sizeof(unsigned long));
}

static void block_tier_destroy(struct nswap2l_tier *tier)
{
	struct block_tier *bt = to_block_tier(tier);

	kvfree(bt->slot_bitmap);
	kfree(bt);
}

/* @dev is the table's reference, put by the table; the tier only borrows it. */
static int block_tier_create(struct dm_target *ti, const struct nswap2l_tier_type *type,
			     const char *path, struct dm_dev *dev,
			     const struct nswap2l_tier_options *opts,
			     struct nswap2l_tier **result)
{
	sector_t sectors = bdev_nr_sectors(dev->bdev);
	struct block_tier *bt;

	if (sectors < NSWAP2L_PAGE_SECTORS) {
		nswap2l_bad_table(ti, "Tier device too small",
				  "%s=%s: device too small: %llu sectors, need at least %u",
				  type->name, path, (unsigned long long)sectors,
				  NSWAP2L_PAGE_SECTORS);
		return -EINVAL;
	}
	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt) {
		ti->error = "Cannot allocate tier";
		return -ENOMEM;
	}
	bt->tier.type = type;
	bt->tier.dev = dev;
	bt->tier.capacity = nswap2l_block_slots(dev, opts->device_pages);
	bt->tier.run_stride = 1;
	spin_lock_init(&bt->lock);
	bt->slot_bitmap = alloc_slot_bitmap(bt->tier.capacity);
	if (!bt->slot_bitmap) {
		nswap2l_bad_table(ti, "Cannot allocate tier slot bitmap",
				  "%s=%s: cannot allocate the bitmap of %llu slots",
				  type->name, path, bt->tier.capacity);
		block_tier_destroy(&bt->tier);
		return -ENOMEM;
	}
	*result = &bt->tier;
	return 0;
}

static int block_tier_prepare_reload(struct nswap2l_tier *tier, struct dm_target *ti,
				     const char *path, struct dm_dev *dev,
				     const struct nswap2l_tier_options *opts, void **change)
{
	struct block_tier_growth *growth;
	u64 slots;

	if (dev->bdev != tier->dev->bdev) {
		nswap2l_bad_table(ti, "A reload must keep the tier devices",
				  "reload names %s=%s, but the live table's %s tier is %s: its pages would be lost",
				  tier->type->name, path, tier->type->name, tier->dev->name);
		return -EINVAL;
	}
	slots = nswap2l_block_slots(dev, opts->device_pages);
	if (slots <= tier->capacity)
		return 0;
	growth = kzalloc(sizeof(*growth), GFP_KERNEL);
	if (growth)
		growth->slot_bitmap = alloc_slot_bitmap(slots);
	if (!growth || !growth->slot_bitmap) {
		kfree(growth);
		nswap2l_bad_table(ti, "Cannot allocate tier slot bitmap",
				  "%s=%s: cannot allocate the bitmap of %llu slots",
				  tier->type->name, path, slots);
		return -ENOMEM;
	}
	growth->capacity = slots;
	*change = growth;
	return 0;
}

static void block_tier_cancel_reload(struct nswap2l_tier *tier, void *change)
{
	struct block_tier_growth *growth = change;

	kvfree(growth->slot_bitmap);
	kfree(growth);
}

static void block_tier_commit_reload(struct nswap2l_tier *tier, void *change)
{
	struct block_tier *bt = to_block_tier(tier);
	struct block_tier_growth *growth = change;
	unsigned long *old;

	spin_lock_irq(&bt->lock);
	old = bt->slot_bitmap;
	bitmap_copy(growth->slot_bitmap, old, tier->capacity);
	bt->slot_bitmap = growth->slot_bitmap;
	WRITE_ONCE(tier->capacity, growth->capacity);
	spin_unlock_irq(&bt->lock);
	growth->slot_bitmap = old;
	block_tier_cancel_reload(tier, growth);
}

/* The next free slot from the rotor and as many free ones after it as @nr allows. */
static int block_tier_alloc_slots(struct nswap2l_tier *tier, unsigned int nr, u64 *slot)
{
	struct block_tier *bt = to_block_tier(tier);
	unsigned long flags;
	unsigned long bit, end;

	spin_lock_irqsave(&bt->lock, flags);
	bit = find_next_zero_bit(bt->slot_bitmap, tier->capacity, bt->next_slot);
	if (bit >= tier->capacity)
		bit = find_first_zero_bit(bt->slot_bitmap, tier->capacity);
	if (bit >= tier->capacity) {
		spin_unlock_irqrestore(&bt->lock, flags);
		return -ENOSPC;
	}
	end = find_next_bit(bt->slot_bitmap, min_t(u64, tier->capacity, bit + nr), bit);
	bitmap_set(bt->slot_bitmap, bit, end - bit);
	bt->next_slot = end;
	atomic64_add(end - bit, &tier->used);
	spin_unlock_irqrestore(&bt->lock, flags);

	*slot = bit;
	return end - bit;
}

/* Discard runs of consecutive slots with one request each. */
static void block_tier_discard_slots(struct nswap2l_tier *tier, const u64 *slots,
				     unsigned int nr)
{
	struct block_device *bdev = tier->dev->bdev;
	unsigned int i, start = 0;

	if (!bdev_max_discard_sectors(bdev))
		return;

	for (i = 1; i <= nr; i++) {
		if (i < nr && slots[i] == slots[i - 1] + 1)
			continue;
		/* Best effort: a failed discard only costs the device some space. */
		blkdev_issue_discard(bdev, NSWAP2L_PAGE_TO_SECTOR(slots[start]),
				     NSWAP2L_PAGE_TO_SECTOR(i - start), GFP_NOIO);
		start = i;
	}
}

static void block_tier_free_slots(struct nswap2l_tier *tier, const u64 *slots,
				  unsigned int nr, bool written)
{
	struct block_tier *bt = to_block_tier(tier);
	unsigned long flags;
	unsigned int i;

	/* Before the slots can be handed out again, or the discard could eat new data. */
	if (written && tier->type->discard_freed_slots)
		block_tier_discard_slots(tier, slots, nr);

	spin_lock_irqsave(&bt->lock, flags);
	for (i = 0; i < nr; i++)
		__clear_bit(slots[i], bt->slot_bitmap);
	atomic64_sub(nr, &tier->used);
	spin_unlock_irqrestore(&bt->lock, flags);
}

static int block_tier_map(struct nswap2l_tier *tier, struct bio *bio, u64 slot)
{
	sector_t in_page = bio->bi_iter.bi_sector & (NSWAP2L_PAGE_SECTORS - 1);

	bio_set_dev(bio, tier->dev->bdev);
	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(slot) + in_page;
	return DM_MAPIO_REMAPPED;
}

static int block_tier_map_flush(struct nswap2l_tier *tier, struct bio *bio)
{
	bio_set_dev(bio, tier->dev->bdev);
	return DM_MAPIO_REMAPPED;
}

static void block_tier_emit_table_arg(struct nswap2l_tier *tier, char *result,
				      unsigned int maxlen, unsigned int *sz_ptr)
{
	unsigned int sz = *sz_ptr;

	DMEMIT("%s", tier->dev->name);
	*sz_ptr = sz;
}

const struct nswap2l_tier_ops nswap2l_block_tier_ops = {
	.create = block_tier_create,
	.destroy = block_tier_destroy,
	.prepare_reload = block_tier_prepare_reload,
	.commit_reload = block_tier_commit_reload,
	.cancel_reload = block_tier_cancel_reload,
	.alloc_slots = block_tier_alloc_slots,
	.free_slots = block_tier_free_slots,
	.map = block_tier_map,
	.map_flush = block_tier_map_flush,
	.emit_table_arg = block_tier_emit_table_arg,
};
