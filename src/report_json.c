/* report_json: the machine-readable renderings, written as the scan goes:
 * gpuopt's own JSON object (one finding per line inside "findings") and
 * SARIF 2.1.0 as GitHub code scanning reads it. Strings are escaped by
 * json_put_string; the small fixed parts are built with jansson. */
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "report.h"
#include "version.h"

static void put_key_str(FILE *o, const char *key, const char *value)
{
	fprintf(o, "\"%s\": ", key);
	if (value)
		json_put_string(o, value);
	else
		fputs("null", o);
}

/* Dumps a jansson value at the current position, then drops it. */
static void put_json(FILE *o, json_t *v, size_t flags)
{
	json_dumpf(v, o, flags | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	json_decref(v);
}

/* ---- gpuopt JSON ---- */

static void json_begin(struct report *r)
{
	fprintf(r->out, "{\n  \"tool\": \"gpuopt\",\n  \"version\": \"%s\",\n  \"findings\": [", GPUOPT_VERSION);
}

static void json_file(struct report *r, const struct scan_file *sf)
{
	FILE *o = r->out;
	if (sf->res.syntax_error_line) {
		json_t *n = json_pack("{s:s, s:i, s:s}", "path", sf->path, "line",
				      (json_int_t)sf->res.syntax_error_line, "message",
				      "syntax error: scanned as far as the parser recovered");
		if (sf->notebook)
			json_object_set_new(n, "cell", json_integer(sf->res.syntax_error_cell));
		ptrvec_push(&r->notices, json_dumps(n, JSON_PRESERVE_ORDER));
		json_decref(n);
	}
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		fputs(r->nresults++ ? ",\n    {" : "\n    {", o);
		put_key_str(o, "path", sf->path);
		fprintf(o, ", \"line\": %u, \"column\": %u, \"end_line\": %u, \"end_column\": %u, \"cell\": ",
			f->line, f->col, f->end_line, f->end_col);
		if (sf->notebook)
			fprintf(o, "%u", f->cell);
		else
			fputs("null", o);
		fputs(", ", o);
		put_key_str(o, "rule", f->rule->id);
		fputs(", ", o);
		put_key_str(o, "rule_name", f->rule->name);
		fputs(", ", o);
		put_key_str(o, "category", f->rule->category);
		fputs(", ", o);
		put_key_str(o, "library", f->library);
		fputs(", ", o);
		put_key_str(o, "symbol", f->symbol);
		fputs(", ", o);
		put_key_str(o, "target", f->target);
		fputs(", ", o);
		put_key_str(o, "severity", severity_name(f->rule->severity));
		fputs(", ", o);
		put_key_str(o, "message", f->message);
		fputs(", ", o);
		put_key_str(o, "fix", f->fix);
		fprintf(o, ", \"rank\": %u, \"loop_line\": ", f->rank);
		if (f->loop_line)
			fprintf(o, "%u", f->loop_line);
		else
			fputs("null", o);
		fputs(", ", o);
		put_key_str(o, "rank_reason", f->rank_reason);
		putc('}', o);
	}
}

static void json_end(struct report *r, double seconds)
{
	FILE *o = r->out;
	const struct scan_counts *n = &r->counts;
	fputs(r->nresults ? "\n  ],\n  \"summary\": " : "],\n  \"summary\": ", o);
	json_t *summary = json_object();
	json_object_set_new(summary, "files_scanned", json_integer((json_int_t)n->files_scanned));
	json_object_set_new(summary, "notebooks", json_integer((json_int_t)n->notebooks));
	json_object_set_new(summary, "files_with_errors", json_integer((json_int_t)n->files_with_errors));
	json_object_set_new(summary, "findings", json_integer((json_int_t)n->findings));
	json_object_set_new(summary, "by_target", json_incref(r->by_target));
	json_object_set_new(summary, "by_category", json_incref(r->by_category));
	json_object_set_new(summary, "by_severity", json_incref(r->by_severity));
	json_object_set_new(summary, "by_library", json_incref(r->by_library));
	json_object_set_new(summary, "by_rule", json_incref(r->by_rule));
	json_object_set_new(summary, "seconds", json_real(seconds));
	put_json(o, summary, JSON_INDENT(2));
	fputs(",\n  \"errors\": [", o);
	for (size_t i = 0; i < r->errors.len; i++) {
		const struct path_error *e = r->errors.items[i];
		fputs(i ? ",\n    {" : "\n    {", o);
		put_key_str(o, "path", e->path);
		fputs(", ", o);
		put_key_str(o, "message", e->message);
		putc('}', o);
	}
	fputs(r->errors.len ? "\n  ],\n  \"notices\": [" : "],\n  \"notices\": [", o);
	for (size_t i = 0; i < r->notices.len; i++)
		fprintf(o, "%s\n    %s", i ? "," : "", (char *)r->notices.items[i]);
	fputs(r->notices.len ? "\n  ]\n}\n" : "]\n}\n", o);
}

const struct report_format_ops report_json_ops = {json_begin, json_file, json_end};

/* ---- SARIF 2.1.0 ---- */

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

static void sarif_begin(struct report *r)
{
	json_t *rules = json_array();
	for (size_t i = 0; i < r->kb->nrules; i++) {
		const struct rule *ru = &r->kb->rules[i];
		struct buf help = {0};
		buf_printf(&help, "%s", ru->why ? ru->why : ru->summary);
		if (ru->before && ru->after)
			buf_printf(&help, "\n\nBefore:\n%s\n\nAfter:\n%s", ru->before, ru->after);
		json_array_append_new(rules, json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}",
						       "id", ru->id, "name", ru->name,
						       "shortDescription", "text", ru->summary,
						       "fullDescription", "text", ru->why ? ru->why : ru->summary,
						       "help", "text", help.data,
						       "defaultConfiguration", "level", sarif_level(ru->severity),
						       "properties", "category", ru->category));
		buf_free(&help);
	}
	fputs("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n"
	      "  \"runs\": [\n    {\n      \"tool\": {\"driver\": {\"name\": \"gpuopt\", \"version\": \"" GPUOPT_VERSION
	      "\", \"rules\": ", r->out);
	put_json(r->out, rules, JSON_COMPACT);
	fputs("}},\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [", r->out);
}

static void sarif_file(struct report *r, const struct scan_file *sf)
{
	FILE *o = r->out;
	char *uri = path_uri(sf->path);
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		fputs(r->nresults++ ? ",\n        {" : "\n        {", o);
		fprintf(o, "\"ruleId\": \"%s\", \"ruleIndex\": %zu, \"level\": \"%s\", \"message\": {\"text\": ",
			f->rule->id, f->rule->index, sarif_level(f->rule->severity));
		char *text = f->fix ? xasprintf("%s. Fix: %s", f->message, f->fix) : xstrdup(f->message);
		json_put_string(o, text);
		free(text);
		fputs("}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", o);
		json_put_string(o, uri);
		fprintf(o, ", \"uriBaseId\": \"%%SRCROOT%%\"}, \"region\": {\"startLine\": %u, \"startColumn\": %u, "
			"\"endLine\": %u, \"endColumn\": %u}}}], \"properties\": {",
			f->line, f->col, f->end_line, f->end_col);
		put_key_str(o, "category", f->rule->category);
		fputs(", ", o);
		put_key_str(o, "library", f->library);
		fputs(", ", o);
		put_key_str(o, "symbol", f->symbol);
		fputs(", ", o);
		put_key_str(o, "target", f->target);
		if (sf->notebook)
			fprintf(o, ", \"cell\": %u", f->cell);
		fprintf(o, ", \"rank\": %u", f->rank);
		if (f->rank_reason) {
			fputs(", ", o);
			put_key_str(o, "rankReason", f->rank_reason);
		}
		fputs("}}", o);
	}
	free(uri);
}

static void sarif_end(struct report *r, double seconds)
{
	(void)seconds;
	json_t *notes = json_array();
	for (size_t i = 0; i < r->errors.len; i++) {
		const struct path_error *e = r->errors.items[i];
		char *text = xasprintf("%s: %s", e->path, e->message);
		char *uri = path_uri(e->path);
		json_array_append_new(notes, json_pack("{s:s, s:{s:s}, s:[{s:{s:{s:s}}}]}",
						       "level", "error", "message", "text", text,
						       "locations", "physicalLocation", "artifactLocation", "uri", uri));
		free(uri);
		free(text);
	}
	fputs(r->nresults ? "\n      ],\n      \"invocations\": [{\"executionSuccessful\": true, "
			    "\"toolExecutionNotifications\": "
			  : "],\n      \"invocations\": [{\"executionSuccessful\": true, \"toolExecutionNotifications\": ",
	      r->out);
	put_json(r->out, notes, JSON_COMPACT);
	fputs("}]\n    }\n  ]\n}\n", r->out);
}

const struct report_format_ops report_sarif_ops = {sarif_begin, sarif_file, sarif_end};
