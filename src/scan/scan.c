/* scan: the scan engine's face for code — collect the files under the given
 * paths, scan them on worker threads (one pyscanner each) with the cache,
 * and hand each file's outcome to a sink in input order. The caller (the
 * scan command, or `try`) decides what to do with each result; nothing here
 * prints or chooses an exit code.
 *
 * Workers take files in order; the calling thread, which hands results to
 * the sink in order, scans too while the file it needs next is not ready.
 * At most AHEAD files are held ahead of the sink.
 *
 * Files that use a GPU library form a project first (project.h): a pre-pass
 * analyses each of them for its summary (what its functions return, which
 * functions its loops call), the project follows the calls across modules,
 * and the real scan of those files then knows which of their functions run
 * from a loop in another file. Their results depend on the other files, so
 * they are not cached; a file the cache index knows unchanged was not such a
 * file (it would not be in the index), so the pre-pass does not read it. */
#include "scan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/paths.h"
#include "flow.h"
#include "project.h"
#include "pyscan.h"

/* The files of a scan and the workers' progress. Workers take files in
 * order from `next`; the main thread, which scans too, reports file i once
 * it is done, then frees its results, so memory holds only the files in
 * flight. */
struct job {
	const struct kb *kb;
	const struct project *project; /* cross-module facts, or NULL */
	bool *in_project;      /* file i takes part in it */
	bool *plain;           /* file i is known not to use a GPU library */
	bool keep_text;
	struct cache *cache;   /* NULL: no cache */
	const struct report_options *ropt; /* to render each file in its worker, or NULL */
	const struct scan_sink *sink;
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

/* The .ipynb line of a notebook's cell line (1-based line in the cell), or
 * 0: a binary search over the joined text's lines, which go cell by cell. */
static uint32_t file_line_of(const struct source *s, uint32_t cell, uint32_t line)
{
	size_t lo = 0, hi = s->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at = (uint64_t)s->line_cell[mid] << 32 | s->line_in_cell[mid];
		uint64_t want = (uint64_t)cell << 32 | (line ? line - 1 : 0);
		if (at == want)
			return s->line_file[mid];
		if (at < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Notebooks: where each finding is in the .ipynb file itself (for SARIF
 * viewers, which show the file, not the cells). */
static void set_file_lines(const struct source *src, struct scan_result *res)
{
	if (!src->notebook || !src->line_file)
		return;
	for (size_t i = 0; i < res->n; i++) {
		struct finding *f = &res->items[i];
		f->file_line = file_line_of(src, f->cell, f->line);
		f->file_end_line = file_line_of(src, f->cell, f->end_line);
	}
}

/* A notebook in another language than Python is not scanned: sf says so
 * (ok, no findings, its language) and src is freed. False for Python. */
static bool skipped_language(struct scan_file *sf, struct source *src)
{
	if (!src->language)
		return false;
	sf->ok = true;
	sf->language = src->language;
	src->language = NULL;
	source_free(src);
	return true;
}

/* A file of the project: scanned with the project's facts, never cached. */
static void scan_in_project(struct pyscanner *ps, const struct project *project, struct scan_file *sf)
{
	struct source src;
	char *why;
	if (!source_load(sf->path, &src, &why)) {
		sf->error = why ? why : xstrdup("cannot read");
		return;
	}
	sf->notebook = src.notebook;
	if (skipped_language(sf, &src))
		return;
	char *module = project_module_name(sf->path);
	struct pyscan_project pp = {.project = project, .module = module};
	if (pyscan_in(ps, &src, &pp, &sf->res, &why)) {
		sf->ok = true;
		set_file_lines(&src, &sf->res);
	} else {
		sf->error = why;
	}
	free(module);
	source_free(&src);
}

static void scan_one(struct pyscanner *ps, struct cache *cache, struct scan_file *sf, bool plain)
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
	if (skipped_language(sf, &src))
		return;
	const struct stat *known = indexable ? &st : NULL;
	if (cache_get(cache, &src, known, &sf->res)) {
		sf->ok = true;
	} else if (pyscan_in(ps, &src, &(struct pyscan_project){.plain = plain}, &sf->res, &why)) {
		sf->ok = true;
		set_file_lines(&src, &sf->res);
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
	if (j->in_project && j->in_project[i])
		scan_in_project(ps, j->project, &j->files[i]); /* project NULL: alone */
	else
		scan_one(ps, j->cache, &j->files[i], j->plain[i]);
	if (j->ropt)
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

/* Hands file i (scanned) to the sink and frees what it held. */
static void report_one(struct job *j, size_t i)
{
	j->sink->file(j->sink->ctx, &j->files[i]);
	scan_result_free(&j->files[i].res);
	buf_free(&j->files[i].out);
	free(j->files[i].error);
	j->files[i].error = NULL;
	free(j->files[i].language);
	j->files[i].language = NULL;
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
static void scan_all(struct job *j, int jobs)
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
		report_one(j, i);
	}
	pyscanner_free(ps);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
}

/* The pre-pass: the summary of every file that uses a GPU library (read
 * unless the cache index knows it unchanged, which such a file never is),
 * then the project's cross-module facts. NULL when no file takes part.
 * plain[i] is set for the files it read and found not to use one, so that
 * their scan does not look again. */
static struct project *build_project(const struct scan_options *o, const struct pathlist *pl, bool *in_project,
				     bool *plain)
{
	struct project *p = NULL;
	struct pyscanner *ps = NULL;
	size_t ncand = 0;
	for (size_t i = 0; i < pl->files.len; i++) {
		const char *path = pl->files.items[i];
		if (strcmp(path, "-") == 0)
			continue;
		struct stat st;
		if (o->cache && stat(path, &st) == 0 && S_ISREG(st.st_mode) && cache_known_unchanged(o->cache, path, &st))
			continue;
		struct source src;
		char *why;
		if (!source_load(path, &src, &why)) {
			free(why);
			continue;
		}
		in_project[i] = pyscan_gpu_candidate(src.text, src.len);
		plain[i] = !in_project[i];
		ncand += in_project[i];
		source_free(&src);
	}
	/* one such file alone has no other module to learn from: it is scanned
	 * alone (still uncached: the cache index must never hold such a file) */
	if (ncand < 2)
		return NULL;
	for (size_t i = 0; i < pl->files.len; i++) {
		const char *path = pl->files.items[i];
		struct source src;
		char *why;
		if (!in_project[i])
			continue;
		in_project[i] = false;
		if (!source_load(path, &src, &why)) {
			free(why);
			continue;
		}
		{
			if (!ps) {
				ps = pyscanner_new(o->kb);
				pyscanner_keep_text(ps, false);
				p = project_new();
			}
			char *module = project_module_name(path);
			struct flow_summary sum = {0};
			struct pyscan_project pp = {.module = module, .summary = &sum};
			struct scan_result res;
			if (pyscan_in(ps, &src, &pp, &res, &why)) {
				project_add(p, path, module, &sum);
				in_project[i] = true;
			}
			free(why);
			scan_result_free(&res);
			flow_summary_free(&sum);
			free(module);
		}
		source_free(&src);
	}
	pyscanner_free(ps);
	if (p)
		project_finish(p);
	return p;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void scan_paths(const struct scan_options *o, char *const *paths, size_t npaths,
		const struct scan_sink *sink, struct scan_stats *stats)
{
	double t0 = now();
	struct pathlist pl = {0};
	char *dot[] = {"."};
	if (npaths)
		paths_collect(paths, (int)npaths, o->excludes, &pl);
	else
		paths_collect(dot, 1, o->excludes, &pl);
	for (size_t i = 0; i < pl.errors.len; i++) {
		const struct path_error *e = pl.errors.items[i];
		sink->path_error(sink->ctx, e->path, e->message);
	}
	long jobs = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	bool *in_project = xcalloc(pl.files.len ? pl.files.len : 1, sizeof *in_project);
	bool *plain = xcalloc(pl.files.len ? pl.files.len : 1, sizeof *plain);
	struct project *project = build_project(o, &pl, in_project, plain);
	struct job j = {.kb = o->kb, .keep_text = o->keep_text, .nfiles = pl.files.len,
			.ropt = o->render, .sink = sink,
			.cache = o->cache, .project = project, .in_project = in_project, .plain = plain};
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
	scan_all(&j, (int)jobs);
	pthread_mutex_destroy(&j.mu);
	pthread_cond_destroy(&j.cv);
	pthread_cond_destroy(&j.room);
	free(j.files);
	free(j.done);
	free(in_project);
	free(plain);
	project_free(project);
	if (stats) {
		stats->files = pl.files.len;
		stats->path_errors = pl.errors.len;
		stats->seconds = now() - t0;
	}
	pathlist_free(&pl);
}
