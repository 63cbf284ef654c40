/* fuzz_csv: any bytes as a CSV and as a TSV table — the reader must neither
 * crash nor leak, and a table it accepts must be rectangular with every
 * cell a string inside the text it was given. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify/csvtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char seps[] = {',', '\t'};
	for (size_t s = 0; s < sizeof seps; s++) {
		char *text = malloc(size + 1);
		memcpy(text, data, size);
		struct csvtab t;
		char *why = NULL;
		if (!csvtab_parse(text, size, seps[s], &t, &why)) {
			if (!why)
				abort();
			free(why);
			continue;
		}
		if (t.ncols == 0)
			abort();
		for (size_t r = 0; r <= t.nrows; r++) {
			if (r && t.lines[r] <= t.lines[r - 1])
				abort();
			for (size_t c = 0; c < t.ncols; c++) {
				const char *cell = t.cells[r * t.ncols + c];
				if (cell < t.text || cell > t.text + size || strlen(cell) > size)
					abort();
			}
		}
		csvtab_free(&t);
	}
	return 0;
}
