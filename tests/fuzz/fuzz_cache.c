/* fuzz_cache: any bytes as a file in the cache directory — decoded as a
 * cache entry (then reported in every format, as a hit would be) and as
 * the stat index — must neither crash nor leak. Each input is decoded as
 * it is (its checksum almost never matches: refused) and sealed (its
 * checksum made to match, as a write would), so the decoder behind the
 * checksum sees every change the fuzzer makes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/cache.h"
#include "scan/kb.h"
#include "scan/report.h"

static struct kb *kb;
static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!kb) {
		char *why = NULL;
		/* decoding never touches the directory; nothing is written */
		setenv("XDG_CACHE_HOME", "/nonexistent/gpuopt-fuzz", 1);
		kb = kb_load(&why);
		sink = fopen("/dev/null", "w");
		if (!kb || !sink)
			abort();
	}
	char *sealed = malloc(size ? size : 1);
	if (!sealed)
		abort();
	if (size)
		memcpy(sealed, data, size);
	cache_seal(sealed, size);
	cache_decode_index((const char *)data, size);
	cache_decode_index(sealed, size);
	struct cache *c = cache_open(kb, true);
	if (!c)
		abort();
	struct scan_file sf = {.path = "fuzz.py", .ok = true};
	for (int pass = 0; pass < 2; pass++) {
		if (!cache_decode_entry(c, pass ? sealed : (const char *)data, size, &sf.res))
			continue;
		for (int fmt = FMT_TEXT; fmt <= FMT_SARIF; fmt++) {
			struct report_options opt = {.format = (enum report_format)fmt, .verbose = true};
			struct report *r = report_open(sink, kb, &opt);
			report_render(&opt, &sf);
			report_file(r, &sf);
			struct scan_counts n;
			report_close(r, 0, &n);
			if (n.findings != sf.res.n)
				abort();
			buf_free(&sf.out);
			sf.rendered = false;
		}
		scan_result_free(&sf.res);
	}
	cache_close(c);
	free(sealed);
	return 0;
}
