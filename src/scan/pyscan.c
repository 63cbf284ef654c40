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

#include "findings.h"
#include "flow.h"
#include "pyscan_int.h"
#include "rules_gpu.h"

const TSLanguage *tree_sitter_python(void);

/* How long the parser may spend on one file before giving up. */
#define PARSE_TIMEOUT_US (20u * 1000u * 1000u)

struct pyscanner *pyscanner_new(const struct kb *kb)
{
	struct pyscanner *ps = xcalloc(1, sizeof *ps);
	const TSLanguage *lang = tree_sitter_python();
	ps->kb = kb;
	ps->fast = pyparser_new(lang);
	pt_init(&ps->tree);
	nodeinfo_init(&ps->ni, lang);
	ps->fallback_rule = kb_rule(kb, "GPU301");
	ps->helper_rule = kb_rule(kb, "GPU209");
	ps->unknown_rule = kb_rule(kb, "GPU900");
	ps->keep_text = true;
	ps->loop_rule = kb_rule(kb, "GPU605");
	return ps;
}

void pyscanner_keep_text(struct pyscanner *ps, bool keep)
{
	ps->keep_text = keep;
}

void pyscanner_force_flow(struct pyscanner *ps, bool force)
{
	ps->force_flow = force;
}

void pyscanner_free(struct pyscanner *ps)
{
	if (!ps)
		return;
	pyparser_free(ps->fast);
	pt_free(&ps->tree);
	nodeinfo_free(&ps->ni);
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
	if (r->strings) {
		free(r->strings);
	} else {
		for (size_t i = 0; i < r->n; i++)
			finding_free(&r->items[i]);
		free(r->budget_func);
	}
	free(r->items);
	memset(r, 0, sizeof *r);
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
	if ((pk == NK_FOR && fid == c->ps->ni.fields[F_BODY]) ||
	    (pk == NK_WHILE && (fid == c->ps->ni.fields[F_BODY] || fid == c->ps->ni.fields[F_CONDITION])))
		push_loop(c, n, parent);
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
		c->funcs[fi].def = n;
		c->funcs[fi].jitted = pk == NK_DECORATED_DEF && jit_decorated(c, parent);
		PNode name = node_field(c, n, F_NAME);
		size_t len;
		const char *s = node_text(c, name, &len);
		if (len)
			names_bind(c, s, len, B_FUNC, NULL, fi);
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
			names_bind(c, s, len, B_FUNC, NULL, -1);
		push_scope(c, true);
		return true;
	}
	case NK_LAMBDA:
		push_scope(c, false);
		bind_params(c, node_field(c, n, F_PARAMETERS), NULL);
		return true;
	case NK_FOR:
		shadow_targets(c, node_field(c, n, F_LEFT), 0);
		loops_enter_for(c, n);
		return true;
	case NK_LIST_COMP:
	case NK_SET_COMP:
	case NK_DICT_COMP:
	case NK_GENERATOR:
		push_loop(c, n, n);
		loops_enter_comprehension(c, n);
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
	case NK_WITH_ITEM:
		visit_with_item(c, n);
		break;
	case NK_NAMED_EXPR:
		visit_named_expr(c, n);
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

/* Whether the module name at P (up to END) is NAME or NAME.something. */
static bool module_is(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);
	return (size_t)(end - p) >= n && !memcmp(p, name, n) &&
	       ((size_t)(end - p) == n || !(isalnum((unsigned char)p[n]) || p[n] == '_'));
}

/* Does the text use a GPU array library, or the array-module idiom of code
 * written for NumPy and CuPy at once? Only such files get the flow model
 * (it costs more than the walk). The imports are read from the lines that
 * have "import" in them (an import must start its line, so `>>> import
 * torch` in a docstring does not count), then two searches for the idiom:
 * every file of a scan goes through here, so it must cost little next to
 * parsing. */
bool pyscan_gpu_candidate(const char *text, size_t len)
{
	const char *end = text + len;
	bool numba = false;
	/* every import statement has "import" in it: find those, then look at
	 * their lines (far fewer than all the lines) */
	for (const char *hit = text; (hit = memmem(hit, (size_t)(end - hit), "import", 6)); hit += 6) {
		const char *p = hit;
		while (p > text && p[-1] != '\n')
			p--;
		while (p < hit && (*p == ' ' || *p == '\t'))
			p++;
		const char *eol = memchr(hit, '\n', (size_t)(end - hit));
		if (!eol)
			eol = end;
		const char *m = NULL;
		if (p == hit && eol - p > 7 && p[6] == ' ')
			m = p + 7;
		else if (eol - p > 5 && !memcmp(p, "from ", 5))
			m = p + 5;
		/* each module of the line (import a, b as c); a from-import has one */
		while (m && m < eol) {
			while (m < eol && (*m == ' ' || *m == '\t' || *m == '('))
				m++;
			if (module_is(m, eol, "cupy") || module_is(m, eol, "cupyx") ||
			    module_is(m, eol, "torch") || module_is(m, eol, "jax"))
				return true;
			numba = numba || module_is(m, eol, "numba");
			if (p[0] == 'f')
				break;
			m = memchr(m, ',', (size_t)(eol - m));
			if (m)
				m++;
		}
	}
	/* numba counts with its cuda: `from numba import cuda`, `numba.cuda.jit` */
	if (numba && memmem(text, len, "cuda", 4))
		return true;
	if (memmem(text, len, "get_array_module", 16))
		return true;
	for (const char *p = text; (p = memmem(p, (size_t)(end - p), ".xp", 3)); p += 3)
		if (p + 3 == end || !(isalnum((unsigned char)p[3]) || p[3] == '_'))
			return true; /* device.xp, not node.xpath */
	return false;
}

/* Removes the library findings (a port, no GPU path) of the calls that the
 * GPU rules report as GPU code (GPU604, or a NumPy call CuPy takes over). */
static void drop_ports(struct scan_result *out, const struct gpu_rules *g)
{
	size_t kept = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct finding *f = &out->items[i];
		bool drop = false;
		for (size_t k = 0; k < g->ndrop && !drop; k++)
			drop = f->start_byte == g->drop[k] && f->rule->category &&
			       (!strcmp(f->rule->category, "library-port") || !strcmp(f->rule->category, "no-gpu-path"));
		if (drop) {
			finding_free(f);
			continue;
		}
		out->items[kept++] = *f;
	}
	out->n = kept;
}

static void run_flow(struct pyscanner *ps, const struct source *src, const struct pyscan_project *pp,
		     struct scan_result *out, PNode root)
{
	struct gpu_rules g;
	gpu_rules_init(&g, ps->kb, out, src, ps->keep_text);
	struct flow_options o = {
		.kb = ps->kb, .ni = &ps->ni, .src = src,
		.module = pp ? pp->module : NULL, .project = pp ? pp->project : NULL,
		.passes = gpu_rule_passes, .npasses = gpu_rule_npasses, .pass_ctx = &g,
		.summary = pp ? pp->summary : NULL,
	};
	struct flow_stop stop = {0};
	o.stop = &stop;
	flow_run(&o, root);
	out->budget_line = stop.line;
	out->budget_cell = stop.cell;
	out->budget_func = stop.func;
	drop_ports(out, &g);
	gpu_rules_free(&g);
}

bool pyscan(struct pyscanner *ps, const struct source *src, struct scan_result *out, char **why)
{
	return pyscan_in(ps, src, NULL, out, why);
}

bool pyscan_parse(struct pyscanner *ps, const struct source *src, char **why)
{
	*why = NULL;
	if (!pyparse(ps->fast, src->text, (uint32_t)src->len, &ps->tree)) {
		/* A fresh parser each time: tree-sitter-python 0.23's external
		 * scanner keeps "inside an f-string" from a file that ended in one,
		 * and would then misread the next file's dedents as syntax errors;
		 * and a reused parser keeps buffers from file to file, so a file's
		 * allocations would not balance (libFuzzer then scans the heap for
		 * leaks after most inputs). Making one costs a few allocations. */
		TSParser *parser = ts_parser_new();
		ts_parser_set_language(parser, tree_sitter_python());
		ts_parser_set_timeout_micros(parser, PARSE_TIMEOUT_US);
		TSTree *tree = ts_parser_parse_string(parser, NULL, src->text, (uint32_t)src->len);
		ts_parser_delete(parser);
		if (!tree) {
			*why = xstrdup("the parser gave up (time limit); the file is too large or too deeply nested");
			return false;
		}
		pytree_from_ts(&ps->tree, ts_tree_root_node(tree));
		ts_tree_delete(tree);
	}
	return true;
}

bool pyscan_in(struct pyscanner *ps, const struct source *src, const struct pyscan_project *pp,
	       struct scan_result *out, char **why)
{
	memset(out, 0, sizeof *out);
	if (!pyscan_parse(ps, src, why))
		return false;
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
	if (ps->force_flow || (!(pp && pp->plain) && pyscan_gpu_candidate(src->text, src->len)))
		run_flow(ps, src, pp, out, root);
	if (ps->tree.first_error != PT_NULL) {
		PNode e = {&ps->tree, ps->tree.first_error};
		uint32_t col;
		finding_position(src, pn_start_point(e), pn_start_byte(e), &out->syntax_error_line, &col,
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
