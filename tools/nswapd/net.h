/* SPDX-License-Identifier: GPL-2.0 */
/* Sockets and the single-threaded epoll event loop. */
#ifndef NSWAPD_NET_H
#define NSWAPD_NET_H

#include <netinet/in.h>
#include <stddef.h>

struct server;

/* Period of server_tick(): memory sampling, grace expiry, eviction. */
#define NET_TICK_MS 250

/*
 * Opens the TCP listening socket; *addr gets the bound address (the port
 * chosen when it was 0).  Returns the socket, or -1 with a message in err.
 */
int net_listen_tcp(struct sockaddr_in *addr, char *err, size_t err_size);
/*
 * Opens the status socket at path, creating its directory; refuses a path
 * where another nswapd answers.  Returns the socket, or -1 with err.
 */
int net_listen_unix(const char *path, char *err, size_t err_size);
/*
 * Serves until SIGTERM or SIGINT (metrics_fd: the --metrics listener, or
 * -1); returns 0, or 1 after a fatal error.
 */
int net_run(struct server *srv, int listen_fd, int status_fd, int metrics_fd, const char *listen_desc);

#endif
