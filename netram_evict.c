// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM servers giving memory back.  A server whose machine needs its
 * memory sends EVICT with the keys it wants back; the pages go to the mover
 * (migrate.c), which gives them new homes, and the answer goes out after the
 * FREEs of the pages moved.  remove_server drains a server the same way.
 * While the device is suspended, the moves wait and so do the answers.
 */
#include <linux/sort.h>

#include "netram_scheme.h"

int netram_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static bool netram_evict_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_server *srv = container_of(job, struct netram_server, evict.job);

	return netram_scheme_on_server(srv->nt, slot, srv, srv->evict.job_keys,
				       srv->evict.nr_job_keys);
}

static void netram_start_eviction(struct netram_server *srv);

static void netram_evict_done(struct nswap2l_move_job *job)
{
	struct netram_server *srv = container_of(job, struct netram_server, evict.job);
	struct netram_eviction *ev = &srv->evict;
	unsigned int i;

	atomic64_add(job->moved, &srv->evict_moved);
	spin_lock_irq(&srv->lock);
	for (i = 0; i < ev->nr_job_replies; i++) {
		struct netram_evict_reply *reply = &ev->job_replies[i];

		if (job->left)
			reply->status = NSWAP2L_ERR_NOSPC;
		/* Full only if the connection is down: the server re-asks anyway. */
		if (ev->nr_ready < ARRAY_SIZE(ev->ready))
			ev->ready[ev->nr_ready++] = *reply;
	}
	ev->running = false;
	spin_unlock_irq(&srv->lock);
	if (job->left)
		DMWARN_LIMIT("%s: server %s asked back %u pages, %u stay (no room elsewhere or unreadable)",
			     netram_dev_name(srv->nt), srv->name, ev->nr_job_keys, job->left);
	netram_queue_io(srv);
	netram_start_eviction(srv);
}

/* Hand the keys collected so far to the mover, unless a job is running. */
static void netram_start_eviction(struct netram_server *srv)
{
	struct netram_eviction *ev = &srv->evict;
	u64 *keys;

	spin_lock_irq(&srv->lock);
	if (ev->running || !ev->nr_replies) {
		spin_unlock_irq(&srv->lock);
		return;
	}
	keys = ev->job_keys;
	ev->job_keys = ev->keys;
	ev->nr_job_keys = ev->nr_keys;
	ev->keys = keys;
	ev->nr_keys = 0;
	memcpy(ev->job_replies, ev->replies, ev->nr_replies * sizeof(ev->replies[0]));
	ev->nr_job_replies = ev->nr_replies;
	ev->nr_replies = 0;
	ev->running = true;
	spin_unlock_irq(&srv->lock);

	sort(ev->job_keys, ev->nr_job_keys, sizeof(u64), netram_cmp_u64, NULL);
	ev->job.tier = &srv->nt->tier;
	ev->job.wants = netram_evict_wants;
	ev->job.done = netram_evict_done;
	if (READ_ONCE(srv->index) == NETRAM_NO_INDEX) {
		/* Not published yet (it may never be): it holds none of our pages. */
		ev->job.moved = 0;
		ev->job.left = 0;
		netram_evict_done(&ev->job);
	} else if (!nswap2l_queue_move(srv->nt->tier.nc, &ev->job)) {
		ev->job.moved = 0;
		ev->job.left = ev->nr_job_keys;
		netram_evict_done(&ev->job);
	}
}

int netram_evict_keys(struct netram_server *srv, u32 tag, const __le64 *keys, u32 count)
{
	struct netram_eviction *ev = &srv->evict;
	u32 status = NSWAP2L_OK;
	unsigned int i;

	atomic64_add(count, &srv->evict_asked);

	spin_lock_irq(&srv->lock);
	if (ev->nr_replies == NETRAM_EVICT_REPLIES) {
		spin_unlock_irq(&srv->lock);
		return -EPROTO;		/* more than a round's worth unanswered */
	}
	if (ev->nr_keys + count > NETRAM_EVICT_KEYS)
		status = NSWAP2L_ERR_NOSPC;	/* they stay; the server may ask again */
	for (i = 0; status == NSWAP2L_OK && i < count; i++)
		ev->keys[ev->nr_keys++] = le64_to_cpu(keys[i]);
	ev->replies[ev->nr_replies++] = (struct netram_evict_reply) {
		.tag = tag, .count = count, .status = status, .connection = srv->connections,
	};
	spin_unlock_irq(&srv->lock);
	netram_start_eviction(srv);
	return 0;
}

static bool netram_drain_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_server *srv = container_of(job, struct netram_server, drain_job);

	return netram_scheme_on_server(srv->nt, slot, srv, NULL, 0);
}

static void netram_drain_done(struct nswap2l_move_job *job)
{
	struct netram_server *srv = container_of(job, struct netram_server, drain_job);
	const char *dev = netram_dev_name(srv->nt);
	s64 held;

	/*
	 * A page rewritten on a write-once tier (protect=, parity) leaves by
	 * itself: its old key is freed once the bios that may read it are
	 * done.  Count those pages as gone, and as progress, before judging
	 * the pass.
	 */
	nswap2l_flush_releases(srv->nt->tier.nc);
	held = atomic64_read(&srv->held);
	if (held < srv->drain_held)
		srv->drain_idle_passes = 0;
	srv->drain_held = held;
	if (held) {
		/*
		 * A write that lands during a page's copy cancels that move;
		 * such pages move on the next pass (no new pages come to a
		 * draining server).
		 */
		if (netram_another_pass(job, &srv->drain_idle_passes) &&
		    nswap2l_queue_move(srv->nt->tier.nc, job))
			return;
		DMERR("%s: server %s: %lld pages could not be moved (no room elsewhere, or unreadable); it stays, remove_server retries",
		      dev, srv->name, held);
		WRITE_ONCE(srv->draining, false);
		return;
	}
	DMINFO("%s: server %s drained and removed", dev, srv->name);
	netram_remove_slot(srv);
}

void netram_remove_slot(struct netram_server *srv)
{
	spin_lock_irq(&srv->lock);
	netram_set_state(srv, NETRAM_REMOVED);
	srv->draining = false;
	spin_unlock_irq(&srv->lock);
	netram_update_capacity(srv->nt);
	netram_shutdown_sock(srv, true);
}

static struct netram_server *netram_find_server(struct netram_tier *nt, const char *name)
{
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++)
		if (!strcmp(nt->servers[i]->name, name) &&
		    READ_ONCE(nt->servers[i]->state) != NETRAM_REMOVED)
			return nt->servers[i];
	return NULL;
}

int netram_remove_server(struct netram_tier *nt, const char *name)
{
	const char *dev = netram_dev_name(nt);
	struct netram_server *srv = netram_find_server(nt, name);
	unsigned int i, others = 0;

	if (!srv) {
		DMERR("%s: remove_server %s: not a server of this device", dev, name);
		return -EINVAL;
	}
	for (i = 0; i < netram_nr_servers(nt); i++)
		others += nt->servers[i] != srv &&
			  READ_ONCE(nt->servers[i]->state) != NETRAM_REMOVED;
	if (!others) {
		DMERR("%s: remove_server %s: the last server stays (load a table without netram= instead)",
		      dev, name);
		return -EINVAL;
	}
	if (READ_ONCE(srv->draining)) {
		DMERR("%s: remove_server %s: already draining", dev, name);
		return -EBUSY;
	}
	WRITE_ONCE(srv->draining, true);
	srv->drain_idle_passes = 0;
	srv->drain_held = atomic64_read(&srv->held);
	srv->drain_job.tier = &nt->tier;
	srv->drain_job.wants = netram_drain_wants;
	srv->drain_job.done = netram_drain_done;
	DMINFO("%s: draining server %s (%lld pages)", dev, name, atomic64_read(&srv->held));
	if (!nswap2l_queue_move(nt->tier.nc, &srv->drain_job)) {
		WRITE_ONCE(srv->draining, false);
		return -ESHUTDOWN;
	}
	return 0;
}
