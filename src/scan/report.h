/* report: renders a scan as it happens, file by file in input order, so no
 * more than the files still being scanned are held in memory. Three
 * formats: human text grouped so a reader takes it in at a glance, gpuopt's
 * JSON object, and SARIF 2.1.0. */
#ifndef GPUOPT_REPORT_H
#define GPUOPT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "kb.h"
#include "pyscan.h"
#include "core/util.h"

struct scan_file {
	char *path;
	bool ok;         /* false: error says why nothing was scanned */
	char *error;
	bool notebook;
	char *language;  /* a notebook in another language ("R"): skipped, with a note */
	struct scan_result res;
	struct buf out;  /* the findings as the format writes them (report_render) */
	bool rendered;
};

enum report_format { FMT_TEXT, FMT_JSON, FMT_SARIF };

struct report_options {
	enum report_format format;
	bool verbose; /* text: list every site */
	bool color;   /* text: ANSI colour */
};

/* Totals over everything reported. A file not fully analysed was scanned
 * (it counts in files_scanned) as far as it could be: a syntax error, or the
 * flow model's work budget spent (struct scan_result). */
struct scan_counts {
	size_t files_scanned, notebooks, files_with_errors, findings;
	size_t files_not_fully_analysed;
	size_t notebooks_skipped; /* in another language than Python: not scanned */
	size_t by_severity[3];
};

struct report;

/* Starts a report on out (which the caller owns and closes). */
struct report *report_open(FILE *out, const struct kb *kb, const struct report_options *opt);
/* Renders sf's findings for the format into sf->out, ahead of report_file;
 * touches nothing shared, so scan workers call it in parallel. A no-op for
 * formats that lay out a file only in order (text). */
void report_render(const struct report_options *opt, struct scan_file *sf);
/* Adds one file's outcome (rendering it now if report_render did not);
 * call in input order. */
void report_file(struct report *r, const struct scan_file *sf);
/* Adds a path that could not be read at all (a walk error). */
void report_path_error(struct report *r, const char *path, const char *message);
/* Ends the document, fills *counts, frees r. Returns false if a write to
 * out failed. */
bool report_close(struct report *r, double seconds, struct scan_counts *counts);

/* Formats (report_text.c, report_json.c): each keeps its own state. */
struct report_format_ops {
	void (*begin)(struct report *r);
	void (*file)(struct report *r, const struct scan_file *sf); /* may be NULL */
	/* Appends each finding, each starting with a comma (NULL: none). */
	void (*render)(const struct scan_file *sf, struct buf *out);
	void (*end)(struct report *r, double seconds);
};
extern const struct report_format_ops report_text_ops, report_json_ops, report_sarif_ops;

struct path_error;

/* Counts per key for the summary, in order of first appearance; keys are
 * the kb's strings, so mostly matched by pointer. */
struct tally {
	const char **keys;
	size_t *counts;
	size_t len, cap;
};

struct report {
	FILE *out;
	const struct kb *kb;
	struct report_options opt;
	const struct report_format_ops *ops;
	struct scan_counts counts;
	struct ptrvec errors;  /* struct path_error *, owned: unreadable paths, in order */
	struct ptrvec notices; /* char *, owned: JSON objects of the notices of files not fully
				* analysed (gpuopt JSON: notices; SARIF: notifications) */
	struct tally tallies[5]; /* target, category, severity, library, rule */
	json_t *by_target, *by_category, *by_severity, *by_library, *by_rule; /* at the end */
	size_t nresults;       /* findings written so far (JSON/SARIF commas) */
};

#endif
