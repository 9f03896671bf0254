// SPDX-License-Identifier: GPL-2.0
/*
 * Sources, read afresh on every sample (the process may be moved between
 * cgroups, limits change at run time):
 *  - MemAvailable from /proc/meminfo;
 *  - cgroup v2: memory.max and memory.current of our cgroup and each
 *    ancestor under /sys/fs/cgroup ("0::/path" in /proc/self/cgroup);
 *  - cgroup v1: memory.limit_in_bytes and memory.usage_in_bytes likewise
 *    under /sys/fs/cgroup/memory ("N:...memory...:/path").
 * A cgroup's working set is its usage less its inactive file cache, which
 * the kernel can drop at once; a limit of "max" or beyond 2^60 (v1's
 * "unlimited") is no limit.  The tightest ancestor decides.
 *
 * A cgroup without a limit file is the root: no limit.  Every other failure
 * (EMFILE, EACCES, a file without its number, MemAvailable missing) makes
 * the sample unknown, and the server then takes no new pages: a limit
 * that silently stops applying is what a peer exhausting our file
 * descriptors would want.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memwatch.h"

#define CGROUP_V2_ROOT "/sys/fs/cgroup"
#define CGROUP_V1_MEMORY_ROOT "/sys/fs/cgroup/memory"
#define UNLIMITED_FROM (1ull << 60)

static const char *override_file;

void memwatch_setup(const char *memavailable_file)
{
	override_file = memavailable_file;
}

/*
 * Notes why the sample is unknown (the first reason is enough); err is a
 * negative errno, -EINVAL when the file holds no number where one should be;
 * a very long path is cut short.  Returns false.
 */
static bool unreadable(struct mem_sample *sample, const char *what, int err)
{
	if (!sample->unknown_why[0])
		snprintf(sample->unknown_why, sizeof(sample->unknown_why), "cannot read %.128s: %s",
			 what, err == -EINVAL ? "no number where one should be" : strerror(-err));
	return false;
}

/* Finds "name <number> [kB]" in a file of such lines: bytes, or -errno. */
static int read_field(const char *path, const char *name, uint64_t *bytes)
{
	size_t name_len = strlen(name);
	int err = -EINVAL;
	char line[256];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long v;

		if (strncmp(line, name, name_len) || (line[name_len] != ' ' && line[name_len] != '\t'))
			continue;
		errno = 0;
		v = strtoull(line + name_len, &end, 10);
		if (errno || end == line + name_len)
			break;
		while (*end == ' ' || *end == '\t')
			end++;
		*bytes = strncmp(end, "kB", 2) ? v : v * 1024;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int memwatch_total(uint64_t *bytes)
{
	return read_field(override_file ? override_file : "/proc/meminfo", "MemTotal:", bytes);
}

/* Reads a file holding one number, or "max" (MEM_UNKNOWN); 0 or -errno. */
static int read_number(const char *path, uint64_t *value)
{
	unsigned long long v;
	char text[64], *end;
	FILE *f;
	size_t n;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!strncmp(text, "max", 3)) {
		*value = MEM_UNKNOWN;
		return 0;
	}
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	*value = v;
	return 0;
}

struct cgroup_files {
	const char *limit, *usage, *inactive_file;
};

static const struct cgroup_files cgroup_v2_files = { "memory.max", "memory.current", "inactive_file" };
static const struct cgroup_files cgroup_v1_files = {
	"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file",
};

/* dir/name in path (PATH_MAX); dir leaves room for any name used here */
static const char *cgroup_path(char *path, const char *dir, const char *name)
{
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	return path;
}

/*
 * Headroom of the cgroup in directory dir alone, MEM_UNKNOWN without a
 * limit; false when a file could not be read.
 */
static bool cgroup_dir_headroom(struct mem_sample *sample, const char *dir,
				const struct cgroup_files *files, uint64_t *headroom)
{
	uint64_t limit, usage, inactive = 0;
	char path[PATH_MAX];
	int err;

	*headroom = MEM_UNKNOWN;
	/* the root cgroup has no limit file */
	err = read_number(cgroup_path(path, dir, files->limit), &limit);
	if (err == -ENOENT)
		return true;
	if (err)
		return unreadable(sample, path, err);
	if (limit >= UNLIMITED_FROM)
		return true;
	err = read_number(cgroup_path(path, dir, files->usage), &usage);
	if (err)
		return unreadable(sample, path, err);
	/* without it the headroom only comes out smaller */
	read_field(cgroup_path(path, dir, "memory.stat"), files->inactive_file, &inactive);
	if (inactive < usage)
		usage -= inactive;
	*headroom = limit > usage ? limit - usage : 0;
	return true;
}

/* Smallest headroom of the cgroup at root/path and its ancestors up to root. */
static bool cgroup_tree_headroom(struct mem_sample *sample, const char *root, const char *path,
				 const struct cgroup_files *files, uint64_t *headroom)
{
	char dir[PATH_MAX - 64];
	size_t root_len = strlen(root);

	*headroom = MEM_UNKNOWN;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, path) >= sizeof(dir))
		return unreadable(sample, path, -ENAMETOOLONG);
	for (;;) {
		uint64_t h;
		char *slash;

		if (!cgroup_dir_headroom(sample, dir, files, &h))
			return false;
		if (h < *headroom)
			*headroom = h;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < root_len)
			break;
		*slash = '\0';
	}
	return true;
}

static bool v1_line_has_memory(const char *controllers, size_t len)
{
	const char *p = controllers, *end = controllers + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t word = (size_t)((comma ? comma : end) - p);

		if (word == 6 && !memcmp(p, "memory", 6))
			return true;
		p += word + 1;
	}
	return false;
}

/* Sets sample->cgroup_headroom; false when it could not be read. */
static bool cgroup_headroom(struct mem_sample *sample)
{
	char line[PATH_MAX + 64];
	bool known = true;
	FILE *f;

	sample->cgroup_headroom = MEM_UNKNOWN;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return errno == ENOENT || unreadable(sample, "/proc/self/cgroup", -errno);
	/* lines are "hierarchy-id:controllers:path" */
	while (known && fgets(line, sizeof(line), f)) {
		char *controllers = strchr(line, ':'), *path;
		uint64_t h = MEM_UNKNOWN;

		if (!controllers)
			continue;
		*controllers++ = '\0';
		path = strchr(controllers, ':');
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!strcmp(path, "/"))
			path = "";
		if (!strcmp(line, "0") && !*controllers)
			known = cgroup_tree_headroom(sample, CGROUP_V2_ROOT, path, &cgroup_v2_files, &h);
		else if (v1_line_has_memory(controllers, strlen(controllers)))
			known = cgroup_tree_headroom(sample, CGROUP_V1_MEMORY_ROOT, path,
						     &cgroup_v1_files, &h);
		if (h < sample->cgroup_headroom)
			sample->cgroup_headroom = h;
	}
	fclose(f);
	return known;
}

void memwatch_sample(struct mem_sample *sample)
{
	char what[PATH_MAX + 32];
	int err;

	sample->unknown_why[0] = '\0';
	sample->mem_available = MEM_UNKNOWN;
	err = read_field(override_file ? override_file : "/proc/meminfo", "MemAvailable:",
			 &sample->mem_available);
	if (err) {
		snprintf(what, sizeof(what), "MemAvailable from %s",
			 override_file ? override_file : "/proc/meminfo");
		unreadable(sample, what, err);
	}
	if (override_file)
		sample->cgroup_headroom = MEM_UNKNOWN;
	else
		cgroup_headroom(sample);
	sample->available = sample->mem_available < sample->cgroup_headroom ?
			    sample->mem_available : sample->cgroup_headroom;
}
