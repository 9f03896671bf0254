/* SPDX-License-Identifier: GPL-2.0 */
/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), enough for nswapd's auth. */
#ifndef NSWAPD_SHA256_H
#define NSWAPD_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

struct sha256 {
	uint32_t state[8];
	uint64_t total;			/* bytes hashed so far */
	uint8_t block[SHA256_BLOCK_SIZE];
	size_t used;			/* bytes waiting in block */
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, size_t len);
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_SIZE]);

struct hmac_sha256 {
	struct sha256 inner;
	uint8_t outer_key[SHA256_BLOCK_SIZE];	/* key ^ opad, for final */
};

void hmac_sha256_init(struct hmac_sha256 *ctx, const void *key, size_t key_len);
void hmac_sha256_update(struct hmac_sha256 *ctx, const void *data, size_t len);
void hmac_sha256_final(struct hmac_sha256 *ctx, uint8_t mac[SHA256_DIGEST_SIZE]);

/*
 * For the unit tests: with portable, hash with the portable C code from now
 * on; without, with the CPU's SHA instructions if it has them (the default).
 * Returns whether the SHA instructions are in use.
 */
bool sha256_force_portable(bool portable);

#endif
