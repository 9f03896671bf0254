// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int parse_uint(const char *text, uint64_t max, uint64_t *value)
{
	unsigned long long v;
	char *end;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*value = v;
	return 0;
}

int parse_ipv4_endpoint(const char *text, struct sockaddr_in *addr)
{
	const char *colon = strrchr(text, ':');
	char host[INET_ADDRSTRLEN];
	uint64_t port;

	if (!colon || (size_t)(colon - text) >= sizeof(host))
		return -1;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &addr->sin_addr) != 1 || parse_uint(colon + 1, 65535, &port))
		return -1;
	addr->sin_port = htons((uint16_t)port);
	return 0;
}

int parse_size(const char *text, uint64_t *bytes)
{
	static const char suffixes[] = "KMGT";
	unsigned long long v;
	const char *unit;
	char *end;
	int shift = 0;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		unit = strchr(suffixes, toupper((unsigned char)*end));
		if (!unit || (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")))
			return -1;
		shift = 10 * (int)(unit - suffixes + 1);
	}
	if (v > UINT64_MAX >> shift)
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

const char *format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, size, "%.1f %s", v, units[u]);
	else
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	return buf;
}

uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int read_small_file(const char *path, void *buf, size_t size, size_t *len)
{
	ssize_t n = 0;
	int fd, saved;

	*len = 0;
	/* O_NONBLOCK: a FIFO put there by mistake does not hang the daemon */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	while (*len < size) {
		n = read(fd, (char *)buf + *len, size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	saved = errno;
	close(fd);
	errno = saved;
	return n < 0 ? -1 : 0;
}
