/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version shims for dm-nswap2l.  Every difference between the kernels
 * we build for (Debian 12's 6.1 and 6.12) lives here and nowhere else.
 */
#ifndef NSWAP2L_COMPAT_H
#define NSWAP2L_COMPAT_H

#include <linux/blkdev.h>
#include <linux/version.h>

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

#endif /* NSWAP2L_COMPAT_H */
