/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Wire protocol between the dm-nswap2l Network RAM client (the kernel
 * target) and nswapd, the memory server.  Shared verbatim by both sides.
 *
 * TCP, little-endian, every message = one fixed 32-byte header followed by
 * exactly header.length payload bytes.  The receiver checks magic, type,
 * count and length against the limits below before it reads the payload.
 *
 * Session:
 *   client                               server
 *   HELLO (versions, client name, client id, nonce) ->
 *                                     <- HELLO reply (version, server nonce)
 *   AUTH (HMAC proving the key)        ->
 *                                     <- AUTH reply (HMAC proving the key,
 *                                        flag: namespace found)
 *   then PUT / GET / FREE requests, many in flight, each with a tag the
 *   client chooses; the server answers each with a reply carrying the same
 *   tag, the same type | NSWAP2L_MSG_REPLY, a status and its free capacity.
 *   Replies may come in any order.  The server may also send CAPACITY and
 *   EVICT at any time after AUTH (server-chosen tags).
 *
 * Pages are named by a 64-bit page key chosen by the client, below
 * NSWAP2L_PROTO_KEY_LIMIT (dm-nswap2l never reuses a key on one server,
 * so a FREE can never overtake the PUT of a newer page), in the
 * client's own namespace on the server: the namespace is the pair
 * (client name, client id) sent in HELLO and bound by the AUTH MAC, so a
 * connection can only ever name its own pages.  A namespace outlives its
 * connection for the server's grace period, so a client that reconnects
 * finds its pages.
 *
 * Identity: the client name says which key the server checks.  A server
 * may hold one key per client name, so that a client holding a key of its
 * own still cannot claim another client's name, or one key shared by every
 * name (all holders of that key are then one client, told apart only by
 * their client ids).  A client id is random, one per device and server.
 * A server with no key for the name answers AUTH with NSWAP2L_ERR_NO_CLIENT
 * (to a client that announced NSWAP2L_CAP_NO_CLIENT; to any other with
 * NSWAP2L_ERR_AUTH, as before that capability), without checking the proof,
 * so that an operator learns which name the server wants.  Anybody who can
 * connect learns so whether a name is known (the names are not secret, as
 * nbd's export names; the keys are), and nothing else: a known name with a
 * wrong proof gets NSWAP2L_ERR_AUTH.  Neither status is authenticated, so a
 * client takes either for a refusal and acts on nothing else in it.
 *
 * Authentication (the key never crosses the wire): K is the key of the
 * client name (16..NSWAP2L_PROTO_MAX_KEY_SIZE bytes).  Every byte of the
 * handshake is bound into the proofs, so that nobody on the path can
 * change a field of it (a version, max_pages, a capability, free_pages,
 * NAMESPACE_FOUND) without the key:
 *   T          = SHA-256(HELLO header || HELLO payload ||
 *                        HELLO reply header || HELLO reply payload)
 *                (the 32-byte headers and payloads exactly as sent)
 *   client MAC = HMAC-SHA256(K, "nswap2l-client-v3" || client_name ||
 *                               client_id || client_nonce || server_nonce || T)
 *   server MAC = HMAC-SHA256(K, "nswap2l-server-v3" || client_name ||
 *                               client_id || server_nonce || client_nonce || T ||
 *                               AUTH reply header)
 * (labels without their terminating NUL; client_name as its whole
 * NUL-padded field; the AUTH reply header as sent, its flags and
 * free_pages included).  The server proves the key too, so a client never
 * stores pages on, or reads them from, an impostor; the client acts on no
 * handshake field (free_pages, NAMESPACE_FOUND) before that proof checks.
 *
 * Session integrity: every message after the AUTH reply, both ways, is
 * followed by a NSWAP2L_PROTO_MSG_MAC_SIZE-byte MAC (not counted in
 * header.length), so that nothing can be injected, replayed, reordered or
 * taken over by someone on the path without the key:
 *   key(dir)  = HMAC-SHA256(K, label(dir) || client_name || client_id ||
 *                              client_nonce || server_nonce)
 *   otk       = HMAC-SHA256(key(dir), le64 seq)
 *   MAC       = Poly1305(otk, header || payload)
 * except that a GET reply's MAC, with NSWAP2L_CAP_SEALED_GET in effect,
 * covers its header and seals and not its pages:
 *   MAC       = Poly1305(otk, header || seals)
 * Each page is then checked by its own seal alone (the client's AEAD tag
 * over exactly those bytes), so a page read is authenticated once, not
 * twice; the client takes a page whose seal fails as it takes a wrong MAC
 * (the connection closes, the GET goes again), and fails the read only
 * when the same page fails again on a new connection (the server holds it
 * altered).  A PUT's MAC always covers its pages: the server cannot check
 * seals, and must not store bytes changed on the way.
 * label(dir) is "nswap2l-c2s-v3" for the client's messages and
 * "nswap2l-s2c-v3" for the server's; seq counts the messages of that
 * direction from 0, the first after the AUTH reply.  A message whose MAC
 * is wrong closes the connection (the client reconnects and resends).
 * Poly1305 (RFC 8439, r clamped) is a one-time MAC: otk, a PRF of a
 * sequence number never reused under a key of one session, is its key.
 * It costs a few multiplications per 16 bytes, where HMAC-SHA256 over a
 * page took as long as the rest of a request on a CPU without SHA
 * instructions (version 2 did that).
 *
 * Migration (Nswap's Migrate), with NSWAP2L_CAP_MOVED in effect: a server
 * that must shrink (memory pressure, --max lowered, leaving) may hand pages
 * to another server, a peer, directly, and tell their owner the new
 * location; the owner changes its map and moves no page itself.
 *   - Every server has a server id, 16 random bytes chosen at its start (a
 *     restarted server is another server: its pages are gone).  With
 *     NSWAP2L_CAP_MOVED in effect the HELLO reply payload is followed by it
 *     (struct nswap2l_hello_reply_moved), so that the proofs cover it.
 *   - Peers authenticate as clients do, with the peer key (shared by the
 *     servers of a cluster, never by clients): a HELLO announcing
 *     NSWAP2L_CAP_PEER, client_name NSWAP2L_PEER_CLIENT_NAME (no client
 *     can give it: it starts with '.'), client_id the sender's server id,
 *     and the same AUTH and session MACs under the peer key.  A peer
 *     session binds no namespace and carries only PEER_PUT and PEER_FREE;
 *     a client session never carries them.
 *   - The mover asks the owner once which namespace it has on the peer
 *     (ASK_NAMESPACE; the owner names only servers it is connected to now),
 *     stores the pages there as stored here, seals and all (PEER_PUT: the
 *     server never sees a page in clear, and a page's seal, whose AAD is
 *     its key, still checks on the peer under the same key), then sends
 *     MOVED.  Every key of a MOVED stays here, readable, until its reply.
 *   - The owner takes, under its map's lock, each key it still holds here
 *     in a page with no other copy or group member on the peer, if it is
 *     connected to the peer in that namespace: its map names the key on the
 *     peer from then on.  It answers with the keys it did not take (freed
 *     or rewritten meanwhile, or a peer it cannot use): those stay here as
 *     before (a FREE for them may follow), and the server frees on the
 *     peer (PEER_FREE) those of them its PEER_PUT stored there, unless the
 *     owner PUT the key there itself since (a mirror's new copy written
 *     while the page moved): the peer keeps those.  The taken ones the
 *     server frees here itself.
 *     Write-once keys (a client announcing NSWAP2L_CAP_MOVED never PUTs a
 *     key it holds) make this safe: a rewrite is a new key, a freed key is
 *     never taken, so a move can neither resurrect nor lose a write.
 *
 * Copy, with NSWAP2L_CAP_COPY and NSWAP2L_CAP_MOVED in effect: a client
 * that needs another copy of pages it holds on a server S (a mirror whose
 * other server died) may ask S to store them on a peer T itself, so that
 * each page crosses the network once, server to server, and is neither
 * read nor sealed again by the client.
 *   - COPY names T by its server id (the client knows it from T's HELLO
 *     reply) and the client's namespace there (its client_id on T), and
 *     the keys.  S PEER_PUTs, as for a move, every one of them it holds in
 *     the connection's namespace, as stored, seals and all, into (the
 *     connection's client name, that client_id) on T; keys it does not
 *     hold are skipped.  S keeps its own copies: nothing is freed or
 *     MOVED, and a copy is no part of a migration.
 *   - Once T answered every PEER_PUT of it (or went down), S replies with
 *     the keys T stored: those are the client's on T from then on, as if
 *     it had PUT them there, and S never frees them there.  A key T held
 *     already is left there as it was and not named (the client may know
 *     it there, or not, as before); nor are the keys of a PEER_PUT T
 *     refused.  If the connection that asked closes before its reply, S
 *     frees on T (PEER_FREE) what it stored there: the client never learnt
 *     of them.
 *   - NOENT: T is not a peer S is connected to now, or T stored none of
 *     the keys.  NOSPC: S has as many pages on their way to T as it allows
 *     (moves and copies) or no room to send them now.  Either way the
 *     client copies the pages itself, as before NSWAP2L_CAP_COPY.
 *   - A COPY without both capabilities in effect, in a peer session, or
 *     whose length is not that of its count is malformed (INVALID, the
 *     connection closes, nothing copied).
 */
#ifndef _UAPI_LINUX_NSWAP2L_PROTO_H
#define _UAPI_LINUX_NSWAP2L_PROTO_H

#include <linux/types.h>

#define NSWAP2L_PROTO_MAGIC		0x4c32574eU	/* "NW2L" */
#define NSWAP2L_PROTO_VERSION		5

#define NSWAP2L_PROTO_PAGE_SIZE		4096
/* Pages in one PUT or GET (Nswap's PUTPAGES batch). */
#define NSWAP2L_PROTO_MAX_PAGES		64
/* Keys in one FREE or EVICT. */
#define NSWAP2L_PROTO_MAX_KEYS		1024
/* Keys in one COPY (NSWAP2L_CAP_COPY). */
#define NSWAP2L_PROTO_MAX_COPY_KEYS	256
/* Keys to free carried by one PUT (NSWAP2L_CAP_PUT_FREES). */
#define NSWAP2L_PROTO_MAX_PUT_FREES	64
/* Page keys are below this (48 bits: room in the client's map entry). */
#define NSWAP2L_PROTO_KEY_LIMIT		(1ULL << 48)

#define NSWAP2L_PROTO_CLIENT_ID_SIZE	16
/*
 * A client name: 1 to NSWAP2L_PROTO_CLIENT_NAME_SIZE - 1 characters of
 * [A-Za-z0-9_.-], not starting with '.', NUL-padded to the field's size
 * (it names a file on the server).
 */
#define NSWAP2L_PROTO_CLIENT_NAME_SIZE	32
#define NSWAP2L_PROTO_NONCE_SIZE	32
#define NSWAP2L_PROTO_MAC_SIZE		32
#define NSWAP2L_PROTO_MIN_KEY_SIZE	16
#define NSWAP2L_PROTO_MAX_KEY_SIZE	256

#define NSWAP2L_AUTH_CLIENT_LABEL	"nswap2l-client-v3"
#define NSWAP2L_AUTH_SERVER_LABEL	"nswap2l-server-v3"
#define NSWAP2L_SESSION_C2S_LABEL	"nswap2l-c2s-v3"
#define NSWAP2L_SESSION_S2C_LABEL	"nswap2l-s2c-v3"
#define NSWAP2L_PROTO_SESSION_KEY_SIZE	32
#define NSWAP2L_PROTO_MSG_MAC_SIZE	16

/*
 * Every page travels, and is kept on the server, with a seal of this many
 * bytes (struct nswap2l_seal): the server stores it beside the page and
 * gives it back with the page, and never looks inside.
 */
#define NSWAP2L_PROTO_SEAL_SIZE		24

/* Largest payload any message may announce: a full PUT, with frees. */
#define NSWAP2L_PROTO_MAX_PAYLOAD \
	(NSWAP2L_PROTO_MAX_PAGES * (8 + NSWAP2L_PROTO_SEAL_SIZE + NSWAP2L_PROTO_PAGE_SIZE) + \
	 NSWAP2L_PROTO_MAX_PUT_FREES * 8)

enum nswap2l_msg_type {
	/* c->s: struct nswap2l_hello; reply: struct nswap2l_hello_reply */
	NSWAP2L_MSG_HELLO	= 1,
	/* c->s: struct nswap2l_auth; reply: struct nswap2l_auth (server MAC) */
	NSWAP2L_MSG_AUTH	= 2,
	/*
	 * c->s: count __le64 keys, then count seals, then, with
	 * NSWAP2L_CAP_PUT_FREES in effect, 0 to NSWAP2L_PROTO_MAX_PUT_FREES
	 * __le64 keys of pages to free (as many as header.length leaves room
	 * for), then count pages of data; keys, seals and pages in key order.
	 * The keys to free are freed first, as by a FREE (missing keys are
	 * ignored; a freed key is never one of this PUT's own), so that a
	 * write costs one message however often it overwrites.  Then stores or
	 * overwrites every page with its seal, or (status NOSPC) none of them.
	 * Reply: no payload.
	 */
	NSWAP2L_MSG_PUT		= 3,
	/*
	 * c->s: count __le64 keys.  Reply OK: count seals, then count pages,
	 * in key order.  Any key missing: status NOENT and no payload.
	 */
	NSWAP2L_MSG_GET		= 4,
	/* c->s: count __le64 keys; missing keys are ignored.  Reply: no payload. */
	NSWAP2L_MSG_FREE	= 5,
	/*
	 * s->c, unsolicited, tag 0, no payload: free_pages changed a lot.
	 * Not answered.
	 */
	NSWAP2L_MSG_CAPACITY	= 6,
	/*
	 * s->c: count __le64 keys of this client's pages that the server
	 * needs to give back (its machine needs the memory).  The pages stay
	 * readable and writable until the client FREEs them.  The client moves
	 * what it can elsewhere, FREEs the moved keys, then replies (no
	 * payload; status OK, or NOSPC if it had to leave some).  Only sent to
	 * clients that announced NSWAP2L_CAP_EVICT.
	 */
	NSWAP2L_MSG_EVICT	= 7,
	/*
	 * s->c (NSWAP2L_CAP_MOVED), count 0, payload: the server id of a
	 * peer.  Reply OK, payload: the client's client_id on that server
	 * (the namespace that would take its pages there); NOENT, no payload:
	 * the client is not connected to that server now.
	 */
	NSWAP2L_MSG_ASK_NAMESPACE = 8,
	/*
	 * s->c (NSWAP2L_CAP_MOVED): struct nswap2l_moved (where), then count
	 * __le64 keys now also stored there.  Reply: count __le64 keys the
	 * client did not take (0 to the MOVED's count; see Migration).
	 */
	NSWAP2L_MSG_MOVED	= 9,
	/*
	 * peer->s: struct nswap2l_peer_namespace, then count __le64 keys,
	 * count seals, count pages, in key order.  Stores them in that
	 * namespace (made if the client has none here: it then lives for the
	 * grace period without a connection), within the client's quota and
	 * the server's room, all or none (NOSPC).  A key held there already
	 * is never overwritten (it may be another copy the client counts on,
	 * a mirror's): it is left as it was and not stored.  A client name
	 * without a key here: NO_CLIENT.  Reply (OK): count __le64 keys that
	 * were held there already, none or more; otherwise no payload.  Its
	 * free_pages is what the server can take from anyone.
	 */
	NSWAP2L_MSG_PEER_PUT	= 10,
	/*
	 * peer->s: struct nswap2l_peer_namespace, then count __le64 keys to
	 * free there; missing keys are ignored.  Reply: no payload.
	 */
	NSWAP2L_MSG_PEER_FREE	= 11,
	/*
	 * c->s (NSWAP2L_CAP_COPY): struct nswap2l_moved (the peer to copy to
	 * and the client's namespace there), then count __le64 keys, 1 to
	 * NSWAP2L_PROTO_MAX_COPY_KEYS, in any order.  Reply, once the copy is
	 * done (see Copy): OK, count __le64 keys stored on the peer, in key
	 * order, each once; NOENT or NOSPC, no payload.
	 */
	NSWAP2L_MSG_COPY	= 12,
	/*
	 * c->s (NSWAP2L_CAP_RELEASE), count 0, no payload: the client is done
	 * with this namespace for good (its device was removed): the server
	 * frees every page in it now rather than a grace period after the
	 * client left.  Reply OK, no payload; the server then closes the
	 * connection, and the namespace ends with its last connection.  A
	 * copy or move on its way into the namespace (Migration, Copy) is
	 * not undone: what it stores lives for the grace period, as in a
	 * namespace nobody connects to.
	 */
	NSWAP2L_MSG_RELEASE	= 13,
};

/* Set in the type of every reply. */
#define NSWAP2L_MSG_REPLY	0x8000

enum nswap2l_status {
	NSWAP2L_OK		= 0,
	NSWAP2L_ERR_INVALID	= 1,	/* malformed request: connection closes */
	NSWAP2L_ERR_NOSPC	= 2,	/* server full (PUT) */
	NSWAP2L_ERR_NOENT	= 3,	/* no such page (GET) */
	NSWAP2L_ERR_AUTH	= 4,	/* key proof wrong: connection closes */
	NSWAP2L_ERR_VERSION	= 5,	/* no common version: connection closes */
	NSWAP2L_ERR_NO_CLIENT	= 6,	/* AUTH: no key for this client name (only to
					   NSWAP2L_CAP_NO_CLIENT): connection closes */
};

/*
 * Capabilities, announced in HELLO and HELLO reply.  The first two are the
 * client's; each of the others is in effect when both the HELLO and its
 * reply carry it (a server announces the ones it implements).
 */
#define NSWAP2L_CAP_EVICT	(1ULL << 0)	/* client takes EVICT messages */
#define NSWAP2L_CAP_NO_CLIENT	(1ULL << 1)	/* client knows NSWAP2L_ERR_NO_CLIENT */
/*
 * The client checks every page it reads by its seal (page protection on):
 * a GET reply's MAC leaves the pages out (see Session integrity).
 */
#define NSWAP2L_CAP_SEALED_GET	(1ULL << 2)
/* A PUT may carry keys to free (see NSWAP2L_MSG_PUT). */
#define NSWAP2L_CAP_PUT_FREES	(1ULL << 3)
/*
 * Client: takes ASK_NAMESPACE and MOVED, and never PUTs a key it holds.
 * Server: sends its server id in the HELLO reply (see Migration).
 */
#define NSWAP2L_CAP_MOVED	(1ULL << 4)
/* A peer server's HELLO (see Migration); a server announces it back. */
#define NSWAP2L_CAP_PEER	(1ULL << 5)
/*
 * The client sends COPY (see Copy); only with NSWAP2L_CAP_MOVED in effect
 * too.  A server announces it also without peers (its COPYs get NOENT).
 */
#define NSWAP2L_CAP_COPY	(1ULL << 6)
/* The client may send RELEASE when its device goes. */
#define NSWAP2L_CAP_RELEASE	(1ULL << 7)

/* client_name of a peer session, NUL-padded like any other. */
#define NSWAP2L_PEER_CLIENT_NAME	".peer"
#define NSWAP2L_PROTO_SERVER_ID_SIZE	16

/*
 * Header flags: 0, except in the AUTH reply, where the server says whether
 * it already held a namespace for this client id.  Without the flag the
 * namespace is new: every page the client stored there before is gone (the
 * server restarted, or freed them after its grace period), and the client
 * must never read one of them.
 */
#define NSWAP2L_FLAG_NAMESPACE_FOUND	0x1

struct nswap2l_msg_header {
	__le32 magic;		/* NSWAP2L_PROTO_MAGIC */
	__le16 type;		/* enum nswap2l_msg_type, | REPLY in replies */
	__le16 flags;		/* NSWAP2L_FLAG_*, see above */
	__le32 tag;		/* chosen by the requester, echoed in the reply */
	__le32 count;		/* keys or pages in the payload */
	__le32 length;		/* payload bytes after this header */
	__le32 status;		/* replies: enum nswap2l_status; requests: 0 */
	__le64 free_pages;	/* replies, CAPACITY, EVICT: pages the server can
				   still take from this client */
};

/*
 * A page's seal, opaque to the server.  dm-nswap2l's page protection
 * (protect=, on by default) encrypts every page before it leaves the
 * client, with an AEAD under a key that never leaves the client:
 *   nonce (12 bytes) = le32 0 || le64 nonce, a counter of the device's
 *                      encryptions, never reused under its key
 *   AAD              = le64 page key
 *   tag              = the AEAD's 16-byte tag
 * so a page the server returns altered, under another key, or from an
 * older write of the page (an overwrite takes a new key) fails its
 * check.  Without protection the seal is all zeros.  It costs the server
 * 24 bytes per 4 KiB page (0.6 %).
 */
struct nswap2l_seal {
	__le64 nonce;
	__u8 tag[16];
};

struct nswap2l_hello {
	__le32 version_min;
	__le32 version_max;
	__le64 capabilities;
	__u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	__u8 client_nonce[NSWAP2L_PROTO_NONCE_SIZE];
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
};

struct nswap2l_hello_reply {
	__le32 version;		/* chosen by the server */
	__le32 max_pages;	/* largest PUT/GET it takes, <= MAX_PAGES */
	__le64 capabilities;
	__u8 server_nonce[NSWAP2L_PROTO_NONCE_SIZE];
};

/* Follows struct nswap2l_hello_reply when NSWAP2L_CAP_MOVED is in effect. */
struct nswap2l_hello_reply_moved {
	__u8 server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];
};

/* Where the pages of a MOVED are now; where a COPY's go. */
struct nswap2l_moved {
	__u8 server_id[NSWAP2L_PROTO_SERVER_ID_SIZE];
	__u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];	/* the namespace there */
};

/* Whose pages a PEER_PUT or PEER_FREE names. */
struct nswap2l_peer_namespace {
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
	__u8 client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
};

struct nswap2l_auth {
	__u8 mac[NSWAP2L_PROTO_MAC_SIZE];
};

#endif /* _UAPI_LINUX_NSWAP2L_PROTO_H */
