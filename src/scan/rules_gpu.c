/* rules_gpu: the GPU anti-pattern rules, as passes over the flow model
 * (flow.h), for code that already runs on the GPU:
 *   GPU601 roundtrip-in-loop      a device->host copy or implicit sync per iteration
 *   GPU602 transfer-in-loop       a host->device copy of the same data per iteration
 *   GPU603 unsynchronized-timing  a clock read after GPU work, no sync between
 *   GPU604 mixed-host-device      a CPU library function given a device array that
 *                                 it copies implicitly or refuses (a NumPy function
 *                                 that CuPy implements dispatches to it: no finding)
 * (GPU605, element-wise Python loops, applies to CPU code as well: it is a
 * walker rule, rules_loops.c.) The model says what happens where (the event and its place); these passes
 * decide what is worth a finding, rank it and word it. */
#include "rules_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "findings.h"

static const char *fam_library(unsigned fam)
{
	return fam == FAM_TORCH ? "torch" : fam == FAM_NUMBA ? "numba" : fam == FAM_JAX ? "jax" : "cupy";
}

static const char *fam_display(unsigned fam)
{
	return fam == FAM_TORCH ? "PyTorch" : fam == FAM_NUMBA ? "Numba CUDA" : fam == FAM_JAX ? "JAX" : "CuPy";
}

static char *snippet(struct flow *f, PNode n)
{
	size_t len;
	const char *s = flow_text(f, n, &len);
	return finding_snippet(s, len);
}

/* rank and reason from the place; false when it is not on a hot path */
static bool hot_rank(const struct flow_place *p, const struct source *src, uint32_t cell, uint32_t *rank,
		     char **reason)
{
	if (p->depth) {
		*rank = 1 + p->depth;
		*reason = p->depth > 1 ? xasprintf("in a nested loop (%u deep) at line %u", p->depth, p->loop_line)
				       : xasprintf("in a loop at line %u", p->loop_line);
		return true;
	}
	if (p->hot_func && p->loop_line) {
		*rank = 1;
		const char *fn = p->func ? p->func : "this code";
		if (p->via)
			*reason = xasprintf("in %s(), called from a loop in %s at line %u", fn, p->via, p->loop_line);
		else if (src->notebook && p->loop_cell && p->loop_cell != cell)
			*reason = xasprintf("in %s(), called from a loop in cell %u at line %u", fn, p->loop_cell, p->loop_line);
		else
			*reason = xasprintf("in %s(), called from a loop at line %u", fn, p->loop_line);
		return true;
	}
	*rank = 0;
	*reason = NULL;
	return false;
}

/* The finding of this rule at this node, if there is one already (a
 * function analysed for several call sites meets the same site again). */
static struct finding *existing(struct gpu_rules *g, PNode at, const struct rule *rule)
{
	for (size_t i = g->first; i < g->out->n; i++) {
		struct finding *x = &g->out->items[i];
		if (x->rule == rule && x->start_byte == pn_start_byte(at) && x->end_byte == pn_end_byte(at))
			return x;
	}
	return NULL;
}

static struct finding *add(struct gpu_rules *g, PNode at, const struct rule *rule, const char *lib,
			   const char *display, const char *symbol, uint32_t rank, char *reason, uint32_t loop_line,
			   bool *fresh)
{
	struct finding *x = existing(g, at, rule);
	*fresh = x == NULL;
	if (x) {
		if (rank > x->rank) {
			x->rank = rank;
			x->loop_line = loop_line;
			free(x->rank_reason);
			x->rank_reason = reason;
		} else {
			free(reason);
		}
		return x;
	}
	x = finding_add(g->out, g->src, at, rule, lib, display, NULL, symbol, g->keep_text);
	x->rank = rank;
	x->rank_reason = reason;
	x->loop_line = loop_line;
	return x;
}

static void roundtrip(struct flow *f, struct gpu_rules *g, const struct flow_event *ev)
{
	const struct flow_place *p = &ev->place;
	if (!g->rule[0] || p->throttled || ev->async || ev->interface || ev->retested)
		return;
	uint32_t cell, rank;
	char *reason;
	flow_user_line(f, ev->at, &cell);
	if (!hot_rank(p, g->src, cell, &rank, &reason))
		return;
	bool fresh;
	struct finding *x = add(g, ev->at, g->rule[0], fam_library(ev->value.fam), fam_display(ev->value.fam), ev->what,
				rank, reason, p->loop_line, &fresh);
	if (!fresh)
		return;
	char *code = snippet(f, ev->at);
	x->message = xasprintf("%s copies a device value to the host and waits for the GPU to finish: "
			       "on a hot path this serializes the GPU with Python (`%s`)", ev->what, code);
	x->fix = xstrdup("keep the value on the device inside the loop (device accumulators; test convergence "
			 "every N iterations with one scalar copy) and copy results to the host once, after the loop");
	free(code);
}

/* `h = cp.asnumpy(x)` ... `x = cp.asarray(h)` in one loop (GPU604). */
static void back_and_forth(struct flow *f, struct gpu_rules *g, const struct flow_event *ev)
{
	const struct flow_place *p = &ev->place;
	uint32_t cell, rank;
	char *reason;
	flow_user_line(f, ev->at, &cell);
	hot_rank(p, g->src, cell, &rank, &reason);
	bool fresh;
	struct finding *x = add(g, ev->at, g->rule[3], "cupy", "CuPy", ev->what, rank, reason, p->loop_line, &fresh);
	if (!fresh)
		return;
	size_t len;
	const char *s = flow_text(f, ev->node, &len);
	x->message = xasprintf("`%.*s` is copied to the host at line %u and back to the GPU here, in every "
			       "iteration of the loop at line %u", (int)len, s, ev->back_line, p->loop_line);
	x->fix = xstrdup("keep the data on the device for the whole loop: do the host-side step with the GPU "
			 "library, or move it after the loop");
}

static void transfer(struct flow *f, struct gpu_rules *g, const struct flow_event *ev)
{
	const struct flow_place *p = &ev->place;
	if (ev->back_line && g->rule[3] && p->depth && !p->throttled) {
		back_and_forth(f, g, ev);
		return;
	}
	if (!g->rule[1] || !p->depth || p->throttled || !ev->data_invariant || pn_is_null(ev->node))
		return;
	uint32_t cell, rank;
	char *reason;
	flow_user_line(f, ev->at, &cell);
	hot_rank(p, g->src, cell, &rank, &reason);
	bool torch = str_starts_with(ev->what, "torch"), numba = str_starts_with(ev->what, "numba");
	bool fresh;
	struct finding *x = add(g, ev->at, g->rule[1], torch ? "torch" : numba ? "numba" : "cupy",
				torch ? "PyTorch" : numba ? "Numba CUDA" : "CuPy", ev->what, rank, reason, p->loop_line,
				&fresh);
	if (!fresh)
		return;
	char *code = snippet(f, ev->node);
	x->message = xasprintf("%s copies `%s` from the host to the GPU in every iteration of the loop at "
			       "line %u, but it does not change inside the loop", ev->what, code, p->loop_line);
	x->fix = xasprintf("move the transfer of `%s` before the loop and reuse the device array", code);
	free(code);
}

static void clock_read(struct flow *f, struct gpu_rules *g, const struct flow_event *ev)
{
	(void)f;
	if (!g->rule[2])
		return;
	bool fresh;
	struct finding *x = add(g, ev->at, g->rule[2], "cupy", "CuPy", ev->what, 0, NULL, 0, &fresh);
	if (!fresh)
		return;
	if (ev->kind == FE_TIMEIT) {
		x->message = xasprintf("%s times GPU work that is not waited for: each repeat measures the "
				       "launch, not the work", ev->what);
		x->fix = xstrdup("time GPU code with cupyx.profiler.benchmark (or torch.utils.benchmark), which "
				 "synchronizes, or add a synchronize at the end of the timed callable");
		return;
	}
	x->message = xasprintf("%s is read after GPU work (line %u) with no synchronize in between: GPU "
			       "calls return before the work is done, so this times the launch, not the work",
			       ev->what, ev->gpu_line);
	x->fix = xstrdup("synchronize before the clock read (cupy.cuda.Device().synchronize(), "
			 "torch.cuda.synchronize()), or time with cupyx.profiler.benchmark or CUDA events, "
			 "after a warm-up and over repeats");
}

/* What a CPU library function does with a device array, or NULL when it
 * hands it to the GPU library itself (NumPy's __array_function__ /
 * __array_ufunc__ protocol, which CuPy implements). */
static char *cpu_call_outcome(const struct flow_event *ev)
{
	const char *name = ev->what;
	const struct kb_entry *e = ev->entry;
	bool numpy = ev->lib && ev->lib->id && !strcmp(ev->lib->id, "numpy");
	switch (ev->value.fam) {
	case FAM_TORCH:
		return xasprintf("%s is a CPU function and a CUDA tensor cannot become a NumPy array: it raises "
				 "TypeError (call .cpu() first, or use the torch function)", name);
	case FAM_NUMBA:
		return xasprintf("%s is a CPU function: given a numba device array it copies the whole array to "
				 "the host through __array__ (an implicit device->host copy)", name);
	case FAM_CUPY:
		if (numpy && e && !e->gpu)
			return xasprintf("%s has no CuPy implementation, so NumPy's dispatch cannot hand it to CuPy: "
					 "it raises TypeError on a CuPy array (CuPy never converts implicitly)", name);
		if (numpy && e && e->flow && !strcmp(e->flow, "converts"))
			return xasprintf("%s converts its argument to a NumPy array, which CuPy refuses: it raises "
					 "TypeError (copy explicitly with cupy.asnumpy, or .get())", name);
		if (numpy && (str_starts_with(name, "numpy.random.") || str_starts_with(name, "numpy.testing.")))
			return xasprintf("%s does not dispatch to CuPy: it converts its argument, which CuPy refuses "
					 "with TypeError", name);
		if (numpy)
			return NULL; /* dispatched to CuPy: stays on the GPU */
		return xasprintf("%s is a CPU function: given a CuPy array it raises TypeError (CuPy never converts "
				 "implicitly)", name);
	default:
		return xasprintf("%s is a CPU function, given a device array", name);
	}
}

static void mixed(struct flow *f, struct gpu_rules *g, const struct flow_event *ev)
{
	if (!g->rule[3])
		return;
	char *why = cpu_call_outcome(ev);
	if (!why) {
		/* NumPy hands it to CuPy: already GPU code, not a port */
		g->drop = xrealloc(g->drop, (g->ndrop + 1) * sizeof *g->drop);
		g->drop[g->ndrop++] = pn_start_byte(ev->node);
		return;
	}
	bool fresh;
	struct finding *x = add(g, ev->at, g->rule[3], ev->lib->id, ev->lib->display, ev->what, 0, NULL, 0, &fresh);
	if (!fresh) {
		free(why);
		return;
	}
	char *code = snippet(f, ev->at);
	x->message = xasprintf(ev->elems ? "%s; `%s` holds device values, each converted alone" : "%s; `%s` is a device array",
			       why, code);
	if (ev->lib->converts_device && !ev->lib->rule)
		x->fix = xasprintf("copy the data to the host once, explicitly, before %s (torch.stack(values).cpu(), "
				   "cupy.asnumpy(x)), or keep host floats as you go (loss.item() where it is logged "
				   "anyway)", ev->what);
	else
		x->fix = xasprintf("use the GPU library's version of %s on the device array, or copy it to the host "
				   "once, explicitly, where the CPU part starts", ev->what);
	free(code);
	free(why);
	/* this call site is reported as this, not as a port */
	g->drop = xrealloc(g->drop, (g->ndrop + 1) * sizeof *g->drop);
	g->drop[g->ndrop++] = pn_start_byte(ev->node);
}

static void on_event(struct flow *f, const struct flow_event *ev, void *ctx)
{
	struct gpu_rules *g = ctx;
	switch (ev->kind) {
	case FE_D2H:
	case FE_TRUTH:
		roundtrip(f, g, ev);
		break;
	case FE_H2D:
		transfer(f, g, ev);
		break;
	case FE_CLOCK:
	case FE_TIMEIT:
		clock_read(f, g, ev);
		break;
	case FE_CPU_CALL:
		mixed(f, g, ev);
		break;
	case FE_FOR:
		break; /* GPU605 is the walker's (rules_loops.c): it applies to CPU code too */
	}
}

const struct flow_pass gpu_rule_passes[] = {
	{"gpu-anti-patterns", on_event},
};
const size_t gpu_rule_npasses = sizeof gpu_rule_passes / sizeof *gpu_rule_passes;

void gpu_rules_init(struct gpu_rules *g, const struct kb *kb, struct scan_result *out, const struct source *src,
		    bool keep_text)
{
	memset(g, 0, sizeof *g);
	g->out = out;
	g->src = src;
	g->keep_text = keep_text;
	g->first = out->n;
	for (int i = 0; i < 5; i++) {
		char id[8];
		snprintf(id, sizeof id, "GPU60%d", i + 1);
		g->rule[i] = kb_rule(kb, id);
	}
}

void gpu_rules_free(struct gpu_rules *g)
{
	free(g->drop);
	g->drop = NULL;
	g->ndrop = 0;
}
