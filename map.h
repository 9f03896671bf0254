/* SPDX-License-Identifier: GPL-2.0 */
/* The per-page map, in-flight tracking and release after it (map.c). */
#ifndef NSWAP2L_MAP_H
#define NSWAP2L_MAP_H

#include "map_types.h"

/*----------------------------------------------------------------
 * Core state (map.c): the per-page map, every transition of an entry,
 * and in-flight tracking.
 *--------------------------------------------------------------*/

int nswap2l_map_init(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti);
void nswap2l_map_exit(struct nswap2l_map *map);
/* Bytes of RAM the map of @nr_pages takes. */
u64 nswap2l_map_bytes(u64 nr_pages);
/* Zeroed memory of any size the machine can hold, or NULL; kvfree() it. */
void *nswap2l_zalloc_large(u64 bytes);
/* Reload: a map for more pages is prepared, then the old entries move in. */
atomic64_t *nswap2l_map_prepare_grow(struct nswap2l *nc, u64 nr_pages, struct dm_target *ti);
void nswap2l_map_commit_grow(struct nswap2l_map *map, atomic64_t *entries, u64 nr_pages);

unsigned int nswap2l_inflight_enter(struct nswap2l_inflight *inflight);
void nswap2l_inflight_exit(struct nswap2l_inflight *inflight, unsigned int epoch);
/* Wait until every bio that started before this call has completed. */
void nswap2l_inflight_wait(struct nswap2l_inflight *inflight);

/*
 * Choose a home for @page with the placement policy, on no tier of the mask
 * @skip, and reserve a run of at most @nr slots there; returns the run's
 * length with its first entry in *@entry, or -ENOSPC if no tier has room.
 * The caller installs the entries or frees the slots.
 */
int nswap2l_alloc_home(struct nswap2l *nc, u64 page, unsigned int nr, unsigned long skip,
		       u64 *entry);
/* Give the slot of @entry back to its tier. */
void nswap2l_free_home(struct nswap2l *nc, u64 entry, bool written);
void nswap2l_flush_releases(struct nswap2l *nc);
/*
 * The release queue.  A writer reserves a place before it replaces an entry
 * (false: full), then fills it with the old home's run, or gives it back
 * (@nr == 0).  A refused write that found it full parks on the waiters
 * (false) or may go on at once (true).  A refused write that found no tier
 * with room parks on the space waiters (true) while runs are queued or
 * being freed.  The discard worker takes the filled runs and the waiters,
 * sends the waiters on, frees the runs, and returns the space waiters.
 */
bool nswap2l_release_reserve(struct nswap2l_map *map);
bool nswap2l_release_park(struct nswap2l_map *map, struct bio *bio);
bool nswap2l_release_park_for_space(struct nswap2l_map *map, struct bio *bio);
void nswap2l_release_fill(struct nswap2l_map *map, u64 home, unsigned int nr, u64 keep);
struct bio_list nswap2l_release_take(struct nswap2l_map *map, struct nswap2l_release_batch *batch);
struct bio_list nswap2l_release_free(struct nswap2l *nc, struct nswap2l_release_batch *batch);
/*
 * Give the pages from @page, at most @nr, new homes in one run (on no tier
 * of the mask @skip), replacing the entries whose homes are the run at
 * @expected (0: pages written for the first time).  Returns how many pages
 * it placed (at least one) with the first new entry in *@entry; -EAGAIN if
 * the first page's entry changed meanwhile, with that entry in *@entry;
 * -ENOSPC if no tier has room.
 */
int nswap2l_map_place(struct nswap2l *nc, u64 page, unsigned int nr, u64 expected,
		      unsigned long skip, u64 *entry);
/*
 * Note a read or write of @page: set the referenced bit and, for a write,
 * clear the migrating bit.  Returns the entry to send the bio to.
 */
u64 nswap2l_map_note_access(struct nswap2l_map *map, u64 page, u64 entry, bool write);
/*
 * Note a read or write of the pages from @page, at most @nr, whose homes
 * form one run with the first page's home *@entry.  Returns the run's length,
 * with the entry to send the bio to in *@entry.
 */
unsigned int nswap2l_map_note_run(struct nswap2l *nc, u64 page, unsigned int nr, u64 *entry,
				  bool write);
/*
 * How many pages from @page, at most @nr, were prefetched as @entry says
 * (or not): a run placed again is counted as the first page's.
 */
unsigned int nswap2l_map_flags_run(struct nswap2l_map *map, u64 page, unsigned int nr, u64 entry);
/* How many pages from @page, at most @nr, were never written (or were discarded). */
unsigned int nswap2l_map_unwritten_run(struct nswap2l_map *map, u64 page, unsigned int nr);
/* Flag the page as moving if its home still is @home; false if it changed. */
bool nswap2l_map_flag_moving(struct nswap2l_map *map, u64 page, u64 home);
/*
 * Replace the flagged entry of a page nothing touched since it was flagged
 * at @home: with @new_home, or (0) with the old one unflagged.  Keeps the
 * referenced bit.  False if a write or a discard changed the entry.
 */
bool nswap2l_map_replace_flagged(struct nswap2l_map *map, u64 page, u64 home, u64 new_home);
/*
 * The page whose home is @home lives at @new_home now, with the same data
 * (a server moved it): its flags stay, except that a move under way gives
 * up, as after a write.  False if a write or a discard changed its home.
 */
bool nswap2l_map_relabel(struct nswap2l_map *map, u64 page, u64 home, u64 new_home);
/*
 * Discard the whole pages [@first, @end): clear their entries, wait for bios
 * that may still use their slots, give the slots back.  Worker only.
 */
void nswap2l_map_discard(struct nswap2l *nc, u64 first, u64 end);

#endif /* NSWAP2L_MAP_H */
