// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the message parser on its own, and a whole connection
 * (conn.c over an in-memory page store, with server ticks under changing
 * memory) fed the input as a client's or a peer server's byte stream (the
 * peer key is the client key), and the check of a peer's messages to the
 * mover, and the --metrics request parser on the same stream.  Input layout:
 * fuzz_input.h.  Besides crashes and sanitizer reports, it checks that
 * every message the server sends is well-formed and that the page counts
 * agree.
 */
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "fuzz_input.h"
#include "log.h"
#include "metrics.h"
#include "proto.h"
#include "server.h"

#define FUZZ_ASSERT(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void zero_nonce(uint8_t nonce[NSWAP2L_PROTO_NONCE_SIZE])
{
	memset(nonce, 0, NSWAP2L_PROTO_NONCE_SIZE);
}

/*
 * Decodes the stream message by message with the parser alone, with the
 * capabilities caps in effect; the framing a session goes by (its length
 * field only) finds the same ends, and a PUT's parts fill its payload.
 */
static void fuzz_parser_alone(const uint8_t *data, size_t size, uint64_t caps)
{
	struct proto_request req;
	const char *why;
	size_t used, framed;

	while (proto_decode_request(data, size, caps, &req, &used, &why) == PROTO_COMPLETE) {
		FUZZ_ASSERT(used >= PROTO_HEADER_SIZE && used <= size);
		FUZZ_ASSERT(proto_frame(data, size, &framed, &why) == PROTO_COMPLETE && framed == used);
		if (req.hdr.type == NSWAP2L_MSG_PUT)
			FUZZ_ASSERT(req.nr_frees <= NSWAP2L_PROTO_MAX_PUT_FREES &&
				    (req.nr_frees == 0 || (caps & NSWAP2L_CAP_PUT_FREES)) &&
				    req.pages + (size_t)req.hdr.count * PROTO_PAGE_SIZE == data + used);
		/* a session is a peer's or a client's: their requests never mix */
		if (req.hdr.type == NSWAP2L_MSG_PEER_PUT || req.hdr.type == NSWAP2L_MSG_PEER_FREE)
			FUZZ_ASSERT((caps & NSWAP2L_CAP_PEER) &&
				    proto_client_name_valid(req.peer_ns.client_name));
		else if (req.hdr.type != NSWAP2L_MSG_HELLO && req.hdr.type != NSWAP2L_MSG_AUTH)
			FUZZ_ASSERT(!(caps & NSWAP2L_CAP_PEER));
		if (req.hdr.type == NSWAP2L_MSG_PEER_PUT)
			FUZZ_ASSERT(req.pages + (size_t)req.hdr.count * PROTO_PAGE_SIZE == data + used);
		/* a COPY's keys, 1..MAX_COPY_KEYS, fill what its where leaves */
		if (req.hdr.type == NSWAP2L_MSG_COPY)
			FUZZ_ASSERT((caps & NSWAP2L_CAP_COPY) && (caps & NSWAP2L_CAP_MOVED) &&
				    req.hdr.count && req.hdr.count <= NSWAP2L_PROTO_MAX_COPY_KEYS &&
				    req.keys + (size_t)req.hdr.count * PROTO_KEY_SIZE == data + used);
		/* a RELEASE is its header alone */
		if (req.hdr.type == NSWAP2L_MSG_RELEASE)
			FUZZ_ASSERT((caps & NSWAP2L_CAP_RELEASE) && !req.hdr.count &&
				    used == PROTO_HEADER_SIZE);
		data += used;
		size -= used;
	}
}

/*
 * The same bytes as a peer's messages to the mover (peer.c): framed by
 * their length within the mover's buffer, each checked; a valid PEER_PUT
 * reply's keys fill its payload.
 */
static void fuzz_peer_messages_alone(const uint8_t *data, size_t size)
{
	struct proto_header hdr;

	while (size >= PROTO_HEADER_SIZE) {
		proto_decode_header(data, &hdr);
		if (hdr.length > NSWAP2L_PROTO_MAX_PAGES * PROTO_KEY_SIZE ||
		    size - PROTO_HEADER_SIZE < hdr.length)
			return;
		if (!proto_check_peer_message(&hdr, data + PROTO_HEADER_SIZE) &&
		    hdr.type == (NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY))
			FUZZ_ASSERT(hdr.length == (hdr.status == NSWAP2L_OK ? hdr.count * PROTO_KEY_SIZE :
						   0));
		data += PROTO_HEADER_SIZE + hdr.length;
		size -= PROTO_HEADER_SIZE + hdr.length;
	}
}

/* The peer's view of the server's messages: in a session since its AUTH reply. */
static bool peer_session;
static uint64_t peer_rx_seq;

/* What the peer reads: each message must be whole, well-formed and MACed. */
static void drain_output(struct conn *conn)
{
	static uint8_t stream[CONN_OUTPUT_HIGH + PROTO_MAX_MESSAGE];
	struct iovec iov[256];
	size_t len = 0, pos = 0;
	int n, i;

	while (conn->out.bytes) {
		n = outq_iov(&conn->out, iov, 256);
		for (i = 0; i < n; i++) {
			FUZZ_ASSERT(len + iov[i].iov_len <= sizeof(stream));
			memcpy(stream + len, iov[i].iov_base, iov[i].iov_len);
			len += iov[i].iov_len;
			outq_consume(&conn->out, iov[i].iov_len);
		}
	}
	while (pos < len) {
		struct proto_header hdr;

		FUZZ_ASSERT(len - pos >= PROTO_HEADER_SIZE);
		proto_decode_header(stream + pos, &hdr);
		FUZZ_ASSERT(hdr.magic == NSWAP2L_PROTO_MAGIC);
		FUZZ_ASSERT(hdr.flags == 0 || (hdr.type == (NSWAP2L_MSG_AUTH | NSWAP2L_MSG_REPLY) &&
					       hdr.flags == NSWAP2L_FLAG_NAMESPACE_FOUND));
		FUZZ_ASSERT(hdr.length <= NSWAP2L_PROTO_MAX_PAYLOAD);
		FUZZ_ASSERT(len - pos - PROTO_HEADER_SIZE >= hdr.length);
		if (hdr.type == (NSWAP2L_MSG_GET | NSWAP2L_MSG_REPLY) && hdr.status == NSWAP2L_OK)
			FUZZ_ASSERT(hdr.length == hdr.count * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE));
		/* without peers every COPY copies nothing: NOENT, no payload */
		if (hdr.type == (NSWAP2L_MSG_COPY | NSWAP2L_MSG_REPLY))
			FUZZ_ASSERT(hdr.status == NSWAP2L_ERR_INVALID ||
				    (hdr.status == NSWAP2L_ERR_NOENT && !hdr.count && !hdr.length));
		if (hdr.type == NSWAP2L_MSG_EVICT)
			FUZZ_ASSERT(hdr.tag && hdr.count && hdr.length == hdr.count * PROTO_KEY_SIZE);
		/* a RELEASE's OK is the last message: the server closes, its namespace empty */
		if (hdr.type == (NSWAP2L_MSG_RELEASE | NSWAP2L_MSG_REPLY) &&
		    hdr.status != NSWAP2L_ERR_INVALID)
			FUZZ_ASSERT(hdr.status == NSWAP2L_OK && !hdr.count && !hdr.length &&
				    conn->state == CONN_CLOSING && !conn->ns->pages.used &&
				    len - pos == PROTO_HEADER_SIZE + NSWAP2L_PROTO_MSG_MAC_SIZE);
		/* what the mover takes: a PEER_PUT reply names only keys held there already */
		if (hdr.type == (NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY))
			FUZZ_ASSERT(!proto_check_peer_message(&hdr, stream + pos + PROTO_HEADER_SIZE));
		if (peer_session) {
			uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];
			size_t size = PROTO_HEADER_SIZE + hdr.length;

			FUZZ_ASSERT(len - pos >= size + sizeof(mac));
			/* with SEALED_GET, a GET reply's MAC covers its header and seals only */
			if (hdr.type == (NSWAP2L_MSG_GET | NSWAP2L_MSG_REPLY) &&
			    hdr.status == NSWAP2L_OK &&
			    (conn->capabilities & NSWAP2L_CAP_SEALED_GET))
				auth_message_mac(conn->keys.s2c, peer_rx_seq++, stream + pos,
						 PROTO_HEADER_SIZE + hdr.count * PROTO_SEAL_SIZE, mac);
			else
				auth_message_mac(conn->keys.s2c, peer_rx_seq++, stream + pos, size,
						 mac);
			FUZZ_ASSERT(auth_message_mac_equal(mac, stream + pos + size));
			pos += sizeof(mac);
		}
		if (hdr.type == (NSWAP2L_MSG_AUTH | NSWAP2L_MSG_REPLY) && hdr.status == NSWAP2L_OK)
			peer_session = true;
		pos += PROTO_HEADER_SIZE + hdr.length;
	}
}

static void check_counts(const struct server *srv)
{
	const struct namespace *ns, *other;
	uint64_t pages = 0;

	for (ns = srv->namespaces; ns; ns = ns->next)
		pages += ns->pages.used;
	FUZZ_ASSERT(pages == server_held_pages(srv));
	/* every page held came in a PUT or PEER_PUT, and every key freed was held */
	FUZZ_ASSERT(server_held_pages(srv) + srv->keys_freed <= srv->pages_put +
		    srv->pages_migrated_in);
	/* each client's count, kept as pages come and go, is its namespaces' sum */
	for (ns = srv->namespaces; ns; ns = ns->next) {
		uint64_t of_client = 0;

		for (other = srv->namespaces; other; other = other->next)
			if (other->account == ns->account)
				of_client += other->pages.used;
		FUZZ_ASSERT(of_client == ns->account->pages);
	}
	/* and the buffers are the one connection's, and its client's once it has one */
	if (list_empty(&srv->conns)) {
		FUZZ_ASSERT(!srv->buffer_bytes);
	} else {
		const struct conn *conn = list_first_entry(&srv->conns, struct conn, link);

		FUZZ_ASSERT(srv->buffer_bytes == conn->buffer_bytes);
		FUZZ_ASSERT(!conn->ns || conn->ns->account->buffer_bytes == conn->buffer_bytes);
	}
}

static void tick(struct server *srv, int64_t *avail_pages, int8_t step, uint64_t ms,
		 bool unreadable)
{
	struct mem_sample mem = { .cgroup_headroom = MEM_UNKNOWN };

	srv->now_ms += ms;
	*avail_pages += step;
	if (*avail_pages < 0)
		*avail_pages = 0;
	mem.mem_available = mem.available = (uint64_t)*avail_pages * PROTO_PAGE_SIZE;
	server_release_memory(srv);
	if (unreadable)
		strcpy(mem.unknown_why, "fuzz: memory unreadable");
	server_tick(srv, &mem);
	/* fails closed: no room for new pages */
	FUZZ_ASSERT(!unreadable || server_free_pages(srv) == 0);
	check_counts(srv);
}

/*
 * The --metrics request parser on the stream: an answer once the headers
 * end, the same one whatever follows them, and none but 400 for a request
 * that outgrows its buffer.
 */
static void fuzz_metrics_request(const char *data, size_t size)
{
	size_t len = size < METRICS_REQUEST_MAX ? size : METRICS_REQUEST_MAX;
	enum metrics_request req = metrics_parse_request(data, len), prefix;

	FUZZ_ASSERT(req >= METRICS_INCOMPLETE && req <= METRICS_BAD);
	if (req == METRICS_INCOMPLETE)
		FUZZ_ASSERT(len < METRICS_REQUEST_MAX);
	if (len > 1) {
		prefix = metrics_parse_request(data, len - 1);
		FUZZ_ASSERT(prefix == METRICS_INCOMPLETE || prefix == req);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server_config cfg = {
		.max_pages = NO_MAX_PAGES,
		.reserve_bytes = FUZZ_RESERVE_PAGES * PROTO_PAGE_SIZE,
		.grace_ms = FUZZ_GRACE_MS,
		.max_connections = 1,
		.max_unauth_per_address = 1,
		.max_conns_per_client = 1,
		.max_namespaces_per_client = 1,
		.idle_timeout_ms = FUZZ_IDLE_TIMEOUT_MS,
		.message_timeout_ms = FUZZ_MESSAGE_TIMEOUT_MS,
		.buffer_budget = FUZZ_BUFFER_BUDGET,
		.make_nonce = zero_nonce,
	};
	const uint8_t *config = data;
	unsigned int read_size, tick_every, reads = 0;
	int64_t avail_pages;
	struct server srv;
	struct conn *conn;
	bool lazy;

	if (size < FUZZ_CONFIG_SIZE)
		return 0;
	log_setup(LOG_LEVEL_ERROR, false);
	data += FUZZ_CONFIG_SIZE;
	size -= FUZZ_CONFIG_SIZE;
	fuzz_metrics_request((const char *)data, size);
	fuzz_parser_alone(data, size, 0);
	fuzz_parser_alone(data, size, NSWAP2L_CAP_PUT_FREES);
	fuzz_parser_alone(data, size, NSWAP2L_CAP_MOVED);
	fuzz_parser_alone(data, size, NSWAP2L_CAP_PEER);
	fuzz_parser_alone(data, size, NSWAP2L_CAP_MOVED | NSWAP2L_CAP_COPY);
	fuzz_parser_alone(data, size, NSWAP2L_CAP_RELEASE);
	fuzz_peer_messages_alone(data, size);

	cfg.have_peer_key = true;
	cfg.peer_key.len = sizeof(fuzz_key);
	memcpy(cfg.peer_key.bytes, fuzz_key, sizeof(fuzz_key));
	if (config[FUZZ_FLAGS] & FUZZ_KEYED) {
		cfg.keys.shared = true;
		cfg.keys.shared_key.len = sizeof(fuzz_key);
		memcpy(cfg.keys.shared_key.bytes, fuzz_key, sizeof(fuzz_key));
	} else {
		cfg.insecure = true;
	}
	if (config[FUZZ_MAX])
		cfg.max_pages = 4u * config[FUZZ_MAX];
	lazy = config[FUZZ_FLAGS] & FUZZ_LAZY_READER;
	read_size = config[FUZZ_READ_SIZE] + 1u;
	tick_every = (config[FUZZ_TICK_EVERY] & 15) + 1u;
	avail_pages = config[FUZZ_AVAIL] | config[FUZZ_AVAIL + 1] << 8;

	server_init(&srv, &cfg, 1000);
	tick(&srv, &avail_pages, 0, 0, false);
	conn = conn_open(&srv, "fuzz", 0);
	FUZZ_ASSERT(conn);
	peer_session = false;
	peer_rx_seq = 0;
	while (size && conn->state != CONN_CLOSING) {
		size_t room, n;
		uint8_t *space = conn_read_space(conn, &room);

		if (!room) {
			/* held back by the output backlog: the peer reads now */
			FUZZ_ASSERT(conn->out.bytes && !conn_wants_input(conn));
			drain_output(conn);
			conn_process(conn);
			continue;
		}
		n = size < read_size ? size : read_size;
		if (n > room)
			n = room;
		memcpy(space, data, n);
		conn_received(conn, n);
		data += n;
		size -= n;
		if (!lazy)
			drain_output(conn);
		if (++reads % tick_every == 0)
			tick(&srv, &avail_pages, (int8_t)config[FUZZ_AVAIL_STEP],
			     100u * config[FUZZ_TICK_MS],
			     (config[FUZZ_FLAGS] & FUZZ_MEMORY_FLICKERS) && reads / tick_every % 2);
	}
	drain_output(conn);
	conn_close(conn);
	/* released: gone with its connection, no grace period */
	FUZZ_ASSERT(!srv.namespaces_released || !srv.namespaces);
	/* after the connection: grace expiry frees the namespace */
	srv.now_ms += FUZZ_GRACE_MS;
	tick(&srv, &avail_pages, 0, 0, false);
	FUZZ_ASSERT(!srv.namespaces && server_held_pages(&srv) == 0);
	server_destroy(&srv);
	return 0;
}
