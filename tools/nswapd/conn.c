// SPDX-License-Identifier: GPL-2.0
/*
 * Requests are handled one at a time in arrival order and their replies
 * queued in that order, so a GET after a PUT of the same page on the same
 * connection sees the new data.  Anything malformed or out of place closes
 * the connection (after an INVALID reply when the header looked like ours
 * and, in a session, its MAC proved it the peer's).
 *
 * Buffers are held to the buffer budget: every byte of a connection's
 * input buffer and output chunks is counted, for the server and for the
 * connection's client, and a connection whose next message or reply does
 * not fit is not read (nor its requests handled) until room comes back.
 * Its first CONN_INPUT_HANDSHAKE bytes of input buffer, and the handshake's
 * few replies, are its own: the small constant a connection costs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "peer.h"
#include "server.h"

/*
 * Announced in the HELLO reply; each but the first is in effect on a
 * connection whose HELLO carried it too (NSWAP2L_CAP_EVICT is the client's).
 */
#define SERVER_CAPABILITIES (NSWAP2L_CAP_EVICT | NSWAP2L_CAP_SEALED_GET | NSWAP2L_CAP_PUT_FREES | \
			     NSWAP2L_CAP_MOVED | NSWAP2L_CAP_PEER | NSWAP2L_CAP_COPY | \
			     NSWAP2L_CAP_RELEASE)

static bool in_effect(const struct conn *conn, uint64_t cap)
{
	return conn->capabilities & SERVER_CAPABILITIES & cap;
}

bool conn_is_peer(const struct conn *conn)
{
	return in_effect(conn, NSWAP2L_CAP_PEER);
}

uint64_t conn_free_pages(const struct conn *conn)
{
	/* a peer stores pages for anyone: what the server can take */
	return conn_is_peer(conn) ? server_free_pages(conn->srv) :
	       server_client_free_pages(conn->srv, conn->ns);
}

bool conn_takes_moved(const struct conn *conn)
{
	return conn->state == CONN_READY && conn->ns && in_effect(conn, NSWAP2L_CAP_MOVED);
}

/* Every change of a connection's buffers: its count, its client's and the server's. */
static void charge(struct conn *conn, ptrdiff_t bytes)
{
	struct server *srv = conn->srv;

	conn->buffer_bytes += (size_t)bytes;
	srv->buffer_bytes += (size_t)bytes;
	if (conn->ns)
		conn->ns->account->buffer_bytes += (size_t)bytes;
	if (bytes < 0 && srv->room_waiters)
		srv->room_freed = true;
}

static void charge_output(struct outq *q, ptrdiff_t bytes)
{
	charge(container_of(q, struct conn, out), bytes);
}

/* Returns 0, or -1 when out of memory (the buffer is then as it was). */
static int resize_input(struct conn *conn, size_t cap)
{
	uint8_t *resized = realloc(conn->in, cap);

	if (!resized)
		return -1;
	charge(conn, (ptrdiff_t)cap - (ptrdiff_t)conn->in_cap);
	conn->in = resized;
	conn->in_cap = cap;
	return 0;
}

/*
 * Whether extra more bytes of buffers fit in the budget and in the share of
 * the connection's client, each connection's handshake buffer aside.
 */
static bool room_for(const struct conn *conn, size_t extra)
{
	const struct server *srv = conn->srv;
	const struct client_account *account = conn->ns ? conn->ns->account : NULL;

	if (srv->buffer_bytes + extra >
	    srv->cfg.buffer_budget + (size_t)srv->conn_count * CONN_INPUT_HANDSHAKE)
		return false;
	return !account || account->buffer_bytes + extra <=
			   srv->client_buffer_budget + (size_t)account->connections * CONN_INPUT_HANDSHAKE;
}

/*
 * Input buffers grow only while a largest reply would still fit: replies
 * drain as peers read, input buffers only as replies can be queued.
 */
static bool room_for_input(const struct conn *conn, size_t growth)
{
	static const struct outq no_output;

	return room_for(conn, growth + outq_append_cost(&no_output, PROTO_MAX_MESSAGE));
}

/* No room: not read, nor its requests handled, until buffers shrink somewhere. */
static void wait_for_room(struct conn *conn)
{
	if (conn->waiting_for_room)
		return;
	conn->waiting_for_room = true;
	conn->srv->room_waiters++;
}

static void stop_waiting(struct conn *conn)
{
	if (!conn->waiting_for_room)
		return;
	conn->waiting_for_room = false;
	conn->srv->room_waiters--;
}

struct conn *conn_open(struct server *srv, const char *peer, uint32_t addr)
{
	struct conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->srv = srv;
	conn->ask_peer = -1;
	if (resize_input(conn, CONN_INPUT_HANDSHAKE)) {
		free(conn);
		return NULL;
	}
	conn->out.charge = charge_output;
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

	stop_waiting(conn);
	if (conn->evict_unanswered)
		server_eviction_done(srv, conn, true);
	migrate_conn_closed(srv, conn);
	/* while still bound: the client's account gives the buffers back too */
	outq_clear(&conn->out);
	charge(conn, -(ptrdiff_t)conn->in_cap);
	free(conn->in);
	if (conn->ns)
		server_unbind_namespace(srv, conn->ns);
	list_del(&conn->link);
	srv->conn_count--;
	free(conn);
}

/*
 * Everything a connection sends goes through here.  Once it is closing,
 * nothing more: what is queued then is sent as it is, and an allocation
 * failure drops the queue rather than leave half a message in it.  In a
 * session the message's MAC covers the bytes when mac_covers says so.
 */
static void queue_covered(struct conn *conn, const void *data, size_t len, bool mac_covers)
{
	if (conn->state == CONN_CLOSING)
		return;
	if (outq_append(&conn->out, data, len)) {
		log_error("peer %s: out of memory for replies, closing", conn->peer);
		outq_clear(&conn->out);
		conn->state = CONN_CLOSING;
		return;
	}
	if (conn->tx_mac_open && mac_covers)
		auth_message_update(&conn->tx_mac, data, len);
	if (conn->ns)
		conn->ns->stats.bytes_out += len;
}

static void queue(struct conn *conn, const void *data, size_t len)
{
	queue_covered(conn, data, len, true);
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

/* A whole message with length bytes of payload: header, payload and, in a session, MAC. */
static size_t message_size(const struct conn *conn, uint32_t length)
{
	return PROTO_HEADER_SIZE + length + (conn->session ? PROTO_MSG_MAC_SIZE : 0);
}

/* Whether the budget has room to queue a message with length bytes of payload. */
static bool room_to_send(const struct conn *conn, uint32_t length)
{
	return room_for(conn, outq_append_cost(&conn->out, message_size(conn, length)));
}

/*
 * Starts a message with hdr, encoded into encoded as it goes out (what the
 * handshake's proofs cover); in a session its MAC runs from here to
 * queue_end().
 */
static void queue_header(struct conn *conn, const struct proto_header *hdr,
			 uint8_t encoded[PROTO_HEADER_SIZE])
{
	queue_end(conn);
	if (conn->session) {
		auth_message_begin(&conn->tx_mac, conn->keys.s2c, conn->tx_seq++);
		conn->tx_mac_open = true;
	}
	proto_encode_header(encoded, hdr);
	outq_expect(&conn->out, message_size(conn, hdr->length));
	conn->told_free_pages = hdr->free_pages;
	queue(conn, encoded, PROTO_HEADER_SIZE);
}

/* The header of a reply to req with length bytes of payload to follow. */
static struct proto_header reply_header(struct conn *conn, const struct proto_header *req,
					uint32_t status, uint32_t length)
{
	struct proto_header hdr = {
		.magic = NSWAP2L_PROTO_MAGIC,
		.type = req->type | NSWAP2L_MSG_REPLY,
		.tag = req->tag,
		.count = req->count,
		.length = length,
		.status = status,
		.free_pages = conn_free_pages(conn),
	};

	if (status != NSWAP2L_OK && conn->ns)
		conn->ns->stats.errors++;
	return hdr;
}

static void queue_reply(struct conn *conn, const struct proto_header *req, uint32_t status,
			uint32_t length)
{
	struct proto_header hdr = reply_header(conn, req, status, length);
	uint8_t encoded[PROTO_HEADER_SIZE];

	queue_header(conn, &hdr, encoded);
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
		.capabilities = SERVER_CAPABILITIES,
	};
	uint8_t header[PROTO_HEADER_SIZE], payload[PROTO_HELLO_REPLY_MOVED_SIZE];
	uint32_t length = PROTO_HELLO_REPLY_SIZE;
	struct proto_header hdr;

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
	conn->capabilities = hello->capabilities;
	auth_handshake_from_hello(&conn->handshake, hello);
	conn->srv->cfg.make_nonce(conn->handshake.server_nonce);
	memcpy(reply.server_nonce, conn->handshake.server_nonce, sizeof(reply.server_nonce));
	proto_encode_hello_reply(payload, &reply);
	/* the owner names this server by it in ASK_NAMESPACE and MOVED */
	if (in_effect(conn, NSWAP2L_CAP_MOVED)) {
		memcpy(payload + length, conn->srv->cfg.server_id, NSWAP2L_PROTO_SERVER_ID_SIZE);
		length = PROTO_HELLO_REPLY_MOVED_SIZE;
	}
	hdr = reply_header(conn, &req->hdr, NSWAP2L_OK, length);
	queue_header(conn, &hdr, header);
	queue(conn, payload, length);
	/* both proofs cover every byte of this exchange, as it went over the wire */
	auth_handshake_transcript(&conn->handshake, req->header_bytes, req->payload, header,
				  payload, length);
	conn->state = CONN_WAIT_AUTH;
}

/* Binds the namespace the client proved; false (closing) when it may not have it. */
static bool bind_namespace(struct conn *conn, bool *found)
{
	const struct server_config *cfg = &conn->srv->cfg;
	const char *name = conn->handshake.client_name;
	char id_hex[PROTO_CLIENT_ID_HEX_SIZE];

	switch (server_bind_namespace(conn->srv, name, conn->handshake.client_id, &conn->ns,
				      found)) {
	case BIND_OK:
		/* from now on its buffers are its client's too */
		conn->ns->account->buffer_bytes += conn->buffer_bytes;
		return true;
	case BIND_NO_MEMORY:
		log_error("peer %s: out of memory for a namespace, closing", conn->peer);
		break;
	case BIND_CLIENT_CONNECTIONS:
		log_warn_peer("peer %s: client %s already has %u connections "
			      "(--max-connections-per-client), closing", conn->peer, name,
			      cfg->max_conns_per_client);
		break;
	case BIND_CLIENT_NAMESPACES:
		proto_client_id_hex(conn->handshake.client_id, id_hex);
		log_warn_peer("peer %s: client %s already has %u namespaces "
			      "(--max-namespaces-per-client), no new one (%s), closing", conn->peer,
			      name, cfg->max_namespaces_per_client, id_hex);
		break;
	}
	conn->state = CONN_CLOSING;
	return false;
}

/*
 * A peer server proves the cluster's peer key (never --insecure-no-auth's
 * any key: a peer stores pages in any client's namespace); it binds no
 * namespace.
 */
static void handle_peer_auth(struct conn *conn, const struct proto_request *req)
{
	const struct server_config *cfg = &conn->srv->cfg;
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE], header[PROTO_HEADER_SIZE];
	char id_hex[PROTO_CLIENT_ID_HEX_SIZE];
	struct proto_header hdr;

	proto_client_id_hex(conn->handshake.client_id, id_hex);
	if (cfg->have_peer_key)
		auth_client_mac(&cfg->peer_key, &conn->handshake, mac);
	if (!cfg->have_peer_key || !auth_mac_equal(mac, req->mac)) {
		log_warn_peer("peer %s: peer server %s refused: %s, closing", conn->peer, id_hex,
			      cfg->have_peer_key ? "wrong peer key" : "no --peer-key here");
		conn->srv->auth_failures++;
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_AUTH, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	hdr = reply_header(conn, &req->hdr, NSWAP2L_OK, sizeof(mac));
	queue_header(conn, &hdr, header);
	auth_server_mac(&cfg->peer_key, &conn->handshake, header, mac);
	queue(conn, mac, sizeof(mac));
	auth_session_keys(&cfg->peer_key, &conn->handshake, &conn->keys);
	conn->session = true;
	conn->state = CONN_READY;
	log_info_peer("peer %s: peer server %s authenticated", conn->peer, id_hex);
}

static void handle_auth(struct conn *conn, const struct proto_request *req)
{
	const struct server_config *cfg = &conn->srv->cfg;
	const char *name = conn->handshake.client_name;
	static const struct auth_key no_key;
	const struct auth_key *key = auth_find_key(&cfg->keys, name);
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE], header[PROTO_HEADER_SIZE];
	char id_hex[PROTO_CLIENT_ID_HEX_SIZE];
	struct proto_header hdr;
	bool found;

	if (conn_is_peer(conn)) {
		handle_peer_auth(conn, req);
		return;
	}
	proto_client_id_hex(conn->handshake.client_id, id_hex);
	if (cfg->insecure) {
		key = &no_key;
	} else if (!key) {
		/*
		 * Said as such, on both sides, so that an operator sees which
		 * name to give a key: the peer learns whether a name is known
		 * (names are not secret; see nswap2l_proto.h), never a key.
		 * Only --clients knows names: --key-file has a key for every one.
		 */
		log_warn_peer("peer %s: authentication failed: client '%s' unknown (no file %s/%s), closing",
			      conn->peer, name, cfg->clients_dir ? cfg->clients_dir : "", name);
		conn->srv->auth_failures++;
		queue_reply(conn, &req->hdr,
			    conn->capabilities & NSWAP2L_CAP_NO_CLIENT ? NSWAP2L_ERR_NO_CLIENT :
			    NSWAP2L_ERR_AUTH, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	auth_client_mac(key, &conn->handshake, mac);
	if (!cfg->insecure && !auth_mac_equal(mac, req->mac)) {
		log_warn_peer("peer %s: authentication failed for client %s (namespace %s): wrong key, closing",
			 conn->peer, name, id_hex);
		conn->srv->auth_failures++;
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_AUTH, 0);
		conn->state = CONN_CLOSING;
		return;
	}
	if (!bind_namespace(conn, &found))
		return;
	/*
	 * The client must know whether the pages it stored here still are;
	 * the proof covers this header, so its flags and free_pages are final.
	 */
	hdr = reply_header(conn, &req->hdr, NSWAP2L_OK, sizeof(mac));
	hdr.flags = found ? NSWAP2L_FLAG_NAMESPACE_FOUND : 0;
	queue_header(conn, &hdr, header);
	auth_server_mac(key, &conn->handshake, header, mac);
	queue(conn, mac, sizeof(mac));
	auth_session_keys(key, &conn->handshake, &conn->keys);
	conn->session = true;
	conn->state = CONN_READY;
	log_info_peer("peer %s: client %s (namespace %s) authenticated%s", conn->peer, name, id_hex,
		      conn->capabilities & NSWAP2L_CAP_EVICT ? ", takes EVICT" : "");
}

/* Frees keys as a FREE does: missing keys ignored, accounts and counters follow. */
static void free_keys(struct conn *conn, const uint8_t *keys, uint32_t count)
{
	size_t used_before = conn->ns->pages.used;
	uint32_t were_asked;

	conn->srv->keys_freed += store_free(&conn->srv->pool, &conn->ns->pages, keys, count,
					    &were_asked);
	server_pages_changed(conn->ns, used_before);
	conn->ns->stats.evict_returned += were_asked;
	/* a key freed while it moves stays freed: not taken, and freed on the peer */
	migrate_keys_freed(conn->srv, conn->ns, keys, count);
}

/* The keys to free first, so that they make room for the pages; those stay freed on NOSPC. */
static void handle_put(struct conn *conn, const struct proto_request *req)
{
	struct server *srv = conn->srv;
	size_t used_before;
	enum store_status status;

	srv->requests_put++;
	if (req->nr_frees)
		free_keys(conn, req->frees, req->nr_frees);
	used_before = conn->ns->pages.used;
	status = store_put(&srv->pool, &conn->ns->pages, req->keys, req->seals, req->pages,
			   req->hdr.count, server_client_room(srv, conn->ns));
	server_pages_changed(conn->ns, used_before);
	if (status == STORE_OK)
		srv->pages_put += req->hdr.count;
	queue_reply(conn, &req->hdr, status == STORE_OK ? NSWAP2L_OK : NSWAP2L_ERR_NOSPC, 0);
}

static void handle_get(struct conn *conn, const struct proto_request *req)
{
	const uint8_t *seals[NSWAP2L_PROTO_MAX_PAGES], *pages[NSWAP2L_PROTO_MAX_PAGES];
	uint32_t i, count = req->hdr.count;
	/* the client checks each page by its seal: the MAC leaves the pages out */
	bool mac_covers_pages = !in_effect(conn, NSWAP2L_CAP_SEALED_GET);

	conn->srv->requests_get++;
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
		queue_covered(conn, pages[i], PROTO_PAGE_SIZE, mac_covers_pages);
}

static void handle_free(struct conn *conn, const struct proto_request *req)
{
	conn->srv->requests_free++;
	free_keys(conn, req->keys, req->hdr.count);
	queue_reply(conn, &req->hdr, NSWAP2L_OK, 0);
}

/*
 * PEER_PUT: the pages go into the client's namespace as if it had PUT them,
 * within its quota and the server's room; the namespace is made if need be
 * and then lives out the grace period unless the client connects.  A key
 * held there already stays as it was (a mirror's other copy: the client
 * refuses the move, and the mover must not free it), and the reply names it.
 */
static void handle_peer_put(struct conn *conn, const struct proto_request *req)
{
	struct server *srv = conn->srv;
	const char *name = req->peer_ns.client_name;
	uint8_t held[NSWAP2L_PROTO_MAX_PAGES * PROTO_KEY_SIZE], encoded[PROTO_HEADER_SIZE];
	struct proto_header hdr;
	struct namespace *ns;
	size_t used_before;
	uint32_t status = NSWAP2L_ERR_NOSPC, nr_held = 0;

	if (!srv->cfg.insecure && !auth_find_key(&srv->cfg.keys, name)) {
		log_warn_peer("peer %s: PEER_PUT for client '%s', who has no key here", conn->peer,
			      name);
		queue_reply(conn, &req->hdr, NSWAP2L_ERR_NO_CLIENT, 0);
		return;
	}
	ns = server_peer_namespace(srv, name, req->peer_ns.client_id);
	if (ns) {
		used_before = ns->pages.used;
		if (store_put_new(&srv->pool, &ns->pages, req->keys, req->seals, req->pages,
				  req->hdr.count, server_client_room(srv, ns), held,
				  &nr_held) == STORE_OK) {
			srv->pages_migrated_in += req->hdr.count - nr_held;
			status = NSWAP2L_OK;
		} else {
			nr_held = 0;
		}
		server_pages_changed(ns, used_before);
	}
	hdr = reply_header(conn, &req->hdr, status, nr_held * PROTO_KEY_SIZE);
	hdr.count = nr_held;
	queue_header(conn, &hdr, encoded);
	if (nr_held)
		queue(conn, held, nr_held * PROTO_KEY_SIZE);
}

static void handle_peer_free(struct conn *conn, const struct proto_request *req)
{
	struct server *srv = conn->srv;
	struct namespace *ns = server_find_namespace(srv, req->peer_ns.client_name,
						     req->peer_ns.client_id);
	size_t used_before;
	uint32_t were_asked;

	if (ns) {
		used_before = ns->pages.used;
		srv->keys_freed += store_free_from_peer(&srv->pool, &ns->pages, req->keys,
							req->hdr.count, &were_asked);
		server_pages_changed(ns, used_before);
		migrate_keys_freed(srv, ns, req->keys, req->hdr.count);
	}
	queue_reply(conn, &req->hdr, NSWAP2L_OK, 0);
}

/*
 * A COPY's reply, also when it comes later, from peer.c: small, it is
 * queued whatever the buffer budget (the client waits for it); false only
 * when the connection is closing (the client will never read it).
 */
static bool conn_send_copied_status(struct conn *conn, uint32_t tag, uint32_t status,
				    const uint8_t *keys, uint32_t count)
{
	struct proto_header req = { .type = NSWAP2L_MSG_COPY, .tag = tag, .count = count };
	struct proto_header hdr = reply_header(conn, &req, status, count * PROTO_KEY_SIZE);
	uint8_t encoded[PROTO_HEADER_SIZE];

	if (conn->state == CONN_CLOSING)
		return false;
	queue_header(conn, &hdr, encoded);
	if (count)
		queue(conn, keys, count * PROTO_KEY_SIZE);
	queue_end(conn);
	return conn->state != CONN_CLOSING;
}

/* A COPY: peer.c replies once its PEER_PUTs are answered, or now when it copies nothing. */
static void handle_copy(struct conn *conn, const struct proto_request *req)
{
	uint32_t status = migrate_copy(conn->srv, conn, req);

	if (status != NSWAP2L_OK)
		conn_send_copied_status(conn, req->hdr.tag, status, NULL, 0);
}

/*
 * RELEASE: the client's device is gone, its pages are freed now rather
 * than a grace period after it leaves, for the next device to use; the
 * connection closes once the OK is sent.
 */
static void handle_release(struct conn *conn, const struct proto_request *req)
{
	uint64_t pages = server_release_namespace(conn->srv, conn->ns);

	log_info_peer("client %s: namespace %s released, %llu pages freed",
		      conn->ns->account->client, conn->ns->id_hex, (unsigned long long)pages);
	queue_reply(conn, &req->hdr, NSWAP2L_OK, 0);
	queue_end(conn);
	conn->state = CONN_CLOSING;
	/* the client waits for the OK: replies queued before it must not cut it off */
	conn->flush_until_ms = conn->srv->now_ms + CONN_CLOSE_FLUSH_MS;
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
	case NSWAP2L_MSG_PEER_PUT:
		handle_peer_put(conn, req);
		break;
	case NSWAP2L_MSG_PEER_FREE:
		handle_peer_free(conn, req);
		break;
	case NSWAP2L_MSG_COPY:
		handle_copy(conn, req);
		break;
	case NSWAP2L_MSG_RELEASE:
		handle_release(conn, req);
		break;
	case NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY:
	case NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY:
		if (!migrate_answered(conn->srv, conn, req))
			conn_fail(conn, &req->hdr, "migration reply with a tag not asked");
		break;
	}
}

/*
 * A connection takes requests while its unsent output is under
 * CONN_OUTPUT_HIGH and its share of the buffer budget (it always takes one
 * when it has none), and is not waiting for room in the budget.
 */
bool conn_wants_input(const struct conn *conn)
{
	const struct server *srv = conn->srv;
	size_t share = srv->cfg.buffer_budget / srv->conn_count;

	if (conn->state == CONN_CLOSING || conn->waiting_for_room)
		return false;
	if (!conn->out.bytes)
		return true;
	return conn->out.bytes < CONN_OUTPUT_HIGH && conn->out.bytes < share;
}

bool conn_flushing(const struct conn *conn)
{
	return conn->state == CONN_CLOSING && conn->out.bytes &&
	       conn->srv->now_ms < conn->flush_until_ms;
}

/* The MAC after msg[0..len), under this session's key and next sequence number. */
static bool message_mac_valid(struct conn *conn, const uint8_t *msg, size_t len)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	auth_message_mac(conn->keys.c2s, conn->rx_seq, msg, len, mac);
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

/* Before the session: the header is checked before the payload is read. */
static enum proto_result next_handshake_message(struct conn *conn, struct proto_request *req,
						size_t *used)
{
	const uint8_t *msg = conn->in + conn->in_start;
	size_t avail = conn->in_len - conn->in_start;
	const char *why = NULL;

	switch (proto_decode_request(msg, avail, 0, req, used, &why)) {
	case PROTO_NEED_MORE:
		if (*used > CONN_INPUT_HANDSHAKE) {
			conn_fail(conn, &req->hdr, "message too long before authentication");
			return PROTO_INVALID;
		}
		wait_for_rest(conn, *used);
		return PROTO_NEED_MORE;
	case PROTO_INVALID:
		conn_fail(conn, avail >= PROTO_HEADER_SIZE ? &req->hdr : NULL, why);
		return PROTO_INVALID;
	case PROTO_COMPLETE:
		break;
	}
	return PROTO_COMPLETE;
}

/*
 * In a session the MAC of a message is checked before anything else of it
 * is looked at (but its length, which says where the MAC is), so that
 * nothing injected on the path is acted on, or answered with fields of
 * its own; a length no message may have closes at once, nothing read.
 */
static enum proto_result next_session_message(struct conn *conn, struct proto_request *req,
					      size_t *used)
{
	const uint8_t *msg = conn->in + conn->in_start;
	size_t avail = conn->in_len - conn->in_start, size;
	const char *why = NULL;
	enum proto_result framed = proto_frame(msg, avail, &size, &why);

	if (framed == PROTO_INVALID) {
		conn_fail(conn, NULL, why);
		return PROTO_INVALID;
	}
	if (framed == PROTO_NEED_MORE || avail < size + PROTO_MSG_MAC_SIZE) {
		wait_for_rest(conn, size ? size + PROTO_MSG_MAC_SIZE : 0);
		return PROTO_NEED_MORE;
	}
	if (!conn->in_verified && !message_mac_valid(conn, msg, size)) {
		log_warn_peer("peer %s: message MAC wrong (injected, replayed or reordered), closing",
			      conn->peer);
		conn->srv->mac_failures++;
		if (conn->ns)
			conn->ns->stats.errors++;
		conn->state = CONN_CLOSING;
		return PROTO_INVALID;
	}
	/* checked once, also when the message then waits for room */
	conn->in_verified = true;
	if (proto_decode_request(msg, size, conn->capabilities & SERVER_CAPABILITIES, req, used,
				 &why) != PROTO_COMPLETE) {
		/* the peer's own header: the INVALID reply may echo it */
		conn_fail(conn, &req->hdr, why);
		return PROTO_INVALID;
	}
	*used += PROTO_MSG_MAC_SIZE;
	return PROTO_COMPLETE;
}

/* The first message was handled: off the buffer, and its sequence number used. */
static void consume_message(struct conn *conn, size_t used)
{
	conn->in_start += used;
	conn->in_need = 0;
	conn->in_verified = false;
	conn->message_started_ms = 0;
	if (conn->session)
		conn->rx_seq++;
}

/* Bytes of the reply to a valid request (0: it has none). */
static size_t reply_size(const struct conn *conn, const struct proto_header *req)
{
	switch (req->type) {
	case NSWAP2L_MSG_GET:
		return message_size(conn, req->count * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE));
	case NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY:
	case NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY:
	case NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY:
		return 0;
	default:
		return message_size(conn, 0);
	}
}

static void compact_input(struct conn *conn)
{
	if (!conn->in_start)
		return;
	memmove(conn->in, conn->in + conn->in_start, conn->in_len - conn->in_start);
	conn->in_len -= conn->in_start;
	conn->in_start = 0;
}

/* Authenticated: room for many small requests, or the one large one coming. */
static size_t wanted_input_cap(const struct conn *conn)
{
	if (conn->state != CONN_READY)
		return CONN_INPUT_HANDSHAKE;
	return conn->in_need > CONN_INPUT_BASE ? conn->in_need : CONN_INPUT_BASE;
}

/* After a large message: back to the size wanted, once what is buffered fits in it. */
static void shrink_input(struct conn *conn)
{
	size_t wanted = wanted_input_cap(conn);

	if (conn->in_cap <= wanted || conn->in_len - conn->in_start > wanted)
		return;
	compact_input(conn);
	/* a failed shrink leaves the buffer as it was, which is fine */
	resize_input(conn, wanted);
}

void conn_process(struct conn *conn)
{
	stop_waiting(conn);
	while (conn_wants_input(conn)) {
		struct proto_request req;
		size_t used, reply;

		if ((conn->session ? next_session_message(conn, &req, &used) :
		     next_handshake_message(conn, &req, &used)) != PROTO_COMPLETE)
			break;
		/* the handshake's replies are part of what a connection costs */
		reply = conn->session ? reply_size(conn, &req.hdr) : 0;
		if (reply && !room_for(conn, outq_append_cost(&conn->out, reply))) {
			wait_for_room(conn);
			break;
		}
		consume_message(conn, used);
		handle(conn, &req);
		queue_end(conn);
	}
	shrink_input(conn);
}

/*
 * Grows the input buffer to what the connection wants or, short of room for
 * that, to what the message coming needs; returns false when even that
 * does not fit (the connection then waits for room) or on a failure
 * (closing).
 */
static bool fit_input(struct conn *conn)
{
	size_t wanted = wanted_input_cap(conn);

	if (conn->in_cap < wanted && !room_for_input(conn, wanted - conn->in_cap))
		wanted = conn->in_need;
	if (conn->in_cap >= wanted)
		return true;
	if (!room_for_input(conn, wanted - conn->in_cap)) {
		wait_for_room(conn);
		return false;
	}
	if (!resize_input(conn, wanted))
		return true;
	log_error("peer %s: out of memory for a request, closing", conn->peer);
	conn->state = CONN_CLOSING;
	return false;
}

uint8_t *conn_read_space(struct conn *conn, size_t *room)
{
	*room = 0;
	if (!conn_wants_input(conn))
		return NULL;
	compact_input(conn);
	if (!fit_input(conn))
		return NULL;
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
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_CAPACITY,
				    .free_pages = free_pages };
	uint8_t encoded[PROTO_HEADER_SIZE];

	if (!room_to_send(conn, 0))
		return;
	queue_header(conn, &hdr, encoded);
	queue_end(conn);
}

uint64_t conn_ask_eviction(struct conn *conn, uint64_t want)
{
	struct server *srv = conn->srv;
	uint8_t payload[NSWAP2L_PROTO_MAX_KEYS * PROTO_KEY_SIZE], encoded[PROTO_HEADER_SIZE];
	uint64_t keys[NSWAP2L_PROTO_MAX_KEYS], asked = 0;
	uint32_t msg, first_tag = srv->next_evict_tag, i;

	/* tag 0 is CAPACITY's; keep the whole round's tags clear of it */
	if (first_tag == 0 || first_tag > UINT32_MAX - EVICT_ROUND_MESSAGES)
		first_tag = 1;
	for (msg = 0; msg < EVICT_ROUND_MESSAGES && asked < want; msg++) {
		uint64_t left = want - asked;
		uint32_t most = left < NSWAP2L_PROTO_MAX_KEYS ? (uint32_t)left : NSWAP2L_PROTO_MAX_KEYS;
		struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_EVICT,
					    .tag = first_tag + msg,
					    .free_pages = server_client_free_pages(srv, conn->ns) };

		/* a round the budget has no room for asks less, or waits for the next */
		if (!room_to_send(conn, most * PROTO_KEY_SIZE))
			break;
		hdr.count = store_pick_eviction(&conn->ns->pages, keys, most);
		if (!hdr.count)
			break;
		hdr.length = hdr.count * PROTO_KEY_SIZE;
		for (i = 0; i < hdr.count; i++)
			proto_put_key(payload, i, keys[i]);
		queue_header(conn, &hdr, encoded);
		queue(conn, payload, hdr.length);
		queue_end(conn);
		conn->evict_unanswered |= 1ull << msg;
		asked += hdr.count;
	}
	srv->next_evict_tag = first_tag + msg;
	conn->evict_first_tag = first_tag;
	conn->evict_keys = asked;
	conn->evict_pages_left = false;
	return asked;
}

/* A server-initiated message with payload parts, within the budget; false: no room. */
static bool send_message(struct conn *conn, struct proto_header *hdr, const void *part1,
			 uint32_t len1, const void *part2, uint32_t len2)
{
	uint8_t encoded[PROTO_HEADER_SIZE];

	hdr->magic = NSWAP2L_PROTO_MAGIC;
	hdr->length = len1 + len2;
	hdr->free_pages = conn_free_pages(conn);
	if (conn->state == CONN_CLOSING || !room_to_send(conn, hdr->length))
		return false;
	queue_header(conn, hdr, encoded);
	queue(conn, part1, len1);
	if (len2)
		queue(conn, part2, len2);
	queue_end(conn);
	return true;
}

bool conn_ask_namespace(struct conn *conn, uint32_t tag,
			const uint8_t server_id[NSWAP2L_PROTO_SERVER_ID_SIZE])
{
	struct proto_header hdr = { .type = NSWAP2L_MSG_ASK_NAMESPACE, .tag = tag };

	return send_message(conn, &hdr, server_id, NSWAP2L_PROTO_SERVER_ID_SIZE, NULL, 0);
}

bool conn_send_moved(struct conn *conn, uint32_t tag, const struct nswap2l_moved *where,
		     const uint8_t *keys, uint32_t count)
{
	struct proto_header hdr = { .type = NSWAP2L_MSG_MOVED, .tag = tag, .count = count };

	return send_message(conn, &hdr, where, sizeof(*where), keys, count * PROTO_KEY_SIZE);
}

bool conn_send_copied(struct conn *conn, uint32_t tag, const uint8_t *keys, uint32_t count)
{
	return conn_send_copied_status(conn, tag, count ? NSWAP2L_OK : NSWAP2L_ERR_NOENT, keys,
				       count);
}
