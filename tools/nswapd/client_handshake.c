// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "client_handshake.h"

void client_handshake_hello(struct client_handshake *ch, const struct nswap2l_hello *hello)
{
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_HELLO,
				    .length = sizeof(struct nswap2l_hello) };

	memset(ch, 0, sizeof(*ch));
	ch->hello = *hello;
	proto_encode_header(ch->hello_msg, &hdr);
	proto_encode_hello(ch->hello_msg + PROTO_HEADER_SIZE, hello);
	auth_handshake_from_hello(&ch->hs, hello);
}

const char *client_handshake_reply(struct client_handshake *ch, const struct auth_key *key,
				   const uint8_t header[PROTO_HEADER_SIZE], const uint8_t *payload,
				   uint32_t length, uint8_t auth[CLIENT_AUTH_SIZE])
{
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_AUTH,
				    .length = NSWAP2L_PROTO_MAC_SIZE };
	struct nswap2l_hello_reply reply;

	if (length < PROTO_HELLO_REPLY_SIZE)
		return "HELLO reply too short";
	proto_decode_hello_reply(payload, &reply);
	ch->server_caps = reply.capabilities;
	/* the server id comes where both sides announce NSWAP2L_CAP_MOVED */
	ch->have_server_id = ch->hello.capabilities & reply.capabilities & NSWAP2L_CAP_MOVED;
	if (length != (ch->have_server_id ? PROTO_HELLO_REPLY_MOVED_SIZE : PROTO_HELLO_REPLY_SIZE))
		return "HELLO reply of the wrong length";
	if (ch->have_server_id)
		memcpy(ch->server_id, payload + PROTO_HELLO_REPLY_SIZE, sizeof(ch->server_id));
	memcpy(ch->hs.server_nonce, reply.server_nonce, sizeof(ch->hs.server_nonce));
	auth_handshake_transcript(&ch->hs, ch->hello_msg, ch->hello_msg + PROTO_HEADER_SIZE, header,
				  payload, length);
	proto_encode_header(auth, &hdr);
	auth_client_mac(key, &ch->hs, auth + PROTO_HEADER_SIZE);
	return NULL;
}

bool client_handshake_done(const struct client_handshake *ch, const struct auth_key *key,
			   const uint8_t header[PROTO_HEADER_SIZE], const uint8_t *payload,
			   uint32_t length, struct auth_session *keys)
{
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE];

	auth_server_mac(key, &ch->hs, header, mac);
	if (length != sizeof(mac) || !auth_mac_equal(mac, payload))
		return false;
	auth_session_keys(key, &ch->hs, keys);
	return true;
}
