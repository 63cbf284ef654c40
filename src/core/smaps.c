/* smaps: the share of a memory range in transparent huge pages, from
 * /proc/self/smaps (see smaps.h). */
#include "core/smaps.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/util.h"

/* Parses hex digits at *p (at least one) up to end; false when none. */
static bool hex(const char **p, const char *end, uintptr_t *out)
{
	uintptr_t v = 0;
	const char *s = *p;
	for (; s < end; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		if (d < 0)
			break;
		if (v > (UINTPTR_MAX >> 4))
			return false;
		v = v << 4 | (uintptr_t)d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* A mapping's first line: "START-END perms ...". */
static bool mapping_line(const char *s, const char *end, uintptr_t *start, uintptr_t *stop)
{
	if (!hex(&s, end, start) || s >= end || *s != '-')
		return false;
	s++;
	return hex(&s, end, stop) && s < end && *s == ' ' && *stop > *start;
}

/* "AnonHugePages:   2048 kB": the bytes, or false. */
static bool huge_line(const char *s, const char *end, double *bytes)
{
	static const char key[] = "AnonHugePages:";
	size_t n = sizeof key - 1;
	if ((size_t)(end - s) < n || memcmp(s, key, n) != 0)
		return false;
	s += n;
	while (s < end && *s == ' ')
		s++;
	double kb = 0;
	bool any = false;
	for (; s < end && *s >= '0' && *s <= '9' && kb < 1e15; s++, any = true)
		kb = kb * 10 + (*s - '0');
	if (!any)
		return false;
	*bytes = kb * 1024;
	return true;
}

double smaps_huge_share(const char *text, size_t len, uintptr_t lo, uintptr_t hi)
{
	if (!text || hi <= lo)
		return -1;
	const char *p = text, *end = text + len;
	uintptr_t start = 0, stop = 0;
	bool in = false, seen = false, counted = true;
	double huge = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		uintptr_t a, b;
		double bytes;
		if (mapping_line(p, eol, &a, &b)) {
			if (in && !counted)
				return -1; /* a mapping of the range said nothing of huge pages */
			start = a;
			stop = b;
			in = start < hi && stop > lo;
			seen |= in;
			counted = false;
		} else if (in && !counted && huge_line(p, eol, &bytes)) {
			uintptr_t from = start > lo ? start : lo, to = stop < hi ? stop : hi;
			huge += bytes * (double)(to - from) / (double)(stop - start);
			counted = true;
		}
		p = nl ? nl + 1 : end;
	}
	if (!seen || (in && !counted))
		return -1;
	double share = huge / (double)(hi - lo);
	return share > 1 ? 1 : share;
}

double smaps_huge_share_self(const void *mem, size_t bytes)
{
	struct buf b = {0};
	char *why = NULL;
	double share = -1;
	if (read_file("/proc/self/smaps", 256u << 20, &b, &why))
		share = smaps_huge_share(b.data, b.len, (uintptr_t)mem, (uintptr_t)mem + bytes);
	free(why);
	free(b.data);
	return share;
}
