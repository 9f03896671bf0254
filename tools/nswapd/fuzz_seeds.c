// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_parser into a directory: well-formed
 * sessions (keyed and not, with PUT/GET/FREE, with and without the
 * capabilities SEALED_GET and PUT_FREES, an eviction round answered,
 * a peer that does not read, a message sent too slowly; a peer server's
 * session with PEER_PUT and PEER_FREE, a client's with NSWAP2L_CAP_MOVED
 * answering what it was never asked), one seed per
 * kind of malformed message and one injected without the key, so the
 * fuzzer starts past the handshake.
 * Layout of an input: fuzz_input.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "byteorder.h"
#include "fuzz_input.h"
#include "proto.h"

#define SEED_MAX (256 * 1024)

struct seed {
	uint8_t data[SEED_MAX];
	size_t len;
	uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE];
	/* after the handshake: each message gets its MAC when the next starts */
	bool session;
	struct auth_session keys;
	uint64_t seq;
	size_t msg_start;
};

static void add(struct seed *s, const void *data, size_t len)
{
	if (s->len + len > SEED_MAX) {
		fprintf(stderr, "fuzz_seeds: seed too large\n");
		exit(1);
	}
	memcpy(s->data + s->len, data, len);
	s->len += len;
}

static void config(struct seed *s, uint8_t flags, uint8_t read_size, uint8_t tick_every,
		   uint16_t avail_pages, int8_t step)
{
	uint8_t c[FUZZ_CONFIG_SIZE] = { 0 };

	s->len = 0;
	s->session = false;
	c[FUZZ_FLAGS] = flags;
	c[FUZZ_READ_SIZE] = read_size;
	c[FUZZ_TICK_EVERY] = tick_every;
	c[FUZZ_AVAIL] = (uint8_t)avail_pages;
	c[FUZZ_AVAIL + 1] = (uint8_t)(avail_pages >> 8);
	c[FUZZ_AVAIL_STEP] = (uint8_t)step;
	c[FUZZ_TICK_MS] = 3;
	add(s, c, sizeof(c));
}

/* The MAC of the message from s->msg_start to here. */
static void end_message(struct seed *s)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	if (!s->session || s->msg_start == s->len)
		return;
	auth_message_mac(s->keys.c2s, s->seq++, s->data + s->msg_start, s->len - s->msg_start, mac);
	add(s, mac, sizeof(mac));
	s->msg_start = s->len;
}

static void header(struct seed *s, uint16_t type, uint32_t tag, uint32_t count, uint32_t length,
		   uint32_t status)
{
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = type, .tag = tag,
				    .count = count, .length = length, .status = status };
	uint8_t buf[PROTO_HEADER_SIZE];

	end_message(s);
	proto_encode_header(buf, &hdr);
	add(s, buf, sizeof(buf));
}

/*
 * The fuzzed server's HELLO reply, as conn.c sends it to the HELLO of
 * header(): the transcript, and so the client MAC, cover its bytes.
 */
static uint32_t expected_hello_reply(uint8_t header[PROTO_HEADER_SIZE],
				     uint8_t payload[PROTO_HELLO_REPLY_MOVED_SIZE], uint64_t caps)
{
	/* with NSWAP2L_CAP_MOVED the server id follows: all zero in the fuzzer */
	uint32_t length = caps & NSWAP2L_CAP_MOVED ? PROTO_HELLO_REPLY_MOVED_SIZE :
			  PROTO_HELLO_REPLY_SIZE;
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC,
				    .type = NSWAP2L_MSG_HELLO | NSWAP2L_MSG_REPLY, .tag = 1,
				    .length = length };
	struct nswap2l_hello_reply reply = { .version = NSWAP2L_PROTO_VERSION,
					     .max_pages = NSWAP2L_PROTO_MAX_PAGES,
					     .capabilities = NSWAP2L_CAP_EVICT |
							     NSWAP2L_CAP_SEALED_GET |
							     NSWAP2L_CAP_PUT_FREES |
							     NSWAP2L_CAP_MOVED | NSWAP2L_CAP_PEER |
							     NSWAP2L_CAP_COPY |
							     NSWAP2L_CAP_RELEASE };

	proto_encode_header(header, &hdr);
	memset(payload, 0, PROTO_HELLO_REPLY_MOVED_SIZE);
	proto_encode_hello_reply(payload, &reply);
	return length;
}

/* A client's handshake, or with NSWAP2L_CAP_PEER a peer server's (the same key in the fuzzer). */
static void handshake(struct seed *s, bool keyed, uint64_t caps)
{
	struct nswap2l_hello hello = { .version_min = NSWAP2L_PROTO_VERSION,
				       .version_max = NSWAP2L_PROTO_VERSION, .capabilities = caps,
				       .client_name = "fuzz" };
	uint8_t payload[sizeof(hello)], mac[NSWAP2L_PROTO_MAC_SIZE] = { 0 };
	uint8_t reply_header[PROTO_HEADER_SIZE], reply[PROTO_HELLO_REPLY_MOVED_SIZE];
	uint32_t reply_len;
	struct auth_key key = { .len = sizeof(fuzz_key) };
	struct auth_handshake hs = { 0 };	/* the fuzzed server's nonce is all zero */
	size_t hello_start;

	memcpy(key.bytes, fuzz_key, sizeof(fuzz_key));
	if (caps & NSWAP2L_CAP_PEER)
		strcpy(hello.client_name, NSWAP2L_PEER_CLIENT_NAME);
	memset(hello.client_id, 0xc1, sizeof(hello.client_id));
	memset(hello.client_nonce, 0x5a, sizeof(hello.client_nonce));
	proto_encode_hello(payload, &hello);
	header(s, NSWAP2L_MSG_HELLO, 1, 0, sizeof(payload), 0);
	hello_start = s->len - PROTO_HEADER_SIZE;
	add(s, payload, sizeof(payload));
	auth_handshake_from_hello(&hs, &hello);
	reply_len = expected_hello_reply(reply_header, reply, caps);
	auth_handshake_transcript(&hs, s->data + hello_start, payload, reply_header, reply,
				  reply_len);
	if (keyed)
		auth_client_mac(&key, &hs, mac);
	header(s, NSWAP2L_MSG_AUTH, 2, 0, sizeof(mac), 0);
	add(s, mac, sizeof(mac));
	/* an unkeyed server takes any MAC; these are right for a keyed one */
	auth_session_keys(&key, &hs, &s->keys);
	s->session = true;
	s->seq = 0;
	s->msg_start = s->len;
}

static void add_keys(struct seed *s, uint64_t first, uint32_t count)
{
	uint8_t buf[8];
	uint32_t i;

	for (i = 0; i < count; i++) {
		proto_put_key(buf, 0, first + i);
		add(s, buf, sizeof(buf));
	}
}

/*
 * A PUT (with NSWAP2L_CAP_PUT_FREES, freeing keys free_first.. free_first +
 * nr_frees - 1), GET or FREE of keys first.. first + count - 1.
 */
static void put_freeing(struct seed *s, uint32_t tag, uint64_t first, uint32_t count,
			uint64_t free_first, uint32_t nr_frees)
{
	static uint8_t seal[PROTO_SEAL_SIZE], page[PROTO_PAGE_SIZE];
	uint32_t i;

	header(s, NSWAP2L_MSG_PUT, tag, count,
	       count * (8 + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE) + nr_frees * 8, 0);
	add_keys(s, first, count);
	for (i = 0; i < count; i++) {
		memset(seal, (int)(first + i) ^ 0x5e, sizeof(seal));
		add(s, seal, sizeof(seal));
	}
	add_keys(s, free_first, nr_frees);
	for (i = 0; i < count; i++) {
		memset(page, (int)(first + i), sizeof(page));
		add(s, page, sizeof(page));
	}
}

/* A PEER_PUT (pages as put_freeing()'s) or PEER_FREE into the namespace (name, 0xc2...). */
static void peer_keys(struct seed *s, uint16_t type, uint32_t tag, const char *name,
		      uint64_t first, uint32_t count)
{
	static uint8_t seal[PROTO_SEAL_SIZE], page[PROTO_PAGE_SIZE];
	struct nswap2l_peer_namespace where = { .client_id = { 0xc2 } };
	bool put = type == NSWAP2L_MSG_PEER_PUT;
	uint32_t i;

	strcpy(where.client_name, name);
	header(s, type, tag, count, PROTO_PEER_NS_SIZE +
	       count * (8 + (put ? PROTO_SEAL_SIZE + PROTO_PAGE_SIZE : 0)), 0);
	add(s, &where, sizeof(where));
	add_keys(s, first, count);
	for (i = 0; put && i < count; i++) {
		memset(seal, (int)(first + i) ^ 0x5e, sizeof(seal));
		add(s, seal, sizeof(seal));
	}
	for (i = 0; put && i < count; i++) {
		memset(page, (int)(first + i), sizeof(page));
		add(s, page, sizeof(page));
	}
}

/* A COPY of keys first.. first + count - 1 to peer 0xa0... (namespace 0xc3... there). */
static void copy_keys(struct seed *s, uint32_t tag, uint64_t first, uint32_t count)
{
	struct nswap2l_moved where;

	memset(where.server_id, 0xa0, sizeof(where.server_id));
	memset(where.client_id, 0xc3, sizeof(where.client_id));
	header(s, NSWAP2L_MSG_COPY, tag, count, PROTO_MOVED_SIZE + count * 8, 0);
	add(s, &where, sizeof(where));
	add_keys(s, first, count);
}

static void keys(struct seed *s, uint16_t type, uint32_t tag, uint64_t first, uint32_t count)
{
	if (type == NSWAP2L_MSG_PUT) {
		put_freeing(s, tag, first, count, 0, 0);
		return;
	}
	header(s, type, tag, count, count * 8, 0);
	add_keys(s, first, count);
}

static void write_seed(const char *dir, const char *name, struct seed *s)
{
	char path[4096];
	FILE *f;

	end_message(s);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->data, 1, s->len, f) != s->len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct seed s;
	uint8_t raw[64] = { 0 };
	uint32_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds DIR\n");
		return 2;
	}

	/* keyed session: PUT, GET, FREE, GET of a freed page */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, 0);
	keys(&s, NSWAP2L_MSG_PUT, 10, 7, 2);
	keys(&s, NSWAP2L_MSG_GET, 11, 7, 2);
	keys(&s, NSWAP2L_MSG_FREE, 12, 7, 1);
	keys(&s, NSWAP2L_MSG_GET, 13, 7, 2);
	write_seed(argv[1], "session-keyed", &s);

	/*
	 * both capabilities: PUTs that free earlier keys (one missing), GET
	 * replies MACed over header and seals; then a PUT freeing its own key
	 */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, NSWAP2L_CAP_SEALED_GET | NSWAP2L_CAP_PUT_FREES);
	keys(&s, NSWAP2L_MSG_PUT, 10, 7, 2);
	put_freeing(&s, 11, 9, 2, 6, 3);
	keys(&s, NSWAP2L_MSG_GET, 12, 9, 2);
	keys(&s, NSWAP2L_MSG_GET, 13, 7, 1);
	put_freeing(&s, 14, 100, 1, 9, NSWAP2L_PROTO_MAX_PUT_FREES);
	put_freeing(&s, 15, 30, 2, 31, 1);
	write_seed(argv[1], "put-frees", &s);

	/*
	 * a peer server: PEER_PUTs (one the same again and one in part:
	 * their replies name the keys held already; one past --max),
	 * PEER_FREE, then a PUT, which a peer never sends
	 */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	s.data[FUZZ_MAX] = 2;
	handshake(&s, true, NSWAP2L_CAP_PEER | NSWAP2L_CAP_MOVED);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 10, "alice", 5, 3);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 11, "alice", 5, 3);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 16, "alice", 6, 4);
	peer_keys(&s, NSWAP2L_MSG_PEER_FREE, 12, "alice", 4, 2);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 13, "bob", 20, 8);
	peer_keys(&s, NSWAP2L_MSG_PEER_FREE, 14, "nobody", 4, 2);
	keys(&s, NSWAP2L_MSG_PUT, 15, 7, 1);
	write_seed(argv[1], "peer", &s);

	/* a peer naming a namespace no client can have */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, NSWAP2L_CAP_PEER | NSWAP2L_CAP_MOVED);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 10, ".peer", 5, 1);
	write_seed(argv[1], "peer-bad-name", &s);

	/* a client with NSWAP2L_CAP_MOVED under pressure, answering what it was never asked */
	config(&s, 0, 255, 15, 70, -4);
	handshake(&s, false, NSWAP2L_CAP_MOVED | NSWAP2L_CAP_EVICT | NSWAP2L_CAP_SEALED_GET);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 8);
	header(&s, NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY, 7, 1, 8, 0);
	add_keys(&s, 3, 1);
	header(&s, NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY, 8, 0, NSWAP2L_PROTO_CLIENT_ID_SIZE, 0);
	add(&s, raw, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	write_seed(argv[1], "moved-not-asked", &s);

	/*
	 * a client with NSWAP2L_CAP_COPY: COPYs of keys held, in part and not
	 * at all (no peer here: NOENT), then one without keys
	 */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, NSWAP2L_CAP_MOVED | NSWAP2L_CAP_COPY | NSWAP2L_CAP_SEALED_GET);
	keys(&s, NSWAP2L_MSG_PUT, 10, 16, 20);
	copy_keys(&s, 11, 16, 20);
	copy_keys(&s, 12, 30, NSWAP2L_PROTO_MAX_COPY_KEYS);
	copy_keys(&s, 13, 1000, 2);
	copy_keys(&s, 14, 16, 0);
	write_seed(argv[1], "copy", &s);

	/* a COPY without NSWAP2L_CAP_COPY */
	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, NSWAP2L_CAP_MOVED);
	keys(&s, NSWAP2L_MSG_PUT, 10, 16, 2);
	copy_keys(&s, 11, 16, 2);
	write_seed(argv[1], "copy-without-cap", &s);

	/*
	 * a client with NSWAP2L_CAP_RELEASE: pages stored, then RELEASE; the
	 * server closes after its reply, the GET after it is never read
	 */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, NSWAP2L_CAP_RELEASE | NSWAP2L_CAP_EVICT);
	keys(&s, NSWAP2L_MSG_PUT, 10, 16, 20);
	header(&s, NSWAP2L_MSG_RELEASE, 11, 0, 0, 0);
	keys(&s, NSWAP2L_MSG_GET, 12, 16, 1);
	write_seed(argv[1], "release", &s);

	/* a RELEASE with a count, one with a payload, one without NSWAP2L_CAP_RELEASE */
	for (i = 0; i < 3; i++) {
		static const char *const names[] = { "release-count", "release-payload",
						      "release-without-cap" };

		config(&s, 0, 255, 15, 1000, 0);
		handshake(&s, false, i == 2 ? NSWAP2L_CAP_MOVED : NSWAP2L_CAP_RELEASE);
		keys(&s, NSWAP2L_MSG_PUT, 10, 16, 2);
		header(&s, NSWAP2L_MSG_RELEASE, 11, i == 0, i == 1 ? 8 : 0, 0);
		add_keys(&s, 16, i == 1);
		write_seed(argv[1], names[i], &s);
	}

	/* a client session sending PEER_PUT */
	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, NSWAP2L_CAP_MOVED);
	peer_keys(&s, NSWAP2L_MSG_PEER_PUT, 10, "fuzz", 5, 1);
	write_seed(argv[1], "peer-put-from-client", &s);

	/* --max of 4 pages: the frees make room for the PUT; a PUT past it still frees */
	config(&s, 0, 255, 15, 1000, 0);
	s.data[FUZZ_MAX] = 1;
	handshake(&s, false, NSWAP2L_CAP_PUT_FREES);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 4);
	put_freeing(&s, 11, 4, 2, 0, 2);
	put_freeing(&s, 12, 6, 4, 2, 1);
	keys(&s, NSWAP2L_MSG_GET, 13, 3, 2);
	write_seed(argv[1], "put-frees-nospc", &s);

	/* malformed frees: more than allowed, part of a key, frees without the capability */
	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, NSWAP2L_CAP_PUT_FREES);
	put_freeing(&s, 10, 0, 1, 100, NSWAP2L_PROTO_MAX_PUT_FREES + 1);
	write_seed(argv[1], "put-frees-too-many", &s);

	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, NSWAP2L_CAP_PUT_FREES);
	put_freeing(&s, 10, 0, 1, 0, 0);
	/* 4 more bytes in the length and the payload: half a key to free */
	store_le32(s.data + s.msg_start + offsetof(struct nswap2l_msg_header, length),
		   8 + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE + 4);
	add(&s, raw, 4);
	write_seed(argv[1], "put-frees-partial-key", &s);

	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, NSWAP2L_CAP_SEALED_GET);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 1);
	keys(&s, NSWAP2L_MSG_GET, 11, 0, 1);
	put_freeing(&s, 12, 1, 1, 0, 1);
	write_seed(argv[1], "put-frees-without-cap", &s);

	/* wrong key: the MAC of an unkeyed session does not verify */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_GET, 10, 1, 1);
	write_seed(argv[1], "auth-wrong", &s);

	/*
	 * memory pressure: 16 bytes a read and a tick after each (of no time,
	 * so that the PUT, ~520 reads long, never meets the message timeout),
	 * available memory one page less each tick, from 540 pages over the
	 * reserve: the PUT of 2 pages (~530 reads in) still fits, a few ticks
	 * later the server is over its limit and asks (EVICT tag 1) for a
	 * page, which the rest of the session frees and answers; the answer
	 * to a tag not asked yet closes the connection at the end
	 */
	config(&s, FUZZ_LAZY_READER, 15, 0, FUZZ_RESERVE_PAGES + 540, -1);
	s.data[FUZZ_TICK_MS] = 0;
	handshake(&s, false, NSWAP2L_CAP_EVICT);
	keys(&s, NSWAP2L_MSG_PUT, 10, 100, 2);
	keys(&s, NSWAP2L_MSG_GET, 11, 100, 2);
	keys(&s, NSWAP2L_MSG_PUT, 12, 200, 1);
	keys(&s, NSWAP2L_MSG_FREE, 13, 100, 2);
	header(&s, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, 1, 1, 0, NSWAP2L_OK);
	header(&s, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, 2, 1, 0, NSWAP2L_ERR_NOSPC);
	write_seed(argv[1], "evict", &s);

	/* memory unreadable at every other tick: new pages get NOSPC then */
	config(&s, FUZZ_MEMORY_FLICKERS, 15, 0, 1000, 0);
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 2);
	keys(&s, NSWAP2L_MSG_PUT, 11, 0, 2);
	keys(&s, NSWAP2L_MSG_PUT, 12, 2, 2);
	keys(&s, NSWAP2L_MSG_GET, 13, 0, 2);
	write_seed(argv[1], "memory-flickers", &s);

	/*
	 * a peer that does not read: 20 GETs of 32 pages are 2.5 MiB of
	 * replies, past FUZZ_BUFFER_BUDGET, so the connection is held back
	 */
	config(&s, FUZZ_LAZY_READER, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 32);
	for (i = 0; i < 20; i++)
		keys(&s, NSWAP2L_MSG_GET, 11 + i, 0, 32);
	write_seed(argv[1], "backlog", &s);

	/*
	 * a byte a read, 200 ms a tick every 16: the handshake is done in 2 s,
	 * the PUT would take 52 s, past the message timeout
	 */
	config(&s, 0, 0, 15, 1000, 0);
	s.data[FUZZ_TICK_MS] = 2;
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 1);
	write_seed(argv[1], "slow-message", &s);

	/* --max of 4 pages: NOSPC */
	config(&s, 0, 255, 15, 1000, 0);
	s.data[FUZZ_MAX] = 1;
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_PUT, 10, 0, 3);
	keys(&s, NSWAP2L_MSG_PUT, 11, 3, 3);
	keys(&s, NSWAP2L_MSG_FREE, 12, 0, 3);
	write_seed(argv[1], "nospc", &s);

	/* one malformed message after the handshake, one seed each */
	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	header(&s, 99, 5, 0, 0, 0);
	write_seed(argv[1], "bad-type", &s);

	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	header(&s, NSWAP2L_MSG_GET, 5, NSWAP2L_PROTO_MAX_PAGES + 1, 8 * (NSWAP2L_PROTO_MAX_PAGES + 1), 0);
	write_seed(argv[1], "bad-count", &s);

	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	keys(&s, NSWAP2L_MSG_GET, 5, NSWAP2L_PROTO_KEY_LIMIT, 1);
	write_seed(argv[1], "bad-key", &s);

	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	header(&s, NSWAP2L_MSG_PUT, 5, 1, UINT32_MAX, 0);
	write_seed(argv[1], "bad-length", &s);

	/* a header injected without the key: a bad type, a MAC of zeros */
	config(&s, FUZZ_KEYED, 255, 15, 1000, 0);
	handshake(&s, true, 0);
	end_message(&s);
	s.session = false;
	header(&s, 99, 0xdeadbeef, 5, 0, 0);
	memset(raw, 0, NSWAP2L_PROTO_MSG_MAC_SIZE);
	add(&s, raw, NSWAP2L_PROTO_MSG_MAC_SIZE);
	write_seed(argv[1], "injected", &s);

	/* the length of a version 3 PUT: a key and a page, no seal */
	config(&s, 0, 255, 15, 1000, 0);
	handshake(&s, false, 0);
	header(&s, NSWAP2L_MSG_PUT, 5, 1, 8 + PROTO_PAGE_SIZE, 0);
	write_seed(argv[1], "put-without-seal", &s);

	config(&s, 0, 255, 15, 1000, 0);
	keys(&s, NSWAP2L_MSG_GET, 5, 1, 1);
	write_seed(argv[1], "before-auth", &s);

	config(&s, 0, 0, 0, 1000, 0);
	memset(raw, 0x41, sizeof(raw));
	add(&s, raw, sizeof(raw));
	write_seed(argv[1], "garbage", &s);

	/* the --metrics parser's inputs (fuzz_parser gives it every input's stream) */
	{
		static const char *const requests[][2] = {
			{ "http-get", "GET /metrics HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n" },
			{ "http-query", "GET /metrics?x=1 HTTP/1.0\n\n" },
			{ "http-other", "POST /x HTTP/1.1\r\n\r\n" },
		};

		for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
			config(&s, 0, 0, 0, 1000, 0);
			add(&s, requests[i][1], strlen(requests[i][1]));
			write_seed(argv[1], requests[i][0], &s);
		}
	}
	return 0;
}
