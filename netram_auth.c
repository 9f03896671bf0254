// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM authentication: the client's key from the kernel keyring, and
 * the handshake that proves it both ways over fresh nonces, bound to the
 * client name (client=) and namespace (the key never crosses the network;
 * include/uapi/linux/nswap2l_proto.h has the MACs).
 * A server that does not prove the key never gets or returns our pages.
 *
 * Then every message, both ways, carries a MAC under a key of this session
 * and its sequence number: nobody on the path can inject, replay, reorder
 * or take over a message without the key.
 */
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <crypto/poly1305.h>
#include <crypto/sha2.h>
#include <keys/user-type.h>
#include <linux/highmem.h>
#include <linux/key-type.h>
#include <linux/random.h>

#include "netram.h"
#include "netram_fastest.h"

/*
 * HMAC(K, label || client name || client id || nonce1 || nonce2 || @tail):
 * the session keys, and (with the handshake transcript and the AUTH
 * reply's header in @tail) the proofs of the key.
 */
static int netram_mac(struct netram_tier *nt, const char *label, const u8 *client_id,
		      const u8 *nonce1, const u8 *nonce2, const void *tail, size_t tail_len,
		      u8 *mac)
{
	SHASH_DESC_ON_STACK(desc, nt->hmac);
	int r;

	desc->tfm = nt->hmac;
	r = crypto_shash_init(desc);
	if (!r)
		r = crypto_shash_update(desc, label, strlen(label));
	if (!r)
		r = crypto_shash_update(desc, nt->client_name, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	if (!r)
		r = crypto_shash_update(desc, client_id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	if (!r)
		r = crypto_shash_update(desc, nonce1, NSWAP2L_PROTO_NONCE_SIZE);
	if (!r)
		r = crypto_shash_update(desc, nonce2, NSWAP2L_PROTO_NONCE_SIZE);
	if (!r && tail_len)
		r = crypto_shash_update(desc, tail, tail_len);
	if (!r)
		r = crypto_shash_final(desc, mac);
	shash_desc_zero(desc);
	return r;
}

/*
 * One handshake exchange: send @type with @out, expect its reply with @in,
 * of @in_min or @in_len bytes; both headers come back in @sent and
 * @received, for the proofs.  Nothing of the reply is trusted here: the
 * server's proof covers it later.
 */
static int netram_exchange(struct netram_server *srv, struct socket *sock, u16 type,
			   void *out, size_t out_len, void *in, size_t in_min, size_t in_len,
			   struct nswap2l_msg_header *sent, struct nswap2l_msg_header *received)
{
	size_t len;
	int r;

	netram_fill_header(sent, type, 0, 0, out_len);
	r = netram_xmit_buf(srv, sock, true, sent, sizeof(*sent), MSG_MORE);
	if (!r)
		r = netram_xmit_buf(srv, sock, true, out, out_len, 0);
	if (!r)
		r = netram_xmit_buf(srv, sock, false, received, sizeof(*received), 0);
	if (r)
		return r;
	if (le32_to_cpu(received->magic) != NSWAP2L_PROTO_MAGIC ||
	    le16_to_cpu(received->type) != (type | NSWAP2L_MSG_REPLY))
		return -EPROTO;
	switch (le32_to_cpu(received->status)) {
	case NSWAP2L_OK:
		break;
	case NSWAP2L_ERR_AUTH:
		return -EKEYREJECTED;
	case NSWAP2L_ERR_NO_CLIENT:
		/* No key for client=, says an unauthenticated reply: a refusal, no more. */
		return -ENOKEY;
	case NSWAP2L_ERR_VERSION:
		return -EPROTONOSUPPORT;
	default:
		return -EPROTO;
	}
	len = le32_to_cpu(received->length);
	if (len != in_min && len != in_len)
		return -EPROTO;
	return netram_xmit_buf(srv, sock, false, in, len, 0);
}

/*----------------------------------------------------------------
 * Session: a MAC on every message
 *--------------------------------------------------------------*/
static int netram_start_session(struct netram_server *srv, const u8 *client_id,
				const u8 *client_nonce, const u8 *server_nonce)
{
	u8 c2s[NSWAP2L_PROTO_SESSION_KEY_SIZE], s2c[NSWAP2L_PROTO_SESSION_KEY_SIZE];
	int r;

	r = netram_mac(srv->nt, NSWAP2L_SESSION_C2S_LABEL, client_id, client_nonce, server_nonce,
		       NULL, 0, c2s);
	if (!r)
		r = netram_mac(srv->nt, NSWAP2L_SESSION_S2C_LABEL, client_id, client_nonce,
			       server_nonce, NULL, 0, s2c);
	/* The sender may still hold the last connection's message: not mid-MAC. */
	mutex_lock(&srv->send_mutex);
	if (!r)
		r = crypto_shash_setkey(srv->tx_hmac, c2s, sizeof(c2s));
	srv->tx_seq = 0;
	mutex_unlock(&srv->send_mutex);
	if (!r)
		r = crypto_shash_setkey(srv->rx_hmac, s2c, sizeof(s2c));
	srv->rx_seq = 0;
	memzero_explicit(c2s, sizeof(c2s));
	memzero_explicit(s2c, sizeof(s2c));
	return r;
}

static void netram_mac_bios(const struct netram_poly1305_ops *poly1305,
			    struct poly1305_desc_ctx *desc, struct bio *const *bios,
			    unsigned int nr_bios)
{
	unsigned int i;

	for (i = 0; i < nr_bios; i++) {
		struct bvec_iter it;
		struct bio_vec bv;

		bio_for_each_segment(bv, bios[i], it) {
			void *addr = kmap_local_page(bv.bv_page);

			poly1305->update(desc, addr + bv.bv_offset, bv.bv_len);
			kunmap_local(addr);
		}
	}
}

/*
 * Poly1305(HMAC(session key, le64 seq), header || payload): a one-time
 * key per message from the PRF, then a few multiplications per 16 bytes
 * of the pages (HMAC-SHA256 over them cost as much as the request).
 */
static int netram_message_mac(const struct netram_poly1305_ops *poly1305,
			      struct crypto_shash *tfm, u64 seq,
			      const struct nswap2l_msg_header *hdr, const void *buf, size_t len,
			      struct bio *const *bios, unsigned int nr_bios,
			      u8 mac[NSWAP2L_PROTO_MSG_MAC_SIZE])
{
	SHASH_DESC_ON_STACK(desc, tfm);
	struct poly1305_desc_ctx poly;
	u8 otk[SHA256_DIGEST_SIZE];
	__le64 seq_le = cpu_to_le64(seq);
	int r;

	BUILD_BUG_ON(sizeof(otk) != POLY1305_KEY_SIZE ||
		     NSWAP2L_PROTO_MSG_MAC_SIZE != POLY1305_DIGEST_SIZE);
	desc->tfm = tfm;
	r = crypto_shash_digest(desc, (u8 *)&seq_le, sizeof(seq_le), otk);
	shash_desc_zero(desc);
	if (r)
		return r;
	poly1305->init(&poly, otk);
	memzero_explicit(otk, sizeof(otk));
	poly1305->update(&poly, (const u8 *)hdr, sizeof(*hdr));
	if (len)
		poly1305->update(&poly, buf, len);
	netram_mac_bios(poly1305, &poly, bios, nr_bios);
	poly1305->final(&poly, mac);
	return 0;
}

/* What the server proves besides the nonces: the transcript T, then its AUTH reply's header. */
struct netram_proof_tail {
	u8 transcript[SHA256_DIGEST_SIZE];
	struct nswap2l_msg_header auth_reply;
} __packed;

int netram_handshake(struct netram_server *srv, struct socket *sock, bool *found,
		     u64 *free_pages)
{
	struct netram_tier *nt = srv->nt;
	struct nswap2l_hello hello = {
		.version_min = cpu_to_le32(NSWAP2L_PROTO_VERSION),
		.version_max = cpu_to_le32(NSWAP2L_PROTO_VERSION),
		/* Pages checked by their seals only if they have any. */
		.capabilities = cpu_to_le64(NSWAP2L_CAP_EVICT | NSWAP2L_CAP_NO_CLIENT |
					    NSWAP2L_CAP_PUT_FREES | NSWAP2L_CAP_RELEASE |
					    (nt->protect ? NSWAP2L_CAP_SEALED_GET : 0) |
					    /* a write-once tier never PUTs a key it holds */
					    (srv->moved ? NSWAP2L_CAP_MOVED | NSWAP2L_CAP_COPY : 0)),
	};
	struct nswap2l_msg_header hello_hdr, reply_hdr, auth_hdr;
	struct {
		struct nswap2l_hello_reply reply;
		struct nswap2l_hello_reply_moved moved;	/* NSWAP2L_CAP_MOVED in effect */
	} __packed in;
	struct nswap2l_hello_reply *reply = &in.reply;
	size_t in_len;
	u64 caps;
	struct nswap2l_auth auth, server_auth;
	struct netram_proof_tail tail;
	u8 expected[NSWAP2L_PROTO_MAC_SIZE];
	struct sha256_state transcript;
	int r;

	memcpy(hello.client_id, srv->client_id, sizeof(hello.client_id));
	memcpy(hello.client_name, nt->client_name, sizeof(hello.client_name));
	get_random_bytes(hello.client_nonce, sizeof(hello.client_nonce));
	r = netram_exchange(srv, sock, NSWAP2L_MSG_HELLO, &hello, sizeof(hello),
			    &in, sizeof(*reply), sizeof(in), &hello_hdr, &reply_hdr);
	if (r)
		return r;
	if (le32_to_cpu(reply->version) != NSWAP2L_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	caps = le64_to_cpu(hello.capabilities) & le64_to_cpu(reply->capabilities);
	/* The server's id follows the reply exactly when NSWAP2L_CAP_MOVED is in effect. */
	in_len = le32_to_cpu(reply_hdr.length);
	if ((in_len == sizeof(in)) != !!(caps & NSWAP2L_CAP_MOVED))
		return -EPROTO;

	/* Every byte of the HELLO exchange is in both proofs. */
	sha256_init(&transcript);
	sha256_update(&transcript, (u8 *)&hello_hdr, sizeof(hello_hdr));
	sha256_update(&transcript, (u8 *)&hello, sizeof(hello));
	sha256_update(&transcript, (u8 *)&reply_hdr, sizeof(reply_hdr));
	sha256_update(&transcript, (u8 *)&in, in_len);
	sha256_final(&transcript, tail.transcript);

	r = netram_mac(nt, NSWAP2L_AUTH_CLIENT_LABEL, hello.client_id, hello.client_nonce,
		       reply->server_nonce, tail.transcript, sizeof(tail.transcript), auth.mac);
	if (!r)
		r = netram_exchange(srv, sock, NSWAP2L_MSG_AUTH, &auth, sizeof(auth),
				    &server_auth, sizeof(server_auth), sizeof(server_auth), &auth_hdr,
				    &tail.auth_reply);
	if (!r)
		r = netram_mac(nt, NSWAP2L_AUTH_SERVER_LABEL, hello.client_id, reply->server_nonce,
			       hello.client_nonce, &tail, sizeof(tail), expected);
	if (r)
		return r;
	/*
	 * An impostor that does not know the key must not get our pages, and
	 * nobody on the path may change what we act on: max_pages, the
	 * capabilities, the namespace flag, free_pages.
	 */
	if (crypto_memneq(expected, server_auth.mac, sizeof(expected)))
		return -EKEYREJECTED;
	r = netram_start_session(srv, hello.client_id, hello.client_nonce, reply->server_nonce);
	if (r)
		return r;
	WRITE_ONCE(srv->max_pages,
		   clamp_t(u32, le32_to_cpu(reply->max_pages), 1, NSWAP2L_PROTO_MAX_PAGES));
	if (srv->moved)
		netram_moved_set_id(srv, caps & NSWAP2L_CAP_MOVED ? in.moved.server_id : NULL);
	/* In effect when both sides announce them; a server from before has none. */
	WRITE_ONCE(srv->caps, caps & (NSWAP2L_CAP_SEALED_GET | NSWAP2L_CAP_PUT_FREES |
				      NSWAP2L_CAP_MOVED | NSWAP2L_CAP_COPY |
				      NSWAP2L_CAP_RELEASE));
	*free_pages = le64_to_cpu(tail.auth_reply.free_pages);
	*found = le16_to_cpu(tail.auth_reply.flags) & NSWAP2L_FLAG_NAMESPACE_FOUND;
	return 0;
}

int netram_alloc_session(struct netram_server *srv)
{
	int r = netram_moved_alloc(srv);

	if (r)
		return r;
	srv->poly1305 = netram_fastest_poly1305();
	srv->tx_hmac = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(srv->tx_hmac))
		return PTR_ERR(srv->tx_hmac);
	srv->rx_hmac = crypto_alloc_shash("hmac(sha256)", 0, 0);
	return PTR_ERR_OR_ZERO(srv->rx_hmac);
}

void netram_free_session(struct netram_server *srv)
{
	if (!IS_ERR_OR_NULL(srv->tx_hmac))
		crypto_free_shash(srv->tx_hmac);
	if (!IS_ERR_OR_NULL(srv->rx_hmac))
		crypto_free_shash(srv->rx_hmac);
	netram_moved_free(srv);
}

int netram_seal_tx(struct netram_server *srv)
{
	struct netram_tx *tx = &srv->tx;

	lockdep_assert_held(&srv->send_mutex);
	return netram_message_mac(srv->poly1305, srv->tx_hmac, srv->tx_seq++, &tx->hdr, tx->keys,
				  tx->keys_len, tx->bios, tx->nr_bios, tx->mac);
}

int netram_check_rx(struct netram_server *srv, const struct nswap2l_msg_header *hdr,
		    const void *buf, size_t len, struct bio *const *bios, unsigned int nr_bios)
{
	u8 mac[NSWAP2L_PROTO_MSG_MAC_SIZE], want[NSWAP2L_PROTO_MSG_MAC_SIZE];
	int r;

	r = netram_xmit_buf(srv, srv->sock, false, mac, sizeof(mac), 0);
	if (!r)
		r = netram_message_mac(srv->poly1305, srv->rx_hmac, srv->rx_seq++, hdr, buf, len,
				       bios, nr_bios, want);
	if (r)
		return r;
	if (crypto_memneq(mac, want, sizeof(mac))) {
		DMWARN_LIMIT("%s: server %s: message with a wrong MAC (forged or replayed on the way?)",
			     netram_dev_name(srv->nt), srv->name);
		return -EBADMSG;
	}
	return 0;
}

/* key=:<size>:<type>:<description> (dm-crypt's form), type logon or user. */
int netram_set_key(struct netram_tier *nt, struct dm_target *ti, const char *spec)
{
	const struct user_key_payload *payload;
	struct key_type *type;
	unsigned int size;
	const char *type_name, *desc;
	struct key *key;
	int r, n = 0;

	if (!spec) {
		nswap2l_bad_table(ti, "Network RAM needs a key",
				  "netram= needs key=:<size>:logon:<description>");
		return -EINVAL;
	}
	/* ":<size>:<type>:<description>", the description may hold colons */
	if (sscanf(spec, ":%u:%n", &size, &n) != 1 || !n)
		goto bad_spec;
	type_name = spec + n;
	desc = strchr(type_name, ':');
	if (!desc || !desc[1])
		goto bad_spec;
	desc++;
	if (!strncmp(type_name, "logon:", 6)) {
		type = &key_type_logon;
	} else if (!strncmp(type_name, "user:", 5)) {
		type = &key_type_user;
	} else {
		nswap2l_bad_table(ti, "Bad key type",
				  "key=%s: key type must be logon or user", spec);
		return -EINVAL;
	}
	if (size < NSWAP2L_PROTO_MIN_KEY_SIZE || size > NSWAP2L_PROTO_MAX_KEY_SIZE) {
		nswap2l_bad_table(ti, "Bad key size",
				  "key=%s: size %u outside %u..%u bytes", spec, size,
				  NSWAP2L_PROTO_MIN_KEY_SIZE, NSWAP2L_PROTO_MAX_KEY_SIZE);
		return -EINVAL;
	}

	key = request_key(type, desc, NULL);
	if (IS_ERR(key)) {
		nswap2l_bad_table(ti, "Key not found",
				  "key=%s: no %s key '%s' in the keyring (error %ld)",
				  spec, type->name, desc, PTR_ERR(key));
		return PTR_ERR(key);
	}
	down_read(&key->sem);
	payload = user_key_payload_locked(key);
	if (!payload || payload->datalen != size) {
		nswap2l_bad_table(ti, "Key size mismatch",
				  "key=%s: the key holds %u bytes, not %u", spec,
				  payload ? payload->datalen : 0, size);
		r = -EINVAL;
	} else {
		r = crypto_shash_setkey(nt->hmac, payload->data, size);
		if (r)
			ti->error = "Cannot set the key";
	}
	up_read(&key->sem);
	key_put(key);
	return r;

bad_spec:
	nswap2l_bad_table(ti, "Bad key specification",
			  "key=%s: expected :<size>:<logon|user>:<description>", spec);
	return -EINVAL;
}
