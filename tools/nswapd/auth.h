/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Client keys and the proofs of the nswap2l handshake (see
 * nswap2l_proto.h): a keyring of one key per client name (--clients DIR),
 * or one key shared by every name (--key-file).
 */
#ifndef NSWAPD_AUTH_H
#define NSWAPD_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poly1305.h"
#include "proto.h"

struct auth_key {
	size_t len;
	uint8_t bytes[NSWAP2L_PROTO_MAX_KEY_SIZE];
};

struct auth_client {
	char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];	/* NUL-padded */
	struct auth_key key;
};

struct auth_keyring {
	bool shared;			/* shared_key serves every client name */
	struct auth_key shared_key;
	struct auth_client *clients;	/* otherwise, by name */
	size_t count;
};

/*
 * Reads the whole of path as the key.  Returns 0, or -1 with a message
 * in err when the file cannot be read or its size is outside the limits.
 */
int auth_load_key(const char *path, struct auth_key *key, char *err, size_t err_size);

/*
 * Loads a keyring from dir: every file whose name does not start with '.'
 * is a client of that name, its content the key.  Returns 0, or -1 with a
 * message in err (a file name that is not a valid client name, a file that
 * is not a regular file or not a valid key) and ring left empty.
 */
int auth_load_clients(const char *dir, struct auth_keyring *ring, char *err, size_t err_size);
void auth_keyring_free(struct auth_keyring *ring);

/* The key of a client name, or NULL when the keyring knows no such client. */
const struct auth_key *auth_find_key(const struct auth_keyring *ring,
				     const char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE]);
bool auth_key_equal(const struct auth_key *a, const struct auth_key *b);

#define AUTH_TRANSCRIPT_SIZE 32

/* What the proofs and the session keys of one handshake are bound to. */
struct auth_handshake {
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];	/* NUL-padded, as sent */
	uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE];
	uint8_t server_nonce[NSWAP2L_PROTO_NONCE_SIZE];
	/* T: SHA-256 of the HELLO and its reply, headers and payloads as sent */
	uint8_t transcript[AUTH_TRANSCRIPT_SIZE];
};

/* Takes the client's fields (name, id, nonce) from its HELLO. */
void auth_handshake_from_hello(struct auth_handshake *hs, const struct nswap2l_hello *hello);
/*
 * Sets hs->transcript from the HELLO message and its reply, each a header
 * and a payload exactly as they went over the wire (every field of them is
 * then bound into both proofs; the reply's server id too, when it has one).
 */
void auth_handshake_transcript(struct auth_handshake *hs,
			       const uint8_t hello_header[PROTO_HEADER_SIZE],
			       const uint8_t hello[sizeof(struct nswap2l_hello)],
			       const uint8_t reply_header[PROTO_HEADER_SIZE],
			       const uint8_t *reply, size_t reply_len);

/* The client's proof, sent in AUTH. */
void auth_client_mac(const struct auth_key *key, const struct auth_handshake *hs,
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE]);
/*
 * The server's proof, the payload of its AUTH reply, over that reply's
 * header as sent (flags and free_pages included).
 */
void auth_server_mac(const struct auth_key *key, const struct auth_handshake *hs,
		     const uint8_t auth_reply_header[PROTO_HEADER_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE]);

/* The session keys of both directions, once the handshake succeeded. */
struct auth_session {
	uint8_t c2s[NSWAP2L_PROTO_SESSION_KEY_SIZE];
	uint8_t s2c[NSWAP2L_PROTO_SESSION_KEY_SIZE];
};

void auth_session_keys(const struct auth_key *key, const struct auth_handshake *hs,
		       struct auth_session *session);

/* The MAC of one message, while its header and payload go by. */
struct auth_message {
	struct poly1305 poly;
};

/*
 * Begin with the direction's key and the message's sequence number (which
 * give the Poly1305 key), update with the header and payload, end.
 */
void auth_message_begin(struct auth_message *ctx,
			const uint8_t key[NSWAP2L_PROTO_SESSION_KEY_SIZE], uint64_t seq);
void auth_message_update(struct auth_message *ctx, const void *data, size_t len);
void auth_message_end(struct auth_message *ctx, uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE]);
/* The same for a whole message in one buffer. */
void auth_message_mac(const uint8_t key[NSWAP2L_PROTO_SESSION_KEY_SIZE], uint64_t seq,
		      const void *msg, size_t len, uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE]);

/* Compares two MACs in time independent of where they differ. */
bool auth_mac_equal(const uint8_t *a, const uint8_t *b);
bool auth_message_mac_equal(const uint8_t *a, const uint8_t *b);

#endif
