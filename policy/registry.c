// SPDX-License-Identifier: GPL-2.0
/*
 * Registry of placement policies, looked up by name when a table is loaded
 * or when the "placement" message switches policy.
 */
#include <linux/mutex.h>
#include <linux/string.h>

#include "../nswap2l.h"

static LIST_HEAD(placement_types);
static DEFINE_MUTEX(placement_types_lock);

static struct nswap2l_placement_type *find_placement_type(const char *name)
{
	struct nswap2l_placement_type *type;

	list_for_each_entry(type, &placement_types, list)
		if (!strcmp(type->name, name))
			return type;
	return NULL;
}

int nswap2l_placement_register(struct nswap2l_placement_type *type)
{
	int r = 0;

	mutex_lock(&placement_types_lock);
	if (find_placement_type(type->name))
		r = -EEXIST;
	else
		list_add_tail(&type->list, &placement_types);
	mutex_unlock(&placement_types_lock);
	return r;
}

void nswap2l_placement_unregister(struct nswap2l_placement_type *type)
{
	mutex_lock(&placement_types_lock);
	list_del_init(&type->list);
	mutex_unlock(&placement_types_lock);
}

/* Returns NULL if @name is unknown, ERR_PTR on allocation failure. */
struct nswap2l_placement *nswap2l_placement_create(const char *name,
						   struct nswap2l_tier *const *tiers)
{
	struct nswap2l_placement_type *type;
	struct nswap2l_placement *p = NULL;

	mutex_lock(&placement_types_lock);
	type = find_placement_type(name);
	if (type) {
		p = type->create(tiers);
		if (!IS_ERR(p))
			p->type = type;
	}
	mutex_unlock(&placement_types_lock);
	return p;
}

void nswap2l_placement_list(char *result, unsigned int maxlen, unsigned int *sz_ptr)
{
	struct nswap2l_placement_type *type;
	unsigned int sz = *sz_ptr;

	mutex_lock(&placement_types_lock);
	list_for_each_entry(type, &placement_types, list)
		DMEMIT(" %s", type->name);
	mutex_unlock(&placement_types_lock);
	*sz_ptr = sz;
}

/* Adding a policy: one file in policy/ and one line in each list below. */
int nswap2l_policies_init(void)
{
	return nswap2l_fastest_free_init();
}

void nswap2l_policies_exit(void)
{
	nswap2l_fastest_free_exit();
}
