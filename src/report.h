/* report: the three renderings of a scan — human text grouped so a reader
 * takes it in at a glance, JSON (one object), and SARIF 2.1.0. */
#ifndef GPUOPT_REPORT_H
#define GPUOPT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "kb.h"
#include "pyscan.h"
#include "util.h"

struct scan_file {
	char *path;
	bool ok;         /* false: error says why nothing was scanned */
	char *error;
	bool notebook;
	struct scan_result res;
};

struct scan_report {
	const struct kb *kb;
	struct scan_file *files;
	size_t nfiles;
	const struct ptrvec *walk_errors; /* struct path_error * */
	double seconds;
};

struct text_options {
	bool verbose;
	bool color;
};

/* Counts over a report, shared by all renderings. */
struct scan_counts {
	size_t files_scanned, notebooks, files_with_errors, findings;
	size_t by_severity[3];
};
void scan_count(const struct scan_report *r, struct scan_counts *out);

void report_text(FILE *out, const struct scan_report *r, const struct text_options *opt);
/* Both return an owned, NUL-terminated document ending in a newline. */
char *report_json(const struct scan_report *r);
char *report_sarif(const struct scan_report *r);

#endif
