// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of nswapd's parts that need no socket: SHA-256, HMAC, Poly1305
 * and SipHash against published vectors, the session MAC, the message
 * parser, the page store, the output queue, the rate limit of peer log
 * lines, and whole sessions through the connection state machine.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "client_handshake.h"
#include "conn.h"
#include "log.h"
#include "net.h"
#include "poly1305.h"
#include "proto.h"
#include "server.h"
#include "sha256.h"
#include "siphash.h"
#include "util.h"

static int failures, checks;

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

static void check(int ok, const char *what, const char *file, int line)
{
	checks++;
	if (!ok) {
		failures++;
		fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
	}
}

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2) {
		unsigned int v;

		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static int digest_is(const uint8_t *digest, size_t len, const char *hex)
{
	uint8_t want[64];

	return unhex(hex, want) >= len && !memcmp(digest, want, len);
}

static void test_sha256(void)
{
	static const struct {
		const char *msg, *digest;
	} vectors[] = {
		/* FIPS 180-4 examples (NIST CSRC) */
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	uint8_t digest[SHA256_DIGEST_SIZE], block[1000];
	struct sha256 ctx;
	size_t i;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sha256_init(&ctx);
		sha256_update(&ctx, vectors[i].msg, strlen(vectors[i].msg));
		sha256_final(&ctx, digest);
		CHECK(digest_is(digest, sizeof(digest), vectors[i].digest));
	}
	/* a million 'a', fed in pieces that straddle blocks */
	memset(block, 'a', sizeof(block));
	sha256_init(&ctx);
	for (i = 0; i < 1000; i++)
		sha256_update(&ctx, block, 1000);
	sha256_final(&ctx, digest);
	CHECK(digest_is(digest, sizeof(digest),
			"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
	/* lengths around the padding boundary, fed whole and byte by byte */
	for (i = 50; i < 70; i++) {
		uint8_t whole[SHA256_DIGEST_SIZE];
		size_t j;

		sha256_init(&ctx);
		sha256_update(&ctx, block, i);
		sha256_final(&ctx, whole);
		sha256_init(&ctx);
		for (j = 0; j < i; j++)
			sha256_update(&ctx, block + j, 1);
		sha256_final(&ctx, digest);
		CHECK(!memcmp(whole, digest, sizeof(digest)));
	}
}

static void test_hmac(void)
{
	/* RFC 4231 test cases 1 to 7 (case 5's MAC is truncated to 128 bits) */
	static const struct {
		const char *key, *data, *mac;
	} vectors[] = {
		{ "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
		{ "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
		{ "0102030405060708090a0b0c0d0e0f10111213141516171819",
		  "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
		{ "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
		  "a3b6167473100ee06e0c796c2955552b" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
	};
	size_t i;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint8_t key[256], data[256], mac[SHA256_DIGEST_SIZE];
		size_t key_len = unhex(vectors[i].key, key), data_len = unhex(vectors[i].data, data);
		struct hmac_sha256 ctx;

		hmac_sha256_init(&ctx, key, key_len);
		hmac_sha256_update(&ctx, data, data_len);
		hmac_sha256_final(&ctx, mac);
		CHECK(digest_is(mac, strlen(vectors[i].mac) / 2, vectors[i].mac));
	}
}

/* xorshift32: the same data and cuts on every run */
static uint32_t test_random(void)
{
	static uint32_t x = 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* Hashes data in pieces cut at random points, some long, some short. */
static void sha256_in_pieces(const uint8_t *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE])
{
	struct sha256 ctx;

	sha256_init(&ctx);
	while (len) {
		size_t n = test_random() % (test_random() % 2 ? len + 1 : 130);

		if (n > len)
			n = len;
		sha256_update(&ctx, data, n);
		data += n;
		len -= n;
	}
	sha256_final(&ctx, digest);
}

static void hmac_once(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len,
		      uint8_t mac[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256 ctx;

	hmac_sha256_init(&ctx, key, key_len);
	hmac_sha256_update(&ctx, data, len);
	hmac_sha256_final(&ctx, mac);
}

static void poly1305_once(const uint8_t key[POLY1305_KEY_SIZE], const uint8_t *data, size_t len,
			  uint8_t tag[POLY1305_TAG_SIZE])
{
	struct poly1305 ctx;

	poly1305_init(&ctx, key);
	poly1305_update(&ctx, data, len);
	poly1305_final(&ctx, tag);
}

/* Feeds data in pieces of the given sizes, over and over, an empty one between each two. */
static void poly1305_in_pieces(const uint8_t key[POLY1305_KEY_SIZE], const uint8_t *data,
			       size_t len, const size_t *sizes, size_t nsizes,
			       uint8_t tag[POLY1305_TAG_SIZE])
{
	struct poly1305 ctx;
	size_t i;

	poly1305_init(&ctx, key);
	for (i = 0; len; i++) {
		size_t n = sizes[i % nsizes] < len ? sizes[i % nsizes] : len;

		poly1305_update(&ctx, data, n);
		poly1305_update(&ctx, data + n, 0);
		data += n;
		len -= n;
	}
	poly1305_final(&ctx, tag);
}

static void test_poly1305(void)
{
	/*
	 * RFC 8439 section 2.5.2 and appendix A.3 #1 and #4 to #11; #5 to #11
	 * are built so that h wraps past 2^130 - 5 or carries in the final
	 * reduction.
	 */
	static const struct {
		const char *key, *msg, *tag;
	} vectors[] = {
		{ "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
		  "43727970746f6772617068696320466f72756d2052657365617263682047726f7570",
		  "a8061dc1305136c6c22b8baf0c0127a9" },
		{ "0000000000000000000000000000000000000000000000000000000000000000",
		  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
		  "00000000000000000000000000000000" },
		{ "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
		  "2754776173206272696c6c69672c20616e642074686520736c6974687920746f7665730a446964206779726520616e642067696d626c6520696e2074686520776162653a0a416c6c206d696d737920776572652074686520626f726f676f7665732c0a416e6420746865206d6f6d65207261746873206f757467726162652e",
		  "4541669a7eaaee61e708dc7cbcc5eb62" },
		{ "0200000000000000000000000000000000000000000000000000000000000000",
		  "ffffffffffffffffffffffffffffffff",
		  "03000000000000000000000000000000" },
		{ "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
		  "02000000000000000000000000000000",
		  "03000000000000000000000000000000" },
		{ "0100000000000000000000000000000000000000000000000000000000000000",
		  "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff11000000000000000000000000000000",
		  "05000000000000000000000000000000" },
		{ "0100000000000000000000000000000000000000000000000000000000000000",
		  "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe01010101010101010101010101010101",
		  "00000000000000000000000000000000" },
		{ "0200000000000000000000000000000000000000000000000000000000000000",
		  "fdffffffffffffffffffffffffffffff",
		  "faffffffffffffffffffffffffffffff" },
		{ "0100000000000000040000000000000000000000000000000000000000000000",
		  "e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000",
		  "14000000000000005500000000000000" },
		{ "0100000000000000040000000000000000000000000000000000000000000000",
		  "e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000",
		  "13000000000000000000000000000000" },
	};
	/* odd sizes, so that pieces end everywhere in a block */
	static const size_t sizes[] = { 1, 3, 5, 7, 15, 17, 31, 33, 13 };
	static uint8_t data[NSWAP2L_PROTO_PAGE_SIZE + 64 + 16];
	uint8_t key[POLY1305_KEY_SIZE], msg[128], tag[POLY1305_TAG_SIZE], want[POLY1305_TAG_SIZE];
	size_t i, first;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		size_t len = unhex(vectors[i].msg, msg);

		CHECK(unhex(vectors[i].key, key) == sizeof(key));
		poly1305_once(key, msg, len, tag);
		CHECK(digest_is(tag, sizeof(tag), vectors[i].tag));
		for (first = 0; first < sizeof(sizes) / sizeof(sizes[0]); first++) {
			poly1305_in_pieces(key, msg, len, sizes + first, 1, tag);
			CHECK(digest_is(tag, sizeof(tag), vectors[i].tag));
		}
		poly1305_in_pieces(key, msg, len, sizes, sizeof(sizes) / sizeof(sizes[0]), tag);
		CHECK(digest_is(tag, sizeof(tag), vectors[i].tag));
	}
	/* random keys and data of every length around a page, unaligned */
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)test_random();
	for (i = 0; i < 200; i++) {
		const uint8_t *p = data + test_random() % 16;
		size_t len = i < 100 ? i : test_random() % (sizeof(data) - 15), j;

		for (j = 0; j < sizeof(key); j++)
			key[j] = (uint8_t)test_random();
		poly1305_once(key, p, len, want);
		first = test_random() % (sizeof(sizes) / sizeof(sizes[0]));
		poly1305_in_pieces(key, p, len, sizes + first,
				   sizeof(sizes) / sizeof(sizes[0]) - first, tag);
		CHECK(!memcmp(tag, want, sizeof(want)));
	}
}

/*
 * The SHA instructions and the portable code agree on random data of random
 * length at unaligned addresses, whole or cut at random points.
 */
static void test_sha256_paths(void)
{
	static uint8_t data[10000 + 16];
	uint8_t key[100];
	int i, round;

	for (i = 0; i < (int)sizeof(data); i++)
		data[i] = (uint8_t)test_random();
	for (round = 0; round < 100; round++) {
		const uint8_t *p = data + test_random() % 16;
		size_t len = test_random() % 10001, key_len = test_random() % (sizeof(key) + 1);
		uint8_t want[SHA256_DIGEST_SIZE], want_mac[SHA256_DIGEST_SIZE];
		uint8_t got[SHA256_DIGEST_SIZE];
		struct sha256 ctx;

		for (i = 0; i < (int)key_len; i++)
			key[i] = (uint8_t)test_random();
		sha256_force_portable(true);
		sha256_init(&ctx);
		sha256_update(&ctx, p, len);
		sha256_final(&ctx, want);
		hmac_once(key, key_len, p, len, want_mac);
		sha256_in_pieces(p, len, got);
		CHECK(!memcmp(got, want, sizeof(want)));

		sha256_force_portable(false);
		sha256_init(&ctx);
		sha256_update(&ctx, p, len);
		sha256_final(&ctx, got);
		CHECK(!memcmp(got, want, sizeof(want)));
		sha256_in_pieces(p, len, got);
		CHECK(!memcmp(got, want, sizeof(want)));
		hmac_once(key, key_len, p, len, got);
		CHECK(!memcmp(got, want_mac, sizeof(want_mac)));
	}
}

/* the key of the SipHash reference vectors: bytes 00 to 0f */
static const struct siphash_key test_hash_key = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };

static void test_siphash(void)
{
	/* SipHash-2-4 reference vectors (vectors_sip64): message 00 01 .. len-1 */
	static const struct {
		size_t len;
		const char *hash;	/* little-endian */
	} vectors[] = {
		{ 0, "310e0edd47db6f72" }, { 1, "fd67dc93c539f874" }, { 7, "37d1018bf50002ab" },
		{ 8, "6224939a79f5f593" }, { 9, "b0e4a90bdf82009e" }, { 15, "e545be4961ca29a1" },
		{ 16, "db9bc2577fcc2a3f" }, { 63, "724506eb4c328a95" },
	};
	uint8_t msg[64], hash[8];
	size_t i, j;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint64_t h = siphash24(&test_hash_key, msg, vectors[i].len);

		for (j = 0; j < 8; j++)
			hash[j] = (uint8_t)(h >> (8 * j));
		CHECK(digest_is(hash, sizeof(hash), vectors[i].hash));
	}
}

static void test_auth(void)
{
	struct auth_handshake hs = { .client_name = "alice", .client_id = { 1 },
				     .client_nonce = { 2 }, .server_nonce = { 3 } }, other;
	uint8_t hello_header[PROTO_HEADER_SIZE] = { 4 }, hello[sizeof(struct nswap2l_hello)] = { 5 };
	uint8_t reply_header[PROTO_HEADER_SIZE] = { 6 }, reply[sizeof(struct nswap2l_hello_reply)] = { 7 };
	uint8_t auth_header[PROTO_HEADER_SIZE] = { 8 }, a[32], b[32], c[32];
	struct auth_key key = { .len = 16 };
	struct sha256 digest;

	memset(key.bytes, 7, 16);
	/* T is SHA-256(HELLO header || HELLO || reply header || reply) */
	auth_handshake_transcript(&hs, hello_header, hello, reply_header, reply, sizeof(reply));
	sha256_init(&digest);
	sha256_update(&digest, hello_header, sizeof(hello_header));
	sha256_update(&digest, hello, sizeof(hello));
	sha256_update(&digest, reply_header, sizeof(reply_header));
	sha256_update(&digest, reply, sizeof(reply));
	sha256_final(&digest, c);
	CHECK(!memcmp(hs.transcript, c, sizeof(c)));

	auth_client_mac(&key, &hs, a);
	auth_server_mac(&key, &hs, auth_header, b);
	CHECK(!auth_mac_equal(a, b));
	/*
	 * Known answers, from tests/lib/session_mac.py (client_proof,
	 * server_proof): HMAC(K, label || name || id || client nonce || server
	 * nonce || T), and the server's with the nonces swapped and its AUTH
	 * reply's header after T.
	 */
	CHECK(digest_is(a, sizeof(a), "00ad5cbe08df223d70588f5dbd85532429bfe9ce453ec7b6a50b62a53825344a"));
	CHECK(digest_is(b, sizeof(b), "233c5443aced3a400a3ec47cf05bc70bcce41f2a9151411fdc0707573972aa63"));
	/* the name is bound: another name with the same key proves nothing */
	other = hs;
	other.client_name[4] = 'f';
	auth_client_mac(&key, &other, c);
	CHECK(!auth_mac_equal(a, c));
	/* so is every byte of the HELLO exchange */
	other = hs;
	hello[sizeof(hello) - 1] ^= 1;
	auth_handshake_transcript(&other, hello_header, hello, reply_header, reply, sizeof(reply));
	auth_client_mac(&key, &other, c);
	CHECK(!auth_mac_equal(a, c));
	/* a proof is all or nothing */
	memcpy(c, b, sizeof(c));
	c[31] ^= 1;
	CHECK(!auth_mac_equal(b, c));
	auth_header[sizeof(auth_header) - 1] ^= 1;
	auth_server_mac(&key, &hs, auth_header, c);
	CHECK(!auth_mac_equal(b, c));
}

/*
 * The message MAC is Poly1305 keyed with HMAC-SHA256(key(dir), le64 seq):
 * the same computed here step by step, and fed in pieces as conn.c does.
 */
static void test_message_mac(void)
{
	static uint8_t msg[PROTO_HEADER_SIZE + NSWAP2L_PROTO_PAGE_SIZE];
	const uint64_t seq = 0x0102030405060708ull;
	uint8_t key[NSWAP2L_PROTO_SESSION_KEY_SIZE], seq_le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	uint8_t otk[SHA256_DIGEST_SIZE], want[NSWAP2L_PROTO_MSG_MAC_SIZE];
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE];
	struct auth_message ctx;
	size_t i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)test_random();
	hmac_once(key, sizeof(key), seq_le, sizeof(seq_le), otk);
	poly1305_once(otk, msg, sizeof(msg), want);
	auth_message_mac(key, seq, msg, sizeof(msg), mac);
	CHECK(auth_message_mac_equal(mac, want));
	auth_message_begin(&ctx, key, seq);
	auth_message_update(&ctx, msg, PROTO_HEADER_SIZE);
	for (i = PROTO_HEADER_SIZE; i < sizeof(msg); i += 1000)
		auth_message_update(&ctx, msg + i, sizeof(msg) - i < 1000 ? sizeof(msg) - i : 1000);
	auth_message_end(&ctx, mac);
	CHECK(auth_message_mac_equal(mac, want));
	auth_message_mac(key, seq + 1, msg, sizeof(msg), mac);
	CHECK(!auth_message_mac_equal(mac, want));
	/* a known answer, from the code of tests/host/attack.py: message 00 to 2f */
	for (i = 0; i < 48; i++)
		msg[i] = (uint8_t)i;
	auth_message_mac(key, seq, msg, 48, mac);
	CHECK(digest_is(mac, sizeof(mac), "917a19e3f15f4bcd95c2da17962eaae6"));
}

static bool name_valid(const char *text)
{
	char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE] = { 0 };

	memcpy(name, text, strnlen(text, sizeof(name)));
	return proto_client_name_valid(name);
}

static void write_file(const char *dir, const char *name, const char *content, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f && fwrite(content, 1, len, f) == len);
	if (f)
		fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(unlink(path) == 0);
}

static void test_client_names(void)
{
	char dir[] = "/tmp/nswapd-unit.XXXXXX", name[NSWAP2L_PROTO_CLIENT_NAME_SIZE] = "bob";
	struct auth_keyring ring;
	char err[512];

	CHECK(name_valid("a") && name_valid("web-7.rack_2") && name_valid("0123456789012345678901234567890"));
	CHECK(!name_valid("") && !name_valid(".") && !name_valid("..") && !name_valid(".hidden"));
	CHECK(!name_valid("a/b") && !name_valid("a b") && !name_valid("\xc3\xa9"));
	CHECK(!name_valid("01234567890123456789012345678901"));	/* no room for a NUL */
	name[5] = 'x';						/* junk after the NUL */
	CHECK(!proto_client_name_valid(name));

	CHECK(mkdtemp(dir) != NULL);
	write_file(dir, "alice", "0123456789abcdef", 16);
	write_file(dir, "bob", "fedcba9876543210fedcba9876543210", 32);
	write_file(dir, ".alice.swp", "x", 1);
	CHECK(auth_load_clients(dir, &ring, err, sizeof(err)) == 0 && ring.count == 2 && !ring.shared);
	memset(name, 0, sizeof(name));
	memcpy(name, "bob", 3);
	CHECK(auth_find_key(&ring, name) && auth_find_key(&ring, name)->len == 32);
	memcpy(name, "carol", 5);
	CHECK(!auth_find_key(&ring, name));
	auth_keyring_free(&ring);
	/* a short key or a bad file name fails the whole load, with the reason */
	write_file(dir, "carol", "short", 5);
	CHECK(auth_load_clients(dir, &ring, err, sizeof(err)) && strstr(err, "carol") &&
	      !ring.count && !ring.clients);
	remove_file(dir, "carol");
	write_file(dir, "bad name", "0123456789abcdef", 16);
	CHECK(auth_load_clients(dir, &ring, err, sizeof(err)) && strstr(err, "bad name"));
	remove_file(dir, "bad name");
	remove_file(dir, "alice");
	remove_file(dir, "bob");
	remove_file(dir, ".alice.swp");
	CHECK(rmdir(dir) == 0);
	CHECK(auth_load_clients(dir, &ring, err, sizeof(err)) && strstr(err, "cannot open"));
}

/* Bytes of one page in a PUT: key, seal, page. */
#define PUT_ITEM_SIZE (8 + PROTO_SEAL_SIZE + PROTO_PAGE_SIZE)

/* Builds a request: header and payload_len bytes of payload (keys as given). */
static size_t build(uint8_t *buf, uint16_t type, uint32_t count, uint32_t length,
		    const uint64_t *keys, uint32_t nkeys)
{
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = type, .tag = 7,
				    .count = count, .length = length };
	uint32_t i;

	proto_encode_header(buf, &hdr);
	memset(buf + PROTO_HEADER_SIZE, 0, length);
	for (i = 0; i < nkeys; i++)
		proto_put_key(buf + PROTO_HEADER_SIZE, i, keys[i]);
	return PROTO_HEADER_SIZE + length;
}

static enum proto_result decode(const uint8_t *buf, size_t len, size_t *used, const char **why)
{
	struct proto_request req;

	*why = NULL;
	return proto_decode_request(buf, len, 0, &req, used, why);
}

/* The migration's messages: which session may send them, and their lengths. */
static void test_parser_migration(void)
{
	static uint8_t buf[PROTO_MAX_MESSAGE];
	uint64_t keys[2] = { 5, 6 };
	struct proto_header hdr;
	struct proto_request req;
	const char *why;
	size_t len, used;

	/* MOVED reply: the keys not taken, none or more, only with NSWAP2L_CAP_MOVED */
	len = build(buf, NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY, 2, 16, keys, 2);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_COMPLETE && proto_key(req.keys, 1) == 6);
	CHECK(proto_decode_request(buf, len, 0, &req, &used, &why) == PROTO_INVALID);
	len = build(buf, NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY, 0, 0, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_COMPLETE);
	len = build(buf, NSWAP2L_MSG_MOVED | NSWAP2L_MSG_REPLY, 2, 8, keys, 1);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_INVALID);
	/* ASK_NAMESPACE reply: OK with a client id, NOENT with nothing */
	len = build(buf, NSWAP2L_MSG_ASK_NAMESPACE | NSWAP2L_MSG_REPLY, 0, 16, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_COMPLETE);
	proto_decode_header(buf, &hdr);
	hdr.status = NSWAP2L_ERR_NOENT;
	CHECK(proto_check_request_header(&hdr, NSWAP2L_CAP_MOVED) != NULL);
	hdr.length = 0;
	CHECK(proto_check_request_header(&hdr, NSWAP2L_CAP_MOVED) == NULL);
	hdr.status = NSWAP2L_ERR_NOSPC;
	CHECK(proto_check_request_header(&hdr, NSWAP2L_CAP_MOVED) != NULL);
	/* PEER_PUT: a namespace, then keys, seals and pages; peer sessions only */
	len = build(buf, NSWAP2L_MSG_PEER_PUT, 2, PROTO_PEER_NS_SIZE + 2 * PUT_ITEM_SIZE, NULL, 0);
	strcpy((char *)buf + PROTO_HEADER_SIZE, "alice");
	proto_put_key(buf + PROTO_HEADER_SIZE + PROTO_PEER_NS_SIZE, 1, 9);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_COMPLETE && !strcmp(req.peer_ns.client_name, "alice") &&
	      proto_key(req.keys, 1) == 9 && req.pages + 2 * PROTO_PAGE_SIZE == buf + len);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_INVALID && !strcmp(why, "peer message in a client session"));
	CHECK(proto_decode_request(buf, len - 1, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_NEED_MORE);
	/* ... naming a valid client only */
	strcpy((char *)buf + PROTO_HEADER_SIZE, ".peer");
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_INVALID);
	/* a client's messages in a peer session */
	len = build(buf, NSWAP2L_MSG_GET, 2, 16, keys, 2);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_INVALID && !strcmp(why, "client message in a peer session"));
	len = build(buf, NSWAP2L_MSG_PEER_FREE, 2, PROTO_PEER_NS_SIZE + 16, NULL, 0);
	strcpy((char *)buf + PROTO_HEADER_SIZE, "alice");
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_COMPLETE);
	len = build(buf, NSWAP2L_MSG_PEER_FREE, 0, PROTO_PEER_NS_SIZE, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_INVALID);
	/* what a peer sends the mover: a PEER_PUT reply names the keys held there already */
	len = build(buf, NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY, 2, 16, keys, 2);
	proto_decode_header(buf, &hdr);
	CHECK(!proto_check_peer_message(&hdr, buf + PROTO_HEADER_SIZE));
	hdr.length = 8;
	CHECK(proto_check_peer_message(&hdr, buf + PROTO_HEADER_SIZE) != NULL);
	hdr.count = NSWAP2L_PROTO_MAX_PAGES + 1;
	hdr.length = hdr.count * 8;
	CHECK(proto_check_peer_message(&hdr, buf + PROTO_HEADER_SIZE) != NULL);
	keys[1] = NSWAP2L_PROTO_KEY_LIMIT;
	len = build(buf, NSWAP2L_MSG_PEER_PUT | NSWAP2L_MSG_REPLY, 2, 16, keys, 2);
	proto_decode_header(buf, &hdr);
	CHECK(proto_check_peer_message(&hdr, buf + PROTO_HEADER_SIZE) != NULL);
	/* NOSPC, PEER_FREE's reply, CAPACITY: no payload */
	hdr.count = 0;
	hdr.length = 0;
	hdr.status = NSWAP2L_ERR_NOSPC;
	CHECK(!proto_check_peer_message(&hdr, NULL));
	hdr.length = 8;
	CHECK(proto_check_peer_message(&hdr, buf + PROTO_HEADER_SIZE) != NULL);
	hdr.length = 0;
	hdr.type = NSWAP2L_MSG_PEER_FREE | NSWAP2L_MSG_REPLY;
	CHECK(!proto_check_peer_message(&hdr, NULL));
	hdr.type = NSWAP2L_MSG_CAPACITY;
	CHECK(!proto_check_peer_message(&hdr, NULL));
	hdr.type = NSWAP2L_MSG_GET | NSWAP2L_MSG_REPLY;
	CHECK(proto_check_peer_message(&hdr, NULL) != NULL);
}

/* A COPY to server id 0xa0.. and client id 0xc0..: count keys from first, in length bytes. */
static size_t build_copy(uint8_t *buf, uint32_t count, uint32_t length, uint64_t first)
{
	uint8_t *payload = buf + PROTO_HEADER_SIZE;
	size_t len = build(buf, NSWAP2L_MSG_COPY, count, length, NULL, 0);
	uint32_t i;

	memset(payload, 0xa0, NSWAP2L_PROTO_SERVER_ID_SIZE);
	memset(payload + NSWAP2L_PROTO_SERVER_ID_SIZE, 0xc0, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	for (i = 0; i < count && PROTO_MOVED_SIZE + (i + 1) * PROTO_KEY_SIZE <= length; i++)
		proto_put_key(payload + PROTO_MOVED_SIZE, i, first + i);
	return len;
}

/* COPY: where, then 1..NSWAP2L_PROTO_MAX_COPY_KEYS keys; NSWAP2L_CAP_COPY and _MOVED only. */
static void test_parser_copy(void)
{
	static uint8_t buf[PROTO_MAX_MESSAGE];
	const uint64_t caps = NSWAP2L_CAP_COPY | NSWAP2L_CAP_MOVED;
	struct proto_request req;
	const char *why;
	size_t len, used;

	len = build_copy(buf, 3, PROTO_MOVED_SIZE + 3 * 8, 40);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_COMPLETE &&
	      used == len && req.hdr.count == 3 && proto_key(req.keys, 0) == 40 &&
	      proto_key(req.keys, 2) == 42 && req.copy_to.server_id[15] == 0xa0 &&
	      req.copy_to.client_id[0] == 0xc0 && req.copy_to.client_id[15] == 0xc0);
	CHECK(proto_decode_request(buf, len - 1, caps, &req, &used, &why) == PROTO_NEED_MORE);
	/* the capabilities: both in effect, and never in a peer session */
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_MOVED, &req, &used, &why) ==
	      PROTO_INVALID && strstr(why, "COPY without"));
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_COPY, &req, &used, &why) ==
	      PROTO_INVALID);
	CHECK(proto_decode_request(buf, len, caps | NSWAP2L_CAP_PEER, &req, &used, &why) ==
	      PROTO_INVALID && !strcmp(why, "client message in a peer session"));
	/* the most keys, and one more */
	len = build_copy(buf, NSWAP2L_PROTO_MAX_COPY_KEYS,
			 PROTO_MOVED_SIZE + NSWAP2L_PROTO_MAX_COPY_KEYS * 8, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_COMPLETE &&
	      proto_key(req.keys, NSWAP2L_PROTO_MAX_COPY_KEYS - 1) == NSWAP2L_PROTO_MAX_COPY_KEYS);
	len = build_copy(buf, NSWAP2L_PROTO_MAX_COPY_KEYS + 1,
			 PROTO_MOVED_SIZE + (NSWAP2L_PROTO_MAX_COPY_KEYS + 1) * 8, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID &&
	      !strcmp(why, "count over limit"));
	/* no key */
	len = build_copy(buf, 0, PROTO_MOVED_SIZE, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID &&
	      !strcmp(why, "count zero"));
	/* a length that is not the count's: a key short or over, no where, a few bytes more */
	len = build_copy(buf, 2, PROTO_MOVED_SIZE + 8, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID &&
	      !strcmp(why, "length does not match type and count"));
	len = build_copy(buf, 2, PROTO_MOVED_SIZE + 24, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID);
	len = build_copy(buf, 2, 16, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID);
	len = build_copy(buf, 2, PROTO_MOVED_SIZE + 16 + 3, 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID);
	/* a key over the limit, even the last one */
	len = build_copy(buf, 2, PROTO_MOVED_SIZE + 16, NSWAP2L_PROTO_KEY_LIMIT - 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_INVALID &&
	      !strcmp(why, "page key over limit"));
	len = build_copy(buf, 1, PROTO_MOVED_SIZE + 8, NSWAP2L_PROTO_KEY_LIMIT - 1);
	CHECK(proto_decode_request(buf, len, caps, &req, &used, &why) == PROTO_COMPLETE);
	/* the type is named in logs */
	CHECK(!strcmp(proto_type_name(NSWAP2L_MSG_COPY | NSWAP2L_MSG_REPLY), "COPY"));
}

/* RELEASE: no count, no payload; NSWAP2L_CAP_RELEASE only, never in a peer session. */
static void test_parser_release(void)
{
	static uint8_t buf[PROTO_HEADER_SIZE + 8];
	struct proto_request req;
	const char *why;
	size_t len, used;

	len = build(buf, NSWAP2L_MSG_RELEASE, 0, 0, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_RELEASE, &req, &used, &why) ==
	      PROTO_COMPLETE && used == len && req.hdr.type == NSWAP2L_MSG_RELEASE);
	CHECK(proto_decode_request(buf, len, 0, &req, &used, &why) == PROTO_INVALID &&
	      !strcmp(why, "RELEASE without NSWAP2L_CAP_RELEASE"));
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_RELEASE | NSWAP2L_CAP_PEER, &req, &used,
				   &why) == PROTO_INVALID &&
	      !strcmp(why, "client message in a peer session"));
	len = build(buf, NSWAP2L_MSG_RELEASE, 1, 0, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_RELEASE, &req, &used, &why) ==
	      PROTO_INVALID && !strcmp(why, "count in a message without items"));
	len = build(buf, NSWAP2L_MSG_RELEASE, 0, 8, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_RELEASE, &req, &used, &why) ==
	      PROTO_INVALID && !strcmp(why, "length does not match type and count"));
	len = build(buf, NSWAP2L_MSG_RELEASE, 1, 8, NULL, 0);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_RELEASE, &req, &used, &why) ==
	      PROTO_INVALID);
	CHECK(!strcmp(proto_type_name(NSWAP2L_MSG_RELEASE | NSWAP2L_MSG_REPLY), "RELEASE"));
}

static void test_parser(void)
{
	static uint8_t buf[PROTO_MAX_MESSAGE + 64];
	uint64_t keys[2] = { 5, NSWAP2L_PROTO_KEY_LIMIT - 1 }, bad_key = NSWAP2L_PROTO_KEY_LIMIT;
	struct proto_header hdr;
	struct proto_request req;
	const char *why;
	size_t len, used;
	uint32_t i;

	len = build(buf, NSWAP2L_MSG_GET, 2, 16, keys, 2);
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE && used == len);
	CHECK(proto_decode_request(buf, len, 0, &req, &used, &why) == PROTO_COMPLETE &&
	      proto_key(req.keys, 1) == NSWAP2L_PROTO_KEY_LIMIT - 1);
	/* header only: not complete, but the full size is known */
	CHECK(decode(buf, PROTO_HEADER_SIZE, &used, &why) == PROTO_NEED_MORE && used == len);
	CHECK(decode(buf, 10, &used, &why) == PROTO_NEED_MORE && used == 0);

	len = build(buf, NSWAP2L_MSG_PUT, 64, 64 * PUT_ITEM_SIZE, keys, 2);
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE);
	CHECK(decode(buf, len - 1, &used, &why) == PROTO_NEED_MORE && used == len);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) ==
	      PROTO_COMPLETE && req.nr_frees == 0);
	/* the largest payload: a full PUT with the most keys to free, only with PUT_FREES */
	len = build(buf, NSWAP2L_MSG_PUT, 64, NSWAP2L_PROTO_MAX_PAYLOAD, keys, 2);
	CHECK(decode(buf, len, &used, &why) == PROTO_INVALID);
	for (i = 0; i < NSWAP2L_PROTO_MAX_PUT_FREES; i++)	/* not the PUT's own keys, 0 among them */
		proto_put_key(buf + PROTO_HEADER_SIZE + 64 * (8 + PROTO_SEAL_SIZE), i, 1000 + i);
	CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) ==
	      PROTO_COMPLETE && req.nr_frees == NSWAP2L_PROTO_MAX_PUT_FREES);
	/* a PUT's keys, then its seals, then its pages */
	len = build(buf, NSWAP2L_MSG_PUT, 2, 2 * PUT_ITEM_SIZE, keys, 2);
	CHECK(proto_decode_request(buf, len, 0, &req, &used, &why) == PROTO_COMPLETE &&
	      req.keys == buf + PROTO_HEADER_SIZE && req.seals == req.keys + 2 * 8 &&
	      req.pages == req.seals + 2 * PROTO_SEAL_SIZE);
	/* with PUT_FREES: keys, seals, keys to free, pages */
	{
		uint64_t put_keys[5] = { 5, 6, 1, 2, 3 };
		uint8_t *payload = buf + PROTO_HEADER_SIZE;

		len = build(buf, NSWAP2L_MSG_PUT, 2, 2 * PUT_ITEM_SIZE + 3 * 8, put_keys, 2);
		for (i = 0; i < 3; i++)
			proto_put_key(payload + 2 * (8 + PROTO_SEAL_SIZE), i, put_keys[2 + i]);
		CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) ==
		      PROTO_COMPLETE && used == len && req.keys == payload &&
		      req.seals == payload + 16 && req.frees == req.seals + 2 * PROTO_SEAL_SIZE &&
		      req.nr_frees == 3 && proto_key(req.frees, 2) == 3 &&
		      req.pages == req.frees + 3 * 8);
		/* without the capability, the same PUT is malformed */
		CHECK(decode(buf, len, &used, &why) == PROTO_INVALID && why);
		/* a key to free over the limit, or one of the PUT's own */
		proto_put_key(payload + 2 * (8 + PROTO_SEAL_SIZE), 1, bad_key);
		CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) ==
		      PROTO_INVALID && strstr(why, "over limit"));
		proto_put_key(payload + 2 * (8 + PROTO_SEAL_SIZE), 1, 6);
		CHECK(proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) ==
		      PROTO_INVALID && strstr(why, "own keys"));
	}
#define INVALID_FREES(count, length) \
	(len = build(buf, NSWAP2L_MSG_PUT, count, length, keys, 1), why = NULL, \
	 proto_decode_request(buf, len, NSWAP2L_CAP_PUT_FREES, &req, &used, &why) == \
	 PROTO_INVALID && why)
	CHECK(INVALID_FREES(1, PUT_ITEM_SIZE + 4));			/* half a key */
	CHECK(INVALID_FREES(1, PUT_ITEM_SIZE - 8));			/* short of its pages */
	CHECK(INVALID_FREES(1, PUT_ITEM_SIZE + 8 * (NSWAP2L_PROTO_MAX_PUT_FREES + 1)));
	CHECK(INVALID_FREES(0, 8));
#undef INVALID_FREES

	/* a HELLO needs a client name */
	len = build(buf, NSWAP2L_MSG_HELLO, 0, sizeof(struct nswap2l_hello), NULL, 0);
	CHECK(decode(buf, len, &used, &why) == PROTO_INVALID && strstr(why, "client name"));
	buf[len - NSWAP2L_PROTO_CLIENT_NAME_SIZE] = 'a';
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE);
	len = build(buf, NSWAP2L_MSG_AUTH, 0, NSWAP2L_PROTO_MAC_SIZE, NULL, 0);
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE);
	len = build(buf, NSWAP2L_MSG_FREE, 1024, 8192, keys, 2);
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE);
	len = build(buf, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, 3, 0, NULL, 0);
	CHECK(decode(buf, len, &used, &why) == PROTO_COMPLETE);

#define INVALID(type, count, length, keys, nkeys) \
	(len = build(buf, type, count, length, keys, nkeys), \
	 decode(buf, len, &used, &why) == PROTO_INVALID && why)
	CHECK(INVALID(NSWAP2L_MSG_GET, 1, 8, &bad_key, 1));
	CHECK(INVALID(NSWAP2L_MSG_GET, 0, 0, NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_GET, 65, 520, NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_GET, 2, 24, keys, 2));
	CHECK(INVALID(NSWAP2L_MSG_PUT, 1, 8, keys, 1));
	CHECK(INVALID(NSWAP2L_MSG_PUT, 1, 8 + PROTO_PAGE_SIZE, keys, 1));	/* version 3: no seal */
	CHECK(INVALID(NSWAP2L_MSG_FREE, 1025, 8200, NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_HELLO, 1, sizeof(struct nswap2l_hello), NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_AUTH, 0, 31, NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_CAPACITY, 0, 0, NULL, 0));
	CHECK(INVALID(NSWAP2L_MSG_EVICT, 1, 8, keys, 1));
	CHECK(INVALID(NSWAP2L_MSG_GET | NSWAP2L_MSG_REPLY, 1, 8, keys, 1));
	CHECK(INVALID(NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, 1, 8, keys, 1));
	CHECK(INVALID(99, 0, 0, NULL, 0));
#undef INVALID

	/* header fields that must be zero or right, checked before any payload */
	build(buf, NSWAP2L_MSG_GET, 1, 8, keys, 1);
	proto_decode_header(buf, &hdr);
	hdr.magic ^= 1;
	proto_encode_header(buf, &hdr);
	CHECK(decode(buf, PROTO_HEADER_SIZE, &used, &why) == PROTO_INVALID);
	hdr.magic ^= 1;
	hdr.flags = 1;
	proto_encode_header(buf, &hdr);
	CHECK(decode(buf, PROTO_HEADER_SIZE, &used, &why) == PROTO_INVALID);
	hdr.flags = 0;
	hdr.status = 1;
	proto_encode_header(buf, &hdr);
	CHECK(decode(buf, PROTO_HEADER_SIZE, &used, &why) == PROTO_INVALID);
	hdr.status = 0;
	hdr.length = UINT32_MAX;
	proto_encode_header(buf, &hdr);
	CHECK(decode(buf, PROTO_HEADER_SIZE, &used, &why) == PROTO_INVALID);
	CHECK(why && !strcmp(why, "length over limit"));

	/* the wire layout is the shared header's, little-endian */
	hdr = (struct proto_header){ .magic = NSWAP2L_PROTO_MAGIC, .type = 0x8003, .tag = 0x01020304,
				     .free_pages = 0x1122334455667788ull };
	proto_encode_header(buf, &hdr);
	CHECK(!memcmp(buf, "NW2L", 4) && buf[4] == 3 && buf[5] == 0x80 && buf[8] == 4 &&
	      buf[24] == 0x88 && buf[31] == 0x11);
}

static void test_outq(void)
{
	static uint8_t data[3 * OUTQ_CHUNK_SIZE + 100], out[sizeof(data)];
	struct outq q = { 0 };
	struct iovec iov[8];
	size_t i, got = 0;
	int n;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	CHECK(!outq_append(&q, data, 10));
	CHECK(!outq_append(&q, data + 10, sizeof(data) - 10));
	CHECK(q.bytes == sizeof(data));
	outq_consume(&q, 5);
	n = outq_iov(&q, iov, 8);
	for (i = 0; i < (size_t)n; i++) {
		memcpy(out + 5 + got, iov[i].iov_base, iov[i].iov_len);
		got += iov[i].iov_len;
	}
	CHECK(got == sizeof(data) - 5 && !memcmp(out + 5, data + 5, got));
	outq_consume(&q, got);
	CHECK(q.bytes == 0 && outq_iov(&q, iov, 8) == 0);
	CHECK(!outq_append(&q, data, 3));
	CHECK(q.bytes == 3);
	outq_clear(&q);
}

/* A sink that takes chunks into a buffer until it holds limit bytes. */
struct drain_sink {
	uint8_t *buf;
	size_t len, limit;
};

static int take_chunk(void *arg, const void *data, size_t len)
{
	struct drain_sink *sink = arg;

	if (sink->len + len > sink->limit)
		return -1;
	memcpy(sink->buf + sink->len, data, len);
	sink->len += len;
	return 0;
}

/* outq_drain() hands every byte in order; a sink's refusal keeps what it refused queued. */
static void test_outq_drain(void)
{
	static uint8_t data[3 * OUTQ_CHUNK_SIZE + 100], out[sizeof(data)];
	struct drain_sink sink = { .buf = out, .limit = OUTQ_CHUNK_SIZE + 10 };
	struct outq q = { 0 };
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13);
	for (i = 0; i < sizeof(data); i += 1000)
		CHECK(!outq_append(&q, data + i, sizeof(data) - i < 1000 ? sizeof(data) - i : 1000));
	CHECK(outq_drain(&q, take_chunk, &sink) == -1);
	CHECK(sink.len > 0 && sink.len <= sink.limit && q.bytes == sizeof(data) - sink.len);
	sink.limit = sizeof(data);
	CHECK(outq_drain(&q, take_chunk, &sink) == 0);
	CHECK(q.bytes == 0 && !q.head && sink.len == sizeof(data) && !memcmp(out, data, sizeof(data)));
	CHECK(outq_drain(&q, take_chunk, &sink) == 0);
}

static ptrdiff_t outq_memory;

static void count_outq_memory(struct outq *q, ptrdiff_t bytes)
{
	(void)q;
	outq_memory += bytes;
}

/*
 * Chunks are sized for the message they hold, whatever pieces it comes
 * in; outq_append_cost() says what they cost before; they are freed as
 * they are sent, the last one too.
 */
static void test_outq_memory(void)
{
	static uint8_t data[2 * OUTQ_CHUNK_SIZE + 5000];
	struct outq q = { .charge = count_outq_memory };
	size_t i, cost, message = sizeof(data);

	/* a small reply: one small chunk */
	cost = outq_append_cost(&q, 48);
	CHECK(!outq_append(&q, data, 48));
	CHECK(outq_memory == (ptrdiff_t)cost && cost < 2 * OUTQ_MIN_CHUNK);
	outq_consume(&q, 48);
	CHECK(!q.head && !q.tail && outq_memory == 0);

	/* a large message in small pieces costs what it would whole */
	cost = outq_append_cost(&q, message);
	outq_expect(&q, message);
	for (i = 0; i < message; i += 100)
		CHECK(!outq_append(&q, data + i, message - i < 100 ? message - i : 100));
	CHECK(outq_memory == (ptrdiff_t)cost && cost < message + 4 * OUTQ_MIN_CHUNK);
	outq_consume(&q, OUTQ_CHUNK_SIZE);
	CHECK(outq_memory < (ptrdiff_t)cost && q.bytes == message - OUTQ_CHUNK_SIZE);
	outq_clear(&q);
	CHECK(outq_memory == 0);
}

static void put_keys(uint8_t *buf, const uint64_t *keys, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		proto_put_key(buf, i, keys[i]);
}

/* The first bytes of the page and the last of its seal are key (test_store's pattern). */
static bool page_and_seal_hold(const uint8_t *page, const uint8_t *seal, uint64_t key)
{
	return !memcmp(page, &key, sizeof(key)) &&
	       !memcmp(seal + PROTO_SEAL_SIZE - sizeof(key), &key, sizeof(key));
}

static void test_store(void)
{
	static uint8_t pages[NSWAP2L_PROTO_MAX_PAGES * PROTO_PAGE_SIZE];
	uint8_t seals[NSWAP2L_PROTO_MAX_PAGES * PROTO_SEAL_SIZE] = { 0 };
	uint8_t keybuf[NSWAP2L_PROTO_MAX_KEYS * 8];
	const uint8_t *got[NSWAP2L_PROTO_MAX_PAGES], *got_seals[NSWAP2L_PROTO_MAX_PAGES];
	uint64_t keys[NSWAP2L_PROTO_MAX_KEYS], picked[NSWAP2L_PROTO_MAX_KEYS];
	struct page_pool pool;
	struct page_table table;
	uint32_t asked, i, n, total;
	uint64_t k;
	static uint8_t seen[20032];

	page_pool_init(&pool, false, &test_hash_key);
	page_table_init(&table);
	for (i = 0; i < 4; i++) {
		keys[i] = 100 + i;
		memset(seals + i * PROTO_SEAL_SIZE, 'A' + i, PROTO_SEAL_SIZE);
		memset(pages + i * PROTO_PAGE_SIZE, 'a' + i, PROTO_PAGE_SIZE);
	}
	put_keys(keybuf, keys, 4);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 4, 3) == STORE_NOSPC);
	CHECK(pool.frames_used == 0 && table.used == 0);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 4, 4) == STORE_OK);
	CHECK(pool.frames_used == 4);
	CHECK(store_get(&pool, &table, keybuf, 4, got_seals, got) == STORE_OK);
	CHECK(got[2][0] == 'c' && got[2][PROTO_PAGE_SIZE - 1] == 'c');
	for (i = 0; i < 4; i++)
		CHECK(!memcmp(got_seals[i], seals + i * PROTO_SEAL_SIZE, PROTO_SEAL_SIZE));
	/* overwrites need no room, and replace the seal as well as the page */
	memset(seals, 'Z', PROTO_SEAL_SIZE);
	memset(pages, 'z', PROTO_PAGE_SIZE);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 1, 0) == STORE_OK);
	CHECK(store_get(&pool, &table, keybuf, 2, got_seals, got) == STORE_OK && got[0][0] == 'z');
	CHECK(!memcmp(got_seals[0], seals, PROTO_SEAL_SIZE) && got_seals[1][0] == 'B');
	/* a key twice in one PUT: the later page and seal win, one frame */
	keys[0] = keys[1] = 500;
	put_keys(keybuf, keys, 2);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 2, 2) == STORE_OK);
	CHECK(pool.frames_used == 5);
	CHECK(store_get(&pool, &table, keybuf, 1, got_seals, got) == STORE_OK && got[0][0] == 'b');
	CHECK(!memcmp(got_seals[0], seals + PROTO_SEAL_SIZE, PROTO_SEAL_SIZE));
	keys[0] = 999;
	put_keys(keybuf, keys, 1);
	CHECK(store_get(&pool, &table, keybuf, 1, got_seals, got) == STORE_NOENT);
	CHECK(store_free(&pool, &table, keybuf, 1, &asked) == 0);
	page_table_destroy(&table, &pool);
	CHECK(pool.frames_used == 0);

	/* many keys: the table grows, every page and seal stays findable, and shrinks back */
	memset(seals, 0, sizeof(seals));
	for (k = 0; k < 20000; k += 64) {
		for (i = 0; i < 64; i++) {
			keys[i] = k * 3 + i * 3;	/* spread, not dense */
			memcpy(pages + i * PROTO_PAGE_SIZE, &keys[i], sizeof(keys[i]));
			/* at the seal's end: the whole seal is kept */
			memcpy(seals + (i + 1) * PROTO_SEAL_SIZE - sizeof(keys[i]), &keys[i],
			       sizeof(keys[i]));
		}
		put_keys(keybuf, keys, 64);
		CHECK(store_put(&pool, &table, keybuf, seals, pages, 64, UINT64_MAX) == STORE_OK);
	}
	total = 20032;
	CHECK(table.used == total && pool.frames_used == total);
	for (k = 0; k < 20032; k += 64) {
		for (i = 0; i < 64; i++)
			keys[i] = k * 3 + i * 3;
		put_keys(keybuf, keys, 64);
		CHECK(store_get(&pool, &table, keybuf, 64, got_seals, got) == STORE_OK);
		for (i = 0; i < 64; i++)
			CHECK(page_and_seal_hold(got[i], got_seals[i], keys[i]));
	}
	/* eviction picks go round the table: each key once per cycle */
	for (n = 0; n < total; n += i) {
		i = store_pick_eviction(&table, picked, total - n < NSWAP2L_PROTO_MAX_KEYS ?
					total - n : NSWAP2L_PROTO_MAX_KEYS);
		CHECK(i > 0);
		for (k = 0; k < i; k++) {
			CHECK(picked[k] % 3 == 0 && picked[k] / 3 < 20032);
			CHECK(!seen[picked[k] / 3]++);
		}
	}
	CHECK(n == total);
	/* freeing: asked pages are counted as returned, the table shrinks */
	for (k = 0; k < 20032 - 64; k += 1024) {
		for (i = 0; i < 1024 && k + i < 20032 - 64; i++)
			keys[i] = (k + i) * 3;
		put_keys(keybuf, keys, i);
		CHECK(store_free(&pool, &table, keybuf, i, &asked) == i && asked == i);
	}
	CHECK(table.used == 64 && pool.frames_used == 64);
	CHECK(table.mask + 1 <= 256);
	for (i = 0; i < 64; i++)
		keys[i] = (20032 - 64 + i) * 3;
	put_keys(keybuf, keys, 64);
	CHECK(store_get(&pool, &table, keybuf, 64, got_seals, got) == STORE_OK);
	page_pool_release_free(&pool);
	CHECK(store_get(&pool, &table, keybuf, 64, got_seals, got) == STORE_OK);
	for (i = 0; i < 64; i++)
		CHECK(page_and_seal_hold(got[i], got_seals[i], keys[i]));
	page_table_destroy(&table, &pool);
	page_pool_release_free(&pool);
	for (i = 0; i < pool.slab_slots; i++)
		CHECK(!pool.slabs[i]);
	page_pool_destroy(&pool);
}

/*
 * A peer's PUT overwrites nothing: the keys held already keep their page
 * and seal and are named back; the rest are stored, all or none, and are
 * the peer's to free until the client writes them.
 */
static void test_store_put_new(void)
{
	static uint8_t pages[4 * PROTO_PAGE_SIZE];
	uint8_t seals[4 * PROTO_SEAL_SIZE], keybuf[4 * 8], held[4 * 8];
	const uint8_t *got[4], *got_seals[4];
	uint64_t keys[4] = { 7, 8, 9, 10 };
	struct page_pool pool;
	struct page_table table;
	uint32_t nr_held, i;

	page_pool_init(&pool, false, &test_hash_key);
	page_table_init(&table);
	memset(pages, 'a', sizeof(pages));
	memset(seals, 'A', sizeof(seals));
	put_keys(keybuf, keys, 2);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 2, 2) == STORE_OK);
	memset(pages, 'b', sizeof(pages));
	memset(seals, 'B', sizeof(seals));
	put_keys(keybuf, keys + 1, 3);
	/* two new ones need room for two */
	CHECK(store_put_new(&pool, &table, keybuf, seals, pages, 3, 1, held, &nr_held) ==
	      STORE_NOSPC && table.used == 2);
	CHECK(store_put_new(&pool, &table, keybuf, seals, pages, 3, 2, held, &nr_held) ==
	      STORE_OK && nr_held == 1 && proto_key(held, 0) == 8);
	CHECK(table.used == 4 && pool.frames_used == 4);
	put_keys(keybuf, keys, 4);
	CHECK(store_get(&pool, &table, keybuf, 4, got_seals, got) == STORE_OK);
	for (i = 0; i < 4; i++)
		CHECK(got[i][0] == (i < 2 ? 'a' : 'b') && got_seals[i][0] == (i < 2 ? 'A' : 'B'));
	/*
	 * A PEER_FREE takes back what the peer stored (9, 10) and the client
	 * did not write since: 10 was written, a mirror's new copy; 7 and 8
	 * were the client's before.
	 */
	put_keys(keybuf, keys + 3, 1);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 1, 0) == STORE_OK);
	put_keys(keybuf, keys, 4);
	CHECK(store_free_from_peer(&pool, &table, keybuf, 4, &nr_held) == 1 && table.used == 3);
	CHECK(store_get(&pool, &table, keybuf + 2 * 8, 1, got_seals, got) == STORE_NOENT);
	CHECK(store_free(&pool, &table, keybuf, 4, &nr_held) == 3 && table.used == 0);
	page_table_destroy(&table, &pool);
	page_pool_destroy(&pool);
}

/*
 * Moves pick whole runs (the keys sharing (key - 1) / 16, which parity
 * takes only together): every held key of a run picked is in the same
 * pick, next to each other; a pick ends once it has what it wants, or
 * before a run that does not fit.
 */
static void test_store_pick_runs(void)
{
	static uint8_t pages[NSWAP2L_PROTO_MAX_PAGES * PROTO_PAGE_SIZE];
	uint8_t seals[NSWAP2L_PROTO_MAX_PAGES * PROTO_SEAL_SIZE] = { 0 };
	uint8_t keybuf[NSWAP2L_PROTO_MAX_PAGES * 8];
	uint64_t keys[NSWAP2L_PROTO_MAX_PAGES], picked[256];
	static uint8_t seen[1024];
	struct page_pool pool;
	struct page_table table;
	uint32_t i, j, n, total = 0, rounds;

	page_pool_init(&pool, false, &test_hash_key);
	page_table_init(&table);
	/* runs 0..39: run r holds (r % 16) + 1 of its keys, every other one from 1 + 16 r */
	for (i = 0, n = 0; i < 40; i++) {
		for (j = 0; j <= i % 16; j++) {
			keys[n++] = 1 + 16 * i + (2 * j) % 16 + (2 * j >= 16);
			if (n == NSWAP2L_PROTO_MAX_PAGES) {
				put_keys(keybuf, keys, n);
				CHECK(store_put(&pool, &table, keybuf, seals, pages, n, n) ==
				      STORE_OK);
				total += n;
				n = 0;
			}
		}
	}
	put_keys(keybuf, keys, n);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, n, n) == STORE_OK);
	total += n;
	CHECK(table.used == total);
	/* going round the table, every key is picked (a run again as its other keys come up) */
	for (n = 0, rounds = 0; n < total && rounds < 1000; rounds++) {
		i = store_pick_runs(&pool, &table, picked, 20, 40);
		CHECK(i > 0 && i <= 40);
		/* whole runs, together: the run of each key is all of its held keys */
		for (j = 0; j < i; j++) {
			uint64_t run = (picked[j] - 1) / 16;
			uint32_t len = 0, k;

			n += !seen[picked[j]]++;
			for (k = 0; k < i; k++) {
				len += (picked[k] - 1) / 16 == run;
				CHECK(k == j || picked[k] != picked[j]);
			}
			CHECK(len == run % 16 + 1);
			/* next to each other: a run, once left, does not come back */
			for (k = 0; j && (picked[j - 1] - 1) / 16 != run && k < j; k++)
				CHECK((picked[k] - 1) / 16 != run);
		}
		/* rounded to whole runs: past 20 only by the last one */
		CHECK(i < 20 + 16);
	}
	CHECK(n == total && rounds > 1);
	/* a run that does not fit is left for later, not split */
	CHECK(store_pick_runs(&pool, &table, picked, 1, 3) <= 3);
	CHECK(store_pick_runs(&pool, &table, picked, 100, 15) <= 15);
	page_table_destroy(&table, &pool);
	/* key 0 (never the kernel's) is a run of its own: its run's keys wrap round */
	keys[0] = 0;
	put_keys(keybuf, keys, 1);
	CHECK(store_put(&pool, &table, keybuf, seals, pages, 1, 1) == STORE_OK);
	CHECK(store_pick_runs(&pool, &table, picked, 16, 16) == 1 && picked[0] == 0);
	page_table_destroy(&table, &pool);
	page_pool_destroy(&pool);
}

/* A session through conn.c with an in-memory peer. */
static void zero_nonce(uint8_t nonce[NSWAP2L_PROTO_NONCE_SIZE])
{
	memset(nonce, 0, NSWAP2L_PROTO_NONCE_SIZE);
}

/* Feeds bytes the way the event loop does: as much as the connection has room for. */
static void feed(struct conn *conn, const uint8_t *data, size_t len)
{
	while (len) {
		size_t room;
		uint8_t *space = conn_read_space(conn, &room);

		CHECK(space && room);
		if (!space || !room)
			return;
		if (room > len)
			room = len;
		memcpy(space, data, room);
		conn_received(conn, room);
		data += room;
		len -= room;
	}
}

static unsigned int capacity_messages;

/* The test's side of a session: its keys and sequence numbers. */
static struct {
	bool on;
	bool sealed_get;	/* NSWAP2L_CAP_SEALED_GET in effect */
	struct auth_session keys;
	uint64_t tx_seq, rx_seq;
} peer;

static void peer_session(const struct auth_key *key, const struct auth_handshake *hs)
{
	auth_session_keys(key, hs, &peer.keys);
	peer.on = true;
	peer.sealed_get = false;
	peer.tx_seq = peer.rx_seq = 0;
}

/* Copies the next len bytes of conn->out to buf and takes them off. */
static void take_bytes(struct conn *conn, uint8_t *buf, size_t len)
{
	struct iovec iov[64];
	size_t got = 0;
	int n, i;

	n = outq_iov(&conn->out, iov, 64);
	for (i = 0; i < n && got < len; i++) {
		size_t c = iov[i].iov_len < len - got ? iov[i].iov_len : len - got;

		memcpy(buf + got, iov[i].iov_base, c);
		got += c;
	}
	CHECK(got == len);
	outq_consume(&conn->out, len);
}

/* Takes the first queued message off conn->out, header and payload as queued, into msg. */
static struct proto_header take_message(struct conn *conn, uint8_t *msg)
{
	struct proto_header hdr = { 0 };

	if (conn->out.bytes < PROTO_HEADER_SIZE)
		return hdr;
	take_bytes(conn, msg, PROTO_HEADER_SIZE);
	proto_decode_header(msg, &hdr);
	take_bytes(conn, msg + PROTO_HEADER_SIZE, hdr.length);
	return hdr;
}

/*
 * Takes the first queued message off conn->out and checks its MAC in a
 * session; returns its header.
 */
static struct proto_header take_any(struct conn *conn, uint8_t *payload)
{
	static uint8_t msg[PROTO_MAX_MESSAGE];
	uint8_t mac[NSWAP2L_PROTO_MSG_MAC_SIZE], want[NSWAP2L_PROTO_MSG_MAC_SIZE];
	struct proto_header hdr = take_message(conn, msg);

	if (!hdr.magic)
		return hdr;
	if (payload)
		memcpy(payload, msg + PROTO_HEADER_SIZE, hdr.length);
	if (peer.on) {
		/* with SEALED_GET, a GET reply's MAC covers its header and seals only */
		size_t covered = PROTO_HEADER_SIZE + hdr.length;

		if (peer.sealed_get && hdr.type == (NSWAP2L_MSG_GET | NSWAP2L_MSG_REPLY) &&
		    hdr.status == NSWAP2L_OK)
			covered = PROTO_HEADER_SIZE + (size_t)hdr.count * PROTO_SEAL_SIZE;
		take_bytes(conn, mac, sizeof(mac));
		auth_message_mac(peer.keys.s2c, peer.rx_seq++, msg, covered, want);
		CHECK(auth_message_mac_equal(mac, want));
	}
	return hdr;
}

/* The next message other than CAPACITY, which are only counted. */
static struct proto_header take(struct conn *conn, uint8_t *payload)
{
	struct proto_header hdr;

	while ((hdr = take_any(conn, payload)).type == NSWAP2L_MSG_CAPACITY)
		capacity_messages++;
	return hdr;
}

/* Sends a message (with its MAC in a session); returns its bytes as sent. */
static const uint8_t *send_msg(struct conn *conn, uint16_t type, uint32_t tag, uint32_t count,
			       const void *payload, uint32_t length, uint32_t status)
{
	static uint8_t buf[PROTO_MAX_MESSAGE];
	struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = type, .tag = tag,
				    .count = count, .length = length, .status = status };

	size_t len = PROTO_HEADER_SIZE + length;

	proto_encode_header(buf, &hdr);
	if (length)
		memcpy(buf + PROTO_HEADER_SIZE, payload, length);
	if (peer.on) {
		auth_message_mac(peer.keys.c2s, peer.tx_seq++, buf, len, buf + len);
		len += NSWAP2L_PROTO_MSG_MAC_SIZE;
	}
	feed(conn, buf, len);
	return buf;
}

/* The HELLO of client "unit", namespace id (0, ..., 0, id_byte), nonce all zero. */
static struct nswap2l_hello unit_hello(uint64_t caps, uint8_t id_byte)
{
	struct nswap2l_hello h = { .version_min = NSWAP2L_PROTO_VERSION,
				   .version_max = NSWAP2L_PROTO_VERSION, .capabilities = caps,
				   .client_name = "unit" };

	h.client_id[15] = id_byte;
	return h;
}

/* The bytes of the last HELLO and its reply, as they went each way. */
static struct {
	uint8_t hello[PROTO_HEADER_SIZE + sizeof(struct nswap2l_hello)];
	uint8_t reply[PROTO_MAX_MESSAGE];
} last_hello;

static void transcript_of_last_hello(struct auth_handshake *hs)
{
	struct proto_header hdr;

	proto_decode_header(last_hello.reply, &hdr);
	auth_handshake_transcript(hs, last_hello.hello, last_hello.hello + PROTO_HEADER_SIZE,
				  last_hello.reply, last_hello.reply + PROTO_HEADER_SIZE, hdr.length);
}

/*
 * Sends HELLO h and takes the server's reply, as a client does: fills hs
 * with the handshake so far (the transcript of the bytes both ways).
 * Returns the reply's header.
 */
static struct proto_header hello_exchange(struct conn *conn, const struct nswap2l_hello *h,
					  struct auth_handshake *hs)
{
	uint8_t payload[sizeof(*h)];
	struct nswap2l_hello_reply decoded;
	struct proto_header hdr;

	proto_encode_hello(payload, h);
	memcpy(last_hello.hello, send_msg(conn, NSWAP2L_MSG_HELLO, 1, 0, payload, sizeof(payload), 0),
	       sizeof(last_hello.hello));
	hdr = take_message(conn, last_hello.reply);
	auth_handshake_from_hello(hs, h);
	if (hdr.status == NSWAP2L_OK && hdr.length >= sizeof(decoded)) {
		proto_decode_hello_reply(last_hello.reply + PROTO_HEADER_SIZE, &decoded);
		memcpy(hs->server_nonce, decoded.server_nonce, sizeof(hs->server_nonce));
		transcript_of_last_hello(hs);
	}
	return hdr;
}

/*
 * Sends AUTH with the proof of key over hs; returns the reply's header and
 * sets *server_proved whether the server's proof (over that header) holds.
 */
static struct proto_header auth_exchange(struct conn *conn, const struct auth_key *key,
					 const struct auth_handshake *hs, bool *server_proved)
{
	static uint8_t reply[PROTO_MAX_MESSAGE];
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE];
	struct proto_header hdr;

	auth_client_mac(key, hs, mac);
	send_msg(conn, NSWAP2L_MSG_AUTH, 2, 0, mac, sizeof(mac), 0);
	hdr = take_message(conn, reply);
	auth_server_mac(key, hs, reply, mac);
	*server_proved = hdr.status == NSWAP2L_OK && hdr.length == sizeof(mac) &&
			 auth_mac_equal(mac, reply + PROTO_HEADER_SIZE);
	return hdr;
}

/* A session for (unit, id_byte) with capabilities caps up to READY, the test's keys set up. */
static struct conn *ready_conn_caps(struct server *srv, const struct auth_key *key,
				    uint8_t id_byte, uint64_t caps)
{
	struct nswap2l_hello h = unit_hello(caps, id_byte);
	struct conn *conn = conn_open(srv, "test:mac", 9);
	struct auth_handshake hs;
	bool proved;

	peer.on = false;
	hello_exchange(conn, &h, &hs);
	CHECK(auth_exchange(conn, key, &hs, &proved).status == NSWAP2L_OK && proved &&
	      conn->state == CONN_READY);
	peer_session(key, &hs);
	peer.sealed_get = caps & NSWAP2L_CAP_SEALED_GET;
	return conn;
}

static struct conn *ready_conn(struct server *srv, const struct auth_key *key, uint8_t id_byte)
{
	return ready_conn_caps(srv, key, id_byte, 0);
}

/* Session MACs: a wrong, replayed or reordered message closes the connection. */
static void test_session_macs(struct server *srv, const struct auth_key *key)
{
	static uint8_t buf[PROTO_HEADER_SIZE + 8 + NSWAP2L_PROTO_MSG_MAC_SIZE];
	uint64_t failures = srv->mac_failures;
	struct conn *conn;
	uint8_t keys[8];

	proto_put_key(keys, 0, 7);
	/* good MACs: answered, with MACs the test checks in take() */
	conn = ready_conn(srv, key, 9);
	send_msg(conn, NSWAP2L_MSG_GET, 1, 1, keys, 8, 0);
	send_msg(conn, NSWAP2L_MSG_FREE, 2, 1, keys, 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOENT);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->state == CONN_READY);

	/* one bit of the MAC flipped */
	{
		struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_GET,
					    .tag = 3, .count = 1, .length = 8 };

		proto_encode_header(buf, &hdr);
		memcpy(buf + PROTO_HEADER_SIZE, keys, 8);
		auth_message_mac(peer.keys.c2s, peer.tx_seq, buf, PROTO_HEADER_SIZE + 8,
				 buf + PROTO_HEADER_SIZE + 8);
		buf[PROTO_HEADER_SIZE + 8] ^= 1;
		feed(conn, buf, sizeof(buf));
	}
	CHECK(conn->state == CONN_CLOSING && srv->mac_failures == failures + 1);
	CHECK(conn->out.bytes == 0);		/* nothing answered */
	conn_close(conn);

	/* a message replayed: its sequence number is gone */
	conn = ready_conn(srv, key, 9);
	send_msg(conn, NSWAP2L_MSG_GET, 4, 1, keys, 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOENT);
	peer.tx_seq--;
	send_msg(conn, NSWAP2L_MSG_GET, 4, 1, keys, 8, 0);
	CHECK(conn->state == CONN_CLOSING && srv->mac_failures == failures + 2);
	conn_close(conn);

	/* reordered: the second message sent first */
	conn = ready_conn(srv, key, 9);
	peer.tx_seq = 1;
	send_msg(conn, NSWAP2L_MSG_GET, 5, 1, keys, 8, 0);
	CHECK(conn->state == CONN_CLOSING && srv->mac_failures == failures + 3);
	conn_close(conn);

	/* a MAC of another session (other nonces) proves nothing here */
	conn = ready_conn(srv, key, 9);
	peer.keys.c2s[0] ^= 1;
	send_msg(conn, NSWAP2L_MSG_GET, 6, 1, keys, 8, 0);
	CHECK(conn->state == CONN_CLOSING && srv->mac_failures == failures + 4);
	conn_close(conn);

	/*
	 * The MAC is checked before the header: a bad header without the
	 * key's MAC is not answered (an INVALID reply would echo its tag under
	 * the session's MAC), one with it is; a length over the limit closes
	 * at once, nothing answered.
	 */
	conn = ready_conn(srv, key, 9);
	peer.keys.c2s[0] ^= 1;
	send_msg(conn, 99, 0xdeadbeef, 5, NULL, 0, 0);
	CHECK(conn->state == CONN_CLOSING && srv->mac_failures == failures + 5);
	CHECK(conn->out.bytes == 0);
	conn_close(conn);
	conn = ready_conn(srv, key, 9);
	send_msg(conn, 99, 0xdeadbeef, 5, NULL, 0, 0);
	{
		struct proto_header hdr = take(conn, NULL);

		CHECK(conn->state == CONN_CLOSING && hdr.status == NSWAP2L_ERR_INVALID &&
		      hdr.tag == 0xdeadbeef && srv->mac_failures == failures + 5);
	}
	conn_close(conn);
	conn = ready_conn(srv, key, 9);
	{
		uint64_t errors = srv->protocol_errors;
		struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_GET,
					    .tag = 7, .count = 1,
					    .length = NSWAP2L_PROTO_MAX_PAYLOAD + 1 };

		proto_encode_header(buf, &hdr);
		feed(conn, buf, PROTO_HEADER_SIZE);
		CHECK(conn->state == CONN_CLOSING && conn->out.bytes == 0 &&
		      srv->protocol_errors == errors + 1 && srv->mac_failures == failures + 5);
	}
	conn_close(conn);
	peer.on = false;
}

/*
 * Seals come back byte for byte, all of them before the pages, and an
 * overwrite replaces its page's seal; a PUT framed as in version 3 (no
 * seals) closes the connection.  Leaves no page behind.
 */
static void test_seals(struct server *srv, const struct auth_key *key)
{
	static uint8_t put[3 * PUT_ITEM_SIZE], overwrite[PUT_ITEM_SIZE];
	static uint8_t reply[3 * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE)];
	uint8_t *seals = put + 3 * 8, *pages = seals + 3 * PROTO_SEAL_SIZE;
	struct conn *conn = ready_conn(srv, key, 10);
	struct proto_header hdr;
	size_t i;

	for (i = 0; i < sizeof(put); i++)
		put[i] = (uint8_t)test_random();
	for (i = 0; i < sizeof(overwrite); i++)
		overwrite[i] = (uint8_t)test_random();
	for (i = 0; i < 3; i++)
		proto_put_key(put, (uint32_t)i, 40 + i);
	proto_put_key(overwrite, 0, 41);
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 3, put, sizeof(put), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK);
	send_msg(conn, NSWAP2L_MSG_GET, 2, 3, put, 3 * 8, 0);
	hdr = take(conn, reply);
	CHECK(hdr.status == NSWAP2L_OK && hdr.length == sizeof(reply));
	CHECK(!memcmp(reply, seals, 3 * PROTO_SEAL_SIZE) &&
	      !memcmp(reply + 3 * PROTO_SEAL_SIZE, pages, 3 * PROTO_PAGE_SIZE));

	/* key 41 overwritten: its new seal and page, the others' as they were */
	send_msg(conn, NSWAP2L_MSG_PUT, 3, 1, overwrite, sizeof(overwrite), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK);
	memcpy(seals + PROTO_SEAL_SIZE, overwrite + 8, PROTO_SEAL_SIZE);
	memcpy(pages + PROTO_PAGE_SIZE, overwrite + 8 + PROTO_SEAL_SIZE, PROTO_PAGE_SIZE);
	send_msg(conn, NSWAP2L_MSG_GET, 4, 3, put, 3 * 8, 0);
	hdr = take(conn, reply);
	CHECK(hdr.status == NSWAP2L_OK && hdr.length == sizeof(reply));
	CHECK(!memcmp(reply, seals, 3 * PROTO_SEAL_SIZE) &&
	      !memcmp(reply + 3 * PROTO_SEAL_SIZE, pages, 3 * PROTO_PAGE_SIZE));

	send_msg(conn, NSWAP2L_MSG_FREE, 5, 3, put, 3 * 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && !conn->ns->pages.used);
	send_msg(conn, NSWAP2L_MSG_PUT, 6, 1, overwrite, 8 + PROTO_PAGE_SIZE, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	conn_close(conn);
	peer.on = false;
}

/*
 * A PUT of count pages, keys first..., freeing nr_frees keys free_first...;
 * page i is filled with its key's low byte, its seal with that ^ 0x5e.
 * Returns the payload's length.
 */
static uint32_t put_freeing(uint8_t *payload, uint64_t first, uint32_t count,
			    uint64_t free_first, uint32_t nr_frees)
{
	uint8_t *seals = payload + count * 8, *frees = seals + count * PROTO_SEAL_SIZE;
	uint8_t *pages = frees + nr_frees * 8;
	uint32_t i;

	for (i = 0; i < count; i++) {
		proto_put_key(payload, i, first + i);
		memset(seals + i * PROTO_SEAL_SIZE, (int)((first + i) ^ 0x5e), PROTO_SEAL_SIZE);
		memset(pages + i * PROTO_PAGE_SIZE, (int)(first + i), PROTO_PAGE_SIZE);
	}
	for (i = 0; i < nr_frees; i++)
		proto_put_key(frees, i, free_first + i);
	return count * PUT_ITEM_SIZE + nr_frees * 8;
}

/*
 * COPY on a server without peers: keys held or not, NOENT with no payload,
 * nothing freed; without NSWAP2L_CAP_COPY (or CAP_MOVED) in effect it is
 * malformed and closes.  Leaves no page behind.
 */
static void test_copy_without_peers(struct server *srv, const struct auth_key *key)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	const uint64_t caps = NSWAP2L_CAP_MOVED | NSWAP2L_CAP_COPY;
	uint8_t copy[PROTO_MOVED_SIZE + 2 * PROTO_KEY_SIZE] = { 0 };
	struct proto_header hdr;
	struct conn *conn;

	proto_put_key(copy + PROTO_MOVED_SIZE, 0, 501);
	proto_put_key(copy + PROTO_MOVED_SIZE, 1, 900);
	conn = ready_conn_caps(srv, key, 12, caps);
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 2, payload, put_freeing(payload, 500, 2, 0, 0), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->ns->pages.used == 2);
	send_msg(conn, NSWAP2L_MSG_COPY, 2, 2, copy, sizeof(copy), 0);
	hdr = take(conn, NULL);
	CHECK(hdr.type == (NSWAP2L_MSG_COPY | NSWAP2L_MSG_REPLY) && hdr.tag == 2 &&
	      hdr.status == NSWAP2L_ERR_NOENT && !hdr.count && !hdr.length &&
	      conn->state == CONN_READY && conn->ns->pages.used == 2 && !srv->pages_copied_out);
	send_msg(conn, NSWAP2L_MSG_FREE, 3, 2, payload, 16, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->ns->pages.used == 0);
	/* one key short of its count */
	send_msg(conn, NSWAP2L_MSG_COPY, 4, 2, copy, sizeof(copy) - 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	conn_close(conn);
	conn = ready_conn_caps(srv, key, 12, NSWAP2L_CAP_COPY);
	send_msg(conn, NSWAP2L_MSG_COPY, 1, 2, copy, sizeof(copy), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	conn_close(conn);
	peer.on = false;
}

/*
 * RELEASE with NSWAP2L_CAP_RELEASE in effect: every page of the namespace
 * is freed now, also those another of its connections stored, the reply
 * is OK and the connection closes; the namespace ends with its last
 * connection, without a grace period.  Another namespace keeps its pages.
 * Without the capability it is malformed.  Leaves no page behind.
 */
static void test_release(struct server *srv, const struct auth_key *key)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	const char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE] = "unit";
	uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE] = { 0 }, keys[2 * PROTO_KEY_SIZE];
	uint64_t keys_freed = srv->keys_freed, errors = srv->protocol_errors;
	uint64_t held = server_held_pages(srv), account_pages;
	struct conn *conn, *other;
	struct proto_header hdr;
	struct namespace *ns;

	/* namespace 15 stays as it is: 2 pages */
	conn = ready_conn_caps(srv, key, 15, NSWAP2L_CAP_RELEASE);
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 2, payload, put_freeing(payload, 700, 2, 0, 0), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK);
	conn_close(conn);
	/* namespace 13: 3 pages by one connection, 2 by the one that releases it */
	other = ready_conn_caps(srv, key, 13, 0);
	send_msg(other, NSWAP2L_MSG_PUT, 1, 3, payload, put_freeing(payload, 710, 3, 0, 0), 0);
	CHECK(take(other, NULL).status == NSWAP2L_OK);
	conn = ready_conn_caps(srv, key, 13, NSWAP2L_CAP_RELEASE);
	ns = conn->ns;
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 2, payload, put_freeing(payload, 720, 2, 0, 0), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && ns->pages.used == 5 &&
	      server_held_pages(srv) == held + 7);
	account_pages = ns->account->pages;
	send_msg(conn, NSWAP2L_MSG_RELEASE, 2, 0, NULL, 0, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.type == (NSWAP2L_MSG_RELEASE | NSWAP2L_MSG_REPLY) && hdr.tag == 2 &&
	      hdr.status == NSWAP2L_OK && !hdr.count && !hdr.length);
	CHECK(conn->state == CONN_CLOSING && ns->pages.used == 0 &&
	      ns->account->pages == account_pages - 5 && server_held_pages(srv) == held + 2 &&
	      srv->keys_freed == keys_freed + 5 && srv->namespaces_released == 1);
	/* the other connection keeps it, without pages; its last connection ends it at once */
	conn_close(conn);
	id[15] = 13;
	CHECK(server_find_namespace(srv, name, id) == ns && ns->connections == 1);
	conn_close(other);
	CHECK(!server_find_namespace(srv, name, id));
	/* namespace 15's pages are all there */
	conn = ready_conn_caps(srv, key, 15, 0);
	proto_put_key(keys, 0, 700);
	proto_put_key(keys, 1, 701);
	send_msg(conn, NSWAP2L_MSG_GET, 1, 2, keys, sizeof(keys), 0);
	hdr = take(conn, payload);
	CHECK(hdr.status == NSWAP2L_OK && payload[0] == (uint8_t)(700 ^ 0x5e) &&
	      payload[2 * PROTO_SEAL_SIZE + PROTO_PAGE_SIZE] == (uint8_t)701);
	send_msg(conn, NSWAP2L_MSG_FREE, 2, 2, keys, sizeof(keys), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && server_held_pages(srv) == held);
	/* without NSWAP2L_CAP_RELEASE in effect: malformed, nothing freed */
	send_msg(conn, NSWAP2L_MSG_RELEASE, 3, 0, NULL, 0, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING &&
	      srv->protocol_errors == errors + 1 && srv->namespaces_released == 1);
	conn_close(conn);
	peer.on = false;
}

/*
 * NSWAP2L_CAP_SEALED_GET and NSWAP2L_CAP_PUT_FREES, announced by the server
 * and in effect when the client's HELLO carried them: a PUT frees its keys
 * to free first (missing ones ignored; also when it then gets NOSPC), a GET
 * reply's MAC covers header and seals (take() checks it so), and a PUT that
 * frees one of its own keys closes.  Without PUT_FREES a PUT with keys to
 * free is malformed.  Expects the server with room for 100 pages holding
 * 40, leaves no page behind.
 */
static void test_put_frees(struct server *srv, const struct auth_key *key)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD], reply[2 * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE)];
	uint64_t requests_put = srv->requests_put, requests_get = srv->requests_get;
	uint64_t requests_free = srv->requests_free, pages_put = srv->pages_put;
	uint64_t keys_freed = srv->keys_freed;
	struct nswap2l_hello_reply announced;
	struct proto_header hdr;
	struct conn *conn;
	uint32_t len;

	conn = ready_conn_caps(srv, key, 11, NSWAP2L_CAP_SEALED_GET | NSWAP2L_CAP_PUT_FREES);
	proto_decode_hello_reply(last_hello.reply + PROTO_HEADER_SIZE, &announced);
	CHECK(announced.capabilities ==
	      (NSWAP2L_CAP_EVICT | NSWAP2L_CAP_SEALED_GET | NSWAP2L_CAP_PUT_FREES |
	       NSWAP2L_CAP_MOVED | NSWAP2L_CAP_PEER | NSWAP2L_CAP_COPY | NSWAP2L_CAP_RELEASE));
	CHECK(peer.sealed_get);
	len = put_freeing(payload, 100, 16, 0, 0);
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 16, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->ns->pages.used == 16);
	/* 200 to 263 freeing 100, 101 and missing 99: 62 pages of room, NOSPC, the frees done */
	CHECK(server_client_room(srv, conn->ns) == 60);
	len = put_freeing(payload, 200, 64, 99, 3);
	send_msg(conn, NSWAP2L_MSG_PUT, 2, 64, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOSPC && conn->ns->pages.used == 14);
	CHECK(srv->keys_freed == keys_freed + 2 && srv->pages_put == pages_put + 16);
	/* freeing 102 and 103 first makes room for 64 */
	len = put_freeing(payload, 200, 64, 102, 2);
	send_msg(conn, NSWAP2L_MSG_PUT, 3, 64, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->ns->pages.used == 76);
	/* the client's account holds its other namespaces' pages too */
	CHECK(conn->ns->account->pages == 100 && server_held_pages(srv) == 100);
	CHECK(srv->keys_freed == keys_freed + 4 && srv->pages_put == pages_put + 80);

	/* a GET reply: seals, pages as stored, the MAC over header and seals */
	send_msg(conn, NSWAP2L_MSG_GET, 4, 2, payload + 8, 2 * 8, 0);
	hdr = take(conn, reply);
	CHECK(hdr.status == NSWAP2L_OK && hdr.length == sizeof(reply) && reply[0] == (201 ^ 0x5e) &&
	      reply[2 * PROTO_SEAL_SIZE] == 201 && reply[sizeof(reply) - 1] == 202);
	send_msg(conn, NSWAP2L_MSG_GET, 5, 1, payload + 64 * (8 + PROTO_SEAL_SIZE), 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOENT);

	/* a FREE counts the keys that were there */
	proto_put_key(payload, 0, 104);
	proto_put_key(payload, 1, 5000);
	send_msg(conn, NSWAP2L_MSG_FREE, 6, 2, payload, 16, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && srv->keys_freed == keys_freed + 5);
	CHECK(srv->requests_put == requests_put + 3 && srv->requests_get == requests_get + 2 &&
	      srv->requests_free == requests_free + 1);

	/* freeing one of its own keys closes, nothing freed or stored */
	len = put_freeing(payload, 300, 2, 301, 1);
	send_msg(conn, NSWAP2L_MSG_PUT, 7, 2, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	CHECK(conn->ns->pages.used == 75 && srv->requests_put == requests_put + 3);
	conn_close(conn);

	/* without the capabilities: a GET reply's MAC covers its pages, frees are malformed */
	conn = ready_conn(srv, key, 11);
	CHECK(!peer.sealed_get);
	proto_put_key(payload, 0, 201);
	send_msg(conn, NSWAP2L_MSG_GET, 1, 1, payload, 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK);
	len = put_freeing(payload, 400, 1, 200, 1);
	send_msg(conn, NSWAP2L_MSG_PUT, 2, 1, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	CHECK(conn->ns->pages.used == 75);
	conn_close(conn);

	/* the rest (105 to 115, 200 to 263) freed by a PUT that stores one page, then a FREE */
	conn = ready_conn_caps(srv, key, 11, NSWAP2L_CAP_PUT_FREES);
	len = put_freeing(payload, 500, 1, 200, 64);
	send_msg(conn, NSWAP2L_MSG_PUT, 1, 1, payload, len, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->ns->pages.used == 12);
	for (len = 0; len < 11; len++)
		proto_put_key(payload, len, 105 + len);
	proto_put_key(payload, 11, 500);
	send_msg(conn, NSWAP2L_MSG_FREE, 2, 12, payload, 12 * 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && !conn->ns->pages.used);
	CHECK(srv->keys_freed == keys_freed + 5 + 64 + 12);
	conn_close(conn);
	peer.on = false;
}

/*
 * Every byte of the handshake is bound into the proofs: a HELLO field or a
 * HELLO reply field changed on the way (the client's transcript differs
 * from the server's) fails the client's proof, and a changed AUTH reply
 * header (its namespace flag, its free_pages) fails the server's.
 */
static void test_transcript_bound(struct server *srv, const struct auth_key *key)
{
	static uint8_t reply[PROTO_MAX_MESSAGE];
	uint8_t mac[NSWAP2L_PROTO_MAC_SIZE], tampered[PROTO_HEADER_SIZE];
	struct nswap2l_hello sent = unit_hello(NSWAP2L_CAP_EVICT, 77), received = unit_hello(0, 77);
	uint64_t failures = srv->auth_failures;
	struct auth_handshake hs, client_view;
	struct nswap2l_hello_reply decoded;
	struct proto_header hdr;
	struct conn *conn;
	bool proved;

	/* the server got other capabilities than the client sent */
	conn = conn_open(srv, "test:mitm", 0);
	CHECK(hello_exchange(conn, &received, &hs).status == NSWAP2L_OK);
	client_view = hs;
	proto_encode_hello(last_hello.hello + PROTO_HEADER_SIZE, &sent);
	transcript_of_last_hello(&client_view);
	CHECK(auth_exchange(conn, key, &client_view, &proved).status == NSWAP2L_ERR_AUTH);
	CHECK(conn->state == CONN_CLOSING && srv->auth_failures == failures + 1);
	conn_close(conn);

	/* the client got another max_pages than the server sent */
	conn = conn_open(srv, "test:mitm", 0);
	CHECK(hello_exchange(conn, &sent, &hs).status == NSWAP2L_OK);
	client_view = hs;
	proto_decode_hello_reply(last_hello.reply + PROTO_HEADER_SIZE, &decoded);
	decoded.max_pages = 1;
	proto_encode_hello_reply(last_hello.reply + PROTO_HEADER_SIZE, &decoded);
	transcript_of_last_hello(&client_view);
	CHECK(auth_exchange(conn, key, &client_view, &proved).status == NSWAP2L_ERR_AUTH);
	CHECK(srv->auth_failures == failures + 2);
	conn_close(conn);

	/* the AUTH reply's flags or free_pages changed: the server's proof fails */
	conn = conn_open(srv, "test:mitm", 0);
	hello_exchange(conn, &sent, &hs);
	auth_client_mac(key, &hs, mac);
	send_msg(conn, NSWAP2L_MSG_AUTH, 2, 0, mac, sizeof(mac), 0);
	hdr = take_message(conn, reply);
	CHECK(hdr.status == NSWAP2L_OK && conn->state == CONN_READY);
	auth_server_mac(key, &hs, reply, mac);
	CHECK(auth_mac_equal(mac, reply + PROTO_HEADER_SIZE));
	hdr.flags ^= NSWAP2L_FLAG_NAMESPACE_FOUND;
	proto_encode_header(tampered, &hdr);
	auth_server_mac(key, &hs, tampered, mac);
	CHECK(!auth_mac_equal(mac, reply + PROTO_HEADER_SIZE));
	hdr.flags ^= NSWAP2L_FLAG_NAMESPACE_FOUND;
	hdr.free_pages++;
	proto_encode_header(tampered, &hdr);
	auth_server_mac(key, &hs, tampered, mac);
	CHECK(!auth_mac_equal(mac, reply + PROTO_HEADER_SIZE));
	conn_close(conn);
}

static void test_session(void)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	struct server_config cfg = {
		.max_pages = 100, .reserve_bytes = 0, .grace_ms = 2000, .make_nonce = zero_nonce,
		.keys = { .shared = true, .shared_key = { .len = 16 } },
		.max_connections = 4, .max_unauth_per_address = 2, .max_conns_per_client = 4,
		.max_namespaces_per_client = 100, .message_timeout_ms = 30000,
		.buffer_budget = 64u << 20,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	struct nswap2l_hello hello_msg;
	struct auth_handshake hs;
	uint8_t zero[32] = { 0 };
	struct proto_header hdr;
	struct server srv;
	struct conn *conn;
	bool proved;
	uint64_t keys[64];
	uint32_t i;

	memset(cfg.keys.shared_key.bytes, 9, 16);
	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);
	CHECK(srv.limit_pages == 100);

	/* wrong MAC: AUTH reply with status AUTH, then closing */
	conn = conn_open(&srv, "test:1", 0);
	hello_msg = unit_hello(0, 1);
	hdr = hello_exchange(conn, &hello_msg, &hs);
	CHECK(hdr.type == (NSWAP2L_MSG_HELLO | NSWAP2L_MSG_REPLY) && hdr.status == 0 &&
	      hdr.length == 48 && hdr.free_pages == 0);
	send_msg(conn, NSWAP2L_MSG_AUTH, 2, 0, zero, 32, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.type == (NSWAP2L_MSG_AUTH | NSWAP2L_MSG_REPLY) && hdr.status == NSWAP2L_ERR_AUTH);
	CHECK(conn->state == CONN_CLOSING && srv.auth_failures == 1);
	conn_close(conn);

	/* versions without overlap: 2 to 4 (4: proofs without the transcript), newer ones */
	for (i = 0; i < 2; i++) {
		struct nswap2l_hello h = { .version_min = i ? NSWAP2L_PROTO_VERSION + 1 : 2,
					   .version_max = i ? NSWAP2L_PROTO_VERSION + 2 :
						      NSWAP2L_PROTO_VERSION - 1,
					   .client_name = "unit" };
		uint8_t p[sizeof(h)];

		conn = conn_open(&srv, "test:2", 0);
		proto_encode_hello(p, &h);
		send_msg(conn, NSWAP2L_MSG_HELLO, 1, 0, p, sizeof(p), 0);
		hdr = take(conn, NULL);
		CHECK(hdr.status == NSWAP2L_ERR_VERSION && conn->state == CONN_CLOSING);
		conn_close(conn);
	}

	/* a request before AUTH closes */
	conn = conn_open(&srv, "test:3", 0);
	keys[0] = 1;
	put_keys(payload, keys, 1);
	send_msg(conn, NSWAP2L_MSG_GET, 1, 1, payload, 8, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	conn_close(conn);

	test_transcript_bound(&srv, &cfg.keys.shared_key);

	/* good session, takes EVICT */
	conn = conn_open(&srv, "test:4", 0);
	hello_msg = unit_hello(NSWAP2L_CAP_EVICT, 1);
	hello_exchange(conn, &hello_msg, &hs);
	hdr = auth_exchange(conn, &cfg.keys.shared_key, &hs, &proved);
	CHECK(hdr.status == 0 && hdr.length == 32 && proved);
	CHECK(conn->state == CONN_READY && hdr.free_pages == 100 && !hdr.flags);
	peer_session(&cfg.keys.shared_key, &hs);

	/* PUT 64, then GET in the same batch of input sees them */
	for (i = 0; i < 64; i++) {
		keys[i] = i;
		memset(payload + 64 * (8 + PROTO_SEAL_SIZE) + i * PROTO_PAGE_SIZE, (int)i, PROTO_PAGE_SIZE);
	}
	put_keys(payload, keys, 64);
	send_msg(conn, NSWAP2L_MSG_PUT, 10, 64, payload, 64 * PUT_ITEM_SIZE, 0);
	send_msg(conn, NSWAP2L_MSG_GET, 11, 64, payload, 64 * 8, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.tag == 10 && hdr.status == 0 && hdr.count == 64 && hdr.free_pages == 36);
	hdr = take(conn, payload);
	CHECK(hdr.tag == 11 && hdr.status == 0 &&
	      hdr.length == 64 * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE));
	CHECK(payload[64 * PROTO_SEAL_SIZE + 63 * PROTO_PAGE_SIZE] == 63 &&
	      payload[64 * PROTO_SEAL_SIZE + 5 * PROTO_PAGE_SIZE + 4095] == 5);
	/* more than fits: NOSPC, nothing stored */
	for (i = 0; i < 64; i++)
		keys[i] = 1000 + i;
	put_keys(payload, keys, 64);
	send_msg(conn, NSWAP2L_MSG_PUT, 12, 64, payload, 64 * PUT_ITEM_SIZE, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.status == NSWAP2L_ERR_NOSPC && server_held_pages(&srv) == 64);
	send_msg(conn, NSWAP2L_MSG_GET, 13, 1, payload, 8, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.status == NSWAP2L_ERR_NOENT && hdr.length == 0);

	/* memory pressure: 40 pages short of the reserve -> EVICT for 40 */
	srv.cfg.reserve_bytes = 40 * PROTO_PAGE_SIZE;
	{
		struct mem_sample none = { .mem_available = 0, .cgroup_headroom = MEM_UNKNOWN };

		server_tick(&srv, &none);
	}
	CHECK(srv.limit_pages == 24 && server_free_pages(&srv) == 0);
	hdr = take(conn, payload);
	CHECK(hdr.type == NSWAP2L_MSG_EVICT && hdr.count == 40 && hdr.tag != 0);
	/* free_pages went from 36 to 0: the EVICT told it, no CAPACITY needed */
	CHECK(hdr.free_pages == 0 && !conn->out.bytes);
	/* evicted pages stay readable; new pages are refused, overwrites are not */
	send_msg(conn, NSWAP2L_MSG_GET, 14, 40, payload, 40 * 8, 0);
	CHECK(take(conn, NULL).status == 0);
	{
		static uint8_t put[PUT_ITEM_SIZE];

		proto_put_key(put, 0, 3000);
		send_msg(conn, NSWAP2L_MSG_PUT, 15, 1, put, sizeof(put), 0);
		CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOSPC);
		proto_put_key(put, 0, proto_key(payload, 0));
		send_msg(conn, NSWAP2L_MSG_PUT, 16, 1, put, sizeof(put), 0);
		CHECK(take(conn, NULL).status == NSWAP2L_OK);
	}
	/* the client frees the asked keys and answers */
	send_msg(conn, NSWAP2L_MSG_FREE, 17, 40, payload, 40 * 8, 0);
	CHECK(take(conn, NULL).status == 0);
	CHECK(server_held_pages(&srv) == 24 && conn->ns->stats.evict_returned == 40);
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 40, NULL, 0, 0);
	CHECK(srv.evict_pending == 0 && !conn->ns->evict_conn && conn->state == CONN_READY);
	/* memory that cannot be read: the limit is what is held, nothing asked back */
	{
		struct mem_sample unknown = { .mem_available = MEM_UNKNOWN,
					      .cgroup_headroom = MEM_UNKNOWN,
					      .available = MEM_UNKNOWN,
					      .unknown_why = "cannot read MemAvailable" };
		static uint8_t put[PUT_ITEM_SIZE];

		server_tick(&srv, &unknown);
		CHECK(srv.memory_unknown && srv.limit_pages == 24 && server_free_pages(&srv) == 0);
		CHECK(srv.evict_pending == 0 && !conn->ns->evict_conn);
		proto_put_key(put, 0, 3001);
		send_msg(conn, NSWAP2L_MSG_PUT, 18, 1, put, sizeof(put), 0);
		CHECK(take(conn, NULL).status == NSWAP2L_ERR_NOSPC);
		server_tick(&srv, &plenty);
		CHECK(!srv.memory_unknown && server_free_pages(&srv) > 0);
	}
	/* a second answer to the same EVICT is a protocol error */
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 40, NULL, 0, 0);
	CHECK(conn->state == CONN_CLOSING);
	conn_close(conn);
	peer.on = false;

	test_session_macs(&srv, &cfg.keys.shared_key);
	test_seals(&srv, &cfg.keys.shared_key);
	test_put_frees(&srv, &cfg.keys.shared_key);
	test_copy_without_peers(&srv, &cfg.keys.shared_key);
	test_release(&srv, &cfg.keys.shared_key);

	/* the namespace outlives the connection for the grace period only */
	srv.now_ms += 1000;
	server_tick(&srv, &plenty);
	CHECK(srv.namespaces && server_held_pages(&srv) == 24);
	srv.now_ms += 1500;
	server_tick(&srv, &plenty);
	CHECK(!srv.namespaces && server_held_pages(&srv) == 0);
	server_destroy(&srv);
}

/*
 * A peer server's session, its handshake from client_handshake.c (with the
 * server id in the HELLO reply), up to READY; NULL when refused.
 */
static struct conn *peer_conn(struct server *srv, const struct auth_key *key)
{
	struct nswap2l_hello h = unit_hello(NSWAP2L_CAP_PEER | NSWAP2L_CAP_MOVED, 0x77);
	static uint8_t msg[PROTO_MAX_MESSAGE];
	struct conn *conn = conn_open(srv, "test:peer", 7);
	uint8_t auth[CLIENT_AUTH_SIZE];
	struct client_handshake ch;
	struct proto_header hdr;

	strcpy(h.client_name, NSWAP2L_PEER_CLIENT_NAME);
	peer.on = false;
	client_handshake_hello(&ch, &h);
	feed(conn, ch.hello_msg, sizeof(ch.hello_msg));
	hdr = take_message(conn, msg);
	CHECK(hdr.status == NSWAP2L_OK && hdr.length == PROTO_HELLO_REPLY_MOVED_SIZE);
	CHECK(!client_handshake_reply(&ch, key, msg, msg + PROTO_HEADER_SIZE, hdr.length, auth));
	CHECK(ch.have_server_id && !memcmp(ch.server_id, srv->cfg.server_id, sizeof(ch.server_id)));
	CHECK(ch.server_caps & NSWAP2L_CAP_PEER);
	feed(conn, auth, sizeof(auth));
	hdr = take_message(conn, msg);
	if (hdr.status != NSWAP2L_OK) {
		CHECK(conn->state == CONN_CLOSING);
		conn_close(conn);
		return NULL;
	}
	CHECK(client_handshake_done(&ch, key, msg, msg + PROTO_HEADER_SIZE, hdr.length,
				    &peer.keys));
	/* the server's room, for anyone; and no namespace */
	CHECK(hdr.free_pages == server_free_pages(srv) && !conn->ns && conn->state == CONN_READY);
	peer.on = true;
	peer.sealed_get = false;
	peer.tx_seq = peer.rx_seq = 0;
	return conn;
}

/* What the last peer_request() got back. */
static uint8_t reply[NSWAP2L_PROTO_MAX_PAYLOAD];

/* A PEER_PUT (or PEER_FREE) of keys first.. into (name, id 0..0 id_byte); returns the reply. */
static struct proto_header peer_request(struct conn *conn, uint16_t type, const char *name,
					uint8_t id_byte, uint64_t first, uint32_t count)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	struct nswap2l_peer_namespace where = { .client_id = { [15] = id_byte } };
	uint64_t keys[NSWAP2L_PROTO_MAX_PAGES];
	uint32_t i, length = PROTO_PEER_NS_SIZE + count * PROTO_KEY_SIZE;

	strcpy(where.client_name, name);
	memcpy(payload, &where, sizeof(where));
	for (i = 0; i < count; i++)
		keys[i] = first + i;
	put_keys(payload + PROTO_PEER_NS_SIZE, keys, count);
	if (type == NSWAP2L_MSG_PEER_PUT) {
		for (i = 0; i < count; i++) {
			memset(payload + length + i * PROTO_SEAL_SIZE, (int)(first + i) ^ 0x5e,
			       PROTO_SEAL_SIZE);
			memset(payload + length + count * PROTO_SEAL_SIZE + i * PROTO_PAGE_SIZE,
			       (int)(first + i), PROTO_PAGE_SIZE);
		}
		length += count * (PROTO_SEAL_SIZE + PROTO_PAGE_SIZE);
	}
	send_msg(conn, type, 5, count, payload, length, 0);
	return take(conn, reply);
}

/*
 * The serving side of migration: the peer key, PEER_PUT into a namespace
 * made without a connection (all or nothing, NO_CLIENT for a name without
 * a key), PEER_FREE, and sessions that never mix a peer's messages with a
 * client's.
 */
static void test_peer(void)
{
	struct auth_client *alice = calloc(1, sizeof(*alice));
	struct server_config cfg = {
		.max_pages = 100, .grace_ms = 2000, .make_nonce = zero_nonce,
		.max_connections = 8, .max_unauth_per_address = 8, .max_conns_per_client = 4,
		.max_namespaces_per_client = 100, .message_timeout_ms = 30000,
		.buffer_budget = 64u << 20, .have_peer_key = true,
		.peer_key = { .len = 16 }, .server_id = { 0x5e, 1, 2, 3 },
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	struct auth_key wrong = { .len = 16 };
	uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE] = { [15] = 0x42 }, payload[64] = { 0 };
	struct nswap2l_hello h;
	struct proto_header hdr;
	struct namespace *ns;
	struct server srv;
	struct conn *conn;

	CHECK(alice != NULL);
	strcpy(alice->name, "alice");
	alice->key.len = 16;
	cfg.keys.clients = alice;
	cfg.keys.count = 1;
	memset(cfg.peer_key.bytes, 5, 16);
	memset(wrong.bytes, 6, 16);
	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);

	/* a wrong peer key, or the client key, is refused; any key without --peer-key */
	CHECK(!peer_conn(&srv, &wrong) && srv.auth_failures == 1);
	CHECK(!peer_conn(&srv, &alice->key) && srv.auth_failures == 2);
	srv.cfg.have_peer_key = false;
	CHECK(!peer_conn(&srv, &cfg.peer_key) && srv.auth_failures == 3);
	srv.cfg.have_peer_key = true;

	conn = peer_conn(&srv, &cfg.peer_key);
	CHECK(conn != NULL);
	if (!conn)
		return;
	CHECK(peer_request(conn, NSWAP2L_MSG_PEER_PUT, "alice", 0x42, 10, 3).status == NSWAP2L_OK);
	ns = server_find_namespace(&srv, alice->name, id);
	CHECK(ns && ns->pages.used == 3 && !ns->connections && srv.pages_migrated_in == 3);
	/* keys held there already (a mirror's other copy) are not overwritten, but named back */
	hdr = peer_request(conn, NSWAP2L_MSG_PEER_PUT, "alice", 0x42, 11, 4);
	CHECK(hdr.status == NSWAP2L_OK && hdr.count == 2 && hdr.length == 16);
	CHECK(proto_key(reply, 0) == 11 && proto_key(reply, 1) == 12);
	CHECK(server_held_pages(&srv) == 5 && srv.pages_migrated_in == 5);
	CHECK(peer_request(conn, NSWAP2L_MSG_PEER_FREE, "alice", 0x42, 11, 5).status == NSWAP2L_OK);
	CHECK(ns->pages.used == 1 && ns->account->pages == 1 && srv.keys_freed == 4);
	/* past the server's room: none of them */
	CHECK(peer_request(conn, NSWAP2L_MSG_PEER_PUT, "alice", 0x42, 100, 64).status == NSWAP2L_OK);
	hdr = peer_request(conn, NSWAP2L_MSG_PEER_PUT, "alice", 0x43, 200, 64);
	CHECK(hdr.status == NSWAP2L_ERR_NOSPC && hdr.count == 0 && hdr.length == 0);
	CHECK(server_held_pages(&srv) == 65);
	/* a name without a key here; a namespace nobody has */
	CHECK(peer_request(conn, NSWAP2L_MSG_PEER_PUT, "bob", 0x42, 1, 1).status ==
	      NSWAP2L_ERR_NO_CLIENT);
	CHECK(peer_request(conn, NSWAP2L_MSG_PEER_FREE, "bob", 0x42, 1, 1).status == NSWAP2L_OK);
	/* a client's request in a peer session closes it */
	send_msg(conn, NSWAP2L_MSG_FREE, 6, 1, payload, 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_ERR_INVALID && conn->state == CONN_CLOSING);
	conn_close(conn);

	/* a client's HELLO with NSWAP2L_CAP_PEER, or the peer name without it, closes */
	h = unit_hello(NSWAP2L_CAP_PEER, 1);
	CHECK(!proto_hello_name_valid(&h));
	strcpy(h.client_name, NSWAP2L_PEER_CLIENT_NAME);
	CHECK(proto_hello_name_valid(&h));
	h.capabilities = NSWAP2L_CAP_MOVED;
	CHECK(!proto_hello_name_valid(&h));

	/* peer namespaces live out the grace period, then go */
	srv.now_ms += 2500;
	server_tick(&srv, &plenty);
	CHECK(!srv.namespaces && server_held_pages(&srv) == 0);
	peer.on = false;
	server_destroy(&srv);
}

static void client_name(char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE], unsigned int i)
{
	memset(name, 0, NSWAP2L_PROTO_CLIENT_NAME_SIZE);
	snprintf(name, NSWAP2L_PROTO_CLIENT_NAME_SIZE, "client%u", i);
}

/*
 * Namespaces and clients are found through hash tables, however many
 * there are; a client is held to its limits of connections and of
 * namespaces, other clients are not; and what each client is told of
 * free_pages does not move with what the others store.
 */
static void test_namespaces(void)
{
	struct server_config cfg = {
		.max_pages = 256, .make_nonce = zero_nonce, .max_connections = 256,
		.max_unauth_per_address = 8, .max_conns_per_client = 2,
		.max_namespaces_per_client = 100, .buffer_budget = 64u << 20,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	char name[NSWAP2L_PROTO_CLIENT_NAME_SIZE];
	uint8_t id[NSWAP2L_PROTO_CLIENT_ID_SIZE] = { 0 };
	struct namespace *ns, *first, *other;
	unsigned int c, i;
	struct server srv;
	bool found;

	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);
	for (c = 0; c < 30; c++) {
		client_name(name, c);
		for (i = 0; i < 100; i++) {
			id[0] = (uint8_t)i;
			CHECK(server_bind_namespace(&srv, name, id, &ns, &found) == BIND_OK && !found);
			server_unbind_namespace(&srv, ns);
		}
	}
	CHECK(srv.namespace_index.count == 3000 && srv.account_index.count == 30);
	client_name(name, 17);
	id[0] = 42;
	CHECK(server_bind_namespace(&srv, name, id, &first, &found) == BIND_OK && found);
	CHECK(!memcmp(first->id, id, sizeof(id)) && !strcmp(first->account->client, "client17"));
	/* the client's 101st namespace is refused, another client's is not */
	id[0] = 100;
	CHECK(server_bind_namespace(&srv, name, id, &ns, &found) == BIND_CLIENT_NAMESPACES && !ns);
	CHECK(srv.client_namespaces_refused == 1);
	client_name(name, 30);
	CHECK(server_bind_namespace(&srv, name, id, &other, &found) == BIND_OK && !found);
	/* two connections of client17, then no third */
	client_name(name, 17);
	id[0] = 42;
	CHECK(server_bind_namespace(&srv, name, id, &ns, &found) == BIND_OK && ns == first);
	CHECK(first->account->connections == 2 && first->connections == 2);
	CHECK(server_bind_namespace(&srv, name, id, &ns, &found) == BIND_CLIENT_CONNECTIONS);
	CHECK(srv.client_conns_refused == 1 && !ns);
	server_unbind_namespace(&srv, first);

	/* free_pages: own pages against the limit, in steps of 256 / 64 */
	CHECK(server_client_free_pages(&srv, first) == 256);
	other->account->pages = 200;	/* as if client30 stored 200 pages */
	srv.pool.frames_used = 200;
	CHECK(server_free_pages(&srv) == 56 && server_client_room(&srv, first) == 56);
	CHECK(server_client_free_pages(&srv, first) == 256);
	CHECK(server_client_free_pages(&srv, other) == 56);
	first->account->pages = 10;
	CHECK(server_client_free_pages(&srv, first) == 244);
	first->account->quota_pages = 13;
	CHECK(server_client_free_pages(&srv, first) == 3);
	first->account->pages = other->account->pages = 0;
	srv.pool.frames_used = 0;
	server_unbind_namespace(&srv, first);
	server_unbind_namespace(&srv, other);
	server_destroy(&srv);
}

/* What the buffers of conn hold, counted where the budget looks. */
static bool buffers_counted(const struct server *srv, const struct conn *conn)
{
	return srv->buffer_bytes == conn->buffer_bytes &&
	       conn->ns->account->buffer_bytes == conn->buffer_bytes &&
	       conn->buffer_bytes >= conn->in_cap;
}

/*
 * The buffer budget is a cap: a request whose reply does not fit, or a
 * message that needs a larger input buffer than fits, waits (nothing is
 * dropped) until room comes back; input buffers shrink after a large
 * message; every buffer byte is counted for the server and the client.
 */
static void test_buffer_budget(void)
{
	static uint8_t put[NSWAP2L_PROTO_MAX_PAGES * PUT_ITEM_SIZE];
	struct server_config cfg = {
		.max_pages = 1000, .make_nonce = zero_nonce,
		.keys = { .shared = true, .shared_key = { .len = 16 } },
		.max_connections = 4, .max_unauth_per_address = 4, .max_conns_per_client = 4,
		.max_namespaces_per_client = 4, .message_timeout_ms = 30000,
		.buffer_budget = CONN_BUDGET_MIN,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	size_t others = cfg.buffer_budget;
	struct server srv;
	struct conn *conn;
	uint32_t i;

	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);
	conn = ready_conn(&srv, &cfg.keys.shared_key, 1);
	CHECK(buffers_counted(&srv, conn));
	for (i = 0; i < NSWAP2L_PROTO_MAX_PAGES; i++)
		proto_put_key(put, i, i);

	/* a whole PUT: the buffer grows for it, and shrinks back once it is handled */
	send_msg(conn, NSWAP2L_MSG_PUT, 1, NSWAP2L_PROTO_MAX_PAGES, put, sizeof(put), 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->in_cap == CONN_INPUT_BASE);
	CHECK(buffers_counted(&srv, conn) && !conn->out.bytes);

	/* no room for a GET's reply: it waits, unanswered, and goes on when room comes back */
	srv.buffer_bytes += others;
	send_msg(conn, NSWAP2L_MSG_GET, 2, NSWAP2L_PROTO_MAX_PAGES, put,
		 NSWAP2L_PROTO_MAX_PAGES * PROTO_KEY_SIZE, 0);
	CHECK(conn->waiting_for_room && !conn->out.bytes && !conn_wants_input(conn) &&
	      srv.room_waiters == 1);
	srv.buffer_bytes -= others;
	conn_process(conn);
	CHECK(!conn->waiting_for_room && srv.room_waiters == 0);
	CHECK(conn->buffer_bytes >= conn->in_cap + conn->out.bytes && buffers_counted(&srv, conn));
	CHECK(take(conn, NULL).status == NSWAP2L_OK && buffers_counted(&srv, conn));
	CHECK(conn->buffer_bytes == conn->in_cap);

	/* no room for a PUT's input: its header is read, the rest waits */
	srv.buffer_bytes += others;
	{
		static uint8_t msg[PROTO_MAX_MESSAGE];
		struct proto_header hdr = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_PUT,
					    .tag = 3, .count = NSWAP2L_PROTO_MAX_PAGES,
					    .length = sizeof(put) };
		size_t room, len = PROTO_HEADER_SIZE + sizeof(put);

		proto_encode_header(msg, &hdr);
		memcpy(msg + PROTO_HEADER_SIZE, put, sizeof(put));
		auth_message_mac(peer.keys.c2s, peer.tx_seq++, msg, len, msg + len);
		feed(conn, msg, PROTO_HEADER_SIZE);
		CHECK(!conn_read_space(conn, &room) && !room && conn->waiting_for_room);
		CHECK(conn->in_cap < conn->in_need);
		srv.buffer_bytes -= others;
		conn_process(conn);
		feed(conn, msg + PROTO_HEADER_SIZE, len + PROTO_MSG_MAC_SIZE - PROTO_HEADER_SIZE);
	}
	CHECK(take(conn, NULL).status == NSWAP2L_OK && conn->in_cap == CONN_INPUT_BASE);
	CHECK(buffers_counted(&srv, conn));
	conn_close(conn);
	peer.on = false;
	CHECK(srv.buffer_bytes == 0 && srv.room_waiters == 0);
	server_destroy(&srv);
}

static void test_ratelimit(void)
{
	struct ratelimit rl = { .burst = 3, .interval_ms = 100 };
	unsigned int i;

	for (i = 0; i < 3; i++)
		CHECK(ratelimit_take(&rl, 1000));
	CHECK(!ratelimit_take(&rl, 1000));
	CHECK(!ratelimit_take(&rl, 1099));
	CHECK(ratelimit_take(&rl, 1100));
	CHECK(!ratelimit_take(&rl, 1150));
	/* time left over from an interval counts towards the next token */
	CHECK(ratelimit_take(&rl, 1250));
	CHECK(!ratelimit_take(&rl, 1299));
	CHECK(ratelimit_take(&rl, 1300));
	/* a long quiet time gives back the burst, no more */
	for (i = 0; i < 3; i++)
		CHECK(ratelimit_take(&rl, 100000));
	CHECK(!ratelimit_take(&rl, 100000));
}

static uint64_t fake_now_ms;

static uint64_t fake_clock(void)
{
	return fake_now_ms;
}

/* Peer warnings go through the bucket and the dropped ones are counted. */
static void test_log_peer(void)
{
	int saved_stderr = dup(STDERR_FILENO);
	FILE *out = tmpfile();
	unsigned int i, lines = 0, suppressed_lines = 0, info_lines = 0;
	char line[256];

	if (!out || saved_stderr < 0) {
		CHECK(!"a temporary file for stderr");
		return;
	}
	log_setup(LOG_LEVEL_WARN, false);
	log_set_clock(fake_clock);
	fflush(stderr);
	dup2(fileno(out), STDERR_FILENO);
	fake_now_ms = 5000;
	for (i = 0; i < 3 * LOG_PEER_BURST; i++)
		log_warn_peer("peer test: line %u", i);
	log_peer_flush();			/* no token yet */
	fake_now_ms += LOG_PEER_INTERVAL_MS;
	log_peer_flush();			/* says 20 suppressed */
	log_warn_peer("peer test: dropped");	/* the flush took the token */
	fake_now_ms += LOG_PEER_INTERVAL_MS;
	log_warn_peer("peer test: let through");	/* after "1 ... suppressed" */
	/* info lines have a bucket of their own: warnings did not spend it, nor it them */
	for (i = 0; i < LOG_PEER_BURST + 5; i++)
		log_info_peer("peer test: info %u", i);
	log_setup(LOG_LEVEL_INFO, false);
	for (i = 0; i < LOG_PEER_BURST + 5; i++)
		log_info_peer("peer test: info %u", i);
	fake_now_ms += LOG_PEER_INTERVAL_MS;
	log_peer_flush();				/* says 5 info lines suppressed */
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	log_set_clock(monotonic_ms);
	log_setup(LOG_LEVEL_ERROR, false);

	rewind(out);
	while (fgets(line, sizeof(line), out)) {
		lines++;
		if (strstr(line, "warn: 20 log lines about peers suppressed") ||
		    strstr(line, "info: 5 log lines about peers suppressed"))
			suppressed_lines++;
		if (strstr(line, "dropped"))
			CHECK(!"a line over the limit went out");
		if (strstr(line, "info: peer test"))
			info_lines++;
	}
	fclose(out);
	/* the burst, 20 suppressed, 1 suppressed, the last line; the info burst, 5 suppressed */
	CHECK(lines == LOG_PEER_BURST + 3 + LOG_PEER_BURST + 1);
	CHECK(suppressed_lines == 2 && info_lines == LOG_PEER_BURST);
}

/* Sends a FREE of keys[0..n) and takes its reply. */
static void free_pages_of(struct conn *conn, const uint64_t *keys, uint32_t n)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_KEYS * 8];

	put_keys(payload, keys, n);
	send_msg(conn, NSWAP2L_MSG_FREE, 30, n, payload, n * 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK);
}

/* Sends a PUT of keys[0..n) (pages of byte fill) and returns the reply's status. */
static uint32_t put_pages(struct conn *conn, const uint64_t *keys, uint32_t n, int fill)
{
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];

	memset(payload, fill, n * PUT_ITEM_SIZE);
	put_keys(payload, keys, n);
	send_msg(conn, NSWAP2L_MSG_PUT, 31, n, payload, n * PUT_ITEM_SIZE, 0);
	return take(conn, NULL).status;
}

/*
 * Leaving: the limit becomes 0, so that every page is asked back; new keys
 * get NOSPC, overwrites and reads go on; the next round comes at the next
 * tick while the client moves pages, after the back-off when it moved
 * none; the leave is over when nothing is held, when what is held has no
 * connection to ask, or at the deadline.
 */
static void test_leave(void)
{
	struct server_config cfg = {
		.max_pages = 4096, .grace_ms = 60000, .make_nonce = zero_nonce,
		.keys = { .shared = true, .shared_key = { .len = 16 } },
		.max_connections = 8, .max_unauth_per_address = 8, .max_conns_per_client = 8,
		.max_namespaces_per_client = 8, .message_timeout_ms = 30000,
		.buffer_budget = 64u << 20, .leave_timeout_ms = LEAVE_TIMEOUT_AUTO,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	struct server_config fixed = cfg;
	uint64_t keys[64], asked[64], now;
	struct proto_header hdr;
	struct server srv;
	struct conn *conn;
	uint32_t i;

	/* the default deadline: 30 s, and a second per 2000 pages started */
	CHECK(server_leave_timeout_ms(&cfg, 0) == 30000);
	CHECK(server_leave_timeout_ms(&cfg, 2000) == 31000);
	CHECK(server_leave_timeout_ms(&cfg, 2001) == 32000);
	CHECK(server_leave_timeout_ms(&cfg, 16ull << 20) == 30000 + 8389000);
	fixed.leave_timeout_ms = 5000;
	CHECK(server_leave_timeout_ms(&fixed, 1ull << 30) == 5000);

	memset(cfg.keys.shared_key.bytes, 9, 16);
	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);
	for (i = 0; i < 64; i++)
		keys[i] = 100 + i;
	/* namespace 2: 8 pages and no connection; namespace 1: 64 pages, a connection taking EVICT */
	conn = ready_conn(&srv, &cfg.keys.shared_key, 2);
	CHECK(put_pages(conn, keys, 8, 2) == NSWAP2L_OK);
	conn_close(conn);
	conn = ready_conn_caps(&srv, &cfg.keys.shared_key, 1, NSWAP2L_CAP_EVICT);
	CHECK(put_pages(conn, keys, 64, 1) == NSWAP2L_OK);
	CHECK(server_leave_check(&srv) == LEAVE_GOING && server_leave_given_back(&srv) == 0);

	server_leave(&srv);
	CHECK(srv.leave.leaving && srv.limit_pages == 0 && srv.leave.pages_at_start == 72);
	CHECK(srv.leave.deadline_ms == srv.now_ms + 31000);
	CHECK(server_client_free_pages(&srv, conn->ns) == 0 && server_free_pages(&srv) == 0);
	hdr = take(conn, payload);
	CHECK(hdr.type == NSWAP2L_MSG_EVICT && hdr.count == 64 && hdr.free_pages == 0);
	for (i = 0; i < 64; i++)
		asked[i] = proto_key(payload, i);
	CHECK(server_leave_check(&srv) == LEAVE_GOING);
	/* a new key: NOSPC; an overwrite and a read: served */
	keys[0] = 5000;
	CHECK(put_pages(conn, keys, 1, 3) == NSWAP2L_ERR_NOSPC);
	CHECK(put_pages(conn, asked, 1, 3) == NSWAP2L_OK);
	send_msg(conn, NSWAP2L_MSG_GET, 32, 1, payload, 8, 0);
	CHECK(take(conn, NULL).status == NSWAP2L_OK && server_held_pages(&srv) == 72);

	/* it moved 32 and kept the rest (NOSPC): the next round at the next tick */
	free_pages_of(conn, asked, 32);
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 64, NULL, 0,
		 NSWAP2L_ERR_NOSPC);
	CHECK(server_leave_given_back(&srv) == 32 && !srv.evict_pending);
	CHECK(conn->ns->evict_not_before_ms == srv.now_ms);
	srv.now_ms += NET_TICK_MS;
	server_tick(&srv, &plenty);
	hdr = take(conn, payload);
	CHECK(hdr.type == NSWAP2L_MSG_EVICT && hdr.count == 32);
	/* nothing moved this time: asked again after the back-off, until the deadline */
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 32, NULL, 0,
		 NSWAP2L_ERR_NOSPC);
	CHECK(conn->ns->evict_not_before_ms == srv.now_ms + EVICT_BACKOFF_MS);
	srv.now_ms += NET_TICK_MS;
	server_tick(&srv, &plenty);
	CHECK(!conn->out.bytes && server_leave_check(&srv) == LEAVE_GOING);
	now = srv.now_ms;
	srv.now_ms = srv.leave.deadline_ms;
	CHECK(server_leave_check(&srv) == LEAVE_DEADLINE);
	srv.now_ms = now + EVICT_BACKOFF_MS;
	server_tick(&srv, &plenty);
	hdr = take(conn, payload);
	CHECK(hdr.type == NSWAP2L_MSG_EVICT && hdr.count == 32);
	for (i = 0; i < 32; i++)
		asked[i] = proto_key(payload, i);
	free_pages_of(conn, asked, 32);
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 32, NULL, 0, NSWAP2L_OK);

	/* what is left has no connection to ask: over, with its pages counted */
	CHECK(server_held_pages(&srv) == 8 && server_leave_given_back(&srv) == 64);
	CHECK(server_leave_check(&srv) == LEAVE_STUCK);
	/* a connection still authenticating may be that client coming back */
	conn_close(conn);
	conn = conn_open(&srv, "test:back", 9);
	CHECK(server_leave_check(&srv) == LEAVE_GOING);
	conn_close(conn);
	conn = ready_conn(&srv, &cfg.keys.shared_key, 2);
	free_pages_of(conn, keys + 1, 7);
	CHECK(server_leave_check(&srv) == LEAVE_STUCK);
	keys[0] = 100;
	free_pages_of(conn, keys, 1);
	CHECK(server_leave_check(&srv) == LEAVE_EMPTY && server_leave_given_back(&srv) == 72);
	conn_close(conn);
	peer.on = false;
	server_destroy(&srv);
}

/* --max's and --max-file's SIZE: parse_size()'s syntax, at least a page, or "none". */
static void test_parse_max(void)
{
	static const struct {
		const char *text;
		int ok;
		uint64_t pages;
	} cases[] = {
		{ "none", 1, NO_MAX_PAGES }, { "4096", 1, 1 }, { "4K", 1, 1 }, { "8191", 1, 1 },
		{ "1M", 1, 256 }, { "1m", 1, 256 }, { "1MiB", 1, 256 }, { "1MB", 1, 256 },
		{ "2G", 1, 524288 }, { "1T", 1, 1ull << 28 }, { "4095", 0, 0 }, { "0", 0, 0 },
		{ "1K", 0, 0 }, { "12X", 0, 0 }, { "", 0, 0 }, { "-1", 0, 0 }, { " 1M", 0, 0 },
		{ "1M ", 0, 0 }, { "None", 0, 0 }, { "1M2", 0, 0 }, { "99999999999999999999", 0, 0 },
		{ "16777216T", 0, 0 },
	};
	uint64_t pages;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pages = 7;
		err[0] = '\0';
		if (cases[i].ok) {
			CHECK(server_parse_max(cases[i].text, &pages, err, sizeof(err)) == 0 &&
			      pages == cases[i].pages);
		} else {
			CHECK(server_parse_max(cases[i].text, &pages, err, sizeof(err)) == -1 &&
			      pages == 7 && err[0]);
		}
	}
	CHECK(server_parse_max("100", &pages, err, sizeof(err)) == -1 &&
	      strstr(err, "less than one page"));
	CHECK(server_parse_max("x", &pages, err, sizeof(err)) == -1 && strstr(err, "not a size"));
}

/* The file read (dir/max): one SIZE with blanks around it; what else, said with the path. */
static void test_read_max_file(const char *dir, const char *path)
{
	static const struct {
		const char *text;
		int ok;
		uint64_t pages;
		const char *why;
	} cases[] = {
		{ "1M\n", 1, 256, NULL }, { "1M", 1, 256, NULL }, { "  2M \t\n\n", 1, 512, NULL },
		{ "none\n", 1, NO_MAX_PAGES, NULL }, { "\n16G\r\n", 1, 4194304, NULL },
		{ "", 0, 0, "empty" }, { " \n", 0, 0, "empty" }, { "junk\n", 0, 0, "not a size" },
		{ "1M 2M\n", 0, 0, "not a size" }, { "100\n", 0, 0, "less than one page" },
		{ "1M\n# a comment\n", 0, 0, "not a size" }, { "1\001M", 0, 0, "not text" },
	};
	char long_text[200], err[512];
	uint64_t pages;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(dir, "max", cases[i].text, strlen(cases[i].text));
		pages = 7;
		err[0] = '\0';
		if (cases[i].ok) {
			CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == 0 &&
			      pages == cases[i].pages);
		} else {
			CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == -1 &&
			      pages == 7 && strstr(err, path) && strstr(err, cases[i].why));
		}
	}
	/* a NUL is not text either; a long file is not one SIZE, even starting with one */
	write_file(dir, "max", "1M\0", 3);
	CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == -1 && strstr(err, "not text"));
	memset(long_text, ' ', sizeof(long_text));
	memcpy(long_text, "1M", 2);
	write_file(dir, "max", long_text, sizeof(long_text));
	CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == -1 &&
	      strstr(err, "more than"));
	write_file(dir, "max", long_text, 64);
	CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == 0 && pages == 256);
	unlink(path);
	CHECK(server_read_max_file(path, &pages, err, sizeof(err)) == -1 &&
	      strstr(err, "No such file"));
	CHECK(server_read_max_file("/", &pages, err, sizeof(err)) == -1 &&
	      strstr(err, "Is a directory"));
}

/* server_reload_max_file(), its log taken from stderr: whether a line has what. */
static bool reload_max_file_logged(struct server *srv, const char *what)
{
	int saved_stderr = dup(STDERR_FILENO);
	FILE *out = tmpfile();
	bool found = false;
	char line[1024];

	if (!out || saved_stderr < 0) {
		CHECK(!"a temporary file for stderr");
		return false;
	}
	fflush(stderr);
	dup2(fileno(out), STDERR_FILENO);
	server_reload_max_file(srv);
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	rewind(out);
	while (fgets(line, sizeof(line), out))
		found |= strstr(line, "error: reload: --max-file ") && strstr(line, what);
	fclose(out);
	return found;
}

/*
 * --max-file read again (SIGHUP): the smaller of it and --max is the
 * limit at once; a lower one asks the pages over it back (EVICT), a higher
 * one offers the room again; a bad file keeps the SIZE read before.
 */
static void test_max_file(void)
{
	char dir[] = "/tmp/nswapd-unit-max.XXXXXX", path[sizeof(dir) + 4];
	struct server_config cfg = {
		.max_pages = 100, .grace_ms = 60000, .make_nonce = zero_nonce,
		.keys = { .shared = true, .shared_key = { .len = 16 } },
		.max_connections = 8, .max_unauth_per_address = 8, .max_conns_per_client = 8,
		.max_namespaces_per_client = 8, .message_timeout_ms = 30000,
		.buffer_budget = 64u << 20, .leave_timeout_ms = LEAVE_TIMEOUT_AUTO,
		.max_file_pages = 80,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	static uint8_t payload[NSWAP2L_PROTO_MAX_PAYLOAD];
	uint64_t keys[64], asked[64];
	struct proto_header hdr;
	struct server srv;
	struct conn *conn;
	uint32_t i;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/max", dir);
	test_read_max_file(dir, path);

	cfg.max_file = path;
	memset(cfg.keys.shared_key.bytes, 9, 16);
	server_init(&srv, &cfg, 1000);
	server_tick(&srv, &plenty);
	CHECK(srv.limit_pages == 80 && srv.limit_source == LIMIT_MAX_FILE);
	for (i = 0; i < 64; i++)
		keys[i] = 100 + i;
	conn = ready_conn_caps(&srv, &cfg.keys.shared_key, 1, NSWAP2L_CAP_EVICT);
	CHECK(put_pages(conn, keys, 64, 1) == NSWAP2L_OK);

	/* lowered to 16 pages: 48 asked back at once, no new key taken */
	write_file(dir, "max", "64K\n", 4);
	server_reload_max_file(&srv);
	CHECK(srv.limit_pages == 16 && srv.limit_source == LIMIT_MAX_FILE && !srv.max_file_failed);
	CHECK(srv.cfg.max_file_pages == 16 && srv.over_limit);
	hdr = take(conn, payload);
	CHECK(hdr.type == NSWAP2L_MSG_EVICT && hdr.count == 48 && hdr.free_pages == 0);
	CHECK(srv.evict_pending == 48 && !server_pages_over(&srv));
	keys[0] = 5000;
	CHECK(put_pages(conn, keys, 1, 2) == NSWAP2L_ERR_NOSPC);
	for (i = 0; i < 48; i++)
		asked[i] = proto_key(payload, i);
	free_pages_of(conn, asked, 48);
	send_msg(conn, NSWAP2L_MSG_EVICT | NSWAP2L_MSG_REPLY, hdr.tag, 48, NULL, 0, NSWAP2L_OK);
	CHECK(server_held_pages(&srv) == 16 && !srv.evict_pending);

	/* a bad file, or none, keeps 16 pages, and the log says why; ticks do not read it */
	write_file(dir, "max", "lots\n", 5);
	CHECK(reload_max_file_logged(&srv, "not a size: 'lots'"));
	CHECK(srv.max_file_failed && srv.cfg.max_file_pages == 16 && srv.limit_pages == 16);
	unlink(path);
	CHECK(reload_max_file_logged(&srv, "No such file or directory; keeping 16 pages"));
	srv.now_ms += NET_TICK_MS;
	server_tick(&srv, &plenty);
	CHECK(srv.max_file_failed && srv.limit_pages == 16 && srv.limit_source == LIMIT_MAX_FILE);
	CHECK(server_client_free_pages(&srv, conn->ns) == 0);

	/* raised over --max: --max holds, the room is offered (CAPACITY and replies) */
	write_file(dir, "max", "1M\n", 3);
	capacity_messages = 0;
	server_reload_max_file(&srv);
	CHECK(!srv.max_file_failed && srv.cfg.max_file_pages == 256);
	CHECK(srv.limit_pages == 100 && srv.limit_source == LIMIT_MAX && !srv.over_limit);
	CHECK(server_client_free_pages(&srv, conn->ns) > 0);
	CHECK(capacity_messages == 0);
	CHECK(!take(conn, NULL).magic && capacity_messages == 1);
	keys[0] = 5000;
	CHECK(put_pages(conn, keys, 1, 2) == NSWAP2L_OK);
	put_keys(payload, keys, 1);
	send_msg(conn, NSWAP2L_MSG_GET, 32, 1, payload, 8, 0);
	hdr = take(conn, NULL);
	CHECK(hdr.status == NSWAP2L_OK && hdr.free_pages > 0 &&
	      hdr.free_pages == server_client_free_pages(&srv, conn->ns));
	/* "none": --max alone; memory below both: memory */
	write_file(dir, "max", "none\n", 5);
	server_reload_max_file(&srv);
	CHECK(srv.cfg.max_file_pages == NO_MAX_PAGES && srv.limit_pages == 100 &&
	      srv.limit_source == LIMIT_MAX);
	plenty.available = 40 * PROTO_PAGE_SIZE;
	server_tick(&srv, &plenty);
	CHECK(srv.limit_pages == 17 + 40 && srv.limit_source == LIMIT_MEMORY);
	server_leave(&srv);
	CHECK(srv.limit_pages == 0 && srv.limit_source == LIMIT_LEAVING);
	conn_close(conn);
	peer.on = false;
	server_destroy(&srv);
	unlink(path);
	rmdir(dir);
}

/* Caps, timeouts and the buffer budget; states are set by hand where only they matter. */
static void test_limits(void)
{
	struct server_config cfg = {
		.max_pages = 100, .make_nonce = zero_nonce, .keys = { .shared = true, .shared_key = { .len = 16 } },
		.max_connections = 4, .max_unauth_per_address = 2, .max_conns_per_client = 4,
		.max_namespaces_per_client = 4, .idle_timeout_ms = 5000,
		.message_timeout_ms = 3000, .buffer_budget = CONN_BUDGET_MIN,
	};
	struct mem_sample plenty = { .mem_available = 1ull << 40, .cgroup_headroom = MEM_UNKNOWN,
				     .available = 1ull << 40 };
	struct conn *a, *b, *c, *d, *victim;
	uint8_t header[PROTO_HEADER_SIZE];
	struct proto_header put = { .magic = NSWAP2L_PROTO_MAGIC, .type = NSWAP2L_MSG_PUT,
				    .count = 1, .length = PUT_ITEM_SIZE };
	struct server srv;

	server_init(&srv, &cfg, 1000);
	a = conn_open(&srv, "a", 1);
	b = conn_open(&srv, "b", 1);
	CHECK(srv.buffer_bytes == 2 * CONN_INPUT_HANDSHAKE);
	/* per address: its oldest unauthenticated one goes */
	CHECK(server_admit(&srv, 1, &victim) && victim == a && srv.conns_replaced == 1);
	CHECK(server_admit(&srv, 2, &victim) && !victim);
	c = conn_open(&srv, "c", 2);
	d = conn_open(&srv, "d", 3);
	/* total: the oldest unauthenticated of any address, then refusal */
	b->state = CONN_READY;
	CHECK(server_admit(&srv, 4, &victim) && victim == a);
	a->state = c->state = d->state = CONN_READY;
	CHECK(!server_admit(&srv, 4, &victim) && srv.conns_refused == 1);
	conn_close(d);

	/* before AUTH, a header announcing a page closes at once */
	d = conn_open(&srv, "d", 3);
	proto_encode_header(header, &put);
	feed(d, header, sizeof(header));
	CHECK(d->state == CONN_CLOSING && take_any(d, NULL).status == NSWAP2L_ERR_INVALID);
	conn_close(d);

	/* half a header for 3 s closes; silence after AUTH for 5 s closes */
	d = conn_open(&srv, "d", 3);
	feed(d, header, 10);
	srv.now_ms += 2000;
	server_tick(&srv, &plenty);
	CHECK(d->state == CONN_WAIT_HELLO && c->state == CONN_READY);
	srv.now_ms += 1000;
	server_tick(&srv, &plenty);
	CHECK(d->state == CONN_CLOSING && c->state == CONN_READY);
	srv.now_ms += 2000;
	server_tick(&srv, &plenty);
	CHECK(c->state == CONN_CLOSING);

	/* a backlog over the connection's share of the budget holds it back */
	CHECK(outq_append(&b->out, header, sizeof(header)) == 0);
	b->state = CONN_READY;
	CHECK(conn_wants_input(b));
	while (b->out.bytes < cfg.buffer_budget / srv.conn_count)
		CHECK(outq_append(&b->out, header, sizeof(header)) == 0);
	CHECK(!conn_wants_input(b));
	conn_close(a);
	conn_close(b);
	conn_close(c);
	conn_close(d);
	CHECK(srv.buffer_bytes == 0);
	server_destroy(&srv);
}

int main(void)
{
	bool sha_ni;
	int portable;

	log_setup(LOG_LEVEL_ERROR, false);
	/* the vectors with the CPU's SHA instructions (if it has them), then portably */
	sha_ni = sha256_force_portable(false);
	for (portable = 0; portable < 2; portable++) {
		sha256_force_portable(portable);
		test_sha256();
		test_hmac();
	}
	test_sha256_paths();
	test_poly1305();
	test_siphash();
	test_auth();
	test_message_mac();
	test_client_names();
	test_parser();
	test_parser_migration();
	test_parser_copy();
	test_parser_release();
	test_outq();
	test_outq_drain();
	test_outq_memory();
	test_store();
	test_store_put_new();
	test_store_pick_runs();
	test_session();
	test_peer();
	test_limits();
	test_leave();
	test_parse_max();
	test_max_file();
	test_namespaces();
	test_buffer_budget();
	test_ratelimit();
	test_log_peer();
	printf("unit-test: SHA-256 checked %s\n",
	       sha_ni ? "with SHA-NI and portably" : "portably only (no SHA-NI)");
	printf("unit-test: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
