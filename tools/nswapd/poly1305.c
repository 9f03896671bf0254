// SPDX-License-Identifier: GPL-2.0
/*
 * Poly1305 after RFC 8439, with 64-bit limbs and 128-bit products (as
 * OpenSSL's portable C code): h is h[0] + h[1] 2^64 + h[2] 2^128,
 * kept below 2^131 by folding what lies past 2^130 back times 5 (2^130 = 5
 * mod 2^130 - 5).  No branch or table index depends on the key or the data,
 * so the time taken tells nothing about either.
 */
#include <string.h>

#include "byteorder.h"
#include "poly1305.h"

typedef unsigned __int128 u128;

void poly1305_init(struct poly1305 *ctx, const uint8_t key[POLY1305_KEY_SIZE])
{
	ctx->r[0] = load_le64(key) & 0x0ffffffc0fffffffull;
	ctx->r[1] = load_le64(key + 8) & 0x0ffffffc0ffffffcull;
	memset(ctx->h, 0, sizeof(ctx->h));
	ctx->s[0] = load_le64(key + 16);
	ctx->s[1] = load_le64(key + 24);
	ctx->used = 0;
}

/*
 * h += c, carried up to h[2].  Carries are compares, not 128-bit sums: GCC
 * makes those into setc (no branch either way) but spills 128-bit sums.
 */
static void add_carried(uint64_t h[3], uint64_t c)
{
	uint64_t carry;

	h[0] += c;
	carry = h[0] < c;
	h[1] += carry;
	h[2] += h[1] < carry;
}

/*
 * h = (h + block + top 2^128) r, mod 2^130 - 5 but for a multiple of it,
 * for each block; top is 1 but for a short last block, padded by the caller.
 */
static void poly1305_blocks(struct poly1305 *ctx, const uint8_t *p, size_t blocks, uint64_t top)
{
	uint64_t r0 = ctx->r[0], r1 = ctx->r[1], m0, m1, c;
	/* r1 2^128 = r1 5/4 mod p, exact as the clamp clears r1's low 2 bits */
	uint64_t s1 = r1 + (r1 >> 2);
	/* in locals, which no store through a byte pointer can change */
	uint64_t h[3] = { ctx->h[0], ctx->h[1], ctx->h[2] };
	u128 d0, d1;

	for (; blocks; blocks--, p += POLY1305_BLOCK_SIZE) {
		m0 = load_le64(p);
		m1 = load_le64(p + 8);
		add_carried(h, m0);
		h[1] += m1;
		h[2] += (h[1] < m1) + top;
		/* h[2] is at most 6 and r0 below 2^60: the products of h[2] fit 64 bits */
		d0 = (u128)h[0] * r0 + (u128)h[1] * s1;
		d1 = (u128)h[0] * r1 + (u128)h[1] * r0 + h[2] * s1;
		h[0] = (uint64_t)d0;
		d1 += (uint64_t)(d0 >> 64);
		h[1] = (uint64_t)d1;
		h[2] = h[2] * r0 + (uint64_t)(d1 >> 64);
		/* from 2^130 up, back to the bottom times 5 */
		c = (h[2] >> 2) * 5;
		h[2] &= 3;
		add_carried(h, c);
	}
	memcpy(ctx->h, h, sizeof(h));
}

void poly1305_update(struct poly1305 *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;

	while (len) {
		if (!ctx->used && len >= POLY1305_BLOCK_SIZE) {
			/* whole blocks straight from the caller's buffer */
			n = len / POLY1305_BLOCK_SIZE;
			poly1305_blocks(ctx, p, n, 1);
			n *= POLY1305_BLOCK_SIZE;
		} else {
			/* a piece of a block: kept until the block is whole */
			n = POLY1305_BLOCK_SIZE - ctx->used < len ? POLY1305_BLOCK_SIZE - ctx->used : len;
			memcpy(ctx->block + ctx->used, p, n);
			ctx->used += n;
			if (ctx->used == POLY1305_BLOCK_SIZE) {
				poly1305_blocks(ctx, ctx->block, 1, 1);
				ctx->used = 0;
			}
		}
		p += n;
		len -= n;
	}
}

void poly1305_final(struct poly1305 *ctx, uint8_t tag[POLY1305_TAG_SIZE])
{
	uint64_t g[3], use_g, low;

	/* a short last block: a 1 after its bytes, zeros up to 16, no 2^128 */
	if (ctx->used) {
		ctx->block[ctx->used] = 1;
		memset(ctx->block + ctx->used + 1, 0, POLY1305_BLOCK_SIZE - ctx->used - 1);
		poly1305_blocks(ctx, ctx->block, 1, 0);
	}
	/*
	 * h is below 2p, so h mod p is h or h - p; g = h + 5 reaches 2^130
	 * exactly when h >= p, and then its low 128 bits are those of h - p.
	 */
	memcpy(g, ctx->h, sizeof(g));
	add_carried(g, 5);
	use_g = 0 - (g[2] >> 2);
	ctx->h[0] = (ctx->h[0] & ~use_g) | (g[0] & use_g);
	ctx->h[1] = (ctx->h[1] & ~use_g) | (g[1] & use_g);
	/* tag = h + s mod 2^128 */
	low = ctx->h[0] + ctx->s[0];
	store_le64(tag, low);
	store_le64(tag + 8, ctx->h[1] + ctx->s[1] + (low < ctx->s[0]));
	memset(ctx, 0, sizeof(*ctx));
}
