/* fuzz_notebook: any bytes as a .ipynb file — the notebook reader, then the
 * scanner on what it produced, must neither crash nor leak. */
#include <stdint.h>
#include <stdlib.h>

#include "scan/kb.h"
#include "python/notebook.h"
#include "scan/pyscan.h"

static struct kb *kb;
static struct pyscanner *ps;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *why = NULL;
	if (!kb) {
		kb = kb_load(&why);
		if (!kb)
			abort();
		ps = pyscanner_new(kb);
	}
	struct source src;
	if (!notebook_to_source("fuzz.ipynb", (const char *)data, size, &src, &why)) {
		free(why);
		return 0;
	}
	/* Every line maps to a real cell. */
	for (size_t i = 0; i < src.nlines; i++)
		if (src.line_cell[i] == 0)
			abort();
	struct scan_result r;
	if (pyscan(ps, &src, &r, &why))
		scan_result_free(&r);
	else
		free(why);
	source_free(&src);
	return 0;
}
