/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by nswapd and nswap-probe. */
#ifndef NSWAPD_UTIL_H
#define NSWAPD_UTIL_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a numeric IPv4 "a.b.c.d:port"; returns 0 or -1. */
int parse_ipv4_endpoint(const char *text, struct sockaddr_in *addr);
/* Parses bytes with an optional K, M, G or T suffix (powers of 1024). */
int parse_size(const char *text, uint64_t *bytes);
/* Parses a whole decimal number no larger than max. */
int parse_uint(const char *text, uint64_t max, uint64_t *value);
/* Formats bytes as "12.3 MiB" into buf. */
const char *format_bytes(uint64_t bytes, char *buf, size_t size);
/*
 * Reads a file of at most size - 1 bytes into buf (size - 1 + 1 read says
 * that it is longer); *len is what was read.  0, or -1 with errno set.
 */
int read_small_file(const char *path, void *buf, size_t size, size_t *len);
/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t monotonic_ms(void);

#endif
