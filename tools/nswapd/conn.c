// SPDX-License-Identifier: GPL-2.0
/*
 * Requests are handled one at a time in arrival order and their replies
 * queued in that order, so a GET after a PUT of the same page on the same
 * connection sees the new data.  Anything malformed or out of place closes
 * the connection (after an INVALID reply when the header looked like ours).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "server.h"

struct conn *conn_open(struct server *srv, const char *peer, uint32_t addr)
{
	struct conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->in = malloc(CONN_INPUT_HANDSHAKE);
	if (!conn->in) {
		free(conn);
		return NULL;
	}
	conn->in_cap = CONN_INPUT_HANDSHAKE;
	srv->buffer_bytes += conn->in_cap;
	conn->out.usage = &srv->buffer_bytes;
	conn->srv = srv;
	snprintf(conn->peer, sizeof(conn->peer), "%s", peer);
	conn->addr = addr;
	conn->state = CONN_WAIT_HELLO;
	conn->opened_ms = srv->now_ms;
	conn->last_input_ms = srv->now_ms;
	list_add(&conn->link, &srv->conns);
	srv->conn_count++;
	return conn;
}

void conn_close(struct conn *conn)
{
	struct server *srv = conn->srv;

	if (conn->evict_unanswered)
		server_eviction_done(srv, conn, true);
	if (conn->ns)
		server_unbind_namespace(srv, conn->ns);
	list_del(&conn->link);
	srv->conn_count--;
	outq_clear(&conn->out);
	srv->buffer_bytes -= conn->in_cap;
	free(conn->in);
	free(conn);
}

/*
 * Everything a connection sends goes through here.  Once it is closing,
 * nothing more: what is queued then is sent as it is, and an allocation
 * failure drops the queue rather than leave half a message in it.
 */
static void queue(struct conn *conn, const void *data, size_t len)
{
	if (conn->state == CONN_CLOSING)
		return;
	if (outq_append(&conn->out, data, len)) {
		log_error("peer %s: out of memory for replies, closing", conn->peer);
		outq_clear(&conn->out);
		conn->state = CONN_CLOSING;
		return;
	}
	if (conn->tx_mac_open)
		auth_message_update(&conn->tx_mac, data, len);
	if (conn->ns)
		conn->ns->stats.bytes_out += len;
}

/*
 * The end of a message: in a session, its MAC follows it, also when the
 * message was the last before closing (an INVALID reply).
 */
static void queue_end(struct conn *conn)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	if (!conn->tx_mac_open)
		return;
	conn->tx_mac_open = false;
	auth_message_end(&conn->tx_mac, mac);
	if (conn->out.bytes && outq_append(&conn->out, mac, sizeof(mac)))
		outq_clear(&conn->out);
}

static void queue_header(struct conn *conn, uint16_t type, uint16_t flags, uint32_t tag,
			 uint32_t count, uint32_t length, uint32_t status, uint64_t free_pages)
{
	struct proto_header hdr = {
		.magic = NSWAP2L_PROTO_MAGIC,
		.type = type,
		.flags = flags,
		.tag = tag,
		.count = count,
		.length = length,
		.status = status,
		.free_pages = free_pages,
	};
	uint8_t buf[PROTO_HEADER_SIZE];

	queue_end(conn);
	if (conn->session) {
		auth_message_begin(&conn->tx_mac, conn->keys.s2c, conn->tx_seq++);
		conn->tx_mac_open = true;
	}
	proto_encode_header(buf, &hdr);
	queue(conn, buf, sizeof(buf));
}

/* A reply to req with length bytes of payload to follow. */
static void queue_reply(struct conn *conn, const struct proto_header *req, uint32_t status,
			uint32_t length)
{
	queue_header(conn, req->type | NSWAP2L_MSG_REPLY, 0, req->tag, req->count, length, status,
		     server_client_free_pages(conn->srv, conn->ns));
	if (status != NSWAP2L_OK && conn->ns)
		conn->ns->stats.errors++;
}

/* Protocol violation: log, count, tell the peer if it speaks our protocol, close. */
static void conn_fail(struct conn *conn, const struct proto_header *hdr, const char *why)
{
	log_warn_peer("peer %s: %s, closing", conn->peer, why);
	conn->srv->protocol_errors++;
	if (hdr && hdr->magic == NSWAP2L_PROTO_MAGIC)
		queue_reply(conn, hdr, NSWAP2L_ERR_INVALID, 0);
	else if (conn->ns)
		conn->ns->stats.errors++;
	queue_end(conn);
	conn->state = CONN_CLOSING;
}

static void handle_hello(struct conn *conn, const struct proto_request *req)
{
	const struct nswap2l_hello *hello = &req->hello;
	struct nswap2l_hello_reply reply = {
		.version = NSWAP2L_PROTO_VERSION,
		.max_pages = NSWAP2L_PROTO_MAX_PAGES,
		.capabilities = NSWAP2L_CAP_EVICT,
	};
	uint8_t payload[sizeof(struct nswap2l_hello_reply)];

	if (hello->version_min > hello->version_max) {
		conn_fail(conn, &req->hdr, "empty version range in HELLO");
		return;
	}
	if (hello->version_min > NSWAP2L_PROTO_VERSION || hello->version_max < NSWAP2L_PROTO_VERSION) {
		log_warn_peer("peer %s: no common protocol version (client %u..%u, server %u), closing",
			      conn->peer, hello->version_min, hello->version_max, NSWAP2L_PROTO_VERSION);
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_VERSION, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	conn->hello = *hello;
	conn->srv->cfg.make_nonce(conn->server_nonce);
	memcpy(reply.server_nonce, conn->server_nonce, sizeof(reply.server_nonce));
	proto_encode_hello_reply(payload, &reply);
	queue_reply(conn, &req->hdr, NSWAP2L_OK, sizeof(payload));
	queue(conn, payload, sizeof(payload));
	conn->state = CONN_WAIT_AUTH;
}

static void handle_auth(struct conn *conn, const struct proto_request *req)
{
	const struct server_config *cfg = &conn->srv->cfg;
	const char *name = conn->hello.client_name;
	static const struct auth_key no_key;
	const struct auth_key *key = auth_find_key(&cfg->keys, name);
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE];
	char id_hex[PROTO_CLIENT_ID_HEX_SIZE];
	bool found;

	proto_client_id_hex(conn->hello.client_id, id_hex);
	if (cfg->insecure) {
		key = &no_key;
	} else if (!key) {
		log_warn_peer("peer %s: authentication failed: no client named %s, closing",
			      conn->peer, name);
		conn->srv->auth_failures++;
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_AUTH, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	auth_client_mac(key, name, conn->hello.client_id, conn->hello.client_nonce,
			conn->server_nonce, mac);
	if (!cfg->insecure && !auth_mac_equal(mac, req->mac)) {
		log_warn_peer("peer %s: authentication failed for client %s (namespace %s): wrong key, closing",
			 conn->peer, name, id_hex);
		conn->srv->auth_failures++;
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_AUTH, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	conn->ns = server_bind_namespace(conn->srv, name, conn->hello.client_id, &found);
	if (!conn->ns) {
		log_error("peer %s: out of memory for a namespace, closing", conn->peer);
		conn->state = CONN_CLOSING;
		return;
	}
	auth_server_mac(key, name, conn->hello.client_id, conn->hello.client_nonce,
			conn->server_nonce, mac);
	/* The client must know whether the pages it stored here still are. */
	queue_header(conn, req->hdr.type | NSWAP2L_MSG_REPLY,
		     found ? NSWAP2L_FLAG_NAMESPACE_FOUND : 0, req->hdr.tag, req->hdr.count,
		     sizeof(mac), NSWAP2L_OK, server_client_free_pages(conn->srv, conn->ns));
	queue(conn, mac, sizeof(mac));
	auth_session_keys(key, name, conn->hello.client_id, conn->hello.client_nonce,
			  conn->server_nonce, &conn->keys);
	conn->session = true;
	conn->state = CONN_READY;
	log_info("peer %s: client %s (namespace %s) authenticated%s", conn->peer, name, id_hex,
		 conn->hello.capabilities & NSWAP2L_CAP_EVICT ? ", takes EVICT" : "");
}

static void handle_put(struct conn *conn, const struct proto_request *req)
{
	struct server *srv = conn->srv;
	size_t used_before = conn->ns->pages.used;
	enum store_status status;

	status = store_put(&srv->pool, &conn->ns->pages, req->keys, req->seals, req->pages,
			   req->hdr.count, server_client_free_pages(srv, conn->ns));
	server_pages_changed(conn->ns, used_before);
	queue_reply(conn, &req->hdr, status == STORE_OK ? NSWAP2L_OK : NSWAP2L_ERR_NOSPC, 0);
}

static void handle_get(struct conn *conn, const struct proto_request *req)
{
	const uint8_t *seals[NSWAP2L_PROTO_MAX_PAGES], *pages[NSWAP2L_PROTO_MAX_PAGES];
	uint32_t i, count = req->hdr.count;

	if (store_get(&conn->srv->pool, &conn->ns->pages, req->keys, count, seals, pages) !=
	    STORE_OK) {
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_NOENT, 0);
		return;
	}
	queue_reply(conn, &req->hdr, NSWAP2L_OK, count * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE));
	/* all the seals, then all the pages, as the PUT sent them */
	for (i = 0; i < count; i++)
		queue(conn, seals[i], PROTO_SEAL_SIZE);
	for (i = 0; i < count; i++)
		queue(conn, pages[i], PROTO_PAGE_SIZE);
}

static void handle_free(struct conn *conn, const struct proto_request *req)
{
	size_t used_before = conn->ns->pages.used;
	uint32_t were_asked;

	store_free(&conn->srv->pool, &conn->ns->pages, req->keys, req->hdr.count, &were_asked);
	server_pages_changed(conn->ns, used_before);
	conn->ns->stats.evict_returned += were_asked;
	queue_reply(conn, &req->hdr, NSWAP2L_OK, 0);
}

static void handle_evict_reply(struct conn *conn, const struct proto_request *req)
{
	uint32_t index = req->hdr.tag - conn->evict_first_tag;
	uint64_t bit = index < EVICT_ROUND_MESSAGES ? 1ull << index : 0;

	if (!(conn->evict_unanswered & bit)) {
		conn_fail(conn, &req->hdr, "EVICT reply with a tag not asked");
		return;
	}
	conn->evict_unanswered &= ~bit;
	if (req->hdr.status == NSWAP2L_ERR_NOSPC)
		conn->evict_pages_left = true;
	if (!conn->evict_unanswered)
		server_eviction_done(conn->srv, conn, conn->evict_pages_left);
}

/* The state in which a message of this type is allowed. */
static enum conn_state state_for(uint16_t type)
{
	switch (type) {
	case NSWAP2L_MSG_HELLO:
		return CONN_WAIT_HELLO;
	case NSWAP2L_MSG_AUTH:
		return CONN_WAIT_AUTH;
	default:
		return CONN_READY;
	}
}

static void handle(struct conn *conn, const struct proto_request *req)
{
	enum conn_state wanted = state_for(req->hdr.type);
	char why[96];

	if (conn->state != wanted) {
		snprintf(why, sizeof(why), "%s%s %s", proto_type_name(req->hdr.type),
			 req->hdr.type & NSWAP2L_MSG_REPLY ? " reply" : "",
			 wanted == CONN_READY ? "before authentication" :
			 conn->state == CONN_READY ? "after authentication" : "out of order");
		conn_fail(conn, &req->hdr, why);
		return;
	}
	if (conn->ns) {
		conn->ns->stats.bytes_in += PROTO_HEADER_SIZE + req->hdr.length;
		conn->ns->stats.requests++;
	}
	switch (req->hdr.type) {
	case NSWAP2L_MSG_HELLO:
		handle_hello(conn, req);
		break;
	case NSWAP2L_MSG_AUTH:
		handle_auth(conn, req);
		break;
	case NSWAP2L_MSG_PUT:
		handle_put(conn, req);
		break;
	case NSWAP2L_MSG_GET:
		handle_get(conn, req);
		break;
	case NSWAP2L_MSG_FREE:
		handle_free(conn, req);
		break;
	case NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY:
		handle_evict_reply(conn, req);
		break;
	}
}

/*
 * A connection always gets one reply queued; more while its backlog is
 * under its share of the buffer budget and the budget is not spent, so
 * that peers who do not read cannot take more than the budget between
 * them (plus one reply each).
 */
bool conn_wants_input(const struct conn *conn)
{
	const struct server *srv = conn->srv;
	size_t share = srv->cfg.buffer_budget / srv->conn_count;

	if (conn->state == CONN_CLOSING)
		return false;
	if (!conn->out.bytes)
		return true;
	return conn->out.bytes < CONN_OUTPUT_HIGH && conn->out.bytes < share &&
	       srv->buffer_bytes < srv->cfg.buffer_budget;
}

/* The MAC after msg[0..len), under this session's key and next sequence number. */
static bool message_mac_valid(struct conn *conn, const uint8_t *msg, size_t len)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	auth_message_mac(conn->keys.c2s, conn->rx_seq++, msg, len, mac);
	/* --insecure-no-auth: any client MAC, as in the handshake */
	return auth_message_mac_equal(mac, msg + len) || conn->srv->cfg.insecure;
}

/* A message has begun and not all of it is here: its size, and since when. */
static void wait_for_rest(struct conn *conn, size_t need)
{
	conn->in_need = need;
	if (conn->in_len == conn->in_start)
		conn->message_started_ms = 0;
	else if (!conn->message_started_ms)
		conn->message_started_ms = conn->srv->now_ms;
}

void conn_process(struct conn *conn)
{
	while (conn_wants_input(conn)) {
		const uint8_t *msg = conn->in + conn->in_start;
		size_t avail = conn->in_len - conn->in_start;
		size_t mac_size = conn->session ? PROTO_MSG_MAC_SIZE : 0;
		struct proto_request req;
		const char *why = NULL;
		size_t used;

		switch (proto_decode_request(msg, avail, &req, &used, &why)) {
		case PROTO_NEED_MORE:
			if (conn->state != CONN_READY && used > CONN_INPUT_HANDSHAKE) {
				conn_fail(conn, &req.hdr, "message too long before authentication");
				return;
			}
			wait_for_rest(conn, used ? used + mac_size : 0);
			return;
		case PROTO_INVALID:
			conn_fail(conn, avail >= PROTO_HEADER_SIZE ? &req.hdr : NULL, why);
			return;
		case PROTO_COMPLETE:
			if (avail < used + mac_size) {
				wait_for_rest(conn, used + mac_size);
				return;
			}
			if (conn->session && !message_mac_valid(conn, msg, used)) {
				log_warn_peer("peer %s: message MAC wrong (injected, replayed or reordered), closing",
					      conn->peer);
				conn->srv->mac_failures++;
				if (conn->ns)
					conn->ns->stats.errors++;
				conn->state = CONN_CLOSING;
				return;
			}
			conn->in_start += used + mac_size;
			conn->in_need = 0;
			conn->message_started_ms = 0;
			handle(conn, &req);
			queue_end(conn);
			break;
		}
	}
}

/* Authenticated: room for many small requests, or one large one. */
static size_t wanted_input_cap(const struct conn *conn)
{
	return conn->in_need > CONN_INPUT_INITIAL ? PROTO_MAX_MESSAGE : CONN_INPUT_INITIAL;
}

uint8_t *conn_read_space(struct conn *conn, size_t *room)
{
	*room = 0;
	if (!conn_wants_input(conn))
		return NULL;
	if (conn->in_start) {
		memmove(conn->in, conn->in + conn->in_start, conn->in_len - conn->in_start);
		conn->in_len -= conn->in_start;
		conn->in_start = 0;
	}
	/* the header of the first message was checked: now it may need more room */
	if (conn->state == CONN_READY && conn->in_cap < wanted_input_cap(conn)) {
		size_t cap = wanted_input_cap(conn);
		uint8_t *grown = realloc(conn->in, cap);

		if (!grown) {
			log_error("peer %s: out of memory for a request, closing", conn->peer);
			conn->state = CONN_CLOSING;
			return NULL;
		}
		conn->srv->buffer_bytes += cap - conn->in_cap;
		conn->in = grown;
		conn->in_cap = cap;
	}
	*room = conn->in_cap - conn->in_len;
	return conn->in + conn->in_len;
}

void conn_received(struct conn *conn, size_t n)
{
	conn->in_len += n;
	conn->last_input_ms = conn->srv->now_ms;
	conn_process(conn);
}

void conn_send_capacity(struct conn *conn, uint64_t free_pages)
{
	queue_header(conn, NSWAP2L_MSG_CAPACITY, 0, 0, 0, 0, NSWAP2L_OK, free_pages);
	queue_end(conn);
}

uint64_t conn_ask_eviction(struct conn *conn, uint64_t want)
{
	struct server *srv = conn->srv;
	uint8_t payload[NSWAP2L_PROTO_MAX_KEYS * PROTO_KEY_SIZE];
	uint64_t keys[NSWAP2L_PROTO_MAX_KEYS], asked = 0;
	uint32_t msg, first_tag = srv->next_evict_tag, i;

	/* tag 0 is CAPACITY's; keep the whole round's tags clear of it */
	if (first_tag == 0 || first_tag > UINT32_MAX - EVICT_ROUND_MESSAGES)
		first_tag = 1;
	for (msg = 0; msg < EVICT_ROUND_MESSAGES && asked < want; msg++) {
		uint64_t left = want - asked;
		uint32_t n = store_pick_eviction(&conn->ns->pages, keys,
						 left < NSWAP2L_PROTO_MAX_KEYS ? (uint32_t)left :
						 NSWAP2L_PROTO_MAX_KEYS);

		if (!n)
			break;
		for (i = 0; i < n; i++)
			proto_put_key(payload, i, keys[i]);
		queue_header(conn, NSWAP2L_MSG_EVICT, 0, first_tag + msg, n, n * PROTO_KEY_SIZE,
			     NSWAP2L_OK, server_client_free_pages(conn->srv, conn->ns));
		queue(conn, payload, n * PROTO_KEY_SIZE);
		queue_end(conn);
		conn->evict_unanswered |= 1ull << msg;
		asked += n;
	}
	srv->next_evict_tag = first_tag + msg;
	conn->evict_first_tag = first_tag;
	conn->evict_keys = asked;
	conn->evict_pages_left = false;
	return asked;
}
