// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: a device-mapper target presenting one block device over
 * Network RAM, flash and disk tiers.  This file is the interface to
 * device-mapper; args.c reads and prints table lines, device.c keeps the
 * device's state across tables, bio.c is the bio path.
 *
 * Every 4 KiB page of the device has an 8-byte map entry naming the tier and
 * slot that hold it (map.c).  Reads and writes of a mapped page are remapped
 * to the tier; the first write of a page asks the placement policy for a
 * tier and allocates a slot there.  Discard frees slots.  Contents are not
 * persistent: the map lives in RAM, as a swap device or a scratch
 * filesystem needs.
 *
 * The device's state (map, tiers, connections, mover) lives as long as the
 * mapped device, not as long as one table: a table reload that keeps every
 * page reachable finds the state through the mapped device (dm-thin's pool
 * registry), prepares its changes in its constructor and applies them when
 * it is resumed; any other reload is refused before anything changes.
 *
 * Table line:
 *   <start> <len> nswap2l <#args> [netram=<addr:port>[,...] key=<keyspec> [client=<name>]]
 *                                 [flash=<dev>] [disk=<dev>] [timeout=<s>]
 *                                 [placement=<policy>] [overcommit]
 *                                 [prefetch=<policy>[,when=..][,amount=..][,interval=..]]
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "args.h"
#include "bio.h"

/*----------------------------------------------------------------
 * Constructor and destructor
 *--------------------------------------------------------------*/
static void destroy_table(struct nswap2l_table *t)
{
	struct nswap2l *nc = t->nc;
	int id;

	nswap2l_registry_lock();
	if (nswap2l_device_put(t)) {
		nswap2l_sysfs_remove(nc);
		nswap2l_device_destroy(nc);
	}
	nswap2l_registry_unlock();
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		if (t->devs[id])
			dm_put_device(t->ti, t->devs[id]);
		if (t->tier_args[id])
			nswap2l_tier_types[id]->opts->free(t->tier_args[id]);
	}
	kfree(t);
}

static int nswap2l_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct table_args args = { };
	struct nswap2l_table *t;
	struct nswap2l *nc;
	int id, r;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}
	t->ti = ti;

	if (!ti->len || ti->len & (NSWAP2L_PAGE_SECTORS - 1)) {
		nswap2l_bad_table(ti, "Length must be a non-zero multiple of 8 sectors",
				  "length %llu sectors is not a non-zero multiple of %u sectors (4 KiB)",
				  (unsigned long long)ti->len, NSWAP2L_PAGE_SECTORS);
		r = -EINVAL;
		goto bad;
	}
	t->nr_pages = NSWAP2L_SECTOR_TO_PAGE(ti->len);
	r = nswap2l_parse_table(ti, &as, &args);
	if (r)
		goto bad;
	r = nswap2l_open_tier_devices(t, &args);
	if (r)
		goto bad;
	t->overcommit = args.overcommit;
	r = nswap2l_parse_tier_options(t, &args);
	if (r)
		goto bad;
	r = nswap2l_parse_prefetch(ti, &args, &t->prefetch);
	if (r)
		goto bad;

	r = nswap2l_device_bind(t, &args);
	if (r)
		goto bad;
	nc = t->nc;
	t->placement_name = t->new_placement ? t->new_placement->type->name :
			    nswap2l_placement_name(nc);

	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		ti->num_flush_bios += nc->tiers[id] && nswap2l_tier_has_flush(nc->tiers[id]);
	ti->num_discard_bios = 1;
	ti->discards_supported = true;
	ti->per_io_data_size = sizeof(struct nswap2l_bio);
	/* Swap must not queue more bios than it can be given memory for. */
	ti->limit_swap_bios = true;
	ti->private = t;
	return 0;

bad:
	destroy_table(t);
	return r;
}

static void nswap2l_dtr(struct dm_target *ti)
{
	destroy_table(ti->private);
}

static int nswap2l_dm_map(struct dm_target *ti, struct bio *bio)
{
	struct nswap2l_table *t = ti->private;

	return nswap2l_bio_map(t->nc, ti, bio);
}

static int nswap2l_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct nswap2l_table *t = ti->private;

	return nswap2l_bio_end_io(t->nc, bio, error);
}

/*----------------------------------------------------------------
 * Suspend and resume: nothing reaches a tier while suspended
 *--------------------------------------------------------------*/
static void nswap2l_postsuspend(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	int id;

	nswap2l_sysfs_remove(nc);
	mutex_lock(&nc->control_mutex);
	nswap2l_prefetch_pause(nc);
	nswap2l_profiler_stop(nc);
	nswap2l_mover_pause(nc);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_suspend(nc->tiers[id]);
	nc->suspended = true;
	mutex_unlock(&nc->control_mutex);
}

static int nswap2l_preresume(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;

	mutex_lock(&t->nc->control_mutex);
	if (t->pending)
		nswap2l_device_commit_reload(t);
	mutex_unlock(&t->nc->control_mutex);
	return 0;
}

/*
 * A page must not change while it is written (swap maps pages under
 * writeback writable, unless told not to): a Network RAM page goes out
 * under a MAC computed before it is sent, and a parity page is the XOR of
 * its group's pages as they were.  A page changed in between would fail
 * its MAC at the server, or no longer match its parity, and rebuilding any
 * other page of the group would go wrong.
 */
static bool nswap2l_needs_stable_writes(const struct nswap2l_table *t)
{
	return t->nc->tiers[NSWAP2L_TIER_NETRAM];
}

static void nswap2l_resume(struct dm_target *ti)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	int id;

	mutex_lock(&nc->control_mutex);
	nc->suspended = false;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (nc->tiers[id])
			nswap2l_tier_resume(nc->tiers[id]);
	nswap2l_mover_resume(nc);
	nswap2l_profiler_start(nc);
	nswap2l_prefetch_resume(nc);
	mutex_unlock(&nc->control_mutex);
	if (nswap2l_needs_stable_writes(t))
		nswap2l_resume_stable_writes(ti);
	nswap2l_sysfs_add(nc);
}

/*----------------------------------------------------------------
 * Status, messages, limits
 *--------------------------------------------------------------*/
static void nswap2l_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	struct nswap2l_io_stats io;
	unsigned int sz = 0, nr_tiers = 0;
	int id;

	switch (type) {
	case STATUSTYPE_INFO:
		nswap2l_stats_sum(nc, &io);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			nr_tiers += !!nc->tiers[id];
		DMEMIT("%s %u", nswap2l_placement_name(nc), nr_tiers);
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (!tier)
				continue;
			DMEMIT(" %s %llu %lld %llu %llu %lld", tier->type->name,
			       READ_ONCE(tier->capacity), atomic64_read(&tier->used),
			       io.reads[id], io.writes[id], atomic64_read(&tier->discards));
		}
		DMEMIT(" %llu %lld %lld %lld", io.zero_reads, atomic64_read(&nc->nospace_errors),
		       atomic64_read(&nc->rerouted_writes), atomic64_read(&nc->moved_pages));
		for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
			struct nswap2l_tier *tier = nc->tiers[id];

			if (tier)
				nswap2l_tier_emit_status(tier, result, maxlen, &sz);
		}
		nswap2l_prefetch_status(nc, result, maxlen, &sz);
		nswap2l_profiler_status(nc, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		nswap2l_emit_table(t, result, maxlen, &sz);
		break;
	default:
		break;
	}
}

/* recovery_rate MIN MAX sets it; recovery_rate alone prints it. */
static int recovery_rate_message(struct nswap2l *nc, unsigned int argc, char **argv,
				 char *result, unsigned int maxlen)
{
	unsigned int sz = 0, rate_min, rate_max;

	if (argc == 1) {
		nswap2l_mover_get_rate(nc, &rate_min, &rate_max);
		DMEMIT("%u %u\n", rate_min, rate_max);
		return 1;
	}
	if (kstrtouint(argv[1], 10, &rate_min) || kstrtouint(argv[2], 10, &rate_max)) {
		DMERR("%s: recovery_rate '%s' '%s': two numbers of pages/s expected",
		      nc->name, argv[1], argv[2]);
		return -EINVAL;
	}
	return nswap2l_mover_set_rate(nc, rate_min, rate_max);
}

static int nswap2l_message(struct dm_target *ti, unsigned int argc, char **argv,
			   char *result, unsigned int maxlen)
{
	struct nswap2l_table *t = ti->private;
	struct nswap2l *nc = t->nc;
	unsigned int sz = 0;
	char names[96];
	int id, r;

	/*
	 * The policy names come from the registry (policy/registry.c), in
	 * registration order; nswap2l (tools/nswap2l) reads them from here.
	 */
	if (argc == 1 && !strcasecmp(argv[0], "help")) {
		DMEMIT("help                      this list\n");
		DMEMIT("placement <policy>        place new pages with <policy>:");
		nswap2l_placement_list(result, maxlen, &sz);
		DMEMIT("\n");
		nswap2l_prefetch_names(NSWAP2L_PREFETCH_WHICH, names, sizeof(names));
		DMEMIT("prefetch policy <policy>  which pages to prefetch: none%s\n", names);
		DMEMIT("prefetch when <when>      pays[:<%% free scarce>], always, swapping, idle[:<bios in flight>]\n");
		DMEMIT("prefetch amount <amount>  written:<percent>[:<cap>] or held:<percent>[:<cap>]\n");
		DMEMIT("prefetch interval <ms>    wake-up interval, 10-60000\n");
		DMEMIT("profile reset             clear the concurrency profile\n");
		DMEMIT("recovery_rate [<min> <max>]  recovery's pages/s: at least <min>, at most <max> when idle\n");
		for (id = 0; id < NSWAP2L_NR_TIERS; id++)
			if (nc->tiers[id] && nc->tiers[id]->type->messages_help)
				DMEMIT("%s", nc->tiers[id]->type->messages_help);
		return 1;
	}
	if (argc == 2 && !strcasecmp(argv[0], "placement"))
		return nswap2l_set_placement(nc, argv[1]);
	if (argc == 3 && !strcasecmp(argv[0], "prefetch"))
		return nswap2l_prefetch_set(nc, argv[1], argv[2]);
	if ((argc == 1 || argc == 3) && !strcasecmp(argv[0], "recovery_rate"))
		return recovery_rate_message(nc, argc, argv, result, maxlen);
	if (argc == 2 && !strcasecmp(argv[0], "profile") && !strcasecmp(argv[1], "reset")) {
		nswap2l_profiler_reset(nc);
		return 0;
	}
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		r = nswap2l_tier_message(tier, argc, argv);
		if (r != -ENOTTY)
			return r;
	}

	DMERR("%s: unknown message '%s' with %u argument(s); try 'help'",
	      nc->name, argc ? argv[0] : "", argc ? argc - 1 : 0);
	return -EINVAL;
}

static int nswap2l_iterate_devices(struct dm_target *ti,
				   iterate_devices_callout_fn fn, void *data)
{
	struct nswap2l_table *t = ti->private;
	int id, r = 0;

	for (id = 0; id < NSWAP2L_NR_TIERS && !r; id++)
		if (t->devs[id])
			r = fn(ti, t->devs[id], 0,
			       NSWAP2L_PAGE_TO_SECTOR(nswap2l_block_slots(t->devs[id], t->nr_pages)), data);
	return r;
}

static void nswap2l_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct nswap2l_table *t = ti->private;

	if (nswap2l_needs_stable_writes(t))
		nswap2l_limit_stable_writes(limits);
	limits->logical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->physical_block_size = 1 << NSWAP2L_PAGE_SHIFT;
	limits->io_min = 1 << NSWAP2L_PAGE_SHIFT;
	/* Discards only drop map entries, so any size is cheap. */
	limits->discard_granularity = 1 << NSWAP2L_PAGE_SHIFT;
	nswap2l_set_max_discard_sectors(limits, UINT_MAX >> SECTOR_SHIFT);
}

static struct target_type nswap2l_target = {
	.name = "nswap2l",
	.version = {0, 2, 0},
	.module = THIS_MODULE,
	.ctr = nswap2l_ctr,
	.dtr = nswap2l_dtr,
	.map = nswap2l_dm_map,
	.end_io = nswap2l_end_io,
	.postsuspend = nswap2l_postsuspend,
	.preresume = nswap2l_preresume,
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

