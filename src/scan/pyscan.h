/* pyscan: the static scanner. Parses one source (with pyparse, or with
 * tree-sitter where pyparse declines), resolves names the way Python's
 * imports bind them (per scope, in source order), types the values that
 * come out of known library calls, and turns each call site into at most
 * one finding by looking the callee up in the kb.
 * It never runs the code. A source with syntax errors is scanned as far as
 * the parser recovered. */
#ifndef GPUOPT_PYSCAN_H
#define GPUOPT_PYSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb.h"
#include "python/source.h"

struct finding {
	uint32_t line, col, end_line, end_col; /* 1-based; columns in code points */
	uint32_t cell;                         /* notebooks: 1-based cell; else 0 */
	uint32_t file_line, file_end_line;     /* notebooks: the lines in the .ipynb file (0: unknown) */
	uint32_t start_byte, end_byte;         /* in source->text */
	const struct rule *rule;               /* borrowed from the kb */
	const char *library;                   /* borrowed: CPU library id */
	const char *display;                   /* borrowed: CPU library display name */
	const char *target;                    /* borrowed; NULL = no GPU target */
	char *headline;                        /* owned: the library's first step, for port findings */
	char *line_text;                       /* owned: the source line the finding starts on */
	char *symbol;                          /* owned: qualified name of the callee */
	char *message;                         /* owned */
	char *fix;                             /* owned, may be NULL */
	/* Hot paths: 0 runs once; 1 in a function called from a loop; 2 in a
	 * loop; 3 in a nested loop; and so on. */
	uint32_t rank;
	uint32_t loop_line;                    /* the loop that makes it hot, or 0 */
	char *rank_reason;                     /* owned: "in a loop at line 12", or NULL */
	/* scanner-internal */
	int func;                              /* enclosing function record, -1 module */
	uint32_t loop_depth;
	bool needs_loop;                       /* only a finding when in a hot path */
};

struct scan_result {
	struct finding *items;
	size_t n, cap;
	uint32_t syntax_error_line; /* 1-based line of the first syntax error, 0 if none */
	uint32_t syntax_error_cell;
	/* Not fully analysed: the flow model's work budget ran out at this
	 * line (in its cell, for a notebook; 0: it did not), in this function
	 * ("Class.method", owned; NULL: at module level); the GPU rules
	 * (GPU601-605) saw nothing past it. */
	uint32_t budget_line, budget_cell;
	char *budget_func;
	char *strings; /* when set (results read from the cache), every finding's
			* owned strings, and budget_func, live in this one block instead */
};

/* A reusable scanner: owns its parsers and a syntax tree. One per thread. */
struct pyscanner;

struct pyscanner *pyscanner_new(const struct kb *kb);
/* Whether findings carry what only the text report shows (the source line
 * for code frames, the per-library first step). Default: true. */
void pyscanner_keep_text(struct pyscanner *ps, bool keep);
void pyscanner_free(struct pyscanner *ps); /* accepts NULL */
/* Runs the flow model on every file, GPU library or not (tests, fuzzing). */
void pyscanner_force_flow(struct pyscanner *ps, bool force);

/* Scans src into out (which must be zeroed or freed). Returns false and
 * sets *why (owned) only when the parser gave up (time limit). */
bool pyscan(struct pyscanner *ps, const struct source *src, struct scan_result *out, char **why);

/* What the scan of one file of a project knows of the others (project.h). */
struct project;
struct flow_summary;
struct pyscan_project {
	const struct project *project; /* facts of the other modules, or NULL */
	const char *module;            /* this file's module name, or NULL */
	struct flow_summary *summary;  /* filled with this file's summary when not NULL */
	bool plain;                    /* known not to use a GPU library: no flow model */
};

/* pyscan() inside a project (pp may be NULL: the file alone). */
bool pyscan_in(struct pyscanner *ps, const struct source *src, const struct pyscan_project *pp,
	       struct scan_result *out, char **why);

/* Does the text use a GPU array library (or the NumPy/CuPy array-module
 * idiom)? Only those files get the flow model, and only they take part in a
 * project's cross-module facts. */
bool pyscan_gpu_candidate(const char *text, size_t len);

void scan_result_free(struct scan_result *r); /* accepts a zeroed result */
/* Frees the strings a finding owns (not the finding). */
void finding_free(struct finding *f);

#endif
