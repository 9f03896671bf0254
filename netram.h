/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network RAM tier internals, shared by its files (nvme-tcp's split of
 * transport and core):
 *
 *   tier_netram.c    tier operations, servers' life cycle, messages
 *   netram_args.c    the table options: key= client= reliability= protect=
 *                    timeout=, parsed, checked on reload, printed back
 *   netram_servers.c the transport's events, the watchdog (failure)
 *   netram_conn.c    connection and socket I/O: receiver thread, reconnect,
 *                    the one send/receive helper
 *   netram_auth.c    the key and the handshake
 *   netram_req.c     request queue, batching, non-blocking sending, replies,
 *                    EVICT read and answered
 *   netram_evict.c   servers asking for memory back (EVICT), remove_server
 *   netram_moved.c   pages a server moved to another server (MOVED)
 *   netram_recover.c copies lost with a server made again (reliability=)
 *   netram_copies.c  reliability=none and mirror (netram_scheme.h)
 *   netram_parity.c  reliability=parity: writing groups and their parity,
 *                    rebuilds; netram_group.c its table of groups
 *   netram_protect.c protect=: pages encrypted and authenticated end to end
 *   netram_state.c   servers' state machine and accounting, below all of these
 *
 * Locking, outermost first:
 *
 *   nt->servers_mutex       add_server, remove_server, reload; may take
 *                           srv->sock_mutex (netram_reuse_slot()) and srv->lock
 *   srv->send_mutex         one sender; a send error shuts the socket, so
 *     srv->sock_mutex       it may take sock_mutex (never the reverse)
 *       sk_callback_lock    set and restored under sock_mutex; read in
 *                           netram_write_space(), which only queues io_work
 *   p->lock                 parity groups (netram_group.h); taken with no
 *                           other Network RAM lock held, takes srv->lock
 *                           inside (netram_hold_keys(), netram_release_keys())
 *   srv->lock               a server's queue, keys and state, irq-safe: bios
 *                           complete and are mapped in any context; also
 *                           taken inside send_mutex (netram_next_tx()).
 *                           Several at once only in netram_copies_alloc():
 *                           by increasing server index, spin_lock_nested()
 *                           by copy number
 *   nt->recovery.lock       a leaf
 *
 * No mutex is taken under a spinlock.
 */
#ifndef NSWAP2L_NETRAM_H
#define NSWAP2L_NETRAM_H

#include <linux/in.h>
#include <linux/kthread.h>
#include <linux/mempool.h>
#include <linux/net.h>

#include "nswap2l.h"

struct netram_protect;
struct netram_crypt;
struct netram_poly1305_ops;

#define NETRAM_MAX_SERVERS	16	/* at a time; removed servers' slots are reused */
#define NETRAM_BOUNCE_WANTED	0	/* bit of bounce_flags: a PUT waits for the pool */
#define NETRAM_NO_INDEX		NETRAM_MAX_SERVERS	/* not published yet */
#define NETRAM_TAGS		32	/* messages in flight per server */
/*
 * GETs, and PUTs, in flight per connection before the next of their kind
 * waits.  Small requests cost per message, not per page: holding the next
 * ones back while two are out makes them queue up and go together, one
 * message and one reply for many pages (4 KiB random writes at QD16 went
 * one page a PUT while PUTs were never held).  Requests that fill a whole
 * message are not held back: large transfers keep the link busy.
 */
#define NETRAM_BATCHING_DEPTH	2
#define NETRAM_FREE_BATCH	512	/* keys per FREE message */
#define NETRAM_FREE_QUEUE	8192	/* keys waiting to be freed, per server */
/*
 * NSWAP2L_CAP_PUT_FREES: keys to free wait this long for a PUT to carry
 * them before they go in a FREE of their own.  A writer's next PUT comes
 * well within it (a page written per millisecond is slow, even in an
 * emulator), so an overwrite costs one message; a server gets its memory
 * back a moment later than it would, which nobody waits for (an EVICT
 * answer, a full batch and the heartbeat do not wait).
 */
#define NETRAM_FREE_DELAY	(HZ / 20)
#define NETRAM_HANDSHAKE_TIMEOUT (5 * HZ)
/* What a device's removal waits for its servers' RELEASE replies, all together. */
#define NETRAM_RELEASE_TIMEOUT	(HZ / 2)
/*
 * A connection idle for half the timeout carries a heartbeat: a FREE of key
 * 0, which no page has (keys start at 1) and which every server answers.
 * A server that does not answer it in time fails like any other request, so
 * a dead or stalled server is found before a read needs it.
 */
#define NETRAM_HEARTBEAT_KEY	0
/*
 * NSWAP2L_CAP_SEALED_GET: the MAC of a GET reply leaves its pages out, so a
 * page that fails its seal may have been altered on the way: it is read
 * again on a new connection, and its read fails only when this many more
 * connections in a row refused it too (the server holds it altered).
 */
#define NETRAM_SEAL_RETRIES	1
#define NETRAM_BACKOFF_MIN	(HZ / 10)
#define NETRAM_BACKOFF_MAX	(10 * HZ)

/*
 * Move jobs over the map (drain, recovery) make passes while they make
 * progress, and a few more without: a server that refused a page because
 * it was fuller than its last word is skipped on the next pass.
 */
#define NETRAM_IDLE_PASSES	3

/* After a pass of @job: may another go, with *@idle passes in a row that moved nothing? */
static inline bool netram_another_pass(const struct nswap2l_move_job *job, unsigned int *idle)
{
	*idle = job->moved ? 0 : *idle + 1;
	return *idle <= NETRAM_IDLE_PASSES;
}

/* Keys waiting to be moved; more are answered NOSPC and asked again later. */
#define NETRAM_EVICT_KEYS	(16 * NSWAP2L_PROTO_MAX_KEYS)
#define NETRAM_EVICT_REPLIES	64

/*
 * A slot is (page key << 8 | second server << 4 | first server): a page's
 * copies share its key, so both homes fit in the map entry and one atomic
 * update of the entry moves both.  One copy: both indexes are equal.  Keys
 * come from one counter per tier and are never reused, on any server.
 */
#define NETRAM_SLOT_SERVER_BITS	4
#define NETRAM_SLOT_SERVER_MASK	0xfULL
#define NETRAM_SLOT_KEY_SHIFT	8
#define NETRAM_MAX_COPIES	2

/* reliability=parity: a group has runs of this many pages, one per member (netram_parity.c) */
#define NETRAM_PARITY_RUN	16
#define NETRAM_PARITY_MEMBERS	NSWAP2L_MAX_PARITY_GROUP

/* A server's state: one word under srv->lock, changed by netram_set_state() alone. */
enum netram_state {
	NETRAM_CONNECTING,	/* never connected since created or its slot reused: takes nothing */
	NETRAM_UP,
	NETRAM_UP_FAILED,	/* a request overdue: its socket is shut, it takes nothing */
	NETRAM_DOWN,		/* connection lost, reconnecting, within the timeout */
	NETRAM_DOWN_FAILED,	/* unreachable for longer than the timeout */
	NETRAM_REMOVED,		/* drained and disconnected by remove_server */
	NETRAM_NR_STATES
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

/*
 * Where a request message is, changed under srv->lock.  A reply is trusted
 * only for a message wholly sent: one that comes earlier is from a broken
 * or hostile server (it would complete bios whose pages are still being
 * encrypted or sent), and it closes the connection.
 */
enum netram_msg_state {
	NETRAM_MSG_SEALING,		/* taken, being encrypted and MACed: not overdue */
	NETRAM_MSG_SENDING,		/* in srv->tx, going out; its timeout runs */
	NETRAM_MSG_SENT,		/* wholly on the wire: its reply may come */
};

/*
 * A COPY (NSWAP2L_CAP_COPY): keys of ours that @from stores on @to itself,
 * for mirror recovery (netram_copies.c).  It goes out like a request but
 * is never sent again: a connection lost before its reply stored nothing
 * (the server frees on @to what it copied).  Done, its stored bits say
 * which keys @to holds for us now.
 */
struct netram_copy {
	struct list_head list;		/* on from->copies until sent */
	struct netram_server *from, *to;
	struct nswap2l_moved where;	/* @to's server id, our client_id there */
	unsigned int nr_keys;
	u64 keys[NSWAP2L_PROTO_MAX_COPY_KEYS];	/* sorted once queued */
	DECLARE_BITMAP(stored, NSWAP2L_PROTO_MAX_COPY_KEYS);
	struct completion done;
	/* the recovery's, on the mover's thread alone */
	bool collecting;		/* keys being added in this batch */
	unsigned int unasked;		/* sent, pages not told the outcome yet */
};

/* A COPY message's payload: where, then its keys. */
static inline size_t netram_copy_len(unsigned int nr_keys)
{
	return sizeof(struct nswap2l_moved) + nr_keys * sizeof(__le64);
}

/*
 * One request message in flight; indexed by its tag.  A PUT or GET carries
 * the pages of whole bios, each a run of consecutive keys.
 */
struct netram_msg {
	u16 type;			/* enum nswap2l_msg_type */
	u16 count;			/* keys (and pages) */
	u16 nr_bios;
	u16 nr_frees;			/* a PUT's keys to free (NSWAP2L_CAP_PUT_FREES) */
	enum netram_msg_state state;
	u64 seq;			/* send order, to resend in order */
	unsigned long sent_at;		/* jiffies, when it started going out */
	struct bio *bios[NSWAP2L_PROTO_MAX_PAGES];
	struct netram_copy *copy;	/* a COPY's, its payload in keys[] */
	/*
	 * keys; a PUT's or GET reply's seals follow them (netram_msg_seals()),
	 * then a PUT's keys to free (netram_msg_frees())
	 */
	__le64 keys[NETRAM_FREE_BATCH];
	/*
	 * protect=: a PUT's pages encrypted into bounce pages, sent in place of
	 * the bios' (sealed points at it then); they go back to the server's
	 * pool when the PUT is answered or sent again.
	 */
	struct bio *sealed;
	struct bio bounce;
	struct bio_vec bounce_vecs[NSWAP2L_PROTO_MAX_PAGES];
	/* bounce pages a mirrored write sealed once for both copies: not the pool's */
	DECLARE_BITMAP(borrowed, NSWAP2L_PROTO_MAX_PAGES);
};

/* A Network RAM bio is whole protocol pages (the target's I/O limits). */
static inline unsigned int netram_bio_pages(struct bio *bio)
{
	return bio->bi_iter.bi_size / NSWAP2L_PROTO_PAGE_SIZE;
}

static inline struct nswap2l_seal *netram_msg_seals(struct netram_msg *msg)
{
	BUILD_BUG_ON(NSWAP2L_PROTO_MAX_PAGES * (sizeof(__le64) + NSWAP2L_PROTO_SEAL_SIZE) >
		     sizeof(msg->keys));
	BUILD_BUG_ON(sizeof(struct nswap2l_seal) != NSWAP2L_PROTO_SEAL_SIZE);
	return (struct nswap2l_seal *)&msg->keys[msg->count];
}

static inline __le64 *netram_msg_frees(struct netram_msg *msg)
{
	BUILD_BUG_ON(NSWAP2L_PROTO_MAX_PAGES * (sizeof(__le64) + NSWAP2L_PROTO_SEAL_SIZE) +
		     NSWAP2L_PROTO_MAX_PUT_FREES * sizeof(__le64) > sizeof(msg->keys));
	return (__le64 *)(netram_msg_seals(msg) + msg->count);
}

/* Page segments handed to one sendmsg() of PUT data. */
#define NETRAM_TX_SEGMENTS	32

/*
 * The message being written to the socket, maybe in part: sending never
 * blocks, and what a full socket did not take goes out when the socket
 * has room again (sk_write_space).
 */
struct netram_tx {
	struct netram_msg *msg;		/* NULL for an EVICT answer */
	struct nswap2l_msg_header hdr;
	const __le64 *keys;		/* and a PUT's seals and keys to free after them */
	size_t keys_len;
	struct bio *const *bios;	/* PUT: their pages follow the keys */
	unsigned int nr_bios;
	u8 mac[NSWAP2L_PROTO_MSG_MAC_SIZE];	/* follows the message */
	size_t len;			/* 0: nothing being sent */
	size_t sent;
};

/*
 * A page that failed its seal (NSWAP2L_CAP_SEALED_GET): on how many
 * connections in a row, up to the last one that refused it.
 */
struct netram_refusal {
	u64 key;
	u32 connection;			/* srv->connections then */
	u32 times;
};

struct netram_server;
struct netram_moved;

/*
 * What the transport (netram_conn.c, netram_req.c) reports up, to the
 * server's life cycle (netram_servers.c), which calls back down only.
 */
struct netram_xport_events {
	/* receiver, before the server is up: it came back without our namespace */
	void (*namespace_lost)(struct netram_server *srv);
	/* receiver, once the server is up and its queue runs again */
	void (*connected)(struct netram_server *srv);
	/* receiver: keys an EVICT asks back, its MAC checked */
	int (*evict)(struct netram_server *srv, u32 tag, const __le64 *keys, u32 count);
};

struct netram_server {
	struct netram_tier *nt;
	const struct netram_xport_events *ev;
	unsigned int index;		/* in nt->servers[], or NETRAM_NO_INDEX */
	struct sockaddr_in addr;
	char name[24];			/* a.b.c.d:port */

	struct task_struct *receiver;
	struct work_struct io_work;	/* sends what is queued */
	struct delayed_work free_work;	/* sends keys to free once due (NETRAM_FREE_DELAY) */
	wait_queue_head_t wait;		/* first connection attempt done */

	struct mutex sock_mutex;	/* sock, stopping and the socket callbacks */
	struct socket *sock;
	bool stopping;			/* no new socket: the server is going away */
	void (*saved_write_space)(struct sock *sk);
	u32 max_pages;			/* per PUT/GET, from the server's HELLO */
	/*
	 * NSWAP2L_CAP_SEALED_GET, _PUT_FREES, _MOVED, _COPY and _RELEASE, if in effect on
	 * this connection: set by its handshake before the server is up, read by
	 * the receiver and under lock.
	 */
	u64 caps;
	/* pages refused by their seals on the last connections; receiver only */
	struct netram_refusal refusals[NSWAP2L_PROTO_MAX_PAGES];

	struct mutex send_mutex;	/* one sender at a time; tx, tx_seq */
	struct netram_tx tx;
	/* This connection's session keys, in HMACs giving each message its Poly1305 key. */
	struct crypto_shash *tx_hmac, *rx_hmac;
	const struct netram_poly1305_ops *poly1305;	/* the session MAC's, netram_fastest.c */
	u64 tx_seq;
	u64 rx_seq;			/* receiver only */
	/* protect=: the sender's (under send_mutex) and the receiver's */
	struct netram_crypt *tx_crypt, *rx_crypt;
	/*
	 * protect=: bounce pages for this server's PUTs alone, so that a
	 * stalled server can hold no more than its own reserve; a PUT that
	 * finds none waits in the queue, never in the sender, until a PUT of
	 * this server gives some back (NETRAM_BOUNCE_WANTED).
	 */
	mempool_t bounce_pool;
	unsigned long bounce_flags;

	spinlock_t lock;		/* protects everything below */
	enum netram_state state;
	/*
	 * netram_state_failed(state), kept by netram_set_state() for lockless
	 * readers; a server removed while failed stays failed.
	 */
	bool failed;
	bool draining;			/* remove_server: take no new pages */
	bool ever_up;
	u32 connections;		/* counts successful connects */
	int first_result;		/* of the first connection attempt */
	bool first_done;
	unsigned long down_since;
	unsigned long last_sent;	/* jiffies, the last request message taken */
	struct bio_list queue;		/* PUT and GET bios, in arrival order */
	struct list_head copies;	/* COPYs to send (struct netram_copy) */
	bool release_wanted;		/* a RELEASE to send (netram_release_namespaces()) */
	bool release_asked;
	struct completion released;	/* its reply came */
	u64 *free_keys;			/* a stack: the bottom one is the oldest */
	unsigned int nr_free_keys;
	unsigned long free_since;	/* jiffies, when the bottom one came */
	unsigned long busy_tags;
	unsigned int in_flight[2];	/* GETs and PUTs, by bio_data_dir() */
	/*
	 * Mirrored reads (netram_copies.c), lockless hints that choose the copy
	 * to read: sent and not completed, when the last one completed, and an
	 * average of how long they took (0: unknown).
	 */
	atomic_t reads_out;
	u64 read_done_ns;
	u64 read_ewma_ns;
	u64 next_seq;
	struct netram_msg *msgs;	/* NETRAM_TAGS */
	__le64 *evict_buf;		/* one EVICT's keys, receiver only */
	struct netram_eviction evict;
	struct nswap2l_move_job drain_job;
	unsigned int drain_idle_passes;	/* in a row, that moved nothing */
	s64 drain_held;			/* pages held after the last pass */

	/*
	 * Pages we stored here before lost_below are gone: the server came back
	 * with a new namespace, or was failed (it is treated as empty when it
	 * comes back).  lost_held of the held pages are such lost copies; both
	 * change under lock, with held, so that the count is exact.
	 */
	u64 lost_below;
	s64 lost_held;
	u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];	/* our namespace on it */
	bool renew_id;			/* failed: the next connection opens a new namespace */
	bool new_namespace_ok;		/* no pages stored in this namespace yet */

	atomic64_t held;		/* pages (copies) the map keeps on this server */
	atomic64_t free_estimate;	/* reported free pages, minus our new ones */
	atomic64_t free_reported;
	/*
	 * Keys queued for a FREE, or in a FREE or PUT not yet answered: room
	 * the server's free_pages will show once it has them.  Network RAM's
	 * capacity counts it, so that pages just moved away do not look like
	 * room still missing (a prefetch worker would move as many again).
	 */
	atomic64_t freeing;
	atomic64_t bytes_sent;
	atomic64_t bytes_received;
	atomic64_t requests;		/* PUT, GET and FREE messages sent */
	atomic64_t sealed;		/* pages the sender encrypted for PUTs (protect=) */
	atomic64_t errors;
	atomic64_t reconnects;
	atomic64_t evict_asked;		/* pages the server asked back */
	atomic64_t evict_moved;		/* of which we moved elsewhere */
	/* NSWAP2L_CAP_MOVED (netram_moved.c); NULL unless the tier is write-once */
	struct netram_moved *moved;
	atomic64_t moved_in;		/* pages other servers moved here (MOVED) */
	atomic64_t moved_out;		/* pages this server moved to others */
};

/*
 * Copies lost with a server are made again by a move job over the map
 * (the mover reads the surviving copy and writes the lost one on another
 * server, or a new pair); pages with no
 * copy left are counted, and read as EIO until written or discarded.
 */
struct netram_recovery {
	struct nswap2l_move_job job;
	spinlock_t lock;		/* protects everything below */
	bool running;
	bool again;			/* more copies were lost during this pass */
	bool wanted;			/* copies marked lost, recovery not queued yet (no lock) */
	unsigned long started;		/* jiffies, when the first loss came */
	u64 moved;			/* pages moved in this recovery */
	unsigned int idle_passes;	/* in a row, that moved nothing */
	u64 pass_lost;			/* pages found with no copy left, in this pass */
	u64 pages_lost;			/* such pages, ever */
	/* Servers' lost_below when this pass began, and when the last one did. */
	u64 pass_below[NETRAM_MAX_SERVERS];
	u64 counted_below[NETRAM_MAX_SERVERS];
	u64 last_ms;			/* how long the last complete recovery took */
	/*
	 * Mirror recovery with NSWAP2L_CAP_COPY: survivors copy pages to their
	 * new servers themselves (netram_copies.c); the mover's thread alone.
	 */
	struct netram_copy *copies;	/* NETRAM_RECOVERY_COPIES, NULL without */
	bool copies_off;		/* a COPY stored nothing: the rest goes by the client */
	u64 copied;			/* pages of this recovery copied by servers */
};

/* COPYs one recovery collects or has out at a time: two batches' worth of pairs. */
#define NETRAM_RECOVERY_COPIES	16

struct netram_scheme;

struct netram_tier {
	struct nswap2l_tier tier;
	const struct netram_scheme *scheme;	/* reliability= */
	void *scheme_data;		/* the scheme's own: parity groups */
	struct netram_protect *protect;	/* protect=, NULL for none */
	unsigned int parity_group;	/* its members per group, at most */
	atomic64_t next_key;
	struct bio_set mirror_bios[NETRAM_MAX_COPIES];	/* a mirrored write's clones */
	struct bio_set mirror_reads;	/* a mirrored read's clone */
	struct netram_recovery recovery;
	struct workqueue_struct *wq;	/* io_work, watchdog */
	struct delayed_work watchdog;
	struct crypto_shash *hmac;
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];	/* whose key it is */
	/* key= and protect= as the table gave them, fixed (netram_args.c) */
	char *key_spec;
	char protect_name[NSWAP2L_PROTECT_NAME_SIZE];
	unsigned long timeout;		/* jiffies */
	bool suspended;			/* hold FREEs and EVICT answers */
	const struct nswap2l_server_choice *choice;
	struct mutex servers_mutex;	/* add_server, remove_server, reload; the two below */
	struct list_head pending_reloads;	/* prepared, waiting for resume */
	unsigned int reserved_slots;	/* new slots those will take */
	/*
	 * Slots only ever get added (published with a release store); a
	 * removed server's slot is taken by the next new one in place, so
	 * a server struct lives as long as the tier.
	 */
	unsigned int nr_servers;
	struct netram_server *servers[NETRAM_MAX_SERVERS];
};

static inline struct netram_tier *to_netram_tier(struct nswap2l_tier *tier)
{
	return container_of(tier, struct netram_tier, tier);
}

/* The tier whose recovery @job is (its relabel, new_home, ... hooks). */
static inline struct netram_tier *netram_recovery_tier(struct nswap2l_move_job *job)
{
	return container_of(job, struct netram_tier, recovery.job);
}

static inline unsigned int netram_nr_servers(struct netram_tier *nt)
{
	return smp_load_acquire(&nt->nr_servers);
}

static inline const char *netram_dev_name(struct netram_tier *nt)
{
	return nt->tier.nc->name;
}

static inline u64 netram_slot_key(u64 slot)
{
	return slot >> NETRAM_SLOT_KEY_SHIFT;
}

/* Index of the server that holds copy @copy (0 or 1) of the slot. */
static inline unsigned int netram_slot_server_index(u64 slot, unsigned int copy)
{
	return (slot >> (copy * NETRAM_SLOT_SERVER_BITS)) & NETRAM_SLOT_SERVER_MASK;
}

static inline unsigned int netram_slot_copies(u64 slot)
{
	return netram_slot_server_index(slot, 0) == netram_slot_server_index(slot, 1) ? 1 : 2;
}

static inline u64 netram_make_slot(u64 key, const unsigned int *servers, unsigned int copies)
{
	return key << NETRAM_SLOT_KEY_SHIFT |
	       servers[copies - 1] << NETRAM_SLOT_SERVER_BITS | servers[0];
}

static inline struct netram_server *netram_copy_server(struct netram_tier *nt, u64 slot,
						       unsigned int copy)
{
	return nt->servers[netram_slot_server_index(slot, copy)];
}

/* A copy of the slot is on @srv. */
static inline bool netram_slot_on(struct netram_server *srv, u64 slot)
{
	return netram_slot_server_index(slot, 0) == srv->index ||
	       netram_slot_server_index(slot, 1) == srv->index;
}

/* The copy of the page with @key on @srv was lost. */
static inline bool netram_copy_lost(struct netram_server *srv, u64 key)
{
	return key < READ_ONCE(srv->lost_below);
}

static inline bool netram_state_connected(enum netram_state s)
{
	return s == NETRAM_UP || s == NETRAM_UP_FAILED;
}

static inline bool netram_state_failed(enum netram_state s)
{
	return s == NETRAM_UP_FAILED || s == NETRAM_DOWN_FAILED;
}

/* Not a server that failed, is leaving or wants its memory back. */
static inline bool netram_takes_pages(struct netram_server *srv)
{
	return READ_ONCE(srv->state) == NETRAM_UP &&
	       !READ_ONCE(srv->draining) && !READ_ONCE(srv->evict.running);
}

static inline void netram_fill_header(struct nswap2l_msg_header *hdr, u16 type, u32 tag,
				      u32 count, u32 length)
{
	memset(hdr, 0, sizeof(*hdr));	/* status 0 */
	hdr->magic = cpu_to_le32(NSWAP2L_PROTO_MAGIC);
	hdr->type = cpu_to_le16(type);
	hdr->tag = cpu_to_le32(tag);
	hdr->count = cpu_to_le32(count);
	hdr->length = cpu_to_le32(length);
}

/* netram_copies.c: mirror recovery writes the lost copy alone (struct nswap2l_move_job) */
bool netram_mirror_new_home(struct nswap2l_move_job *job, u64 page, u64 old_entry,
			    u64 *install, u64 *write);
void netram_mirror_release_old(struct nswap2l_move_job *job, u64 old_entry, u64 install);
/* ... or has the survivor copy it there (NSWAP2L_CAP_COPY) */
enum nswap2l_relabel netram_mirror_relabel(struct nswap2l_move_job *job, u64 page, u64 old_entry,
					   u64 *entry, u64 *write, bool wait);
void netram_mirror_relabels_asked(struct nswap2l_move_job *job);
/* netram_parity_repair.c: pages of a run repaired in place name its new server */
enum nswap2l_relabel netram_parity_relabel(struct nswap2l_move_job *job, u64 page, u64 old_entry,
					   u64 *entry, u64 *write, bool wait);

/* netram_servers.c */
extern const struct netram_xport_events netram_server_events;
void netram_watchdog(struct work_struct *work);

/* netram_state.c */
/* srv->lock held; false (and a warning) for a transition not allowed. */
bool netram_set_state(struct netram_server *srv, enum netram_state to);
/* The receiver, without srv->lock. */
void netram_note_free(struct netram_server *srv, u64 free_pages);
/* What the server choice sees of each server; returns those that take pages. */
unsigned long netram_server_rooms(struct netram_tier *nt, struct nswap2l_server_room *rooms);
void netram_update_capacity(struct netram_tier *nt);
/* One server's counters, as dmsetup status and sysfs show them. */
int netram_format_server(struct netram_server *srv, char *buf, size_t size);

/* netram_recover.c */
/*
 * Every page stored on @srv so far is gone (@why, for dmesg): its copies
 * are made again where there is a second one.
 */
void netram_lose_copies(struct netram_server *srv, const char *why);
/* The same in two steps, the first under srv->lock (the watchdog's). */
s64 netram_mark_lost(struct netram_server *srv);
void netram_recover_lost(struct netram_server *srv, const char *why, s64 lost);
void netram_queue_recovery(struct netram_tier *nt);
void netram_retry_recovery(struct netram_tier *nt);
void netram_emit_recovery(struct netram_tier *nt, char *result, unsigned int maxlen,
			  unsigned int *sz);

/* netram_conn.c */
int netram_xmit_buf(struct netram_server *srv, struct socket *sock, bool send,
		    void *buf, size_t len, int flags);
int netram_recv_bio(struct netram_server *srv, struct bio *bio);
int netram_send_nowait(struct netram_server *srv, struct iov_iter *iter, int flags);
int netram_send_pages_nowait(struct netram_server *srv, struct bio_vec *bvecs,
			     unsigned int nr, size_t len, int flags);
void netram_shutdown_sock(struct netram_server *srv, bool stop);
int netram_start_server(struct netram_server *srv);
bool netram_unreachable(int error);
int netram_first_result(struct netram_server *srv);
void netram_first_failed(struct netram_server *srv, struct dm_target *ti, int r);
void netram_first_deferred(struct netram_server *srv, int r);
void netram_stop_server(struct netram_server *srv);

/* netram_auth.c */
int netram_set_key(struct netram_tier *nt, struct dm_target *ti, const char *spec);
/*
 * *@found: the server still held our namespace (the pages stored there);
 * *@free_pages: what its AUTH reply says it has free.
 */
int netram_handshake(struct netram_server *srv, struct socket *sock, bool *found,
		     u64 *free_pages);
int netram_alloc_session(struct netram_server *srv);
void netram_free_session(struct netram_server *srv);
/* The MAC of srv->tx, the next message out. */
int netram_seal_tx(struct netram_server *srv);
/*
 * Reads the MAC that follows a received message (@hdr, then @len bytes of
 * @buf or the data of @nr_bios bios) and checks it: -EBADMSG if wrong.
 */
int netram_check_rx(struct netram_server *srv, const struct nswap2l_msg_header *hdr,
		    const void *buf, size_t len, struct bio *const *bios, unsigned int nr_bios);

/* netram_req.c */
void netram_queue_bio(struct netram_server *srv, struct bio *bio);
/* Send @c from c->from, or complete it at once, nothing stored, if it cannot go. */
void netram_queue_copy(struct netram_copy *c);
/* A key to FREE; the caller queues the io_work. */
void netram_add_free_key(struct netram_server *srv, u64 key);
/* The watchdog's FREE of NETRAM_HEARTBEAT_KEY, due at once; the caller queues the io_work. */
void netram_queue_heartbeat(struct netram_server *srv);
/*
 * @key leaves @srv: FREEd there if it was @written, its reservation given
 * back if not.  Returns true if a FREE is due now: the caller queues the
 * io_work (else the key rides on a PUT, or the free_work sends it later).
 */
bool netram_release_key(struct netram_server *srv, u64 key, bool written);
void netram_queue_io(struct netram_server *srv);
void netram_io_work(struct work_struct *work);
void netram_free_work(struct work_struct *work);
void netram_reset_tx(struct netram_server *srv);
int netram_receive_one(struct netram_server *srv);
void netram_requeue_unanswered(struct netram_server *srv);
void netram_fail_queued(struct netram_server *srv);
bool netram_overdue(struct netram_server *srv, unsigned long timeout);

/* netram_evict.c */
int netram_cmp_u64(const void *a, const void *b);
/* Receiver thread; the keys' MAC is checked.  -EPROTO if more than a round is unanswered. */
int netram_evict_keys(struct netram_server *srv, u32 tag, const __le64 *keys, u32 count);
int netram_remove_server(struct netram_tier *nt, const char *name);
/* The server takes and holds nothing: disconnected, its slot free for another. */
void netram_remove_slot(struct netram_server *srv);

/* netram_moved.c: pages a server moved to another (NSWAP2L_CAP_MOVED) */
int netram_moved_alloc(struct netram_server *srv);
void netram_moved_free(struct netram_server *srv);
/* The handshake: the server's id, or NULL when it sent none. */
void netram_moved_set_id(struct netram_server *srv, const u8 *server_id);
/* @to takes pages now and its id is known: where a COPY to it goes; false if not. */
bool netram_moved_where(struct netram_server *to, struct nswap2l_moved *where);
/* Receiver: ASK_NAMESPACE or MOVED, its MAC checked here. */
int netram_receive_moved(struct netram_server *srv, const struct nswap2l_msg_header *hdr);
/* Sender (send_mutex): the next answer to ASK_NAMESPACE or MOVED into @tx; false if none. */
bool netram_next_moved_reply(struct netram_server *srv, struct netram_tx *tx);
/* @nr keys from @key are on @to now, no longer on @from: counted held there. */
void netram_move_held(struct netram_server *from, struct netram_server *to, u64 key,
		      unsigned int nr);
/* The same counts, for keys that came to @to other than by MOVED (a parity repair). */
void netram_transfer_held(struct netram_server *from, struct netram_server *to, u64 key,
			  unsigned int nr);

/* netram_protect.c */
int netram_protect_create(struct netram_tier *nt, struct dm_target *ti, const char *aead);
void netram_protect_destroy(struct netram_tier *nt);
int netram_crypt_alloc(struct netram_server *srv);
void netram_crypt_free(struct netram_server *srv);
/*
 * A PUT's pages into bounce pages (msg->sealed), their seals beside the
 * keys; -EAGAIN, never waiting, if the server's bounce pool is empty (the
 * io_work runs again when a PUT gives pages back).
 */
int netram_seal_put(struct netram_server *srv, struct netram_msg *msg);
/* Its bounce pages back to the server's pool, if it has any. */
bool netram_release_sealed(struct netram_server *srv, struct netram_msg *msg);
/*
 * A mirrored write's pages, encrypted once for both copies (the same
 * ciphertext and seal suit both: the AAD is the key, the same on both
 * servers); their PUTs send these pages in place of bounce pages.
 */
struct netram_sealed_pages {
	unsigned int nr;
	struct nswap2l_seal *seals;	/* nr of them, after pages[] */
	struct page *pages[];
};

/*
 * @bio's pages, the first under @key, sealed for every copy at once; NULL
 * when memory is short (then each server's sender seals its own copy).
 */
struct netram_sealed_pages *netram_seal_once(struct netram_tier *nt, struct bio *bio, u64 key);
void netram_free_sealed_pages(struct netram_sealed_pages *sp);
/* netram_copies.c: what netram_seal_once() made for a mirrored write's clone, or NULL. */
const struct netram_sealed_pages *netram_mirror_sealed(struct bio *bio);
/*
 * A GET reply's pages, decrypted in place; page i of @bio is page @page + i
 * of its message, whose bit in @bad is set if it fails its check.
 */
void netram_open_bio(struct netram_server *srv, struct bio *bio, const __le64 *keys,
		     const struct nswap2l_seal *seals, unsigned long *bad, unsigned int page);
/* The page with @key fails its check for good: counted, and said in dmesg. */
void netram_refuse_page(struct netram_server *srv, u64 key);
void netram_emit_protect(struct netram_tier *nt, char *result, unsigned int maxlen,
			 unsigned int *sz);

#endif /* NSWAP2L_NETRAM_H */
