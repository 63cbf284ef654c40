/* fuzz_pyscan: any bytes as a .py file — decoding, parsing, scanning (the
 * flow model too, whatever the input imports), the reports and the import
 * reader (scan/imports.h) must neither crash nor leak. Set-up (the knowledge, the scanner) happens once; each
 * input frees what it allocates (pyscan makes its tree-sitter parser per
 * file), so libFuzzer's per-input leak check, a scan of the whole heap, runs
 * only on a real imbalance. Inputs are cut at MAX_INPUT bytes (run it with
 * -max_len=512) and each renders one report format (the input's length picks
 * which), so a run stays over a thousand inputs a second under the
 * sanitizers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scan/imports.h"
#include "scan/kb.h"
#include "scan/pyscan.h"
#include "scan/report.h"
#include "python/source.h"

#define MAX_INPUT 512

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
		pyscanner_force_flow(ps, true);
	}
	if (size > MAX_INPUT)
		size = MAX_INPUT;
	struct source src;
	if (!source_from_python("fuzz.py", (const char *)data, size, &src, &why)) {
		free(why);
		return 0;
	}
	struct scan_file sf = {.path = "fuzz.py"};
	if (pyscan(ps, &src, &sf.res, &why)) {
		sf.ok = true;
		int fmt = (int)(size % 3);
		{
			char *doc = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&doc, &len);
			struct report_options opt = {.format = (enum report_format)fmt, .verbose = true};
			struct report *r = report_open(m, kb, &opt);
			report_file(r, &sf);
			struct scan_counts n;
			report_close(r, 0.0, &n);
			fclose(m);
			if (n.findings != sf.res.n)
				abort();
			free(doc);
		}
	} else {
		free(why);
		why = NULL;
	}
	scan_result_free(&sf.res);
	/* the import reader over the same text (gpuopt try's GPU and module
	 * questions): every import names a module and a line inside the text */
	struct py_imports ims = {0};
	if (pyscan_imports(ps, &src, &ims, &why)) {
		uint32_t lines = 1;
		for (size_t i = 0; i < src.len; i++)
			lines += src.text[i] == '\n';
		for (size_t i = 0; i < ims.n; i++) {
			if (!ims.items[i].module || ims.items[i].line < 1 || ims.items[i].line > lines)
				abort();
			(void)py_import_is(&ims.items[i], "cupy");
		}
	} else {
		free(why);
	}
	py_imports_free(&ims);
	source_free(&src);
	return 0;
}
