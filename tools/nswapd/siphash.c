// SPDX-License-Identifier: GPL-2.0
/* SipHash-2-4 as in the paper: 2 rounds per message word, 4 to finish. */
#include <string.h>

#include "byteorder.h"
#include "siphash.h"

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

static void sip_compress(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len)
{
	uint64_t v[4] = {
		key->k0 ^ 0x736f6d6570736575ull, key->k1 ^ 0x646f72616e646f6dull,
		key->k0 ^ 0x6c7967656e657261ull, key->k1 ^ 0x7465646279746573ull,
	};
	const uint8_t *p = data;
	uint8_t last[8] = { 0 };
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		sip_compress(v, load_le64(p + i));
	/* the last word: the remaining bytes, the length's low byte on top */
	memcpy(last, p + i, len - i);
	last[7] = (uint8_t)len;
	sip_compress(v, load_le64(last));
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
