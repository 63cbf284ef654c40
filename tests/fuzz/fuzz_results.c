/* fuzz_results: any bytes as the files of a try results directory, read as
 * try and report read them from disk. The input is cut at NUL bytes into up
 * to 9 parts, written as contract.json, environment.json, scan.json,
 * baseline.json, verdict.json, candidate-1.json, candidate-2.json, the
 * marker .gpuopt-try and status.json (how the last try ended). Then: the report's reader (page_read: damaged files
 * named, never a crash) and its pages; and try's claim on the directory
 * (results_claim: a directory that holds files and no valid marker or
 * older try contract is refused, never emptied). No crash, no leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/page.h"
#include "try/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"contract.json", "environment.json", "scan.json", "baseline.json",
				    "verdict.json", "candidate-1.json", "candidate-2.json", RESULTS_MARKER,
				    "status.json"};
#define NNAMES (sizeof names / sizeof *names)

static char *dir;

static void clear(void)
{
	char path[4096];
	for (size_t i = 0; i < NNAMES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/%s", dir, RESULTS_LOCK);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir) {
		/* in memory where there is a tmpfs: the claim writes its marker durably */
		char tmpl[] = "/dev/shm/gpuopt-fuzz-results-XXXXXX";
		if (access("/dev/shm", W_OK) != 0)
			memcpy(tmpl, "/tmp/gpuopt-fuzz-results-XXXXXX", sizeof "/tmp/gpuopt-fuzz-results-XXXXXX");
		if (!mkdtemp(tmpl))
			abort();
		dir = strdup(tmpl);
	}
	clear();
	size_t start = 0, part = 0;
	for (size_t i = 0; i <= size && part < NNAMES; i++) {
		if (i < size && data[i] != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[part++]);
		FILE *f = fopen(path, "wb");
		if (!f)
			abort();
		if (i > start)
			fwrite(data + start, 1, i - start, f);
		fclose(f);
		start = i + 1;
	}
	struct page_input in;
	char *why = NULL;
	if (page_read(dir, &in, &why)) {
		for (int k = 0; k < 2; k++)
			free(page_render(&in, k ? PAGE_MARKDOWN : PAGE_HTML));
		page_input_free(&in);
	} else if (!why) {
		abort();
	}
	free(why);
	struct results_claim rc;
	why = NULL;
	enum results_refusal r = results_claim(&rc, dir, "/nonexistent-project", &why);
	if ((r == RESULTS_OK) != (why == NULL))
		abort();
	/* a refusal leaves every file as it was: nothing is removed by a claim */
	if (r == RESULTS_NOT_OURS)
		for (size_t i = 0; i < part; i++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, names[i]);
			if (access(path, F_OK) != 0)
				abort();
		}
	free(why);
	results_release(&rc);
	return 0;
}
