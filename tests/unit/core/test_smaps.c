/* smaps: the share of a range in huge pages, from smaps text written as
 * Linux writes it, and from this process's own /proc/self/smaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "core/smaps.h"

/* Two mappings as /proc/self/smaps shows them (fields cut short): 8 MiB
 * with 4 MiB in huge pages, then 4 MiB with none. */
static const char text[] =
	"7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
	"Size:               8192 kB\n"
	"Rss:                8192 kB\n"
	"AnonHugePages:      4096 kB\n"
	"VmFlags: rd wr mr mw me ac sd hg \n"
	"7f0000800000-7f0000c00000 rw-p 00000000 00:00 0 \n"
	"Size:               4096 kB\n"
	"AnonHugePages:         0 kB\n"
	"VmFlags: rd wr mr mw me ac sd nh \n";

static void test_share_of_ranges(void **state)
{
	(void)state;
	size_t n = sizeof text - 1;
	/* the whole first mapping: half */
	assert_true(smaps_huge_share(text, n, 0x7f0000000000, 0x7f0000800000) == 0.5);
	/* both: 4 of 12 MiB */
	assert_float_equal(smaps_huge_share(text, n, 0x7f0000000000, 0x7f0000c00000), 1.0 / 3, 1e-12);
	/* a part of the first counts in proportion */
	assert_float_equal(smaps_huge_share(text, n, 0x7f0000000010, 0x7f0000400010), 0.5, 1e-12);
	/* the second alone: none */
	assert_true(smaps_huge_share(text, n, 0x7f0000800000, 0x7f0000c00000) == 0);
	/* nothing mapped there, or an empty range: unknown */
	assert_true(smaps_huge_share(text, n, 0x1000, 0x2000) < 0);
	assert_true(smaps_huge_share(text, n, 0x7f0000000000, 0x7f0000000000) < 0);
	/* a mapping of the range with no AnonHugePages line: unknown, not 0 */
	static const char bare[] = "7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \nRss: 8 kB\n";
	assert_true(smaps_huge_share(bare, sizeof bare - 1, 0x7f0000000000, 0x7f0000001000) < 0);
	assert_true(smaps_huge_share("", 0, 1, 2) < 0);
}

/* This process's own memory: a buffer Linux was told not to back with huge
 * pages has none; one it may is read as a share from 0 to 1. */
static void test_own_memory(void **state)
{
	(void)state;
	size_t len = 16u << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	assert_true(smaps_huge_share_self(p, len) == 0);
	munmap(p, len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	madvise(p, len, MADV_HUGEPAGE);
	memset(p, 1, len);
	double share = smaps_huge_share_self(p, len);
	assert_true(share >= 0 && share <= 1);
	munmap(p, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_of_ranges),
		cmocka_unit_test(test_own_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
