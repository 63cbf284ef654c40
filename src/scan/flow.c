/* flow: see flow.h.
 *
 * An abstract interpreter over the syntax tree. Each function body runs in a
 * frame: its names (an env), the timing state (GPU work pending, a clock
 * read since), the hot loops around the current statement and what makes
 * the frame hot. A branch runs on a copy of the state and the copies are
 * joined; a loop body runs silently (no events) until the names stop
 * changing, then once more for real. A call to a function of the file runs
 * its body in a new frame with the call site's values (memoised per
 * signature, recursion cut); whatever was not run that way is run once,
 * standalone, at the end, with unknown parameters — or with the project's
 * values and hot loop when another module calls it. Work is bounded by a
 * budget of evaluated nodes per file; past it values are unknown, and where
 * it ran out is the caller's to say (flow_stop). */
#include "flow.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/symtab.h"
#include "core/util.h"
#include "env.h"
#include "project.h"

#define FLOW_LOOP_ROUNDS 3
#define FLOW_MAX_CALLS 8     /* nested analyses of functions of the file */
#define FLOW_MEMO 6          /* analyses kept per function */
#define FLOW_BUDGET 600000   /* evaluated nodes per file */
#define FLOW_FIX_NEST 2      /* loops nested deeper run their body once, not to a fixed point */
#define FLOW_MAX_NEST 96     /* expressions and statements nested deeper are unknown */

/* ---- state ---- */

struct tstate {
	bool pending;   /* GPU work launched and not waited for */
	bool clock;     /* a clock was read in this frame */
	bool since;     /* GPU work launched since that clock read, no sync since */
	uint32_t gpu_line;
};

struct memo {
	uint64_t key;
	struct val ret;
	bool did_gpu, pending, synced;
};

struct fn {
	PNode def;          /* function_definition or lambda */
	const char *name, *qual;
	int cls;            /* its class, or -1 */
	bool lambda, opaque, kernel, jitted, staticm;
	bool rawkernel; /* cupyx.jit.rawkernel: launched by a plain call, its body device code */
	bool prop;          /* @property: reading the attribute calls it */
	bool ran_events;    /* analysed with events at least once */
	bool ran_hot;       /* ... in a hot frame */
	bool active;        /* on the call stack */
	struct val ret;
	bool did_gpu, pending, have_ret;
	struct memo memo[FLOW_MEMO];
	int nmemo;
};

struct cls {
	PNode def;
	const char *name, *qual;
	int base;           /* a class of the file it derives from, or -1 */
	const char *base_qual;
	struct env attrs;   /* self.X of its instances */
};

struct frame {
	struct frame *up;
	int fn;             /* -1: the module */
	struct env env;
	struct val self;
	struct tstate ts;
	uint32_t depth, loop_line, loop_cell;
	PNode loop_body, loop_stmt; /* the innermost hot loop */
	bool throttled, in_stream;
	/* bit d: the hot loop at depth d holds a deeper loop that waits for the
	 * GPU in every iteration (an RL trainer's rollout of steps, each copying
	 * its action back): what the loop at d copies once per iteration beside
	 * it is not what makes the loop slow */
	uint32_t inner_sync;
	uint32_t rb_floor; /* inside a loop entered under a throttled branch of the loop at this depth:
			      its waits do not count for the loops at or above it */
	/* the device values (by name) that the tests of the if arms around
	 * here read back: `if frac > 0.2: log(f"{frac}")` reads frac once more,
	 * after the test already waited for it */
	const char *tested[8];
	uint8_t ntested;
	bool hot;
	uint32_t hot_line, hot_cell;
	const char *via;
	struct val ret;
	bool has_ret, ret_pending, dead, did_gpu, did_sync;
	uint32_t truth_stmt;
	const char *globals[16];
	int nglobals;
	int fix_nest;
};

struct flow {
	const struct flow_options *o;
	const struct nodeinfo *ni;
	const struct source *src;
	const char *text;
	struct symtab pool;
	struct val *tup;
	size_t ntup, captup;
	struct fn *fns;
	size_t nfns, capfns;
	struct cls *cls;
	size_t ncls, capcls;
	struct frame *cur;
	struct frame *modframe;
	int silent;
	long budget;
	int calls;
	int nest;            /* eval / exec recursion depth */
	const char *module;
	struct flow_summary *sum;
	struct flow_stop stop; /* where the budget ran out (line 0: it has not) */
};

/* ---- small helpers ---- */

static enum nk K(const struct flow *f, PNode n)
{
	return nk_of(f->ni, n);
}

static PNode F(const struct flow *f, PNode n, enum field fl)
{
	return nk_field(f->ni, n, fl);
}

const struct nodeinfo *flow_nodes(const struct flow *f)
{
	return f->ni;
}

const struct source *flow_source(const struct flow *f)
{
	return f->src;
}

const char *flow_text(const struct flow *f, PNode n, size_t *len)
{
	if (pn_is_null(n)) {
		*len = 0;
		return "";
	}
	*len = pn_end_byte(n) - pn_start_byte(n);
	return f->text + pn_start_byte(n);
}

/* Is n's source text exactly s[0..len)? */
static bool text_eq(const struct flow *f, PNode n, const char *s, size_t len)
{
	size_t l;
	const char *t = flow_text(f, n, &l);
	return l == len && memcmp(t, s, len) == 0;
}

static bool text_is(const struct flow *f, PNode n, const char *s)
{
	return text_eq(f, n, s, strlen(s));
}

uint32_t flow_user_line(const struct flow *f, PNode n, uint32_t *cell)
{
	uint32_t row = pn_start_point(n).row;
	if (f->src->notebook && row < f->src->nlines) {
		*cell = f->src->line_cell[row];
		return f->src->line_in_cell[row] + 1;
	}
	*cell = 0;
	return row + 1;
}

static const char *intern(struct flow *f, const char *s, size_t len)
{
	const struct binding *b = symtab_get(&f->pool, s, len);
	if (!b) {
		symtab_set(&f->pool, s, len, B_SHADOW, NULL, -1);
		b = symtab_get(&f->pool, s, len);
	}
	return b->name;
}

static const char *internz(struct flow *f, const char *s)
{
	return intern(f, s, strlen(s));
}

static const char *node_name(struct flow *f, PNode n)
{
	size_t len;
	const char *s = flow_text(f, n, &len);
	return intern(f, s, len);
}

static const char *qual_join(struct flow *f, const char *a, const char *b, size_t blen)
{
	char *s = xasprintf("%s.%.*s", a, (int)blen, b);
	const char *r = internz(f, s);
	free(s);
	return r;
}

static bool word_in(const char *s, size_t len, const char *const *words)
{
	for (const char *const *w = words; *w; w++) {
		size_t n = strlen(*w);
		for (size_t i = 0; i + n <= len; i++)
			if (strncasecmp(s + i, *w, n) == 0)
				return true;
	}
	return false;
}

/* ---- values ---- */

static struct val V(enum vkind k)
{
	return (struct val){.kind = (uint8_t)k, .ref = -1, .ref2 = -1};
}

static struct val VD(enum vkind k, enum vfam fam, uint32_t line)
{
	struct val v = V(k);
	v.fam = (uint8_t)fam;
	v.line = line;
	return v;
}

bool val_on_device(const struct val *v)
{
	return v->kind == V_DEVICE_ARRAY || v->kind == V_DEVICE_SCALAR;
}

bool val_eq(const struct val *a, const struct val *b)
{
	return a->kind == b->kind && a->fam == b->fam && a->flags == b->flags && a->ref == b->ref &&
	       a->ref2 == b->ref2 && a->qual == b->qual && a->n == b->n;
}

static int tuple_new(struct flow *f, const struct val *elems, uint8_t n)
{
	if (f->ntup + n > f->captup) {
		f->captup = (f->captup + n) * 2;
		f->tup = xrealloc(f->tup, f->captup * sizeof *f->tup);
	}
	int at = (int)f->ntup;
	memcpy(f->tup + f->ntup, elems, n * sizeof *elems);
	f->ntup += n;
	return at;
}

static struct val tuple_val(struct flow *f, const struct val *elems, size_t n)
{
	if (n > 32)
		return V(V_UNKNOWN);
	struct val t = V(V_TUPLE);
	t.n = (uint8_t)n;
	t.ref = n ? tuple_new(f, elems, (uint8_t)n) : -1;
	return t;
}

static struct val tuple_at(const struct flow *f, const struct val *t, size_t i)
{
	if (t->kind != V_TUPLE || i >= t->n || t->ref < 0)
		return V(V_UNKNOWN);
	return f->tup[t->ref + (int)i];
}

/* The first device value a tuple, list or dict holds (itself, if it is
 * one), into *out. */
static bool device_inside(const struct flow *f, const struct val *v, struct val *out, int depth)
{
	if (val_on_device(v)) {
		*out = *v;
		return true;
	}
	if (v->kind != V_TUPLE || depth > 4)
		return false;
	for (size_t i = 0; i < v->n; i++) {
		struct val e = tuple_at(f, v, i);
		if (device_inside(f, &e, out, depth + 1))
			return true;
	}
	return false;
}

/* Is v device data, or a tuple, list or dict holding some? */
static bool holds_device(const struct flow *f, const struct val *v, int depth)
{
	struct val which;
	return device_inside(f, v, &which, depth);
}

/* A list (dict: VF_DICT) of values like v, as one element (VF_ELEMS). */
static struct val elems_val(struct flow *f, struct val v, uint32_t dict)
{
	struct val t = tuple_val(f, &v, 1);
	t.flags |= VF_ELEMS | dict;
	return t;
}

static int kind_rank(const struct val *v)
{
	switch (v->kind) {
	case V_DEVICE_ARRAY: return 6;
	case V_DEVICE_SCALAR: return 5;
	default: return 0;
	}
}

/* Whether a library name is a constructor that makes device data (its kb
 * entry's flow says so). */
static bool makes_device(struct flow *f, const char *qual)
{
	const struct kb_library *lib = kb_library_for(f->o->kb, qual);
	const struct kb_entry *e = lib ? kb_lookup(lib, qual) : NULL;
	return e && e->flow && !strcmp(e->flow, "device-constructor");
}

/* The join of two values: what a name may hold after two paths. A value
 * that may be on the device is taken to be (a GPU run of the code). */
static struct val join(struct flow *f, struct val a, struct val b)
{
	if (val_eq(&a, &b))
		return a;
	if (a.kind == V_UNKNOWN || a.kind == V_NONE)
		return b.kind == V_NONE ? a : b;
	if (b.kind == V_UNKNOWN || b.kind == V_NONE)
		return a;
	if (val_on_device(&a) || val_on_device(&b))
		return kind_rank(&a) >= kind_rank(&b) ? a : b;
	if (a.kind == V_DEVSPEC && b.kind == V_DEVSPEC) {
		a.flags |= b.flags & VF_GPU;
		return a;
	}
	if ((a.kind == V_ARRAY_MODULE || a.kind == V_QUAL) && (b.kind == V_ARRAY_MODULE || b.kind == V_QUAL)) {
		/* cupy if gpu else numpy: an array module that may be CuPy */
		bool gpu = (a.kind == V_ARRAY_MODULE && (a.flags & VF_GPU)) ||
			   (b.kind == V_ARRAY_MODULE && (b.flags & VF_GPU)) ||
			   (a.qual && str_starts_with(a.qual, "cupy")) || (b.qual && str_starts_with(b.qual, "cupy"));
		bool np = (a.qual && str_starts_with(a.qual, "numpy")) || (b.qual && str_starts_with(b.qual, "numpy"));
		if (gpu && (np || a.kind == V_ARRAY_MODULE || b.kind == V_ARRAY_MODULE)) {
			struct val m = VD(V_ARRAY_MODULE, FAM_CUPY, a.line);
			m.flags = VF_GPU;
			return m;
		}
		if (a.kind == V_QUAL && b.kind == V_QUAL && a.qual && b.qual) {
			/* cupy.dot if real else cupy.vdot: one library's functions;
			 * torch.FloatTensor if cpu else torch.cuda.FloatTensor: the
			 * one that makes device data, as for any join */
			size_t la = strcspn(a.qual, "."), lb = strcspn(b.qual, ".");
			if (la == lb && strncmp(a.qual, b.qual, la) == 0)
				return makes_device(f, b.qual) && !makes_device(f, a.qual) ? b : a;
		}
		return V(V_UNKNOWN);
	}
	if (a.kind == V_FUNCTION && b.kind == V_FUNCTION) {
		if (a.ref2 < 0 && b.ref != a.ref)
			a.ref2 = b.ref;
		return a;
	}
	if (a.kind == V_TUPLE && b.kind == V_TUPLE && a.n == b.n) {
		struct val el[32];
		for (size_t i = 0; i < a.n; i++)
			el[i] = join(f, tuple_at(f, &a, i), tuple_at(f, &b, i));
		return tuple_val(f, el, a.n);
	}
	if (a.kind == V_HOST_ARRAY || b.kind == V_HOST_ARRAY)
		return a.kind == V_HOST_ARRAY ? a : b;
	if (a.kind == b.kind)
		return a;
	return V(V_UNKNOWN);
}

/* ---- envs ---- */

static struct val join_of(void *ctx, struct val a, struct val b)
{
	return join(ctx, a, b);
}

/* dst = dst joined with src (a name bound on one side only keeps its value). */
static void env_join_f(struct flow *f, struct env *dst, const struct env *src)
{
	env_join(dst, src, join_of, f);
}

static void ts_join(struct tstate *a, const struct tstate *b)
{
	a->pending |= b->pending;
	a->clock |= b->clock;
	a->since |= b->since;
	if (b->gpu_line > a->gpu_line)
		a->gpu_line = b->gpu_line;
}

/* ---- events ---- */

static struct flow_place place(const struct flow *f)
{
	const struct frame *fr = f->cur;
	struct flow_place p = {0};
	p.depth = fr->depth;
	p.throttled = fr->throttled || (fr->depth && fr->depth < 32 && (fr->inner_sync & (1u << fr->depth)));
	p.in_stream = fr->in_stream;
	p.hot_func = fr->hot;
	p.func = fr->fn >= 0 ? f->fns[fr->fn].name : NULL;
	if (fr->depth) {
		p.loop_line = fr->loop_line;
		p.loop_cell = fr->loop_cell;
	} else if (fr->hot) {
		p.loop_line = fr->hot_line;
		p.loop_cell = fr->hot_cell;
		p.via = fr->via;
	}
	return p;
}

static void emit(struct flow *f, struct flow_event *ev)
{
	if (f->silent)
		return;
	ev->place = place(f);
	for (size_t i = 0; i < f->o->npasses; i++)
		if (f->o->passes[i].on_event)
			f->o->passes[i].on_event(f, ev, f->o->pass_ctx);
}

static void mark_gpu(struct flow *f, PNode at)
{
	struct frame *fr = f->cur;
	uint32_t cell;
	fr->ts.pending = true;
	fr->ts.since |= fr->ts.clock; /* only GPU work after a clock read counts against it */
	fr->ts.gpu_line = flow_user_line(f, at, &cell);
	fr->did_gpu = true;
}

static void mark_sync(struct flow *f)
{
	f->cur->ts.pending = f->cur->ts.since = false;
	f->cur->did_sync = true;
}

/* A device value read back (a copy to the host, a truth test) in every
 * iteration of a loop nested in others: the loops around it hold a
 * per-iteration wait (frame.inner_sync). */
static void mark_readback(struct flow *f)
{
	struct frame *fr = f->cur;
	if (fr->depth >= 2 && fr->depth < 32 && !fr->throttled)
		fr->inner_sync |= ((1u << fr->depth) - 1) & ~((2u << fr->rb_floor) - 1);
}

static bool reads_name(struct flow *f, PNode t, const char *name, size_t len, int depth);

/* Is the call `ENV.step(...)` on a name that says it is an environment
 * (env, envs, eval_env, self.train_envs: Gymnasium's interface)? */
static bool env_step_call(struct flow *f, PNode call)
{
	if (K(f, call) != NK_CALL)
		return false;
	PNode fn = F(f, call, F_FUNCTION);
	if (K(f, fn) != NK_ATTRIBUTE || !text_is(f, F(f, fn, F_ATTRIBUTE), "step"))
		return false;
	PNode recv = F(f, fn, F_OBJECT);
	if (K(f, recv) == NK_ATTRIBUTE)
		recv = F(f, recv, F_ATTRIBUTE);
	if (K(f, recv) != NK_IDENTIFIER)
		return false;
	size_t len;
	const char *s = flow_text(f, recv, &len);
	return memmem(s, len, "env", 3) != NULL || memmem(s, len, "Env", 3) != NULL;
}

/* Does the tree call ENV.step with the name among (or inside) its
 * arguments? */
static bool steps_env_with(struct flow *f, PNode t, const char *name, size_t len, int depth)
{
	if (pn_is_null(t) || depth > 40)
		return false;
	enum nk k = K(f, t);
	if (depth > 0 && (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA))
		return false;
	if (k == NK_CALL && env_step_call(f, t) && reads_name(f, F(f, t, F_ARGUMENTS), name, len, 0))
		return true;
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (steps_env_with(f, pn_named_child(t, i), name, len, depth + 1))
			return true;
	return false;
}

/* A copy to the host whose result is the action handed to a CPU
 * environment (envs.step(action.cpu().numpy()), or a name assigned from the
 * copy and stepped with in the same loop): the interface to a simulator
 * that runs on the host, not a round trip to remove. */
static bool feeds_env_step(struct flow *f, PNode at)
{
	PNode n = at;
	for (int i = 0; i < 8; i++) {
		PNode p = pn_parent(n);
		if (pn_is_null(p))
			return false;
		enum nk k = K(f, p);
		if (k == NK_ATTRIBUTE || k == NK_CALL || k == NK_ARGUMENT_LIST || k == NK_PARENTHESIZED ||
		    k == NK_SUBSCRIPT || k == NK_KEYWORD_ARGUMENT) {
			if (k == NK_CALL && env_step_call(f, p))
				return true;
			n = p;
			continue;
		}
		if (k == NK_ASSIGNMENT && pn_eq(F(f, p, F_RIGHT), n)) {
			PNode l = F(f, p, F_LEFT);
			PNode body = f->cur->loop_body;
			if (K(f, l) != NK_IDENTIFIER || pn_is_null(body))
				return false;
			size_t len;
			const char *name = flow_text(f, l, &len);
			return steps_env_with(f, body, name, len, 0);
		}
		return false;
	}
	return false;
}

static void d2h(struct flow *f, PNode at, const char *what, struct val v, bool async)
{
	struct flow_event ev = {.kind = FE_D2H, .at = at, .what = what, .value = v, .async = async};
	ev.interface = !async && !f->silent && f->cur->depth && feeds_env_step(f, at);
	if (K(f, at) == NK_IDENTIFIER)
		for (uint8_t i = 0; i < f->cur->ntested; i++)
			ev.retested |= f->cur->tested[i] == node_name(f, at);
	emit(f, &ev);
	if (!async) {
		mark_sync(f);
		mark_readback(f);
	}
}

/* A device value tested for truth: once per statement. */
static void truth(struct flow *f, PNode at, struct val v)
{
	if (!val_on_device(&v))
		return;
	struct frame *fr = f->cur;
	if (f->silent) {
		mark_sync(f);
		mark_readback(f);
		return;
	}
	PNode stmt = at;
	while (!pn_is_null(pn_parent(stmt)) && K(f, pn_parent(stmt)) != NK_BLOCK && K(f, pn_parent(stmt)) != NK_MODULE)
		stmt = pn_parent(stmt);
	if (fr->truth_stmt == pn_start_byte(stmt) + 1)
		return;
	fr->truth_stmt = pn_start_byte(stmt) + 1;
	struct flow_event ev = {.kind = FE_TRUTH, .at = at, .what = "a truth test of a device value", .value = v};
	emit(f, &ev);
	mark_sync(f);
	mark_readback(f);
}

/* ---- the tree of the file: functions and classes ---- */

static int fn_of_def(const struct flow *f, PNode def)
{
	for (size_t i = 0; i < f->nfns; i++)
		if (pn_eq(f->fns[i].def, def))
			return (int)i;
	return -1;
}

static int cls_of_def(const struct flow *f, PNode def)
{
	for (size_t i = 0; i < f->ncls; i++)
		if (pn_eq(f->cls[i].def, def))
			return (int)i;
	return -1;
}

/* Collects every def, lambda and class, with qualified names
 * (module.Class.method), iteratively. */
static void collect(struct flow *f, PNode root)
{
	struct item { PNode n; int cls; const char *prefix; } stack[256];
	int sp = 0;
	stack[sp++] = (struct item){root, -1, f->module};
	while (sp > 0) {
		struct item top = stack[--sp];
		PNode n = top.n;
		uint32_t k = pn_named_child_count(n);
		for (uint32_t i = k; i-- > 0;) {
			PNode c = pn_named_child(n, i);
			enum nk kind = K(f, c);
			int cls = top.cls;
			const char *prefix = top.prefix;
			if (kind == NK_FUNCTION_DEF || kind == NK_LAMBDA) {
				if (f->nfns == f->capfns) {
					f->capfns = f->capfns ? f->capfns * 2 : 32;
					f->fns = xrealloc(f->fns, f->capfns * sizeof *f->fns);
				}
				struct fn *fn = &f->fns[f->nfns++];
				memset(fn, 0, sizeof *fn);
				fn->def = c;
				fn->lambda = kind == NK_LAMBDA;
				fn->cls = -1;
				fn->name = kind == NK_LAMBDA ? internz(f, "<lambda>") : node_name(f, F(f, c, F_NAME));
				/* a method: directly in a class body (through a decorator too) */
				PNode up = pn_parent(c);
				if (K(f, up) == NK_DECORATED_DEF)
					up = pn_parent(up);
				if (K(f, up) == NK_BLOCK && K(f, pn_parent(up)) == NK_CLASS_DEF)
					fn->cls = cls_of_def(f, pn_parent(up));
				fn->qual = prefix ? qual_join(f, prefix, fn->name, strlen(fn->name)) : fn->name;
				fn->ret = V(V_UNKNOWN);
				cls = -1;
				prefix = fn->qual;
			} else if (kind == NK_CLASS_DEF) {
				if (f->ncls == f->capcls) {
					f->capcls = f->capcls ? f->capcls * 2 : 16;
					f->cls = xrealloc(f->cls, f->capcls * sizeof *f->cls);
				}
				struct cls *cl = &f->cls[f->ncls++];
				memset(cl, 0, sizeof *cl);
				cl->def = c;
				cl->name = node_name(f, F(f, c, F_NAME));
				cl->qual = prefix ? qual_join(f, prefix, cl->name, strlen(cl->name)) : cl->name;
				cl->base = -1;
				cls = (int)(f->ncls - 1);
				prefix = cl->qual;
			}
			if (sp < (int)(sizeof stack / sizeof *stack))
				stack[sp++] = (struct item){c, cls, prefix};
		}
	}
}

/* Methods named `name` of class ci or the classes it derives from. */
static int method_of(const struct flow *f, int ci, const char *name)
{
	for (int guard = 0; ci >= 0 && guard < 16; guard++) {
		for (size_t i = 0; i < f->nfns; i++)
			if (f->fns[i].cls == ci && f->fns[i].name == name)
				return (int)i;
		ci = f->cls[ci].base;
	}
	return -1;
}

static bool derives(const struct flow *f, int ci, int base)
{
	for (int guard = 0; ci >= 0 && guard < 16; guard++) {
		if (ci == base)
			return true;
		ci = f->cls[ci].base;
	}
	return false;
}

/* ---- names ---- */

static bool is_global(const struct frame *fr, const char *name)
{
	for (int i = 0; i < fr->nglobals; i++)
		if (fr->globals[i] == name)
			return true;
	return false;
}

static struct val lookup(struct flow *f, const char *name)
{
	for (struct frame *fr = f->cur; fr; fr = NULL) {
		const struct env_ent *e = env_find(&fr->env, name);
		if (e)
			return e->v;
	}
	const struct env_ent *e = env_find(&f->modframe->env, name);
	return e ? e->v : V(V_UNKNOWN);
}

struct val flow_lookup(const struct flow *f, const char *name, size_t len)
{
	const struct binding *b = symtab_get(&f->pool, name, len);
	if (!b)
		return V(V_UNKNOWN);
	const struct env_ent *e = env_find(&f->cur->env, b->name);
	if (!e)
		e = env_find(&f->modframe->env, b->name);
	return e ? e->v : V(V_UNKNOWN);
}

static bool bound(struct flow *f, const char *name)
{
	return env_find(&f->cur->env, name) || env_find(&f->modframe->env, name);
}

static void flow_bind(struct flow *f, const char *name, struct val v)
{
	struct frame *fr = f->cur;
	if (fr != f->modframe && is_global(fr, name))
		env_set(&f->modframe->env, name, v);
	else
		env_set(&fr->env, name, v);
}

/* ---- evaluation ---- */

static struct val eval(struct flow *f, PNode n);
static void exec_block(struct flow *f, PNode block);
static void exec_stmt(struct flow *f, PNode s);
static struct val call_fn(struct flow *f, int fi, struct val self, const struct val *args, size_t nargs,
			  PNode callsite);

static uint32_t line_of(struct flow *f, PNode n)
{
	uint32_t cell;
	return flow_user_line(f, n, &cell);
}

static struct val element_of(struct flow *f, struct val it)
{
	if (val_on_device(&it))
		return it; /* rows of a device array are device arrays */
	if (it.kind == V_DEVICE_OBJECT && it.fam == FAM_TORCH) /* a prepared loader: device batches */
		return VD(V_DEVICE_ARRAY, FAM_TORCH, it.line);
	if (it.kind == V_TUPLE && (it.flags & VF_DICT))
		return V(V_UNKNOWN); /* a dict's keys */
	if (it.kind == V_TUPLE) {
		struct val j = V(V_UNKNOWN);
		for (size_t i = 0; i < it.n; i++)
			j = i ? join(f, j, tuple_at(f, &it, i)) : tuple_at(f, &it, i);
		return j;
	}
	if (it.kind == V_HOST_ARRAY)
		return it;
	return V(V_UNKNOWN);
}

/* Is the index a boolean mask written out (x > 0, ~(x > 0), (a < 0) | (b > 1))? */
struct val flow_peek(struct flow *f, PNode expr);

static bool mask_expr(struct flow *f, PNode n, int depth)
{
	if (pn_is_null(n) || depth > 8)
		return false;
	switch (K(f, n)) {
	case NK_COMPARISON:
		return true;
	case NK_IDENTIFIER: { /* mask = x > 0; y[mask] */
		struct val v = lookup(f, node_name(f, n));
		return val_on_device(&v) && (v.flags & VF_MASK);
	}
	case NK_CALL: { /* x[~cp.isnan(x).any(axis=1)]: a call whose result is a mask */
		if (K(f, F(f, n, F_FUNCTION)) != NK_ATTRIBUTE)
			return false;
		struct val v = flow_peek(f, n);
		return val_on_device(&v) && (v.flags & VF_MASK);
	}
	case NK_PARENTHESIZED:
		return mask_expr(f, pn_named_child(n, 0), depth + 1);
	case NK_UNARY: {
		size_t len;
		const char *t = flow_text(f, n, &len);
		return len && t[0] == '~' && mask_expr(f, F(f, n, F_ARGUMENT), depth + 1);
	}
	case NK_BINARY: {
		PNode op = F(f, n, F_OPERATOR);
		return (text_is(f, op, "&") || text_is(f, op, "|") || text_is(f, op, "^")) &&
		       mask_expr(f, F(f, n, F_LEFT), depth + 1) && mask_expr(f, F(f, n, F_RIGHT), depth + 1);
	}
	default:
		return false;
	}
}

/* x[mask] (write: x[mask] = v) on a device array whose type counts the
 * mask on the host first (the kb's mask_indexing: CuPy reads the number of
 * true values to size the result; PyTorch does for a read): a synchronize,
 * then the gather or scatter kernel. */
static void mask_index(struct flow *f, PNode at, const struct val *v, PNode sub, bool write)
{
	static const char *const types[] = {"", "cupy.ndarray", "torch.cuda.Tensor", "numba.cuda.DeviceNDArray", "jax.Array"};
	if (!val_on_device(v) || !mask_expr(f, sub, 0))
		return;
	const struct kb_type *t = kb_type(f->o->kb, types[v->fam < 5 ? v->fam : 0]);
	if (!t || !(write ? t->mask_sync : t->mask_sync_read))
		return;
	d2h(f, at, v->fam == FAM_TORCH ? "boolean-mask indexing (PyTorch counts the true values on the host)"
		   : "boolean-mask indexing (CuPy counts the true values on the host)", *v, false);
	mark_gpu(f, at);
}

/* Binds an assignment / loop target to a value. */
static void bind_target(struct flow *f, PNode t, struct val v, int depth)
{
	if (pn_is_null(t) || depth > 16)
		return;
	switch (K(f, t)) {
	case NK_IDENTIFIER:
		flow_bind(f, node_name(f, t), v);
		return;
	case NK_ATTRIBUTE: {
		PNode obj = F(f, t, F_OBJECT);
		struct val o = K(f, obj) == NK_IDENTIFIER ? lookup(f, node_name(f, obj)) : V(V_UNKNOWN);
		if (o.kind == V_INSTANCE && o.ref >= 0 && o.ref < (int)f->ncls) {
			struct env *a = &f->cls[o.ref].attrs;
			const char *an = node_name(f, F(f, t, F_ATTRIBUTE));
			const struct env_ent *x = env_find(a, an);
			env_set(a, an, x ? join(f, x->v, v) : v);
		}
		eval(f, obj);
		return;
	}
	case NK_SUBSCRIPT: {
		struct val a = eval(f, F(f, t, F_VALUE));
		PNode sub = F(f, t, F_SUBSCRIPT);
		if (val_on_device(&a) && pn_named_child_count(t) == 2 && mask_expr(f, sub, 0)) {
			eval(f, sub);
			mask_index(f, t, &a, sub, true);
		} else if (val_on_device(&a)) {
			for (uint32_t i = 1; i < pn_named_child_count(t); i++)
				if (mask_expr(f, pn_named_child(t, i), 0)) {
					mask_index(f, t, &a, pn_named_child(t, i), true);
					break;
				}
		}
		return;
	}
	case NK_PATTERN_LIST:
	case NK_TUPLE_PATTERN:
	case NK_LIST_PATTERN:
	case NK_TUPLE:
	case NK_LIST:
	case NK_EXPR_LIST: {
		uint32_t k = pn_named_child_count(t);
		for (uint32_t i = 0; i < k; i++) {
			PNode c = pn_named_child(t, i);
			struct val e = v.kind == V_TUPLE ? tuple_at(f, &v, i) : val_on_device(&v) ? v : V(V_UNKNOWN);
			if (K(f, c) == NK_LIST_SPLAT_PATTERN || K(f, c) == NK_LIST_SPLAT)
				e = V(V_UNKNOWN);
			bind_target(f, c, e, depth + 1);
		}
		return;
	}
	case NK_PARENTHESIZED:
		bind_target(f, pn_named_child(t, 0), v, depth + 1);
		return;
	default:
		return;
	}
}

/* A string literal: a device string ("cuda", "cuda:0", f"cuda:{rank}") is a
 * device spec; f-string fields of device values copy them to the host. */
static struct val eval_string(struct flow *f, PNode s)
{
	uint32_t k = pn_named_child_count(s);
	bool first_content = true, cuda = false;
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		if (K(f, c) == NK_INTERPOLATION) {
			PNode e = F(f, c, F_EXPRESSION);
			if (pn_is_null(e))
				e = pn_named_child(c, 0);
			struct val v = eval(f, e);
			if (val_on_device(&v))
				d2h(f, e, "formatting a device value in an f-string", v, false);
			first_content = false;
		} else if (K(f, c) == NK_STRING_CONTENT && first_content) {
			size_t len;
			const char *t = flow_text(f, c, &len);
			cuda = len >= 4 && strncmp(t, "cuda", 4) == 0 && (len == 4 || t[4] == ':');
			first_content = false;
		}
	}
	struct val v = V(cuda ? V_DEVSPEC : V_HOST_SCALAR);
	if (cuda)
		v.flags = VF_GPU;
	return v;
}

static struct val eval_test(struct flow *f, PNode n);
static bool throttling(struct flow *f, PNode cond);
static bool names_in(struct flow *f, PNode t, const char *name, size_t len, int depth);
struct val flow_peek(struct flow *f, PNode expr);

/* a op b: a device value if either is one (of that family), else an array,
 * else a host scalar. */
static struct val arith(struct val a, struct val b, uint32_t line)
{
	if (val_on_device(&a) || val_on_device(&b)) {
		const struct val *d = val_on_device(&a) ? &a : &b;
		bool arr = a.kind == V_DEVICE_ARRAY || b.kind == V_DEVICE_ARRAY;
		return VD(arr ? V_DEVICE_ARRAY : V_DEVICE_SCALAR, (enum vfam)d->fam, line);
	}
	if (a.kind == V_HOST_ARRAY || b.kind == V_HOST_ARRAY)
		return VD(V_HOST_ARRAY, (enum vfam)(a.kind == V_HOST_ARRAY ? a.fam : b.fam), line);
	if (a.kind == V_HOST_SCALAR && b.kind == V_HOST_SCALAR)
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	if ((a.kind == V_HOST_SCALAR && b.kind == V_UNKNOWN) || (b.kind == V_HOST_SCALAR && a.kind == V_UNKNOWN))
		return V(V_UNKNOWN);
	return V(V_UNKNOWN);
}

/* Is the loop cold: once per epoch, trial, device, problem size or a
 * handful of iterations (a literal range or tuple of at most 4)? */
/* A loop over a list written out by hand is cold when it is short (at most
 * 4 items), or when it names at most 8 functions or objects (for func in
 * [identity, sato, frangi]): a sweep over cases to compare, each its own
 * piece of work. A longer list of numbers is data (sizes to run). */
static bool cold_literal(struct flow *f, PNode list)
{
	uint32_t n = pn_named_child_count(list);
	if (n <= 4)
		return true;
	if (n > 8)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		enum nk k = K(f, pn_named_child(list, i));
		if (k != NK_IDENTIFIER && k != NK_ATTRIBUTE)
			return false;
	}
	return true;
}

/* Is every assignment of the name in the tree (not inside nested
 * functions) a short hand-written list, and is there one? */
static void literal_assignments(struct flow *f, PNode t, const char *name, size_t len, int *lit, int *other, int depth,
				long *budget)
{
	if (pn_is_null(t) || depth > 64 || --*budget < 0)
		return;
	enum nk k = K(f, t);
	if (depth > 0 && (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA))
		return;
	if (k == NK_ASSIGNMENT || k == NK_AUG_ASSIGNMENT) {
		PNode l = F(f, t, F_LEFT), r = F(f, t, F_RIGHT);
		if (K(f, l) == NK_IDENTIFIER && text_eq(f, l, name, len)) {
			enum nk rk = K(f, r);
			if (k == NK_ASSIGNMENT && (rk == NK_TUPLE || rk == NK_LIST || rk == NK_EXPR_LIST) &&
			    pn_named_child_count(r) > 0 && cold_literal(f, r))
				++*lit;
			else
				++*other;
		}
	}
	if (k == NK_ATTRIBUTE) { /* xs.append(x): a list that grows is data */
		PNode o = F(f, t, F_OBJECT);
		PNode a = F(f, t, F_ATTRIBUTE);
		if (K(f, o) == NK_IDENTIFIER && text_eq(f, o, name, len) &&
		    (text_is(f, a, "append") || text_is(f, a, "extend") || text_is(f, a, "insert")))
			++*other;
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		literal_assignments(f, pn_named_child(t, i), name, len, lit, other, depth + 1, budget);
}

/* Is the name bound, in this function (or the module), only to short
 * hand-written lists: bench_fns = (InferenceRunner, TrainRunner)? */
static bool cold_literal_name(struct flow *f, PNode n)
{
	if (K(f, n) != NK_IDENTIFIER)
		return false;
	size_t len;
	const char *name = flow_text(f, n, &len);
	PNode scope = f->cur->fn >= 0 ? F(f, f->fns[f->cur->fn].def, F_BODY) : PN_NULL;
	if (pn_is_null(scope))
		for (scope = n; !pn_is_null(pn_parent(scope)); scope = pn_parent(scope))
			;
	int lit = 0, other = 0;
	long budget = 200000;
	literal_assignments(f, scope, name, len, &lit, &other, 0, &budget);
	return lit > 0 && other == 0;
}

static bool cold_loop(struct flow *f, PNode left, PNode right)
{
	/* also once per problem of a benchmark: for shape in shapes, for size in sizes */
	static const char *const names[] = {"epoch", "trial", "repeat", "gpu", "device", "rank", "fold",
					    "shape", "size", "config", "setting", "problem", "type", NULL};
	size_t len;
	const char *s = flow_text(f, left, &len);
	bool one_name = K(f, left) == NK_IDENTIFIER;
	if (one_name && (word_in(s, len, names) || (len == 1 && s[0] == 'e') || (len == 3 && !strncmp(s, "rep", 3)) ||
			 (len == 2 && !strncmp(s, "ep", 2)) || (len == 3 && !strncmp(s, "run", 3))))
		return true;
	if (K(f, left) == NK_PATTERN_LIST || K(f, left) == NK_TUPLE_PATTERN) {
		uint32_t k = pn_named_child_count(left);
		for (uint32_t i = 0; i < k; i++) {
			PNode c = pn_named_child(left, i);
			s = flow_text(f, c, &len);
			if (K(f, c) == NK_IDENTIFIER && word_in(s, len, names))
				return true;
		}
	}
	s = flow_text(f, right, &len);
	static const char *const iters[] = {"epoch", "gpus", "devices", "trials", "shapes", "configs", "cfgs",
					    "problems", "settings", NULL};
	if (word_in(s, len, iters))
		return true;
	enum nk rk = K(f, right);
	if (rk == NK_TUPLE || rk == NK_LIST)
		return cold_literal(f, right);
	if (rk == NK_IDENTIFIER && cold_literal_name(f, right))
		return true;
	if (rk == NK_CALL) {
		PNode callee = F(f, right, F_FUNCTION), args = F(f, right, F_ARGUMENTS);
		/* for name, meter in self.meters.items(): a sweep over a dict's named
		 * entries (meters, losses, options, IoU types), each its own case,
		 * like a hand-written list; the loop around it, if any, is the hot one */
		if (K(f, callee) == NK_ATTRIBUTE && pn_named_child_count(args) == 0) {
			PNode m = F(f, callee, F_ATTRIBUTE);
			if (text_is(f, m, "items") || text_is(f, m, "values") || text_is(f, m, "keys"))
				return true;
			/* for name, p in model.named_parameters(): once per tensor of a
			 * model (an export, an initialisation); in a training step the
			 * step's loop around it is the hot one */
			static const char *const tensors[] = {"parameters", "named_parameters", "buffers",
							      "named_buffers", NULL};
			for (const char *const *t = tensors; *t; t++)
				if (text_is(f, m, *t))
					return true;
		}
		if (K(f, callee) == NK_IDENTIFIER && (text_is(f, callee, "enumerate") || text_is(f, callee, "zip"))) {
			PNode a0 = pn_named_child(args, 0);
			if (K(f, a0) == NK_TUPLE || K(f, a0) == NK_LIST)
				return cold_literal(f, a0);
			if (K(f, a0) == NK_IDENTIFIER)
				return cold_literal_name(f, a0);
			if (K(f, a0) == NK_CALL)
				return cold_loop(f, PN_NULL, a0);
			return false;
		}
		if (K(f, callee) == NK_IDENTIFIER && text_is(f, callee, "range") && !bound(f, internz(f, "range"))) {
			uint32_t na = pn_named_child_count(args);
			int64_t v[3] = {0, 0, 1};
			bool lit = na >= 1 && na <= 3;
			for (uint32_t i = 0; i < na && lit; i++) {
				struct val c = flow_peek(f, pn_named_child(args, i));
				if (!(c.flags & VF_CONST)) {
					lit = false;
					break;
				}
				v[na == 1 ? 1 : i] = c.ival;
			}
			int64_t span, count;
			if (lit && v[2] != 0 && !__builtin_sub_overflow(v[1], v[0], &span) &&
			    !__builtin_add_overflow(span, v[2] - (v[2] > 0 ? 1 : -1), &span)) {
				count = span / v[2];
				if (count <= 4)
					return true;
			}
		}
	}
	return false;
}

/* Does the loop stride by a check interval (range(0, n, check_every))? Its
 * own body then runs once per check: the recommended throttle. */
static bool strided_check(struct flow *f, PNode right)
{
	if (K(f, right) != NK_CALL || !text_is(f, F(f, right, F_FUNCTION), "range"))
		return false;
	PNode args = F(f, right, F_ARGUMENTS);
	if (pn_named_child_count(args) != 3)
		return false;
	size_t len;
	const char *s = flow_text(f, pn_named_child(args, 2), &len);
	static const char *const words[] = {"check", "interval", "freq", "every", "period", "log", "print", "eval", NULL};
	return word_in(s, len, words);
}

/* Is a branch under this condition taken only now and then: a periodic
 * test (i % n == 0), a first-iteration test (i == 0), a test of the loop's
 * own variable for one value (i == n - 1: the last iteration) or a
 * verbosity or diagnostics flag? */
static bool throttling(struct flow *f, PNode cond)
{
	size_t len;
	const char *s = flow_text(f, cond, &len);
	if (memchr(s, '%', len))
		return true;
	static const char *const flags[] = {"verbose", "debug", "progress", "show", "display", "log",
					    "print", "plot", "vis", "monitor", "save", "dry_run", "profile",
					    "first", NULL};
	enum nk k = K(f, cond);
	if ((k == NK_IDENTIFIER || k == NK_ATTRIBUTE || k == NK_NOT || k == NK_BOOLEAN) && word_in(s, len, flags))
		return true;
	if (k == NK_COMPARISON && pn_named_child_count(cond) == 2) {
		PNode r = pn_named_child(cond, 1);
		if ((K(f, r) == NK_INTEGER && text_is(f, r, "0")) && memmem(s, len, "==", 2))
			return true;
		PNode l = pn_named_child(cond, 0);
		PNode ls = f->cur->loop_stmt;
		size_t vl;
		const char *v = flow_text(f, l, &vl);
		if (K(f, l) == NK_IDENTIFIER && f->cur->depth > 0 && ls.t && K(f, ls) == NK_FOR && memmem(s, len, "==", 2) &&
		    !memmem(s, len, "!=", 2) && names_in(f, F(f, ls, F_LEFT), v, vl, 0))
			return true;
	}
	return false;
}

/* The names of device values in an if arm's test (frame.tested). */
static void note_tested(struct flow *f, PNode t, int depth)
{
	struct frame *fr = f->cur;
	if (pn_is_null(t) || depth > 8 || fr->ntested == 8)
		return;
	enum nk k = K(f, t);
	if (k == NK_IDENTIFIER) {
		const char *name = node_name(f, t);
		struct val v = lookup(f, name);
		if (val_on_device(&v))
			fr->tested[fr->ntested++] = name;
		return;
	}
	if (k != NK_COMPARISON && k != NK_BOOLEAN && k != NK_NOT && k != NK_PARENTHESIZED)
		return;
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		note_tested(f, pn_named_child(t, i), depth + 1);
}

/* An arm that ends by leaving the program (raise, sys.exit(), exit(),
 * quit(), os._exit(), os.abort()) runs at most once: what it copies to
 * print its message is not per-iteration work. */
static bool leaves_program(struct flow *f, PNode block)
{
	uint32_t n = pn_named_child_count(block);
	if (n == 0)
		return false;
	PNode last = pn_named_child(block, n - 1);
	if (K(f, last) == NK_RAISE)
		return true;
	if (K(f, last) != NK_EXPR_STMT || pn_named_child_count(last) != 1)
		return false;
	PNode call = pn_named_child(last, 0);
	if (K(f, call) != NK_CALL)
		return false;
	static const char *const exits[] = {"sys.exit", "exit", "quit", "os._exit", "os.abort", NULL};
	size_t len;
	const char *s = flow_text(f, F(f, call, F_FUNCTION), &len);
	for (const char *const *e = exits; *e; e++)
		if (strlen(*e) == len && !memcmp(s, *e, len))
			return true;
	return false;
}

/* ---- calls ---- */

struct args {
	PNode node;                /* the argument_list */
	struct val pos[16];
	PNode posn[16];
	uint32_t npos;
	const char *kwname[16];
	struct val kw[16];
	PNode kwn[16];
	uint32_t nkw;
	bool splat;
};

static void eval_args(struct flow *f, PNode list, struct args *a)
{
	memset(a, 0, sizeof *a);
	a->node = list;
	if (K(f, list) == NK_GENERATOR) {
		a->pos[0] = eval(f, list);
		a->posn[0] = list;
		a->npos = 1;
		return;
	}
	uint32_t k = pn_named_child_count(list);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(list, i);
		enum nk kind = K(f, c);
		if (kind == NK_COMMENT)
			continue;
		if (kind == NK_KEYWORD_ARGUMENT) {
			struct val v = eval(f, F(f, c, F_VALUE));
			if (a->nkw < 16) {
				a->kwname[a->nkw] = node_name(f, F(f, c, F_NAME));
				a->kwn[a->nkw] = F(f, c, F_VALUE);
				a->kw[a->nkw++] = v;
			}
		} else if (kind == NK_LIST_SPLAT || kind == NK_DICT_SPLAT) {
			eval(f, pn_named_child(c, 0));
			a->splat = true;
		} else {
			struct val v = eval(f, c);
			if (a->npos < 16) {
				a->posn[a->npos] = c;
				a->pos[a->npos++] = v;
			}
		}
	}
}

static const struct val *kwarg(struct flow *f, const struct args *a, const char *name, PNode *node)
{
	const char *n = internz(f, name);
	for (uint32_t i = 0; i < a->nkw; i++)
		if (a->kwname[i] == n) {
			if (node)
				*node = a->kwn[i];
			return &a->kw[i];
		}
	return NULL;
}

static bool any_device(const struct args *a, struct val *which, PNode *at)
{
	for (uint32_t i = 0; i < a->npos; i++)
		if (val_on_device(&a->pos[i])) {
			*which = a->pos[i];
			*at = a->posn[i];
			return true;
		}
	for (uint32_t i = 0; i < a->nkw; i++)
		if (val_on_device(&a->kw[i])) {
			*which = a->kw[i];
			*at = a->kwn[i];
			return true;
		}
	return false;
}

/* Is a positional argument a tensor or array known to be on the host? */
static bool any_host_array(const struct args *a)
{
	for (uint32_t i = 0; i < a->npos; i++)
		if (a->pos[i].kind == V_HOST_ARRAY)
			return true;
	return false;
}

/* Does the call copy to the host asynchronously (into pinned memory with
 * out=, blocking=False, or on an explicit stream)? */
static bool async_copy(struct flow *f, const struct args *a)
{
	PNode n;
	const struct val *b = kwarg(f, a, "blocking", &n);
	if (b && K(f, n) == NK_FALSE)
		return true;
	const struct val *nb = kwarg(f, a, "non_blocking", &n);
	if (nb && K(f, n) == NK_TRUE)
		return true;
	return kwarg(f, a, "out", NULL) != NULL || kwarg(f, a, "stream", NULL) != NULL;
}

/* ---- loop invariance (GPU602) ---- */

static bool names_in(struct flow *f, PNode t, const char *name, size_t len, int depth)
{
	if (pn_is_null(t) || depth > 16)
		return false;
	enum nk k = K(f, t);
	if (k == NK_IDENTIFIER) {
		size_t l;
		const char *s = flow_text(f, t, &l);
		return l == len && memcmp(s, name, len) == 0;
	}
	if (k == NK_SUBSCRIPT || k == NK_ATTRIBUTE)
		return names_in(f, F(f, t, k == NK_SUBSCRIPT ? F_VALUE : F_OBJECT), name, len, depth + 1);
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (names_in(f, pn_named_child(t, i), name, len, depth + 1))
			return true;
	return false;
}

/* Is `name` bound or changed anywhere under root? Iterative, budgeted
 * (too large a body answers yes, the cautious answer). */
static bool assigned_under(struct flow *f, PNode root, const char *name, size_t len)
{
	PNode stack[512];
	int sp = 0, budget = 20000;
	stack[sp++] = root;
	while (sp > 0) {
		if (--budget == 0)
			return true;
		PNode n = stack[--sp];
		enum nk k = K(f, n);
		if ((k == NK_ASSIGNMENT || k == NK_AUG_ASSIGNMENT || k == NK_FOR || k == NK_FOR_IN) &&
		    names_in(f, F(f, n, F_LEFT), name, len, 0))
			return true;
		if (k == NK_NAMED_EXPR && names_in(f, F(f, n, F_NAME), name, len, 0))
			return true;
		if (k == NK_CALL) { /* x.set(...), x.fill(...), x.copy_(...) change x */
			PNode c = F(f, n, F_FUNCTION);
			if (K(f, c) == NK_ATTRIBUTE && names_in(f, F(f, c, F_OBJECT), name, len, 0)) {
				PNode a = F(f, c, F_ATTRIBUTE);
				size_t al;
				const char *as = flow_text(f, a, &al);
				if ((al > 0 && as[al - 1] == '_') || (al == 3 && !memcmp(as, "set", 3)) ||
				    (al == 4 && !memcmp(as, "fill", 4)) || (al == 6 && !memcmp(as, "append", 6)))
					return true;
			}
		}
		uint32_t c = pn_named_child_count(n);
		for (uint32_t i = 0; i < c && sp < 512; i++)
			stack[sp++] = pn_named_child(n, i);
		if (sp >= 512)
			return true;
	}
	return false;
}

/* Whether an expression is the shape of an array: x.shape, x.shape[0],
 * x.size(0), len(x). A batch's shape is the same in every iteration. */
static bool shape_expr(struct flow *f, PNode v)
{
	enum nk k = K(f, v);
	if (k == NK_SUBSCRIPT)
		return shape_expr(f, F(f, v, F_VALUE));
	if (k == NK_ATTRIBUTE)
		return text_is(f, F(f, v, F_ATTRIBUTE), "shape");
	if (k != NK_CALL)
		return false;
	PNode c = F(f, v, F_FUNCTION);
	if (K(f, c) == NK_ATTRIBUTE)
		return text_is(f, F(f, c, F_ATTRIBUTE), "size");
	return K(f, c) == NK_IDENTIFIER && text_is(f, c, "len");
}

/* invariant(): whether `v` is the same data in every iteration of the
 * current loop. shape: inside a fill constructor's arguments
 * (torch.ones(x.size(0), 1)), where the shape of a batch counts as the
 * same (it is, but for a last, shorter batch). */
static bool invariant_in(struct flow *f, PNode v, int depth, bool shape)
{
	struct frame *fr = f->cur;
	if (pn_is_null(fr->loop_body) || depth > 8)
		return false;
	enum nk k = K(f, v);
	switch (k) {
	case NK_INTEGER:
	case NK_FLOAT:
	case NK_TRUE:
	case NK_FALSE:
	case NK_NONE:
		return true;
	case NK_STRING:
		return pn_named_child_count(v) == 0 || K(f, pn_named_child(v, 1)) != NK_INTERPOLATION;
	case NK_LIST_SPLAT:
		return shape && invariant_in(f, pn_named_child(v, 0), depth + 1, shape);
	case NK_UNARY:
		return invariant_in(f, F(f, v, F_ARGUMENT), depth + 1, shape);
	case NK_LIST:
	case NK_TUPLE:
	case NK_PARENTHESIZED: {
		uint32_t n = pn_named_child_count(v);
		for (uint32_t i = 0; i < n; i++)
			if (!invariant_in(f, pn_named_child(v, i), depth + 1, shape))
				return false;
		return true;
	}
	case NK_IDENTIFIER: {
		size_t len;
		const char *s = flow_text(f, v, &len);
		if (K(f, fr->loop_stmt) == NK_FOR && names_in(f, F(f, fr->loop_stmt, F_LEFT), s, len, 0))
			return false;
		return !assigned_under(f, fr->loop_body, s, len);
	}
	case NK_ATTRIBUTE:
		if (shape && shape_expr(f, v))
			return true;
		return K(f, F(f, v, F_OBJECT)) == NK_IDENTIFIER && invariant_in(f, F(f, v, F_OBJECT), depth + 1, shape);
	case NK_CALL: {
		if (shape && shape_expr(f, v))
			return true;
		/* a constructor of fresh data with the same arguments: torch.ones(n, 1) */
		PNode callee = F(f, v, F_FUNCTION);
		size_t len;
		const char *s = flow_text(f, callee, &len);
		static const char *const words[] = {"ones", "zeros", "full", "eye", "arange", "linspace", "tensor", "array", "empty", NULL};
		static const char *const random[] = {"rand", "random", "normal", "uniform", "perm", "choice", "shuffle", NULL};
		static const char *const fills[] = {"ones", "zeros", "full", "eye", "empty", NULL};
		if (!word_in(s, len, words) || word_in(s, len, random))
			return false;
		bool fill = word_in(s, len, fills);
		PNode args = F(f, v, F_ARGUMENTS);
		uint32_t n = pn_named_child_count(args);
		for (uint32_t i = 0; i < n; i++) {
			PNode a = pn_named_child(args, i);
			if (K(f, a) == NK_KEYWORD_ARGUMENT)
				a = F(f, a, F_VALUE);
			if (!invariant_in(f, a, depth + 1, shape || fill))
				return false;
		}
		return true;
	}
	case NK_SUBSCRIPT:
		return shape && shape_expr(f, v);
	default:
		return false;
	}
}

static bool invariant(struct flow *f, PNode v, int depth)
{
	return invariant_in(f, v, depth, false);
}

static bool is_stream_value(struct flow *f, PNode n, struct val v);

/* A host-to-device copy of data at `at`. blocking: the call returns when it
 * is done, which waits for the work queued before it as well (PyTorch's
 * copy without non_blocking ends in a stream synchronize; CUDA synchronizes
 * the stream before a copy from pageable memory): for the timing rule, a
 * synchronize. */
static void h2d(struct flow *f, PNode at, PNode data, const char *what, bool blocking)
{
	struct flow_event ev = {.kind = FE_H2D, .at = at, .node = data, .what = what};
	ev.data_invariant = f->cur->depth > 0 && !pn_is_null(data) && invariant(f, data, 0);
	if (f->cur->depth > 0 && K(f, data) == NK_IDENTIFIER) {
		/* h = cp.asnumpy(x) ... x = cp.asarray(h): there and back in one loop */
		struct val v = lookup(f, node_name(f, data));
		size_t len;
		const char *s = flow_text(f, data, &len);
		if ((v.flags & VF_BACK) && assigned_under(f, f->cur->loop_body, s, len))
			ev.back_line = v.line;
	}
	emit(f, &ev);
	mark_gpu(f, at);
	if (blocking)
		mark_sync(f);
}

/* ---- library calls ---- */

static enum vfam fam_of_qual(const char *q)
{
	if (!q)
		return FAM_NONE;
	if (str_starts_with(q, "cupy") || str_starts_with(q, "cupyx"))
		return FAM_CUPY;
	if (str_starts_with(q, "torch"))
		return FAM_TORCH;
	if (str_starts_with(q, "numba"))
		return FAM_NUMBA;
	if (str_starts_with(q, "jax"))
		return FAM_JAX;
	return FAM_NONE;
}

/* A value of a kb type name ("cupy.ndarray", "numpy.ndarray", "none", ...). */
static struct val of_type(struct flow *f, const char *type, uint32_t line)
{
	if (!type || !strcmp(type, "none"))
		return V(V_UNKNOWN);
	const struct kb_type *t = kb_type(f->o->kb, type);
	if (t && t->device)
		return VD(V_DEVICE_ARRAY, fam_of_qual(type), line);
	if (!strcmp(type, "numpy.ndarray"))
		return VD(V_HOST_ARRAY, FAM_NONE, line);
	if (!strcmp(type, "torch.Tensor"))
		return VD(V_HOST_ARRAY, FAM_TORCH, line);
	if (!strcmp(type, "host"))
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	if (t && t->lib && t->lib->id && !strcmp(t->lib->id, "cupy"))
		return VD(V_DEVICE_OBJECT, FAM_CUPY, line);
	if (t && t->lib && t->lib->id && !strcmp(t->lib->id, "frameworks"))
		return VD(V_DEVICE_OBJECT, FAM_TORCH, line);
	return V(V_UNKNOWN);
}

/* Is v a device spec that may name a GPU (a torch device, "cuda:0", an
 * index, or a name that says so: device, dev, gpu, rank)? */
static bool gpu_target(struct flow *f, const struct val *v, PNode n)
{
	if (v->kind == V_DEVSPEC)
		return (v->flags & VF_GPU) != 0;
	if (K(f, n) == NK_INTEGER)
		return true;
	if (val_on_device(v))
		return true; /* .to(other_tensor) */
	if (v->kind == V_UNKNOWN || v->kind == V_HOST_SCALAR) {
		size_t len;
		const char *s = flow_text(f, n, &len);
		static const char *const words[] = {"device", "dev", "gpu", "cuda", "rank", NULL};
		if (K(f, n) == NK_IDENTIFIER || K(f, n) == NK_ATTRIBUTE)
			return word_in(s, len, words);
	}
	return false;
}

/* Is the node a call of a class (a capitalized name: Net(), nn.Linear(4, 2))? */
static bool constructor_call(struct flow *f, PNode n)
{
	if (K(f, n) != NK_CALL)
		return false;
	PNode c = F(f, n, F_FUNCTION);
	if (K(f, c) == NK_ATTRIBUTE)
		c = F(f, c, F_ATTRIBUTE);
	size_t len;
	const char *s = flow_text(f, c, &len);
	return K(f, c) == NK_IDENTIFIER && len > 0 && s[0] >= 'A' && s[0] <= 'Z';
}

/* Is the argument of x.type(T) a tensor type that makes device data (a
 * name or a string of one, by the kb: torch.cuda.FloatTensor, or a join
 * picked by a flag: Tensor = torch.cuda.FloatTensor if cuda else ...)? */
static bool device_type_arg(struct flow *f, const struct val *v, PNode n)
{
	if (v->kind == V_QUAL && v->qual)
		return makes_device(f, v->qual);
	if (K(f, n) == NK_STRING) {
		size_t len;
		const char *s = flow_text(f, n, &len);
		if (len < 3 || (s[0] != '\'' && s[0] != '"') || s[len - 1] != s[0])
			return false;
		char *q = xasprintf("%.*s", (int)(len - 2), s + 1);
		bool dev = makes_device(f, q);
		free(q);
		return dev;
	}
	return false;
}

/* Does the scope use `name` (its text) as the left or right operand of a
 * subtraction (t1 - t0)? */
static void subtractions(struct flow *f, PNode t, const char *name, size_t len, bool *left, bool *right, int depth,
			 long *budget)
{
	if (pn_is_null(t) || depth > 64 || --*budget < 0)
		return;
	if (K(f, t) == NK_BINARY && text_is(f, F(f, t, F_OPERATOR), "-")) {
		*left |= text_eq(f, F(f, t, F_LEFT), name, len);
		*right |= text_eq(f, F(f, t, F_RIGHT), name, len);
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		subtractions(f, pn_named_child(t, i), name, len, left, right, depth + 1, budget);
}

/* The first plain `other = name` in the tree (other: a name or attribute). */
static void alias_of(struct flow *f, PNode t, const char *name, size_t len, PNode *other, int depth, long *budget)
{
	if (pn_is_null(t) || !pn_is_null(*other) || depth > 64 || --*budget < 0)
		return;
	if (K(f, t) == NK_ASSIGNMENT) {
		PNode l = F(f, t, F_LEFT), r = F(f, t, F_RIGHT);
		if (K(f, r) == NK_IDENTIFIER && text_eq(f, r, name, len) &&
		    (K(f, l) == NK_IDENTIFIER || K(f, l) == NK_ATTRIBUTE)) {
			*other = l;
			return;
		}
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		alias_of(f, pn_named_child(t, i), name, len, other, depth + 1, budget);
}

/* Is the clock call the start of an interval: `t0 = time.time()` where t0
 * is only ever subtracted (time.time() - t0), never subtracted from? Work
 * queued before a start read is not what GPU603 is about (an end read that
 * measures the launch, not the work): it runs inside the interval, which
 * the end read's own synchronize, or its finding, accounts for. */
static bool start_read(struct flow *f, PNode call)
{
	PNode asg = pn_parent(call);
	if (pn_is_null(asg) || K(f, asg) != NK_ASSIGNMENT || !pn_eq(F(f, asg, F_RIGHT), call))
		return false;
	PNode left = F(f, asg, F_LEFT);
	if (K(f, left) != NK_IDENTIFIER && K(f, left) != NK_ATTRIBUTE)
		return false;
	size_t len;
	const char *name = flow_text(f, left, &len);
	PNode scope = f->cur->fn >= 0 ? F(f, f->fns[f->cur->fn].def, F_BODY) : PN_NULL;
	if (pn_is_null(scope))
		for (scope = call; !pn_is_null(pn_parent(scope)); scope = pn_parent(scope))
			;
	bool as_left = false, as_right = false;
	long budget = 200000;
	subtractions(f, scope, name, len, &as_left, &as_right, 0, &budget);
	if (!as_right && !as_left) {
		/* time_now = time.time(); ...; start = time_now: the start of the
		 * next interval, under another name */
		PNode other = PN_NULL;
		alias_of(f, scope, name, len, &other, 0, &budget);
		if (!pn_is_null(other)) {
			size_t olen;
			const char *oname = flow_text(f, other, &olen);
			subtractions(f, scope, oname, olen, &as_left, &as_right, 0, &budget);
		}
	}
	return as_right && !as_left;
}

static bool known_entry_flow(const struct kb_entry *e, const char *what)
{
	return e && e->flow && !strcmp(e->flow, what);
}

/* Is the clock read an interval given in minutes or hours,
 * ((time.time() - start) / 60): a long run's progress (a tutorial's "Time
 * elapsed: 3.2 min"), where what is still queued is a few batches against
 * minutes, not a measurement of GPU work? */
static bool in_minutes(struct flow *f, PNode call)
{
	PNode n = call, p = pn_parent(n);
	bool minus = false;
	for (int i = 0; i < 6 && !pn_is_null(p); i++, n = p, p = pn_parent(p)) {
		enum nk k = K(f, p);
		if (k == NK_PARENTHESIZED)
			continue;
		if (k != NK_BINARY)
			return false;
		PNode op = F(f, p, F_OPERATOR);
		if (text_is(f, op, "-") && !minus) {
			minus = true;
			continue;
		}
		if (!minus || !text_is(f, op, "/") || !pn_eq(F(f, p, F_LEFT), n))
			return false;
		PNode r = F(f, p, F_RIGHT);
		return (K(f, r) == NK_INTEGER || K(f, r) == NK_FLOAT) &&
		       (text_is(f, r, "60") || text_is(f, r, "60.") || text_is(f, r, "60.0") || text_is(f, r, "3600") ||
			text_is(f, r, "3600.0"));
	}
	return false;
}

/* What a method that no tensor has, but a torch module does, gives
 * ("device": model.parameters(); "none": model.eval()): the kb's
 * module_methods of torch.cuda.Tensor; NULL for any other method. */
static const char *module_method(struct flow *f, const char *attr)
{
	const struct kb_type *t = kb_type(f->o->kb, "torch.cuda.Tensor");
	json_t *m = t && t->module_methods ? json_object_get(t->module_methods, attr) : NULL;
	return json_is_string(m) ? json_string_value(m) : NULL;
}

/* A call to a library function by its qualified name. */
static struct val lib_call(struct flow *f, PNode call, const char *qual, const struct args *a)
{
	const struct kb *kb = f->o->kb;
	const struct kb_library *lib = kb_library_for(kb, qual);
	const struct kb_entry *e = lib ? kb_lookup(lib, qual) : NULL;
	uint32_t line = line_of(f, call);
	enum vfam fam = fam_of_qual(qual);
	enum effect eff = e ? e->effect : EF_NONE;
	struct val dev;
	PNode devn;
	bool has_dev = any_device(a, &dev, &devn);
	struct val first = a->npos ? a->pos[0] : V(V_UNKNOWN);

	if (known_entry_flow(e, "array-module")) {
		/* cupy.get_array_module(x): CuPy for device data, NumPy for host data */
		if (has_dev)
			return (struct val){.kind = V_ARRAY_MODULE, .fam = FAM_CUPY, .flags = VF_GPU, .ref = -1, .ref2 = -1, .line = line};
		if (first.kind == V_HOST_ARRAY || first.kind == V_HOST_SCALAR) {
			struct val m = V(V_QUAL);
			m.qual = internz(f, "numpy");
			return m;
		}
		return V(V_UNKNOWN);
	}
	if (known_entry_flow(e, "devspec")) {
		struct val d = V(V_DEVSPEC);
		d.line = line;
		/* torch.device("cuda" if ... else "cpu"): may be the GPU */
		size_t len;
		const char *s = flow_text(f, a->node, &len);
		if (memmem(s, len, "cuda", 4) || (a->npos && (a->pos[0].flags & VF_GPU)) ||
		    (e->has_device_if == false && !a->npos) || !strcmp(e->name + strlen(e->name) - 1, "*") ||
		    strstr(qual, "accelerator") || (a->npos && K(f, a->posn[0]) == NK_INTEGER))
			d.flags = VF_GPU;
		/* torch.device(args.device): a string the model does not know may
		 * name the GPU, as a bare unknown args.device does; a known host
		 * string ("cpu", a name bound to it) stays the CPU */
		if (a->npos && a->pos[0].kind == V_UNKNOWN && K(f, a->posn[0]) != NK_STRING)
			d.flags = VF_GPU;
		return d;
	}
	if (known_entry_flow(e, "zero-copy")) {
		/* cupy.asarray of a device array, as_cuda_array, from_dlpack: no copy */
		if (val_on_device(&first))
			return VD(V_DEVICE_ARRAY, fam ? fam : (enum vfam)first.fam, line);
	}
	if (known_entry_flow(e, "kernel"))
		return VD(V_DEVICE_OBJECT, fam, line);
	if (known_entry_flow(e, "mask") && has_dev) {
		/* cupy.isnan(x), cupy.logical_and(a, b): a boolean device array */
		mark_gpu(f, call);
		struct val m = VD(V_DEVICE_ARRAY, fam ? fam : (enum vfam)dev.fam, line);
		m.flags |= VF_MASK;
		return m;
	}
	if (known_entry_flow(e, "device-constructor")) {
		/* torch.cuda.FloatTensor(n, m) allocates on the GPU; given host
		 * data (np.ones(...), a list) it copies that data there */
		enum nk k0 = a->npos ? K(f, a->posn[0]) : NK_ERROR;
		if (first.kind == V_HOST_ARRAY || k0 == NK_LIST) {
			h2d(f, call, a->posn[0], qual, true);
			return VD(V_DEVICE_ARRAY, fam, line);
		}
		mark_gpu(f, call);
		return VD(V_DEVICE_ARRAY, fam, line);
	}
	if (known_entry_flow(e, "host"))
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	if (known_entry_flow(e, "iterates")) /* tqdm(x): x's elements, one by one */
		return first;
	if (known_entry_flow(e, "same")) /* accelerator.gather(x): like x, on x's device */
		return first;
	if (known_entry_flow(e, "reduces")) {
		/* clip_grad_norm_(model.parameters(), 1.0): one value computed on
		 * the device of the elements it is given */
		struct val el = element_of(f, first);
		if (val_on_device(&first) || val_on_device(&el))
			return VD(V_DEVICE_SCALAR, val_on_device(&first) ? (enum vfam)first.fam : (enum vfam)el.fam, line);
		return V(V_UNKNOWN);
	}
	if (known_entry_flow(e, "to-device")) {
		/* accelerator.prepare(model, opt, x): its arguments, on the device:
		 * a tensor (or a loader the model took for one) becomes a device
		 * array; an object the model does not know (a model, optimizer or
		 * loader passed in) a device object, whose batches, when iterated,
		 * are on the device (element_of) and whose call runs there */
		struct val out[16];
		for (uint32_t i = 0; i < a->npos && i < 16; i++) {
			out[i] = a->pos[i];
			if (out[i].kind == V_HOST_ARRAY)
				out[i] = VD(V_DEVICE_ARRAY, FAM_TORCH, line);
			else if (out[i].kind == V_UNKNOWN)
				out[i] = VD(V_DEVICE_OBJECT, FAM_TORCH, line);
		}
		if (a->npos)
			mark_gpu(f, call);
		uint32_t n = a->npos < 16 ? a->npos : 16;
		return n == 1 ? out[0] : n ? tuple_val(f, out, n) : V(V_UNKNOWN);
	}
	if (e && e->returns && fam == FAM_NONE) {
		/* accelerate.Accelerator(): an object whose attributes the kb types */
		const struct kb_type *t = kb_type(kb, e->returns);
		if (t && t->attributes && !t->device) {
			struct val o = V(V_INSTANCE);
			o.qual = internz(f, e->returns);
			o.line = line;
			return o;
		}
	}

	/* the device a torch factory or .to() puts data on */
	bool on_gpu = false;
	PNode devarg;
	const struct val *dv = kwarg(f, a, "device", &devarg);
	if (dv && gpu_target(f, dv, devarg))
		on_gpu = true;

	switch (eff) {
	case EF_SYNC:
		mark_sync(f);
		return V(V_UNKNOWN);
	case EF_CLOCK: {
		struct frame *fr = f->cur;
		if (fr->ts.clock && fr->ts.since && !start_read(f, call) && !in_minutes(f, call)) {
			struct flow_event ev = {.kind = FE_CLOCK, .at = call, .what = qual, .gpu_line = fr->ts.gpu_line};
			emit(f, &ev);
		}
		fr->ts.clock = true;
		fr->ts.since = false;
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	}
	case EF_D2H:
		if (has_dev) {
			d2h(f, call, qual, dev, async_copy(f, a) || f->cur->in_stream);
			struct val r = of_type(f, e->returns ? e->returns : "numpy.ndarray", line);
			r.flags |= VF_BACK;
			r.line = line;
			return r;
		}
		return V(V_UNKNOWN);
	case EF_H2D:
	case EF_H2D_IF_DEVICE:
		if (eff == EF_H2D_IF_DEVICE && !on_gpu)
			break;
		if (val_on_device(&first)) { /* already there: at most a device copy */
			mark_gpu(f, call);
			return VD(V_DEVICE_ARRAY, fam ? fam : (enum vfam)first.fam, line);
		}
		h2d(f, call, a->npos ? a->posn[0] : PN_NULL, qual,
		    !async_copy(f, a) && !f->cur->in_stream && !(a->npos >= 2 && is_stream_value(f, a->posn[1], a->pos[1])));
		return VD(V_DEVICE_ARRAY, fam, line);
	case EF_TIMEIT: {
		PNode stmt = a->npos ? a->posn[0] : PN_NULL;
		bool gpu = false;
		if (K(f, stmt) == NK_LAMBDA) {
			f->silent++;
			struct tstate saved = f->cur->ts;
			f->cur->ts.pending = false;
			struct val v = eval(f, F(f, stmt, F_BODY));
			gpu = f->cur->ts.pending || val_on_device(&v);
			f->cur->ts = saved;
			f->silent--;
		} else if (a->npos && a->pos[0].kind == V_FUNCTION && a->pos[0].ref >= 0) {
			const struct fn *fn = &f->fns[a->pos[0].ref];
			gpu = fn->did_gpu && fn->pending;
		}
		if (gpu) {
			struct flow_event ev = {.kind = FE_TIMEIT, .at = call, .what = qual};
			emit(f, &ev);
		}
		return V(V_UNKNOWN);
	}
	default:
		break;
	}

	if (fam == FAM_CUPY || fam == FAM_NUMBA || fam == FAM_JAX) {
		/* a GPU library: device results unless the kb says otherwise */
		if (e && e->returns)
			return of_type(f, e->returns, line);
		if (lib && lib->returns) {
			mark_gpu(f, call);
			return of_type(f, lib->returns, line);
		}
		if (eff == EF_GPU || has_dev) {
			mark_gpu(f, call);
			return VD(V_DEVICE_ARRAY, fam, line);
		}
		return V(V_UNKNOWN);
	}
	if (fam == FAM_TORCH) {
		static const char *const host_side[] = {"torch.save", "torch.load", "torch.onnx", "torch.jit",
							"torch.distributed", "torch.backends", "torch.utils",
							"torch.manual_seed", "torch.set_", "torch.compile", "torch.cuda",
							/* an optimizer or scheduler made from a model's
							 * parameters: a host object, no GPU work */
							"torch.optim", NULL};
		for (const char *const *h = host_side; *h; h++)
			if (str_starts_with(qual, *h))
				return V(V_UNKNOWN);
		if (on_gpu || has_dev) {
			mark_gpu(f, call);
			return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
		}
		if (e && e->returns && !strcmp(e->returns, "torch.Tensor"))
			return VD(V_HOST_ARRAY, FAM_TORCH, line);
		return V(V_UNKNOWN);
	}
	/* a library that takes device arrays as they are (Dask's CuPy chunks) */
	if (lib && has_dev && lib->passes_device)
		return V(V_UNKNOWN);
	/* one that makes NumPy arrays of what it gets (matplotlib): a list of
	 * device values too, element by element */
	bool elems = false;
	if (lib && !has_dev && lib->converts_device && !(e && e->ignore))
		for (uint32_t i = 0; i < a->npos && !has_dev; i++)
			if (device_inside(f, &a->pos[i], &dev, 0)) {
				has_dev = elems = true;
				devn = a->posn[i];
			}
	/* a CPU library given device data */
	if (lib && has_dev && lib->id && (lib->rule || lib->no_gpu_rule || lib->converts_device)) {
		struct flow_event ev = {.kind = FE_CPU_CALL, .at = devn, .node = call, .what = qual,
					.value = dev, .lib = lib, .entry = e, .elems = elems};
		emit(f, &ev);
		/* NumPy's functions dispatch CuPy arrays to CuPy (__array_function__) */
		if (dev.fam == FAM_CUPY && !strcmp(lib->id, "numpy") && !(e && !e->gpu) &&
		    !known_entry_flow(e, "converts"))
			return VD(V_DEVICE_ARRAY, FAM_CUPY, line);
		return V(V_UNKNOWN);
	}
	if (lib && lib->id && !strcmp(lib->id, "numpy"))
		return VD(V_HOST_ARRAY, FAM_NONE, line);
	return V(V_UNKNOWN);
}

/* A method called on a device value, by the kb entry of its type. */
static struct val device_method(struct flow *f, PNode call, struct val recv, const char *attr, const struct args *a)
{
	static const char *const types[] = {"", "cupy.ndarray", "torch.cuda.Tensor", "numba.cuda.DeviceNDArray", "jax.Array"};
	const char *type = types[recv.fam < 5 ? recv.fam : 0];
	uint32_t line = line_of(f, call);
	const struct kb_library *lib = kb_library_for(f->o->kb, type);
	char *q = xasprintf("%s.%s", type, attr);
	const struct kb_entry *e = lib ? kb_lookup(lib, q) : NULL;
	const char *what = internz(f, q);
	free(q);
	const struct kb_type *t = kb_type(f->o->kb, type);
	bool host_method = false;
	size_t i;
	json_t *m;
	if (t)
		json_array_foreach(t->host_methods, i, m)
			host_method |= !strcmp(json_string_value(m), attr);
	if (host_method)
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	const char *mm = recv.fam == FAM_TORCH ? module_method(f, attr) : NULL;
	if (mm) /* a module: model.parameters(), model.eval() */
		return !strcmp(mm, "device") ? VD(V_DEVICE_ARRAY, (enum vfam)recv.fam, line) : V(V_UNKNOWN);
	enum effect eff = e ? e->effect : EF_GPU;
	switch (eff) {
	case EF_D2H: {
		d2h(f, call, what, recv, async_copy(f, a) || f->cur->in_stream);
		struct val r = of_type(f, e->returns ? e->returns : "host", line);
		r.flags |= VF_BACK;
		r.line = line;
		return r;
	}
	case EF_SYNC:
		mark_sync(f);
		return V(V_UNKNOWN);
	case EF_H2D: { /* x.set(host) */
		PNode data = a->npos ? a->posn[0] : PN_NULL;
		if (!(a->npos && val_on_device(&a->pos[0])))
			h2d(f, call, data, what, !async_copy(f, a) && !f->cur->in_stream);
		return V(V_UNKNOWN);
	}
	default: {
		mark_gpu(f, call);
		if (e && e->returns)
			return of_type(f, e->returns, line);
		struct val r = VD(recv.kind == V_DEVICE_SCALAR ? V_DEVICE_SCALAR : V_DEVICE_ARRAY, (enum vfam)recv.fam, line);
		/* isnan(x).any(axis=1): a mask reduced along an axis is a mask */
		if ((recv.flags & VF_MASK) && (!strcmp(attr, "any") || !strcmp(attr, "all")) &&
		    (a->npos || kwarg(f, a, "axis", NULL)))
			r.flags |= VF_MASK;
		return r;
	}
	}
}

/* ---- calls to functions of the project ---- */

static void record_call(struct flow *f, const char *callee, const struct args *a)
{
	struct flow_summary *s = f->sum;
	if (!s || f->silent)
		return;
	struct frame *fr = f->cur;
	const char *caller = fr->fn >= 0 ? f->fns[fr->fn].qual : NULL;
	uint32_t line = fr->depth && !fr->throttled ? fr->loop_line : 0;
	for (size_t i = 0; i < s->ncalls; i++) /* one record per caller, callee and loop */
		if (s->calls[i].caller == caller && s->calls[i].callee == callee && s->calls[i].loop_line == line)
			return;
	s->calls = xrealloc(s->calls, (s->ncalls + 1) * sizeof *s->calls);
	struct flow_call *c = &s->calls[s->ncalls++];
	memset(c, 0, sizeof *c);
	c->caller = caller;
	c->callee = callee;
	c->loop_line = line;
	c->loop_cell = fr->loop_cell;
	c->throttled = fr->throttled;
	for (uint32_t i = 0; i < a->npos && i < FLOW_SUM_ARGS; i++) {
		struct val v = a->pos[i];
		/* a module of this file sent to the GPU: in another file (its
		 * class unknown there) a model on the device */
		if (v.kind == V_INSTANCE && (v.flags & VF_GPU))
			v = VD(V_DEVICE_OBJECT, FAM_TORCH, v.line);
		c->args[c->nargs++] = v;
	}
}

static struct val project_call(struct flow *f, PNode call, const char *qual, const struct args *a)
{
	const struct project *p = f->o->project;
	record_call(f, qual, a);
	const char *last = strrchr(qual, '.');
	last = last ? last + 1 : qual;
	if ((!p || project_is_class(p, qual)) && *last >= 'A' && *last <= 'Z') {
		/* a class of the project (or, before the project is known, a name
		 * that reads as one): its instance, so its methods can be named */
		struct val v = V(V_INSTANCE);
		v.qual = qual;
		return v;
	}
	if (!p) {
		struct val dev;
		PNode devn;
		if (any_device(a, &dev, &devn) && dev.fam == FAM_TORCH)
			return VD(V_DEVICE_ARRAY, FAM_TORCH, line_of(f, call));
		return V(V_UNKNOWN);
	}
	if (project_is_class(p, qual)) {
		struct val v = V(V_INSTANCE);
		v.qual = qual;
		return v;
	}
	const struct project_func *pf = project_func(p, qual);
	if (!pf) {
		/* a helper the scan did not see (utils.normalize_batch(y)): torch code
		 * keeps device tensors on the device */
		struct val dev;
		PNode devn;
		if (any_device(a, &dev, &devn) && dev.fam == FAM_TORCH)
			return VD(V_DEVICE_ARRAY, FAM_TORCH, line_of(f, call));
		return V(V_UNKNOWN);
	}
	if (pf->does_gpu) {
		mark_gpu(f, call);
		if (!pf->ends_pending)
			mark_sync(f);
	}
	struct val r = pf->ret;
	r.ref = r.ref2 = -1;
	if (r.kind == V_TUPLE || r.kind == V_FUNCTION || r.kind == V_CLASS)
		return V(V_UNKNOWN);
	if (r.kind == V_UNKNOWN && !pf->ret_parts) {
		/* what it returns was not known from its own file, where its
		 * arguments were not: given device tensors, torch code gives
		 * device tensors (utils.accuracy(output, target)); not so a
		 * function that returns several things (some on the host) */
		struct val dev;
		PNode devn;
		if (any_device(a, &dev, &devn) && dev.fam == FAM_TORCH)
			return VD(V_DEVICE_ARRAY, FAM_TORCH, line_of(f, call));
	}
	if (r.kind == V_INSTANCE || r.kind == V_QUAL)
		r.qual = r.qual ? internz(f, r.qual) : NULL;
	return r;
}

/* Is qual a name of this project rather than of a library? */
static bool library_name(struct flow *f, const char *qual)
{
	return kb_library_for(f->o->kb, qual) != NULL;
}

/* ---- the call ---- */

static struct val call_value(struct flow *f, PNode call, struct val callee, const struct args *a, struct val self,
			     bool has_self)
{
	uint32_t line = line_of(f, call);
	struct val dev;
	PNode devn;
	if (callee.kind == V_FUNCTION && callee.ref >= 0 && f->fns[callee.ref].rawkernel) {
		/* a cupyx.jit.rawkernel launched as k(grid, block, args): its body
		 * is device code, not host code run with these arguments */
		mark_gpu(f, call);
		return V(V_UNKNOWN);
	}
	if (callee.kind == V_FUNCTION && callee.ref >= 0) {
		struct val r = V(V_UNKNOWN);
		int refs[2] = {callee.ref, callee.ref2};
		for (int k = 0; k < 2; k++) {
			if (refs[k] < 0)
				continue;
			const struct fn *fn = &f->fns[refs[k]];
			record_call(f, fn->qual, a);
			struct val pos[16];
			size_t n = 0;
			if (has_self && !fn->staticm)
				pos[n++] = self;
			for (uint32_t i = 0; i < a->npos && n < 16; i++)
				pos[n++] = a->pos[i];
			struct val one = call_fn(f, refs[k], has_self ? self : V(V_UNKNOWN), pos, n, call);
			r = k ? join(f, r, one) : one;
		}
		if (f->fns[callee.ref].opaque)
			return V(V_UNKNOWN);
		return r;
	}
	if (callee.kind == V_CLASS && callee.ref >= 0) {
		struct val inst = V(V_INSTANCE);
		inst.ref = callee.ref;
		inst.line = line;
		int init = method_of(f, callee.ref, internz(f, "__init__"));
		if (init >= 0) {
			record_call(f, f->fns[init].qual, a);
			struct val pos[16];
			size_t n = 0;
			pos[n++] = inst;
			for (uint32_t i = 0; i < a->npos && n < 16; i++)
				pos[n++] = a->pos[i];
			call_fn(f, init, inst, pos, n, call);
		}
		return inst;
	}
	if (callee.kind == V_QUAL && callee.qual) {
		if (library_name(f, callee.qual))
			return lib_call(f, call, callee.qual, a);
		return project_call(f, call, callee.qual, a);
	}
	if (callee.kind == V_ARRAY_MODULE) {
		/* xp.f(...): CuPy's f on the GPU when xp may be CuPy */
		if (callee.flags & VF_GPU) {
			mark_gpu(f, call);
			return VD(V_DEVICE_ARRAY, (enum vfam)callee.fam, line);
		}
		return V(V_UNKNOWN);
	}
	if (callee.kind == V_DEVICE_OBJECT) { /* a compiled kernel */
		mark_gpu(f, call);
		return VD(V_DEVICE_ARRAY, (enum vfam)callee.fam, line);
	}
	if (callee.kind == V_INSTANCE && callee.ref >= 0) {
		int m = method_of(f, callee.ref, internz(f, "__call__"));
		if (m < 0)
			m = method_of(f, callee.ref, internz(f, "forward"));
		if (m >= 0) {
			struct val pos[16];
			size_t n = 0;
			pos[n++] = callee;
			for (uint32_t i = 0; i < a->npos && n < 16; i++)
				pos[n++] = a->pos[i];
			struct val r = call_fn(f, m, callee, pos, n, call);
			if (r.kind != V_UNKNOWN)
				return r;
		}
	}
	/* a module or loss of the framework (net(inputs), criterion(out, y)):
	 * device tensors in, a device tensor out; or a module the model took
	 * for a tensor when it was sent to the device (model.to(device) of a
	 * parameter): a tensor is not called; or the project's own module
	 * moved to the device (QNetwork(envs).to(device)) whose forward gave
	 * nothing known: its output is on its device, unless its input is known
	 * to be on the host (a replay buffer's sample is not known) */
	if ((any_device(a, &dev, &devn) && dev.fam == FAM_TORCH) ||
	    (callee.kind == V_DEVICE_ARRAY && callee.fam == FAM_TORCH) ||
	    (callee.kind == V_INSTANCE && (callee.flags & VF_GPU) && !any_host_array(a))) {
		mark_gpu(f, call);
		return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
	}
	return V(V_UNKNOWN);
}

static const char *const to_host_builtins[] = {"float", "int", "bool", "complex", "str", "repr", "format", "round", NULL};

static struct val builtin_call(struct flow *f, PNode call, PNode callee, const struct args *a, bool *handled)
{
	*handled = true;
	uint32_t line = line_of(f, call);
	size_t len;
	const char *s = flow_text(f, callee, &len);
	for (const char *const *b = to_host_builtins; *b; b++)
		if (strlen(*b) == len && !memcmp(s, *b, len)) {
			if (a->npos && val_on_device(&a->pos[0])) {
				char *what = xasprintf("%.*s() of a device value", (int)len, s);
				d2h(f, call, internz(f, what), a->pos[0], false);
				free(what);
			}
			return VD(V_HOST_SCALAR, FAM_NONE, line);
		}
	if (len == 3 && !memcmp(s, "map", 3) && a->npos >= 2 && val_on_device(&a->pos[1]) &&
	    K(f, a->posn[0]) == NK_IDENTIFIER) {
		/* map(float, device_array): a host conversion per element */
		size_t flen;
		const char *fs = flow_text(f, a->posn[0], &flen);
		for (const char *const *b = to_host_builtins; *b; b++)
			if (strlen(*b) == flen && !memcmp(fs, *b, flen)) {
				char *what = xasprintf("map(%.*s) over a device value", (int)flen, fs);
				d2h(f, call, internz(f, what), a->pos[1], false);
				free(what);
				return V(V_UNKNOWN);
			}
	}
	if (len == 3 && !memcmp(s, "map", 3) && a->npos >= 2 && a->pos[0].kind == V_FUNCTION) {
		/* map(lambda t: t.item(), (a, b)): the function runs on each element */
		struct val el = element_of(f, a->pos[1]);
		if (val_on_device(&el)) {
			struct args one = {.node = a->node, .npos = 1};
			one.pos[0] = el;
			one.posn[0] = a->posn[1];
			call_value(f, call, a->pos[0], &one, V(V_UNKNOWN), false);
		}
		return V(V_UNKNOWN);
	}
	if (len == 3 && !memcmp(s, "zip", 3) && a->npos >= 1 && a->npos <= 16) {
		/* zip(a, b): an iterable (a tuple of one element, as element_of
		 * reads it) of tuples of their elements, when some are on the device */
		struct val el[16];
		bool dev = false;
		for (uint32_t i = 0; i < a->npos; i++) {
			el[i] = element_of(f, a->pos[i]);
			dev |= holds_device(f, &el[i], 0);
		}
		if (!dev)
			return V(V_UNKNOWN);
		struct val t = tuple_val(f, el, a->npos);
		return tuple_val(f, &t, 1);
	}
	if (len == 5 && !memcmp(s, "print", 5)) {
		for (uint32_t i = 0; i < a->npos; i++)
			if (val_on_device(&a->pos[i])) {
				d2h(f, call, "print() of a device value", a->pos[i], false);
				break;
			}
		return V(V_NONE);
	}
	if (len == 4 && !memcmp(s, "iter", 4) && a->npos == 1)
		return a->pos[0]; /* an iterator over the same elements */
	if (len == 4 && !memcmp(s, "next", 4) && a->npos >= 1)
		return element_of(f, a->pos[0]);
	if ((len == 3 && !memcmp(s, "len", 3)) || (len == 10 && !memcmp(s, "isinstance", 10)) ||
	    (len == 7 && !memcmp(s, "hasattr", 7)) || (len == 8 && !memcmp(s, "callable", 8)) ||
	    (len == 2 && !memcmp(s, "id", 2)))
		return VD(V_HOST_SCALAR, FAM_NONE, line);
	if (len == 3 && !memcmp(s, "pow", 3) && a->npos >= 2)
		return arith(a->pos[0], a->pos[1], line);
	if ((len == 3 && !memcmp(s, "abs", 3)) || (len == 3 && !memcmp(s, "sum", 3))) {
		if (a->npos && val_on_device(&a->pos[0]))
			return VD(V_DEVICE_SCALAR, (enum vfam)a->pos[0].fam, line);
		if (a->npos && a->pos[0].kind == V_TUPLE)
			return element_of(f, a->pos[0]);
		return a->npos ? a->pos[0] : V(V_UNKNOWN);
	}
	if ((len == 4 && !memcmp(s, "list", 4)) || (len == 5 && !memcmp(s, "tuple", 5)) ||
	    (len == 6 && !memcmp(s, "sorted", 6)) || (len == 8 && !memcmp(s, "reversed", 8)))
		return a->npos && a->pos[0].kind == V_TUPLE ? a->pos[0] : V(V_UNKNOWN);
	*handled = false;
	return V(V_UNKNOWN);
}

static struct val eval_call(struct flow *f, PNode call)
{
	PNode callee = F(f, call, F_FUNCTION), argl = F(f, call, F_ARGUMENTS);
	struct frame *fr = f->cur;
	uint32_t line = line_of(f, call);
	enum nk ck = K(f, callee);
	struct args a;
	if (ck == NK_ATTRIBUTE) {
		PNode obj = F(f, callee, F_OBJECT);
		PNode attrn = F(f, callee, F_ATTRIBUTE);
		const char *attr = node_name(f, attrn);
		struct val recv = eval(f, obj);
		eval_args(f, argl, &a);
		size_t alen = strlen(attr);
		if (recv.kind == V_QUAL && recv.qual)
			return call_value(f, call, (struct val){.kind = V_QUAL, .ref = -1, .ref2 = -1,
								.qual = qual_join(f, recv.qual, attr, alen)}, &a, V(V_UNKNOWN), false);
		if (val_on_device(&recv) && (!strcmp(attr, "items") || !strcmp(attr, "keys") || !strcmp(attr, "values")))
			/* no array has these: a dict of device values the model took for
			 * one (criterion(outputs, targets) gives DETR's loss dict) */
			recv = elems_val(f, recv, VF_DICT);
		if (recv.kind == V_TUPLE && (recv.flags & VF_ELEMS)) {
			/* a list or dict of device values: d.values(), d.items(), d.get(k), xs.pop() */
			struct val el = tuple_at(f, &recv, 0);
			if (!strcmp(attr, "values") || !strcmp(attr, "copy"))
				return !strcmp(attr, "copy") ? recv : elems_val(f, el, 0);
			if (!strcmp(attr, "items") && (recv.flags & VF_DICT)) {
				struct val kv[2] = {V(V_UNKNOWN), el};
				return elems_val(f, tuple_val(f, kv, 2), 0);
			}
			if (!strcmp(attr, "get") || !strcmp(attr, "pop"))
				return el;
			return V(V_UNKNOWN);
		}
		if (recv.kind == V_ARRAY_MODULE) {
			if (!strcmp(attr, "asnumpy")) {
				if (a.npos && val_on_device(&a.pos[0]))
					d2h(f, call, "xp.asnumpy", a.pos[0], async_copy(f, &a) || fr->in_stream);
				return VD(V_HOST_ARRAY, FAM_NONE, line);
			}
			if (!strcmp(attr, "get_array_module"))
				return recv;
			if (recv.flags & VF_GPU) {
				/* xp.isnan(x) with xp cupy (or cp itself): the kb's mask functions */
				char *q = xasprintf("cupy.%s", attr);
				const struct kb_library *ml = kb_library_for(f->o->kb, q);
				bool mask = known_entry_flow(ml ? kb_lookup(ml, q) : NULL, "mask");
				free(q);
				if (mask) {
					mark_gpu(f, call);
					struct val m = VD(V_DEVICE_ARRAY, FAM_CUPY, line);
					m.flags |= VF_MASK;
					return m;
				}
			}
			return call_value(f, call, recv, &a, V(V_UNKNOWN), false);
		}
		if (val_on_device(&recv)) {
			if (recv.fam == FAM_TORCH && (!strcmp(attr, "to") || !strcmp(attr, "cuda") ||
						      (!strcmp(attr, "type") && a.npos && device_type_arg(f, &a.pos[0], a.posn[0]))))
				return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
			return device_method(f, call, recv, attr, &a);
		}
		/* .to(device) / .cuda() / .type(torch.cuda.FloatTensor): the data goes to the GPU */
		bool to_gpu = !strcmp(attr, "cuda") ||
			      (!strcmp(attr, "to") && ((a.npos && gpu_target(f, &a.pos[0], a.posn[0])) ||
						       kwarg(f, &a, "device", NULL))) ||
			      (!strcmp(attr, "type") && a.npos && device_type_arg(f, &a.pos[0], a.posn[0]));
		if (to_gpu) {
			if (recv.kind == V_INSTANCE) {
				/* a module moved to the device, in place: model.to(device)
				 * alone moves it too, so the name is marked */
				recv.flags |= VF_GPU;
				if (K(f, obj) == NK_IDENTIFIER)
					flow_bind(f, node_name(f, obj), recv);
				return recv;
			}
			if (recv.kind == V_UNKNOWN && constructor_call(f, obj))
				return VD(V_DEVICE_OBJECT, FAM_TORCH, line); /* Net().to(device): a model on the GPU */
			if (recv.kind == V_HOST_ARRAY || recv.kind == V_UNKNOWN) {
				h2d(f, call, obj, !strcmp(attr, "cuda") ? "torch.Tensor.cuda" : "torch.Tensor.to",
				    !async_copy(f, &a) && !f->cur->in_stream);
				return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
			}
		}
		/* x.type(torch.FloatTensor): a CPU tensor type, the data on the host */
		if (!strcmp(attr, "type") && a.npos == 1 && a.pos[0].kind == V_QUAL && a.pos[0].qual &&
		    str_starts_with(a.pos[0].qual, "torch.") && !strstr(a.pos[0].qual, "cuda") &&
		    strlen(a.pos[0].qual) > 12 && !strcmp(a.pos[0].qual + strlen(a.pos[0].qual) - 6, "Tensor"))
			return VD(V_HOST_ARRAY, FAM_TORCH, line);
		if (recv.kind == V_INSTANCE && recv.ref >= 0) {
			int m = method_of(f, recv.ref, attr);
			struct val r = V(V_UNKNOWN);
			bool any = false;
			if (m >= 0) {
				r = call_value(f, call, (struct val){.kind = V_FUNCTION, .ref = m, .ref2 = -1}, &a, recv, true);
				any = true;
			}
			/* self.method(): the overrides of the classes deriving from this one */
			if (K(f, obj) == NK_IDENTIFIER && text_is(f, obj, "self")) {
				for (size_t i = 0; i < f->nfns; i++) {
					const struct fn *fn = &f->fns[i];
					if ((int)i == m || fn->name != attr || fn->cls < 0 || fn->cls == recv.ref ||
					    !derives(f, fn->cls, recv.ref))
						continue;
					struct val sub = V(V_INSTANCE);
					sub.ref = fn->cls;
					struct val one = call_value(f, call, (struct val){.kind = V_FUNCTION, .ref = (int)i, .ref2 = -1}, &a, sub, true);
					r = any ? join(f, r, one) : one;
					any = true;
				}
			}
			if (any)
				return r;
			/* self.conv(x): a value the instance holds (a layer, a
			 * function), called as that value is */
			for (int ci = recv.ref, guard = 0; ci >= 0 && guard < 16; ci = f->cls[ci].base, guard++) {
				const struct env_ent *e = env_find(&f->cls[ci].attrs, attr);
				if (e && e->v.kind == V_UNKNOWN && (recv.flags & VF_GPU) && !any_host_array(&a)) {
					/* self.network(x) in a module sent to the GPU: a layer
					 * it holds (nn.Sequential(...), which the model does
					 * not name) is there, and so is what it gives */
					mark_gpu(f, call);
					return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
				}
				if (e && e->v.kind != V_INSTANCE)
					return call_value(f, call, e->v, &a, V(V_UNKNOWN), false);
			}
			if (f->cls[recv.ref].base < 0 && f->cls[recv.ref].base_qual) {
				/* a method of a library base class (nn.Module.eval, ...);
				 * of a module on the device, its parameters are there */
				const char *mm = module_method(f, attr);
				if ((recv.flags & VF_GPU) && mm && !strcmp(mm, "device"))
					return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
				return V(V_UNKNOWN);
			}
			record_call(f, qual_join(f, "", attr, alen), &a);
			return V(V_UNKNOWN);
		}
		if (recv.kind == V_INSTANCE && recv.qual) {
			const char *q = qual_join(f, recv.qual, attr, alen);
			if (library_name(f, q)) /* accelerator.prepare(...): a library object's method */
				return lib_call(f, call, q, &a);
			return project_call(f, call, q, &a);
		}
		if (recv.kind == V_DEVICE_OBJECT && recv.fam == FAM_TORCH) {
			/* a prepared model's parameters are on its device; model.eval(), ... */
			const char *mm = module_method(f, attr);
			if (mm && !strcmp(mm, "device"))
				return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
			return V(V_UNKNOWN);
		}
		if (recv.kind == V_DEVICE_OBJECT) {
			/* stream.synchronize(), event.synchronize(), ... */
			if (strstr(attr, "synchronize")) {
				mark_sync(f);
				return V(V_UNKNOWN);
			}
			if (!strcmp(attr, "record"))
				return VD(V_DEVICE_OBJECT, (enum vfam)recv.fam, line);
			return V(V_UNKNOWN);
		}
		if (recv.kind == V_HOST_SCALAR && (!strcmp(attr, "format") || !strcmp(attr, "join"))) {
			struct val dev;
			PNode devn;
			if (any_device(&a, &dev, &devn))
				d2h(f, call, "formatting a device value", dev, false);
			return VD(V_HOST_SCALAR, FAM_NONE, line);
		}
		if (recv.kind == V_HOST_ARRAY)
			return !strcmp(attr, "item") || !strcmp(attr, "tolist") ? VD(V_HOST_SCALAR, FAM_NONE, line) : recv;
		/* a method on a value gpuopt cannot name: the project's methods of that name */
		if (recv.kind == V_UNKNOWN && !text_is(f, obj, "self") && attr[0] != '_')
			record_call(f, qual_join(f, "", attr, alen), &a);
		if (strstr(attr, "synchronize")) { /* torch.cuda.current_stream().synchronize() */
			mark_sync(f);
			return V(V_UNKNOWN);
		}
		struct val dev;
		PNode devn;
		if (recv.kind == V_UNKNOWN && any_device(&a, &dev, &devn) && dev.fam == FAM_TORCH) {
			/* loss_fn(...), model.module(x): framework calls keep tensors on the device */
			mark_gpu(f, call);
			return VD(V_DEVICE_ARRAY, FAM_TORCH, line);
		}
		return V(V_UNKNOWN);
	}
	if (ck == NK_IDENTIFIER) {
		const char *name = node_name(f, callee);
		struct val v = lookup(f, name);
		eval_args(f, argl, &a);
		if (v.kind == V_UNKNOWN && !bound(f, name)) {
			bool handled;
			struct val r = builtin_call(f, call, callee, &a, &handled);
			if (handled)
				return r;
		}
		return call_value(f, call, v, &a, V(V_UNKNOWN), false);
	}
	if (ck == NK_SUBSCRIPT) { /* kernel[grid, block](args) */
		struct val k = eval(f, F(f, callee, F_VALUE));
		eval(f, F(f, callee, F_SUBSCRIPT));
		eval_args(f, argl, &a);
		bool jit_kernel = k.kind == V_FUNCTION && k.ref >= 0 && f->fns[k.ref].kernel;
		if (jit_kernel || k.kind == V_DEVICE_OBJECT || (k.kind == V_QUAL && fam_of_qual(k.qual) != FAM_NONE))
			mark_gpu(f, call);
		/* a @cuda.jit kernel given a NumPy array: Numba copies it to the
		 * device and back after the launch, which waits for the kernel */
		for (uint32_t i = 0; jit_kernel && i < a.npos; i++)
			if (a.pos[i].kind == V_HOST_ARRAY) {
				mark_sync(f);
				break;
			}
		return V(V_NONE);
	}
	struct val v = eval(f, callee);
	eval_args(f, argl, &a);
	return call_value(f, call, v, &a, V(V_UNKNOWN), false);
}

/* ---- expressions ---- */

static struct val eval_attribute(struct flow *f, PNode n)
{
	PNode obj = F(f, n, F_OBJECT);
	PNode an = F(f, n, F_ATTRIBUTE);
	struct val o = eval(f, obj);
	size_t alen;
	const char *attr = flow_text(f, an, &alen);
	uint32_t line = line_of(f, n);
	if (alen == 2 && !memcmp(attr, "xp", 2)) /* a backend's array module (sigpy's device.xp) */
		return (struct val){.kind = V_ARRAY_MODULE, .fam = FAM_CUPY, .flags = VF_GPU, .ref = -1, .ref2 = -1, .line = line};
	switch (o.kind) {
	case V_QUAL:
		return (struct val){.kind = V_QUAL, .ref = -1, .ref2 = -1, .qual = qual_join(f, o.qual, attr, alen)};
	case V_ARRAY_MODULE:
		if ((alen == 3 && !memcmp(attr, "pi", 2)) || (alen == 1 && attr[0] == 'e') || (alen == 3 && !memcmp(attr, "inf", 3)))
			return VD(V_HOST_SCALAR, FAM_NONE, line);
		return o;
	case V_DEVICE_ARRAY:
	case V_DEVICE_SCALAR: {
		static const char *const types[] = {"", "cupy.ndarray", "torch.cuda.Tensor", "numba.cuda.DeviceNDArray", "jax.Array"};
		const struct kb_type *t = kb_type(f->o->kb, types[o.fam < 5 ? o.fam : 0]);
		if (alen > 3 && !memcmp(attr, "is_", 3))
			return VD(V_HOST_SCALAR, FAM_NONE, line);
		if (alen == 6 && !memcmp(attr, "device", 6)) {
			struct val d = V(V_DEVSPEC);
			d.flags = VF_GPU;
			return d;
		}
		if (t) {
			size_t i;
			json_t *h;
			json_array_foreach(t->host_attributes, i, h)
				if (strlen(json_string_value(h)) == alen && !memcmp(json_string_value(h), attr, alen))
					return VD(V_HOST_SCALAR, FAM_NONE, line);
		}
		return o;
	}
	case V_INSTANCE:
		if (o.ref < 0 && o.qual) {
			/* accelerator.device: the attribute's type, by the kb */
			const struct kb_type *t = kb_type(f->o->kb, o.qual);
			char *an2 = xasprintf("%.*s", (int)alen, attr);
			json_t *ty = t && t->attributes ? json_object_get(t->attributes, an2) : NULL;
			free(an2);
			if (ty && json_is_string(ty)) {
				const char *tn = json_string_value(ty);
				const struct kb_library *lib = kb_library_for(f->o->kb, tn);
				if (known_entry_flow(lib ? kb_lookup(lib, tn) : NULL, "devspec")) {
					struct val d = V(V_DEVSPEC);
					d.flags = VF_GPU;
					d.line = line;
					return d;
				}
				return of_type(f, tn, line);
			}
		}
		if (o.ref >= 0) {
			const char *an2 = intern(f, attr, alen);
			for (int ci = o.ref, guard = 0; ci >= 0 && guard < 16; ci = f->cls[ci].base, guard++) {
				const struct env_ent *e = env_find(&f->cls[ci].attrs, an2);
				if (e)
					return e->v;
			}
			int m = method_of(f, o.ref, an2);
			if (m >= 0 && f->fns[m].prop) /* self.device: the property's value */
				return call_fn(f, m, o, &o, 1, n);
			if (m >= 0)
				return (struct val){.kind = V_FUNCTION, .ref = m, .ref2 = -1};
		}
		return V(V_UNKNOWN);
	case V_HOST_ARRAY:
		return alen == 1 && attr[0] == 'T' ? o : V(V_UNKNOWN);
	default:
		return V(V_UNKNOWN);
	}
}

static struct val eval_comprehension(struct flow *f, PNode n)
{
	struct frame *fr = f->cur;
	struct env saved = env_copy(&fr->env);
	uint32_t depth = fr->depth, ll = fr->loop_line, lc = fr->loop_cell;
	PNode lb = fr->loop_body, ls = fr->loop_stmt;
	bool thr = fr->throttled;
	/* a comprehension over a batch's few items: its waits do not make the
	 * loops around it wait every iteration (run_loop's rb_floor) */
	uint32_t floor = fr->rb_floor;
	if (fr->depth > fr->rb_floor && fr->depth < 31)
		fr->rb_floor = fr->depth;
	uint32_t k = pn_named_child_count(n);
	bool hot = false;
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(n, i);
		if (K(f, c) == NK_FOR_IN) {
			PNode left = F(f, c, F_LEFT), right = F(f, c, F_RIGHT);
			struct val it = eval(f, right);
			if (!hot && !cold_loop(f, left, right)) {
				hot = true;
				fr->depth++;
				fr->loop_line = flow_user_line(f, n, &fr->loop_cell);
				fr->loop_body = n;
				fr->loop_stmt = c;
				fr->throttled = false;
			}
			PNode rc = right;
			if (K(f, rc) == NK_CALL && text_is(f, F(f, rc, F_FUNCTION), "enumerate")) {
				struct val el[2] = {VD(V_HOST_SCALAR, FAM_NONE, 0), V(V_UNKNOWN)};
				struct args aa;
				f->silent++;
				eval_args(f, F(f, rc, F_ARGUMENTS), &aa);
				f->silent--;
				el[1] = element_of(f, aa.npos ? aa.pos[0] : V(V_UNKNOWN));
				bind_target(f, left, tuple_val(f, el, 2), 0);
			} else {
				bind_target(f, left, element_of(f, it), 0);
			}
		} else if (K(f, c) == NK_IF_CLAUSE) {
			eval_test(f, pn_named_child(c, 0));
		}
	}
	if (!hot && K(f, n) != NK_OTHER) {
		/* nothing */
	}
	struct flow_event ev = {.kind = FE_FOR, .at = n, .node = n, .what = "comprehension"};
	emit(f, &ev);
	PNode body = F(f, n, F_BODY);
	struct val r = V(V_UNKNOWN);
	if (K(f, body) == NK_PAIR) {
		eval(f, F(f, body, F_KEY));
		struct val b = eval(f, F(f, body, F_VALUE));
		if (holds_device(f, &b, 0))
			r = elems_val(f, b, VF_DICT); /* {k: v.to(device) for ...}: a dict of device values */
	} else if (!pn_is_null(body)) {
		struct val b = eval(f, body);
		if (holds_device(f, &b, 0) && K(f, n) != NK_SET_COMP)
			r = elems_val(f, b, 0); /* a list of device values */
	}
	env_free(&fr->env);
	fr->env = saved;
	fr->depth = depth;
	fr->loop_line = ll;
	fr->loop_cell = lc;
	fr->loop_body = lb;
	fr->loop_stmt = ls;
	fr->throttled = thr;
	fr->rb_floor = floor;
	return r;
}

/* Evaluates a condition: and / or / not test each operand, any other
 * device value is copied back to answer. */
static struct val eval_test(struct flow *f, PNode n)
{
	if (f->nest >= FLOW_MAX_NEST)
		return V(V_UNKNOWN);
	enum nk k = K(f, n);
	if (k == NK_PARENTHESIZED || k == NK_NOT) {
		f->nest++;
		eval_test(f, k == NK_NOT ? F(f, n, F_ARGUMENT) : pn_named_child(n, 0));
		f->nest--;
		return VD(V_HOST_SCALAR, FAM_NONE, 0);
	}
	if (k == NK_BOOLEAN) {
		/* `i % n == 0 and bool(x)`: the right side runs only now and then */
		PNode left = F(f, n, F_LEFT);
		f->nest++;
		eval_test(f, left);
		bool thr = f->cur->throttled;
		if (text_is(f, F(f, n, F_OPERATOR), "and") && throttling(f, left))
			f->cur->throttled = true;
		eval_test(f, F(f, n, F_RIGHT));
		f->cur->throttled = thr;
		f->nest--;
		return VD(V_HOST_SCALAR, FAM_NONE, 0);
	}
	struct val v = eval(f, n);
	truth(f, n, v);
	return val_on_device(&v) ? VD(V_HOST_SCALAR, FAM_NONE, 0) : v;
}

static struct val eval_node(struct flow *f, PNode n);

/* Records that the budget ran out at n (the first time only): its line and
 * the function being analysed, as the user names it (Class.method). */
static void budget_spent(struct flow *f, PNode n)
{
	if (f->stop.line)
		return;
	f->stop.line = flow_user_line(f, n, &f->stop.cell);
	if (f->cur->fn >= 0) {
		const char *q = f->fns[f->cur->fn].qual;
		size_t ml = f->module ? strlen(f->module) : 0;
		if (ml && strncmp(q, f->module, ml) == 0 && q[ml] == '.')
			q += ml + 1;
		f->stop.func = xstrdup(q);
	}
}

/* Bounded recursion: a deeply nested expression is unknown past the bound;
 * so is everything once the budget is spent. */
static struct val eval(struct flow *f, PNode n)
{
	if (pn_is_null(n))
		return V(V_UNKNOWN);
	if (f->budget-- <= 0) {
		budget_spent(f, n);
		return V(V_UNKNOWN);
	}
	if (f->budget == 0) /* the last node it pays for: the statements stop here */
		budget_spent(f, n);
	if (f->nest >= FLOW_MAX_NEST)
		return V(V_UNKNOWN);
	f->nest++;
	struct val v = eval_node(f, n);
	f->nest--;
	return v;
}

static struct val eval_node(struct flow *f, PNode n)
{
	uint32_t line;
	switch (K(f, n)) {
	case NK_IDENTIFIER: {
		struct val v = lookup(f, node_name(f, n));
		if (v.kind == V_UNKNOWN && text_is(f, n, "self") && f->cur->self.kind)
			return f->cur->self;
		return v;
	}
	case NK_ATTRIBUTE:
		return eval_attribute(f, n);
	case NK_CALL:
		return eval_call(f, n);
	case NK_SUBSCRIPT: {
		struct val v = eval(f, F(f, n, F_VALUE));
		PNode sub = F(f, n, F_SUBSCRIPT);
		uint32_t k = pn_named_child_count(n);
		for (uint32_t i = 1; i < k; i++)
			eval(f, pn_named_child(n, i));
		if (v.kind == V_TUPLE && (v.flags & VF_ELEMS) && k == 2)
			return K(f, sub) == NK_SLICE ? v : tuple_at(f, &v, 0); /* xs[i], d["key"], xs[1:] */
		if (v.kind == V_TUPLE && K(f, sub) == NK_INTEGER) {
			size_t len;
			const char *s = flow_text(f, sub, &len);
			char buf[16];
			if (len < sizeof buf) {
				memcpy(buf, s, len);
				buf[len] = '\0';
				return tuple_at(f, &v, (size_t)strtoul(buf, NULL, 10));
			}
		}
		if (v.kind == V_DEVICE_ARRAY && v.fam == FAM_NUMBA && K(f, sub) != NK_SLICE && pn_named_child_count(n) == 2)
			return VD(V_HOST_SCALAR, FAM_NONE, 0); /* a numba device array's element comes to the host */
		if (k == 2)
			mask_index(f, n, &v, sub, false);
		else /* flow[:, idx]: a mask among several indices */
			for (uint32_t i = 1; i < k; i++)
				if (mask_expr(f, pn_named_child(n, i), 0)) {
					mask_index(f, n, &v, pn_named_child(n, i), false);
					break;
				}
		if (val_on_device(&v) || v.kind == V_HOST_ARRAY)
			return v;
		return V(V_UNKNOWN);
	}
	case NK_BINARY: {
		PNode l = F(f, n, F_LEFT), r = F(f, n, F_RIGHT);
		struct val a = eval(f, l), b = eval(f, r);
		PNode op = F(f, n, F_OPERATOR);
		if (K(f, l) == NK_STRING && text_is(f, op, "%")) {
			if (val_on_device(&b))
				d2h(f, r, "%-formatting a device value", b, false);
			else if (b.kind == V_TUPLE)
				for (size_t i = 0; i < b.n; i++) {
					struct val e = tuple_at(f, &b, i);
					if (val_on_device(&e)) {
						d2h(f, r, "%-formatting a device value", e, false);
						break;
					}
				}
			return VD(V_HOST_SCALAR, FAM_NONE, 0);
		}
		line = line_of(f, n);
		struct val res = arith(a, b, line);
		if ((a.flags & VF_CONST) && (b.flags & VF_CONST)) {
			bool ok = true;
			int64_t x = a.ival, y = b.ival, z = 0;
			/* what overflows 64 bits is no longer known (Python's ints do not wrap) */
			if (text_is(f, op, "+"))
				ok = !__builtin_add_overflow(x, y, &z);
			else if (text_is(f, op, "-"))
				ok = !__builtin_sub_overflow(x, y, &z);
			else if (text_is(f, op, "*"))
				ok = !__builtin_mul_overflow(x, y, &z);
			else if (text_is(f, op, "//") && y != 0 && !(x == INT64_MIN && y == -1))
				z = x / y - ((x % y != 0) && ((x < 0) != (y < 0))); /* floor, as Python */
			else
				ok = false;
			if (ok) {
				res.flags |= VF_CONST;
				res.ival = z;
			}
		}
		if (val_on_device(&res) && ((a.flags | b.flags) & VF_MASK) &&
		    (text_is(f, op, "&") || text_is(f, op, "|") || text_is(f, op, "^")))
			res.flags |= VF_MASK; /* mask & other_mask */
		if (val_on_device(&res))
			mark_gpu(f, n);
		return res;
	}
	case NK_UNARY: {
		struct val v = eval(f, F(f, n, F_ARGUMENT));
		return v.kind == V_TUPLE ? V(V_UNKNOWN) : v;
	}
	case NK_COMPARISON: {
		uint32_t k = pn_named_child_count(n);
		struct val acc = V(V_UNKNOWN);
		bool dev = false;
		enum vfam fam = FAM_NONE;
		for (uint32_t i = 0; i < k; i++) {
			struct val v = eval(f, pn_named_child(n, i));
			if (val_on_device(&v)) {
				dev = true;
				fam = (enum vfam)v.fam;
			}
			acc = v;
		}
		(void)acc;
		size_t len;
		const char *s = flow_text(f, n, &len);
		bool identity = false;
		for (uint32_t i = 0; i < pn_child_count(n); i++) {
			PNode c = pn_child(n, i);
			/* the parser gives `is not` and `not in` as one token each */
			if (!pn_is_named(c) && (text_is(f, c, "is") || text_is(f, c, "in") || text_is(f, c, "not") ||
						text_is(f, c, "is not") || text_is(f, c, "not in")))
				identity = true;
		}
		(void)s;
		if (dev && !identity) {
			mark_gpu(f, n);
			struct val m = VD(V_DEVICE_SCALAR, fam, line_of(f, n));
			m.flags |= VF_MASK;
			return m;
		}
		return VD(V_HOST_SCALAR, FAM_NONE, 0);
	}
	case NK_BOOLEAN: {
		struct val a = eval(f, F(f, n, F_LEFT));
		truth(f, F(f, n, F_LEFT), a);
		struct val b = eval(f, F(f, n, F_RIGHT));
		return val_on_device(&a) ? b : join(f, a, b);
	}
	case NK_NOT: {
		struct val v = eval(f, F(f, n, F_ARGUMENT));
		truth(f, F(f, n, F_ARGUMENT), v);
		return VD(V_HOST_SCALAR, FAM_NONE, 0);
	}
	case NK_CONDITIONAL: {
		PNode body = pn_named_child(n, 0), cond = pn_named_child(n, 1), alt = pn_named_child(n, 2);
		eval_test(f, cond);
		struct val a = eval(f, body), b = eval(f, alt);
		/* g.item() if isinstance(g, torch.Tensor) else g: the other arm is
		 * g when it is not a tensor, so not on the device */
		bool neg = K(f, cond) == NK_NOT;
		PNode test = neg ? F(f, cond, F_ARGUMENT) : cond, same = neg ? body : alt;
		if (K(f, test) == NK_CALL && text_is(f, F(f, test, F_FUNCTION), "isinstance") &&
		    K(f, same) == NK_IDENTIFIER) {
			PNode al = F(f, test, F_ARGUMENTS);
			PNode x = pn_is_null(al) || !pn_named_child_count(al) ? al : pn_named_child(al, 0);
			size_t xl, sl;
			const char *xs = pn_is_null(x) ? NULL : flow_text(f, x, &xl), *ss = flow_text(f, same, &sl);
			if (xs && K(f, x) == NK_IDENTIFIER && xl == sl && !memcmp(xs, ss, xl))
				return neg ? b : a;
		}
		return join(f, a, b);
	}
	case NK_PARENTHESIZED:
		return eval(f, pn_named_child(n, 0));
	case NK_TUPLE:
	case NK_LIST:
	case NK_EXPR_LIST:
	case NK_SET: {
		uint32_t k = pn_named_child_count(n);
		struct val el[32];
		size_t m = 0;
		for (uint32_t i = 0; i < k; i++) {
			PNode c = pn_named_child(n, i);
			struct val v = eval(f, c);
			if (K(f, c) == NK_LIST_SPLAT)
				v = V(V_UNKNOWN);
			if (m < 32)
				el[m++] = v;
		}
		return K(f, n) == NK_SET ? V(V_UNKNOWN) : tuple_val(f, el, m);
	}
	case NK_DICT: {
		uint32_t k = pn_named_child_count(n);
		for (uint32_t i = 0; i < k; i++) {
			PNode c = pn_named_child(n, i);
			if (K(f, c) == NK_PAIR) {
				eval(f, F(f, c, F_KEY));
				eval(f, F(f, c, F_VALUE));
			} else {
				eval(f, c);
			}
		}
		return V(V_UNKNOWN);
	}
	case NK_STRING:
		return eval_string(f, n);
	case NK_CONCAT_STRING: {
		uint32_t k = pn_named_child_count(n);
		struct val v = V(V_HOST_SCALAR);
		for (uint32_t i = 0; i < k; i++) {
			struct val s = eval(f, pn_named_child(n, i));
			if (i == 0)
				v = s;
		}
		return v;
	}
	case NK_INTEGER: {
		struct val v = VD(V_HOST_SCALAR, FAM_NONE, 0);
		size_t len;
		const char *t = flow_text(f, n, &len);
		char buf[24];
		size_t o = 0;
		for (size_t i = 0; i < len && o + 1 < sizeof buf; i++)
			if (t[i] != '_')
				buf[o++] = t[i];
		buf[o] = '\0';
		char *end;
		long long x = strtoll(buf, &end, 0);
		if (*end == '\0' && o < sizeof buf - 1) {
			v.flags = VF_CONST;
			v.ival = x;
		}
		return v;
	}
	case NK_FLOAT:
	case NK_TRUE:
	case NK_FALSE:
		return VD(V_HOST_SCALAR, FAM_NONE, 0);
	case NK_NONE:
		return V(V_NONE);
	case NK_LIST_COMP:
	case NK_SET_COMP:
	case NK_DICT_COMP:
	case NK_GENERATOR:
		return eval_comprehension(f, n);
	case NK_LAMBDA: {
		int fi = fn_of_def(f, n);
		return fi >= 0 ? (struct val){.kind = V_FUNCTION, .ref = fi, .ref2 = -1} : V(V_UNKNOWN);
	}
	case NK_NAMED_EXPR: {
		struct val v = eval(f, F(f, n, F_VALUE));
		bind_target(f, F(f, n, F_NAME), v, 0);
		return v;
	}
	case NK_AWAIT:
		return eval(f, pn_named_child(n, 0));
	case NK_KEYWORD_ARGUMENT:
		return eval(f, F(f, n, F_VALUE));
	case NK_LIST_SPLAT:
	case NK_DICT_SPLAT:
		eval(f, pn_named_child(n, 0));
		return V(V_UNKNOWN);
	case NK_SLICE: {
		uint32_t k = pn_named_child_count(n);
		for (uint32_t i = 0; i < k; i++)
			eval(f, pn_named_child(n, i));
		return V(V_UNKNOWN);
	}
	case NK_ASSIGNMENT: { /* a = b = x */
		struct val v = eval(f, F(f, n, F_RIGHT));
		bind_target(f, F(f, n, F_LEFT), v, 0);
		return v;
	}
	default: {
		uint32_t k = pn_named_child_count(n);
		for (uint32_t i = 0; i < k && i < 64; i++)
			eval(f, pn_named_child(n, i));
		return V(V_UNKNOWN);
	}
	}
}

struct val flow_peek(struct flow *f, PNode expr)
{
	f->silent++;
	struct tstate ts = f->cur->ts;
	struct val v = eval(f, expr);
	f->cur->ts = ts;
	f->silent--;
	return v;
}

/* ---- statements ---- */

static void exec_import(struct flow *f, PNode s)
{
	uint32_t k = pn_named_child_count(s);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		enum nk kind = K(f, c);
		char *full = NULL;
		PNode alias = PN_NULL;
		if (kind == NK_DOTTED_NAME) {
			full = xstrndup(f->text + pn_start_byte(c), pn_end_byte(c) - pn_start_byte(c));
		} else if (kind == NK_ALIASED_IMPORT) {
			PNode nm = F(f, c, F_NAME);
			full = xstrndup(f->text + pn_start_byte(nm), pn_end_byte(nm) - pn_start_byte(nm));
			alias = F(f, c, F_ALIAS);
		} else {
			continue;
		}
		/* drop spaces inside dotted names */
		char *w = full;
		for (char *r = full; *r; r++)
			if (*r != ' ' && *r != '\t' && *r != '\n' && *r != '\\')
				*w++ = *r;
		*w = '\0';
		struct val v = V(V_QUAL);
		if (pn_is_null(alias)) {
			size_t top = strcspn(full, ".");
			v.qual = intern(f, full, top);
			flow_bind(f, intern(f, full, top), v);
		} else {
			v.qual = internz(f, full);
			flow_bind(f, node_name(f, alias), v);
		}
		free(full);
	}
}

/* The package a relative import names, from this module's name. */
static char *relative_base(struct flow *f, PNode rel)
{
	size_t len;
	const char *s = flow_text(f, rel, &len);
	size_t dots = 0;
	while (dots < len && s[dots] == '.')
		dots++;
	const char *mod = f->module ? f->module : "";
	size_t end = strlen(mod);
	for (size_t d = 0; d < dots && end > 0; d++) {
		while (end > 0 && mod[end - 1] != '.')
			end--;
		if (end > 0)
			end--;
	}
	if (dots < len)
		return end ? xasprintf("%.*s.%.*s", (int)end, mod, (int)(len - dots), s + dots)
			   : xstrndup(s + dots, len - dots);
	return xstrndup(mod, end);
}

static void exec_import_from(struct flow *f, PNode s)
{
	PNode mod = F(f, s, F_MODULE_NAME);
	char *base;
	if (K(f, mod) == NK_RELATIVE_IMPORT)
		base = relative_base(f, mod);
	else if (K(f, mod) == NK_DOTTED_NAME)
		base = xstrndup(f->text + pn_start_byte(mod), pn_end_byte(mod) - pn_start_byte(mod));
	else
		return;
	uint32_t k = pn_named_child_count(s);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		if (pn_eq(c, mod))
			continue;
		PNode nm = c, alias = c;
		if (K(f, c) == NK_ALIASED_IMPORT) {
			nm = F(f, c, F_NAME);
			alias = F(f, c, F_ALIAS);
		} else if (K(f, c) != NK_DOTTED_NAME) {
			continue;
		}
		size_t len;
		const char *t = flow_text(f, nm, &len);
		struct val v = V(V_QUAL);
		v.qual = *base ? qual_join(f, base, t, len) : intern(f, t, len);
		flow_bind(f, node_name(f, alias), v);
	}
	free(base);
}

/* Does the loop body break out of this loop (a break not inside a loop
 * nested in it, nor in a nested function)? */
static bool breaks_out(struct flow *f, PNode t, int depth)
{
	if (pn_is_null(t) || depth > 24)
		return false;
	enum nk k = K(f, t);
	if (k == NK_BREAK)
		return true;
	if (depth > 0 && (k == NK_FOR || k == NK_WHILE || k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA))
		return false;
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (breaks_out(f, pn_named_child(t, i), depth + 1))
			return true;
	return false;
}

/* Runs a loop body to a fixed point (silently), then once with events. */
static void run_loop(struct flow *f, PNode stmt, PNode target, struct val elem, PNode cond, PNode body, bool cold)
{
	struct frame *fr = f->cur;
	uint32_t depth = fr->depth, ll = fr->loop_line, lc = fr->loop_cell;
	PNode lb = fr->loop_body, ls = fr->loop_stmt;
	bool thr = fr->throttled;
	uint32_t floor = fr->rb_floor;
	if (!cold) {
		/* entered now and then, or left early (a search that breaks at
		 * its first hit): its waits do not make the loops around it
		 * wait every iteration */
		if ((thr || breaks_out(f, body, 0)) && fr->depth > fr->rb_floor && fr->depth < 31)
			fr->rb_floor = fr->depth;
		fr->depth++;
		if (fr->depth < 32)
			fr->inner_sync &= ~(1u << fr->depth); /* this loop's own, found as it runs */
		fr->loop_line = flow_user_line(f, stmt, &fr->loop_cell);
		fr->loop_body = body;
		fr->loop_stmt = stmt;
		fr->throttled = false;
	}
	struct env in = env_copy(&fr->env);
	struct tstate tin = fr->ts;
	int rounds = fr->fix_nest < FLOW_FIX_NEST ? FLOW_LOOP_ROUNDS : 1;
	fr->fix_nest++;
	f->silent++;
	for (int r = 0; r < rounds && f->budget > 0; r++) {
		if (!pn_is_null(target))
			bind_target(f, target, elem, 0);
		if (!pn_is_null(cond))
			eval_test(f, cond);
		exec_block(f, body);
		fr->dead = false;
		env_join_f(f, &fr->env, &in);
		ts_join(&fr->ts, &tin);
		bool same = env_same(&fr->env, &in);
		env_free(&in);
		in = env_copy(&fr->env);
		tin = fr->ts;
		if (same)
			break;
	}
	f->silent--;
	fr->fix_nest--;
	if (!pn_is_null(target))
		bind_target(f, target, elem, 0);
	if (!pn_is_null(cond))
		eval_test(f, cond);
	exec_block(f, body);
	fr->dead = false;
	/* every iteration ends waiting for the GPU (stream.synchronize() last
	 * in the body): the loop is taken to run at least once, so nothing
	 * queued before it is still pending at its exit */
	bool synced = !fr->ts.pending && !fr->ts.since;
	env_join_f(f, &fr->env, &in);
	ts_join(&fr->ts, &tin);
	if (synced)
		fr->ts.pending = fr->ts.since = false;
	env_free(&in);
	if (!cold && fr->depth < 32)
		fr->inner_sync &= ~(1u << fr->depth);
	fr->rb_floor = floor;
	fr->depth = depth;
	fr->loop_line = ll;
	fr->loop_cell = lc;
	fr->loop_body = lb;
	fr->loop_stmt = ls;
	fr->throttled = thr;
}

/* Does the loop body call two or more test functions (test_collision(i),
 * test_inflow(i), ...) as its statements: a harness's loop over test cases,
 * each run once, like a loop over trials? (One, test_step(batch), may be
 * the work of every batch.) */
static bool runs_tests(struct flow *f, PNode body)
{
	uint32_t n = pn_named_child_count(body);
	const char *first = NULL;
	size_t first_len = 0;
	for (uint32_t i = 0; i < n; i++) {
		PNode st = pn_named_child(body, i);
		PNode c = K(f, st) == NK_EXPR_STMT ? pn_named_child(st, 0) : PN_NULL;
		if (K(f, c) != NK_CALL)
			continue;
		PNode callee = F(f, c, F_FUNCTION);
		size_t len;
		const char *name = flow_text(f, callee, &len);
		if (K(f, callee) != NK_IDENTIFIER || len <= 5 || strncmp(name, "test_", 5) != 0)
			continue;
		if (!first) {
			first = name;
			first_len = len;
		} else if (len != first_len || memcmp(name, first, len) != 0) {
			return true; /* a second test function */
		}
	}
	return false;
}

/* Does the tree (not its nested functions) run a loop that is not a cold
 * sweep (*loop), or call x.backward() / x.step() (*step)? */
static void has_loop_or_step(struct flow *f, PNode t, int depth, bool *loop, bool *step)
{
	if (pn_is_null(t) || depth > 40)
		return;
	enum nk k = K(f, t);
	if (depth > 0 && (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA))
		return;
	if ((k == NK_FOR && !cold_loop(f, F(f, t, F_LEFT), F(f, t, F_RIGHT))) || k == NK_WHILE ||
	    k == NK_LIST_COMP || k == NK_GENERATOR || k == NK_SET_COMP || k == NK_DICT_COMP)
		*loop = true; /* (a loop over three masks is not a loop over batches) */
	if (k == NK_CALL) {
		PNode fn = F(f, t, F_FUNCTION);
		if (K(f, fn) == NK_ATTRIBUTE && pn_named_child_count(F(f, t, F_ARGUMENTS)) == 0 &&
		    (text_is(f, F(f, fn, F_ATTRIBUTE), "backward") || text_is(f, F(f, fn, F_ATTRIBUTE), "step")))
			*step = true;
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		has_loop_or_step(f, pn_named_child(t, i), depth + 1, loop, step);
}

/* The functions of this file (by name, not methods) the tree calls: does
 * one of them loop (*loop), does one of them step (*step)? */
static void called_fns(struct flow *f, PNode t, int depth, bool *loop, bool *step)
{
	if (pn_is_null(t) || depth > 40)
		return;
	enum nk k = K(f, t);
	if (depth > 0 && (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA))
		return;
	if (k == NK_CALL && K(f, F(f, t, F_FUNCTION)) == NK_IDENTIFIER) {
		size_t len;
		const char *s = flow_text(f, F(f, t, F_FUNCTION), &len);
		for (size_t i = 0; i < f->nfns; i++) {
			const struct fn *fn = &f->fns[i];
			if (fn->cls >= 0 || fn->lambda || !fn->name || strlen(fn->name) != len || memcmp(fn->name, s, len))
				continue;
			has_loop_or_step(f, F(f, fn->def, F_BODY), 0, loop, step);
		}
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		called_fns(f, pn_named_child(t, i), depth + 1, loop, step);
}

/* Full-graph training: an epoch loop (cold by its name) whose body runs no
 * loop of its own and makes one optimizer step, itself (loss.backward(),
 * optimizer.step()) or through a function of this file that does so
 * without a loop (loss = train() in PyG's examples): each epoch is one
 * step, so what it reads back per epoch it reads per step. */
static bool one_step_epoch(struct flow *f, PNode body)
{
	bool loop = false, step = false;
	has_loop_or_step(f, body, 0, &loop, &step);
	if (loop)
		return false;
	bool cloop = false, cstep = false;
	called_fns(f, body, 0, &cloop, &cstep);
	/* train() over batches inside: an epoch of many steps */
	return !cloop && (step || cstep);
}

static void exec_for(struct flow *f, PNode s)
{
	PNode left = F(f, s, F_LEFT), right = F(f, s, F_RIGHT), body = F(f, s, F_BODY);
	struct val it = eval(f, right);
	struct val elem = element_of(f, it);
	if (K(f, right) == NK_CALL && K(f, F(f, right, F_FUNCTION)) == NK_IDENTIFIER) {
		PNode callee = F(f, right, F_FUNCTION);
		struct args a;
		f->silent++;
		eval_args(f, F(f, right, F_ARGUMENTS), &a);
		f->silent--;
		if (text_is(f, callee, "enumerate")) {
			struct val el[2] = {VD(V_HOST_SCALAR, FAM_NONE, 0), element_of(f, a.npos ? a.pos[0] : V(V_UNKNOWN))};
			elem = tuple_val(f, el, 2);
		} else if (text_is(f, callee, "zip")) {
			struct val el[16];
			for (uint32_t i = 0; i < a.npos; i++)
				el[i] = element_of(f, a.pos[i]);
			elem = tuple_val(f, el, a.npos);
		} else if (text_is(f, callee, "range")) {
			elem = VD(V_HOST_SCALAR, FAM_NONE, 0);
		}
	}
	bool cold = (cold_loop(f, left, right) && !one_step_epoch(f, body)) || strided_check(f, right) ||
		    runs_tests(f, body);
	struct flow_event ev = {.kind = FE_FOR, .at = s, .node = s, .what = "for"};
	emit(f, &ev);
	run_loop(f, s, left, elem, PN_NULL, body, cold);
	PNode alt = F(f, s, F_ALTERNATIVE);
	if (!pn_is_null(alt))
		exec_block(f, F(f, alt, F_BODY));
}

/* Does the tree read the name (an identifier of that text)? */
static bool reads_name(struct flow *f, PNode t, const char *name, size_t len, int depth)
{
	if (pn_is_null(t) || depth > 32)
		return false;
	if (K(f, t) == NK_IDENTIFIER) {
		return text_eq(f, t, name, len);
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (reads_name(f, pn_named_child(t, i), name, len, depth + 1))
			return true;
	return false;
}

/* Does the tree make the name smaller: name -= 1, name //= 2, or
 * name = decay(name) / name // 2 (a new value computed from the old)? */
static bool decays_name(struct flow *f, PNode t, const char *name, size_t len, int depth)
{
	if (pn_is_null(t) || depth > 32)
		return false;
	enum nk k = K(f, t);
	if (k == NK_FUNCTION_DEF || k == NK_CLASS_DEF || k == NK_LAMBDA)
		return false;
	if (k == NK_AUG_ASSIGNMENT || k == NK_ASSIGNMENT) {
		PNode l = F(f, t, F_LEFT);
		if (K(f, l) == NK_IDENTIFIER && text_eq(f, l, name, len)) {
			if (k == NK_ASSIGNMENT)
				return reads_name(f, F(f, t, F_RIGHT), name, len, 0);
			PNode op = F(f, t, F_OPERATOR);
			return text_is(f, op, "-=") || text_is(f, op, "//=") || text_is(f, op, "/=") || text_is(f, op, ">>=");
		}
	}
	uint32_t n = pn_named_child_count(t);
	for (uint32_t i = 0; i < n; i++)
		if (decays_name(f, pn_named_child(t, i), name, len, depth + 1))
			return true;
	return false;
}

/* Is the while loop a retry loop: `while retries:` / `while batch_size:`
 * (a count, or `count > 0`) that the body makes smaller, around a try of
 * one whole run, which either returns or breaks out on success or is
 * counted by a name that says so (retries, tries, attempts)? Like a loop
 * over epochs or trials, it runs a few costly times: cold. */
static bool retry_loop(struct flow *f, PNode cond, PNode body)
{
	PNode var = cond;
	if (K(f, cond) == NK_COMPARISON && pn_named_child_count(cond) == 2)
		var = pn_named_child(cond, 0);
	if (K(f, var) != NK_IDENTIFIER || pn_is_null(body))
		return false;
	size_t len;
	const char *name = flow_text(f, var, &len);
	PNode try = PN_NULL;
	uint32_t n = pn_named_child_count(body);
	for (uint32_t i = 0; i < n && pn_is_null(try); i++)
		if (K(f, pn_named_child(body, i)) == NK_TRY)
			try = pn_named_child(body, i);
	if (pn_is_null(try) || !decays_name(f, body, name, len, 0))
		return false;
	static const char *const words[] = {"retr", "attempt", NULL};
	if (word_in(name, len, words) || (len == 5 && !strncasecmp(name, "tries", 5)))
		return true;
	PNode tb = F(f, try, F_BODY);
	uint32_t m = pn_named_child_count(tb);
	for (uint32_t i = 0; i < m; i++) {
		enum nk k = K(f, pn_named_child(tb, i));
		if (k == NK_RETURN || k == NK_BREAK)
			return true;
	}
	return false;
}

static void exec_while(struct flow *f, PNode s)
{
	PNode cond = F(f, s, F_CONDITION), body = F(f, s, F_BODY);
	run_loop(f, s, PN_NULL, V(V_UNKNOWN), cond, body, retry_loop(f, cond, body));
}

/* Is the condition a test that the device is CUDA: X == "cuda" (or
 * "cuda:0"), X.type == 'cuda': a string the model reads as the GPU's device
 * (eval_string)? */
static bool cuda_test(struct flow *f, PNode cond)
{
	if (pn_is_null(cond) || K(f, cond) != NK_COMPARISON || pn_named_child_count(cond) != 2)
		return false;
	size_t len;
	const char *s = flow_text(f, cond, &len);
	if (!memmem(s, len, "==", 2) || memmem(s, len, "!=", 2))
		return false;
	for (uint32_t i = 0; i < 2; i++) {
		PNode c = pn_named_child(cond, i);
		if (K(f, c) != NK_STRING)
			continue;
		struct val v = flow_peek(f, c);
		if (v.kind == V_DEVSPEC && (v.flags & VF_GPU))
			return true;
	}
	return false;
}

static void exec_if(struct flow *f, PNode s)
{
	struct frame *fr = f->cur;
	struct env before = env_copy(&fr->env);
	struct tstate tbefore = fr->ts;
	struct env out = {0};
	struct tstate tout = {0};
	bool any = false, has_else = false;
	PNode arms[64], conds[64];
	int n = 0;
	arms[n] = F(f, s, F_CONSEQUENCE);
	conds[n++] = F(f, s, F_CONDITION);
	uint32_t k = pn_named_child_count(s);
	for (uint32_t i = 0; i < k && n < 64; i++) {
		PNode c = pn_named_child(s, i);
		if (K(f, c) == NK_ELIF) {
			arms[n] = F(f, c, F_CONSEQUENCE);
			conds[n++] = F(f, c, F_CONDITION);
		} else if (K(f, c) == NK_ELSE) {
			arms[n] = F(f, c, F_BODY);
			conds[n++] = PN_NULL;
			has_else = true;
		}
	}
	bool thr = fr->throttled;
	/* `if device == "cuda": torch.cuda.synchronize() elif device == "mps": ...`:
	 * the other ways, and the way past them all, are runs on another
	 * device, with no CUDA work pending: the timing state after the chain is
	 * the CUDA arm's */
	int cuda_arm = -1;
	struct tstate tcuda = {0};
	for (int i = 0; i < n && cuda_arm < 0; i++)
		if (cuda_test(f, conds[i]))
			cuda_arm = i;
	/* `if xp is cupy: x = x.get()`: a branch that brings a device value home
	 * leaves it on the host whichever way the test went */
	struct back {
		const char *name;
		struct val v;
	} back[16];
	int nback = 0;
	for (int i = 0; i < n; i++) {
		env_free(&fr->env);
		fr->env = env_copy(&before);
		fr->ts = tbefore;
		if (!pn_is_null(conds[i]))
			eval_test(f, conds[i]);
		if ((i == 0 && !pn_is_null(conds[i]) && throttling(f, conds[i])) || leaves_program(f, arms[i]))
			fr->throttled = true;
		uint8_t ntested = fr->ntested;
		if (!pn_is_null(conds[i]))
			note_tested(f, conds[i], 0);
		fr->dead = false;
		exec_block(f, arms[i]);
		fr->ntested = ntested;
		fr->throttled = thr;
		if (fr->dead) {
			if (i == cuda_arm)
				cuda_arm = -1;
			continue;
		}
		if (i == cuda_arm)
			tcuda = fr->ts;
		/* the names this arm bound or changed, in order (one it left as
		 * it was is no value brought home by it) */
		size_t nchanged;
		const struct env_ent **changed = env_changed(&fr->env, &before, &nchanged);
		for (size_t e = 0; e < nchanged && nback < 16; e++) {
			const struct env_ent *x = changed[e];
			const struct env_ent *old_e = env_find(&before, x->name);
			if ((x->v.flags & VF_BACK) && (!old_e || val_on_device(&old_e->v)))
				back[nback++] = (struct back){x->name, x->v};
		}
		free(changed);
		if (!any) {
			out = env_copy(&fr->env);
			tout = fr->ts;
			any = true;
		} else {
			env_join_f(f, &out, &fr->env);
			ts_join(&tout, &fr->ts);
		}
	}
	if (!has_else) {
		if (!any) {
			out = env_copy(&before);
			tout = tbefore;
		} else {
			env_join_f(f, &out, &before);
			ts_join(&tout, &tbefore);
		}
		any = true;
	}
	for (int i = 0; i < nback && any; i++)
		env_set(&out, back[i].name, back[i].v);
	env_free(&fr->env);
	env_free(&before);
	if (any) {
		fr->env = out;
		fr->ts = cuda_arm >= 0 ? tcuda : tout;
		fr->dead = false;
	} else {
		fr->env = env_copy(&out);
		env_free(&out);
		fr->dead = true;
	}
}

static bool is_stream_value(struct flow *f, PNode n, struct val v)
{
	if (v.kind == V_DEVICE_OBJECT)
		return true;
	size_t len;
	const char *s = flow_text(f, n, &len);
	static const char *const words[] = {"stream", NULL};
	return word_in(s, len, words);
}

static void exec_with(struct flow *f, PNode s)
{
	struct frame *fr = f->cur;
	bool in_stream = fr->in_stream, sync_exit = false;
	uint32_t k = pn_named_child_count(s);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		if (K(f, c) != NK_WITH_CLAUSE)
			continue;
		uint32_t m = pn_named_child_count(c);
		for (uint32_t j = 0; j < m; j++) {
			PNode item = pn_named_child(c, j);
			PNode v = F(f, item, F_VALUE);
			PNode target = PN_NULL;
			if (K(f, v) == NK_AS_PATTERN) {
				target = F(f, v, F_ALIAS);
				v = pn_named_child(v, 0);
			}
			struct val val = eval(f, v);
			size_t len;
			const char *t = flow_text(f, v, &len);
			if (memmem(t, len, "auto_synchronize", 16))
				sync_exit = true;
			else if (is_stream_value(f, v, val))
				fr->in_stream = true;
			if (!pn_is_null(target)) {
				if (K(f, target) == NK_AS_PATTERN || K(f, target) == NK_OTHER)
					target = pn_named_child(target, 0);
				bind_target(f, target, val, 0);
			}
		}
	}
	exec_block(f, F(f, s, F_BODY));
	fr->in_stream = in_stream;
	if (sync_exit)
		mark_sync(f);
}

static void exec_try(struct flow *f, PNode s)
{
	struct frame *fr = f->cur;
	struct env before = env_copy(&fr->env);
	exec_block(f, F(f, s, F_BODY));
	fr->dead = false;
	struct env after = env_copy(&fr->env);
	uint32_t k = pn_named_child_count(s);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		enum nk kind = K(f, c);
		if (kind == NK_EXCEPT || kind == NK_EXCEPT_GROUP) {
			env_free(&fr->env);
			fr->env = env_copy(&before);
			env_join_f(f, &fr->env, &after);
			uint32_t m = pn_named_child_count(c);
			for (uint32_t j = 0; j < m; j++)
				if (K(f, pn_named_child(c, j)) == NK_BLOCK)
					exec_block(f, pn_named_child(c, j));
			if (!fr->dead)
				env_join_f(f, &after, &fr->env);
			fr->dead = false;
		} else if (kind == NK_ELSE) {
			env_free(&fr->env);
			fr->env = env_copy(&after);
			exec_block(f, F(f, c, F_BODY));
			env_free(&after);
			after = env_copy(&fr->env);
		}
	}
	env_free(&fr->env);
	fr->env = after;
	env_free(&before);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(s, i);
		if (K(f, c) == NK_FINALLY)
			for (uint32_t j = 0; j < pn_named_child_count(c); j++)
				if (K(f, pn_named_child(c, j)) == NK_BLOCK)
					exec_block(f, pn_named_child(c, j));
	}
}

/* Decorators decide what a def is: a numba CUDA kernel (launching is GPU
 * work), a CPU-jitted function, a static method, or wrapped by something
 * gpuopt does not know (its results are unknown). */
static void decorate(struct flow *f, PNode decorated, int fi, int ci)
{
	uint32_t k = pn_named_child_count(decorated);
	for (uint32_t i = 0; i < k; i++) {
		PNode d = pn_named_child(decorated, i);
		if (K(f, d) != NK_DECORATOR)
			continue;
		PNode e = pn_named_child(d, 0);
		PNode head = K(f, e) == NK_CALL ? F(f, e, F_FUNCTION) : e;
		f->silent++;
		struct val v = eval(f, head);
		f->silent--;
		if (fi < 0)
			continue;
		struct fn *fn = &f->fns[fi];
		if (v.kind == V_QUAL && v.qual) {
			if (str_starts_with(v.qual, "numba.cuda") || str_starts_with(v.qual, "cupyx.jit")) {
				fn->kernel = true;
				fn->rawkernel = str_starts_with(v.qual, "cupyx.jit");
				fn->opaque = !strstr(v.qual, "jit");
			} else if (str_starts_with(v.qual, "numba")) {
				fn->jitted = true;
				size_t len;
				const char *t = flow_text(f, e, &len);
				if (memmem(t, len, "cuda", 4))
					fn->kernel = true;
				fn->opaque = true;
			} else if (!library_name(f, v.qual) && strcmp(v.qual, "staticmethod") != 0 &&
				   strcmp(v.qual, "classmethod") != 0) {
				fn->opaque = true;
			}
		} else if (K(f, head) == NK_IDENTIFIER && text_is(f, head, "staticmethod")) {
			fn->staticm = true;
		} else if (K(f, head) == NK_IDENTIFIER &&
			   (text_is(f, head, "classmethod") || text_is(f, head, "property"))) {
			/* transparent; a property runs when its attribute is read */
			fn->prop = text_is(f, head, "property");
		} else if (v.kind == V_FUNCTION || v.kind == V_UNKNOWN) {
			fn->opaque = true;
		}
	}
	(void)ci;
}

static void exec_def(struct flow *f, PNode def, PNode decorated)
{
	int fi = fn_of_def(f, def);
	if (!pn_is_null(decorated))
		decorate(f, decorated, fi, -1);
	if (fi >= 0 && f->fns[fi].cls < 0)
		flow_bind(f, f->fns[fi].name, (struct val){.kind = V_FUNCTION, .ref = fi, .ref2 = -1});
}

static void exec_class(struct flow *f, PNode def, PNode decorated)
{
	(void)decorated;
	int ci = cls_of_def(f, def);
	if (ci < 0)
		return;
	struct cls *cl = &f->cls[ci];
	PNode sup = F(f, def, F_SUPERCLASSES);
	if (!pn_is_null(sup) && pn_named_child_count(sup) > 0) {
		PNode b = pn_named_child(sup, 0);
		f->silent++;
		struct val v = eval(f, b);
		f->silent--;
		if (v.kind == V_CLASS && v.ref >= 0 && v.ref != ci)
			cl->base = v.ref;
		else if (v.kind == V_QUAL)
			cl->base_qual = v.qual;
	}
	flow_bind(f, cl->name, (struct val){.kind = V_CLASS, .ref = ci, .ref2 = -1});
	/* the class body: its methods get their decorators; attributes are skipped */
	PNode body = F(f, def, F_BODY);
	uint32_t k = pn_named_child_count(body);
	for (uint32_t i = 0; i < k; i++) {
		PNode c = pn_named_child(body, i);
		if (K(f, c) == NK_DECORATED_DEF) {
			PNode d = F(f, c, F_DEFINITION);
			if (K(f, d) == NK_FUNCTION_DEF)
				decorate(f, c, fn_of_def(f, d), ci);
		}
	}
}

/* A list (a V_TUPLE) that grows by a device value: a list of device
 * values (one element, as element_of reads it). */
static struct val list_grown(struct flow *f, struct val list, struct val el)
{
	if (!val_on_device(&el))
		return list;
	struct val j = list.n ? join(f, element_of(f, list), el) : el;
	return elems_val(f, j, 0);
}

/* xs.append(v), xs.extend([v, ...]), xs.insert(i, v) on a list bound to a
 * name: what the list holds from then on. */
static void list_growth(struct flow *f, PNode call)
{
	PNode callee = F(f, call, F_FUNCTION);
	if (K(f, callee) != NK_ATTRIBUTE || K(f, F(f, callee, F_OBJECT)) != NK_IDENTIFIER)
		return;
	PNode obj = F(f, callee, F_OBJECT), attr = F(f, callee, F_ATTRIBUTE), argl = F(f, call, F_ARGUMENTS);
	bool app = text_is(f, attr, "append"), ext = text_is(f, attr, "extend"), ins = text_is(f, attr, "insert");
	if (!(app || ext || ins) || pn_is_null(argl))
		return;
	struct val list = lookup(f, node_name(f, obj));
	uint32_t want = ins ? 1 : 0;
	if (list.kind != V_TUPLE || pn_named_child_count(argl) != want + 1)
		return;
	PNode arg = pn_named_child(argl, want);
	if (K(f, arg) == NK_KEYWORD_ARGUMENT || K(f, arg) == NK_LIST_SPLAT)
		return;
	struct val v = flow_peek(f, arg);
	bind_target(f, obj, list_grown(f, list, ext ? element_of(f, v) : v), 0);
}

static void exec_stmt(struct flow *f, PNode s)
{
	struct frame *fr = f->cur;
	if (fr->dead || f->budget <= 0)
		return;
	switch (K(f, s)) {
	case NK_EXPR_STMT: {
		uint32_t k = pn_named_child_count(s);
		for (uint32_t i = 0; i < k; i++) {
			PNode c = pn_named_child(s, i);
			enum nk kind = K(f, c);
			if (kind == NK_ASSIGNMENT) {
				PNode right = F(f, c, F_RIGHT);
				struct val v = pn_is_null(right) ? V(V_UNKNOWN) : eval(f, right);
				bind_target(f, F(f, c, F_LEFT), v, 0);
			} else if (kind == NK_AUG_ASSIGNMENT) {
				PNode left = F(f, c, F_LEFT);
				struct val a = eval(f, left), b = eval(f, F(f, c, F_RIGHT));
				if (a.kind == V_TUPLE && b.kind == V_TUPLE && K(f, left) == NK_IDENTIFIER) {
					/* xs += [v]: a list that grows */
					bind_target(f, left, list_grown(f, a, element_of(f, b)), 0);
					continue;
				}
				struct val r = arith(a, b, line_of(f, c));
				if (val_on_device(&r))
					mark_gpu(f, c);
				if (K(f, left) == NK_IDENTIFIER || K(f, left) == NK_ATTRIBUTE)
					bind_target(f, left, val_on_device(&r) || r.kind != V_UNKNOWN ? r : a, 0);
			} else {
				eval(f, c);
				if (kind == NK_CALL)
					list_growth(f, c);
			}
		}
		return;
	}
	case NK_IF:
		exec_if(f, s);
		return;
	case NK_FOR:
		exec_for(f, s);
		return;
	case NK_WHILE:
		exec_while(f, s);
		return;
	case NK_WITH:
		exec_with(f, s);
		return;
	case NK_TRY:
		exec_try(f, s);
		return;
	case NK_FUNCTION_DEF:
		exec_def(f, s, PN_NULL);
		return;
	case NK_CLASS_DEF:
		exec_class(f, s, PN_NULL);
		return;
	case NK_DECORATED_DEF: {
		PNode d = F(f, s, F_DEFINITION);
		if (K(f, d) == NK_FUNCTION_DEF)
			exec_def(f, d, s);
		else if (K(f, d) == NK_CLASS_DEF)
			exec_class(f, d, s);
		return;
	}
	case NK_RETURN: {
		PNode v = pn_named_child(s, 0);
		struct val r = pn_is_null(v) ? V(V_NONE) : eval(f, v);
		fr->ret = fr->has_ret ? join(f, fr->ret, r) : r;
		fr->has_ret = true;
		fr->ret_pending |= fr->ts.pending;
		fr->dead = true;
		return;
	}
	case NK_RAISE:
	case NK_BREAK:
	case NK_CONTINUE:
		if (K(f, s) == NK_RAISE)
			for (uint32_t i = 0; i < pn_named_child_count(s); i++)
				eval(f, pn_named_child(s, i));
		fr->dead = true;
		return;
	case NK_IMPORT:
		exec_import(f, s);
		return;
	case NK_IMPORT_FROM:
		exec_import_from(f, s);
		return;
	case NK_GLOBAL:
	case NK_NONLOCAL:
		for (uint32_t i = 0; i < pn_named_child_count(s) && fr->nglobals < 16; i++)
			fr->globals[fr->nglobals++] = node_name(f, pn_named_child(s, i));
		return;
	case NK_ASSERT:
		if (pn_named_child_count(s) > 0)
			eval_test(f, pn_named_child(s, 0));
		for (uint32_t i = 1; i < pn_named_child_count(s); i++)
			eval(f, pn_named_child(s, i));
		return;
	case NK_DELETE:
	case NK_FUTURE_IMPORT:
	case NK_COMMENT:
		return;
	case NK_BLOCK:
		exec_block(f, s);
		return;
	default: {
		uint32_t k = pn_named_child_count(s);
		for (uint32_t i = 0; i < k && i < 64; i++) {
			PNode c = pn_named_child(s, i);
			if (K(f, c) == NK_BLOCK)
				exec_block(f, c);
			else
				eval(f, c);
		}
		return;
	}
	}
}

static void exec_block(struct flow *f, PNode block)
{
	if (f->nest >= FLOW_MAX_NEST)
		return;
	f->nest++;
	uint32_t k = pn_named_child_count(block);
	for (uint32_t i = 0; i < k && !f->cur->dead && f->budget > 0; i++)
		exec_stmt(f, pn_named_child(block, i));
	f->nest--;
}

/* ---- functions ---- */

static uint64_t sig_of(const struct val *args, size_t n, bool hot, bool events)
{
	uint64_t h = hot ? 0x9e37u : 0x51u;
	h = h * 31 + (events ? 7u : 3u);
	for (size_t i = 0; i < n && i < 8; i++) {
		h = h * 1000003u + args[i].kind;
		h = h * 31 + args[i].fam;
		h = h * 31 + (args[i].flags & VF_GPU);
		h = h * 31 + (uint64_t)(args[i].ref + 1);
	}
	return h;
}

static void bind_params(struct flow *f, int fi, const struct val *args, size_t nargs)
{
	const struct fn *fn = &f->fns[fi];
	PNode params = F(f, fn->def, F_PARAMETERS);
	uint32_t k = pn_named_child_count(params);
	size_t pos = 0;
	for (uint32_t i = 0; i < k; i++) {
		PNode p = pn_named_child(params, i);
		enum nk kind = K(f, p);
		PNode name = p;
		PNode def = PN_NULL;
		if (kind == NK_DEFAULT_PARAM || kind == NK_TYPED_DEFAULT_PARAM) {
			name = F(f, p, F_NAME);
			def = F(f, p, F_VALUE);
		} else if (kind == NK_TYPED_PARAM) {
			name = pn_named_child(p, 0);
		} else if (kind == NK_LIST_SPLAT_PATTERN || kind == NK_DICT_SPLAT_PATTERN) {
			flow_bind(f, node_name(f, pn_named_child(p, 0)), V(V_UNKNOWN));
			pos = (size_t)-1 / 2;
			continue;
		}
		if (K(f, name) != NK_IDENTIFIER)
			continue;
		struct val v = V(V_UNKNOWN);
		if (pos < nargs)
			v = args[pos];
		else if (!pn_is_null(def) && K(f, def) != NK_NONE) {
			f->silent++;
			v = eval(f, def);
			f->silent--;
		}
		pos++;
		flow_bind(f, node_name(f, name), v);
	}
}

/* Is the body only a stub to be written (a docstring, then raise
 * NotImplementedError)? What it will do is unknown, so a call to it may
 * well synchronize: nothing is concluded from it. */
static bool stub_body(struct flow *f, PNode body)
{
	uint32_t n = pn_named_child_count(body);
	for (uint32_t i = 0; i < n; i++) {
		PNode st = pn_named_child(body, i);
		enum nk k = K(f, st);
		if (k == NK_COMMENT || (k == NK_EXPR_STMT && K(f, pn_named_child(st, 0)) == NK_STRING))
			continue;
		if (k != NK_RAISE || i + 1 != n)
			return false;
		size_t len;
		const char *t = flow_text(f, st, &len);
		return memmem(t, len, "NotImplementedError", 19) != NULL;
	}
	return false;
}

static struct val call_fn(struct flow *f, int fi, struct val self, const struct val *args, size_t nargs,
			  PNode callsite)
{
	struct fn *fn = &f->fns[fi];
	if (fn->rawkernel) /* device code: none of the host rules apply inside */
		return V(V_UNKNOWN);
	struct frame *caller = f->cur;
	bool hot = caller->hot || (caller->depth > 0 && !caller->throttled);
	if (caller->throttled)
		hot = false;
	bool events = !f->silent;
	uint64_t key = sig_of(args, nargs, hot, events) ^ ((uint64_t)(self.ref + 2) << 48);
	for (int i = 0; i < fn->nmemo; i++)
		if (fn->memo[i].key == key) {
			if (fn->memo[i].did_gpu)
				mark_gpu(f, callsite);
			if ((fn->memo[i].did_gpu || fn->memo[i].synced) && !fn->memo[i].pending)
				mark_sync(f);
			return fn->memo[i].ret;
		}
	if (fn->active || f->calls >= FLOW_MAX_CALLS || f->budget <= 0 || fn->jitted)
		return V(V_UNKNOWN);
	if (!fn->lambda && stub_body(f, F(f, fn->def, F_BODY))) {
		mark_sync(f);
		return V(V_UNKNOWN);
	}
	struct frame fr = {0};
	fr.up = caller;
	fr.fn = fi;
	fr.self = self;
	fr.hot = hot;
	if (hot) {
		if (caller->depth > 0) {
			fr.hot_line = caller->loop_line;
			fr.hot_cell = caller->loop_cell;
			fr.via = NULL;
		} else {
			fr.hot_line = caller->hot_line;
			fr.hot_cell = caller->hot_cell;
			fr.via = caller->via;
		}
	}
	fn->active = true;
	f->calls++;
	f->cur = &fr;
	bind_params(f, fi, args, nargs);
	PNode body = F(f, fn->def, F_BODY);
	struct val ret;
	if (fn->lambda) {
		ret = eval(f, body);
	} else {
		exec_block(f, body);
		ret = fr.has_ret ? fr.ret : V(V_NONE);
		if (fr.has_ret && !fr.dead)
			ret = join(f, ret, V(V_NONE));
	}
	bool pending = fr.ts.pending || fr.ret_pending;
	bool did_gpu = fr.did_gpu, synced = fr.did_sync;
	f->cur = caller;
	f->calls--;
	fn->active = false;
	env_free(&fr.env);
	if (events) {
		fn->ran_events = true;
		fn->ran_hot |= hot;
	}
	fn->did_gpu |= did_gpu;
	fn->pending = fn->have_ret ? (fn->pending || pending) : pending;
	fn->ret = fn->have_ret ? join(f, fn->ret, ret) : ret;
	fn->have_ret = true;
	struct memo *m = fn->nmemo < FLOW_MEMO ? &fn->memo[fn->nmemo++] : &fn->memo[FLOW_MEMO - 1];
	*m = (struct memo){key, ret, did_gpu, pending, synced};
	if (did_gpu)
		mark_gpu(f, callsite);
	if ((did_gpu || synced) && !pending)
		mark_sync(f); /* it waited for the GPU before returning */
	return ret;
}

/* Runs the functions no call site ran (or, when the project says another
 * module calls them from a loop, not hot): with unknown parameters, or the
 * project's. Methods get an instance of their class as self. __init__
 * first, so that the other methods see the attributes it sets. */
static void run_standalone(struct flow *f)
{
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < f->nfns; i++) {
			struct fn *fn = &f->fns[i];
			bool init = !strcmp(fn->name, "__init__");
			if ((round == 0) != init || fn->lambda)
				continue;
			const struct project_func *pf = f->o->project ? project_func(f->o->project, fn->qual) : NULL;
			bool hot = pf && pf->hot && !fn->ran_hot;
			if (fn->ran_events && !hot)
				continue;
			struct val args[FLOW_SUM_ARGS + 1];
			size_t n = 0;
			struct val self = V(V_UNKNOWN);
			if (fn->cls >= 0 && !fn->staticm) {
				self = V(V_INSTANCE);
				self.ref = fn->cls;
				args[n++] = self;
			}
			if (pf)
				for (uint8_t k = (uint8_t)(fn->cls >= 0 && !fn->staticm); k < pf->nargs && n < FLOW_SUM_ARGS; k++) {
					args[n] = pf->args[k];
					args[n].ref = args[n].ref2 = -1;
					if (args[n].kind == V_TUPLE || args[n].kind == V_FUNCTION || args[n].kind == V_CLASS ||
					    args[n].kind == V_QUAL || args[n].kind == V_INSTANCE)
						args[n] = V(V_UNKNOWN);
					n++;
				}
			struct frame *mod = f->modframe;
			bool hot0 = mod->hot;
			uint32_t hl = mod->hot_line, hc = mod->hot_cell;
			const char *via = mod->via;
			if (hot) {
				mod->hot = true;
				mod->hot_line = pf->hot_line;
				mod->hot_cell = pf->hot_cell;
				mod->via = pf->hot_path && strcmp(pf->hot_path, f->src->path) != 0 ? pf->hot_path : NULL;
			}
			call_fn(f, (int)i, self, args, n, fn->def);
			mod->hot = hot0;
			mod->hot_line = hl;
			mod->hot_cell = hc;
			mod->via = via;
		}
}

/* ---- the summary ---- */

static void summarize(struct flow *f)
{
	struct flow_summary *s = f->sum;
	if (!s)
		return;
	s->funcs = xcalloc(f->nfns + f->ncls + 1, sizeof *s->funcs);
	for (size_t i = 0; i < f->nfns; i++) {
		const struct fn *fn = &f->fns[i];
		if (fn->lambda)
			continue;
		struct flow_func *o = &s->funcs[s->nfuncs++];
		o->qual = fn->qual;
		o->name = fn->name;
		o->ret = fn->opaque ? V(V_UNKNOWN) : fn->ret;
		o->ret_parts = o->ret.kind == V_TUPLE;
		if (o->ret.kind == V_TUPLE || o->ret.kind == V_FUNCTION || o->ret.kind == V_CLASS)
			o->ret = V(V_UNKNOWN);
		if (o->ret.kind == V_INSTANCE && o->ret.ref >= 0) {
			o->ret.qual = f->cls[o->ret.ref].qual;
			o->ret.ref = -1;
		}
		o->does_gpu = fn->did_gpu;
		o->ends_pending = fn->pending;
		o->is_method = fn->cls >= 0;
	}
	for (size_t i = 0; i < f->ncls; i++) {
		struct flow_func *o = &s->funcs[s->nfuncs++];
		o->qual = f->cls[i].qual;
		o->name = f->cls[i].name;
		o->ret = V(V_UNKNOWN);
		o->is_class = true;
	}
	/* the strings must outlive the pool: intern them into the summary's own */
	for (size_t i = 0; i < s->nfuncs; i++) {
		s->funcs[i].qual = xstrdup(s->funcs[i].qual);
		s->funcs[i].name = xstrdup(s->funcs[i].name);
		s->funcs[i].ret.qual = s->funcs[i].ret.qual ? xstrdup(s->funcs[i].ret.qual) : NULL;
	}
	for (size_t i = 0; i < s->ncalls; i++) {
		s->calls[i].caller = s->calls[i].caller ? xstrdup(s->calls[i].caller) : NULL;
		s->calls[i].callee = xstrdup(s->calls[i].callee);
		for (uint8_t k = 0; k < s->calls[i].nargs; k++) {
			struct val *v = &s->calls[i].args[k];
			v->ref = v->ref2 = -1;
			if (v->kind == V_TUPLE || v->kind == V_FUNCTION || v->kind == V_CLASS || v->kind == V_INSTANCE ||
			    v->kind == V_QUAL)
				*v = V(V_UNKNOWN);
			v->qual = NULL;
		}
	}
}

void flow_summary_free(struct flow_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfuncs; i++) {
		free((char *)s->funcs[i].qual);
		free((char *)s->funcs[i].name);
		free((char *)s->funcs[i].ret.qual);
	}
	for (size_t i = 0; i < s->ncalls; i++) {
		free((char *)s->calls[i].caller);
		free((char *)s->calls[i].callee);
	}
	free(s->funcs);
	free(s->calls);
	memset(s, 0, sizeof *s);
}

void flow_run(const struct flow_options *o, PNode root)
{
	struct flow f = {0};
	f.o = o;
	f.ni = o->ni;
	f.src = o->src;
	f.text = o->src->text;
	f.budget = FLOW_BUDGET;
	f.sum = o->summary;
	f.module = o->module ? internz(&f, o->module) : NULL;
	collect(&f, root);
	struct frame mod = {0};
	mod.fn = -1;
	f.modframe = &mod;
	f.cur = &mod;
	exec_block(&f, root);
	mod.dead = false;
	run_standalone(&f);
	summarize(&f);
	if (o->stop)
		*o->stop = f.stop;
	else
		free(f.stop.func);
	env_free(&mod.env);
	for (size_t i = 0; i < f.ncls; i++)
		env_free(&f.cls[i].attrs);
	free(f.cls);
	free(f.fns);
	free(f.tup);
	symtab_free(&f.pool);
}
