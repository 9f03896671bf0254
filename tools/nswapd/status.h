/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The status report: nswapd writes it to whoever connects to its status
 * socket; nswapd --stats reads it and prints it for people or as JSON.
 *
 * The report is lines of "record key=value ...": first "nswapd-status 1",
 * then one "server" record, one "namespace" record per namespace, and
 * "end".  Values have no spaces; "none" means no value.
 */
#ifndef NSWAPD_STATUS_H
#define NSWAPD_STATUS_H

#include <stdbool.h>

#include "outq.h"

struct server;

/* Returns 0, or -1 when out of memory. */
int status_render(const struct server *srv, const char *listen_desc, struct outq *out);
enum status_format { STATUS_TEXT, STATUS_JSON, STATUS_PROMETHEUS };

/*
 * Prometheus text of a status report (modified in place) appended to out:
 * 0, or -1 for a report not whole or out of memory.
 */
int status_prometheus(char *report, struct outq *out);
/* nswapd --stats: returns the exit status. */
int status_query(const char *socket_path, enum status_format format);

#endif
