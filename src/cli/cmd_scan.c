/* cmd_scan: `gpuopt scan [PATH...]` — find the calls a GPU library can take
 * over. Collects the files, scans them on worker threads (one pyscanner
 * each), then renders the report in input order. */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scan/cache.h"
#include "commands.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "scan/kb.h"
#include "core/paths.h"
#include "scan/pyscan.h"
#include "scan/report.h"

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
	"      --no-cache         neither read nor write the cache of results for unchanged files\n"
	"                         ($XDG_CACHE_HOME/gpuopt, else ~/.cache/gpuopt)\n"
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

/* The files of a scan and the workers' progress. Workers take files in
 * order from `next`; the main thread, which scans too, reports file i once
 * it is done, then frees its results, so memory holds only the files in
 * flight. */
struct job {
	const struct kb *kb;
	bool keep_text;
	bool errors_to_stderr; /* the report is not text on stdout */
	struct cache *cache;   /* NULL: --no-cache */
	const struct report_options *ropt; /* to render each file in its worker */
	struct scan_file *files;
	size_t nfiles;
	atomic_size_t next;
	atomic_bool *done;     /* file i is scanned */
	atomic_bool waiting;   /* the reporter sleeps on cv */
	atomic_size_t reported; /* files reported so far */
	atomic_int stalled;    /* workers sleeping on room */
	pthread_cond_t room;   /* the reporter caught up */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void scan_one(struct pyscanner *ps, struct cache *cache, struct scan_file *sf)
{
	struct source src;
	char *why;
	/* the stat comes first: a write after it shows in the next run's stat */
	struct stat st;
	bool indexable = cache && strcmp(sf->path, "-") != 0 && stat(sf->path, &st) == 0 &&
			 S_ISREG(st.st_mode);
	if (indexable && cache_get_unchanged(cache, sf->path, &st, &sf->res, &sf->notebook)) {
		sf->ok = true;
		return;
	}
	if (!source_load(sf->path, &src, &why)) {
		sf->error = why ? why : xstrdup("cannot read");
		return;
	}
	sf->notebook = src.notebook;
	const struct stat *known = indexable ? &st : NULL;
	if (cache_get(cache, &src, known, &sf->res)) {
		sf->ok = true;
	} else if (pyscan(ps, &src, &sf->res, &why)) {
		sf->ok = true;
		if (strcmp(sf->path, "-") != 0)
			cache_put(cache, &src, known, &sf->res);
	} else {
		sf->error = why;
	}
	source_free(&src);
}

/* How many files workers may scan ahead of the reporter. */
#define AHEAD 128

/* Scans and renders file i, then marks it done. */
static void scan_at(struct job *j, struct pyscanner *ps, size_t i)
{
	scan_one(ps, j->cache, &j->files[i]);
	report_render(j->ropt, &j->files[i]);
	/* wake the reporter only when it sleeps: most files are ready
	 * before it asks for them */
	atomic_store(&j->done[i], true);
	if (atomic_load(&j->waiting)) {
		pthread_mutex_lock(&j->mu);
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
	}
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct pyscanner *ps = pyscanner_new(j->kb);
	pyscanner_keep_text(ps, j->keep_text);
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->nfiles)
			break;
		/* at most AHEAD files in front of the reporter, so a slow reader
		 * of the report does not make every result pile up in memory */
		if (i >= atomic_load(&j->reported) + AHEAD) {
			pthread_mutex_lock(&j->mu);
			atomic_fetch_add(&j->stalled, 1);
			while (i >= atomic_load(&j->reported) + AHEAD)
				pthread_cond_wait(&j->room, &j->mu);
			atomic_fetch_sub(&j->stalled, 1);
			pthread_mutex_unlock(&j->mu);
		}
		scan_at(j, ps, i);
	}
	pyscanner_free(ps);
	return NULL;
}

/* Reports file i (scanned) and frees what it held. */
static void report_one(struct job *j, struct report *rep, size_t i)
{
	if (!j->files[i].ok && j->errors_to_stderr)
		diag_error("%s: %s", j->files[i].path, j->files[i].error);
	report_file(rep, &j->files[i]);
	scan_result_free(&j->files[i].res);
	buf_free(&j->files[i].out);
	free(j->files[i].error);
	j->files[i].error = NULL;
	atomic_store(&j->reported, i + 1);
	if (atomic_load(&j->stalled)) {
		pthread_mutex_lock(&j->mu);
		pthread_cond_broadcast(&j->room);
		pthread_mutex_unlock(&j->mu);
	}
}

/* The reporter's turn at scanning while file i is not done: takes the next
 * unclaimed file, if any within AHEAD of i, and scans it. */
static bool lend_a_hand(struct job *j, struct pyscanner *ps, size_t i)
{
	size_t k = atomic_load(&j->next);
	while (k < j->nfiles && k < i + AHEAD)
		if (atomic_compare_exchange_weak(&j->next, &k, k + 1)) {
			scan_at(j, ps, k);
			return true;
		}
	return false;
}

/* Scans every file with `jobs` threads and reports each, in order. The
 * reporter is one of the threads: it scans too while the file it needs
 * next is not ready, and sleeps only when none is left to take. */
static void scan_all(struct job *j, int jobs, struct report *rep)
{
	pthread_t *t = NULL;
	int started = 0;
	if (jobs > (int)j->nfiles)
		jobs = (int)j->nfiles;
	if (jobs > 1) {
		t = xcalloc((size_t)jobs - 1, sizeof *t);
		for (; started < jobs - 1; started++)
			if (pthread_create(&t[started], NULL, worker, j) != 0)
				break;
	}
	struct pyscanner *ps = pyscanner_new(j->kb);
	pyscanner_keep_text(ps, j->keep_text);
	for (size_t i = 0; i < j->nfiles; i++) {
		while (!atomic_load(&j->done[i]) && lend_a_hand(j, ps, i))
			;
		if (!atomic_load(&j->done[i])) {
			pthread_mutex_lock(&j->mu);
			atomic_store(&j->waiting, true);
			while (!atomic_load(&j->done[i]))
				pthread_cond_wait(&j->cv, &j->mu);
			atomic_store(&j->waiting, false);
			pthread_mutex_unlock(&j->mu);
		}
		report_one(j, rep, i);
	}
	pyscanner_free(ps);
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
		{"no-cache", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0},
	};
	const char *format = "text", *output = NULL, *color = "auto";
	enum severity fail_on = SEV_ERROR;
	bool verbose = false, use_cache = true;
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
		case 'N': use_cache = false; break;
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

	struct report_options ro = {
		.format = strcmp(format, "json") == 0 ? FMT_JSON : strcmp(format, "sarif") == 0 ? FMT_SARIF : FMT_TEXT,
		.verbose = verbose,
		.color = want_color(color, !output),
	};
	struct atomic_file af;
	if (!atomic_open(&af, output ? output : "-", &why)) {
		diag_error("cannot write '%s': %s", output, why);
		free(why);
		pathlist_free(&pl);
		kb_free(kb);
		goto out;
	}
	struct report *rep = report_open(af.f, kb, &ro);
	for (size_t i = 0; i < pl.errors.len; i++) {
		const struct path_error *e = pl.errors.items[i];
		report_path_error(rep, e->path, e->message);
	}
	struct job j = {.kb = kb, .keep_text = ro.format == FMT_TEXT, .nfiles = pl.files.len,
			.errors_to_stderr = ro.format != FMT_TEXT || output, .ropt = &ro,
			.cache = use_cache ? cache_open(kb, ro.format == FMT_TEXT) : NULL};
	j.files = xcalloc(pl.files.len ? pl.files.len : 1, sizeof *j.files);
	j.done = xcalloc(pl.files.len ? pl.files.len : 1, sizeof *j.done);
	for (size_t i = 0; i < pl.files.len; i++)
		atomic_init(&j.done[i], false);
	atomic_init(&j.waiting, false);
	atomic_init(&j.reported, 0);
	atomic_init(&j.stalled, 0);
	for (size_t i = 0; i < pl.files.len; i++)
		j.files[i].path = pl.files.items[i];
	atomic_init(&j.next, 0);
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.cv, NULL);
	pthread_cond_init(&j.room, NULL);
	scan_all(&j, (int)jobs, rep);
	struct scan_counts n;
	bool written = report_close(rep, now() - t0, &n);
	if (written)
		written = atomic_commit(&af, &why);
	else
		atomic_abort(&af);
	if (!written) {
		diag_error("cannot write '%s': %s", output ? output : "stdout", why ? why : "write failed");
		free(why);
	}
	if (ro.format != FMT_TEXT || output) {
		for (size_t i = 0; i < pl.errors.len; i++) {
			const struct path_error *e = pl.errors.items[i];
			diag_error("%s: %s", e->path, e->message);
		}
	}
	if (!written || (n.files_scanned == 0 && n.files_with_errors > 0)) {
		rc = EXIT_USAGE;
	} else {
		rc = EXIT_OK;
		if (n.files_scanned == 0 && n.files_with_errors == 0)
			diag_error("scan: no .py or .ipynb files found");
		for (int sev = fail_on; sev < SEV_NONE; sev++)
			if (n.by_severity[sev])
				rc = EXIT_FAIL;
	}
	cache_close(j.cache);
	pthread_mutex_destroy(&j.mu);
	pthread_cond_destroy(&j.cv);
	pthread_cond_destroy(&j.room);
	free(j.files);
	free(j.done);
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
