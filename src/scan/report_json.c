/* report_json: the machine-readable renderings, written as the scan goes:
 * gpuopt's own JSON object (one finding per line inside "findings") and
 * SARIF 2.1.0 as GitHub code scanning reads it. A file's findings are
 * rendered into a buffer by its scan worker (json_render / sarif_render:
 * no shared state, so in parallel) and written in order; the small fixed
 * parts are built with jansson. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/version.h"
#include "python/source.h"
#include "report.h"

/* ---- buffer writers for the per-finding hot path ---- */

/* Appends without terminating (the renderers terminate at the end). */
static inline void put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static inline void b_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* A string literal, without strlen. */
#define B_LIT(b, lit) put((b), (lit), sizeof(lit) - 1)

/* Bytes JSON must escape inside a string, and those that begin a UTF-8
 * character (to be checked: a file's name may be any bytes). */
static bool needs_look(unsigned char ch)
{
	return ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80;
}

/* The length of the UTF-8 character at p (n > 0 bytes left, p[0] >= 0x80),
 * or 0 when the bytes there are not one. */
static size_t utf8_char(const unsigned char *p, size_t n)
{
	if (utf8_check(p, n < 4 ? n : 4) == 0)
		return 0;
	return p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : 2;
}

/* The one rule for text in scan's JSON and SARIF (a file's name, above
 * all, which may be any bytes): the output is always UTF-8; a byte that is
 * not part of a UTF-8 character is written %XX (upper-case hex), as the
 * SARIF uri writes it. Appends s[0..n) so, without quotes or JSON escapes. */
static void put_utf8(struct buf *b, const unsigned char *p, size_t n)
{
	char esc[4];
	for (size_t i = 0; i < n;) {
		size_t k = p[i] < 0x80 ? 1 : utf8_char(p + i, n - i);
		if (k) {
			put(b, p + i, k);
			i += k;
		} else {
			snprintf(esc, sizeof esc, "%%%02X", p[i++]);
			put(b, esc, 3);
		}
	}
}

/* s by the rule of put_utf8, as a C string for jansson. Owned. */
static char *utf8_text(const char *s)
{
	struct buf b = {0};
	put_utf8(&b, (const unsigned char *)s, strlen(s));
	buf_putc(&b, '\0'); /* terminates (put does not) */
	return buf_steal(&b);
}

/* s as a JSON string literal (put_utf8's rule for bytes that are not
 * UTF-8), or null. */
static void b_json(struct buf *b, const char *s)
{
	if (!s) {
		B_LIT(b, "null");
		return;
	}
	size_t n = strlen(s);
	const unsigned char *p = (const unsigned char *)s;
	buf_reserve(b, n + 2);
	b->data[b->len++] = '"';
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	for (size_t i = 0; i < n;) {
		/* the plain run, eight bytes at a time: a byte < 0x20, '"', '\\'
		 * or one with its high bit set stops it (SWAR zero-byte tests) */
		size_t j = i;
		for (; j + 8 <= n; j += 8) {
			uint64_t w, q, bs;
			memcpy(&w, p + j, 8);
			q = w ^ (ones * '"');
			bs = w ^ (ones * '\\');
			if ((((w - ones * 0x20) | (q - ones) | (bs - ones)) & ~w & highs) | (w & highs))
				break;
		}
		while (j < n && !needs_look(p[j]))
			j++;
		put(b, p + i, j - i);
		if (j == n)
			break;
		unsigned char ch = p[j];
		char esc[8];
		size_t k;
		switch (ch) {
		case '"': B_LIT(b, "\\\""); break;
		case '\\': B_LIT(b, "\\\\"); break;
		case '\n': B_LIT(b, "\\n"); break;
		case '\r': B_LIT(b, "\\r"); break;
		case '\t': B_LIT(b, "\\t"); break;
		default:
			if (ch < 0x20) {
				snprintf(esc, sizeof esc, "\\u%04x", ch);
				put(b, esc, 6);
			} else if ((k = utf8_char(p + j, n - j)) != 0) {
				put(b, p + j, k);
				j += k - 1;
			} else {
				put_utf8(b, p + j, 1);
			}
			break;
		}
		i = j + 1;
	}
	put(b, "\"", 1);
}

static inline void b_key(struct buf *b, const char *key, const char *value)
{
	put(b, "\"", 1);
	b_str(b, key);
	put(b, "\": ", 3);
	b_json(b, value);
}

static void b_u32(struct buf *b, uint32_t v)
{
	char d[10];
	int n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (b->len + (size_t)n + 1 > b->cap)
		buf_reserve(b, (size_t)n);
	while (n)
		b->data[b->len++] = d[--n];
}

/* Terminates what put appended. */
static void b_end(struct buf *b)
{
	if (b->data)
		b->data[b->len] = '\0';
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

static char *path_uri(const char *path);

/* What the notices of a file not fully analysed say (func: the function
 * the budget ran out in, or NULL). Owned. */
static char *notice_text(bool budget, const char *func)
{
	if (!budget)
		return xstrdup("syntax error: scanned as far as the parser recovered");
	return xasprintf("not fully analysed: the flow model's work budget ran out here%s%s%s, so the GPU "
			 "rules (GPU601-GPU605) did not look past it",
			 func ? ", in " : "", func ? func : "", func ? "()" : "");
}

/* The notices of a file not fully analysed, as JSON objects in the format's
 * shape (sarif: SARIF notifications), for the end. */
/* Adds notice n (taken) to r's notices, as the format writes it. */
static void push_notice(struct report *r, json_t *n, bool sarif)
{
	char *dumped = json_dumps(n, JSON_PRESERVE_ORDER | (sarif ? JSON_COMPACT : 0));
	if (dumped)
		ptrvec_push(&r->notices, dumped);
	json_decref(n);
}

static void add_notices(struct report *r, const struct scan_file *sf, bool sarif)
{
	const struct scan_result *res = &sf->res;
	if (sf->language) {
		char *path = utf8_text(sf->path), *lang = utf8_text(sf->language);
		char *message = xasprintf("the notebook's language is %s, not Python: not scanned", lang);
		json_t *n;
		if (!sarif) {
			n = json_pack("{s:s, s:s, s:s, s:s}", "path", path, "kind", "not-python", "language", lang,
				      "message", message);
		} else {
			char *uri = path_uri(sf->path), *text = xasprintf("%s: %s", path, message);
			n = json_pack("{s:s, s:{s:s}, s:[{s:{s:{s:s}}}], s:{s:s}}", "level", "note", "message", "text",
				      text, "locations", "physicalLocation", "artifactLocation", "uri", uri,
				      "properties", "kind", "not-python");
			free(text);
			free(uri);
		}
		push_notice(r, n, sarif);
		free(message);
		free(lang);
		free(path);
	}
	for (int k = 0; k < 2; k++) {
		uint32_t line = k ? res->budget_line : res->syntax_error_line;
		uint32_t cell = k ? res->budget_cell : res->syntax_error_cell;
		if (!line)
			continue;
		char *path = utf8_text(sf->path);
		char *func = k && res->budget_func ? utf8_text(res->budget_func) : NULL;
		const char *kind = k ? "budget" : "syntax-error";
		char *message = notice_text(k, func);
		json_t *n = json_object();
		if (!sarif) {
			json_object_set_new(n, "path", json_string(path));
			json_object_set_new(n, "line", json_integer(line));
			if (sf->notebook)
				json_object_set_new(n, "cell", json_integer(cell));
			json_object_set_new(n, "kind", json_string(kind));
			if (k)
				json_object_set_new(n, "function", func ? json_string(func) : json_null());
			json_object_set_new(n, "message", json_string(message));
		} else {
			char *uri = path_uri(sf->path);
			char *text = xasprintf("%s: %s", path, message);
			json_t *loc = json_pack("{s:{s:s}}", "artifactLocation", "uri", uri);
			/* a notebook's cell line is not a line of the .ipynb file: in properties */
			if (!sf->notebook)
				json_object_set_new(loc, "region", json_pack("{s:i}", "startLine", (json_int_t)line));
			json_t *props = json_pack("{s:s}", "kind", kind);
			if (sf->notebook) {
				json_object_set_new(props, "cell", json_integer(cell));
				json_object_set_new(props, "lineInCell", json_integer(line));
			}
			json_object_set_new(n, "level", json_string("warning"));
			json_object_set_new(n, "message", json_pack("{s:s}", "text", text));
			json_object_set_new(n, "locations", json_pack("[{s:o}]", "physicalLocation", loc));
			json_object_set_new(n, "properties", props);
			free(text);
			free(uri);
		}
		push_notice(r, n, sarif);
		free(message);
		free(func);
		free(path);
	}
}

static void json_file(struct report *r, const struct scan_file *sf)
{
	add_notices(r, sf, false);
}

static void sarif_file(struct report *r, const struct scan_file *sf)
{
	add_notices(r, sf, true);
}

/* Each finding as ",\n    {...}" (report_file drops the very first comma). */
static void json_render(const struct scan_file *sf, struct buf *b)
{
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		B_LIT(b, ",\n    {");
		b_key(b, "path", sf->path);
		B_LIT(b, ", \"line\": ");
		b_u32(b, f->line);
		B_LIT(b, ", \"column\": ");
		b_u32(b, f->col);
		B_LIT(b, ", \"end_line\": ");
		b_u32(b, f->end_line);
		B_LIT(b, ", \"end_column\": ");
		b_u32(b, f->end_col);
		B_LIT(b, ", \"cell\": ");
		if (sf->notebook)
			b_u32(b, f->cell);
		else
			B_LIT(b, "null");
		B_LIT(b, ", ");
		b_key(b, "rule", f->rule->id);
		B_LIT(b, ", ");
		b_key(b, "rule_name", f->rule->name);
		B_LIT(b, ", ");
		b_key(b, "category", f->rule->category);
		B_LIT(b, ", ");
		b_key(b, "library", f->library);
		B_LIT(b, ", ");
		b_key(b, "symbol", f->symbol);
		B_LIT(b, ", ");
		b_key(b, "target", f->target);
		B_LIT(b, ", ");
		b_key(b, "severity", severity_name(f->rule->severity));
		B_LIT(b, ", ");
		b_key(b, "message", f->message);
		B_LIT(b, ", ");
		b_key(b, "fix", f->fix);
		B_LIT(b, ", \"rank\": ");
		b_u32(b, f->rank);
		B_LIT(b, ", \"loop_line\": ");
		if (f->loop_line)
			b_u32(b, f->loop_line);
		else
			B_LIT(b, "null");
		B_LIT(b, ", ");
		b_key(b, "rank_reason", f->rank_reason);
		put(b, "}", 1);
	}
	b_end(b);
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
	json_object_set_new(summary, "files_not_fully_analysed", json_integer((json_int_t)n->files_not_fully_analysed));
	json_object_set_new(summary, "notebooks_skipped", json_integer((json_int_t)n->notebooks_skipped));
	json_object_set_new(summary, "findings", json_integer((json_int_t)n->findings));
	json_object_set_new(summary, "by_target", json_incref(r->by_target));
	json_object_set_new(summary, "by_category", json_incref(r->by_category));
	json_object_set_new(summary, "by_severity", json_incref(r->by_severity));
	json_object_set_new(summary, "by_library", json_incref(r->by_library));
	json_object_set_new(summary, "by_rule", json_incref(r->by_rule));
	json_object_set_new(summary, "seconds", json_real(seconds));
	put_json(o, summary, JSON_INDENT(2));
	fputs(",\n  \"errors\": [", o);
	struct buf b = {0};
	for (size_t i = 0; i < r->errors.len; i++) {
		const struct path_error *e = r->errors.items[i];
		b.len = 0;
		b_str(&b, i ? ",\n    {" : "\n    {");
		b_key(&b, "path", e->path);
		B_LIT(&b, ", ");
		b_key(&b, "message", e->message);
		B_LIT(&b, "}");
		fwrite(b.data, 1, b.len, o);
	}
	buf_free(&b);
	fputs(r->errors.len ? "\n  ],\n  \"notices\": [" : "],\n  \"notices\": [", o);
	for (size_t i = 0; i < r->notices.len; i++)
		fprintf(o, "%s\n    %s", i ? "," : "", (char *)r->notices.items[i]);
	fputs(r->notices.len ? "\n  ]\n}\n" : "]\n}\n", o);
}

const struct report_format_ops report_json_ops = {json_begin, json_file, json_render, json_end};

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

/* Each result as ",\n        {...}" (report_file drops the very first comma). */
static void sarif_render(const struct scan_file *sf, struct buf *b)
{
	if (!sf->res.n)
		return;
	char *uri = path_uri(sf->path);
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		B_LIT(b, ",\n        {\"ruleId\": \"");
		b_str(b, f->rule->id);
		B_LIT(b, "\", \"ruleIndex\": ");
		b_u32(b, (uint32_t)f->rule->index);
		B_LIT(b, ", \"level\": \"");
		b_str(b, sarif_level(f->rule->severity));
		B_LIT(b, "\", \"message\": {\"text\": ");
		char *text = f->fix ? xasprintf("%s. Fix: %s", f->message, f->fix) : xstrdup(f->message);
		b_json(b, text);
		free(text);
		B_LIT(b, "}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ");
		b_json(b, uri);
		B_LIT(b, ", \"uriBaseId\": \"%SRCROOT%\"}, \"region\": {\"startLine\": ");
		if (sf->notebook && f->file_line) {
			/* the lines of the .ipynb file a viewer shows; columns
			 * there are those of JSON strings, so none */
			b_u32(b, f->file_line);
			B_LIT(b, ", \"endLine\": ");
			b_u32(b, f->file_end_line >= f->file_line ? f->file_end_line : f->file_line);
		} else {
			b_u32(b, f->line);
			B_LIT(b, ", \"startColumn\": ");
			b_u32(b, f->col);
			B_LIT(b, ", \"endLine\": ");
			b_u32(b, f->end_line);
			B_LIT(b, ", \"endColumn\": ");
			b_u32(b, f->end_col);
		}
		B_LIT(b, "}}}], \"properties\": {");
		b_key(b, "category", f->rule->category);
		B_LIT(b, ", ");
		b_key(b, "library", f->library);
		B_LIT(b, ", ");
		b_key(b, "symbol", f->symbol);
		B_LIT(b, ", ");
		b_key(b, "target", f->target);
		if (sf->notebook) { /* where it is in the notebook's own terms */
			B_LIT(b, ", \"cell\": ");
			b_u32(b, f->cell);
			B_LIT(b, ", \"lineInCell\": ");
			b_u32(b, f->line);
			B_LIT(b, ", \"columnInCell\": ");
			b_u32(b, f->col);
		}
		B_LIT(b, ", \"rank\": ");
		b_u32(b, f->rank);
		if (f->rank_reason) {
			B_LIT(b, ", ");
			b_key(b, "rankReason", f->rank_reason);
		}
		B_LIT(b, "}}");
	}
	free(uri);
	b_end(b);
}

static void sarif_end(struct report *r, double seconds)
{
	(void)seconds;
	json_t *notes = json_array();
	for (size_t i = 0; i < r->errors.len; i++) {
		const struct path_error *e = r->errors.items[i];
		char *raw = xasprintf("%s: %s", e->path, e->message);
		char *text = utf8_text(raw);
		free(raw);
		char *uri = path_uri(e->path);
		json_array_append_new(notes, json_pack("{s:s, s:{s:s}, s:[{s:{s:{s:s}}}]}",
						       "level", "error", "message", "text", text,
						       "locations", "physicalLocation", "artifactLocation", "uri", uri));
		free(uri);
		free(text);
	}
	for (size_t i = 0; i < r->notices.len; i++)
		json_array_append_new(notes, json_loads(r->notices.items[i], 0, NULL));
	fputs(r->nresults ? "\n      ],\n      \"invocations\": [{\"executionSuccessful\": true, "
			    "\"toolExecutionNotifications\": "
			  : "],\n      \"invocations\": [{\"executionSuccessful\": true, \"toolExecutionNotifications\": ",
	      r->out);
	put_json(r->out, notes, JSON_COMPACT);
	fputs("}]\n    }\n  ]\n}\n", r->out);
}

const struct report_format_ops report_sarif_ops = {sarif_begin, sarif_file, sarif_render, sarif_end};
