/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A connection's queue of bytes to send: a list of chunks, so appending
 * never moves what is queued and sending takes one writev.  Chunks are
 * sized for the message being queued (between OUTQ_MIN_CHUNK and
 * OUTQ_CHUNK_SIZE bytes) and freed as soon as they are sent, so that an
 * idle connection holds no output memory and a small reply little.
 */
#ifndef NSWAPD_OUTQ_H
#define NSWAPD_OUTQ_H

#include <stddef.h>
#include <sys/uio.h>

#define OUTQ_CHUNK_SIZE (64 * 1024)
#define OUTQ_MIN_CHUNK 4000

struct outq_chunk {
	struct outq_chunk *next;
	size_t start, end;		/* unsent bytes are data[start..end) */
	size_t size;			/* of data */
	unsigned char data[];
};

struct outq {
	struct outq_chunk *head, *tail;
	size_t bytes;			/* queued, not yet sent */
	size_t expected;		/* of the message being queued, not appended yet */
	/* if set, told of the memory of every chunk allocated (> 0) or freed (< 0) */
	void (*charge)(struct outq *q, ptrdiff_t bytes);
};

/*
 * The next len bytes appended form one message: new chunks are sized for
 * all of it, not for each piece.
 */
void outq_expect(struct outq *q, size_t len);
/* The chunk memory that appending a message of len bytes would allocate. */
size_t outq_append_cost(const struct outq *q, size_t len);
/* Returns 0, or -1 when out of memory (then nothing was queued). */
int outq_append(struct outq *q, const void *data, size_t len);
/* Fills at most max iovecs with the queued bytes; returns how many. */
int outq_iov(const struct outq *q, struct iovec *iov, int max);
/* Drops the first n queued bytes (they were sent), and the chunks they emptied. */
void outq_consume(struct outq *q, size_t n);
void outq_clear(struct outq *q);
/*
 * Hands the queued bytes to sink(arg, data, len) chunk by chunk, in order,
 * dropping each once taken; stops at the first sink that returns nonzero
 * and returns -1 (what it was given stays queued), else 0.
 */
int outq_drain(struct outq *q, int (*sink)(void *arg, const void *data, size_t len), void *arg);

#endif
