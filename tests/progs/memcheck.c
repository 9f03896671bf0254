// SPDX-License-Identifier: GPL-2.0
/*
 * memcheck: memory integrity checker for the swap test.
 *
 * Allocates N MiB of anonymous memory, fills every 4 KiB page with a pattern
 * derived from (page index, generation, seed) and then, over several passes,
 * re-reads and verifies every page (sequential and random order) and rewrites
 * part of the pages with a new generation.  Under memory pressure the pages go
 * through swap, so any corruption in the swap device shows up here.
 *
 * Exit status 0 if every word of every page was right, 1 on corruption (the
 * first bad page is printed), 2 on usage/allocation errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define WORDS (PAGE / sizeof(uint64_t))

static uint64_t seed = 1;
static unsigned long bad_pages;

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t page_base(uint64_t idx, uint32_t gen)
{
	return splitmix(seed ^ splitmix(idx * 0x100000001b3ull + gen));
}

/* The words of a page: an xorshift64 stream seeded from page_base(). */
static uint64_t xorshift(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	return x ^ (x << 17);
}

static void fill_page(uint64_t *p, uint64_t idx, uint32_t gen)
{
	uint64_t x = page_base(idx, gen) | 1;
	uint64_t sum = 0;

	for (unsigned i = 0; i < WORDS - 1; i++) {
		x = xorshift(x);
		p[i] = x;
		sum += x * (i + 1);
	}
	p[WORDS - 1] = sum ^ idx ^ ((uint64_t)gen << 40);
}

/* returns -1 if fine, else the index of the first bad word */
static int check_page(const uint64_t *p, uint64_t idx, uint32_t gen, uint64_t *want)
{
	uint64_t x = page_base(idx, gen) | 1;
	uint64_t sum = 0;

	for (unsigned i = 0; i < WORDS - 1; i++) {
		x = xorshift(x);
		if (p[i] != x) {
			*want = x;
			return (int)i;
		}
		sum += x * (i + 1);
	}
	x = sum ^ idx ^ ((uint64_t)gen << 40);
	if (p[WORDS - 1] != x) {
		*want = x;
		return WORDS - 1;
	}
	return -1;
}

/* What the bad page looks like: which bytes differ, and whether it is another version. */
static void describe_damage(const uint64_t *p, uint64_t idx, uint32_t gen)
{
	static uint64_t want[WORDS];
	const uint8_t *got = (const uint8_t *)p, *exp = (const uint8_t *)want;
	unsigned int first = 0, last = 0, nr = 0;

	fill_page(want, idx, gen);
	for (unsigned int i = 0; i < WORDS * 8; i++) {
		if (got[i] == exp[i])
			continue;
		if (!nr++)
			first = i;
		last = i;
	}
	printf("memcheck: page %" PRIu64 ": %u bytes differ, from byte %u to byte %u\n",
	       idx, nr, first, last);
	for (uint32_t g = gen > 2 ? gen - 2 : 0; g <= gen + 2; g++) {
		fill_page(want, idx, g);
		if (g != gen && !memcmp(want, p, sizeof(want)))
			printf("memcheck: page %" PRIu64 " holds its generation %u\n", idx, g);
	}
}

static void report(const uint64_t *p, uint64_t idx, uint32_t gen, int word, uint64_t want, int pass)
{
	unsigned zero = 1;

	for (unsigned i = 0; i < WORDS; i++)
		if (p[i])
			zero = 0;
	if (bad_pages++ == 0) {
		printf("memcheck: BAD PAGE %" PRIu64 " (pass %d, generation %u): word %d is 0x%016" PRIx64
		       ", expected 0x%016" PRIx64 "%s\n",
		       idx, pass, gen, word, p[word], want, zero ? " (page is all zeros)" : "");
		describe_damage(p, idx, gen);
		fflush(stdout);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: memcheck [-m MiB] [-p passes] [-s seed] [-r rewrite-percent] [-H]\n"
		"  fill N MiB with per-page patterns, verify them over several passes\n"
		"  (even passes sequential, odd passes in random order), rewriting\n"
		"  rewrite-percent of the pages in each pass; exit 1 on corruption\n"
		"  -C flips one bit after filling (self-test: must fail)\n"
		"  -H stops itself (SIGSTOP) after filling, so that several processes\n"
		"     can be made to hold their memory at once before they verify\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, passes = 4, rewrite = 25;
	int c, corrupt = 0, hold = 0;

	while ((c = getopt(argc, argv, "m:p:s:r:CHh")) != -1) {
		switch (c) {
		case 'm': mib = strtoul(optarg, NULL, 0); break;
		case 'p': passes = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'r': rewrite = strtoul(optarg, NULL, 0); break;
		case 'C': corrupt = 1; break;
		case 'H': hold = 1; break;
		default: usage();
		}
	}
	if (optind != argc || mib == 0 || rewrite > 100)
		usage();

	uint64_t npages = (uint64_t)mib * (1024 * 1024 / PAGE);
	uint8_t *mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t *gen = calloc(npages, sizeof(*gen));
	uint32_t *order = malloc(npages * sizeof(*order));

	if (mem == MAP_FAILED || !gen || !order) {
		fprintf(stderr, "memcheck: cannot allocate %lu MiB: %s\n", mib, strerror(errno));
		return 2;
	}
	printf("memcheck: %lu MiB, %" PRIu64 " pages, %lu passes, seed %" PRIu64 ", rewrite %lu%%\n",
	       mib, npages, passes, seed, rewrite);
	fflush(stdout);

	double t0 = now();
	for (uint64_t i = 0; i < npages; i++)
		fill_page((uint64_t *)(mem + i * PAGE), i, 0);
	if (corrupt)
		mem[(npages / 2) * PAGE + 100] ^= 4;
	printf("memcheck: filled in %.1fs\n", now() - t0);
	fflush(stdout);
	if (hold)
		raise(SIGSTOP);

	uint64_t rng = splitmix(seed + 12345);
	for (unsigned long pass = 1; pass <= passes; pass++) {
		int random = pass % 2 == 0;
		unsigned long rewritten = 0;

		for (uint64_t i = 0; i < npages; i++)
			order[i] = (uint32_t)i;
		if (random) {
			for (uint64_t i = npages - 1; i > 0; i--) {
				rng = splitmix(rng);
				uint64_t j = rng % (i + 1);
				uint32_t t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
		}
		t0 = now();
		for (uint64_t k = 0; k < npages; k++) {
			uint64_t i = order[k];
			uint64_t *p = (uint64_t *)(mem + i * PAGE);
			uint64_t want;
			int w = check_page(p, i, gen[i], &want);

			if (w >= 0)
				report(p, i, gen[i], w, want, (int)pass);
			if ((splitmix(i ^ (pass << 32) ^ seed) % 100) < rewrite) {
				gen[i] = (uint32_t)pass;
				fill_page(p, i, gen[i]);
				rewritten++;
			}
		}
		printf("memcheck: pass %lu (%s) verified %" PRIu64 " pages, rewrote %lu, %lu bad so far, %.1fs\n",
		       pass, random ? "random" : "sequential", npages, rewritten, bad_pages, now() - t0);
		fflush(stdout);
	}
	/* final sequential verification */
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t *p = (uint64_t *)(mem + i * PAGE);
		uint64_t want;
		int w = check_page(p, i, gen[i], &want);

		if (w >= 0)
			report(p, i, gen[i], w, want, (int)passes + 1);
	}
	if (bad_pages) {
		printf("memcheck: FAILED, %lu bad page checks\n", bad_pages);
		return 1;
	}
	printf("memcheck: OK\n");
	return 0;
}
