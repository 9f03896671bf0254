/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian 64-bit words in byte arrays, on a CPU of either byte order.
 * Written out byte by byte, which compilers turn into one load or store
 * (GCC 12 leaves a loop as eight byte loads).
 */
#ifndef NSWAPD_BYTEORDER_H
#define NSWAPD_BYTEORDER_H

#include <stdint.h>

static inline uint64_t load_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
	       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)(v >> 32);
	p[5] = (uint8_t)(v >> 40);
	p[6] = (uint8_t)(v >> 48);
	p[7] = (uint8_t)(v >> 56);
}

#endif
