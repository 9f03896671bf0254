// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "hashtab.h"

#define HASH_TABLE_MIN_BUCKETS 64

void hash_table_init(struct hash_table *t)
{
	t->buckets = NULL;
	t->mask = 0;
	t->count = 0;
}

void hash_table_destroy(struct hash_table *t)
{
	free(t->buckets);
	hash_table_init(t);
}

/* Moves every node to a table of twice the buckets; keeps the old one if out of memory. */
static void grow(struct hash_table *t)
{
	size_t buckets = t->buckets ? 2 * (t->mask + 1) : HASH_TABLE_MIN_BUCKETS, i;
	struct hash_node **grown = calloc(buckets, sizeof(*grown));

	if (!grown)
		return;
	for (i = 0; t->buckets && i <= t->mask; i++) {
		while (t->buckets[i]) {
			struct hash_node *node = t->buckets[i];

			t->buckets[i] = node->next;
			node->next = grown[node->hash & (buckets - 1)];
			grown[node->hash & (buckets - 1)] = node;
		}
	}
	free(t->buckets);
	t->buckets = grown;
	t->mask = buckets - 1;
}

int hash_table_add(struct hash_table *t, struct hash_node *node, uint64_t hash)
{
	/* a table that cannot grow still works, with longer chains */
	if (!t->buckets || t->count > t->mask)
		grow(t);
	if (!t->buckets)
		return -1;
	node->hash = hash;
	node->next = t->buckets[hash & t->mask];
	t->buckets[hash & t->mask] = node;
	t->count++;
	return 0;
}

void hash_table_del(struct hash_table *t, struct hash_node *node)
{
	struct hash_node **link = &t->buckets[node->hash & t->mask];

	while (*link != node)
		link = &(*link)->next;
	*link = node->next;
	t->count--;
}

static struct hash_node *match_from(struct hash_node *node, uint64_t hash)
{
	while (node && node->hash != hash)
		node = node->next;
	return node;
}

struct hash_node *hash_table_first(const struct hash_table *t, uint64_t hash)
{
	return t->buckets ? match_from(t->buckets[hash & t->mask], hash) : NULL;
}

struct hash_node *hash_table_next(const struct hash_node *node)
{
	return match_from(node->next, node->hash);
}
