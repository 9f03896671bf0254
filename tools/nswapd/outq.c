// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "outq.h"

static struct outq_chunk *chunk_new(struct outq *q)
{
	struct outq_chunk *c = malloc(sizeof(*c));

	if (c) {
		c->next = NULL;
		c->start = 0;
		c->end = 0;
		if (q->usage)
			*q->usage += sizeof(*c);
	}
	return c;
}

static void chunk_free(struct outq *q, struct outq_chunk *c)
{
	if (q->usage)
		*q->usage -= sizeof(*c);
	free(c);
}

int outq_append(struct outq *q, const void *data, size_t len)
{
	const unsigned char *p = data;
	struct outq_chunk *new_chunks = NULL, **link = &new_chunks, *fill = q->tail;
	size_t room = fill ? OUTQ_CHUNK_SIZE - fill->end : 0;
	size_t in_tail = room < len ? room : len, rest = len - in_tail, n;

	/* allocate every chunk first, so that a failure leaves q untouched */
	for (n = 0; n < rest; n += OUTQ_CHUNK_SIZE) {
		*link = chunk_new(q);
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
			c->end = rest < OUTQ_CHUNK_SIZE ? rest : OUTQ_CHUNK_SIZE;
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
	return 0;
}

int outq_iov(const struct outq *q, struct iovec *iov, int max)
{
	const struct outq_chunk *c;
	int n = 0;

	for (c = q->head; c && n < max; c = c->next) {
		if (c->end == c->start)
			continue;
		iov[n].iov_base = (void *)(c->data + c->start);
		iov[n].iov_len = c->end - c->start;
		n++;
	}
	return n;
}

void outq_consume(struct outq *q, size_t n)
{
	q->bytes -= n;
	while (q->head) {
		struct outq_chunk *c = q->head;
		size_t in_chunk = c->end - c->start;

		if (n < in_chunk) {
			c->start += n;
			return;
		}
		n -= in_chunk;
		/* keep the last chunk for the next append, emptied */
		if (!c->next) {
			c->start = c->end = 0;
			return;
		}
		q->head = c->next;
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
}
