/* SPDX-License-Identifier: GPL-2.0 */
/* The prefetch worker (prefetch.c). */
#ifndef NSWAP2L_PREFETCH_H
#define NSWAP2L_PREFETCH_H

#include "nswap2l_types.h"

/*----------------------------------------------------------------
 * Prefetching (prefetch.c): a worker per device that wakes every interval,
 * asks the Q1/Q2/Q3 policies, and moves the pages they name from Network
 * RAM to flash with the mover's protocol.
 *--------------------------------------------------------------*/
struct nswap2l_prefetch_config {
	const struct nswap2l_prefetch_which *which;	/* NULL: prefetching off */
	const struct nswap2l_prefetch_when *when;
	unsigned int when_arg;
	const struct nswap2l_prefetch_amount *amount;
	unsigned int percent;
	unsigned int cap;		/* pages per wake-up at most */
	unsigned int interval_ms;
};

#define NSWAP2L_PREFETCH_CONFIG_LEN	96

void nswap2l_prefetch_default_config(struct nswap2l_prefetch_config *cfg);
bool nswap2l_prefetch_config_is_default(const struct nswap2l_prefetch_config *cfg);
/*
 * Table option value "<policy>[,when=..][,amount=..][,interval=..]" into
 * @cfg (which holds the defaults); -EINVAL with a dmesg line naming @dev.
 */
int nswap2l_prefetch_parse(const char *dev, char *value, struct nswap2l_prefetch_config *cfg);
/* The table option's value, e.g. "lrs,when=always,amount=written:10:4096,interval=500". */
void nswap2l_prefetch_format(const struct nswap2l_prefetch_config *cfg, char *buf, size_t size);
/* Prefetching moves Network RAM pages to flash: both tiers are needed. */
int nswap2l_prefetch_check_tiers(const struct nswap2l_prefetch_config *cfg, const char *dev,
				 bool has_netram, bool has_flash);

int nswap2l_prefetch_create(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg);
void nswap2l_prefetch_destroy(struct nswap2l *nc);
/*
 * Suspend, and removal before destroy: returns once no batch runs; resume
 * starts the worker again.
 */
void nswap2l_prefetch_pause(struct nswap2l *nc);
void nswap2l_prefetch_resume(struct nswap2l *nc);
/*
 * Reload: the new table's picker is made in its constructor (NULL for
 * none, ERR_PTR on failure), installed on resume or dropped.
 */
struct nswap2l_picker *nswap2l_prefetch_prepare(const struct nswap2l_prefetch_config *cfg);
void nswap2l_prefetch_commit(struct nswap2l *nc, const struct nswap2l_prefetch_config *cfg,
			     struct nswap2l_picker *picker);
void nswap2l_prefetch_get_config(struct nswap2l *nc, struct nswap2l_prefetch_config *cfg);
/* Messages and sysfs: @key is policy, when, amount or interval. */
int nswap2l_prefetch_set(struct nswap2l *nc, const char *key, const char *value);
ssize_t nswap2l_prefetch_show(struct nswap2l *nc, const char *key, char *buf);
ssize_t nswap2l_prefetch_show_stats(struct nswap2l *nc, char *buf);
/* The counters the profile shows too, from @len in a sysfs @buf; the new length. */
int nswap2l_prefetch_emit_counters(struct nswap2l *nc, char *buf, int len);
/* Status fields: <policy> <prefetched> <prefetched_reads> <cancelled>. */
void nswap2l_prefetch_status(struct nswap2l *nc, char *result, unsigned int maxlen,
			     unsigned int *sz);
/* Pages a write placed again after prefetching (its @arm) had moved them. */
void nswap2l_prefetch_note_rewritten(struct nswap2l *nc, unsigned int nr, unsigned int arm);

#endif /* NSWAP2L_PREFETCH_H */
