// SPDX-License-Identifier: GPL-2.0
/*
 * Server choice "most_free": a new page goes to the Network RAM server that
 * last said it has the most room (Nswap's IP table: each reply carries the
 * server's free capacity, so the choice needs no central directory).  Of
 * servers that say the same, the one that holds fewest of our pages: a
 * server may round what it says (nswapd does, so that it tells nothing of
 * other clients), and equal servers must still share the pages.
 */
#include "../policy.h"

static int most_free_pick(const struct nswap2l_server_room *rooms, unsigned int nr,
			  unsigned long candidates)
{
	const struct nswap2l_server_room *best_room = NULL;
	int best = -ENOSPC;
	unsigned int i;

	for_each_set_bit(i, &candidates, nr) {
		const struct nswap2l_server_room *room = &rooms[i];

		if (room->free <= 0)
			continue;
		if (!best_room || room->free > best_room->free ||
		    (room->free == best_room->free && room->held < best_room->held)) {
			best = i;
			best_room = room;
		}
	}
	return best;
}

const struct nswap2l_server_choice nswap2l_most_free_server = {
	.name = "most_free",
	.pick = most_free_pick,
};
