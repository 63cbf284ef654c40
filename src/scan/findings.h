/* findings: adding a finding to a scan result at a node — its position as
 * the user sees it (the cell and line in a notebook), its span, and the
 * source line for the code frame. Shared by the library rules and the GPU
 * rules, which fill in the rest. */
#ifndef GPUOPT_FINDINGS_H
#define GPUOPT_FINDINGS_H

#include <stdbool.h>

#include "pyscan.h"
#include "python/pytree.h"
#include "python/source.h"

/* A position (pt, at byte) as the user sees it: line and cell (0 outside
 * notebooks), the column in code points. */
void finding_position(const struct source *src, struct pt_point pt, uint32_t byte, uint32_t *line,
		      uint32_t *col, uint32_t *cell);

/* Appends a finding spanning `at` to r and returns it (owned by r; valid
 * until the next add). symbol is copied; keep_text adds the source line.
 * Rank fields, message and fix are the caller's to fill. */
struct finding *finding_add(struct scan_result *r, const struct source *src, PNode at,
			    const struct rule *rule, const char *library, const char *display,
			    const char *target, const char *symbol, bool keep_text);

/* Ends f's span where node `end` ends (not past its cell). */
void finding_end(const struct source *src, struct finding *f, PNode end);

/* Code of LEN bytes at S for a message: on one line, cut after 45 bytes
 * (on a character boundary) with "..." when longer than 48. Caller frees. */
char *finding_snippet(const char *s, size_t len);

#endif
