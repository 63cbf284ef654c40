/* project: see project.h. Names are found through a table of their dotted
 * suffixes of two components or more ("a.b.c.f" under "a.b.c.f", "b.c.f",
 * "c.f"); a suffix two functions share names neither, unless it is one's
 * full name. */
#include "project.h"

#include <stdlib.h>
#include <string.h>

#include "core/symtab.h"
#include "core/util.h"

struct pcall {
	char *caller, *callee;
	const char *path;
	uint32_t loop_line, loop_cell;
	bool throttled;
	struct val args[FLOW_SUM_ARGS];
	uint8_t nargs;
};

struct project {
	struct project_func *funcs;
	size_t n, cap;
	struct pcall *calls;
	size_t ncalls, capcalls;
	struct ptrvec paths;   /* owned copies of the files' paths */
	struct symtab index;   /* suffix -> function (func = index, -2 ambiguous) */
	struct symtab classes; /* suffix -> class (func = 1) */
	bool finished;
};

struct project *project_new(void)
{
	return xcalloc(1, sizeof(struct project));
}

void project_free(struct project *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free((char *)p->funcs[i].qual);
		free((char *)p->funcs[i].name);
		free((char *)p->funcs[i].ret.qual);
	}
	for (size_t i = 0; i < p->ncalls; i++) {
		free(p->calls[i].caller);
		free(p->calls[i].callee);
	}
	for (size_t i = 0; i < p->paths.len; i++)
		free(p->paths.items[i]);
	ptrvec_free(&p->paths);
	free(p->funcs);
	free(p->calls);
	symtab_free(&p->index);
	symtab_free(&p->classes);
	free(p);
}

char *project_module_name(const char *path)
{
	const char *s = path;
	while (s[0] == '.' && s[1] == '/')
		s += 2;
	while (*s == '/')
		s++;
	size_t len = strlen(s);
	const char *dot = strrchr(s, '.');
	const char *slash = strrchr(s, '/');
	if (dot && (!slash || dot > slash))
		len = (size_t)(dot - s);
	char *m = xstrndup(s, len);
	for (char *c = m; *c; c++)
		if (*c == '/')
			*c = '.';
	size_t ml = strlen(m);
	if (ml >= 9 && strcmp(m + ml - 9, ".__init__") == 0)
		m[ml - 9] = '\0';
	return m;
}

/* Registers every suffix of qual (two components or more) for value v. */
static void index_suffixes(struct symtab *t, const char *qual, int v)
{
	const char *s = qual;
	for (;;) {
		if (strchr(s, '.') || s == qual) {
			const struct binding *b = symtab_get(t, s, strlen(s));
			if (!b)
				symtab_set(t, s, strlen(s), B_FUNC, NULL, v);
			else if (b->func != v && s != qual)
				symtab_set(t, s, strlen(s), B_FUNC, NULL, -2);
			else if (s == qual)
				symtab_set(t, s, strlen(s), B_FUNC, NULL, v); /* a full name wins */
		}
		const char *d = strchr(s, '.');
		if (!d || !strchr(d + 1, '.'))
			break;
		s = d + 1;
	}
}

void project_add(struct project *p, const char *path, const char *module, const struct flow_summary *s)
{
	(void)module;
	if (p->finished || !s)
		return;
	char *pathc = xstrdup(path);
	ptrvec_push(&p->paths, pathc);
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct flow_func *ff = &s->funcs[i];
		if (ff->is_class) {
			index_suffixes(&p->classes, ff->qual, 1);
			continue;
		}
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 64;
			p->funcs = xrealloc(p->funcs, p->cap * sizeof *p->funcs);
		}
		struct project_func *pf = &p->funcs[p->n];
		memset(pf, 0, sizeof *pf);
		pf->qual = xstrdup(ff->qual);
		pf->name = xstrdup(ff->name);
		pf->path = pathc;
		pf->ret = ff->ret;
		pf->ret.qual = ff->ret.qual ? xstrdup(ff->ret.qual) : NULL;
		pf->ret_parts = ff->ret_parts;
		pf->does_gpu = ff->does_gpu;
		pf->ends_pending = ff->ends_pending;
		pf->is_method = ff->is_method;
		index_suffixes(&p->index, pf->qual, (int)p->n);
		p->n++;
	}
	for (size_t i = 0; i < s->ncalls; i++) {
		const struct flow_call *fc = &s->calls[i];
		if (p->ncalls == p->capcalls) {
			p->capcalls = p->capcalls ? p->capcalls * 2 : 128;
			p->calls = xrealloc(p->calls, p->capcalls * sizeof *p->calls);
		}
		struct pcall *c = &p->calls[p->ncalls++];
		memset(c, 0, sizeof *c);
		c->caller = fc->caller ? xstrdup(fc->caller) : NULL;
		c->callee = xstrdup(fc->callee);
		c->path = pathc;
		c->loop_line = fc->loop_line;
		c->loop_cell = fc->loop_cell;
		c->throttled = fc->throttled;
		c->nargs = fc->nargs;
		memcpy(c->args, fc->args, sizeof c->args);
	}
}

static int find(const struct project *p, const char *qual)
{
	const struct binding *b = symtab_get(&p->index, qual, strlen(qual));
	return b ? b->func : -1;
}

static struct val join_val(struct val a, struct val b)
{
	if (a.kind == b.kind && a.fam == b.fam)
		return a;
	if (val_on_device(&a))
		return a;
	if (val_on_device(&b))
		return b;
	if (a.kind == V_UNKNOWN)
		return b;
	if (b.kind == V_UNKNOWN)
		return a;
	return (struct val){.kind = V_UNKNOWN, .ref = -1, .ref2 = -1};
}

/* The functions a call names: one, or the methods of that name. */
static size_t targets(const struct project *p, const struct pcall *c, int *out, size_t max)
{
	size_t n = 0;
	if (c->callee[0] == '.') {
		const char *m = c->callee + 1;
		if (m[0] == '_' && m[1] == '_')
			return 0;
		for (size_t i = 0; i < p->n && n < max; i++)
			if (p->funcs[i].is_method && strcmp(p->funcs[i].name, m) == 0)
				out[n++] = (int)i;
		return n;
	}
	int i = find(p, c->callee);
	if (i >= 0)
		out[n++] = i;
	return n;
}

void project_finish(struct project *p)
{
	p->finished = true;
	int t[64];
	/* the values passed, joined over the direct call sites */
	for (size_t k = 0; k < p->ncalls; k++) {
		const struct pcall *c = &p->calls[k];
		if (c->callee[0] == '.')
			continue;
		size_t nt = targets(p, c, t, 64);
		for (size_t j = 0; j < nt; j++) {
			struct project_func *pf = &p->funcs[t[j]];
			uint8_t off = pf->is_method ? 1 : 0; /* self is not passed */
			for (uint8_t a = 0; a < c->nargs && a + off < FLOW_SUM_ARGS; a++)
				pf->args[a + off] = pf->called ? join_val(pf->args[a + off], c->args[a]) : c->args[a];
			if (c->nargs + off > pf->nargs)
				pf->nargs = (uint8_t)(c->nargs + off < FLOW_SUM_ARGS ? c->nargs + off : FLOW_SUM_ARGS);
			pf->called = true;
		}
	}
	/* hot: called from a loop, or from a function that is */
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < p->ncalls; k++) {
			const struct pcall *c = &p->calls[k];
			int ci = c->caller ? find(p, c->caller) : -1;
			const struct project_func *caller = ci >= 0 ? &p->funcs[ci] : NULL;
			bool from_loop = c->loop_line && !c->throttled;
			if (!from_loop && !(caller && caller->hot && !c->throttled))
				continue;
			size_t nt = targets(p, c, t, 64);
			for (size_t j = 0; j < nt; j++) {
				struct project_func *pf = &p->funcs[t[j]];
				if (pf->hot || (caller && pf == caller))
					continue;
				pf->hot = true;
				pf->hot_line = from_loop ? c->loop_line : caller->hot_line;
				pf->hot_cell = from_loop ? c->loop_cell : caller->hot_cell;
				pf->hot_path = from_loop ? c->path : caller->hot_path;
				changed = true;
			}
		}
	}
}

const struct project_func *project_func(const struct project *p, const char *qual)
{
	if (!p || !qual)
		return NULL;
	int i = find(p, qual);
	return i >= 0 ? &p->funcs[i] : NULL;
}

bool project_is_class(const struct project *p, const char *qual)
{
	if (!p || !qual)
		return false;
	const struct binding *b = symtab_get(&p->classes, qual, strlen(qual));
	return b && b->func == 1;
}

size_t project_size(const struct project *p)
{
	return p ? p->n : 0;
}
