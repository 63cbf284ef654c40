/* memroom: see memroom.h. */
#include "memroom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fileio.h"
#include "util.h"

long long mem_room_field(const char *text, const char *key, long long unit)
{
	size_t k = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, k) != 0 || p[k] != ':')
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p + k + 1, &end, 10);
		if (end == p + k + 1 || errno || v > (unsigned long long)(INT64_MAX / unit))
			return -1;
		return (long long)v * unit;
	}
	return -1;
}

/* The whole of a small /proc or /sys file (owned), or NULL. */
static char *slurp(const char *path)
{
	struct buf b = {0};
	char *why = NULL;
	if (!read_file(path, 1 << 20, &b, &why)) {
		free(why);
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, '\0');
	return buf_steal(&b);
}

static void least(struct mem_room *r, uint64_t bytes, const char *what)
{
	if (bytes < r->bytes) {
		r->bytes = bytes;
		r->what = what;
	}
}

/* A limit of `limit` bytes of which `used` are taken. */
static uint64_t left(uint64_t limit, long long used)
{
	return used < 0 ? limit : (uint64_t)used >= limit ? 0 : limit - (uint64_t)used;
}

/* cgroup v2: the line "0::/PATH" of /proc/self/cgroup names the group. */
static void cgroup_room(struct mem_room *r)
{
	char *groups = slurp("/proc/self/cgroup");
	const char *line = groups;
	while (line && strncmp(line, "0::", 3) != 0) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	if (line) {
		const char *p = line + 3;
		size_t n = strcspn(p, "\n");
		char *dir = xasprintf("/sys/fs/cgroup%.*s", (int)n, p);
		char *maxp = xasprintf("%s/memory.max", dir), *curp = xasprintf("%s/memory.current", dir);
		char *max = slurp(maxp), *cur = slurp(curp);
		char *end;
		unsigned long long limit = max ? strtoull(max, &end, 10) : 0;
		if (max && end != max && (*end == '\n' || !*end)) { /* "max": no limit */
			long long used = cur ? strtoll(cur, NULL, 10) : -1;
			least(r, left(limit, used), "the cgroup's memory.max");
		}
		free(max);
		free(cur);
		free(maxp);
		free(curp);
		free(dir);
	}
	free(groups);
}

void mem_room_now(struct mem_room *r)
{
	r->bytes = UINT64_MAX;
	r->what = NULL;
	char *meminfo = slurp("/proc/meminfo");
	long long avail = meminfo ? mem_room_field(meminfo, "MemAvailable", 1024) : -1;
	free(meminfo);
	if (avail >= 0)
		least(r, (uint64_t)avail, "the memory available, MemAvailable");
	cgroup_room(r);
	char *status = slurp("/proc/self/status");
	long long vsize = status ? mem_room_field(status, "VmSize", 1024) : -1;
	long long vdata = status ? mem_room_field(status, "VmData", 1024) : -1;
	free(status);
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		least(r, left((uint64_t)rl.rlim_cur, vsize), "ulimit -v");
	if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		least(r, left((uint64_t)rl.rlim_cur, vdata), "ulimit -d");
}
