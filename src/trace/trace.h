/* trace: the engine of `gpuopt trace` — run a program under gpuopt's CUPTI
 * tracer, collect what every process of it recorded, and say what limited
 * it. The face for code (gpuopt try calls it in-process; gpuopt report
 * renders its result):
 *
 *   struct trace_config cfg;  trace_config_load(&cfg, &why);   (config.h)
 *   struct trace_settings s = {.argv = argv, .config = &cfg};
 *   struct trace *t = trace_run(&s, &why);        (tracefile.h: the data)
 *   struct trace_report *r = trace_analyze(t, &cfg);  (analyze.h)
 *   ... trace_report_free(r); trace_free(t); trace_config_free(&cfg);
 *
 * trace_run returns NULL only for errors in what was asked (the command
 * is not found, --cupti names no file, the program could not be started,
 * or --strict and tracing is impossible); a program that ran untraced
 * (no GPU, no CUPTI, another CUPTI subscriber) gives a trace whose
 * `traced` is false and whose `note` says why. Progress and warnings go
 * to stderr through core/diag. */
#ifndef GPUOPT_TRACE_TRACE_H
#define GPUOPT_TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "core/caplog.h"
#include "tracefile.h"

/* Where the program's standard output goes. */
enum trace_output {
	TRACE_OUT_INHERIT,  /* to gpuopt's standard output (read on the way for log lines) */
	TRACE_OUT_STDERR,   /* to gpuopt's standard error (--format json keeps stdout for the report) */
	TRACE_OUT_LOGS,     /* stdout to out_log, stderr to err_log (gpuopt try's logs, kept
			     * within their limit: core/caplog.h; the caller finishes them) */
};

struct trace_settings {
	char *const *argv;           /* the command; argv[0] is looked up in PATH */
	const struct trace_config *config;
	bool timeline;               /* keep every event (--timeline) */
	uint64_t max_events;         /* per process; 0: the default (1,000,000) */
	bool full;                   /* also CUPTI's runtime and driver API records */
	bool sample;                 /* sample the records of launch-heavy stretches (--sample) */
	bool strict;                 /* refuse to run untraced */
	const char *cupti;           /* a libcupti to use, or NULL to search */
	const char *tracer;          /* the tracer library, or NULL to search */
	double timeout_s;            /* stop the program after this long (0: never) */
	enum trace_output output;
	struct caplog *out_log, *err_log; /* with TRACE_OUT_LOGS */
	const char *cwd;             /* the directory the program starts in, or NULL: gpuopt's */
	bool quiet;                  /* no progress lines */
};

/* Runs the program traced (see above). Caller frees with trace_free. */
struct trace *trace_run(const struct trace_settings *s, char **why);
void trace_free(struct trace *t);

/* Where the tracer library is: `override` if given, $GPUOPT_TRACER, then
 * beside the gpuopt binary, in its build tree (trace/), and in the
 * installed library folder. NULL (and *looked, owned, says where) when
 * it is nowhere. Owned by the caller. */
char *trace_find_tracer(const char *override, char **looked);

#endif
