// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM's table options: key=, client=, reliability=, protect= and
 * timeout=.  The core collects these words (struct nswap2l_tier_opts_ops);
 * they are checked, parsed and printed back here.  A new option is a key
 * below, its check and a field of struct netram_args.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "netram_args.h"
#include "netram_scheme.h"

#define NETRAM_DEFAULT_TIMEOUT_SECS	30
#define NETRAM_DEFAULT_PARITY_GROUP	5	/* Nswap's */

/* Indexes into keys[] and values[]. */
enum {
	NETRAM_OPT_KEY,
	NETRAM_OPT_CLIENT,
	NETRAM_OPT_RELIABILITY,
	NETRAM_OPT_PROTECT,
	NETRAM_OPT_TIMEOUT,
	NETRAM_NR_OPTS
};
static_assert(NETRAM_NR_OPTS <= NSWAP2L_TIER_MAX_OPTS);

static const char *const netram_keys[NETRAM_NR_OPTS + 1] = {
	[NETRAM_OPT_KEY] = "key",
	[NETRAM_OPT_CLIENT] = "client",
	[NETRAM_OPT_RELIABILITY] = "reliability",
	[NETRAM_OPT_PROTECT] = "protect",
	[NETRAM_OPT_TIMEOUT] = "timeout",
};

/* The refusals of an option given without netram=, in the order they are checked. */
static const struct {
	unsigned int key;
	const char *summary;
	const char *detail;
} netram_needs_tier[] = {
	{ NETRAM_OPT_RELIABILITY, "reliability= without netram=",
	  "reliability= is about Network RAM pages, but no netram= is given" },
	{ NETRAM_OPT_KEY, "key= without netram=",
	  "key= is the Network RAM key, but no netram= is given" },
	{ NETRAM_OPT_CLIENT, "client= without netram=",
	  "client= names us to Network RAM servers, but no netram= is given" },
	{ NETRAM_OPT_PROTECT, "protect= without netram=",
	  "protect= is about Network RAM pages, but no netram= is given" },
};

/* reliability= names a scheme; the first is the default. */
static const struct netram_scheme *const netram_schemes[] = {
	&netram_single,
	&netram_mirror,
	&netram_parity_scheme,
};

static int netram_parse_timeout(struct dm_target *ti, const char *value, unsigned int *secs)
{
	if (kstrtouint(value, 10, secs) || !*secs || *secs > 3600) {
		nswap2l_bad_table(ti, "Bad timeout", "timeout=%s: need 1..3600 seconds", value);
		return -EINVAL;
	}
	return 0;
}

/* A bad timeout= is refused as it is read, before any other check of the line. */
static int netram_check_word(struct dm_target *ti, unsigned int key, const char *value)
{
	unsigned int secs;

	return key == NETRAM_OPT_TIMEOUT ? netram_parse_timeout(ti, value, &secs) : 0;
}

/* The server keeps a file per client name: a name must be a safe file name. */
static bool netram_client_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len && len < NSWAP2L_PROTO_CLIENT_NAME_SIZE && name[0] != '.' &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == len;
}

static int netram_check(struct dm_target *ti, const char *const *values, bool present)
{
	const char *protect = values[NETRAM_OPT_PROTECT];
	const char *client = values[NETRAM_OPT_CLIENT];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(netram_needs_tier) && !present; i++) {
		if (values[netram_needs_tier[i].key]) {
			nswap2l_bad_table(ti, netram_needs_tier[i].summary, "%s",
					  netram_needs_tier[i].detail);
			return -EINVAL;
		}
	}
	if (protect && strlen(protect) >= NSWAP2L_PROTECT_NAME_SIZE) {
		nswap2l_bad_table(ti, "Bad protect= option",
				  "protect=%s: need none or an AEAD name of at most %u characters",
				  protect, NSWAP2L_PROTECT_NAME_SIZE - 1);
		return -EINVAL;
	}
	if (client && !netram_client_name_valid(client)) {
		nswap2l_bad_table(ti, "Bad client name",
				  "client=%s: need 1 to %u characters of A-Z a-z 0-9 _ . -, not starting with '.'",
				  client, NSWAP2L_PROTO_CLIENT_NAME_SIZE - 1);
		return -EINVAL;
	}
	return 0;
}

/* none, mirror, parity or parity,group=N */
static int netram_parse_reliability(struct dm_target *ti, const char *value,
				    struct netram_args *a)
{
	char buf[32], *options = buf, *name;
	unsigned int i;

	a->scheme = netram_schemes[0];
	a->parity_group = 0;
	if (!value)
		return 0;
	if (strscpy(buf, value, sizeof(buf)) < 0)
		goto bad;
	name = strsep(&options, ",");
	for (i = 0; i < ARRAY_SIZE(netram_schemes); i++)
		if (!strcmp(netram_schemes[i]->name, name))
			break;
	if (i == ARRAY_SIZE(netram_schemes) ||
	    (options && netram_schemes[i] != &netram_parity_scheme))
		goto bad;
	a->scheme = netram_schemes[i];
	if (a->scheme != &netram_parity_scheme)
		return 0;
	a->parity_group = NETRAM_DEFAULT_PARITY_GROUP;
	if (options && (strncmp(options, "group=", 6) ||
			kstrtouint(options + 6, 10, &a->parity_group) ||
			a->parity_group < 2 || a->parity_group > NSWAP2L_MAX_PARITY_GROUP)) {
		nswap2l_bad_table(ti, "Bad reliability= option",
				  "reliability=%s: need parity,group=N with N from 2 to %u pages",
				  value, NSWAP2L_MAX_PARITY_GROUP);
		return -EINVAL;
	}
	return 0;
bad:
	nswap2l_bad_table(ti, "Bad reliability= option",
			  "reliability=%s: need none, mirror, parity or parity,group=N", value);
	return -EINVAL;
}

/* Defaults for what the line leaves out; protect= only with netram=. */
static void *netram_parse(struct dm_target *ti, const char *const *values, bool present)
{
	const char *key = values[NETRAM_OPT_KEY];
	const char *protect = values[NETRAM_OPT_PROTECT];
	size_t key_size = key ? strlen(key) + 1 : 0;
	struct netram_args *a;
	int r;

	a = kzalloc(struct_size(a, key_buf, key_size), GFP_KERNEL);
	if (!a) {
		ti->error = "Cannot allocate Network RAM options";
		return ERR_PTR(-ENOMEM);
	}
	r = netram_parse_reliability(ti, values[NETRAM_OPT_RELIABILITY], a);
	a->timeout_secs = NETRAM_DEFAULT_TIMEOUT_SECS;
	if (!r && values[NETRAM_OPT_TIMEOUT])
		r = netram_parse_timeout(ti, values[NETRAM_OPT_TIMEOUT], &a->timeout_secs);
	if (r) {
		kfree(a);
		return ERR_PTR(r);
	}
	if (key)
		a->key_spec = memcpy(a->key_buf, key, key_size);
	strscpy_pad(a->client_name, values[NETRAM_OPT_CLIENT] ?: NSWAP2L_DEFAULT_CLIENT_NAME,
		    sizeof(a->client_name));
	if (!protect && present)
		protect = NSWAP2L_DEFAULT_PROTECT;
	if (protect)
		strscpy(a->protect, protect, sizeof(a->protect));
	return a;
}

static void netram_free_args(void *args)
{
	kfree(args);
}

/* The servers hold the device's pages under its key, client name, protect= and scheme. */
static int netram_check_reload(struct nswap2l_tier *tier, struct dm_target *ti, const void *args)
{
	struct netram_tier *nt = to_netram_tier(tier);
	const struct netram_args *a = args;

	if (strcmp(nt->key_spec ?: "", a->key_spec ?: "")) {
		nswap2l_bad_table(ti, "A reload must keep the key",
				  "reload changes key= from '%s' to '%s': the servers hold pages under the live key",
				  nt->key_spec ?: "", a->key_spec ?: "");
		return -EINVAL;
	}
	if (strcmp(nt->client_name, a->client_name)) {
		nswap2l_bad_table(ti, "A reload must keep the client name",
				  "reload changes client= from '%s' to '%s': the servers hold pages under the live name",
				  nt->client_name, a->client_name);
		return -EINVAL;
	}
	if (strcmp(nt->protect_name, a->protect)) {
		nswap2l_bad_table(ti, "A reload must keep protect=",
				  "reload changes protect= from '%s' to '%s': the servers hold pages sealed under the live setting",
				  nt->protect_name, a->protect);
		return -EINVAL;
	}
	if (a->scheme != nt->scheme || a->parity_group != nt->parity_group) {
		nswap2l_bad_table(ti, "A reload must keep reliability=",
				  "reload changes reliability= from %s to %s (or the parity group size): the pages stored keep their redundancy",
				  nt->scheme->name, a->scheme->name);
		return -EINVAL;
	}
	return 0;
}

static bool netram_named_client(const struct netram_args *a)
{
	return strcmp(a->client_name, NSWAP2L_DEFAULT_CLIENT_NAME);
}

static bool netram_other_protect(const struct netram_args *a)
{
	return a->protect[0] && strcmp(a->protect, NSWAP2L_DEFAULT_PROTECT);
}

/* Only options that differ from their defaults are printed. */
static unsigned int netram_count_args(const void *args)
{
	const struct netram_args *a = args;

	return !!a->key_spec + netram_named_client(a) + (a->scheme != netram_schemes[0]) +
	       netram_other_protect(a) + (a->timeout_secs != NETRAM_DEFAULT_TIMEOUT_SECS);
}

static void netram_emit_args(const void *args, char *result, unsigned int maxlen,
			     unsigned int *sz_ptr)
{
	const struct netram_args *a = args;
	unsigned int sz = *sz_ptr;

	/* Only the key's description: the key itself stays in the keyring. */
	if (a->key_spec)
		DMEMIT(" key=%s", a->key_spec);
	if (netram_named_client(a))
		DMEMIT(" client=%s", a->client_name);
	if (a->scheme != netram_schemes[0])
		DMEMIT(" reliability=%s", a->scheme->name);
	if (a->scheme == &netram_parity_scheme)
		DMEMIT(",group=%u", a->parity_group);
	if (netram_other_protect(a))
		DMEMIT(" protect=%s", a->protect);
	if (a->timeout_secs != NETRAM_DEFAULT_TIMEOUT_SECS)
		DMEMIT(" timeout=%u", a->timeout_secs);
	*sz_ptr = sz;
}

const struct nswap2l_tier_opts_ops netram_opts_ops = {
	.keys = netram_keys,
	.check_word = netram_check_word,
	.check = netram_check,
	.parse = netram_parse,
	.free = netram_free_args,
	.check_reload = netram_check_reload,
	.count = netram_count_args,
	.emit = netram_emit_args,
};
