/* SPDX-License-Identifier: GPL-2.0 */
/* The bio path (bio.c): map and end_io, and their workers. */
#ifndef NSWAP2L_BIO_H
#define NSWAP2L_BIO_H

#include "nswap2l.h"

/* Per-bio state. */
struct nswap2l_bio {
	u64 page;
	u64 slot;		/* where the bio was sent: tier and slot */
	unsigned long held_until;	/* fault injection */
	u64 start_ns;		/* profiler */
	u8 tier;
	u8 profiled_tier;	/* the tier it is counted in flight on */
	u8 epoch;		/* for end_io */
	u8 read_tries;		/* failed reads: the next goes to another copy */
	u8 space_waits;		/* refused writes: times it waited for slots freed */
	bool give_up;		/* failed for good: end_io completes it */
	bool held_reroute;	/* fault injection: held on its way to reroute_write() */
	bool fault_parked;	/* fault injection: parked once in reroute_write() */
};

/* The bio path's lists and works of a new device; its workqueues are the device's. */
void nswap2l_bio_init(struct nswap2l *nc);
/* The target's map and end_io, for the device of the table @ti. */
int nswap2l_bio_map(struct nswap2l *nc, struct dm_target *ti, struct bio *bio);
int nswap2l_bio_end_io(struct nswap2l *nc, struct bio *bio, blk_status_t *error);

#endif
