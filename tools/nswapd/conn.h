/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One client connection as a state machine over bytes: input goes into
 * conn_read_space()/conn_received(), replies come out of conn->out.  No
 * socket in here, so that the fuzzer runs exactly what the event loop runs.
 */
#ifndef NSWAPD_CONN_H
#define NSWAPD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "list.h"
#include "outq.h"
#include "peer.h"
#include "proto.h"

/*
 * Past this much unsent output, or its share of the buffer budget (the
 * budget divided by the connections), stop taking requests until it drains.
 */
#define CONN_OUTPUT_HIGH (4u << 20)
/*
 * The input buffer before authentication: a HELLO or an AUTH message, so
 * that unauthenticated peers cost little.  Afterwards it grows, while the
 * buffer budget has room, to CONN_INPUT_BASE, and to the size of a larger
 * message while one comes; it shrinks back once that is handled.
 */
#define CONN_INPUT_HANDSHAKE 512
#define CONN_INPUT_BASE (16 * 1024)
/*
 * The least --buffer-budget, and the least part of it one client may
 * hold: the largest request and the largest reply at once, with their
 * chunks' bookkeeping, so that a connection on its own always goes on.
 */
#define CONN_BUDGET_MIN (2 * PROTO_MAX_MESSAGE + 64 * 1024)
/* How long a closing connection may take to send a RELEASE's reply. */
#define CONN_CLOSE_FLUSH_MS 5000

struct server;
struct namespace;

enum conn_state {
	CONN_WAIT_HELLO,
	CONN_WAIT_AUTH,
	CONN_READY,
	CONN_CLOSING,		/* send what is queued, then close */
};

struct conn {
	struct server *srv;
	struct list_head link;		/* in srv->conns */
	char peer[64];			/* for log lines */
	uint32_t addr;			/* IPv4, network order: per-address cap */
	uint64_t opened_ms;
	uint64_t last_input_ms;		/* for the idle timeout */
	uint64_t message_started_ms;	/* of the incomplete first message; 0: none */
	enum conn_state state;
	uint8_t *in;			/* received bytes, messages at in_start */
	size_t in_start, in_len, in_cap;
	size_t in_need;			/* size of the incomplete first message */
	bool in_verified;		/* the first message's MAC checked */
	struct outq out;
	size_t buffer_bytes;		/* input buffer and output chunks */
	bool waiting_for_room;		/* in the buffer budget, for input or a reply */
	/* closing: what is queued is sent until then (a RELEASE's OK); 0: not waited for */
	uint64_t flush_until_ms;
	uint64_t told_free_pages;	/* in the last message queued */
	uint64_t capabilities;		/* announced in HELLO */
	struct auth_handshake handshake;	/* from HELLO on */
	struct namespace *ns;		/* bound at AUTH */
	/* after the AUTH reply: every message carries a MAC (nswap2l_proto.h) */
	bool session;
	struct auth_session keys;
	uint64_t rx_seq, tx_seq;
	struct auth_message tx_mac;	/* of the message being queued */
	bool tx_mac_open;
	/* the eviction round this connection was asked to serve */
	uint32_t evict_first_tag;
	uint64_t evict_unanswered;	/* bit i: EVICT tagged first + i */
	uint64_t evict_keys;
	bool evict_pages_left;		/* a reply said NOSPC */
	/*
	 * Migration (peer.c), NSWAP2L_CAP_MOVED: the client's namespace on each
	 * --peer, asked once while the connection lives, and the ASK out now.
	 */
	struct conn_peer_namespace {
		uint8_t state;		/* PEER_NS_* of peer.h */
		uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	} peer_ns[MAX_PEERS];
	uint32_t ask_tag;
	int ask_peer;			/* -1: no ASK_NAMESPACE out */
	uint64_t ask_ms;
};

/* Returns NULL when out of memory. */
struct conn *conn_open(struct server *srv, const char *peer, uint32_t addr);
void conn_close(struct conn *conn);

/*
 * Where to put received bytes and how many fit; 0 when the connection
 * takes no input now (closing, out of memory, output backlog, or no room
 * in the buffer budget for the message that is coming).  Its input buffer
 * and output queue count in srv->buffer_bytes and, once authenticated, in
 * its client's account.
 */
uint8_t *conn_read_space(struct conn *conn, size_t *room);
/* n bytes were put at conn_read_space(): handle the complete messages. */
void conn_received(struct conn *conn, size_t n);
/*
 * Handles buffered messages held back by the output backlog or the buffer
 * budget, if they can go on now.
 */
void conn_process(struct conn *conn);
bool conn_wants_input(const struct conn *conn);
/* Closing, and its output still worth waiting for (CONN_CLOSE_FLUSH_MS). */
bool conn_flushing(const struct conn *conn);

/*
 * Server-initiated messages, queued only while the buffer budget has room
 * for them (the client learns free_pages from the next reply otherwise).
 */
void conn_send_capacity(struct conn *conn, uint64_t free_pages);
/* Asks for up to want pages back; returns the number of keys asked. */
uint64_t conn_ask_eviction(struct conn *conn, uint64_t want);

/* A peer server's session (NSWAP2L_CAP_PEER): PEER_PUT and PEER_FREE only. */
bool conn_is_peer(const struct conn *conn);
/* What its messages' free_pages say (server_client_free_pages(), or for a peer the server's room). */
uint64_t conn_free_pages(const struct conn *conn);
/* An authenticated client connection with NSWAP2L_CAP_MOVED in effect. */
bool conn_takes_moved(const struct conn *conn);
/*
 * Migration's messages to the owner (peer.c matches the replies by tag):
 * false when the buffer budget has no room for them now.
 */
bool conn_ask_namespace(struct conn *conn, uint32_t tag,
			const uint8_t server_id[NSWAP2L_PROTO_SERVER_ID_SIZE]);
bool conn_send_moved(struct conn *conn, uint32_t tag, const struct nswap2l_moved *where,
		     const uint8_t *keys, uint32_t count);
/*
 * The reply to the COPY tagged tag: OK with the count keys stored on the
 * peer, NOENT without any; false when the connection is closing (the
 * client will never learn of them).
 */
bool conn_send_copied(struct conn *conn, uint32_t tag, const uint8_t *keys, uint32_t count);

#endif
