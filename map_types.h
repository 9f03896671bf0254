/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-page map's structures, and what may read it without calling into
 * map.c: the policies' view of the map (lookups, the clock hands' aging).
 */
#ifndef NSWAP2L_MAP_TYPES_H
#define NSWAP2L_MAP_TYPES_H

#include "nswap2l_types.h"

/*
 * In-flight I/O, in two epochs.  A slot that is freed, or a page whose old
 * home is about to be freed, must wait until every bio that looked the page
 * up before has completed.  Bios count themselves in the current epoch; a
 * waiter flips the epoch and waits for the old one to drain.  One waiter at
 * a time (wait_mutex): a second flip while the first waits would let the
 * second waiter miss bios counted in the first epoch.
 */
struct nswap2l_inflight {
	unsigned int current_epoch;
	atomic_t count[2];
	wait_queue_head_t drained;
	struct mutex wait_mutex;
};

#define NSWAP2L_NO_EPOCH	0xff

/* Pages a discard clears before it waits once for in-flight I/O and frees them. */
#define NSWAP2L_FREE_BATCH	512

/*
 * Old homes of pages that a write placed again (a prefetched page rewritten,
 * a write its tier refused): freed by the discard worker once bios that may
 * still read them have completed.  Preallocated: when it is full, a write to
 * a prefetched page updates it where it is, and a refused write waits.
 */
#define NSWAP2L_RELEASE_RUNS	64

struct nswap2l_release {
	u64 home;
	unsigned int nr;
	u64 keep;	/* pages of the first 64 that others took meanwhile: not freed */
};

/*
 * Slots freed only after the bios in flight that may still read them: the
 * runs queued from the bio path, and the slots a discard cleared.
 */
struct nswap2l_releases {
	spinlock_t lock;		/* runs, nr_runs, waiters; taken in any context */
	struct nswap2l_release runs[NSWAP2L_RELEASE_RUNS];
	unsigned int nr_runs;
	struct bio_list waiters;	/* refused writes waiting for room */
	/* refused writes that found no tier with room, until the runs taken are freed */
	struct bio_list space_waiters;
	bool freeing;			/* the discard worker took runs it has not freed */
	/* Slots cleared by discard, awaiting the in-flight wait; discard worker only. */
	u64 *freed[NSWAP2L_NR_TIERS];
	unsigned int nr_freed[NSWAP2L_NR_TIERS];
};

/* The runs the discard worker took, to free after the in-flight wait. */
struct nswap2l_release_batch {
	struct nswap2l_release runs[NSWAP2L_RELEASE_RUNS];
	unsigned int nr;
};

struct nswap2l_map {
	u64 nr_pages;
	atomic64_t *entries;
	struct nswap2l_inflight inflight;
	struct nswap2l_releases releases;
};

static inline u64 nswap2l_map_lookup(struct nswap2l_map *map, u64 page)
{
	return atomic64_read(&map->entries[page]);
}

/*
 * Clock hands: clear the referenced bit of @page; true if it was set.
 * cmpxchg: a write or a move may change the entry meanwhile.
 */
static inline bool nswap2l_map_test_and_age(struct nswap2l_map *map, u64 page)
{
	u64 cur = atomic64_read(&map->entries[page]);

	while (cur & NSWAP2L_ENTRY_REFERENCED) {
		u64 old = atomic64_cmpxchg(&map->entries[page], cur,
					   cur & ~NSWAP2L_ENTRY_REFERENCED);

		if (old == cur)
			return true;
		cur = old;
	}
	return false;
}

#endif /* NSWAP2L_MAP_TYPES_H */
