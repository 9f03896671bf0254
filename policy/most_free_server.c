// SPDX-License-Identifier: GPL-2.0
/*
 * Server choice "most_free": a new page goes to the Network RAM server that
 * last said it has the most room (Nswap's IP table: each reply carries the
 * server's free capacity, so the choice needs no central directory).
 */
#include "../nswap2l.h"

static int most_free_pick(const s64 *free_pages, unsigned int nr, unsigned long candidates)
{
	int best = -ENOSPC;
	s64 best_free = 0;
	unsigned int i;

	for_each_set_bit(i, &candidates, nr) {
		if (free_pages[i] > best_free) {
			best = i;
			best_free = free_pages[i];
		}
	}
	return best;
}

const struct nswap2l_server_choice nswap2l_most_free_server = {
	.name = "most_free",
	.pick = most_free_pick,
};
