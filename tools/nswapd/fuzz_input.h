/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout of a fuzz_parser input, shared with fuzz_seeds.c, which writes the
 * seed corpus.  An input is FUZZ_CONFIG_SIZE bytes of configuration, then
 * the bytes a client sends on one connection:
 *
 *   [0] flags: FUZZ_KEYED (check MACs against fuzz_key; else
 *       --insecure-no-auth), FUZZ_LAZY_READER (the peer reads replies only
 *       when the server holds back: exercises the output backlog),
 *       FUZZ_MEMORY_FLICKERS (memory cannot be read at every other tick)
 *   [1] bytes per read - 1
 *   [2] reads between ticks - 1 (low 4 bits)
 *   [3] --max in units of 4 pages, 0: none
 *   [4..5] available memory in pages, little-endian (the reserve is
 *       FUZZ_RESERVE_PAGES, so below that the server is over its limit)
 *   [6] signed change of available pages at each tick
 *   [7] milliseconds per tick / 100 (grace, handshake, idle, message and
 *       eviction timers)
 *
 * Server nonces are all zero, so a seed can carry a valid client MAC, and
 * EVICT tags count up from 1, so a seed can answer them.
 */
#ifndef NSWAPD_FUZZ_INPUT_H
#define NSWAPD_FUZZ_INPUT_H

#include <stdint.h>

#define FUZZ_CONFIG_SIZE 8
#define FUZZ_FLAGS 0
#define FUZZ_READ_SIZE 1
#define FUZZ_TICK_EVERY 2
#define FUZZ_MAX 3
#define FUZZ_AVAIL 4
#define FUZZ_AVAIL_STEP 6
#define FUZZ_TICK_MS 7

#define FUZZ_KEYED 1
#define FUZZ_LAZY_READER 2
#define FUZZ_MEMORY_FLICKERS 4

#define FUZZ_RESERVE_PAGES 64
#define FUZZ_GRACE_MS 1000
/* in reach of a few long ticks; the budget under CONN_OUTPUT_HIGH, so that it holds back first */
#define FUZZ_IDLE_TIMEOUT_MS 60000
#define FUZZ_MESSAGE_TIMEOUT_MS 30000
#define FUZZ_BUFFER_BUDGET (2u << 20)

static const uint8_t fuzz_key[16] = "fuzz-shared-key!";

#endif
