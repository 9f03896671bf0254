// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive limit is Nswap's: the server holds at most
 *   min(--max, held + (available - reserve))
 * pages, available being MemAvailable or the headroom of its memory cgroup,
 * whichever is smaller.  Below what it holds, it takes no new pages and
 * asks clients that take EVICT to move pages elsewhere; it never drops a
 * page itself.  When memory cannot be read the limit is what it holds: no
 * new pages, and no eviction on a guess.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "peer.h"
#include "server.h"
#include "siphash.h"
#include "util.h"

static uint64_t client_quota(const struct server *srv,
			     const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	size_t i;

	for (i = 0; i < srv->cfg.nr_quotas; i++)
		if (!memcmp(srv->cfg.quotas[i].client, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE))
			return srv->cfg.quotas[i].pages;
	return srv->cfg.have_default_quota ? srv->cfg.default_quota_pages : NO_MAX_PAGES;
}

uint64_t server_client_room(const struct server *srv, const struct namespace *ns)
{
	uint64_t free_pages = server_free_pages(srv), quota = ns->account->quota_pages;
	uint64_t held = ns->account->pages;

	if (quota == NO_MAX_PAGES)
		return free_pages;
	return held >= quota ? 0 : (quota - held < free_pages ? quota - held : free_pages);
}

/*
 * Rounds down to a multiple of the largest power of 2 not above limit / 64:
 * the limit moves a little with what storing pages costs the machine (page
 * tables, seals), also when other clients store them.
 */
static uint64_t coarse(uint64_t pages, uint64_t limit)
{
	uint64_t granule = 1;

	while (granule <= limit / 128)
		granule *= 2;
	return pages / granule * granule;
}

uint64_t server_client_free_pages(const struct server *srv, const struct namespace *ns)
{
	const struct client_account *account;
	uint64_t room;

	if (!ns || srv->memory_unknown)
		return 0;
	account = ns->account;
	room = srv->limit_pages > account->pages ?
	       coarse(srv->limit_pages - account->pages, srv->limit_pages) : 0;
	if (account->quota_pages != NO_MAX_PAGES) {
		uint64_t quota_room = account->pages < account->quota_pages ?
				      account->quota_pages - account->pages : 0;

		if (quota_room < room)
			room = quota_room;
	}
	return room;
}

void server_pages_changed(struct namespace *ns, size_t used_before)
{
	ns->account->pages += ns->pages.used;
	ns->account->pages -= used_before;
}

static uint64_t account_hash(const struct server *srv,
			     const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	return siphash24(&srv->cfg.hash_key, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
}

static struct client_account *account_find(const struct server *srv,
					   const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	struct hash_node *node;

	for (node = hash_table_first(&srv->account_index, account_hash(srv, client)); node;
	     node = hash_table_next(node)) {
		struct client_account *account = container_of(node, struct client_account, node);

		if (!memcmp(account->client, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE))
			return account;
	}
	return NULL;
}

static struct client_account *account_new(struct server *srv,
					  const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE])
{
	struct client_account *account = calloc(1, sizeof(*account));

	if (!account)
		return NULL;
	memcpy(account->client, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	account->quota_pages = client_quota(srv, client);
	if (hash_table_add(&srv->account_index, &account->node, account_hash(srv, client))) {
		free(account);
		return NULL;
	}
	return account;
}

static void account_put(struct server *srv, struct client_account *account)
{
	if (--account->namespaces)
		return;
	hash_table_del(&srv->account_index, &account->node);
	free(account);
}

/* Frees every page of @ns, out of its client's account; its table is left empty. */
static void namespace_drop_pages(struct server *srv, struct namespace *ns)
{
	ns->account->pages -= ns->pages.used;
	page_table_destroy(&ns->pages, &srv->pool);
}

/* Frees @ns (unlinked by the caller) and its pages; its client's account goes with its last. */
static void namespace_free(struct server *srv, struct namespace *ns)
{
	if (ns->move)
		migrate_namespace_gone(srv, ns);
	namespace_drop_pages(srv, ns);
	hash_table_del(&srv->namespace_index, &ns->node);
	account_put(srv, ns->account);
	free(ns);
}

/*
 * A client may hold the same part of the buffer budget as of the
 * connections (--max-connections-per-client of --max-connections), and at
 * least what one connection needs to go on.
 */
static size_t client_buffer_budget(const struct server_config *cfg)
{
	size_t share = cfg->buffer_budget / cfg->max_connections * cfg->max_conns_per_client;

	if (share < CONN_BUDGET_MIN)
		share = CONN_BUDGET_MIN;
	return share < cfg->buffer_budget ? share : cfg->buffer_budget;
}

void server_init(struct server *srv, const struct server_config *cfg, uint64_t now_ms)
{
	memset(srv, 0, sizeof(*srv));
	srv->cfg = *cfg;
	page_pool_init(&srv->pool, cfg->lock_pages, &cfg->hash_key);
	hash_table_init(&srv->namespace_index);
	hash_table_init(&srv->account_index);
	srv->client_buffer_budget = client_buffer_budget(cfg);
	list_init(&srv->conns);
	srv->started_ms = now_ms;
	srv->now_ms = now_ms;
	srv->next_evict_tag = 1;
}

void server_destroy(struct server *srv)
{
	while (!list_empty(&srv->conns))
		conn_close(list_first_entry(&srv->conns, struct conn, link));
	while (srv->namespaces) {
		struct namespace *ns = srv->namespaces;

		srv->namespaces = ns->next;
		namespace_free(srv, ns);
	}
	hash_table_destroy(&srv->namespace_index);
	hash_table_destroy(&srv->account_index);
	page_pool_destroy(&srv->pool);
	auth_keyring_free(&srv->cfg.keys);
}

uint64_t server_held_pages(const struct server *srv)
{
	return srv->pool.frames_used;
}

uint64_t server_free_pages(const struct server *srv)
{
	uint64_t held = server_held_pages(srv);

	/* limit_pages was what it held at the tick; FREEs since do not make room */
	if (srv->memory_unknown)
		return 0;
	return srv->limit_pages > held ? srv->limit_pages - held : 0;
}

void server_release_memory(struct server *srv)
{
	page_pool_release_free(&srv->pool);
}

/* Warns when memory cannot be read, again once a minute, and says when it can. */
static void note_memory_reading(struct server *srv)
{
	bool unknown = srv->mem.unknown_why[0];

	if (unknown && (!srv->memory_unknown ||
			srv->now_ms - srv->memory_warned_ms >= MEMORY_UNKNOWN_WARN_MS)) {
		log_warn("%s: taking no new pages until memory can be read", srv->mem.unknown_why);
		srv->memory_warned_ms = srv->now_ms;
	} else if (!unknown && srv->memory_unknown) {
		log_info("memory can be read again: taking new pages within the limit");
	}
	srv->memory_unknown = unknown;
}

static const char *const limit_source_names[] = {
	[LIMIT_NONE] = "none",
	[LIMIT_MAX] = "max",
	[LIMIT_MAX_FILE] = "max-file",
	[LIMIT_MEMORY] = "memory",
	[LIMIT_MEMORY_UNKNOWN] = "memory-unknown",
	[LIMIT_LEAVING] = "leaving",
};

const char *server_limit_source_name(enum limit_source source)
{
	return limit_source_names[source];
}

/* The limit in effect now, and what sets it: the smallest term, --max first when equal. */
static uint64_t compute_limit(const struct server *srv, enum limit_source *source)
{
	uint64_t held = server_held_pages(srv), limit = srv->cfg.max_pages;
	uint64_t available = srv->mem.available, reserve = srv->cfg.reserve_bytes;

	*source = limit == NO_MAX_PAGES ? LIMIT_NONE : LIMIT_MAX;
	if (srv->cfg.max_file && srv->cfg.max_file_pages < limit) {
		limit = srv->cfg.max_file_pages;
		*source = LIMIT_MAX_FILE;
	}
	if (srv->memory_unknown) {
		if (held < limit) {
			limit = held;
			*source = LIMIT_MEMORY_UNKNOWN;
		}
	} else if (available != MEM_UNKNOWN) {
		uint64_t adaptive;

		if (available >= reserve) {
			adaptive = held + (available - reserve) / PROTO_PAGE_SIZE;
		} else {
			uint64_t short_pages = (reserve - available + PROTO_PAGE_SIZE - 1) / PROTO_PAGE_SIZE;

			adaptive = held > short_pages ? held - short_pages : 0;
		}
		if (adaptive < limit) {
			limit = adaptive;
			*source = LIMIT_MEMORY;
		}
	}
	/* leaving: the shrink of memory pressure, down to nothing (its own lines say so) */
	if (srv->leave.leaving) {
		limit = 0;
		*source = LIMIT_LEAVING;
	}
	return limit;
}

static void update_limit(struct server *srv)
{
	uint64_t held = server_held_pages(srv), limit;
	enum limit_source source;

	limit = compute_limit(srv, &source);
	srv->limit_pages = limit;
	srv->limit_source = source;
	if (held > limit && !srv->over_limit && !srv->leave.leaving) {
		srv->over_source = source;
		if (source == LIMIT_MEMORY)
			log_info("memory pressure: limit %llu pages, holding %llu: taking no new pages",
				 (unsigned long long)limit, (unsigned long long)held);
		else
			log_info("over the limit (%s): limit %llu pages, holding %llu: taking no new "
				 "pages, giving the rest back", source == LIMIT_MAX ? "--max" :
				 "--max-file", (unsigned long long)limit, (unsigned long long)held);
	} else if (held <= limit && srv->over_limit && !srv->leave.leaving) {
		if (srv->over_source == LIMIT_MEMORY)
			log_info("memory pressure over: limit %llu pages, holding %llu",
				 (unsigned long long)limit, (unsigned long long)held);
		else
			log_info("within the limit again: limit %llu pages (%s), holding %llu",
				 (unsigned long long)limit, server_limit_source_name(source),
				 (unsigned long long)held);
	}
	srv->over_limit = held > limit;
	if (!srv->over_limit)
		srv->warned_no_evict = false;
}

/*
 * Whether @ns ends now: no connection, and released by its client (at
 * once) or past the grace period.
 */
static bool namespace_ends(const struct server *srv, const struct namespace *ns)
{
	return !ns->connections &&
	       (ns->released || srv->now_ms - ns->unbound_since_ms >= srv->cfg.grace_ms);
}

/* Frees the namespaces that end now. */
static void expire_namespaces(struct server *srv)
{
	struct namespace **link = &srv->namespaces, *ns;

	while ((ns = *link)) {
		if (!namespace_ends(srv, ns)) {
			link = &ns->next;
			continue;
		}
		if (ns->released)
			log_info_peer("namespace %s: released, its last connection closed", ns->id_hex);
		else
			log_info_peer("namespace %s: no connection for %llu s, freeing its %zu pages",
				      ns->id_hex,
				      (unsigned long long)(srv->now_ms - ns->unbound_since_ms) / 1000,
				      ns->pages.used);
		*link = ns->next;
		namespace_free(srv, ns);
	}
}

/* A connection of ns that takes EVICT, or NULL. */
static struct conn *evict_connection(const struct server *srv, const struct namespace *ns)
{
	struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link)
		if (conn->ns == ns && conn->state == CONN_READY &&
		    (conn->capabilities & NSWAP2L_CAP_EVICT))
			return conn;
	return NULL;
}

static bool may_start_round(const struct server *srv, const struct namespace *ns)
{
	return !ns->evict_conn && ns->pages.used && srv->now_ms >= ns->evict_not_before_ms &&
	       !migrate_takes(srv, ns) && evict_connection(srv, ns);
}

/* Whether pages are moving to peers, or about to: no EVICT is not a reason to warn then. */
static bool migrating(const struct server *srv)
{
	const struct namespace *ns;

	for (ns = srv->namespaces; ns; ns = ns->next)
		if (migrate_takes(srv, ns))
			return true;
	return false;
}

/*
 * Asks for what the server holds beyond its limit and has not asked for
 * yet, from each namespace in proportion to its pages.
 */
uint64_t server_pages_over(const struct server *srv)
{
	uint64_t held = server_held_pages(srv);
	/* pages asked back, or moving to peers, are on their way out */
	uint64_t going = srv->limit_pages + srv->evict_pending + srv->migrate_pending;

	return held > going ? held - going : 0;
}

static void start_evictions(struct server *srv)
{
	uint64_t over = server_pages_over(srv), candidates_pages = 0;
	struct namespace *ns;

	if (!over)
		return;
	for (ns = srv->namespaces; ns; ns = ns->next)
		if (may_start_round(srv, ns))
			candidates_pages += ns->pages.used;
	if (!candidates_pages) {
		if (!srv->evict_pending && !srv->warned_no_evict && !srv->leave.leaving &&
		    !migrating(srv)) {
			log_warn("over the limit by %llu pages and no connected client takes EVICT",
				 (unsigned long long)over);
			srv->warned_no_evict = true;
		}
		return;
	}
	for (ns = srv->namespaces; ns; ns = ns->next) {
		uint64_t want, asked;
		struct conn *conn;

		if (!may_start_round(srv, ns))
			continue;
		/* rounded up, so that the shares cover all that is over */
		want = (over * ns->pages.used + candidates_pages - 1) / candidates_pages;
		if (want > ns->pages.used)
			want = ns->pages.used;
		conn = evict_connection(srv, ns);
		asked = conn_ask_eviction(conn, want);
		if (!asked)
			continue;
		ns->evict_conn = conn;
		ns->evict_returned_before = ns->stats.evict_returned;
		ns->stats.evict_asked += asked;
		srv->evict_pending += asked;
		log_info("namespace %s: asking %s for %llu of its %zu pages back",
			 ns->id_hex, conn->peer, (unsigned long long)asked, ns->pages.used);
	}
}

void server_eviction_done(struct server *srv, struct conn *conn, bool pages_left)
{
	struct namespace *ns = conn->ns;
	uint64_t wait_ms = pages_left ? EVICT_BACKOFF_MS : EVICT_RETRY_MS;

	/* leaving: the next round at the next tick while the client moves pages */
	if (srv->leave.leaving && ns->stats.evict_returned > ns->evict_returned_before)
		wait_ms = 0;
	srv->evict_pending -= conn->evict_keys;
	ns->evict_conn = NULL;
	ns->evict_not_before_ms = srv->now_ms + wait_ms;
	log_info("namespace %s: eviction round done (%s), %zu pages held",
		 ns->id_hex, pages_left ? "client kept some pages" : "ok", ns->pages.used);
}

/*
 * CAPACITY to a connection whose free_pages changed by more than 1/8 since
 * it was last told (in any message), or went to or from zero.  Every reply
 * carries it too; this is for clients that are not sending anything.
 */
static void announce_capacity(struct server *srv)
{
	struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link) {
		uint64_t free_pages, told = conn->told_free_pages, change;

		if (conn->state != CONN_READY)
			continue;
		free_pages = conn_free_pages(conn);
		change = free_pages > told ? free_pages - told : told - free_pages;
		if (change && (!free_pages || !told || change > told / 8))
			conn_send_capacity(conn, free_pages);
	}
}

/* The limit, eviction rounds and CAPACITY: at each tick, and when a leave starts. */
static void tick_work(struct server *srv)
{
	update_limit(srv);
	migrate_tick(srv);
	start_evictions(srv);
	announce_capacity(srv);
}

uint64_t server_leave_timeout_ms(const struct server_config *cfg, uint64_t held_pages)
{
	if (cfg->leave_timeout_ms != LEAVE_TIMEOUT_AUTO)
		return cfg->leave_timeout_ms;
	/* whole seconds, as the option's */
	return LEAVE_BASE_MS + (held_pages + LEAVE_PAGES_PER_S - 1) / LEAVE_PAGES_PER_S * 1000;
}

uint64_t server_leave_given_back(const struct server *srv)
{
	if (!srv->leave.leaving)
		return 0;
	return srv->keys_freed - srv->leave.keys_freed_at_start +
	       srv->pages_migrated_out - srv->leave.migrated_out_at_start;
}

/* Namespaces holding pages. */
static unsigned int namespaces_holding(const struct server *srv)
{
	const struct namespace *ns;
	unsigned int n = 0;

	for (ns = srv->namespaces; ns; ns = ns->next)
		n += ns->pages.used > 0;
	return n;
}

void server_leave(struct server *srv)
{
	uint64_t held = server_held_pages(srv);

	srv->leave.leaving = true;
	srv->leave.started_ms = srv->now_ms;
	srv->leave.deadline_ms = srv->now_ms + server_leave_timeout_ms(&srv->cfg, held);
	srv->leave.pages_at_start = held;
	srv->leave.keys_freed_at_start = srv->keys_freed;
	srv->leave.migrated_out_at_start = srv->pages_migrated_out;
	log_info("leaving: giving back %llu pages of %u namespaces, deadline in %llu s%s",
		 (unsigned long long)held, namespaces_holding(srv),
		 (unsigned long long)(srv->leave.deadline_ms - srv->now_ms + 999) / 1000,
		 srv->cfg.leave_timeout_ms == LEAVE_TIMEOUT_AUTO ? " (default for the pages held)" :
		 " (--leave-timeout)");
	/* rounds already under way end as they do; the others start now */
	tick_work(srv);
}

/* Whether a client can still be asked for pages: to ask, or coming back. */
static bool anyone_to_ask(const struct server *srv)
{
	const struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link) {
		if (conn->state < CONN_READY)
			return true;
		if (conn->state == CONN_READY && (conn->capabilities & NSWAP2L_CAP_EVICT) &&
		    conn->ns->pages.used)
			return true;
	}
	return false;
}

enum leave_end server_leave_check(struct server *srv)
{
	enum leave_end why = LEAVE_GOING;

	if (!srv->leave.leaving)
		return LEAVE_GOING;
	/* the clients' answers to the last EVICTs are let in: no reset under them */
	if (!server_held_pages(srv) && !srv->evict_pending)
		why = LEAVE_EMPTY;
	else if (srv->now_ms >= srv->leave.deadline_ms)
		why = LEAVE_DEADLINE;
	else if (server_held_pages(srv) && !anyone_to_ask(srv))
		why = LEAVE_STUCK;
	if (why != LEAVE_GOING)
		server_leave_end(srv, why);
	return why;
}

void server_leave_end(struct server *srv, enum leave_end why)
{
	static const char *const reasons[] = {
		[LEAVE_EMPTY] = "every page given back",
		[LEAVE_STUCK] = "no connected client takes EVICT for the rest",
		[LEAVE_DEADLINE] = "--leave-timeout passed",
		[LEAVE_SIGNAL] = "signalled again",
	};
	unsigned long long held = server_held_pages(srv);

	if (!srv->leave.leaving) {
		log_info("exiting without a leave (--leave-timeout 0): %llu pages of %u namespaces "
			 "dropped", held, namespaces_holding(srv));
		return;
	}
	log_msg(held ? LOG_LEVEL_WARN : LOG_LEVEL_INFO,
		"leave over (%s) after %llu s: %llu of %llu pages given back, %llu pages of %u "
		"namespaces left", reasons[why],
		(unsigned long long)(srv->now_ms - srv->leave.started_ms) / 1000,
		(unsigned long long)server_leave_given_back(srv),
		(unsigned long long)srv->leave.pages_at_start, held, namespaces_holding(srv));
}

/* Unauthenticated connections would otherwise hold file descriptors forever. */
static void close_slow_handshakes(struct server *srv)
{
	struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link) {
		if (conn->state >= CONN_READY || srv->now_ms - conn->opened_ms < HANDSHAKE_TIMEOUT_MS)
			continue;
		log_warn_peer("peer %s: not authenticated after %d s, closing", conn->peer,
			      HANDSHAKE_TIMEOUT_MS / 1000);
		conn->state = CONN_CLOSING;
	}
}

/* The kernel client sends a heartbeat when idle: silence means it is gone. */
static void close_idle(struct server *srv)
{
	struct conn *conn;

	if (!srv->cfg.idle_timeout_ms)
		return;
	list_for_each_entry(conn, &srv->conns, link) {
		if (conn->state != CONN_READY ||
		    srv->now_ms - conn->last_input_ms < srv->cfg.idle_timeout_ms)
			continue;
		log_warn_peer("peer %s: nothing received for %llu s, closing", conn->peer,
			      (unsigned long long)(srv->now_ms - conn->last_input_ms) / 1000);
		conn->state = CONN_CLOSING;
	}
}

/*
 * A message started and never finished holds its buffer.  While the
 * connection is held back by its output the clock starts over: the peer
 * may be waiting for us to read.
 */
static void close_half_received(struct server *srv)
{
	struct conn *conn;

	list_for_each_entry(conn, &srv->conns, link) {
		if (!conn->message_started_ms || conn->state == CONN_CLOSING)
			continue;
		if (!conn_wants_input(conn)) {
			conn->message_started_ms = srv->now_ms;
			continue;
		}
		if (srv->now_ms - conn->message_started_ms < srv->cfg.message_timeout_ms)
			continue;
		log_warn_peer("peer %s: message not complete after %llu s, closing", conn->peer,
			      (unsigned long long)(srv->now_ms - conn->message_started_ms) / 1000);
		conn->state = CONN_CLOSING;
	}
}

static void log_limits(struct server *srv)
{
	uint64_t count = srv->conns_refused + srv->conns_replaced;

	if (count == srv->limits_logged_count ||
	    srv->now_ms - srv->limits_logged_ms < LIMITS_LOG_INTERVAL_MS)
		return;
	log_warn("connection limits reached: %llu refused, %llu unauthenticated closed for newer "
		 "ones so far (--max-connections %u, --max-unauth-per-address %u)",
		 (unsigned long long)srv->conns_refused, (unsigned long long)srv->conns_replaced,
		 srv->cfg.max_connections, srv->cfg.max_unauth_per_address);
	srv->limits_logged_count = count;
	srv->limits_logged_ms = srv->now_ms;
}

void server_tick(struct server *srv, const struct mem_sample *mem)
{
	srv->mem = *mem;
	close_slow_handshakes(srv);
	close_idle(srv);
	close_half_received(srv);
	log_limits(srv);
	expire_namespaces(srv);
	note_memory_reading(srv);
	tick_work(srv);
	log_peer_flush();
}

void server_reload_clients(struct server *srv)
{
	struct auth_keyring fresh;
	struct conn *conn;
	char err[512];

	if (auth_load_clients(srv->cfg.clients_dir, &fresh, err, sizeof(err))) {
		log_error("reload: %s; keeping the %zu clients loaded before", err,
			  srv->cfg.keys.count);
		return;
	}
	list_for_each_entry(conn, &srv->conns, link) {
		const struct auth_key *key;

		if (conn->state != CONN_READY || !conn->ns)
			continue;
		key = auth_find_key(&fresh, conn->ns->account->client);
		if (key && auth_key_equal(key, auth_find_key(&srv->cfg.keys, conn->ns->account->client)))
			continue;
		log_info("peer %s: client %s %s, closing", conn->peer, conn->ns->account->client,
			 key ? "has a new key" : "was removed");
		conn->state = CONN_CLOSING;
	}
	auth_keyring_free(&srv->cfg.keys);
	srv->cfg.keys = fresh;
	log_info("reload: %zu clients from %s", fresh.count, srv->cfg.clients_dir);
}

int server_parse_max(const char *text, uint64_t *pages, char *err, size_t err_size)
{
	uint64_t bytes;

	if (!strcmp(text, "none")) {
		*pages = NO_MAX_PAGES;
		return 0;
	}
	if (parse_size(text, &bytes)) {
		snprintf(err, err_size, "not a size: '%s' (bytes, or with K, M, G, T; or none)",
			 text);
		return -1;
	}
	if (bytes < PROTO_PAGE_SIZE) {
		snprintf(err, err_size, "%s is less than one page (%u bytes)", text,
			 (unsigned int)PROTO_PAGE_SIZE);
		return -1;
	}
	*pages = bytes / PROTO_PAGE_SIZE;
	return 0;
}

/* A SIZE is short: more than this in the file is not one. */
#define MAX_FILE_BYTES 64

int server_read_max_file(const char *path, uint64_t *pages, char *err, size_t err_size)
{
	char text[MAX_FILE_BYTES + 2], *start = text, *end, why[160];
	size_t len, i;

	/* one byte more than a SIZE may take says that the file is longer */
	if (read_small_file(path, text, sizeof(text) - 1, &len)) {
		snprintf(err, err_size, "--max-file %s: %s", path, strerror(errno));
		return -1;
	}
	if (len > MAX_FILE_BYTES) {
		snprintf(err, err_size, "--max-file %s: more than %d bytes: not one SIZE", path,
			 MAX_FILE_BYTES);
		return -1;
	}
	text[len] = '\0';
	for (i = 0; i < len; i++)
		if (!isprint((unsigned char)text[i]) && !isspace((unsigned char)text[i])) {
			snprintf(err, err_size, "--max-file %s: not text: not one SIZE", path);
			return -1;
		}
	while (isspace((unsigned char)*start))
		start++;
	end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (!*start) {
		snprintf(err, err_size, "--max-file %s: empty: one SIZE (or none) expected", path);
		return -1;
	}
	if (server_parse_max(start, pages, why, sizeof(why))) {
		snprintf(err, err_size, "--max-file %s: %s", path, why);
		return -1;
	}
	return 0;
}

/* "256 pages (1.0 MiB)" or "none". */
static const char *max_text(uint64_t pages, char *buf, size_t size)
{
	char bytes[32];

	if (pages == NO_MAX_PAGES)
		return "none";
	snprintf(buf, size, "%llu pages (%s)", (unsigned long long)pages,
		 format_bytes(pages * PROTO_PAGE_SIZE, bytes, sizeof(bytes)));
	return buf;
}

void server_reload_max_file(struct server *srv)
{
	char err[PATH_MAX + 256], was_buf[64], now[64], limit_text[64];
	uint64_t pages, held = server_held_pages(srv), limit;
	const char *was;
	enum limit_source source;

	if (server_read_max_file(srv->cfg.max_file, &pages, err, sizeof(err))) {
		srv->max_file_failed = true;
		log_error("reload: %s; keeping %s read before; limit %llu pages, set by %s", err,
			  max_text(srv->cfg.max_file_pages, was_buf, sizeof(was_buf)),
			  (unsigned long long)srv->limit_pages,
			  server_limit_source_name(srv->limit_source));
		return;
	}
	srv->max_file_failed = false;
	/* "none" is not written into the buffer */
	was = max_text(srv->cfg.max_file_pages, was_buf, sizeof(was_buf));
	srv->cfg.max_file_pages = pages;
	limit = compute_limit(srv, &source);
	log_info("reload: --max-file %s: %s, was %s; limit %s, set by %s; holding %llu pages%s",
		 srv->cfg.max_file, max_text(pages, now, sizeof(now)), was,
		 max_text(limit, limit_text, sizeof(limit_text)), server_limit_source_name(source),
		 (unsigned long long)held, held > limit ? ": giving the rest back" : "");
	/* at once, not at the next tick: the pages over it start moving, the room is offered */
	tick_work(srv);
}

bool server_admit(struct server *srv, uint32_t addr, struct conn **victim)
{
	struct conn *conn, *oldest = NULL, *oldest_of_addr = NULL;
	unsigned int unauth_of_addr = 0;

	/* newest first: the last one found is the oldest */
	list_for_each_entry(conn, &srv->conns, link) {
		if (conn->state == CONN_READY)
			continue;
		oldest = conn;
		if (conn->addr == addr) {
			oldest_of_addr = conn;
			unauth_of_addr++;
		}
	}
	*victim = NULL;
	if (unauth_of_addr >= srv->cfg.max_unauth_per_address)
		*victim = oldest_of_addr;
	else if (srv->conn_count >= srv->cfg.max_connections)
		*victim = oldest;
	else
		return true;
	if (!*victim) {
		srv->conns_refused++;
		return false;
	}
	srv->conns_replaced++;
	return true;
}

static uint64_t namespace_hash(const struct server *srv,
			       const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
			       const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE])
{
	uint8_t key[NSWAP2L_PROTO_CLIENT_NAME_SIZE + NSWAP2L_PROTO_CLIENT_ID_SIZE];

	memcpy(key, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	memcpy(key + NSWAP2L_PROTO_CLIENT_NAME_SIZE, id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	return siphash24(&srv->cfg.hash_key, key, sizeof(key));
}

static struct namespace *namespace_find(const struct server *srv,
					const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
					const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
					uint64_t hash)
{
	struct hash_node *node;

	for (node = hash_table_first(&srv->namespace_index, hash); node;
	     node = hash_table_next(node)) {
		struct namespace *ns = container_of(node, struct namespace, node);

		if (!memcmp(ns->id, id, NSWAP2L_PROTO_CLIENT_ID_SIZE) &&
		    !memcmp(ns->account->client, client, NSWAP2L_PROTO_CLIENT_NAME_SIZE))
			return ns;
	}
	return NULL;
}

/* A new namespace of account (NULL: the client's first, account made too). */
static struct namespace *namespace_new(struct server *srv, struct client_account *account,
				       const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
				       const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
				       uint64_t hash)
{
	struct namespace *ns = calloc(1, sizeof(*ns));

	if (!ns)
		return NULL;
	ns->account = account ? account : account_new(srv, client);
	if (!ns->account) {
		free(ns);
		return NULL;
	}
	ns->account->namespaces++;
	if (hash_table_add(&srv->namespace_index, &ns->node, hash)) {
		account_put(srv, ns->account);
		free(ns);
		return NULL;
	}
	memcpy(ns->id, id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	proto_client_id_hex(id, ns->id_hex);
	page_table_init(&ns->pages);
	ns->next = srv->namespaces;
	srv->namespaces = ns;
	log_info_peer("namespace %s of client %s: new", ns->id_hex, ns->account->client);
	return ns;
}

enum bind_result server_bind_namespace(struct server *srv,
				       const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
				       const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
				       struct namespace **nsp, bool *found)
{
	uint64_t hash = namespace_hash(srv, client, id);
	struct client_account *account = account_find(srv, client);
	struct namespace *ns = namespace_find(srv, client, id, hash);

	*nsp = NULL;
	*found = ns;
	if (account && account->connections >= srv->cfg.max_conns_per_client) {
		srv->client_conns_refused++;
		return BIND_CLIENT_CONNECTIONS;
	}
	if (!ns && account && account->namespaces >= srv->cfg.max_namespaces_per_client) {
		srv->client_namespaces_refused++;
		return BIND_CLIENT_NAMESPACES;
	}
	if (!ns)
		ns = namespace_new(srv, account, client, id, hash);
	if (!ns)
		return BIND_NO_MEMORY;
	/* used again: it lives as any other */
	ns->released = false;
	ns->connections++;
	ns->account->connections++;
	*nsp = ns;
	return BIND_OK;
}

void server_unbind_namespace(struct server *srv, struct namespace *ns)
{
	ns->account->connections--;
	if (--ns->connections)
		return;
	ns->unbound_since_ms = srv->now_ms;
	/* released: no grace period, its room is the next device's now */
	if (ns->released)
		expire_namespaces(srv);
}

uint64_t server_release_namespace(struct server *srv, struct namespace *ns)
{
	uint64_t pages = ns->pages.used;

	/* its pages here are gone: a move of them frees what it stored on the peer */
	if (ns->move)
		migrate_namespace_released(srv, ns);
	namespace_drop_pages(srv, ns);
	ns->released = true;
	srv->namespaces_released++;
	/* given back, as by a FREE: a leave counts them */
	srv->keys_freed += pages;
	return pages;
}

struct namespace *server_find_namespace(const struct server *srv,
					const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
					const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE])
{
	return namespace_find(srv, client, id, namespace_hash(srv, client, id));
}

struct namespace *server_peer_namespace(struct server *srv,
					const char client[NSWAP2L_PROTO_CLIENT_NAME_SIZE],
					const uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE])
{
	uint64_t hash = namespace_hash(srv, client, id);
	struct namespace *ns = namespace_find(srv, client, id, hash);
	struct client_account *account;

	/* what a copy or move stores after a RELEASE lives out the grace period */
	if (ns) {
		ns->released = false;
		return ns;
	}
	account = account_find(srv, client);
	if (account && account->namespaces >= srv->cfg.max_namespaces_per_client) {
		srv->client_namespaces_refused++;
		return NULL;
	}
	ns = namespace_new(srv, account, client, id, hash);
	if (ns)
		ns->unbound_since_ms = srv->now_ms;
	return ns;
}
