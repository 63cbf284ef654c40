/* try: see try.h. The steps, in order: the contract, the environment, the
 * scan, the baseline, then each candidate (observe, verify, bench, trace,
 * verdict), then the summary. Each step's JSON is written whole as soon as
 * it is known; a step already in the results directory with the same key
 * (a hash of gpuopt's version and the contract) is taken as it is. */
#include "try.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "contract.h"
#include "core/caplog.h"
#include "core/data.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/readonly.h"
#include "core/runner.h"
#include "core/shellsplit.h"
#include "core/version.h"
#include "doctor/doctor.h"
#include "gpu/gpuinfo.h"
#include "gpu/sysinfo.h"
#include "scan/imports.h"
#include "scan/kb.h"
#include "scan/scan.h"
#include "results.h"
#include "scratch.h"
#include "stepkey.h"
#include "trace/analyze.h"
#include "trace/export.h"
#include "trace/report.h"
#include "trace/trace.h"
#include "verdict.h"
#include "verify/verify.h"

const char *try_verdict_name(enum try_verdict v)
{
	switch (v) {
	case TRY_KEEP: return "keep";
	case TRY_REVISE: return "revise";
	case TRY_REJECT: return "reject";
	case TRY_UNAVAILABLE: return "unavailable";
	}
	return "?";
}

void try_result_free(struct try_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncands; i++) {
		free(r->cands[i].name);
		free(r->cands[i].kind);
		free(r->cands[i].command);
		free(r->cands[i].factor);
		free(r->cands[i].reason);
	}
	free(r->cands);
	free(r->results_dir);
	free(r->message);
	free(r);
}

/* ---- the session ---- */

struct session {
	const struct try_settings *set;
	struct try_contract c;
	struct try_result *res;
	char *dir;            /* results directory, absolute (claim.dir) */
	struct results_claim claim; /* the results directory, marked and locked */
	bool read_only;       /* the project is read-only to the runs (protect_project) */
	char *key;            /* of this contract and gpuopt version */
	char *env_key;        /* ... and the interpreter with its packages (stepkey.h) */
	char *base_key;       /* ... and what the baseline reads */
	char *scan_key;       /* ... and what the baseline and the contract's candidates read */
	json_t *data;         /* try.json */
	json_t *env;          /* environment.json */
	bool gpu;             /* an NVIDIA GPU was found */
	char *python;         /* the baseline's interpreter (for accelerators) */
	char *script;         /* the baseline's script, relative to the project, or NULL */
	char **script_args;   /* its arguments (NULL-terminated, owned), or NULL */
	json_t *scan;         /* scan.json */
	json_t *baseline;     /* baseline.json */
	char **outputs;       /* the outputs compared (NULL-terminated, owned) */
	struct verify_opts *out_opts; /* one per output (borrowed from the contract, or defaults) */
	struct verify_opts dflt_opts;
	struct ptrvec confirmed; /* char *: the saved steps this try wrote or checked */
	bool status_written;     /* status.json says this try is running */
};

static void say(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct session *s, const char *fmt, ...)
{
	if (!s->set->progress)
		return;
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	s->set->progress(s->set->progress_ctx, b.data);
	buf_free(&b);
}

static bool fail(struct session *s, enum try_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(struct session *s, enum try_status st, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	diag_error("try: %s", b.data);
	s->res->status = st;
	free(s->res->message);
	s->res->message = buf_steal(&b);
	return false;
}

static char *path_in(const struct session *s, const char *rel)
{
	return xasprintf("%s/%s", s->dir, rel);
}

/* Notes that the saved step rel holds what this try ran (written or
 * checked against its key): status.json lists them. */
static void confirm(struct session *s, const char *rel)
{
	for (size_t i = 0; i < s->confirmed.len; i++)
		if (strcmp(s->confirmed.items[i], rel) == 0)
			return;
	ptrvec_push(&s->confirmed, xstrdup(rel));
}

/* Writes doc (stolen) to rel in the results directory, whole; false with
 * *why (owned) and the path in *path (owned) when it cannot. */
static bool write_doc(const struct session *s, const char *rel, json_t *doc, char **path, char **why)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	json_decref(doc);
	char *withnl = xasprintf("%s\n", text ? text : "{}");
	*path = path_in(s, rel);
	*why = NULL;
	bool ok = write_file_atomic(*path, withnl, strlen(withnl), why);
	free(withnl);
	free(text);
	return ok;
}

/* status.json: whether the last try finished and which saved steps it
 * wrote or checked ("confirmed"); the others are an earlier try's, and
 * report says so. Written when a try starts (state "running": a try that
 * is killed leaves it so) and when it ends. Best effort: a results
 * directory that cannot be written has already failed the try. */
static void write_status(struct session *s, bool ending)
{
	const char *state = !ending ? "running" : s->res->status == TRY_DONE ? "finished" : "stopped";
	char *now = utc_now_text();
	json_t *confirmed = json_array();
	for (size_t i = 0; i < s->confirmed.len; i++)
		json_array_append_new(confirmed, json_string(s->confirmed.items[i]));
	json_t *doc = json_pack("{s:s, s:s, s:o}", "state", state, ending ? "ended" : "started", now,
				"confirmed", confirmed);
	if (ending && s->res->status != TRY_DONE && s->res->message)
		json_object_set_new(doc, "message", json_string(s->res->message));
	char *path, *why;
	if (write_doc(s, "status.json", doc, &path, &why))
		s->status_written = true;
	free(why);
	free(path);
	free(now);
}

/* Writes doc (stolen) to rel in the results directory, whole, with key. */
static bool save_keyed(struct session *s, const char *rel, json_t *doc, const char *key)
{
	json_object_set_new(doc, "key", json_string(key));
	char *path, *why;
	bool ok = write_doc(s, rel, doc, &path, &why);
	if (!ok)
		fail(s, TRY_IO_ERROR, "cannot write '%s': %s", path, why);
	else
		confirm(s, rel);
	free(why);
	free(path);
	return ok;
}

static bool save(struct session *s, const char *rel, json_t *doc)
{
	return save_keyed(s, rel, doc, s->key);
}

/* The saved step rel if it was made with key (owned), else NULL; a step
 * saved with another key (what it ran changed) is said to be run again. */
static json_t *load_keyed(struct session *s, const char *rel, const char *key)
{
	if (s->set->fresh)
		return NULL;
	char *path = path_in(s, rel);
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr);
	free(path);
	if (!doc)
		return NULL;
	const char *k = json_string_value(json_object_get(doc, "key"));
	if (!json_is_object(doc) || !k || strcmp(k, key) != 0) {
		if (k && strcmp(k, key) != 0)
			say(s, "%s: what it ran changed since it was saved (the project's code it reads, the "
			       "interpreter or its packages): running it again", rel);
		json_decref(doc);
		return NULL;
	}
	s->res->resumed_steps++;
	confirm(s, rel);
	return doc;
}

/* ---- running one command in a run directory ---- */

static int open_log(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static char *tail_of(const char *path, size_t max)
{
	struct buf b = {0};
	char *why = NULL;
	if (!read_file(path, 64u << 20, &b, &why)) {
		free(why);
		buf_free(&b);
		return xstrdup("");
	}
	size_t start = b.len > max ? b.len - max : 0;
	while (start && start < b.len && b.data[start - 1] != '\n')
		start++;
	char *t = xstrndup(b.data ? b.data + start : "", b.len - start);
	buf_free(&b);
	return t;
}

/* The time limit of one run: the contract's timeout, else automatic, so that
 * a run that hangs never hangs try: TRY_TIMEOUT_FACTOR times the baseline's
 * run (at least TRY_TIMEOUT_MIN_S), and TRY_TIMEOUT_BASELINE_S for the
 * baseline itself. */
#define TRY_TIMEOUT_FACTOR 10
#define TRY_TIMEOUT_MIN_S 60
#define TRY_TIMEOUT_BASELINE_S 3600
static double run_timeout(const struct session *s)
{
	if (s->c.timeout > 0)
		return s->c.timeout;
	double base = json_number_value(json_object_get(json_object_get(s->baseline, "run"), "wall_s"));
	if (!s->baseline || !(base > 0))
		return TRY_TIMEOUT_BASELINE_S;
	return base * TRY_TIMEOUT_FACTOR > TRY_TIMEOUT_MIN_S ? base * TRY_TIMEOUT_FACTOR : TRY_TIMEOUT_MIN_S;
}

/* The bytes of each stream of a run kept in logs/ (the contract's
 * log_limit, in MB). */
static uint64_t log_limit(const struct session *s)
{
	return (uint64_t)(s->c.log_limit * 1e6);
}

/* Says in rec what the logs of one run dropped: STREAM_dropped (bytes
 * dropped from the middle of logs/...) and the limit, when any was. */
static void record_dropped(json_t *rec, const struct caplog *out, const struct caplog *err)
{
	const struct caplog *logs[2] = {out, err};
	const char *keys[2] = {"stdout_dropped", "stderr_dropped"};
	bool any = false;
	for (int i = 0; i < 2; i++)
		if (caplog_dropped(logs[i])) {
			json_object_set_new(rec, keys[i], json_integer((json_int_t)caplog_dropped(logs[i])));
			any = true;
		}
	if (any)
		json_object_set_new(rec, "log_limit_bytes", json_integer((json_int_t)out->limit));
}

/* Runs command (a command line) in dir, its output into logs/LABEL.out /
 * .err, each kept within the contract's log_limit (the first and last half
 * of it; the middle dropped, said in the file and in the record); every
 * line of both, dropped ones too, goes to on_line when it is not NULL. The
 * record of the run (owned), with "ok". */
static json_t *run_logged(struct session *s, const char *command, const char *dir, const char *label,
			  void (*on_line)(void *ctx, const char *line, size_t len), void *line_ctx)
{
	json_t *rec = json_pack("{s:s, s:s}", "command", command, "dir", dir);
	char *why = NULL;
	char **argv = shell_split(command, NULL, &why);
	if (!argv) {
		json_object_set_new(rec, "ok", json_false());
		json_object_set_new(rec, "error", json_sprintf("cannot split the command line: %s", why));
		free(why);
		return rec;
	}
	char *logs = path_in(s, "logs");
	make_dirs(logs);
	char *outp = xasprintf("%s/%s.out", logs, label), *errp = xasprintf("%s/%s.err", logs, label);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC), out = open_log(outp), err = open_log(errp);
	struct caplog lo, le;
	caplog_init(&lo, out, log_limit(s), on_line, line_ctx);
	caplog_init(&le, err, log_limit(s), on_line, line_ctx);
	struct runner_stdio io = {in, -1, -1, dir, &lo, &le};
	struct run_result r;
	bool started = in >= 0 && out >= 0 && err >= 0 && runner_run(argv, &io, run_timeout(s), &r);
	caplog_finish(&lo);
	caplog_finish(&le);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	json_object_set_new(rec, "stdout", json_sprintf("logs/%s.out", label));
	json_object_set_new(rec, "stderr", json_sprintf("logs/%s.err", label));
	record_dropped(rec, &lo, &le);
	caplog_free(&lo);
	caplog_free(&le);
	if (!started) {
		json_object_set_new(rec, "ok", json_false());
		json_object_set_new(rec, "error", json_sprintf("'%s' could not be started: %s", argv[0],
							      strerror(in < 0 || out < 0 || err < 0 ? errno
													   : r.spawn_errno)));
	} else {
		char *how = run_describe(&r, run_timeout(s));
		json_object_set_new(rec, "ok", json_boolean(run_ok(&r)));
		json_object_set_new(rec, "exit_code", json_integer(r.exit_code));
		json_object_set_new(rec, "signal", json_integer(r.signal));
		json_object_set_new(rec, "timed_out", json_boolean(r.timed_out));
		json_object_set_new(rec, "wall_s", json_real(r.wall_s));
		json_object_set_new(rec, "peak_rss_kib", json_integer(r.peak_rss_kib));
		json_object_set_new(rec, "how", json_string(how));
		free(how);
		if (!run_ok(&r)) {
			char *t = tail_of(errp, 2000);
			json_object_set_new(rec, "stderr_tail", json_string(t));
			free(t);
		}
	}
	free(outp);
	free(errp);
	free(logs);
	shell_words_free(argv);
	return rec;
}

/* The innermost frame of a Python traceback in tail that is the user's
 * (a file the run found in run_dir, its copy of the project), as
 * "FILE:LINE" with FILE's last component; NULL when there is none. Owned. */
static char *raised_at(const char *tail, const char *run_dir)
{
	char *at = NULL;
	size_t dl = run_dir ? strlen(run_dir) : 0;
	for (const char *p = tail ? strstr(tail, "File \"") : NULL; p; p = strstr(p + 1, "File \"")) {
		const char *f = p + 6, *q = strchr(f, '"');
		if (!q || strncmp(q, "\", line ", 8) != 0)
			continue;
		char *file = xstrndup(f, (size_t)(q - f));
		unsigned long line = strtoul(q + 8, NULL, 10);
		/* the user's code is what the run found in its own directory (the
		 * project's copy): a relative path, or one under the run directory;
		 * anything else (site-packages, a pip --target folder on PYTHONPATH,
		 * the standard library, "<frozen ...>") is a library's */
		bool user = file[0] != '<' &&
			    (file[0] != '/' || (dl && strncmp(file, run_dir, dl) == 0 && file[dl] == '/'));
		if (user && line) {
			const char *base = strrchr(file, '/');
			free(at);
			at = xasprintf("%s:%lu", base ? base + 1 : file, line);
		}
		free(file);
	}
	return at;
}

/* "exit status 1: ModuleNotFoundError: No module named 'x'" from a failed
 * record, and where the user's code raised it ("raised at port.py:55").
 * Owned. */
static char *describe_failure(json_t *rec)
{
	const char *err = json_string_value(json_object_get(rec, "error"));
	if (err)
		return xstrdup(err);
	const char *how = json_string_value(json_object_get(rec, "how"));
	const char *tail = json_string_value(json_object_get(rec, "stderr_tail"));
	char *last = NULL;
	if (tail && *tail) {
		char *t = xstrdup(tail);
		size_t n = strlen(t);
		while (n && (t[n - 1] == '\n' || t[n - 1] == ' '))
			t[--n] = '\0';
		char *nl = strrchr(t, '\n');
		last = xstrdup(nl ? nl + 1 : t);
		free(t);
	}
	/* a write refused by the read-only project (protect_project) */
	bool ro = tail && strstr(tail, "Read-only file system");
	char *at = raised_at(tail, json_string_value(json_object_get(rec, "dir")));
	char *d = xasprintf("%s%s%s%s%s%s", how ? how : "failed", last ? ": " : "", last ? last : "",
			    at ? " (raised at " : "", at ? at : "", at ? ")" : "");
	if (ro) {
		char *r = xasprintf("%s (the project is read-only while try runs, so that no run can change your "
				    "files: write outputs into the working directory, and declare them in `outputs`)", d);
		free(d);
		d = r;
	}
	free(at);
	free(last);
	return d;
}

/* ---- the contract and the baseline's shape ---- */

static char *quote(const char *w)
{
	struct buf b = {0};
	shell_quote(&b, w, 0);
	return buf_steal(&b);
}

/* The baseline as `PYTHON SCRIPT.py ARGS...`, when it is one. */
static void baseline_shape(struct session *s)
{
	char *why = NULL;
	char **w = shell_split(s->c.baseline, NULL, &why);
	free(why);
	if (!w)
		return;
	size_t n = 0;
	while (w[n])
		n++;
	const char *base = w[0] ? strrchr(w[0], '/') : NULL;
	base = base ? base + 1 : (w[0] ? w[0] : "");
	if (n >= 2 && strncmp(base, "python", 6) == 0 && str_ends_with(w[1], ".py")) {
		s->python = xstrdup(w[0]);
		s->script = xstrdup(w[1]);
		s->script_args = xcalloc(n - 1, sizeof *s->script_args);
		for (size_t i = 2; i < n; i++)
			s->script_args[i - 2] = xstrdup(w[i]);
	}
	shell_words_free(w);
}

static char *expand(const struct session *s, const char *tmpl)
{
	struct buf b = {0};
	for (const char *p = tmpl; *p; ) {
		if (strncmp(p, "{python}", 8) == 0) {
			shell_quote(&b, s->python, 0);
			p += 8;
		} else if (strncmp(p, "{script}", 8) == 0) {
			shell_quote(&b, s->script, 0);
			p += 8;
		} else if (strncmp(p, "{args}", 6) == 0) {
			for (size_t i = 0; s->script_args && s->script_args[i]; i++) {
				if (i)
					buf_putc(&b, ' ');
				shell_quote(&b, s->script_args[i], 0);
			}
			p += 6;
		} else {
			buf_putc(&b, *p++);
		}
	}
	/* no arguments leaves a trailing space */
	while (b.len && b.data[b.len - 1] == ' ')
		b.data[--b.len] = '\0';
	return buf_steal(&b);
}

static bool setup_contract(struct session *s)
{
	const struct try_settings *set = s->set;
	contract_defaults(&s->c);
	char *start = NULL;
	if (set->script) {
		char *copy = xstrdup(set->script);
		char *slash = strrchr(copy, '/');
		if (slash) {
			*slash = '\0';
			start = realpath(*copy ? copy : "/", NULL);
		}
		free(copy);
	}
	char *ignored = NULL;
	char *file = contract_find(set->contract, start ? start : s->c.dir, &ignored);
	if (ignored)
		say(s, "%s: its [tool.gpuopt] table is not read: gpuopt.toml beside it comes first", ignored);
	free(ignored);
	if (!file && start) {
		/* no contract: the project is SCRIPT's directory, not wherever try
		 * was started (from $HOME every run would copy all of it) */
		free(s->c.dir);
		s->c.dir = start;
		start = NULL;
	}
	free(start);
	if (file) {
		char *why = NULL;
		const char *py = set->python ? set->python : "python3";
		if (!contract_load(file, py, &s->c, &why)) {
			fail(s, TRY_BAD_CONTRACT, "%s", why);
			free(why);
			free(file);
			return false;
		}
		free(file);
	}
	if (set->python) {
		free(s->c.python);
		s->c.python = xstrdup(set->python);
	}
	if (set->baseline) {
		free(s->c.baseline);
		s->c.baseline = xstrdup(set->baseline);
	}
	if (set->script && !set->baseline) {
		/* the script relative to the project directory */
		char *abs = realpath(set->script, NULL);
		if (!abs)
			return fail(s, TRY_BAD_CONTRACT, "cannot read '%s': %s", set->script, strerror(errno));
		size_t dl = strlen(s->c.dir);
		const char *rel = strncmp(abs, s->c.dir, dl) == 0 && abs[dl] == '/' ? abs + dl + 1 : abs;
		if (!s->c.baseline) {
			char *q = quote(rel);
			s->c.baseline = xasprintf("%s %s", s->c.python, q);
			free(q);
		}
		free(abs);
	}
	if (!s->c.baseline)
		return fail(s, TRY_BAD_CONTRACT, "no baseline: give SCRIPT, --baseline CMD, or 'baseline' in "
				"[tool.gpuopt] (pyproject.toml) or gpuopt.toml (`gpuopt try --init SCRIPT` writes one)");
	if (set->outputs) {
		for (size_t i = 0; i < s->c.noutputs; i++) {
			free(s->c.outputs[i].path);
			strv_free(s->c.outputs[i].opts.keys);
		}
		free(s->c.outputs);
		size_t n = 0;
		while (set->outputs[n])
			n++;
		s->c.outputs = xcalloc(n ? n : 1, sizeof *s->c.outputs);
		s->c.noutputs = n;
		for (size_t i = 0; i < n; i++) {
			s->c.outputs[i].path = xstrdup(set->outputs[i]);
			size_t len = strlen(s->c.outputs[i].path);
			while (len > 1 && s->c.outputs[i].path[len - 1] == '/')
				s->c.outputs[i].path[--len] = '\0';
			s->c.outputs[i].opts = (struct verify_opts){.equal_nan = true, .show = 5, .min_recall = 0.9,
								   .epsilon = 1e-3};
		}
	}
	if (set->candidates) {
		size_t n = 0;
		while (set->candidates[n])
			n++;
		s->c.cands = xrealloc(s->c.cands, (s->c.ncands + n + 1) * sizeof *s->c.cands);
		for (size_t i = 0; i < n; i++) {
			s->c.cands[s->c.ncands].name = xstrdup(set->candidates[i]);
			s->c.cands[s->c.ncands].command = xstrdup(set->candidates[i]);
			s->c.ncands++;
		}
	}
	if (set->accelerators == 0) {
		s->c.accel_auto = false;
		strv_free(s->c.accel);
		s->c.accel = xcalloc(1, sizeof *s->c.accel);
	}
	if (set->trace >= 0)
		s->c.trace = set->trace;
	if (set->max_time >= 0)
		s->c.max_time = set->max_time;
	if (set->min_runs >= 1)
		s->c.min_runs = (unsigned)set->min_runs;
	if (set->log_limit > 0)
		s->c.log_limit = set->log_limit;
	if (s->c.max_runs && s->c.max_runs < s->c.min_runs)
		s->c.max_runs = s->c.min_runs;
	baseline_shape(s);
	say(s, "project: %s (%s)", s->c.dir,
	    s->c.file ? s->c.file : set->script ? "SCRIPT's directory; no contract found" : "the current directory; no contract found");
	/* the results directory */
	char *dir = s->c.results[0] == '/' ? xstrdup(s->c.results) : xasprintf("%s/%s", s->c.dir, s->c.results);
	if (set->results) {
		free(dir);
		dir = xstrdup(set->results);
	}
	char *why = NULL;
	enum results_refusal refused = results_claim(&s->claim, dir, s->c.dir, &why);
	free(dir);
	if (refused != RESULTS_OK) {
		fail(s, refused == RESULTS_IO ? TRY_IO_ERROR : TRY_BAD_CONTRACT, "%s", why);
		free(why);
		return false;
	}
	s->dir = s->claim.dir;
	s->res->results_dir = xstrdup(s->dir);
	json_t *cj = contract_to_json(&s->c);
	char *canon = json_dumps(cj, JSON_SORT_KEYS | JSON_COMPACT);
	uint64_t h = stepkey_bytes(canon, strlen(canon), stepkey_bytes(GPUOPT_VERSION, strlen(GPUOPT_VERSION), STEPKEY_BASIS));
	free(canon);
	s->key = xasprintf("%016llx", (unsigned long long)h);
	/* a changed contract makes the saved steps stale: start over */
	char *cpath = path_in(s, "contract.json");
	json_t *old = json_load_file(cpath, 0, NULL);
	const char *ok = json_string_value(json_object_get(old, "key"));
	if (old && ok && strcmp(ok, s->key) != 0 && !set->fresh)
		say(s, "the contract changed since the results in %s: starting over", s->dir);
	bool stale = !old || !ok || strcmp(ok, s->key) != 0 || set->fresh;
	json_decref(old);
	free(cpath);
	if (stale) {
		static const char *const steps[] = {"environment.json", "scan.json", "baseline.json", "verdict.json",
						    "reference", "runs", "logs", NULL};
		for (size_t i = 0; steps[i]; i++)
			results_remove(&s->claim, steps[i]);
		for (int i = 1; i < 1000; i++) {
			char *p = xasprintf("candidate-%d.json", i), *q = path_in(s, p);
			bool gone = access(q, F_OK) != 0;
			results_remove(&s->claim, p);
			free(p);
			free(q);
			if (gone)
				break;
		}
	}
	json_t *doc = json_pack("{s:o, s:s}", "contract", cj, "gpuopt", GPUOPT_VERSION);
	return save(s, "contract.json", doc);
}

/* ---- the project, read-only to the runs ---- */

/* A runs_writable entry of data/try.json as a path (owned), or NULL when
 * its variable is unset. */
static char *expand_path(const char *e)
{
	if (e[0] == '$') {
		const char *v = getenv(e + 1);
		return v && *v ? xstrdup(v) : NULL;
	}
	if (e[0] == '~' && e[1] == '/') {
		const char *home = getenv("HOME");
		return home && *home ? xasprintf("%s%s", home, e + 1) : NULL;
	}
	return xstrdup(e);
}

/* Makes the project read-only to try and to every run it starts, the
 * results directory and data/try.json's runs_writable excepted, so no run
 * can change the user's files through the links of its run directory.
 * Where the system allows no private mounts, runs copy files of up to
 * SCRATCH_COPY_UNPROTECTED bytes instead, and the user is told. */
static void protect_project(struct session *s)
{
	struct ptrvec w = {0};
	ptrvec_push(&w, xstrdup(s->dir));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(s->data, "runs_writable"), i, v) {
		char *p = json_is_string(v) ? expand_path(json_string_value(v)) : NULL;
		if (p)
			ptrvec_push(&w, p);
	}
	ptrvec_push(&w, NULL);
	char *why = NULL;
	s->read_only = readonly_tree(s->c.dir, (char *const *)w.items, &why);
	if (!s->read_only)
		say(s, "the project cannot be made read-only to the runs (%s): each run copies files of up to "
		       "%u MiB instead of linking them; a run that writes a larger file or into a linked "
		       "directory changes yours", why, SCRATCH_COPY_UNPROTECTED >> 20);
	free(why);
	for (i = 0; i + 1 < w.len; i++)
		free(w.items[i]);
	ptrvec_free(&w);
}

/* ---- environment and scan ---- */

static bool step_environment(struct session *s)
{
	s->env = load_keyed(s, "environment.json", s->env_key);
	if (!s->env) {
		/* the interpreter the baseline itself runs, when it names one */
		const char *py = s->python ? s->python : s->c.python;
		say(s, "environment: recording the machine, the GPU and %s", py);
		json_t *gpu = gpuinfo_query(20);
		json_t *doc = json_pack("{s:o, s:o, s:o}", "host", sysinfo_host(), "python",
					sysinfo_python(py, 30), "gpu", gpu);
		/* doctor's answer: can GPU work start here, and what blocks it */
		struct doctor_settings ds = {.python = py, .timeout_s = 120, .gpu_facts = gpu};
		struct doctor_result *dr = doctor_run(&ds);
		json_t *dj = doctor_result_json(dr);
		json_object_del(dj, "gpu"); /* recorded once, above */
		json_object_set_new(dj, "driver_cuda_major", json_integer(dr->driver_cuda_major));
		json_object_set_new(doc, "doctor", dj);
		doctor_result_free(dr);
		s->env = json_incref(doc);
		if (!save_keyed(s, "environment.json", doc, s->env_key))
			return false;
	}
	s->gpu = json_is_true(json_object_get(json_object_get(s->env, "gpu"), "found"));
	return true;
}

struct scan_collect {
	json_t *files;
	const char *root;
};

static void on_path_error(void *ctx, const char *path, const char *message)
{
	struct scan_collect *sc = ctx;
	json_array_append_new(sc->files, json_pack("{s:s, s:s}", "path", path, "error", message));
}

static void on_file(void *ctx, const struct scan_file *sf)
{
	struct scan_collect *sc = ctx;
	size_t rl = strlen(sc->root);
	const char *p = strncmp(sf->path, sc->root, rl) == 0 && sf->path[rl] == '/' ? sf->path + rl + 1 : sf->path;
	if (!sf->ok) {
		json_array_append_new(sc->files, json_pack("{s:s, s:s}", "path", p, "error", sf->error));
		return;
	}
	json_t *f = json_array();
	for (size_t i = 0; i < sf->res.n; i++) {
		const struct finding *x = &sf->res.items[i];
		json_array_append_new(f, json_pack("{s:i, s:i, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:i}", "line",
						   (int)x->line, "column", (int)x->col, "rule", x->rule->id,
						   "severity", severity_name(x->rule->severity), "category",
						   x->rule->category, "target", x->target, "symbol", x->symbol,
						   "message", x->message, "fix", x->fix, "rank", (int)x->rank));
	}
	json_array_append_new(sc->files, json_pack("{s:s, s:o}", "path", p, "findings", f));
}

/* The file (relative to the project) that module names, if the project has
 * it: a.b.c as here/a/b/c.py or here/a/b/c/__init__.py (here: the importing
 * file's folder, then the project's root), or NULL. Owned. */
static char *module_file(const char *dir, const char *here, const char *module)
{
	char *rel = xstrdup(module);
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	char *found = NULL;
	const char *roots[2] = {here, ""};
	for (int r = 0; r < 2 && !found; r++) {
		if (r == 1 && !*here)
			break;
		for (int k = 0; k < 2 && !found; k++) {
			char *cand = xasprintf("%s%s%s%s", roots[r], *roots[r] ? "/" : "", rel,
					       k ? "/__init__.py" : ".py");
			char *full = xasprintf("%s/%s", dir, cand);
			struct stat st;
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
				found = cand;
			else
				free(cand);
			free(full);
		}
	}
	free(rel);
	return found;
}

/* The project files an import reads, appended to out (unseen ones only):
 * the module it names and, for `from pkg import mod`, pkg/mod.py; relative
 * imports from the importing file's folder and its parents. */
static void import_files(const char *dir, const char *file, const struct py_import *im, struct ptrvec *found)
{
	char *here = xstrdup(file);
	char *slash = strrchr(here, '/');
	if (slash)
		*slash = '\0';
	else
		here[0] = '\0';
	const char *m = im->module;
	if (*m == '.') {
		m++; /* one dot: this folder; each further dot: one up */
		for (; *m == '.'; m++) {
			char *up = strrchr(here, '/');
			if (up)
				*up = '\0';
			else
				here[0] = '\0';
		}
	}
	char *names[2] = {NULL, NULL};
	if (*m)
		names[0] = xstrdup(m);
	if (im->name && strcmp(im->name, "*") != 0)
		names[1] = *m ? xasprintf("%s.%s", m, im->name) : xstrdup(im->name);
	for (int i = 0; i < 2; i++) {
		char *f = names[i] ? module_file(dir, here, names[i]) : NULL;
		/* `import a.b` reads a/__init__.py too, but a top module alone is what matters here */
		if (!f && names[i] && im->module[0] != '.' && strchr(names[i], '.')) {
			char *top = xstrndup(names[i], strcspn(names[i], "."));
			f = module_file(dir, here, top);
			free(top);
		}
		if (f)
			ptrvec_push(found, f);
		free(names[i]);
	}
	free(here);
}

/* Called with each file local_imports reads and its imports: the file
 * itself first, then the modules it reads. */
typedef void (*import_visit)(void *ctx, const char *file, const struct py_imports *ims);

/* The project modules file (relative to the project) imports, directly or
 * through each other, appended to out unless already there (at most 200):
 * read with the Python parser (scan/imports.h), so every import form counts;
 * visit (or NULL) sees each file's imports as they are read. */
static void local_imports(const char *dir, const char *file, struct ptrvec *out, int depth, import_visit visit,
			  void *ctx)
{
	char *path = xasprintf("%s/%s", dir, file);
	struct py_imports ims = {0};
	char *why = NULL;
	bool ok = py_imports_of_file(path, &ims, &why);
	free(path);
	free(why);
	if (!ok) {
		py_imports_free(&ims);
		return;
	}
	if (visit)
		visit(ctx, file, &ims);
	for (size_t i = 0; i < ims.n; i++) {
		struct ptrvec found = {0};
		import_files(dir, file, &ims.items[i], &found);
		for (size_t k = 0; k < found.len; k++) {
			bool seen = strcmp(found.items[k], file) == 0;
			for (size_t j = 0; j < out->len && !seen; j++)
				seen = strcmp(out->items[j], found.items[k]) == 0;
			if (!seen && out->len < 200) {
				ptrvec_push(out, found.items[k]);
				if (depth < 8)
					local_imports(dir, found.items[k], out, depth + 1, visit, ctx);
			} else {
				free(found.items[k]);
			}
		}
		ptrvec_free(&found);
	}
	py_imports_free(&ims);
}

/* The script a candidate command runs (`python X.py`), or NULL. Owned. */
static char *script_of(const char *command)
{
	char *why = NULL;
	char **w = shell_split(command, NULL, &why);
	free(why);
	if (!w)
		return NULL;
	char *found = NULL;
	for (size_t i = 0; w[i] && !found; i++)
		if (str_ends_with(w[i], ".py"))
			found = xstrdup(w[i]);
	shell_words_free(w);
	return found;
}

/* The key of a step that runs command, from base: the command itself, the
 * interpreter it runs (its first word when that is a Python, else the
 * contract's) with its packages, and the project files it reads (the words
 * that name files in the project, and the project modules the Python
 * scripts among them import). Owned, 16 hex digits. */
static char *command_key(const struct session *s, const char *base, const char *command)
{
	uint64_t h = stepkey_str(command, stepkey_str(base, STEPKEY_BASIS));
	char *why = NULL;
	char **w = shell_split(command, NULL, &why);
	free(why);
	struct ptrvec files = {0};
	char *py = xstrdup(s->c.python);
	for (size_t i = 0; w && w[i]; i++) {
		const char *name = strrchr(w[i], '/');
		name = name ? name + 1 : w[i];
		if (i == 0 && strncmp(name, "python", 6) == 0) {
			free(py);
			py = xstrdup(w[0]);
		}
		if (w[i][0] == '-')
			continue;
		char *p = w[i][0] == '/' ? xstrdup(w[i]) : xasprintf("%s/%s", s->c.dir, w[i]);
		struct stat st;
		bool file = stat(p, &st) == 0 && S_ISREG(st.st_mode);
		free(p);
		if (!file || (w[i][0] == '/' && i == 0))
			continue;
		ptrvec_push(&files, xstrdup(w[i]));
		if (str_ends_with(w[i], ".py") && w[i][0] != '/')
			local_imports(s->c.dir, w[i], &files, 0, NULL, NULL);
	}
	shell_words_free(w);
	h = stepkey_python(py, h);
	free(py);
	ptrvec_push(&files, NULL);
	h = stepkey_files(s->c.dir, (char *const *)files.items, h);
	for (size_t i = 0; i + 1 < files.len; i++)
		free(files.items[i]);
	ptrvec_free(&files);
	return xasprintf("%016llx", (unsigned long long)h);
}

/* The keys of the steps before the candidates (see struct session). */
static void make_step_keys(struct session *s)
{
	uint64_t h = stepkey_python(s->python ? s->python : s->c.python, stepkey_str(s->key, STEPKEY_BASIS));
	s->env_key = xasprintf("%016llx", (unsigned long long)h);
	s->base_key = command_key(s, s->env_key, s->c.baseline);
	h = stepkey_str(s->base_key, STEPKEY_BASIS);
	for (size_t i = 0; i < s->c.ncands; i++) {
		char *k = command_key(s, s->env_key, s->c.cands[i].command);
		h = stepkey_str(k, h);
		free(k);
	}
	s->scan_key = xasprintf("%016llx", (unsigned long long)h);
}

static bool step_scan(struct session *s)
{
	s->scan = load_keyed(s, "scan.json", s->scan_key);
	if (s->scan)
		return true;
	struct ptrvec files = {0};
	if (s->script) {
		ptrvec_push(&files, xstrdup(s->script));
		local_imports(s->c.dir, s->script, &files, 0, NULL, NULL);
	}
	for (size_t i = 0; i < s->c.ncands; i++) {
		char *sc = script_of(s->c.cands[i].command);
		bool seen = false;
		for (size_t k = 0; sc && k < files.len; k++)
			seen |= strcmp(files.items[k], sc) == 0;
		if (sc && !seen) {
			ptrvec_push(&files, sc);
			local_imports(s->c.dir, sc, &files, 0, NULL, NULL);
		} else {
			free(sc);
		}
	}
	json_t *doc = json_pack("{s:[], s:{}}", "files", "targets");
	if (files.len) {
		say(s, "scan: %zu file%s", files.len, files.len == 1 ? "" : "s");
		char *why = NULL;
		struct kb *kb = kb_load(&why);
		if (!kb) {
			fail(s, TRY_IO_ERROR, "knowledge data: %s", why);
			free(why);
			json_decref(doc);
			for (size_t i = 0; i < files.len; i++)
				free(files.items[i]);
			ptrvec_free(&files);
			return false;
		}
		char **paths = xcalloc(files.len, sizeof *paths);
		for (size_t i = 0; i < files.len; i++)
			paths[i] = xasprintf("%s/%s", s->c.dir, (char *)files.items[i]);
		struct scan_collect sc = {json_object_get(doc, "files"), s->c.dir};
		struct scan_options so = {.kb = kb, .jobs = 1};
		struct scan_sink sink = {.path_error = on_path_error, .file = on_file, .ctx = &sc};
		scan_paths(&so, paths, files.len, &sink, NULL);
		for (size_t i = 0; i < files.len; i++)
			free(paths[i]);
		free(paths);
		kb_free(kb);
		/* the GPU targets of the baseline's own files */
		json_t *targets = json_object_get(doc, "targets");
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(doc, "files"), i, f) {
			size_t j;
			json_t *x;
			json_array_foreach(json_object_get(f, "findings"), j, x) {
				const char *t = json_string_value(json_object_get(x, "target"));
				if (t)
					json_object_set_new(targets, t, json_integer(json_integer_value(json_object_get(targets, t)) + 1));
			}
		}
	}
	for (size_t i = 0; i < files.len; i++)
		free(files.items[i]);
	ptrvec_free(&files);
	s->scan = json_incref(doc);
	return save_keyed(s, "scan.json", doc, s->scan_key);
}

/* The scan's evidence that file (relative) holds GPU code: its first
 * finding of a GPU framework or a GPU anti-pattern, as "GPU501 at x.py:4",
 * or NULL. Owned. */
static char *scan_gpu_evidence(const struct session *s, const char *file)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(s->scan, "files"), i, f) {
		const char *p = json_string_value(json_object_get(f, "path"));
		if (!p || !file || strcmp(p, file) != 0)
			continue;
		size_t j;
		json_t *x;
		json_array_foreach(json_object_get(f, "findings"), j, x) {
			const char *cat = json_string_value(json_object_get(x, "category"));
			const char *rule = json_string_value(json_object_get(x, "rule"));
			if ((cat && strcmp(cat, "gpu-native-framework") == 0) || (rule && strncmp(rule, "GPU6", 4) == 0))
				return xasprintf("scan finds %s at %s:%lld", rule ? rule : "GPU code", p,
						 (long long)json_integer_value(json_object_get(x, "line")));
		}
	}
	return NULL;
}

/* The search for the first import of a GPU module (gpu_code). */
struct gpu_hunt {
	json_t *mods;        /* try.json's gpu_modules */
	const char *script;
	char *found;         /* the first GPU import, said (owned), or NULL */
};

static void hunt_gpu(void *ctx, const char *file, const struct py_imports *ims)
{
	struct gpu_hunt *h = ctx;
	for (size_t i = 0; i < ims->n && !h->found; i++) {
		size_t k;
		json_t *m;
		json_array_foreach(h->mods, k, m) {
			const char *g = json_string_value(m);
			if (!g || !py_import_is(&ims->items[i], g))
				continue;
			h->found = strcmp(file, h->script) != 0
				   ? xasprintf("%s:%u imports %s (%s imports that module)", file, ims->items[i].line, g,
					       h->script)
				   : xasprintf("%s:%u imports %s", file, ims->items[i].line, g);
			break;
		}
	}
}

/* Whether the command's script runs GPU code, and why, in one sentence
 * (*why, owned): the first import of one of try.json's gpu_modules in the
 * script or a project module it imports (any import form: the parser reads
 * them), else the scan's evidence, else what was looked at. */
static bool gpu_code(const struct session *s, const char *file, char **why)
{
	if (!file) {
		*why = xstrdup("the command runs no Python script that gpuopt can read, so it is taken for CPU code");
		return false;
	}
	struct ptrvec modules = {0};
	struct gpu_hunt h = {json_object_get(s->data, "gpu_modules"), file, NULL};
	local_imports(s->c.dir, file, &modules, 0, hunt_gpu, &h);
	size_t n = modules.len;
	for (size_t f = 0; f < modules.len; f++)
		free(modules.items[f]);
	ptrvec_free(&modules);
	if (h.found) {
		*why = h.found;
		return true;
	}
	char *ev = scan_gpu_evidence(s, file);
	if (ev) {
		*why = ev;
		return true;
	}
	*why = n ? xasprintf("neither %s nor the %zu project module%s it imports import%s a GPU library", file, n,
			     n == 1 ? "" : "s", n == 1 ? "s" : "")
		 : xasprintf("%s imports no GPU library", file);
	return false;
}

/* ---- the baseline ---- */

static char **skip_list(const struct session *s)
{
	size_t n = s->c.noutputs;
	char **skip = xcalloc(n + 2, sizeof *skip);
	for (size_t i = 0; i < n; i++)
		skip[i] = s->c.outputs[i].path;
	/* the results directory, when it is inside the project */
	size_t dl = strlen(s->c.dir);
	if (strncmp(s->dir, s->c.dir, dl) == 0 && s->dir[dl] == '/')
		skip[n] = s->dir + dl + 1;
	return skip;
}

/* A run directory runs/NAME mirroring the project. */
static bool make_run_dir(struct session *s, const char *name, struct scratch *sc)
{
	char *rel = xasprintf("runs/%s", name), *dir = path_in(s, rel), *runs = path_in(s, "runs");
	struct stat st;
	if (lstat(runs, &st) == 0 && !S_ISDIR(st.st_mode))
		results_remove(&s->claim, "runs"); /* a link or a file in its place */
	mkdir(runs, 0755);
	free(runs);
	results_remove(&s->claim, rel);
	free(rel);
	char **skip = skip_list(s);
	char *why = NULL;
	bool ok = scratch_make(sc, s->c.dir, dir, skip, s->read_only ? SCRATCH_COPY_MAX : SCRATCH_COPY_UNPROTECTED, &why);
	if (!ok)
		fail(s, TRY_IO_ERROR, "%s", why);
	free(why);
	free(skip);
	free(dir);
	return ok;
}

static bool step_baseline(struct session *s)
{
	s->baseline = load_keyed(s, "baseline.json", s->base_key);
	if (!s->baseline) {
		say(s, "baseline: %s", s->c.baseline);
		struct scratch sc;
		if (!make_run_dir(s, "baseline", &sc)) {
			scratch_free(&sc);
			return false;
		}
		json_t *rec = run_logged(s, s->c.baseline, sc.dir, "baseline", NULL, NULL);
		if (runner_interrupted()) {
			json_decref(rec);
			scratch_free(&sc);
			return fail(s, TRY_INTERRUPTED, "interrupted during the baseline run; run again to resume");
		}
		if (!json_is_true(json_object_get(rec, "ok"))) {
			char *d = describe_failure(rec);
			char *log = xasprintf("%s/logs/baseline.err", s->dir);
			char *q = quote(log);
			fail(s, TRY_BASELINE_FAILED, "the baseline '%s' failed: %s (its output: %s)", s->c.baseline, d, q);
			free(q);
			free(log);
			free(d);
			json_decref(rec);
			scratch_free(&sc);
			return false;
		}
		/* its outputs: the declared ones, else every file it made */
		json_t *outs = json_array();
		if (s->c.noutputs) {
			for (size_t i = 0; i < s->c.noutputs; i++) {
				char *p = xasprintf("%s/%s", sc.dir, s->c.outputs[i].path);
				bool there = access(p, F_OK) == 0;
				free(p);
				if (!there) {
					if (s->set->outputs || !s->c.file)
						fail(s, TRY_BASELINE_FAILED, "--output '%s': the baseline did not write it "
						     "(it ran in %s)", s->c.outputs[i].path, sc.dir);
					else
						fail(s, TRY_BASELINE_FAILED, "%s: outputs[%zu] '%s': the baseline did not "
						     "write it (it ran in %s)", s->c.file, i, s->c.outputs[i].path, sc.dir);
					json_decref(outs);
					json_decref(rec);
					scratch_free(&sc);
					return false;
				}
				json_array_append_new(outs, json_string(s->c.outputs[i].path));
			}
		} else {
			struct ptrvec made = {0};
			scratch_new_files(&sc, &made);
			for (size_t i = 0; i < made.len; i++) {
				const char *m = made.items[i];
				if (!str_ends_with(m, ".pyc"))
					json_array_append_new(outs, json_string(m));
				free(made.items[i]);
			}
			ptrvec_free(&made);
			if (json_array_size(outs) == 0) {
				fail(s, TRY_BASELINE_FAILED, "the baseline wrote no file into its run directory (%s): "
				     "there is nothing to verify; name its outputs with --output or 'outputs'", sc.dir);
				json_decref(outs);
				json_decref(rec);
				scratch_free(&sc);
				return false;
			}
			say(s, "baseline: no outputs declared; comparing the %zu file%s it wrote", json_array_size(outs),
			    json_array_size(outs) == 1 ? "" : "s");
		}
		/* keep them as the reference */
		size_t i;
		json_t *o;
		json_array_foreach(outs, i, o) {
			char *from = xasprintf("%s/%s", sc.dir, json_string_value(o));
			char *to = xasprintf("%s/reference/%s", s->dir, json_string_value(o));
			char *why = NULL;
			bool ok = copy_tree(from, to, &why);
			free(from);
			free(to);
			if (!ok) {
				fail(s, TRY_IO_ERROR, "cannot keep the reference output: %s", why);
				free(why);
				json_decref(outs);
				json_decref(rec);
				scratch_free(&sc);
				return false;
			}
		}
		json_t *doc = json_pack("{s:o, s:o, s:b}", "run", rec, "outputs", outs, "declared", s->c.noutputs > 0);
		scratch_free(&sc);
		s->baseline = json_incref(doc);
		if (!save_keyed(s, "baseline.json", doc, s->base_key))
			return false;
	}
	json_t *outs = json_object_get(s->baseline, "outputs");
	size_t n = json_array_size(outs);
	s->outputs = xcalloc(n + 1, sizeof *s->outputs);
	s->out_opts = xcalloc(n ? n : 1, sizeof *s->out_opts);
	s->dflt_opts = (struct verify_opts){.equal_nan = true, .show = 5, .min_recall = 0.9, .epsilon = 1e-3};
	for (size_t i = 0; i < n; i++) {
		s->outputs[i] = xstrdup(json_string_value(json_array_get(outs, i)));
		s->out_opts[i] = i < s->c.noutputs ? s->c.outputs[i].opts : s->dflt_opts;
	}
	return true;
}

/* ---- the candidates ---- */

struct cand {
	char *name, *kind, *run, *observe;
	json_t *accel;       /* its try.json entry (borrowed), or NULL */
	bool applies_missing; /* an accelerator that applies but is not installed */
	char *install;
	bool gpu;
	char *gpu_why;       /* why it is (or is not) taken for GPU code, or NULL */
};

static void cand_free(struct cand *c)
{
	free(c->name);
	free(c->kind);
	free(c->run);
	free(c->observe);
	free(c->install);
	free(c->gpu_why);
}

/* Is module importable by the contract's Python (without importing it)? */
static bool module_installed(struct session *s, const char *module)
{
	char top[128];
	snprintf(top, sizeof top, "%.*s", (int)strcspn(module, "."), module);
	char *code = xasprintf("import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(%s%s%s) else 1)",
			       "'", top, "'");
	char *q = quote(code);
	char *cmd = xasprintf("%s -c %s", s->python ? s->python : s->c.python, q);
	free(q);
	free(code);
	char *why = NULL;
	char **argv = shell_split(cmd, NULL, &why);
	free(why);
	free(cmd);
	if (!argv)
		return false;
	int in = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct runner_stdio io = {in, in, in, NULL};
	struct run_result r;
	bool ok = in >= 0 && runner_run(argv, &io, 60, &r) && run_ok(&r);
	if (in >= 0)
		close(in);
	shell_words_free(argv);
	return ok;
}

/* How to install package for this machine's driver (doctor's data). Owned. */
static char *install_command(struct session *s, const char *package)
{
	int major = (int)json_integer_value(json_object_get(json_object_get(s->env, "doctor"), "driver_cuda_major"));
	char *why = NULL;
	char *cmd = doctor_install_fix(package, major, &why);
	if (!cmd) {
		cmd = xasprintf("see `gpuopt doctor` (%s)", why);
		free(why);
	}
	return cmd;
}

static size_t list_candidates(struct session *s, struct cand **out)
{
	json_t *accels = json_object_get(s->data, "accelerators");
	json_t *targets = json_object_get(s->scan, "targets");
	size_t cap = json_array_size(accels) + s->c.ncands + 1, n = 0;
	struct cand *cs = xcalloc(cap, sizeof *cs);
	size_t i;
	json_t *a;
	json_array_foreach(accels, i, a) {
		const char *id = json_string_value(json_object_get(a, "id"));
		const char *when = json_string_value(json_object_get(a, "when_target"));
		bool wanted = false;
		if (s->c.accel_auto)
			wanted = when && json_object_get(targets, when) != NULL;
		for (size_t k = 0; s->c.accel && s->c.accel[k]; k++)
			wanted |= strcmp(s->c.accel[k], id) == 0;
		if (!wanted)
			continue;
		if (!s->script) {
			say(s, "%s applies, but the baseline is not `python SCRIPT ...`: not tried", id);
			continue;
		}
		struct cand *c = &cs[n++];
		c->name = xstrdup(id);
		c->kind = xstrdup("accelerator");
		c->accel = a;
		c->gpu = true;
		c->gpu_why = xasprintf("the accelerator mode %s runs the baseline's calls on the GPU", id);
		c->run = expand(s, json_string_value(json_object_get(a, "run")));
		c->observe = expand(s, json_string_value(json_object_get(a, "observe")));
		if (!module_installed(s, json_string_value(json_object_get(a, "module")))) {
			c->applies_missing = true;
			c->install = install_command(s, json_string_value(json_object_get(a, "package")));
		}
	}
	for (size_t k = 0; k < s->c.ncands; k++) {
		struct cand *c = &cs[n++];
		c->name = xstrdup(s->c.cands[k].name);
		c->kind = xstrdup("candidate");
		c->run = xstrdup(s->c.cands[k].command);
		c->observe = xstrdup(s->c.cands[k].command);
		char *sc = script_of(c->run);
		c->gpu = gpu_code(s, sc, &c->gpu_why);
		free(sc);
	}
	*out = cs;
	return n;
}

/* Text between after and until in line (until "" = to the end), or NULL. Owned. */
static char *between(const char *line, const char *after, const char *until)
{
	if (!after || !*after)
		return NULL;
	const char *p = strstr(line, after);
	if (!p)
		return NULL;
	p += strlen(after);
	const char *e = until && *until ? strstr(p, until) : NULL;
	size_t n = e ? (size_t)(e - p) : strlen(p);
	while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' '))
		n--;
	return n ? xstrndup(p, n > 200 ? 200 : n) : NULL;
}

static void count_lines(json_t *accel, const char *text, json_t *counts, size_t *fallbacks, size_t *gpu)
{
	json_t *patterns = json_object_get(accel, "fallback"), *gpu_lines = json_object_get(accel, "gpu_line");
	for (const char *line = text; line && *line; ) {
		const char *end = strchr(line, '\n');
		char *l = xstrndup(line, end ? (size_t)(end - line) : strlen(line));
		size_t i;
		json_t *p;
		bool hit = false;
		json_array_foreach(patterns, i, p) {
			const char *c = json_string_value(json_object_get(p, "contains"));
			if (hit || !c || !strstr(l, c))
				continue;
			hit = true;
			(*fallbacks)++;
			char *what = between(l, json_string_value(json_object_get(p, "what_after")),
					     json_string_value(json_object_get(p, "what_until")));
			/* why_after: one marker, or several to try in order */
			json_t *wa = json_object_get(p, "why_after");
			char *why = NULL;
			if (json_is_array(wa)) {
				size_t k;
				json_t *m;
				json_array_foreach(wa, k, m) {
					if (!why)
						why = between(l, json_string_value(m),
							      json_string_value(json_object_get(p, "why_until")));
				}
			} else {
				why = between(l, json_string_value(wa), json_string_value(json_object_get(p, "why_until")));
			}
			const char *fixed = json_string_value(json_object_get(p, "why"));
			char *key = xasprintf("%s%s%s", what ? what : "a call", (why || fixed) ? ": " : "",
					      why ? why : fixed ? fixed : "");
			if (json_object_size(counts) < 50 || json_object_get(counts, key))
				json_object_set_new(counts, key, json_integer(json_integer_value(json_object_get(counts, key)) + 1));
			free(key);
			free(what);
			free(why);
		}
		json_array_foreach(gpu_lines, i, p) {
			const char *c = json_string_value(p);
			if (!hit && c && strstr(l, c)) {
				(*gpu)++;
				break;
			}
		}
		free(l);
		line = end ? end + 1 : NULL;
	}
}

/* The CPU fallbacks and GPU calls an accelerator's observed run printed,
 * counted line by line as it prints them (its logs keep only their start
 * and end). */
struct fallback_count {
	json_t *accel;  /* the accelerator's knowledge (borrowed) */
	json_t *counts; /* what -> how many */
	size_t fallbacks, gpu;
};

static void count_line(void *ctx, const char *line, size_t len)
{
	struct fallback_count *fc = ctx;
	(void)len;
	count_lines(fc->accel, line, fc->counts, &fc->fallbacks, &fc->gpu);
}

/* The counts of fc (which it empties) with those of the accelerator's own
 * files in dir, as the candidate's "fallbacks" record. */
static json_t *count_fallbacks(const struct cand *c, struct fallback_count *fc, const char *dir)
{
	json_t *counts = fc->counts;
	size_t fallbacks = fc->fallbacks, gpu = fc->gpu;
	fc->counts = NULL;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(c->accel, "observe_files"), i, f) {
		char *p = xasprintf("%s/%s", dir, json_string_value(f));
		struct buf b = {0};
		char *why = NULL;
		if (read_file(p, 256u << 20, &b, &why) && b.data)
			count_lines(c->accel, b.data, counts, &fallbacks, &gpu);
		free(why);
		buf_free(&b);
		free(p);
	}
	/* the commonest first */
	json_t *items = json_array();
	while (json_object_size(counts)) {
		const char *best = NULL, *k;
		json_int_t bn = -1;
		json_t *v;
		json_object_foreach(counts, k, v) {
			if (json_integer_value(v) > bn) {
				bn = json_integer_value(v);
				best = k;
			}
		}
		json_array_append_new(items, json_pack("{s:s, s:I}", "what", best, "count", bn));
		json_object_del(counts, best);
	}
	json_decref(counts);
	return json_pack("{s:I, s:I, s:o}", "count", (json_int_t)fallbacks, "gpu_calls", (json_int_t)gpu, "items", items);
}

/* One line for the first difference in a verify JSON report. Owned. */
static char *first_difference(const char *output, json_t *rep)
{
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(rep, "items"), i, it) {
		const char *res = json_string_value(json_object_get(it, "result"));
		if (res && strcmp(res, "pass") == 0)
			continue;
		const char *err = json_string_value(json_object_get(it, "error"));
		if (err)
			return xasprintf("%s: %s", output, err);
		json_t *mm = json_object_get(it, "mismatches");
		if (json_is_integer(mm)) {
			json_t *mx = json_object_get(it, "max_abs_error"), *nan = json_object_get(it, "nan_pattern");
			long long ref_only = json_integer_value(json_object_get(nan, "ref_only"));
			long long cand_only = json_integer_value(json_object_get(nan, "cand_only"));
			char *nans = ref_only || cand_only
				? xasprintf(" (%lld NaN only in the candidate, %lld only in the reference)", cand_only, ref_only)
				: xstrdup("");
			/* with NaNs only, no element has an error to show */
			char *r = json_is_number(json_object_get(mx, "value")) &&
					  json_integer_value(mm) > ref_only + cand_only
				? xasprintf("%s: %lld of %lld elements differ%s, largest abs error %.3g", output,
					    (long long)json_integer_value(mm),
					    (long long)json_integer_value(json_object_get(it, "elements")), nans,
					    json_number_value(json_object_get(mx, "value")))
				: xasprintf("%s: %lld of %lld elements differ%s", output, (long long)json_integer_value(mm),
					    (long long)json_integer_value(json_object_get(it, "elements")), nans);
			free(nans);
			return r;
		}
		const char *note = json_string_value(json_object_get(it, "note"));
		const char *name = json_string_value(json_object_get(it, "name"));
		return xasprintf("%s: %s%s%s", output, name ? name : "an item", note ? ": " : " differs",
				 note ? note : "");
	}
	return xasprintf("%s differs", output);
}

/* Verifies the candidate's outputs in dir against the reference. */
static json_t *verify_outputs(struct session *s, const char *dir, int *status, char **mismatch)
{
	json_t *all = json_array();
	*status = 0;
	*mismatch = NULL;
	for (size_t i = 0; s->outputs[i]; i++) {
		char *ref = xasprintf("%s/reference/%s", s->dir, s->outputs[i]);
		char *cand = xasprintf("%s/%s", dir, s->outputs[i]);
		if (access(cand, F_OK) != 0) {
			json_array_append_new(all, json_pack("{s:s, s:s, s:s}", "output", s->outputs[i], "result", "error",
							     "error", "the candidate did not write it"));
			if (*status < 2) {
				free(*mismatch);
				*mismatch = xasprintf("%s: the candidate did not write it", s->outputs[i]);
			}
			*status = 2;
		} else {
			struct verify_report *r = verify_paths(&s->out_opts[i], ref, cand);
			int code = verify_exit_code(r);
			char *text = verify_report_json(r);
			json_t *doc = json_loads(text, 0, NULL);
			free(text);
			json_t *e = json_pack("{s:s, s:s, s:o}", "output", s->outputs[i], "result",
					      code == 0 ? "pass" : code == 1 ? "fail" : "error", "report",
					      doc ? doc : json_null());
			if (code > *status) {
				*status = code;
				free(*mismatch);
				*mismatch = first_difference(s->outputs[i], doc);
			}
			json_array_append_new(all, e);
			verify_report_free(r);
		}
		free(ref);
		free(cand);
	}
	return all;
}

/* Benchmarks baseline against c; the bench JSON, or NULL with rec saying why. */
static json_t *bench_candidate(struct session *s, const struct cand *c, int index, json_t *summary)
{
	char *bname = xasprintf("candidate-%d-bench-baseline", index), *cname = xasprintf("candidate-%d-bench", index);
	struct scratch sb, sc;
	memset(&sb, 0, sizeof sb);
	memset(&sc, 0, sizeof sc);
	json_t *doc = NULL;
	if (!make_run_dir(s, bname, &sb) || !make_run_dir(s, cname, &sc))
		goto out;
	struct bench_settings set;
	memset(&set, 0, sizeof set);
	set.warmup = s->c.warmup;
	set.min_runs = s->c.min_runs;
	set.min_runs_set = true; /* the contract's floor holds against its max_time */
	set.max_runs = s->c.max_runs;
	set.min_time_s = s->c.min_time;
	set.max_time_s = s->c.max_time;
	set.precision = s->c.precision;
	set.min_effect = s->c.min_effect;
	set.seed = s->c.seed;
	set.resamples = 10000;
	set.output = OUTPUT_NULL;
	set.timeout_s = run_timeout(s);
	set.python = s->c.python;
	ptrvec_push(&set.names, "baseline");
	ptrvec_push(&set.names, c->name);
	char *cwds[2] = {sb.dir, sc.dir};
	set.cwds = cwds;
	char *cmds[2] = {s->c.baseline, c->run};
	say(s, "%s: benchmarking against the baseline (interleaved, at least %u rounds, at most %.0f s)", c->name,
	    set.min_runs, set.max_time_s);
	struct bench_result *r = bench_run(&set, cmds, 2);
	if (r->nmeasured == 1) { /* measured to the end (a failed --cleanup after it changes nothing) */
		char *text = bench_to_json(r);
		doc = json_loads(text, 0, NULL);
		free(text);
		const struct bench_group *g = &r->groups[0];
		const struct bench_comparison *cmp = &g->cmp[0];
		if (cmp->why) { /* no number where the runs give no verdict */
			char *v = xasprintf("cannot conclude: %s", cmp->why);
			json_object_set_new(summary, "verdict", json_string(v));
			free(v);
		} else {
			json_object_set_new(summary, "verdict", json_string(cmp->verdict));
			json_object_set_new(summary, "speedup", json_real(cmp->speedup.estimate));
			json_object_set_new(summary, "lo", json_real(cmp->speedup.lo));
			json_object_set_new(summary, "hi", json_real(cmp->speedup.hi));
		}
		json_object_set_new(summary, "baseline_median_s", json_real(g->cmds[0].wall.median));
		json_object_set_new(summary, "candidate_median_s", json_real(g->cmds[1].wall.median));
		json_object_set_new(summary, "rounds", json_integer((json_int_t)g->rounds));
	} else {
		static const char *const why[] = {"", "a command could not be split or found", "a command could not be started",
						  "a run failed", "a --cleanup failed", "interrupted"};
		json_object_set_new(summary, "error", json_string(why[r->status]));
	}
	bench_result_free(r);
	ptrvec_free(&set.names);
out:
	if (sb.dir) {
		char *rel = xasprintf("runs/%s", bname);
		results_remove(&s->claim, rel);
		free(rel);
	}
	if (sc.dir) {
		char *rel = xasprintf("runs/%s", cname);
		results_remove(&s->claim, rel);
		free(rel);
	}
	scratch_free(&sb);
	scratch_free(&sc);
	free(bname);
	free(cname);
	return doc;
}

/* Every string in j with `prefix` taken out (the run directory in the
 * tracer's labels: the project's own paths are what a reader knows). */
static void strip_prefix(json_t *j, const char *prefix)
{
	size_t n = strlen(prefix);
	if (json_is_string(j)) {
		const char *v = json_string_value(j);
		if (!strstr(v, prefix))
			return;
		struct buf b = {0};
		for (const char *p = v; *p; ) {
			if (strncmp(p, prefix, n) == 0)
				p += n;
			else
				buf_putc(&b, *p++);
		}
		json_string_set(j, b.data ? b.data : "");
		buf_free(&b);
	} else if (json_is_array(j)) {
		size_t i;
		json_t *e;
		json_array_foreach(j, i, e)
			strip_prefix(e, prefix);
	} else if (json_is_object(j)) {
		const char *k;
		json_t *e;
		json_object_foreach(j, k, e)
			strip_prefix(e, prefix);
	}
}

/* One separate run of c under the tracer (never a timed one): the trace
 * report's JSON, with the Chrome trace beside it (candidate-N.trace.json),
 * or {"error": why}. */
static json_t *trace_candidate(struct session *s, const struct cand *c, int index)
{
	char *name = xasprintf("candidate-%d-trace", index);
	struct scratch sc;
	json_t *out = NULL;
	char *why = NULL;
	char **argv = shell_split(c->run, NULL, &why);
	struct trace_config cfg;
	memset(&cfg, 0, sizeof cfg);
	bool have_cfg = false;
	int fo = -1, fe = -1;
	struct caplog lo, le;
	caplog_init(&lo, -1, 0, NULL, NULL);
	caplog_init(&le, -1, 0, NULL, NULL);
	if (!argv) {
		out = json_pack("{s:s}", "error", why ? why : "cannot split the command");
		goto done;
	}
	if (!make_run_dir(s, name, &sc)) {
		scratch_free(&sc);
		out = json_pack("{s:s}", "error", "cannot make its run directory");
		goto done;
	}
	if (!(have_cfg = trace_config_load(&cfg, &why))) {
		out = json_pack("{s:s}", "error", why);
		scratch_free(&sc);
		goto done;
	}
	char *logs = path_in(s, "logs");
	char *op = xasprintf("%s/%s.out", logs, name), *ep = xasprintf("%s/%s.err", logs, name);
	fo = open_log(op);
	fe = open_log(ep);
	free(op);
	free(ep);
	free(logs);
	caplog_init(&lo, fo, log_limit(s), NULL, NULL);
	caplog_init(&le, fe, log_limit(s), NULL, NULL);
	struct trace_settings ts = {.argv = argv, .config = &cfg, .timeline = true, .output = TRACE_OUT_LOGS,
				    .out_log = &lo, .err_log = &le, .cwd = sc.dir, .quiet = true,
				    .timeout_s = run_timeout(s)};
	free(why);
	why = NULL;
	struct trace *t = trace_run(&ts, &why);
	caplog_finish(&lo);
	caplog_finish(&le);
	if (!t) {
		out = json_pack("{s:s}", "error", why ? why : "the tracer did not run");
	} else if (!t->traced) {
		out = json_pack("{s:s}", "error", t->note ? t->note : "the program ran untraced");
	} else {
		struct trace_report *r = trace_analyze(t, &cfg);
		out = trace_report_json(r);
		/* the tracer names files from gpuopt's directory: drop the run directory */
		char *abs = xasprintf("%s/", sc.dir);
		strip_prefix(out, abs);
		char *cwd = getcwd(NULL, 0);
		size_t cl = cwd ? strlen(cwd) : 0;
		if (cwd && strncmp(sc.dir, cwd, cl) == 0 && sc.dir[cl] == '/') {
			char *rel = xasprintf("%s/", sc.dir + cl + 1);
			strip_prefix(out, rel);
			free(rel);
		}
		free(cwd);
		free(abs);
		char *chrome = xasprintf("%s/candidate-%d.trace.json", s->dir, index);
		char *ewhy = NULL;
		if (trace_export_chrome(t, chrome, &ewhy))
			json_object_set_new(out, "chrome_trace", json_sprintf("candidate-%d.trace.json", index));
		free(ewhy);
		free(chrome);
		trace_report_free(r);
	}
	if (fo >= 0 && fe >= 0) {
		json_object_set_new(out, "stdout", json_sprintf("logs/%s.out", name));
		json_object_set_new(out, "stderr", json_sprintf("logs/%s.err", name));
	}
	record_dropped(out, &lo, &le);
	trace_free(t);
	scratch_free(&sc);
done:
	caplog_free(&lo);
	caplog_free(&le);
	if (fo >= 0)
		close(fo);
	if (fe >= 0)
		close(fe);
	if (have_cfg)
		trace_config_free(&cfg);
	free(why);
	shell_words_free(argv);
	free(name);
	return out;
}

/* The label of the traced line whose CUDA calls held the host longest
 * (launches, copies, synchronizes: what a host-bound port spends its time
 * on), or NULL. Borrowed from lines (the trace report's). */
static const char *host_line(json_t *lines)
{
	const char *best = NULL;
	json_int_t most = 0;
	size_t i;
	json_t *l;
	json_array_foreach(lines, i, l) {
		json_int_t ns = 0;
		const char *op;
		json_t *c;
		json_object_foreach(json_object_get(l, "calls"), op, c)
			if (strcmp(op, "alloc") != 0 && strcmp(op, "free") != 0)
				ns += json_integer_value(json_object_get(c, "host_ns"));
		if (ns > most) {
			most = ns;
			best = json_string_value(json_object_get(l, "label"));
		}
	}
	return best;
}

static bool no_gpu_text(const char *t)
{
	static const char *const signs[] = {"no CUDA-capable device", "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE",
					    "cudaErrorInsufficientDriver", "CUDA driver", "libcuda.so",
					    "no NVIDIA driver", "NVIDIA driver", "CUDARuntimeError", "cudaError",
					    "No CUDA GPUs are available", "nvidia-smi", NULL};
	for (size_t i = 0; t && signs[i]; i++)
		if (strstr(t, signs[i]))
			return true;
	return false;
}

static bool try_candidate(struct session *s, struct cand *c, int index, struct try_candidate_result *out)
{
	char *rel = xasprintf("candidate-%d.json", index);
	/* what it runs and what it is compared with */
	char *run_key = command_key(s, s->base_key, c->run);
	char *key = strcmp(c->observe, c->run) == 0 ? xstrdup(run_key) : command_key(s, run_key, c->observe);
	free(run_key);
	json_t *doc = load_keyed(s, rel, key);
	if (doc && json_object_get(doc, "verdict")) {
		/* done in an earlier run */
	} else {
		json_decref(doc);
		doc = json_pack("{s:i, s:s, s:s, s:s, s:s, s:b, s:s?}", "index", index, "name", c->name, "kind", c->kind,
				"command", c->run, "observe_command", c->observe, "gpu", c->gpu, "gpu_why", c->gpu_why);
		struct verdict_in in = {.available = !c->applies_missing, .install = c->install, .gpu = c->gpu,
					.min_effect = s->c.min_effect, .no_gpu_here = !s->gpu, .accel = c->accel != NULL};
		char *crash = NULL, *mismatch = NULL;
		if (c->applies_missing) {
			say(s, "%s: applies, not installed", c->name);
			json_object_set_new(doc, "install", json_string(c->install));
		} else {
			/* 1. run it once, observed */
			if (c->gpu_why)
				say(s, "%s: %s code: %s", c->name, c->gpu ? "GPU" : "CPU", c->gpu_why);
			say(s, "%s: %s", c->name, c->observe);
			char *dname = xasprintf("candidate-%d", index);
			struct scratch sc;
			if (!make_run_dir(s, dname, &sc)) {
				free(dname);
				scratch_free(&sc);
				json_decref(doc);
				free(rel);
			free(key);
				return false;
			}
			struct fallback_count fc = {c->accel, json_object(), 0, 0};
			json_t *rec = run_logged(s, c->observe, sc.dir, dname, c->accel ? count_line : NULL, &fc);
			free(dname);
			if (runner_interrupted()) {
				json_decref(fc.counts);
				json_decref(rec);
				scratch_free(&sc);
				json_decref(doc);
				free(rel);
			free(key);
				return fail(s, TRY_INTERRUPTED, "interrupted while running %s; run again to resume", c->name);
			}
			in.ran = json_is_true(json_object_get(rec, "ok"));
			if (!c->accel) {
				json_decref(fc.counts);
				fc.counts = NULL;
			}
			if (c->accel) {
				json_t *fb = count_fallbacks(c, &fc, sc.dir);
				in.fallbacks = (size_t)json_integer_value(json_object_get(fb, "count"));
				in.gpu_calls = (size_t)json_integer_value(json_object_get(fb, "gpu_calls"));
				json_t *top = json_array_get(json_object_get(fb, "items"), 0);
				if (top)
					in.fallback_top = json_string_value(json_object_get(top, "what"));
				json_object_set_new(doc, "fallbacks", fb);
			}
			if (!in.ran) {
				crash = describe_failure(rec);
				in.crash = crash;
				const char *tail = json_string_value(json_object_get(rec, "stderr_tail"));
				in.crash_no_gpu = c->gpu && !s->gpu && no_gpu_text(tail);
			}
			json_object_set_new(doc, "run", rec);
			/* 2. verify */
			if (in.ran) {
				say(s, "%s: verifying %zu output%s", c->name, json_array_size(json_object_get(s->baseline, "outputs")),
				    json_array_size(json_object_get(s->baseline, "outputs")) == 1 ? "" : "s");
				json_object_set_new(doc, "verify", verify_outputs(s, sc.dir, &in.verified, &mismatch));
				in.mismatch = mismatch;
			}
			scratch_free(&sc);
			if (!save_keyed(s, rel, json_incref(doc), key)) {
				json_decref(doc);
				free(rel);
			free(key);
				free(crash);
				free(mismatch);
				return false;
			}
			/* 3. benchmark, only what computes the same thing — and a GPU
			 * candidate only where there is a GPU: here it ran on the CPU */
			if (in.ran && in.verified == 0 && !(c->gpu && !s->gpu)) {
				json_t *summary = json_object();
				json_t *bench = bench_candidate(s, c, index, summary);
				if (runner_interrupted()) {
					json_decref(bench);
					json_decref(summary);
					json_decref(doc);
					free(rel);
			free(key);
					free(crash);
					free(mismatch);
					return fail(s, TRY_INTERRUPTED, "interrupted while benchmarking %s; run again to resume",
						    c->name);
				}
				if (bench)
					json_object_set_new(doc, "bench", bench);
				json_object_set_new(doc, "bench_summary", summary);
				/* 4. with a GPU, trace one separate run: what its time went to */
				if (c->gpu && s->gpu && s->c.trace != 0) {
					say(s, "%s: tracing one separate run", c->name);
					json_object_set_new(doc, "trace", trace_candidate(s, c, index));
				}
			}
		}
		json_t *bs = json_object_get(doc, "bench_summary");
		if (bs && json_object_get(bs, "verdict")) {
			in.benched = true;
			in.bench = json_string_value(json_object_get(bs, "verdict"));
			in.speedup = json_number_value(json_object_get(bs, "speedup"));
			in.lo = json_number_value(json_object_get(bs, "lo"));
			in.hi = json_number_value(json_object_get(bs, "hi"));
			in.base_median_s = json_number_value(json_object_get(bs, "baseline_median_s"));
			in.cand_median_s = json_number_value(json_object_get(bs, "candidate_median_s"));
		} else if (bs && json_object_get(bs, "error")) {
			in.benched = true;
			char *t = xasprintf("cannot conclude: %s", json_string_value(json_object_get(bs, "error")));
			json_object_set_new(bs, "verdict_text", json_string(t));
			in.bench = json_string_value(json_object_get(bs, "verdict_text"));
			free(t);
		}
		json_t *tr = json_object_get(doc, "trace");
		json_t *tf = json_object_get(tr, "findings");
		struct waste *waste = xcalloc(json_array_size(tf) + 1, sizeof *waste);
		if (tr && !json_object_get(tr, "error")) {
			in.traced = true;
			json_t *budget = json_object_get(tr, "budget");
			in.trace_wall_s = json_number_value(json_object_get(budget, "wall_s"));
			in.gpu_window_s = (double)json_integer_value(json_object_get(budget, "gpu_phase_ns")) / 1e9;
			in.gpu_busy_s = (double)json_integer_value(json_object_get(budget, "gpu_busy_ns")) / 1e9;
			in.host_line = host_line(json_object_get(tr, "lines"));
			if (json_integer_value(json_object_get(budget, "kernels")) > 0)
				in.gpu = true; /* the trace saw it run GPU work */
			size_t k;
			json_t *f;
			/* each cost as a share of the traced run's wall time: what it does to the
			 * end-to-end time, which is what the benchmark compares */
			json_array_foreach(tf, k, f) {
				double cost = json_number_value(json_object_get(f, "cost_s"));
				waste[in.nwaste++] = (struct waste){json_string_value(json_object_get(f, "rule")),
					json_string_value(json_object_get(f, "line")), json_string_value(json_object_get(f, "fix")),
					in.trace_wall_s > 0 ? cost / in.trace_wall_s : 0,
					json_number_value(json_object_get(f, "share"))};
			}
			/* most costly first */
			for (size_t a = 1; a < in.nwaste; a++)
				for (size_t b2 = a; b2 > 0 && waste[b2].share > waste[b2 - 1].share; b2--) {
					struct waste tmp = waste[b2];
					waste[b2] = waste[b2 - 1];
					waste[b2 - 1] = tmp;
				}
			in.waste = waste;
		}
		struct verdict_out v;
		verdict_decide(&in, json_object_get(s->data, "verdict"), &v);
		free(waste);
		json_object_set_new(doc, "verdict", json_pack("{s:s, s:s?, s:s}", "verdict", try_verdict_name(v.verdict),
							      "factor", v.factor, "reason", v.reason));
		free(v.factor);
		free(v.reason);
		free(crash);
		free(mismatch);
		if (!save_keyed(s, rel, json_incref(doc), key)) {
			json_decref(doc);
			free(rel);
			free(key);
			return false;
		}
	}
	json_t *v = json_object_get(doc, "verdict");
	const char *vn = json_string_value(json_object_get(v, "verdict"));
	out->name = xstrdup(c->name);
	out->kind = xstrdup(c->kind);
	out->command = xstrdup(c->run);
	out->verdict = !vn ? TRY_REVISE : strcmp(vn, "keep") == 0 ? TRY_KEEP : strcmp(vn, "reject") == 0 ? TRY_REJECT
		       : strcmp(vn, "unavailable") == 0 ? TRY_UNAVAILABLE : TRY_REVISE;
	const char *f = json_string_value(json_object_get(v, "factor"));
	out->factor = f ? xstrdup(f) : NULL;
	out->reason = xstrdup(json_string_value(json_object_get(v, "reason")) ? json_string_value(json_object_get(v, "reason")) : "");
	json_t *bs = json_object_get(doc, "bench_summary");
	if (bs && json_object_get(bs, "speedup")) {
		out->have_speedup = true;
		out->speedup = json_number_value(json_object_get(bs, "speedup"));
		out->lo = json_number_value(json_object_get(bs, "lo"));
		out->hi = json_number_value(json_object_get(bs, "hi"));
	}
	json_decref(doc);
	free(rel);
	free(key);
	return true;
}

static bool step_summary(struct session *s)
{
	json_t *list = json_array();
	for (size_t i = 0; i < s->res->ncands; i++) {
		const struct try_candidate_result *c = &s->res->cands[i];
		json_t *e = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s?, s:s}", "index", (json_int_t)(i + 1), "name", c->name,
				      "kind", c->kind, "command", c->command, "verdict", try_verdict_name(c->verdict),
				      "factor", c->factor, "reason", c->reason);
		if (c->have_speedup)
			json_object_set_new(e, "speedup", json_pack("{s:f, s:f, s:f}", "estimate", c->speedup, "lo", c->lo,
								    "hi", c->hi));
		json_array_append_new(list, e);
	}
	json_t *doc = json_pack("{s:s, s:s, s:o}", "gpuopt", GPUOPT_VERSION, "baseline", s->c.baseline, "candidates", list);
	return save(s, "verdict.json", doc);
}

struct try_result *try_run(const struct try_settings *set)
{
	struct session s;
	memset(&s, 0, sizeof s);
	s.set = set;
	s.res = xcalloc(1, sizeof *s.res);
	s.res->status = TRY_DONE;
	char *why = NULL;
	struct buf text = {0};
	json_error_t jerr = {0};
	s.data = data_read("try.json", &text, &why) ? json_loadb(text.data, text.len, 0, &jerr) : NULL;
	buf_free(&text);
	struct cand *cands = NULL;
	size_t ncands = 0;
	if (!s.data) {
		fail(&s, TRY_IO_ERROR, "try.json: %s", why ? why : jerr.text);
		goto out;
	}
	runner_install_signals();
	if (!setup_contract(&s))
		goto out;
	write_status(&s, false);
	protect_project(&s);
	make_step_keys(&s);
	if (!step_environment(&s) || !step_scan(&s) || !step_baseline(&s))
		goto out;
	ncands = list_candidates(&s, &cands);
	if (ncands == 0) {
		fail(&s, TRY_BAD_CONTRACT, "nothing to try: no accelerator applies to %s, and no candidate is given "
		     "('candidates' in the contract, or --candidate CMD)", s.script ? s.script : "the baseline");
		goto out;
	}
	s.res->cands = xcalloc(ncands, sizeof *s.res->cands);
	for (size_t i = 0; i < ncands; i++) {
		if (!try_candidate(&s, &cands[i], (int)i + 1, &s.res->cands[s.res->ncands]))
			goto out;
		s.res->ncands++;
	}
	step_summary(&s);
out:
	if (s.status_written)
		write_status(&s, true);
	for (size_t i = 0; i < s.confirmed.len; i++)
		free(s.confirmed.items[i]);
	ptrvec_free(&s.confirmed);
	for (size_t i = 0; i < ncands; i++)
		cand_free(&cands[i]);
	free(cands);
	free(why);
	json_decref(s.data);
	json_decref(s.env);
	json_decref(s.scan);
	json_decref(s.baseline);
	strv_free(s.outputs);
	free(s.out_opts);
	free(s.python);
	free(s.script);
	strv_free(s.script_args);
	results_release(&s.claim);
	if (s.read_only && !readonly_leave())
		say(&s, "the project stays read-only to this process (it cannot leave the private mount "
			"namespace it entered as an unprivileged user)");
	free(s.key);
	free(s.env_key);
	free(s.base_key);
	free(s.scan_key);
	contract_free(&s.c);
	return s.res;
}
