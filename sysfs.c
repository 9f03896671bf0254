// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/nswap2l/<dm name>/: the same controls and counters as
 * dmsetup message and status, for users and scripts that prefer files.
 *
 *   placement   the placement policy; write a policy name to switch
 *   tiers       one line per tier: name capacity used reads writes discards
 *   servers     one line per Network RAM server (see the tier)
 *   profile     the concurrency profile; write "reset" to clear it
 *   prefetch/   policy, when, amount, interval_ms (read and write) and stats
 *   recovery_rate_min, recovery_rate_max
 *               recovery's pages/s, as the recovery_rate message sets them
 *
 * The directory belongs to the device, whatever table is loaded: it exists
 * while the device is resumed (added on resume, removed on postsuspend), so
 * that nothing reads the device's state while a reload changes it.
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "core.h"
#include "mover.h"
#include "prefetch.h"
#include "profiler.h"

static struct kobject *nswap2l_kobj;

struct nswap2l_sysfs {
	struct kobject kobj;
	struct nswap2l *nc;
	struct completion released;
};

static struct nswap2l *kobj_to_nc(struct kobject *kobj)
{
	return container_of(kobj, struct nswap2l_sysfs, kobj)->nc;
}

static ssize_t placement_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", nswap2l_placement_name(kobj_to_nc(kobj)));
}

static ssize_t placement_store(struct kobject *kobj, struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	char name[32];
	int r;

	if (!count || count >= sizeof(name))
		return -EINVAL;
	strscpy(name, buf, sizeof(name));
	strim(name);
	r = nswap2l_set_placement(kobj_to_nc(kobj), name);
	return r ? r : count;
}

static ssize_t tiers_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return nswap2l_stats_show_tiers(kobj_to_nc(kobj), buf);
}

static ssize_t servers_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct nswap2l_tier *tier = kobj_to_nc(kobj)->tiers[NSWAP2L_TIER_NETRAM];

	return tier ? nswap2l_tier_show_servers(tier, buf) : 0;
}

static ssize_t profile_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct nswap2l *nc = kobj_to_nc(kobj);

	return nswap2l_prefetch_emit_counters(nc, buf, nswap2l_profiler_show(nc, buf));
}

static ssize_t profile_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	if (!sysfs_streq(buf, "reset"))
		return -EINVAL;
	nswap2l_profiler_reset(kobj_to_nc(kobj));
	return count;
}

/* recovery_rate_min and recovery_rate_max: one end of the recovery_rate message. */
static ssize_t recovery_rate_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	unsigned int rate[2];

	nswap2l_mover_get_rate(kobj_to_nc(kobj), &rate[0], &rate[1]);
	return sysfs_emit(buf, "%u\n", rate[!strcmp(attr->attr.name, "recovery_rate_max")]);
}

static ssize_t recovery_rate_store(struct kobject *kobj, struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct nswap2l *nc = kobj_to_nc(kobj);
	unsigned int rate[2];
	int r;

	nswap2l_mover_get_rate(nc, &rate[0], &rate[1]);
	r = kstrtouint(buf, 10, &rate[!strcmp(attr->attr.name, "recovery_rate_max")]);
	if (r)
		return r;
	r = nswap2l_mover_set_rate(nc, rate[0], rate[1]);
	return r ? r : count;
}

static struct kobj_attribute placement_attr = __ATTR_RW(placement);
static struct kobj_attribute tiers_attr = __ATTR_RO(tiers);
static struct kobj_attribute servers_attr = __ATTR_RO(servers);
static struct kobj_attribute profile_attr = __ATTR_RW(profile);
static struct kobj_attribute recovery_rate_min_attr =
	__ATTR(recovery_rate_min, 0644, recovery_rate_show, recovery_rate_store);
static struct kobj_attribute recovery_rate_max_attr =
	__ATTR(recovery_rate_max, 0644, recovery_rate_show, recovery_rate_store);

static struct attribute *nswap2l_attrs[] = {
	&placement_attr.attr,
	&tiers_attr.attr,
	&servers_attr.attr,
	&profile_attr.attr,
	&recovery_rate_min_attr.attr,
	&recovery_rate_max_attr.attr,
	NULL,
};

static const struct attribute_group nswap2l_group = {
	.attrs = nswap2l_attrs,
};

/* prefetch/<setting>: the file's name is the setting's. */
static ssize_t prefetch_setting_show(struct kobject *kobj, struct kobj_attribute *attr,
				     char *buf)
{
	return nswap2l_prefetch_show(kobj_to_nc(kobj), attr->attr.name, buf);
}

static ssize_t prefetch_setting_store(struct kobject *kobj, struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	char value[32];
	int r;

	if (!count || count >= sizeof(value))
		return -EINVAL;
	strscpy(value, buf, sizeof(value));
	r = nswap2l_prefetch_set(kobj_to_nc(kobj), attr->attr.name, strim(value));
	return r ? r : count;
}

static ssize_t stats_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return nswap2l_prefetch_show_stats(kobj_to_nc(kobj), buf);
}

#define PREFETCH_SETTING(_name) \
	__ATTR(_name, 0644, prefetch_setting_show, prefetch_setting_store)

static struct kobj_attribute prefetch_policy_attr = PREFETCH_SETTING(policy);
static struct kobj_attribute prefetch_when_attr = PREFETCH_SETTING(when);
static struct kobj_attribute prefetch_amount_attr = PREFETCH_SETTING(amount);
static struct kobj_attribute prefetch_interval_attr = PREFETCH_SETTING(interval_ms);
static struct kobj_attribute prefetch_stats_attr = __ATTR_RO(stats);

static struct attribute *prefetch_attrs[] = {
	&prefetch_policy_attr.attr,
	&prefetch_when_attr.attr,
	&prefetch_amount_attr.attr,
	&prefetch_interval_attr.attr,
	&prefetch_stats_attr.attr,
	NULL,
};

static const struct attribute_group prefetch_group = {
	.name = "prefetch",
	.attrs = prefetch_attrs,
};

static const struct attribute_group *nswap2l_groups[] = {
	&nswap2l_group,
	&prefetch_group,
	NULL,
};

static void nswap2l_kobj_release(struct kobject *kobj)
{
	complete(&container_of(kobj, struct nswap2l_sysfs, kobj)->released);
}

static const struct kobj_type nswap2l_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = nswap2l_groups,
	.release = nswap2l_kobj_release,
};

/* On resume; a name that cannot be added only costs the files. */
void nswap2l_sysfs_add(struct nswap2l *nc)
{
	struct nswap2l_sysfs *s;
	char name[DM_NAME_LEN];
	int r;

	if (nc->sysfs || dm_copy_name_and_uuid(nc->md, name, NULL))
		return;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return;
	s->nc = nc;
	init_completion(&s->released);
	r = kobject_init_and_add(&s->kobj, &nswap2l_ktype, nswap2l_kobj, "%s", name);
	if (r) {
		DMWARN("%s: no /sys/kernel/nswap2l/%s (error %d)", nc->name, name, r);
		kobject_put(&s->kobj);
		wait_for_completion(&s->released);
		kfree(s);
		return;
	}
	nc->sysfs = s;
}

/* On postsuspend and destroy: returns once no reader is left. */
void nswap2l_sysfs_remove(struct nswap2l *nc)
{
	struct nswap2l_sysfs *s = nc->sysfs;

	if (!s)
		return;
	nc->sysfs = NULL;
	kobject_del(&s->kobj);
	kobject_put(&s->kobj);
	wait_for_completion(&s->released);
	kfree(s);
}

int nswap2l_sysfs_init(void)
{
	nswap2l_kobj = kobject_create_and_add("nswap2l", kernel_kobj);
	return nswap2l_kobj ? 0 : -ENOMEM;
}

void nswap2l_sysfs_exit(void)
{
	kobject_put(nswap2l_kobj);
}
