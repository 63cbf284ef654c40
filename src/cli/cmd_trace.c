/* cmd_trace: `gpuopt trace [OPTIONS] -- COMMAND [ARGS...]` runs a program
 * under gpuopt's CUPTI tracer and says what the GPU really did, which
 * Python line made it do it, and what to change; `gpuopt trace show FILE`
 * re-analyses a saved trace; `gpuopt trace rules` lists the rules and their
 * thresholds. This file holds the options, the help, the rendering choices
 * and the exit codes; the engine is src/trace/ (trace.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/util.h"
#include "trace/analyze.h"
#include "trace/config.h"
#include "trace/export.h"
#include "trace/report.h"
#include "trace/trace.h"

static const char help[] =
	"Usage: gpuopt trace [OPTIONS] [--] COMMAND [ARGS...]\n"
	"       gpuopt trace show [OPTIONS] FILE [OPTIONS]\n"
	"       gpuopt trace rules\n"
	"\n"
	"Run COMMAND (usually python3 script.py) with gpuopt's CUPTI tracer injected\n"
	"(CUDA_INJECTION64_PATH; children inherit it, one summary per process, merged)\n"
	"and report what limited it: the run's time budget, a table per Python line\n"
	"sorted by cost, the kernels, the GPU's idle time split as HTA does (host wait /\n"
	"kernel wait / other), and findings, each with its evidence, the seconds of the\n"
	"run it explains and the fix (`gpuopt trace rules` lists them).\n"
	"\n"
	"Each launch, copy, synchronize and allocation is charged to the Python line\n"
	"that made it (the innermost frame outside site-packages and the standard\n"
	"library, and the library frame it called), read at the moment of the call\n"
	"(CPython 3.9-3.13; other programs get a trace without lines). By default the\n"
	"tracer keeps counters per line in constant memory; --timeline keeps every event.\n"
	"Once launches come faster than sample_launch_rate per second (20,000) for\n"
	"20 ms, it stops CUPTI's kernel, copy, synchronization and allocation records\n"
	"until they slow down, and counts each launch made then as one kernel at the\n"
	"mean time of the kernels recorded before (every call is still counted by line,\n"
	"with its host time): the report then says \"Sampled\". --set sample_window_ms=10\n"
	"records 10 ms in every 200 (sample_period_ms) instead and scales from those\n"
	"windows, at more overhead. --exact records everything, at the most overhead\n"
	"on loops of tiny kernels.\n"
	"The trace is saved at exit, at cudaDeviceReset, on SIGTERM and fatal signals,\n"
	"and every 2 s while it works or as soon as it goes quiet, so a program that\n"
	"crashes or is killed still leaves one. The program runs in a process group of its\n"
	"own: a SIGHUP, SIGINT, SIGQUIT or SIGTERM sent to gpuopt is passed on to it (SIGPIPE,\n"
	"SIGUSR1, SIGUSR2 and SIGALRM as SIGTERM), and it gets 5 s to save its trace; if\n"
	"gpuopt itself is killed, a watchdog ends the program and removes the trace's\n"
	"temporary directory. What the program leaves in its group when it ends is ended too.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE       trace: save the whole trace, to re-analyse with\n"
	"                          `gpuopt trace show`; trace show: write the report to FILE\n"
	"                          (whole or not at all; - is stdout) instead of stdout\n"
	"  -f, --format FMT        text (default) or json; with json the report goes to\n"
	"                          standard output and the program's standard output to\n"
	"                          standard error\n"
	"      --export-trace FILE the timeline as Chrome trace-event JSON with Kineto's names\n"
	"                          (Perfetto, Holistic Trace Analysis); implies --timeline\n"
	"      --force             let -o or --export-trace replace an existing .py, .ipynb,\n"
	"                          .npy, .npz, .csv or .tsv file (never one the traced\n"
	"                          command names, nor the trace shown)\n"
	"      --timeline          keep every kernel, copy, call and NVTX range\n"
	"      --max-events N      timeline events kept per process (default 1000000)\n"
	"      --full              also CUPTI's record of every runtime and driver API call\n"
	"                          (more overhead; default: only the calls that matter)\n"
	"      --exact             record every kernel, copy and allocation, however fast the\n"
	"                          launches come (--timeline and --full do too)\n"
	"      --sample            sample the records of fast launches (the default; an\n"
	"                          error beside --exact, --timeline or --full)\n"
	"      --cupti PATH        the libcupti to load (default: the program's own, the\n"
	"                          nvidia cupti wheel, $CUDA_HOME, /usr/local/cuda*)\n"
	"      --strict            exit 2 instead of running the program untraced when it\n"
	"                          cannot be traced (no GPU, no CUPTI, another subscriber)\n"
	"      --timeout SECONDS   stop the program (SIGTERM, then SIGKILL 5 s later)\n"
	"      --set NAME=VALUE    change a threshold (repeatable; see `gpuopt trace rules`)\n"
	"      --lines N           rows of the per-line table (default 15; 0: all)\n"
	"      --kernels N         rows of the kernel table (default 10; 0: all)\n"
	"      --tracer PATH       the tracer library (default: found beside gpuopt)\n"
	"  -q, --quiet             no progress line\n"
	"  -h, --help              show this help\n"
	"\n"
	"CUDA allows one CUPTI subscriber per process: under gpuopt trace, torch.profiler,\n"
	"Nsight Systems and compute-sanitizer inside the program get none, and when one of\n"
	"them holds it gpuopt says which and the program runs untraced (--strict: exit 2).\n"
	"cpu-fallback reads cudf.pandas' NVTX ranges (EXECUTE_SLOW), cuml.accel's -v lines\n"
	"and networkx's DEBUG log lines from the program's output.\n"
	"\n"
	"Exit codes: the program's own when it failed: its exit status, or 128+N when\n"
	"signal N ended it (as a shell reports it; 124 when --timeout stopped it), with its\n"
	"trace reported all the same; else 0 when it ran traced, 1 when it ran untraced or\n"
	"the trace could not be written; 2 usage error, command not found, an unreadable or\n"
	"damaged trace file, or --strict and it cannot be traced.\n";

struct opts {
	const char *output, *format, *export_path, *cupti, *tracer;
	bool timeline, full, sample, exact, strict, quiet, force;
	uint64_t max_events;
	double timeout_s;
	size_t max_lines, max_kernels;
	struct ptrvec sets;
};

static bool parse_count(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *end || errno) {
		diag_error("trace: %s: '%s' is not a whole number", opt, s);
		return false;
	}
	*out = v;
	return true;
}

static const char *const valued[] = {"--output", "-o", "--format", "-f", "--export-trace", "--max-events",
				     "--cupti", "--timeout", "--set", "--lines", "--kernels", "--tracer", NULL};

/* Parses options up to the first argument that is not one (or "--"); returns
 * the index of the first remaining argument, or -1 after an error. */
static int parse_opts(int argc, char **argv, int from, struct opts *o)
{
	int i = from;
	for (; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0)
			return i + 1;
		if (arg[0] != '-' || strcmp(arg, "-") == 0)
			return i;
		char opt[32];
		const char *val = NULL, *eq = strchr(arg, '=');
		size_t olen = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
		snprintf(opt, sizeof opt, "%.*s", (int)(olen < 31 ? olen : 31), arg);
		bool takes = false;
		for (size_t k = 0; valued[k]; k++)
			takes |= strcmp(opt, valued[k]) == 0;
		if (takes) {
			if (eq && arg[1] == '-')
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				diag_error("trace: option %s needs a value", opt);
				return -1;
			}
		} else if (eq && arg[1] == '-') {
			diag_error("trace: option %s takes no value", opt);
			return -1;
		}
		uint64_t n;
		if (!strcmp(opt, "-o") || !strcmp(opt, "--output")) {
			o->output = val;
		} else if (!strcmp(opt, "-f") || !strcmp(opt, "--format")) {
			if (strcmp(val, "text") && strcmp(val, "json")) {
				diag_error("trace: --format: '%s' is not text or json", val);
				return -1;
			}
			o->format = val;
		} else if (!strcmp(opt, "--export-trace")) {
			o->export_path = val;
			o->timeline = true;
		} else if (!strcmp(opt, "--timeline")) {
			o->timeline = true;
		} else if (!strcmp(opt, "--max-events")) {
			if (!parse_count(opt, val, &o->max_events))
				return -1;
			if (!o->max_events) {
				diag_error("trace: --max-events: must be at least 1");
				return -1;
			}
		} else if (!strcmp(opt, "--full")) {
			o->full = true;
		} else if (!strcmp(opt, "--sample")) {
			o->sample = true;
		} else if (!strcmp(opt, "--exact")) {
			o->exact = true;
		} else if (!strcmp(opt, "--cupti")) {
			o->cupti = val;
		} else if (!strcmp(opt, "--tracer")) {
			o->tracer = val;
		} else if (!strcmp(opt, "--strict")) {
			o->strict = true;
		} else if (!strcmp(opt, "--force")) {
			o->force = true;
		} else if (!strcmp(opt, "-q") || !strcmp(opt, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(opt, "--timeout")) {
			char *end;
			o->timeout_s = strtod(val, &end);
			if (!*val || *end || !(o->timeout_s > 0)) {
				diag_error("trace: --timeout: '%s' is not a positive number of seconds", val);
				return -1;
			}
		} else if (!strcmp(opt, "--set")) {
			ptrvec_push(&o->sets, (void *)val);
		} else if (!strcmp(opt, "--lines")) {
			if (!parse_count(opt, val, &n))
				return -1;
			o->max_lines = (size_t)n;
		} else if (!strcmp(opt, "--kernels")) {
			if (!parse_count(opt, val, &n))
				return -1;
			o->max_kernels = (size_t)n;
		} else if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			fputs(help, stdout);
			exit(EXIT_OK);
		} else {
			diag_error("trace: unknown option '%s' (see `gpuopt trace --help`)", arg);
			return -1;
		}
	}
	return i;
}

static bool load_config(struct trace_config *cfg, const struct opts *o)
{
	char *why = NULL;
	if (!trace_config_load(cfg, &why)) {
		diag_error("trace: %s", why);
		free(why);
		return false;
	}
	for (size_t i = 0; i < o->sets.len; i++)
		if (!trace_config_set(cfg, o->sets.items[i], &why)) {
			diag_error("trace: %s", why);
			free(why);
			trace_config_free(cfg);
			return false;
		}
	return true;
}

/* Checks -o and --export-trace before any work (core/fileio.h's rule):
 * never one of inputs (the saved trace shown, or the files the traced
 * command names), a source or data file only with --force, and not
 * standard output, which carries the report (except trace show's -o,
 * which is the report: show). */
static bool outputs_ok(const char *cmd, const struct opts *o, char *const *inputs, size_t n, bool show)
{
	const char *paths[2] = {o->output, o->export_path}, *names[2] = {"-o", "--export-trace"};
	if (show && o->output && o->export_path && output_same(o->output, o->export_path)) {
		diag_error("%s: -o and --export-trace both name '%s': one would replace the other", cmd,
			   o->export_path);
		return false;
	}
	for (int i = 0; i < 2; i++) {
		if (!paths[i] || (show && i == 0 && !strcmp(paths[i], "-")))
			continue;
		if (!strcmp(paths[i], "-")) {
			diag_error("%s: %s -: standard output carries the report: give a file name", cmd, names[i]);
			return false;
		}
		struct output_inputs in = {inputs, n, ""};
		char *why = NULL;
		if (!output_check(paths[i], &in, o->force, &why)) {
			diag_error("%s: %s '%s': %s", cmd, names[i], paths[i], why);
			free(why);
			return false;
		}
	}
	return true;
}

/* Renders the report (to stdout, or for trace show to -o's file) and
 * writes the exports (for trace, -o's copy of the trace). False when an
 * export or the report's file failed (said; stdout's failure is main's). */
static bool render(const struct trace *t, const struct trace_config *cfg, const struct opts *o, bool show)
{
	bool ok = true;
	char *why = NULL;
	if (!show && o->output && !trace_save(t, o->output, &why)) {
		diag_error("trace: cannot save the trace to '%s': %s", o->output, why);
		free(why);
		why = NULL;
		ok = false;
	}
	if (o->export_path && !trace_export_chrome(t, o->export_path, &why)) {
		diag_error("trace: --export-trace '%s': %s", o->export_path, why);
		free(why);
		ok = false;
	}
	const char *to = show && o->output && strcmp(o->output, "-") ? o->output : NULL;
	struct atomic_file af;
	if (to && !atomic_open(&af, to, &why)) {
		diag_error("trace show: -o: cannot write '%s': %s", to, why);
		free(why);
		return false;
	}
	FILE *out = to ? af.f : stdout;
	struct trace_report *r = trace_analyze(t, cfg);
	if (!strcmp(o->format, "json")) {
		json_t *j = trace_report_json(r);
		json_dumpf(j, out, JSON_INDENT(1));
		fputc('\n', out);
		json_decref(j);
	} else {
		struct trace_report_style st = {o->max_lines, o->max_kernels};
		/* the program's words, files and names as a terminal may show them */
		struct term_safe_stream ts;
		trace_report_text(term_safe_open(&ts), r, &st);
		term_safe_close(&ts, out);
	}
	trace_report_free(r);
	if (to && !atomic_commit(&af, &why)) {
		diag_error("trace show: -o: cannot write '%s': %s", to, why);
		free(why);
		ok = false;
	}
	return ok;
}

static int run_show(int argc, char **argv, struct opts *o)
{
	/* options before FILE and after it, as verify and bench take them */
	int first = parse_opts(argc, argv, 2, o);
	if (first < 0)
		return EXIT_USAGE;
	int end = first < argc ? parse_opts(argc, argv, first + 1, o) : argc;
	if (end < 0)
		return EXIT_USAGE;
	if (first >= argc || end != argc) {
		diag_error("trace show: give one saved trace FILE%s (see `gpuopt trace --help`)",
			   first >= argc ? "" : ", not more");
		return EXIT_USAGE;
	}
	if (o->cupti || o->tracer || o->strict || o->full || o->sample || o->exact || o->timeout_s > 0 ||
	    o->max_events) {
		diag_error("trace show: --cupti, --tracer, --strict, --full, --sample, --exact, --timeout and "
			   "--max-events are for tracing a run");
		return EXIT_USAGE;
	}
	if (!outputs_ok("trace show", o, argv + first, 1, true))
		return EXIT_USAGE;
	struct trace_config cfg;
	if (!load_config(&cfg, o))
		return EXIT_USAGE;
	struct trace t;
	char *why = NULL;
	if (!trace_load(argv[first], &t, &why)) {
		diag_error("trace show: %s", why);
		free(why);
		trace_config_free(&cfg);
		return EXIT_USAGE;
	}
	bool ok = render(&t, &cfg, o, true);
	trace_clear(&t);
	trace_config_free(&cfg);
	return ok ? EXIT_OK : EXIT_USAGE;
}

static int run_rules(int argc)
{
	if (argc > 2) {
		diag_error("trace rules: takes no arguments");
		return EXIT_USAGE;
	}
	struct opts o = {0};
	struct trace_config cfg;
	if (!load_config(&cfg, &o))
		return EXIT_USAGE;
	puts("Rules (data/trace.json):");
	for (int i = 0; i < R_COUNT; i++)
		printf("  %-18s %-8s %s\n      fix: %s\n", cfg.rules[i].name, cfg.rules[i].severity, cfg.rules[i].summary,
		       cfg.rules[i].fix);
	puts("\nThresholds (--set NAME=VALUE):");
	for (int i = 0; i < TH_COUNT; i++)
		printf("  %-22s %-10g %s\n", trace_threshold_names[i], cfg.th[i], cfg.th_about[i] ? cfg.th_about[i] : "");
	trace_config_free(&cfg);
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct opts o = {.format = "text", .max_lines = 15, .max_kernels = 10};
	int rc;
	if (argc >= 2 && !strcmp(argv[1], "show")) {
		rc = run_show(argc, argv, &o);
		ptrvec_free(&o.sets);
		return rc;
	}
	if (argc >= 2 && !strcmp(argv[1], "rules"))
		return run_rules(argc);
	int first = parse_opts(argc, argv, 1, &o);
	if (first < 0) {
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	if (first >= argc) {
		diag_error("trace: no command to trace (gpuopt trace [OPTIONS] -- COMMAND [ARGS...])");
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	if (o.sample && (o.timeline || o.full || o.exact)) {
		diag_error("trace: --sample leaves records out, and %s keeps them all: use one",
			   o.exact ? "--exact" : o.full ? "--full" : "--timeline (or --export-trace)");
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	struct ptrvec named = {0};
	output_command_files(argv + first, &named);
	bool outs_ok = outputs_ok("trace", &o, (char *const *)named.items, named.len, false);
	for (size_t i = 0; i < named.len; i++)
		free(named.items[i]);
	ptrvec_free(&named);
	if (!outs_ok) {
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	bool sample = !(o.timeline || o.full || o.exact); /* the default */
	struct trace_config cfg;
	if (!load_config(&cfg, &o)) {
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	if (sample && cfg.th[TH_SAMPLE_WINDOW_MS] != 0 &&
	    !(cfg.th[TH_SAMPLE_WINDOW_MS] >= 1 && cfg.th[TH_SAMPLE_WINDOW_MS] < cfg.th[TH_SAMPLE_PERIOD_MS])) {
		diag_error("trace: sampling: sample_window_ms (%g) must be 0 (no windows), or at least 1 and shorter than "
			   "sample_period_ms (%g) (or record everything: --exact)",
			   cfg.th[TH_SAMPLE_WINDOW_MS], cfg.th[TH_SAMPLE_PERIOD_MS]);
		trace_config_free(&cfg);
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	struct trace_settings s = {
		.argv = argv + first,
		.config = &cfg,
		.timeline = o.timeline,
		.max_events = o.max_events,
		.full = o.full,
		.sample = sample,
		.strict = o.strict,
		.cupti = o.cupti,
		.tracer = o.tracer,
		.timeout_s = o.timeout_s,
		.output = !strcmp(o.format, "json") ? TRACE_OUT_STDERR : TRACE_OUT_INHERIT,
		.quiet = o.quiet,
	};
	char *why = NULL;
	struct trace *t = trace_run(&s, &why);
	if (!t) {
		diag_error("trace: %s", why);
		free(why);
		trace_config_free(&cfg);
		ptrvec_free(&o.sets);
		return EXIT_USAGE;
	}
	bool strict_stop = false;
	for (size_t i = 0; i < t->nprocs; i++)
		strict_stop |= t->procs[i].strict && !strcmp(t->procs[i].status, "not-traced");
	bool exported = render(t, &cfg, &o, false);
	if (strict_stop)
		rc = EXIT_USAGE;
	else if (t->timed_out)
		rc = 124;
	else if (t->signal)
		rc = 128 + t->signal;
	else if (t->exit_code > 0)
		rc = t->exit_code;
	else if (!t->traced || t->exit_code != 0 || !exported)
		rc = EXIT_FAIL;
	else
		rc = EXIT_OK;
	trace_free(t);
	trace_config_free(&cfg);
	ptrvec_free(&o.sets);
	return rc;
}

const struct command cmd_trace = {
	.name = "trace",
	.summary = "run a program under a CUPTI tracer: what the GPU did, which line, what to change",
	.help = help,
	.run = run,
};
