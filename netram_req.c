// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM requests: bios (each a run of pages with consecutive keys)
 * are queued per server in arrival order and batched into PUT/GET messages
 * of up to the server's max_pages (Nswap's PUTPAGES; a bio is never cut,
 * the core keeps bios within that), with up to NETRAM_TAGS messages in
 * flight; freed keys
 * go out in FREE messages of NETRAM_FREE_BATCH keys or, with
 * NSWAP2L_CAP_PUT_FREES, ride on the next PUT (a FREE goes only when they
 * are due, netram_frees_due()).  The server answers a connection's requests
 * in order, so a GET never overtakes the PUT before it.
 *
 * Sending never blocks (nvme-tcp's io_work): the submitting task sends when
 * nobody else is (it saves a wakeup per request, as nbd does), otherwise
 * the io_work does; a full socket keeps the rest of its message in srv->tx
 * until write_space queues the io_work again.  So a server that stops
 * reading stalls nothing but its own requests, which its timeout then
 * fails.
 *
 * Replies are read by the receiver thread (netram_conn.c) and checked
 * against what was asked before anything is completed: a reply that does
 * not match a request in flight breaks the connection, never a bio.
 */
#include <linux/bsearch.h>
#include <linux/tcp.h>
#include <net/sock.h>

#include "netram.h"

static unsigned int netram_fault_free_hold_ms;
module_param_named(fault_free_hold_ms, netram_fault_free_hold_ms, uint, 0644);
MODULE_PARM_DESC(fault_free_hold_ms,
		 "Testing only: keys to free wait this many ms before their FREE goes, however many there are, as behind a slow link (0: off)");

void netram_queue_io(struct netram_server *srv)
{
	queue_work(srv->nt->wq, &srv->io_work);
}

static void netram_kick(struct netram_server *srv);

/*----------------------------------------------------------------
 * Queues
 *--------------------------------------------------------------*/

/* Back to the core, which puts a failed write elsewhere. */
static void netram_refuse_bio(struct bio *bio)
{
	bio->bi_status = BLK_STS_IOERR;
	bio_endio(bio);
}

/* The server cannot serve this bio: a read counts as its error. */
static void netram_fail_bio(struct netram_server *srv, struct bio *bio)
{
	if (bio_data_dir(bio) == READ)
		atomic64_inc(&srv->errors);
	netram_refuse_bio(bio);
}

void netram_fail_queued(struct netram_server *srv)
{
	struct bio_list bios = nswap2l_take_bios(&srv->lock, &srv->queue);
	struct bio *bio;

	while ((bio = bio_list_pop(&bios)))
		netram_fail_bio(srv, bio);
}

/* Nothing stored: the connection that would have sent it or had it out is gone. */
static void netram_copy_failed(struct netram_copy *c)
{
	bitmap_zero(c->stored, NSWAP2L_PROTO_MAX_COPY_KEYS);
	complete_all(&c->done);
}

void netram_queue_copy(struct netram_copy *c)
{
	struct netram_server *srv = c->from;
	unsigned long flags;
	bool queued;

	bitmap_zero(c->stored, NSWAP2L_PROTO_MAX_COPY_KEYS);
	reinit_completion(&c->done);
	/* Under the lock: a connection lost after this fails it (netram_requeue_unanswered()). */
	spin_lock_irqsave(&srv->lock, flags);
	queued = srv->state == NETRAM_UP && (READ_ONCE(srv->caps) & NSWAP2L_CAP_COPY);
	if (queued)
		list_add_tail(&c->list, &srv->copies);
	spin_unlock_irqrestore(&srv->lock, flags);
	if (queued)
		netram_kick(srv);
	else
		netram_copy_failed(c);
}

void netram_add_free_key(struct netram_server *srv, u64 key)
{
	lockdep_assert_held(&srv->lock);
	if (srv->nr_free_keys < NETRAM_FREE_QUEUE) {
		if (!srv->nr_free_keys)
			srv->free_since = jiffies;
		srv->free_keys[srv->nr_free_keys++] = key;
		if (key != NETRAM_HEARTBEAT_KEY)
			atomic64_inc(&srv->freeing);
		return;
	}
	/*
	 * Only when the server stays unreachable for long.  The page stays until
	 * the device goes: a server frees a client's pages a grace period after
	 * the client left.
	 */
	DMWARN_LIMIT("%s: server %s: FREE queue full, a page stays on the server",
		     netram_dev_name(srv->nt), srv->name);
}

/*
 * The queued keys must go in a FREE of their own now: always without
 * NSWAP2L_CAP_PUT_FREES; with it, when a FREE would be full, an EVICT
 * answer waits for them, or the oldest has waited NETRAM_FREE_DELAY (the
 * free_work then comes).  Never while the device is suspended.
 */
static bool netram_frees_due(struct netram_server *srv)
{
	unsigned long hold = msecs_to_jiffies(READ_ONCE(netram_fault_free_hold_ms));
	unsigned long due = srv->free_since + max(hold, (unsigned long)NETRAM_FREE_DELAY);

	lockdep_assert_held(&srv->lock);
	if (!srv->nr_free_keys || READ_ONCE(srv->nt->suspended))
		return false;
	if (hold && time_before(jiffies, due))
		goto later;
	if (!(READ_ONCE(srv->caps) & NSWAP2L_CAP_PUT_FREES) ||
	    srv->nr_free_keys >= NETRAM_FREE_BATCH || srv->evict.nr_ready ||
	    time_after_eq(jiffies, due))
		return true;
later:
	/* Pending already (maybe for an earlier key): it looks again when it runs. */
	queue_delayed_work(srv->nt->wq, &srv->free_work, due - jiffies);
	return false;
}

/* @msg's keys to free are answered, or go back to the queue: no longer in flight. */
static unsigned int netram_msg_frees_done(struct netram_server *srv, struct netram_msg *msg)
{
	const __le64 *frees = netram_msg_frees(msg);
	unsigned int i, nr = 0;

	for (i = 0; msg->type == NSWAP2L_MSG_FREE && i < msg->count; i++)
		nr += le64_to_cpu(msg->keys[i]) != NETRAM_HEARTBEAT_KEY;
	for (i = 0; i < msg->nr_frees; i++)
		nr += le64_to_cpu(frees[i]) != NETRAM_HEARTBEAT_KEY;
	atomic64_sub(nr, &srv->freeing);
	return nr;
}

void netram_queue_heartbeat(struct netram_server *srv)
{
	netram_add_free_key(srv, NETRAM_HEARTBEAT_KEY);
	srv->free_since = jiffies - NETRAM_FREE_DELAY;
}

bool netram_release_key(struct netram_server *srv, u64 key, bool written)
{
	lockdep_assert_held(&srv->lock);
	atomic64_dec(&srv->held);
	if (netram_copy_lost(srv, key)) {
		/* Gone with the server's namespace: nothing to free there. */
		WRITE_ONCE(srv->lost_held, srv->lost_held - 1);
		return false;
	}
	if (!written) {
		atomic64_inc(&srv->free_estimate);
		return false;
	}
	netram_add_free_key(srv, key);
	return netram_frees_due(srv);
}

/*----------------------------------------------------------------
 * Sending
 *--------------------------------------------------------------*/

/*
 * A bio with more pages than the server takes in one message: mapped before
 * a reconnect brought a smaller limit.  Failed (a write goes elsewhere).
 * One that comes up while batching ends the batch (it does not fit) and is
 * taken out before the next message.
 */
static void netram_take_oversized(struct netram_server *srv, struct bio_list *oversized)
{
	struct bio *bio;

	lockdep_assert_held(&srv->lock);
	while ((bio = bio_list_peek(&srv->queue)) && netram_bio_pages(bio) > srv->max_pages)
		bio_list_add(oversized, bio_list_pop(&srv->queue));
}

/*
 * The bios at the head of the queue wait for more of their kind to go with
 * them (NETRAM_BATCHING_DEPTH), unless they already fill a whole message.
 * Looks at no more than max_pages bios.
 */
static bool netram_held_back(struct netram_server *srv)
{
	struct bio *bio = bio_list_peek(&srv->queue);
	int dir = bio_data_dir(bio);
	unsigned int pages = 0;

	lockdep_assert_held(&srv->lock);
	if (srv->in_flight[dir] < NETRAM_BATCHING_DEPTH)
		return false;
	for (; bio && bio_data_dir(bio) == dir; bio = bio->bi_next) {
		pages += netram_bio_pages(bio);
		if (pages >= srv->max_pages)
			return false;
	}
	return true;
}

static int netram_msg_dir(const struct netram_msg *msg)
{
	return msg->type == NSWAP2L_MSG_PUT ? WRITE : READ;
}

/* PUTs and GETs are batched by how many are in flight (NETRAM_BATCHING_DEPTH). */
static bool netram_msg_batched(const struct netram_msg *msg)
{
	return msg->type == NSWAP2L_MSG_PUT || msg->type == NSWAP2L_MSG_GET;
}

/* A COPY's payload into its message: where, then the keys. */
static void netram_fill_copy(struct netram_msg *msg, struct netram_copy *c)
{
	__le64 *keys = (__le64 *)((u8 *)msg->keys + sizeof(c->where));
	unsigned int i;

	BUILD_BUG_ON(sizeof(c->where) % sizeof(__le64));
	BUILD_BUG_ON(netram_copy_len(NSWAP2L_PROTO_MAX_COPY_KEYS) > sizeof(msg->keys));
	msg->type = NSWAP2L_MSG_COPY;
	msg->copy = c;
	msg->count = c->nr_keys;
	memcpy(msg->keys, &c->where, sizeof(c->where));
	for (i = 0; i < c->nr_keys; i++)
		keys[i] = cpu_to_le64(c->keys[i]);
}

/* A PUT carries keys to free (NSWAP2L_CAP_PUT_FREES), after its seals. */
static void netram_take_put_frees(struct netram_server *srv, struct netram_msg *msg)
{
	__le64 *frees = netram_msg_frees(msg);

	lockdep_assert_held(&srv->lock);
	/* A suspended device frees nothing. */
	if (!(READ_ONCE(srv->caps) & NSWAP2L_CAP_PUT_FREES) || READ_ONCE(srv->nt->suspended))
		return;
	while (srv->nr_free_keys && msg->nr_frees < NSWAP2L_PROTO_MAX_PUT_FREES)
		frees[msg->nr_frees++] = cpu_to_le64(srv->free_keys[--srv->nr_free_keys]);
}

/* Take the next request message from the queues. */
static struct netram_msg *netram_next_msg(struct netram_server *srv, u32 *tag,
					  struct bio_list *oversized)
{
	struct netram_copy *copy;
	struct netram_msg *msg;
	struct bio *bio;
	bool free;

	lockdep_assert_held(&srv->lock);
	if (!netram_state_connected(srv->state) || srv->busy_tags == GENMASK(NETRAM_TAGS - 1, 0))
		return NULL;
	/* A suspended device sends nothing of its own accord. */
	free = netram_frees_due(srv);
	copy = list_first_entry_or_null(&srv->copies, struct netram_copy, list);
	netram_take_oversized(srv, oversized);
	if (!free && !copy && !srv->release_wanted &&
	    (bio_list_empty(&srv->queue) || netram_held_back(srv)))
		return NULL;

	*tag = ffz(srv->busy_tags);
	msg = &srv->msgs[*tag];
	msg->count = 0;
	msg->nr_bios = 0;
	msg->nr_frees = 0;
	msg->copy = NULL;
	if (srv->release_wanted) {
		/* the device is gone: nothing else is queued, nothing comes after */
		srv->release_wanted = false;
		msg->type = NSWAP2L_MSG_RELEASE;
	} else if (copy && !free) {
		list_del(&copy->list);
		netram_fill_copy(msg, copy);
	} else if (free) {
		msg->type = NSWAP2L_MSG_FREE;
		while (srv->nr_free_keys && msg->count < NETRAM_FREE_BATCH)
			msg->keys[msg->count++] =
				cpu_to_le64(srv->free_keys[--srv->nr_free_keys]);
	} else {
		bool write = bio_data_dir(bio_list_peek(&srv->queue)) == WRITE;

		msg->type = write ? NSWAP2L_MSG_PUT : NSWAP2L_MSG_GET;
		srv->in_flight[netram_msg_dir(msg)]++;
		while ((bio = bio_list_peek(&srv->queue)) &&
		       (bio_data_dir(bio) == WRITE) == write &&
		       msg->count + netram_bio_pages(bio) <= srv->max_pages) {
			u64 key = NSWAP2L_SECTOR_TO_PAGE(bio->bi_iter.bi_sector);
			unsigned int i;

			bio_list_pop(&srv->queue);
			for (i = 0; i < netram_bio_pages(bio); i++)
				msg->keys[msg->count++] = cpu_to_le64(key + i);
			msg->bios[msg->nr_bios++] = bio;
		}
		if (write)
			netram_take_put_frees(srv, msg);
	}
	__set_bit(*tag, &srv->busy_tags);
	msg->seq = srv->next_seq++;
	msg->state = NETRAM_MSG_SEALING;
	srv->last_sent = jiffies;
	return msg;
}

/*
 * A PUT that found no bounce pages goes back to the head of the queue, its
 * keys to free back to theirs, its tag free again: it is taken anew once a
 * PUT gives pages back.
 */
static void netram_unwind_msg(struct netram_server *srv, struct netram_msg *msg)
{
	struct bio_list bios = BIO_EMPTY_LIST;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&srv->lock, flags);
	for (i = 0; i < msg->nr_bios; i++)
		bio_list_add(&bios, msg->bios[i]);
	bio_list_merge_head(&srv->queue, &bios);
	netram_msg_frees_done(srv, msg);
	for (i = 0; i < msg->nr_frees; i++)
		netram_add_free_key(srv, le64_to_cpu(netram_msg_frees(msg)[i]));
	msg->nr_bios = 0;
	msg->nr_frees = 0;
	srv->in_flight[netram_msg_dir(msg)]--;
	__clear_bit(msg - srv->msgs, &srv->busy_tags);
	spin_unlock_irqrestore(&srv->lock, flags);
}

/* The message's MAC is computed: from now on it is going out, and its timeout runs. */
static void netram_msg_sending(struct netram_server *srv, struct netram_msg *msg)
{
	unsigned long flags;

	spin_lock_irqsave(&srv->lock, flags);
	msg->state = NETRAM_MSG_SENDING;
	msg->sent_at = jiffies;
	spin_unlock_irqrestore(&srv->lock, flags);
	atomic64_inc(&srv->requests);
}

/*
 * An answer to EVICT that eviction made ready (netram_evict.c), once the
 * FREEs of the pages moved are all out, and not while the device is
 * suspended.
 */
static bool netram_next_evict_reply(struct netram_server *srv, struct netram_evict_reply *reply)
{
	struct netram_eviction *ev = &srv->evict;

	lockdep_assert_held(&srv->lock);
	/* A server that timed out but is still connected is still answered. */
	if (!netram_state_connected(srv->state) || srv->nr_free_keys ||
	    READ_ONCE(srv->nt->suspended))
		return false;
	while (ev->nr_ready) {
		*reply = ev->ready[--ev->nr_ready];
		/* A server forgets the EVICTs of a connection that broke. */
		if (reply->connection == srv->connections)
			return true;
	}
	return false;
}

/* Put the next message (a request, else an EVICT answer) in srv->tx. */
static bool netram_next_tx(struct netram_server *srv)
{
	struct netram_tx *tx = &srv->tx;
	struct bio_list oversized = BIO_EMPTY_LIST;
	struct netram_evict_reply reply;
	struct netram_msg *msg;
	unsigned long flags;
	bool have_reply = false;
	struct bio *bio;
	u32 tag;
	int r;

	spin_lock_irqsave(&srv->lock, flags);
	msg = netram_next_msg(srv, &tag, &oversized);
	if (!msg)
		have_reply = netram_next_evict_reply(srv, &reply);
	spin_unlock_irqrestore(&srv->lock, flags);
	/* Not the server's fault: the core sends them again in pieces. */
	while ((bio = bio_list_pop(&oversized)))
		netram_refuse_bio(bio);

	if (msg && msg->type == NSWAP2L_MSG_PUT) {
		r = netram_seal_put(srv, msg);
		if (r == -EAGAIN) {
			netram_unwind_msg(srv, msg);
			return false;
		}
		/* Never a page in clear when the tier protects them. */
		if (r || (srv->nt->protect && !msg->sealed))
			goto broken;
		tx->keys = msg->keys;
		tx->keys_len = msg->count * (sizeof(__le64) + NSWAP2L_PROTO_SEAL_SIZE) +
			       msg->nr_frees * sizeof(__le64);
		/* protect=: the bounce pages, in one bio */
		tx->bios = msg->sealed ? &msg->sealed : msg->bios;
		tx->nr_bios = msg->sealed ? 1 : msg->nr_bios;
		netram_fill_header(&tx->hdr, msg->type, tag, msg->count,
				   tx->keys_len + msg->count * NSWAP2L_PROTO_PAGE_SIZE);
	} else if (msg) {
		tx->keys = msg->keys;
		tx->keys_len = msg->type == NSWAP2L_MSG_COPY ? netram_copy_len(msg->count) :
			       msg->count * sizeof(__le64);
		tx->bios = NULL;
		tx->nr_bios = 0;
		netram_fill_header(&tx->hdr, msg->type, tag, msg->count, tx->keys_len);
	} else if (have_reply) {
		tx->keys = NULL;
		tx->keys_len = 0;
		tx->bios = NULL;
		tx->nr_bios = 0;
		netram_fill_header(&tx->hdr, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, reply.tag,
				   reply.count, 0);
		tx->hdr.status = cpu_to_le32(reply.status);
	} else if (!netram_next_moved_reply(srv, tx)) {
		return false;
	}
	if (netram_seal_tx(srv))
		goto broken;
	tx->msg = msg;
	if (msg)
		netram_msg_sending(srv, msg);
	tx->len = sizeof(tx->hdr) + le32_to_cpu(tx->hdr.length) + sizeof(tx->mac);
	tx->sent = 0;
	return true;

broken:
	/*
	 * hmac(sha256) and a synchronous AEAD do not fail once keyed: a bug,
	 * not the server's.  The message goes again on the next connection.
	 */
	WARN_ON_ONCE(1);
	netram_shutdown_sock(srv, false);
	return false;
}

/*
 * PUT data from @off bytes on: up to NETRAM_TX_SEGMENTS page segments of
 * the message's bios in @bvecs; returns how many, with their bytes in *@len.
 */
static unsigned int netram_tx_data(struct netram_tx *tx, size_t off, struct bio_vec *bvecs,
				   size_t *len)
{
	unsigned int i, n = 0;

	*len = 0;
	for (i = 0; i < tx->nr_bios && n < NETRAM_TX_SEGMENTS; i++) {
		struct bio *bio = tx->bios[i];
		struct bvec_iter it = bio->bi_iter;
		struct bio_vec bv;

		if (off >= it.bi_size) {
			off -= it.bi_size;
			continue;
		}
		bio_advance_iter(bio, &it, off);
		off = 0;
		__bio_for_each_segment(bv, bio, it, it) {
			if (n == NETRAM_TX_SEGMENTS)
				break;
			bvecs[n++] = bv;
			*len += bv.bv_len;
		}
	}
	return n;
}

/* What is left of srv->tx: 0 once all of it went, -EAGAIN if the socket is full. */
static int netram_send_tx(struct netram_server *srv)
{
	struct netram_tx *tx = &srv->tx;
	size_t head_len = sizeof(tx->hdr) + tx->keys_len;
	size_t mac_start = tx->len - sizeof(tx->mac);

	while (tx->sent < tx->len) {
		struct bio_vec bvecs[NETRAM_TX_SEGMENTS];
		struct kvec vec[3] = {
			{ &tx->hdr, sizeof(tx->hdr) },
			{ (void *)tx->keys, tx->keys_len },
			{ tx->mac, sizeof(tx->mac) },
		};
		struct iov_iter iter;
		int r;

		if (tx->sent < head_len) {
			/* header and keys, and the MAC when no data comes between */
			unsigned int nr = head_len == mac_start ? 3 : 2;
			size_t end = nr == 3 ? tx->len : head_len;

			iov_iter_kvec(&iter, ITER_SOURCE, vec, nr, end);
			iov_iter_advance(&iter, tx->sent);
			r = netram_send_nowait(srv, &iter, end == tx->len ? 0 : MSG_MORE);
		} else if (tx->sent < mac_start) {
			/* PUT data: the bios' pages, from where the socket stopped. */
			size_t len;
			unsigned int n = netram_tx_data(tx, tx->sent - head_len, bvecs, &len);

			r = netram_send_pages_nowait(srv, bvecs, n, len, MSG_MORE);
		} else {
			iov_iter_kvec(&iter, ITER_SOURCE, &vec[2], 1, sizeof(tx->mac));
			iov_iter_advance(&iter, tx->sent - mac_start);
			r = netram_send_nowait(srv, &iter, 0);
		}
		if (r < 0)
			return r;
		tx->sent += r;
	}
	return 0;
}

/* Send everything that can go now; the caller holds send_mutex. */
static void netram_send_queued(struct netram_server *srv)
{
	int r;

	for (;;) {
		if (!srv->tx.len && !netram_next_tx(srv))
			return;
		r = netram_send_tx(srv);
		if (r == -EAGAIN)
			return;		/* write_space queues the io_work */
		if (r) {
			/* The receiver sees the shut-down socket and resends. */
			netram_shutdown_sock(srv, false);
			return;
		}
		if (srv->tx.msg) {
			unsigned long flags;

			spin_lock_irqsave(&srv->lock, flags);
			srv->tx.msg->state = NETRAM_MSG_SENT;
			spin_unlock_irqrestore(&srv->lock, flags);
		}
		srv->tx.len = 0;
		/*
		 * TCP autocorking holds back a message's last partial segment while
		 * earlier ones wait for TX completion, which a slow NIC (an emulated
		 * one takes ~40 ms) turns into latency; setting NODELAY again pushes
		 * it out now.
		 */
		tcp_sock_set_nodelay(srv->sock->sk);
	}
}

static void netram_send_all(struct netram_server *srv)
{
	mutex_lock(&srv->send_mutex);
	netram_send_queued(srv);
	mutex_unlock(&srv->send_mutex);
}

void netram_io_work(struct work_struct *work)
{
	netram_send_all(container_of(work, struct netram_server, io_work));
}

/*
 * Keys to free that no PUT carried, due now.  It sends them itself: the
 * io_work may arm it, never the reverse, so netram_stop_server() cancels
 * the io_work, then this, and leaves nothing pending.
 */
void netram_free_work(struct work_struct *work)
{
	netram_send_all(container_of(to_delayed_work(work), struct netram_server, free_work));
}

/* A connection broke: its half-sent message goes again, whole, on the next. */
void netram_reset_tx(struct netram_server *srv)
{
	srv->tx.len = 0;
}

/* Get queued requests sent: by this task if nobody else is sending. */
static void netram_kick(struct netram_server *srv)
{
	if (mutex_trylock(&srv->send_mutex)) {
		netram_send_queued(srv);
		mutex_unlock(&srv->send_mutex);
	} else {
		netram_queue_io(srv);
	}
}

/*
 * A task that plugs (swap-in readahead, reclaim writing pages out) hands
 * over several pages at once: send them when it unplugs, in one message,
 * not the first ones alone (md's raid1 batches its writes the same way).
 */
struct netram_plug {
	struct blk_plug_cb cb;
	unsigned long servers;		/* bit per server with bios queued */
};

static void netram_unplug(struct blk_plug_cb *cb, bool from_schedule)
{
	struct netram_plug *plug = container_of(cb, struct netram_plug, cb);
	struct netram_tier *nt = cb->data;
	unsigned int i;

	for_each_set_bit(i, &plug->servers, NETRAM_MAX_SERVERS) {
		/* From schedule() the task must not even take a mutex. */
		if (from_schedule)
			netram_queue_io(nt->servers[i]);
		else
			netram_kick(nt->servers[i]);
	}
	kfree(plug);
}

/*
 * Returns false if the caller does not plug (or the GFP_ATOMIC cb failed).
 * Only a task's own submissions: a bio from a worker must not join the plug
 * of whichever task the worker runs for.
 */
static bool netram_defer_to_unplug(struct netram_server *srv)
{
	struct blk_plug_cb *cb;

	if (!in_task())
		return false;
	cb = blk_check_plugged(netram_unplug, srv->nt, sizeof(struct netram_plug));
	if (!cb)
		return false;
	__set_bit(srv->index, &container_of(cb, struct netram_plug, cb)->servers);
	return true;
}

void netram_queue_bio(struct netram_server *srv, struct bio *bio)
{
	u64 key = NSWAP2L_SECTOR_TO_PAGE(bio->bi_iter.bi_sector);
	unsigned long flags;
	bool failed;

	/* Under the lock: nothing for a lost key is queued after the loss. */
	spin_lock_irqsave(&srv->lock, flags);
	failed = srv->failed || key < srv->lost_below;
	if (!failed)
		bio_list_add(&srv->queue, bio);
	spin_unlock_irqrestore(&srv->lock, flags);

	if (failed)
		netram_fail_bio(srv, bio);
	else if (!netram_defer_to_unplug(srv))
		netram_kick(srv);
}

/*----------------------------------------------------------------
 * Receiving
 *--------------------------------------------------------------*/
static void netram_release_tag(struct netram_server *srv, u32 tag)
{
	bool waiting, freed;

	spin_lock_irq(&srv->lock);
	__clear_bit(tag, &srv->busy_tags);
	freed = netram_msg_frees_done(srv, &srv->msgs[tag]);
	if (netram_msg_batched(&srv->msgs[tag]))
		srv->in_flight[netram_msg_dir(&srv->msgs[tag])]--;
	/* a free tag matters only to requests that may be waiting for one */
	waiting = netram_frees_due(srv) || !bio_list_empty(&srv->queue) ||
		  !list_empty(&srv->copies);
	spin_unlock_irq(&srv->lock);
	if (freed)
		netram_update_capacity(srv->nt);
	if (waiting)
		netram_queue_io(srv);
}

static struct netram_refusal *netram_find_refusal(struct netram_server *srv, u64 key)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(srv->refusals); i++)
		if (srv->refusals[i].key == key)
			return &srv->refusals[i];
	return NULL;
}

/*
 * NSWAP2L_CAP_SEALED_GET: the @bad pages of @msg failed their seals, which
 * alone check their bytes.  True if each was refused on NETRAM_SEAL_RETRIES
 * connections in a row before this one too: the server holds them altered,
 * and their reads fail.  Else none of them is trusted to be the server's
 * doing: they are recorded, and the caller breaks the connection as for a
 * wrong MAC, so that the GET goes again.  Only one message per connection
 * gets here without breaking it, so the pages of the last connection are
 * never pushed out of the record by this one's.
 */
static bool netram_refused_again(struct netram_server *srv, struct netram_msg *msg,
				 const unsigned long *bad)
{
	u8 times[NSWAP2L_PROTO_MAX_PAGES];
	unsigned int page, i = 0;
	bool again = true;

	for_each_set_bit(page, bad, msg->count) {
		struct netram_refusal *rf = netram_find_refusal(srv, le64_to_cpu(msg->keys[page]));

		times[page] = rf && rf->connection == srv->connections - 1 ?
			      min_t(u32, rf->times, NETRAM_SEAL_RETRIES) + 1 : 1;
		again &= times[page] > NETRAM_SEAL_RETRIES;
	}
	for_each_set_bit(page, bad, msg->count) {
		u64 key = le64_to_cpu(msg->keys[page]);
		struct netram_refusal *rf = netram_find_refusal(srv, key);

		if (again) {
			if (rf)
				rf->key = 0;	/* no page has key 0 */
			continue;
		}
		/* At most a message's pages are of this connection: one is free. */
		for (; !rf && i < ARRAY_SIZE(srv->refusals); i++)
			if (srv->refusals[i].connection != srv->connections)
				rf = &srv->refusals[i];
		if (WARN_ON_ONCE(!rf))
			break;
		*rf = (struct netram_refusal){ key, srv->connections, times[page] };
		DMWARN_LIMIT("%s: server %s: page key %llu fails its seal (changed on the way?): reading it again",
			     netram_dev_name(srv->nt), srv->name, key);
	}
	return again;
}

static int netram_complete_get(struct netram_server *srv, struct netram_msg *msg,
			       const struct nswap2l_msg_header *hdr)
{
	u32 status = le32_to_cpu(hdr->status), length = le32_to_cpu(hdr->length);
	/* The pages' seals check their bytes, the MAC the rest. */
	bool sealed = READ_ONCE(srv->caps) & NSWAP2L_CAP_SEALED_GET;
	struct nswap2l_seal *seals = netram_msg_seals(msg);
	size_t seals_len = msg->count * sizeof(*seals);
	DECLARE_BITMAP(bad, NSWAP2L_PROTO_MAX_PAGES);
	unsigned int i, page;
	int r;

	if (status == NSWAP2L_OK) {
		if (length != seals_len + msg->count * NSWAP2L_PROTO_PAGE_SIZE)
			return -EPROTO;
		r = netram_xmit_buf(srv, srv->sock, false, seals, seals_len, 0);
		for (i = 0; i < msg->nr_bios && !r; i++)
			r = netram_recv_bio(srv, msg->bios[i]);
		/* Pages that fail their MAC are read again, never completed. */
		if (!r)
			r = netram_check_rx(srv, hdr, seals, seals_len, sealed ? NULL : msg->bios,
					    sealed ? 0 : msg->nr_bios);
		if (r)
			return r;
		bitmap_zero(bad, NSWAP2L_PROTO_MAX_PAGES);
		for (i = 0, page = 0; i < msg->nr_bios; i++) {
			netram_open_bio(srv, msg->bios[i], &msg->keys[page], &seals[page], bad, page);
			page += netram_bio_pages(msg->bios[i]);
		}
		if (sealed && !bitmap_empty(bad, msg->count) && !netram_refused_again(srv, msg, bad))
			return -EBADMSG;
		netram_note_free(srv, le64_to_cpu(hdr->free_pages));
		for_each_set_bit(page, bad, msg->count)
			netram_refuse_page(srv, le64_to_cpu(msg->keys[page]));
		for (i = 0, page = 0; i < msg->nr_bios; i++) {
			struct bio *bio = msg->bios[i];
			unsigned int pages = netram_bio_pages(bio);	/* not after it ends */

			/* The server's own doing: EIO, or the other copy. */
			if (find_next_bit(bad, page + pages, page) < page + pages)
				netram_fail_bio(srv, bio);
			else
				bio_endio(bio);
			page += pages;
		}
		return 0;
	}
	if (status != NSWAP2L_ERR_NOENT || length)
		return -EPROTO;
	/* The server lost pages it had taken (restarted?): never return zeros. */
	DMERR_LIMIT("%s: server %s does not have %u page(s) it stored",
		    netram_dev_name(srv->nt), srv->name, msg->count);
	for (i = 0; i < msg->nr_bios; i++)
		netram_fail_bio(srv, msg->bios[i]);
	return 0;
}

static int netram_complete_put(struct netram_server *srv, struct netram_msg *msg,
			       u32 status, u32 length)
{
	unsigned int i;

	if (length || (status != NSWAP2L_OK && status != NSWAP2L_ERR_NOSPC))
		return -EPROTO;
	if (status == NSWAP2L_ERR_NOSPC)
		atomic64_set(&srv->free_estimate, 0);	/* until it says otherwise */
	if (netram_release_sealed(srv, msg))
		netram_queue_io(srv);
	for (i = 0; i < msg->nr_bios; i++) {
		if (status == NSWAP2L_OK)
			bio_endio(msg->bios[i]);
		else
			netram_fail_bio(srv, msg->bios[i]);
	}
	return 0;
}

/*
 * The keys of an EVICT or a COPY reply, as many as its count says, into the
 * receiver's srv->evict_buf (NSWAP2L_PROTO_MAX_KEYS), their MAC checked.
 */
static int netram_receive_keys(struct netram_server *srv, const struct nswap2l_msg_header *hdr)
{
	u32 count = le32_to_cpu(hdr->count), length = le32_to_cpu(hdr->length);
	int r;

	if (count > NSWAP2L_PROTO_MAX_KEYS || length != count * sizeof(__le64))
		return -EPROTO;
	r = netram_xmit_buf(srv, srv->sock, false, srv->evict_buf, length, 0);
	if (!r)
		r = netram_check_rx(srv, hdr, srv->evict_buf, length, NULL, 0);
	if (!r)
		netram_note_free(srv, le64_to_cpu(hdr->free_pages));
	return r;
}

/*
 * The keys the COPY's peer stored, each one of those asked and named once
 * (in key order, as asked), or the server is broken or hostile.
 */
static int netram_complete_copy(struct netram_server *srv, struct netram_msg *msg,
				const struct nswap2l_msg_header *hdr)
{
	u32 status = le32_to_cpu(hdr->status), length = le32_to_cpu(hdr->length);
	u32 i, count = le32_to_cpu(hdr->count);	/* at most the keys asked */
	struct netram_copy *c = msg->copy;
	int r;

	/*
	 * Zeroed when queued, and again when an error here closes the
	 * connection (netram_requeue_unanswered()): nobody looks before done.
	 */
	if (status != NSWAP2L_OK) {
		/* its MAC checked by netram_receive_one() */
		if (count || length || (status != NSWAP2L_ERR_NOENT && status != NSWAP2L_ERR_NOSPC))
			return -EPROTO;
	} else {
		r = netram_receive_keys(srv, hdr);
		if (r)
			return r;
		for (i = 0; i < count; i++) {
			u64 key = le64_to_cpu(srv->evict_buf[i]);
			u64 *at = bsearch(&key, c->keys, c->nr_keys, sizeof(u64), netram_cmp_u64);

			if (!at || __test_and_set_bit(at - c->keys, c->stored))
				return -EPROTO;
		}
	}
	msg->copy = NULL;
	complete_all(&c->done);
	return 0;
}

static enum netram_msg_state netram_msg_state(struct netram_server *srv,
					      struct netram_msg *msg)
{
	enum netram_msg_state state;

	spin_lock_irq(&srv->lock);
	state = msg->state;
	spin_unlock_irq(&srv->lock);
	return state;
}

/*
 * The request of a reply was wholly sent.  One still being sealed was not
 * even begun; one being sent may have gone whole with the sender about to
 * mark it, which it does before it lets go of send_mutex.
 */
static bool netram_wholly_sent(struct netram_server *srv, struct netram_msg *msg)
{
	switch (netram_msg_state(srv, msg)) {
	case NETRAM_MSG_SENT:
		return true;
	case NETRAM_MSG_SEALING:
		return false;
	case NETRAM_MSG_SENDING:
		break;
	}
	mutex_lock(&srv->send_mutex);
	mutex_unlock(&srv->send_mutex);
	return netram_msg_state(srv, msg) == NETRAM_MSG_SENT;
}

/* The keys a server asks back, checked, go to eviction (the evict event). */
static int netram_receive_evict(struct netram_server *srv, const struct nswap2l_msg_header *hdr)
{
	u32 count = le32_to_cpu(hdr->count);
	int r;

	if (!count)
		return -EPROTO;
	r = netram_receive_keys(srv, hdr);
	if (r)
		return r;
	return srv->ev->evict(srv, le32_to_cpu(hdr->tag), srv->evict_buf, count);
}

/* Read and act on one message from the server; an error breaks the connection. */
int netram_receive_one(struct netram_server *srv)
{
	struct nswap2l_msg_header hdr;
	struct netram_msg *msg;
	u32 tag, count, length, status;
	u16 type;
	int r;

	r = netram_xmit_buf(srv, srv->sock, false, &hdr, sizeof(hdr), 0);
	if (r)
		return r;
	type = le16_to_cpu(hdr.type);
	tag = le32_to_cpu(hdr.tag);
	count = le32_to_cpu(hdr.count);
	length = le32_to_cpu(hdr.length);
	status = le32_to_cpu(hdr.status);
	if (le32_to_cpu(hdr.magic) != NSWAP2L_PROTO_MAGIC || hdr.flags)
		return -EPROTO;

	if (type == NSWAP2L_MSG_CAPACITY) {
		if (count || length)
			return -EPROTO;
		r = netram_check_rx(srv, &hdr, NULL, 0, NULL, 0);
		if (!r)
			netram_note_free(srv, le64_to_cpu(hdr.free_pages));
		return r;
	}
	if (type == NSWAP2L_MSG_EVICT)
		return netram_receive_evict(srv, &hdr);
	if (type == NSWAP2L_MSG_ASK_NAMESPACE || type == NSWAP2L_MSG_MOVED)
		return netram_receive_moved(srv, &hdr);
	if (!(type & NSWAP2L_MSG_REPLY) || tag >= NETRAM_TAGS)
		return -EPROTO;
	type &= ~NSWAP2L_MSG_REPLY;

	spin_lock_irq(&srv->lock);
	msg = &srv->msgs[tag];
	/* A COPY's reply names the keys stored, up to those asked. */
	if (!test_bit(tag, &srv->busy_tags) || msg->type != type ||
	    (type == NSWAP2L_MSG_COPY ? count > msg->count : msg->count != count))
		msg = NULL;
	spin_unlock_irq(&srv->lock);
	if (!msg)
		return -EPROTO;
	if (!netram_wholly_sent(srv, msg)) {
		DMERR_LIMIT("%s: server %s answered a request before it was wholly sent",
			    netram_dev_name(srv->nt), srv->name);
		return -EPROTO;
	}
	/* A GET's pages and a COPY's keys come first; any other reply is whole. */
	if ((type != NSWAP2L_MSG_GET && type != NSWAP2L_MSG_COPY) || status != NSWAP2L_OK) {
		r = netram_check_rx(srv, &hdr, NULL, 0, NULL, 0);
		if (r)
			return r;
		netram_note_free(srv, le64_to_cpu(hdr.free_pages));
	}

	switch (type) {
	case NSWAP2L_MSG_GET:
		r = netram_complete_get(srv, msg, &hdr);
		break;
	case NSWAP2L_MSG_PUT:
		r = netram_complete_put(srv, msg, status, length);
		break;
	case NSWAP2L_MSG_FREE:
	case NSWAP2L_MSG_RELEASE:
		r = length || status != NSWAP2L_OK ? -EPROTO : 0;
		break;
	case NSWAP2L_MSG_COPY:
		r = netram_complete_copy(srv, msg, &hdr);
		break;
	default:
		r = -EPROTO;
	}
	if (!r)
		netram_release_tag(srv, tag);
	if (!r && type == NSWAP2L_MSG_RELEASE) {
		/* The server closes the connection: never open the freed namespace again. */
		mutex_lock(&srv->sock_mutex);
		srv->stopping = true;
		mutex_unlock(&srv->sock_mutex);
		complete(&srv->released);
		r = -ESHUTDOWN;
	}
	return r;
}

/*
 * Unanswered requests go back to the front of the queues, in send order;
 * COPYs, sent or not, fail: a server frees the copies of a connection
 * that closed before their reply.
 */
void netram_requeue_unanswered(struct netram_server *srv)
{
	struct bio_list resend = BIO_EMPTY_LIST;
	struct netram_copy *c, *next;
	unsigned long pending;
	bool kick = false;

	spin_lock_irq(&srv->lock);
	list_for_each_entry_safe(c, next, &srv->copies, list) {
		list_del(&c->list);
		netram_copy_failed(c);
	}
	pending = srv->busy_tags;
	while (pending) {
		struct netram_msg *msg = NULL;
		unsigned int tag, i;

		for_each_set_bit(tag, &pending, NETRAM_TAGS)
			if (!msg || srv->msgs[tag].seq < msg->seq)
				msg = &srv->msgs[tag];
		__clear_bit(msg - srv->msgs, &pending);
		if (msg->copy) {
			netram_copy_failed(msg->copy);
			msg->copy = NULL;
		}

		/* sealed again when sent again, under a new nonce */
		kick |= netram_release_sealed(srv, msg);
		for (i = 0; i < msg->nr_bios; i++)
			bio_list_add(&resend, msg->bios[i]);
		netram_msg_frees_done(srv, msg);
		for (i = 0; msg->type == NSWAP2L_MSG_FREE && i < msg->count; i++)
			netram_add_free_key(srv, le64_to_cpu(msg->keys[i]));
		for (i = 0; i < msg->nr_frees; i++)
			netram_add_free_key(srv, le64_to_cpu(netram_msg_frees(msg)[i]));
	}
	srv->busy_tags = 0;
	memset(srv->in_flight, 0, sizeof(srv->in_flight));
	bio_list_merge_head(&srv->queue, &resend);
	spin_unlock_irq(&srv->lock);
	if (kick)
		netram_queue_io(srv);
}

/* A request has waited longer than @timeout. */
bool netram_overdue(struct netram_server *srv, unsigned long timeout)
{
	unsigned int tag;

	lockdep_assert_held(&srv->lock);
	for_each_set_bit(tag, &srv->busy_tags, NETRAM_TAGS)
		if (srv->msgs[tag].state != NETRAM_MSG_SEALING &&
		    time_after(jiffies, srv->msgs[tag].sent_at + timeout))
			return true;
	return false;
}
