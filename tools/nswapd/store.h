/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page storage: a pool of 4 KiB frames carved from mlock'ed, mmap'ed slabs,
 * each frame with room for its page's seal, and per-namespace hash tables
 * from page key to frame.
 */
#ifndef NSWAPD_STORE_H
#define NSWAPD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "list.h"
#include "siphash.h"

#define SLAB_FRAMES 512			/* 2 MiB slabs */

struct slab;

struct page_pool {
	struct slab **slabs;		/* by slab id; NULL for unused ids */
	uint32_t slab_slots;		/* size of slabs[] */
	struct list_head with_free;	/* slabs that have free frames */
	uint64_t frames_used;		/* frames holding a page */
	bool lock_frames;		/* slabs are mlock'ed (on fault) */
	struct siphash_key hash_key;	/* of every page table's hash */
	size_t longest_probe;		/* slots an insertion looked at, at most */
};

#define PAGE_ASKED 1u			/* named in an EVICT */
/*
 * Stored by a PEER_PUT and not written by the client since: what a PEER_FREE
 * may take back.  A PUT of the client's own (a mirror's new copy written
 * there meanwhile) makes the page the client's, and a PEER_FREE leaves it.
 */
#define PAGE_FROM_PEER 2u

struct page_entry {
	uint64_t key;			/* PAGE_TABLE_EMPTY when the slot is free */
	uint32_t frame;
	uint32_t flags;
};

struct page_table {
	struct page_entry *slots;
	size_t mask;			/* slots - 1; the slot count is a power of 2 */
	size_t used;
	size_t evict_cursor;		/* where the next eviction pick starts */
};

enum store_status {
	STORE_OK,
	STORE_NOSPC,
	STORE_NOENT,
};

/*
 * hash_key keys the hash of the page tables: random in the server, so that
 * clients cannot choose keys that collide (fixed in tests).
 */
void page_pool_init(struct page_pool *pool, bool lock_frames,
		    const struct siphash_key *hash_key);
void page_pool_destroy(struct page_pool *pool);
/* Gives the memory of freed frames back to the system. */
void page_pool_release_free(struct page_pool *pool);

void page_table_init(struct page_table *table);
/* Frees every page of the table and the table itself. */
void page_table_destroy(struct page_table *table, struct page_pool *pool);

/*
 * Stores count pages and their seals under count keys (little-endian, as on
 * the wire), replacing the seal of a page overwritten: every page or, when
 * more than max_new of the keys are new or memory runs out, none
 * (STORE_NOSPC).
 */
enum store_status store_put(struct page_pool *pool, struct page_table *table,
			    const uint8_t *keys, const uint8_t *seals, const uint8_t *pages,
			    uint32_t count, uint64_t max_new);
/*
 * A PEER_PUT's store_put() that overwrites nothing: the keys held already
 * are left as they were, not stored, and put in held (*nr_held of them, as
 * on the wire); the others stored (PAGE_FROM_PEER), all or none, within
 * max_new.
 */
enum store_status store_put_new(struct page_pool *pool, struct page_table *table,
				const uint8_t *keys, const uint8_t *seals, const uint8_t *pages,
				uint32_t count, uint64_t max_new, uint8_t *held, uint32_t *nr_held);
/*
 * Points seals[i] and pages[i] at the seal and data of keys[i], or
 * STORE_NOENT if any is missing.
 */
enum store_status store_get(const struct page_pool *pool, const struct page_table *table,
			    const uint8_t *keys, uint32_t count, const uint8_t **seals,
			    const uint8_t **pages);
/* Whether key is held in table. */
bool store_holds(const struct page_pool *pool, const struct page_table *table, uint64_t key);
/*
 * Frees the pages of the keys that are held; missing keys are ignored.
 * Returns the pages freed, *were_asked how many of them had been named in
 * an EVICT.
 */
uint32_t store_free(struct page_pool *pool, struct page_table *table,
		    const uint8_t *keys, uint32_t count, uint32_t *were_asked);
/* store_free() of the keys still PAGE_FROM_PEER alone (a PEER_FREE). */
uint32_t store_free_from_peer(struct page_pool *pool, struct page_table *table,
			      const uint8_t *keys, uint32_t count, uint32_t *were_asked);
/*
 * Picks up to max held keys to ask back in an EVICT, going round the table
 * from where the last pick stopped, so that rounds ask for different pages.
 */
uint32_t store_pick_eviction(struct page_table *table, uint64_t *keys, uint32_t max);
/*
 * The keys a client's parity takes only together, a run: those sharing
 * (key - 1) / STORE_RUN_KEYS (the kernel's NETRAM_PARITY_RUN).
 */
#define STORE_RUN_KEYS 16

/* The run of key. */
static inline uint64_t store_run(uint64_t key)
{
	return (key - 1) / STORE_RUN_KEYS;
}

/*
 * Like store_pick_eviction(), but whole runs: with each key picked, every
 * held key of its run, next to each other in key order.  Picks runs until
 * it has want keys or more (the last run may go past want), never more
 * than max.
 */
uint32_t store_pick_runs(const struct page_pool *pool, struct page_table *table, uint64_t *keys,
			 uint32_t want, uint32_t max);

#endif
