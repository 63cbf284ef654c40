/* pyscan: see pyscan.h; the parts are listed in pyscan_int.h.
 *
 * This part parses a file into a pytree (pyparse, or tree-sitter where it
 * declines, copied by pytree_from_ts) and walks it with an explicit stack
 * (no recursion over the tree, so 10,000-deep nesting is fine), keeping the
 * ancestors of the current node, the enclosing loops, the function bodies
 * and the Python scopes.
 * Names resolve in source order, innermost function scope first, class
 * scopes only from directly inside them, as Python does. A second pass runs
 * when call sites showed that a function of the file receives GPU arrays:
 * then its parameters are typed from those call sites. Last, findings are
 * ranked by how hot their place is (loop depth, or a function called from a
 * loop), and the ones that matter only in a loop are dropped elsewhere. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pyscan_int.h"

const TSLanguage *tree_sitter_python(void);

/* How long the parser may spend on one file before giving up. */
#define PARSE_TIMEOUT_US (20u * 1000u * 1000u)
/* Deepest attribute / call chain resolved; beyond it a name is unknown. */
#define RESOLVE_DEPTH 48

static const char *const nk_names[NK_COUNT] = {
	[NK_CALL] = "call", [NK_ATTRIBUTE] = "attribute", [NK_IDENTIFIER] = "identifier",
	[NK_IMPORT] = "import_statement", [NK_IMPORT_FROM] = "import_from_statement",
	[NK_ALIASED_IMPORT] = "aliased_import", [NK_DOTTED_NAME] = "dotted_name",
	[NK_WILDCARD_IMPORT] = "wildcard_import", [NK_RELATIVE_IMPORT] = "relative_import",
	[NK_FUNCTION_DEF] = "function_definition", [NK_CLASS_DEF] = "class_definition",
	[NK_LAMBDA] = "lambda", [NK_ASSIGNMENT] = "assignment",
	[NK_AUG_ASSIGNMENT] = "augmented_assignment", [NK_DECORATOR] = "decorator",
	[NK_KEYWORD_ARGUMENT] = "keyword_argument", [NK_ARGUMENT_LIST] = "argument_list",
	[NK_STRING] = "string", [NK_STRING_CONTENT] = "string_content",
	[NK_INTERPOLATION] = "interpolation", [NK_INTEGER] = "integer", [NK_FLOAT] = "float",
	[NK_TRUE] = "true", [NK_FALSE] = "false", [NK_NONE] = "none",
	[NK_UNARY] = "unary_operator", [NK_PARENTHESIZED] = "parenthesized_expression",
	[NK_FOR] = "for_statement", [NK_WHILE] = "while_statement", [NK_IF] = "if_statement",
	[NK_SUBSCRIPT] = "subscript", [NK_LIST_SPLAT] = "list_splat",
	[NK_DICT_SPLAT] = "dictionary_splat", [NK_EXCEPT] = "except_clause", [NK_ERROR] = "ERROR",
	[NK_FUTURE_IMPORT] = "future_import_statement", [NK_COMMENT] = "comment",
	[NK_BINARY] = "binary_operator", [NK_COMPARISON] = "comparison_operator",
	[NK_BOOLEAN] = "boolean_operator", [NK_RETURN] = "return_statement",
	[NK_LIST_COMP] = "list_comprehension", [NK_SET_COMP] = "set_comprehension",
	[NK_DICT_COMP] = "dictionary_comprehension", [NK_GENERATOR] = "generator_expression",
	[NK_TUPLE] = "tuple", [NK_LIST] = "list", [NK_NAMED_EXPR] = "named_expression",
	[NK_PATTERN_LIST] = "pattern_list", [NK_TUPLE_PATTERN] = "tuple_pattern",
	[NK_AS_PATTERN] = "as_pattern", [NK_WITH_ITEM] = "with_item", [NK_SLICE] = "slice",
	[NK_DECORATED_DEF] = "decorated_definition",
};

static const char *const field_names[F_COUNT] = {
	"function", "arguments", "object", "attribute", "name", "alias", "module_name",
	"parameters", "left", "right", "value", "argument", "body", "condition",
	"subscript", "operator",
};

struct pyscanner *pyscanner_new(const struct kb *kb)
{
	struct pyscanner *ps = xcalloc(1, sizeof *ps);
	const TSLanguage *lang = tree_sitter_python();
	ps->kb = kb;
	ps->fast = pyparser_new(lang);
	pt_init(&ps->tree);
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
			if (nk_names[k] && strcmp(name, nk_names[k]) == 0)
				ps->kinds[s] = (uint8_t)k;
	}
	for (int f = 0; f < F_COUNT; f++)
		ps->fields[f] = ts_language_field_id_for_name(lang, field_names[f],
							      (uint32_t)strlen(field_names[f]));
	ps->fallback_rule = kb_rule(kb, "GPU301");
	ps->keep_text = true;
	for (int i = 0; i < 5; i++) {
		char id[8];
		snprintf(id, sizeof id, "GPU60%d", i + 1);
		ps->anti[i] = kb_rule(kb, id);
	}
	return ps;
}

void pyscanner_keep_text(struct pyscanner *ps, bool keep)
{
	ps->keep_text = keep;
}

void pyscanner_free(struct pyscanner *ps)
{
	if (!ps)
		return;
	ts_parser_delete(ps->parser);
	pyparser_free(ps->fast);
	pt_free(&ps->tree);
	free(ps->kinds);
	free(ps);
}

void finding_free(struct finding *f)
{
	free(f->symbol);
	free(f->message);
	free(f->fix);
	free(f->headline);
	free(f->line_text);
	free(f->rank_reason);
}

void scan_result_free(struct scan_result *r)
{
	if (!r)
		return;
	if (r->strings)
		free(r->strings);
	else
		for (size_t i = 0; i < r->n; i++)
			finding_free(&r->items[i]);
	free(r->items);
	memset(r, 0, sizeof *r);
}

/* ---- nodes ---- */

/* Error recovery can leave any field empty, so every node query accepts a
 * null node (as the pn_* accessors do). */
enum nk node_kind(const struct ctx *c, PNode n)
{
	if (pn_is_null(n))
		return NK_OTHER;
	TSSymbol s = pn_symbol(n);
	return s < c->ps->nsymbols ? (enum nk)c->ps->kinds[s] : NK_OTHER;
}

PNode node_field(const struct ctx *c, PNode n, enum field f)
{
	if (pn_is_null(n))
		return n;
	return pn_child_by_field(n, c->ps->fields[f]);
}

const char *node_text(const struct ctx *c, PNode n, size_t *len)
{
	if (pn_is_null(n)) {
		*len = 0;
		return "";
	}
	uint32_t a = pn_start_byte(n), b = pn_end_byte(n);
	*len = b - a;
	return c->text + a;
}

bool node_text_is(const struct ctx *c, PNode n, const char *s)
{
	size_t len;
	const char *t = node_text(c, n, &len);
	return len == strlen(s) && memcmp(t, s, len) == 0;
}

uint32_t node_line(PNode n)
{
	return pn_start_point(n).row + 1;
}

/* ---- scopes ---- */

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

static void bind(struct ctx *c, const char *name, size_t len, enum bkind k, const char *qual, int func)
{
	struct symtab *t = &c->scopes[c->nscopes - 1].tab;
	if (c->except_depth > 0 && k == B_SHADOW) {
		/* `except ImportError: cp = None` keeps the import's meaning. */
		const struct binding *old = symtab_get(t, name, len);
		if (old && old->kind == B_QUAL)
			return;
	}
	symtab_set(t, name, len, k, qual, func);
}

static void bind_node(struct ctx *c, PNode id, enum bkind k, const char *qual)
{
	size_t len;
	const char *s = node_text(c, id, &len);
	if (len)
		bind(c, s, len, k, qual, -1);
}

void scope_bind_qual(struct ctx *c, const char *name, size_t len, const char *qual)
{
	bind(c, name, len, B_QUAL, qual, -1);
}

void scope_bind_node_qual(struct ctx *c, PNode id, const char *qual)
{
	bind_node(c, id, B_QUAL, qual);
}

void scope_add_star(struct ctx *c, const char *module)
{
	ptrvec_push(&c->scopes[c->nscopes - 1].stars, xstrdup(module));
}

const struct binding *scope_lookup(const struct ctx *c, const char *name, size_t len)
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

int current_func(const struct ctx *c)
{
	return c->nframes ? c->frames[c->nframes - 1].func : -1;
}

/* ---- resolution ---- */

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
char *member_type(const char *member)
{
	const char *dot = strrchr(member, '.');
	return xstrndup(member, dot ? (size_t)(dot - member) : strlen(member));
}

static struct res typed(const char *type, const char *self)
{
	if (!type || strcmp(type, "none") == 0)
		return res_none();
	return (struct res){R_VALUE, xstrdup(strcmp(type, "self") == 0 && self ? self : type)};
}

/* The record of the function of this file that a callee names, or NULL. */
static struct funcrec *local_function(const struct ctx *c, PNode callee)
{
	if (node_kind(c, callee) != NK_IDENTIFIER)
		return NULL;
	size_t len;
	const char *s = node_text(c, callee, &len);
	const struct binding *b = scope_lookup(c, s, len);
	return b && b->kind == B_FUNC && b->func >= 0 ? &c->funcs[b->func] : NULL;
}

/* The type of the value a call returns, if gpuopt knows it. */
static struct res call_result(struct ctx *c, PNode call, int depth)
{
	PNode callee = node_field(c, call, F_FUNCTION);
	struct funcrec *fr = local_function(c, callee);
	if (fr)
		return typed(fr->ret_type, NULL);
	struct res f = resolve(c, callee, depth + 1);
	struct res r = res_none();
	const char *self = NULL;
	char *type = NULL;
	const struct kb_library *lib = NULL;
	if (f.kind == R_QUAL) {
		lib = kb_library_for(c->kb, f.name);
	} else if (f.kind == R_MEMBER) {
		type = member_type(f.name);
		self = type;
		lib = kb_library_for(c->kb, type);
	}
	const struct kb_entry *e = lib ? kb_lookup(lib, f.name) : NULL;
	if (e && e->has_device_if) {
		PNode at;
		char *value;
		if (condition_holds(c, node_field(c, call, F_ARGUMENTS), &e->device_if, &at, &value)) {
			free(value);
			r = typed(e->device_returns, self);
			goto out;
		}
	}
	if (e && e->returns) {
		r = typed(e->returns, self);
	} else if (f.kind == R_QUAL && e && !e->ignore && !e->is_pattern && class_like(f.name)) {
		r = typed(f.name, NULL);
	} else if (f.kind == R_QUAL && lib && lib->returns) {
		r = typed(lib->returns, NULL);
	} else if (f.kind == R_MEMBER) {
		const struct kb_type *t = kb_type(c->kb, type);
		if (t && (t->methods == POL_PORT || t->returns_self))
			r = typed(type, NULL);
	}
out:
	free(type);
	free(f.name);
	return r;
}

const struct kb_type *device_type(const struct ctx *c, const struct res *r)
{
	if (r->kind != R_VALUE)
		return NULL;
	const struct kb_type *t = kb_type(c->kb, r->name);
	return t && t->device ? t : NULL;
}

/* The value an attribute read gives: the same type, unless it is host
 * metadata (shape, dtype, ...) or the type keeps no methods' type. */
static struct res member_value(struct ctx *c, struct res m)
{
	char *type = member_type(m.name);
	const struct kb_type *t = kb_type(c->kb, type);
	const char *attr = m.name + strlen(type) + 1;
	struct res r = res_none();
	if (t && (t->returns_self || t->methods == POL_PORT)) {
		bool host = false;
		size_t i;
		json_t *a;
		json_array_foreach(t->host_attributes, i, a)
			host |= strcmp(json_string_value(a), attr) == 0;
		if (!host)
			r = typed(type, NULL);
	}
	free(type);
	free(m.name);
	return r;
}

struct res resolve_value(struct ctx *c, PNode n)
{
	struct res r = resolve(c, n, 0);
	return r.kind == R_MEMBER ? member_value(c, r) : r;
}

/* An operator's result: a device array if either operand is one, else an
 * array if either operand is. */
static struct res operator_result(struct ctx *c, PNode n, int depth)
{
	struct res best = res_none();
	uint32_t k = pn_named_child_count(n);
	for (uint32_t i = 0; i < k && i < 4; i++) {
		struct res r = resolve(c, pn_named_child(n, i), depth + 1);
		if (r.kind == R_MEMBER)
			r = member_value(c, r);
		if (r.kind == R_VALUE && (best.kind == R_NONE || (device_type(c, &r) && !device_type(c, &best)))) {
			free(best.name);
			best = r;
		} else {
			free(r.name);
		}
	}
	return best;
}

struct res resolve(struct ctx *c, PNode n, int depth)
{
	if (pn_is_null(n) || depth > RESOLVE_DEPTH)
		return res_none();
	switch (node_kind(c, n)) {
	case NK_IDENTIFIER: {
		size_t len;
		const char *s = node_text(c, n, &len);
		const struct binding *b = scope_lookup(c, s, len);
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
		struct res o = resolve(c, node_field(c, n, F_OBJECT), depth + 1);
		if (o.kind == R_MEMBER)
			o = member_value(c, o);
		if (o.kind != R_QUAL && o.kind != R_VALUE) {
			free(o.name);
			return res_none();
		}
		size_t len;
		const char *a = node_text(c, node_field(c, n, F_ATTRIBUTE), &len);
		struct res r = {o.kind == R_QUAL ? R_QUAL : R_MEMBER,
				xasprintf("%s.%.*s", o.name, (int)len, a)};
		free(o.name);
		return r;
	}
	case NK_CALL:
		return call_result(c, n, depth);
	case NK_SUBSCRIPT: {
		struct res v = resolve(c, node_field(c, n, F_VALUE), depth + 1);
		if (v.kind == R_MEMBER)
			v = member_value(c, v);
		if (v.kind == R_VALUE) {
			const struct kb_type *t = kb_type(c->kb, v.name);
			if (t && (t->methods == POL_PORT || t->returns_self))
				return v;
		}
		free(v.name);
		return res_none();
	}
	case NK_BINARY:
	case NK_UNARY:
	case NK_COMPARISON:
		return operator_result(c, n, depth);
	case NK_PARENTHESIZED:
		return resolve(c, pn_named_child(n, 0), depth + 1);
	default:
		return res_none();
	}
}

/* ---- findings ---- */

static void position(const struct ctx *c, struct pt_point pt, uint32_t byte, uint32_t *line,
		     uint32_t *col, uint32_t *cell)
{
	*col = source_column(c->src, byte - pt.col, pt.col);
	if (c->src->notebook && pt.row < c->src->nlines) {
		*cell = c->src->line_cell[pt.row];
		*line = c->src->line_in_cell[pt.row] + 1;
	} else {
		*cell = 0;
		*line = pt.row + 1;
	}
}

/* The line of a node as the user sees it (in its cell, for notebooks). */
static uint32_t user_line(const struct ctx *c, PNode n, uint32_t *cell)
{
	uint32_t line, col;
	position(c, pn_start_point(n), pn_start_byte(n), &line, &col, cell);
	return line;
}

struct finding *add_finding(struct ctx *c, PNode at, const struct rule *rule,
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
	f->start_byte = pn_start_byte(at);
	f->end_byte = pn_end_byte(at);
	uint32_t end_cell;
	position(c, pn_start_point(at), f->start_byte, &f->line, &f->col, &f->cell);
	position(c, pn_end_point(at), f->end_byte, &f->end_line, &f->end_col, &end_cell);
	if (end_cell != f->cell) { /* cannot span cells; clamp to the start */
		f->end_line = f->line;
		f->end_col = f->col;
	}
	f->rule = rule;
	f->library = library;
	f->display = display;
	f->target = target;
	f->symbol = xstrdup(symbol);
	f->func = current_func(c);
	f->loop_depth = (uint32_t)c->nloops;
	f->loop_line = c->nloops ? c->loops[c->nloops - 1].line : 0;
	if (!c->ps->keep_text)
		return f;
	/* The whole source line, for code frames (capped on a character boundary). */
	uint32_t ls = f->start_byte - pn_start_point(at).col;
	const char *line = c->text + ls;
	const char *nl = memchr(line, '\n', c->src->len - ls);
	size_t n = nl ? (size_t)(nl - line) : c->src->len - ls;
	if (n > 400) {
		n = 400;
		while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--;
	}
	while (n > 0 && line[n - 1] == '\r')
		n--;
	f->line_text = xstrndup(line, n);
	return f;
}

void finding_end_at(struct ctx *c, struct finding *f, PNode end)
{
	uint32_t cell;
	position(c, pn_end_point(end), pn_end_byte(end), &f->end_line, &f->end_col, &cell);
	f->end_byte = pn_end_byte(end);
	if (cell != f->cell) {
		f->end_line = f->line;
		f->end_col = f->col;
	}
}

/* ---- functions of the file ---- */

static int function_record(struct ctx *c, PNode def)
{
	size_t len;
	const char *name = node_text(c, node_field(c, def, F_NAME), &len);
	if (c->funcs_seen < c->nfuncs) { /* pass 2: the same definitions, in order */
		c->funcs[c->funcs_seen].hot_line = 0;
		return (int)c->funcs_seen++;
	}
	if (c->nfuncs == c->capfuncs) {
		c->capfuncs = c->capfuncs ? c->capfuncs * 2 : 16;
		c->funcs = xrealloc(c->funcs, c->capfuncs * sizeof *c->funcs);
	}
	struct funcrec *f = &c->funcs[c->nfuncs];
	memset(f, 0, sizeof *f);
	f->name = xstrndup(name, len);
	/* positional parameter names, for typing them from keyword arguments */
	PNode params = node_field(c, def, F_PARAMETERS);
	uint32_t n = pn_is_null(params) ? 0 : pn_named_child_count(params);
	f->param_names = xcalloc(n ? n : 1, sizeof *f->param_names);
	f->param_types = xcalloc(n ? n : 1, sizeof *f->param_types);
	f->param_next = xcalloc(n ? n : 1, sizeof *f->param_next);
	f->param_mixed = xcalloc(n ? n : 1, sizeof *f->param_mixed);
	for (uint32_t i = 0; i < n; i++) {
		PNode p = pn_named_child(params, i);
		PNode id = node_kind(c, p) == NK_IDENTIFIER ? p : node_field(c, p, F_NAME);
		if (pn_is_null(id) && pn_named_child_count(p) > 0)
			id = pn_named_child(p, 0);
		if (node_kind(c, id) != NK_IDENTIFIER)
			break; /* *args, **kw: positions end */
		size_t l;
		const char *s = node_text(c, id, &l);
		f->param_names[f->nparams++] = xstrndup(s, l);
	}
	c->funcs_seen = ++c->nfuncs;
	return (int)(c->nfuncs - 1);
}

static void funcs_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct funcrec *f = &c->funcs[i];
		free(f->name);
		free(f->ret_type);
		free(f->ret_next);
		for (size_t k = 0; k < f->nparams; k++) {
			free(f->param_names[k]);
			free(f->param_types[k]);
			free(f->param_next[k]);
		}
		free(f->param_names);
		free(f->param_types);
		free(f->param_next);
		free(f->param_mixed);
	}
	free(c->funcs);
	free(c->calls);
}

/* Notes one type a function returns (or is passed): one type, or mixed. */
static void note_type(char **slot, bool *mixed, const struct res *r)
{
	const char *t = r->kind == R_VALUE ? r->name : NULL;
	if (*mixed)
		return;
	if (!*slot && t) {
		*slot = xstrdup(t);
	} else if (*slot && (!t || strcmp(*slot, t) != 0)) {
		free(*slot);
		*slot = NULL;
		*mixed = true;
	} else if (!*slot && !t) {
		*mixed = true;
	}
}

/* A call to a function of this file: remember where (for hot paths) and,
 * in pass 1, what argument types it gets (for pass 2). */
static void record_local_call(struct ctx *c, PNode call)
{
	struct funcrec *f = local_function(c, node_field(c, call, F_FUNCTION));
	if (!f)
		return;
	if (c->ncalls == c->capcalls) {
		c->capcalls = c->capcalls ? c->capcalls * 2 : 16;
		c->calls = xrealloc(c->calls, c->capcalls * sizeof *c->calls);
	}
	const struct loopframe *l = c->nloops ? &c->loops[c->nloops - 1] : NULL;
	c->calls[c->ncalls++] = (struct callrec){current_func(c), (int)(f - c->funcs),
						 l ? l->line : 0, l ? l->cell : 0};
	PNode args = node_field(c, call, F_ARGUMENTS);
	if (node_kind(c, args) != NK_ARGUMENT_LIST)
		return;
	uint32_t n = pn_named_child_count(args);
	size_t pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		PNode a = pn_named_child(args, i);
		enum nk k = node_kind(c, a);
		size_t slot = pos;
		PNode v = a;
		if (k == NK_LIST_SPLAT || k == NK_DICT_SPLAT)
			return;
		if (k == NK_COMMENT)
			continue;
		if (k == NK_KEYWORD_ARGUMENT) {
			slot = f->nparams;
			for (size_t p = 0; p < f->nparams; p++)
				if (node_text_is(c, node_field(c, a, F_NAME), f->param_names[p]))
					slot = p;
			v = node_field(c, a, F_VALUE);
		} else {
			pos++;
		}
		if (slot >= f->nparams)
			continue;
		struct res r = resolve_value(c, v);
		note_type(&f->param_next[slot], &f->param_mixed[slot], &r);
		free(r.name);
	}
}

/* ---- bindings from definitions and assignments ---- */

/* Binds the parameters of a function (typed in pass 2) or lambda. */
static void bind_params(struct ctx *c, PNode params, const struct funcrec *f)
{
	if (pn_is_null(params))
		return;
	uint32_t n = pn_named_child_count(params);
	for (uint32_t i = 0; i < n; i++) {
		PNode p = pn_named_child(params, i);
		PNode name = node_kind(c, p) == NK_IDENTIFIER ? p : node_field(c, p, F_NAME);
		if (pn_is_null(name) && pn_named_child_count(p) > 0)
			name = pn_named_child(p, 0);
		if (node_kind(c, name) != NK_IDENTIFIER)
			continue;
		const char *type = NULL;
		if (f)
			for (size_t k = 0; k < f->nparams; k++)
				if (node_text_is(c, name, f->param_names[k]))
					type = f->param_types[k];
		bind_node(c, name, type ? B_VALUE : B_SHADOW, type);
	}
}

/* Binds the identifiers of an assignment or loop target as unknown. */
static void shadow_targets(struct ctx *c, PNode t, int depth)
{
	if (pn_is_null(t) || depth > 32)
		return;
	enum nk k = node_kind(c, t);
	if (k == NK_IDENTIFIER) {
		bind_node(c, t, B_SHADOW, NULL);
		return;
	}
	if (k == NK_ATTRIBUTE || k == NK_SUBSCRIPT)
		return;
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		shadow_targets(c, pn_named_child(t, i), depth + 1);
}

static void visit_assignment(struct ctx *c, PNode a)
{
	PNode left = node_field(c, a, F_LEFT), right = node_field(c, a, F_RIGHT);
	if (node_kind(c, left) != NK_IDENTIFIER || pn_is_null(right)) {
		shadow_targets(c, left, 0);
		return;
	}
	struct res r = resolve(c, right, 0);
	if (r.kind == R_MEMBER) {
		/* `X = module.Class` aliases; `y = x.T` reads a value */
		r = member_value(c, r);
	}
	if (r.kind == R_QUAL)
		bind_node(c, left, B_QUAL, r.name);
	else if (r.kind == R_VALUE)
		bind_node(c, left, B_VALUE, r.name);
	else
		bind_node(c, left, B_SHADOW, NULL);
	free(r.name);
}

static void visit_return(struct ctx *c, PNode ret)
{
	int f = current_func(c);
	if (f < 0)
		return;
	PNode v = pn_named_child(ret, 0);
	struct res r = pn_is_null(v) ? res_none() : resolve_value(c, v);
	note_type(&c->funcs[f].ret_next, &c->funcs[f].ret_mixed, &r);
	free(r.name);
}

/* At the end of a definition its return type is known for later calls. */
static void commit_return(struct ctx *c, int f)
{
	if (f < 0)
		return;
	struct funcrec *fr = &c->funcs[f];
	free(fr->ret_type);
	fr->ret_type = fr->ret_mixed ? NULL : fr->ret_next;
	if (fr->ret_mixed)
		free(fr->ret_next);
	fr->ret_next = NULL;
	fr->ret_mixed = false;
}

/* ---- the walk ---- */

static void push_loop(struct ctx *c, PNode node, PNode stmt)
{
	if (c->nloops == c->caploops) {
		c->caploops = c->caploops ? c->caploops * 2 : 8;
		c->loops = xrealloc(c->loops, c->caploops * sizeof *c->loops);
	}
	struct loopframe *l = &c->loops[c->nloops++];
	l->node = node;
	l->stmt = stmt;
	l->line = user_line(c, stmt, &l->cell);
}

static void push_frame(struct ctx *c, int func)
{
	if (c->nframes == c->capframes) {
		c->capframes = c->capframes ? c->capframes * 2 : 8;
		c->frames = xrealloc(c->frames, c->capframes * sizeof *c->frames);
	}
	c->frames[c->nframes++] = (struct frame){.func = func};
}

/* Is a decorated definition compiled by Numba (numba.jit, njit, vectorize...)? */
static bool jit_decorated(struct ctx *c, PNode decorated)
{
	uint32_t n = pn_named_child_count(decorated);
	for (uint32_t i = 0; i < n; i++) {
		PNode d = pn_named_child(decorated, i);
		if (node_kind(c, d) != NK_DECORATOR)
			continue;
		PNode e = pn_named_child(d, 0);
		if (node_kind(c, e) == NK_CALL)
			e = node_field(c, e, F_FUNCTION);
		struct res r = resolve(c, e, 0);
		bool jit = r.kind == R_QUAL && str_starts_with(r.name, "numba.");
		free(r.name);
		if (jit)
			return true;
	}
	return false;
}

/* Called on entering a node; returns false to skip its children. */
static bool enter(struct ctx *c, PNode n, TSFieldId fid)
{
	PNode parent = c->nanc ? c->anc[c->nanc - 1] : PN_NULL;
	enum nk pk = c->nanc ? node_kind(c, parent) : NK_OTHER;
	if ((pk == NK_FOR && fid == c->ps->fields[F_BODY]) ||
	    (pk == NK_WHILE && (fid == c->ps->fields[F_BODY] || fid == c->ps->fields[F_CONDITION])))
		push_loop(c, n, parent);
	if (pk == NK_WHILE && fid == c->ps->fields[F_CONDITION])
		gpu_check_condition(c, n); /* evaluated every iteration */
	switch (node_kind(c, n)) {
	case NK_CALL:
		lib_visit_call(c, n, node_field(c, n, F_FUNCTION), node_field(c, n, F_ARGUMENTS));
		record_local_call(c, n);
		return true;
	case NK_DECORATOR: {
		PNode e = pn_named_child(n, 0);
		enum nk k = node_kind(c, e);
		if (k == NK_IDENTIFIER || k == NK_ATTRIBUTE)
			lib_visit_call(c, n, e, PN_NULL);
		return true;
	}
	case NK_IMPORT:
		lib_visit_import(c, n);
		return false;
	case NK_IMPORT_FROM:
		lib_visit_import_from(c, n);
		return false;
	case NK_FUTURE_IMPORT:
		return false;
	case NK_FUNCTION_DEF: {
		int fi = function_record(c, n);
		c->funcs[fi].jitted = pk == NK_DECORATED_DEF && jit_decorated(c, parent);
		PNode name = node_field(c, n, F_NAME);
		size_t len;
		const char *s = node_text(c, name, &len);
		if (len)
			bind(c, s, len, B_FUNC, NULL, fi);
		push_scope(c, false);
		push_frame(c, fi);
		bind_params(c, node_field(c, n, F_PARAMETERS), &c->funcs[fi]);
		return true;
	}
	case NK_CLASS_DEF: {
		PNode name = node_field(c, n, F_NAME);
		size_t len;
		const char *s = node_text(c, name, &len);
		if (len)
			bind(c, s, len, B_FUNC, NULL, -1);
		push_scope(c, true);
		return true;
	}
	case NK_LAMBDA:
		push_scope(c, false);
		bind_params(c, node_field(c, n, F_PARAMETERS), NULL);
		return true;
	case NK_FOR:
		shadow_targets(c, node_field(c, n, F_LEFT), 0);
		gpu_enter_for(c, n);
		return true;
	case NK_IF:
		gpu_check_condition(c, node_field(c, n, F_CONDITION));
		return true;
	case NK_LIST_COMP:
	case NK_SET_COMP:
	case NK_DICT_COMP:
	case NK_GENERATOR:
		push_loop(c, n, n);
		return true;
	case NK_EXCEPT:
		c->except_depth++;
		return true;
	default:
		return true;
	}
}

static void leave(struct ctx *c, PNode n)
{
	if (c->nloops && pn_eq(c->loops[c->nloops - 1].node, n))
		c->nloops--;
	switch (node_kind(c, n)) {
	case NK_FUNCTION_DEF:
		if (c->nframes > 1) {
			gpu_leave_function(c, c->frames[c->nframes - 1].func);
			commit_return(c, c->frames[c->nframes - 1].func);
			c->nframes--;
		}
		/* fall through */
	case NK_CLASS_DEF:
	case NK_LAMBDA:
		if (c->nscopes > 1)
			pop_scope(c);
		break;
	case NK_ASSIGNMENT:
		visit_assignment(c, n);
		break;
	case NK_AUG_ASSIGNMENT:
		break;
	case NK_RETURN:
		visit_return(c, n);
		break;
	case NK_CALL:
		gpu_after_call(c, n);
		break;
	case NK_BINARY:
		gpu_after_binary(c, n);
		break;
	case NK_EXCEPT:
		c->except_depth--;
		break;
	default:
		break;
	}
}

static void push_ancestor(struct ctx *c, PNode n, uint32_t slot)
{
	if (c->nanc == c->capanc) {
		c->capanc = c->capanc ? c->capanc * 2 : 64;
		c->anc = xrealloc(c->anc, c->capanc * sizeof *c->anc);
		c->ancslot = xrealloc(c->ancslot, c->capanc * sizeof *c->ancslot);
	}
	c->anc[c->nanc] = n;
	c->ancslot[c->nanc++] = slot;
}

/* Visits the tree in source order: enter() on the way down (false skips
 * the children), leave() on the way up, for every node but the root,
 * which is left only if its children were visited. */
static void walk(struct ctx *c, PNode root)
{
	const struct pt_tree *t = root.t;
	PNode n = root;
	for (;;) {
		const struct pt_node *nd = pn_get(n);
		if (enter(c, n, nd->field) && nd->nkids) {
			push_ancestor(c, n, nd->kids);
			n = (PNode){t, t->kids[nd->kids]};
			continue;
		}
		if (!pn_eq(n, root))
			leave(c, n);
		bool done = pn_eq(n, root);
		while (!done) {
			const struct pt_node *p = pn_get(c->anc[c->nanc - 1]);
			uint32_t next = c->ancslot[c->nanc - 1] + 1;
			if (next < p->kids + p->nkids) { /* the next sibling */
				c->ancslot[c->nanc - 1] = next;
				n = (PNode){t, t->kids[next]};
				break;
			}
			PNode up = c->anc[--c->nanc];
			leave(c, up);
			done = pn_eq(up, root);
		}
		if (done)
			break;
	}
}

/* ---- hot paths ---- */

/* Marks every function called from a loop, then every function called from
 * one of those, with the loop that makes it hot. */
static void propagate_hot(struct ctx *c)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < c->ncalls; i++) {
			const struct callrec *k = &c->calls[i];
			struct funcrec *callee = &c->funcs[k->callee];
			if (callee->hot_line)
				continue;
			if (k->loop_line) {
				callee->hot_line = k->loop_line;
				callee->hot_cell = k->loop_cell;
				changed = true;
			} else if (k->caller >= 0 && k->caller != k->callee && c->funcs[k->caller].hot_line) {
				callee->hot_line = c->funcs[k->caller].hot_line;
				callee->hot_cell = c->funcs[k->caller].hot_cell;
				changed = true;
			}
		}
	}
}

static void rank_findings(struct ctx *c)
{
	struct scan_result *r = c->out;
	size_t kept = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct finding *f = &r->items[i];
		if (f->loop_depth) {
			f->rank = 1 + f->loop_depth;
			f->rank_reason = f->loop_depth > 1
				? xasprintf("in a nested loop (%u deep) at line %u", f->loop_depth, f->loop_line)
				: xasprintf("in a loop at line %u", f->loop_line);
		} else if (f->func >= 0 && c->funcs[f->func].hot_line) {
			const struct funcrec *fn = &c->funcs[f->func];
			f->rank = 1;
			f->loop_line = fn->hot_line;
			if (fn->hot_cell && fn->hot_cell != f->cell)
				f->rank_reason = xasprintf("in %s(), called from a loop in cell %u at line %u", fn->name,
							   fn->hot_cell, fn->hot_line);
			else
				f->rank_reason = xasprintf("in %s(), called from a loop at line %u", fn->name, fn->hot_line);
		}
		if (f->needs_loop && f->rank == 0) {
			finding_free(f);
			continue;
		}
		r->items[kept++] = *f;
	}
	r->n = kept;
}

static int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->start_byte != y->start_byte)
		return x->start_byte < y->start_byte ? -1 : 1;
	if (x->end_byte != y->end_byte)
		return x->end_byte < y->end_byte ? -1 : 1;
	return strcmp(x->rule->id, y->rule->id);
}

/* One pass over the tree; findings go to c->out. */
static void run_pass(struct ctx *c, PNode root)
{
	c->funcs_seen = 0;
	c->ncalls = 0;
	c->nimported = 0;
	c->except_depth = 0;
	c->pyloop_until = 0;
	push_scope(c, false);
	push_frame(c, -1);
	walk(c, root);
	while (c->nscopes > 0)
		pop_scope(c);
	c->nframes = 0;
	c->nloops = 0;
	c->nanc = 0;
}

/* After a pass: take the parameter types the call sites agreed on. Another
 * pass is worth it when a parameter newly became a device array. */
static bool learn_params(struct ctx *c)
{
	bool changed = false;
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct funcrec *f = &c->funcs[i];
		for (size_t k = 0; k < f->nparams; k++) {
			char *next = f->param_mixed[k] ? NULL : f->param_next[k];
			struct res r = {R_VALUE, next};
			bool dev = next && device_type(c, &r);
			bool same = (!next && !f->param_types[k]) ||
				    (next && f->param_types[k] && strcmp(next, f->param_types[k]) == 0);
			if (dev && !same) {
				free(f->param_types[k]);
				f->param_types[k] = next;
				f->param_next[k] = NULL;
				changed = true;
			} else {
				free(f->param_next[k]);
				f->param_next[k] = NULL;
			}
			f->param_mixed[k] = false;
		}
	}
	return changed;
}

bool pyscan(struct pyscanner *ps, const struct source *src, struct scan_result *out, char **why)
{
	*why = NULL;
	memset(out, 0, sizeof *out);
	if (!pyparse(ps->fast, src->text, (uint32_t)src->len, &ps->tree)) {
		/* A fresh external scanner each time: tree-sitter-python 0.23's keeps
		 * "inside an f-string" from a file that ended in one, and would then
		 * misread the next file's dedents as syntax errors. */
		ts_parser_set_language(ps->parser, tree_sitter_python());
		TSTree *tree = ts_parser_parse_string(ps->parser, NULL, src->text, (uint32_t)src->len);
		if (!tree) {
			ts_parser_reset(ps->parser);
			*why = xstrdup("the parser gave up (time limit); the file is too large or too deeply nested");
			return false;
		}
		pytree_from_ts(&ps->tree, ts_tree_root_node(tree));
		ts_tree_delete(tree);
	}
	PNode root = pn_root(&ps->tree);
	struct ctx c = {.ps = ps, .kb = ps->kb, .src = src, .text = src->text, .out = out};
	/* Up to three passes: each may type parameters from what the last one
	 * learned at call sites (main() passes a CuPy array to wrong_way(a)). */
	for (c.pass = 1;; c.pass++) {
		run_pass(&c, root);
		if (c.pass == 3 || !learn_params(&c))
			break;
		scan_result_free(out);
	}
	propagate_hot(&c);
	rank_findings(&c);
	if (ps->tree.first_error != PT_NULL) {
		PNode e = {&ps->tree, ps->tree.first_error};
		uint32_t col;
		position(&c, pn_start_point(e), pn_start_byte(e), &out->syntax_error_line, &col,
			 &out->syntax_error_cell);
	}
	free(c.scopes);
	free(c.anc);
	free(c.ancslot);
	free(c.loops);
	free(c.frames);
	funcs_free(&c);
	pt_clear(&ps->tree);
	if (out->n > 1)
		qsort(out->items, out->n, sizeof *out->items, finding_cmp);
	return true;
}
