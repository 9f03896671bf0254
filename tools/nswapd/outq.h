/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A connection's queue of bytes to send: a list of fixed-size chunks, so
 * appending never moves what is queued and sending takes one writev.
 */
#ifndef NSWAPD_OUTQ_H
#define NSWAPD_OUTQ_H

#include <stddef.h>
#include <sys/uio.h>

#define OUTQ_CHUNK_SIZE (64 * 1024)

struct outq_chunk {
	struct outq_chunk *next;
	size_t start, end;		/* unsent bytes are data[start..end) */
	unsigned char data[OUTQ_CHUNK_SIZE];
};

struct outq {
	struct outq_chunk *head, *tail;
	size_t bytes;			/* queued, not yet sent */
	size_t *usage;			/* if set, chunk memory is added up there */
};

/* Returns 0, or -1 when out of memory (then nothing was queued). */
int outq_append(struct outq *q, const void *data, size_t len);
/* Fills at most max iovecs with the queued bytes; returns how many. */
int outq_iov(const struct outq *q, struct iovec *iov, int max);
/* Drops the first n queued bytes (they were sent). */
void outq_consume(struct outq *q, size_t n);
void outq_clear(struct outq *q);

#endif
