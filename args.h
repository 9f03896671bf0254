/* SPDX-License-Identifier: GPL-2.0 */
/* A table line's words (args.c). */
#ifndef NSWAP2L_ARGS_H
#define NSWAP2L_ARGS_H

#include "device.h"

int nswap2l_parse_table(struct dm_target *ti, struct dm_arg_set *as, struct table_args *args);
int nswap2l_parse_tier_options(struct nswap2l_table *t, const struct table_args *args);
int nswap2l_parse_prefetch(struct dm_target *ti, const struct table_args *args,
			   struct nswap2l_prefetch_config *cfg);
void nswap2l_emit_table(struct nswap2l_table *t, char *result, unsigned int maxlen,
			unsigned int *sz_ptr);

#endif
