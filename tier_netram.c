// SPDX-License-Identifier: GPL-2.0
/*
 * Network RAM tier: pages kept in the memory of nswapd servers, reached over
 * TCP with in-kernel sockets (the wire format is include/uapi/linux/
 * nswap2l_proto.h).
 *
 * Per server: one connection and one receiver thread that connects, proves
 * the key and reads replies.  Queued bios are sent by the submitting task
 * when nobody else is sending (else by a send work), batched into PUT/GET
 * messages of up to NSWAP2L_PROTO_MAX_PAGES pages (Nswap's PUTPAGES) with up
 * to NETRAM_TAGS messages in flight.  Bios are queued in arrival order and
 * the server answers a connection's requests in order, so a GET never
 * overtakes the PUT before it.
 *
 * A slot here is (page key << 8 | server index).  Keys come from a per-server
 * counter and are never reused, so freeing an old copy can never hit a newer
 * one.  A page's second home (mirroring, to come) will live in a side table:
 * the map entry keeps its 8 bytes.
 *
 * A server that needs its memory back sends EVICT; the pages it names go to
 * the mover (migrate.c), which gives them new homes, and the answer goes out
 * after the FREEs of the pages moved.  remove_server drains a server the same
 * way.
 *
 * Everything on the I/O path is preallocated: message slots per server, the
 * key queue for FREE; sockets run with sk_set_memalloc() and the sending and
 * receiving threads under memalloc_noreclaim_save(), so swapping to the
 * device under memory pressure does not wait for the memory it is freeing.
 *
 * Failure: a connection that breaks is re-established with back-off and its
 * unanswered requests are sent again (PUT and GET are idempotent).  Once a
 * request has waited longer than the table's timeout, or the server has been
 * unreachable that long, the server is "failed": its reads end with EIO
 * (never zeros or stale data) and its writes are placed on another tier.
 */
#include <crypto/hash.h>
#include <crypto/algapi.h>
#include <keys/user-type.h>
#include <linux/key-type.h>
#include <linux/bsearch.h>
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/tcp.h>
#include <net/sock.h>

#include "nswap2l.h"
#include "include/uapi/linux/nswap2l_proto.h"

#define NETRAM_MAX_SERVERS	16
#define NETRAM_TAGS		32	/* messages in flight per server */
/*
 * GETs in flight per connection.  A GET is tiny and its answer is what
 * costs: holding the next reads back while two are out makes them queue
 * up and go together, one request and one reply stream for many pages
 * (PUTs carry their pages, so they need no such help to batch).
 */
#define NETRAM_GETS_IN_FLIGHT	2
#define NETRAM_FREE_BATCH	512	/* keys per FREE message */
#define NETRAM_FREE_QUEUE	8192	/* keys waiting to be freed, per server */
#define NETRAM_HANDSHAKE_TIMEOUT (5 * HZ)
#define NETRAM_BACKOFF_MIN	(HZ / 10)
#define NETRAM_BACKOFF_MAX	(10 * HZ)

/* Keys waiting to be moved; more are answered NOSPC and asked again later. */
#define NETRAM_EVICT_KEYS	(16 * NSWAP2L_PROTO_MAX_KEYS)
#define NETRAM_EVICT_REPLIES	64

#define NETRAM_SLOT_SERVER_MASK	0xffULL
#define NETRAM_SLOT_KEY_SHIFT	8

enum netram_state {
	NETRAM_CONNECTING,
	NETRAM_UP,
	NETRAM_DOWN,
	NETRAM_REMOVED,		/* drained and disconnected by remove_server */
};

static const char *const netram_state_names[] = {
	[NETRAM_CONNECTING] = "connecting",
	[NETRAM_UP] = "up",
	[NETRAM_DOWN] = "down",
	[NETRAM_REMOVED] = "removed",
};

/* Answer owed to the server for one EVICT message. */
struct netram_evict_reply {
	u32 tag;
	u32 count;
	u32 status;
	u32 connection;		/* srv->connections when the EVICT came */
};

/*
 * Pages a server asked back.  Keys arrive in EVICT messages while a move
 * job may be running: they collect in keys[] and the next job takes them.
 */
struct netram_eviction {
	struct nswap2l_move_job job;
	bool running;
	u64 *keys;			/* arriving */
	unsigned int nr_keys;
	struct netram_evict_reply replies[NETRAM_EVICT_REPLIES];	/* arriving */
	unsigned int nr_replies;
	u64 *job_keys;			/* the running job's, sorted */
	unsigned int nr_job_keys;
	struct netram_evict_reply job_replies[NETRAM_EVICT_REPLIES];
	unsigned int nr_job_replies;
	/* answers ready to send, after the FREEs of the moved pages */
	struct netram_evict_reply ready[2 * NETRAM_EVICT_REPLIES];
	unsigned int nr_ready;
};

/* One request message in flight; indexed by its tag. */
struct netram_msg {
	u16 type;			/* enum nswap2l_msg_type */
	u16 count;
	u64 seq;			/* send order, to resend in order */
	unsigned long sent_at;
	struct bio *bios[NSWAP2L_PROTO_MAX_PAGES];
	__le64 keys[NETRAM_FREE_BATCH];
};

struct netram_server {
	struct netram_tier *nt;
	unsigned int index;
	struct sockaddr_in addr;
	char name[24];			/* a.b.c.d:port */

	struct task_struct *receiver;
	struct work_struct send_work;
	wait_queue_head_t wait;		/* first connection attempt done */

	struct mutex sock_mutex;	/* sock and stopping */
	struct mutex send_mutex;	/* one sender at a time */
	struct socket *sock;
	bool stopping;			/* no new socket: the tier is going away */
	u32 max_pages;			/* per PUT/GET, from the server's HELLO */

	spinlock_t lock;		/* protects everything below */
	enum netram_state state;
	bool failed;			/* unreachable for longer than the timeout */
	bool draining;			/* remove_server: take no new pages */
	bool ever_up;
	u32 connections;		/* counts successful connects */
	int first_result;		/* of the first connection attempt */
	bool first_done;
	unsigned long down_since;
	struct bio_list queue;		/* PUT and GET bios, in arrival order */
	u64 *free_keys;
	unsigned int nr_free_keys;
	unsigned long busy_tags;
	unsigned int gets_in_flight;
	u64 next_seq;
	struct netram_msg *msgs;	/* NETRAM_TAGS */
	__le64 *evict_buf;		/* one EVICT's keys, receiver only */
	struct netram_eviction evict;
	struct nswap2l_move_job drain_job;

	atomic64_t next_key;
	atomic64_t held;		/* pages the map keeps on this server */
	atomic64_t free_estimate;	/* reported free pages, minus our new ones */
	atomic64_t free_reported;
	atomic64_t bytes_sent;
	atomic64_t bytes_received;
	atomic64_t errors;
	atomic64_t reconnects;
	atomic64_t evict_asked;		/* pages the server asked back */
	atomic64_t evict_moved;		/* of which we moved elsewhere */
};

struct netram_tier {
	struct nswap2l_tier tier;
	struct dm_target *ti;
	struct workqueue_struct *wq;
	struct delayed_work watchdog;
	struct crypto_shash *hmac;
	unsigned long timeout;		/* jiffies */
	u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	struct mutex servers_mutex;	/* add_server / remove_server */
	/* Servers only ever get added (published with a release store). */
	unsigned int nr_servers;
	struct netram_server *servers[NETRAM_MAX_SERVERS];
};

static struct netram_tier *to_netram_tier(struct nswap2l_tier *tier)
{
	return container_of(tier, struct netram_tier, tier);
}

static unsigned int netram_nr_servers(struct netram_tier *nt)
{
	return smp_load_acquire(&nt->nr_servers);
}

static const char *netram_dev_name(struct netram_tier *nt)
{
	return dm_table_device_name(nt->ti->table);
}

static u64 netram_slot(unsigned int server, u64 key)
{
	return key << NETRAM_SLOT_KEY_SHIFT | server;
}

static u64 netram_slot_key(u64 slot)
{
	return slot >> NETRAM_SLOT_KEY_SHIFT;
}

static struct netram_server *netram_slot_server(struct netram_tier *nt, u64 slot)
{
	return nt->servers[slot & NETRAM_SLOT_SERVER_MASK];
}

/* Network RAM's capacity is what the servers hold for us plus what they offer. */
static void netram_update_capacity(struct netram_tier *nt)
{
	u64 capacity = 0;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++)
		capacity += atomic64_read(&nt->servers[i]->held) +
			    atomic64_read(&nt->servers[i]->free_reported);
	WRITE_ONCE(nt->tier.capacity, capacity);
}

static void netram_note_free(struct netram_server *srv, u64 free_pages)
{
	atomic64_set(&srv->free_reported, free_pages);
	atomic64_set(&srv->free_estimate, free_pages);
	netram_update_capacity(srv->nt);
}

/*----------------------------------------------------------------
 * Socket I/O: the one place that sends and receives, under the memalloc
 * discipline (nbd's sock_xmit).
 *--------------------------------------------------------------*/
static void netram_setup_socket(struct socket *sock)
{
	struct sock *sk = sock->sk;

	sk_set_memalloc(sk);
	sk->sk_allocation = GFP_NOIO | __GFP_MEMALLOC;
	sk->sk_use_task_frag = false;
	tcp_sock_set_nodelay(sk);
}

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

static int netram_xmit_buf(struct netram_server *srv, struct socket *sock, bool send,
			   void *buf, size_t len, int flags)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;

	iov_iter_kvec(&iter, send ? ITER_SOURCE : ITER_DEST, &vec, 1, len);
	return netram_xmit(srv, sock, send, &iter, flags);
}

/* The page of one bio, straight between the socket and the bio's pages. */
static int netram_xmit_bio(struct netram_server *srv, struct socket *sock, bool send,
			   struct bio *bio, int flags)
{
	struct bvec_iter iter;
	struct bio_vec bv;
	int r;

	bio_for_each_segment(bv, bio, iter) {
		struct iov_iter it;

		iov_iter_bvec(&it, send ? ITER_SOURCE : ITER_DEST, &bv, 1, bv.bv_len);
		r = netram_xmit(srv, sock, send, &it, flags);
		if (r)
			return r;
	}
	return 0;
}

static void netram_fill_header(struct nswap2l_msg_header *hdr, u16 type, u32 tag,
			       u32 count, u32 length)
{
	memset(hdr, 0, sizeof(*hdr));	/* status 0 */
	hdr->magic = cpu_to_le32(NSWAP2L_PROTO_MAGIC);
	hdr->type = cpu_to_le16(type);
	hdr->tag = cpu_to_le32(tag);
	hdr->count = cpu_to_le32(count);
	hdr->length = cpu_to_le32(length);
}

/*----------------------------------------------------------------
 * Connecting: HELLO, then AUTH proving the key both ways
 *--------------------------------------------------------------*/
static int netram_mac(struct netram_tier *nt, const char *label, const u8 *nonce1,
		      const u8 *nonce2, u8 *mac)
{
	SHASH_DESC_ON_STACK(desc, nt->hmac);
	int r;

	desc->tfm = nt->hmac;
	r = crypto_shash_init(desc);
	if (!r)
		r = crypto_shash_update(desc, label, strlen(label));
	if (!r)
		r = crypto_shash_update(desc, nt->client_id, sizeof(nt->client_id));
	if (!r)
		r = crypto_shash_update(desc, nonce1, NSWAP2L_PROTO_NONCE_SIZE);
	if (!r)
		r = crypto_shash_update(desc, nonce2, NSWAP2L_PROTO_NONCE_SIZE);
	if (!r)
		r = crypto_shash_final(desc, mac);
	shash_desc_zero(desc);
	return r;
}

/* One handshake exchange: send @type with @out, expect its reply with @in. */
static int netram_exchange(struct netram_server *srv, struct socket *sock, u16 type,
			   void *out, size_t out_len, void *in, size_t in_len)
{
	struct nswap2l_msg_header hdr;
	int r;

	netram_fill_header(&hdr, type, 0, 0, out_len);
	r = netram_xmit_buf(srv, sock, true, &hdr, sizeof(hdr), MSG_MORE);
	if (!r)
		r = netram_xmit_buf(srv, sock, true, out, out_len, 0);
	if (!r)
		r = netram_xmit_buf(srv, sock, false, &hdr, sizeof(hdr), 0);
	if (r)
		return r;
	if (le32_to_cpu(hdr.magic) != NSWAP2L_PROTO_MAGIC ||
	    le16_to_cpu(hdr.type) != (type | NSWAP2L_MSG_REPLY))
		return -EPROTO;
	switch (le32_to_cpu(hdr.status)) {
	case NSWAP2L_OK:
		break;
	case NSWAP2L_ERR_AUTH:
		return -EKEYREJECTED;
	case NSWAP2L_ERR_VERSION:
		return -EPROTONOSUPPORT;
	default:
		return -EPROTO;
	}
	if (le32_to_cpu(hdr.length) != in_len)
		return -EPROTO;
	r = netram_xmit_buf(srv, sock, false, in, in_len, 0);
	if (!r)
		netram_note_free(srv, le64_to_cpu(hdr.free_pages));
	return r;
}

static int netram_handshake(struct netram_server *srv, struct socket *sock)
{
	struct netram_tier *nt = srv->nt;
	struct nswap2l_hello hello = {
		.version_min = cpu_to_le32(NSWAP2L_PROTO_VERSION),
		.version_max = cpu_to_le32(NSWAP2L_PROTO_VERSION),
		.capabilities = cpu_to_le64(NSWAP2L_CAP_EVICT),
	};
	struct nswap2l_hello_reply reply;
	struct nswap2l_auth auth, server_auth;
	u8 expected[NSWAP2L_PROTO_MAC_SIZE];
	int r;

	memcpy(hello.client_id, nt->client_id, sizeof(hello.client_id));
	get_random_bytes(hello.client_nonce, sizeof(hello.client_nonce));
	r = netram_exchange(srv, sock, NSWAP2L_MSG_HELLO, &hello, sizeof(hello),
			    &reply, sizeof(reply));
	if (r)
		return r;
	if (le32_to_cpu(reply.version) != NSWAP2L_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	srv->max_pages = clamp_t(u32, le32_to_cpu(reply.max_pages), 1,
				 NSWAP2L_PROTO_MAX_PAGES);

	r = netram_mac(nt, NSWAP2L_AUTH_CLIENT_LABEL, hello.client_nonce,
		       reply.server_nonce, auth.mac);
	if (!r)
		r = netram_mac(nt, NSWAP2L_AUTH_SERVER_LABEL, reply.server_nonce,
			       hello.client_nonce, expected);
	if (!r)
		r = netram_exchange(srv, sock, NSWAP2L_MSG_AUTH, &auth, sizeof(auth),
				    &server_auth, sizeof(server_auth));
	if (r)
		return r;
	/* An impostor that does not know the key must not get our pages. */
	if (crypto_memneq(expected, server_auth.mac, sizeof(expected)))
		return -EKEYREJECTED;
	return 0;
}

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
static void netram_shutdown_sock(struct netram_server *srv, bool stop)
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
	mutex_unlock(&srv->sock_mutex);
	if (sock)
		sock_release(sock);
}

static int netram_connect(struct netram_server *srv)
{
	struct socket *sock;
	int r;

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
		r = netram_handshake(srv, sock);
	if (r) {
		netram_release_sock(srv);
		return r;
	}
	/* From now on the watchdog, not the socket, times requests out. */
	sock->sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
	sock->sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;

	spin_lock_irq(&srv->lock);
	srv->state = NETRAM_UP;
	srv->failed = false;
	srv->connections++;
	if (srv->ever_up)
		atomic64_inc(&srv->reconnects);
	srv->ever_up = true;
	spin_unlock_irq(&srv->lock);
	queue_work(srv->nt->wq, &srv->send_work);
	return 0;
}

/*----------------------------------------------------------------
 * Completing and failing bios
 *--------------------------------------------------------------*/
static void netram_end_bio(struct bio *bio, blk_status_t status)
{
	bio->bi_status = status;
	bio_endio(bio);
}

/*
 * The server could not take or cannot be reached for this bio: reads fail,
 * writes go back to the core to be placed elsewhere (it releases our slot).
 */
static void netram_give_up_bio(struct netram_server *srv, struct bio *bio)
{
	if (bio_data_dir(bio) == READ) {
		atomic64_inc(&srv->errors);
		netram_end_bio(bio, BLK_STS_IOERR);
	} else {
		netram_end_bio(bio, NSWAP2L_STS_TRY_ELSEWHERE);
	}
}

static void netram_fail_queued(struct netram_server *srv)
{
	struct bio_list bios;
	struct bio *bio;

	spin_lock_irq(&srv->lock);
	bios = srv->queue;
	bio_list_init(&srv->queue);
	spin_unlock_irq(&srv->lock);

	while ((bio = bio_list_pop(&bios)))
		netram_give_up_bio(srv, bio);
}

/* Called with srv->lock held. */
static void netram_add_free_key(struct netram_server *srv, u64 key)
{
	if (srv->nr_free_keys < NETRAM_FREE_QUEUE) {
		srv->free_keys[srv->nr_free_keys++] = key;
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

static void netram_queue_free(struct netram_server *srv, u64 key)
{
	unsigned long flags;

	spin_lock_irqsave(&srv->lock, flags);
	netram_add_free_key(srv, key);
	spin_unlock_irqrestore(&srv->lock, flags);
}

/*----------------------------------------------------------------
 * Eviction: the server needs memory back (EVICT) and the mover takes the
 * pages elsewhere; the answer goes out after the FREEs of the moved pages.
 *--------------------------------------------------------------*/
static int netram_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static bool netram_evict_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_server *srv = container_of(job, struct netram_server, evict.job);
	u64 key = netram_slot_key(slot);

	return (slot & NETRAM_SLOT_SERVER_MASK) == srv->index &&
	       bsearch(&key, srv->evict.job_keys, srv->evict.nr_job_keys, sizeof(u64),
		       netram_cmp_u64);
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
	queue_work(srv->nt->wq, &srv->send_work);
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
	if (!nswap2l_queue_move(srv->nt->tier.nc, &ev->job)) {
		ev->job.moved = 0;
		ev->job.left = ev->nr_job_keys;
		netram_evict_done(&ev->job);
	}
}

static int netram_receive_evict(struct netram_server *srv, u32 tag, u32 count, u32 length)
{
	struct netram_eviction *ev = &srv->evict;
	__le64 *keys;
	u32 status = NSWAP2L_OK;
	unsigned int i;
	int r;

	if (!count || count > NSWAP2L_PROTO_MAX_KEYS || length != count * sizeof(__le64))
		return -EPROTO;
	r = netram_xmit_buf(srv, srv->sock, false, srv->evict_buf, length, 0);
	if (r)
		return r;
	keys = srv->evict_buf;
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

/*----------------------------------------------------------------
 * Sending
 *--------------------------------------------------------------*/

/* Take the next message to send from the queues; called with srv->lock held. */
static struct netram_msg *netram_next_msg(struct netram_server *srv, u32 *tag)
{
	struct netram_msg *msg;
	struct bio *bio;

	if (srv->state != NETRAM_UP || srv->busy_tags == GENMASK(NETRAM_TAGS - 1, 0))
		return NULL;
	if (!srv->nr_free_keys && bio_list_empty(&srv->queue))
		return NULL;
	if (!srv->nr_free_keys && bio_data_dir(bio_list_peek(&srv->queue)) == READ &&
	    srv->gets_in_flight >= NETRAM_GETS_IN_FLIGHT)
		return NULL;

	*tag = ffz(srv->busy_tags);
	msg = &srv->msgs[*tag];
	msg->count = 0;
	if (srv->nr_free_keys) {
		msg->type = NSWAP2L_MSG_FREE;
		while (srv->nr_free_keys && msg->count < NETRAM_FREE_BATCH)
			msg->keys[msg->count++] =
				cpu_to_le64(srv->free_keys[--srv->nr_free_keys]);
	} else {
		bool write = bio_data_dir(bio_list_peek(&srv->queue)) == WRITE;

		msg->type = write ? NSWAP2L_MSG_PUT : NSWAP2L_MSG_GET;
		srv->gets_in_flight += !write;
		while ((bio = bio_list_peek(&srv->queue)) &&
		       (bio_data_dir(bio) == WRITE) == write &&
		       msg->count < srv->max_pages) {
			bio_list_pop(&srv->queue);
			msg->keys[msg->count] =
				cpu_to_le64(NSWAP2L_SECTOR_TO_PAGE(bio->bi_iter.bi_sector));
			msg->bios[msg->count++] = bio;
		}
	}
	__set_bit(*tag, &srv->busy_tags);
	msg->seq = srv->next_seq++;
	msg->sent_at = jiffies;
	return msg;
}

static int netram_send_msg(struct netram_server *srv, struct socket *sock,
			   struct netram_msg *msg, u32 tag)
{
	bool put = msg->type == NSWAP2L_MSG_PUT;
	size_t keys_len = msg->count * sizeof(__le64);
	struct nswap2l_msg_header hdr;
	unsigned int i;
	int r;

	netram_fill_header(&hdr, msg->type, tag, msg->count,
			   keys_len + (put ? msg->count * NSWAP2L_PROTO_PAGE_SIZE : 0));
	r = netram_xmit_buf(srv, sock, true, &hdr, sizeof(hdr), MSG_MORE);
	if (!r)
		r = netram_xmit_buf(srv, sock, true, msg->keys, keys_len, put ? MSG_MORE : 0);
	for (i = 0; put && !r && i < msg->count; i++)
		r = netram_xmit_bio(srv, sock, true, msg->bios[i],
				    i + 1 < msg->count ? MSG_MORE : 0);
	/*
	 * TCP autocorking holds back a message's last partial segment while
	 * earlier ones wait for TX completion, which a slow NIC (an emulated
	 * one takes ~40 ms) turns into latency; setting NODELAY again pushes
	 * it out now.
	 */
	if (!r)
		tcp_sock_set_nodelay(sock->sk);
	return r;
}

/* An answer to EVICT, once the FREEs of the pages moved are all out. */
static bool netram_next_evict_reply(struct netram_server *srv,
				    struct netram_evict_reply *reply)
{
	struct netram_eviction *ev = &srv->evict;

	if (srv->state != NETRAM_UP || srv->nr_free_keys)
		return false;
	while (ev->nr_ready) {
		*reply = ev->ready[--ev->nr_ready];
		/* A server forgets the EVICTs of a connection that broke. */
		if (reply->connection == srv->connections)
			return true;
	}
	return false;
}

static int netram_send_evict_reply(struct netram_server *srv, struct socket *sock,
				   struct netram_evict_reply *reply)
{
	struct nswap2l_msg_header hdr;

	netram_fill_header(&hdr, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, reply->tag,
			   reply->count, 0);
	hdr.status = cpu_to_le32(reply->status);
	return netram_xmit_buf(srv, sock, true, &hdr, sizeof(hdr), 0);
}

/* Send everything that can go now; the caller holds send_mutex. */
static void netram_send_queued(struct netram_server *srv)
{
	struct netram_evict_reply reply;
	struct netram_msg *msg;
	unsigned long flags;
	bool have_reply;
	u32 tag;
	int r;

	for (;;) {
		spin_lock_irqsave(&srv->lock, flags);
		msg = netram_next_msg(srv, &tag);
		have_reply = !msg && netram_next_evict_reply(srv, &reply);
		spin_unlock_irqrestore(&srv->lock, flags);
		if (!msg && !have_reply)
			break;
		/* The receiver does not release the socket while we hold send_mutex. */
		if (msg)
			r = netram_send_msg(srv, srv->sock, msg, tag);
		else
			r = netram_send_evict_reply(srv, srv->sock, &reply);
		if (r) {
			/* The receiver sees the shut-down socket and resends. */
			netram_shutdown_sock(srv, false);
			break;
		}
		cond_resched();
	}
}

static void netram_send_work(struct work_struct *work)
{
	struct netram_server *srv = container_of(work, struct netram_server, send_work);

	mutex_lock(&srv->send_mutex);
	netram_send_queued(srv);
	mutex_unlock(&srv->send_mutex);
}

/* A receiver must never block sending: the server may be waiting for it to read. */
static bool netram_current_is_receiver(struct netram_tier *nt)
{
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++)
		if (nt->servers[i]->receiver == current)
			return true;
	return false;
}

/*
 * Get queued requests sent: by the submitting task itself when nobody else
 * is sending (as nbd does; it saves a wakeup per request), else by the work.
 */
static void netram_kick(struct netram_server *srv)
{
	if (!netram_current_is_receiver(srv->nt) && mutex_trylock(&srv->send_mutex)) {
		netram_send_queued(srv);
		mutex_unlock(&srv->send_mutex);
	} else {
		queue_work(srv->nt->wq, &srv->send_work);
	}
}

/*----------------------------------------------------------------
 * Receiving
 *--------------------------------------------------------------*/
static void netram_release_tag(struct netram_server *srv, u32 tag)
{
	bool waiting;

	spin_lock_irq(&srv->lock);
	__clear_bit(tag, &srv->busy_tags);
	srv->gets_in_flight -= srv->msgs[tag].type == NSWAP2L_MSG_GET;
	/* a free tag matters only to requests that may be waiting for one */
	waiting = srv->nr_free_keys || !bio_list_empty(&srv->queue);
	spin_unlock_irq(&srv->lock);
	if (waiting)
		queue_work(srv->nt->wq, &srv->send_work);
}

static int netram_complete_get(struct netram_server *srv, struct netram_msg *msg,
			       u32 status, u32 length)
{
	unsigned int i;
	int r;

	if (status == NSWAP2L_OK) {
		if (length != msg->count * NSWAP2L_PROTO_PAGE_SIZE)
			return -EPROTO;
		for (i = 0; i < msg->count; i++) {
			r = netram_xmit_bio(srv, srv->sock, false, msg->bios[i], 0);
			if (r)
				return r;
		}
		for (i = 0; i < msg->count; i++)
			netram_end_bio(msg->bios[i], BLK_STS_OK);
		return 0;
	}
	if (status != NSWAP2L_ERR_NOENT || length)
		return -EPROTO;
	/* The server lost pages it had taken (restarted?): never return zeros. */
	DMERR_LIMIT("%s: server %s does not have %u page(s) it stored",
		    netram_dev_name(srv->nt), srv->name, msg->count);
	for (i = 0; i < msg->count; i++) {
		atomic64_inc(&srv->errors);
		netram_end_bio(msg->bios[i], BLK_STS_IOERR);
	}
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
	for (i = 0; i < msg->count; i++) {
		if (status == NSWAP2L_OK)
			netram_end_bio(msg->bios[i], BLK_STS_OK);
		else
			netram_end_bio(msg->bios[i], NSWAP2L_STS_TRY_ELSEWHERE);
	}
	return 0;
}

/* Read and act on one message from the server. */
static int netram_receive_one(struct netram_server *srv)
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
		netram_note_free(srv, le64_to_cpu(hdr.free_pages));
		return 0;
	}
	if (type == NSWAP2L_MSG_EVICT) {
		netram_note_free(srv, le64_to_cpu(hdr.free_pages));
		return netram_receive_evict(srv, tag, count, length);
	}
	if (!(type & NSWAP2L_MSG_REPLY) || tag >= NETRAM_TAGS)
		return -EPROTO;
	type &= ~NSWAP2L_MSG_REPLY;

	spin_lock_irq(&srv->lock);
	msg = &srv->msgs[tag];
	if (!test_bit(tag, &srv->busy_tags) || msg->type != type || msg->count != count)
		msg = NULL;
	spin_unlock_irq(&srv->lock);
	if (!msg)
		return -EPROTO;
	netram_note_free(srv, le64_to_cpu(hdr.free_pages));

	switch (type) {
	case NSWAP2L_MSG_GET:
		r = netram_complete_get(srv, msg, status, length);
		break;
	case NSWAP2L_MSG_PUT:
		r = netram_complete_put(srv, msg, status, length);
		break;
	case NSWAP2L_MSG_FREE:
		r = length || status != NSWAP2L_OK ? -EPROTO : 0;
		break;
	default:
		r = -EPROTO;
	}
	if (!r)
		netram_release_tag(srv, tag);
	return r;
}

/* Unanswered requests go back to the front of the queues, in send order. */
static void netram_requeue_unanswered(struct netram_server *srv)
{
	struct bio_list resend = BIO_EMPTY_LIST;
	unsigned long pending;

	spin_lock_irq(&srv->lock);
	pending = srv->busy_tags;
	while (pending) {
		struct netram_msg *msg = NULL;
		unsigned int tag, i;

		for_each_set_bit(tag, &pending, NETRAM_TAGS)
			if (!msg || srv->msgs[tag].seq < msg->seq)
				msg = &srv->msgs[tag];
		__clear_bit(msg - srv->msgs, &pending);

		for (i = 0; i < msg->count; i++) {
			if (msg->type != NSWAP2L_MSG_FREE)
				bio_list_add(&resend, msg->bios[i]);
			else
				netram_add_free_key(srv, le64_to_cpu(msg->keys[i]));
		}
	}
	srv->busy_tags = 0;
	srv->gets_in_flight = 0;
	bio_list_merge_head(&srv->queue, &resend);
	spin_unlock_irq(&srv->lock);
}

static void netram_disconnect(struct netram_server *srv, int error)
{
	bool failed, removed;

	spin_lock_irq(&srv->lock);
	removed = srv->state == NETRAM_REMOVED;
	if (!removed) {
		srv->state = NETRAM_DOWN;
		srv->down_since = jiffies;
	}
	spin_unlock_irq(&srv->lock);
	if (!removed && !kthread_should_stop())
		DMWARN_LIMIT("%s: server %s: connection lost (error %d)",
			     netram_dev_name(srv->nt), srv->name, error);

	netram_shutdown_sock(srv, false);
	/* Wait for a sender still using the socket; later ones see DOWN. */
	mutex_lock(&srv->send_mutex);
	mutex_unlock(&srv->send_mutex);
	netram_release_sock(srv);

	netram_requeue_unanswered(srv);
	spin_lock_irq(&srv->lock);
	failed = srv->failed;
	spin_unlock_irq(&srv->lock);
	if (failed || kthread_should_stop())
		netram_fail_queued(srv);
}

/*
 * The receiver completes swap-ins and reroutes failed writes: it must never
 * wait for reclaim, which may be waiting for it.
 */
static int netram_receiver(void *data)
{
	struct netram_server *srv = data;
	unsigned long backoff = NETRAM_BACKOFF_MIN;
	unsigned int noreclaim = memalloc_noreclaim_save();
	int r;

	while (!kthread_should_stop()) {
		r = netram_connect(srv);
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
		if (r != -EPIPE && r != -ECONNRESET && !kthread_should_stop())
			atomic64_inc(&srv->errors);
		netram_disconnect(srv, r);
	}
	memalloc_noreclaim_restore(noreclaim);
	return 0;
}

/*----------------------------------------------------------------
 * Watchdog: per-request timeouts and servers down for too long
 *--------------------------------------------------------------*/
static bool netram_overdue(struct netram_server *srv, unsigned long timeout)
{
	unsigned int tag;

	for_each_set_bit(tag, &srv->busy_tags, NETRAM_TAGS)
		if (time_after(jiffies, srv->msgs[tag].sent_at + timeout))
			return true;
	return false;
}

static void netram_watchdog(struct work_struct *work)
{
	struct netram_tier *nt = container_of(to_delayed_work(work), struct netram_tier,
					      watchdog);
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];
		bool timed_out = false, give_up = false, failed;

		spin_lock_irq(&srv->lock);
		if (srv->state == NETRAM_UP && netram_overdue(srv, nt->timeout)) {
			timed_out = !srv->failed;
			srv->failed = true;
		} else if ((srv->state == NETRAM_DOWN || srv->state == NETRAM_CONNECTING) &&
			   time_after(jiffies, srv->down_since + nt->timeout)) {
			give_up = !srv->failed;
			srv->failed = true;
		}
		failed = srv->failed;
		spin_unlock_irq(&srv->lock);

		if (timed_out) {
			DMERR("%s: server %s: request timed out, failing its requests",
			      netram_dev_name(nt), srv->name);
			netram_shutdown_sock(srv, false);
		}
		if (give_up)
			DMERR("%s: server %s unreachable for %u s, failing its requests",
			      netram_dev_name(nt), srv->name, jiffies_to_msecs(nt->timeout) / 1000);
		if (failed)
			netram_fail_queued(srv);
	}
	queue_delayed_work(nt->wq, &nt->watchdog, HZ);
}

/*----------------------------------------------------------------
 * Tier operations
 *--------------------------------------------------------------*/

/* Nswap's IP table: the server that last told us it has the most room. */
static int netram_alloc_slot(struct nswap2l_tier *tier, u64 *slot)
{
	struct netram_tier *nt = to_netram_tier(tier);
	struct netram_server *best = NULL;
	s64 best_free = 0;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];
		s64 free = atomic64_read(&srv->free_estimate);

		/* Not to a server that wants its memory back or is leaving. */
		if (READ_ONCE(srv->state) == NETRAM_UP && free > best_free &&
		    !READ_ONCE(srv->draining) && !READ_ONCE(srv->evict.running)) {
			best = srv;
			best_free = free;
		}
	}
	if (!best)
		return -ENOSPC;
	atomic64_dec(&best->free_estimate);
	atomic64_inc(&best->held);
	atomic64_inc(&tier->used);
	*slot = netram_slot(best->index, atomic64_inc_return(&best->next_key));
	return 0;
}

static void netram_free_slots(struct nswap2l_tier *tier, const u64 *slots,
			      unsigned int nr, bool written)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned long to_send = 0;
	unsigned int i;

	BUILD_BUG_ON(NETRAM_MAX_SERVERS > BITS_PER_LONG);
	for (i = 0; i < nr; i++) {
		struct netram_server *srv = netram_slot_server(nt, slots[i]);

		atomic64_dec(&srv->held);
		if (written) {
			netram_queue_free(srv, netram_slot_key(slots[i]));
			__set_bit(srv->index, &to_send);
		} else {
			atomic64_inc(&srv->free_estimate);
		}
	}
	atomic64_sub(nr, &tier->used);
	/* one FREE message per server for the whole batch */
	for_each_set_bit(i, &to_send, NETRAM_MAX_SERVERS)
		queue_work(nt->wq, &nt->servers[i]->send_work);
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
		/* From schedule() the task must not send (it may not block). */
		if (from_schedule)
			queue_work(nt->wq, &nt->servers[i]->send_work);
		else
			netram_kick(nt->servers[i]);
	}
	kfree(plug);
}

/*
 * Returns false if the caller does not plug (or the GFP_ATOMIC cb failed).
 * Only a task's own submissions: a rerouted write may come from a completion,
 * where current->plug belongs to whichever task was interrupted.
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

static int netram_map(struct nswap2l_tier *tier, struct bio *bio, u64 slot)
{
	struct netram_tier *nt = to_netram_tier(tier);
	struct netram_server *srv = netram_slot_server(nt, slot);
	unsigned long flags;
	bool failed;

	if (WARN_ON_ONCE(bio->bi_iter.bi_size != NSWAP2L_PROTO_PAGE_SIZE))
		return DM_MAPIO_KILL;
	/* Remapped, like a block tier: the key is the page number on the server. */
	bio->bi_iter.bi_sector = NSWAP2L_PAGE_TO_SECTOR(netram_slot_key(slot));

	spin_lock_irqsave(&srv->lock, flags);
	failed = srv->failed;
	if (!failed)
		bio_list_add(&srv->queue, bio);
	spin_unlock_irqrestore(&srv->lock, flags);

	if (failed)
		netram_give_up_bio(srv, bio);
	else if (!netram_defer_to_unplug(srv))
		netram_kick(srv);
	return DM_MAPIO_SUBMITTED;
}

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

/* One server's counters, as dmsetup status and sysfs show them. */
static int netram_format_server(struct netram_server *srv, char *buf, size_t size)
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
	*sz_ptr = sz;
}

static ssize_t netram_show_servers(struct nswap2l_tier *tier, char *buf)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i, nr = netram_nr_servers(nt);
	ssize_t len;

	len = sysfs_emit(buf, "server state held free inflight sent_bytes received_bytes errors reconnects evict_asked evict_moved\n");
	for (i = 0; i < nr && len + 1 < PAGE_SIZE; i++) {
		len += netram_format_server(nt->servers[i], buf + len, PAGE_SIZE - len - 1);
		len += sysfs_emit_at(buf, len, "\n");
	}
	return len;
}

/*----------------------------------------------------------------
 * Create and destroy
 *--------------------------------------------------------------*/
static void netram_destroy_server(struct netram_server *srv)
{
	if (srv->receiver) {
		netram_shutdown_sock(srv, true);
		kthread_stop(srv->receiver);
	}
	cancel_work_sync(&srv->send_work);
	netram_release_sock(srv);
	kvfree(srv->msgs);
	kvfree(srv->free_keys);
	kvfree(srv->evict_buf);
	kvfree(srv->evict.keys);
	kvfree(srv->evict.job_keys);
	kfree(srv);
}

static void netram_destroy(struct dm_target *ti, struct nswap2l_tier *tier)
{
	struct netram_tier *nt = to_netram_tier(tier);
	unsigned int i;

	if (nt->wq)
		cancel_delayed_work_sync(&nt->watchdog);
	for (i = 0; i < netram_nr_servers(nt); i++)
		netram_destroy_server(nt->servers[i]);
	if (nt->wq)
		destroy_workqueue(nt->wq);
	if (!IS_ERR_OR_NULL(nt->hmac))
		crypto_free_shash(nt->hmac);
	kfree(nt);
}

static const char *netram_error_text(int error);

/* Server @spec ("a.b.c.d:port"), not yet published in nt->servers[]. */
static int netram_new_server(struct netram_tier *nt, const char *spec,
			     struct netram_server **result)
{
	struct dm_target *ti = nt->ti;
	struct netram_server *srv;
	unsigned int i, nr = netram_nr_servers(nt);
	const char *end;
	u8 ip[4];
	u16 port;

	if (nr == NETRAM_MAX_SERVERS) {
		nswap2l_bad_table(ti, "Too many Network RAM servers",
				  "netram: more than %u servers", NETRAM_MAX_SERVERS);
		return -EINVAL;
	}
	if (!in4_pton(spec, -1, ip, ':', &end) || *end != ':' ||
	    kstrtou16(end + 1, 10, &port) || !port) {
		nswap2l_bad_table(ti, "Bad Network RAM server address",
				  "netram: '%s' is not IPV4-ADDRESS:PORT", spec);
		return -EINVAL;
	}
	for (i = 0; i < nr; i++)
		if (!memcmp(&nt->servers[i]->addr.sin_addr, ip, 4) &&
		    nt->servers[i]->addr.sin_port == htons(port) &&
		    READ_ONCE(nt->servers[i]->state) != NETRAM_REMOVED) {
			nswap2l_bad_table(ti, "Network RAM server given twice",
					  "netram: server %s given twice", spec);
			return -EINVAL;
		}

	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv)
		goto nomem;
	*result = srv;
	srv->nt = nt;
	srv->index = nr;
	srv->addr.sin_family = AF_INET;
	memcpy(&srv->addr.sin_addr, ip, 4);
	srv->addr.sin_port = htons(port);
	snprintf(srv->name, sizeof(srv->name), "%pI4:%u", ip, port);
	INIT_WORK(&srv->send_work, netram_send_work);
	init_waitqueue_head(&srv->wait);
	mutex_init(&srv->sock_mutex);
	mutex_init(&srv->send_mutex);
	spin_lock_init(&srv->lock);
	srv->state = NETRAM_CONNECTING;
	srv->down_since = jiffies;
	bio_list_init(&srv->queue);

	srv->msgs = kvcalloc(NETRAM_TAGS, sizeof(*srv->msgs), GFP_KERNEL);
	srv->free_keys = kvcalloc(NETRAM_FREE_QUEUE, sizeof(u64), GFP_KERNEL);
	srv->evict_buf = kvcalloc(NSWAP2L_PROTO_MAX_KEYS, sizeof(__le64), GFP_KERNEL);
	srv->evict.keys = kvcalloc(NETRAM_EVICT_KEYS, sizeof(u64), GFP_KERNEL);
	srv->evict.job_keys = kvcalloc(NETRAM_EVICT_KEYS, sizeof(u64), GFP_KERNEL);
	if (!srv->msgs || !srv->free_keys || !srv->evict_buf || !srv->evict.keys ||
	    !srv->evict.job_keys)
		goto nomem;
	return 0;
nomem:
	ti->error = "Cannot allocate Network RAM server";
	return -ENOMEM;
}

static void netram_publish_server(struct netram_tier *nt, struct netram_server *srv)
{
	nt->servers[srv->index] = srv;
	smp_store_release(&nt->nr_servers, srv->index + 1);
}

static int netram_start_server(struct netram_server *srv)
{
	srv->receiver = kthread_run(netram_receiver, srv, "nswap2l-net/%u", srv->index);
	if (IS_ERR(srv->receiver)) {
		srv->receiver = NULL;
		srv->nt->ti->error = "Cannot start Network RAM thread";
		return -ENOMEM;
	}
	return 0;
}

/* The result of the server's first connection attempt, explained in dmesg. */
static int netram_first_connection(struct netram_server *srv)
{
	int r;

	wait_event(srv->wait, smp_load_acquire(&srv->first_done));
	r = srv->first_result;
	if (r)
		nswap2l_bad_table(srv->nt->ti, "Cannot reach Network RAM server",
				  "netram: server %s %s (error %d)", srv->name,
				  netram_error_text(r), r);
	return r;
}

static int netram_parse_servers(struct netram_tier *nt, const char *arg)
{
	char *list, *cursor, *spec;
	int r = 0;

	list = kstrdup(arg, GFP_KERNEL);
	if (!list) {
		nt->ti->error = "Cannot allocate Network RAM server list";
		return -ENOMEM;
	}
	cursor = list;
	while (!r && (spec = strsep(&cursor, ","))) {
		struct netram_server *srv = NULL;

		r = netram_new_server(nt, spec, &srv);
		if (srv)
			netram_publish_server(nt, srv);
	}
	kfree(list);
	return r;
}

/* key=:<size>:<type>:<description> (dm-crypt's form), type logon or user. */
static int netram_set_key(struct netram_tier *nt, const char *spec)
{
	struct dm_target *ti = nt->ti;
	const struct user_key_payload *payload;
	struct key_type *type;
	unsigned int size;
	const char *type_name, *desc;
	struct key *key;
	int r, n = 0;

	if (!spec) {
		nswap2l_bad_table(ti, "Network RAM needs a key",
				  "netram= needs key=:<size>:logon:<description>");
		return -EINVAL;
	}
	/* ":<size>:<type>:<description>", the description may hold colons */
	if (sscanf(spec, ":%u:%n", &size, &n) != 1 || !n)
		goto bad_spec;
	type_name = spec + n;
	desc = strchr(type_name, ':');
	if (!desc || !desc[1])
		goto bad_spec;
	desc++;
	if (!strncmp(type_name, "logon:", 6)) {
		type = &key_type_logon;
	} else if (!strncmp(type_name, "user:", 5)) {
		type = &key_type_user;
	} else {
		nswap2l_bad_table(ti, "Bad key type",
				  "key=%s: key type must be logon or user", spec);
		return -EINVAL;
	}
	if (size < NSWAP2L_PROTO_MIN_KEY_SIZE || size > NSWAP2L_PROTO_MAX_KEY_SIZE) {
		nswap2l_bad_table(ti, "Bad key size",
				  "key=%s: size %u outside %u..%u bytes", spec, size,
				  NSWAP2L_PROTO_MIN_KEY_SIZE, NSWAP2L_PROTO_MAX_KEY_SIZE);
		return -EINVAL;
	}

	key = request_key(type, desc, NULL);
	if (IS_ERR(key)) {
		nswap2l_bad_table(ti, "Key not found",
				  "key=%s: no %s key '%s' in the keyring (error %ld)",
				  spec, type->name, desc, PTR_ERR(key));
		return PTR_ERR(key);
	}
	down_read(&key->sem);
	payload = user_key_payload_locked(key);
	if (!payload || payload->datalen != size) {
		nswap2l_bad_table(ti, "Key size mismatch",
				  "key=%s: the key holds %u bytes, not %u", spec,
				  payload ? payload->datalen : 0, size);
		r = -EINVAL;
	} else {
		r = crypto_shash_setkey(nt->hmac, payload->data, size);
		if (r)
			ti->error = "Cannot set the key";
	}
	up_read(&key->sem);
	key_put(key);
	return r;

bad_spec:
	nswap2l_bad_table(ti, "Bad key specification",
			  "key=%s: expected :<size>:<logon|user>:<description>", spec);
	return -EINVAL;
}

static const char *netram_error_text(int error)
{
	switch (error) {
	case -EKEYREJECTED:
		return "rejected the key (or does not know it)";
	case -ECONNREFUSED:
		return "refused the connection";
	case -ETIMEDOUT:
	case -EAGAIN:
		return "did not answer in time";
	case -EPROTONOSUPPORT:
		return "speaks another protocol version";
	default:
		return "failed";
	}
}

/* Start the servers' threads and wait for their first connection attempts. */
static int netram_start(struct netram_tier *nt)
{
	unsigned int i;
	int r = 0;

	for (i = 0; i < netram_nr_servers(nt) && !r; i++)
		r = netram_start_server(nt->servers[i]);
	for (i = 0; i < netram_nr_servers(nt) && !r; i++)
		r = netram_first_connection(nt->servers[i]);
	if (!r)
		queue_delayed_work(nt->wq, &nt->watchdog, HZ);
	return r;
}

static int netram_create(struct dm_target *ti, const struct nswap2l_tier_type *type,
			 const char *arg, const struct nswap2l_tier_options *opts,
			 struct nswap2l_tier **result)
{
	struct netram_tier *nt;
	int r;

	nt = kzalloc(sizeof(*nt), GFP_KERNEL);
	if (!nt) {
		ti->error = "Cannot allocate Network RAM tier";
		return -ENOMEM;
	}
	nt->tier.type = type;
	nt->ti = ti;
	nt->timeout = opts->timeout_secs * HZ;
	get_random_bytes(nt->client_id, sizeof(nt->client_id));
	mutex_init(&nt->servers_mutex);
	INIT_DELAYED_WORK(&nt->watchdog, netram_watchdog);

	nt->hmac = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(nt->hmac)) {
		ti->error = "Cannot allocate hmac(sha256)";
		r = PTR_ERR(nt->hmac);
		goto bad;
	}
	r = netram_set_key(nt, opts->key_spec);
	if (r)
		goto bad;
	r = netram_parse_servers(nt, arg);
	if (r)
		goto bad;

	nt->wq = alloc_workqueue("nswap2l-net-%s", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0,
				 dm_table_device_name(ti->table));
	if (!nt->wq) {
		ti->error = "Cannot allocate Network RAM workqueue";
		r = -ENOMEM;
		goto bad;
	}
	r = netram_start(nt);
	if (r)
		goto bad;

	*result = &nt->tier;
	return 0;
bad:
	netram_destroy(ti, &nt->tier);
	return r;
}

/*----------------------------------------------------------------
 * add_server / remove_server messages
 *--------------------------------------------------------------*/
static bool netram_drain_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_server *srv = container_of(job, struct netram_server, drain_job);

	return (slot & NETRAM_SLOT_SERVER_MASK) == srv->index;
}

static void netram_drain_done(struct nswap2l_move_job *job)
{
	struct netram_server *srv = container_of(job, struct netram_server, drain_job);
	const char *dev = netram_dev_name(srv->nt);
	s64 held = atomic64_read(&srv->held);

	if (held) {
		/*
		 * A write that lands during a page's copy cancels that move;
		 * such pages move on the next pass.  Passes go on while they
		 * make progress: no new pages come to a draining server.
		 */
		if (job->moved && nswap2l_queue_move(srv->nt->tier.nc, job))
			return;
		DMERR("%s: server %s: %lld pages could not be moved (no room elsewhere, or unreadable); it stays, remove_server retries",
		      dev, srv->name, held);
		WRITE_ONCE(srv->draining, false);
		return;
	}
	DMINFO("%s: server %s drained and removed", dev, srv->name);
	spin_lock_irq(&srv->lock);
	srv->state = NETRAM_REMOVED;
	spin_unlock_irq(&srv->lock);
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

static int netram_remove_server(struct netram_tier *nt, const char *name)
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

static int netram_add_server(struct netram_tier *nt, const char *spec)
{
	struct netram_server *srv = NULL;
	int r;

	r = netram_new_server(nt, spec, &srv);
	if (!r)
		r = netram_start_server(srv);
	if (!r)
		r = netram_first_connection(srv);
	if (r) {
		if (srv)
			netram_destroy_server(srv);
		return r;
	}
	netram_publish_server(nt, srv);
	DMINFO("%s: server %s added", netram_dev_name(nt), srv->name);
	return 0;
}

static int netram_message(struct nswap2l_tier *tier, unsigned int argc, char **argv)
{
	struct netram_tier *nt = to_netram_tier(tier);
	int r = -ENOTTY;

	if (argc != 2)
		return r;
	mutex_lock(&nt->servers_mutex);
	if (!strcasecmp(argv[0], "add_server"))
		r = netram_add_server(nt, argv[1]);
	else if (!strcasecmp(argv[0], "remove_server"))
		r = netram_remove_server(nt, argv[1]);
	mutex_unlock(&nt->servers_mutex);
	return r;
}

static const struct nswap2l_tier_ops netram_tier_ops = {
	.create = netram_create,
	.destroy = netram_destroy,
	.alloc_slot = netram_alloc_slot,
	.free_slots = netram_free_slots,
	.map = netram_map,
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
};
