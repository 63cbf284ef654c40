/* rules_loops: GPU605 python-loop, a walker rule (CPU code has it too):
 * a Python loop over range() whose body works on arrays one element at a
 * time — a nest whose innermost subscripts use every loop variable
 * (d[i, j] = ...), or a single loop over a host array that does only scalar
 * work (no calls but builtins and math), or a comprehension over range()
 * whose body calls a function of the file that does only that. Loops in
 * functions compiled by a JIT (numba) are not Python loops. */
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "pyscan_int.h"

static char *snippet(const struct ctx *c, PNode n)
{
	size_t len;
	const char *s = node_text(c, n, &len);
	return finding_snippet(s, len);
}

struct loopscan;

/* What a subtree search looks for: visit() returns true to stop. */
struct search {
	bool (*visit)(struct ctx *c, PNode n, struct search *s);
	bool skip_definitions; /* do not enter nested def / class bodies */
	const char *name;      /* the identifier searched for, where there is one */
	size_t len;
	uint32_t line;         /* what copied_back_within found */
	struct loopscan *ls;   /* what element_access collects */
};

#define SEARCH_BUDGET 50000

/* Visits the nodes under root in source order until visit() says stop.
 * Returns true if it stopped, or if the subtree was too large to finish
 * (callers treat that as "found", the cautious answer). Iterative: the
 * stack holds, for each level below root, the slot (in tree.kids) of the
 * child being visited. */
static bool search_subtree(struct ctx *c, PNode root, struct search *s)
{
	if (pn_is_null(root))
		return false;
	const struct pt_tree *t = root.t;
	uint32_t fixed[64], *stack = fixed;
	size_t depth = 0, cap = sizeof fixed / sizeof *fixed;
	bool stop = false;
	int budget = SEARCH_BUDGET;
	PNode n = root;
	for (bool more = true; more && !stop; budget--) {
		if (budget == 0) {
			stop = true;
			break;
		}
		stop = s->visit(c, n, s);
		enum nk k = node_kind(c, n);
		bool enter = !(s->skip_definitions && (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF));
		const struct pt_node *nd = pn_get(n);
		if (enter && nd->nkids) {
			if (depth == cap) {
				cap *= 2;
				if (stack == fixed) {
					stack = xmalloc(cap * sizeof *stack);
					memcpy(stack, fixed, sizeof fixed);
				} else {
					stack = xrealloc(stack, cap * sizeof *stack);
				}
			}
			stack[depth++] = nd->kids;
			n = (PNode){t, t->kids[nd->kids]};
			continue;
		}
		for (;;) { /* the next sibling, else up */
			if (depth == 0) {
				more = false;
				break;
			}
			const struct pt_node *p = &t->nodes[pn_get(n)->parent];
			uint32_t next = stack[depth - 1] + 1;
			if (next < p->kids + p->nkids) {
				stack[depth - 1] = next;
				n = (PNode){t, t->kids[next]};
				break;
			}
			n = pn_parent(n);
			depth--;
		}
	}
	if (stack != fixed)
		free(stack);
	return stop;
}

/* ---- element-wise Python loops ---- */

struct loopscan {
	const char *vars[4];
	size_t lens[4];
	size_t nvars;
	bool nested;
	bool typed_array;
	bool heavy;     /* the body calls something that works on whole arrays */
	bool all_vars;  /* a subscript uses every variable of the nest */
	PNode example;
};

static bool is_range_loop(struct ctx *c, PNode forn, const char **var, size_t *len)
{
	PNode right = node_field(c, forn, F_RIGHT), left = node_field(c, forn, F_LEFT);
	if (node_kind(c, right) != NK_CALL || node_kind(c, left) != NK_IDENTIFIER)
		return false;
	PNode callee = node_field(c, right, F_FUNCTION);
	bool range = false;
	if (node_kind(c, callee) == NK_IDENTIFIER && node_text_is(c, callee, "range")) {
		range = scope_lookup(c, "range", 5) == NULL;
	} else {
		struct res r = resolve(c, callee, 0);
		range = r.kind == R_QUAL && (strcmp(r.name, "numpy.arange") == 0 || strcmp(r.name, "cupy.arange") == 0);
		free(r.name);
	}
	if (range)
		*var = node_text(c, left, len);
	return range;
}

/* Does the index of a subscript use loop variables (which: a bit each)? */
static bool index_uses(const struct ctx *c, PNode n, const struct loopscan *ls, int depth, unsigned *which)
{
	if (pn_is_null(n) || depth > 8 || node_kind(c, n) == NK_SLICE)
		return false; /* a[i:i + k] works on a block, not an element */
	if (node_kind(c, n) == NK_IDENTIFIER) {
		size_t len;
		const char *s = node_text(c, n, &len);
		for (size_t i = 0; i < ls->nvars; i++)
			if (len == ls->lens[i] && memcmp(s, ls->vars[i], len) == 0) {
				*which |= 1u << i;
				return true;
			}
		return false;
	}
	bool any = false;
	uint32_t k = pn_named_child_count(n);
	for (uint32_t i = 0; i < k && i < 8; i++)
		any |= index_uses(c, pn_named_child(n, i), ls, depth + 1, which);
	return any;
}

/* Do the indices of a subscript (a[i, j]: each one) use loop variables? */
static bool subscript_uses(const struct ctx *c, PNode sub, const struct loopscan *ls, unsigned *which)
{
	bool any = false;
	uint32_t k = pn_named_child_count(sub);
	for (uint32_t i = 1; i < k && i < 8; i++)
		any |= index_uses(c, pn_named_child(sub, i), ls, 0, which);
	return any;
}

/* Calls a body may make and still work on one element at a time. */
static bool scalar_call(struct ctx *c, PNode call)
{
	PNode callee = node_field(c, call, F_FUNCTION);
	size_t len;
	const char *s = node_text(c, callee, &len);
	static const char *const ok[] = {"abs", "min", "max", "int", "float", "len", "round", "range", "bool", NULL};
	if (node_kind(c, callee) == NK_IDENTIFIER && !scope_lookup(c, s, len))
		for (const char *const *w = ok; *w; w++)
			if (strlen(*w) == len && memcmp(s, *w, len) == 0)
				return true;
	return len > 5 && memcmp(s, "math.", 5) == 0;
}

/* Is the call to a function of this file whose short body only assigns
 * to or reads array elements, with no calls? */
static bool elementwise_call(struct ctx *c, PNode call)
{
	PNode callee = node_field(c, call, F_FUNCTION);
	if (node_kind(c, callee) != NK_IDENTIFIER)
		return false;
	size_t len;
	const char *s = node_text(c, callee, &len);
	const struct binding *b = scope_lookup(c, s, len);
	if (!b || b->kind != B_FUNC || b->func < 0 || pn_is_null(c->funcs[b->func].def))
		return false;
	PNode body = node_field(c, c->funcs[b->func].def, F_BODY);
	uint32_t k = pn_named_child_count(body);
	if (k == 0 || k > 4)
		return false;
	bool subscript = false;
	PNode stack[128];
	int sp = 0;
	for (uint32_t i = 0; i < k; i++)
		stack[sp++] = pn_named_child(body, i);
	while (sp > 0) {
		PNode n = stack[--sp];
		enum nk kind = node_kind(c, n);
		if (kind == NK_CALL || kind == NK_FOR || kind == NK_WHILE || kind == NK_FUNCTION_DEF)
			return false;
		subscript |= kind == NK_SUBSCRIPT;
		uint32_t m = pn_named_child_count(n);
		for (uint32_t j = 0; j < m && sp < 128; j++)
			stack[sp++] = pn_named_child(n, j);
	}
	return subscript;
}

static bool has_slice(const struct ctx *c, PNode sub)
{
	uint32_t k = pn_named_child_count(sub);
	for (uint32_t i = 1; i < k && i < 8; i++)
		if (node_kind(c, pn_named_child(sub, i)) == NK_SLICE)
			return true;
	return false;
}

/* Notes nested range loops and subscripts indexed by the loop variables. */
static bool element_access(struct ctx *c, PNode n, struct search *s)
{
	struct loopscan *ls = s->ls;
	enum nk k = node_kind(c, n);
	unsigned which = 0;
	if (k == NK_FOR && ls->nvars < 4 && is_range_loop(c, n, &ls->vars[ls->nvars], &ls->lens[ls->nvars])) {
		ls->nvars++;
		ls->nested = true;
	} else if (k == NK_CALL && !scalar_call(c, n) && !elementwise_call(c, n)) {
		ls->heavy = true;
	} else if (k == NK_SUBSCRIPT && !has_slice(c, n) && subscript_uses(c, n, ls, &which)) {
		PNode v = node_field(c, n, F_VALUE);
		enum nk vk = node_kind(c, v);
		if (vk == NK_IDENTIFIER || vk == NK_ATTRIBUTE) {
			if (pn_is_null(ls->example))
				ls->example = n;
			/* d[i, j] = ...: a host array indexed by the whole nest */
			struct res t = resolve_value(c, v);
			if (ls->nvars > 1 && which == (1u << ls->nvars) - 1 && t.kind == R_VALUE && !device_type(c, &t))
				ls->all_vars = true;
			free(t.name);
			/* a host array; device arrays indexed in a loop are usually an
			 * iterative algorithm's rows, not elements */
			struct res r = resolve_value(c, v);
			ls->typed_array |= r.kind == R_VALUE && !device_type(c, &r);
			free(r.name);
		}
	}
	return false;
}

void loops_enter_for(struct ctx *c, PNode forn)
{
	if (!c->array_file || !c->ps->loop_rule || pn_start_byte(forn) < c->pyloop_until)
		return;
	int fi = current_func(c);
	if (fi >= 0 && c->funcs[fi].jitted)
		return;
	struct loopscan ls = {0};
	ls.example = PN_NULL;
	if (!is_range_loop(c, forn, &ls.vars[0], &ls.lens[0]))
		return;
	ls.nvars = 1;
	struct search s = {.visit = element_access, .skip_definitions = true, .ls = &ls};
	search_subtree(c, node_field(c, forn, F_BODY), &s);
	/* a nest over every index, or one light loop over a host array */
	if (pn_is_null(ls.example) || !((ls.nested && ls.all_vars) || (ls.typed_array && !ls.heavy)))
		return;
	char *ex = snippet(c, ls.example);
	char *head = snippet(c, node_field(c, forn, F_RIGHT));
	struct finding *f = add_finding(c, forn, c->ps->loop_rule, "python", "Python loops", "cupy", "for");
	finding_end(c->src, f, node_field(c, forn, F_RIGHT));
	f->message = xasprintf("element-by-element Python loop%s: `for %.*s in %s` reads `%s` one element "
			       "at a time", ls.nested ? " nest" : "", (int)ls.lens[0], ls.vars[0], head, ex);
	f->fix = xstrdup("vectorize it as whole-array NumPy expressions (broadcasting, slicing, reductions), "
			 "which then run on the GPU with CuPy; write a custom kernel (Numba-CUDA-MLIR, Warp) "
			 "only if that is not enough");
	c->pyloop_until = pn_end_byte(forn);
	free(ex);
	free(head);
}

/* [f(i) for i in range(len(a))] where f works on a[i]: a loop in disguise. */
void loops_enter_comprehension(struct ctx *c, PNode comp)
{
	if (!c->array_file || !c->ps->loop_rule || pn_start_byte(comp) < c->pyloop_until)
		return;
	int fi = current_func(c);
	if (fi >= 0 && c->funcs[fi].jitted)
		return;
	PNode clause = PN_NULL;
	uint32_t n = pn_named_child_count(comp);
	for (uint32_t i = 0; i < n; i++)
		if (node_kind(c, pn_named_child(comp, i)) == NK_FOR_IN)
			clause = pn_named_child(comp, i);
	PNode body = node_field(c, comp, F_BODY), left = node_field(c, clause, F_LEFT);
	const char *var;
	size_t len;
	if (pn_is_null(clause) || node_kind(c, body) != NK_CALL || node_kind(c, left) != NK_IDENTIFIER ||
	    !elementwise_call(c, body))
		return;
	/* is_range_loop reads a for statement's left/right, which a for_in_clause has too */
	if (!is_range_loop(c, clause, &var, &len))
		return;
	char *ex = snippet(c, body);
	char *head = snippet(c, node_field(c, clause, F_RIGHT));
	struct finding *f = add_finding(c, comp, c->ps->loop_rule, "python", "Python loops", "cupy", "for");
	f->message = xasprintf("element-by-element Python loop: `for %.*s in %s` calls `%s`, which works on one "
			       "array element, once per element", (int)len, var, head, ex);
	f->fix = xstrdup("vectorize it as whole-array NumPy expressions (broadcasting, slicing, reductions), "
			 "which then run on the GPU with CuPy; write a custom kernel (Numba-CUDA-MLIR, Warp) "
			 "only if that is not enough");
	c->pyloop_until = pn_end_byte(comp);
	free(ex);
	free(head);
}
