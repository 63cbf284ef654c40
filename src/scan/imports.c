/* imports: see imports.h. A walk over the whole tree (imports may sit in
 * any block), so it reads what Python would import, not what a line starts
 * with. */
#include "imports.h"

#include <ctype.h>
#include <string.h>

#include "core/util.h"
#include "pyscan.h"
#include "pyscan_int.h"

static void push(struct py_imports *x, char *module, char *name, PNode at, bool dynamic)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 16;
		x->items = xrealloc(x->items, x->cap * sizeof *x->items);
	}
	x->items[x->n++] = (struct py_import){module, name, pn_start_point(at).row + 1, dynamic};
}

/* A node's text with the whitespace and comments a dotted name may hold
 * ("a . b") left out. Owned. */
static char *names_only(const struct source *src, PNode n)
{
	struct buf b = {0};
	const char *s = src->text + pn_start_byte(n);
	size_t len = pn_end_byte(n) - pn_start_byte(n);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (!isspace((unsigned char)s[i]) && s[i] != '\\' && s[i] != '(' && s[i] != ')')
			buf_putc(&b, s[i]);
	}
	if (!b.data)
		return xstrdup("");
	return buf_steal(&b);
}

static void visit_import(const struct pyscanner *ps, const struct source *src, PNode stmt, struct py_imports *out)
{
	uint32_t n = pn_named_child_count(stmt);
	for (uint32_t i = 0; i < n; i++) {
		PNode ch = pn_named_child(stmt, i);
		enum nk k = nk_of(&ps->ni, ch);
		if (k == NK_DOTTED_NAME)
			push(out, names_only(src, ch), NULL, stmt, false);
		else if (k == NK_ALIASED_IMPORT)
			push(out, names_only(src, nk_field(&ps->ni, ch, F_NAME)), NULL, stmt, false);
	}
}

static void visit_from(const struct pyscanner *ps, const struct source *src, PNode stmt, struct py_imports *out)
{
	PNode mod = nk_field(&ps->ni, stmt, F_MODULE_NAME);
	enum nk mk = nk_of(&ps->ni, mod);
	if (mk != NK_DOTTED_NAME && mk != NK_RELATIVE_IMPORT)
		return;
	char *base = names_only(src, mod);
	uint32_t n = pn_named_child_count(stmt);
	bool any = false;
	for (uint32_t i = 0; i < n; i++) {
		PNode ch = pn_named_child(stmt, i);
		if (pn_eq(ch, mod))
			continue;
		enum nk k = nk_of(&ps->ni, ch);
		PNode name = ch;
		if (k == NK_ALIASED_IMPORT)
			name = nk_field(&ps->ni, ch, F_NAME);
		else if (k != NK_DOTTED_NAME && k != NK_WILDCARD_IMPORT)
			continue;
		push(out, xstrdup(base), k == NK_WILDCARD_IMPORT ? xstrdup("*") : names_only(src, name), stmt, false);
		any = true;
	}
	if (!any)
		push(out, xstrdup(base), NULL, stmt, false);
	free(base);
}

/* importlib.import_module("x"), import_module("x"), __import__("x"). */
static void visit_call(const struct pyscanner *ps, const struct source *src, PNode call, struct py_imports *out)
{
	PNode fn = nk_field(&ps->ni, call, F_FUNCTION);
	enum nk fk = nk_of(&ps->ni, fn);
	if (fk != NK_IDENTIFIER && fk != NK_ATTRIBUTE)
		return;
	char *callee = names_only(src, fn);
	bool dyn = !strcmp(callee, "importlib.import_module") || !strcmp(callee, "import_module") ||
		   !strcmp(callee, "__import__");
	free(callee);
	if (!dyn)
		return;
	PNode arg = pn_named_child(nk_field(&ps->ni, call, F_ARGUMENTS), 0);
	if (nk_of(&ps->ni, arg) != NK_STRING)
		return;
	PNode content = PN_NULL;
	uint32_t n = pn_named_child_count(arg);
	for (uint32_t i = 0; i < n; i++) {
		PNode ch = pn_named_child(arg, i);
		enum nk k = nk_of(&ps->ni, ch);
		if (k == NK_INTERPOLATION)
			return; /* an f-string: not a literal name */
		if (k == NK_STRING_CONTENT)
			content = ch;
	}
	if (pn_is_null(content))
		return;
	char *name = names_only(src, content);
	if (*name)
		push(out, name, NULL, call, true);
	else
		free(name);
}

bool pyscan_imports(struct pyscanner *ps, const struct source *src, struct py_imports *out, char **why)
{
	if (!pyscan_parse(ps, src, why))
		return false;
	struct { uint32_t *ids; size_t n, cap; } st = {0};
	PNode root = pn_root(&ps->tree);
	if (!pn_is_null(root)) {
		st.ids = xmalloc(64 * sizeof *st.ids);
		st.cap = 64;
		st.ids[st.n++] = root.id;
	}
	while (st.n) {
		PNode node = {&ps->tree, st.ids[--st.n]};
		enum nk k = nk_of(&ps->ni, node);
		if (k == NK_IMPORT) {
			visit_import(ps, src, node, out);
			continue;
		}
		if (k == NK_IMPORT_FROM) {
			visit_from(ps, src, node, out);
			continue;
		}
		if (k == NK_FUTURE_IMPORT)
			continue;
		if (k == NK_CALL)
			visit_call(ps, src, node, out);
		/* children pushed last first: visited in source order */
		uint32_t nc = pn_child_count(node);
		if (st.n + nc > st.cap) {
			while (st.n + nc > st.cap)
				st.cap *= 2;
			st.ids = xrealloc(st.ids, st.cap * sizeof *st.ids);
		}
		for (uint32_t i = nc; i-- > 0;)
			st.ids[st.n++] = pn_child(node, i).id;
	}
	free(st.ids);
	pt_clear(&ps->tree);
	return true;
}

bool py_imports_of_file(const char *path, struct py_imports *out, char **why)
{
	struct source src = {0};
	if (!source_load(path, &src, why))
		return false;
	struct pyscanner *ps = pyscanner_new(NULL);
	char *inner = NULL;
	bool ok = pyscan_imports(ps, &src, out, &inner);
	if (!ok) {
		*why = xasprintf("cannot read '%s': %s", path, inner);
		free(inner);
	}
	pyscanner_free(ps);
	source_free(&src);
	return ok;
}

void py_imports_free(struct py_imports *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++) {
		free(x->items[i].module);
		free(x->items[i].name);
	}
	free(x->items);
	memset(x, 0, sizeof *x);
}

/* Is qual mod, or inside it ("cupy.random" in "cupy")? */
static bool within(const char *qual, const char *mod)
{
	size_t n = strlen(mod);
	return n && !strncmp(qual, mod, n) && (qual[n] == '\0' || qual[n] == '.');
}

bool py_import_is(const struct py_import *im, const char *mod)
{
	if (!im || !im->module || im->module[0] == '.' || !mod)
		return false;
	if (within(im->module, mod))
		return true;
	if (!im->name || !strcmp(im->name, "*"))
		return false;
	char *qual = xasprintf("%s.%s", im->module, im->name);
	bool yes = within(qual, mod);
	free(qual);
	return yes;
}
