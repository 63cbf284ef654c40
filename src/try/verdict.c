/* verdict: see verdict.h. */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

static double threshold(json_t *t, const char *key, double dflt)
{
	json_t *v = json_object_get(t, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static void fmt_time(char *out, size_t n, double s)
{
	if (s >= 1)
		snprintf(out, n, "%.2f s", s);
	else if (s >= 1e-3)
		snprintf(out, n, "%.1f ms", s * 1e3);
	else
		snprintf(out, n, "%.0f us", s * 1e6);
}

/* The factor a trace rule names (try.json's verdict.factors), else the algorithm. */
static const char *rule_factor(json_t *t, const char *rule)
{
	const char *f = json_string_value(json_object_get(json_object_get(t, "factors"), rule ? rule : ""));
	return f ? f : "the algorithm";
}

/* "the trace names RULE at LINE costing N% of WHAT" */
static void name_waste(struct buf *why, const struct waste *x, double share, const char *what)
{
	buf_printf(why, "the trace names %s%s%s costing %.0f%% of %s", x->rule, x->where ? " at " : "",
		   x->where ? x->where : "", 100 * share, what);
}

/* What limits a candidate that is not faster (or slower), with its evidence. */
static void limiting_factor(const struct verdict_in *in, json_t *t, char **factor, struct buf *why)
{
	double small = threshold(t, "small_baseline_s", 1.0);
	double fb_share = threshold(t, "fallback_share", 0.25);
	double waste_share = threshold(t, "waste_share", 0.10);
	size_t observed = in->fallbacks + in->gpu_calls;
	if (in->fallbacks && observed && (double)in->fallbacks / (double)observed >= fb_share) {
		*factor = xstrdup("unsupported-op fallback");
		buf_printf(why, "%zu of %zu observed calls fell back to the CPU", in->fallbacks, observed);
		if (in->fallback_top)
			buf_printf(why, " (most often %s)", in->fallback_top);
		return;
	}
	if (in->gpu && in->traced && in->gpu_window_s > 0) {
		char w[32], g[32], b[32], busy[32];
		fmt_time(w, sizeof w, in->trace_wall_s);
		fmt_time(g, sizeof g, in->gpu_window_s);
		fmt_time(b, sizeof b, in->base_median_s);
		fmt_time(busy, sizeof busy, in->gpu_busy_s);
		/* Waste in the GPU phase limits the port when it is a large part of
		 * the phase and, in seconds, a fair part of the baseline's time:
		 * fixing it changes the comparison (set5's diffusion_pool_free: 0.65 s
		 * of allocations in a 1.24 s phase against a 1.66 s baseline had
		 * been called problem size). Otherwise problem size: what lies
		 * outside the GPU phase (start-up: imports, the CUDA context,
		 * library loads, and the host's own work) alone takes the
		 * baseline's time, or the GPU phase is shorter than the baseline. */
		bool waste = in->nwaste && in->waste[0].phase_share >= waste_share &&
			     in->waste[0].phase_share * in->gpu_window_s >= waste_share * in->base_median_s;
		double outside = in->trace_wall_s - in->gpu_window_s;
		if (!waste && in->base_median_s > 0 &&
		    (outside >= in->base_median_s || in->gpu_window_s < in->base_median_s)) {
			*factor = xstrdup("problem size");
			if (outside >= in->base_median_s) {
				char o[32];
				fmt_time(o, sizeof o, outside);
				buf_printf(why, "%s of its %s is start-up (imports, the CUDA context, library loads) "
					   "and host work outside its %s GPU phase, as long as the baseline's %s "
					   "alone: no change to the GPU work can win back at this size; try a larger "
					   "input, or keep this on the CPU", o, w, g, b);
			} else {
				buf_printf(why, "its GPU work takes %s, less than the baseline's %s, but the rest of its "
					   "%s is start-up (imports, the CUDA context, library loads) and host work, "
					   "which this problem is too small to win back; try a larger input, or keep "
					   "this on the CPU", g, b, w);
			}
			return;
		}
		/* the time is inside the GPU phase: what the trace names there */
		if (waste) {
			const struct waste *x = &in->waste[0];
			*factor = xstrdup(rule_factor(t, x->rule));
			char *what = xasprintf("its %s GPU phase (the GPU busy %s of it)", g, busy);
			name_waste(why, x, x->phase_share, what);
			free(what);
			if (x->fix)
				buf_printf(why, "; %s", x->fix);
			return;
		}
		double idle = 1 - in->gpu_busy_s / in->gpu_window_s;
		if (idle >= threshold(t, "host_bound_idle_share", 0.5)) {
			*factor = xstrdup("launch granularity");
			buf_printf(why, "the GPU sat idle %.0f%% of its %s GPU phase (busy %s): the host drives it one "
				   "small step at a time", 100 * idle, g, busy);
			if (in->host_line)
				buf_printf(why, ", most of all from %s", in->host_line);
			buf_puts(why, "; give each call more work (batch, fuse, vectorize the loop), or capture the "
				      "loop in a CUDA graph");
			return;
		}
		*factor = xstrdup("the algorithm");
		buf_printf(why, "the GPU was busy %s of its %s GPU phase and no transfer, fallback or launch cost "
			   "explains the time: the computation itself does not gain on this device", busy, g);
		return;
	}
	if (in->gpu && !in->traced && in->base_median_s > 0 && in->base_median_s < small) {
		char b[32];
		fmt_time(b, sizeof b, in->base_median_s);
		*factor = xstrdup("problem size");
		buf_printf(why, "the whole baseline takes %s: the GPU's fixed costs (CUDA context, library "
			   "load, first copies) cannot be won back at this size; try a larger input, or keep "
			   "this on the CPU", b);
		return;
	}
	*factor = xstrdup("the algorithm");
	bool slower = in->bench && strcmp(in->bench, "slower") == 0;
	if (in->gpu)
		buf_puts(why, "no transfer, fallback or launch cost explains it: the computation itself does not "
			      "gain on this device");
	else
		buf_puts(why, slower ? "the computation itself takes longer this way"
				     : "the computation itself takes as long this way");
}

void verdict_decide(const struct verdict_in *in, json_t *t, struct verdict_out *out)
{
	memset(out, 0, sizeof *out);
	struct buf why = {0};
	if (!in->available) {
		out->verdict = TRY_UNAVAILABLE;
		buf_printf(&why, "it applies to this code but is not installed for this Python%s%s",
			   in->install ? "; install it with: " : "", in->install ? in->install : "");
		out->reason = buf_steal(&why);
		return;
	}
	if (!in->ran) {
		out->verdict = TRY_REJECT;
		out->factor = xstrdup(in->crash_no_gpu ? "no usable GPU" : "crash");
		buf_printf(&why, "it %s", in->crash ? in->crash : "failed");
		if (in->crash_no_gpu)
			buf_puts(&why, " — it needs an NVIDIA GPU and driver, which this machine does not have");
		out->reason = buf_steal(&why);
		return;
	}
	if (in->verified != 0) {
		out->verdict = TRY_REJECT;
		out->factor = xstrdup(in->verified == 1 ? "wrong output" : "outputs not comparable");
		buf_printf(&why, "its outputs %s the reference: %s", in->verified == 1 ? "differ from" :
			   "cannot be compared with", in->mismatch ? in->mismatch : "see the verification");
		out->reason = buf_steal(&why);
		return;
	}
	if (in->gpu && in->no_gpu_here) {
		/* it ran, so on the CPU: its time says nothing of the GPU path */
		out->verdict = TRY_REJECT;
		out->factor = xstrdup("no usable GPU");
		size_t observed = in->fallbacks + in->gpu_calls;
		buf_puts(&why, "it computes the same outputs, but on the CPU: this machine has no usable NVIDIA GPU");
		if (observed)
			buf_printf(&why, " (%zu of %zu observed calls fell back%s%s)", in->fallbacks, observed,
				   in->fallback_top ? ", most often " : "", in->fallback_top ? in->fallback_top : "");
		buf_puts(&why, "; try it on a machine with one (`gpuopt doctor` says what is missing)");
		out->reason = buf_steal(&why);
		return;
	}
	if (!in->benched || !in->bench) {
		out->verdict = TRY_REVISE;
		out->reason = xstrdup("it verified, but was not benchmarked");
		return;
	}
	char speed[96];
	snprintf(speed, sizeof speed, "speedup %.3gx (95%% CI %.3g-%.3g)", in->speedup, in->lo, in->hi);
	if (strncmp(in->bench, "cannot conclude", 15) == 0) {
		out->verdict = TRY_REVISE;
		out->factor = xstrdup("measurement");
		buf_printf(&why, "it verified, but the benchmark %s", in->bench);
		out->reason = buf_steal(&why);
		return;
	}
	if (strcmp(in->bench, "slower") == 0) {
		out->verdict = TRY_REJECT;
		limiting_factor(in, t, &out->factor, &why);
		char *ev = buf_steal(&why);
		buf_printf(&why, "slower than the baseline, %s: %s", speed, ev);
		free(ev);
		out->reason = buf_steal(&why);
		return;
	}
	if (strcmp(in->bench, "faster") != 0) {
		out->verdict = TRY_REVISE;
		limiting_factor(in, t, &out->factor, &why);
		char *ev = buf_steal(&why);
		buf_printf(&why, "same outputs but no faster beyond %.0f%% (%s): %s", 100 * in->min_effect, speed, ev);
		free(ev);
		out->reason = buf_steal(&why);
		return;
	}
	/* faster: keep, unless named waste costs too much of the end-to-end
	 * time (the user's own: an accelerator's waste is its library's) */
	double waste_share = threshold(t, "waste_share", 0.10);
	size_t observed = in->fallbacks + in->gpu_calls;
	const struct waste *top = in->nwaste ? &in->waste[0] : NULL; /* most costly first */
	if (top && top->share >= waste_share && !in->accel) {
		out->verdict = TRY_REVISE;
		out->factor = xstrdup(rule_factor(t, top->rule));
		buf_printf(&why, "faster, %s, but ", speed);
		name_waste(&why, top, top->share, "the run");
		if (top->fix)
			buf_printf(&why, "; %s", top->fix);
		out->reason = buf_steal(&why);
		return;
	}
	if (in->fallbacks && observed && (double)in->fallbacks / (double)observed >= threshold(t, "fallback_share", 0.25)) {
		out->verdict = TRY_REVISE;
		out->factor = xstrdup("unsupported-op fallback");
		buf_printf(&why, "faster, %s, but %zu of %zu observed calls still fall back to the CPU%s%s", speed,
			   in->fallbacks, observed, in->fallback_top ? ": most often " : "",
			   in->fallback_top ? in->fallback_top : "");
		out->reason = buf_steal(&why);
		return;
	}
	out->verdict = TRY_KEEP;
	buf_printf(&why, "same outputs and faster, %s, the whole interval above %.3gx", speed, 1 + in->min_effect);
	if (in->fallbacks)
		buf_printf(&why, "; %zu call%s fell back to the CPU", in->fallbacks, in->fallbacks == 1 ? "" : "s");
	if (in->gpu && !in->traced)
		buf_puts(&why, "; not traced (no GPU trace was taken)");
	if (top && top->share >= waste_share && in->accel) {
		buf_puts(&why, "; ");
		name_waste(&why, top, top->share, "the run, inside the accelerated library");
	}
	out->reason = buf_steal(&why);
}
