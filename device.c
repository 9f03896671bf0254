// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: the device's state, created by its first table and destroyed
 * with its last.  A table reload that keeps every page reachable finds the
 * state through the mapped device (dm-thin's pool registry), prepares its
 * changes in its constructor and applies them when it is resumed.
 */
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "bio.h"
#include "device.h"

/* By id, in the order the table line prints them. */
const struct nswap2l_tier_type *const nswap2l_tier_types[NSWAP2L_NR_TIERS] = {
	[NSWAP2L_TIER_NETRAM] = &nswap2l_netram_tier,
	[NSWAP2L_TIER_FLASH] = &nswap2l_flash_tier,
	[NSWAP2L_TIER_DISK] = &nswap2l_disk_tier,
};

/* Devices by mapped device: a reload finds the state of its device here. */
static LIST_HEAD(registry);
static DEFINE_MUTEX(registry_mutex);

/* The table's own references to its block devices, distinct from each other. */
int nswap2l_open_tier_devices(struct nswap2l_table *t, const struct table_args *args)
{
	struct dm_target *ti = t->ti;
	unsigned int i, j;
	int r;

	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++) {
		const struct nswap2l_tier_type *type = nswap2l_tier_types[i];
		const char *path = args->tiers[type->id];

		if (!type->has_device || !path)
			continue;
		r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &t->devs[type->id]);
		if (r) {
			nswap2l_bad_table(ti, "Cannot open tier device",
					  "%s=%s: cannot open device (error %d)", type->name, path, r);
			return r;
		}
		for (j = 0; j < NSWAP2L_NR_TIERS; j++) {
			/* Two tiers on one device would hand out the same sectors twice. */
			if (j != type->id && t->devs[j] &&
			    t->devs[j]->bdev == t->devs[type->id]->bdev) {
				nswap2l_bad_table(ti, "Tiers share a device",
						  "two tiers name the same device %s",
						  t->devs[j]->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static struct nswap2l_placement *create_placement(struct dm_target *ti, const char *name,
						  struct nswap2l_tier *const *tiers)
{
	struct nswap2l_placement *placement = nswap2l_placement_create(name, tiers);

	if (!placement) {
		nswap2l_bad_table(ti, "Unknown placement policy",
				  "placement=%s: unknown policy ('help' message lists them)", name);
		return ERR_PTR(-EINVAL);
	}
	if (IS_ERR(placement))
		ti->error = "Cannot allocate placement policy";
	return placement;
}

/* Without overcommit, every page of the device must have a slot somewhere. */
static int check_capacity(struct dm_target *ti, struct nswap2l *nc, u64 nr_pages,
			  bool overcommit)
{
	u64 capacity = 0;
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (tier)
			capacity += tier->dev ? nswap2l_block_slots(tier->dev, nr_pages) :
						READ_ONCE(tier->capacity);
	}
	if (nr_pages > capacity && !overcommit) {
		nswap2l_bad_table(ti, "Device larger than its tiers",
				  "device of %llu pages is larger than its tiers' %llu pages (add 'overcommit' to allow)",
				  nr_pages, capacity);
		return -EINVAL;
	}
	return 0;
}

/*----------------------------------------------------------------
 * The device: created by the first table, destroyed with the last
 *--------------------------------------------------------------*/

/*
 * Copes with a half-built device: every constructor failure ends here.
 * The last table's destructor takes the device out of sysfs first.
 */
void nswap2l_device_destroy(struct nswap2l *nc)
{
	struct nswap2l_placement *placement;
	int id;

	/* Every thread that could touch the device stops before anything goes. */
	nswap2l_prefetch_pause(nc);
	nswap2l_profiler_destroy(nc);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_stop(nc->tiers[id]);
	nswap2l_mover_stop(nc);
	if (nc->bio_wq) {
		cancel_delayed_work_sync(&nc->held_work);
		destroy_workqueue(nc->bio_wq);
	}
	if (nc->discard_wq)
		destroy_workqueue(nc->discard_wq);
	placement = rcu_dereference_protected(nc->placement, 1);
	if (placement)
		placement->destroy(placement);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_destroy(nc->tiers[id]);
	nswap2l_mover_destroy(nc);
	nswap2l_prefetch_destroy(nc);
	bioset_exit(&nc->split_bios);
	nswap2l_map_exit(&nc->map);
	nswap2l_stats_destroy(nc);
	kfree(nc);
}

static int create_tiers(struct nswap2l_table *t, struct nswap2l *nc,
			const struct table_args *args)
{
	unsigned int i;
	int r;

	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++) {
		const struct nswap2l_tier_type *type = nswap2l_tier_types[i];
		struct nswap2l_tier_options opts = {
			.args = t->tier_args[type->id],
			.device_pages = t->nr_pages,
		};

		if (!args->tiers[type->id])
			continue;
		r = nswap2l_tier_create(type, t->ti, args->tiers[type->id], t->devs[type->id],
					&opts, &nc->tiers[type->id]);
		if (r)
			return r;
		nc->tiers[type->id]->nc = nc;
	}
	return 0;
}

/* Tiers start last: a server may talk to us the moment it is connected. */
static int start_tiers(struct nswap2l_table *t, struct nswap2l *nc)
{
	int id, r;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		r = nswap2l_tier_start(tier, t->ti);
		if (r)
			return r;
	}
	return 0;
}

static int create_device(struct nswap2l_table *t, const struct table_args *args,
			 struct nswap2l **result)
{
	struct dm_target *ti = t->ti;
	struct nswap2l_placement *placement;
	struct nswap2l *nc;
	int r = -ENOMEM;

	nc = kzalloc(sizeof(*nc), GFP_KERNEL);
	if (!nc) {
		ti->error = "Cannot allocate device state";
		return -ENOMEM;
	}
	nc->md = dm_table_get_md(ti->table);
	strscpy(nc->name, dm_table_device_name(ti->table), sizeof(nc->name));
	nc->overcommit = args->overcommit;
	nc->suspended = true;	/* until the first resume */
	mutex_init(&nc->control_mutex);
	nswap2l_bio_init(nc);

	r = nswap2l_map_init(nc, t->nr_pages, ti);
	if (r)
		goto bad;
	r = create_tiers(t, nc, args);
	if (r)
		goto bad;

	placement = create_placement(ti, args->placement, nc->tiers);
	if (IS_ERR(placement)) {
		r = PTR_ERR(placement);
		goto bad;
	}
	RCU_INIT_POINTER(nc->placement, placement);

	r = nswap2l_stats_create(nc);
	if (r) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	r = bioset_init(&nc->split_bios, BIO_POOL_SIZE, 0, 0);
	if (r) {
		ti->error = "Cannot allocate bio set";
		goto bad;
	}
	r = -ENOMEM;
	nc->bio_wq = alloc_workqueue("nswap2l-io-%s", WQ_MEM_RECLAIM, 1, nc->name);
	nc->discard_wq = alloc_workqueue("nswap2l-discard-%s", WQ_MEM_RECLAIM, 1, nc->name);
	if (!nc->bio_wq || !nc->discard_wq) {
		ti->error = "Cannot allocate workqueue";
		goto bad;
	}
	r = nswap2l_mover_create(nc);
	if (r) {
		ti->error = "Cannot allocate page mover";
		goto bad;
	}
	r = nswap2l_profiler_create(nc);
	if (r) {
		ti->error = "Cannot allocate profiler";
		goto bad;
	}
	r = nswap2l_prefetch_create(nc, &t->prefetch);
	if (r) {
		ti->error = "Cannot allocate prefetching";
		goto bad;
	}

	r = start_tiers(t, nc);
	if (r)
		goto bad;
	r = check_capacity(ti, nc, t->nr_pages, nc->overcommit);
	if (r)
		goto bad;
	*result = nc;
	return 0;

bad:
	nswap2l_device_destroy(nc);
	return r;
}

/*----------------------------------------------------------------
 * Reload: a new table over an existing device
 *--------------------------------------------------------------*/
static void cancel_reload(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	int id;

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (t->tier_changes[id])
			nswap2l_tier_cancel_reload(nc->tiers[id], t->tier_changes[id]);
	kvfree(t->grown_map);
	if (t->new_placement)
		t->new_placement->destroy(t->new_placement);
	if (t->new_picker)
		t->new_picker->destroy(t->new_picker);
	t->pending = false;
}

/* Checks everything and prepares the changes; changes nothing. */
static int prepare_reload(struct nswap2l_table *t, const struct table_args *args)
{
	struct dm_target *ti = t->ti;
	struct nswap2l *nc = t->nc;
	struct nswap2l_placement *placement;
	int id, r;

	t->pending = true;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (!nc->tiers[id] != !args->tiers[id]) {
			nswap2l_bad_table(ti, "A reload must keep the device's tiers",
					  "reload %s the %s tier: a reload keeps the tiers of the live table (its pages must stay reachable)",
					  nc->tiers[id] ? "drops" : "adds", nswap2l_tier_types[id]->name);
			return -EINVAL;
		}
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier || !tier->type->opts)
			continue;
		r = tier->type->opts->check_reload(tier, ti, t->tier_args[id]);
		if (r)
			return r;
	}
	if (t->nr_pages < nc->map.nr_pages) {
		nswap2l_bad_table(ti, "A reload cannot shrink the device",
				  "reload shrinks the device from %llu to %llu pages: pages past the end would be lost",
				  nc->map.nr_pages, t->nr_pages);
		return -EINVAL;
	}
	r = check_capacity(ti, nc, t->nr_pages, args->overcommit);
	if (r)
		return r;

	placement = create_placement(ti, args->placement, nc->tiers);
	if (IS_ERR(placement))
		return PTR_ERR(placement);
	t->new_placement = placement;
	t->new_picker = nswap2l_prefetch_prepare(&t->prefetch);
	if (IS_ERR(t->new_picker)) {
		r = PTR_ERR(t->new_picker);
		t->new_picker = NULL;
		ti->error = "Cannot allocate prefetch policy";
		return r;
	}
	if (t->nr_pages > nc->map.nr_pages) {
		t->grown_map = nswap2l_map_prepare_grow(nc, t->nr_pages, ti);
		if (!t->grown_map)
			return -ENOMEM;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];
		struct nswap2l_tier_options opts = {
			.args = t->tier_args[id],
			.device_pages = t->nr_pages,
		};

		if (!tier)
			continue;
		r = nswap2l_tier_prepare_reload(tier, ti, args->tiers[id], t->devs[id],
						&opts, &t->tier_changes[id]);
		if (r)
			return r;
	}
	return 0;
}

/* The device is suspended and its background work paused. */
void nswap2l_device_commit_reload(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	struct nswap2l_placement *old;
	int id;

	lockdep_assert_held(&nc->control_mutex);

	if (t->grown_map) {
		nswap2l_map_commit_grow(&nc->map, t->grown_map, t->nr_pages);
		t->grown_map = NULL;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (!t->tier_changes[id])
			continue;
		nswap2l_tier_commit_reload(nc->tiers[id], t->tier_changes[id]);
		t->tier_changes[id] = NULL;
	}
	old = rcu_replace_pointer(nc->placement, t->new_placement,
				  lockdep_is_held(&nc->control_mutex));
	t->new_placement = NULL;
	synchronize_rcu();
	old->destroy(old);
	nswap2l_prefetch_commit(nc, &t->prefetch, t->new_picker);
	t->new_picker = NULL;
	nc->overcommit = t->overcommit;
	t->pending = false;
}

static struct nswap2l *find_device(struct mapped_device *md)
{
	struct nswap2l *nc;

	list_for_each_entry(nc, &registry, registry)
		if (nc->md == md)
			return nc;
	return NULL;
}

/* Binds a new table to its device: the one it reloads, or a new one. */
int nswap2l_device_bind(struct nswap2l_table *t, const struct table_args *args)
{
	struct dm_target *ti = t->ti;
	struct nswap2l *nc;
	int r;

	mutex_lock(&registry_mutex);
	nc = find_device(dm_table_get_md(ti->table));
	if (nc) {
		t->nc = nc;
		nc->tables++;
		r = prepare_reload(t, args);
	} else {
		r = create_device(t, args, &nc);
		if (!r) {
			t->nc = nc;
			nc->tables = 1;
			list_add(&nc->registry, &registry);
		}
	}
	mutex_unlock(&registry_mutex);
	return r;
}

/* Tables come and go under this; a device is destroyed under it too. */
void nswap2l_registry_lock(void)
{
	mutex_lock(&registry_mutex);
}

void nswap2l_registry_unlock(void)
{
	mutex_unlock(&registry_mutex);
}

/*
 * A table lets go of its device, dropping the reload it prepared: true if
 * it was the last, and the device is out of the registry for the caller
 * to destroy.
 */
bool nswap2l_device_put(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;

	lockdep_assert_held(&registry_mutex);
	if (t->pending)
		cancel_reload(t);
	if (!nc || --nc->tables)
		return false;
	list_del(&nc->registry);
	return true;
}

/* By message or sysfs. */
int nswap2l_set_placement(struct nswap2l *nc, const char *name)
{
	struct nswap2l_placement *new, *old;

	new = nswap2l_placement_create(name, nc->tiers);
	if (!new) {
		DMERR("%s: placement %s: unknown policy ('help' lists them)", nc->name, name);
		return -EINVAL;
	}
	if (IS_ERR(new))
		return PTR_ERR(new);
	mutex_lock(&nc->control_mutex);
	old = rcu_replace_pointer(nc->placement, new, lockdep_is_held(&nc->control_mutex));
	mutex_unlock(&nc->control_mutex);
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
