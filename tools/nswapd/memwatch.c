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
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "memwatch.h"

#define CGROUP_V2_ROOT "/sys/fs/cgroup"
#define CGROUP_V1_MEMORY_ROOT "/sys/fs/cgroup/memory"
#define UNLIMITED_FROM (1ull << 60)

static const char *override_file;

void memwatch_setup(const char *memavailable_file)
{
	override_file = memavailable_file;
}

/* Finds "name <number> [kB]" in a file of such lines; returns bytes. */
static uint64_t read_field(const char *path, const char *name)
{
	size_t name_len = strlen(name);
	uint64_t value = MEM_UNKNOWN;
	char line[256];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return MEM_UNKNOWN;
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
		value = strncmp(end, "kB", 2) ? v : v * 1024;
		break;
	}
	fclose(f);
	return value;
}

/* Reads a file holding one number, or "max". */
static uint64_t read_number(const char *path)
{
	unsigned long long v;
	char text[64], *end;
	FILE *f;
	size_t n;

	f = fopen(path, "re");
	if (!f)
		return MEM_UNKNOWN;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!strncmp(text, "max", 3))
		return MEM_UNKNOWN;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text)
		return MEM_UNKNOWN;
	return v;
}

struct cgroup_files {
	const char *limit, *usage, *inactive_file;
};

static const struct cgroup_files cgroup_v2_files = { "memory.max", "memory.current", "inactive_file" };
static const struct cgroup_files cgroup_v1_files = {
	"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file",
};

/* A number from file name in dir: the whole file, or the line of field. */
static uint64_t read_cgroup_file(const char *dir, const char *name, const char *field)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return MEM_UNKNOWN;
	return field ? read_field(path, field) : read_number(path);
}

/* Headroom of the cgroup in directory dir alone, or MEM_UNKNOWN without a limit. */
static uint64_t cgroup_dir_headroom(const char *dir, const struct cgroup_files *files)
{
	uint64_t limit, usage, inactive;

	limit = read_cgroup_file(dir, files->limit, NULL);
	if (limit == MEM_UNKNOWN || limit >= UNLIMITED_FROM)
		return MEM_UNKNOWN;
	usage = read_cgroup_file(dir, files->usage, NULL);
	if (usage == MEM_UNKNOWN)
		return MEM_UNKNOWN;
	inactive = read_cgroup_file(dir, "memory.stat", files->inactive_file);
	if (inactive != MEM_UNKNOWN && inactive < usage)
		usage -= inactive;
	return limit > usage ? limit - usage : 0;
}

/* Smallest headroom of the cgroup at root/path and its ancestors up to root. */
static uint64_t cgroup_tree_headroom(const char *root, const char *path,
				     const struct cgroup_files *files)
{
	uint64_t headroom = MEM_UNKNOWN;
	char dir[PATH_MAX];
	size_t root_len = strlen(root);

	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, path) >= sizeof(dir))
		return MEM_UNKNOWN;
	for (;;) {
		uint64_t h = cgroup_dir_headroom(dir, files);
		char *slash;

		if (h < headroom)
			headroom = h;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < root_len)
			break;
		*slash = '\0';
	}
	return headroom;
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

static uint64_t cgroup_headroom(void)
{
	uint64_t headroom = MEM_UNKNOWN;
	char line[PATH_MAX + 64];
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return MEM_UNKNOWN;
	/* lines are "hierarchy-id:controllers:path" */
	while (fgets(line, sizeof(line), f)) {
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
			h = cgroup_tree_headroom(CGROUP_V2_ROOT, path, &cgroup_v2_files);
		else if (v1_line_has_memory(controllers, strlen(controllers)))
			h = cgroup_tree_headroom(CGROUP_V1_MEMORY_ROOT, path, &cgroup_v1_files);
		if (h < headroom)
			headroom = h;
	}
	fclose(f);
	return headroom;
}

void memwatch_sample(struct mem_sample *sample)
{
	static bool warned;

	sample->mem_available = read_field(override_file ? override_file : "/proc/meminfo",
					   "MemAvailable:");
	sample->cgroup_headroom = override_file ? MEM_UNKNOWN : cgroup_headroom();
	if (sample->mem_available == MEM_UNKNOWN && !warned) {
		log_warn("cannot read MemAvailable from %s: memory is limited by --max only",
			 override_file ? override_file : "/proc/meminfo");
		warned = true;
	}
	sample->available = sample->mem_available < sample->cgroup_headroom ?
			    sample->mem_available : sample->cgroup_headroom;
}
