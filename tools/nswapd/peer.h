/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Migration, the mover's side (nswap2l_proto.h, "Migration"): nswapd's
 * sessions with its --peer servers, and the moves of pages from its
 * namespaces to them when it must shrink.  A move takes up to
 * MOVE_MAX_KEYS pages of one namespace whose connection has
 * NSWAP2L_CAP_MOVED in effect: ASK_NAMESPACE (once per peer and
 * connection), PEER_PUT batches, MOVED, and on its reply the taken keys
 * are freed here and the others on the peer (PEER_FREE).  What cannot
 * move is left to the EVICT rounds of server.c.  A MOVED whose connection
 * closed unanswered is sent again when the owner is back; PEER_FREEs for a
 * peer that is down wait for it.  A client's COPY goes through the same
 * PEER_PUT batches, counted with the moves to that peer, and frees nothing.
 */
#ifndef NSWAPD_PEER_H
#define NSWAPD_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "proto.h"

struct server;
struct namespace;
struct conn;

/* --peer servers a server may hand pages to. */
#define MAX_PEERS 16
/* Pages of one move: PEER_PUT batches in flight at once, one MOVED. */
#define MOVE_MAX_KEYS 256
/* Pages in moves to one peer at once. */
#define PEER_MAX_IN_FLIGHT (2 * MOVE_MAX_KEYS)
/* Moves whose MOVED reply was lost, waiting for their owner to come back. */
#define MOVES_LOST_MAX 64
/* Keys to free on a peer that is down, kept until it is back. */
#define PEER_FREE_PENDING_MAX 8192
/* Reconnection back-off, and how long a peer's handshake may take. */
#define PEER_BACKOFF_MIN_MS 500
#define PEER_BACKOFF_MAX_MS 30000
#define PEER_HANDSHAKE_TIMEOUT_MS 10000
/* An owner that does not answer ASK_NAMESPACE in this long does not use that peer. */
#define PEER_ASK_TIMEOUT_MS 10000

/* What a connection knows of its client's namespace on a peer (conn->peer_ns). */
enum {
	PEER_NS_UNKNOWN,
	PEER_NS_ASKED,
	PEER_NS_KNOWN,
	PEER_NS_NONE,		/* NOENT: the client does not use that peer */
};

struct peer_addr {
	uint32_t addr;		/* IPv4, network order */
	uint16_t port;		/* host order */
};

struct peer_info {
	char desc[32];		/* ADDR:PORT */
	bool connected;
	uint64_t free_pages;
};

/* Starts connecting to the peers (none: migration off); -1 when out of resources. */
int migrate_init(struct server *srv, const struct peer_addr *addrs, unsigned int count);
void migrate_destroy(struct server *srv);
/* A descriptor the event loop polls for input; migrate_service() when it is ready. */
int migrate_fd(const struct server *srv);
void migrate_service(struct server *srv);
/* From server_tick(), before the EVICT rounds: connects, times out, starts moves. */
void migrate_tick(struct server *srv);
/* Whether ns's pages are moving, or could: EVICT rounds leave it alone then. */
bool migrate_takes(const struct server *srv, const struct namespace *ns);
/* Keys of ns were freed here: in a move, they are not MOVED and are freed on the peer. */
void migrate_keys_freed(struct server *srv, struct namespace *ns, const uint8_t *keys,
			uint32_t count);
void migrate_conn_closed(struct server *srv, struct conn *conn);
/* ns is freed (its grace period ended): a move waiting for its owner ends. */
void migrate_namespace_gone(struct server *srv, struct namespace *ns);
/* ns's pages were freed (RELEASE): its move goes on without it, and takes nothing. */
void migrate_namespace_released(struct server *srv, struct namespace *ns);
/* An ASK_NAMESPACE or MOVED reply; false when conn was asked no such thing. */
bool migrate_answered(struct server *srv, struct conn *conn, const struct proto_request *req);
/*
 * A COPY from conn (nswap2l_proto.h, "Copy"): the status to reply now
 * (NOENT, NOSPC) or, its PEER_PUTs sent, NSWAP2L_OK: then the reply comes
 * from here (conn_send_copied()) once they are answered, or the peer is
 * down, and conn learns which of its keys are its own on the peer.
 */
uint32_t migrate_copy(struct server *srv, struct conn *conn, const struct proto_request *req);
/* Up to max peers' states; returns how many peers there are. */
unsigned int migrate_peers(const struct server *srv, struct peer_info *info, unsigned int max);

#endif
