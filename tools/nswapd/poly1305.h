/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Poly1305 (RFC 8439), the one-time MAC of the session MAC (see
 * nswap2l_proto.h): a few multiplications per 16 bytes, where HMAC-SHA256
 * over a page costs as much as the rest of a request without SHA
 * instructions.  A key must MAC one message only.
 */
#ifndef NSWAPD_POLY1305_H
#define NSWAPD_POLY1305_H

#include <stddef.h>
#include <stdint.h>

#define POLY1305_KEY_SIZE 32
#define POLY1305_TAG_SIZE 16
#define POLY1305_BLOCK_SIZE 16

struct poly1305 {
	uint64_t r[2];			/* the key's first half, clamped */
	uint64_t h[3];			/* the accumulator, h[2] its bits from 2^128 */
	uint64_t s[2];			/* the key's second half, added at the end */
	uint8_t block[POLY1305_BLOCK_SIZE];
	size_t used;			/* bytes waiting in block */
};

void poly1305_init(struct poly1305 *ctx, const uint8_t key[POLY1305_KEY_SIZE]);
void poly1305_update(struct poly1305 *ctx, const void *data, size_t len);
/* Writes the tag and clears ctx, key included. */
void poly1305_final(struct poly1305 *ctx, uint8_t tag[POLY1305_TAG_SIZE]);

#endif
