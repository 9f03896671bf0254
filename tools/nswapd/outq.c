// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "outq.h"

static size_t chunk_memory(const struct outq_chunk *c)
{
	return sizeof(*c) + c->size;
}

/* The data size of a new chunk for len bytes still to come. */
static size_t chunk_size_for(size_t len)
{
	if (len < OUTQ_MIN_CHUNK)
		return OUTQ_MIN_CHUNK;
	return len < OUTQ_CHUNK_SIZE ? len : OUTQ_CHUNK_SIZE;
}

static struct outq_chunk *chunk_new(struct outq *q, size_t size)
{
	struct outq_chunk *c = malloc(sizeof(*c) + size);

	if (c) {
		c->next = NULL;
		c->start = 0;
		c->end = 0;
		c->size = size;
		if (q->charge)
			q->charge(q, (ptrdiff_t)chunk_memory(c));
	}
	return c;
}

static void chunk_free(struct outq *q, struct outq_chunk *c)
{
	if (q->charge)
		q->charge(q, -(ptrdiff_t)chunk_memory(c));
	free(c);
}

static size_t tail_room(const struct outq *q)
{
	return q->tail ? q->tail->size - q->tail->end : 0;
}

void outq_expect(struct outq *q, size_t len)
{
	q->expected = len;
}

size_t outq_append_cost(const struct outq *q, size_t len)
{
	size_t room = tail_room(q), rest = len > room ? len - room : 0, cost = 0;

	while (rest) {
		size_t size = chunk_size_for(rest);

		cost += sizeof(struct outq_chunk) + size;
		rest -= size < rest ? size : rest;
	}
	return cost;
}

int outq_append(struct outq *q, const void *data, size_t len)
{
	const unsigned char *p = data;
	struct outq_chunk *new_chunks = NULL, **link = &new_chunks, *fill = q->tail;
	size_t in_tail = tail_room(q) < len ? tail_room(q) : len, rest = len - in_tail;
	/* chunks for the rest of the whole message, when this is a piece of it */
	size_t planned = q->expected > len ? q->expected - in_tail : rest, n, size;

	/* allocate every chunk first, so that a failure leaves q untouched */
	for (n = 0; n < rest; n += size) {
		size = chunk_size_for(planned - n);
		*link = chunk_new(q, size);
		if (!*link) {
			while (new_chunks) {
				struct outq_chunk *next = new_chunks->next;

				chunk_free(q, new_chunks);
				new_chunks = next;
			}
			return -1;
		}
		link = &(*link)->next;
	}
	if (in_tail) {
		memcpy(fill->data + fill->end, p, in_tail);
		fill->end += in_tail;
		p += in_tail;
	}
	if (new_chunks) {
		struct outq_chunk *c;

		for (c = new_chunks; c; c = c->next) {
			c->end = rest < c->size ? rest : c->size;
			memcpy(c->data, p, c->end);
			p += c->end;
			rest -= c->end;
			q->tail = c;
		}
		if (fill)
			fill->next = new_chunks;
		else
			q->head = new_chunks;
	}
	q->bytes += len;
	q->expected = q->expected > len ? q->expected - len : 0;
	return 0;
}

int outq_iov(const struct outq *q, struct iovec *iov, int max)
{
	const struct outq_chunk *c;
	int n = 0;

	for (c = q->head; c && n < max; c = c->next) {
		iov[n].iov_base = (void *)(c->data + c->start);
		iov[n].iov_len = c->end - c->start;
		n++;
	}
	return n;
}

void outq_consume(struct outq *q, size_t n)
{
	q->bytes -= n;
	while (n) {
		struct outq_chunk *c = q->head;
		size_t in_chunk = c->end - c->start;

		if (n < in_chunk) {
			c->start += n;
			return;
		}
		n -= in_chunk;
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		chunk_free(q, c);
	}
}

void outq_clear(struct outq *q)
{
	while (q->head) {
		struct outq_chunk *next = q->head->next;

		chunk_free(q, q->head);
		q->head = next;
	}
	q->tail = NULL;
	q->bytes = 0;
	q->expected = 0;
}

int outq_drain(struct outq *q, int (*sink)(void *arg, const void *data, size_t len), void *arg)
{
	while (q->bytes) {
		const struct outq_chunk *c = q->head;
		size_t len = c->end - c->start;

		if (sink(arg, c->data + c->start, len))
			return -1;
		outq_consume(q, len);
	}
	return 0;
}
