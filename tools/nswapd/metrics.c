// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "status.h"

/* The request line's target, without its query string: the metrics' only path. */
#define METRICS_PATH "/metrics"

enum metrics_request metrics_parse_request(const char *buf, size_t len)
{
	const char *line_end, *sp1, *sp2, *target_end;
	size_t line_len;

	if (!memmem(buf, len, "\r\n\r\n", 4) && !memmem(buf, len, "\n\n", 2))
		return len >= METRICS_REQUEST_MAX ? METRICS_BAD : METRICS_INCOMPLETE;
	line_end = memchr(buf, '\n', len);
	line_len = (size_t)(line_end - buf);
	if (line_len && buf[line_len - 1] == '\r')
		line_len--;
	/* METHOD SP TARGET SP HTTP/1.x */
	sp1 = memchr(buf, ' ', line_len);
	if (!sp1)
		return METRICS_BAD;
	sp2 = memchr(sp1 + 1, ' ', line_len - (size_t)(sp1 + 1 - buf));
	if (!sp2 || sp2 == sp1 + 1 || sp1[1] != '/' ||
	    (size_t)(buf + line_len - (sp2 + 1)) != strlen("HTTP/1.1") || memcmp(sp2 + 1, "HTTP/1.", 7))
		return METRICS_BAD;
	if ((size_t)(sp1 - buf) != 3 || memcmp(buf, "GET", 3))
		return METRICS_BAD_METHOD;
	target_end = memchr(sp1 + 1, '?', (size_t)(sp2 - (sp1 + 1)));
	if (!target_end)
		target_end = sp2;
	if ((size_t)(target_end - (sp1 + 1)) != strlen(METRICS_PATH) ||
	    memcmp(sp1 + 1, METRICS_PATH, strlen(METRICS_PATH)))
		return METRICS_NOT_FOUND;
	return METRICS_GET;
}

static int copy_out(void *arg, const void *data, size_t len)
{
	char **end = arg;

	memcpy(*end, data, len);
	*end += len;
	return 0;
}

/* The queued bytes of q as one NUL-terminated string, or NULL. */
static char *outq_string(struct outq *q)
{
	char *s = malloc(q->bytes + 1), *end = s;

	if (!s)
		return NULL;
	outq_drain(q, copy_out, &end);
	*end = '\0';
	return s;
}

static int append_to(void *arg, const void *data, size_t len)
{
	return outq_append(arg, data, len);
}

static int respond(struct outq *out, const char *status, const char *extra_header, struct outq *body)
{
	char header[256];
	int n = snprintf(header, sizeof(header),
			 "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			 "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
			 status, body->bytes, extra_header);

	if (n < 0 || (size_t)n >= sizeof(header) || outq_append(out, header, (size_t)n))
		return -1;
	return outq_drain(body, append_to, out);
}

int metrics_respond(const struct server *srv, const char *listen_desc, enum metrics_request req,
		    struct outq *out)
{
	struct outq report = { 0 }, body = { 0 };
	const char *status = "200 OK", *extra = "";
	char *text = NULL;
	int ret = -1;

	switch (req) {
	case METRICS_GET:
		if (status_render(srv, listen_desc, &report))
			goto out;
		text = outq_string(&report);
		if (!text || status_prometheus(text, &body))
			goto out;
		break;
	case METRICS_NOT_FOUND:
		status = "404 Not Found";
		if (outq_append(&body, "not found: the metrics are at " METRICS_PATH "\n",
				strlen("not found: the metrics are at " METRICS_PATH "\n")))
			goto out;
		break;
	case METRICS_BAD_METHOD:
		status = "405 Method Not Allowed";
		extra = "Allow: GET\r\n";
		break;
	default:
		status = "400 Bad Request";
		break;
	}
	ret = respond(out, status, extra, &body);
out:
	free(text);
	outq_clear(&report);
	outq_clear(&body);
	return ret;
}
