/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version shims for dm-nswap2l.  Every difference between the kernels
 * we build for (Debian 12's 6.1 and 6.12) lives here and nowhere else.
 */
#ifndef NSWAP2L_COMPAT_H
#define NSWAP2L_COMPAT_H

#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/net.h>
#include <linux/version.h>
#include <net/sock.h>

/*
 * 6.9 split the discard limit into a hardware limit, set by drivers, and a
 * user limit; the effective max_discard_sectors is derived from both.
 */
static inline void nswap2l_set_max_discard_sectors(struct queue_limits *limits,
						   unsigned int sectors)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	limits->max_hw_discard_sectors = sectors;
#else
	limits->max_discard_sectors = sectors;
	limits->max_hw_discard_sectors = sectors;
#endif
}

/*
 * Send page segments without copying them where the kernel can: sendpage
 * until 6.5 replaced it with MSG_SPLICE_PAGES.  A page that may not be
 * spliced (sendpage_ok(): slab pages, pages nobody holds) is copied.
 * Returns bytes sent (maybe fewer than asked) or a negative error.
 */
static inline int nswap2l_send_pages(struct socket *sock, struct bio_vec *bvecs,
				     unsigned int nr, size_t len, int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!sendpage_ok(bvecs[i].bv_page)) {
			msg.msg_flags &= ~MSG_SPLICE_PAGES;
			break;
		}
	}
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bvecs, nr, len);
	return sock_sendmsg(sock, &msg);
#else
	size_t sent = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		struct bio_vec *bv = &bvecs[i];
		int more = i + 1 < nr ? MSG_MORE | MSG_SENDPAGE_NOTLAST : 0;
		int r = sendpage_ok(bv->bv_page) ?
			kernel_sendpage(sock, bv->bv_page, bv->bv_offset, bv->bv_len, flags | more) :
			sock_no_sendpage(sock, bv->bv_page, bv->bv_offset, bv->bv_len, flags | more);

		if (r <= 0)
			return sent ? sent : r;
		sent += r;
		if (r < bv->bv_len)
			break;
	}
	return sent;
#endif
}

/*
 * Pages that must not change while they are written (stable writes): 6.11
 * made that a queue limits feature, which a target sets in io_hints.
 * Before, dm sets or clears the queue flag from the table's devices at
 * each load, before the targets resume: a target that needs it sets it
 * again when it resumes (swapon and mount read it).
 */
static inline void nswap2l_limit_stable_writes(struct queue_limits *limits)
{
#ifdef BLK_FEAT_STABLE_WRITES
	limits->features |= BLK_FEAT_STABLE_WRITES;
#endif
}

static inline void nswap2l_resume_stable_writes(struct dm_target *ti)
{
#ifndef BLK_FEAT_STABLE_WRITES
	blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, dm_disk(dm_table_get_md(ti->table))->queue);
#endif
}

#endif /* NSWAP2L_COMPAT_H */
