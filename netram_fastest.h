/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network RAM crypto: the fastest implementation on this machine of the
 * session MAC and of the default page protection (netram_fastest.c).
 */
#ifndef NETRAM_FASTEST_H
#define NETRAM_FASTEST_H

#include <crypto/poly1305.h>

/* One implementation of the library Poly1305: all compute the same MAC. */
struct netram_poly1305_ops {
	const char *name;
	void (*init)(struct poly1305_desc_ctx *desc, const u8 key[POLY1305_KEY_SIZE]);
	void (*update)(struct poly1305_desc_ctx *desc, const u8 *src, unsigned int nbytes);
	void (*final)(struct poly1305_desc_ctx *desc, u8 *digest);
};

const struct netram_poly1305_ops *netram_fastest_poly1305(void);
const char *netram_fastest_aead(const char *aead);

#endif /* NETRAM_FASTEST_H */
