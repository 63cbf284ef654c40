/* pyscan_gpu: the GPU anti-pattern rules, in code that already uses the GPU.
 *
 * Values typed as device arrays (kb types with "device": true: results of
 * cupy.*, torch tensors made or moved to "cuda", numba.cuda.to_device, and
 * values derived from them) are followed through assignments, operators,
 * subscripts and method calls. Calls carry effects from the kb (d2h, h2d,
 * sync, gpu, clock, timeit). From those:
 *   GPU601 roundtrip-in-loop      device->host copy or implicit sync in a loop
 *   GPU602 transfer-in-loop       host->device copy of loop-invariant data
 *   GPU603 unsynchronized-timing  a clock read after GPU work, no sync between
 *   GPU604 mixed-host-device      a CPU library function given a device array, or
 *                                 data copied to the host and back in one loop
 *   GPU605 python-loop            element-by-element loops over range()
 * A loop is for / while / a comprehension, or a function called from one;
 * findings that only matter in a loop are marked needs_loop and dropped by
 * the ranking when they are not on a hot path. Effects are applied when a
 * node is left, which is Python's evaluation order. */
#include <stdlib.h>
#include <string.h>

#include "pyscan_int.h"

static struct frame *top_frame(struct ctx *c)
{
	return &c->frames[c->nframes - 1];
}

static void mark_gpu(struct ctx *c, PNode at)
{
	struct frame *f = top_frame(c);
	f->pending = f->gpu_since_clock = f->did_gpu = true;
	f->gpu_line = node_line(at);
}

static void mark_sync(struct ctx *c)
{
	struct frame *f = top_frame(c);
	f->pending = f->gpu_since_clock = false;
}

/* The library a device value belongs to, for the finding's `library`. */
static const char *device_library(const struct kb_type *t)
{
	return t && str_starts_with(t->name, "torch") ? "torch"
	     : t && str_starts_with(t->name, "numba") ? "numba" : "cupy";
}

static const char *device_display(const struct kb_type *t)
{
	return t && str_starts_with(t->name, "torch") ? "PyTorch"
	     : t && str_starts_with(t->name, "numba") ? "Numba CUDA" : "CuPy";
}

static char *snippet(const struct ctx *c, PNode n)
{
	size_t len;
	const char *s = node_text(c, n, &len);
	if (len > 48) {
		len = 45;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
		char *t = xstrndup(s, len);
		char *r = xasprintf("%s...", t);
		free(t);
		return r;
	}
	char *r = xstrndup(s, len);
	for (char *p = r; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return r;
}

/* A copy back every N iterations (`if i % 100 == 0: print(x.item())`) is
 * the right way to watch a loop, not a round trip per iteration. */
static bool periodic(const struct ctx *c)
{
	PNode loop = c->nloops ? c->loops[c->nloops - 1].node : PN_NULL;
	for (size_t i = c->nanc; i-- > 0;) {
		PNode a = c->anc[i];
		if (!pn_is_null(loop) && pn_eq(a, loop))
			break;
		if (node_kind(c, a) == NK_IF) {
			size_t len;
			const char *s = node_text(c, node_field(c, a, F_CONDITION), &len);
			if (memchr(s, '%', len))
				return true;
		}
	}
	return false;
}

static void roundtrip(struct ctx *c, PNode at, const struct kb_type *t, const char *what)
{
	if (!c->ps->anti[0] || periodic(c))
		return;
	char *code = snippet(c, at);
	struct finding *f = add_finding(c, at, c->ps->anti[0], device_library(t), device_display(t), NULL, what);
	f->message = xasprintf("%s copies a device value to the host and waits for the GPU to finish: "
			       "on a hot path this serializes the GPU with Python (`%s`)", what, code);
	f->fix = xstrdup("keep the value on the device inside the loop (device accumulators; test convergence "
			 "every N iterations with one scalar copy) and copy results to the host once, after the loop");
	f->needs_loop = true;
	free(code);
}

/* ---- loop invariance ---- */

static bool names_identifier(const struct ctx *c, PNode t, const char *name, size_t len, int depth)
{
	if (pn_is_null(t) || depth > 16)
		return false;
	enum nk k = node_kind(c, t);
	if (k == NK_IDENTIFIER) {
		size_t l;
		const char *s = node_text(c, t, &l);
		return l == len && memcmp(s, name, len) == 0;
	}
	if (k == NK_SUBSCRIPT || k == NK_ATTRIBUTE) /* x[i] = ..., x.a = ... change x too */
		return names_identifier(c, node_field(c, t, k == NK_SUBSCRIPT ? F_VALUE : F_OBJECT), name, len,
					depth + 1);
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (names_identifier(c, pn_named_child(t, i), name, len, depth + 1))
			return true;
	return false;
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

static bool binds_name(struct ctx *c, PNode n, struct search *s)
{
	enum nk k = node_kind(c, n);
	if (k == NK_ASSIGNMENT || k == NK_AUG_ASSIGNMENT || k == NK_FOR)
		return names_identifier(c, node_field(c, n, F_LEFT), s->name, s->len, 0);
	if (k == NK_NAMED_EXPR)
		return names_identifier(c, node_field(c, n, F_NAME), s->name, s->len, 0);
	if (k == NK_AS_PATTERN)
		return names_identifier(c, node_field(c, n, F_ALIAS), s->name, s->len, 0);
	return false;
}

/* Is `name` (re)bound or changed anywhere under node? */
static bool assigned_within(struct ctx *c, PNode node, const char *name, size_t len)
{
	struct search s = {.visit = binds_name, .name = name, .len = len};
	return search_subtree(c, node, &s);
}

/* Is the host data passed here the same in every iteration of the loop? */
static bool loop_invariant(struct ctx *c, PNode v)
{
	const struct loopframe *l = &c->loops[c->nloops - 1];
	enum nk k = node_kind(c, v);
	if (k == NK_INTEGER || k == NK_FLOAT || k == NK_STRING)
		return true;
	if (k == NK_LIST || k == NK_TUPLE) {
		uint32_t n = pn_named_child_count(v);
		for (uint32_t i = 0; i < n; i++)
			if (!loop_invariant(c, pn_named_child(v, i)))
				return false;
		return true;
	}
	if (k != NK_IDENTIFIER)
		return false;
	size_t len;
	const char *s = node_text(c, v, &len);
	if (node_kind(c, l->stmt) == NK_FOR &&
	    names_identifier(c, node_field(c, l->stmt, F_LEFT), s, len, 0))
		return false;
	return !assigned_within(c, l->node, s, len);
}

static PNode first_positional(const struct ctx *c, PNode args)
{
	if (node_kind(c, args) != NK_ARGUMENT_LIST)
		return PN_NULL;
	uint32_t n = pn_named_child_count(args);
	for (uint32_t i = 0; i < n; i++) {
		PNode a = pn_named_child(args, i);
		enum nk k = node_kind(c, a);
		if (k == NK_KEYWORD_ARGUMENT || k == NK_LIST_SPLAT || k == NK_DICT_SPLAT)
			return PN_NULL;
		if (k != NK_COMMENT)
			return a;
	}
	return PN_NULL;
}

/* Is the call a device->host copy (by its kb effect)? */
static bool is_d2h_call(struct ctx *c, PNode call)
{
	if (node_kind(c, call) != NK_CALL)
		return false;
	struct res r = resolve(c, node_field(c, call, F_FUNCTION), 0);
	const struct kb_library *lib;
	const struct kb_type *type;
	const struct kb_entry *e = callee_entry(c, &r, &lib, &type);
	free(r.name);
	return e && e->effect == EF_D2H;
}

static bool assigns_copy_back(struct ctx *c, PNode n, struct search *s)
{
	if (node_kind(c, n) == NK_ASSIGNMENT && names_identifier(c, node_field(c, n, F_LEFT), s->name, s->len, 0) &&
	    is_d2h_call(c, node_field(c, n, F_RIGHT)))
		s->line = node_line(n);
	return s->line != 0;
}

/* In the loop, is `name` assigned from a device->host copy? Returns that
 * assignment's line, or 0. */
static uint32_t copied_back_within(struct ctx *c, PNode node, const char *name, size_t len)
{
	struct search s = {.visit = assigns_copy_back, .name = name, .len = len};
	search_subtree(c, node, &s);
	return s.line;
}

/* `h = cp.asnumpy(x)` ... `x = cp.asarray(h)` in one loop: the data goes
 * back and forth every iteration. */
static void back_and_forth(struct ctx *c, PNode call, PNode data, const char *what)
{
	if (node_kind(c, data) != NK_IDENTIFIER || !c->ps->anti[3])
		return;
	size_t len;
	const char *s = node_text(c, data, &len);
	uint32_t line = copied_back_within(c, c->loops[c->nloops - 1].node, s, len);
	if (!line)
		return;
	struct finding *f = add_finding(c, call, c->ps->anti[3], "cupy", "CuPy", NULL, what);
	f->message = xasprintf("`%.*s` is copied to the host at line %u and back to the GPU here, in every "
			       "iteration of the loop at line %u", (int)len, s, line, c->loops[c->nloops - 1].line);
	f->fix = xstrdup("keep the data on the device for the whole loop: do the host-side step with the GPU "
			 "library, or move it after the loop");
}

static void transfer(struct ctx *c, PNode call, PNode data, const char *what)
{
	if (!c->nloops || pn_is_null(data) || !c->ps->anti[1])
		return;
	struct res r = resolve_value(c, data);
	bool on_device = device_type(c, &r) != NULL;
	free(r.name);
	if (on_device)
		return;
	if (!loop_invariant(c, data)) {
		back_and_forth(c, call, data, what);
		return;
	}
	char *code = snippet(c, data);
	struct finding *f = add_finding(c, call, c->ps->anti[1], "cupy", "CuPy", NULL, what);
	if (str_starts_with(what, "torch")) {
		f->library = "torch";
		f->display = "PyTorch";
	} else if (str_starts_with(what, "numba")) {
		f->library = "numba";
		f->display = "Numba CUDA";
	}
	f->message = xasprintf("%s copies `%s` from the host to the GPU in every iteration of the loop at "
			       "line %u, but it does not change inside the loop", what, code,
			       c->loops[c->nloops - 1].line);
	f->fix = xasprintf("move the transfer of `%s` before the loop and reuse the device array", code);
	free(code);
}

/* ---- timing ---- */

static void clock_read(struct ctx *c, PNode call, const char *what)
{
	struct frame *fr = top_frame(c);
	if (fr->clock_started && fr->gpu_since_clock && c->ps->anti[2]) {
		struct finding *f = add_finding(c, call, c->ps->anti[2], "cupy", "CuPy", NULL, what);
		f->message = xasprintf("%s is read after GPU work (line %u) with no synchronize in between: GPU "
				       "calls return before the work is done, so this times the launch, not the work",
				       what, fr->gpu_line);
		f->fix = xstrdup("synchronize before the clock read (cupy.cuda.Device().synchronize(), "
				 "torch.cuda.synchronize()), or time with cupyx.profiler.benchmark or CUDA events, "
				 "after a warm-up and over repeats");
	}
	fr->clock_started = true;
	fr->gpu_since_clock = false;
}

static bool launches_gpu(struct ctx *c, PNode expr)
{
	if (node_kind(c, expr) == NK_CALL) {
		PNode callee = node_field(c, expr, F_FUNCTION);
		if (node_kind(c, callee) == NK_IDENTIFIER) {
			size_t len;
			const char *s = node_text(c, callee, &len);
			const struct binding *b = scope_lookup(c, s, len);
			if (b && b->kind == B_FUNC && b->func >= 0)
				return c->funcs[b->func].does_gpu && c->funcs[b->func].ends_pending;
		}
	}
	struct res r = resolve_value(c, expr);
	bool gpu = device_type(c, &r) != NULL;
	free(r.name);
	return gpu;
}

/* timeit.timeit(stmt): stmt a lambda or a function of this file. */
static void timeit_check(struct ctx *c, PNode call, const char *what)
{
	PNode stmt = first_positional(c, node_field(c, call, F_ARGUMENTS));
	bool gpu = false;
	if (node_kind(c, stmt) == NK_LAMBDA) {
		gpu = launches_gpu(c, node_field(c, stmt, F_BODY));
	} else if (node_kind(c, stmt) == NK_IDENTIFIER) {
		size_t len;
		const char *s = node_text(c, stmt, &len);
		const struct binding *b = scope_lookup(c, s, len);
		gpu = b && b->kind == B_FUNC && b->func >= 0 && c->funcs[b->func].does_gpu &&
		      c->funcs[b->func].ends_pending;
	}
	if (gpu && c->ps->anti[2]) {
		struct finding *f = add_finding(c, call, c->ps->anti[2], "cupy", "CuPy", NULL, what);
		f->message = xasprintf("%s times GPU work that is not waited for: each repeat measures the "
				       "launch, not the work", what);
		f->fix = xstrdup("time GPU code with cupyx.profiler.benchmark (or torch.utils.benchmark), which "
				 "synchronizes, or add a synchronize at the end of the timed callable");
	}
}

/* ---- calls ---- */

static const char *const to_host_builtins[] = {"float", "int", "bool", "complex", "str", "repr", "format"};

/* float(x), print(x), ... of a device value copies it back. */
static bool builtin_roundtrip(struct ctx *c, PNode call, PNode callee)
{
	size_t len;
	const char *s = node_text(c, callee, &len);
	if (node_kind(c, callee) != NK_IDENTIFIER || scope_lookup(c, s, len))
		return false;
	bool print = len == 5 && memcmp(s, "print", 5) == 0;
	bool conv = false;
	for (size_t i = 0; i < sizeof to_host_builtins / sizeof *to_host_builtins; i++)
		conv |= len == strlen(to_host_builtins[i]) && memcmp(s, to_host_builtins[i], len) == 0;
	if (!print && !conv)
		return false;
	PNode args = node_field(c, call, F_ARGUMENTS);
	uint32_t n = node_kind(c, args) == NK_ARGUMENT_LIST ? pn_named_child_count(args) : 0;
	for (uint32_t i = 0; i < n && (print || i == 0); i++) {
		struct res r = resolve_value(c, pn_named_child(args, i));
		const struct kb_type *t = device_type(c, &r);
		free(r.name);
		if (t) {
			char *what = xasprintf("%.*s() of a device value", (int)len, s);
			roundtrip(c, call, t, what);
			free(what);
			mark_sync(c);
			return true;
		}
	}
	return true;
}

/* The port finding made for this call when it was entered: a call that
 * is given a device array is reported as that instead (one per call site). */
static void drop_port_finding(struct ctx *c, PNode call, const char *name)
{
	struct scan_result *r = c->out;
	uint32_t start = pn_start_byte(call);
	for (size_t i = r->n; i-- > 0 && r->n - i <= 64;) {
		struct finding *f = &r->items[i];
		if (f->start_byte == start && strcmp(f->symbol, name) == 0 && f->rule->severity == SEV_NOTE) {
			finding_free(f);
			memmove(f, f + 1, (r->n - i - 1) * sizeof *f);
			r->n--;
			return;
		}
	}
}

/* A CPU library function given a device array. */
static void mixed_check(struct ctx *c, PNode call, PNode args, const struct kb_library *lib,
			const char *name)
{
	if ((!lib->rule && !lib->no_gpu_rule) || !c->ps->anti[3] || node_kind(c, args) != NK_ARGUMENT_LIST)
		return;
	uint32_t n = pn_named_child_count(args);
	for (uint32_t i = 0; i < n; i++) {
		PNode a = pn_named_child(args, i);
		if (node_kind(c, a) == NK_KEYWORD_ARGUMENT)
			a = node_field(c, a, F_VALUE);
		struct res r = resolve_value(c, a);
		const struct kb_type *t = device_type(c, &r);
		free(r.name);
		if (!t)
			continue;
		char *code = snippet(c, a);
		drop_port_finding(c, call, name);
		struct finding *f = add_finding(c, a, c->ps->anti[3], lib->id, lib->display, NULL, name);
		f->message = xasprintf("%s is a CPU function, given `%s`, a GPU array (%s): it either converts "
				       "it implicitly (a device->host copy) or raises TypeError", name, code, t->name);
		f->fix = xasprintf("use the GPU library's version of %s on the device array, or copy it to the "
				   "host once, explicitly, where the CPU part starts", name);
		free(code);
		return;
	}
}

void gpu_after_call(struct ctx *c, PNode call)
{
	if (!c->gpu_file)
		return;
	PNode callee = node_field(c, call, F_FUNCTION);
	PNode args = node_field(c, call, F_ARGUMENTS);
	/* a function of this file: its summary */
	if (node_kind(c, callee) == NK_IDENTIFIER) {
		size_t len;
		const char *s = node_text(c, callee, &len);
		const struct binding *b = scope_lookup(c, s, len);
		if (b && b->kind == B_FUNC && b->func >= 0) {
			const struct funcrec *fr = &c->funcs[b->func];
			if (fr->does_gpu) {
				mark_gpu(c, call);
				if (!fr->ends_pending)
					mark_sync(c);
			}
			return;
		}
	}
	if (builtin_roundtrip(c, call, callee))
		return;
	struct res r = resolve(c, callee, 0);
	const struct kb_library *lib;
	const struct kb_type *type;
	const struct kb_entry *e = callee_entry(c, &r, &lib, &type);
	enum effect eff = e ? e->effect : EF_NONE;
	if (eff == EF_H2D_IF_DEVICE) {
		PNode at;
		char *value = NULL;
		eff = condition_holds(c, args, &e->device_if, &at, &value) ? EF_H2D : EF_NONE;
		free(value);
	}
	if (eff == EF_NONE && type && type->device)
		eff = EF_GPU; /* a method of a device array */
	if (eff == EF_NONE && r.kind == R_QUAL) {
		struct res v = resolve_value(c, call);
		if (device_type(c, &v))
			eff = EF_GPU;
		free(v.name);
	}
	switch (eff) {
	case EF_GPU:
		mark_gpu(c, call);
		break;
	case EF_SYNC:
		mark_sync(c);
		break;
	case EF_D2H:
		roundtrip(c, call, type ? type : kb_type(c->kb, "cupy.ndarray"), r.name);
		mark_sync(c);
		break;
	case EF_H2D: {
		PNode data = type ? node_field(c, callee, F_OBJECT) : first_positional(c, args);
		transfer(c, call, data, r.name);
		mark_gpu(c, call);
		break;
	}
	case EF_CLOCK:
		clock_read(c, call, r.name);
		break;
	case EF_TIMEIT:
		timeit_check(c, call, r.name);
		break;
	default:
		if (lib && r.kind == R_QUAL)
			mixed_check(c, call, args, lib, r.name);
		break;
	}
	free(r.name);
}

void gpu_after_binary(struct ctx *c, PNode n)
{
	if (!c->gpu_file)
		return;
	struct res r = resolve_value(c, n);
	if (device_type(c, &r))
		mark_gpu(c, n);
	free(r.name);
}

/* `if x:` / `while x:` on a device value asks the GPU for a bool. */
void gpu_check_condition(struct ctx *c, PNode cond)
{
	if (!c->gpu_file || pn_is_null(cond))
		return;
	struct res r = resolve_value(c, cond);
	const struct kb_type *t = device_type(c, &r);
	free(r.name);
	if (t) {
		roundtrip(c, cond, t, "a condition on a device value");
		mark_sync(c);
	}
}

void gpu_leave_function(struct ctx *c, int func)
{
	if (func < 0)
		return;
	const struct frame *f = top_frame(c);
	c->funcs[func].does_gpu = f->did_gpu;
	c->funcs[func].ends_pending = f->pending;
}

/* ---- element-wise Python loops ---- */

struct loopscan {
	const char *vars[4];
	size_t lens[4];
	size_t nvars;
	bool nested;
	bool typed_array;
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

/* Does the index of a subscript use one of the loop variables? */
static bool index_uses(const struct ctx *c, PNode n, const struct loopscan *ls, int depth)
{
	if (pn_is_null(n) || depth > 8 || node_kind(c, n) == NK_SLICE)
		return false; /* a[i:i + k] works on a block, not an element */
	if (node_kind(c, n) == NK_IDENTIFIER) {
		size_t len;
		const char *s = node_text(c, n, &len);
		for (size_t i = 0; i < ls->nvars; i++)
			if (len == ls->lens[i] && memcmp(s, ls->vars[i], len) == 0)
				return true;
		return false;
	}
	uint32_t k = pn_named_child_count(n);
	for (uint32_t i = 0; i < k && i < 8; i++)
		if (index_uses(c, pn_named_child(n, i), ls, depth + 1))
			return true;
	return false;
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
	if (k == NK_FOR && ls->nvars < 4 && is_range_loop(c, n, &ls->vars[ls->nvars], &ls->lens[ls->nvars])) {
		ls->nvars++;
		ls->nested = true;
	} else if (k == NK_SUBSCRIPT && !has_slice(c, n) && index_uses(c, node_field(c, n, F_SUBSCRIPT), ls, 0)) {
		PNode v = node_field(c, n, F_VALUE);
		enum nk vk = node_kind(c, v);
		if (vk == NK_IDENTIFIER || vk == NK_ATTRIBUTE) {
			if (pn_is_null(ls->example))
				ls->example = n;
			/* a host array; device arrays indexed in a loop are usually an
			 * iterative algorithm's rows, not elements */
			struct res r = resolve_value(c, v);
			ls->typed_array |= r.kind == R_VALUE && !device_type(c, &r);
			free(r.name);
		}
	}
	return false;
}

void gpu_enter_for(struct ctx *c, PNode forn)
{
	if (!c->array_file || !c->ps->anti[4] || pn_start_byte(forn) < c->pyloop_until)
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
	if (pn_is_null(ls.example) || !(ls.nested || ls.typed_array))
		return;
	char *ex = snippet(c, ls.example);
	char *head = snippet(c, node_field(c, forn, F_RIGHT));
	struct finding *f = add_finding(c, forn, c->ps->anti[4], "python", "Python loops", "cupy", "for");
	finding_end_at(c, f, node_field(c, forn, F_RIGHT));
	f->message = xasprintf("element-by-element Python loop%s: `for %.*s in %s` reads `%s` one element "
			       "at a time", ls.nested ? " nest" : "", (int)ls.lens[0], ls.vars[0], head, ex);
	f->fix = xstrdup("vectorize it as whole-array NumPy expressions (broadcasting, slicing, reductions), "
			 "which then run on the GPU with CuPy; write a custom kernel (Numba-CUDA-MLIR, Warp) "
			 "only if that is not enough");
	c->pyloop_until = pn_end_byte(forn);
	free(ex);
	free(head);
}
