// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 after FIPS 180-4 and HMAC after RFC 2104.  Written out here so that
 * nswapd needs nothing beyond libc; speed does not matter (one MAC per side
 * per connection).
 */
#include <string.h>

#include "sha256.h"

static const uint32_t round_constants[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t state[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = state[0]; b = state[1]; c = state[2]; d = state[3];
	e = state[4]; f = state[5]; g = state[6]; h = state[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
			      ((e & f) ^ (~e & g)) + round_constants[i] + w[i];
		uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));

		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	state[0] += a; state[1] += b; state[2] += c; state[3] += d;
	state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

void sha256_init(struct sha256 *ctx)
{
	static const uint32_t initial[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, initial, sizeof(initial));
	ctx->total = 0;
	ctx->used = 0;
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;

	ctx->total += len;
	while (len) {
		size_t n = SHA256_BLOCK_SIZE - ctx->used;

		if (n > len)
			n = len;
		memcpy(ctx->block + ctx->used, p, n);
		ctx->used += n;
		p += n;
		len -= n;
		if (ctx->used == SHA256_BLOCK_SIZE) {
			sha256_block(ctx->state, ctx->block);
			ctx->used = 0;
		}
	}
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_SIZE])
{
	uint64_t bits = ctx->total * 8;
	uint8_t pad[SHA256_BLOCK_SIZE + 8] = { 0x80 };
	/* 0x80, zeros up to 56 mod 64, then the 64-bit big-endian length */
	size_t pad_len = (ctx->used < 56 ? 56 : 120) - ctx->used;
	int i;

	for (i = 0; i < 8; i++)
		pad[pad_len + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(ctx, pad, pad_len + 8);
	for (i = 0; i < 8; i++) {
		digest[4 * i] = (uint8_t)(ctx->state[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
		digest[4 * i + 3] = (uint8_t)ctx->state[i];
	}
	memset(ctx, 0, sizeof(*ctx));
}

void hmac_sha256_init(struct hmac_sha256 *ctx, const void *key, size_t key_len)
{
	uint8_t block_key[SHA256_BLOCK_SIZE] = { 0 };
	uint8_t inner_key[SHA256_BLOCK_SIZE];
	size_t i;

	if (key_len > SHA256_BLOCK_SIZE) {
		sha256_init(&ctx->inner);
		sha256_update(&ctx->inner, key, key_len);
		sha256_final(&ctx->inner, block_key);
	} else if (key_len) {
		memcpy(block_key, key, key_len);
	}
	for (i = 0; i < SHA256_BLOCK_SIZE; i++) {
		inner_key[i] = block_key[i] ^ 0x36;
		ctx->outer_key[i] = block_key[i] ^ 0x5c;
	}
	sha256_init(&ctx->inner);
	sha256_update(&ctx->inner, inner_key, sizeof(inner_key));
	memset(block_key, 0, sizeof(block_key));
	memset(inner_key, 0, sizeof(inner_key));
}

void hmac_sha256_update(struct hmac_sha256 *ctx, const void *data, size_t len)
{
	sha256_update(&ctx->inner, data, len);
}

void hmac_sha256_final(struct hmac_sha256 *ctx, uint8_t mac[SHA256_DIGEST_SIZE])
{
	uint8_t inner_digest[SHA256_DIGEST_SIZE];
	struct sha256 outer;

	sha256_final(&ctx->inner, inner_digest);
	sha256_init(&outer);
	sha256_update(&outer, ctx->outer_key, sizeof(ctx->outer_key));
	sha256_update(&outer, inner_digest, sizeof(inner_digest));
	sha256_final(&outer, mac);
	memset(ctx, 0, sizeof(*ctx));
}
