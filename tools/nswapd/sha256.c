// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 after FIPS 180-4 and HMAC after RFC 2104.  Written out here so that
 * nswapd needs nothing beyond libc.  On x86 the block function uses the SHA
 * extensions when the CPU has them (several times faster than the portable
 * code, which matters once every page carries a MAC); the choice is made at
 * run time, so the binary needs no -m flags and runs on any x86-64.
 */
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

typedef void sha256_blocks_fn(uint32_t state[8], const uint8_t *p, size_t blocks);

static void sha256_blocks_portable(uint32_t state[8], const uint8_t *p, size_t blocks)
{
	for (; blocks; blocks--, p += SHA256_BLOCK_SIZE)
		sha256_block(state, p);
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * Four rounds per step with sha256rnds2, which wants the state as ABEF and
 * CDGH; the message schedule's next four words come from sha256msg1/msg2 on
 * the last sixteen.  Intel's sample (as in the kernel's sha256_ni_asm.S).
 */
static void __attribute__((target("sha,sse4.1,ssse3")))
sha256_blocks_ni(uint32_t state[8], const uint8_t *p, size_t blocks)
{
	/* byte-swaps each 32-bit word: the message is big-endian */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i abef, cdgh, abef_saved, cdgh_saved, w[4], k, tmp;
	int i;

	tmp = _mm_loadu_si128((const __m128i *)&state[0]);	/* DCBA */
	cdgh = _mm_loadu_si128((const __m128i *)&state[4]);	/* HGFE */
	tmp = _mm_shuffle_epi32(tmp, 0xb1);			/* CDAB */
	cdgh = _mm_shuffle_epi32(cdgh, 0x1b);			/* EFGH */
	abef = _mm_alignr_epi8(tmp, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, tmp, 0xf0);

	for (; blocks; blocks--, p += SHA256_BLOCK_SIZE) {
		abef_saved = abef;
		cdgh_saved = cdgh;
		/* unrolled, w[] stays in registers */
#pragma GCC unroll 16
		for (i = 0; i < 16; i++) {
			__m128i *wi = &w[i & 3];

			if (i < 4) {
				*wi = _mm_loadu_si128((const __m128i *)(p + 16 * i));
				*wi = _mm_shuffle_epi8(*wi, bswap);
			} else {
				/* W[t-16] + s0(W[t-15]) + W[t-7], then + s1(W[t-2]) */
				tmp = _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4);
				*wi = _mm_sha256msg1_epu32(*wi, w[(i + 1) & 3]);
				*wi = _mm_sha256msg2_epu32(_mm_add_epi32(*wi, tmp), w[(i + 3) & 3]);
			}
			k = _mm_add_epi32(*wi, _mm_loadu_si128((const __m128i *)&round_constants[4 * i]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0e));
		}
		abef = _mm_add_epi32(abef, abef_saved);
		cdgh = _mm_add_epi32(cdgh, cdgh_saved);
	}

	tmp = _mm_shuffle_epi32(abef, 0x1b);			/* FEBA */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);			/* DCHG */
	_mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(tmp, cdgh, 0xf0));
	_mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(cdgh, tmp, 8));
}

static bool sha256_cpu_has_ni(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSE4_1) || !(ecx & bit_SSSE3))
		return false;
	return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA);
}
#endif

static sha256_blocks_fn *sha256_blocks_best(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (sha256_cpu_has_ni())
		return sha256_blocks_ni;
#endif
	return sha256_blocks_portable;
}

/* the CPU is asked once, at the first block */
static sha256_blocks_fn sha256_blocks_first;
static sha256_blocks_fn *sha256_blocks = sha256_blocks_first;

static void sha256_blocks_first(uint32_t state[8], const uint8_t *p, size_t blocks)
{
	sha256_blocks = sha256_blocks_best();
	sha256_blocks(state, p, blocks);
}

bool sha256_force_portable(bool portable)
{
	sha256_blocks = portable ? sha256_blocks_portable : sha256_blocks_best();
	return sha256_blocks != sha256_blocks_portable;
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
	size_t n;

	if (!len)
		return;
	ctx->total += len;
	if (ctx->used) {
		n = SHA256_BLOCK_SIZE - ctx->used;
		if (n > len)
			n = len;
		memcpy(ctx->block + ctx->used, p, n);
		ctx->used += n;
		p += n;
		len -= n;
		if (ctx->used < SHA256_BLOCK_SIZE)
			return;
		sha256_blocks(ctx->state, ctx->block, 1);
		ctx->used = 0;
	}
	/* whole blocks straight from the caller's buffer, in one call */
	n = len / SHA256_BLOCK_SIZE;
	if (n)
		sha256_blocks(ctx->state, p, n);
	p += n * SHA256_BLOCK_SIZE;
	len -= n * SHA256_BLOCK_SIZE;
	memcpy(ctx->block, p, len);
	ctx->used = len;
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
