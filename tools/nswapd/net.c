// SPDX-License-Identifier: GPL-2.0
/*
 * One thread, level-triggered epoll, non-blocking sockets.  A client
 * socket is polled for input only while its connection takes input (not
 * closing, output backlog under its share, room in the buffer budget:
 * conn_wants_input()) and for output only while it has some queued, so
 * one slow or hostile client never holds up another.  Connections that
 * wait for room in the budget are looked at again as soon as buffers
 * shrink.  The status socket serves at most STATUS_MAX_CLIENTS at once,
 * each for at most STATUS_SEND_TIMEOUT_MS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "net.h"
#include "peer.h"
#include "server.h"
#include "metrics.h"
#include "status.h"
#include "util.h"

#define MAX_EVENTS 64
#define READS_PER_EVENT 4	/* then let other sockets have a turn */
#define SEND_IOVECS 16
/*
 * Status clients at once (descriptors: main.c keeps SPARE_FDS for them and
 * the daemon's own), and the time each has to take its report.
 */
#define STATUS_MAX_CLIENTS 4
#define STATUS_SEND_TIMEOUT_MS 5000
/* --metrics clients likewise: each has that time to ask and take its answer */
#define METRICS_MAX_CLIENTS 4

enum endpoint_kind {
	EP_LISTENER,
	EP_STATUS_LISTENER,
	EP_SIGNALS,
	EP_CLIENT,
	EP_STATUS_CLIENT,
	EP_PEERS,		/* the --peer connections' own epoll descriptor (peer.c) */
	EP_METRICS_LISTENER,
	EP_METRICS_CLIENT,
};

struct endpoint {
	enum endpoint_kind kind;
	int fd;
	uint32_t events;		/* what epoll watches for */
	struct conn *conn;		/* EP_CLIENT */
	struct outq out;		/* EP_STATUS_CLIENT: the report; EP_METRICS_CLIENT: the answer */
	uint64_t opened_ms;		/* EP_STATUS_CLIENT, EP_METRICS_CLIENT */
	char *request;			/* EP_METRICS_CLIENT, until it has asked */
	size_t request_len;
	struct list_head link;		/* clients and status clients */
};

struct loop {
	struct server *srv;
	int epfd;
	const char *listen_desc;
	struct endpoint listener, status_listener, signals, peers, metrics_listener;
	struct list_head endpoints;
	struct list_head closed;	/* freed after the events fetched with them */
	bool accept_paused;		/* until the next tick */
	uint64_t accept_warned_ms;	/* when accept last failed with a warning */
	unsigned int status_clients, metrics_clients;
	bool stop;
};

int net_listen_tcp(struct sockaddr_in *addr, char *err, size_t err_size)
{
	socklen_t len = sizeof(*addr);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)addr, sizeof(*addr)) || listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)addr, &len)) {
		snprintf(err, err_size, "cannot listen on %s:%u: %s", inet_ntoa(addr->sin_addr),
			 ntohs(addr->sin_port), strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int net_listen_unix(const char *path, char *err, size_t err_size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[sizeof(addr.sun_path)];
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, err_size, "status socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	strcpy(dir, path);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST) {
		snprintf(err, err_size, "cannot create the directory of %s: %s", path, strerror(errno));
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_size, "socket: %s", strerror(errno));
		return -1;
	}
	/* a socket file nobody answers on is left over from a crash: replace it */
	if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		snprintf(err, err_size, "another nswapd answers on %s", path);
		close(fd);
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || chmod(path, 0600) ||
	    listen(fd, 16)) {
		snprintf(err, err_size, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void watch(struct loop *loop, struct endpoint *ep, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = ep };

	if (events == ep->events)
		return;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, ep->fd, &ev))
		log_error("epoll_ctl: %s", strerror(errno));
	ep->events = events;
}

static int watch_new(struct loop *loop, struct endpoint *ep, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = ep };

	ep->events = events;
	return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, ep->fd, &ev);
}

/*
 * An endpoint closed for another one's sake may have events waiting in
 * the batch being handled: it is freed after the batch, ignored till then.
 */
static void endpoint_close(struct loop *loop, struct endpoint *ep)
{
	list_del(&ep->link);
	close(ep->fd);
	ep->fd = -1;
	if (ep->conn) {
		log_debug("peer %s: connection closed", ep->conn->peer);
		conn_close(ep->conn);
		ep->conn = NULL;
	}
	if (ep->kind == EP_STATUS_CLIENT)
		loop->status_clients--;
	if (ep->kind == EP_METRICS_CLIENT)
		loop->metrics_clients--;
	free(ep->request);
	ep->request = NULL;
	outq_clear(&ep->out);
	list_add(&ep->link, &loop->closed);
}

static void free_closed(struct loop *loop)
{
	while (!list_empty(&loop->closed)) {
		struct endpoint *ep = list_first_entry(&loop->closed, struct endpoint, link);

		list_del(&ep->link);
		free(ep);
	}
}

/* Sends what fits; returns false when the socket failed. */
static bool send_queued(int fd, struct outq *q)
{
	while (q->bytes) {
		struct iovec iov[SEND_IOVECS];
		struct msghdr msg = { .msg_iov = iov };
		ssize_t n;

		msg.msg_iovlen = (size_t)outq_iov(q, iov, SEND_IOVECS);
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			outq_consume(q, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
	return true;
}

/* Reads what the connection takes; returns false at end of stream or error. */
static bool receive(struct endpoint *ep)
{
	int i;

	for (i = 0; i < READS_PER_EVENT; i++) {
		size_t room;
		uint8_t *buf = conn_read_space(ep->conn, &room);
		ssize_t n;

		if (!room)
			return true;
		n = recv(ep->fd, buf, room, MSG_DONTWAIT);
		if (n > 0) {
			conn_received(ep->conn, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			log_debug("peer %s: receive: %s", ep->conn->peer, strerror(errno));
		return false;
	}
	return true;
}

/*
 * Sends, handles requests held back by the output backlog, repeats while
 * that produced output; then closes the connection or sets what to poll.
 */
static void service_client(struct loop *loop, struct endpoint *ep, bool open)
{
	struct conn *conn = ep->conn;

	for (;;) {
		size_t queued;

		if (!send_queued(ep->fd, &conn->out)) {
			open = false;
			break;
		}
		queued = conn->out.bytes;
		conn_process(conn);
		if (conn->out.bytes == queued)
			break;
	}
	if (!open || (conn->state == CONN_CLOSING && !conn_flushing(conn))) {
		endpoint_close(loop, ep);
		return;
	}
	watch(loop, ep, (conn_wants_input(conn) ? EPOLLIN : 0) | (conn->out.bytes ? EPOLLOUT : 0));
}

static struct endpoint *endpoint_of(struct loop *loop, const struct conn *conn)
{
	struct endpoint *ep;

	list_for_each_entry(ep, &loop->endpoints, link)
		if (ep->conn == conn)
			return ep;
	return NULL;
}

/*
 * Out of file descriptors: try again at the next tick rather than spin on
 * a listener that stays readable, and say so now and then, not at every try.
 */
static void pause_accepting(struct loop *loop)
{
	uint64_t now = loop->srv->now_ms;

	if (!loop->accept_warned_ms || now - loop->accept_warned_ms >= LIMITS_LOG_INTERVAL_MS) {
		log_warn("cannot accept connections: %s; trying again every %d ms",
			 strerror(errno), NET_TICK_MS);
		loop->accept_warned_ms = now;
	}
	loop->accept_paused = true;
	watch(loop, &loop->listener, 0);
	watch(loop, &loop->status_listener, 0);
	if (loop->metrics_listener.fd >= 0)
		watch(loop, &loop->metrics_listener, 0);
}

/* Whether accept4() failed for want of descriptors or memory. */
static bool out_of_resources(int error)
{
	return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
}

static void accept_clients(struct loop *loop)
{
	for (;;) {
		struct sockaddr_in addr;
		socklen_t len = sizeof(addr);
		struct endpoint *ep;
		struct conn *victim;
		char peer[64];
		int fd, one = 1;

		fd = accept4(loop->listener.fd, (struct sockaddr *)&addr, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (out_of_resources(errno))
				pause_accepting(loop);
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				 errno != ECONNABORTED)
				log_warn("accept: %s", strerror(errno));
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		snprintf(peer, sizeof(peer), "%s:%u", inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
		/* refusals are many under attack: the tick logs their sum */
		if (!server_admit(loop->srv, addr.sin_addr.s_addr, &victim)) {
			log_debug("peer %s: connection limit reached, refused", peer);
			close(fd);
			continue;
		}
		if (victim) {
			log_debug("peer %s: closed to make room for %s", victim->peer, peer);
			endpoint_close(loop, endpoint_of(loop, victim));
		}
		/* replies are whole messages queued at once: no Nagle delay */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ep = calloc(1, sizeof(*ep));
		if (ep)
			ep->conn = conn_open(loop->srv, peer, addr.sin_addr.s_addr);
		if (!ep || !ep->conn) {
			log_error("peer %s: out of memory for a connection", peer);
			free(ep);
			close(fd);
			continue;
		}
		ep->kind = EP_CLIENT;
		ep->fd = fd;
		list_add(&ep->link, &loop->endpoints);
		if (watch_new(loop, ep, EPOLLIN)) {
			log_error("epoll_ctl: %s", strerror(errno));
			endpoint_close(loop, ep);
			continue;
		}
		log_debug("peer %s: connected", peer);
	}
}

/*
 * A status or metrics client, one of at most max at once (counted in
 * *clients): closed at once past that, so that clients that do not read
 * cannot take every descriptor.  NULL when there is none to serve.
 */
static struct endpoint *accept_local_client(struct loop *loop, struct endpoint *listener,
					     enum endpoint_kind kind, unsigned int *clients,
					     unsigned int max, const char *what)
{
	struct endpoint *ep;
	int fd;

	fd = accept4(listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (out_of_resources(errno))
			pause_accepting(loop);
		return NULL;
	}
	if (*clients >= max) {
		log_warn_peer("%s: %u clients being served, refusing another", what, max);
		close(fd);
		return NULL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		close(fd);
		return NULL;
	}
	ep->kind = kind;
	ep->fd = fd;
	ep->opened_ms = loop->srv->now_ms;
	(*clients)++;
	list_add(&ep->link, &loop->endpoints);
	return ep;
}

static void accept_status_client(struct loop *loop)
{
	struct endpoint *ep = accept_local_client(loop, &loop->status_listener, EP_STATUS_CLIENT,
						  &loop->status_clients, STATUS_MAX_CLIENTS,
						  "status socket");

	if (ep && (status_render(loop->srv, loop->listen_desc, &ep->out) ||
		   !send_queued(ep->fd, &ep->out) || !ep->out.bytes || watch_new(loop, ep, EPOLLOUT)))
		endpoint_close(loop, ep);
}

static void accept_metrics_client(struct loop *loop)
{
	struct endpoint *ep = accept_local_client(loop, &loop->metrics_listener, EP_METRICS_CLIENT,
						  &loop->metrics_clients, METRICS_MAX_CLIENTS, "metrics");

	if (ep && (!(ep->request = malloc(METRICS_REQUEST_MAX)) || watch_new(loop, ep, EPOLLIN)))
		endpoint_close(loop, ep);
}

/*
 * A metrics client: its request read until its headers end, then the
 * answer sent and our side shut; what the client sends meanwhile is read
 * and dropped until it closes, so that bytes left unread (a request too
 * long) make no reset that would cut the answer short.
 */
static void service_metrics_client(struct loop *loop, struct endpoint *ep)
{
	ssize_t n;

	if (ep->request) {
		enum metrics_request req;

		n = recv(ep->fd, ep->request + ep->request_len, METRICS_REQUEST_MAX - ep->request_len, 0);
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
				endpoint_close(loop, ep);
			return;
		}
		ep->request_len += (size_t)n;
		req = metrics_parse_request(ep->request, ep->request_len);
		if (req == METRICS_INCOMPLETE)
			return;
		free(ep->request);
		ep->request = NULL;
		if (metrics_respond(loop->srv, loop->listen_desc, req, &ep->out)) {
			endpoint_close(loop, ep);
			return;
		}
	} else if (!ep->out.bytes) {
		char sink[4096];
		int i;

		/* a bounded share of the loop: epoll comes back for the rest */
		for (i = 0; i < READS_PER_EVENT; i++) {
			n = recv(ep->fd, sink, sizeof(sink), 0);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
				endpoint_close(loop, ep);
				return;
			}
			if (n < 0)
				return;
		}
		return;
	}
	if (!send_queued(ep->fd, &ep->out)) {
		endpoint_close(loop, ep);
		return;
	}
	if (ep->out.bytes) {
		watch(loop, ep, EPOLLOUT);	/* the rest when the socket takes it */
		return;
	}
	shutdown(ep->fd, SHUT_WR);
	watch(loop, ep, EPOLLIN);
}

/*
 * A status client that has not taken its report in time is not reading
 * it; a metrics client, not asking or not reading.
 */
static void close_slow_status_clients(struct loop *loop)
{
	struct endpoint *ep, *next;

	list_for_each_entry_safe(ep, next, &loop->endpoints, link) {
		if ((ep->kind != EP_STATUS_CLIENT && ep->kind != EP_METRICS_CLIENT) ||
		    loop->srv->now_ms - ep->opened_ms < STATUS_SEND_TIMEOUT_MS)
			continue;
		if (ep->kind == EP_STATUS_CLIENT)
			log_warn_peer("status socket: a client did not take its report in %d s, closing",
				      STATUS_SEND_TIMEOUT_MS / 1000);
		else if (ep->request)
			log_warn_peer("metrics: a client did not ask in %d s, closing",
				      STATUS_SEND_TIMEOUT_MS / 1000);
		else
			log_warn_peer("metrics: a client did not take its answer and close in %d s, closing",
				      STATUS_SEND_TIMEOUT_MS / 1000);
		endpoint_close(loop, ep);
	}
}

/*
 * After a tick or reload: send what it queued (CAPACITY, EVICT), close what
 * it closed, and read from connections the buffer budget held back, if it
 * has room again.
 */
static void service_queued(struct loop *loop)
{
	struct endpoint *ep, *next;

	list_for_each_entry_safe(ep, next, &loop->endpoints, link) {
		if (ep->kind == EP_CLIENT)
			service_client(loop, ep, true);
	}
}

/* Buffers shrank: the connections waiting for room in the budget try again. */
static void service_waiting(struct loop *loop)
{
	struct endpoint *ep, *next;

	loop->srv->room_freed = false;
	list_for_each_entry_safe(ep, next, &loop->endpoints, link) {
		if (ep->kind == EP_CLIENT && ep->conn->waiting_for_room)
			service_client(loop, ep, true);
	}
}

static void handle_signal(struct loop *loop)
{
	struct signalfd_siginfo info;

	if (read(loop->signals.fd, &info, sizeof(info)) != sizeof(info))
		return;
	if (info.ssi_signo == SIGHUP) {
		if (!loop->srv->cfg.clients_dir && !loop->srv->cfg.max_file) {
			log_info("received SIGHUP: nothing to reload without --clients or --max-file");
			return;
		}
		/* each on its own: one that fails to load keeps what it had */
		if (loop->srv->cfg.clients_dir)
			server_reload_clients(loop->srv);
		if (loop->srv->cfg.max_file)
			server_reload_max_file(loop->srv);
		service_queued(loop);
		return;
	}
	/* the first SIGTERM or SIGINT starts the leave, another ends it */
	if (!loop->srv->leave.leaving && loop->srv->cfg.leave_timeout_ms) {
		log_info("received %s, exiting once the pages held are given back",
			 strsignal((int)info.ssi_signo));
		server_leave(loop->srv);
		service_queued(loop);
		return;
	}
	log_info("received %s, exiting", strsignal((int)info.ssi_signo));
	server_leave_end(loop->srv, LEAVE_SIGNAL);
	loop->stop = true;
}

static void handle_event(struct loop *loop, struct endpoint *ep, uint32_t events)
{
	if (ep->fd < 0)
		return;
	switch (ep->kind) {
	case EP_LISTENER:
		accept_clients(loop);
		break;
	case EP_STATUS_LISTENER:
		accept_status_client(loop);
		break;
	case EP_METRICS_LISTENER:
		accept_metrics_client(loop);
		break;
	case EP_METRICS_CLIENT:
		service_metrics_client(loop, ep);
		break;
	case EP_SIGNALS:
		handle_signal(loop);
		break;
	case EP_CLIENT:
		service_client(loop, ep, !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || receive(ep));
		break;
	case EP_STATUS_CLIENT:
		if (!send_queued(ep->fd, &ep->out) || !ep->out.bytes)
			endpoint_close(loop, ep);
		break;
	case EP_PEERS:
		/* peers' replies queue MOVED and ASK_NAMESPACE to clients */
		migrate_service(loop->srv);
		service_queued(loop);
		break;
	}
}

static void tick(struct loop *loop)
{
	struct mem_sample mem;

	server_release_memory(loop->srv);
	/* and the heap that output queues of GET replies took in bursts */
	malloc_trim(0);
	memwatch_sample(&mem);
	server_tick(loop->srv, &mem);
	service_queued(loop);
	close_slow_status_clients(loop);
	if (loop->accept_paused) {
		loop->accept_paused = false;
		watch(loop, &loop->listener, EPOLLIN);
		watch(loop, &loop->status_listener, EPOLLIN);
		if (loop->metrics_listener.fd >= 0)
			watch(loop, &loop->metrics_listener, EPOLLIN);
	}
}

static int open_signals(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

int net_run(struct server *srv, int listen_fd, int status_fd, int metrics_fd, const char *listen_desc)
{
	struct loop loop = {
		.srv = srv,
		.listen_desc = listen_desc,
		.listener = { .kind = EP_LISTENER, .fd = listen_fd },
		.status_listener = { .kind = EP_STATUS_LISTENER, .fd = status_fd },
		.signals = { .kind = EP_SIGNALS },
		.peers = { .kind = EP_PEERS, .fd = migrate_fd(srv) },
		.metrics_listener = { .kind = EP_METRICS_LISTENER, .fd = metrics_fd },
	};
	struct epoll_event events[MAX_EVENTS];
	uint64_t next_tick;
	int status = 0;

	list_init(&loop.endpoints);
	list_init(&loop.closed);
	loop.signals.fd = open_signals();
	loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop.signals.fd < 0 || loop.epfd < 0 ||
	    watch_new(&loop, &loop.listener, EPOLLIN) ||
	    watch_new(&loop, &loop.status_listener, EPOLLIN) ||
	    watch_new(&loop, &loop.signals, EPOLLIN) ||
	    (loop.peers.fd >= 0 && watch_new(&loop, &loop.peers, EPOLLIN)) ||
	    (metrics_fd >= 0 && watch_new(&loop, &loop.metrics_listener, EPOLLIN))) {
		log_error("cannot set up the event loop: %s", strerror(errno));
		status = 1;
		goto out;
	}
	srv->now_ms = monotonic_ms();
	tick(&loop);
	next_tick = srv->now_ms + NET_TICK_MS;
	while (!loop.stop) {
		int n, i, timeout = next_tick > srv->now_ms ? (int)(next_tick - srv->now_ms) : 0;

		n = epoll_wait(loop.epfd, events, MAX_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			status = 1;
			break;
		}
		srv->now_ms = monotonic_ms();
		for (i = 0; i < n; i++) {
			handle_event(&loop, events[i].data.ptr, events[i].events);
			if (loop.stop)
				break;
		}
		if (srv->room_freed)
			service_waiting(&loop);
		free_closed(&loop);
		if (srv->now_ms >= next_tick) {
			tick(&loop);
			next_tick = srv->now_ms + NET_TICK_MS;
		}
		if (!loop.stop && server_leave_check(srv) != LEAVE_GOING)
			loop.stop = true;
	}
out:
	while (!list_empty(&loop.endpoints))
		endpoint_close(&loop, list_first_entry(&loop.endpoints, struct endpoint, link));
	free_closed(&loop);
	if (loop.signals.fd >= 0)
		close(loop.signals.fd);
	if (loop.epfd >= 0)
		close(loop.epfd);
	return status;
}
