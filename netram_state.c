// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM servers' state and accounting, below everything else of the
 * tier: the transport, eviction, recovery and the schemes report to it and
 * read it; it calls nothing of theirs.
 *
 * A server's state is one word under srv->lock, changed only through
 * netram_set_state(), which refuses a transition not in netram_allowed[]:
 *
 *   CONNECTING -> UP | REMOVED     (never failed: it holds nothing)
 *   UP         -> DOWN | UP_FAILED | REMOVED
 *   UP_FAILED  -> DOWN_FAILED | REMOVED
 *   DOWN       -> UP | DOWN_FAILED | REMOVED
 *   DOWN_FAILED-> UP | REMOVED
 *   REMOVED    -> CONNECTING (its slot reused)
 */
#include "netram_scheme.h"

static const u8 netram_allowed[NETRAM_NR_STATES] = {
	[NETRAM_CONNECTING]	= BIT(NETRAM_UP) | BIT(NETRAM_REMOVED),
	[NETRAM_UP]		= BIT(NETRAM_DOWN) | BIT(NETRAM_UP_FAILED) | BIT(NETRAM_REMOVED),
	[NETRAM_UP_FAILED]	= BIT(NETRAM_DOWN_FAILED) | BIT(NETRAM_REMOVED),
	[NETRAM_DOWN]		= BIT(NETRAM_UP) | BIT(NETRAM_DOWN_FAILED) | BIT(NETRAM_REMOVED),
	[NETRAM_DOWN_FAILED]	= BIT(NETRAM_UP) | BIT(NETRAM_REMOVED),
	[NETRAM_REMOVED]	= BIT(NETRAM_CONNECTING),
};

/* As dmsetup status and sysfs show them; failed ones say "failed". */
static const char *const netram_state_names[NETRAM_NR_STATES] = {
	[NETRAM_CONNECTING] = "connecting",
	[NETRAM_UP] = "up",
	[NETRAM_DOWN] = "down",
	[NETRAM_REMOVED] = "removed",
};

bool netram_set_state(struct netram_server *srv, enum netram_state to)
{
	enum netram_state from = srv->state;

	lockdep_assert_held(&srv->lock);
	if (WARN_ONCE(!(netram_allowed[from] & BIT(to)),
		      "server %s: state %u to %u refused", srv->name, from, to))
		return false;
	WRITE_ONCE(srv->state, to);
	/* A removed server stays failed, if it was, until its slot is reused. */
	if (to != NETRAM_REMOVED)
		WRITE_ONCE(srv->failed, netram_state_failed(to));
	if (to == NETRAM_UP) {
		srv->last_sent = jiffies;
		srv->connections++;
	} else if (netram_state_connected(from) && (to == NETRAM_DOWN || to == NETRAM_DOWN_FAILED)) {
		/* the timeout of a server no longer connected runs from here */
		srv->down_since = jiffies;
	}
	return true;
}

/*
 * Network RAM's capacity is what the servers hold for us (lost copies
 * aside) plus what they offer or will once our FREEs reach them, over what
 * each page takes (its scheme).  A removed server offers nothing, though
 * its slot keeps its last counts until it is reused.
 */
void netram_update_capacity(struct netram_tier *nt)
{
	u64 capacity = 0;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];

		if (READ_ONCE(srv->state) == NETRAM_REMOVED)
			continue;
		capacity += atomic64_read(&srv->held) - READ_ONCE(srv->lost_held) +
			    atomic64_read(&srv->free_reported) + atomic64_read(&srv->freeing);
	}
	WRITE_ONCE(nt->tier.capacity, netram_scheme_capacity(nt, capacity));
}

void netram_note_free(struct netram_server *srv, u64 free_pages)
{
	/* A server's word; keep sums of many of them from overflowing. */
	free_pages = min_t(u64, free_pages, NSWAP2L_PROTO_KEY_LIMIT);
	atomic64_set(&srv->free_reported, free_pages);
	atomic64_set(&srv->free_estimate, free_pages);
	netram_update_capacity(srv->nt);
}

unsigned long netram_server_rooms(struct netram_tier *nt, struct nswap2l_server_room *rooms)
{
	unsigned long candidates = 0;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];

		rooms[i].free = atomic64_read(&srv->free_estimate);
		rooms[i].held = atomic64_read(&srv->held);
		if (netram_takes_pages(srv))
			__set_bit(i, &candidates);
	}
	return candidates;
}

int netram_format_server(struct netram_server *srv, char *buf, size_t size)
{
	enum netram_state state;
	unsigned int inflight;
	const char *state_name;

	spin_lock_irq(&srv->lock);
	state = srv->state;
	inflight = hweight_long(srv->busy_tags);
	state_name = srv->failed ? "failed" :
		     srv->draining && state == NETRAM_UP ? "draining" : netram_state_names[state];
	spin_unlock_irq(&srv->lock);
	return scnprintf(buf, size, "%s %s %lld %lld %u %lld %lld %lld %lld %lld %lld",
			 srv->name, state_name, atomic64_read(&srv->held),
			 atomic64_read(&srv->free_reported), inflight,
			 atomic64_read(&srv->bytes_sent), atomic64_read(&srv->bytes_received),
			 atomic64_read(&srv->errors), atomic64_read(&srv->reconnects),
			 atomic64_read(&srv->evict_asked), atomic64_read(&srv->evict_moved));
}
