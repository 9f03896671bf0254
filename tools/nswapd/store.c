// SPDX-License-Identifier: GPL-2.0
/*
 * Frames live in 2 MiB anonymous mappings (slabs), each locked once with
 * mlock2(MLOCK_ONFAULT): a frame's memory is allocated and locked when a
 * page is first written to it, and no frame costs a system call of its
 * own, nor splits a mapping.  A freed frame stays resident until
 * page_pool_release_free() drops its memory with MADV_DONTNEED_LOCKED
 * (Linux 5.18; plain MADV_DONTNEED refuses locked memory), and a slab with
 * no page left is unmapped.  Reusing a freed frame before that is free.
 *
 * The page tables use open addressing with linear probing and backward-shift
 * deletion (no tombstones), grown at 3/4 load and shrunk below 1/8.  Keys
 * are hashed with SipHash under the pool's random key: with a public hash,
 * a client could send keys that all land in one probe run and make every
 * lookup of every client walk it.
 *
 * A page's seal, opaque here, lives beside its frame in the slab's seals[]:
 * 24 bytes per 4 KiB frame (0.6 %), 12 KiB per slab, allocated and freed
 * with the slab.  In the page table entries it would cost as much per slot,
 * and the tables keep up to 8 slots per page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "proto.h"
#include "store.h"

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24		/* uapi value; older libc headers lack it */
#endif

#define PAGE_TABLE_EMPTY UINT64_MAX	/* never a key: keys are < NSWAP2L_PROTO_KEY_LIMIT */
#define PAGE_TABLE_MIN_SLOTS 64
#define SLAB_BYTES ((size_t)SLAB_FRAMES * PROTO_PAGE_SIZE)
#define SLAB_ID_SHIFT 9
_Static_assert(1u << SLAB_ID_SHIFT == SLAB_FRAMES, "frame numbers are slab id and index");

struct slab {
	unsigned char *base;
	uint32_t id;
	uint16_t used;			/* frames holding a page */
	uint16_t resident_count;	/* free frames still backed by memory */
	uint16_t released_count;	/* free frames given back to the system */
	uint16_t resident[SLAB_FRAMES];	/* stacks of free frame indexes */
	uint16_t released[SLAB_FRAMES];
	struct list_head free_link;	/* in pool->with_free */
	uint8_t seals[SLAB_FRAMES][PROTO_SEAL_SIZE];	/* of the pages, by frame index */
};

static unsigned char *frame_data(const struct page_pool *pool, uint32_t frame)
{
	const struct slab *slab = pool->slabs[frame >> SLAB_ID_SHIFT];

	return slab->base + (size_t)(frame & (SLAB_FRAMES - 1)) * PROTO_PAGE_SIZE;
}

static uint8_t *frame_seal(const struct page_pool *pool, uint32_t frame)
{
	struct slab *slab = pool->slabs[frame >> SLAB_ID_SHIFT];

	return slab->seals[frame & (SLAB_FRAMES - 1)];
}

void page_pool_init(struct page_pool *pool, bool lock_frames,
		    const struct siphash_key *hash_key)
{
	memset(pool, 0, sizeof(*pool));
	list_init(&pool->with_free);
	pool->lock_frames = lock_frames;
	pool->hash_key = *hash_key;
	/* an unknown advice fails before the (empty) range is looked at */
	if (lock_frames && madvise(NULL, 0, MADV_DONTNEED_LOCKED)) {
		log_warn("this kernel cannot drop locked memory (no MADV_DONTNEED_LOCKED): "
			 "pages are kept unlocked and may be swapped out");
		pool->lock_frames = false;
	}
}

static void slab_unmap(struct page_pool *pool, struct slab *slab)
{
	munmap(slab->base, SLAB_BYTES);
	pool->slabs[slab->id] = NULL;
	free(slab);
}

void page_pool_destroy(struct page_pool *pool)
{
	struct siphash_key hash_key = pool->hash_key;
	uint32_t i;

	for (i = 0; i < pool->slab_slots; i++)
		if (pool->slabs[i])
			slab_unmap(pool, pool->slabs[i]);
	free(pool->slabs);
	page_pool_init(pool, false, &hash_key);
}

static struct slab *slab_new(struct page_pool *pool)
{
	struct slab *slab;
	uint32_t id, i;

	for (id = 0; id < pool->slab_slots && pool->slabs[id]; id++)
		;
	if (id == pool->slab_slots) {
		uint32_t slots = pool->slab_slots ? pool->slab_slots * 2 : 16;
		struct slab **grown;

		if (slots > UINT32_MAX >> SLAB_ID_SHIFT)
			return NULL;
		grown = realloc(pool->slabs, slots * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + pool->slab_slots, 0, (slots - pool->slab_slots) * sizeof(*grown));
		pool->slabs = grown;
		pool->slab_slots = slots;
	}
	slab = calloc(1, sizeof(*slab));
	if (!slab)
		return NULL;
	slab->base = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (slab->base == MAP_FAILED) {
		free(slab);
		return NULL;
	}
	if (pool->lock_frames && mlock2(slab->base, SLAB_BYTES, MLOCK_ONFAULT)) {
		log_warn("mlock2 failed (%s): pages are kept unlocked and may be swapped out; "
			 "run with CAP_IPC_LOCK or a higher RLIMIT_MEMLOCK", strerror(errno));
		pool->lock_frames = false;
	}
	slab->id = id;
	/* hand out low frames first: stack top is frame 0 */
	for (i = 0; i < SLAB_FRAMES; i++)
		slab->released[i] = (uint16_t)(SLAB_FRAMES - 1 - i);
	slab->released_count = SLAB_FRAMES;
	pool->slabs[id] = slab;
	list_add(&slab->free_link, &pool->with_free);
	return slab;
}

/* Returns a frame number, or -1 when no memory is left. */
static int64_t frame_alloc(struct page_pool *pool)
{
	struct slab *slab;
	uint32_t index;

	if (list_empty(&pool->with_free)) {
		slab = slab_new(pool);
		if (!slab)
			return -1;
	} else {
		slab = list_first_entry(&pool->with_free, struct slab, free_link);
	}
	if (slab->resident_count)
		index = slab->resident[--slab->resident_count];
	else
		index = slab->released[--slab->released_count];
	slab->used++;
	pool->frames_used++;
	if (!slab->resident_count && !slab->released_count)
		list_del(&slab->free_link);
	return (int64_t)slab->id << SLAB_ID_SHIFT | index;
}

static void frame_free(struct page_pool *pool, uint32_t frame)
{
	struct slab *slab = pool->slabs[frame >> SLAB_ID_SHIFT];

	if (!slab->resident_count && !slab->released_count)
		list_add(&slab->free_link, &pool->with_free);
	slab->resident[slab->resident_count++] = (uint16_t)(frame & (SLAB_FRAMES - 1));
	slab->used--;
	pool->frames_used--;
}

static int compare_u16(const void *a, const void *b)
{
	return *(const uint16_t *)a - *(const uint16_t *)b;
}

/* Drops the memory of the resident free frames of a slab, in contiguous runs. */
static void slab_release_resident(struct slab *slab)
{
	uint16_t *frames = slab->resident;
	uint16_t n = slab->resident_count, i, run;

	qsort(frames, n, sizeof(*frames), compare_u16);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && frames[i + run] == frames[i] + run; run++)
			;
		/* the locked variant works on unlocked memory too */
		madvise(slab->base + (size_t)frames[i] * PROTO_PAGE_SIZE,
			(size_t)run * PROTO_PAGE_SIZE, MADV_DONTNEED_LOCKED);
	}
	for (i = 0; i < n; i++)
		slab->released[slab->released_count++] = frames[i];
	slab->resident_count = 0;
}

void page_pool_release_free(struct page_pool *pool)
{
	struct slab *slab, *next;

	list_for_each_entry_safe(slab, next, &pool->with_free, free_link) {
		if (!slab->used) {
			list_del(&slab->free_link);
			slab_unmap(pool, slab);
		} else if (slab->resident_count) {
			slab_release_resident(slab);
		}
	}
}

/* The slot where key's probe run starts. */
static size_t key_home(const struct page_pool *pool, const struct page_table *table, uint64_t key)
{
	uint8_t bytes[PROTO_KEY_SIZE];

	proto_put_key(bytes, 0, key);
	return (size_t)siphash24(&pool->hash_key, bytes, sizeof(bytes)) & table->mask;
}

void page_table_init(struct page_table *table)
{
	memset(table, 0, sizeof(*table));
}

void page_table_destroy(struct page_table *table, struct page_pool *pool)
{
	size_t i;

	if (table->slots)
		for (i = 0; i <= table->mask; i++)
			if (table->slots[i].key != PAGE_TABLE_EMPTY)
				frame_free(pool, table->slots[i].frame);
	free(table->slots);
	page_table_init(table);
}

static struct page_entry *table_find(const struct page_pool *pool, const struct page_table *table,
				     uint64_t key)
{
	size_t i;

	if (!table->slots)
		return NULL;
	for (i = key_home(pool, table, key);; i = (i + 1) & table->mask) {
		if (table->slots[i].key == key)
			return &table->slots[i];
		if (table->slots[i].key == PAGE_TABLE_EMPTY)
			return NULL;
	}
}

/* Puts an entry whose key is not in the table yet; there must be room. */
static void table_insert(struct page_pool *pool, struct page_table *table,
			 const struct page_entry *entry)
{
	size_t i = key_home(pool, table, entry->key), probe = 1;

	for (; table->slots[i].key != PAGE_TABLE_EMPTY; probe++)
		i = (i + 1) & table->mask;
	table->slots[i] = *entry;
	table->used++;
	if (probe > pool->longest_probe)
		pool->longest_probe = probe;
}

static int table_resize(struct page_pool *pool, struct page_table *table, size_t slots)
{
	struct page_table old = *table;
	size_t i;

	table->slots = malloc(slots * sizeof(*table->slots));
	if (!table->slots) {
		*table = old;
		return -1;
	}
	for (i = 0; i < slots; i++)
		table->slots[i].key = PAGE_TABLE_EMPTY;
	table->mask = slots - 1;
	table->used = 0;
	table->evict_cursor = 0;
	if (old.slots)
		for (i = 0; i <= old.mask; i++)
			if (old.slots[i].key != PAGE_TABLE_EMPTY)
				table_insert(pool, table, &old.slots[i]);
	free(old.slots);
	return 0;
}

/* Makes room for extra more entries, keeping the load at most 3/4. */
static int table_reserve(struct page_pool *pool, struct page_table *table, size_t extra)
{
	size_t slots = table->slots ? table->mask + 1 : PAGE_TABLE_MIN_SLOTS;

	while ((table->used + extra) * 4 > slots * 3)
		slots *= 2;
	if (table->slots && slots == table->mask + 1)
		return 0;
	return table_resize(pool, table, slots);
}

/* Removes an entry, moving later entries of its probe run back into the gap. */
static void table_remove(const struct page_pool *pool, struct page_table *table,
			 struct page_entry *entry)
{
	size_t gap = (size_t)(entry - table->slots), i = gap;

	for (;;) {
		size_t home;

		i = (i + 1) & table->mask;
		if (table->slots[i].key == PAGE_TABLE_EMPTY)
			break;
		home = key_home(pool, table, table->slots[i].key);
		/* the entry may move to gap if gap lies between its home and i */
		if (((i - home) & table->mask) >= ((i - gap) & table->mask)) {
			table->slots[gap] = table->slots[i];
			gap = i;
		}
	}
	table->slots[gap].key = PAGE_TABLE_EMPTY;
	table->used--;
}

static void table_shrink_if_sparse(struct page_pool *pool, struct page_table *table)
{
	size_t slots = table->mask + 1;

	if (!table->used) {
		free(table->slots);
		page_table_init(table);
		return;
	}
	if (slots <= PAGE_TABLE_MIN_SLOTS || table->used * 8 >= slots)
		return;
	while (slots > PAGE_TABLE_MIN_SLOTS && table->used * 4 < slots)
		slots /= 2;
	/* a failed shrink leaves the table as it was, which is fine */
	table_resize(pool, table, slots);
}

/* store_put(), or with held store_put_new(): then the keys held before are left as they were. */
static enum store_status put_pages(struct page_pool *pool, struct page_table *table,
				   const uint8_t *keys, const uint8_t *seals, const uint8_t *pages,
				   uint32_t count, uint64_t max_new, uint8_t *held, uint32_t *nr_held)
{
	uint32_t frames[NSWAP2L_PROTO_MAX_PAGES];
	bool was_held[NSWAP2L_PROTO_MAX_PAGES];
	uint32_t new_keys = 0, taken = 0, i;

	if (nr_held)
		*nr_held = 0;
	if (count > NSWAP2L_PROTO_MAX_PAGES)
		return STORE_NOSPC;
	/* a key given twice counts twice here: harmless, frames left over go back */
	for (i = 0; i < count; i++) {
		was_held[i] = table_find(pool, table, proto_key(keys, i)) != NULL;
		if (!was_held[i])
			new_keys++;
	}
	if (new_keys > max_new || table_reserve(pool, table, new_keys))
		return STORE_NOSPC;
	for (i = 0; i < new_keys; i++) {
		int64_t frame = frame_alloc(pool);

		if (frame < 0) {
			while (i)
				frame_free(pool, frames[--i]);
			return STORE_NOSPC;
		}
		frames[i] = (uint32_t)frame;
	}
	/* nothing can fail from here on */
	for (i = 0; i < count; i++) {
		uint64_t key = proto_key(keys, i);
		struct page_entry *entry = table_find(pool, table, key);

		if (held && was_held[i]) {
			proto_put_key(held, (*nr_held)++, key);
			continue;
		}
		if (!entry) {
			struct page_entry fresh = { .key = key, .frame = frames[taken++],
						    .flags = held ? PAGE_FROM_PEER : 0 };

			table_insert(pool, table, &fresh);
			entry = table_find(pool, table, key);
		} else {
			entry->flags &= ~PAGE_FROM_PEER;	/* the client's own now */
		}
		memcpy(frame_seal(pool, entry->frame), seals + (size_t)i * PROTO_SEAL_SIZE,
		       PROTO_SEAL_SIZE);
		memcpy(frame_data(pool, entry->frame), pages + (size_t)i * PROTO_PAGE_SIZE,
		       PROTO_PAGE_SIZE);
	}
	while (taken < new_keys)
		frame_free(pool, frames[taken++]);
	return STORE_OK;
}

enum store_status store_put(struct page_pool *pool, struct page_table *table,
			    const uint8_t *keys, const uint8_t *seals, const uint8_t *pages,
			    uint32_t count, uint64_t max_new)
{
	return put_pages(pool, table, keys, seals, pages, count, max_new, NULL, NULL);
}

enum store_status store_put_new(struct page_pool *pool, struct page_table *table,
				const uint8_t *keys, const uint8_t *seals, const uint8_t *pages,
				uint32_t count, uint64_t max_new, uint8_t *held, uint32_t *nr_held)
{
	return put_pages(pool, table, keys, seals, pages, count, max_new, held, nr_held);
}

enum store_status store_get(const struct page_pool *pool, const struct page_table *table,
			    const uint8_t *keys, uint32_t count, const uint8_t **seals,
			    const uint8_t **pages)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		const struct page_entry *entry = table_find(pool, table, proto_key(keys, i));

		if (!entry)
			return STORE_NOENT;
		seals[i] = frame_seal(pool, entry->frame);
		pages[i] = frame_data(pool, entry->frame);
	}
	return STORE_OK;
}

bool store_holds(const struct page_pool *pool, const struct page_table *table, uint64_t key)
{
	return table_find(pool, table, key) != NULL;
}

/* Frees the keys held whose entry has every flag of @only. */
static uint32_t free_pages(struct page_pool *pool, struct page_table *table,
			   const uint8_t *keys, uint32_t count, uint32_t only, uint32_t *were_asked)
{
	uint32_t freed = 0, i;

	*were_asked = 0;
	for (i = 0; i < count; i++) {
		struct page_entry *entry = table_find(pool, table, proto_key(keys, i));

		if (!entry || (entry->flags & only) != only)
			continue;
		if (entry->flags & PAGE_ASKED)
			(*were_asked)++;
		frame_free(pool, entry->frame);
		table_remove(pool, table, entry);
		freed++;
	}
	if (freed)
		table_shrink_if_sparse(pool, table);
	return freed;
}

uint32_t store_free(struct page_pool *pool, struct page_table *table,
		    const uint8_t *keys, uint32_t count, uint32_t *were_asked)
{
	return free_pages(pool, table, keys, count, 0, were_asked);
}

uint32_t store_free_from_peer(struct page_pool *pool, struct page_table *table,
			      const uint8_t *keys, uint32_t count, uint32_t *were_asked)
{
	return free_pages(pool, table, keys, count, PAGE_FROM_PEER, were_asked);
}

uint32_t store_pick_eviction(struct page_table *table, uint64_t *keys, uint32_t max)
{
	size_t visited, slots = table->slots ? table->mask + 1 : 0;
	uint32_t n = 0;

	for (visited = 0; visited < slots && n < max; visited++) {
		struct page_entry *entry = &table->slots[table->evict_cursor];

		table->evict_cursor = (table->evict_cursor + 1) & table->mask;
		if (entry->key == PAGE_TABLE_EMPTY)
			continue;
		entry->flags |= PAGE_ASKED;
		keys[n++] = entry->key;
	}
	return n;
}

uint32_t store_pick_runs(const struct page_pool *pool, struct page_table *table, uint64_t *keys,
			 uint32_t want, uint32_t max)
{
	size_t visited, slots = table->slots ? table->mask + 1 : 0;
	uint32_t n = 0, i;

	for (visited = 0; visited < slots && n < want; visited++) {
		struct page_entry *entry = &table->slots[table->evict_cursor], *member;
		uint64_t first, run[STORE_RUN_KEYS];
		uint32_t len = 0;
		bool picked = false;

		if (entry->key != PAGE_TABLE_EMPTY) {
			/* keys start at 1: so do runs */
			first = store_run(entry->key) * STORE_RUN_KEYS + 1;
			for (i = 0; i < n && !picked; i++)
				picked = store_run(keys[i]) == store_run(entry->key);
		}
		if (entry->key == PAGE_TABLE_EMPTY || picked) {
			table->evict_cursor = (table->evict_cursor + 1) & table->mask;
			continue;
		}
		for (i = 0; i < STORE_RUN_KEYS; i++) {
			/* key 0's run wraps round: no key is past the limit, and none is EMPTY */
			if (first + i >= NSWAP2L_PROTO_KEY_LIMIT)
				continue;
			member = table_find(pool, table, first + i);
			if (member) {
				member->flags |= PAGE_ASKED;
				run[len++] = member->key;
			}
		}
		/* whole runs only: this one is the first of the next pick */
		if (n + len > max)
			break;
		memcpy(keys + n, run, len * sizeof(*run));
		n += len;
		table->evict_cursor = (table->evict_cursor + 1) & table->mask;
	}
	return n;
}
