/* report_json: the machine-readable renderings of a scan: gpuopt's own JSON
 * object and SARIF 2.1.0 (as GitHub code scanning reads it). */
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "report.h"
#include "version.h"

void scan_count(const struct scan_report *r, struct scan_counts *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct scan_file *f = &r->files[i];
		if (!f->ok) {
			out->files_with_errors++;
			continue;
		}
		out->files_scanned++;
		out->notebooks += f->notebook;
		for (size_t k = 0; k < f->res.n; k++) {
			out->findings++;
			out->by_severity[f->res.items[k].rule->severity]++;
		}
	}
	out->files_with_errors += r->walk_errors ? r->walk_errors->len : 0;
}

static void count_up(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	json_object_set_new(obj, key, json_integer(v ? json_integer_value(v) + 1 : 1));
}

static char *dump(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	char *out = xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}

static json_t *errors_json(const struct scan_report *r)
{
	json_t *errors = json_array();
	for (size_t i = 0; r->walk_errors && i < r->walk_errors->len; i++) {
		const struct path_error *e = r->walk_errors->items[i];
		json_array_append_new(errors, json_pack("{s:s, s:s}", "path", e->path, "message", e->message));
	}
	for (size_t i = 0; i < r->nfiles; i++)
		if (!r->files[i].ok)
			json_array_append_new(errors, json_pack("{s:s, s:s}", "path", r->files[i].path,
								"message", r->files[i].error));
	return errors;
}

char *report_json(const struct scan_report *r)
{
	json_t *findings = json_array(), *notices = json_array();
	json_t *by_target = json_object(), *by_category = json_object(), *by_severity = json_object(),
	       *by_library = json_object(), *by_rule = json_object();
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct scan_file *sf = &r->files[i];
		if (!sf->ok)
			continue;
		if (sf->res.syntax_error_line) {
			json_t *n = json_pack("{s:s, s:i, s:s}", "path", sf->path, "line",
					      (json_int_t)sf->res.syntax_error_line, "message",
					      "syntax error: scanned as far as the parser recovered");
			if (sf->notebook)
				json_object_set_new(n, "cell", json_integer(sf->res.syntax_error_cell));
			json_array_append_new(notices, n);
		}
		for (size_t k = 0; k < sf->res.n; k++) {
			const struct finding *f = &sf->res.items[k];
			json_t *o = json_object();
			json_object_set_new(o, "path", json_string(sf->path));
			json_object_set_new(o, "line", json_integer(f->line));
			json_object_set_new(o, "column", json_integer(f->col));
			json_object_set_new(o, "end_line", json_integer(f->end_line));
			json_object_set_new(o, "end_column", json_integer(f->end_col));
			json_object_set_new(o, "cell", sf->notebook ? json_integer(f->cell) : json_null());
			json_object_set_new(o, "rule", json_string(f->rule->id));
			json_object_set_new(o, "rule_name", json_string(f->rule->name));
			json_object_set_new(o, "category", json_string(f->rule->category));
			json_object_set_new(o, "library", json_string(f->library));
			json_object_set_new(o, "symbol", json_string(f->symbol));
			json_object_set_new(o, "target", f->target ? json_string(f->target) : json_null());
			json_object_set_new(o, "severity", json_string(severity_name(f->rule->severity)));
			json_object_set_new(o, "message", json_string(f->message));
			json_object_set_new(o, "fix", f->fix ? json_string(f->fix) : json_null());
			json_object_set_new(o, "rank", json_integer(f->rank));
			json_object_set_new(o, "loop_line", f->loop_line ? json_integer(f->loop_line) : json_null());
			json_object_set_new(o, "rank_reason", f->rank_reason ? json_string(f->rank_reason) : json_null());
			json_array_append_new(findings, o);
			count_up(by_target, f->target ? f->target : "none");
			count_up(by_category, f->rule->category);
			count_up(by_severity, severity_name(f->rule->severity));
			count_up(by_library, f->library);
			count_up(by_rule, f->rule->id);
		}
	}
	struct scan_counts n;
	scan_count(r, &n);
	json_t *summary = json_object();
	json_object_set_new(summary, "files_scanned", json_integer((json_int_t)n.files_scanned));
	json_object_set_new(summary, "notebooks", json_integer((json_int_t)n.notebooks));
	json_object_set_new(summary, "files_with_errors", json_integer((json_int_t)n.files_with_errors));
	json_object_set_new(summary, "findings", json_integer((json_int_t)n.findings));
	json_object_set_new(summary, "by_target", by_target);
	json_object_set_new(summary, "by_category", by_category);
	json_object_set_new(summary, "by_severity", by_severity);
	json_object_set_new(summary, "by_library", by_library);
	json_object_set_new(summary, "by_rule", by_rule);
	json_object_set_new(summary, "seconds", json_real(r->seconds));
	json_t *doc = json_object();
	json_object_set_new(doc, "tool", json_string("gpuopt"));
	json_object_set_new(doc, "version", json_string(GPUOPT_VERSION));
	json_object_set_new(doc, "findings", findings);
	json_object_set_new(doc, "summary", summary);
	json_object_set_new(doc, "errors", errors_json(r));
	json_object_set_new(doc, "notices", notices);
	return dump(doc);
}

static const char *sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

/* A relative path as a URI reference: unreserved characters and '/' kept,
 * everything else percent-encoded. */
static char *path_uri(const char *path)
{
	struct buf b = {0};
	if (str_starts_with(path, "./"))
		path += 2;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p))
			buf_putc(&b, (char)*p);
		else
			buf_printf(&b, "%%%02X", *p);
	}
	return buf_steal(&b);
}

static json_t *sarif_location(const char *path, uint32_t line, uint32_t col, uint32_t end_line,
			      uint32_t end_col)
{
	char *uri = path_uri(path);
	json_t *region = json_pack("{s:i, s:i}", "startLine", (json_int_t)line, "startColumn", (json_int_t)col);
	if (end_line) {
		json_object_set_new(region, "endLine", json_integer(end_line));
		json_object_set_new(region, "endColumn", json_integer(end_col));
	}
	json_t *loc = json_pack("{s:{s:{s:s, s:s}, s:o}}", "physicalLocation", "artifactLocation",
				"uri", uri, "uriBaseId", "%SRCROOT%", "region", region);
	free(uri);
	return loc;
}

char *report_sarif(const struct scan_report *r)
{
	json_t *rules = json_array();
	for (size_t i = 0; i < r->kb->nrules; i++) {
		const struct rule *ru = &r->kb->rules[i];
		struct buf help = {0};
		buf_printf(&help, "%s", ru->why ? ru->why : ru->summary);
		if (ru->before && ru->after)
			buf_printf(&help, "\n\nBefore:\n%s\n\nAfter:\n%s", ru->before, ru->after);
		json_t *rj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}",
				       "id", ru->id, "name", ru->name,
				       "shortDescription", "text", ru->summary,
				       "fullDescription", "text", ru->why ? ru->why : ru->summary,
				       "help", "text", help.data,
				       "defaultConfiguration", "level", sarif_level(ru->severity),
				       "properties", "category", ru->category);
		buf_free(&help);
		json_array_append_new(rules, rj);
	}
	json_t *results = json_array();
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct scan_file *sf = &r->files[i];
		for (size_t k = 0; sf->ok && k < sf->res.n; k++) {
			const struct finding *f = &sf->res.items[k];
			char *text = f->fix ? xasprintf("%s. Fix: %s", f->message, f->fix) : xstrdup(f->message);
			json_t *props = json_pack("{s:s, s:s, s:s, s:o}", "category", f->rule->category,
						  "library", f->library, "symbol", f->symbol, "target",
						  f->target ? json_string(f->target) : json_null());
			if (sf->notebook)
				json_object_set_new(props, "cell", json_integer(f->cell));
			json_object_set_new(props, "rank", json_integer(f->rank));
			if (f->rank_reason)
				json_object_set_new(props, "rankReason", json_string(f->rank_reason));
			json_t *res = json_pack("{s:s, s:i, s:s, s:{s:s}, s:[o], s:o}",
						"ruleId", f->rule->id, "ruleIndex", (json_int_t)f->rule->index,
						"level", sarif_level(f->rule->severity),
						"message", "text", text,
						"locations", sarif_location(sf->path, f->line, f->col, f->end_line, f->end_col),
						"properties", props);
			free(text);
			json_array_append_new(results, res);
		}
	}
	json_t *notes = json_array();
	json_t *errs = errors_json(r);
	size_t i;
	json_t *e;
	json_array_foreach(errs, i, e) {
		char *text = xasprintf("%s: %s", json_string_value(json_object_get(e, "path")),
				       json_string_value(json_object_get(e, "message")));
		char *uri = path_uri(json_string_value(json_object_get(e, "path")));
		json_array_append_new(notes, json_pack("{s:s, s:{s:s}, s:[{s:{s:{s:s}}}]}",
						       "level", "error", "message", "text", text,
						       "locations", "physicalLocation", "artifactLocation", "uri", uri));
		free(uri);
		free(text);
	}
	json_decref(errs);
	json_t *run = json_pack("{s:{s:{s:s, s:s, s:o}}, s:s, s:o, s:[{s:b, s:o}]}",
				"tool", "driver", "name", "gpuopt", "version", GPUOPT_VERSION, "rules", rules,
				"columnKind", "unicodeCodePoints",
				"results", results,
				"invocations", "executionSuccessful", 1, "toolExecutionNotifications", notes);
	json_t *doc = json_pack("{s:s, s:s, s:[o]}",
				"$schema", "https://json.schemastore.org/sarif-2.1.0.json",
				"version", "2.1.0", "runs", run);
	return dump(doc);
}
