/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding, validation and encoding of nswap2l wire messages
 * (include/uapi/linux/nswap2l_proto.h).  Pure functions over byte buffers:
 * no I/O, no allocation, so the fuzzer can drive them directly.
 */
#ifndef NSWAPD_PROTO_H
#define NSWAPD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linux/nswap2l_proto.h"

#define PROTO_HEADER_SIZE ((uint32_t)sizeof(struct nswap2l_msg_header))
#define PROTO_KEY_SIZE 8u
#define PROTO_PAGE_SIZE ((uint32_t)NSWAP2L_PROTO_PAGE_SIZE)
#define PROTO_SEAL_SIZE ((uint32_t)NSWAP2L_PROTO_SEAL_SIZE)
#define PROTO_MSG_MAC_SIZE ((uint32_t)NSWAP2L_PROTO_MSG_MAC_SIZE)
/* Whose pages a PEER_PUT or PEER_FREE names: the payload's first bytes. */
#define PROTO_PEER_NS_SIZE ((uint32_t)sizeof(struct nswap2l_peer_namespace))
/* Where a MOVED's or COPY's pages are: the payload's first bytes. */
#define PROTO_MOVED_SIZE ((uint32_t)sizeof(struct nswap2l_moved))
/* A HELLO reply's payload, with the server id when NSWAP2L_CAP_MOVED is in effect. */
#define PROTO_HELLO_REPLY_SIZE ((uint32_t)sizeof(struct nswap2l_hello_reply))
#define PROTO_HELLO_REPLY_MOVED_SIZE \
	(PROTO_HELLO_REPLY_SIZE + (uint32_t)sizeof(struct nswap2l_hello_reply_moved))
/* Largest whole message the server ever has to buffer, with its MAC. */
#define PROTO_MAX_MESSAGE (PROTO_HEADER_SIZE + NSWAP2L_PROTO_MAX_PAYLOAD + PROTO_MSG_MAC_SIZE)

/* A message header in host byte order. */
struct proto_header {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;
	uint32_t tag;
	uint32_t count;
	uint32_t length;
	uint32_t status;
	uint64_t free_pages;
};

/*
 * A validated client->server message.  keys point into the receive buffer
 * (little-endian, read them with proto_key()); for PUT, seals follows the
 * keys, count * PROTO_SEAL_SIZE bytes, then frees, nr_frees keys to free
 * (NSWAP2L_CAP_PUT_FREES; none of them one of the PUT's keys), then pages,
 * count * PROTO_PAGE_SIZE bytes.  A PEER_PUT has keys, seals and pages the
 * same way, after the namespace it names (peer_ns, a valid client name);
 * a PEER_FREE keys after it.  A COPY's keys follow where they go (copy_to).
 * A MOVED reply's keys are those the client did
 * not take; an ASK_NAMESPACE reply's payload (OK) is a client id.
 */
struct proto_request {
	struct proto_header hdr;
	const uint8_t *header_bytes;	/* as received: the handshake transcript needs them */
	const uint8_t *payload;
	const uint8_t *keys;
	const uint8_t *seals;
	const uint8_t *frees;
	uint32_t nr_frees;
	const uint8_t *pages;
	struct nswap2l_hello hello;	/* HELLO only, decoded */
	struct nswap2l_peer_namespace peer_ns;	/* PEER_PUT and PEER_FREE */
	struct nswap2l_moved copy_to;	/* COPY */
	const uint8_t *mac;		/* AUTH only */
};

enum proto_result {
	PROTO_NEED_MORE,	/* buffer holds no complete message yet */
	PROTO_COMPLETE,		/* one valid message decoded */
	PROTO_INVALID,		/* malformed: the connection must close */
};

void proto_decode_header(const uint8_t buf[PROTO_HEADER_SIZE], struct proto_header *hdr);
void proto_encode_header(uint8_t buf[PROTO_HEADER_SIZE], const struct proto_header *hdr);

/*
 * Checks a client->server header on its own (magic, type, flags, status,
 * count, length), caps being the capabilities in effect on the connection
 * (a PUT's length depends on NSWAP2L_CAP_PUT_FREES; ASK_NAMESPACE and
 * MOVED replies need NSWAP2L_CAP_MOVED, COPY it and NSWAP2L_CAP_COPY, RELEASE
 * NSWAP2L_CAP_RELEASE; with NSWAP2L_CAP_PEER, a peer
 * session, only PEER_PUT and PEER_FREE are requests, and never without).
 * Returns NULL when valid, else the reason.
 */
const char *proto_check_request_header(const struct proto_header *hdr, uint64_t caps);

/*
 * Decodes the first message of buf[0..len), caps as above.  On PROTO_COMPLETE *used is its
 * size; on PROTO_NEED_MORE *used is the size the whole message will have
 * once its header is known (0 before that), so the caller can make room
 * for it; on PROTO_INVALID *why says what is wrong.  Checks everything that
 * needs no state: header limits, length against type and count, key range.
 */
enum proto_result proto_decode_request(const uint8_t *buf, size_t len, uint64_t caps,
				       struct proto_request *req, size_t *used,
				       const char **why);

/*
 * Where the first message of buf[0..len) ends, from its length field
 * alone: *size is its size, header and payload, once the header is here
 * (0 before).  PROTO_COMPLETE when all of it is here, PROTO_INVALID (with
 * *why) when the length is over the protocol's limit.  For a session, where
 * the MAC after the message is checked before the rest of its header.
 */
enum proto_result proto_frame(const uint8_t *buf, size_t len, size_t *size, const char **why);

/*
 * Checks a message a peer sends the mover in a session (its length
 * checked against the mover's buffer already): a PEER_PUT reply (OK:
 * count keys held there already, at most NSWAP2L_PROTO_MAX_PAGES, each
 * under the key limit, in payload; otherwise none), a PEER_FREE reply or
 * a CAPACITY, without payload.  NULL when valid, else the reason.
 */
const char *proto_check_peer_message(const struct proto_header *hdr, const uint8_t *payload);

uint64_t proto_key(const uint8_t *keys, uint32_t i);
void proto_put_key(uint8_t *keys, uint32_t i, uint64_t key);

void proto_encode_hello(uint8_t *buf, const struct nswap2l_hello *hello);
void proto_encode_hello_reply(uint8_t *buf, const struct nswap2l_hello_reply *reply);
/* Whether a HELLO's name fits its capabilities: NSWAP2L_PEER_CLIENT_NAME with CAP_PEER, else a client name. */
bool proto_hello_name_valid(const struct nswap2l_hello *hello);
void proto_decode_hello_reply(const uint8_t *buf, struct nswap2l_hello_reply *reply);

#define PROTO_CLIENT_ID_HEX_SIZE (2 * NSWAP2L_PROTO_CLIENT_ID_SIZE + 1)
/* A client id as lower-case hex, as logs and status name namespaces. */
void proto_client_id_hex(const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
			 char hex[PROTO_CLIENT_ID_HEX_SIZE]);

/*
 * Whether a HELLO's client name field holds 1..NAME_SIZE-1 characters of
 * [A-Za-z0-9_.-], not starting with '.', then only NULs.  The same check
 * makes a name safe as a file name in the --clients directory.
 */
bool proto_client_name_valid(const char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE]);

const char *proto_type_name(uint16_t type);
const char *proto_status_name(uint32_t status);

#endif
