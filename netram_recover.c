// SPDX-License-Identifier: GPL-2.0
/*
 * Copies lost with a server.  A server that is failed (unreachable or
 * stalled longer than the timeout) or that comes back with a new namespace
 * (restarted) has lost every page stored on it so far: the keys below its
 * lost_below.  From then on no read is sent there for them, and a write to
 * a page with a lost copy is given a new home by the core.
 *
 * Recovery is a move job over the map: every page with a lost copy and a
 * surviving one is read from the survivor and written, with a mirror, to
 * one new server under its key (netram_mirror_new_home()), else to a new
 * home chosen by placement (a new pair of servers, or flash when no two
 * servers have room); the mover's flagging keeps a racing write, discard
 * or prefetch from being undone.  Pages with no copy left are counted:
 * they read as EIO until they are written or discarded, never as zeros or
 * old data.
 * Passes repeat while copies are lost meanwhile or writes raced a move.
 * Pages that found no room (one server left, no flash) are tried again
 * when a server comes up.
 *
 * A pass counts the pages lost by the losses before it started (each
 * server's lost_below then) and not by those an earlier pass counted: each
 * lost page is counted once.
 */
#include "netram_scheme.h"

static bool netram_recovery_wants(struct nswap2l_move_job *job, u64 slot)
{
	struct netram_tier *nt = netram_recovery_tier(job);

	return netram_scheme_lost_wants(nt, slot, &nt->recovery);
}

/* A pass starts: the losses it counts. */
static void netram_begin_pass(struct netram_tier *nt)
{
	struct netram_recovery *rec = &nt->recovery;
	unsigned int i;

	lockdep_assert_held(&rec->lock);
	for (i = 0; i < netram_nr_servers(nt); i++)
		rec->pass_below[i] = READ_ONCE(nt->servers[i]->lost_below);
	rec->pass_lost = 0;
}

/*
 * The recovery is over: a server none of whose held keys is lost any more
 * keeps no copy that anything refers to, so its old keys may be stored
 * there again.  A parity repair keeps its run's keys, and a server that
 * failed and came back empty is often the only one free to take a run.
 */
static void netram_forget_lost(struct netram_tier *nt)
{
	struct netram_recovery *rec = &nt->recovery;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++) {
		struct netram_server *srv = nt->servers[i];
		bool forgot;

		spin_lock_irq(&srv->lock);
		forgot = srv->lost_below && !srv->lost_held;
		if (forgot)
			WRITE_ONCE(srv->lost_below, 0);
		spin_unlock_irq(&srv->lock);
		if (forgot) {
			spin_lock_irq(&rec->lock);
			rec->counted_below[i] = 0;
			spin_unlock_irq(&rec->lock);
		}
	}
}

static void netram_recovery_done(struct nswap2l_move_job *job)
{
	struct netram_tier *nt = netram_recovery_tier(job);
	struct netram_recovery *rec = &nt->recovery;
	bool again;

	/* Pages repaired in place count as moved: copied again, and progress. */
	job->moved += netram_scheme_pass_done(nt);
	spin_lock_irq(&rec->lock);
	rec->moved += job->moved;
	rec->pages_lost += rec->pass_lost;
	memcpy(rec->counted_below, rec->pass_below, sizeof(rec->counted_below));
	/* A write racing a move leaves that page for the next pass. */
	again = netram_another_pass(job, &rec->idle_passes) && job->left;
	again |= rec->again;
	rec->again = false;
	rec->running = again;
	if (again)
		netram_begin_pass(nt);
	else
		rec->last_ms = jiffies_to_msecs(jiffies - rec->started);
	spin_unlock_irq(&rec->lock);

	if (again && nswap2l_queue_move(nt->tier.nc, job))
		return;
	if (again) {
		spin_lock_irq(&rec->lock);
		rec->running = false;
		spin_unlock_irq(&rec->lock);
		return;
	}
	if (job->left)
		DMERR("%s: recovery: %u pages with a lost copy could not be moved (no room elsewhere, or unreadable)",
		      netram_dev_name(nt), job->left);
	DMINFO("%s: recovery done in %llu ms: %llu pages copied again (%llu pages/s), %llu of them by server copy, %llu pages lost so far",
	       netram_dev_name(nt), rec->last_ms, rec->moved,
	       div64_u64(rec->moved * 1000, max_t(u64, rec->last_ms, 1)), rec->copied,
	       rec->pages_lost);
	netram_forget_lost(nt);
	netram_scheme_recovered(nt);
}

void netram_queue_recovery(struct netram_tier *nt)
{
	struct netram_recovery *rec = &nt->recovery;
	unsigned long flags;
	bool start;

	spin_lock_irqsave(&rec->lock, flags);
	WRITE_ONCE(rec->wanted, false);
	start = !rec->running;
	if (start) {
		rec->running = true;
		rec->started = jiffies;
		rec->moved = 0;
		rec->idle_passes = 0;
		rec->copies_off = false;
		rec->copied = 0;
		netram_begin_pass(nt);
	} else {
		rec->again = true;
	}
	spin_unlock_irqrestore(&rec->lock, flags);
	if (!start)
		return;
	rec->job.tier = &nt->tier;
	rec->job.wants = netram_recovery_wants;
	rec->job.done = netram_recovery_done;
	if (nt->scheme == &netram_mirror) {
		rec->job.new_home = netram_mirror_new_home;
		rec->job.release_old = netram_mirror_release_old;
		rec->job.relabel = netram_mirror_relabel;
		rec->job.relabels_asked = netram_mirror_relabels_asked;
		rec->job.relabel_raced = true;
	}
	if (nt->scheme == &netram_parity_scheme)
		rec->job.relabel = netram_parity_relabel;
	rec->job.rate_limited = true;
	if (!nswap2l_queue_move(nt->tier.nc, &rec->job)) {
		spin_lock_irqsave(&rec->lock, flags);
		rec->running = false;
		spin_unlock_irqrestore(&rec->lock, flags);
	}
}

static s64 netram_copies_lost(struct netram_tier *nt)
{
	s64 copies_lost = 0;
	unsigned int i;

	for (i = 0; i < netram_nr_servers(nt); i++)
		copies_lost += READ_ONCE(nt->servers[i]->lost_held);
	return copies_lost;
}

/*
 * A server is up (back, or added): a recovery that found no room for some
 * pages may find it there now.  Without redundancy nothing can be copied.
 */
void netram_retry_recovery(struct netram_tier *nt)
{
	if (netram_scheme_redundant(nt) && netram_copies_lost(nt) > 0)
		netram_queue_recovery(nt);
}

/*
 * Every key handed out so far is lost on @srv; later ones cannot go there.
 * Under srv->lock, where the server is marked failed too: status never
 * shows a failed server whose copies are not counted lost yet, nor lost
 * copies and no recovery before netram_recover_lost() queues it.
 */
s64 netram_mark_lost(struct netram_server *srv)
{
	lockdep_assert_held(&srv->lock);
	WRITE_ONCE(srv->lost_below, atomic64_read(&srv->nt->next_key) + 1);
	WRITE_ONCE(srv->lost_held, atomic64_read(&srv->held));
	WRITE_ONCE(srv->nt->recovery.wanted, true);
	return srv->lost_held;
}

/* The @lost copies marked on @srv: capacity, dmesg, and recovery. */
void netram_recover_lost(struct netram_server *srv, const char *why, s64 lost)
{
	struct netram_tier *nt = srv->nt;

	netram_update_capacity(nt);
	if (lost)
		DMERR("%s: server %s %s: the %lld pages stored there are lost%s",
		      netram_dev_name(nt), srv->name, why, lost, netram_scheme_lost_hint(nt));
	netram_queue_recovery(nt);
}

void netram_lose_copies(struct netram_server *srv, const char *why)
{
	unsigned long flags;
	s64 lost;

	spin_lock_irqsave(&srv->lock, flags);
	lost = netram_mark_lost(srv);
	spin_unlock_irqrestore(&srv->lock, flags);
	netram_recover_lost(srv, why, lost);
}

/*
 * Status: <reliability> <copies_lost> <pages_lost> <recovering> <recovery_ms>:
 * copies lost and still referenced now, pages lost ever, a recovery
 * running, and how long the last one took.
 */
void netram_emit_recovery(struct netram_tier *nt, char *result, unsigned int maxlen,
			  unsigned int *sz_ptr)
{
	struct netram_recovery *rec = &nt->recovery;
	unsigned int sz = *sz_ptr;
	s64 copies_lost = netram_copies_lost(nt);
	u64 pages_lost, last_ms;
	bool running;

	spin_lock_irq(&rec->lock);
	pages_lost = rec->pages_lost;
	running = rec->running || READ_ONCE(rec->wanted);
	last_ms = rec->last_ms;
	spin_unlock_irq(&rec->lock);
	DMEMIT(" %s %lld %llu %u %llu", netram_scheme_name(nt), copies_lost, pages_lost, running,
	       last_ms);
	*sz_ptr = sz;
}
