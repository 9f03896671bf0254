// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM crypto, the fastest implementation on this machine.  The
 * crypto API ranks implementations by a fixed priority that assumes the
 * CPU runs its SIMD natively; on a CPU that emulates SIMD (a guest under
 * QEMU's TCG) the SIMD ChaCha20 and Poly1305 take several times as long
 * as the generic C ones, and they are the cost of every page.  As md's
 * raid6 and xor do at boot, the first table that needs them times each
 * candidate over a few pages, once per module load, and keeps the fastest.
 * All compute the same function, so a page sealed by one opens with any.
 *
 * Candidates: for the session MAC, the library Poly1305 of the
 * architecture and the generic one; for page protection with the default
 * algorithm (protect= names the algorithm, not a driver), the crypto API's
 * own choice and the generic C pair.  A protect= that names drivers gets
 * those drivers.
 */
#include <crypto/aead.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "netram.h"
#include "netram_fastest.h"

#define NETRAM_TIMED_BYTES	4096	/* a page of the protocol */
#define NETRAM_TIMED_PAGES	4
/* The best of several rounds: an interrupt must not decide. */
#define NETRAM_TIMED_ROUNDS	4
#define NETRAM_AEAD_KEY_SIZE	32
#define NETRAM_AEAD_IV_SIZE	12
#define NETRAM_AEAD_TAG_SIZE	16

#define NETRAM_GENERIC_AEAD	"rfc7539(chacha20-generic,poly1305-generic)"

static const struct netram_poly1305_ops netram_poly1305_impls[] = {
#if IS_ENABLED(CONFIG_CRYPTO_ARCH_HAVE_LIB_POLY1305)
	{ "arch", poly1305_init_arch, poly1305_update_arch, poly1305_final_arch },
#endif
	{ "generic", poly1305_init_generic, poly1305_update_generic, poly1305_final_generic },
};

static DEFINE_MUTEX(netram_fastest_lock);
static const struct netram_poly1305_ops *netram_poly1305_choice;
/* The default AEAD as the crypto API picks it (false) or the generic pair. */
static bool netram_aead_timed, netram_aead_generic;

static u64 netram_poly1305_ns(const struct netram_poly1305_ops *ops, const u8 *buf)
{
	u8 key[POLY1305_KEY_SIZE] = { 1 }, mac[POLY1305_DIGEST_SIZE];
	struct poly1305_desc_ctx desc;
	u64 best = U64_MAX;
	unsigned int round, i;

	for (round = 0; round < NETRAM_TIMED_ROUNDS; round++) {
		u64 start = ktime_get_ns();

		for (i = 0; i < NETRAM_TIMED_PAGES; i++) {
			ops->init(&desc, key);
			ops->update(&desc, buf, NETRAM_TIMED_BYTES);
			ops->final(&desc, mac);
		}
		best = min(best, ktime_get_ns() - start);
	}
	return best / NETRAM_TIMED_PAGES;
}

/* Nanoseconds to seal a page with @driver; U64_MAX if it is not there. */
static u64 netram_aead_ns(const char *driver, u8 *buf)
{
	u8 key[NETRAM_AEAD_KEY_SIZE], iv[NETRAM_AEAD_IV_SIZE] = { 0 };
	struct aead_request *req = NULL;
	struct crypto_aead *tfm;
	struct scatterlist sg;
	u64 best = U64_MAX;
	unsigned int round, i;

	tfm = crypto_alloc_aead(driver, 0, CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(tfm))
		return U64_MAX;
	get_random_bytes(key, sizeof(key));
	if (crypto_aead_ivsize(tfm) != NETRAM_AEAD_IV_SIZE ||
	    crypto_aead_setkey(tfm, key, sizeof(key)) ||
	    crypto_aead_setauthsize(tfm, NETRAM_AEAD_TAG_SIZE))
		goto out;
	req = aead_request_alloc(tfm, GFP_KERNEL);
	if (!req)
		goto out;
	sg_init_one(&sg, buf, NETRAM_TIMED_BYTES + NETRAM_AEAD_TAG_SIZE);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, 0);
	aead_request_set_crypt(req, &sg, &sg, NETRAM_TIMED_BYTES, iv);
	for (round = 0; round < NETRAM_TIMED_ROUNDS; round++) {
		u64 start = ktime_get_ns();

		for (i = 0; i < NETRAM_TIMED_PAGES; i++)
			if (crypto_aead_encrypt(req))
				goto out;
		best = min(best, ktime_get_ns() - start);
	}
	best /= NETRAM_TIMED_PAGES;
out:
	aead_request_free(req);
	crypto_free_aead(tfm);
	memzero_explicit(key, sizeof(key));
	return best;
}

/* Time what is not timed yet; the lock is held.  Without memory: the defaults. */
static void netram_time_candidates(bool aead)
{
	u64 ns, best = U64_MAX, api;
	u8 *buf;
	unsigned int i;

	buf = kzalloc(NETRAM_TIMED_BYTES + NETRAM_AEAD_TAG_SIZE, GFP_KERNEL);
	if (!netram_poly1305_choice) {
		netram_poly1305_choice = &netram_poly1305_impls[0];
		for (i = 0; buf && i < ARRAY_SIZE(netram_poly1305_impls); i++) {
			ns = netram_poly1305_ns(&netram_poly1305_impls[i], buf);
			DMINFO("session MAC: poly1305 %s %llu ns per page",
			       netram_poly1305_impls[i].name, ns);
			if (ns < best) {
				best = ns;
				netram_poly1305_choice = &netram_poly1305_impls[i];
			}
		}
		DMINFO("session MAC: using poly1305 %s", netram_poly1305_choice->name);
	}
	if (aead && !netram_aead_timed && buf) {
		api = netram_aead_ns(NSWAP2L_DEFAULT_PROTECT, buf);
		ns = netram_aead_ns(NETRAM_GENERIC_AEAD, buf);
		netram_aead_generic = ns < api;
		netram_aead_timed = true;
		DMINFO("page protection: %s %llu ns per page, %s %llu ns: using %s",
		       NSWAP2L_DEFAULT_PROTECT, api, NETRAM_GENERIC_AEAD, ns,
		       netram_aead_generic ? NETRAM_GENERIC_AEAD : NSWAP2L_DEFAULT_PROTECT);
	}
	kfree(buf);
}

const struct netram_poly1305_ops *netram_fastest_poly1305(void)
{
	mutex_lock(&netram_fastest_lock);
	if (!netram_poly1305_choice)
		netram_time_candidates(false);
	mutex_unlock(&netram_fastest_lock);
	return netram_poly1305_choice;
}

/* The AEAD to allocate for protect=@aead. */
const char *netram_fastest_aead(const char *aead)
{
	bool generic;

	if (strcmp(aead, NSWAP2L_DEFAULT_PROTECT))
		return aead;
	mutex_lock(&netram_fastest_lock);
	if (!netram_aead_timed)
		netram_time_candidates(true);
	generic = netram_aead_generic;
	mutex_unlock(&netram_fastest_lock);
	return generic ? NETRAM_GENERIC_AEAD : aead;
}
