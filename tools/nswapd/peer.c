// SPDX-License-Identifier: GPL-2.0
/*
 * The peers are polled through an epoll descriptor of their own, which the
 * event loop (net.c) watches like a socket: non-blocking connects, sends of
 * what is queued, replies read as they come.  A peer's replies carry no
 * payload but the handshake's, so its input buffer is small and fixed;
 * its output (PEER_PUT batches) counts in the buffer budget.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_handshake.h"
#include "conn.h"
#include "log.h"
#include "peer.h"
#include "server.h"

/* The largest message a peer sends: a PEER_PUT reply naming every key, and its MAC. */
#define PEER_IN_SIZE (PROTO_HEADER_SIZE + NSWAP2L_PROTO_MAX_PAGES * PROTO_KEY_SIZE + \
		      PROTO_MSG_MAC_SIZE)
_Static_assert(PEER_IN_SIZE >= PROTO_HEADER_SIZE + PROTO_HELLO_REPLY_MOVED_SIZE,
	       "a peer's HELLO reply fits");
#define PEER_SEND_IOVECS 16

enum peer_state { PEER_DOWN, PEER_CONNECTING, PEER_HELLO, PEER_AUTH, PEER_READY };

struct migration;

/* Keys to free on a peer that was down: sent when it is back, if it was not restarted. */
struct pending_free {
	struct pending_free *next;
	uint8_t server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];	/* the peer that stored them */
	uint8_t ns[PROTO_PEER_NS_SIZE];
	uint32_t count;
	uint8_t keys[];
};

struct peer {
	struct migration *mig;
	unsigned int index;
	struct sockaddr_in addr;
	char desc[32];
	enum peer_state state;
	int fd;
	uint64_t state_ms, retry_ms, backoff_ms;
	bool refused;			/* a refusal said, once until it connects again */
	struct client_handshake ch;
	bool session;
	struct auth_session keys;
	uint64_t tx_seq, rx_seq;
	struct auth_message tx_mac;
	struct outq out;
	uint8_t in[PEER_IN_SIZE];
	size_t in_len;
	uint64_t free_pages;		/* from its last message */
	uint32_t next_tag;
	uint64_t in_flight;		/* pages of moves and copies in their PUT phase */
	struct pending_free *frees;	/* while it is down */
	uint32_t pending_keys;		/* in frees, at most PEER_FREE_PENDING_MAX */
};

/*
 * PEER_PUT batches of whole runs (one refused cannot split a run), up to
 * NSWAP2L_PROTO_MAX_PAGES keys: each but the last holds more than
 * NSWAP2L_PROTO_MAX_PAGES - STORE_RUN_KEYS.
 */
#define BATCH_LEAST (NSWAP2L_PROTO_MAX_PAGES - STORE_RUN_KEYS + 1)
#define MOVE_MAX_BATCHES ((MOVE_MAX_KEYS + BATCH_LEAST - 1) / BATCH_LEAST + 1)
_Static_assert(MOVE_MAX_BATCHES <= 32, "a move's batches are bits of unanswered");
_Static_assert(NSWAP2L_PROTO_MAX_COPY_KEYS <= MOVE_MAX_KEYS, "a COPY's keys fit in a move");

#define KEY_STORED 1u			/* PEER_PUT answered OK */
#define KEY_DROPPED 2u			/* freed here meanwhile */
#define KEY_IN_MOVED 4u
#define KEY_HELD_THERE 8u		/* the peer held it already: not ours there */

struct move {
	struct move *next;		/* in mig->moves */
	struct peer *peer;
	uint8_t peer_id[NSWAP2L_PROTO_SERVER_ID_SIZE];	/* the peer's server id when it started */
	struct conn *conn;		/* NULL once closed */
	/* NULL once its connection closed, unless it waits for the owner to come back */
	struct namespace *ns;
	char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
	uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];	/* its namespace on the peer */
	uint32_t count;
	uint64_t keys[MOVE_MAX_KEYS];
	uint8_t flags[MOVE_MAX_KEYS];
	uint32_t first_tag, batches, unanswered;	/* bit i: batch i's PEER_PUT */
	uint16_t batch_first[MOVE_MAX_BATCHES + 1];	/* its first key; then count */
	bool moved_out;
	bool lost;			/* its MOVED's connection closed unanswered: sent again */
	uint32_t moved_tag;
	/*
	 * A COPY's PEER_PUTs (nswap2l_proto.h, "Copy"), not a move: no ns,
	 * nothing MOVED nor freed here; conn is the client that asked, and
	 * copy_tag its COPY's tag.
	 */
	bool copy;
	uint32_t copy_tag;
};

struct migration {
	struct server *srv;
	int epfd;
	struct peer peers[MAX_PEERS];
	unsigned int count;
	struct move *moves;
	unsigned int lost_moves;	/* moves with lost set, at most MOVES_LOST_MAX */
	uint32_t next_tag;		/* of ASK_NAMESPACE and MOVED */
};

static void charge_peer_output(struct outq *q, ptrdiff_t bytes)
{
	struct peer *p = container_of(q, struct peer, out);
	struct server *srv = p->mig->srv;

	srv->buffer_bytes += (size_t)bytes;
	if (bytes < 0 && srv->room_waiters)
		srv->room_freed = true;
}

static void peer_watch(struct peer *p)
{
	struct epoll_event ev = { .data.ptr = p };

	if (p->fd < 0)
		return;
	ev.events = EPOLLIN | (p->state == PEER_CONNECTING || p->out.bytes ? EPOLLOUT : 0);
	if (epoll_ctl(p->mig->epfd, EPOLL_CTL_MOD, p->fd, &ev))
		log_error("peer %s: epoll_ctl: %s", p->desc, strerror(errno));
}

static void move_puts_done(struct migration *mig, struct move *m);

/* Down: moves waiting for its PEER_PUT replies go on with what it stored. */
static void peer_down(struct peer *p, const char *why)
{
	struct migration *mig = p->mig;
	struct move *m, *next;

	/* routine too: a peer session idle for --idle-timeout is closed there */
	if (p->state == PEER_READY)
		log_info("peer %s: %s; reconnecting", p->desc, why);
	else
		log_debug("peer %s: %s", p->desc, why);
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	outq_clear(&p->out);
	p->state = PEER_DOWN;
	p->session = false;
	p->free_pages = 0;
	p->in_len = 0;
	p->retry_ms = mig->srv->now_ms + p->backoff_ms;
	p->backoff_ms = p->backoff_ms * 2 > PEER_BACKOFF_MAX_MS ? PEER_BACKOFF_MAX_MS :
			p->backoff_ms * 2;
	for (m = mig->moves; m; m = next) {
		next = m->next;
		if (m->peer == p && m->unanswered) {
			m->unanswered = 0;
			move_puts_done(mig, m);
		}
	}
}

/* Sends what the socket takes; false when it failed. */
static bool peer_flush(struct peer *p)
{
	while (p->out.bytes && p->state != PEER_CONNECTING) {
		struct iovec iov[PEER_SEND_IOVECS];
		struct msghdr msg = { .msg_iov = iov };
		ssize_t n;

		msg.msg_iovlen = (size_t)outq_iov(&p->out, iov, PEER_SEND_IOVECS);
		n = sendmsg(p->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			outq_consume(&p->out, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		peer_down(p, n < 0 ? strerror(errno) : "connection closed");
		return false;
	}
	peer_watch(p);
	return true;
}

/* Part of the message being queued; in a session its MAC covers it. */
static bool peer_queue(struct peer *p, const void *data, size_t len)
{
	if (outq_append(&p->out, data, len))
		return false;
	if (p->session)
		auth_message_update(&p->tx_mac, data, len);
	return true;
}

static bool peer_begin(struct peer *p, uint16_t type, uint32_t tag, uint32_t count,
		       uint32_t length)
{
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = type, .tag = tag,
				    .count = count, .length = length };
	uint8_t encoded[PROTO_HEADER_SIZE];

	proto_encode_header(encoded, &hdr);
	outq_expect(&p->out, PROTO_HEADER_SIZE + length + PROTO_MSG_MAC_SIZE);
	auth_message_begin(&p->tx_mac, p->keys.c2s, p->tx_seq++);
	return peer_queue(p, encoded, sizeof(encoded));
}

static bool peer_end(struct peer *p)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	auth_message_end(&p->tx_mac, mac);
	return !outq_append(&p->out, mac, sizeof(mac));
}

/* The namespace a PEER_PUT or PEER_FREE names, as on the wire. */
static void peer_namespace(const struct move *m, uint8_t out[PROTO_PEER_NS_SIZE])
{
	memcpy(out, m->client, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	memcpy(out + NSWAP2L_PROTO_CLIENT_NAME_SIZE, m->client_id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
}

static bool send_peer_free(struct peer *p, const uint8_t *ns, const uint8_t *keys, uint32_t n)
{
	if (!peer_begin(p, NSWAP2L_MSG_PEER_FREE, p->next_tag++, n, PROTO_PEER_NS_SIZE +
			n * PROTO_KEY_SIZE) || !peer_queue(p, ns, PROTO_PEER_NS_SIZE) ||
	    !peer_queue(p, keys, n * PROTO_KEY_SIZE) || !peer_end(p)) {
		peer_down(p, "out of memory for PEER_FREE");
		return false;
	}
	return true;
}

/* Keeps keys to free on a peer that is down, within PEER_FREE_PENDING_MAX. */
static void keep_free(struct peer *p, const uint8_t *peer_id, const uint8_t *ns,
		      const uint8_t *keys, uint32_t n)
{
	struct pending_free *f = NULL;

	if (p->pending_keys + n <= PEER_FREE_PENDING_MAX)
		f = malloc(sizeof(*f) + (size_t)n * PROTO_KEY_SIZE);
	if (!f) {
		/* they stay there until the client's namespace there ends */
		log_warn("peer %s: down, %u moved pages left there unfreed (%u waiting already)",
			 p->desc, n, p->pending_keys);
		return;
	}
	memcpy(f->server_id, peer_id, sizeof(f->server_id));
	memcpy(f->ns, ns, sizeof(f->ns));
	f->count = n;
	memcpy(f->keys, keys, (size_t)n * PROTO_KEY_SIZE);
	f->next = p->frees;
	p->frees = f;
	p->pending_keys += n;
	log_debug("peer %s: down, %u moved pages freed there once it is back", p->desc, n);
}

/* The peer is back: the frees it missed, unless it restarted (its pages are gone). */
static void send_kept_frees(struct peer *p)
{
	struct pending_free *f;

	while ((f = p->frees)) {
		p->frees = f->next;
		p->pending_keys -= f->count;
		if (!memcmp(f->server_id, p->ch.server_id, sizeof(f->server_id)) &&
		    p->state == PEER_READY)
			send_peer_free(p, f->ns, f->keys, f->count);
		free(f);
	}
	if (p->state == PEER_READY)
		peer_flush(p);
}

static void drop_kept_frees(struct peer *p)
{
	struct pending_free *f;

	while ((f = p->frees)) {
		p->frees = f->next;
		free(f);
	}
	p->pending_keys = 0;
}

/*
 * PEER_FREE of the move's keys its PEER_PUTs stored on the peer (never one
 * held there already: another copy) and the owner did not take.
 */
static void peer_free_left(struct move *m, const bool *taken)
{
	uint8_t ns[PROTO_PEER_NS_SIZE], keys[MOVE_MAX_KEYS * PROTO_KEY_SIZE];
	struct peer *p = m->peer;
	uint32_t i, n = 0;

	for (i = 0; i < m->count; i++)
		if ((m->flags[i] & KEY_STORED) && !taken[i])
			proto_put_key(keys, n++, m->keys[i]);
	if (!n)
		return;
	peer_namespace(m, ns);
	if (p->state != PEER_READY) {
		keep_free(p, m->peer_id, ns, keys, n);
		return;
	}
	/* restarted since: the pages it stored are gone with it */
	if (memcmp(m->peer_id, p->ch.server_id, sizeof(m->peer_id)))
		return;
	if (send_peer_free(p, ns, keys, n))
		peer_flush(p);
}

static void move_end(struct migration *mig, struct move *m)
{
	struct move **link;

	for (link = &mig->moves; *link != m; link = &(*link)->next)
		;
	*link = m->next;
	if (!m->copy)
		mig->srv->migrate_pending -= m->count;
	if (m->lost)
		mig->lost_moves--;
	if (m->ns)
		m->ns->move = NULL;
	free(m);
}

static uint32_t next_client_tag(struct migration *mig)
{
	/* tag 0 is CAPACITY's */
	if (!++mig->next_tag)
		mig->next_tag = 1;
	return mig->next_tag;
}

/* Every PEER_PUT answered (or the peer went down): MOVED what it stored. */
/* The MOVED of m's keys marked KEY_IN_MOVED (n of them, in keys) to conn. */
static bool send_moved(struct migration *mig, struct move *m, struct conn *conn,
		       const uint8_t *keys, uint32_t n)
{
	struct nswap2l_moved where;

	memcpy(where.server_id, m->peer_id, sizeof(where.server_id));
	memcpy(where.client_id, m->client_id, sizeof(where.client_id));
	m->moved_tag = next_client_tag(mig);
	return conn_send_moved(conn, m->moved_tag, &where, keys, n);
}

/*
 * A copy's PEER_PUTs are answered: its client learns the keys stored on the
 * peer, which are its own there from then on.  A client gone (or going)
 * before that never learns of them: they are freed there.
 */
static void copy_done(struct migration *mig, struct move *m)
{
	uint8_t keys[MOVE_MAX_KEYS * PROTO_KEY_SIZE];
	bool taken[MOVE_MAX_KEYS] = { false };
	uint32_t i, n = 0;

	for (i = 0; i < m->count; i++)
		if (m->flags[i] & KEY_STORED)
			proto_put_key(keys, n++, m->keys[i]);
	if (m->conn && conn_send_copied(m->conn, m->copy_tag, keys, n)) {
		mig->srv->pages_copied_out += n;
		log_debug("client %s: %u of %u pages copied to peer %s", m->client, n, m->count,
			  m->peer->desc);
	} else if (n) {
		log_info("client %s: connection closed before its COPY reply; %u pages copied to "
			 "peer %s freed there", m->client, n, m->peer->desc);
		peer_free_left(m, taken);
	}
	move_end(mig, m);
}

static void move_puts_done(struct migration *mig, struct move *m)
{
	uint8_t keys[MOVE_MAX_KEYS * PROTO_KEY_SIZE];
	bool taken[MOVE_MAX_KEYS] = { false };
	uint32_t i, n = 0;

	m->peer->in_flight -= m->count;
	if (m->copy) {
		copy_done(mig, m);
		return;
	}
	for (i = 0; i < m->count; i++) {
		if ((m->flags[i] & (KEY_STORED | KEY_DROPPED)) != KEY_STORED)
			continue;
		m->flags[i] |= KEY_IN_MOVED;
		proto_put_key(keys, n++, m->keys[i]);
	}
	if (n && m->conn && send_moved(mig, m, m->conn, keys, n)) {
		m->moved_out = true;
		return;
	}
	/* the peer took none (its room, the client's quota there): EVICT meanwhile */
	if (!n && m->ns)
		m->ns->migrate_not_before_ms = mig->srv->now_ms + EVICT_BACKOFF_MS;
	peer_free_left(m, taken);
	move_end(mig, m);
}

static uint64_t consider(struct migration *mig, struct namespace *ns, uint64_t over);

static void moved_answered(struct migration *mig, struct move *m, const struct proto_request *req)
{
	struct server *srv = mig->srv;
	struct namespace *ns = m->ns;
	bool taken[MOVE_MAX_KEYS] = { false };
	uint8_t freed[MOVE_MAX_KEYS * PROTO_KEY_SIZE];
	uint32_t i, j, n = 0, were_asked;

	for (i = 0; i < m->count; i++) {
		if (!(m->flags[i] & KEY_IN_MOVED))
			continue;
		taken[i] = true;
		for (j = 0; j < req->hdr.count; j++)
			if (proto_key(req->keys, j) == m->keys[i])
				taken[i] = false;
		if (taken[i])
			proto_put_key(freed, n++, m->keys[i]);
		else
			srv->moves_refused++;
	}
	/*
	 * Keys the owner rewrote or freed meanwhile are refused as a matter of
	 * course; only an owner that took none sends the rest through EVICT.
	 */
	if (!n && req->hdr.count && m->ns)
		m->ns->migrate_not_before_ms = srv->now_ms + EVICT_BACKOFF_MS;
	if (n && m->ns) {
		size_t used_before = m->ns->pages.used;

		srv->pages_migrated_out += store_free(&srv->pool, &m->ns->pages, freed, n,
						      &were_asked);
		server_pages_changed(m->ns, used_before);
	}
	log_info("namespace of client %s: %u pages moved to peer %s, %u not taken", m->client, n,
		 m->peer->desc, req->hdr.count);
	peer_free_left(m, taken);
	move_end(mig, m);
	/* the next move now: one a tick held a leave to 256 pages per 250 ms */
	if (n && ns)
		consider(mig, ns, server_pages_over(srv));
}

static struct move *move_of_batch(struct migration *mig, const struct peer *p, uint32_t tag,
				  uint32_t *batch)
{
	struct move *m;

	for (m = mig->moves; m; m = m->next) {
		uint32_t index = tag - m->first_tag;

		if (m->peer == p && index < m->batches && (m->unanswered & (1u << index))) {
			*batch = index;
			return m;
		}
	}
	return NULL;
}

/* The index in m->keys[first, end) of key, or end. */
static uint32_t key_index(const struct move *m, uint32_t first, uint32_t end, uint64_t key)
{
	while (first < end && m->keys[first] != key)
		first++;
	return first;
}

/*
 * Its keys are stored there but those it names, held there already: they
 * stay out of the MOVED and are never freed there (not ours).
 */
static bool put_answered(struct peer *p, const struct proto_header *hdr, const uint8_t *held)
{
	uint32_t batch, i, first, end;
	struct move *m;

	m = move_of_batch(p->mig, p, hdr->tag, &batch);
	if (!m)
		return true;
	first = m->batch_first[batch];
	end = m->batch_first[batch + 1];
	if (hdr->status != NSWAP2L_OK) {
		log_info("peer %s: PEER_PUT refused (%s)", p->desc, proto_status_name(hdr->status));
	} else {
		for (i = 0; i < hdr->count; i++)
			if (key_index(m, first, end, proto_key(held, i)) == end) {
				peer_down(p, "PEER_PUT reply names a key not sent");
				return false;
			}
		for (i = first; i < end; i++)
			m->flags[i] |= KEY_STORED;
		for (i = 0; i < hdr->count; i++) {
			uint32_t k = key_index(m, first, end, proto_key(held, i));

			m->flags[k] = (m->flags[k] & ~KEY_STORED) | KEY_HELD_THERE;
		}
		if (hdr->count)
			log_info("peer %s: %u keys of client %s held there already, not %s",
				 p->desc, hdr->count, m->client, m->copy ? "copied" : "moved");
	}
	m->unanswered &= ~(1u << batch);
	if (!m->unanswered)
		move_puts_done(p->mig, m);
	return true;
}

/* The peer's answer to our HELLO: AUTH with our proof of the peer key. */
static void hello_answered(struct peer *p, const uint8_t *msg, const struct proto_header *hdr)
{
	const struct server_config *cfg = &p->mig->srv->cfg;
	uint8_t auth[CLIENT_AUTH_SIZE];
	const char *why;

	if (hdr->type != (NSWAP2L_MSG_HELLO | NSWAP2L_MSG_REPLY) || hdr->status != NSWAP2L_OK) {
		peer_down(p, "HELLO refused");
		return;
	}
	why = client_handshake_reply(&p->ch, &cfg->peer_key, msg, msg + PROTO_HEADER_SIZE,
				     hdr->length, auth);
	if (!why && !(p->ch.server_caps & NSWAP2L_CAP_PEER))
		why = "it does not take peers (an older nswapd?)";
	else if (!why && !p->ch.have_server_id)
		why = "no server id in its HELLO reply";
	else if (!why && !memcmp(p->ch.server_id, cfg->server_id, sizeof(cfg->server_id)))
		why = "it is this server";
	if (why) {
		if (!p->refused)
			log_warn("peer %s: %s", p->desc, why);
		p->refused = true;
		peer_down(p, why);
		return;
	}
	if (!peer_queue(p, auth, sizeof(auth))) {
		peer_down(p, "out of memory");
		return;
	}
	p->state = PEER_AUTH;
	peer_flush(p);
}

static void auth_answered(struct peer *p, const uint8_t *msg, const struct proto_header *hdr)
{
	const struct server_config *cfg = &p->mig->srv->cfg;

	if (hdr->type != (NSWAP2L_MSG_AUTH | NSWAP2L_MSG_REPLY) || hdr->status != NSWAP2L_OK ||
	    !client_handshake_done(&p->ch, &cfg->peer_key, msg, msg + PROTO_HEADER_SIZE,
				   hdr->length, &p->keys)) {
		if (!p->refused)
			log_warn("peer %s: refused our peer key (%s)", p->desc,
				 hdr->status ? proto_status_name(hdr->status) : "its proof is wrong");
		p->refused = true;
		peer_down(p, "authentication failed");
		return;
	}
	p->session = true;
	p->state = PEER_READY;
	p->refused = false;
	p->backoff_ms = PEER_BACKOFF_MIN_MS;
	p->free_pages = hdr->free_pages;
	log_info("peer %s: connected, it can take %llu pages", p->desc,
		 (unsigned long long)p->free_pages);
	send_kept_frees(p);
}

/* One whole message; false when the peer went down over it. */
static bool peer_message(struct peer *p, const uint8_t *msg, size_t size)
{
	struct proto_header hdr;

	proto_decode_header(msg, &hdr);
	if (p->session) {
		uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

		auth_message_mac(p->keys.s2c, p->rx_seq++, msg, size, mac);
		if (!auth_message_mac_equal(mac, msg + size)) {
			peer_down(p, "message MAC wrong");
			return false;
		}
	}
	switch (p->state) {
	case PEER_HELLO:
		hello_answered(p, msg, &hdr);
		break;
	case PEER_AUTH:
		auth_answered(p, msg, &hdr);
		break;
	default:
		if (proto_check_peer_message(&hdr, msg + PROTO_HEADER_SIZE)) {
			peer_down(p, proto_check_peer_message(&hdr, msg + PROTO_HEADER_SIZE));
			return false;
		}
		p->free_pages = hdr.free_pages;
		if (hdr.type == (NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY))
			return put_answered(p, &hdr, msg + PROTO_HEADER_SIZE);
		break;
	}
	return p->state != PEER_DOWN;
}

static void peer_receive(struct peer *p)
{
	for (;;) {
		ssize_t n = recv(p->fd, p->in + p->in_len, sizeof(p->in) - p->in_len, MSG_DONTWAIT);
		size_t start = 0;

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			peer_down(p, n < 0 ? strerror(errno) : "connection closed");
			return;
		}
		p->in_len += (size_t)n;
		for (;;) {
			size_t avail = p->in_len - start, size, whole;
			struct proto_header hdr;

			if (avail < PROTO_HEADER_SIZE)
				break;
			proto_decode_header(p->in + start, &hdr);
			size = PROTO_HEADER_SIZE + (size_t)hdr.length;
			whole = size + (p->session ? PROTO_MSG_MAC_SIZE : 0);
			if (hdr.magic != NSWAP2L_PROTO_MAGIC || whole > sizeof(p->in)) {
				peer_down(p, "malformed message");
				return;
			}
			if (avail < whole)
				break;
			if (!peer_message(p, p->in + start, size))
				return;
			start += whole;
		}
		memmove(p->in, p->in + start, p->in_len - start);
		p->in_len -= start;
	}
}

static void peer_connected(struct peer *p)
{
	const struct server_config *cfg = &p->mig->srv->cfg;
	struct nswap2l_hello hello = {
		.version_min = NSWAP2L_PROTO_VERSION,
		.version_max = NSWAP2L_PROTO_VERSION,
		.capabilities = NSWAP2L_CAP_PEER | NSWAP2L_CAP_MOVED,
		.client_name = NSWAP2L_PEER_CLIENT_NAME,
	};
	int error = 0;
	socklen_t len = sizeof(error);

	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &error, &len) || error) {
		peer_down(p, strerror(error ? error : errno));
		return;
	}
	memcpy(hello.client_id, cfg->server_id, sizeof(hello.client_id));
	cfg->make_nonce(hello.client_nonce);
	client_handshake_hello(&p->ch, &hello);
	p->state = PEER_HELLO;
	p->tx_seq = p->rx_seq = 0;
	if (!peer_queue(p, p->ch.hello_msg, sizeof(p->ch.hello_msg))) {
		peer_down(p, "out of memory");
		return;
	}
	peer_flush(p);
}

static void peer_connect(struct peer *p)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = p };
	int one = 1;

	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	p->state = PEER_CONNECTING;
	p->state_ms = p->mig->srv->now_ms;
	if (p->fd < 0) {
		peer_down(p, strerror(errno));
		return;
	}
	setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((connect(p->fd, (struct sockaddr *)&p->addr, sizeof(p->addr)) && errno != EINPROGRESS) ||
	    epoll_ctl(p->mig->epfd, EPOLL_CTL_ADD, p->fd, &ev))
		peer_down(p, strerror(errno));
}

int migrate_init(struct server *srv, const struct peer_addr *addrs, unsigned int count)
{
	struct migration *mig;
	unsigned int i;

	if (!count)
		return 0;
	mig = calloc(1, sizeof(*mig));
	if (!mig)
		return -1;
	mig->srv = srv;
	mig->count = count;
	mig->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (mig->epfd < 0) {
		free(mig);
		return -1;
	}
	for (i = 0; i < count; i++) {
		struct peer *p = &mig->peers[i];

		p->mig = mig;
		p->index = i;
		p->fd = -1;
		p->addr.sin_family = AF_INET;
		p->addr.sin_addr.s_addr = addrs[i].addr;
		p->addr.sin_port = htons(addrs[i].port);
		snprintf(p->desc, sizeof(p->desc), "%s:%u", inet_ntoa(p->addr.sin_addr),
			 addrs[i].port);
		p->out.charge = charge_peer_output;
		p->backoff_ms = PEER_BACKOFF_MIN_MS;
		p->retry_ms = srv->now_ms;
	}
	srv->mig = mig;
	return 0;
}

void migrate_destroy(struct server *srv)
{
	struct migration *mig = srv->mig;
	unsigned int i;

	if (!mig)
		return;
	while (mig->moves)
		move_end(mig, mig->moves);
	for (i = 0; i < mig->count; i++) {
		if (mig->peers[i].fd >= 0)
			close(mig->peers[i].fd);
		outq_clear(&mig->peers[i].out);
		drop_kept_frees(&mig->peers[i]);
	}
	close(mig->epfd);
	free(mig);
	srv->mig = NULL;
}

int migrate_fd(const struct server *srv)
{
	return srv->mig ? srv->mig->epfd : -1;
}

void migrate_service(struct server *srv)
{
	struct epoll_event events[MAX_PEERS];
	int n, i;

	if (!srv->mig)
		return;
	n = epoll_wait(srv->mig->epfd, events, MAX_PEERS, 0);
	for (i = 0; i < n; i++) {
		struct peer *p = events[i].data.ptr;

		if (p->state == PEER_DOWN)
			continue;
		if (p->state == PEER_CONNECTING) {
			if (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
				peer_connected(p);
			continue;
		}
		if ((events[i].events & EPOLLOUT) && !peer_flush(p))
			continue;
		if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
			peer_receive(p);
	}
}

/* The connection of ns that takes MOVED, or NULL. */
static struct conn *moved_connection(const struct server *srv, const struct namespace *ns)
{
	struct conn *conn;

	if (!ns->connections)
		return NULL;
	list_for_each_entry(conn, &srv->conns, link)
		if (conn->ns == ns && conn_takes_moved(conn))
			return conn;
	return NULL;
}

/* The peer with the most room that conn's client may use (or must be asked about). */
static struct peer *choose_peer(struct migration *mig, const struct conn *conn)
{
	struct peer *best = NULL;
	unsigned int i;

	for (i = 0; i < mig->count; i++) {
		struct peer *p = &mig->peers[i];

		if (p->state != PEER_READY || !p->free_pages || p->in_flight >= PEER_MAX_IN_FLIGHT ||
		    conn->peer_ns[i].state == PEER_NS_NONE)
			continue;
		if (!best || p->free_pages > best->free_pages)
			best = p;
	}
	return best;
}

bool migrate_takes(const struct server *srv, const struct namespace *ns)
{
	const struct conn *conn;

	if (!srv->mig)
		return false;
	if (ns->move)
		return true;
	if (srv->now_ms < ns->migrate_not_before_ms)
		return false;
	conn = moved_connection(srv, ns);
	return conn && (conn->ask_peer >= 0 || choose_peer(srv->mig, conn));
}

static void ask(struct migration *mig, struct conn *conn, struct peer *p)
{
	uint32_t tag = next_client_tag(mig);

	if (!conn_ask_namespace(conn, tag, p->ch.server_id))
		return;
	conn->ask_tag = tag;
	conn->ask_peer = (int)p->index;
	conn->ask_ms = mig->srv->now_ms;
	conn->peer_ns[p->index].state = PEER_NS_ASKED;
}

/* The PEER_PUT messages of pages pages, as queued. */
static size_t move_bytes(uint32_t pages)
{
	uint32_t batches = (pages + BATCH_LEAST - 1) / BATCH_LEAST + 1;

	return (size_t)pages * (PROTO_KEY_SIZE + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE) +
	       (size_t)batches * (PROTO_HEADER_SIZE + PROTO_PEER_NS_SIZE + PROTO_MSG_MAC_SIZE +
				  OUTQ_MIN_CHUNK);
}

/* Splits m's keys (whole runs, next to each other) into batches of whole runs. */
static void split_batches(struct move *m)
{
	uint32_t first = 0, end, next;

	m->batches = 0;
	while (first < m->count) {
		for (end = first; end < m->count; end = next) {
			for (next = end + 1; next < m->count &&
			     store_run(m->keys[next]) == store_run(m->keys[end]); next++)
				;
			if (next - first > NSWAP2L_PROTO_MAX_PAGES)
				break;
		}
		m->batch_first[m->batches++] = (uint16_t)first;
		first = end;
	}
	m->batch_first[m->batches] = (uint16_t)m->count;
}

/*
 * Sends m's keys (held in table, whole runs next to each other) to its peer
 * in PEER_PUT batches, as stored, m in flight from now on; false when the
 * peer went down over it (which ended m with what it stored).
 */
static bool send_batches(struct migration *mig, struct move *m, const struct page_table *table)
{
	const uint8_t *seals[NSWAP2L_PROTO_MAX_PAGES], *pages[NSWAP2L_PROTO_MAX_PAGES];
	uint8_t keys[NSWAP2L_PROTO_MAX_PAGES * PROTO_KEY_SIZE], where[PROTO_PEER_NS_SIZE];
	struct peer *p = m->peer;
	uint32_t b, i;

	memcpy(m->peer_id, p->ch.server_id, sizeof(m->peer_id));
	peer_namespace(m, where);
	split_batches(m);
	m->first_tag = p->next_tag;
	m->next = mig->moves;
	mig->moves = m;
	p->in_flight += m->count;
	for (b = 0; b < m->batches; b++) {
		uint32_t first = m->batch_first[b], n = m->batch_first[b + 1] - first;
		bool ok;

		for (i = 0; i < n; i++)
			proto_put_key(keys, i, m->keys[first + i]);
		store_get(&mig->srv->pool, table, keys, n, seals, pages);
		/* as stored: the peer keeps each seal with its page under the same key */
		ok = peer_begin(p, NSWAP2L_MSG_PEER_PUT, p->next_tag++, n, PROTO_PEER_NS_SIZE +
				n * (PROTO_KEY_SIZE + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE)) &&
		     peer_queue(p, where, sizeof(where)) && peer_queue(p, keys, n * PROTO_KEY_SIZE);
		for (i = 0; ok && i < n; i++)
			ok = peer_queue(p, seals[i], PROTO_SEAL_SIZE);
		for (i = 0; ok && i < n; i++)
			ok = peer_queue(p, pages[i], PROTO_PAGE_SIZE);
		/* one that failed too: the peer's going down ends m with what it stored */
		m->unanswered |= 1u << b;
		if (!ok || !peer_end(p)) {
			peer_down(p, "out of memory for PEER_PUT");
			return false;
		}
	}
	return peer_flush(p);
}

/* PEER_PUT batches of up to want of ns's pages; returns the pages sent. */
static uint32_t start_move(struct migration *mig, struct namespace *ns, struct conn *conn,
			   struct peer *p, uint64_t want)
{
	struct server *srv = mig->srv;
	uint32_t most = MOVE_MAX_KEYS;
	struct move *m;

	if (p->free_pages < most)
		most = (uint32_t)p->free_pages;
	/* its PEER_PUTs count in the buffer budget, like the replies to clients */
	while (srv->buffer_bytes + move_bytes(most) > srv->cfg.buffer_budget) {
		if (most <= NSWAP2L_PROTO_MAX_PAGES)
			return 0;
		most -= NSWAP2L_PROTO_MAX_PAGES;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return 0;
	/* parity takes a page only with its whole run: one move has all of it */
	m->count = store_pick_runs(&srv->pool, &ns->pages, m->keys,
				   want < most ? (uint32_t)want : most, most);
	if (!m->count) {
		free(m);
		return 0;
	}
	m->peer = p;
	m->conn = conn;
	m->ns = ns;
	memcpy(m->client, ns->account->client, sizeof(m->client));
	memcpy(m->client_id, conn->peer_ns[p->index].client_id, sizeof(m->client_id));
	srv->migrate_pending += m->count;
	ns->move = m;
	if (!send_batches(mig, m, &ns->pages))
		return 0;
	log_info("namespace %s of client %s: moving %u pages to peer %s", ns->id_hex, m->client,
		 m->count, p->desc);
	return m->count;
}

static int compare_keys(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The peer with that server id, if it is ready now. */
static struct peer *ready_peer(struct migration *mig, const uint8_t *server_id)
{
	unsigned int i;

	for (i = 0; i < mig->count; i++)
		if (mig->peers[i].state == PEER_READY &&
		    !memcmp(mig->peers[i].ch.server_id, server_id, NSWAP2L_PROTO_SERVER_ID_SIZE))
			return &mig->peers[i];
	return NULL;
}

uint32_t migrate_copy(struct server *srv, struct conn *conn, const struct proto_request *req)
{
	struct migration *mig = srv->mig;
	struct namespace *ns = conn->ns;
	struct peer *p = mig ? ready_peer(mig, req->copy_to.server_id) : NULL;
	uint64_t keys[NSWAP2L_PROTO_MAX_COPY_KEYS];
	uint32_t i, n = 0;
	struct move *m;

	if (!p)
		return NSWAP2L_ERR_NOENT;
	for (i = 0; i < req->hdr.count; i++)
		keys[i] = proto_key(req->keys, i);
	/* in key order, each once: a run's keys next to each other, as split_batches() wants */
	qsort(keys, req->hdr.count, sizeof(keys[0]), compare_keys);
	for (i = 0; i < req->hdr.count; i++)
		if ((!n || keys[i] != keys[n - 1]) && store_holds(&srv->pool, &ns->pages, keys[i]))
			keys[n++] = keys[i];
	if (!n)
		return NSWAP2L_ERR_NOENT;
	/* the client copies them itself, through its own buffers */
	if (p->in_flight + n > PEER_MAX_IN_FLIGHT ||
	    srv->buffer_bytes + move_bytes(n) > srv->cfg.buffer_budget)
		return NSWAP2L_ERR_NOSPC;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NSWAP2L_ERR_NOSPC;
	m->copy = true;
	m->copy_tag = req->hdr.tag;
	m->peer = p;
	m->conn = conn;
	memcpy(m->client, ns->account->client, sizeof(m->client));
	memcpy(m->client_id, req->copy_to.client_id, sizeof(m->client_id));
	m->count = n;
	memcpy(m->keys, keys, n * sizeof(keys[0]));
	if (send_batches(mig, m, &ns->pages))
		log_debug("namespace %s of client %s: copying %u pages to peer %s", ns->id_hex,
			  m->client, n, p->desc);
	return NSWAP2L_OK;
}

static void connect_peers(struct migration *mig)
{
	uint64_t now = mig->srv->now_ms;
	unsigned int i;

	for (i = 0; i < mig->count; i++) {
		struct peer *p = &mig->peers[i];

		if (p->state == PEER_DOWN && now >= p->retry_ms)
			peer_connect(p);
		else if (p->state != PEER_DOWN && p->state != PEER_READY &&
			 now - p->state_ms >= PEER_HANDSHAKE_TIMEOUT_MS)
			peer_down(p, "no answer to the handshake");
	}
}

/* Owners that do not answer ASK_NAMESPACE do not use that peer, as far as we know. */
static void expire_asks(struct server *srv)
{
	struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link) {
		if (conn->ask_peer < 0 || srv->now_ms - conn->ask_ms < PEER_ASK_TIMEOUT_MS)
			continue;
		log_warn_peer("peer %s: no answer to ASK_NAMESPACE in %d s", conn->peer,
			      PEER_ASK_TIMEOUT_MS / 1000);
		conn->peer_ns[conn->ask_peer].state = PEER_NS_NONE;
		conn->ask_peer = -1;
	}
}

/* What the server holds over its limit and is not on its way out yet. */
/* Asks ns's owner about a peer, or moves up to over of its pages; returns the pages moving. */
static uint64_t consider(struct migration *mig, struct namespace *ns, uint64_t over)
{
	struct server *srv = mig->srv;
	struct conn *conn;
	struct peer *p;

	if (ns->move || ns->evict_conn || !ns->pages.used || srv->now_ms < ns->migrate_not_before_ms)
		return 0;
	conn = moved_connection(srv, ns);
	if (!conn || conn->ask_peer >= 0)
		return 0;
	p = choose_peer(mig, conn);
	if (!p)
		return 0;
	if (conn->peer_ns[p->index].state == PEER_NS_UNKNOWN)
		ask(mig, conn, p);
	else if (conn->peer_ns[p->index].state == PEER_NS_KNOWN)
		return start_move(mig, ns, conn, p, over);
	return 0;
}

/* The owner of a lost MOVED is back: the same keys again, but those it freed meanwhile. */
static void resend_lost(struct migration *mig)
{
	uint8_t keys[MOVE_MAX_KEYS * PROTO_KEY_SIZE];
	bool taken[MOVE_MAX_KEYS] = { false };
	struct move *m, *next;
	struct conn *conn;
	uint32_t i, n;

	for (m = mig->moves; m && mig->lost_moves; m = next) {
		next = m->next;
		conn = m->lost ? moved_connection(mig->srv, m->ns) : NULL;
		if (!conn)
			continue;
		for (i = 0, n = 0; i < m->count; i++) {
			/* freed here: not taken, so ours on the peer */
			if (m->flags[i] & KEY_DROPPED)
				m->flags[i] &= ~KEY_IN_MOVED;
			if (m->flags[i] & KEY_IN_MOVED)
				proto_put_key(keys, n++, m->keys[i]);
		}
		/* the rest at the next tick: a PEER_FREE that fails ends other moves */
		if (!n) {
			peer_free_left(m, taken);
			move_end(mig, m);
			break;
		}
		/* no room in the buffer budget now: at the next tick */
		if (!send_moved(mig, m, conn, keys, n))
			continue;
		m->conn = conn;
		m->moved_out = true;
		m->lost = false;
		mig->lost_moves--;
		log_info("namespace %s of client %s: MOVED of %u pages sent again", m->ns->id_hex,
			 m->client, n);
	}
}

void migrate_tick(struct server *srv)
{
	struct migration *mig = srv->mig;
	struct namespace *ns;
	uint64_t over;

	if (!mig)
		return;
	connect_peers(mig);
	expire_asks(srv);
	resend_lost(mig);
	over = server_pages_over(srv);
	for (ns = srv->namespaces; ns && over; ns = ns->next)
		over -= consider(mig, ns, over);
}

void migrate_keys_freed(struct server *srv, struct namespace *ns, const uint8_t *keys,
			uint32_t count)
{
	struct move *m = ns->move;
	uint32_t i, j;

	if (!srv->mig || !m)
		return;
	for (j = 0; j < count; j++) {
		uint64_t key = proto_key(keys, j);

		for (i = 0; i < m->count; i++)
			if (m->keys[i] == key)
				m->flags[i] |= KEY_DROPPED;
	}
}

void migrate_conn_closed(struct server *srv, struct conn *conn)
{
	struct migration *mig = srv->mig;
	struct move *m, *next;

	if (!mig)
		return;
	for (m = mig->moves; m; m = next) {
		next = m->next;
		if (m->conn != conn)
			continue;
		m->conn = NULL;
		/* its keys stored on the peer are freed there once its PEER_PUTs are answered */
		if (m->copy)
			continue;
		/*
		 * A MOVED not answered: the owner may have taken its keys or not.
		 * It is sent again when the owner is back (migrate_tick()), which
		 * answers the keys it took as taken; meanwhile both copies stay.
		 */
		if (m->moved_out && m->ns && mig->lost_moves < MOVES_LOST_MAX) {
			m->moved_out = false;
			m->lost = true;
			mig->lost_moves++;
			log_info("namespace %s of client %s: connection closed before its MOVED "
				 "reply; sent again when it is back", m->ns->id_hex, m->client);
			continue;
		}
		/* its namespace may go before the PEER_PUT replies come */
		if (m->ns)
			m->ns->move = NULL;
		m->ns = NULL;
		if (m->moved_out) {
			log_warn("namespace of client %s: connection closed before its MOVED reply; "
				 "%u pages kept both here and on peer %s", m->client, m->count,
				 m->peer->desc);
			move_end(mig, m);
		}
	}
}

void migrate_namespace_gone(struct server *srv, struct namespace *ns)
{
	struct move *m = ns->move;

	if (!srv->mig || !m)
		return;
	/*
	 * Its owner did not come back in the grace period: which copies it took
	 * is unknown, so those on the peer stay (freeing one the owner took
	 * would lose it), until its namespace there ends.
	 */
	log_warn("namespace %s of client %s: gone before its MOVED was answered; %u pages "
		 "left on peer %s", ns->id_hex, m->client, m->count, m->peer->desc);
	move_end(srv->mig, m);
}

void migrate_namespace_released(struct server *srv, struct namespace *ns)
{
	struct move *m = ns->move;
	uint32_t i;

	if (!srv->mig || !m)
		return;
	/* a MOVED waiting for its owner to come back: it will not */
	if (m->lost) {
		migrate_namespace_gone(srv, ns);
		return;
	}
	/*
	 * Its pages here are freed, as by a FREE: none is MOVED once the
	 * PEER_PUTs are answered, and those stored on the peer are freed there
	 * (or, MOVED already, those the owner does not take).
	 */
	for (i = 0; i < m->count; i++)
		m->flags[i] |= KEY_DROPPED;
	m->ns = NULL;
	ns->move = NULL;
}

bool migrate_answered(struct server *srv, struct conn *conn, const struct proto_request *req)
{
	struct migration *mig = srv->mig;
	struct move *m;

	if (!mig || !req->hdr.tag)
		return false;
	if (req->hdr.type == (NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY)) {
		struct conn_peer_namespace *pn;

		if (req->hdr.tag != conn->ask_tag)
			return false;
		conn->ask_tag = 0;
		/* answered after its time: ignored */
		if (conn->ask_peer < 0)
			return true;
		pn = &conn->peer_ns[conn->ask_peer];
		conn->ask_peer = -1;
		pn->state = req->hdr.status == NSWAP2L_OK ? PEER_NS_KNOWN : PEER_NS_NONE;
		if (pn->state == PEER_NS_KNOWN)
			memcpy(pn->client_id, req->payload, sizeof(pn->client_id));
		/* at once, not at the next tick: the server is short of memory */
		if (server_pages_over(srv))
			consider(mig, conn->ns, server_pages_over(srv));
		return true;
	}
	for (m = mig->moves; m; m = m->next)
		if (m->conn == conn && m->moved_out && m->moved_tag == req->hdr.tag) {
			moved_answered(mig, m, req);
			return true;
		}
	return false;
}

unsigned int migrate_peers(const struct server *srv, struct peer_info *info, unsigned int max)
{
	const struct migration *mig = srv->mig;
	unsigned int i;

	if (!mig)
		return 0;
	for (i = 0; i < mig->count && i < max; i++) {
		snprintf(info[i].desc, sizeof(info[i].desc), "%s", mig->peers[i].desc);
		info[i].connected = mig->peers[i].state == PEER_READY;
		info[i].free_pages = info[i].connected ? mig->peers[i].free_pages : 0;
	}
	return mig->count;
}
