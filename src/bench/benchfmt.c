/* benchfmt: the renderings of a bench_result (bench.h) — the human report
 * (verdict lines first, then the tables, warnings and the environment), and
 * the JSON, CSV and Markdown exports. Pure functions of the result: nothing
 * here measures, fails or writes files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/version.h"

#define JSON_SCHEMA "gpuopt-bench/1"

const char *bench_role(size_t index)
{
	return index == 0 ? "baseline" : "candidate";
}

static int decimals_for(double v)
{
	if (!(v > 0) || !isfinite(v))
		return 2;
	int d = 2 - (int)floor(log10(v));
	return d < 0 ? 0 : d > 4 ? 4 : d;
}

char *bench_format_seconds(double s)
{
	if (isnan(s))
		return xstrdup("n/a");
	if (s == 0)
		return xstrdup("0 s");
	const char *unit = "s";
	double v = s;
	if (fabs(s) < 1e-3) {
		unit = "µs";
		v = s * 1e6;
	} else if (fabs(s) < 1) {
		unit = "ms";
		v = s * 1e3;
	}
	return xasprintf("%.*f %s", decimals_for(fabs(v)), v, unit);
}

static char *format_kib(double kib)
{
	if (isnan(kib) || kib <= 0)
		return xstrdup("n/a");
	if (kib < 1024)
		return xasprintf("%.0f KiB", kib);
	if (kib < 1024.0 * 1024)
		return xasprintf("%.1f MiB", kib / 1024);
	return xasprintf("%.2f GiB", kib / 1024 / 1024);
}

static char *format_bytes(double b)
{
	return format_kib(b / 1024);
}

/* ---- a small text table ---- */
struct table {
	size_t ncols;
	const char *align; /* 'l' or 'r' per column */
	struct ptrvec cells; /* row-major, owned */
};

static void cell(struct table *t, char *owned)
{
	ptrvec_push(&t->cells, owned);
}

static size_t text_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		w += (*p & 0xC0) != 0x80;
	return w;
}

static void table_print(FILE *out, struct table *t)
{
	size_t *width = xcalloc(t->ncols, sizeof *width);
	for (size_t i = 0; i < t->cells.len; i++) {
		size_t w = text_width(t->cells.items[i]);
		if (w > width[i % t->ncols])
			width[i % t->ncols] = w;
	}
	for (size_t i = 0; i < t->cells.len; i++) {
		size_t col = i % t->ncols;
		const char *s = t->cells.items[i];
		size_t pad = width[col] - text_width(s);
		bool last = col + 1 == t->ncols;
		fputs(col == 0 ? "  " : "  ", out);
		if (t->align[col] == 'r')
			fprintf(out, "%*s%s", (int)pad, "", s);
		else
			fprintf(out, "%s%*s", s, last ? 0 : (int)pad, "");
		if (last)
			fputc('\n', out);
	}
	for (size_t i = 0; i < t->cells.len; i++)
		free(t->cells.items[i]);
	ptrvec_free(&t->cells);
	free(width);
}

/* The name shortened to at most max characters (UTF-8 aware). Owned. */
static char *shorten(const char *name, size_t max)
{
	if (text_width(name) <= max)
		return xstrdup(name);
	struct buf b = {0};
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p & 0xC0) != 0x80 && ++w > max - 1)
			break;
		buf_putc(&b, (char)*p);
	}
	buf_puts(&b, "…");
	return buf_steal(&b);
}

/* ---- the verdict sentence ---- */
static char *params_label(const struct bench_settings *s, char **values)
{
	if (!values)
		return xstrdup("");
	struct buf b = {0};
	buf_putc(&b, '[');
	for (size_t k = 0; k < s->nparams; k++)
		buf_printf(&b, "%s%s=%s", k ? ", " : "", s->params[k].name, values[k]);
	buf_puts(&b, "] ");
	return buf_steal(&b);
}

static char *verdict_sentence(const struct bench_result *r, const struct bench_group *g,
			      const struct bench_comparison *cmp, bool markdown)
{
	const char *q = markdown ? "`" : "'";
	const char *base = g->cmds[0].name, *cand = g->cmds[cmp->candidate].name;
	const struct interval *iv = &cmp->speedup;
	double pct = 100 * r->set->min_effect;
	struct buf b = {0};
	char *label = params_label(r->set, g->param_values);
	buf_puts(&b, label);
	free(label);
	if (cmp->why) {
		buf_printf(&b, "%s%s%s against %s%s%s: %s", q, cand, q, q, base, q, cmp->why);
	} else if (strcmp(cmp->verdict, "faster") == 0) {
		buf_printf(&b, "%s%s%s is faster than %s%s%s: speedup %.3f× (95%% CI %.3f–%.3f)", q, cand, q,
			   q, base, q, iv->estimate, iv->lo, iv->hi);
	} else if (strcmp(cmp->verdict, "slower") == 0) {
		buf_printf(&b, "%s%s%s is slower than %s%s%s: speedup %.3f× (95%% CI %.3f–%.3f), it takes "
			   "%.2f× the time", q, cand, q, q, base, q, iv->estimate, iv->lo, iv->hi,
			   1 / iv->estimate);
	} else {
		buf_printf(&b, "%s%s%s: no difference from %s%s%s beyond ±%.3g%%: speedup %.3f× (95%% CI "
			   "%.3f–%.3f)", q, cand, q, q, base, q, pct, iv->estimate, iv->lo, iv->hi);
		if (!cmp->conclusive)
			buf_printf(&b, "; the interval reaches past ±%.3g%%, so more runs could still show one",
				   pct);
	}
	return buf_steal(&b);
}

static void print_verdicts(FILE *out, const struct bench_result *r)
{
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		for (size_t i = 0; i + 1 < g->ncmds; i++) {
			char *v = verdict_sentence(r, g, &g->cmp[i], false);
			fprintf(out, "%s: %s\n", g->cmp[i].verdict, v);
			free(v);
		}
		if (g->ncmds == 1) {
			char *label = params_label(r->set, g->param_values);
			char *m = bench_format_seconds(g->cmds[0].wall.median);
			char *lo = bench_format_seconds(g->median_ci.lo), *hi = bench_format_seconds(g->median_ci.hi);
			if (g->median_why)
				fprintf(out, "one command: %s'%s': cannot conclude: %s (median of %zu runs %s)\n", label,
					g->cmds[0].name, g->median_why, g->cmds[0].measured, m);
			else
				fprintf(out, "one command: %s'%s' takes %s (median; 95%% CI %s – %s); give a candidate "
					"to compare\n", label, g->cmds[0].name, m, lo, hi);
			free(label);
			free(m);
			free(lo);
			free(hi);
		}
	}
}

/* ---- environment lines ---- */
static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : NULL;
}

static void env_text(struct buf *b, const struct bench_result *r, const char *bullet)
{
	const json_t *host = json_object_get(r->env, "host");
	const json_t *py = json_object_get(r->env, "python");
	const json_t *gpu = json_object_get(r->env, "gpu");
	/* machine */
	buf_printf(b, "%sMachine: %s", bullet, jstr(host, "cpu_model") ? jstr(host, "cpu_model") : "CPU unknown");
	json_t *v = json_object_get(host, "logical_cpus");
	if (json_is_integer(v))
		buf_printf(b, ", %lld logical CPUs", (long long)json_integer_value(v));
	v = json_object_get(host, "physical_cores");
	if (json_is_integer(v))
		buf_printf(b, " (%lld cores)", (long long)json_integer_value(v));
	buf_printf(b, ", governor %s", jstr(host, "governor") ? jstr(host, "governor") : "not readable");
	v = json_object_get(host, "memory_total_bytes");
	if (json_is_integer(v)) {
		char *m = format_bytes((double)json_integer_value(v));
		buf_printf(b, ", %s memory", m);
		free(m);
	}
	buf_printf(b, ", %s, %s", jstr(host, "os") ? jstr(host, "os") : "OS unknown",
		   jstr(host, "kernel") ? jstr(host, "kernel") : "kernel unknown");
	v = json_object_get(host, "load_average");
	if (json_is_array(v))
		buf_printf(b, ", load %.2f %.2f %.2f at start", json_number_value(json_array_get(v, 0)),
			   json_number_value(json_array_get(v, 1)), json_number_value(json_array_get(v, 2)));
	buf_putc(b, '\n');
	/* python */
	buf_printf(b, "%sPython: ", bullet);
	if (!json_is_true(json_object_get(py, "found")) || !jstr(py, "version")) {
		buf_printf(b, "%s: %s", jstr(py, "interpreter"), jstr(py, "error") ? jstr(py, "error") : "absent");
	} else {
		buf_printf(b, "%s (%s)", jstr(py, "version"), jstr(py, "executable") ? jstr(py, "executable") : "?");
		const json_t *pk = json_object_get(py, "packages");
		const char *name;
		json_t *ver;
		json_object_foreach((json_t *)pk, name, ver)
			buf_printf(b, ", %s %s", name, json_is_string(ver) ? json_string_value(ver) : "absent");
	}
	if (jstr(py, "chosen_by"))
		buf_printf(b, "; the interpreter of %s", jstr(py, "chosen_by"));
	const json_t *oth = json_object_get(py, "other_interpreters");
	if (json_array_size(oth)) {
		buf_puts(b, "; the commands also run");
		size_t k;
		const json_t *o;
		json_array_foreach(oth, k, o)
			buf_printf(b, "%s %s", k ? "," : "", json_string_value(o));
		buf_puts(b, ", not described (--python chooses)");
	}
	buf_putc(b, '\n');
	/* gpu */
	buf_printf(b, "%sGPU: ", bullet);
	if (!json_is_true(json_object_get(gpu, "found"))) {
		buf_printf(b, "%s (%s)\n", jstr(gpu, "status"), jstr(gpu, "reason") ? jstr(gpu, "reason") : "");
		return;
	}
	const json_t *devs = json_object_get(gpu, "devices");
	size_t i;
	const json_t *d;
	json_array_foreach(devs, i, d) {
		if (i)
			buf_puts(b, "; ");
		buf_printf(b, "%s", jstr(d, "name") ? jstr(d, "name") : "NVIDIA GPU");
		json_t *mem = json_object_get(d, "memory_total_bytes");
		if (json_is_integer(mem)) {
			char *m = format_bytes((double)json_integer_value(mem));
			buf_printf(b, ", %s", m);
			free(m);
		}
		if (jstr(d, "compute_capability"))
			buf_printf(b, ", compute capability %s", jstr(d, "compute_capability"));
		const json_t *clk = json_object_get(d, "clocks_mhz"), *mx = json_object_get(d, "max_clocks_mhz");
		if (json_is_integer(json_object_get(clk, "sm")))
			buf_printf(b, ", SM clock %lld MHz", (long long)json_integer_value(json_object_get(clk, "sm")));
		if (json_is_integer(json_object_get(mx, "sm")))
			buf_printf(b, " (max %lld)", (long long)json_integer_value(json_object_get(mx, "sm")));
		if (json_is_integer(json_object_get(clk, "memory")))
			buf_printf(b, ", memory clock %lld MHz",
				   (long long)json_integer_value(json_object_get(clk, "memory")));
	}
	buf_printf(b, "; driver %s, CUDA %s\n", jstr(gpu, "driver_version") ? jstr(gpu, "driver_version") : "?",
		   jstr(gpu, "cuda_driver_version") ? jstr(gpu, "cuda_driver_version") : "?");
}

static const char *stop_text(const char *reason)
{
	if (!reason)
		return "stopped";
	if (strcmp(reason, "precision") == 0)
		return "the asked precision was reached";
	if (strcmp(reason, "runs") == 0)
		return "--runs was reached";
	if (strcmp(reason, "max-runs") == 0)
		return "--max-runs was reached";
	if (strcmp(reason, "max-time") == 0)
		return "--max-time was reached";
	return reason;
}

/* ---- text ---- */
/* A command's GPU figures over all devices: the largest of each. */
struct gpu_peaks {
	unsigned samples;
	double mem, util_mean, util_peak;
};

static struct gpu_peaks gpu_peaks(const struct bench_result *r, const struct bench_command *c)
{
	struct gpu_peaks g = {0};
	for (size_t d = 0; d < r->ndev; d++) {
		g.samples += c->gpu[d].samples;
		g.mem = fmax(g.mem, c->gpu[d].mem_peak);
		g.util_mean = fmax(g.util_mean, c->gpu[d].util_mean);
		g.util_peak = fmax(g.util_peak, c->gpu[d].util_peak);
	}
	return g;
}

static double unit_scale(const struct bench_group *g, const char **unit)
{
	double smallest = INFINITY;
	for (size_t i = 0; i < g->ncmds; i++)
		if (g->cmds[i].wall.median < smallest)
			smallest = g->cmds[i].wall.median;
	if (smallest < 1e-3) {
		*unit = "µs";
		return 1e6;
	}
	if (smallest < 1) {
		*unit = "ms";
		return 1e3;
	}
	*unit = "s";
	return 1;
}

static char *num(double v, int dec)
{
	return isnan(v) ? xstrdup("n/a") : xasprintf("%.*f", dec, v);
}

static void print_group(FILE *out, const struct bench_result *r, const struct bench_group *g)
{
	const char *unit;
	double scale = unit_scale(g, &unit);
	double smallest = INFINITY;
	for (size_t i = 0; i < g->ncmds; i++)
		smallest = fmin(smallest, g->cmds[i].wall.median * scale);
	int dec = decimals_for(smallest) + 1;
	if (dec > 4)
		dec = 4;

	struct table t = {.ncols = 12, .align = "llrrrrrrrrrr"};
	const char *head[] = {"", "command", "runs", "median", "mean", "sd", "MAD", "min", "p5", "p95",
			      "max", "outliers"};
	for (size_t k = 0; k < 12; k++)
		cell(&t, k >= 3 && k <= 10 ? xasprintf("%s %s", head[k], unit) : xstrdup(head[k]));
	for (size_t i = 0; i < g->ncmds; i++) {
		const struct bench_command *c = &g->cmds[i];
		const struct summary *w = &c->wall;
		cell(&t, i == 0 ? xstrdup("B") : xasprintf("%zu", i));
		cell(&t, shorten(c->name, 40));
		cell(&t, xasprintf("%zu", c->measured));
		const double v[] = {w->median, w->mean, w->sd, w->mad, w->min, w->p5, w->p95, w->max};
		for (size_t k = 0; k < 8; k++)
			cell(&t, num(v[k] * scale, dec));
		cell(&t, xasprintf("%zu", w->outliers_low + w->outliers_high));
	}
	table_print(out, &t);
	fputc('\n', out);

	bool gpu = r->ndev > 0;
	struct table u = {.ncols = gpu ? 8 : 6, .align = "llrrrrrr"};
	cell(&u, xstrdup(""));
	cell(&u, xstrdup("command"));
	cell(&u, xasprintf("user %s", unit));
	cell(&u, xasprintf("sys %s", unit));
	cell(&u, xstrdup("peak RSS"));
	cell(&u, xstrdup("peak RSS max"));
	if (gpu) {
		cell(&u, xstrdup("GPU memory peak"));
		cell(&u, xstrdup("GPU util mean / peak"));
	}
	for (size_t i = 0; i < g->ncmds; i++) {
		const struct bench_command *c = &g->cmds[i];
		cell(&u, i == 0 ? xstrdup("B") : xasprintf("%zu", i));
		cell(&u, shorten(c->name, 40));
		cell(&u, num(c->user.median * scale, dec));
		cell(&u, num(c->sys.median * scale, dec));
		cell(&u, format_kib(c->rss_median_kib));
		cell(&u, format_kib((double)c->rss_max_kib));
		if (gpu) {
			struct gpu_peaks gp = gpu_peaks(r, c);
			cell(&u, gp.samples ? format_bytes(gp.mem) : xstrdup("no sample"));
			cell(&u, gp.samples ? xasprintf("%.0f%% / %.0f%%", gp.util_mean, gp.util_peak)
					    : xstrdup("no sample"));
		}
	}
	table_print(out, &u);
	fprintf(out, "  (user, sys and peak RSS are medians over the measured runs; peak RSS max is the "
		"largest run)\n");
}

/* The shell's start-up taken off g's runs and where it comes from. */
static char *group_shell_text(const struct bench_result *r, const struct bench_group *g)
{
	char *w = bench_format_seconds(g->shell_wall_s), *before = bench_format_seconds(r->shell_wall_s);
	char *t = g->shell_from_probes
		  ? xasprintf("%s, the median of an empty %s run in each of the %zu rounds (%s before the runs)",
			      w, r->set->shell, g->nshell_probes, before)
		  : xasprintf("%s, the median of %zu empty %s runs before the runs (too few rounds, %zu, for "
			      "their own)", w, r->shell_runs, r->set->shell, g->nshell_probes);
	free(w);
	free(before);
	return t;
}

void bench_print_text(FILE *out, const struct bench_result *r)
{
	print_verdicts(out, r);
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		fputc('\n', out);
		if (g->param_values) {
			fputs("With", out);
			for (size_t k = 0; k < r->set->nparams; k++)
				fprintf(out, "%s %s = %s", k ? "," : "", r->set->params[k].name, g->param_values[k]);
			fputs(":\n", out);
		}
		print_group(out, r, g);
		fprintf(out, "  Stopped after %zu round%s in %.1f s of measuring (%.1f s in all, with setup, "
			"warm-up and cleanup): %s.\n", g->rounds, g->rounds == 1 ? "" : "s", g->elapsed_s,
			g->total_s, stop_text(g->stop_reason));
		if (r->shell_calibrated) {
			char *t = group_shell_text(r, g);
			fprintf(out, "  Shell start-up subtracted from every run: %s.\n", t);
			free(t);
		}
		for (size_t i = 0; i < g->ncmds; i++)
			for (size_t k = 0; k < g->cmds[i].warnings.len; k++)
				fprintf(out, "  warning: %s: %s\n", g->cmds[i].name,
					(const char *)g->cmds[i].warnings.items[k]);
		for (size_t k = 0; k < g->warnings.len; k++)
			fprintf(out, "  warning: %s\n", (const char *)g->warnings.items[k]);
	}
	fputc('\n', out);
	fprintf(out, "Outliers: %s. Intervals: 95%% percentile bootstrap, %u resamples, seed %llu.\n",
		STATS_OUTLIER_RULE, r->set->resamples, (unsigned long long)r->set->seed);
	bool near_floor = false;
	for (size_t gi = 0; gi < r->nmeasured; gi++)
		for (size_t i = 0; i < r->groups[gi].ncmds; i++)
			near_floor |= r->groups[gi].cmds[i].rss_median_kib <= 1.1 * (double)r->rss_floor_kib;
	if (near_floor && r->rss_floor_kib > 0) {
		char *f = format_kib((double)r->rss_floor_kib);
		fprintf(out, "Peak RSS: Linux starts a new program's peak at its parent's resident size, so "
			"values near %s (gpuopt's own) are that floor, not the command's.\n", f);
		free(f);
	}
	struct buf b = {0};
	env_text(&b, r, "");
	fputs(b.data, out);
	buf_free(&b);
}

/* ---- JSON ---- */
static json_t *real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *summary_json(const struct summary *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "median", real(s->median));
	json_object_set_new(o, "mean", real(s->mean));
	json_object_set_new(o, "sd", real(s->sd));
	json_object_set_new(o, "mad", real(s->mad));
	json_object_set_new(o, "min", real(s->min));
	json_object_set_new(o, "max", real(s->max));
	json_object_set_new(o, "p5", real(s->p5));
	json_object_set_new(o, "p95", real(s->p95));
	json_object_set_new(o, "outliers", json_pack("{s:I, s:I}", "low", (json_int_t)s->outliers_low,
						     "high", (json_int_t)s->outliers_high));
	return o;
}

static json_t *params_json(const struct bench_settings *s, char **values)
{
	if (!values)
		return json_null();
	json_t *o = json_object();
	for (size_t k = 0; k < s->nparams; k++)
		json_object_set_new(o, s->params[k].name, json_string(values[k]));
	return o;
}

static json_t *strings_json(const struct ptrvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->len; i++)
		json_array_append_new(a, json_string(v->items[i]));
	return a;
}

static json_t *argv_json(char **argv)
{
	json_t *a = json_array();
	for (size_t i = 0; argv && argv[i]; i++)
		json_array_append_new(a, json_string(argv[i]));
	return a;
}

static json_t *text_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* A group's "shell_startup": null without --shell. */
static json_t *group_shell_json(const struct bench_result *r, const struct bench_group *g)
{
	if (!r->shell_calibrated)
		return json_null();
	json_t *probes = json_array();
	for (size_t i = 0; i < g->nshell_probes; i++)
		json_array_append_new(probes, json_real(g->shell_probe_s[i]));
	return json_pack("{s:s, s:f, s:f, s:o}", "from", g->shell_from_probes ? "rounds" : "before the runs",
			 "wall_s", g->shell_wall_s, "noise_s", g->shell_noise_s, "empty_runs_wall_s", probes);
}

static json_t *run_json(const struct bench_result *r, const struct bench_run *run)
{
	json_t *o = json_object();
	json_object_set_new(o, "round", json_integer(run->round));
	json_object_set_new(o, "slot", json_integer(run->slot));
	json_object_set_new(o, "warmup", json_boolean(run->warmup));
	json_object_set_new(o, "wall_s", json_real(run->wall_s));
	json_object_set_new(o, "wall_raw_s", json_real(run->wall_raw_s));
	json_object_set_new(o, "user_s", json_real(run->user_s));
	json_object_set_new(o, "sys_s", json_real(run->sys_s));
	json_object_set_new(o, "peak_rss_kib", json_integer(run->peak_rss_kib));
	json_object_set_new(o, "exit_code", run->exit_code >= 0 ? json_integer(run->exit_code) : json_null());
	json_object_set_new(o, "signal", run->signal ? json_integer(run->signal) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(run->timed_out));
	if (!run->gpu) {
		json_object_set_new(o, "gpu", json_null());
		return o;
	}
	json_t *g = json_array();
	for (size_t d = 0; d < r->ndev; d++) {
		const struct gpu_usage *u = &run->gpu[d];
		json_t *e = json_object();
		json_object_set_new(e, "device", json_integer((json_int_t)d));
		json_object_set_new(e, "samples", json_integer(u->samples));
		bool any = u->samples > 0;
		json_object_set_new(e, "memory_used_start_bytes", any ? json_real(u->mem_used_first) : json_null());
		json_object_set_new(e, "memory_used_peak_bytes", any ? json_real(u->mem_used_peak) : json_null());
		json_object_set_new(e, "memory_used_mean_bytes", any ? json_real(u->mem_used_mean) : json_null());
		json_object_set_new(e, "utilization_peak_pct", any ? json_real(u->util_peak) : json_null());
		json_object_set_new(e, "utilization_mean_pct", any ? json_real(u->util_mean) : json_null());
		json_array_append_new(g, e);
	}
	json_object_set_new(o, "gpu", g);
	return o;
}

static json_t *command_json(const struct bench_result *r, const struct bench_command *c, size_t index)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer((json_int_t)index));
	json_object_set_new(o, "role", json_string(bench_role(index)));
	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "command", json_string(c->text));
	json_object_set_new(o, "argv", argv_json(c->argv));
	json_object_set_new(o, "parameters", params_json(r->set, c->param_values));
	json_object_set_new(o, "prepare", text_or_null(c->prepare_text));
	json_object_set_new(o, "setup", text_or_null(c->setup_text));
	json_object_set_new(o, "cleanup", text_or_null(c->cleanup_text));
	json_t *st = json_object();
	json_object_set_new(st, "runs", json_integer((json_int_t)c->measured));
	json_object_set_new(st, "failed_runs", json_integer((json_int_t)c->failed));
	json_object_set_new(st, "wall_s", summary_json(&c->wall));
	json_object_set_new(st, "user_s", summary_json(&c->user));
	json_object_set_new(st, "sys_s", summary_json(&c->sys));
	json_object_set_new(st, "peak_rss_kib", json_pack("{s:o, s:I}", "median", real(c->rss_median_kib),
							  "max", (json_int_t)c->rss_max_kib));
	json_object_set_new(o, "stats", st);
	if (c->gpu) {
		json_t *g = json_array();
		for (size_t d = 0; d < r->ndev; d++) {
			const struct gpu_summary *s = &c->gpu[d];
			bool any = s->samples > 0;
			json_array_append_new(g, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "device", (json_int_t)d,
							   "samples", (json_int_t)s->samples,
							   "memory_used_peak_bytes", any ? json_real(s->mem_peak) : json_null(),
							   "memory_used_mean_bytes", any ? json_real(s->mem_mean) : json_null(),
							   "utilization_peak_pct", any ? json_real(s->util_peak) : json_null(),
							   "utilization_mean_pct", any ? json_real(s->util_mean) : json_null()));
		}
		json_object_set_new(o, "gpu", g);
	} else {
		json_object_set_new(o, "gpu", json_null());
	}
	json_object_set_new(o, "warnings", strings_json(&c->warnings));
	json_t *runs = json_array();
	for (size_t i = 0; i < c->nruns; i++)
		json_array_append_new(runs, run_json(r, &c->runs[i]));
	json_object_set_new(o, "runs", runs);
	return o;
}

static json_t *settings_json(const struct bench_result *r)
{
	const struct bench_settings *s = r->set;
	json_t *o = json_object();
	json_object_set_new(o, "warmup", json_integer(s->warmup));
	json_object_set_new(o, "min_runs", json_integer(s->min_runs));
	json_object_set_new(o, "max_runs", s->max_runs ? json_integer(s->max_runs) : json_null());
	json_object_set_new(o, "min_time_s", json_real(s->min_time_s));
	json_object_set_new(o, "max_time_s", s->max_time_s > 0 ? json_real(s->max_time_s) : json_null());
	json_object_set_new(o, "precision", json_real(s->precision));
	json_object_set_new(o, "min_effect", json_real(s->min_effect));
	json_object_set_new(o, "confidence", json_real(BENCH_CONFIDENCE));
	json_object_set_new(o, "resamples", json_integer(s->resamples));
	json_object_set_new(o, "stop_rule_resamples", json_integer(BENCH_CHECK_RESAMPLES));
	json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
	json_object_set_new(o, "outlier_rule", json_string(STATS_OUTLIER_RULE));
	json_object_set_new(o, "shell", text_or_null(s->shell));
	if (r->shell_calibrated)
		json_object_set_new(o, "shell_startup", json_pack("{s:I, s:f, s:f, s:f}", "runs",
								  (json_int_t)r->shell_runs, "median_wall_s",
								  r->shell_wall_s, "median_user_s", r->shell_user_s,
								  "median_sys_s", r->shell_sys_s));
	else
		json_object_set_new(o, "shell_startup", json_null());
	json_object_set_new(o, "timeout_s", s->timeout_s > 0 ? json_real(s->timeout_s) : json_null());
	json_object_set_new(o, "ignore_failure", json_boolean(s->ignore_failure));
	json_object_set_new(o, "input", text_or_null(s->input));
	json_object_set_new(o, "output", json_string(s->output == OUTPUT_NULL ? "null" :
						      s->output == OUTPUT_INHERIT ? "inherit" : s->output_file));
	json_t *params = json_array();
	for (size_t k = 0; k < s->nparams; k++) {
		json_t *vals = json_array();
		for (size_t i = 0; i < s->params[k].nvalues; i++)
			json_array_append_new(vals, json_string(s->params[k].values[i]));
		json_array_append_new(params, json_pack("{s:s, s:o}", "name", s->params[k].name, "values", vals));
	}
	json_object_set_new(o, "parameters", params);
	json_object_set_new(o, "gpu_sample_interval_ms", json_integer(BENCH_GPU_INTERVAL_MS));
	return o;
}

char *bench_to_json(const struct bench_result *r)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "tool", json_string("gpuopt"));
	json_object_set_new(doc, "version", json_string(GPUOPT_VERSION));
	json_object_set_new(doc, "schema", json_string(JSON_SCHEMA));
	json_object_set_new(doc, "invocation", json_string(r->invocation));
	json_object_set_new(doc, "started_at", json_string(r->started_at));
	json_object_set_new(doc, "duration_s", json_real(r->duration_s));
	static const char *const status[] = {"ok", "bad command", "cannot start", "run failed",
					     "cleanup failed", "interrupted"};
	json_object_set_new(doc, "status", json_string(status[r->status]));
	json_object_set_new(doc, "complete", json_boolean(r->nmeasured == r->ngroups));
	json_object_set_new(doc, "settings", settings_json(r));
	json_t *env = json_deep_copy(r->env);
	json_object_set_new(env, "peak_rss_floor_kib", json_integer(r->rss_floor_kib));
	json_object_set_new(doc, "environment", env);
	json_t *groups = json_array();
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		json_t *go = json_object();
		json_object_set_new(go, "parameters", params_json(r->set, g->param_values));
		json_object_set_new(go, "rounds", json_integer((json_int_t)g->rounds));
		json_object_set_new(go, "elapsed_s", json_real(g->elapsed_s));
		json_object_set_new(go, "total_s", json_real(g->total_s));
		json_object_set_new(go, "stop_reason", text_or_null(g->stop_reason));
		json_object_set_new(go, "shell_startup", group_shell_json(r, g));
		json_t *cmds = json_array();
		for (size_t i = 0; i < g->ncmds; i++)
			json_array_append_new(cmds, command_json(r, &g->cmds[i], i));
		json_object_set_new(go, "commands", cmds);
		json_t *cmps = json_array();
		for (size_t i = 0; i + 1 < g->ncmds; i++) {
			const struct bench_comparison *c = &g->cmp[i];
			bool num = !c->why; /* no number where there is no verdict */
			json_array_append_new(cmps, json_pack(
				"{s:I, s:I, s:o, s:[o, o], s:I, s:s, s:o, s:b, s:o}", "baseline", (json_int_t)0,
				"candidate", (json_int_t)c->candidate,
				"speedup", num ? real(c->speedup.estimate) : json_null(),
				"ci95", num ? real(c->speedup.lo) : json_null(), num ? real(c->speedup.hi) : json_null(),
				"pairs", (json_int_t)c->pairs, "verdict", c->verdict,
				"reason", c->why ? json_string(c->why) : json_null(), "conclusive", c->conclusive,
				"half_width", num ? real(c->half_width) : json_null()));
		}
		json_object_set_new(go, "comparisons", cmps);
		if (g->ncmds == 1 && !g->median_why)
			json_object_set_new(go, "median_ci95", json_pack("{s:o, s:o, s:o}", "median",
									 real(g->median_ci.estimate), "lo",
									 real(g->median_ci.lo), "hi",
									 real(g->median_ci.hi)));
		else
			json_object_set_new(go, "median_ci95", json_null());
		json_object_set_new(go, "median_reason", text_or_null(g->median_why));
		json_object_set_new(go, "warnings", strings_json(&g->warnings));
		json_array_append_new(groups, go);
	}
	json_object_set_new(doc, "groups", groups);
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(doc);
	char *out = xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}

/* ---- CSV ---- */
static void csv_field(struct buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		buf_puts(b, s);
		return;
	}
	buf_putc(b, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			buf_putc(b, '"');
		buf_putc(b, *p);
	}
	buf_putc(b, '"');
}

static void csv_num(struct buf *b, double v)
{
	buf_putc(b, ',');
	if (isfinite(v))
		buf_printf(b, "%.9g", v);
}

char *bench_to_csv(const struct bench_result *r)
{
	const struct bench_settings *s = r->set;
	struct buf b = {0};
	buf_puts(&b, "group,index,role,name,command");
	for (size_t k = 0; k < s->nparams; k++) {
		buf_puts(&b, ",");
		char *h = xasprintf("parameter_%s", s->params[k].name);
		csv_field(&b, h);
		free(h);
	}
	buf_puts(&b, ",runs,failed_runs,median_s,mean_s,sd_s,mad_s,min_s,max_s,p5_s,p95_s,outliers,"
		     "user_median_s,sys_median_s,peak_rss_median_kib,peak_rss_max_kib,speedup,ci95_low,"
		     "ci95_high,verdict,gpu_memory_peak_bytes,gpu_utilization_mean_pct,"
		     "gpu_utilization_peak_pct,verdict_reason\n");
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		for (size_t i = 0; i < g->ncmds; i++) {
			const struct bench_command *c = &g->cmds[i];
			buf_printf(&b, "%zu,%zu,%s,", gi, i, bench_role(i));
			csv_field(&b, c->name);
			buf_putc(&b, ',');
			csv_field(&b, c->text);
			for (size_t k = 0; k < s->nparams; k++) {
				buf_putc(&b, ',');
				if (c->param_values)
					csv_field(&b, c->param_values[k]);
			}
			const struct summary *w = &c->wall;
			buf_printf(&b, ",%zu,%zu", c->measured, c->failed);
			const double v[] = {w->median, w->mean, w->sd, w->mad, w->min, w->max, w->p5, w->p95};
			for (size_t k = 0; k < 8; k++)
				csv_num(&b, v[k]);
			buf_printf(&b, ",%zu", w->outliers_low + w->outliers_high);
			csv_num(&b, c->user.median);
			csv_num(&b, c->sys.median);
			csv_num(&b, c->rss_median_kib);
			buf_printf(&b, ",%ld", c->rss_max_kib);
			const struct bench_comparison *cmp = i > 0 ? &g->cmp[i - 1] : NULL;
			if (cmp && cmp->why) {
				buf_printf(&b, ",,,,%s", cmp->verdict);
			} else if (cmp) {
				csv_num(&b, cmp->speedup.estimate);
				csv_num(&b, cmp->speedup.lo);
				csv_num(&b, cmp->speedup.hi);
				buf_printf(&b, ",%s", cmp->verdict);
			} else {
				buf_puts(&b, ",,,,");
			}
			struct gpu_peaks gp = c->gpu ? gpu_peaks(r, c) : (struct gpu_peaks){0};
			if (gp.samples) {
				csv_num(&b, gp.mem);
				csv_num(&b, gp.util_mean);
				csv_num(&b, gp.util_peak);
			} else {
				buf_puts(&b, ",,,");
			}
			buf_putc(&b, ',');
			if (cmp && cmp->why)
				csv_field(&b, cmp->why);
			else if (!cmp && g->ncmds == 1 && g->median_why)
				csv_field(&b, g->median_why);
			buf_putc(&b, '\n');
		}
	}
	return buf_steal(&b);
}

/* ---- Markdown ---- */
static void md_cell(struct buf *b, const char *s, bool code)
{
	bool tick = code && !strchr(s, '`');
	buf_puts(b, tick ? " `" : " ");
	for (const char *p = s; *p; p++) {
		if (*p == '|')
			buf_putc(b, '\\');
		if (*p == '\n') {
			buf_putc(b, ' ');
			continue;
		}
		buf_putc(b, *p);
	}
	buf_puts(b, tick ? "` |" : " |");
}

char *bench_to_markdown(const struct bench_result *r)
{
	struct buf b = {0};
	buf_puts(&b, "## gpuopt bench\n\n");
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		for (size_t i = 0; i + 1 < g->ncmds; i++) {
			char *v = verdict_sentence(r, g, &g->cmp[i], true);
			buf_printf(&b, "- **%s**: %s\n", g->cmp[i].verdict, v);
			free(v);
		}
		if (g->ncmds == 1) {
			char *m = bench_format_seconds(g->cmds[0].wall.median);
			if (g->median_why)
				buf_printf(&b, "- one command: `%s`: **cannot conclude**: %s (median %s)\n",
					   g->cmds[0].name, g->median_why, m);
			else
				buf_printf(&b, "- one command: `%s` takes %s (median)\n", g->cmds[0].name, m);
			free(m);
		}
	}
	for (size_t gi = 0; gi < r->nmeasured; gi++) {
		const struct bench_group *g = &r->groups[gi];
		buf_putc(&b, '\n');
		if (g->param_values) {
			char *label = params_label(r->set, g->param_values);
			buf_printf(&b, "### %s\n\n", label);
			free(label);
		}
		buf_puts(&b, "| | command | runs | median | mean ± sd | MAD | min … max | p5 … p95 | user | sys "
			     "| peak RSS | speedup (95% CI) |\n");
		buf_puts(&b, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
		for (size_t i = 0; i < g->ncmds; i++) {
			const struct bench_command *c = &g->cmds[i];
			const struct summary *w = &c->wall;
			buf_puts(&b, "|");
			md_cell(&b, i == 0 ? "baseline" : "candidate", false);
			md_cell(&b, c->name, true);
			char *cells[10];
			cells[0] = xasprintf("%zu", c->measured);
			cells[1] = bench_format_seconds(w->median);
			char *mean = bench_format_seconds(w->mean), *sd = bench_format_seconds(w->sd);
			cells[2] = xasprintf("%s ± %s", mean, sd);
			free(mean);
			free(sd);
			cells[3] = bench_format_seconds(w->mad);
			char *lo = bench_format_seconds(w->min), *hi = bench_format_seconds(w->max);
			cells[4] = xasprintf("%s … %s", lo, hi);
			free(lo);
			free(hi);
			lo = bench_format_seconds(w->p5);
			hi = bench_format_seconds(w->p95);
			cells[5] = xasprintf("%s … %s", lo, hi);
			free(lo);
			free(hi);
			cells[6] = bench_format_seconds(c->user.median);
			cells[7] = bench_format_seconds(c->sys.median);
			cells[8] = format_kib(c->rss_median_kib);
			if (i == 0) {
				cells[9] = xstrdup("1 (baseline)");
			} else if (g->cmp[i - 1].why) {
				cells[9] = xstrdup("cannot conclude");
			} else {
				const struct interval *iv = &g->cmp[i - 1].speedup;
				cells[9] = xasprintf("%.3f× (%.3f–%.3f) %s", iv->estimate, iv->lo, iv->hi,
						     g->cmp[i - 1].verdict);
			}
			for (size_t k = 0; k < 10; k++) {
				md_cell(&b, cells[k], false);
				free(cells[k]);
			}
			buf_putc(&b, '\n');
		}
		buf_printf(&b, "\nStopped after %zu round%s in %.1f s of measuring (%.1f s in all): %s.\n",
			   g->rounds, g->rounds == 1 ? "" : "s", g->elapsed_s, g->total_s,
			   stop_text(g->stop_reason));
		bool any = g->warnings.len > 0;
		for (size_t i = 0; i < g->ncmds; i++)
			any |= g->cmds[i].warnings.len > 0;
		if (any) {
			buf_puts(&b, "\nWarnings:\n\n");
			for (size_t i = 0; i < g->ncmds; i++)
				for (size_t k = 0; k < g->cmds[i].warnings.len; k++)
					buf_printf(&b, "- `%s`: %s\n", g->cmds[i].name,
						   (const char *)g->cmds[i].warnings.items[k]);
			for (size_t k = 0; k < g->warnings.len; k++)
				buf_printf(&b, "- %s\n", (const char *)g->warnings.items[k]);
		}
	}
	buf_puts(&b, "\n### Environment\n\n");
	env_text(&b, r, "- ");
	buf_printf(&b, "- Recorded %s by gpuopt %s; intervals: 95%% percentile bootstrap, %u resamples, "
		   "seed %llu\n", r->started_at, GPUOPT_VERSION, r->set->resamples,
		   (unsigned long long)r->set->seed);
	return buf_steal(&b);
}
