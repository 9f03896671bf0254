// SPDX-License-Identifier: GPL-2.0
/*
 * blkpat: write / verify checksummed 4 KiB page patterns on a block device
 * with O_DIRECT.
 *
 *   blkpat write  DEV FIRST_PAGE NPAGES SEED
 *   blkpat verify DEV FIRST_PAGE NPAGES SEED
 *   blkpat zero   DEV FIRST_PAGE NPAGES          (pages must read as zeros)
 *   blkpat scan   DEV FIRST_PAGE NPAGES SEED     (page by page: a page may be
 *                 unreadable, but one that reads must hold its pattern)
 *
 * Every page carries a header (magic, page index, seed) followed by words
 * derived from (page index, seed), so a misplaced page is recognised as such.
 * write keeps going after errors and reports them:
 *   "blkpat: write ok=N failed=M first_failed=P errno=E (text)"
 * scan reports "blkpat: scan ok=N eio=M bad=K"; unreadable pages are not a failure.
 * Exit status: 0 all fine, 1 data mismatch / write errors, 2 usage or setup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096u
#define WORDS (PAGE / 8)
#define CHUNK 64u /* pages per I/O when everything goes well */
#define MAGIC 0x4e53574150324c21ull /* "NSWAP2L!" */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void fill(uint64_t *p, uint64_t idx, uint64_t seed)
{
	uint64_t x = splitmix(idx ^ splitmix(seed)) | 1;

	p[0] = MAGIC;
	p[1] = idx;
	p[2] = seed;
	for (unsigned i = 3; i < WORDS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
}

static int is_zero(const uint64_t *p)
{
	for (unsigned i = 0; i < WORDS; i++)
		if (p[i])
			return 0;
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: blkpat write|verify|scan DEV FIRST_PAGE NPAGES SEED\n"
			"       blkpat zero DEV FIRST_PAGE NPAGES\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		usage();
	const char *mode = argv[1], *dev = argv[2];
	uint64_t first = strtoull(argv[3], NULL, 0), n = strtoull(argv[4], NULL, 0), seed = 0;
	int wr = !strcmp(mode, "write"), ver = !strcmp(mode, "verify"), zero = !strcmp(mode, "zero");
	int scan = !strcmp(mode, "scan");

	if (!(wr || ver || zero || scan) || (zero ? argc != 5 : argc != 6))
		usage();
	if (!zero)
		seed = strtoull(argv[5], NULL, 0);

	int fd = open(dev, (wr ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "blkpat: open %s: %s\n", dev, strerror(errno));
		return 2;
	}
	uint64_t *buf, *want;
	if (posix_memalign((void **)&buf, PAGE, PAGE * CHUNK) || posix_memalign((void **)&want, PAGE, PAGE)) {
		fprintf(stderr, "blkpat: out of memory\n");
		return 2;
	}

	uint64_t ok = 0, failed = 0, first_failed = 0, bad = 0;
	int err = 0;
	for (uint64_t pg = first; pg < first + n;) {
		uint64_t cnt = first + n - pg < CHUNK ? first + n - pg : CHUNK;

		if (scan) {
			/* One page per read, so that one unreadable page hides no other. */
			cnt = 1;
			if (pread(fd, buf, PAGE, (off_t)(pg * PAGE)) != PAGE) {
				failed++;
				pg++;
				continue;
			}
		}
		off_t off = (off_t)(pg * PAGE);

		if (wr) {
			for (uint64_t k = 0; k < cnt; k++)
				fill(buf + k * WORDS, pg + k, seed);
			ssize_t r = pwrite(fd, buf, cnt * PAGE, off);
			if (r == (ssize_t)(cnt * PAGE)) {
				ok += cnt;
			} else {
				/* retry page by page to find out which pages fail */
				for (uint64_t k = 0; k < cnt; k++) {
					r = pwrite(fd, buf + k * WORDS, PAGE, off + (off_t)(k * PAGE));
					if (r == PAGE) {
						ok++;
					} else {
						if (!failed++) {
							first_failed = pg + k;
							err = r < 0 ? errno : EIO;
						}
					}
				}
			}
		} else {
			ssize_t r = scan ? PAGE : pread(fd, buf, cnt * PAGE, off);
			if (r != (ssize_t)(cnt * PAGE)) {
				fprintf(stderr, "blkpat: read of pages %" PRIu64 "+%" PRIu64 " failed: %s\n", pg, cnt,
					r < 0 ? strerror(errno) : "short read");
				return 1;
			}
			for (uint64_t k = 0; k < cnt; k++) {
				uint64_t *p = buf + k * WORDS;
				int good;

				if (zero) {
					good = is_zero(p);
				} else {
					fill(want, pg + k, seed);
					good = !memcmp(p, want, PAGE);
				}
				if (good) {
					ok++;
					continue;
				}
				if (!bad++) {
					if (is_zero(p))
						printf("blkpat: BAD page %" PRIu64 ": reads as zeros\n", pg + k);
					else if (p[0] == MAGIC)
						printf("blkpat: BAD page %" PRIu64 ": holds page %" PRIu64 " seed %" PRIu64
						       "%s\n",
						       pg + k, p[1], p[2], zero ? " (expected zeros)" : "");
					else
						printf("blkpat: BAD page %" PRIu64 ": garbage, first word 0x%016" PRIx64 "\n",
						       pg + k, p[0]);
				}
			}
		}
		pg += cnt;
	}
	if (wr) {
		if (fsync(fd) && !failed) {
			failed = 1;
			err = errno;
		}
		printf("blkpat: write ok=%" PRIu64 " failed=%" PRIu64 " first_failed=%" PRIu64 " errno=%d (%s)\n", ok,
		       failed, first_failed, err, err ? strerror(err) : "none");
		return failed ? 1 : 0;
	}
	if (scan)
		printf("blkpat: scan ok=%" PRIu64 " eio=%" PRIu64 " bad=%" PRIu64 "\n", ok, failed, bad);
	else
		printf("blkpat: %s ok=%" PRIu64 " bad=%" PRIu64 "\n", mode, ok, bad);
	return bad ? 1 : 0;
}
