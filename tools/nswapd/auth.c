// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "sha256.h"

int auth_load_key(const char *path, struct auth_key *key, char *err, size_t err_size)
{
	/* one byte more than allowed, to see a file that is too long */
	uint8_t buf[NSWAP2L_PROTO_MAX_KEY_SIZE + 1];
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "cannot open key file %s: %s", path, strerror(errno));
		return -1;
	}
	do {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && len < sizeof(buf)) || (n < 0 && errno == EINTR));
	if (n < 0) {
		snprintf(err, err_size, "cannot read key file %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (len > NSWAP2L_PROTO_MAX_KEY_SIZE) {
		snprintf(err, err_size, "key file %s: longer than %d bytes", path,
			 NSWAP2L_PROTO_MAX_KEY_SIZE);
		return -1;
	}
	if (len < NSWAP2L_PROTO_MIN_KEY_SIZE) {
		snprintf(err, err_size, "key file %s: %zu bytes, a key needs at least %d", path,
			 len, NSWAP2L_PROTO_MIN_KEY_SIZE);
		return -1;
	}
	memcpy(key->bytes, buf, len);
	key->len = len;
	memset(buf, 0, sizeof(buf));
	return 0;
}

static void handshake_mac(const struct auth_key *key, const char *label,
			  const uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
			  const uint8_t first_nonce[NSWAP2L_PROTO_NONCE_SIZE],
			  const uint8_t second_nonce[NSWAP2L_PROTO_NONCE_SIZE],
			  uint8_t mac[NSWAP2L_PROTO_MAC_SIZE])
{
	struct hmac_sha256 hmac;

	hmac_sha256_init(&hmac, key->bytes, key->len);
	hmac_sha256_update(&hmac, label, strlen(label));
	hmac_sha256_update(&hmac, client_id, NSWAP2L_PROTO_CLIENT_ID_SIZE);
	hmac_sha256_update(&hmac, first_nonce, NSWAP2L_PROTO_NONCE_SIZE);
	hmac_sha256_update(&hmac, second_nonce, NSWAP2L_PROTO_NONCE_SIZE);
	hmac_sha256_final(&hmac, mac);
}

void auth_client_mac(const struct auth_key *key,
		     const uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
		     const uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     const uint8_t server_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE])
{
	handshake_mac(key, NSWAP2L_AUTH_CLIENT_LABEL, client_id, client_nonce, server_nonce, mac);
}

void auth_server_mac(const struct auth_key *key,
		     const uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
		     const uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     const uint8_t server_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE])
{
	handshake_mac(key, NSWAP2L_AUTH_SERVER_LABEL, client_id, server_nonce, client_nonce, mac);
}

bool auth_mac_equal(const uint8_t *a, const uint8_t *b)
{
	volatile uint8_t diff = 0;
	size_t i;

	for (i = 0; i < NSWAP2L_PROTO_MAC_SIZE; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}
