// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM connections: one TCP connection and one receiver thread per
 * server.  The receiver connects, proves the key (netram_auth.c), then
 * reads and completes replies until the connection breaks; it reconnects
 * with back-off and the unanswered requests are sent again.  Sending never
 * happens here: it is the non-blocking io_work (netram_req.c), resumed by
 * the socket's write_space callback when a full socket has room again.
 *
 * Every byte goes through the one helper below, under the memalloc
 * discipline (nbd's sock_xmit): sockets with sk_set_memalloc(), allocations
 * GFP_NOIO | __GFP_MEMALLOC, socket calls under memalloc_noreclaim_save(),
 * so that swapping out under memory pressure never waits for the memory it
 * is trying to free.
 *
 * What a connection finds out goes up through srv->ev (netram_servers.c).
 * The watchdog there fails a server whose request waited longer than the
 * table's timeout or that stayed unreachable that long: its reads end with EIO
 * (never zeros or stale data), or go to their other copy, and its writes go
 * elsewhere.  Each server has a namespace of its own (a client id).  With
 * reliability=mirror a failed server's pages are lost and copied again,
 * and it gets a new namespace when it comes back, so it comes back empty;
 * without, its pages are readable again if it comes back with them.  A
 * server that comes back without our namespace (restarted) lost our pages.
 */
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/tcp.h>
#include <net/sock.h>

#include "compat.h"
#include "netram_scheme.h"

/*----------------------------------------------------------------
 * Socket I/O
 *--------------------------------------------------------------*/
static void netram_setup_socket(struct socket *sock)
{
	struct sock *sk = sock->sk;

	sk_set_memalloc(sk);
	sk->sk_allocation = GFP_NOIO | __GFP_MEMALLOC;
	sk->sk_use_task_frag = false;
	tcp_sock_set_nodelay(sk);
}

/* Blocking, all of @iter or an error: the handshake and the receiver. */
static int netram_xmit(struct netram_server *srv, struct socket *sock, bool send,
		       struct iov_iter *iter, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	unsigned int noreclaim = memalloc_noreclaim_save();
	int r = 0;

	msg.msg_iter = *iter;
	while (msg_data_left(&msg)) {
		r = send ? sock_sendmsg(sock, &msg) :
			   sock_recvmsg(sock, &msg, msg.msg_flags | MSG_WAITALL);
		if (r <= 0) {
			r = r ? r : -EPIPE;
			break;
		}
		atomic64_add(r, send ? &srv->bytes_sent : &srv->bytes_received);
		r = 0;
	}
	memalloc_noreclaim_restore(noreclaim);
	return r;
}

int netram_xmit_buf(struct netram_server *srv, struct socket *sock, bool send,
		    void *buf, size_t len, int flags)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;

	iov_iter_kvec(&iter, send ? ITER_SOURCE : ITER_DEST, &vec, 1, len);
	return netram_xmit(srv, sock, send, &iter, flags);
}

static int netram_count_sent(struct netram_server *srv, int r)
{
	if (r > 0)
		atomic64_add(r, &srv->bytes_sent);
	return r ? r : -EPIPE;
}

/* Straight from the socket into the bio's pages, all segments in one iter (as loop does). */
int netram_recv_bio(struct netram_server *srv, struct bio *bio)
{
	struct bio_vec *bvec = __bvec_iter_bvec(bio->bi_io_vec, bio->bi_iter);
	unsigned int nr_bvecs = 0;
	struct bvec_iter it;
	struct bio_vec bv;
	struct iov_iter iter;

	bio_for_each_bvec(bv, bio, it)
		nr_bvecs++;
	iov_iter_bvec(&iter, ITER_DEST, bvec, nr_bvecs, bio->bi_iter.bi_size);
	iter.iov_offset = bio->bi_iter.bi_bvec_done;
	return netram_xmit(srv, srv->sock, false, &iter, 0);
}

/* One attempt, never blocking: bytes sent, -EAGAIN if the socket is full. */
int netram_send_nowait(struct netram_server *srv, struct iov_iter *iter, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_DONTWAIT | MSG_NOSIGNAL };
	unsigned int noreclaim = memalloc_noreclaim_save();
	int r;

	msg.msg_iter = *iter;
	r = sock_sendmsg(srv->sock, &msg);
	memalloc_noreclaim_restore(noreclaim);
	return netram_count_sent(srv, r);
}

/*
 * The same for page segments of bios, without copying them: TCP holds a
 * reference on each page until it is acknowledged, and a PUT's bios
 * complete only once the server has the pages, so nothing it might send
 * again can matter (nvme-tcp sends bio pages so).
 */
int netram_send_pages_nowait(struct netram_server *srv, struct bio_vec *bvecs,
			     unsigned int nr, size_t len, int flags)
{
	unsigned int noreclaim = memalloc_noreclaim_save();
	int r;

	r = nswap2l_send_pages(srv->sock, bvecs, nr, len, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
	memalloc_noreclaim_restore(noreclaim);
	return netram_count_sent(srv, r);
}

/* The socket has room again: resume sending (nvme-tcp's write_space). */
static void netram_write_space(struct sock *sk)
{
	struct netram_server *srv;

	read_lock_bh(&sk->sk_callback_lock);
	srv = sk->sk_user_data;
	if (srv && sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		netram_queue_io(srv);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void netram_set_callbacks(struct netram_server *srv, struct sock *sk)
{
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = srv;
	srv->saved_write_space = sk->sk_write_space;
	sk->sk_write_space = netram_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void netram_restore_callbacks(struct netram_server *srv, struct sock *sk)
{
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_write_space = srv->saved_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*----------------------------------------------------------------
 * The socket's life
 *--------------------------------------------------------------*/
static int netram_set_sock(struct netram_server *srv, struct socket *sock)
{
	int r = 0;

	mutex_lock(&srv->sock_mutex);
	if (srv->stopping)
		r = -ESHUTDOWN;
	else
		srv->sock = sock;
	mutex_unlock(&srv->sock_mutex);
	return r;
}

/*
 * Wake whoever is blocked on the socket; the receiver then tears it down.
 * @stop: and never let a new one be set up.
 */
void netram_shutdown_sock(struct netram_server *srv, bool stop)
{
	mutex_lock(&srv->sock_mutex);
	srv->stopping |= stop;
	if (srv->sock)
		kernel_sock_shutdown(srv->sock, SHUT_RDWR);
	mutex_unlock(&srv->sock_mutex);
}

static void netram_release_sock(struct netram_server *srv)
{
	struct socket *sock;

	mutex_lock(&srv->sock_mutex);
	sock = srv->sock;
	srv->sock = NULL;
	if (sock && sock->sk->sk_user_data)
		netram_restore_callbacks(srv, sock->sk);
	mutex_unlock(&srv->sock_mutex);
	if (sock)
		sock_release(sock);
}

static int netram_connect(struct netram_server *srv)
{
	struct socket *sock;
	bool renew, joined, found = false;
	u64 free_pages;
	int r;

	spin_lock_irq(&srv->lock);
	renew = srv->renew_id;
	srv->renew_id = false;
	spin_unlock_irq(&srv->lock);
	if (renew) {
		/* A failed server's old namespace expires on it; we start afresh. */
		get_random_bytes(srv->client_id, sizeof(srv->client_id));
		srv->new_namespace_ok = true;
	}

	r = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (r)
		return r;
	netram_setup_socket(sock);
	sock->sk->sk_sndtimeo = NETRAM_HANDSHAKE_TIMEOUT;
	sock->sk->sk_rcvtimeo = NETRAM_HANDSHAKE_TIMEOUT;
	r = netram_set_sock(srv, sock);
	if (r) {
		sock_release(sock);
		return r;
	}

	r = kernel_connect(sock, (struct sockaddr *)&srv->addr, sizeof(srv->addr), 0);
	if (!r)
		r = netram_handshake(srv, sock, &found, &free_pages);
	if (r) {
		netram_release_sock(srv);
		/* cut short by netram_shutdown_sock(): not the server's doing */
		return READ_ONCE(srv->stopping) ? -ESHUTDOWN : r;
	}
	netram_note_free(srv, free_pages);
	if (!found && !srv->new_namespace_ok) {
		/* Restarted, or it dropped us: never read what it no longer has. */
		srv->ev->namespace_lost(srv);
		/* Writes go to new homes, reads to the other copy or EIO. */
		netram_fail_queued(srv);
	}
	srv->new_namespace_ok = false;
	/* From now on the watchdog, not the socket, times requests out. */
	sock->sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
	mutex_lock(&srv->sock_mutex);
	netram_set_callbacks(srv, sock->sk);
	mutex_unlock(&srv->sock_mutex);

	spin_lock_irq(&srv->lock);
	if (srv->state == NETRAM_REMOVED) {
		/* remove_server took the slot during the handshake */
		spin_unlock_irq(&srv->lock);
		netram_release_sock(srv);
		return -ESHUTDOWN;
	}
	netram_set_state(srv, NETRAM_UP);
	if (srv->ever_up)
		atomic64_inc(&srv->reconnects);
	/* the first attempt failed and the table was loaded without it (degraded start) */
	joined = !srv->ever_up && srv->first_done;
	srv->ever_up = true;
	spin_unlock_irq(&srv->lock);
	if (joined)
		DMINFO("%s: server %s joined", netram_dev_name(srv->nt), srv->name);
	netram_queue_io(srv);
	srv->ev->connected(srv);
	return 0;
}

static void netram_disconnect(struct netram_server *srv, int error)
{
	bool failed, removed;

	spin_lock_irq(&srv->lock);
	removed = srv->state == NETRAM_REMOVED;
	if (!removed)
		netram_set_state(srv, srv->state == NETRAM_UP_FAILED ? NETRAM_DOWN_FAILED :
				 NETRAM_DOWN);
	spin_unlock_irq(&srv->lock);
	/* -ESHUTDOWN: the RELEASE the device's removal sent was answered */
	if (!removed && error != -ESHUTDOWN && !kthread_should_stop())
		DMWARN_LIMIT("%s: server %s: connection lost (error %d)",
			     netram_dev_name(srv->nt), srv->name, error);

	netram_shutdown_sock(srv, false);
	/* A sender still using the socket finishes; later ones see DOWN. */
	mutex_lock(&srv->send_mutex);
	netram_reset_tx(srv);
	mutex_unlock(&srv->send_mutex);
	netram_release_sock(srv);

	netram_requeue_unanswered(srv);
	spin_lock_irq(&srv->lock);
	failed = srv->failed;
	spin_unlock_irq(&srv->lock);
	if (failed || kthread_should_stop())
		netram_fail_queued(srv);
}

/* Room for the longest of netram_error_text(), a client name included. */
#define NETRAM_ERROR_TEXT_SIZE	(64 + NSWAP2L_PROTO_CLIENT_NAME_SIZE)

/* What follows "server <ip:port>" in the line that says why it failed. */
static const char *netram_error_text(struct netram_server *srv, int error, char *buf)
{
	/* NUL-terminated: a client name has at most NSWAP2L_PROTO_CLIENT_NAME_SIZE - 1 bytes */
	const char *client = srv->nt->client_name;

	switch (error) {
	case -ENOKEY:
		/* "default" is what a table without client= sends */
		snprintf(buf, NETRAM_ERROR_TEXT_SIZE, "does not know client '%s'%s", client,
			 strcmp(client, NSWAP2L_DEFAULT_CLIENT_NAME) ? "" :
			 ", the name when client= is not given");
		return buf;
	case -EKEYREJECTED:
		/*
		 * Also: the server's own proof was wrong, or a server from before
		 * NSWAP2L_ERR_NO_CLIENT does not know the name.
		 */
		snprintf(buf, NETRAM_ERROR_TEXT_SIZE, "rejected the key of client '%s'", client);
		return buf;
	case -ECONNREFUSED:
		return "refused the connection";
	case -ETIMEDOUT:
	case -EAGAIN:
	case -EINPROGRESS:	/* connect() timed out (sk_sndtimeo) */
		return "did not answer in time";
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -ENETDOWN:
		return "is unreachable";
	case -EPIPE:
	case -ECONNRESET:
	case -ECONNABORTED:
		return "closed the connection";
	case -EPROTONOSUPPORT:
		return "speaks another protocol version";
	case -EPROTO:
		return "broke the protocol";
	case -EBADMSG:
		return "sent a message with a wrong MAC";
	default:
		return "failed";
	}
}

/*
 * The receiver completes swap-ins: it must never wait for reclaim, which
 * may be waiting for it.
 */
static int netram_receiver(void *data)
{
	struct netram_server *srv = data;
	unsigned long backoff = NETRAM_BACKOFF_MIN;
	unsigned int noreclaim = memalloc_noreclaim_save();
	char why[NETRAM_ERROR_TEXT_SIZE];
	int r, last_error = 0;

	while (!kthread_should_stop()) {
		r = netram_connect(srv);
		/*
		 * Once per cause: a revoked key must not go unnoticed, nor flood.
		 * The first attempt's error is said by whoever waits for it;
		 * one still connecting says only what is not its being down.
		 */
		if (r && r != last_error && srv->first_done && r != -ESHUTDOWN &&
		    (srv->ever_up || !netram_unreachable(r)))
			DMWARN_LIMIT("%s: server %s: cannot %s: %s (error %d)",
				     netram_dev_name(srv->nt), srv->name,
				     srv->ever_up ? "reconnect" : "connect",
				     netram_error_text(srv, r, why), r);
		last_error = r;
		if (!srv->first_done) {
			srv->first_result = r;
			smp_store_release(&srv->first_done, true);
			wake_up_all(&srv->wait);
		}
		if (r == -ESHUTDOWN) {
			/* Removed: nothing to do until the tier goes away. */
			wait_event_interruptible(srv->wait, kthread_should_stop());
			continue;
		}
		if (r) {
			atomic64_inc(&srv->errors);
			wait_event_interruptible_timeout(srv->wait, kthread_should_stop(),
							 backoff);
			backoff = min(backoff * 2, NETRAM_BACKOFF_MAX);
			continue;
		}
		backoff = NETRAM_BACKOFF_MIN;
		do {
			r = netram_receive_one(srv);
		} while (!r);
		if (r != -EPIPE && r != -ECONNRESET && r != -ESHUTDOWN && !kthread_should_stop())
			atomic64_inc(&srv->errors);
		netram_disconnect(srv, r);
	}
	memalloc_noreclaim_restore(noreclaim);
	return 0;
}

int netram_start_server(struct netram_server *srv)
{
	struct task_struct *task;

	task = kthread_run(netram_receiver, srv, "nswap2l-rx/%s", netram_dev_name(srv->nt));
	if (IS_ERR(task))
		return PTR_ERR(task);
	srv->receiver = task;
	return 0;
}

/*
 * The errors of a server that is down, rebooting or cut off, not of a
 * wrong configuration (a key refused, another protocol): such a server
 * may be left connecting when pages have another home.
 */
bool netram_unreachable(int error)
{
	switch (error) {
	case -ECONNREFUSED:
	case -ETIMEDOUT:
	case -EAGAIN:
	case -EINPROGRESS:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -ENETDOWN:
	case -EPIPE:		/* accepted, then closed: going down or starting */
	case -ECONNRESET:
	case -ECONNABORTED:
		return true;
	default:
		return false;
	}
}

/* The result of the server's first connection attempt, once made. */
int netram_first_result(struct netram_server *srv)
{
	wait_event(srv->wait, smp_load_acquire(&srv->first_done));
	return srv->first_result;
}

/* The first attempt failed with @r, which fails the table load (@ti) or message. */
void netram_first_failed(struct netram_server *srv, struct dm_target *ti, int r)
{
	char why[NETRAM_ERROR_TEXT_SIZE];

	if (ti)
		nswap2l_bad_table(ti, r == -ENOKEY ? "Network RAM server does not know the client" :
				  "Cannot reach Network RAM server",
				  "netram: server %s %s (error %d)", srv->name,
				  netram_error_text(srv, r, why), r);
	else
		DMERR("%s: server %s %s (error %d)", netram_dev_name(srv->nt), srv->name,
		      netram_error_text(srv, r, why), r);
}

/* The first attempt failed with @r, netram_unreachable(): the receiver goes on trying. */
void netram_first_deferred(struct netram_server *srv, int r)
{
	char why[NETRAM_ERROR_TEXT_SIZE];

	DMWARN("%s: server %s %s (error %d): connecting, tried again every %u ms doubling to %u s; it joins when it answers",
	       netram_dev_name(srv->nt), srv->name, netram_error_text(srv, r, why), r,
	       jiffies_to_msecs(NETRAM_BACKOFF_MIN), jiffies_to_msecs(NETRAM_BACKOFF_MAX) / 1000);
}

/* No thread of the server runs once this returns. */
void netram_stop_server(struct netram_server *srv)
{
	if (srv->receiver) {
		netram_shutdown_sock(srv, true);
		kthread_stop(srv->receiver);
		srv->receiver = NULL;
	}
	cancel_work_sync(&srv->io_work);
	/* after the io_work, which may arm it (netram_free_work()) */
	cancel_delayed_work_sync(&srv->free_work);
	netram_release_sock(srv);
}
