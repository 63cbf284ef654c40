/* fuzz_pyscan: any bytes as a .py file — decoding, parsing, scanning and
 * both machine-readable reports must neither crash nor leak. */
#include <stdint.h>
#include <stdlib.h>

#include "kb.h"
#include "pyscan.h"
#include "report.h"
#include "source.h"

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
	if (!source_from_python("fuzz.py", (const char *)data, size, &src, &why)) {
		free(why);
		return 0;
	}
	struct scan_file sf = {.path = "fuzz.py"};
	if (pyscan(ps, &src, &sf.res, &why)) {
		sf.ok = true;
		struct scan_report r = {.kb = kb, .files = &sf, .nfiles = 1};
		free(report_json(&r));
		free(report_sarif(&r));
	} else {
		free(why);
	}
	scan_result_free(&sf.res);
	source_free(&src);
	return 0;
}
