/* fuzz_npz: any bytes as an .npz archive — the zip directory reader, then
 * each member streamed through the reader (inflated when deflated) and its
 * .npy header parsed, must neither crash, leak, nor read outside the
 * archive. Members are read up to 1 MB each, so zip bombs stay quick. */
#include <stdint.h>
#include <stdlib.h>

#include "core/npy.h"
#include "verify/npz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npz z;
	char *why = NULL;
	if (!npz_open(data, size, &z, &why)) {
		if (!why)
			abort();
		free(why);
		return 0;
	}
	for (size_t i = 0; i < z.n; i++) {
		const struct npz_member *m = &z.members[i];
		if (m->data > size || m->csize > size - m->data)
			abort();
		struct npz_reader r;
		if (!npz_reader_open(&r, data, m, &why)) {
			free(why);
			npz_reader_close(&r);
			continue;
		}
		const unsigned char *p;
		size_t avail;
		size_t want = m->usize < NPY_HEADER_WINDOW ? (size_t)m->usize : NPY_HEADER_WINDOW;
		if (npz_reader_peek(&r, want, &p, &avail, &why)) {
			struct npy_array a;
			if (avail < want)
				abort();
			if (npy_parse(p, avail, m->usize, &a, "verify", &why))
				npz_reader_consume(&r, a.offset);
			else
				free(why);
			uint64_t budget = 1 << 20;
			while (r.out_done < m->usize && budget > 0) {
				if (!npz_reader_peek(&r, 65536, &p, &avail, &why)) {
					free(why);
					break;
				}
				size_t n = avail < 65536 ? avail : 65536;
				volatile unsigned char sink = n ? p[n - 1] : 0;
				(void)sink;
				npz_reader_consume(&r, n);
				budget = budget > n ? budget - n : 0;
			}
		} else {
			free(why);
		}
		npz_reader_close(&r);
	}
	npz_free(&z);
	return 0;
}
