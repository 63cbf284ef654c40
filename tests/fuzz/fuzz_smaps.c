/* fuzz_smaps: any bytes as /proc/self/smaps text, asked for the huge-page
 * share of a few ranges (the first mapping's, a part of it, all of memory);
 * must neither crash nor answer outside [0, 1] (or negative: unknown). */
#include <stdint.h>
#include <stdlib.h>

#include "core/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const uintptr_t ranges[][2] = {{0x7f0000000000, 0x7f0000800000}, {0x7f0000000010, 0x7f0000400010},
				       {1, UINTPTR_MAX}, {0x1000, 0x2000}};
	for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++) {
		double s = smaps_huge_share(text, size, ranges[i][0], ranges[i][1]);
		if (!(s < 0 || (s >= 0 && s <= 1)))
			abort();
	}
	return 0;
}
