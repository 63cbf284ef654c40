/* report: `gpuopt try`'s results directory as one self-contained HTML page
 * (inline CSS and SVG plots; no script, no network, no fonts to fetch) a
 * scientist can attach to a pull request or a paper, or as Markdown for a
 * PR comment. The verdict first; then the contract, the environment, the
 * run-time distributions (each run a dot, the speedup with its interval),
 * the verification table, the CPU fallbacks, the trace breakdown when one
 * was taken, the scan findings, and the commands to reproduce.
 *
 * The reader takes whatever the files hold: a missing file, key or value
 * of the wrong type leaves its part out (the page says the results are
 * incomplete), never a crash. */
#ifndef GPUOPT_REPORT_PAGE_H
#define GPUOPT_REPORT_PAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum page_kind { PAGE_HTML, PAGE_MARKDOWN };

/* The results of one try, as read from its directory (borrowed JSON). */
struct page_input {
	const char *dir;              /* shown as where the results are */
	json_t *contract, *environment, *scan, *baseline, *verdict; /* each may be NULL */
	json_t **candidates;          /* candidate-1.json, ... (entries may be NULL) */
	size_t ncandidates;
	char **damaged;               /* "FILE: why" for each file there but unreadable (owned) */
	size_t ndamaged;
	/* from status.json: how the last try ended when it did not finish
	 * ("the last try stopped at ...: message", ...; owned, NULL when it
	 * finished or the results predate status.json), and the saved steps
	 * it did not write or check: an earlier try's (owned names) */
	char *unfinished;
	char **stale;
	size_t nstale;
};

/* Reads dir's files into in (the caller frees with page_input_free); a
 * file that is there but cannot be read as a JSON object is left out and
 * named in in->damaged. Results the last try did not confirm are named in
 * in->stale, and kept. False with *why (owned) when dir cannot be read or
 * holds no try results at all. */
bool page_read(const char *dir, struct page_input *in, char **why);
void page_input_free(struct page_input *in);

/* The page or the Markdown, owned by the caller. */
char *page_render(const struct page_input *in, enum page_kind kind);

#endif
