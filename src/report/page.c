/* page: see page.h. One walk over the results writes either format: the
 * emitter below turns headings, paragraphs, tables and code into HTML or
 * Markdown, escaping every value; plots are HTML only. */
#include "page.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/shellsplit.h"
#include "core/util.h"
#include "core/version.h"
#include "svg.h"

/* ---- reading ---- */

/* dir/name as a JSON object, or NULL: silently when it is not there, else
 * with "name: why" added to in->damaged. */
static json_t *load_json(struct page_input *in, const char *name, bool *absent)
{
	char *p = xasprintf("%s/%s", in->dir, name);
	bool there = access(p, F_OK) == 0;
	if (absent)
		*absent = !there;
	json_error_t jerr;
	json_t *doc = there ? json_load_file(p, 0, &jerr) : NULL;
	free(p);
	if (!there)
		return NULL;
	char *why = !doc ? xasprintf("%s: %s (line %d)", name, jerr.text, jerr.line)
		  : !json_is_object(doc) ? xasprintf("%s: not a JSON object", name) : NULL;
	if (why) {
		json_decref(doc);
		in->damaged = xrealloc(in->damaged, (in->ndamaged + 1) * sizeof *in->damaged);
		in->damaged[in->ndamaged++] = why;
		return NULL;
	}
	return doc;
}

/* Whether name is among status.json's "confirmed" steps. */
static bool confirmed(json_t *status, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(status, "confirmed"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/* in->unfinished and in->stale from status.json (try writes it when it
 * starts and when it ends); results without one predate it: nothing said. */
static void read_status(struct page_input *in)
{
	json_t *st = load_json(in, "status.json", NULL);
	if (!st)
		return;
	const char *state = json_string_value(json_object_get(st, "state"));
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *ended = json_string_value(json_object_get(st, "ended"));
	const char *started = json_string_value(json_object_get(st, "started"));
	if (state && strcmp(state, "stopped") == 0)
		in->unfinished = xasprintf("the last try stopped%s%s: %s", ended ? " at " : "", ended ? ended : "",
					   msg ? msg : "(no reason recorded)");
	else if (!state || strcmp(state, "finished") != 0)
		in->unfinished = xasprintf("the last try did not end%s%s: it was killed, or is still running",
					   started ? " (started " : "", started ? started : "");
	const struct { const char *name; json_t *doc; } steps[] = {
		{"environment.json", in->environment}, {"scan.json", in->scan},
		{"baseline.json", in->baseline}, {"verdict.json", in->verdict},
	};
	struct ptrvec stale = {0};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		if (steps[i].doc && !confirmed(st, steps[i].name))
			ptrvec_push(&stale, xstrdup(steps[i].name));
	for (size_t i = 0; i < in->ncandidates; i++) {
		char name[48];
		snprintf(name, sizeof name, "candidate-%zu.json", i + 1);
		if (in->candidates[i] && !confirmed(st, name))
			ptrvec_push(&stale, xstrdup(name));
	}
	in->stale = (char **)stale.items;
	in->nstale = stale.len;
	json_decref(st);
}

bool page_read(const char *dir, struct page_input *in, char **why)
{
	memset(in, 0, sizeof *in);
	*why = NULL;
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		*why = xasprintf("cannot read '%s': %s", dir, stat(dir, &st) != 0 ? strerror(errno) : "not a directory");
		return false;
	}
	in->dir = dir;
	in->contract = load_json(in, "contract.json", NULL);
	in->environment = load_json(in, "environment.json", NULL);
	in->scan = load_json(in, "scan.json", NULL);
	in->baseline = load_json(in, "baseline.json", NULL);
	in->verdict = load_json(in, "verdict.json", NULL);
	struct ptrvec c = {0};
	for (int i = 1; i < 10000; i++) {
		char name[32];
		snprintf(name, sizeof name, "candidate-%d.json", i);
		bool absent;
		json_t *doc = load_json(in, name, &absent);
		if (absent)
			break;
		ptrvec_push(&c, doc); /* NULL where damaged */
	}
	in->candidates = (json_t **)c.items;
	in->ncandidates = c.len;
	read_status(in);
	if (!in->contract && !in->baseline && !in->ncandidates && !in->ndamaged) {
		*why = xasprintf("'%s' holds no gpuopt try results (no contract.json, baseline.json or "
				 "candidate-1.json)", dir);
		page_input_free(in);
		return false;
	}
	return true;
}

void page_input_free(struct page_input *in)
{
	json_decref(in->contract);
	json_decref(in->environment);
	json_decref(in->scan);
	json_decref(in->baseline);
	json_decref(in->verdict);
	for (size_t i = 0; i < in->ncandidates; i++)
		json_decref(in->candidates[i]);
	free(in->candidates);
	for (size_t i = 0; i < in->ndamaged; i++)
		free(in->damaged[i]);
	free(in->damaged);
	free(in->unfinished);
	for (size_t i = 0; i < in->nstale; i++)
		free(in->stale[i]);
	free(in->stale);
	memset(in, 0, sizeof *in);
}

/* ---- reading values that may be anything ---- */

static json_t *get(json_t *o, const char *k)
{
	return json_is_object(o) ? json_object_get(o, k) : NULL;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(get(o, k));
}

static double num(json_t *o, const char *k, double dflt)
{
	json_t *v = get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* o[k] as verify writes a measured value: a number, or one of the strings
 * "nan", "inf", "-inf" (JSON has no non-finite numbers), into out[n] as
 * %.3g; "?" when it is absent or anything else. */
static void measured(json_t *o, const char *k, char *out, size_t n)
{
	json_t *v = get(o, k);
	const char *w = json_string_value(v);
	if (json_is_number(v))
		snprintf(out, n, "%.3g", json_number_value(v));
	else if (w && (!strcmp(w, "nan") || !strcmp(w, "inf") || !strcmp(w, "-inf")))
		snprintf(out, n, "%s", w);
	else
		snprintf(out, n, "?");
}

/* ---- the emitter ---- */

struct em {
	enum page_kind kind;
	struct buf b;
	size_t cols;     /* of the open table */
};

/* Text into a Markdown table cell or paragraph: no newlines, no bare pipes. */
static void md_text(struct buf *b, const char *s, bool cell)
{
	for (; s && *s; s++) {
		if (*s == '\n' || *s == '\r')
			buf_putc(b, ' ');
		else if (cell && *s == '|')
			buf_puts(b, "\\|");
		else if (*s == '<')
			buf_puts(b, "&lt;");
		else if ((unsigned char)*s < 0x20 && *s != '\t')
			buf_putc(b, ' ');
		else
			buf_putc(b, *s);
	}
}

static void heading(struct em *e, int level, const char *id, const char *t)
{
	if (e->kind == PAGE_HTML) {
		buf_printf(&e->b, "<h%d id=\"%s\">", level, id);
		html_escape(&e->b, t);
		buf_printf(&e->b, "</h%d>\n", level);
	} else {
		buf_printf(&e->b, "\n%.*s ", level, "######");
		md_text(&e->b, t, false);
		buf_puts(&e->b, "\n\n");
	}
}

static void para(struct em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void para(struct em *e, const char *fmt, ...)
{
	struct buf t = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	if (e->kind == PAGE_HTML) {
		buf_puts(&e->b, "<p>");
		html_escape(&e->b, t.data);
		buf_puts(&e->b, "</p>\n");
	} else {
		md_text(&e->b, t.data, false);
		buf_puts(&e->b, "\n\n");
	}
	buf_free(&t);
}

static void code(struct em *e, const char *t)
{
	if (e->kind == PAGE_HTML) {
		buf_puts(&e->b, "<pre><code>");
		html_escape(&e->b, t);
		buf_puts(&e->b, "</code></pre>\n");
	} else {
		/* a fence longer than any run of backticks inside */
		size_t run = 0, best = 0;
		for (const char *p = t; p && *p; p++) {
			run = *p == '`' ? run + 1 : 0;
			if (run > best)
				best = run;
		}
		size_t n = best >= 3 ? best + 1 : 3;
		for (size_t i = 0; i < n; i++)
			buf_putc(&e->b, '`');
		buf_puts(&e->b, "\n");
		for (const char *p = t; p && *p; p++)
			buf_putc(&e->b, ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') ? ' ' : *p);
		buf_puts(&e->b, "\n");
		for (size_t i = 0; i < n; i++)
			buf_putc(&e->b, '`');
		buf_puts(&e->b, "\n\n");
	}
}

static void table(struct em *e, const char *cls, size_t n, ...)
{
	va_list ap;
	va_start(ap, n);
	e->cols = n;
	if (e->kind == PAGE_HTML) {
		buf_printf(&e->b, "<table class=\"%s\"><thead><tr>", cls);
		for (size_t i = 0; i < n; i++) {
			buf_puts(&e->b, "<th>");
			html_escape(&e->b, va_arg(ap, const char *));
			buf_puts(&e->b, "</th>");
		}
		buf_puts(&e->b, "</tr></thead><tbody>\n");
	} else {
		buf_puts(&e->b, "|");
		for (size_t i = 0; i < n; i++) {
			buf_putc(&e->b, ' ');
			md_text(&e->b, va_arg(ap, const char *), true);
			buf_puts(&e->b, " |");
		}
		buf_puts(&e->b, "\n|");
		for (size_t i = 0; i < n; i++)
			buf_puts(&e->b, " --- |");
		buf_puts(&e->b, "\n");
	}
	va_end(ap);
}

/* A row of e->cols cells; a cell "!keep" is a verdict badge. */
static void row(struct em *e, ...)
{
	va_list ap;
	va_start(ap, e);
	buf_puts(&e->b, e->kind == PAGE_HTML ? "<tr>" : "|");
	for (size_t i = 0; i < e->cols; i++) {
		const char *c = va_arg(ap, const char *);
		if (!c)
			c = "";
		if (e->kind == PAGE_HTML) {
			if (c[0] == '!') {
				/* the class only from the known words: a value from the files
				 * never reaches markup unescaped */
				static const char *const known[] = {"keep", "revise", "reject", "unavailable", "pass",
								    "fail", "error", NULL};
				const char *cls = "";
				for (size_t k = 0; known[k]; k++)
					if (strcmp(c + 1, known[k]) == 0)
						cls = known[k];
				buf_printf(&e->b, "<td><span class=\"badge %s\">", cls);
				html_escape(&e->b, c + 1);
				buf_puts(&e->b, "</span></td>");
			} else {
				buf_puts(&e->b, "<td>");
				html_escape(&e->b, c);
				buf_puts(&e->b, "</td>");
			}
		} else {
			buf_putc(&e->b, ' ');
			if (c[0] == '!') {
				buf_puts(&e->b, "**");
				md_text(&e->b, c + 1, true);
				buf_puts(&e->b, "**");
			} else {
				md_text(&e->b, c, true);
			}
			buf_puts(&e->b, " |");
		}
	}
	buf_puts(&e->b, e->kind == PAGE_HTML ? "</tr>\n" : "\n");
	va_end(ap);
}

static void table_end(struct em *e)
{
	buf_puts(&e->b, e->kind == PAGE_HTML ? "</tbody></table>\n" : "\n");
}

/* ---- sections ---- */

static const char css[] =
	"body{font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;"
	"color:#1c2330;background:#fff;margin:0}"
	"main{max-width:1120px;margin:0 auto;padding:24px 28px 60px}"
	"h1{font-size:1.55em;margin:.2em 0 .1em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #d8dde6;"
	"padding-bottom:.2em}h3{font-size:1.05em;margin-top:1.6em}"
	"p.sub{color:#5a6473;margin-top:0}"
	"table{border-collapse:collapse;margin:.6em 0 1em;font-size:.93em;width:100%}"
	"th,td{border:1px solid #d8dde6;padding:5px 8px;text-align:left;vertical-align:top}"
	"th{background:#f3f5f8;font-weight:600}td{overflow-wrap:anywhere}"
	"pre{background:#f6f8fa;border:1px solid #e1e5ea;padding:8px 10px;overflow-x:auto;font-size:.88em}"
	"code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}"
	".badge{display:inline-block;white-space:nowrap;padding:1px 9px;border-radius:10px;font-weight:700;font-size:.9em;color:#fff}"
	".keep{background:#1a7f37}.revise{background:#b35900}.reject{background:#c62828}"
	".unavailable{background:#6b7280}.pass{background:#1a7f37}.fail{background:#c62828}.error{background:#6b7280}"
	".verdict-box{border:1px solid #d8dde6;border-left:6px solid #1a7f37;padding:10px 14px;margin:12px 0;"
	"background:#fbfcfd}.verdict-box.none{border-left-color:#b35900}"
	"svg.plot{display:block;max-width:100%;height:auto;margin:6px 0 10px}"
	"svg .grid{stroke:#e3e7ed;stroke-width:1}svg .one{stroke:#1c2330;stroke-width:1.2}"
	"svg .tick{font-size:11px;fill:#5a6473}svg .axis{font-size:12px;fill:#5a6473}"
	"svg .label{font-size:12.5px;fill:#1c2330}svg .value{font-size:12px;fill:#1c2330}"
	"svg .dot0{fill:#5470c6;fill-opacity:.6}svg .dot1{fill:#ee8a2f;fill-opacity:.7}"
	"svg .median{stroke:#1c2330;stroke-width:2.2}svg .band{fill:#eef1f5}"
	"svg .ci{stroke-width:3}svg .faster{stroke:#1a7f37;fill:#1a7f37}svg .slower{stroke:#c62828;fill:#c62828}"
	"svg .same{stroke:#b35900;fill:#b35900}"
	".muted{color:#5a6473}footer{margin-top:3em;color:#5a6473;font-size:.85em}";

static const char *verdict_of(json_t *cand)
{
	const char *v = str(get(cand, "verdict"), "verdict");
	return v ? v : "incomplete";
}

static char *speedup_text(json_t *bs)
{
	if (!json_is_number(get(bs, "speedup")))
		return xstrdup("-");
	return xasprintf("%.3gx (%.3g-%.3g)", num(bs, "speedup", NAN), num(bs, "lo", NAN), num(bs, "hi", NAN));
}

static void section_verdict(struct em *e, const struct page_input *in)
{
	heading(e, 2, "verdict", "Verdict");
	const char *best = NULL;
	double best_speed = 0;
	for (size_t i = 0; i < in->ncandidates; i++) {
		json_t *c = in->candidates[i];
		double sp = num(get(c, "bench_summary"), "speedup", 0);
		if (strcmp(verdict_of(c), "keep") == 0 && sp > best_speed) {
			best_speed = sp;
			best = str(c, "name");
		}
	}
	if (e->kind == PAGE_HTML)
		buf_printf(&e->b, "<div class=\"verdict-box%s\">", best ? "" : " none");
	if (best)
		para(e, "Keep %s: it computes the same outputs as the baseline and is %.3gx as fast.", best, best_speed);
	else if (in->ncandidates)
		para(e, "No candidate is kept: each verdict below names what limits it.");
	else if (in->ndamaged)
		para(e, "No candidate could be read (see the damaged results above).");
	else
		para(e, "No candidate was tried.");
	if (e->kind == PAGE_HTML)
		buf_puts(&e->b, "</div>\n");
	if (!in->verdict)
		para(e, "These results are incomplete: gpuopt try did not finish (run it again to resume).");
	table(e, "verdicts", 5, "Candidate", "Verdict", "Limiting factor", "Speedup (95% CI)", "Why");
	for (size_t i = 0; i < in->ncandidates; i++) {
		json_t *c = in->candidates[i], *v = get(c, "verdict");
		char *badge = xasprintf("!%s", verdict_of(c));
		char *sp = speedup_text(get(c, "bench_summary"));
		row(e, str(c, "name"), badge, str(v, "factor"), sp, str(v, "reason"));
		free(badge);
		free(sp);
	}
	table_end(e);
	if (e->kind == PAGE_HTML) {
		struct forest_row *rows = xcalloc(in->ncandidates + 1, sizeof *rows);
		size_t n = 0;
		for (size_t i = 0; i < in->ncandidates; i++) {
			json_t *bs = get(in->candidates[i], "bench_summary");
			if (!json_is_number(get(bs, "speedup")))
				continue;
			rows[n++] = (struct forest_row){str(in->candidates[i], "name"), num(bs, "speedup", NAN),
							num(bs, "lo", NAN), num(bs, "hi", NAN)};
		}
		double eff = num(get(in->contract, "contract"), "min_effect", 5) / 100;
		svg_forest(&e->b, rows, n, eff > 0 ? eff : 0.05);
		free(rows);
	}
}

/* Says where a run's output in logs/ was cut (try's log_limit): its start
 * and end are kept, the middle dropped. */
static void log_cut(struct em *e, const char *who, json_t *run)
{
	static const char *const streams[2] = {"stdout", "stderr"};
	for (int i = 0; i < 2; i++) {
		char key[32];
		snprintf(key, sizeof key, "%s_dropped", streams[i]);
		json_t *d = get(run, key);
		if (!json_is_integer(d))
			continue;
		para(e, "%s wrote more to %s than the results keep: %s holds its first and last %g MB, and says "
		     "where %lld bytes between them were dropped (log_limit in the contract, or --log-limit).",
		     who, streams[i], str(run, streams[i]) ? str(run, streams[i]) : "its log",
		     num(run, "log_limit_bytes", 0) / 2e6, (long long)json_integer_value(d));
	}
}

static void section_contract(struct em *e, const struct page_input *in)
{
	json_t *c = get(in->contract, "contract");
	heading(e, 2, "contract", "The contract");
	if (!c) {
		para(e, "contract.json is missing.");
		return;
	}
	const char *file = str(c, "file");
	para(e, "%s%s; runs took place in private copies of %s.", file ? "Read from " : "Given on the command line",
	     file ? file : "", str(c, "dir") ? str(c, "dir") : "the project directory");
	table(e, "kv", 2, "Key", "Value");
	row(e, "baseline", str(c, "baseline"));
	json_t *outs = get(c, "outputs");
	size_t i;
	json_t *o;
	struct buf ob = {0};
	json_array_foreach(outs, i, o) {
		buf_printf(&ob, "%s%s", i ? "; " : "", str(o, "path") ? str(o, "path") : "?");
		if (json_is_number(get(o, "rtol")))
			buf_printf(&ob, " rtol %g", num(o, "rtol", 0));
		if (json_is_number(get(o, "atol")))
			buf_printf(&ob, " atol %g", num(o, "atol", 0));
		if (json_is_integer(get(o, "ulp")))
			buf_printf(&ob, " ulp %lld", (long long)json_integer_value(get(o, "ulp")));
	}
	const char *declared = ob.len ? ob.data : "every file the baseline created (none declared)";
	if (!ob.len && json_is_array(get(in->baseline, "outputs"))) {
		buf_puts(&ob, "none declared; compared: ");
		json_array_foreach(get(in->baseline, "outputs"), i, o)
			buf_printf(&ob, "%s%s", i ? ", " : "", json_string_value(o) ? json_string_value(o) : "?");
		declared = ob.data;
	}
	row(e, "outputs", declared);
	json_t *cands = get(c, "candidates");
	struct buf cb = {0};
	json_array_foreach(cands, i, o)
		buf_printf(&cb, "%s%s: %s", i ? "; " : "", str(o, "name") ? str(o, "name") : "?",
			   str(o, "command") ? str(o, "command") : "?");
	row(e, "candidates", cb.len ? cb.data : "none");
	json_t *acc = get(c, "accelerators");
	char *accs = json_is_string(acc) ? xstrdup(json_string_value(acc)) : json_dumps(acc, JSON_COMPACT | JSON_ENCODE_ANY);
	row(e, "accelerators", accs ? accs : "");
	free(accs);
	row(e, "python", str(c, "python"));
	char lim[256];
	snprintf(lim, sizeof lim, "warm-up %g, at least %g runs and %g s, at most %g runs (0: no limit) and %g s; "
		 "min effect %g%%, precision %g%%, timeout %g s (0: none), seed %g",
		 num(c, "warmup", 0), num(c, "min_runs", 0), num(c, "min_time", 0), num(c, "max_runs", 0),
		 num(c, "max_time", 0), num(c, "min_effect", 0), num(c, "precision", 0), num(c, "timeout", 0),
		 num(c, "seed", 0));
	row(e, "measuring", lim);
	row(e, "metric", str(c, "metric") ? str(c, "metric") : "wall");
	if (json_is_number(get(c, "log_limit"))) {
		char logs[128];
		snprintf(logs, sizeof logs, "at most %g MB of each run's stdout and of its stderr in logs/ (its start "
			 "and end)", num(c, "log_limit", 0));
		row(e, "logs", logs);
	}
	table_end(e);
	log_cut(e, "The baseline", get(in->baseline, "run"));
	buf_free(&ob);
	buf_free(&cb);
}

static void section_environment(struct em *e, const struct page_input *in)
{
	heading(e, 2, "environment", "The environment");
	json_t *env = in->environment;
	if (!env) {
		para(e, "environment.json is missing.");
		return;
	}
	json_t *h = get(env, "host"), *py = get(env, "python"), *g = get(env, "gpu");
	table(e, "kv", 2, "What", "Recorded");
	char t[512];
	snprintf(t, sizeof t, "%s, %g logical CPUs, %.1f GB memory", str(h, "cpu_model") ? str(h, "cpu_model") : "?",
		 num(h, "logical_cpus", 0), num(h, "memory_total_bytes", 0) / 1e9);
	row(e, "host", t);
	snprintf(t, sizeof t, "%s, %s", str(h, "os") ? str(h, "os") : "?", str(h, "kernel") ? str(h, "kernel") : "?");
	row(e, "system", t);
	snprintf(t, sizeof t, "%s (%s)", str(py, "version") ? str(py, "version") : "not found",
		 str(py, "executable") ? str(py, "executable") : str(py, "interpreter") ? str(py, "interpreter") : "?");
	row(e, "Python", t);
	struct buf pk = {0};
	const char *k;
	json_t *v;
	json_object_foreach(get(py, "packages"), k, v)
		if (json_is_string(v))
			buf_printf(&pk, "%s%s %s", pk.len ? ", " : "", k, json_string_value(v));
	row(e, "packages", pk.len ? pk.data : "none of those recorded");
	buf_free(&pk);
	if (json_is_true(get(g, "found"))) {
		size_t i;
		json_t *d;
		json_array_foreach(get(g, "devices"), i, d) {
			snprintf(t, sizeof t, "%s, %.1f GiB, compute capability %s; driver %s, CUDA %s",
				 str(d, "name") ? str(d, "name") : "?", num(d, "memory_total_bytes", 0) / 1073741824.0,
				 str(d, "compute_capability") ? str(d, "compute_capability") : "?",
				 str(g, "driver_version") ? str(g, "driver_version") : "?",
				 str(g, "cuda_driver_version") ? str(g, "cuda_driver_version") : "?");
			row(e, "GPU", t);
		}
	} else {
		snprintf(t, sizeof t, "%s%s%s", str(g, "status") ? str(g, "status") : "no NVIDIA GPU",
			 str(g, "reason") ? ": " : "", str(g, "reason") ? str(g, "reason") : "");
		row(e, "GPU", t);
	}
	table_end(e);
}

/* The measured wall times of command index ci in a bench JSON. Owned. */
static double *walls(json_t *bench, size_t ci, size_t *n, double *median, const char **name)
{
	json_t *cmd = json_array_get(get(json_array_get(get(bench, "groups"), 0), "commands"), ci);
	json_t *runs = get(cmd, "runs");
	*n = 0;
	*name = str(cmd, "name");
	*median = num(get(get(cmd, "stats"), "wall_s"), "median", NAN);
	double *x = xcalloc(json_array_size(runs) + 1, sizeof *x);
	size_t i;
	json_t *r;
	json_array_foreach(runs, i, r)
		if (!json_is_true(get(r, "warmup")) && json_is_number(get(r, "wall_s")))
			x[(*n)++] = num(r, "wall_s", NAN);
	return x;
}

static void candidate_bench(struct em *e, json_t *c)
{
	json_t *bench = get(c, "bench"), *bs = get(c, "bench_summary");
	if (!bench && !bs)
		return;
	heading(e, 4, "bench", "Benchmark");
	if (str(bs, "error")) {
		para(e, "The benchmark stopped: %s.", str(bs, "error"));
		return;
	}
	json_t *g = json_array_get(get(bench, "groups"), 0);
	para(e, "Baseline and candidate interleaved in a shuffled order every round; %g rounds over %.1f s, "
	     "stopped by %s. Speedup = baseline median / candidate median, %s, with a 95%% bootstrap interval.",
	     num(g, "rounds", 0), num(g, "elapsed_s", 0), str(g, "stop_reason") ? str(g, "stop_reason") : "?",
	     str(bs, "verdict") ? str(bs, "verdict") : "?");
	if (e->kind == PAGE_HTML) {
		struct strip_row rows[2];
		double *x[2];
		for (size_t k = 0; k < 2; k++) {
			x[k] = walls(bench, k, &rows[k].n, &rows[k].median, &rows[k].label);
			rows[k].x = x[k];
			if (!rows[k].label)
				rows[k].label = k ? "candidate" : "baseline";
		}
		svg_strip(&e->b, rows, 2);
		free(x[0]);
		free(x[1]);
	}
	table(e, "stats", 7, "Command", "Median", "Mean", "SD", "Min", "Max", "Runs");
	size_t i;
	json_t *cmd;
	json_array_foreach(get(g, "commands"), i, cmd) {
		json_t *w = get(get(cmd, "stats"), "wall_s");
		char m[5][32], runs[32];
		format_seconds(m[0], 32, num(w, "median", NAN));
		format_seconds(m[1], 32, num(w, "mean", NAN));
		format_seconds(m[2], 32, num(w, "sd", NAN));
		format_seconds(m[3], 32, num(w, "min", NAN));
		format_seconds(m[4], 32, num(w, "max", NAN));
		snprintf(runs, sizeof runs, "%g", num(w, "n", 0));
		row(e, str(cmd, "name"), m[0], m[1], m[2], m[3], m[4], runs);
	}
	table_end(e);
	json_array_foreach(get(g, "commands"), i, cmd) {
		size_t j;
		json_t *wn;
		json_array_foreach(get(cmd, "warnings"), j, wn)
			if (json_is_string(wn))
				para(e, "Warning (%s): %s", str(cmd, "name") ? str(cmd, "name") : "?", json_string_value(wn));
	}
	size_t j;
	json_t *wn;
	json_array_foreach(get(g, "warnings"), j, wn)
		if (json_is_string(wn))
			para(e, "Warning: %s", json_string_value(wn));
}

static void candidate_verify(struct em *e, json_t *c)
{
	json_t *ver = get(c, "verify");
	if (!json_is_array(ver))
		return;
	heading(e, 4, "verify", "Verification against the baseline's outputs");
	table(e, "verify", 6, "Output", "Result", "Compared", "Differ", "Largest abs / rel error", "Test");
	size_t i;
	json_t *o;
	json_array_foreach(ver, i, o) {
		char *badge = xasprintf("!%s", str(o, "result") ? str(o, "result") : "?");
		json_t *items = get(get(o, "report"), "items");
		if (!json_array_size(items)) {
			row(e, str(o, "output"), badge, "", "", str(o, "error"), "");
		}
		size_t j;
		json_t *it;
		json_array_foreach(items, j, it) {
			char cmp[96] = "", differ[96] = "", err[128] = "", test[160] = "";
			if (json_is_integer(get(it, "elements"))) {
				snprintf(cmp, sizeof cmp, "%lld elements, %s", (long long)json_integer_value(get(it, "elements")),
					 str(it, "compared_as") ? str(it, "compared_as") : "?");
				snprintf(differ, sizeof differ, "%lld (%.3g%%)", (long long)json_integer_value(get(it, "mismatches")),
					 100 * num(it, "mismatch_share", 0));
				char abs_s[32], rel_s[32];
				measured(get(it, "max_abs_error"), "value", abs_s, sizeof abs_s);
				measured(get(it, "max_rel_error"), "value", rel_s, sizeof rel_s);
				snprintf(err, sizeof err, "%s / %s", abs_s, rel_s);
				json_t *t = get(it, "test");
				if (json_is_number(get(t, "ulp")))
					snprintf(test, sizeof test, "within %g ulp", num(t, "ulp", 0));
				else
					snprintf(test, sizeof test, "|cand - ref| <= %g + %g |ref| (%s)", num(t, "atol", 0),
						 num(t, "rtol", 0), str(t, "source") ? str(t, "source") : "given");
			} else if (str(it, "error")) {
				snprintf(err, sizeof err, "%s", str(it, "error"));
			} else if (str(it, "note")) {
				snprintf(err, sizeof err, "%s", str(it, "note"));
			}
			char *ib = xasprintf("!%s", str(it, "result") ? str(it, "result") : "?");
			/* a file output is named by its path in the contract; a directory's by what is inside */
			const char *nm = json_array_size(items) == 1 || !str(it, "name") ? str(o, "output") : str(it, "name");
			row(e, nm, ib, cmp, differ, err, test);
			free(ib);
		}
		free(badge);
	}
	table_end(e);
}

static void candidate_fallbacks(struct em *e, json_t *c)
{
	json_t *fb = get(c, "fallbacks");
	if (!fb)
		return;
	heading(e, 4, "fallbacks", "CPU fallbacks it reported");
	double n = num(fb, "count", 0), gpu = num(fb, "gpu_calls", 0);
	if (n == 0) {
		para(e, "None reported%s.", gpu > 0 ? "" : " (and no call was reported as running on the GPU either)");
		if (gpu > 0)
			para(e, "%g calls reported as running on the GPU.", gpu);
		return;
	}
	para(e, "%g call%s fell back to the CPU; %g reported running on the GPU.", n, n == 1 ? "" : "s", gpu);
	table(e, "fallbacks", 2, "Call and reason", "Times");
	size_t i;
	json_t *it;
	json_array_foreach(get(fb, "items"), i, it) {
		char cnt[32];
		snprintf(cnt, sizeof cnt, "%g", num(it, "count", 0));
		row(e, str(it, "what"), cnt);
	}
	table_end(e);
}

static void candidate_trace(struct em *e, json_t *c)
{
	json_t *tr = get(c, "trace");
	if (!tr)
		return;
	heading(e, 4, "trace", "Trace of one separate run (gpuopt trace)");
	log_cut(e, "The traced run", tr);
	if (str(tr, "error")) {
		para(e, "Not traced: %s.", str(tr, "error"));
		return;
	}
	json_t *b = get(tr, "budget");
	char wall[32], busy[32], kern[32], sync[32];
	format_seconds(wall, sizeof wall, num(b, "wall_s", NAN));
	format_seconds(busy, sizeof busy, num(b, "gpu_busy_ns", NAN) / 1e9);
	format_seconds(kern, sizeof kern, num(b, "kernel_ns", NAN) / 1e9);
	format_seconds(sync, sizeof sync, num(b, "sync_ns", NAN) / 1e9);
	para(e, "Wall %s; GPU busy %s, of it kernels %s (%g kernels); %g synchronizes taking %s.", wall, busy, kern,
	     num(b, "kernels", 0), num(b, "syncs", 0), sync);
	json_t *findings = get(tr, "findings");
	double wall_s = num(b, "wall_s", NAN);
	if (json_array_size(findings)) {
		table(e, "trace", 6, "Rule", "Line", "Cost", "Of the wall time", "Evidence", "What to change");
		size_t i;
		json_t *f;
		json_array_foreach(findings, i, f) {
			char cost[32], share[32];
			format_seconds(cost, sizeof cost, num(f, "cost_s", NAN));
			double sh = wall_s > 0 ? num(f, "cost_s", 0) / wall_s : NAN;
			if (isfinite(sh))
				snprintf(share, sizeof share, "%.0f%%", 100 * sh);
			else
				snprintf(share, sizeof share, "-");
			row(e, str(f, "rule"), str(f, "line"), cost, share, str(f, "evidence"), str(f, "fix"));
		}
		table_end(e);
	} else {
		para(e, "The trace names no waste.");
	}
	/* the costliest Python lines */
	json_t *lines = get(tr, "lines");
	if (json_array_size(lines)) {
		table(e, "lines", 5, "Python line", "Calls", "Host time in them", "GPU time they caused", "Copies");
		size_t i;
		json_t *l;
		json_array_foreach(lines, i, l) {
			if (i >= 10)
				break;
			struct buf calls = {0}, copies = {0};
			double host_ns = 0, bytes = 0, ncopies = 0;
			const char *op;
			json_t *cj;
			json_object_foreach(get(l, "calls"), op, cj) {
				buf_printf(&calls, "%s%s %g", calls.len ? ", " : "", op, num(cj, "count", 0));
				host_ns += num(cj, "host_ns", 0);
			}
			size_t k;
			json_t *cp;
			json_array_foreach(get(l, "copies"), k, cp) {
				bytes += num(cp, "bytes", 0);
				ncopies += num(cp, "count", 0);
				buf_printf(&copies, "%s%g %s %s", copies.len ? "; " : "", num(cp, "count", 0),
					   str(cp, "direction") ? str(cp, "direction") : "?",
					   str(cp, "host_memory") ? str(cp, "host_memory") : "");
			}
			if (ncopies)
				buf_printf(&copies, " (%.3g MB)", bytes / 1e6);
			char host[32], gpu[32];
			format_seconds(host, sizeof host, host_ns / 1e9);
			format_seconds(gpu, sizeof gpu, num(l, "gpu_ns", NAN) / 1e9);
			row(e, str(l, "label"), calls.data, host, gpu, copies.data);
			buf_free(&calls);
			buf_free(&copies);
		}
		table_end(e);
		if (json_array_size(lines) > 10)
			para(e, "(%zu more lines in the trace.)", json_array_size(lines) - 10);
	}
	if (str(tr, "chrome_trace"))
		para(e, "The timeline, for Perfetto or Holistic Trace Analysis: %s.", str(tr, "chrome_trace"));
}

static void section_candidates(struct em *e, const struct page_input *in)
{
	heading(e, 2, "candidates", "The candidates");
	for (size_t i = 0; i < in->ncandidates; i++) {
		json_t *c = in->candidates[i], *v = get(c, "verdict");
		char h[256];
		snprintf(h, sizeof h, "%zu. %s (%s): %s", i + 1, str(c, "name") ? str(c, "name") : "?",
			 str(c, "kind") ? str(c, "kind") : "?", verdict_of(c));
		char id[32];
		snprintf(id, sizeof id, "candidate-%zu", i + 1);
		heading(e, 3, id, h);
		if (str(v, "reason")) {
			const char *r = str(v, "reason");
			char first = *r >= 'a' && *r <= 'z' ? (char)(*r - 'a' + 'A') : *r;
			if (str(v, "factor"))
				para(e, "Limiting factor: %s. %c%s.", str(v, "factor"), first, *r ? r + 1 : "");
			else
				para(e, "%c%s.", first, *r ? r + 1 : "");
		}
		if (str(c, "gpu_why"))
			para(e, "%s code: %s.", json_is_true(get(c, "gpu")) ? "GPU" : "CPU", str(c, "gpu_why"));
		if (str(c, "install")) {
			para(e, "Install it with:");
			code(e, str(c, "install"));
		}
		if (str(c, "command")) {
			para(e, "Benchmarked as:");
			code(e, str(c, "command"));
		}
		json_t *run = get(c, "run");
		if (run) {
			char w[32];
			format_seconds(w, sizeof w, num(run, "wall_s", NAN));
			para(e, "Observed run%s%s: %s, %s, in %s.", str(c, "observe_command") && str(c, "command") &&
			     strcmp(str(c, "observe_command"), str(c, "command")) ? " as " : "",
			     str(c, "observe_command") && str(c, "command") && strcmp(str(c, "observe_command"), str(c, "command"))
				     ? str(c, "observe_command") : "",
			     str(run, "how") ? str(run, "how") : str(run, "error") ? str(run, "error") : "?", w,
			     str(run, "dir") ? str(run, "dir") : "?");
			if (str(run, "stderr_tail") && *str(run, "stderr_tail"))
				code(e, str(run, "stderr_tail"));
			log_cut(e, "The observed run", run);
		}
		candidate_fallbacks(e, c);
		candidate_verify(e, c);
		candidate_bench(e, c);
		candidate_trace(e, c);
	}
}

static void section_scan(struct em *e, const struct page_input *in)
{
	heading(e, 2, "scan", "What the scan found");
	json_t *files = get(in->scan, "files");
	size_t total = 0, i;
	json_t *f;
	json_array_foreach(files, i, f)
		total += json_array_size(get(f, "findings"));
	if (!total) {
		para(e, in->scan ? "No findings." : "scan.json is missing.");
		return;
	}
	para(e, "%zu finding%s in %zu file%s (gpuopt scan; `gpuopt explain RULE` says what a rule means).", total,
	     total == 1 ? "" : "s", json_array_size(files), json_array_size(files) == 1 ? "" : "s");
	table(e, "scan", 5, "Where", "Rule", "Severity", "GPU path", "Finding");
	size_t shown = 0;
	json_array_foreach(files, i, f) {
		size_t j;
		json_t *x;
		json_array_foreach(get(f, "findings"), j, x) {
			if (shown++ >= 300)
				break;
			char where[320];
			snprintf(where, sizeof where, "%s:%g", str(f, "path") ? str(f, "path") : "?", num(x, "line", 0));
			row(e, where, str(x, "rule"), str(x, "severity"), str(x, "target"), str(x, "message"));
		}
	}
	table_end(e);
	if (total > 300)
		para(e, "(%zu more: see scan.json)", total - 300);
}

static void section_reproduce(struct em *e, const struct page_input *in)
{
	heading(e, 2, "reproduce", "To reproduce");
	json_t *c = get(in->contract, "contract");
	struct buf b = {0};
	const char *dir = str(c, "dir");
	if (dir) {
		buf_puts(&b, "cd ");
		shell_quote(&b, dir, 0);
		buf_puts(&b, "\n");
	}
	buf_puts(&b, "gpuopt try");
	if (str(c, "file")) {
		buf_puts(&b, " --contract ");
		shell_quote(&b, str(c, "file"), 0);
	}
	buf_puts(&b, " --fresh     # the whole method again\ngpuopt report ");
	shell_quote(&b, in->dir, 0);
	buf_puts(&b, " -o report.html\n");
	for (size_t i = 0; i < in->ncandidates; i++) {
		json_t *cand = in->candidates[i];
		if (!get(cand, "bench") || !str(c, "baseline") || !str(cand, "command"))
			continue;
		buf_puts(&b, "gpuopt bench ");
		shell_quote(&b, str(c, "baseline"), 0);
		buf_putc(&b, ' ');
		shell_quote(&b, str(cand, "command"), 0);
		buf_putc(&b, '\n');
	}
	code(e, b.data);
	buf_free(&b);
}

char *page_render(const struct page_input *in, enum page_kind kind)
{
	struct em e = {.kind = kind};
	json_t *c = get(in->contract, "contract");
	const char *base = str(c, "baseline") ? str(c, "baseline") : "?";
	if (kind == PAGE_HTML) {
		buf_puts(&e.b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
			       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			       "style-src 'unsafe-inline'; img-src data:\"><title>gpuopt try: ");
		html_escape(&e.b, base);
		buf_printf(&e.b, "</title><style>%s</style></head><body><main>\n", css);
		buf_puts(&e.b, "<h1>gpuopt try: ");
		html_escape(&e.b, base);
		buf_puts(&e.b, "</h1>\n<p class=\"sub\">");
		html_escape(&e.b, in->dir);
		buf_puts(&e.b, "</p>\n");
	} else {
		buf_puts(&e.b, "## gpuopt try: `");
		md_text(&e.b, base, false);
		buf_puts(&e.b, "`\n");
	}
	if (in->ndamaged) {
		heading(&e, 2, "damaged", "Damaged results");
		para(&e, "%zu file%s of the results could not be read and %s left out of this page:", in->ndamaged,
		     in->ndamaged == 1 ? "" : "s", in->ndamaged == 1 ? "is" : "are");
		for (size_t i = 0; i < in->ndamaged; i++)
			para(&e, "%s", in->damaged[i]);
	}
	if (in->unfinished || in->nstale) {
		heading(&e, 2, "stale", "The last try");
		if (in->unfinished)
			para(&e, "%c%s.", toupper((unsigned char)in->unfinished[0]), in->unfinished + 1);
		if (in->nstale) {
			struct buf names = {0};
			for (size_t i = 0; i < in->nstale; i++)
				buf_printf(&names, "%s%s", i ? ", " : "", in->stale[i]);
			para(&e, "Shown below as they were, from an earlier try that the last one did not confirm "
				 "(what they ran may have changed since: the project's code, the interpreter or its "
				 "packages): %s. Run gpuopt try again to measure them anew.", names.data);
			buf_free(&names);
		}
	}
	section_verdict(&e, in);
	section_candidates(&e, in);
	section_contract(&e, in);
	section_environment(&e, in);
	section_scan(&e, in);
	section_reproduce(&e, in);
	if (kind == PAGE_HTML) {
		buf_printf(&e.b, "<footer>Made by gpuopt %s from the results in ", GPUOPT_VERSION);
		html_escape(&e.b, in->dir);
		buf_puts(&e.b, ".</footer>\n</main></body></html>\n");
	} else {
		buf_printf(&e.b, "\n---\nMade by gpuopt %s.\n", GPUOPT_VERSION);
	}
	return buf_steal(&e.b);
}
