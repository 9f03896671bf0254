// SPDX-License-Identifier: GPL-2.0
/*
 * Mechanism shared by the tiers that are block devices (flash, disk): the
 * device is an array of 4 KiB slots, slot s at sector 8 * s, handed out by a
 * bitmap allocator.  Reads and writes are remapped bios, never copies.
 */
#include <linux/bitmap.h>
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "nswap2l.h"

struct block_tier {
	struct nswap2l_tier tier;
	struct dm_dev *dev;

	spinlock_t lock;		/* protects the bitmap and next_slot */
	unsigned long *slot_bitmap;	/* bit set = slot in use */
	u64 next_slot;			/* rotor: fill the device front to back */
};

static struct block_tier *to_block_tier(struct nswap2l_tier *tier)
{
	return container_of(tier, struct block_tier, tier);
}

static void block_tier_destroy(struct dm_target *ti, struct nswap2l_tier *tier)
{
	struct block_tier *bt = to_block_tier(tier);

	if (bt->dev)
		dm_put_device(ti, bt->dev);
	bitmap_free(bt->slot_bitmap);
	kfree(bt);
}

static int block_tier_create(struct dm_target *ti, const struct nswap2l_tier_type *type,
			     const char *path, const struct nswap2l_tier_options *opts,
			     struct nswap2l_tier **result)
{
	struct block_tier *bt;
	sector_t sectors;
	int r;

	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt) {
		ti->error = "Cannot allocate tier";
		return -ENOMEM;
	}
	bt->tier.type = type;
	spin_lock_init(&bt->lock);

	r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &bt->dev);
	if (r) {
		nswap2l_bad_table(ti, "Cannot open tier device",
				  "%s=%s: cannot open device (error %d)",
				  type->name, path, r);
		goto bad;
	}

	sectors = bdev_nr_sectors(bt->dev->bdev);
	bt->tier.capacity = NSWAP2L_SECTOR_TO_PAGE(sectors);
	if (!bt->tier.capacity) {
		nswap2l_bad_table(ti, "Tier device too small",
				  "%s=%s: device too small: %llu sectors, need at least %u",
				  type->name, path, (unsigned long long)sectors,
				  NSWAP2L_PAGE_SECTORS);
		r = -EINVAL;
		goto bad;
	}

	bt->slot_bitmap = bitmap_zalloc(bt->tier.capacity, GFP_KERNEL);
	if (!bt->slot_bitmap) {
		ti->error = "Cannot allocate tier slot bitmap";
		r = -ENOMEM;
		goto bad;
	}

	*result = &bt->tier;
	return 0;
bad:
	block_tier_destroy(ti, &bt->tier);
	return r;
}

static int block_tier_alloc_slot(struct nswap2l_tier *tier, u64 *slot)
{
	struct block_tier *bt = to_block_tier(tier);
	unsigned long flags;
	unsigned long bit;

	spin_lock_irqsave(&bt->lock, flags);
	bit = find_next_zero_bit(bt->slot_bitmap, tier->capacity, bt->next_slot);
	if (bit >= tier->capacity)
		bit = find_first_zero_bit(bt->slot_bitmap, tier->capacity);
	if (bit >= tier->capacity) {
		spin_unlock_irqrestore(&bt->lock, flags);
		return -ENOSPC;
	}
	__set_bit(bit, bt->slot_bitmap);
	bt->next_slot = bit + 1;
	atomic64_inc(&tier->used);
	spin_unlock_irqrestore(&bt->lock, flags);

	*slot = bit;
	return 0;
}

/* Discard runs of consecutive slots with one request each. */
static void block_tier_discard_slots(struct block_tier *bt, const u64 *slots,
				     unsigned int nr)
{
	struct block_device *bdev = bt->dev->bdev;
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
		block_tier_discard_slots(bt, slots, nr);

	spin_lock_irqsave(&bt->lock, flags);
	for (i = 0; i < nr; i++)
		__clear_bit(slots[i], bt->slot_bitmap);
	atomic64_sub(nr, &tier->used);
	spin_unlock_irqrestore(&bt->lock, flags);
}

static int block_tier_map(struct nswap2l_tier *tier, struct bio *bio, u64 slot)
{
	struct block_tier *bt = to_block_tier(tier);
	sector_t in_page = bio->bi_iter.bi_sector & (NSWAP2L_PAGE_SECTORS - 1);

	bio_set_dev(bio, bt->dev->bdev);
	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(slot) + in_page;
	return DM_MAPIO_REMAPPED;
}

static int block_tier_map_flush(struct nswap2l_tier *tier, struct bio *bio)
{
	bio_set_dev(bio, to_block_tier(tier)->dev->bdev);
	return DM_MAPIO_REMAPPED;
}

static void block_tier_emit_table_arg(struct nswap2l_tier *tier, char *result,
				      unsigned int maxlen, unsigned int *sz_ptr)
{
	unsigned int sz = *sz_ptr;

	DMEMIT("%s", to_block_tier(tier)->dev->name);
	*sz_ptr = sz;
}

static int block_tier_iterate_devices(struct dm_target *ti, struct nswap2l_tier *tier,
				      iterate_devices_callout_fn fn, void *data)
{
	return fn(ti, to_block_tier(tier)->dev, 0,
		  NSWAP2L_PAGE_TO_SECTOR(tier->capacity), data);
}

const struct nswap2l_tier_ops nswap2l_block_tier_ops = {
	.create = block_tier_create,
	.destroy = block_tier_destroy,
	.alloc_slot = block_tier_alloc_slot,
	.free_slots = block_tier_free_slots,
	.map = block_tier_map,
	.map_flush = block_tier_map_flush,
	.emit_table_arg = block_tier_emit_table_arg,
	.iterate_devices = block_tier_iterate_devices,
};
