/* cmd_scan: `gpuopt scan [PATH...]` — find the calls a GPU library can take
 * over. Parses the options, runs the scan engine (scan/scan.h) with a sink
 * that writes each file into the report, and decides the exit code. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opterr.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/paths.h"
#include "scan/kb.h"
#include "scan/report.h"
#include "scan/scan.h"

static const char help[] =
	"Usage: gpuopt scan [OPTIONS] [PATH...]\n"
	"\n"
	"Find the calls in Python code (.py files, Jupyter notebooks, directories, or - for\n"
	"stdin) that a GPU library can take over, the smallest change that does it, and the\n"
	"calls that will stay on the CPU and why. The code is parsed, never run.\n"
	"With no PATH, scans the current directory.\n"
	"\n"
	"Options:\n"
	"  -f, --format FORMAT    text (default), json or sarif (SARIF 2.1.0)\n"
	"  -o, --output FILE      write the report to FILE (whole or not at all) instead of stdout;\n"
	"                         a symbolic link is followed; FILE may not be one of the inputs,\n"
	"                         nor an existing .py, .ipynb, .npy, .npz, .csv or .tsv file\n"
	"      --force            write the report over such a file all the same\n"
	"  -e, --exclude GLOB     skip files and directories matching GLOB (repeatable); matched\n"
	"                         against the path and the base name\n"
	"      --fail-on LEVEL    exit 1 when a finding is at or above LEVEL: note, warning,\n"
	"                         error or never (default: error)\n"
	"  -v, --verbose          text: list every call site, not only the exceptions\n"
	"      --color WHEN       auto (default: on a terminal, unless NO_COLOR is set), always, never\n"
	"  -j, --jobs N           scan with N threads (default: one per CPU)\n"
	"      --no-cache         neither read nor write the cache of results for unchanged files\n"
	"                         ($XDG_CACHE_HOME/gpuopt when absolute, else ~/.cache/gpuopt)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Directories are walked recursively; .git, virtual environments, site-packages,\n"
	"node_modules and __pycache__ are skipped; a GLOB ending in / (sub/) names\n"
	"directories only. A file named twice, or named and found in a directory, is\n"
	"scanned once. Notebook findings name the cell (counting every cell from 1) and\n"
	"the line in it. A .py file over 16 MB (a notebook over 128 MB) is not read.\n"
	"A notebook whose kernel's language is not Python (R, Julia...) is skipped,\n"
	"with a note; a UTF-8 byte order mark before a notebook's JSON is allowed.\n"
	"\n"
	"A file with a syntax error is scanned as far as the parser recovered, and one\n"
	"whose GPU code is past the flow model's work budget (tens of thousands of\n"
	"statements in one loop) as far as the budget went: each is said in a note (the\n"
	"line, and the function where the budget ran out), in JSON's \"notices\" and SARIF's\n"
	"notifications, and counted in the summary as not fully analysed; the exit code is\n"
	"still the findings'.\n"
	"\n"
	"Exit codes: 0 no finding at the --fail-on level; 1 findings at that level;\n"
	"2 usage error (a PATH that does not exist, or is neither a file nor a\n"
	"directory, a FIFO say), or nothing could be scanned: no .py or .ipynb file\n"
	"found (an empty directory, or every file excluded), or none of them readable.\n"
	"Files inside directories that cannot be read are listed as errors and the scan\n"
	"goes on with the rest.\n"
	"\n"
	"`gpuopt rules` lists the rules; `gpuopt explain RULE` says what one detects.\n";

/* The sink of a scan: each result into the report, in order. */
struct to_report {
	struct report *rep;
	bool errors_to_stderr; /* the report is not text on stdout */
	struct ptrvec path_errors; /* path, message pairs (owned), for stderr at the end */
};

static void sink_path_error(void *ctx, const char *path, const char *message)
{
	struct to_report *tr = ctx;
	report_path_error(tr->rep, path, message);
	ptrvec_push(&tr->path_errors, xstrdup(path));
	ptrvec_push(&tr->path_errors, xstrdup(message));
}

static void sink_file(void *ctx, const struct scan_file *sf)
{
	struct to_report *tr = ctx;
	if (!sf->ok && tr->errors_to_stderr)
		diag_error("%s: %s", sf->path, sf->error);
	report_file(tr->rep, sf);
}

static bool want_color(const char *when, bool to_stdout)
{
	if (strcmp(when, "always") == 0)
		return true;
	if (strcmp(when, "never") == 0)
		return false;
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	return to_stdout && isatty(STDOUT_FILENO) && !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
		{"exclude", required_argument, NULL, 'e'}, {"fail-on", required_argument, NULL, 'F'},
		{"verbose", no_argument, NULL, 'v'}, {"color", required_argument, NULL, 'C'},
		{"colour", required_argument, NULL, 'C'}, {"jobs", required_argument, NULL, 'j'},
		{"no-cache", no_argument, NULL, 'N'}, {"force", no_argument, NULL, 'W'},
		{NULL, 0, NULL, 0},
	};
	const char *format = "text", *output = NULL, *color = "auto";
	enum severity fail_on = SEV_ERROR;
	bool verbose = false, use_cache = true, force = false;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	struct ptrvec excludes = {0};
	int rc = EXIT_USAGE;
	int c;
	optind = 1;
	opterr = 0;
	static const char shortopts[] = "f:o:e:vj:";
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "sarif")) {
				diag_error("scan: --format: '%s' is not text, json or sarif", format);
				goto out;
			}
			break;
		case 'o': output = optarg; break;
		case 'e': ptrvec_push(&excludes, optarg); break;
		case 'F':
			if (!severity_parse(optarg, &fail_on)) {
				diag_error("scan: --fail-on: '%s' is not note, warning, error or never", optarg);
				goto out;
			}
			break;
		case 'v': verbose = true; break;
		case 'N': use_cache = false; break;
		case 'W': force = true; break;
		case 'C':
			color = optarg;
			if (strcmp(color, "auto") && strcmp(color, "always") && strcmp(color, "never")) {
				diag_error("scan: --color: '%s' is not auto, always or never", color);
				goto out;
			}
			break;
		case 'j': {
			char *end;
			jobs = strtol(optarg, &end, 10);
			if (*end || jobs < 1 || jobs > 1024) {
				diag_error("scan: --jobs: '%s' is not a number from 1 to 1024", optarg);
				goto out;
			}
			break;
		}
		default:
			option_error("scan", argc, argv, shortopts, longopts);
			goto out;
		}
	}
	ptrvec_push(&excludes, NULL);

	/* A PATH that cannot be scanned is a usage error, said before any
	 * work: a typo must not pass in CI. */
	char *why;
	char *const *paths = argv + optind;
	size_t npaths = (size_t)(argc - optind);
	char *dot[] = {"."};
	bool paths_ok = true;
	for (size_t i = 0; i < npaths; i++)
		if (!path_arg_ok(paths[i], &why)) {
			diag_error("scan: %s: %s", paths[i], why);
			free(why);
			paths_ok = false;
		}
	if (!paths_ok)
		goto out;
	struct output_inputs in = {npaths ? paths : dot, npaths ? npaths : 1, ".py .ipynb"};
	if (output && !output_check(output, &in, force, &why)) {
		diag_error("scan: -o '%s': %s", output, why);
		free(why);
		goto out;
	}

	struct kb *kb = kb_load(&why);
	if (!kb) {
		diag_error("knowledge data: %s", why);
		free(why);
		goto out;
	}
	struct report_options ro = {
		.format = strcmp(format, "json") == 0 ? FMT_JSON : strcmp(format, "sarif") == 0 ? FMT_SARIF : FMT_TEXT,
		.verbose = verbose,
		.color = want_color(color, !output),
	};
	struct atomic_file af;
	if (!atomic_open(&af, output ? output : "-", &why)) {
		diag_error("cannot write '%s': %s", output, why);
		free(why);
		kb_free(kb);
		goto out;
	}
	struct to_report tr = {.rep = report_open(af.f, kb, &ro),
			       .errors_to_stderr = ro.format != FMT_TEXT || output};
	struct scan_options so = {.kb = kb, .excludes = (char *const *)excludes.items, .jobs = (int)jobs,
				  .keep_text = ro.format == FMT_TEXT, .render = &ro,
				  .cache = use_cache ? cache_open(kb, ro.format == FMT_TEXT) : NULL};
	struct scan_sink sink = {.path_error = sink_path_error, .file = sink_file, .ctx = &tr};
	struct scan_stats st;
	scan_paths(&so, paths, npaths, &sink, &st);
	struct scan_counts n;
	/* a failed write shows in both; the commit knows its error */
	bool rendered = report_close(tr.rep, st.seconds, &n);
	bool written = atomic_commit(&af, &why) && rendered;
	if (!written && output && strcmp(output, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
		diag_error("scan: cannot write '%s': %s", output, why ? why : "write failed");
	free(why);
	/* walk errors go to stderr too when the report is not text on stdout */
	for (size_t i = 0; tr.errors_to_stderr && i < tr.path_errors.len; i += 2)
		diag_error("%s: %s", (char *)tr.path_errors.items[i], (char *)tr.path_errors.items[i + 1]);
	for (size_t i = 0; i < tr.path_errors.len; i++)
		free(tr.path_errors.items[i]);
	ptrvec_free(&tr.path_errors);
	cache_close(so.cache); /* after the report: its tallies hold the cache's strings */
	if (n.files_scanned == 0 && n.files_with_errors == 0 && n.notebooks_skipped)
		diag_error("scan: nothing scanned: the notebook%s found %s in another language than Python",
			   n.notebooks_skipped == 1 ? "" : "s", n.notebooks_skipped == 1 ? "is" : "are");
	else if (n.files_scanned == 0 && n.files_with_errors == 0)
		diag_error("scan: no .py or .ipynb files found%s", excludes.len > 1 ? " (after --exclude)" : "");
	if (!written || n.files_scanned == 0) {
		rc = EXIT_USAGE; /* a scan of nothing must not pass in CI */
	} else {
		rc = EXIT_OK;
		for (int sev = fail_on; sev < SEV_NONE; sev++)
			if (n.by_severity[sev])
				rc = EXIT_FAIL;
	}
	kb_free(kb);
out:
	ptrvec_free(&excludes);
	return rc;
}

const struct command cmd_scan = {
	.name = "scan",
	.summary = "find the calls a GPU library can take over, and the ones that stay on the CPU",
	.help = help,
	.run = run,
};
