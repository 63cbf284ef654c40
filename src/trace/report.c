/* report: rendering a trace report (see report.h). */
#include "report.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define F(expr, fmt) do { char *s_ = (expr); fprintf(out, fmt, s_); free(s_); } while (0)

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0.0;
}

static const struct trace *T(const struct trace_report *r)
{
	return r->trace;
}

static void header(FILE *out, const struct trace_report *r)
{
	const struct trace *t = T(r);
	fputs("gpuopt trace:", out);
	for (char **a = t->argv; a && *a; a++)
		fprintf(out, " %s", *a);
	fputs(" — ", out);
	if (t->timed_out)
		fputs("timed out", out);
	else if (t->signal)
		fprintf(out, "killed by signal %d", t->signal);
	else
		fprintf(out, "exit %d", t->exit_code);
	fprintf(out, ", %.2f s wall", t->wall_s);
	size_t traced = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		traced += !strcmp(t->procs[i].status, "traced");
	if (t->traced) {
		fprintf(out, ", %zu process%s traced", traced, traced == 1 ? "" : "es");
		const struct trace_process *p = &t->procs[0];
		if (p->py_version && p->py_lines)
			fprintf(out, " (Python %s", p->py_version);
		else
			fputs(" (no Python lines", out);
		if (p->cupti_version >= 130000)
			fprintf(out, ", CUPTI %u.%u", p->cupti_version / 10000, p->cupti_version / 100 % 100);
		else if (p->cupti_version)
			fprintf(out, ", CUPTI API %u", p->cupti_version);
		fputs(")", out);
	} else {
		fputs(", not traced", out);
	}
	fputs("\n", out);
	if (t->note)
		fprintf(out, "  %s\n", t->note);
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct trace_process *p = &t->procs[i];
		if (p->reason && strcmp(p->status, "traced") != 0 && (!t->note || strcmp(p->reason, t->note)))
			fprintf(out, "  process %d: %s\n", p->pid, p->reason);
		if (!strcmp(p->flush, "signal"))
			fprintf(out, "  process %d: ended by signal %d; its trace was saved at the signal\n", p->pid,
				p->signal);
		else if (!strcmp(p->flush, "periodic"))
			fprintf(out, "  process %d: ended without exit handlers (os._exit or a kill); "
				"its trace is the last periodic save (up to 2 s missing)\n", p->pid);
		if (p->py_why && p->py_version && !p->py_lines)
			fprintf(out, "  process %d: no Python lines: %s\n", p->pid, p->py_why);
	}
}

static void findings(FILE *out, const struct trace_report *r)
{
	double wall = (double)r->budget.run_ns / 1e9;
	if (!r->nfindings) {
		fprintf(out, "\nNo bottleneck found: no rule explains %.0f%% of the GPU phase or more.\n",
			100 * r->config->th[TH_MIN_RULE_SHARE]);
		return;
	}
	fputs("\nFindings (most costly first):\n", out);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct trace_finding *f = &r->findings[i];
		fprintf(out, "  %zu. %s [%s]", i + 1, f->text->name, f->text->severity);
		if (f->cost_s > 0)
			fprintf(out, " — %.3g s, %.0f%% of the GPU phase", f->cost_s, pct(f->cost_s, wall));
		fputs("\n", out);
		fprintf(out, "     %s\n     fix: %s\n", f->evidence, f->text->fix);
	}
}

static void copies(FILE *out, const struct trace_copy c[DIR_COUNT][HK_COUNT])
{
	bool any = false;
	for (int d = 0; d < DIR_COUNT; d++) {
		struct trace_copy s = {0};
		for (int h = 0; h < HK_COUNT; h++) {
			s.n += c[d][h].n;
			s.bytes += c[d][h].bytes;
			s.ns += c[d][h].ns;
		}
		if (!s.n)
			continue;
		fprintf(out, "%s%s %llu× ", any ? "; " : "", trace_dir_name(d), (unsigned long long)s.n);
		any = true;
		F(trace_fmt_bytes(s.n ? s.bytes / s.n : 0), "%s");
		F(trace_fmt_ns(s.ns), " in %s");
		if (s.bytes >= (1u << 20))
			F(trace_fmt_rate(s.bytes, s.ns), " (%s)");
		if (d != DIR_D2D && c[d][HK_PAGEABLE].n)
			fprintf(out, ", %s", c[d][HK_PAGEABLE].n == s.n ? "pageable" : "partly pageable");
		else if (d != DIR_D2D && c[d][HK_PINNED].n == s.n)
			fputs(", pinned", out);
	}
	if (!any)
		fputs("none", out);
}

static void budget(FILE *out, const struct trace_report *r)
{
	const struct trace_budget *b = &r->budget;
	double run_ns = (double)b->run_ns;
	fprintf(out, "\nTime budget (wall %.3f s; GPU phase %.3f s: first to last GPU operation, less %.3f s of "
		"warm-up before kernels' first launches", b->wall_s, (double)b->run_ns / 1e9,
		(double)b->warmup_ns / 1e9);
	/* most of it one wait: where, so that what was taken off can be checked */
	if (b->warmup_after && b->warmup_max_ns * 2 > b->warmup_ns) {
		F(trace_fmt_ns(b->warmup_max_ns), ", %s of it once");
		fprintf(out, ", after %s until %s's first launch", b->warmup_after, b->warmup_until);
	}
	fputs("):\n", out);
	F(trace_fmt_ns(b->busy_ns), "  GPU busy      %s");
	fprintf(out, " (%.0f%% of the GPU phase)", pct((double)b->busy_ns, run_ns));
	F(trace_fmt_ns(b->kernel_ns), "; kernels %s");
	fprintf(out, " (%llu)", (unsigned long long)b->kernels);
	if (b->memset_ns)
		F(trace_fmt_ns(b->memset_ns), "; memset %s");
	fputs("\n  copies        ", out);
	copies(out, b->copy);
	fprintf(out, "\n  host calls    %llu launches ", (unsigned long long)b->launches);
	F(trace_fmt_ns(b->launch_ns), "(%s)");
	fprintf(out, "; %llu synchronizes ", (unsigned long long)b->sync_n);
	F(trace_fmt_ns(b->sync_ns), "(%s)");
	F(trace_fmt_ns(b->memcpy_api_ns), "; copies %s");
	fprintf(out, "; %llu allocations + %llu frees ", (unsigned long long)b->alloc_n, (unsigned long long)b->free_n);
	F(trace_fmt_ns(b->alloc_ns + b->free_ns), "(%s)\n");
	uint64_t idle = b->host_wait_ns + b->kernel_wait_ns + b->other_ns;
	F(trace_fmt_ns(idle), "  GPU idle      %s between operations (per stream, as HTA splits it): ");
	F(trace_fmt_ns(b->host_wait_ns), "host wait %s");
	fprintf(out, " (%llu gaps), ", (unsigned long long)b->host_wait_n);
	F(trace_fmt_ns(b->kernel_wait_ns), "kernel wait %s");
	fprintf(out, " (%llu), ", (unsigned long long)b->kernel_wait_n);
	F(trace_fmt_ns(b->other_ns), "other %s");
	fprintf(out, " (%llu)", (unsigned long long)b->other_n);
	if (b->warmup_ns)
		F(trace_fmt_ns(b->warmup_ns), "; of the host wait, %s was warm-up");
	if (b->held_ns)
		F(trace_fmt_ns(b->held_ns), "; of the other, %s was work already queued that the GPU started late");
	fputs("\n", out);
	/* the GPU ran someone else's work for a good part of this program's phase */
	if ((double)b->held_ns >= 0.1 * run_ns)
		fprintf(out, "  note          the GPU was running other work for %.0f%% of this program's GPU phase "
			"(another process sharing the GPU, or another stream): its idle times and rates are not this "
			"program's alone; trace it on a GPU of its own to judge it\n", pct((double)b->held_ns, run_ns));
}

static void lines(FILE *out, const struct trace_report *r, size_t max)
{
	size_t shown = 0;
	for (size_t i = 0; i < r->nlines; i++)
		shown += r->lines[i].cost_ns > 0;
	if (!shown)
		return;
	fputs("\nLines (by cost: the larger of the host time in their CUDA calls and the GPU time they caused):\n", out);
	fprintf(out, "  %9s %9s %10s %10s %7s %7s  %s\n", "cost", "launches", "GPU time", "host time", "syncs",
		"allocs", "line");
	size_t n = 0;
	for (size_t i = 0; i < r->nlines && (!max || n < max); i++) {
		const struct trace_line *l = &r->lines[i];
		if (!l->cost_ns)
			continue;
		n++;
		uint64_t host = 0;
		for (int op = 1; op < OP_COUNT; op++)
			host += l->api_ns[op];
		F(trace_fmt_ns(l->cost_ns), "  %9s ");
		fprintf(out, "%9llu ", (unsigned long long)l->api_n[OP_LAUNCH]);
		F(trace_fmt_ns(l->gpu_ns), "%10s ");
		F(trace_fmt_ns(host), "%10s ");
		fprintf(out, "%7llu %7llu  %s\n", (unsigned long long)l->api_n[OP_SYNC],
			(unsigned long long)l->api_n[OP_ALLOC], l->label);
		bool any = false;
		for (int d = 0; d < DIR_COUNT; d++)
			for (int h = 0; h < HK_COUNT; h++)
				any |= l->copy[d][h].n != 0;
		if (any) {
			fprintf(out, "  %*s copies: ", 51, "");
			copies(out, l->copy);
			fputs("\n", out);
		}
	}
	if (n < shown)
		fprintf(out, "  ... %zu more (--lines 0 shows all)\n", shown - n);
}

/* A kernel's C++ name demangled with libstdc++'s __cxa_demangle, loaded
 * at run time (gpuopt is C); the name itself when that is not possible.
 * Owned. */
static char *demangle(const char *name)
{
	static char *(*fn)(const char *, char *, size_t *, int *);
	static int looked;
	if (!looked) {
		looked = 1;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			fn = (char *(*)(const char *, char *, size_t *, int *))dlsym(h, "__cxa_demangle");
	}
	int status = -1;
	char *d = fn && !strncmp(name, "_Z", 2) ? fn(name, NULL, NULL, &status) : NULL;
	if (d && status == 0)
		return d;
	free(d);
	return xstrdup(name);
}

static void kernels(FILE *out, const struct trace_report *r, size_t max)
{
	if (!r->nkernels)
		return;
	fprintf(out, "\nKernels (%zu, by total time):\n  %8s %10s %10s %10s %10s  %s\n", r->nkernels, "count",
		"total", "mean", "min", "max", "name");
	for (size_t i = 0; i < r->nkernels && (!max || i < max); i++) {
		const struct trace_kernel_row *k = &r->kernels[i];
		fprintf(out, "  %8llu ", (unsigned long long)k->n);
		F(trace_fmt_ns(k->ns), "%10s ");
		F(trace_fmt_ns(k->n ? k->ns / k->n : 0), "%10s ");
		F(trace_fmt_ns(k->min), "%10s ");
		F(trace_fmt_ns(k->max), "%10s ");
		char *d = demangle(k->name);
		fprintf(out, " %.110s%s\n", d, strlen(d) > 110 ? "…" : "");
		free(d);
	}
	if (max && r->nkernels > max)
		fprintf(out, "  ... %zu more (--kernels 0 shows all)\n", r->nkernels - max);
}

static void devices(FILE *out, const struct trace_report *r)
{
	if (!r->ndevices)
		return;
	fputs("\nDevices:\n", out);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct trace_device_row *d = &r->devices[i];
		fprintf(out, "  %u %s: ", d->id, d->name ? d->name : "GPU");
		F(trace_fmt_ns(d->busy_ns), "busy %s");
		F(trace_fmt_ns(d->span_ns), " of a %s span");
		fprintf(out, "; %llu kernels ", (unsigned long long)d->kernels);
		F(trace_fmt_ns(d->kernel_ns), "(%s)");
		fprintf(out, ", %llu copies ", (unsigned long long)d->memcpys);
		F(trace_fmt_ns(d->memcpy_ns), "(%s)");
		if (d->mem_peak > 0) {
			F(trace_fmt_bytes((uint64_t)d->mem_peak), "; allocated at peak %s");
			if (d->memory_total)
				F(trace_fmt_bytes(d->memory_total), " of %s");
		}
		fputs("\n", out);
	}
}

static void nvtx(FILE *out, const struct trace_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nnvtx && n < 10; i++) {
		const struct trace_nvtx_row *v = &r->nvtx[i];
		if (!n++)
			fputs("\nNVTX ranges:\n", out);
		fprintf(out, "  %8llu× %s%s%s", (unsigned long long)v->n, v->domain[0] ? v->domain : "",
			v->domain[0] ? ": " : "", v->name);
		if (!v->mark)
			F(trace_fmt_ns(v->ns), " %s");
		if (v->where[0] && strcmp(v->where, "(no Python frame)"))
			fprintf(out, " at %s", v->where);
		fputs("\n", out);
	}
}

static void recording(FILE *out, const struct trace_report *r)
{
	const struct trace_budget *b = &r->budget;
	fprintf(out, "\nRecording: %llu CUPTI records, %llu dropped, %llu not matched to a call",
		(unsigned long long)b->records, (unsigned long long)b->dropped, (unsigned long long)b->unattributed);
	if (b->overhead_ns)
		F(trace_fmt_ns(b->overhead_ns), "; CUPTI's own overhead records %s");
	if (b->events)
		fprintf(out, "; timeline %llu events", (unsigned long long)b->events);
	if (b->events_dropped)
		fprintf(out, " (%llu more not kept: --max-events)", (unsigned long long)b->events_dropped);
	fputs("\n", out);
	if (b->untimed)
		fprintf(out, "Untimed: CUPTI gave %llu kernel, copy or memset records without valid times (both "
			"0, or an end before the start: CUPTI before CUDA 13.1 does so at the start of a "
			"collection); they are counted, their GPU time is not\n", (unsigned long long)b->untimed);
	if (b->unattributed * 100 > b->records)
		fprintf(out, "Unmatched: %llu of the %llu records (%.0f%%) were not matched to the call that made "
			"them (its entry in the tracer's table of calls was reused before CUPTI returned the "
			"record, or no traced call made it): the totals include them, the lines do not\n",
			(unsigned long long)b->unattributed, (unsigned long long)b->records,
			100.0 * (double)b->unattributed / (double)b->records);
	if (b->sampled_launches && !b->sample_windows)
		fprintf(out, "Sampled: launches came faster than CUPTI records cheaply, so CUPTI's kernel, copy, "
			"synchronization and allocation records were off while they did (turning them on again in "
			"a running process slows its launches to its end): the %llu launches made then count one "
			"kernel each at the mean time of the kernels recorded before (per line), copies made then are "
			"scaled from those recorded as the records went off, the GPU phase runs to the last of those "
			"launches and its idle time there is not split; every call is still counted by line, with its "
			"host time (--exact records everything)\n",
			(unsigned long long)b->sampled_launches);
	else if (b->sampled_launches)
		fprintf(out, "Sampled: launches came faster than CUPTI records cheaply, so kernels, copies and "
			"synchronizations were recorded for %llu of the %llu launches made then (%llu windows) and "
			"GPU times, counts and idle time there are estimated from them; every call is still counted "
			"by line, with its host time (with --exact everything is recorded)\n",
			(unsigned long long)b->recorded_launches, (unsigned long long)b->sampled_launches,
			(unsigned long long)b->sample_windows);
	if (b->sampled_launches && b->sample_windows && b->sample_kernels * 2 < b->recorded_launches)
		fprintf(out, "Sampled, records lost: the %llu launches made while recording left %llu kernel "
			"records (CUPTI's records resumed late in its windows), so the estimates count one kernel "
			"per launch made while sampling, at the time of the kernels recorded, the GPU phase runs "
			"to the last of those launches and its idle time there is not split; they are rougher "
			"than usual (--exact records everything)\n",
			(unsigned long long)b->recorded_launches, (unsigned long long)b->sample_kernels);
	if (b->sample_unseen_allocs)
		fprintf(out, "Sampled, memory: %llu allocations and frees were made while CUPTI's "
			"allocation records were off: the device memory figures leave them out (--exact records "
			"them)\n", (unsigned long long)b->sample_unseen_allocs);
	if (b->sample_toggle_errors)
		fprintf(out, "Sampled: CUPTI refused %llu times to turn its records on or off, so windows may "
			"have recorded longer or not at all\n", (unsigned long long)b->sample_toggle_errors);
}

void trace_report_text(FILE *out, const struct trace_report *r, const struct trace_report_style *st)
{
	header(out, r);
	if (!T(r)->traced) { /* what was read without CUDA: NVTX ranges, log lines */
		if (r->nfindings)
			findings(out, r);
		nvtx(out, r);
		return;
	}
	findings(out, r);
	budget(out, r);
	lines(out, r, st->max_lines);
	kernels(out, r, st->max_kernels);
	devices(out, r);
	nvtx(out, r);
	recording(out, r);
}

/* ---- JSON ---- */

static json_t *copy_json(const struct trace_copy c[DIR_COUNT][HK_COUNT])
{
	json_t *a = json_array();
	for (int d = 0; d < DIR_COUNT; d++)
		for (int h = 0; h < HK_COUNT; h++)
			if (c[d][h].n)
				json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "direction",
					trace_dir_name(d), "host_memory", trace_hostkind_name(h), "count",
					(json_int_t)c[d][h].n, "bytes", (json_int_t)c[d][h].bytes, "ns",
					(json_int_t)c[d][h].ns, "synchronous", (json_int_t)c[d][h].sync));
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *trace_report_json(const struct trace_report *r)
{
	const struct trace *t = T(r);
	const struct trace_budget *b = &r->budget;
	json_t *root = json_object();
	json_object_set_new(root, "format", json_string("gpuopt-trace-report"));
	json_object_set_new(root, "version", json_integer(1));
	json_t *cmd = json_array();
	for (char **a = t->argv; a && *a; a++)
		json_array_append_new(cmd, json_string(*a));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "exit", json_pack("{s:i, s:i, s:b, s:f}", "code", t->exit_code, "signal", t->signal,
						    "timed_out", t->timed_out, "wall_s", t->wall_s));
	json_object_set_new(root, "traced", json_boolean(t->traced));
	json_object_set_new(root, "note", str_or_null(t->note));
	json_t *f = json_array();
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct trace_finding *x = &r->findings[i];
		json_array_append_new(f, json_pack("{s:s, s:s, s:f, s:f, s:o, s:s, s:s, s:s}", "rule", x->text->name,
			"severity", x->text->severity, "cost_s", x->cost_s, "share",
			b->run_ns ? x->cost_s * 1e9 / (double)b->run_ns : 0.0, "line", str_or_null(x->where), "evidence",
			x->evidence, "fix", x->text->fix, "summary", x->text->summary));
	}
	json_object_set_new(root, "findings", f);
	json_t *bj = json_pack("{s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"wall_s", b->wall_s, "span_ns", (json_int_t)b->span_ns, "gpu_busy_ns", (json_int_t)b->busy_ns,
		"kernel_ns", (json_int_t)b->kernel_ns, "kernels", (json_int_t)b->kernels, "memset_ns",
		(json_int_t)b->memset_ns, "launches", (json_int_t)b->launches, "launch_ns", (json_int_t)b->launch_ns,
		"syncs", (json_int_t)b->sync_n, "sync_ns", (json_int_t)b->sync_ns, "allocs", (json_int_t)b->alloc_n,
		"alloc_ns", (json_int_t)b->alloc_ns, "frees", (json_int_t)b->free_n, "free_ns", (json_int_t)b->free_ns);
	json_object_set_new(bj, "memcpy_api_ns", json_integer((json_int_t)b->memcpy_api_ns));
	json_object_set_new(bj, "run_ns", json_integer((json_int_t)b->run_ns));
	json_object_set_new(bj, "gpu_phase_ns", json_integer((json_int_t)b->phase_ns));
	json_object_set_new(bj, "warmup_ns", json_integer((json_int_t)b->warmup_ns));
	json_object_set_new(bj, "warmup_longest", b->warmup_after ? json_pack("{s:I, s:s, s:s}", "ns",
				(json_int_t)b->warmup_max_ns, "after", b->warmup_after, "until", b->warmup_until) : json_null());
	json_object_set_new(bj, "sampling", json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "estimated",
		b->sampled_launches > 0, "sampled_launches", (json_int_t)b->sampled_launches, "recorded_launches",
		(json_int_t)b->recorded_launches, "windows", (json_int_t)b->sample_windows, "recorded_kernels",
		(json_int_t)b->sample_kernels, "toggle_errors", (json_int_t)b->sample_toggle_errors,
		"unseen_allocs", (json_int_t)b->sample_unseen_allocs));
	json_object_set_new(bj, "copies", copy_json(b->copy));
	json_object_set_new(bj, "idle", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "host_wait_ns",
		(json_int_t)b->host_wait_ns, "host_wait_count", (json_int_t)b->host_wait_n, "kernel_wait_ns",
		(json_int_t)b->kernel_wait_ns, "kernel_wait_count", (json_int_t)b->kernel_wait_n, "other_ns",
		(json_int_t)b->other_ns, "other_count", (json_int_t)b->other_n, "held_ns", (json_int_t)b->held_ns,
		"held_count", (json_int_t)b->held_n));
	json_object_set_new(root, "budget", bj);
	json_t *lines = json_array();
	for (size_t i = 0; i < r->nlines; i++) {
		const struct trace_line *l = &r->lines[i];
		bool rt = trace_site_runtime_thread(&l->site);
		json_t *api = json_object();
		for (int op = 1; op < OP_COUNT; op++)
			if (l->api_n[op])
				json_object_set_new(api, trace_op_name(op), json_pack("{s:I, s:I}", "count",
					(json_int_t)l->api_n[op], "host_ns", (json_int_t)l->api_ns[op]));
		json_t *row = json_pack("{s:s, s:o, s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "label", l->label,
			"file", str_or_null(l->site.file), "line", (json_int_t)l->site.line, "function",
			str_or_null(l->site.func), "library_file", rt ? json_null() : str_or_null(l->site.lib_file), "library_function",
			str_or_null(l->site.lib_func), "calls", api, "kernels", (json_int_t)l->kernels, "kernel_ns",
			(json_int_t)l->kernel_ns, "kernels_shorter_than_launch", (json_int_t)l->kernel_short, "gpu_ns",
			(json_int_t)l->gpu_ns, "cost_ns", (json_int_t)l->cost_ns, "idle_after_ns",
			(json_int_t)l->idle_after_ns);
		json_object_set_new(row, "library_line", json_integer(l->site.lib_line));
		json_object_set_new(row, "runtime_thread", json_boolean(rt));
		json_object_set_new(row, "copies", copy_json(l->copy));
		json_object_set_new(row, "memset", json_pack("{s:I, s:I, s:I}", "count", (json_int_t)l->memset.n,
			"bytes", (json_int_t)l->memset.bytes, "ns", (json_int_t)l->memset.ns));
		json_array_append_new(lines, row);
	}
	json_object_set_new(root, "lines", lines);
	json_t *ks = json_array();
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct trace_kernel_row *k = &r->kernels[i];
		char *d = demangle(k->name);
		json_array_append_new(ks, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "name", k->name, "demangled", d,
			"count", (json_int_t)k->n, "total_ns", (json_int_t)k->ns, "min_ns", (json_int_t)k->min, "max_ns",
			(json_int_t)k->max));
		free(d);
	}
	json_object_set_new(root, "kernels", ks);
	json_t *ds = json_array();
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct trace_device_row *d = &r->devices[i];
		json_array_append_new(ds, json_pack("{s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "id",
			(json_int_t)d->id, "name", str_or_null(d->name), "busy_ns", (json_int_t)d->busy_ns, "kernel_ns",
			(json_int_t)d->kernel_ns, "memcpy_ns", (json_int_t)d->memcpy_ns, "memset_ns",
			(json_int_t)d->memset_ns, "kernels", (json_int_t)d->kernels, "memcpys", (json_int_t)d->memcpys,
			"span_ns", (json_int_t)d->span_ns, "memory_peak_bytes", (json_int_t)d->mem_peak,
			"memory_total_bytes", (json_int_t)d->memory_total, "allocations", (json_int_t)d->allocs));
	}
	json_object_set_new(root, "devices", ds);
	json_t *nv = json_array();
	for (size_t i = 0; i < r->nnvtx; i++) {
		const struct trace_nvtx_row *v = &r->nvtx[i];
		json_array_append_new(nv, json_pack("{s:s, s:s, s:s, s:b, s:I, s:I}", "domain", v->domain, "name",
			v->name, "line", v->where, "marker", v->mark, "count", (json_int_t)v->n, "ns", (json_int_t)v->ns));
	}
	json_object_set_new(root, "nvtx", nv);
	json_t *log = json_array();
	for (size_t i = 0; i < t->nlog; i++)
		json_array_append_new(log, json_pack("{s:s, s:s, s:o, s:o, s:I}", "library", t->log[i].library, "kind",
			t->log[i].kind, "name", str_or_null(t->log[i].name), "reason", str_or_null(t->log[i].reason),
			"count", (json_int_t)t->log[i].n));
	json_object_set_new(root, "log", log);
	json_t *ps = json_array();
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct trace_process *p = &t->procs[i];
		json_array_append_new(ps, json_pack("{s:i, s:i, s:s, s:o, s:s, s:i, s:o, s:b, s:o, s:I, s:I, s:I, s:I, s:I, s:I}",
			"pid", p->pid, "ppid", p->ppid, "status", p->status, "reason", str_or_null(p->reason), "flush",
			p->flush, "signal", p->signal, "python", str_or_null(p->py_version), "python_lines",
			p->py_lines, "cupti", str_or_null(p->cupti_path), "records", (json_int_t)p->records,
			"untimed", (json_int_t)p->untimed, "early", (json_int_t)p->early, "dropped", (json_int_t)p->dropped, "unattributed",
			(json_int_t)p->unattributed, "events", (json_int_t)p->nevents));
		json_object_set_new(json_array_get(ps, i), "sampling",
			json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "sampled", p->sampled,
				  "launches", (json_int_t)p->launches, "sampled_launches",
				  (json_int_t)p->sampled_launches, "recorded_launches", (json_int_t)p->recorded_launches,
				  "windows", (json_int_t)p->sample_windows, "recorded_kernels",
				  (json_int_t)p->sample_kernels, "toggle_errors", (json_int_t)p->sample_toggle_errors,
				  "toggles", (json_int_t)p->sample_toggles, "toggle_ns", (json_int_t)p->sample_toggle_ns,
				  "toggle_max_ns", (json_int_t)p->sample_toggle_max_ns, "unseen_allocs",
				  (json_int_t)p->sample_unseen_allocs, "last_launch", (json_int_t)p->sample_last_launch));
	}
	json_object_set_new(root, "processes", ps);
	json_t *th = json_object();
	for (int i = 0; i < TH_COUNT; i++)
		json_object_set_new(th, trace_threshold_names[i], json_real(r->config->th[i]));
	json_object_set_new(root, "thresholds", th);
	return root;
}
