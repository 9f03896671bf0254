/* SPDX-License-Identifier: GPL-2.0 */
/* The page mover (migrate.c). */
#ifndef NSWAP2L_MOVER_H
#define NSWAP2L_MOVER_H

#include "nswap2l_types.h"

/*----------------------------------------------------------------
 * Background moves (migrate.c): every page of @tier whose slot @wants is
 * moved to a new home; then done() runs on the mover's thread.  Jobs wait
 * while the device is suspended and continue where they stopped.
 *--------------------------------------------------------------*/
#define NSWAP2L_MOVE_BATCH	32

enum nswap2l_relabel {
	NSWAP2L_MOVE_IT,
	NSWAP2L_RELABEL_IT,
	NSWAP2L_RELABEL_LATER,
};

struct nswap2l_move_job {
	struct nswap2l_tier *tier;
	bool (*wants)(struct nswap2l_move_job *job, u64 slot);
	/*
	 * Instead of wants (optional): every page of @tier is handed to it,
	 * which changes its entry in place, moving no data (a server moved
	 * it); such a job goes before the others, as it takes one scan.
	 */
	void (*visit)(struct nswap2l_move_job *job, u64 page);
	void (*done)(struct nswap2l_move_job *job);
	/*
	 * Optional, for a page wants() took: its new home other than by
	 * placement, or false for that.  *@install is the entry the map gets,
	 * *@write the one the data is written to; when they differ, the pages
	 * go to release_old(), not freed with the old home: @install keeps
	 * some of @old_entry (mirror recovery writes the lost copy alone).
	 */
	bool (*new_home)(struct nswap2l_move_job *job, u64 page, u64 old_entry, u64 *install,
			 u64 *write);
	void (*release_old)(struct nswap2l_move_job *job, u64 old_entry, u64 install);
	/*
	 * Optional, for a page wants() took, before its read: RELABEL_IT if its
	 * data is in place elsewhere already (parity recovery rebuilt it there),
	 * *@entry the entry naming that place; the page is only relabelled, as
	 * flagged moves are, and its old home is not freed.  RELABEL_LATER (only
	 * without @wait) if that is not known yet: the page is neither read nor
	 * written, and asked again, with @wait (may sleep), once the batch sent
	 * after it is out, so that batches overlap (if no write took it
	 * meanwhile, but for relabel_raced); it then stays where it is
	 * unless relabelled (the next pass moves it).  *@write, if set, is a new
	 * home relabelling added to the old one, as new_home()'s: freed if the
	 * page stays, else the old home goes to release_old().
	 */
	enum nswap2l_relabel (*relabel)(struct nswap2l_move_job *job, u64 page, u64 old_entry,
					u64 *entry, u64 *write, bool wait);
	/* Optional: relabel() was asked about every page of a batch. */
	void (*relabels_asked)(struct nswap2l_move_job *job);
	/*
	 * relabel() is asked again (@wait) about a page it said LATER about
	 * even if a write took the page meanwhile, as that ask ends what the
	 * first one set off (mirror recovery's COPY must be back before the
	 * new home is freed).  Else such a page is let go at once, unasked.
	 */
	bool relabel_raced;
	bool rate_limited;		/* follows the device's recovery_rate */
	/*
	 * Pages the job copied on its own meanwhile (from wants()), paced with
	 * its next batch; the mover takes back its relabelled pages (no data).
	 */
	int paced_extra;
	/*
	 * Of the batch's pages, those the servers copy (not the client):
	 * counted by relabel(), which is asked before the batch is paced.
	 */
	int server_copied;
	unsigned int moved, left;	/* pages moved, pages that had to stay */
	u64 next_page;			/* where the scan goes on */
	struct list_head list;
};

/*
 * The moving itself, for prefetching (the mover has batches of its own):
 * up to NSWAP2L_MOVE_BATCH pages flagged with add(), then moved by run() to
 * @to_tier (or, if negative, where the placement policy says), their new
 * entries carrying @flags.
 */
struct nswap2l_move_batch;

struct nswap2l_move_result {
	unsigned int moved;
	unsigned int raced;	/* a write or discard came first: left where they are */
	unsigned int failed;	/* no room on the new tier, or an I/O error */
};

struct nswap2l_move_batch *nswap2l_move_batch_alloc(void);
void nswap2l_move_batch_free(struct nswap2l_move_batch *batch);
/* Flag @page for the batch if its home still is @home; false if not (or full). */
bool nswap2l_move_batch_add(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    u64 page, u64 home);
unsigned int nswap2l_move_batch_size(struct nswap2l_move_batch *batch);
void nswap2l_move_batch_run(struct nswap2l *nc, struct nswap2l_move_batch *batch,
			    int to_tier, u64 flags, struct nswap2l_move_result *result);

int nswap2l_mover_create(struct nswap2l *nc);
/* Stop taking jobs and finish the queued ones; then tiers can go. */
void nswap2l_mover_stop(struct nswap2l *nc);
void nswap2l_mover_destroy(struct nswap2l *nc);
/* Suspend: return once no batch runs; queued jobs wait for resume. */
void nswap2l_mover_pause(struct nswap2l *nc);
void nswap2l_mover_resume(struct nswap2l *nc);
/* False if the mover is stopped: the job will not run. */
bool nswap2l_queue_move(struct nswap2l *nc, struct nswap2l_move_job *job);
/* recovery_rate, pages/s: 1 <= @rate_min <= @rate_max, or -EINVAL. */
int nswap2l_mover_set_rate(struct nswap2l *nc, unsigned int rate_min, unsigned int rate_max);
void nswap2l_mover_get_rate(struct nswap2l *nc, unsigned int *rate_min, unsigned int *rate_max);

#endif /* NSWAP2L_MOVER_H */
