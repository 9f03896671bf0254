/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --metrics endpoint: an HTTP GET of /metrics, answered with the
 * status report as Prometheus text (status_prometheus()), then closed.
 * Nothing else is served: any other path is 404, any other method 405,
 * anything that is not an HTTP/1.x request line 400.
 */
#ifndef NSWAPD_METRICS_H
#define NSWAPD_METRICS_H

#include <stddef.h>

#include "outq.h"

struct server;

/* A request's line and headers, at most: a longer one is refused (400). */
#define METRICS_REQUEST_MAX 4096

enum metrics_request {
	METRICS_INCOMPLETE,	/* the headers have not ended yet */
	METRICS_GET,
	METRICS_NOT_FOUND,
	METRICS_BAD_METHOD,
	METRICS_BAD,
};

/* What the len bytes received (no NUL needed) ask for. */
enum metrics_request metrics_parse_request(const char *buf, size_t len);
/* The whole HTTP response to req; 0, or -1 when out of memory. */
int metrics_respond(const struct server *srv, const char *listen_desc, enum metrics_request req,
		    struct outq *out);

#endif
