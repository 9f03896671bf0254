/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory server without its sockets: configuration, namespaces and
 * their pages, the adaptive limit, eviction and capacity announcements.
 * The event loop (net.c) and the fuzzer both drive it through conn.h and
 * server_tick().
 */
#ifndef NSWAPD_SERVER_H
#define NSWAPD_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "hashtab.h"
#include "list.h"
#include "memwatch.h"
#include "store.h"

#define NO_MAX_PAGES UINT64_MAX
/* After a round the client answered OK, and when it had to leave pages. */
#define EVICT_RETRY_MS 1000
#define EVICT_BACKOFF_MS 5000
/* A connection must have authenticated this long after it opened. */
#define HANDSHAKE_TIMEOUT_MS 10000
/* Refused and replaced connections, failing accepts: logged at most this often. */
#define LIMITS_LOG_INTERVAL_MS 10000
/* EVICT messages in one round (each up to NSWAP2L_PROTO_MAX_KEYS keys). */
#define EVICT_ROUND_MESSAGES 64
/* While memory cannot be read, it is said this often. */
#define MEMORY_UNKNOWN_WARN_MS 60000
/*
 * The default --leave-timeout: LEAVE_BASE_MS, plus the pages held at the
 * start at LEAVE_PAGES_PER_S (8 MB/s, a tenth of what one kernel client
 * moves over 1 GbE: README.md, "Leaving").
 */
#define LEAVE_TIMEOUT_AUTO UINT64_MAX
#define LEAVE_BASE_MS 30000
#define LEAVE_PAGES_PER_S 2000

struct conn;

struct server_config {
	uint64_t max_pages;		/* --max, or NO_MAX_PAGES */
	/*
	 * --max-file: its absolute path (NULL: none), and the SIZE it held when
	 * last read well (NO_MAX_PAGES: "none"); SIGHUP reads it again
	 */
	const char *max_file;
	uint64_t max_file_pages;
	uint64_t reserve_bytes;		/* memory always left to the machine */
	uint64_t grace_ms;		/* a namespace outlives its last connection */
	struct auth_keyring keys;	/* owned by the server once initialised */
	const char *clients_dir;	/* --clients: where SIGHUP reloads keys from */
	bool insecure;			/* no key: accept any client MAC (testing) */
	bool lock_pages;
	struct siphash_key hash_key;	/* of the page tables; random but in tests */
	unsigned int max_connections;
	unsigned int max_unauth_per_address;	/* connections not yet authenticated */
	unsigned int max_conns_per_client;	/* authenticated connections of one client name */
	unsigned int max_namespaces_per_client;	/* namespaces of one client name */
	uint64_t idle_timeout_ms;	/* authenticated and silent; 0: never */
	uint64_t message_timeout_ms;	/* a message started and not finished */
	size_t buffer_budget;		/* input buffers and unsent output, all connections */
	/* --quota NAME=SIZE: pages a client may hold in all its namespaces */
	struct client_quota *quotas;
	size_t nr_quotas;
	bool have_default_quota;	/* --default-quota: for clients without their own */
	uint64_t default_quota_pages;
	uint64_t leave_timeout_ms;	/* --leave-timeout, or LEAVE_TIMEOUT_AUTO */
	void (*make_nonce)(uint8_t nonce[NSWAP2L_PROTO_NONCE_SIZE]);
	/* migration: this server's id, and the key peers prove (--peer-key) */
	uint8_t server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];
	bool have_peer_key;
	struct auth_key peer_key;
};

struct client_quota {
	char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE];	/* NUL-padded */
	uint64_t pages;
};

struct namespace_stats {
	uint64_t bytes_in, bytes_out;
	uint64_t requests;
	uint64_t errors;		/* refused requests and protocol errors */
	uint64_t evict_asked;		/* keys named in EVICT messages */
	uint64_t evict_returned;	/* of those, freed by the client */
};

/*
 * A client name with namespaces here: what they and its connections hold
 * together, kept as it changes, so that a reply's free_pages and the
 * per-client limits cost nothing however many namespaces the server holds.
 */
struct client_account {
	struct hash_node node;		/* in srv->account_index, by client */
	char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
	uint64_t quota_pages;		/* NO_MAX_PAGES: none */
	uint64_t pages;			/* held in all its namespaces */
	unsigned int namespaces;
	unsigned int connections;	/* authenticated */
	size_t buffer_bytes;		/* of those connections */
};

struct namespace {
	struct namespace *next;		/* in srv->namespaces */
	struct hash_node node;		/* in srv->namespace_index, by (client, id) */
	struct client_account *account;	/* of the client name that authenticated */
	uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	char id_hex[PROTO_CLIENT_ID_HEX_SIZE];
	struct page_table pages;
	unsigned int connections;
	uint64_t unbound_since_ms;	/* when connections dropped to 0 */
	struct namespace_stats stats;
	struct conn *evict_conn;	/* serving this namespace's eviction round */
	uint64_t evict_not_before_ms;	/* earliest start of the next round */
	uint64_t evict_returned_before;	/* stats.evict_returned when the round started */
	struct move *move;		/* its pages moving to a peer (peer.c) */
	uint64_t migrate_not_before_ms;	/* its owner refused pages: EVICT them meanwhile */
	bool released;			/* RELEASE: ends with its last connection, no grace */
};

/* What sets the limit in effect (the smallest term of update_limit()). */
enum limit_source {
	LIMIT_NONE,		/* nothing: no --max nor --max-file, memory not known to bound it */
	LIMIT_MAX,		/* --max */
	LIMIT_MAX_FILE,		/* --max-file */
	LIMIT_MEMORY,		/* held + available - reserve */
	LIMIT_MEMORY_UNKNOWN,	/* memory cannot be read: what it holds */
	LIMIT_LEAVING,		/* a leave: 0 */
};

/* Why a leave ended (README.md, "Leaving"). */
enum leave_end {
	LEAVE_GOING,
	LEAVE_EMPTY,		/* every page given back */
	LEAVE_STUCK,		/* no connection left to ask for the rest */
	LEAVE_DEADLINE,		/* --leave-timeout passed */
	LEAVE_SIGNAL,		/* a second SIGTERM or SIGINT */
};

struct server_leave {
	bool leaving;
	uint64_t started_ms, deadline_ms;
	uint64_t pages_at_start;
	uint64_t keys_freed_at_start;	/* srv->keys_freed then: what clients gave back since */
	uint64_t migrated_out_at_start;	/* srv->pages_migrated_out then: what moved to peers */
};

struct server {
	struct server_config cfg;
	struct page_pool pool;
	struct namespace *namespaces;
	struct hash_table namespace_index;	/* struct namespace */
	struct hash_table account_index;	/* struct client_account */
	struct list_head conns;		/* struct conn */
	unsigned int conn_count;
	uint64_t started_ms, now_ms;
	struct mem_sample mem;		/* last sample */
	uint64_t limit_pages;		/* pages it may hold now */
	enum limit_source limit_source;	/* what set limit_pages */
	enum limit_source over_source;	/* what set it when the server went over it */
	bool max_file_failed;		/* the last reading of --max-file failed: the one before holds */
	uint64_t evict_pending;		/* keys asked in rounds still going */
	bool over_limit;		/* holds more than its limit */
	bool warned_no_evict;		/* said that no client takes EVICT */
	bool memory_unknown;		/* the last sample could not be read */
	uint64_t memory_warned_ms;	/* when that was last said */
	uint32_t next_evict_tag;
	uint64_t protocol_errors, auth_failures;
	uint64_t mac_failures;		/* messages whose session MAC was wrong */
	/* requests answered, pages stored by PUTs, keys freed (by FREEs, PUTs and RELEASEs) */
	uint64_t requests_put, requests_get, requests_free;
	uint64_t pages_put, keys_freed;
	uint64_t namespaces_released;	/* by RELEASE (their pages count in keys_freed) */
	size_t buffer_bytes;		/* of connections, held against cfg.buffer_budget */
	size_t client_buffer_budget;	/* what of it the connections of one client may hold */
	unsigned int room_waiters;	/* connections waiting for buffer room */
	bool room_freed;		/* buffers shrank while some waited */
	uint64_t conns_refused;		/* at a cap with every connection authenticated */
	uint64_t conns_replaced;	/* unauthenticated, closed for a newer one */
	uint64_t client_conns_refused;	/* at AUTH, at --max-connections-per-client */
	uint64_t client_namespaces_refused;	/* at AUTH, at --max-namespaces-per-client */
	uint64_t limits_logged_ms;	/* refusals are logged as a sum, this often */
	uint64_t limits_logged_count;	/* refused + replaced when last logged */
	struct server_leave leave;
	/* migration (peer.c): NULL without --peer */
	struct migration *mig;
	uint64_t migrate_pending;	/* pages in moves not answered yet */
	uint64_t pages_migrated_out;	/* taken by their owners on a peer */
	uint64_t pages_migrated_in;	/* stored by PEER_PUT */
	uint64_t moves_refused;		/* keys of MOVEDs their owners did not take */
	uint64_t pages_copied_out;	/* stored on peers by COPYs, named in their replies */
};

void server_init(struct server *srv, const struct server_config *cfg, uint64_t now_ms);
void server_destroy(struct server *srv);

uint64_t server_held_pages(const struct server *srv);
/* Pages held past the limit, not yet asked back (EVICT) or moving to a peer. */
uint64_t server_pages_over(const struct server *srv);
/* Pages the server can take now, from anyone. */
uint64_t server_free_pages(const struct server *srv);
/* Pages a PUT from the client of @ns may add now: the server's free pages, within its quota. */
uint64_t server_client_room(const struct server *srv, const struct namespace *ns);
/*
 * What goes in the free_pages field of messages to the client of @ns: its
 * room computed over its own pages only, so that it does not move with
 * other clients' activity (README.md, "free_pages"):
 *   min(quota - its pages, coarse(limit - its pages))
 * coarse() rounding down to a multiple of the largest power of 2 not above
 * limit / 64; 0 while memory cannot be read, and for @ns NULL (not
 * authenticated yet).
 */
uint64_t server_client_free_pages(const struct server *srv, const struct namespace *ns);
/* After a store_put or store_free on @ns: its client's count follows. */
void server_pages_changed(struct namespace *ns, size_t used_before);

/* Gives the memory of freed pages back to the system; before sampling it. */
void server_release_memory(struct server *srv);
/*
 * The periodic work: connections too slow to authenticate, the limit from a
 * fresh memory sample, namespaces past their grace period, eviction rounds,
 * CAPACITY announcements.  Connections it closes are left CONN_CLOSING.
 */
void server_tick(struct server *srv, const struct mem_sample *mem);

/*
 * --max's and --max-file's SIZE: bytes as parse_size() takes them (K, M,
 * G, T), at least one page, in whole pages; or "none" (NO_MAX_PAGES).
 * Returns 0, or -1 with why in err.
 */
int server_parse_max(const char *text, uint64_t *pages, char *err, size_t err_size);
/*
 * Reads --max-file: one SIZE as server_parse_max() takes, blanks (a
 * newline) around it allowed.  Returns 0, or -1 with why in err (the
 * path in it).
 */
int server_read_max_file(const char *path, uint64_t *pages, char *err, size_t err_size);
/*
 * Reads cfg.max_file again (SIGHUP): the limit follows at once, a lower
 * one moving pages to peers and asking for the rest (EVICT) as memory
 * pressure does, a higher one offering the room (free_pages); a file that
 * cannot be read or holds no SIZE keeps the value read before, and the
 * log says why.
 */
void server_reload_max_file(struct server *srv);
/* "max", "max-file", "memory", ... (the status report's limit_source). */
const char *server_limit_source_name(enum limit_source source);

/*
 * Reloads the keyring from cfg.clients_dir (SIGHUP): on success, closes the
 * connections of clients that were removed or whose key changed; on
 * failure, logs why and keeps the keyring it had.
 */
void server_reload_clients(struct server *srv);

/*
 * Whether a new connection from IPv4 address addr (network order) may
 * open.  At a cap, *victim is the oldest connection not authenticated, or
 * already closing (of that address for the per-address cap), to close
 * first; with none, the new connection is refused.
 */
bool server_admit(struct server *srv, uint32_t addr, struct conn **victim);

enum bind_result {
	BIND_OK,
	BIND_NO_MEMORY,
	BIND_CLIENT_CONNECTIONS,	/* the client has --max-connections-per-client */
	BIND_CLIENT_NAMESPACES,		/* a new one, and it has --max-namespaces-per-client */
};

/*
 * For conn.c: a connection authenticated as (client, id) binds that
 * namespace in *ns, made when new (*found says whether it existed), unless
 * the client is at one of its limits (counted in the status report);
 * server_unbind_namespace() when it closes.
 */
enum bind_result server_bind_namespace(struct server *srv,
				       const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
				       const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
				       struct namespace **ns, bool *found);
void server_unbind_namespace(struct server *srv, struct namespace *ns);
/*
 * RELEASE: frees every page of @ns now (counted in keys_freed, for a
 * leave too) and returns how many; @ns then ends with its last connection,
 * without a grace period, unless a connection binds it or a PEER_PUT
 * stores into it first.
 */
uint64_t server_release_namespace(struct server *srv, struct namespace *ns);
/*
 * Leaving (first SIGTERM): the limit becomes 0, so that the shrink path of
 * memory pressure asks for every page back; clients are told free_pages 0.
 * The deadline is cfg.leave_timeout_ms from now, or the default for the
 * pages held (server_leave_timeout_ms()).
 */
void server_leave(struct server *srv);
uint64_t server_leave_timeout_ms(const struct server_config *cfg, uint64_t held_pages);
/* Pages given back (freed by their clients, or taken on a peer) since the leave started. */
uint64_t server_leave_given_back(const struct server *srv);
/*
 * Whether the leave is over: nothing held and every EVICT answered, nobody
 * left to ask for the rest (no connection that takes EVICT in a namespace
 * holding pages, none still authenticating), or past the deadline.  Logs
 * the end once it is.
 */
enum leave_end server_leave_check(struct server *srv);
/* Logs the end of the leave (or, not leaving, the pages dropped at exit). */
void server_leave_end(struct server *srv, enum leave_end why);
/* The namespace (client, id), or NULL. */
struct namespace *server_find_namespace(const struct server *srv,
					const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
					const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE]);
/*
 * For PEER_PUT: the namespace (client, id), made without a connection
 * (it then lives out the grace period) unless the client is at
 * --max-namespaces-per-client or memory is short: NULL.
 */
struct namespace *server_peer_namespace(struct server *srv,
					const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
					const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE]);
/* For conn.c: conn answered every EVICT of its round, or closed. */
void server_eviction_done(struct server *srv, struct conn *conn, bool pages_left);

#endif
