/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed hash, so that whoever
 * chooses the input cannot choose collisions without knowing the key.
 */
#ifndef NSWAPD_SIPHASH_H
#define NSWAPD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* The 16 key bytes as two little-endian words. */
struct siphash_key {
	uint64_t k0, k1;
};

uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len);

#endif
