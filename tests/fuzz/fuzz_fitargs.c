/* fuzz_fitargs: any bytes as fit's size, dtype and shape arguments (three
 * lines: --bytes, --dtype, --shape) — parsed into a working set; an
 * accepted one adds up; must neither crash nor leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fit/fit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	char *lines[3] = {text, NULL, NULL};
	for (int i = 1; i < 3 && lines[i - 1]; i++) {
		char *nl = strchr(lines[i - 1], '\n');
		if (nl) {
			*nl = '\0';
			lines[i] = nl + 1;
		}
	}
	uint64_t bytes = 0;
	bool have_bytes = fit_parse_bytes(lines[0], &bytes);
	const char *dtypes[1] = {lines[1]}, *shapes[1] = {lines[2]};
	struct fit_settings s = {.gpu = -1, .cpu_seconds = -1, .bytes = have_bytes ? bytes : 0,
				 .dtypes = dtypes, .ndtypes = lines[1] != NULL, .shapes = shapes,
				 .nshapes = lines[2] != NULL};
	struct fit_answer a;
	memset(&a, 0, sizeof a);
	char *why = NULL;
	if (fit_working_set(&s, &a, &why)) {
		uint64_t sum = 0;
		for (size_t i = 0; i < a.narrays; i++)
			sum += a.arrays[i].bytes;
		if (sum != a.in_bytes)
			abort();
		char *t = fit_bytes_text(a.in_bytes);
		free(t);
	} else if (!why) {
		abort();
	}
	free(why);
	fit_answer_free(&a);
	free(text);
	return 0;
}
