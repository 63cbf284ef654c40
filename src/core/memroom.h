/* memroom: how much more memory this process can take before the machine
 * or a limit set on it refuses: the least of the memory available
 * (MemAvailable in /proc/meminfo), what the process's cgroup (v2) still
 * allows (memory.max - memory.current), and what its address-space and
 * data limits (ulimit -v, ulimit -d) leave over its current size. For an
 * allocation whose size comes from an input file (a member of an archive
 * to be inflated whole): checked first, it becomes an error that names the
 * file and the size, not "out of memory" or the kernel's OOM killer.
 *
 * Nothing here allocates what it returns. */
#ifndef GPUOPT_MEMROOM_H
#define GPUOPT_MEMROOM_H

#include <stdint.h>

struct mem_room {
	uint64_t bytes;   /* UINT64_MAX when no limit could be read */
	const char *what; /* which limit it is, static text: "the memory available,
			   * MemAvailable", "ulimit -v", "ulimit -d", "the cgroup's
			   * memory.max"; NULL when none */
};

/* Reads the limits now (from /proc and /sys; a file that cannot be read is
 * no limit). Never fails. */
void mem_room_now(struct mem_room *r);

/* The value of "key:" (at a line's start) in /proc-style text, times unit;
 * -1 when the key is missing or its value is not a number. For tests. */
long long mem_room_field(const char *text, const char *key, long long unit);

#endif
