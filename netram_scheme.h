/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reliability schemes (reliability=): where a Network RAM page's copies go,
 * how it is read and written, and what is made again when a server is lost.
 * One table per scheme, chosen when the tier is created:
 *
 *   netram_copies.c  "none" (one copy) and "mirror" (two, on distinct servers)
 *   netram_parity.c  "parity" (groups of pages and their XOR),
 *   netram_group.c   its table of groups
 *
 * The rest of Network RAM asks through the wrappers below, never by name.
 * Locking is the schemes' own (netram.h): ops are called with no lock held.
 */
#ifndef NSWAP2L_NETRAM_SCHEME_H
#define NSWAP2L_NETRAM_SCHEME_H

#include "netram.h"

struct netram_scheme {
	const char *name;		/* its reliability= word, as status shows it */
	unsigned int copies;		/* of every page, in the page's slot */
	unsigned int max_run;		/* pages per bio, before the servers' max_pages */
	bool redundant;			/* a failed server's pages are made again */
	bool write_once;		/* an overwrite takes a new slot (tier.write_once) */
	const char *lost_hint;		/* dmesg tail when copies are lost */

	/* Optional; destroy copes with a half-built tier. */
	int (*create)(struct netram_tier *nt, struct dm_target *ti,
		      const struct nswap2l_tier_options *opts);
	void (*stop)(struct netram_tier *nt);
	void (*destroy)(struct netram_tier *nt);

	/* The tier ops of the same names (struct nswap2l_tier_ops). */
	int (*alloc)(struct netram_tier *nt, unsigned int nr, u64 *slot);
	void (*free)(struct netram_tier *nt, const u64 *slots, unsigned int nr, bool written);
	int (*map_read)(struct netram_tier *nt, struct bio *bio, u64 slot);
	/* The bio is remapped already: bi_sector is the first key's page. */
	int (*map_write)(struct netram_tier *nt, struct bio *bio, u64 slot);
	int (*map_retry)(struct netram_tier *nt, struct bio *bio, u64 slot, unsigned int tries);
	/* Pages the device can store in @pages of the servers' memory. */
	u64 (*capacity)(struct netram_tier *nt, u64 pages);

	/* Move jobs, on the mover's thread: recovery, eviction and drain. */
	bool (*lost_wants)(struct netram_tier *nt, u64 slot, struct netram_recovery *rec);
	/* The page frees keys on @srv if moved (of @keys, sorted, if not NULL). */
	bool (*on_server)(struct netram_tier *nt, u64 slot, struct netram_server *srv,
			  const u64 *keys, unsigned int nr_keys);
	void (*recovered)(struct netram_tier *nt);	/* optional: dmesg after recovery */
	/*
	 * Optional: a recovery pass is over; what it started ends, and the
	 * pages it copied again other than by moving are returned (mover's thread).
	 */
	u64 (*pass_done)(struct netram_tier *nt);
	/*
	 * MOVED (netram_moved.c), on the mover's thread once the flagged pages
	 * are settled, before they follow: keys that move only together
	 * (parity's runs, each on one server of its group).  Of @keys
	 * (sorted), sets in @taken those now on @to in the scheme's own table:
	 * moved there from @from (their held counts follow) if @can_move and
	 * no key of their run is in @blocked, or there already.  Optional:
	 * without it each page moves by its map entry alone.
	 */
	void (*move_keys)(struct netram_tier *nt, struct netram_server *from,
			  struct netram_server *to, const u64 *keys, unsigned int nr_keys,
			  bool can_move, const unsigned long *blocked, unsigned long *taken);
};

extern const struct netram_scheme netram_single, netram_mirror, netram_parity_scheme;

static inline int netram_scheme_create(struct netram_tier *nt, struct dm_target *ti,
				       const struct nswap2l_tier_options *opts)
{
	return nt->scheme->create ? nt->scheme->create(nt, ti, opts) : 0;
}

static inline void netram_scheme_stop(struct netram_tier *nt)
{
	if (nt->scheme->stop)
		nt->scheme->stop(nt);
}

static inline void netram_scheme_destroy(struct netram_tier *nt)
{
	if (nt->scheme->destroy)
		nt->scheme->destroy(nt);
}

static inline int netram_scheme_alloc(struct netram_tier *nt, unsigned int nr, u64 *slot)
{
	return nt->scheme->alloc(nt, nr, slot);
}

static inline void netram_scheme_free(struct netram_tier *nt, const u64 *slots,
				      unsigned int nr, bool written)
{
	nt->scheme->free(nt, slots, nr, written);
}

static inline int netram_scheme_map_read(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	return nt->scheme->map_read(nt, bio, slot);
}

static inline int netram_scheme_map_write(struct netram_tier *nt, struct bio *bio, u64 slot)
{
	return nt->scheme->map_write(nt, bio, slot);
}

static inline int netram_scheme_map_retry(struct netram_tier *nt, struct bio *bio, u64 slot,
					  unsigned int tries)
{
	return nt->scheme->map_retry(nt, bio, slot, tries);
}

static inline unsigned int netram_scheme_max_run(struct netram_tier *nt)
{
	return nt->scheme->max_run;
}

static inline u64 netram_scheme_capacity(struct netram_tier *nt, u64 pages)
{
	return nt->scheme->capacity(nt, pages);
}

static inline bool netram_scheme_lost_wants(struct netram_tier *nt, u64 slot,
					    struct netram_recovery *rec)
{
	return nt->scheme->lost_wants(nt, slot, rec);
}

static inline bool netram_scheme_on_server(struct netram_tier *nt, u64 slot,
					   struct netram_server *srv,
					   const u64 *keys, unsigned int nr_keys)
{
	return nt->scheme->on_server(nt, slot, srv, keys, nr_keys);
}

static inline u64 netram_scheme_pass_done(struct netram_tier *nt)
{
	return nt->scheme->pass_done ? nt->scheme->pass_done(nt) : 0;
}

static inline void netram_scheme_recovered(struct netram_tier *nt)
{
	if (nt->scheme->recovered)
		nt->scheme->recovered(nt);
}

static inline bool netram_scheme_moves_keys(struct netram_tier *nt)
{
	return nt->scheme->move_keys;
}

static inline void netram_scheme_move_keys(struct netram_tier *nt, struct netram_server *from,
					   struct netram_server *to, const u64 *keys,
					   unsigned int nr_keys, bool can_move,
					   const unsigned long *blocked, unsigned long *taken)
{
	nt->scheme->move_keys(nt, from, to, keys, nr_keys, can_move, blocked, taken);
}

static inline bool netram_scheme_redundant(struct netram_tier *nt)
{
	return nt->scheme->redundant;
}

static inline const char *netram_scheme_name(struct netram_tier *nt)
{
	return nt->scheme->name;
}

static inline const char *netram_scheme_lost_hint(struct netram_tier *nt)
{
	return nt->scheme->lost_hint;
}

#endif
