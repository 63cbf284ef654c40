/* fuzz_ceilings: any bytes as a ceilings file of the cache (what gpuopt fit
 * --ceilings and the cache reader take) — decoded; when accepted, encoded,
 * decoded again to the same text, and asked for rates at many sizes; must
 * neither crash nor leak. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/ceilings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ceilings c, d;
	char *why = NULL;
	if (!ceilings_decode((const char *)data, size, &c, &why)) {
		if (!why)
			abort(); /* a refusal always says why */
		free(why);
		return 0;
	}
	char *text = ceilings_encode(&c);
	if (!ceilings_decode(text, strlen(text), &d, &why))
		abort(); /* what gpuopt writes, gpuopt reads */
	char *again = ceilings_encode(&d);
	if (strcmp(text, again) != 0)
		abort();
	for (int k = 0; k < CEIL_KINDS; k++)
		for (uint64_t b = 1; b < (1ull << 42); b = b * 7 + 3) {
			double s = ceilings_copy_seconds(&c, (enum ceil_kind)k, b);
			if (c.npoints[k] && !(s > 0))
				abort();
		}
	free(text);
	free(again);
	ceilings_free(&c);
	ceilings_free(&d);
	return 0;
}
