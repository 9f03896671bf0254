/* SPDX-License-Identifier: GPL-2.0 */
/* A device's life and its tables (device.c). */
#ifndef NSWAP2L_DEVICE_H
#define NSWAP2L_DEVICE_H

#include "nswap2l.h"

/* A table line, parsed; the strings point into the constructor's argv. */
struct table_args {
	const char *tiers[NSWAP2L_NR_TIERS];
	/* The words a tier type owns, by its opts->keys[]. */
	const char *tier_opts[NSWAP2L_NR_TIERS][NSWAP2L_TIER_MAX_OPTS];
	const char *placement;
	const char *prefetch;
	bool overcommit;
};

/* One loaded table: ti->private.  Several may share one device (reload). */
struct nswap2l_table {
	struct dm_target *ti;
	struct nswap2l *nc;
	struct dm_dev *devs[NSWAP2L_NR_TIERS];	/* this table's device references */
	u64 nr_pages;

	/* The options of this table line. */
	const char *placement_name;		/* a policy type's static name */
	bool overcommit;
	struct nswap2l_prefetch_config prefetch;
	void *tier_args[NSWAP2L_NR_TIERS];	/* the tier types' own options */

	/* A reload: changes prepared by the constructor, applied on resume. */
	bool pending;
	atomic64_t *grown_map;
	struct nswap2l_placement *new_placement;
	struct nswap2l_picker *new_picker;
	void *tier_changes[NSWAP2L_NR_TIERS];
};

extern const struct nswap2l_tier_type *const nswap2l_tier_types[NSWAP2L_NR_TIERS];

int nswap2l_open_tier_devices(struct nswap2l_table *t, const struct table_args *args);
int nswap2l_device_bind(struct nswap2l_table *t, const struct table_args *args);
void nswap2l_registry_lock(void);
void nswap2l_registry_unlock(void);
bool nswap2l_device_put(struct nswap2l_table *t);
void nswap2l_device_destroy(struct nswap2l *nc);
void nswap2l_device_commit_reload(struct nswap2l_table *t);

#endif
