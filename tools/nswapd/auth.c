// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth.h"
#include "util.h"
#include "byteorder.h"
#include "sha256.h"

int auth_load_key(const char *path, struct auth_key *key, char *err, size_t err_size)
{
	/* one byte more than allowed, to see a file that is too long */
	uint8_t buf[NSWAP2L_PROTO_MAX_KEY_SIZE + 1];
	size_t len;

	if (read_small_file(path, buf, sizeof(buf), &len)) {
		snprintf(err, err_size, "cannot read key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (len > NSWAP2L_PROTO_MAX_KEY_SIZE) {
		snprintf(err, err_size, "key file %s: longer than %d bytes", path,
			 NSWAP2L_PROTO_MAX_KEY_SIZE);
		return -1;
	}
	if (len < NSWAP2L_PROTO_MIN_KEY_SIZE) {
		snprintf(err, err_size, "key file %s: %zu bytes, a key needs at least %d", path,
			 len, NSWAP2L_PROTO_MIN_KEY_SIZE);
		return -1;
	}
	memcpy(key->bytes, buf, len);
	key->len = len;
	memset(buf, 0, sizeof(buf));
	return 0;
}

static int add_client(struct auth_keyring *ring, const char *dir, const char *file,
		      char *err, size_t err_size)
{
	char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE] = { 0 }, path[4096];
	struct auth_client *grown;
	struct stat st;

	if (strlen(file) >= sizeof(name)) {
		snprintf(err, err_size, "%s/%s: a client name has at most %d characters", dir,
			 file, NSWAP2L_PROTO_CLIENT_NAME_SIZE - 1);
		return -1;
	}
	memcpy(name, file, strlen(file));
	if (!proto_client_name_valid(name)) {
		snprintf(err, err_size, "%s/%s: a client name has only A-Z a-z 0-9 _ . -", dir,
			 file);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: not a regular file", path);
		return -1;
	}
	grown = realloc(ring->clients, (ring->count + 1) * sizeof(*grown));
	if (!grown) {
		snprintf(err, err_size, "%s: out of memory", path);
		return -1;
	}
	ring->clients = grown;
	memcpy(grown[ring->count].name, name, sizeof(name));
	if (auth_load_key(path, &grown[ring->count].key, err, err_size))
		return -1;
	ring->count++;
	return 0;
}

int auth_load_clients(const char *dir, struct auth_keyring *ring, char *err, size_t err_size)
{
	struct dirent *entry;
	DIR *d;
	int r = 0;

	memset(ring, 0, sizeof(*ring));
	d = opendir(dir);
	if (!d) {
		snprintf(err, err_size, "cannot open clients directory %s: %s", dir, strerror(errno));
		return -1;
	}
	/* hidden files (editors' swap files, "." and "..") are not clients */
	while (!r && (errno = 0, entry = readdir(d)))
		if (entry->d_name[0] != '.')
			r = add_client(ring, dir, entry->d_name, err, err_size);
	if (!r && errno) {
		snprintf(err, err_size, "cannot read clients directory %s: %s", dir, strerror(errno));
		r = -1;
	}
	closedir(d);
	if (r)
		auth_keyring_free(ring);
	return r;
}

void auth_keyring_free(struct auth_keyring *ring)
{
	if (ring->clients)
		memset(ring->clients, 0, ring->count * sizeof(*ring->clients));
	free(ring->clients);
	memset(ring, 0, sizeof(*ring));
}

const struct auth_key *auth_find_key(const struct auth_keyring *ring,
				     const char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	size_t i;

	if (ring->shared)
		return &ring->shared_key;
	for (i = 0; i < ring->count; i++)
		if (!memcmp(ring->clients[i].name, name, NSWAP2L_PROTO_CLIENT_NAME_SIZE))
			return &ring->clients[i].key;
	return NULL;
}

bool auth_key_equal(const struct auth_key *a, const struct auth_key *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

void auth_handshake_from_hello(struct auth_handshake *hs, const struct nswap2l_hello *hello)
{
	memcpy(hs->client_name, hello->client_name, sizeof(hs->client_name));
	memcpy(hs->client_id, hello->client_id, sizeof(hs->client_id));
	memcpy(hs->client_nonce, hello->client_nonce, sizeof(hs->client_nonce));
}

void auth_handshake_transcript(struct auth_handshake *hs,
			       const uint8_t hello_header[PROTO_HEADER_SIZE],
			       const uint8_t hello[sizeof(struct nswap2l_hello)],
			       const uint8_t reply_header[PROTO_HEADER_SIZE],
			       const uint8_t *reply, size_t reply_len)
{
	struct sha256 ctx;

	_Static_assert(AUTH_TRANSCRIPT_SIZE == SHA256_DIGEST_SIZE, "T is a digest");
	sha256_init(&ctx);
	sha256_update(&ctx, hello_header, PROTO_HEADER_SIZE);
	sha256_update(&ctx, hello, sizeof(struct nswap2l_hello));
	sha256_update(&ctx, reply_header, PROTO_HEADER_SIZE);
	sha256_update(&ctx, reply, reply_len);
	sha256_final(&ctx, hs->transcript);
}

/*
 * HMAC(K, label || client name || client id || first nonce || second nonce
 * ...): the caller adds what else the MAC covers, then finishes it.
 */
static void handshake_mac_begin(struct hmac_sha256 *hmac, const struct auth_key *key,
				const char *label, const struct auth_handshake *hs,
				const uint8_t first_nonce[NSWAP2L_PROTO_NONCE_SIZE],
				const uint8_t second_nonce[NSWAP2L_PROTO_NONCE_SIZE])
{
	hmac_sha256_init(hmac, key->bytes, key->len);
	hmac_sha256_update(hmac, label, strlen(label));
	hmac_sha256_update(hmac, hs->client_name, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	hmac_sha256_update(hmac, hs->client_id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	hmac_sha256_update(hmac, first_nonce, NSWAP2L_PROTO_NONCE_SIZE);
	hmac_sha256_update(hmac, second_nonce, NSWAP2L_PROTO_NONCE_SIZE);
}

void auth_client_mac(const struct auth_key *key, const struct auth_handshake *hs,
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE])
{
	struct hmac_sha256 hmac;

	handshake_mac_begin(&hmac, key, NSWAP2L_AUTH_CLIENT_LABEL, hs, hs->client_nonce,
			    hs->server_nonce);
	hmac_sha256_update(&hmac, hs->transcript, sizeof(hs->transcript));
	hmac_sha256_final(&hmac, mac);
}

void auth_server_mac(const struct auth_key *key, const struct auth_handshake *hs,
		     const uint8_t auth_reply_header[PROTO_HEADER_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE])
{
	struct hmac_sha256 hmac;

	handshake_mac_begin(&hmac, key, NSWAP2L_AUTH_SERVER_LABEL, hs, hs->server_nonce,
			    hs->client_nonce);
	hmac_sha256_update(&hmac, hs->transcript, sizeof(hs->transcript));
	hmac_sha256_update(&hmac, auth_reply_header, PROTO_HEADER_SIZE);
	hmac_sha256_final(&hmac, mac);
}

void auth_session_keys(const struct auth_key *key, const struct auth_handshake *hs,
		       struct auth_session *session)
{
	struct hmac_sha256 hmac;

	_Static_assert(NSWAP2L_PROTO_SESSION_KEY_SIZE == SHA256_DIGEST_SIZE, "a key is a digest");
	handshake_mac_begin(&hmac, key, NSWAP2L_SESSION_C2S_LABEL, hs, hs->client_nonce,
			    hs->server_nonce);
	hmac_sha256_final(&hmac, session->c2s);
	handshake_mac_begin(&hmac, key, NSWAP2L_SESSION_S2C_LABEL, hs, hs->client_nonce,
			    hs->server_nonce);
	hmac_sha256_final(&hmac, session->s2c);
}

void auth_message_begin(struct auth_message *ctx,
			const uint8_t key[NSWAP2L_PROTO_SESSION_KEY_SIZE], uint64_t seq)
{
	uint8_t seq_le[8], otk[SHA256_DIGEST_SIZE];
	struct hmac_sha256 hmac;

	_Static_assert(sizeof(otk) == POLY1305_KEY_SIZE, "a one-time key is a digest");
	store_le64(seq_le, seq);
	hmac_sha256_init(&hmac, key, NSWAP2L_PROTO_SESSION_KEY_SIZE);
	hmac_sha256_update(&hmac, seq_le, sizeof(seq_le));
	hmac_sha256_final(&hmac, otk);
	poly1305_init(&ctx->poly, otk);
	explicit_bzero(otk, sizeof(otk));
}

void auth_message_update(struct auth_message *ctx, const void *data, size_t len)
{
	poly1305_update(&ctx->poly, data, len);
}

void auth_message_end(struct auth_message *ctx, uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE])
{
	_Static_assert(NSWAP2L_PROTO_MSG_MAC_SIZE == POLY1305_TAG_SIZE, "a MAC is a tag");
	poly1305_final(&ctx->poly, mac);
}

void auth_message_mac(const uint8_t key[NSWAP2L_PROTO_SESSION_KEY_SIZE], uint64_t seq,
		      const void *msg, size_t len, uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE])
{
	struct auth_message ctx;

	auth_message_begin(&ctx, key, seq);
	auth_message_update(&ctx, msg, len);
	auth_message_end(&ctx, mac);
}

static bool bytes_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	volatile uint8_t diff = 0;
	size_t i;

	for (i = 0; i < len; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

bool auth_mac_equal(const uint8_t *a, const uint8_t *b)
{
	return bytes_equal(a, b, NSWAP2L_PROTO_MAC_SIZE);
}

bool auth_message_mac_equal(const uint8_t *a, const uint8_t *b)
{
	return bytes_equal(a, b, NSWAP2L_PROTO_MSG_MAC_SIZE);
}
