/* fuzz_report: any bytes as the saved results of a try — one JSON object
 * {"contract", "environment", "scan", "baseline", "verdict", "candidates":
 * [...]} standing for the files of a results directory — rendered as HTML
 * and as Markdown: whatever the files hold, the page renders without a
 * crash or a leak, and no value escapes its escaping (no '<' from the data
 * inside the HTML's text: every tag the page has is one it wrote). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!doc)
		return 0;
	struct page_input in = {.dir = "fuzz-results"};
	in.contract = json_object_get(doc, "contract");
	in.environment = json_object_get(doc, "environment");
	in.scan = json_object_get(doc, "scan");
	in.baseline = json_object_get(doc, "baseline");
	in.verdict = json_object_get(doc, "verdict");
	json_t *cands = json_object_get(doc, "candidates");
	size_t n = json_array_size(cands);
	in.candidates = calloc(n + 1, sizeof *in.candidates);
	for (size_t i = 0; i < n; i++)
		in.candidates[i] = json_array_get(cands, i);
	in.ncandidates = n;
	for (int k = 0; k < 2; k++) {
		char *page = page_render(&in, k ? PAGE_MARKDOWN : PAGE_HTML);
		if (!page)
			abort();
		if (k == 0 && (strstr(page, "<script") || strstr(page, "<img")))
			abort();
		free(page);
	}
	free(in.candidates);
	json_decref(doc);
	return 0;
}
