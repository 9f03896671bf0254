// SPDX-License-Identifier: GPL-2.0
/*
 * addkey - add a key to a kernel keyring (busybox has no keyctl).
 *
 *   addkey TYPE DESC FILE [KEYRING]
 *   addkey -r TYPE DESC
 *
 * Reads the payload from FILE ("-" = stdin, raw bytes, at most 32 KiB),
 * calls add_key(2) and prints the new key's serial number.  KEYRING is one
 * of @u (default), @us, @s, @p, @t or a numeric keyring serial.  "logon"
 * keys need a "prefix:" description; their payload can never be read back
 * from user space.
 * With -r: looks the key up with request_key(2) (no upcall), the search a
 * kernel request_key() in this process's context does, and prints its serial.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_THREAD_KEYRING		-1
#define KEY_SPEC_PROCESS_KEYRING	-2
#define KEY_SPEC_SESSION_KEYRING	-3
#define KEY_SPEC_USER_KEYRING		-4
#define KEY_SPEC_USER_SESSION_KEYRING	-5

#define MAX_PAYLOAD (32 * 1024)

static int parse_keyring(const char *s, long *ring)
{
	static const struct { const char *name; long id; } names[] = {
		{ "@t", KEY_SPEC_THREAD_KEYRING },
		{ "@p", KEY_SPEC_PROCESS_KEYRING },
		{ "@s", KEY_SPEC_SESSION_KEYRING },
		{ "@u", KEY_SPEC_USER_KEYRING },
		{ "@us", KEY_SPEC_USER_SESSION_KEYRING },
	};
	char *end;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*ring = names[i].id;
			return 0;
		}
	}
	errno = 0;
	*ring = strtol(s, &end, 10);
	if (errno || end == s || *end || *ring <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char buf[MAX_PAYLOAD + 1];
	size_t len = 0;
	long ring = KEY_SPEC_USER_KEYRING, serial;
	ssize_t n;
	int fd;

	if (argc == 4 && !strcmp(argv[1], "-r")) {
		serial = syscall(SYS_request_key, argv[2], argv[3], NULL, 0);
		if (serial < 0) {
			fprintf(stderr, "addkey: request_key(%s, %s): %s\n", argv[2], argv[3], strerror(errno));
			return 1;
		}
		printf("%ld\n", serial);
		return 0;
	}
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: addkey TYPE DESC FILE [@u|@us|@s|@p|@t|SERIAL]\n"
				"       addkey -r TYPE DESC\n");
		return 2;
	}
	if (argc == 5 && parse_keyring(argv[4], &ring)) {
		fprintf(stderr, "addkey: bad keyring '%s'\n", argv[4]);
		return 2;
	}
	fd = strcmp(argv[3], "-") ? open(argv[3], O_RDONLY) : 0;
	if (fd < 0) {
		fprintf(stderr, "addkey: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "addkey: read %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (len > MAX_PAYLOAD) {
		fprintf(stderr, "addkey: %s: payload larger than %d bytes\n", argv[3], MAX_PAYLOAD);
		return 1;
	}
	serial = syscall(SYS_add_key, argv[1], argv[2], buf, len, ring);
	if (serial < 0) {
		fprintf(stderr, "addkey: add_key(%s, %s, %zu bytes): %s\n", argv[1], argv[2], len,
			strerror(errno));
		return 1;
	}
	printf("%ld\n", serial);
	return 0;
}
