/* smaps: how much of a range of this process's memory Linux backs with
 * transparent huge pages, read from /proc/self/smaps ("AnonHugePages" of
 * each mapping). Pageable copies to and from a GPU go through the CPU's
 * page tables, and on virtual machines their rate was seen to move with
 * whether the buffer got huge pages; `gpuopt fit` records the share beside
 * its pageable rates so that two measurements can be told apart. */
#ifndef GPUOPT_SMAPS_H
#define GPUOPT_SMAPS_H

#include <stddef.h>
#include <stdint.h>

/* The share (0 to 1) of [lo, hi) in huge pages, from smaps text of len
 * bytes (any bytes: what is not a mapping line or a "AnonHugePages: N kB"
 * line is skipped). A mapping that overlaps the range only in part counts
 * its huge pages in proportion to the overlap. Negative when no mapping
 * overlaps the range, a mapping has no AnonHugePages line, or hi <= lo. */
double smaps_huge_share(const char *text, size_t len, uintptr_t lo, uintptr_t hi);

/* The same for this process: reads /proc/self/smaps. Negative when it
 * cannot be read (not Linux, no /proc). */
double smaps_huge_share_self(const void *mem, size_t bytes);

#endif
