/* SPDX-License-Identifier: GPL-2.0 */
/* The device's state, struct nswap2l, shared by the core's files. */
#ifndef NSWAP2L_CORE_H
#define NSWAP2L_CORE_H

#include "map_types.h"

/*----------------------------------------------------------------
 * The device: state that lives as long as the mapped device, across table
 * reloads (found by the mapped device, dm-thin's pool registry).
 *--------------------------------------------------------------*/

struct nswap2l {
	struct list_head registry;		/* registry list, under its mutex */
	struct mapped_device *md;
	unsigned int tables;			/* tables using it, registry mutex */
	struct dm_target *ti;			/* the bound (live) table */
	char name[16];				/* major:minor, for messages */

	struct nswap2l_map map;
	struct nswap2l_tier *tiers[NSWAP2L_NR_TIERS];	/* by id, NULL if absent */

	struct nswap2l_placement __rcu *placement;
	struct mutex control_mutex;		/* placement, suspend state */
	bool overcommit;
	bool suspended;				/* background I/O held */

	/* Bios that a tier failed: rerouted or completed here, never in end_io. */
	struct workqueue_struct *bio_wq;
	struct work_struct deferred_work;
	spinlock_t deferred_lock;		/* deferred_bios, held_bios */
	struct bio_list deferred_bios;
	/* Fault injection: bios held before they reach their tier. */
	struct bio_list held_bios;
	struct delayed_work held_work;

	/* Discards wait for in-flight I/O: on their own queue. */
	struct workqueue_struct *discard_wq;
	struct work_struct discard_work;
	spinlock_t discard_lock;		/* protects discard_bios */
	struct bio_list discard_bios;

	struct nswap2l_mover *mover;
	struct nswap2l_prefetch *prefetch;
	struct nswap2l_profiler *profiler;
	struct nswap2l_sysfs *sysfs;		/* while the table is live */

	/* Rerouted writes whose pages found no one run: split (reroute_write). */
	struct bio_set split_bios;

	struct nswap2l_io_stats __percpu *stats;
	atomic64_t nospace_errors;		/* writes that found no free slot */
	atomic64_t rerouted_writes;		/* writes a tier gave back */
	atomic64_t moved_pages;			/* by the mover */
};

/* The home of the page @n pages after the one at @home, in the same run. */
static inline u64 nswap2l_run_home(struct nswap2l *nc, u64 home, u64 n)
{
	u64 stride = nc->tiers[nswap2l_entry_tier(home)]->run_stride;

	return home + ((n * stride) << NSWAP2L_ENTRY_SLOT_SHIFT);
}

/* Placement set and named by messages and sysfs (device.c); sysfs.c. */
int nswap2l_set_placement(struct nswap2l *nc, const char *name);
const char *nswap2l_placement_name(struct nswap2l *nc);
void nswap2l_sysfs_add(struct nswap2l *nc);
void nswap2l_sysfs_remove(struct nswap2l *nc);
int nswap2l_sysfs_init(void);
void nswap2l_sysfs_exit(void);

#endif /* NSWAP2L_CORE_H */
