// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM tier: pages kept in the memory of nswapd servers, reached over
 * TCP with in-kernel sockets (the wire format is include/uapi/linux/
 * nswap2l_proto.h).  This file holds the tier operations and the servers'
 * life cycle; netram.h lists the files that do the rest.
 *
 * A slot here is (page key << 8 | second server << 4 | first server).
 * Keys come from one counter per tier and are never reused, so freeing an
 * old copy can never hit a newer one, and a page's copies share its key:
 * with reliability=mirror a page has two homes on distinct servers and the
 * map entry still keeps its 8 bytes.  Which servers take a new page is the
 * server-choice policy's decision (policy/), among the servers that are up,
 * not failed, not draining and not asking for memory back.
 *
 * How a page's copies are placed, read and written is the reliability
 * scheme's business (netram_scheme.h).
 *
 * Degraded start: a server that cannot be reached when a table is loaded
 * (down, rebooting) stays "connecting" while pages have another home
 * (another server up, flash or disk): it takes nothing, its thread tries
 * again with back-off, and it joins when it answers.  A server that answers
 * but refuses the key or speaks another protocol fails the load.
 *
 * Failure: a server whose request waits longer than the table's timeout,
 * or that stays unreachable that long, is "failed": it takes no new pages,
 * its reads end with EIO (never zeros or stale data) or go to the other
 * copy, and its writes are failed back to the core, which places them
 * elsewhere.  Copies on a server that comes back with a new namespace, or
 * on a failed one when they have a mirror, are lost (netram_recover.c).
 *
 * Order of life: servers are allocated when the table is parsed, their
 * receivers start only once the whole device exists (start()), and every
 * receiver and io_work is stopped (stop()) before any server is freed.
 */
#include <crypto/hash.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "netram_args.h"
#include "netram_scheme.h"

/*
 * A reload's changes: servers to add (connected already, in new slots or
 * in removed servers' slots, reserved until commit) and the timeout.
 * While it waits for the resume, on nt->pending_reloads, the new slots it
 * will take count in nt->reserved_slots, so that add_server cannot take
 * them too.
 */
struct netram_reload {
	struct list_head pending;
	unsigned long timeout;
	unsigned int nr_added, nr_reused;
	struct netram_server *added[NETRAM_MAX_SERVERS];
	struct netram_server *reused[NETRAM_MAX_SERVERS];
};

/* Errors of a table load go to ti (and dmesg), those of a message to dmesg. */
__printf(4, 5)
static void netram_error(struct netram_tier *nt, struct dm_target *ti, const char *summary,
			 const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (ti)
		nswap2l_bad_table(ti, summary, "netram: %pV", &vaf);
	else
		DMERR("%s: %pV", netram_dev_name(nt), &vaf);
	va_end(args);
}

/*----------------------------------------------------------------
 * The I/O path
 *--------------------------------------------------------------*/

static int netram_alloc_slots(struct nswap2l_tier *tier, unsigned int nr, u64 *slot)
{
	return netram_scheme_alloc(to_netram_tier(tier), nr, slot);
}

static void netram_free_slots(struct nswap2l_tier *tier, const u64 *slots,
			      unsigned int nr, bool written)
{
	netram_scheme_free(to_netram_tier(tier), slots, nr, written);
}

static int netram_map(struct nswap2l_tier *tier, struct bio *bio, u64 slot)
{
	struct netram_tier *nt = to_netram_tier(tier);

	if (bio_data_dir(bio) == READ)
		return netram_scheme_map_read(nt, bio, slot);
	/* Remapped, like a block tier: the key is the page number on the server. */
	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(netram_slot_key(slot));
	return netram_scheme_map_write(nt, bio, slot);
}

static int netram_map_retry(struct nswap2l_tier *tier, struct bio *bio, u64 slot,
			    unsigned int tries)
{
	return netram_scheme_map_retry(to_netram_tier(tier), bio, slot, tries);
}

/* A bio goes in one PUT or GET to each copy, and fits the scheme's run. */
static unsigned int netram_max_run(struct nswap2l_tier *tier, u64 slot)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int copy, max = netram_scheme_max_run(nt);

	for (copy = 0; copy < netram_slot_copies(slot); copy++)
		max = min(max, READ_ONCE(netram_copy_server(nt, slot, copy)->max_pages));
	return max;
}

/* Keys are never reused: the same key elsewhere is the same page, moved (MOVED). */
static bool netram_relabelled(struct nswap2l_tier *tier, u64 old, u64 cur)
{
	return old != cur && netram_slot_key(old) == netram_slot_key(cur);
}

/*----------------------------------------------------------------
 * Status
 *--------------------------------------------------------------*/
static void netram_emit_table_arg(struct nswap2l_tier *tier, char *result,
				  unsigned int maxlen, unsigned int *sz_ptr)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int sz = *sz_ptr, i;
	const char *sep = "";

	for (i = 0; i < netram_nr_servers(nt); i++) {
		if (READ_ONCE(nt->servers[i]->state) == NETRAM_REMOVED)
			continue;
		DMEMIT("%s%s", sep, nt->servers[i]->name);
		sep = ",";
	}
	*sz_ptr = sz;
}

static void netram_emit_status(struct nswap2l_tier *tier, char *result,
			       unsigned int maxlen, unsigned int *sz_ptr)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int sz = *sz_ptr, i, nr = netram_nr_servers(nt);

	DMEMIT(" %u", nr);
	for (i = 0; i < nr && sz + 1 < maxlen; i++) {
		DMEMIT(" ");
		sz += netram_format_server(nt->servers[i], result + sz, maxlen - sz);
	}
	netram_emit_recovery(nt, result, maxlen, &sz);
	netram_emit_protect(nt, result, maxlen, &sz);
	*sz_ptr = sz;
}

static ssize_t netram_show_servers(struct nswap2l_tier *tier, char *buf)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i, nr = netram_nr_servers(nt);
	ssize_t len;

	len = sysfs_emit(buf, "server state held free inflight sent_bytes received_bytes errors reconnects evict_asked evict_moved requests moved_in moved_out sealed\n");
	for (i = 0; i < nr && len + 1 < PAGE_SIZE; i++) {
		struct netram_server *srv = nt->servers[i];

		len += netram_format_server(srv, buf + len, PAGE_SIZE - len - 1);
		len += sysfs_emit_at(buf, len, " %lld %lld %lld %lld\n", atomic64_read(&srv->requests),
				     atomic64_read(&srv->moved_in), atomic64_read(&srv->moved_out),
				     atomic64_read(&srv->sealed));
	}
	return len;
}

/*----------------------------------------------------------------
 * Servers' life cycle
 *--------------------------------------------------------------*/

/* Frees a server whose threads are stopped (or never started). */
static void netram_destroy_server(struct netram_server *srv)
{
	unsigned int tag;

	netram_stop_server(srv);
	netram_free_session(srv);
	/* Its io_work is stopped for good: no sender waits for these pages. */
	for (tag = 0; srv->msgs && tag < NETRAM_TAGS; tag++)
		netram_release_sealed(srv, &srv->msgs[tag]);
	netram_crypt_free(srv);
	kvfree(srv->msgs);
	kvfree(srv->free_keys);
	kvfree(srv->evict_buf);
	kvfree(srv->evict.keys);
	kvfree(srv->evict.job_keys);
	kfree(srv);
}

/* IPV4-ADDRESS:PORT into @addr, or false. */
static bool netram_addr_from(const char *spec, struct sockaddr_in *addr)
{
	const char *end;
	u16 port;

	memset(addr, 0, sizeof(*addr));
	if (!in4_pton(spec, -1, (u8 *)&addr->sin_addr, ':', &end) || *end != ':' ||
	    kstrtou16(end + 1, 10, &port) || !port)
		return false;
	addr->sin_family = AF_INET;
	addr->sin_port = htons(port);
	return true;
}

static int netram_parse_addr(struct netram_tier *nt, struct dm_target *ti, const char *spec,
			     struct sockaddr_in *addr)
{
	if (netram_addr_from(spec, addr))
		return 0;
	netram_error(nt, ti, "Bad Network RAM server address", "'%s' is not IPV4-ADDRESS:PORT",
		     spec);
	return -EINVAL;
}

static bool netram_same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

static bool netram_addr_in(const struct sockaddr_in *addr, const struct sockaddr_in *addrs,
			   int nr)
{
	while (nr--)
		if (netram_same_addr(addr, &addrs[nr]))
			return true;
	return false;
}

/* The published server at @addr that still holds (or may take) pages. */
static struct netram_server *netram_live_server(struct netram_tier *nt,
						const struct sockaddr_in *addr)
{
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];

		if (netram_same_addr(&srv->addr, addr) && READ_ONCE(srv->state) != NETRAM_REMOVED)
			return srv;
	}
	return NULL;
}

/* A server not published yet, its threads not started. */
static int netram_new_server(struct netram_tier *nt, struct dm_target *ti,
			     const struct sockaddr_in *addr, struct netram_server **result)
{
	struct netram_server *srv;

	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv)
		goto nomem;
	*result = srv;
	srv->nt = nt;
	srv->ev = &netram_server_events;
	srv->index = NETRAM_NO_INDEX;
	srv->addr = *addr;
	snprintf(srv->name, sizeof(srv->name), "%pI4:%u", &addr->sin_addr,
		 ntohs(addr->sin_port));
	get_random_bytes(srv->client_id, sizeof(srv->client_id));
	srv->new_namespace_ok = true;
	INIT_WORK(&srv->io_work, netram_io_work);
	INIT_DELAYED_WORK(&srv->free_work, netram_free_work);
	init_waitqueue_head(&srv->wait);
	mutex_init(&srv->sock_mutex);
	mutex_init(&srv->send_mutex);
	spin_lock_init(&srv->lock);
	srv->state = NETRAM_CONNECTING;
	bio_list_init(&srv->queue);
	INIT_LIST_HEAD(&srv->copies);
	init_completion(&srv->released);

	srv->msgs = kvcalloc(NETRAM_TAGS, sizeof(*srv->msgs), GFP_KERNEL);
	srv->free_keys = kvcalloc(NETRAM_FREE_QUEUE, sizeof(u64), GFP_KERNEL);
	srv->evict_buf = kvcalloc(NSWAP2L_PROTO_MAX_KEYS, sizeof(__le64), GFP_KERNEL);
	srv->evict.keys = kvcalloc(NETRAM_EVICT_KEYS, sizeof(u64), GFP_KERNEL);
	srv->evict.job_keys = kvcalloc(NETRAM_EVICT_KEYS, sizeof(u64), GFP_KERNEL);
	if (!srv->msgs || !srv->free_keys || !srv->evict_buf || !srv->evict.keys ||
	    !srv->evict.job_keys || netram_crypt_alloc(srv))
		goto nomem;
	if (netram_alloc_session(srv)) {
		netram_error(nt, ti, "Cannot allocate hmac(sha256)",
			     "no hmac(sha256) for the session MACs of a server");
		return -ENOMEM;
	}
	return 0;
nomem:
	netram_error(nt, ti, "Cannot allocate Network RAM server", "out of memory for a server");
	return -ENOMEM;
}

/* Slots a new server may still take: reloads waiting for resume have theirs. */
static bool netram_slot_left(struct netram_tier *nt, unsigned int more)
{
	lockdep_assert_held(&nt->servers_mutex);
	return netram_nr_servers(nt) + nt->reserved_slots + more < NETRAM_MAX_SERVERS;
}

/*
 * From now on the server takes pages and the watchdog watches it.  A map
 * entry names at most NETRAM_MAX_SERVERS servers: callers counted a slot.
 */
static bool netram_publish_server(struct netram_tier *nt, struct netram_server *srv)
{
	lockdep_assert_held(&nt->servers_mutex);
	if (WARN_ON_ONCE(nt->nr_servers >= NETRAM_MAX_SERVERS))
		return false;
	WRITE_ONCE(srv->index, nt->nr_servers);
	nt->servers[srv->index] = srv;
	smp_store_release(&nt->nr_servers, srv->index + 1);
	return true;
}

/* A new server, its thread connecting: netram_first_connections() waits for it. */
static int netram_start_new_server(struct netram_tier *nt, struct dm_target *ti,
				   const struct sockaddr_in *addr,
				   struct netram_server **result)
{
	struct netram_server *srv = NULL;
	int r;

	r = netram_new_server(nt, ti, addr, &srv);
	if (!r) {
		r = netram_start_server(srv);
		if (r)
			netram_error(nt, ti, "Cannot start Network RAM thread",
				     "cannot start the thread of server %s", srv->name);
	}
	if (r) {
		if (srv)
			netram_destroy_server(srv);
		return r;
	}
	*result = srv;
	return 0;
}

/* A removed server's slot that a new server may take, or NULL. */
static struct netram_server *netram_free_slot(struct netram_tier *nt)
{
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];

		if (READ_ONCE(srv->state) == NETRAM_REMOVED && !atomic64_read(&srv->held) &&
		    !READ_ONCE(srv->evict.running))
			return srv;
	}
	return NULL;
}

/*
 * Start a new server in the slot of a removed one (no page names its
 * index any more, and keys are never reused, so nothing of the old server
 * can reach the new one), its thread connecting.  @reserved: it takes no
 * pages until netram_commit_reload().  On failure the slot is removed again.
 */
static int netram_reuse_slot(struct netram_tier *nt, struct dm_target *ti,
			     struct netram_server *srv, const struct sockaddr_in *addr,
			     bool reserved)
{
	int r;

	netram_stop_server(srv);
	mutex_lock(&srv->sock_mutex);
	srv->stopping = false;
	mutex_unlock(&srv->sock_mutex);
	netram_reset_tx(srv);
	spin_lock_irq(&srv->lock);
	srv->addr = *addr;
	snprintf(srv->name, sizeof(srv->name), "%pI4:%u", &addr->sin_addr,
		 ntohs(addr->sin_port));
	netram_set_state(srv, NETRAM_CONNECTING);
	srv->draining = reserved;
	srv->ever_up = false;
	srv->first_done = false;
	srv->first_result = 0;
	srv->nr_free_keys = 0;
	srv->evict.nr_keys = 0;
	srv->evict.nr_replies = 0;
	srv->evict.nr_ready = 0;
	WRITE_ONCE(srv->lost_below, 0);
	WRITE_ONCE(srv->lost_held, 0);
	srv->renew_id = false;
	spin_unlock_irq(&srv->lock);
	get_random_bytes(srv->client_id, sizeof(srv->client_id));
	srv->new_namespace_ok = true;
	atomic64_set(&srv->free_estimate, 0);
	atomic64_set(&srv->free_reported, 0);
	atomic64_set(&srv->freeing, 0);
	atomic64_set(&srv->bytes_sent, 0);
	atomic64_set(&srv->bytes_received, 0);
	atomic64_set(&srv->requests, 0);
	atomic64_set(&srv->errors, 0);
	atomic64_set(&srv->reconnects, 0);
	atomic64_set(&srv->evict_asked, 0);
	atomic64_set(&srv->evict_moved, 0);
	atomic64_set(&srv->moved_in, 0);
	atomic64_set(&srv->moved_out, 0);

	r = netram_start_server(srv);
	if (r) {
		netram_error(nt, ti, "Cannot start Network RAM thread",
			     "cannot start the thread of server %s", srv->name);
		netram_stop_server(srv);
		netram_remove_slot(srv);
	}
	return r;
}

/* Pages have a home outside Network RAM: the table has flash or disk. */
static bool netram_block_tier(struct netram_tier *nt)
{
	struct nswap2l *nc = nt->tier.nc;

	return nc->tiers[NSWAP2L_TIER_FLASH] || nc->tiers[NSWAP2L_TIER_DISK];
}

/*
 * Degraded start: the first attempts of @nr new servers, their threads
 * running.  One that cannot be reached (netram_unreachable(): down,
 * rebooting) is left connecting, its thread trying again with back-off,
 * while pages have another home: @home, or one of these that connected.
 * Any other error (a key refused, another protocol: the configuration's),
 * or none reached and no @home, fails: the first such, said in ti or dmesg.
 * Returns how many connected.
 */
static int netram_first_connections(struct netram_tier *nt, struct dm_target *ti,
				    struct netram_server *const *srvs, unsigned int nr, bool home)
{
	unsigned int i, up = 0;
	int r;

	for (i = 0; i < nr; i++) {
		r = netram_first_result(srvs[i]);
		if (r && !netram_unreachable(r)) {
			netram_first_failed(srvs[i], ti, r);
			return r;
		}
		up += !r;
	}
	for (i = 0; i < nr; i++) {
		r = netram_first_result(srvs[i]);
		if (!r)
			continue;
		if (!home && !up) {
			netram_first_failed(srvs[i], ti, r);
			return r;
		}
		netram_first_deferred(srvs[i], r);
	}
	return up;
}

/*
 * Parse "a.b.c.d:port,..." into @addrs (at most @max); refuses duplicates.
 * Returns the number of addresses or an error.
 */
static int netram_parse_list(struct netram_tier *nt, struct dm_target *ti, const char *arg,
			     struct sockaddr_in *addrs, unsigned int max)
{
	char *list, *cursor, *spec;
	unsigned int nr = 0;
	int r = 0;

	list = kstrdup(arg, GFP_KERNEL);
	if (!list) {
		ti->error = "Cannot allocate Network RAM server list";
		return -ENOMEM;
	}
	cursor = list;
	while (!r && (spec = strsep(&cursor, ","))) {
		if (nr == max) {
			netram_error(nt, ti, "Too many Network RAM servers",
				     "more than %u servers", max);
			r = -EINVAL;
			break;
		}
		r = netram_parse_addr(nt, ti, spec, &addrs[nr]);
		if (!r && netram_addr_in(&addrs[nr], addrs, nr)) {
			netram_error(nt, ti, "Network RAM server given twice",
				     "server %s given twice", spec);
			r = -EINVAL;
		}
		nr++;
	}
	kfree(list);
	return r ? r : nr;
}

/*----------------------------------------------------------------
 * Create, start, stop, destroy
 *--------------------------------------------------------------*/
/*
 * The device goes for good: each server connected frees our pages now
 * (RELEASE) rather than a grace period after the connection closes, so that
 * a device made next over the same servers finds their memory free.  Best
 * effort and bounded: a server that does not answer in time frees them
 * after its grace period, as before.
 */
static void netram_release_namespaces(struct netram_tier *nt)
{
	unsigned long deadline = jiffies + NETRAM_RELEASE_TIMEOUT;
	struct netram_server *srv;
	unsigned long asked = 0;
	unsigned int i;

	BUILD_BUG_ON(NETRAM_MAX_SERVERS > BITS_PER_LONG);
	for (i = 0; i < netram_nr_servers(nt); i++) {
		srv = nt->servers[i];
		spin_lock_irq(&srv->lock);
		if (netram_state_connected(srv->state) && !srv->release_asked &&
		    (READ_ONCE(srv->caps) & NSWAP2L_CAP_RELEASE)) {
			srv->release_wanted = true;
			srv->release_asked = true;
			__set_bit(i, &asked);
		}
		spin_unlock_irq(&srv->lock);
		if (test_bit(i, &asked))
			netram_queue_io(srv);
	}
	for_each_set_bit(i, &asked, NETRAM_MAX_SERVERS) {
		srv = nt->servers[i];
		if (!wait_for_completion_timeout(&srv->released,
						 max_t(long, deadline - jiffies, 1)))
			DMWARN("%s: server %s did not answer RELEASE in %u ms: it frees our pages after its grace period",
			       netram_dev_name(nt), srv->name,
			       jiffies_to_msecs(NETRAM_RELEASE_TIMEOUT));
	}
}

static void netram_stop(struct nswap2l_tier *tier)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i;

	cancel_delayed_work_sync(&nt->watchdog);
	netram_scheme_stop(nt);
	netram_release_namespaces(nt);
	/* All receivers first: none may walk a server that is being freed. */
	for (i = 0; i < netram_nr_servers(nt); i++)
		netram_stop_server(nt->servers[i]);
}

static void netram_destroy(struct nswap2l_tier *tier)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i;

	netram_stop(tier);
	for (i = 0; i < netram_nr_servers(nt); i++)
		netram_destroy_server(nt->servers[i]);
	if (nt->wq)
		destroy_workqueue(nt->wq);
	if (!IS_ERR_OR_NULL(nt->hmac))
		crypto_free_shash(nt->hmac);
	netram_scheme_destroy(nt);
	netram_protect_destroy(nt);
	kfree(nt->key_spec);
	kfree(nt);
}

static int netram_create(struct dm_target *ti, const struct nswap2l_tier_type *type,
			 const char *arg, struct dm_dev *dev,
			 const struct nswap2l_tier_options *opts,
			 struct nswap2l_tier **result)
{
	const struct netram_args *args = opts->args;
	struct sockaddr_in addrs[NETRAM_MAX_SERVERS];
	struct netram_tier *nt;
	int i, nr, r;

	nt = kzalloc(sizeof(*nt), GFP_KERNEL);
	if (!nt) {
		ti->error = "Cannot allocate Network RAM tier";
		return -ENOMEM;
	}
	nt->tier.type = type;
	nt->tier.run_stride = 1ULL << NETRAM_SLOT_KEY_SHIFT;
	nt->timeout = args->timeout_secs * HZ;
	/* No FREE or EVICT answer goes out before the device is first resumed. */
	nt->suspended = true;
	nt->choice = &nswap2l_most_free_server;
	nt->scheme = args->scheme;
	nt->tier.write_once = nt->scheme->write_once;
	nt->parity_group = args->parity_group;
	spin_lock_init(&nt->recovery.lock);
	mutex_init(&nt->servers_mutex);
	INIT_LIST_HEAD(&nt->pending_reloads);
	INIT_DELAYED_WORK(&nt->watchdog, netram_watchdog);

	r = netram_scheme_create(nt, ti, opts);
	if (r)
		goto bad;

	strscpy(nt->protect_name, args->protect, sizeof(nt->protect_name));
	r = netram_protect_create(nt, ti, strcmp(args->protect, "none") ? args->protect : NULL);
	if (r)
		goto bad;
	nt->hmac = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(nt->hmac)) {
		ti->error = "Cannot allocate hmac(sha256)";
		r = PTR_ERR(nt->hmac);
		goto bad;
	}
	if (args->key_spec) {
		nt->key_spec = kstrdup(args->key_spec, GFP_KERNEL);
		if (!nt->key_spec) {
			ti->error = "Cannot allocate key description";
			r = -ENOMEM;
			goto bad;
		}
	}
	r = netram_set_key(nt, ti, args->key_spec);
	if (r)
		goto bad;
	memcpy(nt->client_name, args->client_name, sizeof(nt->client_name));
	nr = netram_parse_list(nt, ti, arg, addrs, NETRAM_MAX_SERVERS);
	if (nr < 0) {
		r = nr;
		goto bad;
	}
	for (i = 0; i < nr; i++) {
		struct netram_server *srv = NULL;

		/* published even half built: destroy() frees it */
		r = netram_new_server(nt, ti, &addrs[i], &srv);
		mutex_lock(&nt->servers_mutex);
		if (srv && !netram_publish_server(nt, srv)) {
			netram_destroy_server(srv);
			r = r ?: -EINVAL;
		}
		mutex_unlock(&nt->servers_mutex);
		if (r)
			goto bad;
	}

	nt->wq = alloc_workqueue("nswap2l-net-%s", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0,
				 dm_table_device_name(ti->table));
	if (!nt->wq) {
		ti->error = "Cannot allocate Network RAM workqueue";
		r = -ENOMEM;
		goto bad;
	}
	if (netram_scheme_redundant(nt) && nr < 2)
		DMWARN("%s: reliability=%s with one server: no page goes to Network RAM until another is added (add_server)",
		       dm_table_device_name(ti->table), netram_scheme_name(nt));
	*result = &nt->tier;
	return 0;
bad:
	netram_destroy(&nt->tier);
	return r;
}

/*
 * The device exists: connect every server.  Servers that cannot be reached
 * stay connecting while pages have another home (netram_first_connections()).
 */
static int netram_start(struct nswap2l_tier *tier, struct dm_target *ti)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i, nr = netram_nr_servers(nt);
	int r;

	for (i = 0; i < nr; i++) {
		r = netram_start_server(nt->servers[i]);
		if (r) {
			ti->error = "Cannot start Network RAM thread";
			return r;
		}
	}
	r = netram_first_connections(nt, ti, nt->servers, nr, netram_block_tier(nt));
	if (r < 0)
		return r;
	if (netram_scheme_redundant(nt) && nr >= 2 && r < 2)
		DMWARN("%s: reliability=%s with %d of %u servers up: no page goes to Network RAM until another joins",
		       netram_dev_name(nt), netram_scheme_name(nt), r, nr);
	queue_delayed_work(nt->wq, &nt->watchdog, HZ);
	return 0;
}

/*----------------------------------------------------------------
 * Suspend and reload
 *--------------------------------------------------------------*/
static void netram_suspend(struct nswap2l_tier *tier)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i;

	WRITE_ONCE(nt->suspended, true);
	/* A sender that took its message before it saw the flag is done after this. */
	for (i = 0; i < netram_nr_servers(nt); i++) {
		mutex_lock(&nt->servers[i]->send_mutex);
		mutex_unlock(&nt->servers[i]->send_mutex);
	}
}

static void netram_resume(struct nswap2l_tier *tier)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i;

	WRITE_ONCE(nt->suspended, false);
	for (i = 0; i < netram_nr_servers(nt); i++)
		netram_queue_io(nt->servers[i]);
}

/* The reload no longer waits: its slots are no longer reserved. */
static void netram_end_pending(struct netram_tier *nt, struct netram_reload *reload)
{
	lockdep_assert_held(&nt->servers_mutex);
	if (list_empty(&reload->pending))
		return;
	list_del_init(&reload->pending);
	nt->reserved_slots -= reload->nr_added;
}

static void netram_cancel_reload(struct nswap2l_tier *tier, void *change)
{
	struct netram_tier *nt = to_netram_tier(tier);
	struct netram_reload *reload = change;
	unsigned int i;

	mutex_lock(&nt->servers_mutex);
	netram_end_pending(nt, reload);
	mutex_unlock(&nt->servers_mutex);
	for (i = 0; i < reload->nr_added; i++)
		netram_destroy_server(reload->added[i]);
	for (i = 0; i < reload->nr_reused; i++) {
		netram_stop_server(reload->reused[i]);
		netram_remove_slot(reload->reused[i]);
	}
	kfree(reload);
}

/*
 * Every server that holds pages must stay in the list; new ones are
 * connected now and join when the table is resumed.  As at create, one
 * that cannot be reached stays connecting while pages have another home
 * (a server up, one of the new ones, flash or disk).
 */
static int netram_prepare_reload(struct nswap2l_tier *tier, struct dm_target *ti,
				 const char *arg, struct dm_dev *dev,
				 const struct nswap2l_tier_options *opts, void **change)
{
	const struct netram_args *args = opts->args;
	struct netram_tier *nt = to_netram_tier(tier);
	struct sockaddr_in addrs[NETRAM_MAX_SERVERS];
	struct netram_server *news[NETRAM_MAX_SERVERS];
	struct netram_reload *reload;
	bool home = netram_block_tier(nt);
	unsigned int i, nr_news = 0;
	int nr, r = 0;

	reload = kzalloc(sizeof(*reload), GFP_KERNEL);
	if (!reload) {
		ti->error = "Cannot allocate Network RAM reload";
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&reload->pending);
	reload->timeout = args->timeout_secs * HZ;
	mutex_lock(&nt->servers_mutex);
	nr = netram_parse_list(nt, ti, arg, addrs, NETRAM_MAX_SERVERS);
	if (nr < 0)
		r = nr;
	for (i = 0; !r && i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];

		home |= READ_ONCE(srv->state) == NETRAM_UP;
		if (READ_ONCE(srv->state) != NETRAM_REMOVED && !netram_addr_in(&srv->addr, addrs, nr)) {
			netram_error(nt, ti, "A reload must keep every Network RAM server",
				     "reload drops server %s, which holds %lld pages of the device: remove_server it first",
				     srv->name, atomic64_read(&srv->held));
			r = -EINVAL;
		}
	}
	for (i = 0; !r && i < nr; i++) {
		struct netram_server *slot;

		if (netram_live_server(nt, &addrs[i]))
			continue;
		if (netram_slot_left(nt, reload->nr_added)) {
			r = netram_start_new_server(nt, ti, &addrs[i],
						    &reload->added[reload->nr_added]);
			if (!r)
				news[nr_news++] = reload->added[reload->nr_added++];
			continue;
		}
		slot = netram_free_slot(nt);
		if (!slot) {
			netram_error(nt, ti, "Too many Network RAM servers",
				     "a device has at most %u servers at a time",
				     NETRAM_MAX_SERVERS);
			r = -EINVAL;
			break;
		}
		r = netram_reuse_slot(nt, ti, slot, &addrs[i], true);
		if (!r)
			news[nr_news++] = reload->reused[reload->nr_reused++] = slot;
	}
	if (!r)
		r = min(netram_first_connections(nt, ti, news, nr_news, home), 0);
	if (!r) {
		list_add_tail(&reload->pending, &nt->pending_reloads);
		nt->reserved_slots += reload->nr_added;
	}
	mutex_unlock(&nt->servers_mutex);
	if (r) {
		netram_cancel_reload(tier, reload);
		return r;
	}
	*change = reload;
	return 0;
}

static void netram_commit_reload(struct nswap2l_tier *tier, void *change)
{
	struct netram_tier *nt = to_netram_tier(tier);
	struct netram_reload *reload = change;
	unsigned int i;

	mutex_lock(&nt->servers_mutex);
	netram_end_pending(nt, reload);
	WRITE_ONCE(nt->timeout, reload->timeout);
	for (i = 0; i < reload->nr_reused; i++) {
		WRITE_ONCE(reload->reused[i]->draining, false);
		DMINFO("%s: server %s added by the reloaded table", netram_dev_name(nt),
		       reload->reused[i]->name);
	}
	for (i = 0; i < reload->nr_added; i++) {
		if (!netram_publish_server(nt, reload->added[i])) {
			netram_destroy_server(reload->added[i]);
			continue;
		}
		DMINFO("%s: server %s added by the reloaded table", netram_dev_name(nt),
		       reload->added[i]->name);
	}
	mutex_unlock(&nt->servers_mutex);
	kfree(reload);
}

/*----------------------------------------------------------------
 * add_server / remove_server messages
 *--------------------------------------------------------------*/
static int netram_add_server(struct netram_tier *nt, const char *spec)
{
	struct netram_server *srv;
	struct sockaddr_in addr;
	int r;

	r = netram_parse_addr(nt, NULL, spec, &addr);
	if (r)
		return r;
	if (netram_live_server(nt, &addr)) {
		DMERR("%s: add_server %s: server given twice (already in use)",
		      netram_dev_name(nt), spec);
		return -EINVAL;
	}
	/*
	 * One that cannot be reached fails at once, unlike one of a table: an
	 * operator asked for it now (a wrong address must not linger).
	 */
	if (netram_slot_left(nt, 0)) {
		r = netram_start_new_server(nt, NULL, &addr, &srv);
		if (r)
			return r;
		r = netram_first_connections(nt, NULL, &srv, 1, false);
		if (r < 0 || !netram_publish_server(nt, srv)) {
			netram_destroy_server(srv);
			return r < 0 ? r : -ENOSPC;
		}
	} else {
		srv = netram_free_slot(nt);
		if (!srv) {
			DMERR("%s: add_server %s: a device has at most %u servers at a time",
			      netram_dev_name(nt), spec, NETRAM_MAX_SERVERS);
			return -EINVAL;
		}
		r = netram_reuse_slot(nt, NULL, srv, &addr, false);
		if (r)
			return r;
		r = netram_first_connections(nt, NULL, &srv, 1, false);
		if (r < 0) {
			netram_stop_server(srv);
			netram_remove_slot(srv);
			return r;
		}
	}
	DMINFO("%s: server %s added", netram_dev_name(nt), srv->name);
	return 0;
}

/* A reloaded table that waits for resume adds the server at @spec. */
static bool netram_reload_adds(struct netram_tier *nt, const char *spec)
{
	struct netram_reload *reload;
	struct sockaddr_in addr;
	unsigned int i;

	lockdep_assert_held(&nt->servers_mutex);
	if (!netram_addr_from(spec, &addr))
		return false;	/* the command says what is wrong */
	list_for_each_entry(reload, &nt->pending_reloads, pending) {
		for (i = 0; i < reload->nr_added; i++)
			if (netram_same_addr(&reload->added[i]->addr, &addr))
				return true;
		for (i = 0; i < reload->nr_reused; i++)
			if (netram_same_addr(&reload->reused[i]->addr, &addr))
				return true;
	}
	return false;
}

static int netram_message(struct nswap2l_tier *tier, unsigned int argc, char **argv)
{
	struct netram_tier *nt = to_netram_tier(tier);
	int r = -ENOTTY;

	if (argc != 2)
		return r;
	mutex_lock(&nt->servers_mutex);
	if (netram_reload_adds(nt, argv[1])) {
		DMERR("%s: %s %s: a reloaded table that waits for resume adds this server: resume it (or clear it) first",
		      netram_dev_name(nt), argv[0], argv[1]);
		r = -EBUSY;
	} else if (!strcasecmp(argv[0], "add_server"))
		r = netram_add_server(nt, argv[1]);
	else if (!strcasecmp(argv[0], "remove_server"))
		r = netram_remove_server(nt, argv[1]);
	mutex_unlock(&nt->servers_mutex);
	return r;
}

static const struct nswap2l_tier_ops netram_tier_ops = {
	.create = netram_create,
	.start = netram_start,
	.stop = netram_stop,
	.destroy = netram_destroy,
	.prepare_reload = netram_prepare_reload,
	.commit_reload = netram_commit_reload,
	.cancel_reload = netram_cancel_reload,
	.suspend = netram_suspend,
	.resume = netram_resume,
	.alloc_slots = netram_alloc_slots,
	.max_run = netram_max_run,
	.relabelled = netram_relabelled,
	.free_slots = netram_free_slots,
	.map = netram_map,
	.map_retry = netram_map_retry,
	.emit_table_arg = netram_emit_table_arg,
	.emit_status = netram_emit_status,
	.show_servers = netram_show_servers,
	.message = netram_message,
};

const struct nswap2l_tier_type nswap2l_netram_tier = {
	.name = "netram",
	.messages_help =
		"add_server <ip:port>      connect to one more Network RAM server\n"
		"remove_server <ip:port>   move a server's pages elsewhere, then disconnect\n",
	.id = NSWAP2L_TIER_NETRAM,
	.ops = &netram_tier_ops,
	.opts = &netram_opts_ops,
	.retry_failed_bios = true,
};
