/* testutil: helpers shared by the unit tests — scan a snippet of Python with
 * a knowledge base and find findings by line. */
#ifndef GPUOPT_TESTUTIL_H
#define GPUOPT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scan/kb.h"
#include "scan/pyscan.h"
#include "python/source.h"

/* Scans code (as file `path`) with kb; the result is owned by the caller. */
static inline struct scan_result scan_snippet(const struct kb *kb, const char *path, const char *code)
{
	struct source src;
	char *why = NULL;
	struct scan_result r;
	memset(&r, 0, sizeof r);
	assert_true(source_from_python(path, code, strlen(code), &src, &why));
	struct pyscanner *ps = pyscanner_new(kb);
	assert_true(pyscan(ps, &src, &r, &why));
	pyscanner_free(ps);
	source_free(&src);
	return r;
}

/* The n-th (0-based) finding on a 1-based line, or NULL. */
static inline const struct finding *finding_at(const struct scan_result *r, uint32_t line, int n)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->items[i].line == line && n-- == 0)
			return &r->items[i];
	return NULL;
}

static inline size_t findings_on(const struct scan_result *r, uint32_t line)
{
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		k += r->items[i].line == line;
	return k;
}

#endif
