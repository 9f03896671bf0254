// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: a device-mapper target presenting one block device over
 * Network RAM, flash and disk tiers (the interface layer).
 *
 * Every 4 KiB page of the device has an 8-byte map entry naming the tier and
 * slot that hold it.  Reads and writes of a mapped page are remapped to the
 * tier; the first write of a page asks the placement policy for a tier and
 * allocates a slot there.  Discard frees slots.  Contents are not persistent:
 * the map lives in RAM, as a swap device or a scratch filesystem needs.
 *
 * Table line:
 *   <start> <len> nswap2l <#args> [netram=<addr:port>[,...] key=<keyspec>]
 *                                 [flash=<dev>] [disk=<dev>] [timeout=<s>]
 *                                 [placement=<policy>] [overcommit]
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "nswap2l.h"

/* Pages a discard clears before it waits once for in-flight I/O and frees them. */
#define NSWAP2L_FREE_BATCH	512

#define NSWAP2L_NO_EPOCH	0xff

/* Per-bio state. */
struct nswap2l_bio {
	u64 page;
	u64 slot;		/* where the bio was sent: tier and slot */
	u8 tier;
	u8 epoch;		/* for end_io */
};

static const struct nswap2l_tier_type *const tier_types[] = {
	&nswap2l_netram_tier,
	&nswap2l_flash_tier,
	&nswap2l_disk_tier,
};

void nswap2l_bad_table(struct dm_target *ti, const char *error, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	DMERR("%s: %pV", dm_table_device_name(ti->table), &vaf);
	va_end(args);
	ti->error = (char *)error;
}

/*----------------------------------------------------------------
 * Epochs
 *--------------------------------------------------------------*/
static unsigned int epoch_enter(struct nswap2l_epochs *e)
{
	unsigned int epoch;

	for (;;) {
		epoch = READ_ONCE(e->current_epoch);
		atomic_inc(&e->inflight[epoch]);
		/* Pairs with the barrier in nswap2l_wait_inflight(). */
		smp_mb__after_atomic();
		if (READ_ONCE(e->current_epoch) == epoch)
			return epoch;
		/* Raced with a flip: join the new epoch instead. */
		if (atomic_dec_and_test(&e->inflight[epoch]) && wq_has_sleeper(&e->drained))
			wake_up(&e->drained);
	}
}

static void epoch_exit(struct nswap2l_epochs *e, unsigned int epoch)
{
	if (atomic_dec_and_test(&e->inflight[epoch]) && wq_has_sleeper(&e->drained))
		wake_up(&e->drained);
}

/* Wait until every bio that started before this call has completed. */
void nswap2l_wait_inflight(struct nswap2l_epochs *e)
{
	unsigned int old = e->current_epoch;

	WRITE_ONCE(e->current_epoch, old ^ 1);
	smp_mb();
	wait_event(e->drained, !atomic_read(&e->inflight[old]));
}

/*----------------------------------------------------------------
 * Discard: runs on the worker, because it waits for in-flight I/O and
 * may discard on the tier devices.
 *--------------------------------------------------------------*/
static void release_freed_slots(struct nswap2l *nc)
{
	int id;

	nswap2l_wait_inflight(&nc->epochs);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!nc->nr_freed[id])
			continue;
		tier->type->ops->free_slots(tier, nc->freed[id], nc->nr_freed[id], true);
		atomic64_add(nc->nr_freed[id], &tier->discards);
		nc->nr_freed[id] = 0;
	}
}

static void discard_pages(struct nswap2l *nc, u64 page, u64 end)
{
	bool pending = false;

	for (; page < end; page++) {
		enum nswap2l_tier_id id;
		u64 entry;

		if (!atomic64_read(&nc->map[page]))
			continue;
		entry = atomic64_xchg(&nc->map[page], 0);
		if (!entry)
			continue;

		id = nswap2l_entry_tier(entry);
		nc->freed[id][nc->nr_freed[id]++] = nswap2l_entry_slot(entry);
		pending = true;
		if (nc->nr_freed[id] == NSWAP2L_FREE_BATCH) {
			release_freed_slots(nc);
			pending = false;
		}
		cond_resched();
	}
	if (pending)
		release_freed_slots(nc);
}

static void discard_work(struct work_struct *work)
{
	struct nswap2l *nc = container_of(work, struct nswap2l, discard_work);
	struct bio_list bios;
	struct bio *bio;

	spin_lock_irq(&nc->discard_lock);
	bios = nc->discard_bios;
	bio_list_init(&nc->discard_bios);
	spin_unlock_irq(&nc->discard_lock);

	while ((bio = bio_list_pop(&bios))) {
		sector_t start = dm_target_offset(nc->ti, bio->bi_iter.bi_sector);

		/* Only whole pages lose their data; partial ones are left alone. */
		discard_pages(nc, NSWAP2L_SECTOR_TO_PAGE(start + NSWAP2L_PAGE_SECTORS - 1),
			      NSWAP2L_SECTOR_TO_PAGE(start + bio_sectors(bio)));
		bio_endio(bio);
	}
}

static void defer_discard(struct nswap2l *nc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&nc->discard_lock, flags);
	bio_list_add(&nc->discard_bios, bio);
	spin_unlock_irqrestore(&nc->discard_lock, flags);
	queue_work(nc->wq, &nc->discard_work);
}

/*----------------------------------------------------------------
 * Bio path
 *--------------------------------------------------------------*/

int nswap2l_alloc_home(struct nswap2l *nc, u64 page, u64 *entry)
{
	struct nswap2l_placement *placement;
	unsigned long tried = 0;
	int id, r = -ENOSPC;

	rcu_read_lock();
	placement = rcu_dereference(nc->placement);
	while ((id = placement->next_tier(placement, page, tried)) >= 0) {
		struct nswap2l_tier *tier = nc->tiers[id];
		u64 slot;

		tried |= BIT(id);
		if (!tier->type->ops->alloc_slot(tier, &slot)) {
			*entry = nswap2l_entry(id, slot);
			r = 0;
			break;
		}
	}
	rcu_read_unlock();
	return r;
}

/*
 * Give @page a new home, replacing map entry @expected (0 for a page written
 * for the first time).  Returns 0 with the new entry in *@entry; -EAGAIN if
 * the entry changed meanwhile (a concurrent write or discard), with the
 * current entry in *@entry; -ENOSPC if no tier has room.
 */
static int place_page(struct nswap2l *nc, u64 page, u64 expected, u64 *entry)
{
	struct nswap2l_tier *tier;
	u64 old, slot;
	int r;

	r = nswap2l_alloc_home(nc, page, entry);
	if (r)
		return r;
	old = atomic64_cmpxchg(&nc->map[page], expected, *entry);
	if (old == expected)
		return 0;
	tier = nc->tiers[nswap2l_entry_tier(*entry)];
	slot = nswap2l_entry_slot(*entry);
	tier->type->ops->free_slots(tier, &slot, 1, false);
	*entry = old;
	return -EAGAIN;
}

/*
 * Set the referenced bit and, for a write, clear the migrating bit so that
 * the mover does not install a copy older than this write.  Returns the entry
 * to send the bio to.  Test first: most accesses find the bits right and need
 * not dirty the line.  cmpxchg, not or: a lone bit must not resurrect an
 * entry a discard cleared (the epoch keeps the old slot valid for this bio).
 */
static u64 note_access(struct nswap2l *nc, u64 page, u64 entry, bool write)
{
	u64 clear = write ? NSWAP2L_ENTRY_MIGRATING : 0;

	for (;;) {
		u64 want = (entry | NSWAP2L_ENTRY_REFERENCED) & ~clear;
		u64 old;

		if (want == entry)
			return entry;
		old = atomic64_cmpxchg(&nc->map[page], entry, want);
		if (old == entry || !old)
			return entry;
		entry = old;	/* flagged, unflagged or moved meanwhile: look again */
	}
}

static int map_flush(struct nswap2l *nc, struct bio *bio)
{
	struct nswap2l_tier *tier = nc->flush_tiers[dm_bio_get_target_bio_nr(bio)];

	return tier->type->ops->map_flush(tier, bio);
}

static int nswap2l_map(struct dm_target *ti, struct bio *bio)
{
	struct nswap2l *nc = ti->private;
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	struct nswap2l_tier *tier;
	enum nswap2l_tier_id id;
	u64 page, entry;

	nb->epoch = NSWAP2L_NO_EPOCH;

	if (bio->bi_opf & REQ_PREFLUSH)
		return map_flush(nc, bio);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		break;
	case REQ_OP_DISCARD:
		defer_discard(nc, bio);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}

	page = NSWAP2L_SECTOR_TO_PAGE(dm_target_offset(ti, bio->bi_iter.bi_sector));
	nb->epoch = epoch_enter(&nc->epochs);

	entry = atomic64_read(&nc->map[page]);
	if (!entry) {
		if (bio_data_dir(bio) == READ) {
			zero_fill_bio(bio);
			this_cpu_inc(nc->stats->zero_reads);
			bio_endio(bio);
			return DM_MAPIO_SUBMITTED;
		}
		/* -EAGAIN: a concurrent write placed it first; use that home. */
		if (place_page(nc, page, 0, &entry) == -ENOSPC) {
			atomic64_inc(&nc->nospace_errors);
			bio->bi_status = BLK_STS_NOSPC;
			bio_endio(bio);
			return DM_MAPIO_SUBMITTED;
		}
	}
	entry = note_access(nc, page, entry, bio_data_dir(bio) == WRITE);
	id = nswap2l_entry_tier(entry);
	if (bio_data_dir(bio) == READ)
		this_cpu_inc(nc->stats->reads[id]);
	else
		this_cpu_inc(nc->stats->writes[id]);
	tier = nc->tiers[id];
	nb->page = page;
	nb->tier = id;
	nb->slot = nswap2l_entry_slot(entry);
	return tier->type->ops->map(tier, bio, nb->slot);
}

/*
 * A tier gave back a write it could not store (full, or its server failed):
 * place the page elsewhere and send the bio there.  Returns true if the bio
 * went out again; false to complete it with *@error.
 */
static bool reroute_write(struct nswap2l *nc, struct bio *bio, blk_status_t *error)
{
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));
	struct nswap2l_tier *tier = nc->tiers[nb->tier];
	u64 entry;
	int r;

	atomic64_inc(&nc->rerouted_writes);
	for (;;) {
		entry = atomic64_read(&nc->map[nb->page]);
		if (!entry) {
			/* Discarded meanwhile: the write lost the race, nothing to keep. */
			*error = BLK_STS_OK;
			return false;
		}
		if (nswap2l_entry_tier(entry) != nb->tier ||
		    nswap2l_entry_slot(entry) != nb->slot)
			break;	/* another write already moved the page: follow it */

		/* The same tier may still have room elsewhere (another server). */
		r = place_page(nc, nb->page, entry, &entry);
		if (!r) {
			tier->type->ops->free_slots(tier, &nb->slot, 1, true);
			break;
		}
		if (r == -ENOSPC) {
			atomic64_inc(&nc->nospace_errors);
			*error = BLK_STS_NOSPC;
			return false;
		}
		/* -EAGAIN: the referenced bit, a discard or a write changed it; look again. */
	}
	nb->tier = nswap2l_entry_tier(entry);
	nb->slot = nswap2l_entry_slot(entry);
	this_cpu_inc(nc->stats->writes[nb->tier]);
	tier = nc->tiers[nb->tier];
	bio->bi_status = BLK_STS_OK;
	if (tier->type->ops->map(tier, bio, nb->slot) == DM_MAPIO_REMAPPED)
		submit_bio_noacct(bio);
	return true;
}

static int nswap2l_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct nswap2l *nc = ti->private;
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

	if (*error == NSWAP2L_STS_TRY_ELSEWHERE && nb->epoch != NSWAP2L_NO_EPOCH &&
	    bio_data_dir(bio) == WRITE && reroute_write(nc, bio, error))
		return DM_ENDIO_INCOMPLETE;
	if (nb->epoch != NSWAP2L_NO_EPOCH)
		epoch_exit(&nc->epochs, nb->epoch);
	return DM_ENDIO_DONE;
}
/*----------------------------------------------------------------
 * Constructor and destructor
 *--------------------------------------------------------------*/

/* Copes with a half-built object: every constructor failure ends here. */
static void nswap2l_destroy(struct nswap2l *nc)
{
	struct nswap2l_placement *placement;
	int id;

	nswap2l_sysfs_remove(nc);
	nswap2l_mover_stop(nc);
	if (nc->wq)
		destroy_workqueue(nc->wq);
	placement = rcu_dereference_protected(nc->placement, 1);
	if (placement)
		placement->destroy(placement);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (nc->tiers[id])
			nc->tiers[id]->type->ops->destroy(nc->ti, nc->tiers[id]);
		kvfree(nc->freed[id]);
	}
	/* After the tiers: a tier may still hand jobs in until it is gone. */
	nswap2l_mover_destroy(nc);
	kvfree(nc->map);
	free_percpu(nc->stats);
	kfree(nc->key_spec);
	kfree(nc);
}

static const struct nswap2l_tier_type *find_tier_type(const char *key)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tier_types); i++)
		if (!strcmp(tier_types[i]->name, key))
			return tier_types[i];
	return NULL;
}

static int note_tier_arg(struct nswap2l *nc, const struct nswap2l_tier_type *type,
			 const char *value, const char **tier_args)
{
	struct dm_target *ti = nc->ti;

	if (tier_args[type->id]) {
		nswap2l_bad_table(ti, "Tier given twice", "%s= given twice", type->name);
		return -EINVAL;
	}
	if (!*value) {
		nswap2l_bad_table(ti, "Tier without a device", "%s= names no device",
				  type->name);
		return -EINVAL;
	}
	tier_args[type->id] = value;
	return 0;
}

static int parse_option(struct nswap2l *nc, const char *key, const char *value)
{
	struct nswap2l_tier_options *opts = &nc->tier_options;
	struct dm_target *ti = nc->ti;

	if (!strcmp(key, "key")) {
		if (nc->key_spec) {
			nswap2l_bad_table(ti, "key given twice", "key= given twice");
			return -EINVAL;
		}
		nc->key_spec = kstrdup(value, GFP_KERNEL);
		if (!nc->key_spec) {
			ti->error = "Cannot allocate key description";
			return -ENOMEM;
		}
		opts->key_spec = nc->key_spec;
		return 0;
	}
	if (!strcmp(key, "timeout")) {
		if (kstrtouint(value, 10, &opts->timeout_secs) || !opts->timeout_secs ||
		    opts->timeout_secs > 3600) {
			nswap2l_bad_table(ti, "Bad timeout",
					  "timeout=%s: need 1..3600 seconds", value);
			return -EINVAL;
		}
		return 0;
	}
	nswap2l_bad_table(ti, "Unknown option", "unknown option '%s='", key);
	return -EINVAL;
}

/* Tiers are created once every option they may need has been read. */
static int create_tiers(struct nswap2l *nc, const char **tier_args)
{
	struct dm_target *ti = nc->ti;
	unsigned int i;
	int r;

	if (nc->key_spec && !tier_args[NSWAP2L_TIER_NETRAM]) {
		nswap2l_bad_table(ti, "key= without netram=",
				  "key= is the Network RAM key, but no netram= is given");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(tier_types); i++) {
		const struct nswap2l_tier_type *type = tier_types[i];

		if (!tier_args[type->id])
			continue;
		r = type->ops->create(ti, type, tier_args[type->id], &nc->tier_options,
				      &nc->tiers[type->id]);
		if (r)
			return r;
		nc->tiers[type->id]->nc = nc;
	}
	return 0;
}

static int parse_table_args(struct nswap2l *nc, struct dm_arg_set *as,
		      const char **placement_name)
{
	static const struct dm_arg nr_args = {
		0, 16, "Invalid number of arguments: need <#args> and that many arguments"
	};
	const char *tier_args[NSWAP2L_NR_TIERS] = { NULL };
	struct dm_target *ti = nc->ti;
	unsigned int argc;
	int r;

	r = dm_read_arg_group(&nr_args, as, &argc, &ti->error);
	if (r)
		return r;
	if (as->argc != argc) {
		nswap2l_bad_table(ti, "Too many arguments",
				  "%u arguments where <#args> announces %u",
				  as->argc, argc);
		return -EINVAL;
	}

	while (argc--) {
		const struct nswap2l_tier_type *type;
		char *arg = (char *)dm_shift_arg(as);
		char *value = strchr(arg, '=');

		if (!strcmp(arg, "overcommit")) {
			if (nc->overcommit) {
				nswap2l_bad_table(ti, "overcommit given twice",
						  "overcommit given twice");
				return -EINVAL;
			}
			nc->overcommit = true;
			continue;
		}
		if (!value) {
			nswap2l_bad_table(ti, "Unknown option", "unknown option '%s'", arg);
			return -EINVAL;
		}
		*value++ = '\0';

		if (!strcmp(arg, "placement")) {
			if (*placement_name) {
				nswap2l_bad_table(ti, "placement given twice",
						  "placement= given twice");
				return -EINVAL;
			}
			*placement_name = value;
			continue;
		}
		type = find_tier_type(arg);
		r = type ? note_tier_arg(nc, type, value, tier_args) :
			   parse_option(nc, arg, value);
		if (r)
			return r;
	}
	return create_tiers(nc, tier_args);
}

struct seen_devices {
	struct dm_dev *devs[NSWAP2L_NR_TIERS];
	unsigned int nr;
	struct dm_dev *duplicate;
};

static int note_device(struct dm_target *ti, struct dm_dev *dev, sector_t start,
		       sector_t len, void *data)
{
	struct seen_devices *seen = data;
	unsigned int i;

	for (i = 0; i < seen->nr; i++)
		if (seen->devs[i]->bdev == dev->bdev) {
			seen->duplicate = dev;
			return -EINVAL;
		}
	seen->devs[seen->nr++] = dev;
	return 0;
}

static int iterate_tier_devices(struct nswap2l *nc, iterate_devices_callout_fn fn,
				void *data)
{
	int id, r = 0;

	for (id = 0; id < NSWAP2L_NR_TIERS && !r; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier && tier->type->ops->iterate_devices)
			r = tier->type->ops->iterate_devices(nc->ti, tier, fn, data);
	}
	return r;
}

/* Two tiers on one device would hand out the same sectors twice. */
static int check_distinct_devices(struct nswap2l *nc)
{
	struct seen_devices seen = { .nr = 0 };
	int r;

	r = iterate_tier_devices(nc, note_device, &seen);
	if (r)
		nswap2l_bad_table(nc->ti, "Tiers share a device",
				  "two tiers name the same device %s",
				  seen.duplicate->name);
	return r;
}

static int check_capacity(struct nswap2l *nc)
{
	struct dm_target *ti = nc->ti;
	u64 capacity = 0;
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			capacity += nc->tiers[id]->capacity;

	if (!capacity) {
		nswap2l_bad_table(ti, "No tier given",
				  "no tier given: need at least one of netram=<servers>, flash=<dev>, disk=<dev>");
		return -EINVAL;
	}
	if (nc->nr_pages > capacity && !nc->overcommit) {
		nswap2l_bad_table(ti, "Device larger than its tiers",
				  "device of %llu pages is larger than its tiers' %llu pages (add 'overcommit' to allow)",
				  nc->nr_pages, capacity);
		return -EINVAL;
	}
	return 0;
}

static int nswap2l_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	const char *placement_name = NULL;
	struct nswap2l_placement *placement;
	struct nswap2l *nc;
	int id, r;

	nc = kzalloc(sizeof(*nc), GFP_KERNEL);
	if (!nc) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}
	nc->ti = ti;
	nc->tier_options.timeout_secs = NSWAP2L_DEFAULT_TIMEOUT_SECS;
	mutex_init(&nc->placement_mutex);
	init_waitqueue_head(&nc->epochs.drained);
	spin_lock_init(&nc->discard_lock);
	bio_list_init(&nc->discard_bios);
	INIT_WORK(&nc->discard_work, discard_work);

	if (!ti->len || ti->len & (NSWAP2L_PAGE_SECTORS - 1)) {
		nswap2l_bad_table(ti, "Length must be a non-zero multiple of 8 sectors",
				  "length %llu sectors is not a non-zero multiple of %u sectors (4 KiB)",
				  (unsigned long long)ti->len, NSWAP2L_PAGE_SECTORS);
		r = -EINVAL;
		goto bad;
	}
	nc->nr_pages = NSWAP2L_SECTOR_TO_PAGE(ti->len);

	r = parse_table_args(nc, &as, &placement_name);
	if (r)
		goto bad;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (nc->tiers[id] && nc->tiers[id]->type->ops->map_flush)
			nc->flush_tiers[nc->nr_flush_tiers++] = nc->tiers[id];
	}
	r = check_capacity(nc);
	if (r)
		goto bad;
	r = check_distinct_devices(nc);
	if (r)
		goto bad;

	if (!placement_name)
		placement_name = NSWAP2L_DEFAULT_PLACEMENT;
	placement = nswap2l_placement_create(placement_name, nc->tiers);
	if (!placement) {
		r = -EINVAL;
		nswap2l_bad_table(ti, "Unknown placement policy",
				  "placement=%s: unknown policy ('help' message lists them)",
				  placement_name);
		goto bad;
	}
	if (IS_ERR(placement)) {
		r = PTR_ERR(placement);
		ti->error = "Cannot allocate placement policy";
		goto bad;
	}
	RCU_INIT_POINTER(nc->placement, placement);

	r = -ENOMEM;
	nc->stats = alloc_percpu(struct nswap2l_io_stats);
	if (!nc->stats) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	nc->map = kvcalloc(nc->nr_pages, sizeof(*nc->map), GFP_KERNEL);
	if (!nc->map) {
		nswap2l_bad_table(ti, "Cannot allocate page map",
				  "cannot allocate the map of %llu pages", nc->nr_pages);
		goto bad;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (!nc->tiers[id])
			continue;
		nc->freed[id] = kvcalloc(NSWAP2L_FREE_BATCH, sizeof(u64), GFP_KERNEL);
		if (!nc->freed[id]) {
			ti->error = "Cannot allocate discard batch";
			goto bad;
		}
	}

	nc->wq = alloc_workqueue("nswap2l-%s", WQ_MEM_RECLAIM, 1,
				 dm_table_device_name(ti->table));
	if (!nc->wq) {
		ti->error = "Cannot allocate workqueue";
		goto bad;
	}
	r = nswap2l_mover_create(nc);
	if (r) {
		ti->error = "Cannot allocate page mover";
		goto bad;
	}

	r = dm_set_target_max_io_len(ti, NSWAP2L_PAGE_SECTORS);
	if (r)
		goto bad;
	ti->num_flush_bios = nc->nr_flush_tiers;
	ti->num_discard_bios = 1;
	ti->discards_supported = true;
	ti->per_io_data_size = sizeof(struct nswap2l_bio);
	/* Swap must not queue more bios than it can be given memory for. */
	ti->limit_swap_bios = true;
	ti->private = nc;
	return 0;

bad:
	nswap2l_destroy(nc);
	return r;
}

static void nswap2l_dtr(struct dm_target *ti)
{
	nswap2l_destroy(ti->private);
}

/*----------------------------------------------------------------
 * Suspend, status, messages, limits
 *--------------------------------------------------------------*/
static void nswap2l_postsuspend(struct dm_target *ti)
{
	struct nswap2l *nc = ti->private;

	nswap2l_sysfs_remove(nc);
	flush_workqueue(nc->wq);
	nswap2l_mover_flush(nc);
}

static void nswap2l_resume(struct dm_target *ti)
{
	nswap2l_sysfs_add(ti->private);
}

static void emit_table(struct nswap2l *nc, char *result, unsigned int maxlen,
		       unsigned int *sz_ptr)
{
	const char *placement;
	bool default_placement, default_timeout;
	unsigned int sz = *sz_ptr;
	unsigned int nr_args;
	int id;

	placement = nswap2l_placement_name(nc);
	default_placement = !strcmp(placement, NSWAP2L_DEFAULT_PLACEMENT);
	default_timeout = nc->tier_options.timeout_secs == NSWAP2L_DEFAULT_TIMEOUT_SECS;
	nr_args = !default_placement + nc->overcommit + !!nc->key_spec + !default_timeout;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		nr_args += !!nc->tiers[id];

	DMEMIT("%u", nr_args);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		DMEMIT(" %s=", tier->type->name);
		tier->type->ops->emit_table_arg(tier, result, maxlen, &sz);
	}
	/* Only the key's description: the key itself stays in the keyring. */
	if (nc->key_spec)
		DMEMIT(" key=%s", nc->key_spec);
	if (!default_timeout)
		DMEMIT(" timeout=%u", nc->tier_options.timeout_secs);
	if (!default_placement)
		DMEMIT(" placement=%s", placement);
	if (nc->overcommit)
		DMEMIT(" overcommit");
	*sz_ptr = sz;
}

static void sum_io_stats(struct nswap2l *nc, struct nswap2l_io_stats *sum)
{
	int cpu, id;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct nswap2l_io_stats *s = per_cpu_ptr(nc->stats, cpu);

		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			sum->reads[id] += s->reads[id];
			sum->writes[id] += s->writes[id];
		}
		sum->zero_reads += s->zero_reads;
	}
}

static void nswap2l_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct nswap2l *nc = ti->private;
	struct nswap2l_io_stats io;
	unsigned int sz = 0, nr_tiers = 0;
	int id;

	switch (type) {
	case STATUSTYPE_INFO:
		sum_io_stats(nc, &io);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			nr_tiers += !!nc->tiers[id];
		DMEMIT("%s %u", nswap2l_placement_name(nc), nr_tiers);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (!tier)
				continue;
			DMEMIT(" %s %llu %lld %llu %llu %lld", tier->type->name,
			       tier->capacity, atomic64_read(&tier->used),
			       io.reads[id], io.writes[id], atomic64_read(&tier->discards));
		}
		DMEMIT(" %llu %lld %lld %lld", io.zero_reads, atomic64_read(&nc->nospace_errors),
		       atomic64_read(&nc->rerouted_writes), atomic64_read(&nc->moved_pages));
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (tier && tier->type->ops->emit_status)
				tier->type->ops->emit_status(tier, result, maxlen, &sz);
		}
		break;
	case STATUSTYPE_TABLE:
		emit_table(nc, result, maxlen, &sz);
		break;
	default:
		break;
	}
}

/* By message or sysfs. */
int nswap2l_set_placement(struct nswap2l *nc, const char *name)
{
	struct nswap2l_placement *new, *old;

	new = nswap2l_placement_create(name, nc->tiers);
	if (!new) {
		DMERR("%s: placement %s: unknown policy ('help' lists them)",
		      dm_table_device_name(nc->ti->table), name);
		return -EINVAL;
	}
	if (IS_ERR(new))
		return PTR_ERR(new);
	mutex_lock(&nc->placement_mutex);
	old = rcu_replace_pointer(nc->placement, new, lockdep_is_held(&nc->placement_mutex));
	mutex_unlock(&nc->placement_mutex);
	synchronize_rcu();
	old->destroy(old);
	return 0;
}

/* Type names are static: safe to use after the policy is replaced. */
const char *nswap2l_placement_name(struct nswap2l *nc)
{
	const char *name;

	rcu_read_lock();
	name = rcu_dereference(nc->placement)->type->name;
	rcu_read_unlock();
	return name;
}

ssize_t nswap2l_show_tiers(struct nswap2l *nc, char *buf)
{
	struct nswap2l_io_stats io;
	ssize_t len = 0;
	int id;

	sum_io_stats(nc, &io);
	len += sysfs_emit_at(buf, len, "tier capacity used reads writes discards\n");
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier)
			len += sysfs_emit_at(buf, len, "%s %llu %lld %llu %llu %lld\n",
					     tier->type->name, READ_ONCE(tier->capacity),
					     atomic64_read(&tier->used), io.reads[id],
					     io.writes[id], atomic64_read(&tier->discards));
	}
	return len;
}

static int nswap2l_message(struct dm_target *ti, unsigned int argc, char **argv,
			   char *result, unsigned int maxlen)
{
	struct nswap2l *nc = ti->private;
	unsigned int sz = 0;

	int id, r;

	if (argc == 1 && !strcasecmp(argv[0], "help")) {
		DMEMIT("help                      this list\n");
		DMEMIT("placement <policy>        place new pages with <policy>:");
		nswap2l_placement_list(result, maxlen, &sz);
		DMEMIT("\n");
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			if (nc->tiers[id] && nc->tiers[id]->type->messages_help)
				DMEMIT("%s", nc->tiers[id]->type->messages_help);
		return 1;
	}
	if (argc == 2 && !strcasecmp(argv[0], "placement"))
		return nswap2l_set_placement(nc, argv[1]);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier && tier->type->ops->message) {
			r = tier->type->ops->message(tier, argc, argv);
			if (r != -ENOTTY)
				return r;
		}
	}

	DMERR("%s: unknown message '%s' with %u argument(s); try 'help'",
	      dm_table_device_name(ti->table), argc ? argv[0] : "", argc ? argc - 1 : 0);
	return -EINVAL;
}

static int nswap2l_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	return iterate_tier_devices(ti->private, fn, data);
}

static void nswap2l_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	limits->logical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->physical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->io_min = 1 << NSWAP2L_PAGE_SHIFT;
	/* Discards only drop map entries, so any size is cheap. */
	limits->discard_granularity = 1 << NSWAP2L_PAGE_SHIFT;
	nswap2l_set_max_discard_sectors(limits, UINT_MAX >> SECTOR_SHIFT);
}

static struct target_type nswap2l_target = {
	.name = "nswap2l",
	.version = {0, 1, 0},
	.module = THIS_MODULE,
	.ctr = nswap2l_ctr,
	.dtr = nswap2l_dtr,
	.map = nswap2l_map,
	.end_io = nswap2l_end_io,
	.postsuspend = nswap2l_postsuspend,
	.resume = nswap2l_resume,
	.status = nswap2l_status,
	.message = nswap2l_message,
	.iterate_devices = nswap2l_iterate_devices,
	.io_hints = nswap2l_io_hints,
};

static int __init dm_nswap2l_init(void)
{
	int r;

	r = nswap2l_policies_init();
	if (r)
		return r;
	r = nswap2l_sysfs_init();
	if (r)
		goto bad_sysfs;
	r = dm_register_target(&nswap2l_target);
	if (r) {
		DMERR("register failed %d", r);
		goto bad_register;
	}
	return 0;

bad_register:
	nswap2l_sysfs_exit();
bad_sysfs:
	nswap2l_policies_exit();
	return r;
}

static void __exit dm_nswap2l_exit(void)
{
	dm_unregister_target(&nswap2l_target);
	nswap2l_sysfs_exit();
	nswap2l_policies_exit();
}

module_init(dm_nswap2l_init);
module_exit(dm_nswap2l_exit);

MODULE_DESCRIPTION(DM_NAME " target over Network RAM, flash and disk tiers");
MODULE_AUTHOR("dm-nswap2l developers");
MODULE_LICENSE("GPL");
