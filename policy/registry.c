// SPDX-License-Identifier: GPL-2.0
/*
 * Registry of placement and prefetch policies, looked up by name when a
 * table is loaded or when a message or sysfs switches policy.
 */
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../policy.h"

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

/*----------------------------------------------------------------
 * Prefetch policies: Q1 when, Q2 amount, Q3 which
 *--------------------------------------------------------------*/
static LIST_HEAD(prefetch_types);
static DEFINE_MUTEX(prefetch_types_lock);

static struct nswap2l_prefetch_type *find_prefetch_type(enum nswap2l_prefetch_question q,
							const char *name)
{
	struct nswap2l_prefetch_type *type;

	list_for_each_entry(type, &prefetch_types, list)
		if (type->question == q && !strcmp(type->name, name))
			return type;
	return NULL;
}

int nswap2l_prefetch_register(struct nswap2l_prefetch_type *type)
{
	int r = 0;

	mutex_lock(&prefetch_types_lock);
	if (find_prefetch_type(type->question, type->name))
		r = -EEXIST;
	else
		list_add_tail(&type->list, &prefetch_types);
	mutex_unlock(&prefetch_types_lock);
	return r;
}

void nswap2l_prefetch_unregister(struct nswap2l_prefetch_type *type)
{
	mutex_lock(&prefetch_types_lock);
	list_del_init(&type->list);
	mutex_unlock(&prefetch_types_lock);
}

void nswap2l_prefetch_unregister_all(struct nswap2l_prefetch_type *const *types,
				     unsigned int nr)
{
	while (nr--)
		nswap2l_prefetch_unregister(types[nr]);
}

int nswap2l_prefetch_register_all(struct nswap2l_prefetch_type *const *types, unsigned int nr)
{
	unsigned int i;
	int r;

	for (i = 0; i < nr; i++) {
		INIT_LIST_HEAD(&types[i]->list);
		r = nswap2l_prefetch_register(types[i]);
		if (r) {
			nswap2l_prefetch_unregister_all(types, i);
			return r;
		}
	}
	return 0;
}

struct nswap2l_prefetch_type *nswap2l_prefetch_find(enum nswap2l_prefetch_question q,
						    const char *name)
{
	struct nswap2l_prefetch_type *type;

	mutex_lock(&prefetch_types_lock);
	type = find_prefetch_type(q, name);
	mutex_unlock(&prefetch_types_lock);
	return type;
}

void nswap2l_prefetch_names(enum nswap2l_prefetch_question q, char *buf, size_t size)
{
	struct nswap2l_prefetch_type *type;
	size_t len = 0;

	buf[0] = '\0';
	mutex_lock(&prefetch_types_lock);
	list_for_each_entry(type, &prefetch_types, list)
		if (type->question == q && len < size)
			len += scnprintf(buf + len, size - len, " %s", type->name);
	mutex_unlock(&prefetch_types_lock);
}

struct nswap2l_picker *nswap2l_picker_create(const char *name)
{
	struct nswap2l_prefetch_type *type = nswap2l_prefetch_find(NSWAP2L_PREFETCH_WHICH, name);
	const struct nswap2l_prefetch_which *which;
	struct nswap2l_picker *p;

	if (!type)
		return NULL;
	which = container_of(type, struct nswap2l_prefetch_which, type);
	p = which->create();
	if (!IS_ERR(p))
		p->type = which;
	return p;
}

static u64 hand_picker_begin(struct nswap2l_picker *p, const struct nswap2l_prefetch_view *view,
			     struct nswap2l_map *map, u64 quota)
{
	nswap2l_hand_begin(&nswap2l_hand_picker(p)->hand, map);
	return quota;
}

static void hand_picker_destroy(struct nswap2l_picker *p)
{
	kfree(nswap2l_hand_picker(p));
}

struct nswap2l_picker *nswap2l_hand_picker_create(
	unsigned int (*pick)(struct nswap2l_picker *p, struct nswap2l_map *map, u64 *pages,
			     unsigned int nr, unsigned int *arm),
	unsigned long arg)
{
	struct nswap2l_hand_picker *hp = kzalloc(sizeof(*hp), GFP_KERNEL);

	if (!hp)
		return ERR_PTR(-ENOMEM);
	hp->arg = arg;
	hp->picker.begin = hand_picker_begin;
	hp->picker.pick = pick;
	hp->picker.destroy = hand_picker_destroy;
	return &hp->picker;
}

const struct nswap2l_prefetch_which *nswap2l_prefetch_arm(unsigned int arm)
{
	struct nswap2l_prefetch_type *type;
	const struct nswap2l_prefetch_which *found = NULL;

	mutex_lock(&prefetch_types_lock);
	list_for_each_entry(type, &prefetch_types, list) {
		const struct nswap2l_prefetch_which *which;

		if (type->question != NSWAP2L_PREFETCH_WHICH)
			continue;
		which = container_of(type, struct nswap2l_prefetch_which, type);
		if (which->arm == arm) {
			found = which;
			break;
		}
	}
	mutex_unlock(&prefetch_types_lock);
	return found;
}

/*----------------------------------------------------------------
 * Adding a policy: one file in policy/ and one line in the table below.
 *--------------------------------------------------------------*/
static const struct {
	int (*init)(void);
	void (*exit)(void);
} policy_files[] = {
	{ nswap2l_fastest_free_init, nswap2l_fastest_free_exit },
	{ nswap2l_prefetch_when_init, nswap2l_prefetch_when_exit },
	{ nswap2l_prefetch_amount_init, nswap2l_prefetch_amount_exit },
	{ nswap2l_prefetch_rr_init, nswap2l_prefetch_rr_exit },
	{ nswap2l_prefetch_random_init, nswap2l_prefetch_random_exit },
	{ nswap2l_prefetch_clock_init, nswap2l_prefetch_clock_exit },
	{ nswap2l_prefetch_auto_init, nswap2l_prefetch_auto_exit },
};

void nswap2l_policies_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(policy_files) - 1; i >= 0; i--)
		policy_files[i].exit();
}

int nswap2l_policies_init(void)
{
	unsigned int i;
	int r;

	for (i = 0; i < ARRAY_SIZE(policy_files); i++) {
		r = policy_files[i].init();
		if (r) {
			while (i--)
				policy_files[i].exit();
			return r;
		}
	}
	return 0;
}
