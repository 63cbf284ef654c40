/* cmd_scan: `gpuopt scan [PATH...]` — find the calls a GPU library can take
 * over. Collects the files, scans them on worker threads (one pyscanner
 * each), then renders the report in input order. */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "diag.h"
#include "fileio.h"
#include "kb.h"
#include "paths.h"
#include "pyscan.h"
#include "report.h"

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
	"  -o, --output FILE      write the report to FILE (whole or not at all) instead of stdout\n"
	"  -e, --exclude GLOB     skip files and directories matching GLOB (repeatable); matched\n"
	"                         against the path and the base name\n"
	"      --fail-on LEVEL    exit 1 when a finding is at or above LEVEL: note, warning,\n"
	"                         error or never (default: error)\n"
	"  -v, --verbose          text: list every call site, not only the exceptions\n"
	"      --color WHEN       auto (default: on a terminal, unless NO_COLOR is set), always, never\n"
	"  -j, --jobs N           scan with N threads (default: one per CPU)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Directories are walked recursively; .git, virtual environments, site-packages,\n"
	"node_modules and __pycache__ are skipped. Notebook findings name the cell (counting\n"
	"every cell from 1) and the line in it.\n"
	"\n"
	"Exit codes: 0 no finding at the --fail-on level; 1 findings at that level;\n"
	"2 usage error, or nothing could be scanned. Files that cannot be read are listed\n"
	"as errors and the scan goes on with the rest.\n"
	"\n"
	"`gpuopt rules` lists the rules; `gpuopt explain RULE` says what one detects.\n";

struct job {
	const struct kb *kb;
	struct scan_file *files;
	size_t nfiles;
	atomic_size_t next;
};

static void scan_one(struct pyscanner *ps, struct scan_file *sf)
{
	struct source src;
	char *why;
	if (!source_load(sf->path, &src, &why)) {
		sf->error = why ? why : xstrdup("cannot read");
		return;
	}
	sf->notebook = src.notebook;
	if (!pyscan(ps, &src, &sf->res, &why)) {
		sf->error = why;
		source_free(&src);
		return;
	}
	sf->ok = true;
	source_free(&src);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct pyscanner *ps = pyscanner_new(j->kb);
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->nfiles)
			break;
		scan_one(ps, &j->files[i]);
	}
	pyscanner_free(ps);
	return NULL;
}

static void scan_all(struct job *j, int jobs)
{
	if (jobs > (int)j->nfiles)
		jobs = (int)j->nfiles;
	if (jobs <= 1) {
		worker(j);
		return;
	}
	pthread_t *t = xcalloc((size_t)jobs, sizeof *t);
	int started = 0;
	for (; started < jobs; started++)
		if (pthread_create(&t[started], NULL, worker, j) != 0)
			break;
	if (started == 0)
		worker(j);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
		{NULL, 0, NULL, 0},
	};
	const char *format = "text", *output = NULL, *color = "auto";
	enum severity fail_on = SEV_ERROR;
	bool verbose = false;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	struct ptrvec excludes = {0};
	int rc = EXIT_USAGE;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:e:vj:", longopts, NULL)) != -1) {
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
			if (optopt && strchr("foej", optopt))
				diag_error("scan: option -%c needs a value", optopt);
			else
				diag_error("scan: unknown option '%s' (see `gpuopt scan --help`)", argv[optind - 1]);
			goto out;
		}
	}
	if (jobs < 1)
		jobs = 1;
	ptrvec_push(&excludes, NULL);

	char *why;
	struct kb *kb = kb_load(&why);
	if (!kb) {
		diag_error("knowledge data: %s", why);
		free(why);
		goto out;
	}
	double t0 = now();
	struct pathlist pl = {0};
	char *dot[] = {"."};
	if (optind < argc)
		paths_collect(argv + optind, argc - optind, (char *const *)excludes.items, &pl);
	else
		paths_collect(dot, 1, (char *const *)excludes.items, &pl);

	struct job j = {.kb = kb, .nfiles = pl.files.len};
	j.files = xcalloc(pl.files.len, sizeof *j.files);
	for (size_t i = 0; i < pl.files.len; i++)
		j.files[i].path = pl.files.items[i];
	atomic_init(&j.next, 0);
	scan_all(&j, (int)jobs);

	struct scan_report report = {.kb = kb, .files = j.files, .nfiles = j.nfiles,
				     .walk_errors = &pl.errors, .seconds = now() - t0};
	struct scan_counts n;
	scan_count(&report, &n);

	bool written = true;
	if (strcmp(format, "text") == 0 && !output) {
		struct text_options to = {verbose, want_color(color, true)};
		report_text(stdout, &report, &to);
		fflush(stdout);
	} else {
		char *doc = NULL;
		size_t len = 0;
		if (strcmp(format, "json") == 0) {
			doc = report_json(&report);
		} else if (strcmp(format, "sarif") == 0) {
			doc = report_sarif(&report);
		} else {
			struct text_options to = {verbose, strcmp(color, "always") == 0};
			FILE *m = open_memstream(&doc, &len);
			report_text(m, &report, &to);
			fclose(m);
		}
		char *err;
		if (!write_file_atomic(output ? output : "-", doc, strlen(doc), &err)) {
			diag_error("cannot write '%s': %s", output ? output : "stdout", err);
			free(err);
			written = false;
		}
		free(doc);
	}
	/* Errors also go to stderr when the report itself is machine-readable. */
	if (strcmp(format, "text") != 0 || output) {
		for (size_t i = 0; i < pl.errors.len; i++) {
			const struct path_error *e = pl.errors.items[i];
			diag_error("%s: %s", e->path, e->message);
		}
		for (size_t i = 0; i < j.nfiles; i++)
			if (!j.files[i].ok)
				diag_error("%s: %s", j.files[i].path, j.files[i].error);
	}
	if (!written || (n.files_scanned == 0 && n.files_with_errors > 0)) {
		rc = EXIT_USAGE;
	} else {
		rc = EXIT_OK;
		if (n.files_scanned == 0 && n.files_with_errors == 0)
			diag_error("scan: no .py or .ipynb files found");
		for (int s = fail_on; s < SEV_NONE; s++)
			if (n.by_severity[s])
				rc = EXIT_FAIL;
	}
	for (size_t i = 0; i < j.nfiles; i++) {
		scan_result_free(&j.files[i].res);
		free(j.files[i].error);
	}
	free(j.files);
	pathlist_free(&pl);
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
