/* report: see report.h. The common part: counting, error lists, and the
 * dispatch to the format. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "paths.h"

static void count_up(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	json_object_set_new(obj, key, json_integer(v ? json_integer_value(v) + 1 : 1));
}

struct report *report_open(FILE *out, const struct kb *kb, const struct report_options *opt)
{
	struct report *r = xcalloc(1, sizeof *r);
	r->out = out;
	r->kb = kb;
	r->opt = *opt;
	r->ops = opt->format == FMT_JSON ? &report_json_ops
	       : opt->format == FMT_SARIF ? &report_sarif_ops : &report_text_ops;
	r->by_target = json_object();
	r->by_category = json_object();
	r->by_severity = json_object();
	r->by_library = json_object();
	r->by_rule = json_object();
	r->ops->begin(r);
	return r;
}

void report_file(struct report *r, const struct scan_file *sf)
{
	if (!sf->ok) {
		report_path_error(r, sf->path, sf->error);
		return;
	}
	r->counts.files_scanned++;
	r->counts.notebooks += sf->notebook;
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		r->counts.findings++;
		r->counts.by_severity[f->rule->severity]++;
		count_up(r->by_target, f->target ? f->target : "none");
		count_up(r->by_category, f->rule->category);
		count_up(r->by_severity, severity_name(f->rule->severity));
		count_up(r->by_library, f->library);
		count_up(r->by_rule, f->rule->id);
	}
	r->ops->file(r, sf);
}

void report_path_error(struct report *r, const char *path, const char *message)
{
	path_error_add(&r->errors, path, message);
	r->counts.files_with_errors++;
}

bool report_close(struct report *r, double seconds, struct scan_counts *counts)
{
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

void json_put_string(FILE *out, const char *s)
{
	/* Runs of plain characters go out in one write: this is the hot loop
	 * of a JSON report with a few hundred thousand findings. */
	putc_unlocked('"', out);
	const unsigned char *p = (const unsigned char *)s, *run = p;
	for (;; p++) {
		unsigned char ch = *p;
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		if (p > run)
			fwrite_unlocked(run, 1, (size_t)(p - run), out);
		run = p + 1;
		if (ch == '\0')
			break;
		switch (ch) {
		case '"': fputs_unlocked("\\\"", out); break;
		case '\\': fputs_unlocked("\\\\", out); break;
		case '\n': fputs_unlocked("\\n", out); break;
		case '\r': fputs_unlocked("\\r", out); break;
		case '\t': fputs_unlocked("\\t", out); break;
		default: fprintf(out, "\\u%04x", ch); break;
		}
	}
	putc_unlocked('"', out);
}
