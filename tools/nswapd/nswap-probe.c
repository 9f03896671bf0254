// SPDX-License-Identifier: GPL-2.0
/*
 * nswap-probe: a small nswap2l protocol client for testing nswapd.
 *
 * Pages and their seals carry a pattern derived from (client id, key,
 * seed), so that a GET can tell correct data and seals from stale,
 * misplaced or foreign ones.  Every command ends with an outcome (ok,
 * nospc, noent, auth, noclient, version, invalid, closed, timeout,
 * mismatch, badserver) printed as "outcome: X"; the exit status is 0 when
 * it is the one --expect names (default ok), 1 when not, 2 on usage errors.
 * Its HELLO announces NSWAP2L_CAP_NO_CLIENT: a server without a key for
 * --client answers noclient, a wrong key of a known client gets auth.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "client_handshake.h"
#include "proto.h"
#include "util.h"

#define PATTERN_MAGIC 0x4e53574150524f42ull	/* "NSWAPROB" */
#define PAGE_WORDS (PROTO_PAGE_SIZE / 8)
#define SEAL_WORDS (PROTO_SEAL_SIZE / 8)

static const char usage_text[] =
"usage: nswap-probe --server ADDR:PORT [options] COMMAND [ARGS]\n"
"\n"
"commands:\n"
"  put KEYS...       store pattern pages and seals (KEYS: N or FIRST-LAST)\n"
"  get KEYS...       read pages and check their pattern and seals\n"
"  free KEYS...      free pages\n"
"  hello             handshake only (see --handshake); a full one prints\n"
"                    \"handshake: namespace new|found, free_pages N\" from the\n"
"                    AUTH reply, once the server's proof of it checked\n"
"  raw FILE          after the handshake send FILE's bytes, then print what\n"
"                    comes back until the server closes (outcome closed) or\n"
"                    --timeout passes (outcome timeout)\n"
"  raw-close FILE    after the handshake send FILE's bytes and close at once\n"
"  serve-evict       announce EVICT and serve EVICT messages for --duration:\n"
"                    wait for --hold-until, check the pages (--verify), FREE\n"
"                    them, run --on-evict, answer OK\n"
"  hog MIB SECONDS   hold MIB of touched memory (memory pressure in tests)\n"
"\n"
"options:\n"
"  --key-file FILE       shared key (default: an empty key, which only a\n"
"                        server run with --insecure-no-auth accepts)\n"
"  --client NAME         client name sent in HELLO, sent as given even when\n"
"                        malformed, to test servers (default \"default\")\n"
"  --client-id HEX       up to 32 hex digits, zero-padded on the left (default 1)\n"
"  --seed N              pattern seed (default 1)\n"
"  --evict               announce that this client takes EVICT\n"
"  --versions MIN-MAX    protocol versions offered in HELLO (default: ours)\n"
"  --handshake MODE      full (default), hello (HELLO only) or none\n"
"  --expect OUTCOME      outcome that makes the exit status 0 (default ok)\n"
"  --timeout SECONDS     for each wait on the server (default 10)\n"
"  --window N            requests in flight (default 16)\n"
"  --duration SECONDS    serve-evict: how long to serve (default 10)\n"
"  --hold-until FILE     serve-evict: act on an EVICT only once FILE exists\n"
"  --on-evict COMMAND    serve-evict: run after freeing, before answering, with\n"
"                        NSWAP_EVICTED_TOTAL = keys freed so far\n"
"  --verify              serve-evict: GET and check the pages before freeing\n"
"  --pause SECONDS       raw: wait this long after sending before reading\n"
"  --mac MODE            raw: the session MAC after each whole message: good\n"
"                        (default), bad (one bit flipped), none (not sent),\n"
"                        replay (each message and MAC sent twice)\n"
"  --verbose             print every message received (raw always does)\n";

enum option_id {
	OPT_SERVER = 256, OPT_KEY_FILE, OPT_CLIENT, OPT_CLIENT_ID, OPT_SEED, OPT_EVICT, OPT_VERSIONS,
	OPT_HANDSHAKE, OPT_EXPECT, OPT_TIMEOUT, OPT_WINDOW, OPT_DURATION, OPT_HOLD_UNTIL,
	OPT_ON_EVICT, OPT_VERIFY, OPT_VERBOSE, OPT_PAUSE, OPT_MAC, OPT_HELP,
};

static const struct option long_options[] = {
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "client", required_argument, NULL, OPT_CLIENT },
	{ "client-id", required_argument, NULL, OPT_CLIENT_ID },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "evict", no_argument, NULL, OPT_EVICT },
	{ "versions", required_argument, NULL, OPT_VERSIONS },
	{ "handshake", required_argument, NULL, OPT_HANDSHAKE },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "hold-until", required_argument, NULL, OPT_HOLD_UNTIL },
	{ "on-evict", required_argument, NULL, OPT_ON_EVICT },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "pause", required_argument, NULL, OPT_PAUSE },
	{ "mac", required_argument, NULL, OPT_MAC },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

enum handshake_mode { HANDSHAKE_FULL, HANDSHAKE_HELLO, HANDSHAKE_NONE };

static struct {
	struct sockaddr_in server;
	bool have_server;
	struct auth_key key;
	char client_name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
	uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE];
	uint64_t seed;
	bool evict, verify, verbose;
	uint32_t version_min, version_max;
	enum handshake_mode handshake;
	const char *expect;
	uint64_t timeout_ms, duration_ms, pause_ms;
	unsigned int window;
	const char *hold_until, *on_evict;
	const char *mac_mode;
} opt = {
	.client_name = "default",
	.seed = 1,
	.version_min = NSWAP2L_PROTO_VERSION,
	.version_max = NSWAP2L_PROTO_VERSION,
	.expect = "ok",
	.timeout_ms = 10000,
	.duration_ms = 10000,
	.window = 16,
	.mac_mode = "good",
};

/* A received message. */
struct message {
	struct proto_header hdr;
	uint8_t header_bytes[PROTO_HEADER_SIZE];	/* as received */
	uint8_t *payload;		/* NSWAP2L_PROTO_MAX_PAYLOAD bytes */
};

/* EVICT messages that arrived while waiting for something else. */
struct evict_request {
	struct evict_request *next;
	uint32_t tag, count;
	uint64_t keys[];
};

struct client {
	int fd;
	uint32_t next_tag;
	uint64_t last_free_pages;
	struct evict_request *evicts, **evicts_tail;
	struct message msg;
	/* after the handshake every message carries a MAC, both ways */
	bool session;
	struct auth_session keys;
	uint64_t tx_seq, rx_seq;
	struct auth_message tx_mac;	/* of the message being sent */
};

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...);

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nswap-probe: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

/* Reports the outcome; exits 0 when it is the expected one. */
static void __attribute__((noreturn)) finish(const char *outcome)
{
	printf("outcome: %s\n", outcome);
	fflush(stdout);
	if (strcmp(outcome, opt.expect)) {
		fprintf(stderr, "nswap-probe: expected %s, got %s\n", opt.expect, outcome);
		exit(1);
	}
	exit(0);
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t client_id_hash(void)
{
	uint64_t h = 0;
	int i;

	for (i = 0; i < NSWAP2L_PROTO_CLIENT_ID_SIZE; i++)
		h = splitmix(h ^ opt.client_id[i]);
	return h;
}

/* Where the patterns of key's page and seal start. */
static uint64_t pattern_origin(uint64_t key)
{
	return splitmix(key ^ splitmix(opt.seed ^ client_id_hash()));
}

static void fill_page(uint8_t *page, uint64_t key)
{
	uint64_t words[PAGE_WORDS], x = pattern_origin(key) | 1;
	unsigned int i;

	words[0] = PATTERN_MAGIC;
	words[1] = key;
	words[2] = opt.seed;
	for (i = 3; i < PAGE_WORDS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		words[i] = x;
	}
	memcpy(page, words, PROTO_PAGE_SIZE);
}

static bool page_matches(const uint8_t *page, uint64_t key)
{
	uint8_t expected[PROTO_PAGE_SIZE];

	fill_page(expected, key);
	return !memcmp(page, expected, PROTO_PAGE_SIZE);
}

/*
 * Unlike the seal of any other key, seed or client, and unlike the page:
 * a server that loses, mixes up or keeps stale seals fails a GET.
 */
static void fill_seal(uint8_t *seal, uint64_t key)
{
	uint64_t words[SEAL_WORDS], x = pattern_origin(key);
	unsigned int i;

	for (i = 0; i < SEAL_WORDS; i++)
		words[i] = x = splitmix(x);
	memcpy(seal, words, PROTO_SEAL_SIZE);
}

static bool seal_matches(const uint8_t *seal, uint64_t key)
{
	uint8_t expected[PROTO_SEAL_SIZE];

	fill_seal(expected, key);
	return !memcmp(seal, expected, PROTO_SEAL_SIZE);
}

static void send_bytes(struct client *cl, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = send(cl->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			printf("send: %s\n", strerror(errno));
			finish(errno == EPIPE || errno == ECONNRESET ? "closed" : "timeout");
		}
		p += n;
		len -= (size_t)n;
	}
}

/* Part of the message being sent (its header first). */
static void send_all(struct client *cl, const void *data, size_t len)
{
	if (cl->session)
		auth_message_update(&cl->tx_mac, data, len);
	send_bytes(cl, data, len);
}

/* The end of a message: in a session its MAC follows. */
static void send_end(struct client *cl)
{
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];

	if (!cl->session)
		return;
	auth_message_end(&cl->tx_mac, mac);
	send_bytes(cl, mac, sizeof(mac));
}

static void encode_header(uint8_t buf[PROTO_HEADER_SIZE], uint16_t type, uint32_t tag,
			  uint32_t count, uint32_t length, uint32_t status)
{
	struct proto_header hdr = {
		.magic = NSWAP2L_PROTO_MAGIC, .type = type, .tag = tag, .count = count,
		.length = length, .status = status,
	};

	proto_encode_header(buf, &hdr);
}

static void send_header(struct client *cl, uint16_t type, uint32_t tag, uint32_t count,
			uint32_t length, uint32_t status)
{
	uint8_t buf[PROTO_HEADER_SIZE];

	if (cl->session)
		auth_message_begin(&cl->tx_mac, cl->keys.c2s, cl->tx_seq++);
	encode_header(buf, type, tag, count, length, status);
	send_all(cl, buf, sizeof(buf));
}

/* Reads exactly len bytes; returns 1, 0 at end of stream, -1 on timeout. */
static int recv_all(struct client *cl, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = recv(cl->fd, buf, len, 0);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n == 0 || errno == ECONNRESET) {
			return 0;
		} else if (errno != EINTR) {
			return -1;
		}
	}
	return 1;
}

/*
 * Receives one message into cl->msg; ends the run when the stream ends.  In
 * a session its MAC is checked, and its free_pages taken; before, nothing
 * of it is trusted (the handshake's proofs cover it).
 */
static void recv_message(struct client *cl)
{
	uint8_t *buf = cl->msg.header_bytes, mac[NSWAP2L_PROTO_MSG_MAC_SIZE];
	struct proto_header *hdr = &cl->msg.hdr;
	int r = recv_all(cl, buf, PROTO_HEADER_SIZE);

	if (r > 0) {
		proto_decode_header(buf, hdr);
		if (hdr->magic != NSWAP2L_PROTO_MAGIC || (hdr->flags & ~NSWAP2L_FLAG_NAMESPACE_FOUND) ||
		    hdr->length > NSWAP2L_PROTO_MAX_PAYLOAD) {
			printf("server sent a malformed header\n");
			finish("badserver");
		}
		r = recv_all(cl, cl->msg.payload, hdr->length);
		if (r > 0 && cl->session)
			r = recv_all(cl, mac, sizeof(mac));
	}
	if (r == 0)
		finish("closed");
	if (r < 0)
		finish("timeout");
	if (cl->session) {
		uint8_t want[NSWAP2L_PROTO_MSG_MAC_SIZE];
		struct auth_message ctx;

		auth_message_begin(&ctx, cl->keys.s2c, cl->rx_seq++);
		auth_message_update(&ctx, buf, PROTO_HEADER_SIZE);
		auth_message_update(&ctx, cl->msg.payload, hdr->length);
		auth_message_end(&ctx, want);
		if (!auth_message_mac_equal(want, mac)) {
			printf("the server's message MAC is wrong\n");
			finish("badserver");
		}
		cl->last_free_pages = hdr->free_pages;
	}
	if (opt.verbose)
		printf("recv %s%s tag=%u count=%u length=%u status=%s free_pages=%llu\n",
	       proto_type_name(hdr->type), hdr->type & NSWAP2L_MSG_REPLY ? "-reply" : "", hdr->tag,
	       hdr->count, hdr->length, proto_status_name(hdr->status),
	       (unsigned long long)hdr->free_pages);
}

/*
 * Takes a message the server sends on its own: CAPACITY is only printed,
 * EVICT is queued for serve-evict.  Returns false for anything else, and
 * for EVICT to a client that did not announce it.
 */
static bool take_server_message(struct client *cl)
{
	const struct proto_header *hdr = &cl->msg.hdr;
	struct evict_request *ev;
	uint32_t i;

	if (hdr->type == NSWAP2L_MSG_CAPACITY)
		return true;
	if (hdr->type != NSWAP2L_MSG_EVICT || !opt.evict ||
	    hdr->length != hdr->count * PROTO_KEY_SIZE)
		return false;
	ev = malloc(sizeof(*ev) + hdr->count * sizeof(uint64_t));
	if (!ev)
		usage_error("out of memory");
	ev->next = NULL;
	ev->tag = hdr->tag;
	ev->count = hdr->count;
	for (i = 0; i < hdr->count; i++)
		ev->keys[i] = proto_key(cl->msg.payload, i);
	*cl->evicts_tail = ev;
	cl->evicts_tail = &ev->next;
	printf("evict: tag %u, %u keys\n", ev->tag, ev->count);
	return true;
}

/* Receives until a reply arrives, taking what the server sends meanwhile. */
static void recv_reply(struct client *cl)
{
	for (;;) {
		recv_message(cl);
		if (cl->msg.hdr.type & NSWAP2L_MSG_REPLY)
			return;
		if (!take_server_message(cl)) {
			printf("unexpected message from the server\n");
			finish("badserver");
		}
	}
}

static void expect_reply(struct client *cl, uint16_t type)
{
	recv_reply(cl);
	if (cl->msg.hdr.type != (type | NSWAP2L_MSG_REPLY)) {
		printf("reply of the wrong type\n");
		finish("badserver");
	}
}

static void connect_to_server(struct client *cl)
{
	struct timeval tv = { .tv_sec = (time_t)(opt.timeout_ms / 1000),
			      .tv_usec = (suseconds_t)(opt.timeout_ms % 1000) * 1000 };
	int one = 1;

	cl->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cl->fd < 0 || setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(cl->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    connect(cl->fd, (struct sockaddr *)&opt.server, sizeof(opt.server))) {
		printf("connect: %s\n", strerror(errno));
		finish("closed");
	}
	cl->next_tag = 1;
	cl->evicts_tail = &cl->evicts;
	cl->msg.payload = malloc(NSWAP2L_PROTO_MAX_PAYLOAD);
	if (!cl->msg.payload)
		usage_error("out of memory");
}

static void handshake(struct client *cl)
{
	struct nswap2l_hello hello = {
		.version_min = opt.version_min,
		.version_max = opt.version_max,
		.capabilities = NSWAP2L_CAP_NO_CLIENT | (opt.evict ? NSWAP2L_CAP_EVICT : 0),
	};
	struct client_handshake ch;
	uint8_t auth[CLIENT_AUTH_SIZE];
	const char *why;

	if (opt.handshake == HANDSHAKE_NONE)
		return;
	memcpy(hello.client_id, opt.client_id, sizeof(hello.client_id));
	memcpy(hello.client_name, opt.client_name, sizeof(hello.client_name));
	if (getrandom(hello.client_nonce, sizeof(hello.client_nonce), 0) !=
	    (ssize_t)sizeof(hello.client_nonce))
		usage_error("getrandom failed");
	client_handshake_hello(&ch, &hello);
	send_all(cl, ch.hello_msg, sizeof(ch.hello_msg));
	expect_reply(cl, NSWAP2L_MSG_HELLO);
	if (cl->msg.hdr.status != NSWAP2L_OK)
		finish(proto_status_name(cl->msg.hdr.status));
	why = client_handshake_reply(&ch, &opt.key, cl->msg.header_bytes, cl->msg.payload,
				     cl->msg.hdr.length, auth);
	if (why) {
		printf("%s\n", why);
		finish("badserver");
	}
	if (opt.handshake == HANDSHAKE_HELLO)
		return;
	send_header(cl, NSWAP2L_MSG_AUTH, 0, 0, NSWAP2L_PROTO_MAC_SIZE, 0);
	send_all(cl, auth + PROTO_HEADER_SIZE, NSWAP2L_PROTO_MAC_SIZE);
	expect_reply(cl, NSWAP2L_MSG_AUTH);
	if (cl->msg.hdr.status != NSWAP2L_OK)
		finish(proto_status_name(cl->msg.hdr.status));
	if (!client_handshake_done(&ch, &opt.key, cl->msg.header_bytes, cl->msg.payload,
				   cl->msg.hdr.length, &cl->keys)) {
		printf("the server's key proof is wrong\n");
		finish("badserver");
	}
	/* the proof covers the reply's header: its flag and free_pages hold only now */
	cl->last_free_pages = cl->msg.hdr.free_pages;
	printf("handshake: namespace %s, free_pages %llu\n",
	       cl->msg.hdr.flags & NSWAP2L_FLAG_NAMESPACE_FOUND ? "found" : "new",
	       (unsigned long long)cl->last_free_pages);
	cl->session = true;
}

struct key_list {
	uint64_t *keys;
	size_t count, cap;
};

static void key_list_add(struct key_list *list, uint64_t key)
{
	if (list->count == list->cap) {
		list->cap = list->cap ? list->cap * 2 : 1024;
		list->keys = realloc(list->keys, list->cap * sizeof(*list->keys));
		if (!list->keys)
			usage_error("out of memory");
	}
	list->keys[list->count++] = key;
}

static void parse_keys(int argc, char **argv, struct key_list *list)
{
	int i;

	for (i = 0; i < argc; i++) {
		char *dash = strchr(argv[i], '-');
		uint64_t first, last, k;

		if (dash)
			*dash = '\0';
		if (parse_uint(argv[i], UINT64_MAX, &first) ||
		    (dash ? parse_uint(dash + 1, UINT64_MAX, &last) : (last = first, 0)) ||
		    last < first || last - first > 100000000)
			usage_error("not a key or key range: %s", argv[i]);
		for (k = first; k <= last; k++)
			key_list_add(list, k);
	}
	if (!list->count)
		usage_error("no keys given");
}

struct in_flight {
	uint32_t tag;
	size_t first, count;		/* keys[first .. first + count) */
};

/*
 * Sends the keys in PUT, GET or FREE messages of batch keys each, with up
 * to --window of them in flight; checks each reply.  Returns the outcome.
 */
static const char *run_requests(struct client *cl, uint16_t type, const uint64_t *keys,
				size_t count, uint32_t batch)
{
	struct in_flight *flight = calloc(opt.window, sizeof(*flight));
	uint8_t *payload = malloc(NSWAP2L_PROTO_MAX_PAYLOAD);
	const char *outcome = "ok";
	size_t next = 0, messages = 0;
	unsigned int busy = 0, i;

	if (!flight || !payload)
		usage_error("out of memory");
	while (next < count || busy) {
		if (next < count && busy < opt.window) {
			struct in_flight *f = &flight[busy++];
			uint32_t n = count - next < batch ? (uint32_t)(count - next) : batch, k;
			size_t length = (size_t)n * PROTO_KEY_SIZE;

			for (k = 0; k < n; k++)
				proto_put_key(payload, k, keys[next + k]);
			if (type == NSWAP2L_MSG_PUT) {
				for (k = 0; k < n; k++)
					fill_seal(payload + length + (size_t)k * PROTO_SEAL_SIZE,
						  keys[next + k]);
				length += (size_t)n * PROTO_SEAL_SIZE;
				for (k = 0; k < n; k++)
					fill_page(payload + length + (size_t)k * PROTO_PAGE_SIZE,
						  keys[next + k]);
				length += (size_t)n * PROTO_PAGE_SIZE;
			}
			f->tag = cl->next_tag++;
			f->first = next;
			f->count = n;
			send_header(cl, type, f->tag, n, (uint32_t)length, 0);
			send_all(cl, payload, length);
			send_end(cl);
			next += n;
			messages++;
			continue;
		}
		expect_reply(cl, type);
		for (i = 0; i < busy && flight[i].tag != cl->msg.hdr.tag; i++)
			;
		if (i == busy) {
			printf("reply with a tag not asked\n");
			finish("badserver");
		}
		if (cl->msg.hdr.status != NSWAP2L_OK) {
			if (!strcmp(outcome, "ok"))
				outcome = proto_status_name(cl->msg.hdr.status);
		} else if (type == NSWAP2L_MSG_GET) {
			const struct in_flight *f = &flight[i];
			const uint8_t *seals = cl->msg.payload;
			const uint8_t *pages = seals + f->count * PROTO_SEAL_SIZE;
			size_t k;

			if (cl->msg.hdr.length != f->count * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE))
				finish("badserver");
			for (k = 0; k < f->count; k++) {
				unsigned long long key = keys[f->first + k];

				if (!seal_matches(seals + k * PROTO_SEAL_SIZE, key)) {
					printf("key %llu: seal mismatch\n", key);
					outcome = "mismatch";
				}
				if (!page_matches(pages + k * PROTO_PAGE_SIZE, key)) {
					printf("key %llu: data mismatch\n", key);
					outcome = "mismatch";
				}
			}
		}
		flight[i] = flight[--busy];
	}
	printf("%s: %zu keys in %zu messages: %s, free_pages %llu\n", proto_type_name(type), count,
	       messages, outcome, (unsigned long long)cl->last_free_pages);
	free(flight);
	free(payload);
	return outcome;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *data;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st))
		usage_error("cannot read %s: %s", path, strerror(errno));
	data = malloc((size_t)st.st_size + 1);
	if (!data || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		usage_error("cannot read %s", path);
	fclose(f);
	*len = (size_t)st.st_size;
	return data;
}

/*
 * After the handshake, the messages of a raw file get their MACs as
 * --mac says; bytes after the last whole message go as they are.
 */
static void send_raw(struct client *cl, const uint8_t *data, size_t len)
{
	bool mac = cl->session && strcmp(opt.mac_mode, "none");
	size_t off = 0;

	while (mac && len - off >= PROTO_HEADER_SIZE) {
		struct proto_header hdr;
		uint8_t tag[NSWAP2L_PROTO_MSG_MAC_SIZE];
		size_t size;

		proto_decode_header(data + off, &hdr);
		size = PROTO_HEADER_SIZE + (size_t)hdr.length;
		if (len - off < size)
			break;
		auth_message_mac(cl->keys.c2s, cl->tx_seq++, data + off, size, tag);
		if (!strcmp(opt.mac_mode, "bad"))
			tag[0] ^= 1;
		send_bytes(cl, data + off, size);
		send_bytes(cl, tag, sizeof(tag));
		/* the same message and MAC again, as someone on the path would */
		if (!strcmp(opt.mac_mode, "replay")) {
			send_bytes(cl, data + off, size);
			send_bytes(cl, tag, sizeof(tag));
		}
		off += size;
	}
	send_bytes(cl, data + off, len - off);
}

static void command_raw(struct client *cl, const char *path, bool close_at_once)
{
	size_t len;
	uint8_t *data = read_file(path, &len);

	send_raw(cl, data, len);
	free(data);
	if (close_at_once) {
		close(cl->fd);
		finish("ok");
	}
	printf("raw: sent %zu bytes\n", len);
	usleep((useconds_t)(opt.pause_ms * 1000));
	for (;;)
		recv_message(cl);	/* ends the run at close or timeout */
}

static bool file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static void serve_one_eviction(struct client *cl, struct evict_request *ev, uint64_t *total,
			       uint64_t end_ms)
{
	char total_text[32];

	while (opt.hold_until && !file_exists(opt.hold_until)) {
		if (monotonic_ms() >= end_ms)
			finish("timeout");
		usleep(20000);
	}
	if (opt.verify && strcmp(run_requests(cl, NSWAP2L_MSG_GET, ev->keys, ev->count,
					      NSWAP2L_PROTO_MAX_PAGES), "ok"))
		finish("mismatch");
	if (strcmp(run_requests(cl, NSWAP2L_MSG_FREE, ev->keys, ev->count,
				NSWAP2L_PROTO_MAX_KEYS), "ok"))
		finish("badserver");
	*total += ev->count;
	if (opt.on_evict) {
		snprintf(total_text, sizeof(total_text), "%llu", (unsigned long long)*total);
		setenv("NSWAP_EVICTED_TOTAL", total_text, 1);
		if (system(opt.on_evict))
			printf("evict: --on-evict command failed\n");
	}
	send_header(cl, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, ev->tag, ev->count, 0, NSWAP2L_OK);
	send_end(cl);
	printf("evict: tag %u answered, %llu keys freed in all\n", ev->tag,
	       (unsigned long long)*total);
	fflush(stdout);
}

/*
 * Serves EVICT messages until --duration is over.  A round comes as several
 * messages at once: they are all taken in (and printed) before the first is
 * served.
 */
static void command_serve_evict(struct client *cl)
{
	uint64_t end = monotonic_ms() + opt.duration_ms, total = 0, messages = 0;

	for (;;) {
		struct pollfd pfd = { .fd = cl->fd, .events = POLLIN };
		uint64_t now = monotonic_ms();

		if (now >= end)
			break;
		if (poll(&pfd, 1, cl->evicts ? 50 : (int)(end - now)) > 0) {
			recv_message(cl);
			if (!take_server_message(cl)) {
				printf("unexpected message from the server\n");
				finish("badserver");
			}
			continue;
		}
		while (cl->evicts) {
			struct evict_request *ev = cl->evicts;

			cl->evicts = ev->next;
			if (!cl->evicts)
				cl->evicts_tail = &cl->evicts;
			serve_one_eviction(cl, ev, &total, end);
			messages++;
			free(ev);
		}
	}
	printf("serve-evict: %llu EVICT messages, %llu keys freed\n", (unsigned long long)messages,
	       (unsigned long long)total);
	finish("ok");
}

static void command_hog(int argc, char **argv)
{
	uint64_t mib, seconds;
	size_t bytes, i;
	uint8_t *mem;

	if (argc != 2 || parse_uint(argv[0], 1 << 20, &mib) || parse_uint(argv[1], 86400, &seconds))
		usage_error("hog MIB SECONDS");
	bytes = (size_t)mib << 20;
	mem = malloc(bytes);
	if (!mem)
		usage_error("cannot allocate %llu MiB", (unsigned long long)mib);
	/* distinct bytes per page, so nothing can share or compress them */
	for (i = 0; i < bytes; i += PROTO_PAGE_SIZE)
		memset(mem + i, (int)(i >> 12) | 1, PROTO_PAGE_SIZE);
	printf("hog: holding %llu MiB\n", (unsigned long long)mib);
	fflush(stdout);
	sleep((unsigned int)seconds);
	free(mem);
	finish("ok");
}

static void parse_client_id(const char *hex)
{
	size_t len = strlen(hex), i;

	if (!len || len > 2 * NSWAP2L_PROTO_CLIENT_ID_SIZE || strspn(hex, "0123456789abcdefABCDEF") != len)
		usage_error("--client-id: up to 32 hex digits: %s", hex);
	memset(opt.client_id, 0, sizeof(opt.client_id));
	/* from the last digit backwards, so that short ids are zero-padded on the left */
	for (i = 0; i < len; i++) {
		char c = hex[len - 1 - i];
		uint8_t v = (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);

		opt.client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE - 1 - i / 2] |= (uint8_t)(v << (4 * (i % 2)));
	}
}

static void parse_options(int argc, char **argv)
{
	char err[512];
	uint64_t v;
	int c;

	opt.client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE - 1] = 1;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER:
			if (parse_ipv4_endpoint(optarg, &opt.server))
				usage_error("--server: not ADDR:PORT: %s", optarg);
			opt.have_server = true;
			break;
		case OPT_KEY_FILE:
			if (auth_load_key(optarg, &opt.key, err, sizeof(err)))
				usage_error("%s", err);
			break;
		case OPT_CLIENT:
			if (strlen(optarg) >= sizeof(opt.client_name))
				usage_error("--client: at most %zu characters: %s",
					    sizeof(opt.client_name) - 1, optarg);
			memset(opt.client_name, 0, sizeof(opt.client_name));
			memcpy(opt.client_name, optarg, strlen(optarg));
			break;
		case OPT_CLIENT_ID:
			parse_client_id(optarg);
			break;
		case OPT_SEED:
			if (parse_uint(optarg, UINT64_MAX, &opt.seed))
				usage_error("--seed: not a number: %s", optarg);
			break;
		case OPT_EVICT:
			opt.evict = true;
			break;
		case OPT_VERSIONS: {
			char *dash = strchr(optarg, '-');
			uint64_t min, max;

			if (!dash)
				usage_error("--versions MIN-MAX");
			*dash = '\0';
			if (parse_uint(optarg, UINT32_MAX, &min) || parse_uint(dash + 1, UINT32_MAX, &max))
				usage_error("--versions MIN-MAX");
			opt.version_min = (uint32_t)min;
			opt.version_max = (uint32_t)max;
			break;
		}
		case OPT_HANDSHAKE:
			if (!strcmp(optarg, "full"))
				opt.handshake = HANDSHAKE_FULL;
			else if (!strcmp(optarg, "hello"))
				opt.handshake = HANDSHAKE_HELLO;
			else if (!strcmp(optarg, "none"))
				opt.handshake = HANDSHAKE_NONE;
			else
				usage_error("--handshake: full, hello or none");
			break;
		case OPT_EXPECT:
			opt.expect = optarg;
			break;
		case OPT_TIMEOUT:
		case OPT_DURATION:
		case OPT_PAUSE:
			if (parse_uint(optarg, 86400, &v))
				usage_error("not a number of seconds: %s", optarg);
			*(c == OPT_TIMEOUT ? &opt.timeout_ms :
			  c == OPT_DURATION ? &opt.duration_ms : &opt.pause_ms) = v * 1000;
			break;
		case OPT_MAC:
			if (strcmp(optarg, "good") && strcmp(optarg, "bad") && strcmp(optarg, "none") &&
			    strcmp(optarg, "replay"))
				usage_error("--mac: good, bad, none or replay");
			opt.mac_mode = optarg;
			break;
		case OPT_WINDOW:
			if (parse_uint(optarg, 1024, &v) || !v)
				usage_error("--window: 1 to 1024");
			opt.window = (unsigned int)v;
			break;
		case OPT_HOLD_UNTIL:
			opt.hold_until = optarg;
			break;
		case OPT_ON_EVICT:
			opt.on_evict = optarg;
			break;
		case OPT_VERIFY:
			opt.verify = true;
			break;
		case OPT_VERBOSE:
			opt.verbose = true;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			exit(0);
		default:
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	struct client cl = { .fd = -1 };
	const char *command;
	struct key_list keys = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_options(argc, argv);
	if (optind >= argc)
		usage_error("no command; try --help");
	command = argv[optind++];
	if (!strcmp(command, "hog"))
		command_hog(argc - optind, argv + optind);
	if (!opt.have_server)
		usage_error("--server ADDR:PORT is required");
	if (!strcmp(command, "serve-evict"))
		opt.evict = true;
	connect_to_server(&cl);
	handshake(&cl);
	if (!strcmp(command, "hello")) {
		finish("ok");
	} else if (!strcmp(command, "raw") || !strcmp(command, "raw-close")) {
		if (optind + 1 != argc)
			usage_error("%s FILE", command);
		opt.verbose = true;
		command_raw(&cl, argv[optind], !strcmp(command, "raw-close"));
	} else if (!strcmp(command, "serve-evict")) {
		command_serve_evict(&cl);
	} else if (!strcmp(command, "put")) {
		parse_keys(argc - optind, argv + optind, &keys);
		finish(run_requests(&cl, NSWAP2L_MSG_PUT, keys.keys, keys.count, NSWAP2L_PROTO_MAX_PAGES));
	} else if (!strcmp(command, "get")) {
		parse_keys(argc - optind, argv + optind, &keys);
		finish(run_requests(&cl, NSWAP2L_MSG_GET, keys.keys, keys.count, NSWAP2L_PROTO_MAX_PAGES));
	} else if (!strcmp(command, "free")) {
		parse_keys(argc - optind, argv + optind, &keys);
		finish(run_requests(&cl, NSWAP2L_MSG_FREE, keys.keys, keys.count, NSWAP2L_PROTO_MAX_KEYS));
	}
	usage_error("unknown command: %s", command);
}
