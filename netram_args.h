/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network RAM's table options (netram_args.c): what netram_create() and
 * netram_prepare_reload() get as their options' args.
 */
#ifndef NSWAP2L_NETRAM_ARGS_H
#define NSWAP2L_NETRAM_ARGS_H

#include "netram.h"

struct netram_args {
	const struct netram_scheme *scheme;	/* reliability= */
	unsigned int parity_group;	/* reliability=parity,group=N; 0 for the others */
	unsigned int timeout_secs;	/* timeout= */
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];	/* client=, NUL-padded */
	char protect[NSWAP2L_PROTECT_NAME_SIZE];	/* "none", an AEAD; "" without netram= */
	char *key_spec;			/* key=, NULL if not given; points into key_buf */
	char key_buf[];
};

extern const struct nswap2l_tier_opts_ops netram_opts_ops;

#endif
