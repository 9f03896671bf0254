// SPDX-License-Identifier: GPL-2.0
/*
 * netram-hello - check that an nswapd answers on HOST:PORT.
 *
 *   netram-hello [-t SECONDS] [-c CLIENT] HOST:PORT [KEYFILE]
 *
 * Connects, sends HELLO (include/uapi/linux/nswap2l_proto.h) and checks
 * the reply as client CLIENT (default "default").  With KEYFILE (the raw
 * key of that client) it also authenticates: sends the client MAC over
 * the transcript of the HELLO exchange and checks the server's MAC, which
 * covers that transcript and the AUTH reply's header, i.e. proves that the
 * server holds the same key and that nobody changed a byte of the
 * handshake.  Prints one line
 *   version=V max_pages=N caps=0xX [free_pages=N namespace=new|found auth=ok]
 * (free_pages and the namespace flag only once the server's proof checked:
 * nothing before it is trusted).
 * Exit status: 0 ok, 1 connection or protocol failure (a wrong server
 * proof included), 3 the server refused the key (AUTH reply with status
 * NSWAP2L_ERR_AUTH, or the connection closed instead of an AUTH reply), 4
 * the server has no key for CLIENT (AUTH reply with status
 * NSWAP2L_ERR_NO_CLIENT, which HELLO asks for with NSWAP2L_CAP_NO_CLIENT;
 * prints auth=noclient), 2 usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/nswap2l_proto.h>

/* ---- SHA-256 / HMAC-SHA256 (FIPS 180-4, RFC 2104) ---------------------- */
struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *s, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
		       w[i - 7] + (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->n = 0;
}

static void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const unsigned char *p = data;

	s->len += len;
	while (len) {
		size_t k = 64 - s->n < len ? 64 - s->n : len;

		memcpy(s->buf + s->n, p, k);
		s->n += k;
		p += k;
		len -= k;
		if (s->n == 64) {
			sha256_block(s, s->buf);
			s->n = 0;
		}
	}
}

static void sha256_final(struct sha256 *s, unsigned char out[32])
{
	uint64_t bits = s->len * 8;
	unsigned char pad = 0x80, zero = 0, lenbuf[8];
	int i;

	sha256_update(s, &pad, 1);
	while (s->n != 56)
		sha256_update(s, &zero, 1);
	for (i = 0; i < 8; i++)
		lenbuf[i] = bits >> (56 - 8 * i);
	sha256_update(s, lenbuf, 8);
	for (i = 0; i < 32; i++)
		out[i] = s->h[i / 4] >> (24 - 8 * (i % 4));
}

struct hmac {
	struct sha256 inner;
	unsigned char okey[64];
};

static void hmac_init(struct hmac *m, const unsigned char *key, size_t klen)
{
	unsigned char k[64] = { 0 }, ikey[64];
	int i;

	if (klen > 64) {
		struct sha256 s;

		sha256_init(&s);
		sha256_update(&s, key, klen);
		sha256_final(&s, k);
	} else {
		memcpy(k, key, klen);
	}
	for (i = 0; i < 64; i++) {
		ikey[i] = k[i] ^ 0x36;
		m->okey[i] = k[i] ^ 0x5c;
	}
	sha256_init(&m->inner);
	sha256_update(&m->inner, ikey, 64);
}

static void hmac_final(struct hmac *m, unsigned char out[32])
{
	unsigned char ih[32];
	struct sha256 o;

	sha256_final(&m->inner, ih);
	sha256_init(&o);
	sha256_update(&o, m->okey, 64);
	sha256_update(&o, ih, 32);
	sha256_final(&o, out);
}

/* ---- protocol ----------------------------------------------------------- */
static int fd = -1;

static int send_all(const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* 1 = ok, 0 = EOF before the first byte, -1 = error or short */
static int recv_all(void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, p + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && got == 0)
			return 0;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 1;
}

/* The header goes to *sent as it went over the wire. */
static int send_msg(uint16_t type, uint32_t tag, const void *payload, uint32_t len,
		    struct nswap2l_msg_header *sent)
{
	*sent = (struct nswap2l_msg_header){
		.magic = htole32(NSWAP2L_PROTO_MAGIC),
		.type = htole16(type),
		.tag = htole32(tag),
		.count = 0,
		.length = htole32(len),
	};
	return send_all(sent, sizeof(*sent)) || send_all(payload, len) ? -1 : 0;
}

static void get_random(void *buf, size_t len)
{
	int r = open("/dev/urandom", O_RDONLY);

	if (r < 0 || read(r, buf, len) != (ssize_t)len) {
		fprintf(stderr, "netram-hello: /dev/urandom: %s\n", strerror(errno));
		exit(1);
	}
	close(r);
}

/*
 * HMAC(K, label || client name || client id || nonce1 || nonce2 || T
 * [|| AUTH reply header]): the proofs of nswap2l_proto.h.
 */
static void proof(const unsigned char *key, size_t klen, const char *label,
		  const struct nswap2l_hello *hello, const unsigned char *nonce1,
		  const unsigned char *nonce2, const unsigned char transcript[32],
		  const struct nswap2l_msg_header *auth_reply, unsigned char mac[32])
{
	struct hmac m;

	hmac_init(&m, key, klen);
	sha256_update(&m.inner, label, strlen(label));
	sha256_update(&m.inner, hello->client_name, sizeof(hello->client_name));
	sha256_update(&m.inner, hello->client_id, sizeof(hello->client_id));
	sha256_update(&m.inner, nonce1, NSWAP2L_PROTO_NONCE_SIZE);
	sha256_update(&m.inner, nonce2, NSWAP2L_PROTO_NONCE_SIZE);
	sha256_update(&m.inner, transcript, 32);
	if (auth_reply)
		sha256_update(&m.inner, auth_reply, sizeof(*auth_reply));
	hmac_final(&m, mac);
}

#define FAIL(...) do { fprintf(stderr, "netram-hello: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* Reads a reply header of the given request type (payload length want). */
static int recv_reply(uint16_t type, uint32_t tag, uint32_t want, struct nswap2l_msg_header *h)
{
	int r = recv_all(h, sizeof(*h));

	if (r <= 0)
		return r;
	if (le32toh(h->magic) != NSWAP2L_PROTO_MAGIC)
		FAIL("reply magic 0x%08x, expected 0x%08x", le32toh(h->magic), NSWAP2L_PROTO_MAGIC);
	if (le16toh(h->type) != (type | NSWAP2L_MSG_REPLY))
		FAIL("reply type 0x%x, expected 0x%x", le16toh(h->type), type | NSWAP2L_MSG_REPLY);
	if (le32toh(h->tag) != tag)
		FAIL("reply tag %u, expected %u", le32toh(h->tag), tag);
	if (le32toh(h->status) == NSWAP2L_OK && le32toh(h->length) != want)
		FAIL("reply length %u, expected %u", le32toh(h->length), want);
	if (le32toh(h->status) != NSWAP2L_OK && le32toh(h->length) > NSWAP2L_PROTO_MAX_PAYLOAD)
		FAIL("error reply length %u", le32toh(h->length));
	return 1;
}

int main(int argc, char **argv)
{
	struct nswap2l_hello hello = { 0 };
	struct nswap2l_hello_reply hr;
	struct nswap2l_msg_header hello_h, h;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned char key[NSWAP2L_PROTO_MAX_KEY_SIZE + 1];
	size_t klen = 0;
	const char *client = "default";
	int timeout = 10, opt, one = 1, r;
	char host[64], *colon, *end;
	struct timeval tv;
	long port;

	while ((opt = getopt(argc, argv, "c:t:")) != -1) {
		if (opt == 'c') {
			client = optarg;
			if (!*client || strlen(client) >= sizeof(hello.client_name))
				goto usage;
			continue;
		}
		if (opt != 't')
			goto usage;
		timeout = atoi(optarg);
		if (timeout <= 0)
			goto usage;
	}
	if (argc - optind < 1 || argc - optind > 2)
		goto usage;
	if (strlen(argv[optind]) >= sizeof(host))
		goto usage;
	strcpy(host, argv[optind]);
	colon = strrchr(host, ':');
	if (!colon)
		goto usage;
	*colon = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		goto usage;
	sa.sin_port = htons(port);

	if (argc - optind == 2) {
		FILE *f = fopen(argv[optind + 1], "rb");

		if (!f)
			FAIL("%s: %s", argv[optind + 1], strerror(errno));
		klen = fread(key, 1, sizeof(key), f);
		fclose(f);
		if (klen < NSWAP2L_PROTO_MIN_KEY_SIZE || klen > NSWAP2L_PROTO_MAX_KEY_SIZE)
			FAIL("%s: key of %zu bytes (must be %d..%d)", argv[optind + 1], klen,
			     NSWAP2L_PROTO_MIN_KEY_SIZE, NSWAP2L_PROTO_MAX_KEY_SIZE);
	}

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		FAIL("socket: %s", strerror(errno));
	tv.tv_sec = timeout;
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		FAIL("connect %s: %s", argv[optind], strerror(errno));

	hello.version_min = htole32(NSWAP2L_PROTO_VERSION);
	hello.version_max = htole32(NSWAP2L_PROTO_VERSION);
	hello.capabilities = htole64(NSWAP2L_CAP_NO_CLIENT);
	memcpy(hello.client_name, client, strlen(client));
	get_random(hello.client_id, sizeof(hello.client_id));
	get_random(hello.client_nonce, sizeof(hello.client_nonce));
	if (send_msg(NSWAP2L_MSG_HELLO, 1, &hello, sizeof(hello), &hello_h))
		FAIL("sending HELLO: %s", strerror(errno));
	r = recv_reply(NSWAP2L_MSG_HELLO, 1, sizeof(hr), &h);
	if (r == 0)
		FAIL("connection closed instead of a HELLO reply (server not running?)");
	if (r < 0)
		FAIL("reading the HELLO reply: %s", errno ? strerror(errno) : "short read");
	if (le32toh(h.status) != NSWAP2L_OK)
		FAIL("HELLO reply status %u", le32toh(h.status));
	if (recv_all(&hr, sizeof(hr)) != 1)
		FAIL("reading the HELLO reply payload: %s", errno ? strerror(errno) : "short read");
	if (le32toh(hr.version) != NSWAP2L_PROTO_VERSION)
		FAIL("server chose version %u", le32toh(hr.version));
	if (!le32toh(hr.max_pages) || le32toh(hr.max_pages) > NSWAP2L_PROTO_MAX_PAGES)
		FAIL("server max_pages %u", le32toh(hr.max_pages));
	printf("version=%u max_pages=%u caps=0x%llx", le32toh(hr.version), le32toh(hr.max_pages),
	       (unsigned long long)le64toh(hr.capabilities));

	if (klen) {
		struct nswap2l_auth auth, sauth;
		struct nswap2l_msg_header auth_h;
		unsigned char transcript[32], want[32];
		struct sha256 t;

		/* T: every byte of the HELLO exchange, as it went over the wire */
		sha256_init(&t);
		sha256_update(&t, &hello_h, sizeof(hello_h));
		sha256_update(&t, &hello, sizeof(hello));
		sha256_update(&t, &h, sizeof(h));
		sha256_update(&t, &hr, sizeof(hr));
		sha256_final(&t, transcript);
		proof(key, klen, NSWAP2L_AUTH_CLIENT_LABEL, &hello, hello.client_nonce,
		      hr.server_nonce, transcript, NULL, auth.mac);
		if (send_msg(NSWAP2L_MSG_AUTH, 2, &auth, sizeof(auth), &auth_h))
			FAIL("sending AUTH: %s", strerror(errno));
		r = recv_reply(NSWAP2L_MSG_AUTH, 2, sizeof(sauth), &h);
		if (r == 0 || (r > 0 && le32toh(h.status) == NSWAP2L_ERR_AUTH)) {
			printf(" auth=refused\n");
			return 3;
		}
		if (r > 0 && le32toh(h.status) == NSWAP2L_ERR_NO_CLIENT) {
			printf(" auth=noclient\n");
			return 4;
		}
		if (r < 0)
			FAIL("reading the AUTH reply: %s", errno ? strerror(errno) : "short read");
		if (le32toh(h.status) != NSWAP2L_OK)
			FAIL("AUTH reply status %u", le32toh(h.status));
		if (recv_all(&sauth, sizeof(sauth)) != 1)
			FAIL("reading the AUTH reply payload");
		proof(key, klen, NSWAP2L_AUTH_SERVER_LABEL, &hello, hr.server_nonce,
		      hello.client_nonce, transcript, &h, want);
		if (memcmp(want, sauth.mac, sizeof(want)))
			FAIL("the server's AUTH MAC is wrong (different key, or the handshake was changed)");
		/* the proof covers this header: its free_pages and flag hold only now */
		printf(" free_pages=%llu namespace=%s auth=ok", (unsigned long long)le64toh(h.free_pages),
		       le16toh(h.flags) & NSWAP2L_FLAG_NAMESPACE_FOUND ? "found" : "new");
	}
	printf("\n");
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: netram-hello [-t SECONDS] [-c CLIENT] IPV4:PORT [KEYFILE]\n");
	return 2;
}
