// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM servers' life above the transport: what the transport
 * reports (struct netram_xport_events) and the watchdog, which decides
 * when a server has failed.  Failure is the server's business, not the
 * socket's: the transport only shuts a socket and fails what is queued
 * when told to.
 */
#include "netram_scheme.h"

static void netram_namespace_lost(struct netram_server *srv)
{
	netram_lose_copies(srv, "came back without our namespace (restarted?)");
}

/* A server back may hold what recovery waits for, or room for it. */
static void netram_connected(struct netram_server *srv)
{
	netram_retry_recovery(srv->nt);
}

const struct netram_xport_events netram_server_events = {
	.namespace_lost = netram_namespace_lost,
	.connected = netram_connected,
	.evict = netram_evict_keys,
};

/*----------------------------------------------------------------
 * Watchdog: per-request timeouts, heartbeats, servers down for too long
 *--------------------------------------------------------------*/
void netram_watchdog(struct work_struct *work)
{
	struct netram_tier *nt = container_of(to_delayed_work(work), struct netram_tier,
					      watchdog);
	unsigned long timeout = READ_ONCE(nt->timeout);
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];
		bool timed_out = false, give_up = false, heartbeat = false, failed, lose;
		enum netram_state state;
		s64 lost = 0;

		spin_lock_irq(&srv->lock);
		state = srv->state;
		if (netram_state_connected(state) && netram_overdue(srv, timeout)) {
			timed_out = state == NETRAM_UP;
			if (timed_out)
				netram_set_state(srv, NETRAM_UP_FAILED);
		} else if ((state == NETRAM_DOWN || state == NETRAM_DOWN_FAILED) &&
			   time_after(jiffies, srv->down_since + timeout)) {
			/* not CONNECTING: a server never up holds nothing to fail (degraded start) */
			give_up = state != NETRAM_DOWN_FAILED;
			if (give_up)
				netram_set_state(srv, NETRAM_DOWN_FAILED);
		}
		failed = srv->failed;
		if (srv->state == NETRAM_UP && !srv->busy_tags && !srv->nr_free_keys &&
		    time_after(jiffies, srv->last_sent + timeout / 2)) {
			netram_queue_heartbeat(srv);
			heartbeat = true;
		}
		/*
		 * With redundancy, failed is dead: its pages are made again
		 * (copied or rebuilt), and if it comes back it comes back
		 * empty.  Without, its pages may still come back with it.
		 */
		lose = (timed_out || give_up) && netram_scheme_redundant(nt);
		if (lose) {
			srv->renew_id = true;
			lost = netram_mark_lost(srv);
		}
		spin_unlock_irq(&srv->lock);
		if (lose)
			netram_recover_lost(srv, "failed", lost);

		if (timed_out) {
			DMERR("%s: server %s: request timed out, failing its requests",
			      netram_dev_name(nt), srv->name);
			netram_shutdown_sock(srv, false);
		}
		if (give_up)
			DMERR("%s: server %s unreachable for %u s, failing its requests",
			      netram_dev_name(nt), srv->name, jiffies_to_msecs(timeout) / 1000);
		if (failed)
			netram_fail_queued(srv);
		if (heartbeat)
			netram_queue_io(srv);
	}
	queue_delayed_work(nt->wq, &nt->watchdog, HZ);
}
