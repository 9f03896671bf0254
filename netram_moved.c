// SPDX-License-Identifier: GPL-2.0
/*
 * Pages a server moved to another server (Nswap's Migrate,
 * NSWAP2L_CAP_MOVED; include/uapi/linux/nswap2l_proto.h, Migration).  A
 * server that must shrink stores pages on a peer, seals and all, and tells
 * us with MOVED; we change their map entries to name the peer under the
 * same key (a seal's AAD is the key: the page still checks there) and move
 * no data.  Before that it asks which namespace we have on the peer
 * (ASK_NAMESPACE), answered at once from what we know of our servers.
 *
 * A MOVED is a job of the mover (migrate.c): serialized with the other
 * jobs, paused while the device is suspended (and so is its answer), one
 * scan of the map.  It changes entries as the page mover does: the scan
 * flags MIGRATING the entries that name a key of the MOVED on the sending
 * server; once the bios that saw them before are done, those still flagged
 * name the peer (a write meanwhile clears the flag and keeps the page where
 * that write expects it).  The answer goes after the bios that looked
 * the pages up before the relabel too (a second wait), so nothing reads a
 * key from the sender once it may free it.
 */
#include <linux/sort.h>

#include "map.h"
#include "netram_scheme.h"

/* MOVEDs a server may have unanswered; one more breaks the connection. */
#define NETRAM_MOVED_PENDING	4
/* ASK_NAMESPACE answers not sent yet; one more breaks the connection. */
#define NETRAM_ASKS_PENDING	16

struct netram_moved_req {
	struct nswap2l_move_job job;
	struct netram_server *srv;
	bool busy;			/* received, not answered */
	bool ready;			/* its answer can go */
	u32 tag;
	u32 connection;			/* srv->connections when it came */
	struct netram_server *to;	/* NULL: no server of ours has that id */
	u8 to_client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	unsigned int nr_keys;		/* sorted, no key twice */
	unsigned int nr_left;		/* once ready: the first ones of keys[] */
	u64 keys[NSWAP2L_PROTO_MAX_KEYS];
	DECLARE_BITMAP(taken, NSWAP2L_PROTO_MAX_KEYS);
	/* keys whose page the scan flagged, at homes[] */
	DECLARE_BITMAP(flagged, NSWAP2L_PROTO_MAX_KEYS);
	/* keys on the sender in a page the scan could not flag: their run stays */
	DECLARE_BITMAP(blocked, NSWAP2L_PROTO_MAX_KEYS);
	u64 pages[NSWAP2L_PROTO_MAX_KEYS];
	u64 homes[NSWAP2L_PROTO_MAX_KEYS];	/* as flagged, without the flag */
};

struct netram_ask_reply {
	u32 tag;
	u32 status;
	u32 connection;
	u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
};

struct netram_moved {
	/* under srv->lock */
	bool has_id;			/* the server sent its id on this connection */
	u8 server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];
	struct netram_ask_reply asks[NETRAM_ASKS_PENDING];
	unsigned int nr_asks;
	struct netram_moved_req reqs[NETRAM_MOVED_PENDING];
	/* the receiver's: one message's payload */
	struct {
		struct nswap2l_moved where;
		__le64 keys[NSWAP2L_PROTO_MAX_KEYS];
	} __packed rx;
	/* the sender's (send_mutex): the answer going out */
	__le64 tx[NSWAP2L_PROTO_MAX_KEYS];
};

int netram_moved_alloc(struct netram_server *srv)
{
	unsigned int i;

	/* Only a write-once tier never PUTs a key it holds (NSWAP2L_CAP_MOVED). */
	if (!srv->nt->tier.write_once)
		return 0;
	srv->moved = kvzalloc(sizeof(*srv->moved), GFP_KERNEL);
	if (!srv->moved)
		return -ENOMEM;
	for (i = 0; i < NETRAM_MOVED_PENDING; i++)
		srv->moved->reqs[i].srv = srv;
	return 0;
}

void netram_moved_free(struct netram_server *srv)
{
	kvfree(srv->moved);
}

void netram_moved_set_id(struct netram_server *srv, const u8 *server_id)
{
	struct netram_moved *mv = srv->moved;

	spin_lock_irq(&srv->lock);
	mv->has_id = server_id;
	if (server_id)
		memcpy(mv->server_id, server_id, sizeof(mv->server_id));
	spin_unlock_irq(&srv->lock);
}

void netram_transfer_held(struct netram_server *from, struct netram_server *to, u64 key,
			  unsigned int nr)
{
	unsigned long flags;

	/* As netram_release_key() and netram_hold_keys() count them, but no FREE. */
	spin_lock_irqsave(&from->lock, flags);
	atomic64_sub(nr, &from->held);
	if (netram_copy_lost(from, key))
		WRITE_ONCE(from->lost_held, from->lost_held - nr);
	spin_unlock_irqrestore(&from->lock, flags);
	spin_lock_irqsave(&to->lock, flags);
	atomic64_add(nr, &to->held);
	if (netram_copy_lost(to, key))
		WRITE_ONCE(to->lost_held, to->lost_held + nr);
	spin_unlock_irqrestore(&to->lock, flags);
}

void netram_move_held(struct netram_server *from, struct netram_server *to, u64 key,
		      unsigned int nr)
{
	netram_transfer_held(from, to, key, nr);
	atomic64_add(nr, &from->moved_out);
	atomic64_add(nr, &to->moved_in);
}

/*
 * Our server with @server_id, and our client id there in @client_id (if
 * not NULL); @connected: only if it takes pages now (up, not failed, not
 * draining).
 */
static struct netram_server *netram_server_by_id(struct netram_tier *nt, const u8 *server_id,
						 bool connected, u8 *client_id)
{
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];
		struct netram_moved *mv = srv->moved;
		bool found;

		if (!mv)
			continue;
		spin_lock_irq(&srv->lock);
		found = mv->has_id && !memcmp(mv->server_id, server_id, sizeof(mv->server_id)) &&
			srv->state != NETRAM_REMOVED &&
			(!connected || (srv->state == NETRAM_UP && !srv->draining));
		if (found && client_id)
			memcpy(client_id, srv->client_id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
		spin_unlock_irq(&srv->lock);
		if (found)
			return srv;
	}
	return NULL;
}

bool netram_moved_where(struct netram_server *to, struct nswap2l_moved *where)
{
	bool ok;

	if (!to->moved)
		return false;
	spin_lock_irq(&to->lock);
	ok = to->state == NETRAM_UP && !to->draining && to->moved->has_id;
	if (ok) {
		memcpy(where->server_id, to->moved->server_id, sizeof(where->server_id));
		memcpy(where->client_id, to->client_id, sizeof(where->client_id));
	}
	spin_unlock_irq(&to->lock);
	return ok;
}

/* @to takes pages of ours in the namespace @client_id now. */
static bool netram_takes_moved(struct netram_server *to, const u8 *client_id)
{
	bool ok;

	spin_lock_irq(&to->lock);
	ok = to->state == NETRAM_UP && !to->draining && to->moved->has_id &&
	     !memcmp(to->client_id, client_id, sizeof(to->client_id));
	spin_unlock_irq(&to->lock);
	return ok;
}

/*----------------------------------------------------------------
 * The job: one scan of the map
 *--------------------------------------------------------------*/

/* The index of @key in the request, or -1. */
static int netram_moved_index(const struct netram_moved_req *req, u64 key)
{
	unsigned int lo = 0, hi = req->nr_keys;

	if (!hi || key < req->keys[0] || key > req->keys[hi - 1])
		return -1;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (req->keys[mid] == key)
			return mid;
		if (req->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The slot naming server @to for the copy on @from, or 0 if another copy
 * of the page is on @to already.  One copy: both indexes are @from.
 */
static u64 netram_slot_moved(u64 slot, unsigned int from, unsigned int to)
{
	unsigned int first = netram_slot_server_index(slot, 0);
	unsigned int second = netram_slot_server_index(slot, 1);

	if (first == to || second == to)
		return 0;
	if (first == from)
		first = to;
	if (second == from)
		second = to;
	return (slot & ~(u64)GENMASK(NETRAM_SLOT_KEY_SHIFT - 1, 0)) |
	       second << NETRAM_SLOT_SERVER_BITS | first;
}

/* The key's page names @from: flag it, or (false) it changed or something else moves it. */
static bool netram_moved_flag(struct netram_moved_req *req, unsigned int i, u64 page, u64 entry)
{
	struct nswap2l_map *map = &req->srv->nt->tier.nc->map;

	/* Prefetching flagged it to copy it from the sender: it keeps its key there. */
	if ((entry & NSWAP2L_ENTRY_MIGRATING) || !nswap2l_map_flag_moving(map, page, entry))
		return false;
	__set_bit(i, req->flagged);
	req->pages[i] = page;
	req->homes[i] = entry;
	return true;
}

static void netram_moved_visit(struct nswap2l_move_job *job, u64 page)
{
	struct netram_moved_req *req = container_of(job, struct netram_moved_req, job);
	struct netram_server *from = req->srv, *to = req->to;
	struct netram_tier *nt = from->nt;
	struct nswap2l_map *map = &nt->tier.nc->map;
	u64 entry = nswap2l_map_lookup(map, page) & ~NSWAP2L_ENTRY_REFERENCED;
	u64 slot = nswap2l_entry_slot(entry), key = netram_slot_key(slot);
	int i = netram_moved_index(req, key);

	/* Looked at again: it may have left Network RAM since the mover saw it. */
	if (i < 0 || !entry || nswap2l_entry_tier(entry) != NSWAP2L_TIER_NETRAM)
		return;
	if (netram_scheme_moves_keys(nt)) {
		/*
		 * Its run moves (done) only if every page of it that names
		 * the sender is still flagged then: a run is never half moved.
		 */
		if (netram_slot_on(from, slot) && !netram_moved_flag(req, i, page, entry) &&
		    nswap2l_entry_home(nswap2l_map_lookup(map, page)) == nswap2l_entry_home(entry))
			__set_bit(i, req->blocked);
		return;
	}
	if (!netram_slot_on(from, slot)) {
		/* Moved by an earlier MOVED whose answer was lost: taken. */
		if (netram_slot_on(to, slot))
			__set_bit(i, req->taken);
		return;
	}
	if (!netram_slot_moved(slot, from->index, to->index) || netram_copy_lost(from, key) ||
	    netram_copy_lost(to, key) || !netram_takes_moved(to, req->to_client_id))
		return;
	netram_moved_flag(req, i, page, entry);
}

/* The flagged page of key @i names @to now, or (@take false, or a write came) stays. */
static bool netram_moved_relabel(struct netram_moved_req *req, unsigned int i, bool take)
{
	struct netram_server *from = req->srv, *to = req->to;
	struct nswap2l_map *map = &from->nt->tier.nc->map;
	u64 home = req->homes[i], slot = nswap2l_entry_slot(home);
	u64 moved = take ? netram_slot_moved(slot, from->index, to->index) : 0;

	if (!moved) {
		nswap2l_map_replace_flagged(map, req->pages[i], home, 0);
		return false;
	}
	/* Its other flags stay (the flag and the referenced bit are replace_flagged()'s). */
	moved = nswap2l_entry(NSWAP2L_TIER_NETRAM, moved) |
		(home & NSWAP2L_ENTRY_FLAGS & ~NSWAP2L_ENTRY_REFERENCED);
	return nswap2l_map_replace_flagged(map, req->pages[i], home, moved);
}

/* One server per page: each flagged page still flagged now moves on its own. */
static void netram_moved_settle_pages(struct netram_moved_req *req)
{
	struct netram_server *from = req->srv, *to = req->to;
	bool can_move = netram_takes_moved(to, req->to_client_id);
	unsigned int i;

	for_each_set_bit(i, req->flagged, req->nr_keys) {
		u64 key = req->keys[i];
		bool take = can_move && !netram_copy_lost(from, key) && !netram_copy_lost(to, key);

		if (netram_moved_relabel(req, i, take)) {
			__set_bit(i, req->taken);
			netram_move_held(from, to, key, 1);
		}
	}
}

/*
 * Runs move whole in the scheme's table (held counts follow), so a run
 * moves only if no page of it that names the sender is written meanwhile:
 * each flagged page must still be flagged (a page that changed its home
 * left the run: its key moves as a stale one).  Then the pages follow.
 * A write between the look and the replace clears a flag when the run has
 * moved already: that page is relabelled all the same, as the table says.
 */
static void netram_moved_settle_runs(struct netram_moved_req *req)
{
	struct nswap2l_map *map = &req->srv->nt->tier.nc->map;
	unsigned int i;

	for_each_set_bit(i, req->flagged, req->nr_keys) {
		u64 cur = nswap2l_map_lookup(map, req->pages[i]) & ~NSWAP2L_ENTRY_REFERENCED;

		if (cur != (req->homes[i] | NSWAP2L_ENTRY_MIGRATING) &&
		    nswap2l_entry_home(cur) == nswap2l_entry_home(req->homes[i]))
			__set_bit(i, req->blocked);
	}
	netram_scheme_move_keys(req->srv->nt, req->srv, req->to, req->keys, req->nr_keys,
				netram_takes_moved(req->to, req->to_client_id), req->blocked,
				req->taken);
	for_each_set_bit(i, req->flagged, req->nr_keys) {
		bool take = test_bit(i, req->taken);
		u64 moved;

		if (netram_moved_relabel(req, i, take) || !take)
			continue;
		moved = netram_slot_moved(nswap2l_entry_slot(req->homes[i]), req->srv->index,
					  req->to->index);
		if (moved)
			nswap2l_map_relabel(map, req->pages[i], req->homes[i],
					    nswap2l_entry(NSWAP2L_TIER_NETRAM, moved));
	}
}

/* The keys not taken, to answer with. */
static void netram_moved_answer(struct netram_moved_req *req)
{
	struct netram_server *srv = req->srv;
	unsigned int i, left = 0;

	for (i = 0; i < req->nr_keys; i++)
		if (!test_bit(i, req->taken))
			req->keys[left++] = req->keys[i];
	spin_lock_irq(&srv->lock);
	req->nr_left = left;
	req->ready = true;
	spin_unlock_irq(&srv->lock);
	if (left < req->nr_keys)
		DMINFO_LIMIT("%s: server %s moved %u pages to %s, %u stay",
			     netram_dev_name(srv->nt), srv->name, req->nr_keys - left,
			     req->to->name, left);
	netram_queue_io(srv);
}

static void netram_moved_done(struct nswap2l_move_job *job)
{
	struct netram_moved_req *req = container_of(job, struct netram_moved_req, job);

	/*
	 * Bios that saw the pages before they were flagged may still read or
	 * write them there (a write clears the flag when it maps).
	 */
	nswap2l_inflight_wait(&req->srv->nt->tier.nc->map.inflight);
	if (netram_scheme_moves_keys(req->srv->nt))
		netram_moved_settle_runs(req);
	else
		netram_moved_settle_pages(req);
	/*
	 * Bios that mapped a flagged page during that wait still name the
	 * sender; the answer lets it free their keys, so it waits for them.
	 */
	nswap2l_inflight_wait(&req->srv->nt->tier.nc->map.inflight);
	netram_moved_answer(req);
}

/*----------------------------------------------------------------
 * Receiving, answering
 *--------------------------------------------------------------*/
static int netram_receive_ask(struct netram_server *srv, const struct nswap2l_msg_header *hdr)
{
	struct netram_moved *mv = srv->moved;
	u8 server_id[NSWAP2L_PROTO_SERVER_ID_SIZE], client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	struct netram_ask_reply *reply;
	bool found;
	int r;

	if (le32_to_cpu(hdr->count) || le32_to_cpu(hdr->length) != sizeof(server_id))
		return -EPROTO;
	r = netram_xmit_buf(srv, srv->sock, false, server_id, sizeof(server_id), 0);
	if (!r)
		r = netram_check_rx(srv, hdr, server_id, sizeof(server_id), NULL, 0);
	if (r)
		return r;
	netram_note_free(srv, le64_to_cpu(hdr->free_pages));
	found = netram_server_by_id(srv->nt, server_id, true, client_id);

	spin_lock_irq(&srv->lock);
	if (mv->nr_asks == NETRAM_ASKS_PENDING) {
		spin_unlock_irq(&srv->lock);
		return -EPROTO;
	}
	reply = &mv->asks[mv->nr_asks++];
	reply->tag = le32_to_cpu(hdr->tag);
	reply->status = found ? NSWAP2L_OK : NSWAP2L_ERR_NOENT;
	reply->connection = srv->connections;
	memcpy(reply->client_id, client_id, sizeof(client_id));
	spin_unlock_irq(&srv->lock);
	netram_queue_io(srv);
	return 0;
}

static int netram_receive_moved_keys(struct netram_server *srv,
				     const struct nswap2l_msg_header *hdr)
{
	struct netram_moved *mv = srv->moved;
	u32 count = le32_to_cpu(hdr->count), length = le32_to_cpu(hdr->length);
	struct netram_moved_req *req = NULL;
	unsigned int i, n;
	int r;

	if (count > NSWAP2L_PROTO_MAX_KEYS ||
	    length != sizeof(mv->rx.where) + count * sizeof(__le64))
		return -EPROTO;
	r = netram_xmit_buf(srv, srv->sock, false, &mv->rx, length, 0);
	if (!r)
		r = netram_check_rx(srv, hdr, &mv->rx, length, NULL, 0);
	if (r)
		return r;
	netram_note_free(srv, le64_to_cpu(hdr->free_pages));

	spin_lock_irq(&srv->lock);
	for (i = 0; i < NETRAM_MOVED_PENDING && !req; i++)
		if (!mv->reqs[i].busy)
			req = &mv->reqs[i];
	if (req)
		req->busy = true;
	spin_unlock_irq(&srv->lock);
	if (!req)
		return -EPROTO;		/* more unanswered than we take */

	req->tag = le32_to_cpu(hdr->tag);
	req->connection = READ_ONCE(srv->connections);
	req->ready = false;
	for (i = 0; i < count; i++)
		req->keys[i] = le64_to_cpu(mv->rx.keys[i]);
	sort(req->keys, count, sizeof(u64), netram_cmp_u64, NULL);
	for (i = 0, n = 0; i < count; i++)
		if (!n || req->keys[i] != req->keys[n - 1])
			req->keys[n++] = req->keys[i];
	req->nr_keys = n;
	bitmap_zero(req->taken, NSWAP2L_PROTO_MAX_KEYS);
	bitmap_zero(req->flagged, NSWAP2L_PROTO_MAX_KEYS);
	bitmap_zero(req->blocked, NSWAP2L_PROTO_MAX_KEYS);
	/* Any state: a page moved there before is taken again, not refused. */
	req->to = netram_server_by_id(srv->nt, mv->rx.where.server_id, false, NULL);
	memcpy(req->to_client_id, mv->rx.where.client_id, sizeof(req->to_client_id));

	req->job.tier = &srv->nt->tier;
	req->job.visit = netram_moved_visit;
	req->job.done = netram_moved_done;
	/* Not published (it holds nothing), or the device is going away. */
	if (!req->nr_keys || !req->to || req->to == srv ||
	    READ_ONCE(srv->index) == NETRAM_NO_INDEX ||
	    READ_ONCE(req->to->index) == NETRAM_NO_INDEX ||
	    !nswap2l_queue_move(srv->nt->tier.nc, &req->job))
		netram_moved_answer(req);
	return 0;
}

int netram_receive_moved(struct netram_server *srv, const struct nswap2l_msg_header *hdr)
{
	/* Only to a client that announced it, on a connection where it is in effect. */
	if (!(READ_ONCE(srv->caps) & NSWAP2L_CAP_MOVED))
		return -EPROTO;
	if (le16_to_cpu(hdr->type) == NSWAP2L_MSG_ASK_NAMESPACE)
		return netram_receive_ask(srv, hdr);
	return netram_receive_moved_keys(srv, hdr);
}

/* An answer owed on this connection, under srv->lock; one of an old one is dropped. */
static bool netram_take_moved_reply(struct netram_server *srv, struct nswap2l_msg_header *hdr,
				    size_t *len)
{
	struct netram_moved *mv = srv->moved;
	unsigned int i, k;

	lockdep_assert_held(&srv->lock);
	while (mv->nr_asks) {
		struct netram_ask_reply *reply = &mv->asks[--mv->nr_asks];
		bool ok = reply->status == NSWAP2L_OK;

		if (reply->connection != srv->connections)
			continue;
		*len = ok ? sizeof(reply->client_id) : 0;
		memcpy(mv->tx, reply->client_id, *len);
		netram_fill_header(hdr, NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY, reply->tag,
				   0, *len);
		hdr->status = cpu_to_le32(reply->status);
		return true;
	}
	/* After resume, as EVICT answers: the moves wait for it too. */
	if (READ_ONCE(srv->nt->suspended))
		return false;
	for (i = 0; i < NETRAM_MOVED_PENDING; i++) {
		struct netram_moved_req *req = &mv->reqs[i];

		if (!req->busy || !req->ready)
			continue;
		req->busy = false;
		if (req->connection != srv->connections)
			continue;
		for (k = 0; k < req->nr_left; k++)
			mv->tx[k] = cpu_to_le64(req->keys[k]);
		*len = req->nr_left * sizeof(__le64);
		netram_fill_header(hdr, NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY, req->tag,
				   req->nr_left, *len);
		return true;
	}
	return false;
}

bool netram_next_moved_reply(struct netram_server *srv, struct netram_tx *tx)
{
	unsigned long flags;
	bool have;

	lockdep_assert_held(&srv->send_mutex);
	if (!srv->moved)
		return false;
	spin_lock_irqsave(&srv->lock, flags);
	have = netram_state_connected(srv->state) &&
	       netram_take_moved_reply(srv, &tx->hdr, &tx->keys_len);
	spin_unlock_irqrestore(&srv->lock, flags);
	if (!have)
		return false;
	tx->keys = srv->moved->tx;
	tx->bios = NULL;
	tx->nr_bios = 0;
	return true;
}
