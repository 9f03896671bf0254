// SPDX-License-Identifier: GPL-2.0
/*
 * nswap2l wire format: every field is little-endian and read byte by byte
 * through the offsets of the shared structures, so the code is right on
 * any host byte order and never does an unaligned load from the buffer.
 */
#include <stddef.h>
#include <string.h>

#include "byteorder.h"
#include "proto.h"

_Static_assert(sizeof(struct nswap2l_msg_header) == 32, "header is 32 bytes on the wire");
_Static_assert(sizeof(struct nswap2l_hello) == 96, "hello is 96 bytes on the wire");
_Static_assert(sizeof(struct nswap2l_hello_reply) == 48, "hello reply is 48 bytes on the wire");
_Static_assert(sizeof(struct nswap2l_auth) == NSWAP2L_PROTO_MAC_SIZE, "auth is one MAC");
_Static_assert(sizeof(struct nswap2l_seal) == NSWAP2L_PROTO_SEAL_SIZE, "a seal is 24 bytes on the wire");
_Static_assert(sizeof(struct nswap2l_peer_namespace) == 48, "a peer namespace is 48 bytes");
_Static_assert(sizeof(struct nswap2l_moved) == 32, "a MOVED's where is 32 bytes");

#define HDR_OFF(field) offsetof(struct nswap2l_msg_header, field)
#define LENGTH_OVER_LIMIT "length over limit"

void proto_decode_header(const uint8_t buf[PROTO_HEADER_SIZE], struct proto_header *hdr)
{
	hdr->magic = load_le32(buf + HDR_OFF(magic));
	hdr->type = load_le16(buf + HDR_OFF(type));
	hdr->flags = load_le16(buf + HDR_OFF(flags));
	hdr->tag = load_le32(buf + HDR_OFF(tag));
	hdr->count = load_le32(buf + HDR_OFF(count));
	hdr->length = load_le32(buf + HDR_OFF(length));
	hdr->status = load_le32(buf + HDR_OFF(status));
	hdr->free_pages = load_le64(buf + HDR_OFF(free_pages));
}

void proto_encode_header(uint8_t buf[PROTO_HEADER_SIZE], const struct proto_header *hdr)
{
	store_le32(buf + HDR_OFF(magic), hdr->magic);
	store_le16(buf + HDR_OFF(type), hdr->type);
	store_le16(buf + HDR_OFF(flags), hdr->flags);
	store_le32(buf + HDR_OFF(tag), hdr->tag);
	store_le32(buf + HDR_OFF(count), hdr->count);
	store_le32(buf + HDR_OFF(length), hdr->length);
	store_le32(buf + HDR_OFF(status), hdr->status);
	store_le64(buf + HDR_OFF(free_pages), hdr->free_pages);
}

/*
 * With NSWAP2L_CAP_PUT_FREES, the keys to free that a PUT carries: what its
 * length leaves after its pages, whole keys, at most MAX_PUT_FREES.
 */
static const char *check_put_frees(const struct proto_header *hdr)
{
	/* count <= MAX_PAGES: no overflow */
	uint32_t items = hdr->count * (PROTO_KEY_SIZE + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE);

	if (hdr->length < items || (hdr->length - items) % PROTO_KEY_SIZE)
		return "length does not match type and count";
	if ((hdr->length - items) / PROTO_KEY_SIZE > NSWAP2L_PROTO_MAX_PUT_FREES)
		return "too many keys to free in PUT";
	return NULL;
}

/* Which messages a session may carry: a peer's only PEER_*, a client's never. */
static const char *check_session_kind(uint16_t type, uint64_t caps)
{
	bool peer_type = type == NSWAP2L_MSG_PEER_PUT || type == NSWAP2L_MSG_PEER_FREE;

	if (type == NSWAP2L_MSG_HELLO || type == NSWAP2L_MSG_AUTH)
		return NULL;
	if (caps & NSWAP2L_CAP_PEER)
		return peer_type ? NULL : "client message in a peer session";
	if (peer_type)
		return "peer message in a client session";
	if ((type == (NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY) ||
	     type == (NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY)) && !(caps & NSWAP2L_CAP_MOVED))
		return "migration reply without NSWAP2L_CAP_MOVED";
	if (type == NSWAP2L_MSG_COPY &&
	    (caps & (NSWAP2L_CAP_COPY | NSWAP2L_CAP_MOVED)) != (NSWAP2L_CAP_COPY | NSWAP2L_CAP_MOVED))
		return "COPY without NSWAP2L_CAP_COPY and NSWAP2L_CAP_MOVED";
	if (type == NSWAP2L_MSG_RELEASE && !(caps & NSWAP2L_CAP_RELEASE))
		return "RELEASE without NSWAP2L_CAP_RELEASE";
	return NULL;
}

/* The payload length a request of this type and count must have. */
static const char *check_count_and_length(const struct proto_header *hdr, uint64_t caps)
{
	uint32_t max_count, per_item, fixed = 0;
	const char *why = check_session_kind(hdr->type, caps);

	if (why)
		return why;
	switch (hdr->type) {
	case NSWAP2L_MSG_HELLO:
		max_count = 0;
		per_item = 0;
		fixed = sizeof(struct nswap2l_hello);
		break;
	case NSWAP2L_MSG_AUTH:
		max_count = 0;
		per_item = 0;
		fixed = sizeof(struct nswap2l_auth);
		break;
	case NSWAP2L_MSG_RELEASE:
		max_count = 0;
		per_item = 0;
		break;
	case NSWAP2L_MSG_PUT:
		max_count = NSWAP2L_PROTO_MAX_PAGES;
		per_item = PROTO_KEY_SIZE + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE;
		break;
	case NSWAP2L_MSG_GET:
		max_count = NSWAP2L_PROTO_MAX_PAGES;
		per_item = PROTO_KEY_SIZE;
		break;
	case NSWAP2L_MSG_FREE:
		max_count = NSWAP2L_PROTO_MAX_KEYS;
		per_item = PROTO_KEY_SIZE;
		break;
	case NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY:
		/* the client's answer to an EVICT echoes its count, no payload */
		if (hdr->count > NSWAP2L_PROTO_MAX_KEYS)
			return "count over limit";
		return hdr->length ? "payload in evict reply" : NULL;
	case NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY:
		/* OK: the client id there; NOENT: nothing */
		if (hdr->count)
			return "count in a message without items";
		return hdr->length != (hdr->status == NSWAP2L_OK ? NSWAP2L_PROTO_CLIENT_ID_SIZE : 0) ?
		       "length does not match type and count" : NULL;
	case NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY:
		/* the keys not taken, none or more */
		if (hdr->count > NSWAP2L_PROTO_MAX_KEYS)
			return "count over limit";
		return hdr->length != hdr->count * PROTO_KEY_SIZE ?
		       "length does not match type and count" : NULL;
	case NSWAP2L_MSG_PEER_PUT:
		max_count = NSWAP2L_PROTO_MAX_PAGES;
		per_item = PROTO_KEY_SIZE + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE;
		fixed = PROTO_PEER_NS_SIZE;
		break;
	case NSWAP2L_MSG_PEER_FREE:
		max_count = NSWAP2L_PROTO_MAX_KEYS;
		per_item = PROTO_KEY_SIZE;
		fixed = PROTO_PEER_NS_SIZE;
		break;
	case NSWAP2L_MSG_COPY:
		max_count = NSWAP2L_PROTO_MAX_COPY_KEYS;
		per_item = PROTO_KEY_SIZE;
		fixed = PROTO_MOVED_SIZE;
		break;
	default:
		return strcmp(proto_type_name(hdr->type), "unknown") ?
		       "message type clients do not send" : "unknown message type";
	}
	if (hdr->count > max_count)
		return max_count ? "count over limit" : "count in a message without items";
	if (per_item && !hdr->count)
		return "count zero";
	if (hdr->type == NSWAP2L_MSG_PUT && (caps & NSWAP2L_CAP_PUT_FREES))
		return check_put_frees(hdr);
	/* fixed + max_count * per_item <= NSWAP2L_PROTO_MAX_PAYLOAD: no overflow */
	if (hdr->length != fixed + hdr->count * per_item)
		return "length does not match type and count";
	return NULL;
}

const char *proto_check_request_header(const struct proto_header *hdr, uint64_t caps)
{
	if (hdr->magic != NSWAP2L_PROTO_MAGIC)
		return "bad magic";
	if (hdr->flags)
		return "flags set";
	if (hdr->length > NSWAP2L_PROTO_MAX_PAYLOAD)
		return LENGTH_OVER_LIMIT;
	if (hdr->type == (NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY)) {
		if (hdr->status != NSWAP2L_OK && hdr->status != NSWAP2L_ERR_NOSPC)
			return "bad status in evict reply";
	} else if (hdr->type == (NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY)) {
		if (hdr->status != NSWAP2L_OK && hdr->status != NSWAP2L_ERR_NOENT)
			return "bad status in ask-namespace reply";
	} else if (hdr->status) {
		return "status set in request";
	}
	return check_count_and_length(hdr, caps);
}

enum proto_result proto_frame(const uint8_t *buf, size_t len, size_t *size, const char **why)
{
	uint32_t length;

	*size = 0;
	if (len < PROTO_HEADER_SIZE)
		return PROTO_NEED_MORE;
	length = load_le32(buf + HDR_OFF(length));
	if (length > NSWAP2L_PROTO_MAX_PAYLOAD) {
		*why = LENGTH_OVER_LIMIT;
		return PROTO_INVALID;
	}
	*size = PROTO_HEADER_SIZE + (size_t)length;
	return len < *size ? PROTO_NEED_MORE : PROTO_COMPLETE;
}

uint64_t proto_key(const uint8_t *keys, uint32_t i)
{
	return load_le64(keys + (size_t)i * PROTO_KEY_SIZE);
}

void proto_put_key(uint8_t *keys, uint32_t i, uint64_t key)
{
	store_le64(keys + (size_t)i * PROTO_KEY_SIZE, key);
}

#define HELLO_OFF(field) offsetof(struct nswap2l_hello, field)
#define REPLY_OFF(field) offsetof(struct nswap2l_hello_reply, field)

static void decode_hello(const uint8_t *p, struct nswap2l_hello *hello)
{
	hello->version_min = load_le32(p + HELLO_OFF(version_min));
	hello->version_max = load_le32(p + HELLO_OFF(version_max));
	hello->capabilities = load_le64(p + HELLO_OFF(capabilities));
	memcpy(hello->client_id, p + HELLO_OFF(client_id), sizeof(hello->client_id));
	memcpy(hello->client_nonce, p + HELLO_OFF(client_nonce), sizeof(hello->client_nonce));
	memcpy(hello->client_name, p + HELLO_OFF(client_name), sizeof(hello->client_name));
}

void proto_encode_hello(uint8_t *p, const struct nswap2l_hello *hello)
{
	store_le32(p + HELLO_OFF(version_min), hello->version_min);
	store_le32(p + HELLO_OFF(version_max), hello->version_max);
	store_le64(p + HELLO_OFF(capabilities), hello->capabilities);
	memcpy(p + HELLO_OFF(client_id), hello->client_id, sizeof(hello->client_id));
	memcpy(p + HELLO_OFF(client_nonce), hello->client_nonce, sizeof(hello->client_nonce));
	memcpy(p + HELLO_OFF(client_name), hello->client_name, sizeof(hello->client_name));
}

void proto_encode_hello_reply(uint8_t *p, const struct nswap2l_hello_reply *reply)
{
	store_le32(p + REPLY_OFF(version), reply->version);
	store_le32(p + REPLY_OFF(max_pages), reply->max_pages);
	store_le64(p + REPLY_OFF(capabilities), reply->capabilities);
	memcpy(p + REPLY_OFF(server_nonce), reply->server_nonce, sizeof(reply->server_nonce));
}

void proto_decode_hello_reply(const uint8_t *p, struct nswap2l_hello_reply *reply)
{
	reply->version = load_le32(p + REPLY_OFF(version));
	reply->max_pages = load_le32(p + REPLY_OFF(max_pages));
	reply->capabilities = load_le64(p + REPLY_OFF(capabilities));
	memcpy(reply->server_nonce, p + REPLY_OFF(server_nonce), sizeof(reply->server_nonce));
}

bool proto_hello_name_valid(const struct nswap2l_hello *hello)
{
	static const char peer_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE] = NSWAP2L_PEER_CLIENT_NAME;

	if (hello->capabilities & NSWAP2L_CAP_PEER)
		return !memcmp(hello->client_name, peer_name, sizeof(peer_name));
	return proto_client_name_valid(hello->client_name);
}

static const char *check_keys(const uint8_t *keys, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		if (proto_key(keys, i) >= NSWAP2L_PROTO_KEY_LIMIT)
			return "page key over limit";
	return NULL;
}

/*
 * A PUT that frees one of its own keys: the order of the two would decide
 * whether the page is kept, and the client never sends one.  At most
 * MAX_PAGES * MAX_PUT_FREES comparisons.
 */
static const char *check_frees_not_own(const struct proto_request *req)
{
	uint32_t i, j;

	for (i = 0; i < req->nr_frees; i++) {
		uint64_t key = proto_key(req->frees, i);

		for (j = 0; j < req->hdr.count; j++)
			if (proto_key(req->keys, j) == key)
				return "PUT frees one of its own keys";
	}
	return NULL;
}

const char *proto_check_peer_message(const struct proto_header *hdr, const uint8_t *payload)
{
	if (hdr->magic != NSWAP2L_PROTO_MAGIC)
		return "bad magic";
	if (hdr->flags)
		return "flags set";
	if (hdr->type == (NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY) && hdr->status == NSWAP2L_OK) {
		if (hdr->count > NSWAP2L_PROTO_MAX_PAGES)
			return "count over limit";
		if (hdr->length != hdr->count * PROTO_KEY_SIZE)
			return "length does not match type and count";
		return check_keys(payload, hdr->count);
	}
	if (hdr->type != (NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY) &&
	    hdr->type != (NSWAP2L_MSG_PEER_FREE | NSWAP2L_MSG_REPLY) &&
	    hdr->type != NSWAP2L_MSG_CAPACITY)
		return "unexpected message type from a peer";
	return hdr->length ? "payload in a message without one" : NULL;
}

enum proto_result proto_decode_request(const uint8_t *buf, size_t len, uint64_t caps,
				       struct proto_request *req, size_t *used,
				       const char **why)
{
	struct proto_header *hdr = &req->hdr;
	size_t size;

	*used = 0;
	if (len < PROTO_HEADER_SIZE)
		return PROTO_NEED_MORE;
	proto_decode_header(buf, hdr);
	*why = proto_check_request_header(hdr, caps);
	if (*why)
		return PROTO_INVALID;
	size = PROTO_HEADER_SIZE + (size_t)hdr->length;
	*used = size;
	if (len < size)
		return PROTO_NEED_MORE;

	req->header_bytes = buf;
	req->payload = buf + PROTO_HEADER_SIZE;
	req->keys = NULL;
	req->seals = NULL;
	req->frees = NULL;
	req->nr_frees = 0;
	req->pages = NULL;
	req->mac = NULL;
	switch (hdr->type) {
	case NSWAP2L_MSG_HELLO:
		decode_hello(req->payload, &req->hello);
		if (!proto_hello_name_valid(&req->hello)) {
			*why = "malformed client name in HELLO";
			return PROTO_INVALID;
		}
		break;
	case NSWAP2L_MSG_AUTH:
		req->mac = req->payload;
		break;
	case NSWAP2L_MSG_PUT:
		/*
		 * seals, keys to free (the length left by the pages, checked
		 * above) and pages follow the keys; all keys are checked like
		 * GET's and FREE's
		 */
		req->keys = req->payload;
		req->seals = req->keys + (size_t)hdr->count * PROTO_KEY_SIZE;
		req->frees = req->seals + (size_t)hdr->count * PROTO_SEAL_SIZE;
		req->nr_frees = (hdr->length - hdr->count * (PROTO_KEY_SIZE + PROTO_SEAL_SIZE +
							     PROTO_PAGE_SIZE)) / PROTO_KEY_SIZE;
		req->pages = req->frees + (size_t)req->nr_frees * PROTO_KEY_SIZE;
		*why = check_keys(req->frees, req->nr_frees);
		if (!*why)
			*why = check_frees_not_own(req);
		if (*why)
			return PROTO_INVALID;
		/* fall through */
	case NSWAP2L_MSG_GET:
	case NSWAP2L_MSG_FREE:
	case NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY:
		req->keys = req->payload;
		*why = check_keys(req->keys, hdr->count);
		if (*why)
			return PROTO_INVALID;
		break;
	case NSWAP2L_MSG_PEER_PUT:
	case NSWAP2L_MSG_PEER_FREE:
		memcpy(&req->peer_ns, req->payload, sizeof(req->peer_ns));
		req->keys = req->payload + PROTO_PEER_NS_SIZE;
		if (hdr->type == NSWAP2L_MSG_PEER_PUT) {
			req->seals = req->keys + (size_t)hdr->count * PROTO_KEY_SIZE;
			req->pages = req->seals + (size_t)hdr->count * PROTO_SEAL_SIZE;
		}
		if (!proto_client_name_valid(req->peer_ns.client_name))
			*why = "malformed client name in a peer message";
		else
			*why = check_keys(req->keys, hdr->count);
		if (*why)
			return PROTO_INVALID;
		break;
	case NSWAP2L_MSG_COPY:
		memcpy(&req->copy_to, req->payload, sizeof(req->copy_to));
		req->keys = req->payload + PROTO_MOVED_SIZE;
		*why = check_keys(req->keys, hdr->count);
		if (*why)
			return PROTO_INVALID;
		break;
	}
	return PROTO_COMPLETE;
}

void proto_client_id_hex(const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
			 char hex[PROTO_CLIENT_ID_HEX_SIZE])
{
	int i;

	for (i = 0; i < NSWAP2L_PROTO_CLIENT_ID_SIZE; i++) {
		hex[2 * i] = "0123456789abcdef"[id[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[id[i] & 15];
	}
	hex[2 * NSWAP2L_PROTO_CLIENT_ID_SIZE] = '\0';
}

static bool client_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

bool proto_client_name_valid(const char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	size_t len = 0;

	while (len < NSWAP2L_PROTO_CLIENT_NAME_SIZE && client_name_char(name[len]))
		len++;
	/* a name is also a file name: no "", ".", ".." or hidden file */
	if (!len || len == NSWAP2L_PROTO_CLIENT_NAME_SIZE || name[0] == '.')
		return false;
	/* NUL-padded, so that one name has one encoding in the MACs */
	for (; len < NSWAP2L_PROTO_CLIENT_NAME_SIZE; len++)
		if (name[len])
			return false;
	return true;
}

const char *proto_type_name(uint16_t type)
{
	static const char *const names[] = {
		[NSWAP2L_MSG_HELLO] = "HELLO",
		[NSWAP2L_MSG_AUTH] = "AUTH",
		[NSWAP2L_MSG_PUT] = "PUT",
		[NSWAP2L_MSG_GET] = "GET",
		[NSWAP2L_MSG_FREE] = "FREE",
		[NSWAP2L_MSG_CAPACITY] = "CAPACITY",
		[NSWAP2L_MSG_EVICT] = "EVICT",
		[NSWAP2L_MSG_ASK_NAMESPACE] = "ASK_NAMESPACE",
		[NSWAP2L_MSG_MOVED] = "MOVED",
		[NSWAP2L_MSG_PEER_PUT] = "PEER_PUT",
		[NSWAP2L_MSG_PEER_FREE] = "PEER_FREE",
		[NSWAP2L_MSG_COPY] = "COPY",
		[NSWAP2L_MSG_RELEASE] = "RELEASE",
	};
	uint16_t base = type & (uint16_t)~NSWAP2L_MSG_REPLY;

	if (base < sizeof(names) / sizeof(names[0]) && names[base])
		return names[base];
	return "unknown";
}

const char *proto_status_name(uint32_t status)
{
	static const char *const names[] = {
		[NSWAP2L_OK] = "ok",
		[NSWAP2L_ERR_INVALID] = "invalid",
		[NSWAP2L_ERR_NOSPC] = "nospc",
		[NSWAP2L_ERR_NOENT] = "noent",
		[NSWAP2L_ERR_AUTH] = "auth",
		[NSWAP2L_ERR_VERSION] = "version",
		[NSWAP2L_ERR_NO_CLIENT] = "noclient",
	};

	if (status < sizeof(names) / sizeof(names[0]))
		return names[status];
	return "unknown";
}
