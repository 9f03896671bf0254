// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM page protection (protect=): every page is
 * encrypted and authenticated before it leaves the machine, with an AEAD of
 * the crypto API under a random key made with the device, which never
 * leaves the kernel.  A server then holds only ciphertext, and a page it
 * gives back altered, under another key or from an older write fails its
 * check: the read ends with EIO (or goes to the mirror copy, or is rebuilt
 * from parity), counted in status, never wrong data.  With
 * NSWAP2L_CAP_SEALED_GET a GET reply's MAC leaves the pages to their seals,
 * so that a page is authenticated once: one whose seal fails may have been
 * changed on the way, and is read again on a new connection before its
 * read fails (netram_req.c).
 *
 * Each encryption takes the next value of a per-device counter as its
 * nonce, so a nonce is never used twice under the key, not even by a PUT
 * sent again after a reconnect (its page may have changed meanwhile).  The
 * nonce and the tag are the page's seal, which the server keeps beside the
 * page (include/uapi/linux/nswap2l_proto.h).  The AAD is the page key, and
 * a protected tier is write-once (an overwrite takes a new key), so a
 * server can neither move a page to another key nor give back an older
 * version of it; another device's pages are under another key.
 *
 * Encryption writes into bounce pages, never into the writer's page; they
 * come from a mempool of each server's, made with the server (as are its
 * sender's and receiver's requests), so the I/O path allocates nothing that
 * can fail, and a server that stalls holds its own reserve, never the one
 * that the others need.  A GET reply is decrypted in place, in
 * the bio's pages, before the bio completes.  Synchronous AEADs only: the
 * sender and the receiver thread do the work, a page at a time.
 */
#include <crypto/aead.h>
#include <linux/delay.h>
#include <linux/mempool.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/scatterlist.h>

#include "netram.h"
#include "netram_fastest.h"

#define NETRAM_PROTECT_KEY_SIZE	32
#define NETRAM_PROTECT_IV_SIZE	12
#define NETRAM_PROTECT_TAG_SIZE	16
/* A 4 KiB page of a bio is at most this many segments (a sector at least each). */
#define NETRAM_PAGE_SEGMENTS	(NSWAP2L_PROTO_PAGE_SIZE / SECTOR_SIZE)
/*
 * Bounce pages each server keeps for when memory is short (swapping): two
 * whole messages, so that one can be sealed while the other is answered.
 */
#define NETRAM_BOUNCE_RESERVE	(2 * NSWAP2L_PROTO_MAX_PAGES)

/*
 * Fault injection: bounce pages come from the servers' reserves only, as
 * when memory is short and the page allocator fails (under swap).  Set it
 * once the servers are connected: their reserves are filled before.
 */
static bool netram_fault_bounce_reserve_only;
module_param_named(fault_bounce_reserve_only, netram_fault_bounce_reserve_only, bool, 0644);
MODULE_PARM_DESC(fault_bounce_reserve_only,
		 "Testing only: the bounce pages of protect= come from each server's reserve alone, as when the page allocator fails");

/*
 * Fault injection: sealing a PUT that took the server's last free tag takes
 * this much longer (the sender's work may sleep), so that a donor answering
 * that tag before its request came reliably lands while it is sealed; the
 * PUTs before, sealed at full speed, fill the tags first.
 */
static unsigned int netram_fault_seal_ms;
module_param_named(fault_seal_ms, netram_fault_seal_ms, uint, 0644);
MODULE_PARM_DESC(fault_seal_ms, "Testing only: milliseconds added to sealing a PUT that takes a server's last free tag (protect=)");

/* One direction's request, and what its scatterlists point at (never the stack). */
struct netram_crypt {
	struct aead_request *req;
	__le64 aad;
	u8 iv[NETRAM_PROTECT_IV_SIZE];
	u8 tag[NETRAM_PROTECT_TAG_SIZE];
	/* the AAD, a page's segments, and for a decryption the tag */
	struct scatterlist src[1 + NETRAM_PAGE_SEGMENTS + 1];
	struct scatterlist dst[3];
};

struct netram_protect {
	struct crypto_aead *aead;
	/*
	 * netram_seal_once()'s requests, one per CPU as it runs in the writer's
	 * context; pointers, as scatterlists must not point into percpu memory
	 */
	struct netram_crypt * __percpu *once;
	atomic64_t last_nonce;
	atomic64_t refused;		/* pages given back that failed their check */
	char name[NSWAP2L_PROTECT_NAME_SIZE];
};

/* mempool_alloc_pages() but for the fault injection above. */
static void *netram_bounce_page_alloc(gfp_t gfp, void *data)
{
	return READ_ONCE(netram_fault_bounce_reserve_only) ? NULL : alloc_page(gfp);
}

static struct netram_crypt *netram_crypt_new(struct crypto_aead *aead, gfp_t gfp)
{
	struct netram_crypt *c = kzalloc(sizeof(*c), gfp);

	if (!c)
		return NULL;
	c->req = aead_request_alloc(aead, gfp);
	if (!c->req) {
		kfree(c);
		return NULL;
	}
	aead_request_set_callback(c->req, 0, NULL, NULL);
	aead_request_set_ad(c->req, sizeof(c->aad));
	return c;
}

int netram_crypt_alloc(struct netram_server *srv)
{
	struct netram_protect *p = srv->nt->protect;

	if (!p)
		return 0;
	srv->tx_crypt = netram_crypt_new(p->aead, GFP_KERNEL);
	srv->rx_crypt = netram_crypt_new(p->aead, GFP_KERNEL);
	if (!srv->tx_crypt || !srv->rx_crypt)
		return -ENOMEM;
	return mempool_init(&srv->bounce_pool, NETRAM_BOUNCE_RESERVE, netram_bounce_page_alloc,
			    mempool_free_pages, NULL);
}

static void netram_crypt_put(struct netram_crypt *c)
{
	if (!c)
		return;
	aead_request_free(c->req);
	kfree_sensitive(c);
}

/* Copes with a half-built set (alloc_percpu() zeroes). */
static void netram_crypt_percpu_exit(struct netram_protect *p)
{
	int cpu;

	if (!p->once)
		return;
	for_each_possible_cpu(cpu)
		netram_crypt_put(*per_cpu_ptr(p->once, cpu));
	free_percpu(p->once);
}

static int netram_crypt_percpu_init(struct netram_protect *p)
{
	int cpu;

	p->once = alloc_percpu(struct netram_crypt *);
	if (!p->once)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		*per_cpu_ptr(p->once, cpu) = netram_crypt_new(p->aead, GFP_KERNEL);
		if (!*per_cpu_ptr(p->once, cpu))
			return -ENOMEM;
	}
	return 0;
}

int netram_protect_create(struct netram_tier *nt, struct dm_target *ti, const char *aead)
{
	u8 key[NETRAM_PROTECT_KEY_SIZE];
	struct netram_protect *p;
	int r;

	if (!aead)
		return 0;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		ti->error = "Cannot allocate page protection";
		return -ENOMEM;
	}
	nt->protect = p;
	strscpy(p->name, aead, sizeof(p->name));

	/* Nothing asynchronous, nothing that allocates per request. */
	p->aead = crypto_alloc_aead(netram_fastest_aead(aead), 0,
				    CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(p->aead)) {
		r = PTR_ERR(p->aead);
		p->aead = NULL;
		nswap2l_bad_table(ti, "Bad protect= option",
				  "protect=%s: need none or a synchronous AEAD of the crypto API, such as %s (error %d)",
				  aead, NSWAP2L_DEFAULT_PROTECT, r);
		return r;
	}
	if (crypto_aead_ivsize(p->aead) != NETRAM_PROTECT_IV_SIZE ||
	    crypto_aead_setauthsize(p->aead, NETRAM_PROTECT_TAG_SIZE)) {
		nswap2l_bad_table(ti, "Bad protect= option",
				  "protect=%s: need an AEAD with a %u-byte nonce and a %u-byte tag",
				  aead, NETRAM_PROTECT_IV_SIZE, NETRAM_PROTECT_TAG_SIZE);
		return -EINVAL;
	}
	get_random_bytes(key, sizeof(key));
	r = crypto_aead_setkey(p->aead, key, sizeof(key));
	memzero_explicit(key, sizeof(key));
	if (r) {
		nswap2l_bad_table(ti, "Bad protect= option",
				  "protect=%s: need an AEAD that takes a %u-bit key", aead,
				  NETRAM_PROTECT_KEY_SIZE * 8);
		return r;
	}
	r = netram_crypt_percpu_init(p);
	if (r) {
		ti->error = "Cannot allocate page protection";
		return r;
	}
	/* An overwrite in place would let a server give back the older version. */
	nt->tier.write_once = true;
	return 0;
}

void netram_protect_destroy(struct netram_tier *nt)
{
	struct netram_protect *p = nt->protect;

	if (!p)
		return;
	netram_crypt_percpu_exit(p);
	if (p->aead)
		crypto_free_aead(p->aead);
	kfree(p);
}

/* After every message's bounce pages went back (netram_release_sealed()). */
void netram_crypt_free(struct netram_server *srv)
{
	netram_crypt_put(srv->tx_crypt);
	netram_crypt_put(srv->rx_crypt);
	mempool_exit(&srv->bounce_pool);
}

/*
 * The AAD and the next page of @bio from *@it in @sg, for the page with
 * @key sealed with @nonce; returns the entries used, 0 if the page is in
 * more pieces than a bio can have.
 */
static unsigned int netram_crypt_prepare(struct netram_crypt *c, struct scatterlist *sg,
					 u64 key, u64 nonce, struct bio *bio,
					 struct bvec_iter *it)
{
	unsigned int n = 1, left = NSWAP2L_PROTO_PAGE_SIZE;
	__le64 nonce_le = cpu_to_le64(nonce);

	c->aad = cpu_to_le64(key);
	/* le32 0 || le64 nonce */
	memset(c->iv, 0, sizeof(c->iv) - sizeof(nonce_le));
	memcpy(c->iv + sizeof(c->iv) - sizeof(nonce_le), &nonce_le, sizeof(nonce_le));
	sg_init_table(sg, 1 + NETRAM_PAGE_SEGMENTS + 1);
	sg_set_buf(&sg[0], &c->aad, sizeof(c->aad));
	while (left) {
		struct bio_vec bv = bio_iter_iovec(bio, *it);
		unsigned int len = min(bv.bv_len, left);

		if (WARN_ON_ONCE(n > NETRAM_PAGE_SEGMENTS))
			return 0;
		sg_set_page(&sg[n++], bv.bv_page, len, bv.bv_offset);
		bio_advance_iter_single(bio, it, len);
		left -= len;
	}
	return n;
}

static int netram_encrypt_page(struct netram_protect *p, struct netram_crypt *c, u64 key,
			       struct bio *bio, struct bvec_iter *it, struct page *out,
			       struct nswap2l_seal *seal)
{
	u64 nonce = atomic64_inc_return(&p->last_nonce);
	unsigned int n = netram_crypt_prepare(c, c->src, key, nonce, bio, it);
	int r;

	if (!n)
		return -EINVAL;
	sg_mark_end(&c->src[n - 1]);
	sg_init_table(c->dst, ARRAY_SIZE(c->dst));
	sg_set_buf(&c->dst[0], &c->aad, sizeof(c->aad));
	sg_set_page(&c->dst[1], out, NSWAP2L_PROTO_PAGE_SIZE, 0);
	sg_set_buf(&c->dst[2], c->tag, sizeof(c->tag));
	aead_request_set_crypt(c->req, c->src, c->dst, NSWAP2L_PROTO_PAGE_SIZE, c->iv);
	r = crypto_aead_encrypt(c->req);
	if (r)
		return r;
	seal->nonce = cpu_to_le64(nonce);
	memcpy(seal->tag, c->tag, sizeof(seal->tag));
	return 0;
}

static void netram_free_bounce(struct netram_server *srv, struct netram_msg *msg)
{
	unsigned int i;

	for (i = 0; i < msg->bounce.bi_vcnt; i++)
		if (!test_bit(i, msg->borrowed))
			mempool_free(msg->bounce_vecs[i].bv_page, &srv->bounce_pool);
	msg->sealed = NULL;
}

/*
 * Gives back @msg's bounce pages; true if a sender waits for them, and the
 * caller must then run the io_work again (netram_queue_io()).
 */
bool netram_release_sealed(struct netram_server *srv, struct netram_msg *msg)
{
	if (!msg->sealed)
		return false;
	netram_free_bounce(srv, msg);
	return test_and_clear_bit(NETRAM_BOUNCE_WANTED, &srv->bounce_flags);
}

/* A mirrored write's clone sealed already (for its other copy too), or NULL. */
static const struct netram_sealed_pages *netram_bio_sealed(struct bio *bio)
{
	const struct netram_sealed_pages *sp = netram_mirror_sealed(bio);

	return sp && sp->nr == netram_bio_pages(bio) ? sp : NULL;
}

/*
 * A whole message of bounce pages, without waiting: the sender holds
 * send_mutex, which a broken connection's teardown needs before it can
 * give back the pages of the unanswered PUTs.  False if the pool (the
 * page allocator, then the server's reserve) has not enough; then the
 * next PUT answered or requeued runs the io_work again.  The flag is up
 * before the attempt, so that no release in between goes unseen.  Pages
 * sealed once for both copies of a mirrored write are borrowed instead.
 */
static bool netram_alloc_bounce(struct netram_server *srv, struct netram_msg *msg)
{
	unsigned int i, j, nr;

	set_bit(NETRAM_BOUNCE_WANTED, &srv->bounce_flags);
	bio_init(&msg->bounce, NULL, msg->bounce_vecs, ARRAY_SIZE(msg->bounce_vecs),
		 REQ_OP_WRITE);
	bitmap_zero(msg->borrowed, NSWAP2L_PROTO_MAX_PAGES);
	msg->sealed = &msg->bounce;
	for (i = 0; i < msg->nr_bios; i++) {
		const struct netram_sealed_pages *sp = netram_bio_sealed(msg->bios[i]);

		nr = netram_bio_pages(msg->bios[i]);
		for (j = 0; j < nr; j++) {
			struct page *page;

			if (sp) {
				__set_bit(msg->bounce.bi_vcnt, msg->borrowed);
				page = sp->pages[j];
			} else {
				page = mempool_alloc(&srv->bounce_pool, GFP_NOWAIT | __GFP_NOWARN);
			}
			if (!page) {
				netram_free_bounce(srv, msg);
				return false;
			}
			__bio_add_page(&msg->bounce, page, NSWAP2L_PROTO_PAGE_SIZE, 0);
		}
	}
	clear_bit(NETRAM_BOUNCE_WANTED, &srv->bounce_flags);
	return true;
}

struct netram_sealed_pages *netram_seal_once(struct netram_tier *nt, struct bio *bio, u64 key)
{
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned int nr = netram_bio_pages(bio);
	struct bvec_iter it = bio->bi_iter;
	struct netram_sealed_pages *sp;

	sp = kzalloc(struct_size(sp, pages, nr) + nr * sizeof(*sp->seals), gfp);
	if (!sp)
		return NULL;
	sp->seals = (struct nswap2l_seal *)&sp->pages[nr];
	for (; sp->nr < nr; sp->nr++) {
		struct netram_crypt *c;
		int r;

		sp->pages[sp->nr] = netram_bounce_page_alloc(gfp, NULL);
		if (!sp->pages[sp->nr])
			goto fail;
		/*
		 * This CPU's request, one page at a time: preemption is off
		 * while it is used (synchronous AEADs only: nothing sleeps),
		 * not for the whole bio.
		 */
		c = *get_cpu_ptr(nt->protect->once);
		r = netram_encrypt_page(nt->protect, c, key + sp->nr, bio, &it,
					sp->pages[sp->nr], &sp->seals[sp->nr]);
		put_cpu_ptr(nt->protect->once);
		if (r)
			goto fail;
	}
	return sp;

fail:
	/* the page that failed, if allocated, with the others */
	if (sp->nr < nr && sp->pages[sp->nr])
		sp->nr++;
	netram_free_sealed_pages(sp);
	return NULL;
}

void netram_free_sealed_pages(struct netram_sealed_pages *sp)
{
	unsigned int i;

	if (!sp)
		return;
	for (i = 0; i < sp->nr; i++)
		__free_page(sp->pages[i]);
	kfree(sp);
}

int netram_seal_put(struct netram_server *srv, struct netram_msg *msg)
{
	struct netram_protect *p = srv->nt->protect;
	struct nswap2l_seal *seals = netram_msg_seals(msg);
	unsigned int i, page = 0;
	int r;

	if (!p) {
		memset(seals, 0, msg->count * sizeof(*seals));
		return 0;
	}
	if (!netram_alloc_bounce(srv, msg))
		return -EAGAIN;
	if (READ_ONCE(netram_fault_seal_ms) &&
	    READ_ONCE(srv->busy_tags) == GENMASK(NETRAM_TAGS - 1, 0))
		msleep(READ_ONCE(netram_fault_seal_ms));
	for (i = 0; i < msg->nr_bios; i++) {
		struct bio *bio = msg->bios[i];
		const struct netram_sealed_pages *sp = netram_bio_sealed(bio);
		struct bvec_iter it = bio->bi_iter;

		if (sp) {
			memcpy(&seals[page], sp->seals, sp->nr * sizeof(*seals));
			page += sp->nr;
			continue;
		}
		while (it.bi_size) {
			r = netram_encrypt_page(p, srv->tx_crypt, le64_to_cpu(msg->keys[page]), bio,
						&it, msg->bounce_vecs[page].bv_page, &seals[page]);
			if (r)
				return r;
			atomic64_inc(&srv->sealed);
			page++;
		}
	}
	return 0;
}

void netram_open_bio(struct netram_server *srv, struct bio *bio, const __le64 *keys,
		     const struct nswap2l_seal *seals, unsigned long *bad, unsigned int page)
{
	struct netram_crypt *c = srv->rx_crypt;
	struct bvec_iter it = bio->bi_iter;
	unsigned int i, n;

	if (!srv->nt->protect)
		return;
	for (i = 0; it.bi_size; i++) {
		n = netram_crypt_prepare(c, c->src, le64_to_cpu(keys[i]),
					 le64_to_cpu(seals[i].nonce), bio, &it);
		if (!n) {
			__set_bit(page + i, bad);
			return;
		}
		memcpy(c->tag, seals[i].tag, sizeof(c->tag));
		sg_set_buf(&c->src[n], c->tag, sizeof(c->tag));
		sg_mark_end(&c->src[n]);
		aead_request_set_crypt(c->req, c->src, c->src,
				       NSWAP2L_PROTO_PAGE_SIZE + sizeof(c->tag), c->iv);
		if (crypto_aead_decrypt(c->req))
			__set_bit(page + i, bad);
	}
}

void netram_refuse_page(struct netram_server *srv, u64 key)
{
	atomic64_inc(&srv->nt->protect->refused);
	DMERR_LIMIT("%s: server %s gave back page key %llu altered, moved or old: it fails its check",
		    netram_dev_name(srv->nt), srv->name, key);
}

void netram_emit_protect(struct netram_tier *nt, char *result, unsigned int maxlen,
			 unsigned int *sz_ptr)
{
	struct netram_protect *p = nt->protect;
	unsigned int sz = *sz_ptr;

	DMEMIT(" %s %lld", p ? p->name : "none", p ? atomic64_read(&p->refused) : 0);
	*sz_ptr = sz;
}
