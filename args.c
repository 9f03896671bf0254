// SPDX-License-Identifier: GPL-2.0
/*
 * dm-nswap2l: the words of a table line, parsed and printed back.  The
 * options a tier type owns are its own (struct nswap2l_tier_opts_ops):
 * they are only collected and handed over here.
 */
#include <linux/string.h>

#include "args.h"

/*----------------------------------------------------------------
 * Parsing a table line
 *--------------------------------------------------------------*/
static const struct nswap2l_tier_type *find_tier_type(const char *key)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++)
		if (!strcmp(nswap2l_tier_types[i]->name, key))
			return nswap2l_tier_types[i];
	return NULL;
}

/* Options given twice are refused: the later one would silently win. */
static int set_once(struct dm_target *ti, const char **slot, const char *value,
		    const char *name)
{
	if (*slot) {
		nswap2l_bad_table(ti, "Option given twice", "%s given twice", name);
		return -EINVAL;
	}
	*slot = value;
	return 0;
}

/* A word a tier type owns: 1 if none does. */
static int collect_tier_opt(struct dm_target *ti, const char *key, const char *value,
			    struct table_args *args)
{
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++) {
		const struct nswap2l_tier_opts_ops *opts = nswap2l_tier_types[i]->opts;
		const char **slot;

		for (k = 0; opts && opts->keys[k]; k++) {
			if (strcmp(opts->keys[k], key))
				continue;
			slot = &args->tier_opts[nswap2l_tier_types[i]->id][k];
			if (*slot) {
				nswap2l_bad_table(ti, "Option given twice", "%s= given twice", key);
				return -EINVAL;
			}
			*slot = value;
			return opts->check_word ? opts->check_word(ti, k, value) : 0;
		}
	}
	return 1;
}

static int parse_arg(struct dm_target *ti, char *arg, struct table_args *args)
{
	const struct nswap2l_tier_type *type;
	char *value = strchr(arg, '=');
	int r;

	if (!strcmp(arg, "overcommit")) {
		if (args->overcommit) {
			nswap2l_bad_table(ti, "overcommit given twice", "overcommit given twice");
			return -EINVAL;
		}
		args->overcommit = true;
		return 0;
	}
	if (!value) {
		nswap2l_bad_table(ti, "Unknown option", "unknown option '%s'", arg);
		return -EINVAL;
	}
	*value++ = '\0';

	type = find_tier_type(arg);
	if (type) {
		if (!*value) {
			nswap2l_bad_table(ti, "Tier without a device", "%s= names no device",
					  type->name);
			return -EINVAL;
		}
		return set_once(ti, &args->tiers[type->id], value, arg);
	}
	if (!strcmp(arg, "placement"))
		return set_once(ti, &args->placement, value, "placement=");
	if (!strcmp(arg, "prefetch"))
		return set_once(ti, &args->prefetch, value, "prefetch=");
	r = collect_tier_opt(ti, arg, value, args);
	if (r <= 0)
		return r;
	nswap2l_bad_table(ti, "Unknown option", "unknown option '%s='", arg);
	return -EINVAL;
}

int nswap2l_parse_table(struct dm_target *ti, struct dm_arg_set *as,
			    struct table_args *args)
{
	static const struct dm_arg nr_args = {
		0, 16, "Invalid number of arguments: need <#args> and that many arguments"
	};
	unsigned int argc, i;
	int r, id;

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
		r = parse_arg(ti, (char *)dm_shift_arg(as), args);
		if (r)
			return r;
	}

	for (id = 0; id < NSWAP2L_NR_TIERS && !args->tiers[id]; id++)
		;
	if (id == NSWAP2L_NR_TIERS) {
		nswap2l_bad_table(ti, "No tier given",
				  "no tier given: need at least one of netram=<servers>, flash=<dev>, disk=<dev>");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++) {
		const struct nswap2l_tier_type *type = nswap2l_tier_types[i];

		if (!type->opts)
			continue;
		r = type->opts->check(ti, args->tier_opts[type->id], args->tiers[type->id]);
		if (r)
			return r;
	}
	if (!args->placement)
		args->placement = NSWAP2L_DEFAULT_PLACEMENT;
	return 0;
}

/* Runs once the devices are open: their errors come first. */
int nswap2l_parse_tier_options(struct nswap2l_table *t, const struct table_args *args)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nswap2l_tier_types); i++) {
		const struct nswap2l_tier_type *type = nswap2l_tier_types[i];
		void *parsed;

		if (!type->opts)
			continue;
		parsed = type->opts->parse(t->ti, args->tier_opts[type->id], args->tiers[type->id]);
		if (IS_ERR(parsed))
			return PTR_ERR(parsed);
		t->tier_args[type->id] = parsed;
	}
	return 0;
}

int nswap2l_parse_prefetch(struct dm_target *ti, const struct table_args *args,
			  struct nswap2l_prefetch_config *cfg)
{
	const char *dev = dm_table_device_name(ti->table);
	char value[NSWAP2L_PREFETCH_CONFIG_LEN];

	nswap2l_prefetch_default_config(cfg);
	if (!args->prefetch)
		return 0;
	if (strscpy(value, args->prefetch, sizeof(value)) < 0) {
		nswap2l_bad_table(ti, "Bad prefetch= option", "prefetch=%s: too long",
				  args->prefetch);
		return -EINVAL;
	}
	if (nswap2l_prefetch_parse(dev, value, cfg)) {
		ti->error = "Bad prefetch= option";
		return -EINVAL;
	}
	if (nswap2l_prefetch_check_tiers(cfg, dev, args->tiers[NSWAP2L_TIER_NETRAM],
					 args->tiers[NSWAP2L_TIER_FLASH])) {
		ti->error = "prefetch= needs netram= and flash=";
		return -EINVAL;
	}
	return 0;
}

/*----------------------------------------------------------------
 * Status, messages, limits
 *--------------------------------------------------------------*/
void nswap2l_emit_table(struct nswap2l_table *t, char *result, unsigned int maxlen,
		       unsigned int *sz_ptr)
{
	struct nswap2l *nc = t->nc;
	/* A table not resumed yet shows its own options, a live one the device's. */
	const char *placement = t->pending ? t->placement_name : nswap2l_placement_name(nc);
	bool overcommit = t->pending ? t->overcommit : nc->overcommit;
	bool default_placement = !strcmp(placement, NSWAP2L_DEFAULT_PLACEMENT);
	struct nswap2l_prefetch_config prefetch;
	char prefetch_arg[NSWAP2L_PREFETCH_CONFIG_LEN];
	bool default_prefetch;
	unsigned int sz = *sz_ptr, nr_args;
	int id;

	if (t->pending)
		prefetch = t->prefetch;
	else
		nswap2l_prefetch_get_config(nc, &prefetch);
	default_prefetch = nswap2l_prefetch_config_is_default(&prefetch);
	nswap2l_prefetch_format(&prefetch, prefetch_arg, sizeof(prefetch_arg));

	nr_args = !default_placement + overcommit + !default_prefetch;
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		nr_args += !!nc->tiers[id];
		if (t->tier_args[id])
			nr_args += nswap2l_tier_types[id]->opts->count(t->tier_args[id]);
	}

	DMEMIT("%u", nr_args);
	for (id = 0; id < NSWAP2L_NR_TIERS; id++) {
		struct nswap2l_tier *tier = nc->tiers[id];

		if (!tier)
			continue;
		DMEMIT(" %s=", tier->type->name);
		nswap2l_tier_emit_table_arg(tier, result, maxlen, &sz);
	}
	/* The tier types' options: the table's own, equal to the device's but a reloaded timeout=. */
	for (id = 0; id < NSWAP2L_NR_TIERS; id++)
		if (t->tier_args[id])
			nswap2l_tier_types[id]->opts->emit(t->tier_args[id], result, maxlen, &sz);
	if (!default_placement)
		DMEMIT(" placement=%s", placement);
	if (overcommit)
		DMEMIT(" overcommit");
	if (!default_prefetch)
		DMEMIT(" prefetch=%s", prefetch_arg);
	*sz_ptr = sz;
}
