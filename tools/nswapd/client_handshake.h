/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client side of the nswap2l handshake over byte buffers, shared by
 * nswap-probe and by nswapd's connections to its peers: the HELLO to send,
 * the AUTH that answers the HELLO reply, the check of the server's proof.
 */
#ifndef NSWAPD_CLIENT_HANDSHAKE_H
#define NSWAPD_CLIENT_HANDSHAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "proto.h"

#define CLIENT_HELLO_SIZE (PROTO_HEADER_SIZE + (uint32_t)sizeof(struct nswap2l_hello))
#define CLIENT_AUTH_SIZE (PROTO_HEADER_SIZE + NSWAP2L_PROTO_MAC_SIZE)

struct client_handshake {
	struct nswap2l_hello hello;	/* as sent */
	uint8_t hello_msg[CLIENT_HELLO_SIZE];
	struct auth_handshake hs;
	uint64_t server_caps;		/* announced in the HELLO reply */
	bool have_server_id;		/* NSWAP2L_CAP_MOVED in effect */
	uint8_t server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];
};

/* Encodes hello (its nonce filled by the caller) into ch->hello_msg, the bytes to send. */
void client_handshake_hello(struct client_handshake *ch, const struct nswap2l_hello *hello);
/*
 * Takes the HELLO reply (status OK, header as received): its server nonce
 * and, with NSWAP2L_CAP_MOVED in effect, its server id; writes into auth
 * the AUTH message carrying the client's proof under key.  Returns NULL,
 * or why the reply is malformed.
 */
const char *client_handshake_reply(struct client_handshake *ch, const struct auth_key *key,
				   const uint8_t header[PROTO_HEADER_SIZE], const uint8_t *payload,
				   uint32_t length, uint8_t auth[CLIENT_AUTH_SIZE]);
/*
 * Checks the AUTH reply (status OK) against the server's proof under key;
 * true: session keys in *keys.
 */
bool client_handshake_done(const struct client_handshake *ch, const struct auth_key *key,
			   const uint8_t header[PROTO_HEADER_SIZE], const uint8_t *payload,
			   uint32_t length, struct auth_session *keys);

#endif
