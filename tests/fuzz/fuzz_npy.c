/* fuzz_npy: any bytes as a .npy file — the header parser must neither crash
 * nor read past what it was given, whether it has the whole file or only a
 * prefix (as for a compressed .npz member); what it accepts must describe
 * the data exactly, and reading elements of it must stay in bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a;
	char *why = NULL;
	if (!npy_parse(data, size, size, &a, "verify", &why)) {
		if (!why)
			abort();
		free(why);
	} else {
		if (why || a.offset + a.nbytes != size || a.nbytes != a.count * a.dtype.size)
			abort();
		uint64_t idx[NPY_MAX_DIMS];
		for (uint64_t i = 0; i < a.count && i < 64; i++) {
			npy_unravel(&a, i, idx);
			for (int d = 0; d < a.ndim; d++)
				if (idx[d] >= a.shape[d])
					abort();
			volatile double v = npy_get_double(&a, data + a.offset, idx);
			(void)v;
		}
	}
	/* only a prefix at hand: a copy of exactly that many bytes */
	size_t len = size < NPY_HEADER_WINDOW ? size / 2 : NPY_HEADER_WINDOW;
	unsigned char *prefix = malloc(len ? len : 1);
	memcpy(prefix, data, len);
	if (npy_parse(prefix, len, size, &a, "verify", &why)) {
		if (a.offset > len)
			abort();
	} else {
		free(why);
	}
	free(prefix);
	return 0;
}
