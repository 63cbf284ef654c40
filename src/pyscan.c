/* pyscan: see pyscan.h.
 *
 * One pass over the syntax tree with a cursor (no recursion over the tree,
 * so 10,000-deep nesting is fine). Entering a node may bind names, push a
 * scope or emit a finding; leaving it pops the scope or binds an
 * assignment's target. Names resolve in source order, innermost function
 * scope first, class scopes only from directly inside them, as Python does. */
#include "pyscan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "symtab.h"
#include "util.h"

const TSLanguage *tree_sitter_python(void);

/* How long the parser may spend on one file before giving up. */
#define PARSE_TIMEOUT_US (20u * 1000u * 1000u)
/* Deepest attribute / call chain resolved; beyond it a name is unknown. */
#define RESOLVE_DEPTH 48

enum nk {
	NK_OTHER = 0, NK_CALL, NK_ATTRIBUTE, NK_IDENTIFIER, NK_IMPORT, NK_IMPORT_FROM,
	NK_ALIASED_IMPORT, NK_DOTTED_NAME, NK_WILDCARD_IMPORT, NK_RELATIVE_IMPORT,
	NK_FUNCTION_DEF, NK_CLASS_DEF, NK_LAMBDA, NK_ASSIGNMENT, NK_DECORATOR,
	NK_KEYWORD_ARGUMENT, NK_ARGUMENT_LIST, NK_STRING, NK_STRING_CONTENT, NK_INTERPOLATION,
	NK_INTEGER, NK_FLOAT, NK_TRUE, NK_FALSE, NK_NONE, NK_UNARY, NK_PARENTHESIZED,
	NK_FOR, NK_SUBSCRIPT, NK_LIST_SPLAT, NK_DICT_SPLAT, NK_EXCEPT, NK_ERROR,
	NK_FUTURE_IMPORT, NK_COMMENT, NK_COUNT
};

static const char *const nk_names[NK_COUNT] = {
	[NK_CALL] = "call", [NK_ATTRIBUTE] = "attribute", [NK_IDENTIFIER] = "identifier",
	[NK_IMPORT] = "import_statement", [NK_IMPORT_FROM] = "import_from_statement",
	[NK_ALIASED_IMPORT] = "aliased_import", [NK_DOTTED_NAME] = "dotted_name",
	[NK_WILDCARD_IMPORT] = "wildcard_import", [NK_RELATIVE_IMPORT] = "relative_import",
	[NK_FUNCTION_DEF] = "function_definition", [NK_CLASS_DEF] = "class_definition",
	[NK_LAMBDA] = "lambda", [NK_ASSIGNMENT] = "assignment", [NK_DECORATOR] = "decorator",
	[NK_KEYWORD_ARGUMENT] = "keyword_argument", [NK_ARGUMENT_LIST] = "argument_list",
	[NK_STRING] = "string", [NK_STRING_CONTENT] = "string_content",
	[NK_INTERPOLATION] = "interpolation", [NK_INTEGER] = "integer", [NK_FLOAT] = "float",
	[NK_TRUE] = "true", [NK_FALSE] = "false", [NK_NONE] = "none",
	[NK_UNARY] = "unary_operator", [NK_PARENTHESIZED] = "parenthesized_expression",
	[NK_FOR] = "for_statement", [NK_SUBSCRIPT] = "subscript", [NK_LIST_SPLAT] = "list_splat",
	[NK_DICT_SPLAT] = "dictionary_splat", [NK_EXCEPT] = "except_clause", [NK_ERROR] = "ERROR",
	[NK_FUTURE_IMPORT] = "future_import_statement", [NK_COMMENT] = "comment",
};

enum field { F_FUNCTION, F_ARGUMENTS, F_OBJECT, F_ATTRIBUTE, F_NAME, F_ALIAS, F_MODULE_NAME,
	     F_PARAMETERS, F_LEFT, F_RIGHT, F_VALUE, F_ARGUMENT, F_COUNT };
static const char *const field_names[F_COUNT] = {
	"function", "arguments", "object", "attribute", "name", "alias", "module_name",
	"parameters", "left", "right", "value", "argument",
};

struct pyscanner {
	const struct kb *kb;
	TSParser *parser;
	uint8_t *kinds; /* symbol id -> enum nk */
	uint32_t nsymbols;
	TSFieldId fields[F_COUNT];
	const struct rule *fallback_rule;
};

struct pyscanner *pyscanner_new(const struct kb *kb)
{
	struct pyscanner *ps = xcalloc(1, sizeof *ps);
	const TSLanguage *lang = tree_sitter_python();
	ps->kb = kb;
	ps->parser = ts_parser_new();
	ts_parser_set_language(ps->parser, lang);
	ts_parser_set_timeout_micros(ps->parser, PARSE_TIMEOUT_US);
	ps->nsymbols = ts_language_symbol_count(lang);
	ps->kinds = xcalloc(ps->nsymbols, 1);
	for (uint32_t s = 0; s < ps->nsymbols; s++) {
		const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
		if (!name || ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular)
			continue;
		for (int k = 1; k < NK_COUNT; k++)
			if (strcmp(name, nk_names[k]) == 0)
				ps->kinds[s] = (uint8_t)k;
	}
	for (int f = 0; f < F_COUNT; f++)
		ps->fields[f] = ts_language_field_id_for_name(lang, field_names[f],
							      (uint32_t)strlen(field_names[f]));
	ps->fallback_rule = kb_rule(kb, "GPU301");
	return ps;
}

void pyscanner_free(struct pyscanner *ps)
{
	if (!ps)
		return;
	ts_parser_delete(ps->parser);
	free(ps->kinds);
	free(ps);
}

void scan_result_free(struct scan_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].symbol);
		free(r->items[i].message);
		free(r->items[i].fix);
		free(r->items[i].headline);
		free(r->items[i].line_text);
	}
	free(r->items);
	memset(r, 0, sizeof *r);
}

/* ---- scan state ---- */

struct scope {
	struct symtab tab;
	bool is_class;
	struct ptrvec stars; /* owned module names from `from M import *` */
};

struct ctx {
	const struct pyscanner *ps;
	const struct kb *kb;
	const struct source *src;
	const char *text;
	struct scan_result *out;
	struct scope *scopes;
	size_t nscopes, capscopes;
	int except_depth;
	const struct kb_entry *imported[32]; /* import entries already reported */
	size_t nimported;
};

/* tree-sitter 0.20 dereferences null nodes, and error recovery can leave any
 * field empty, so every node query below goes through these guards. */
static enum nk kind(const struct ctx *c, TSNode n)
{
	if (ts_node_is_null(n))
		return NK_OTHER;
	TSSymbol s = ts_node_symbol(n);
	return s < c->ps->nsymbols ? (enum nk)c->ps->kinds[s] : NK_OTHER;
}

static TSNode field(const struct ctx *c, TSNode n, enum field f)
{
	return ts_node_child_by_field_id(n, c->ps->fields[f]);
}

static const char *node_text(const struct ctx *c, TSNode n, size_t *len)
{
	if (ts_node_is_null(n)) {
		*len = 0;
		return "";
	}
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	*len = b - a;
	return c->text + a;
}

static void push_scope(struct ctx *c, bool is_class)
{
	if (c->nscopes == c->capscopes) {
		c->capscopes = c->capscopes ? c->capscopes * 2 : 16;
		c->scopes = xrealloc(c->scopes, c->capscopes * sizeof *c->scopes);
	}
	memset(&c->scopes[c->nscopes], 0, sizeof *c->scopes);
	c->scopes[c->nscopes++].is_class = is_class;
}

static void pop_scope(struct ctx *c)
{
	struct scope *s = &c->scopes[--c->nscopes];
	symtab_free(&s->tab);
	for (size_t i = 0; i < s->stars.len; i++)
		free(s->stars.items[i]);
	ptrvec_free(&s->stars);
}

static void bind(struct ctx *c, const char *name, size_t len, enum bkind k, const char *qual)
{
	struct symtab *t = &c->scopes[c->nscopes - 1].tab;
	if (c->except_depth > 0 && k == B_SHADOW) {
		/* `except ImportError: cp = None` keeps the import's meaning. */
		const struct binding *old = symtab_get(t, name, len);
		if (old && old->kind == B_QUAL)
			return;
	}
	symtab_set(t, name, len, k, qual);
}

static void bind_node(struct ctx *c, TSNode id, enum bkind k, const char *qual)
{
	size_t len;
	const char *s = node_text(c, id, &len);
	bind(c, s, len, k, qual);
}

static const struct binding *lookup(const struct ctx *c, const char *name, size_t len)
{
	for (size_t i = c->nscopes; i-- > 0;) {
		const struct scope *s = &c->scopes[i];
		if (s->is_class && i != c->nscopes - 1)
			continue;
		const struct binding *b = symtab_get(&s->tab, name, len);
		if (b)
			return b;
	}
	return NULL;
}

/* ---- resolution ---- */

enum rkind { R_NONE, R_QUAL, R_VALUE, R_MEMBER };

struct res {
	enum rkind kind;
	char *name; /* owned */
};

static struct res res_none(void)
{
	return (struct res){R_NONE, NULL};
}

static bool class_like(const char *qualname)
{
	const char *dot = strrchr(qualname, '.');
	const char *last = dot ? dot + 1 : qualname;
	return isupper((unsigned char)*last);
}

/* The type part of a member name "pandas.DataFrame.apply" (owned). */
static char *member_type(const char *member)
{
	const char *dot = strrchr(member, '.');
	return xstrndup(member, dot ? (size_t)(dot - member) : strlen(member));
}

static struct res resolve(struct ctx *c, TSNode n, int depth);

/* The type of the value a call returns, if gpuopt knows it. */
static struct res call_result(struct ctx *c, TSNode call, int depth)
{
	struct res f = resolve(c, field(c, call, F_FUNCTION), depth + 1);
	struct res r = res_none();
	if (f.kind == R_QUAL) {
		const struct kb_library *lib = kb_library_for(c->kb, f.name);
		const struct kb_entry *e = lib ? kb_lookup(lib, f.name) : NULL;
		if (e && e->returns)
			r = (struct res){R_VALUE, xstrdup(e->returns)};
		else if (e && !e->ignore && !e->is_pattern && class_like(f.name))
			r = (struct res){R_VALUE, xstrdup(f.name)};
	} else if (f.kind == R_MEMBER) {
		char *type = member_type(f.name);
		const struct kb_library *lib = kb_library_for(c->kb, type);
		const struct kb_entry *e = lib ? kb_lookup(lib, f.name) : NULL;
		const struct kb_type *t = kb_type(c->kb, type);
		if (e && e->returns)
			r = (struct res){R_VALUE, xstrdup(strcmp(e->returns, "self") == 0 ? type : e->returns)};
		else if (t && t->methods == POL_PORT)
			r = (struct res){R_VALUE, xstrdup(type)};
		free(type);
	}
	free(f.name);
	return r;
}

static struct res resolve(struct ctx *c, TSNode n, int depth)
{
	if (ts_node_is_null(n) || depth > RESOLVE_DEPTH)
		return res_none();
	switch (kind(c, n)) {
	case NK_IDENTIFIER: {
		size_t len;
		const char *s = node_text(c, n, &len);
		const struct binding *b = lookup(c, s, len);
		if (b) {
			if (b->kind == B_QUAL)
				return (struct res){R_QUAL, xstrdup(b->qual)};
			if (b->kind == B_VALUE)
				return (struct res){R_VALUE, xstrdup(b->qual)};
			return res_none();
		}
		/* `from numpy import *`: a known name of a star-imported module. */
		for (size_t i = c->nscopes; i-- > 0;) {
			const struct scope *sc = &c->scopes[i];
			for (size_t k = 0; k < sc->stars.len; k++) {
				char *q = xasprintf("%s.%.*s", (char *)sc->stars.items[k], (int)len, s);
				const struct kb_library *lib = kb_library_for(c->kb, q);
				const struct kb_entry *e = lib ? kb_lookup(lib, q) : NULL;
				if (e && !e->is_pattern)
					return (struct res){R_QUAL, q};
				free(q);
			}
		}
		return res_none();
	}
	case NK_ATTRIBUTE: {
		struct res o = resolve(c, field(c, n, F_OBJECT), depth + 1);
		if (o.kind != R_QUAL && o.kind != R_VALUE) {
			free(o.name);
			return res_none();
		}
		size_t len;
		const char *a = node_text(c, field(c, n, F_ATTRIBUTE), &len);
		struct res r = {o.kind == R_QUAL ? R_QUAL : R_MEMBER,
				xasprintf("%s.%.*s", o.name, (int)len, a)};
		free(o.name);
		return r;
	}
	case NK_CALL:
		return call_result(c, n, depth);
	case NK_SUBSCRIPT: {
		struct res v = resolve(c, field(c, n, F_VALUE), depth + 1);
		if (v.kind == R_VALUE) {
			const struct kb_type *t = kb_type(c->kb, v.name);
			if (t && t->methods == POL_PORT)
				return v;
		}
		free(v.name);
		return res_none();
	}
	case NK_PARENTHESIZED:
		return resolve(c, ts_node_named_child(n, 0), depth + 1);
	default:
		return res_none();
	}
}

/* ---- findings ---- */

struct tvars {
	const char *name, *short_name, *gpu_name, *target, *arg, *value, *why, *script, *library;
};

/* Fills {placeholders} of tmpl from v (unknown or empty ones stay as they are). */
static char *expand(const char *tmpl, const struct tvars *v)
{
	struct buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (*p == '{') {
			const char *end = strchr(p, '}');
			if (end) {
				size_t n = (size_t)(end - p - 1);
				const char *val = NULL;
#define VAR(key, field) if (n == strlen(key) && strncmp(p + 1, key, n) == 0) val = v->field ? v->field : "";
				VAR("name", name) VAR("short", short_name) VAR("gpu_name", gpu_name)
				VAR("target", target) VAR("arg", arg) VAR("value", value) VAR("why", why)
				VAR("script", script) VAR("library", library)
#undef VAR
				if (val) {
					buf_puts(&b, val);
					p = end + 1;
					continue;
				}
			}
		}
		buf_putc(&b, *p++);
	}
	/* A template whose {why} was empty must not end in a dangling colon. */
	while (b.len && (b.data[b.len - 1] == ' ' || b.data[b.len - 1] == ':'))
		b.data[--b.len] = '\0';
	return buf_steal(&b);
}

static void position(const struct ctx *c, TSPoint pt, uint32_t byte, uint32_t *line, uint32_t *col,
		     uint32_t *cell)
{
	*col = source_column(c->src, byte - pt.column, pt.column);
	if (c->src->notebook && pt.row < c->src->nlines) {
		*cell = c->src->line_cell[pt.row];
		*line = c->src->line_in_cell[pt.row] + 1;
	} else {
		*cell = 0;
		*line = pt.row + 1;
	}
}

static struct finding *add_finding(struct ctx *c, TSNode at, const struct rule *rule,
				   const char *library, const char *display, const char *target,
				   const char *symbol)
{
	struct scan_result *r = c->out;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->items = xrealloc(r->items, r->cap * sizeof *r->items);
	}
	struct finding *f = &r->items[r->n++];
	memset(f, 0, sizeof *f);
	f->start_byte = ts_node_start_byte(at);
	f->end_byte = ts_node_end_byte(at);
	uint32_t end_cell;
	position(c, ts_node_start_point(at), f->start_byte, &f->line, &f->col, &f->cell);
	position(c, ts_node_end_point(at), f->end_byte, &f->end_line, &f->end_col, &end_cell);
	if (end_cell != f->cell) { /* cannot span cells; clamp to the start */
		f->end_line = f->line;
		f->end_col = f->col;
	}
	f->rule = rule;
	f->library = library;
	f->display = display;
	f->target = target;
	f->symbol = xstrdup(symbol);
	/* The whole source line, for code frames (capped). */
	uint32_t ls = f->start_byte - ts_node_start_point(at).column;
	const char *line = c->text + ls;
	const char *nl = memchr(line, '\n', c->src->len - ls);
	size_t n = nl ? (size_t)(nl - line) : c->src->len - ls;
	if (n > 400)
		n = 400;
	while (n > 0 && (line[n - 1] == '\r'))
		n--;
	f->line_text = xstrndup(line, n);
	return f;
}

static const char *script_name(const struct ctx *c)
{
	return strcmp(c->src->path, "-") == 0 ? "script.py" : c->src->path;
}

static const char *fix_template(const struct ctx *c, const struct kb_library *lib,
				const struct kb_entry *e)
{
	if (e && e->fix)
		return e->fix;
	if (c->src->notebook && lib->notebook_fix)
		return lib->notebook_fix;
	return lib->fix;
}

/* ---- fallback arguments ---- */

/* The argument node for fb in an argument_list, or a null node. *unknown is
 * set when splats make presence impossible to know. */
static TSNode find_arg(const struct ctx *c, TSNode args, const struct kb_fallback *fb, bool *unknown)
{
	TSNode none = {0};
	*unknown = false;
	if (ts_node_is_null(args) || kind(c, args) != NK_ARGUMENT_LIST)
		return none;
	uint32_t n = ts_node_named_child_count(args);
	int pos = 0;
	bool splat = false;
	for (uint32_t i = 0; i < n; i++) {
		TSNode a = ts_node_named_child(args, i);
		enum nk k = kind(c, a);
		if (k == NK_KEYWORD_ARGUMENT) {
			size_t len;
			const char *s = node_text(c, field(c, a, F_NAME), &len);
			if (len == strlen(fb->arg) && strncmp(s, fb->arg, len) == 0)
				return a;
		} else if (k == NK_LIST_SPLAT || k == NK_DICT_SPLAT) {
			splat = true;
		} else if (k != NK_COMMENT && k != NK_ERROR) {
			if (!splat && fb->pos >= 0 && pos == fb->pos)
				return a;
			pos++;
		}
	}
	*unknown = splat;
	return none;
}

/* A literal argument value as JSON (owned), or NULL when not a literal. */
static json_t *literal(const struct ctx *c, TSNode v)
{
	size_t len;
	const char *s;
	switch (kind(c, v)) {
	case NK_TRUE: return json_true();
	case NK_FALSE: return json_false();
	case NK_NONE: return json_null();
	case NK_INTEGER:
	case NK_FLOAT: {
		s = node_text(c, v, &len);
		char tmp[64];
		if (len >= sizeof tmp)
			return NULL;
		memcpy(tmp, s, len);
		tmp[len] = '\0';
		char *end;
		double d = strtod(tmp, &end);
		return *end ? NULL : json_real(d);
	}
	case NK_UNARY: {
		json_t *inner = literal(c, field(c, v, F_ARGUMENT));
		s = node_text(c, v, &len);
		if (inner && json_is_real(inner) && len && s[0] == '-') {
			json_real_set(inner, -json_real_value(inner));
			return inner;
		}
		json_decref(inner);
		return NULL;
	}
	case NK_STRING: {
		struct buf b = {0};
		uint32_t n = ts_node_named_child_count(v);
		for (uint32_t i = 0; i < n; i++) {
			TSNode ch = ts_node_named_child(v, i);
			if (kind(c, ch) == NK_INTERPOLATION) {
				buf_free(&b);
				return NULL;
			}
			if (kind(c, ch) == NK_STRING_CONTENT) {
				s = node_text(c, ch, &len);
				buf_append(&b, s, len);
			}
		}
		json_t *j = json_stringn(b.data ? b.data : "", b.len);
		buf_free(&b);
		return j;
	}
	default:
		return NULL;
	}
}

static bool json_same(json_t *a, json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal(a, b);
}

static bool value_in(json_t *v, json_t *values)
{
	size_t i;
	json_t *x;
	json_array_foreach(values, i, x)
		if (json_same(v, x))
			return true;
	return false;
}

/* Does fb hold for this call? Sets *at to the argument node (or null) and
 * *value (owned) to its text. */
static bool fallback_holds(struct ctx *c, TSNode args, const struct kb_fallback *fb, TSNode *at,
			   char **value)
{
	bool unknown;
	TSNode a = find_arg(c, args, fb, &unknown);
	*at = a;
	*value = NULL;
	TSNode v = a;
	if (!ts_node_is_null(a) && kind(c, a) == NK_KEYWORD_ARGUMENT)
		v = field(c, a, F_VALUE);
	if (fb->kind == FB_PRESENT) {
		if (ts_node_is_null(a))
			return false;
		size_t len;
		const char *s = node_text(c, v, &len);
		*value = xstrndup(s, len > 60 ? 60 : len);
		return true;
	}
	if (fb->kind == FB_CALLABLE) {
		if (ts_node_is_null(a))
			return false;
		bool callable = kind(c, v) == NK_LAMBDA;
		if (kind(c, v) == NK_IDENTIFIER) {
			size_t len;
			const char *s = node_text(c, v, &len);
			const struct binding *b = lookup(c, s, len);
			callable = b && b->kind == B_FUNC;
		}
		if (callable) {
			size_t len;
			const char *s = node_text(c, v, &len);
			*value = xstrndup(s, len > 60 ? 60 : len);
		}
		return callable;
	}
	json_t *lit;
	if (ts_node_is_null(a)) {
		if (unknown || !fb->def)
			return false;
		lit = json_incref(fb->def);
	} else if (!(lit = literal(c, v))) {
		return false;
	}
	bool holds = fb->kind == FB_EQUALS ? value_in(lit, fb->values) : !value_in(lit, fb->values);
	if (holds) {
		if (ts_node_is_null(a)) {
			char *d = json_dumps(lit, JSON_ENCODE_ANY);
			*value = xasprintf("%s (the default)", d ? d : "?");
			free(d);
		} else {
			size_t len;
			const char *s = node_text(c, v, &len);
			*value = xstrndup(s, len > 60 ? 60 : len);
		}
	}
	json_decref(lit);
	return holds;
}

/* ---- call sites ---- */

enum site { SITE_FUNCTION, SITE_CLASS, SITE_METHOD };

static void emit(struct ctx *c, TSNode at, const struct kb_library *lib, const struct kb_entry *e,
		 const char *qualname, bool gpu, const struct kb_fallback *fb, TSNode fb_at,
		 const char *fb_value)
{
	const struct rule *rule;
	const char *target, *msg_t, *fix_t;
	const char *lib_target = e && e->has_target ? e->target : lib->target;
	const char *why = fb ? fb->why : e ? e->why : NULL;
	if (fb) {
		rule = c->ps->fallback_rule;
		target = NULL;
		msg_t = why ? "{short}: {arg}={value} makes {target} fall back to the CPU: {why}"
			    : "{short}: {arg}={value} makes {target} fall back to the CPU";
		fix_t = "keep this call on the CPU, or drop {arg}={value} if the GPU result is acceptable without it";
	} else if (gpu) {
		rule = e && e->rule ? e->rule : lib->rule;
		target = lib_target;
		msg_t = e && e->message ? e->message : lib->message ? lib->message : "{name} has a GPU path: {target}";
		fix_t = fix_template(c, lib, e);
	} else {
		rule = e && e->rule ? e->rule : lib->no_gpu_rule;
		target = NULL;
		msg_t = e && e->message ? e->message
			: lib->no_gpu_message ? lib->no_gpu_message
			: why ? "{name} has no GPU path in {target}: {why}" : "{name} has no GPU path in {target}";
		fix_t = e && e->fix ? e->fix : lib->no_gpu_fix;
	}
	if (!rule)
		return;
	const char *dot = strrchr(qualname, '.');
	char *gpu_name = kb_gpu_name(lib, e, qualname);
	struct tvars v = {
		.name = qualname, .short_name = dot ? dot + 1 : qualname, .gpu_name = gpu_name,
		.target = lib_target, .arg = fb ? fb->arg : NULL, .value = fb_value,
		.why = why, .script = script_name(c),
		.library = e && e->library ? e->library : lib->id,
	};
	struct finding *f = add_finding(c, fb && !ts_node_is_null(fb_at) ? fb_at : at, rule, v.library,
					e && e->library ? e->library : lib->display, target, qualname);
	f->message = expand(msg_t, &v);
	f->fix = fix_t ? expand(fix_t, &v) : NULL;
	if (gpu && !fb) {
		/* An entry with a target of its own (numpy.fromfile -> kvikio) has its own first step. */
		const char *h = e && e->has_target && e->fix ? e->fix
			      : c->src->notebook && lib->notebook_fix ? lib->notebook_fix
			      : lib->headline_fix ? lib->headline_fix : lib->fix;
		f->headline = h ? expand(h, &v) : NULL;
	}
	free(gpu_name);
}

static enum policy method_policy(const struct kb_library *lib, const struct kb_type *type)
{
	return type ? type->methods : lib->unlisted_methods;
}

static void visit_call(struct ctx *c, TSNode call, TSNode callee, TSNode args)
{
	struct res r = resolve(c, callee, 0);
	const struct kb_library *lib = NULL;
	const struct kb_type *type = NULL;
	enum site site;
	if (r.kind == R_QUAL) {
		lib = kb_library_for(c->kb, r.name);
		site = class_like(r.name) ? SITE_CLASS : SITE_FUNCTION;
	} else if (r.kind == R_MEMBER) {
		char *t = member_type(r.name);
		lib = kb_library_for(c->kb, t);
		type = kb_type(c->kb, t);
		free(t);
		site = SITE_METHOD;
	}
	if (!lib) {
		free(r.name);
		return;
	}
	const struct kb_entry *e = kb_lookup(lib, r.name);
	if (e) {
		if (!e->ignore && !e->gpu) {
			emit(c, call, lib, e, r.name, false, NULL, (TSNode){0}, NULL);
		} else if (!e->ignore) {
			for (size_t i = 0; i < e->nfallbacks; i++) {
				TSNode at;
				char *value;
				if (fallback_holds(c, args, &e->fallbacks[i], &at, &value)) {
					emit(c, call, lib, e, r.name, true, &e->fallbacks[i], at, value);
					free(value);
					free(r.name);
					return;
				}
				free(value);
			}
			/* A method entry exists to check its fallbacks (fit's sample_weight);
			 * the call itself counts only where the type's methods are ports. */
			if (site != SITE_METHOD || method_policy(lib, type) == POL_PORT)
				emit(c, call, lib, e, r.name, true, NULL, (TSNode){0}, NULL);
		}
	} else {
		enum policy p = site == SITE_CLASS ? lib->unlisted_classes
			      : site == SITE_FUNCTION ? lib->unlisted_functions
			      : method_policy(lib, type);
		if (p != POL_IGNORE)
			emit(c, call, lib, NULL, r.name, p == POL_PORT, NULL, (TSNode){0}, NULL);
	}
	free(r.name);
}

/* ---- imports ---- */

static void import_finding(struct ctx *c, TSNode stmt, const char *module)
{
	const struct kb_entry *e = kb_import(c->kb, module);
	if (!e)
		return;
	/* One finding per library per file: "this file uses PyTorch" is one fact. */
	for (size_t i = 0; i < c->nimported; i++)
		if (c->imported[i] == e)
			return;
	if (c->nimported < sizeof c->imported / sizeof *c->imported)
		c->imported[c->nimported++] = e;
	const struct kb_library *lib = e->lib;
	const char *target = e->has_target ? e->target : lib->target;
	struct tvars v = {.name = module, .short_name = module, .target = target, .why = e->why,
			  .script = script_name(c), .library = e->library ? e->library : lib->id};
	struct finding *f = add_finding(c, stmt, e->rule, v.library,
					e->library ? e->library : lib->display, target, module);
	f->message = expand(e->message ? e->message : "{name}: {why}", &v);
	const char *fix_t = fix_template(c, lib, e);
	f->fix = fix_t ? expand(fix_t, &v) : NULL;
}

static char *dotted(const struct ctx *c, TSNode n)
{
	size_t len;
	const char *s = node_text(c, n, &len);
	/* dotted_name text may hold spaces or comments ("a . b"): keep names only */
	struct buf b = {0};
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			buf_putc(&b, s[i]);
	return buf_steal(&b);
}

static void visit_import(struct ctx *c, TSNode stmt)
{
	uint32_t n = ts_node_named_child_count(stmt);
	for (uint32_t i = 0; i < n; i++) {
		TSNode ch = ts_node_named_child(stmt, i);
		enum nk k = kind(c, ch);
		if (k == NK_DOTTED_NAME) { /* import a.b.c  binds a */
			char *full = dotted(c, ch);
			size_t top = strcspn(full, ".");
			char *topname = xstrndup(full, top);
			bind(c, topname, top, B_QUAL, topname);
			import_finding(c, stmt, full);
			free(topname);
			free(full);
		} else if (k == NK_ALIASED_IMPORT) { /* import a.b as x  binds x = a.b */
			char *full = dotted(c, field(c, ch, F_NAME));
			bind_node(c, field(c, ch, F_ALIAS), B_QUAL, full);
			import_finding(c, stmt, full);
			free(full);
		}
	}
}

static void visit_import_from(struct ctx *c, TSNode stmt)
{
	TSNode mod = field(c, stmt, F_MODULE_NAME);
	if (ts_node_is_null(mod) || kind(c, mod) != NK_DOTTED_NAME)
		return; /* relative imports name this project's own modules */
	char *base = dotted(c, mod);
	uint32_t n = ts_node_named_child_count(stmt);
	for (uint32_t i = 0; i < n; i++) {
		TSNode ch = ts_node_named_child(stmt, i);
		if (ts_node_eq(ch, mod))
			continue;
		enum nk k = kind(c, ch);
		TSNode name_node = ch, alias = ch;
		if (k == NK_WILDCARD_IMPORT) {
			ptrvec_push(&c->scopes[c->nscopes - 1].stars, xstrdup(base));
			import_finding(c, stmt, base);
			continue;
		}
		if (k == NK_ALIASED_IMPORT) {
			name_node = field(c, ch, F_NAME);
			alias = field(c, ch, F_ALIAS);
		} else if (k != NK_DOTTED_NAME) {
			continue;
		}
		char *name = dotted(c, name_node);
		char *full = xasprintf("%s.%s", base, name);
		if (k == NK_ALIASED_IMPORT)
			bind_node(c, alias, B_QUAL, full);
		else
			bind(c, name, strlen(name), B_QUAL, full);
		import_finding(c, stmt, full);
		free(name);
		free(full);
	}
	free(base);
}

/* ---- bindings from definitions and assignments ---- */

/* Binds every identifier a parameter list introduces as unknown. */
static void bind_params(struct ctx *c, TSNode params)
{
	if (ts_node_is_null(params))
		return;
	uint32_t n = ts_node_named_child_count(params);
	for (uint32_t i = 0; i < n; i++) {
		TSNode p = ts_node_named_child(params, i);
		if (kind(c, p) == NK_IDENTIFIER) {
			bind_node(c, p, B_SHADOW, NULL);
			continue;
		}
		TSNode name = field(c, p, F_NAME);
		if (ts_node_is_null(name) && ts_node_named_child_count(p) > 0)
			name = ts_node_named_child(p, 0);
		if (!ts_node_is_null(name) && kind(c, name) == NK_IDENTIFIER)
			bind_node(c, name, B_SHADOW, NULL);
	}
}

/* Binds the identifiers of an assignment or loop target as unknown. */
static void shadow_targets(struct ctx *c, TSNode t, int depth)
{
	if (ts_node_is_null(t) || depth > 32)
		return;
	enum nk k = kind(c, t);
	if (k == NK_IDENTIFIER) {
		bind_node(c, t, B_SHADOW, NULL);
		return;
	}
	if (k == NK_ATTRIBUTE || k == NK_SUBSCRIPT)
		return;
	uint32_t n = ts_node_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		shadow_targets(c, ts_node_named_child(t, i), depth + 1);
}

static void visit_assignment(struct ctx *c, TSNode a)
{
	TSNode left = field(c, a, F_LEFT), right = field(c, a, F_RIGHT);
	if (kind(c, left) != NK_IDENTIFIER || ts_node_is_null(right)) {
		shadow_targets(c, left, 0);
		return;
	}
	struct res r = resolve(c, right, 0);
	if (r.kind == R_QUAL)
		bind_node(c, left, B_QUAL, r.name);
	else if (r.kind == R_VALUE)
		bind_node(c, left, B_VALUE, r.name);
	else
		bind_node(c, left, B_SHADOW, NULL);
	free(r.name);
}

/* ---- the walk ---- */

/* Called on entering a node; returns false to skip its children. */
static bool enter(struct ctx *c, TSNode n)
{
	switch (kind(c, n)) {
	case NK_CALL:
		visit_call(c, n, field(c, n, F_FUNCTION), field(c, n, F_ARGUMENTS));
		return true;
	case NK_DECORATOR: {
		TSNode e = ts_node_named_child(n, 0);
		enum nk k = ts_node_is_null(e) ? NK_OTHER : kind(c, e);
		if (k == NK_IDENTIFIER || k == NK_ATTRIBUTE)
			visit_call(c, n, e, (TSNode){0});
		return true;
	}
	case NK_IMPORT:
		visit_import(c, n);
		return false;
	case NK_IMPORT_FROM:
		visit_import_from(c, n);
		return false;
	case NK_FUTURE_IMPORT:
		return false;
	case NK_FUNCTION_DEF: {
		TSNode name = field(c, n, F_NAME);
		if (!ts_node_is_null(name))
			bind_node(c, name, B_FUNC, NULL);
		push_scope(c, false);
		bind_params(c, field(c, n, F_PARAMETERS));
		return true;
	}
	case NK_CLASS_DEF: {
		TSNode name = field(c, n, F_NAME);
		if (!ts_node_is_null(name))
			bind_node(c, name, B_FUNC, NULL);
		push_scope(c, true);
		return true;
	}
	case NK_LAMBDA:
		push_scope(c, false);
		bind_params(c, field(c, n, F_PARAMETERS));
		return true;
	case NK_FOR:
		shadow_targets(c, field(c, n, F_LEFT), 0);
		return true;
	case NK_EXCEPT:
		c->except_depth++;
		return true;
	default:
		return true;
	}
}

static void leave(struct ctx *c, TSNode n)
{
	switch (kind(c, n)) {
	case NK_FUNCTION_DEF:
	case NK_CLASS_DEF:
	case NK_LAMBDA:
		if (c->nscopes > 1)
			pop_scope(c);
		break;
	case NK_ASSIGNMENT:
		visit_assignment(c, n);
		break;
	case NK_EXCEPT:
		c->except_depth--;
		break;
	default:
		break;
	}
}

static void walk(struct ctx *c, TSNode root)
{
	TSTreeCursor cur = ts_tree_cursor_new(root);
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		if (enter(c, n) && ts_tree_cursor_goto_first_child(&cur))
			continue;
		if (!ts_node_eq(n, root))
			leave(c, n);
		bool done = false;
		while (!ts_tree_cursor_goto_next_sibling(&cur)) {
			if (!ts_tree_cursor_goto_parent(&cur)) {
				done = true;
				break;
			}
			TSNode p = ts_tree_cursor_current_node(&cur);
			leave(c, p);
			if (ts_node_eq(p, root)) {
				done = true;
				break;
			}
		}
		if (done || ts_node_eq(n, root))
			break;
	}
	ts_tree_cursor_delete(&cur);
}

/* The first syntax error: an ERROR or MISSING node, found by descending only
 * into subtrees that contain one. */
static TSNode first_error(TSNode root)
{
	TSNode n = root;
	for (int guard = 0; guard < 100000; guard++) {
		if (ts_node_is_missing(n) || strcmp(ts_node_type(n), "ERROR") == 0)
			return n;
		uint32_t k = ts_node_child_count(n);
		bool found = false;
		for (uint32_t i = 0; i < k; i++) {
			TSNode ch = ts_node_child(n, i);
			if (ts_node_has_error(ch)) {
				n = ch;
				found = true;
				break;
			}
		}
		if (!found)
			return n;
	}
	return n;
}

static int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->start_byte != y->start_byte)
		return x->start_byte < y->start_byte ? -1 : 1;
	return x->end_byte < y->end_byte ? -1 : x->end_byte > y->end_byte;
}

bool pyscan(struct pyscanner *ps, const struct source *src, struct scan_result *out, char **why)
{
	*why = NULL;
	memset(out, 0, sizeof *out);
	TSTree *tree = ts_parser_parse_string(ps->parser, NULL, src->text, (uint32_t)src->len);
	if (!tree) {
		ts_parser_reset(ps->parser);
		*why = xstrdup("the parser gave up (time limit); the file is too large or too deeply nested");
		return false;
	}
	TSNode root = ts_tree_root_node(tree);
	struct ctx c = {.ps = ps, .kb = ps->kb, .src = src, .text = src->text, .out = out};
	push_scope(&c, false);
	walk(&c, root);
	while (c.nscopes > 0)
		pop_scope(&c);
	free(c.scopes);
	if (ts_node_has_error(root)) {
		TSNode e = first_error(root);
		uint32_t col;
		position(&c, ts_node_start_point(e), ts_node_start_byte(e), &out->syntax_error_line, &col,
			 &out->syntax_error_cell);
	}
	ts_tree_delete(tree);
	if (out->n > 1)
		qsort(out->items, out->n, sizeof *out->items, finding_cmp);
	return true;
}
