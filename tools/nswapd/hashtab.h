/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A chained hash table of nodes embedded in their objects (container_of()
 * finds the object), by a 64-bit hash the caller computes: SipHash under
 * the server's random key, so that clients cannot pick names that make
 * one chain long.  It doubles its buckets when it holds more nodes than
 * buckets.
 */
#ifndef NSWAPD_HASHTAB_H
#define NSWAPD_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

struct hash_node {
	struct hash_node *next;		/* in its bucket */
	uint64_t hash;
};

struct hash_table {
	struct hash_node **buckets;	/* NULL until the first node */
	size_t mask;			/* buckets - 1 */
	size_t count;
};

void hash_table_init(struct hash_table *t);
/* Frees the buckets; the nodes belong to the caller. */
void hash_table_destroy(struct hash_table *t);
/* Returns 0, or -1 when out of memory (then node is not in t). */
int hash_table_add(struct hash_table *t, struct hash_node *node, uint64_t hash);
void hash_table_del(struct hash_table *t, struct hash_node *node);
/* The first node of t with this hash, and the next one after node; NULL after the last. */
struct hash_node *hash_table_first(const struct hash_table *t, uint64_t hash);
struct hash_node *hash_table_next(const struct hash_node *node);

#endif
