/* names: the scanner's model of names for the library rules — the Python
 * scopes and what each name is bound to (an import's qualified name, a
 * value of a known type, a function of the file), resolved in source order
 * the way Python binds them; the types of values that come out of known
 * library calls; the functions of the file with the types their call sites
 * pass and their returns give; and adding a finding at the walker's place.
 * The walker (pyscan.c) drives it; the rules (rules_lib.c, rules_loops.c)
 * ask it. It calls neither. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "pyscan_int.h"

/* Deepest attribute / call chain resolved; beyond it a name is unknown. */
#define RESOLVE_DEPTH 48

/* ---- nodes ---- */

/* Error recovery can leave any field empty, so every node query accepts a
 * null node (as the pn_* accessors do). */
enum nk node_kind(const struct ctx *c, PNode n)
{
	return nk_of(&c->ps->ni, n);
}

PNode node_field(const struct ctx *c, PNode n, enum field f)
{
	return nk_field(&c->ps->ni, n, f);
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

void push_scope(struct ctx *c, bool is_class)
{
	if (c->nscopes == c->capscopes) {
		c->capscopes = c->capscopes ? c->capscopes * 2 : 16;
		c->scopes = xrealloc(c->scopes, c->capscopes * sizeof *c->scopes);
	}
	memset(&c->scopes[c->nscopes], 0, sizeof *c->scopes);
	c->scopes[c->nscopes++].is_class = is_class;
}

void pop_scope(struct ctx *c)
{
	struct scope *s = &c->scopes[--c->nscopes];
	symtab_free(&s->tab);
	for (size_t i = 0; i < s->stars.len; i++)
		free(s->stars.items[i]);
	ptrvec_free(&s->stars);
}

void names_bind(struct ctx *c, const char *name, size_t len, enum bkind k, const char *qual, int func)
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

void bind_node(struct ctx *c, PNode id, enum bkind k, const char *qual)
{
	size_t len;
	const char *s = node_text(c, id, &len);
	if (len)
		names_bind(c, s, len, k, qual, -1);
}

void scope_bind_qual(struct ctx *c, const char *name, size_t len, const char *qual)
{
	names_bind(c, name, len, B_QUAL, qual, -1);
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
	if (t && t->attributes && json_is_string(json_object_get(t->attributes, attr))) {
		r = typed(json_string_value(json_object_get(t->attributes, attr)), NULL);
	} else if (t && (t->returns_self || t->methods == POL_PORT)) {
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
		/* a builtin the knowledge lists (open -> builtins.open) */
		if (len < 48) {
			char q[64];
			snprintf(q, sizeof q, "builtins.%.*s", (int)len, s);
			const struct kb_library *bl = kb_library_for(c->kb, q);
			const struct kb_entry *be = bl ? kb_lookup(bl, q) : NULL;
			if (be && !be->is_pattern)
				return (struct res){R_QUAL, xstrdup(q)};
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
			if (t && t->items) {
				free(v.name);
				return typed(t->items, NULL);
			}
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

/* The line of a node as the user sees it (in its cell, for notebooks). */
uint32_t user_line(const struct ctx *c, PNode n, uint32_t *cell)
{
	uint32_t line, col;
	finding_position(c->src, pn_start_point(n), pn_start_byte(n), &line, &col, cell);
	return line;
}

struct finding *add_finding(struct ctx *c, PNode at, const struct rule *rule,
			    const char *library, const char *display, const char *target,
			    const char *symbol)
{
	struct finding *f = finding_add(c->out, c->src, at, rule, library, display, target, symbol,
					c->ps->keep_text);
	f->func = current_func(c);
	f->loop_depth = (uint32_t)c->nloops;
	f->loop_line = c->nloops ? c->loops[c->nloops - 1].line : 0;
	return f;
}

/* ---- functions of the file ---- */

int function_record(struct ctx *c, PNode def)
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

void funcs_free(struct ctx *c)
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
void record_local_call(struct ctx *c, PNode call)
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
void bind_params(struct ctx *c, PNode params, const struct funcrec *f)
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
void shadow_targets(struct ctx *c, PNode t, int depth)
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

void visit_assignment(struct ctx *c, PNode a)
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

void visit_return(struct ctx *c, PNode ret)
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
void commit_return(struct ctx *c, int f)
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


/* `with open(path, "rb") as f:` binds f to what the expression gives. */
void visit_with_item(struct ctx *c, PNode item)
{
	PNode v = node_field(c, item, F_VALUE);
	if (node_kind(c, v) != NK_AS_PATTERN)
		return;
	PNode expr = pn_named_child(v, 0), alias = node_field(c, v, F_ALIAS);
	if (node_kind(c, alias) != NK_IDENTIFIER && pn_named_child_count(alias) > 0)
		alias = pn_named_child(alias, 0);
	if (node_kind(c, alias) != NK_IDENTIFIER)
		return;
	struct res r = resolve_value(c, expr);
	if (r.kind == R_VALUE)
		bind_node(c, alias, B_VALUE, r.name);
	else
		bind_node(c, alias, B_SHADOW, NULL);
	free(r.name);
}

/* `while chunk := f.read(n):` binds chunk as an assignment would. */
void visit_named_expr(struct ctx *c, PNode n)
{
	PNode name = node_field(c, n, F_NAME);
	if (node_kind(c, name) != NK_IDENTIFIER)
		return;
	struct res r = resolve_value(c, node_field(c, n, F_VALUE));
	if (r.kind == R_VALUE)
		bind_node(c, name, B_VALUE, r.name);
	else if (r.kind == R_QUAL)
		bind_node(c, name, B_QUAL, r.name);
	else
		bind_node(c, name, B_SHADOW, NULL);
	free(r.name);
}
