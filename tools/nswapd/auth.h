/* SPDX-License-Identifier: GPL-2.0 */
/* Shared-key proofs of the nswap2l handshake (see nswap2l_proto.h). */
#ifndef NSWAPD_AUTH_H
#define NSWAPD_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct auth_key {
	size_t len;
	uint8_t bytes[NSWAP2L_PROTO_MAX_KEY_SIZE];
};

/*
 * Reads the whole of path as the key.  Returns 0, or -1 with a message
 * in err when the file cannot be read or its size is outside the limits.
 */
int auth_load_key(const char *path, struct auth_key *key, char *err, size_t err_size);

void auth_client_mac(const struct auth_key *key,
		     const uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
		     const uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     const uint8_t server_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE]);
void auth_server_mac(const struct auth_key *key,
		     const uint8_t client_id[NSWAP2L_PROTO_CLIENT_ID_SIZE],
		     const uint8_t client_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     const uint8_t server_nonce[NSWAP2L_PROTO_NONCE_SIZE],
		     uint8_t mac[NSWAP2L_PROTO_MAC_SIZE]);

/* Compares two MACs in time independent of where they differ. */
bool auth_mac_equal(const uint8_t *a, const uint8_t *b);

#endif
