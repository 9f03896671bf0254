/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How much more memory this machine (and the memory cgroups nswapd runs
 * in) can give before it has to reclaim: the input of the adaptive limit.
 */
#ifndef NSWAPD_MEMWATCH_H
#define NSWAPD_MEMWATCH_H

#include <stdint.h>

#define MEM_UNKNOWN UINT64_MAX

struct mem_sample {
	uint64_t mem_available;		/* /proc/meminfo MemAvailable, bytes */
	uint64_t cgroup_headroom;	/* smallest limit - working set of the
					   memory cgroups above us, or MEM_UNKNOWN */
	uint64_t available;		/* the smaller of the two */
	/*
	 * Why a source could not be read or parsed, "" when all could: then
	 * the numbers above say nothing and the server takes no new pages.
	 */
	char unknown_why[192];
};

/*
 * A missing cgroup file means no limit there; a missing or garbled
 * MemAvailable, or any other failure to read (EMFILE, EACCES...), means
 * the sample is unknown.
 *
 * memavailable_file: NULL for the real sources, or a file in /proc/meminfo
 * format to take MemAvailable from instead, cgroups ignored (for tests).
 */
void memwatch_setup(const char *memavailable_file);
void memwatch_sample(struct mem_sample *sample);
/* MemTotal (of the memavailable_file when given): 0, or -errno (-EINVAL: none). */
int memwatch_total(uint64_t *bytes);

#endif
