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
 *   <start> <len> nswap2l <#args> [flash=<dev>] [disk=<dev>]
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

#define NSWAP2L_NO_EPOCH	0xff

/* Counted on every bio: per CPU, so that CPUs do not share a cache line. */
struct nswap2l_io_stats {
	u64 reads[NSWAP2L_NR_TIERS];
	u64 writes[NSWAP2L_NR_TIERS];
	u64 zero_reads;				/* reads of never-written pages */
};

/* Per-bio state, for end_io. */
struct nswap2l_bio {
	u8 epoch;
};

struct nswap2l {
	struct dm_target *ti;
	u64 nr_pages;
	atomic64_t *map;			/* one entry per page, see nswap2l.h */

	struct nswap2l_tier *tiers[NSWAP2L_NR_TIERS];	/* by id, NULL if absent */
	struct nswap2l_tier *flush_tiers[NSWAP2L_NR_TIERS];
	unsigned int nr_flush_tiers;

	struct nswap2l_placement __rcu *placement;
	bool overcommit;

	struct nswap2l_epochs epochs;

	struct workqueue_struct *wq;
	struct work_struct discard_work;
	spinlock_t discard_lock;		/* protects discard_bios */
	struct bio_list discard_bios;
	/* Slots cleared from the map, awaiting the epoch drain; worker only. */
	u64 *freed[NSWAP2L_NR_TIERS];
	unsigned int nr_freed[NSWAP2L_NR_TIERS];

	struct nswap2l_io_stats __percpu *stats;
	atomic64_t nospace_errors;		/* writes that found no free slot */
};

static const struct nswap2l_tier_type *const tier_types[] = {
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
		/* Pairs with the barrier in epoch_flip_and_wait(). */
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
static void epoch_flip_and_wait(struct nswap2l_epochs *e)
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

	epoch_flip_and_wait(&nc->epochs);
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

/* Place a page written for the first time; returns its entry, 0 if no room. */
static u64 place_page(struct nswap2l *nc, u64 page)
{
	struct nswap2l_placement *placement;
	unsigned long tried = 0;
	u64 entry = 0;
	int id;

	rcu_read_lock();
	placement = rcu_dereference(nc->placement);
	while ((id = placement->next_tier(placement, page, tried)) >= 0) {
		struct nswap2l_tier *tier = nc->tiers[id];
		u64 slot, old;

		tried |= BIT(id);
		if (tier->type->ops->alloc_slot(tier, &slot))
			continue;

		entry = nswap2l_entry(id, slot);
		old = atomic64_cmpxchg(&nc->map[page], 0, entry);
		if (old) {
			/* A concurrent write placed it first: use that home. */
			tier->type->ops->free_slots(tier, &slot, 1, false);
			entry = old;
		}
		break;
	}
	rcu_read_unlock();
	return entry;
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
		entry = place_page(nc, page);
		if (!entry) {
			atomic64_inc(&nc->nospace_errors);
			bio->bi_status = BLK_STS_NOSPC;
			bio_endio(bio);
			return DM_MAPIO_SUBMITTED;
		}
	}
	/*
	 * Test first: most accesses find the bit set and need not dirty the
	 * line.  cmpxchg, not or: a racing discard may have cleared the entry,
	 * and a lone referenced bit must not resurrect it.
	 */
	if (!(entry & NSWAP2L_ENTRY_REFERENCED))
		atomic64_cmpxchg(&nc->map[page], entry, entry | NSWAP2L_ENTRY_REFERENCED);

	id = nswap2l_entry_tier(entry);
	if (bio_data_dir(bio) == READ)
		this_cpu_inc(nc->stats->reads[id]);
	else
		this_cpu_inc(nc->stats->writes[id]);
	tier = nc->tiers[id];
	return tier->type->ops->map(tier, bio, nswap2l_entry_slot(entry));
}

static int nswap2l_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct nswap2l *nc = ti->private;
	struct nswap2l_bio *nb = dm_per_bio_data(bio, sizeof(*nb));

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
	kvfree(nc->map);
	free_percpu(nc->stats);
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

static int parse_tier(struct nswap2l *nc, const struct nswap2l_tier_type *type,
		      const char *value)
{
	struct dm_target *ti = nc->ti;

	if (nc->tiers[type->id]) {
		nswap2l_bad_table(ti, "Tier given twice", "%s= given twice", type->name);
		return -EINVAL;
	}
	if (!*value) {
		nswap2l_bad_table(ti, "Tier without a device", "%s= names no device",
				  type->name);
		return -EINVAL;
	}
	return type->ops->create(ti, type, value, &nc->tiers[type->id]);
}

static int parse_table_args(struct nswap2l *nc, struct dm_arg_set *as,
		      const char **placement_name)
{
	static const struct dm_arg nr_args = {
		0, 16, "Invalid number of arguments: need <#args> and that many arguments"
	};
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
		if (!type) {
			nswap2l_bad_table(ti, "Unknown option", "unknown option '%s='", arg);
			return -EINVAL;
		}
		r = parse_tier(nc, type, value);
		if (r)
			return r;
	}
	return 0;
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
				  "no tier given: need at least one of flash=<dev>, disk=<dev>");
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

	flush_workqueue(nc->wq);
}

static void emit_table(struct nswap2l *nc, char *result, unsigned int maxlen,
		       unsigned int *sz_ptr)
{
	const char *placement;
	bool default_placement;
	unsigned int sz = *sz_ptr;
	unsigned int nr_args;
	int id;

	/* Type names are static: safe to use after the policy is replaced. */
	rcu_read_lock();
	placement = rcu_dereference(nc->placement)->type->name;
	rcu_read_unlock();
	default_placement = !strcmp(placement, NSWAP2L_DEFAULT_PLACEMENT);
	nr_args = !default_placement + nc->overcommit;

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
		rcu_read_lock();
		DMEMIT("%s %u", rcu_dereference(nc->placement)->type->name, nr_tiers);
		rcu_read_unlock();
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (!tier)
				continue;
			DMEMIT(" %s %llu %lld %llu %llu %lld", tier->type->name,
			       tier->capacity, atomic64_read(&tier->used),
			       io.reads[id], io.writes[id], atomic64_read(&tier->discards));
		}
		DMEMIT(" %llu %lld", io.zero_reads, atomic64_read(&nc->nospace_errors));
		break;
	case STATUSTYPE_TABLE:
		emit_table(nc, result, maxlen, &sz);
		break;
	default:
		break;
	}
}

static int message_placement(struct nswap2l *nc, const char *name)
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
	/* dm serialises messages, so nothing else replaces the pointer. */
	old = rcu_replace_pointer(nc->placement, new, true);
	synchronize_rcu();
	old->destroy(old);
	return 0;
}

static int nswap2l_message(struct dm_target *ti, unsigned int argc, char **argv,
			   char *result, unsigned int maxlen)
{
	struct nswap2l *nc = ti->private;
	unsigned int sz = 0;

	if (argc == 1 && !strcasecmp(argv[0], "help")) {
		DMEMIT("help                 this list\n");
		DMEMIT("placement <policy>   place new pages with <policy>:");
		nswap2l_placement_list(result, maxlen, &sz);
		DMEMIT("\n");
		return 1;
	}
	if (argc == 2 && !strcasecmp(argv[0], "placement"))
		return message_placement(nc, argv[1]);

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
	r = dm_register_target(&nswap2l_target);
	if (r) {
		DMERR("register failed %d", r);
		nswap2l_policies_exit();
	}
	return r;
}

static void __exit dm_nswap2l_exit(void)
{
	dm_unregister_target(&nswap2l_target);
	nswap2l_policies_exit();
}

module_init(dm_nswap2l_init);
module_exit(dm_nswap2l_exit);

MODULE_DESCRIPTION(DM_NAME " target over Network RAM, flash and disk tiers");
MODULE_AUTHOR("dm-nswap2l developers");
MODULE_LICENSE("GPL");
