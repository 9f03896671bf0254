// SPDX-License-Identifier: GPL-2.0
/*
 * dm-latency: a benchmark's emulated flash.  Each bio waits a fixed time,
 * set in microseconds per direction, before it goes to the device below:
 *
 *   <start> <len> latency <device> <read_us> <write_us> [total]
 *
 * With "total", read_us and write_us are the latency each read or write
 * should see from its arrival here to its completion, and the wait before
 * submission follows the completions measured: the device below slows
 * with the guest's load (its emulation costs the same CPU as the
 * workload), so a fixed wait on top of it gave a flash 35 % slower under
 * swap than the one calibrated at rest.
 *
 * Why not dm-delay: it counts in milliseconds, too coarse against the
 * 0.5-2 ms reads it stands beside.  Why not QEMU's throttle: it is a rate
 * limit with a burst allowance, so queued or bursty reads do not wait.
 * Here every bio waits its own delay whatever the queue depth, as on a
 * device whose latency does not grow with load.  Not part of dm-nswap2l:
 * bench/prefetch builds it for the guest kernel.
 */
#include <linux/device-mapper.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#define DM_MSG_PREFIX "latency"

struct latency_c {
	struct dm_dev *dev;
	u64 delay_ns[2];		/* by bio_data_dir(): READ, WRITE */
	u64 total_ns[2];		/* "total": latency to keep, else 0 */
	spinlock_t lock;
	/*
	 * Per direction in arrival order, so in deadline order too, but for
	 * the steps of "total": a bio then waits for the one before it.
	 */
	struct bio_list waiting[2];
	struct hrtimer timer;		/* at the earliest deadline */
	struct workqueue_struct *wq;
	struct work_struct submit;
};

struct latency_io {
	ktime_t arrival;
	ktime_t deadline;
};

static ktime_t *deadline_of(struct bio *bio)
{
	return &((struct latency_io *)dm_per_bio_data(bio, sizeof(struct latency_io)))->deadline;
}

/*
 * "total": moves the wait by 1/16 of the gap between the latency a bio saw
 * and the one to keep, so that the mean settles on it (an integral
 * controller; one bio's jitter moves it little).  Two CPUs may lose one
 * of their steps: it only slows the settling.
 */
#define LATENCY_GAIN_SHIFT 4

static void latency_follow(struct latency_c *lc, int dir, ktime_t seen)
{
	s64 delay = READ_ONCE(lc->delay_ns[dir]);

	delay += ((s64)lc->total_ns[dir] - ktime_to_ns(seen)) >> LATENCY_GAIN_SHIFT;
	WRITE_ONCE(lc->delay_ns[dir], clamp_t(s64, delay, 0, lc->total_ns[dir]));
}

/* The earliest deadline waiting, or 0. */
static ktime_t earliest(struct latency_c *lc)
{
	ktime_t first = 0;
	int dir;

	for (dir = READ; dir <= WRITE; dir++) {
		struct bio *bio = bio_list_peek(&lc->waiting[dir]);

		if (bio && (!first || ktime_before(*deadline_of(bio), first)))
			first = *deadline_of(bio);
	}
	return first;
}

/* Sends what is due, arms the timer for the rest. */
static void latency_submit(struct work_struct *work)
{
	struct latency_c *lc = container_of(work, struct latency_c, submit);
	struct bio_list due = BIO_EMPTY_LIST;
	ktime_t now = ktime_get(), next;
	struct bio *bio;
	int dir;

	spin_lock_irq(&lc->lock);
	for (dir = READ; dir <= WRITE; dir++)
		while ((bio = bio_list_peek(&lc->waiting[dir])) &&
		       !ktime_after(*deadline_of(bio), now))
			bio_list_add(&due, bio_list_pop(&lc->waiting[dir]));
	next = earliest(lc);
	if (next)
		hrtimer_start(&lc->timer, next, HRTIMER_MODE_ABS);
	spin_unlock_irq(&lc->lock);

	while ((bio = bio_list_pop(&due)))
		submit_bio_noacct(bio);
}

/* Timer context: bios are submitted from process context. */
static enum hrtimer_restart latency_timer(struct hrtimer *timer)
{
	struct latency_c *lc = container_of(timer, struct latency_c, timer);

	queue_work(lc->wq, &lc->submit);
	return HRTIMER_NORESTART;
}

static void latency_dtr(struct dm_target *ti)
{
	struct latency_c *lc = ti->private;

	hrtimer_cancel(&lc->timer);
	if (lc->wq)
		destroy_workqueue(lc->wq);
	if (lc->dev)
		dm_put_device(ti, lc->dev);
	kfree(lc);
}

static int latency_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct latency_c *lc;
	unsigned int us[2];
	bool total = false;
	int dir, ret;

	if (argc == 4 && !strcmp(argv[3], "total"))
		total = true;
	else if (argc != 3) {
		ti->error = "expected <device> <read_us> <write_us> [total]";
		return -EINVAL;
	}
	if (kstrtouint(argv[1], 10, &us[READ]) || kstrtouint(argv[2], 10, &us[WRITE])) {
		ti->error = "read_us and write_us must be whole microseconds";
		return -EINVAL;
	}
	lc = kzalloc(sizeof(*lc), GFP_KERNEL);
	if (!lc) {
		ti->error = "out of memory";
		return -ENOMEM;
	}
	ti->private = lc;
	spin_lock_init(&lc->lock);
	for (dir = READ; dir <= WRITE; dir++) {
		lc->delay_ns[dir] = (u64)us[dir] * NSEC_PER_USEC;
		if (total)
			lc->total_ns[dir] = lc->delay_ns[dir];
		bio_list_init(&lc->waiting[dir]);
	}
	hrtimer_init(&lc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	lc->timer.function = latency_timer;
	INIT_WORK(&lc->submit, latency_submit);
	ret = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &lc->dev);
	if (ret) {
		ti->error = "cannot open the device";
		goto bad;
	}
	/* on the swap-out path: must make progress under memory pressure */
	lc->wq = alloc_workqueue("dm-latency", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!lc->wq) {
		ti->error = "cannot allocate the workqueue";
		ret = -ENOMEM;
		goto bad;
	}
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->per_io_data_size = sizeof(struct latency_io);
	return 0;
bad:
	latency_dtr(ti);
	return ret;
}

static int latency_map(struct dm_target *ti, struct bio *bio)
{
	struct latency_c *lc = ti->private;
	struct latency_io *io = dm_per_bio_data(bio, sizeof(*io));
	int dir = bio_data_dir(bio);
	u64 delay = READ_ONCE(lc->delay_ns[dir]);
	unsigned long flags;
	ktime_t first;

	io->arrival = ktime_get();
	bio_set_dev(bio, lc->dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	if (!delay)
		return DM_MAPIO_REMAPPED;

	io->deadline = ktime_add_ns(io->arrival, delay);
	spin_lock_irqsave(&lc->lock, flags);
	first = earliest(lc);
	bio_list_add(&lc->waiting[dir], bio);
	if (!first || ktime_before(*deadline_of(bio), first))
		hrtimer_start(&lc->timer, *deadline_of(bio), HRTIMER_MODE_ABS);
	spin_unlock_irqrestore(&lc->lock, flags);
	return DM_MAPIO_SUBMITTED;
}

static int latency_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct latency_c *lc = ti->private;
	struct latency_io *io = dm_per_bio_data(bio, sizeof(*io));
	enum req_op op = bio_op(bio);

	if (lc->total_ns[bio_data_dir(bio)] && !*error &&
	    (op == REQ_OP_READ || op == REQ_OP_WRITE))
		latency_follow(lc, bio_data_dir(bio), ktime_sub(ktime_get(), io->arrival));
	return DM_ENDIO_DONE;
}

static void latency_status(struct dm_target *ti, status_type_t type,
			   unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct latency_c *lc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		/* the waits now (with "total", where they have settled) */
		DMEMIT("%llu %llu", READ_ONCE(lc->delay_ns[READ]) / NSEC_PER_USEC,
		       READ_ONCE(lc->delay_ns[WRITE]) / NSEC_PER_USEC);
		break;
	case STATUSTYPE_TABLE:
		if (lc->total_ns[READ] || lc->total_ns[WRITE])
			DMEMIT("%s %llu %llu total", lc->dev->name, lc->total_ns[READ] / NSEC_PER_USEC,
			       lc->total_ns[WRITE] / NSEC_PER_USEC);
		else
			DMEMIT("%s %llu %llu", lc->dev->name, lc->delay_ns[READ] / NSEC_PER_USEC,
			       lc->delay_ns[WRITE] / NSEC_PER_USEC);
		break;
	default:
		result[0] = '\0';
		break;
	}
}

static int latency_iterate_devices(struct dm_target *ti, iterate_devices_callout_fn fn, void *data)
{
	struct latency_c *lc = ti->private;

	return fn(ti, lc->dev, 0, ti->len, data);
}

static struct target_type latency_target = {
	.name = "latency",
	.version = {1, 1, 0},
	.module = THIS_MODULE,
	.ctr = latency_ctr,
	.dtr = latency_dtr,
	.map = latency_map,
	.end_io = latency_end_io,
	.status = latency_status,
	.iterate_devices = latency_iterate_devices,
};

static int __init dm_latency_init(void)
{
	return dm_register_target(&latency_target);
}

static void __exit dm_latency_exit(void)
{
	dm_unregister_target(&latency_target);
}

module_init(dm_latency_init);
module_exit(dm_latency_exit);

MODULE_DESCRIPTION(DM_NAME " target that delays every bio by a fixed time (benchmarks)");
MODULE_LICENSE("GPL");
