/* report: see report.h. The common part: counting, error lists, and the
 * dispatch to the format. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

static void tally_up(struct tally *t, const char *key)
{
	for (size_t i = 0; i < t->len; i++)
		if (t->keys[i] == key) {
			t->counts[i]++;
			return;
		}
	for (size_t i = 0; i < t->len; i++)
		if (strcmp(t->keys[i], key) == 0) {
			t->counts[i]++;
			return;
		}
	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->keys = xrealloc(t->keys, t->cap * sizeof *t->keys);
		t->counts = xrealloc(t->counts, t->cap * sizeof *t->counts);
	}
	t->keys[t->len] = key;
	t->counts[t->len++] = 1;
}

/* The tally as a JSON object; frees the tally. */
static json_t *tally_json(struct tally *t)
{
	json_t *o = json_object();
	for (size_t i = 0; i < t->len; i++)
		json_object_set_new(o, t->keys[i], json_integer((json_int_t)t->counts[i]));
	free(t->keys);
	free(t->counts);
	memset(t, 0, sizeof *t);
	return o;
}

static const struct report_format_ops *format_ops(enum report_format f)
{
	return f == FMT_JSON ? &report_json_ops : f == FMT_SARIF ? &report_sarif_ops : &report_text_ops;
}

void report_render(const struct report_options *opt, struct scan_file *sf)
{
	const struct report_format_ops *ops = format_ops(opt->format);
	if (!ops->render || !sf->ok || sf->rendered)
		return;
	ops->render(sf, &sf->out);
	sf->rendered = true;
}

struct report *report_open(FILE *out, const struct kb *kb, const struct report_options *opt)
{
	struct report *r = xcalloc(1, sizeof *r);
	r->out = out;
	r->kb = kb;
	r->opt = *opt;
	r->ops = format_ops(opt->format);
	r->ops->begin(r);
	return r;
}

void report_file(struct report *r, const struct scan_file *sf)
{
	if (!sf->ok) {
		report_path_error(r, sf->path, sf->error);
		return;
	}
	if (sf->language) {
		r->counts.notebooks_skipped++;
		if (r->ops->file)
			r->ops->file(r, sf);
		return;
	}
	r->counts.files_scanned++;
	r->counts.notebooks += sf->notebook;
	r->counts.files_not_fully_analysed += sf->res.syntax_error_line || sf->res.budget_line;
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		r->counts.findings++;
		r->counts.by_severity[f->rule->severity]++;
		tally_up(&r->tallies[0], f->target ? f->target : "none");
		tally_up(&r->tallies[1], f->rule->category);
		tally_up(&r->tallies[2], severity_name(f->rule->severity));
		tally_up(&r->tallies[3], f->library);
		tally_up(&r->tallies[4], f->rule->id);
	}
	if (r->ops->file)
		r->ops->file(r, sf);
	if (!r->ops->render || !sf->res.n)
		return;
	struct buf local = {0};
	const struct buf *b = &sf->out;
	if (!sf->rendered) {
		r->ops->render(sf, &local);
		b = &local;
	}
	/* every finding starts with a comma; the first of the document must not */
	size_t skip = r->nresults == 0 && b->len ? 1 : 0;
	fwrite(b->data + skip, 1, b->len - skip, r->out);
	r->nresults += sf->res.n;
	buf_free(&local);
}

void report_path_error(struct report *r, const char *path, const char *message)
{
	path_error_add(&r->errors, path, message);
	r->counts.files_with_errors++;
}

bool report_close(struct report *r, double seconds, struct scan_counts *counts)
{
	r->by_target = tally_json(&r->tallies[0]);
	r->by_category = tally_json(&r->tallies[1]);
	r->by_severity = tally_json(&r->tallies[2]);
	r->by_library = tally_json(&r->tallies[3]);
	r->by_rule = tally_json(&r->tallies[4]);
	r->ops->end(r, seconds);
	bool ok = fflush(r->out) == 0 && !ferror(r->out);
	*counts = r->counts;
	for (size_t i = 0; i < r->errors.len; i++) {
		struct path_error *e = r->errors.items[i];
		free(e->path);
		free(e->message);
		free(e);
	}
	ptrvec_free(&r->errors);
	for (size_t i = 0; i < r->notices.len; i++)
		free(r->notices.items[i]);
	ptrvec_free(&r->notices);
	json_decref(r->by_target);
	json_decref(r->by_category);
	json_decref(r->by_severity);
	json_decref(r->by_library);
	json_decref(r->by_rule);
	free(r);
	return ok;
}
