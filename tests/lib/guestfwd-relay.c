// SPDX-License-Identifier: GPL-2.0-only
/*
 * guestfwd-relay - the command QEMU runs for a guestfwd=...-cmd: rule:
 * relays one guest connection (on fd 0) to a server on the host's loopback.
 *
 * It replaces "socat - TCP:127.0.0.1:PORT,nodelay" for one reason: libslirp
 * hands the command its end of a loopback TCP connection whose other end,
 * QEMU's, has Nagle on.  slirp writes each guest segment separately, so the
 * second segment of any message longer than one segment waits for the ACK of
 * the first, and a delayed ACK takes 40 ms: every 4 KiB write from the guest
 * stalled 40 ms, for nbd and nswap2l alike.  Acking at once (TCP_QUICKACK,
 * which Linux clears again, so after every read) removes the stall.
 *
 * usage: guestfwd-relay LOGFILE 127.0.0.1:PORT
 * Everything the relay has to say goes to LOGFILE: QEMU gives the command
 * the connection as stdin, stdout and stderr, so a message on stderr would
 * reach the guest as protocol bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_BUF	(256 * 1024)

struct direction {
	int from, to;
	bool quickack;		/* re-arm TCP_QUICKACK on "from" after each read */
	bool eof;
	size_t len, off;
	char buf[RELAY_BUF];
};

static void die(const char *what)
{
	fprintf(stderr, "guestfwd-relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void set_opt(int fd, int level, int name)
{
	int one = 1;

	/* fd 0 may be a pipe when run by hand: then there is nothing to tune */
	if (setsockopt(fd, level, name, &one, sizeof(one)) && errno != ENOTSOCK)
		die("setsockopt");
}

static int connect_loopback(const char *target)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[INET_ADDRSTRLEN];
	const char *colon = strrchr(target, ':');
	char *end;
	long port;
	int fd;

	if (!colon || (size_t)(colon - target) >= sizeof(host))
		goto bad;
	memcpy(host, target, colon - target);
	host[colon - target] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		goto bad;
	/* tests never reach beyond this machine */
	if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "guestfwd-relay: %s is not a loopback address\n", host);
		exit(2);
	}
	sa.sin_port = htons((unsigned short)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die(target);
	set_opt(fd, IPPROTO_TCP, TCP_NODELAY);
	return fd;
bad:
	fprintf(stderr, "guestfwd-relay: bad target '%s' (want 127.0.0.1:PORT)\n", target);
	exit(2);
}

/* Move what can be moved without blocking; false once this direction is done. */
static bool pump(struct direction *d, short revents_from, short revents_to)
{
	ssize_t n;

	if (d->len == d->off && !d->eof && (revents_from & (POLLIN | POLLHUP | POLLERR))) {
		n = read(d->from, d->buf, sizeof(d->buf));
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("read");
		if (n == 0)
			d->eof = true;
		if (n > 0) {
			d->len = (size_t)n;
			d->off = 0;
		}
		if (d->quickack)
			set_opt(d->from, IPPROTO_TCP, TCP_QUICKACK);
	}
	if (d->off < d->len && (revents_to & (POLLOUT | POLLERR))) {
		n = write(d->to, d->buf + d->off, d->len - d->off);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;	/* the other side is gone */
		if (n > 0)
			d->off += (size_t)n;
	}
	if (d->eof && d->off == d->len) {
		shutdown(d->to, SHUT_WR);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static struct direction up, down;	/* guest -> server, server -> guest */
	struct pollfd pfd[2];
	bool up_open = true, down_open = true;
	int log, server;

	if (argc != 3) {
		fprintf(stderr, "usage: guestfwd-relay LOGFILE 127.0.0.1:PORT\n");
		return 2;
	}
	log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0 || dup2(log, STDERR_FILENO) < 0)
		return 1;	/* nowhere to say it that is not the guest's stream */
	close(log);
	signal(SIGPIPE, SIG_IGN);	/* a side that went away shows as EPIPE */

	server = connect_loopback(argv[2]);
	set_opt(STDIN_FILENO, IPPROTO_TCP, TCP_NODELAY);
	if (fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK) ||
	    fcntl(server, F_SETFL, O_NONBLOCK))
		die("fcntl");
	up = (struct direction){ .from = STDIN_FILENO, .to = server, .quickack = true };
	down = (struct direction){ .from = server, .to = STDIN_FILENO };

	while (up_open || down_open) {
		pfd[0] = (struct pollfd){ .fd = STDIN_FILENO };
		pfd[1] = (struct pollfd){ .fd = server };
		if (up_open) {
			pfd[0].events |= up.off == up.len && !up.eof ? POLLIN : 0;
			pfd[1].events |= up.off < up.len ? POLLOUT : 0;
		}
		if (down_open) {
			pfd[1].events |= down.off == down.len && !down.eof ? POLLIN : 0;
			pfd[0].events |= down.off < down.len ? POLLOUT : 0;
		}
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (up_open)
			up_open = pump(&up, pfd[0].revents, pfd[1].revents);
		if (down_open)
			down_open = pump(&down, pfd[1].revents, pfd[0].revents);
		/* a side that is gone for writing ends the relay, as socat does */
		if (!up_open && !up.eof)
			break;
		if (!down_open && !down.eof)
			break;
	}
	return 0;
}
