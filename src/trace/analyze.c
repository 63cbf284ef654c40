/* analyze: the budget, the tables and the rules (see analyze.h). Each rule
 * is one function below; their thresholds and texts come from
 * data/trace.json (config.h), so a rule's wording or limit changes there. */
#include "analyze.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/symtab.h"
#include "core/util.h"
#include "rates.h"

/* ---- formatting ---- */

char *trace_fmt_ns(uint64_t ns)
{
	double s = (double)ns / 1e9;
	if (s >= 100)
		return xasprintf("%.0f s", s);
	if (s >= 1)
		return xasprintf("%.2f s", s);
	if (s >= 1e-3)
		return xasprintf("%.1f ms", s * 1e3);
	return xasprintf("%.0f µs", s * 1e6);
}

char *trace_fmt_bytes(uint64_t b)
{
	if (b >= (1ull << 30))
		return xasprintf("%.1f GiB", (double)b / (double)(1ull << 30));
	if (b >= (1ull << 20))
		return xasprintf("%.1f MiB", (double)b / (double)(1ull << 20));
	if (b >= (1ull << 10))
		return xasprintf("%.1f KiB", (double)b / 1024.0);
	return xasprintf("%llu B", (unsigned long long)b);
}

char *trace_fmt_rate(uint64_t bytes, uint64_t ns)
{
	if (!ns)
		return xstrdup("? GB/s");
	double gbps = (double)bytes / (double)ns;
	return gbps >= 10 ? xasprintf("%.0f GB/s", gbps) : xasprintf("%.1f GB/s", gbps);
}

static char *fmt_share(double part, double whole)
{
	return xasprintf("%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

/* {key} in tmpl replaced by its value in kv (key, value, ..., NULL). */
static char *expand(const char *tmpl, const char *const *kv)
{
	struct buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			bool done = false;
			for (size_t i = 0; close && kv[i]; i += 2)
				if (strlen(kv[i]) == (size_t)(close - p - 1) && !strncmp(kv[i], p + 1, (size_t)(close - p - 1))) {
					buf_puts(&b, kv[i + 1] ? kv[i + 1] : "?");
					p = close + 1;
					done = true;
					break;
				}
			if (done)
				continue;
		}
		buf_putc(&b, *p++);
	}
	return buf_steal(&b);
}

/* ---- lines ---- */

/* A library file as people name it: below site-packages, else its last two
 * path components ("fakelib/__init__.py"). */
static const char *short_lib(const char *f)
{
	const char *p = strstr(f, "site-packages/");
	if (p)
		return p + strlen("site-packages/");
	p = strstr(f, "dist-packages/");
	if (p)
		return p + strlen("dist-packages/");
	const char *last = strrchr(f, '/');
	if (!last)
		return f;
	const char *prev = last;
	while (prev > f && prev[-1] != '/')
		prev--;
	return prev > f ? prev : last + 1;
}

bool trace_site_runtime_thread(const struct trace_site *s)
{
	return !strcmp(s->lib_file, TRACE_RUNTIME_THREAD);
}

static char *site_label(const struct trace_site *s, const char *cwd)
{
	if (!s->file[0])
		return xstrdup("(no Python frame)");
	const char *f = s->file;
	char here[4096];
	if (!cwd && getcwd(here, sizeof here))
		cwd = here;
	size_t n = cwd ? strlen(cwd) : 0;
	if (n && !strncmp(f, cwd, n) && f[n] == '/')
		f += n + 1;
	struct buf b = {0};
	buf_printf(&b, "%s:%u", f, s->line);
	if (s->func[0] && strcmp(s->func, "<module>") != 0)
		buf_printf(&b, " (%s)", s->func);
	if (trace_site_runtime_thread(s))
		buf_puts(&b, " on a runtime thread (its Python call came before)");
	else if (s->lib_file[0])
		buf_printf(&b, " via %s:%u %s", short_lib(s->lib_file), s->lib_line, s->lib_func);
	return buf_steal(&b);
}

struct merge {
	const char *cwd;
	struct symtab index;
	struct ptrvec lines; /* struct trace_line * */
	uint32_t **map;      /* per process: site -> line index */
};

static uint32_t line_of(struct merge *m, const struct trace_site *s)
{
	char *key = xasprintf("%s\x1f%u\x1f%s\x1f%s\x1f%u\x1f%s", s->file, s->line, s->func, s->lib_file,
			      s->lib_line, s->lib_func);
	const struct binding *b = symtab_get(&m->index, key, strlen(key));
	uint32_t id;
	if (b) {
		id = (uint32_t)b->func;
	} else {
		id = (uint32_t)m->lines.len;
		struct trace_line *l = xcalloc(1, sizeof *l);
		l->site = *s;
		l->label = site_label(s, m->cwd);
		ptrvec_push(&m->lines, l);
		symtab_set(&m->index, key, strlen(key), B_FUNC, NULL, (int)id);
	}
	free(key);
	return id;
}

static void add_copy(struct trace_copy *a, const struct trace_copy *b)
{
	a->n += b->n;
	a->bytes += b->bytes;
	a->ns += b->ns;
	a->sync += b->sync;
}

static int cmp_line(const void *a, const void *b)
{
	const struct trace_line *x = a, *y = b;
	if (x->cost_ns != y->cost_ns)
		return x->cost_ns > y->cost_ns ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* qsort has no context argument: the lines being sorted by index. */
static struct trace_line **sort_lines;

static int cmp_line_idx(const void *a, const void *b)
{
	return cmp_line(sort_lines[*(const size_t *)a], sort_lines[*(const size_t *)b]);
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct trace_kernel_row *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_finding(const void *a, const void *b)
{
	const struct trace_finding *x = a, *y = b;
	if (x->cost_s != y->cost_s)
		return x->cost_s > y->cost_s ? -1 : 1;
	return (int)x->rule - (int)y->rule;
}

/* ---- building the tables ---- */

struct ctx {
	const struct trace *t;
	const struct trace_config *cfg;
	struct trace_report *r;
	struct merge m;
	struct ptrvec findings;
	double wall_ns;
	bool *roundtrip_line; /* lines a roundtrip-storm finding is about */
	bool sync_bound;      /* a sync-bound finding was made */
	double pageable_excess; /* copy time pageable-transfer findings explain (beyond pinned rates) */
	uint64_t copy_ns_added; /* GPU time of copies the records missed (copies_to_calls) */
	double *idle_scale;   /* per process: what its estimated idle times are taken at (idle_scale_of) */
};

/* A stream's device span less its busy time: what its idle time can be. */
static uint64_t stream_idle_cap(const struct trace_process *p, const struct trace_stream *s)
{
	for (size_t k = 0; k < p->ndevices; k++) {
		const struct trace_device *d = &p->devices[k];
		if (d->id != s->device)
			continue;
		uint64_t span = d->last > d->first ? d->last - d->first : 0;
		return span > s->busy_ns ? span - s->busy_ns : 0;
	}
	return UINT64_MAX;
}

static uint64_t stream_idle(const struct trace_stream *s)
{
	return s->host_wait_ns + s->kernel_wait_ns + s->other_ns;
}

/* Sampled runs estimate idle time from the gaps recorded in the windows,
 * scaled by count; but recording slows the launches, so those gaps are
 * longer than the others and the estimate runs high (on the H200, 1.63 s
 * of idle and 0.09 s busy in a 1.55 s GPU phase). A stream's idle time is
 * at most its device's span less its busy time: where the estimate passes
 * that, the process's idle times (the streams' and the gaps by line) are
 * taken down in proportion. 1 for runs recorded whole. */
static double idle_scale_of(const struct trace_process *p)
{
	if (!p->sampled_launches)
		return 1.0;
	double scale = 1.0;
	for (size_t k = 0; k < p->nstreams; k++) {
		uint64_t idle = stream_idle(&p->streams[k]), cap = stream_idle_cap(p, &p->streams[k]);
		if (idle > cap && (double)cap / (double)idle < scale)
			scale = (double)cap / (double)idle;
	}
	return scale;
}

static uint64_t scaled_idle(const struct ctx *c, size_t proc, uint64_t ns)
{
	return (uint64_t)((double)ns * c->idle_scale[proc] + 0.5);
}

static uint64_t gap_ns(const struct ctx *c, size_t proc, const struct trace_gap *g)
{
	return scaled_idle(c, proc, g->ns);
}

/* A sampled line's copies, as its records estimate them, brought to the
 * copies its calls made (the callbacks' exact count and bytes, by
 * direction): the records' time per byte, per kind of host memory, applied
 * to the bytes copied. Where the records were off through a fast stretch
 * (a window-less one), the emitter's estimate, scaled from the few copies
 * made as they went off, saw 9 copies of 48 (H200, a CuPy loop copying
 * 12 MiB back per frame). Returns the GPU time it added. */
static uint64_t copies_to_calls(struct trace_line *l)
{
	uint64_t added = 0;
	if (!l->estimated || !l->has_calls)
		return 0;
	for (int d = DIR_H2D; d <= DIR_D2D; d++) {
		const struct trace_copy *calls = &l->copy_calls[d];
		uint64_t bytes = 0, n = 0;
		for (int h = 0; h < HK_COUNT; h++) {
			bytes += l->copy[d][h].bytes;
			n += l->copy[d][h].n;
		}
		if (!bytes || !calls->bytes || (calls->bytes == bytes && calls->n == n))
			continue;
		double by = (double)calls->bytes / (double)bytes, by_n = (double)calls->n / (double)(n ? n : 1);
		for (int h = 0; h < HK_COUNT; h++) {
			struct trace_copy *cp = &l->copy[d][h];
			uint64_t ns = (uint64_t)((double)cp->ns * by + 0.5);
			added += ns > cp->ns ? ns - cp->ns : 0;
			cp->ns = ns;
			cp->bytes = (uint64_t)((double)cp->bytes * by + 0.5);
			cp->sync = (uint64_t)((double)cp->sync * by_n + 0.5);
			cp->n = (uint64_t)((double)cp->n * by_n + 0.5);
		}
	}
	return added;
}

static void build_lines(struct ctx *c)
{
	const struct trace *t = c->t;
	c->m.map = xcalloc(t->nprocs + 1, sizeof *c->m.map);
	c->m.cwd = t->cwd;
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct trace_process *p = &t->procs[i];
		c->m.map[i] = xcalloc(p->nsites + 1, sizeof **c->m.map);
		for (size_t s = 0; s < p->nsites; s++)
			c->m.map[i][s] = line_of(&c->m, &p->sites[s]);
		for (size_t k = 0; k < p->nstats; k++) {
			const struct trace_site_stats *st = &p->stats[k];
			struct trace_line *l = c->m.lines.items[c->m.map[i][st->site]];
			for (int op = 0; op < OP_COUNT; op++) {
				l->api_n[op] += st->api_n[op];
				l->api_ns[op] += st->api_ns[op];
			}
			l->kernels += st->kernels;
			l->kernel_ns += st->kernel_ns;
			l->kernel_short += st->kernel_short;
			for (int d = 0; d < DIR_COUNT; d++)
				for (int h = 0; h < HK_COUNT; h++)
					add_copy(&l->copy[d][h], &st->copy[d][h]);
			add_copy(&l->memset, &st->memset);
			for (int d = 0; d < DIR_COUNT; d++)
				add_copy(&l->copy_calls[d], &st->copy_calls[d]);
			l->drained_n += st->drained_n;
			l->drained_ns += st->drained_ns;
			l->has_calls |= st->has_calls;
			l->estimated |= p->sampled_launches > 0;
		}
		for (size_t k = 0; k < p->ngaps; k++) {
			const struct trace_gap *g = &p->gaps[k];
			((struct trace_line *)c->m.lines.items[c->m.map[i][g->prev_site]])->idle_after_ns += gap_ns(c, i, g);
			((struct trace_line *)c->m.lines.items[c->m.map[i][g->next_site]])->idle_before_ns += gap_ns(c, i, g);
		}
	}
	struct trace_report *r = c->r;
	size_t n = c->m.lines.len;
	size_t *idx = xcalloc(n + 1, sizeof *idx), *where = xcalloc(n + 1, sizeof *where);
	for (size_t i = 0; i < n; i++)
		c->copy_ns_added += copies_to_calls(c->m.lines.items[i]);
	for (size_t i = 0; i < n; i++) {
		struct trace_line *l = c->m.lines.items[i];
		uint64_t host = 0;
		for (int op = 1; op < OP_COUNT; op++)
			host += l->api_ns[op];
		l->gpu_ns = l->kernel_ns + l->memset.ns;
		for (int d = 0; d < DIR_COUNT; d++)
			for (int h = 0; h < HK_COUNT; h++)
				l->gpu_ns += l->copy[d][h].ns;
		l->cost_ns = host > l->gpu_ns ? host : l->gpu_ns;
		idx[i] = i;
	}
	sort_lines = (struct trace_line **)c->m.lines.items;
	qsort(idx, n, sizeof *idx, cmp_line_idx);
	r->lines = xcalloc(n + 1, sizeof *r->lines);
	r->nlines = n;
	for (size_t k = 0; k < n; k++) {
		r->lines[k] = *(struct trace_line *)c->m.lines.items[idx[k]];
		where[idx[k]] = k;
	}
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t s = 0; s < t->procs[i].nsites; s++)
			c->m.map[i][s] = (uint32_t)where[c->m.map[i][s]];
	free(idx);
	free(where);
	for (size_t i = 0; i < n; i++)
		free(c->m.lines.items[i]); /* their labels moved into r->lines */
	ptrvec_free(&c->m.lines);
}

/* True when a sampled process's records do not cover its sampled stretch:
 * it opened no window (the default), or its windows kept under half the
 * kernel records of the launches made in them (the report's "records
 * lost"). */
static bool records_lost(const struct trace_process *p)
{
	return p->sampled_launches && (!p->sample_windows || p->sample_kernels * 2 < p->recorded_launches);
}

/* The end of a GPU span of p from first to last (its records' last):
 * where p's windows lost their records, the GPU's last record comes before
 * the launches sampled, and the span runs on to the last of those launches
 * (the same clock). */
static uint64_t span_end(const struct trace_process *p, uint64_t first, uint64_t last)
{
	return records_lost(p) && first && p->sample_last_launch > last ? p->sample_last_launch : last;
}

/* Of a process's GPU phase of span ns: what neither its warm-up, its GPU
 * busy time nor its recorded idle time explains (0 when they explain it). */
static uint64_t unexplained_ns(const struct ctx *c, size_t proc, uint64_t span)
{
	const struct trace_process *p = &c->t->procs[proc];
	uint64_t known = 0;
	for (size_t k = 0; k < p->ndevices; k++)
		known += p->devices[k].busy_ns;
	for (size_t k = 0; k < p->nstreams; k++) {
		const struct trace_stream *s = &p->streams[k];
		known += s->warmup_ns + scaled_idle(c, proc, s->host_wait_ns) +
			 scaled_idle(c, proc, s->kernel_wait_ns) + scaled_idle(c, proc, s->other_ns);
	}
	return span > known ? span - known : 0;
}

static void build_budget(struct ctx *c)
{
	const struct trace *t = c->t;
	struct trace_budget *b = &c->r->budget;
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct trace_process *p = &t->procs[i];
		if (p->t_last > p->t_first && p->t_first)
			b->span_ns += p->t_last - p->t_first;
		for (size_t k = 0; k < p->nstreams; k++) {
			const struct trace_stream *s = &p->streams[k];
			b->host_wait_ns += scaled_idle(c, i, s->host_wait_ns);
			b->kernel_wait_ns += scaled_idle(c, i, s->kernel_wait_ns);
			b->other_ns += scaled_idle(c, i, s->other_ns);
			b->host_wait_n += s->host_wait_n;
			b->kernel_wait_n += s->kernel_wait_n;
			b->other_n += s->other_n;
			b->held_ns += scaled_idle(c, i, s->held_ns);
			b->held_n += s->held_n;
			b->warmup_ns += s->warmup_ns; /* recorded whole, not estimated */
			b->warmup_n += s->warmup_n;
		}
		for (size_t k = 0; k < p->ndevices; k++)
			b->busy_ns += p->devices[k].busy_ns;
		b->records += p->records;
		b->dropped += p->dropped;
		b->untimed += p->untimed;
		b->unattributed += p->unattributed;
		b->events += p->nevents;
		b->events_dropped += p->events_dropped;
		b->sampled_launches += p->sampled_launches;
		b->recorded_launches += p->recorded_launches;
		b->sample_windows += p->sample_windows;
		b->sample_kernels += p->sample_kernels;
		b->sample_toggle_errors += p->sample_toggle_errors;
		b->sample_unseen_allocs += p->sample_unseen_allocs;
		for (size_t k = 0; k < p->noverhead; k++)
			b->overhead_ns += p->overhead[k].ns;
	}
	for (size_t i = 0; i < c->r->nlines; i++) {
		const struct trace_line *l = &c->r->lines[i];
		b->kernel_ns += l->kernel_ns;
		b->kernels += l->kernels;
		b->memset_ns += l->memset.ns;
		b->launches += l->api_n[OP_LAUNCH];
		b->launch_ns += l->api_ns[OP_LAUNCH];
		b->sync_n += l->api_n[OP_SYNC];
		b->sync_ns += l->api_ns[OP_SYNC];
		b->alloc_n += l->api_n[OP_ALLOC];
		b->alloc_ns += l->api_ns[OP_ALLOC];
		b->free_n += l->api_n[OP_FREE];
		b->free_ns += l->api_ns[OP_FREE];
		b->memcpy_api_ns += l->api_ns[OP_MEMCPY];
		for (int d = 0; d < DIR_COUNT; d++)
			for (int h = 0; h < HK_COUNT; h++)
				add_copy(&b->copy[d][h], &l->copy[d][h]);
	}
	b->busy_ns += c->copy_ns_added;
	/* the longest warm-up wait, where it was: what was taken off the GPU phase, to check */
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i].ngaps; k++) {
			const struct trace_gap *g = &t->procs[i].gaps[k];
			if (g->cls == GAP_CLASS_WARMUP && g->max_ns > b->warmup_max_ns) {
				b->warmup_max_ns = g->max_ns;
				b->warmup_after = c->r->lines[c->m.map[i][g->prev_site]].label;
				b->warmup_until = c->r->lines[c->m.map[i][g->next_site]].label;
			}
		}
	b->wall_s = t->wall_s > 0 ? t->wall_s : (double)b->span_ns / 1e9;
	/* Shares are of the GPU phase: from each process's first GPU operation
	 * to its last, less the warm-up (the host compiling or loading a
	 * kernel before its first launch, starting a library). Interpreter
	 * start-up, imports and one-time initialisation are not the loop's. */
	uint64_t phase = 0;
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct trace_process *p = &t->procs[i];
		uint64_t first = 0, last = 0;
		for (size_t k = 0; k < p->ndevices; k++) {
			const struct trace_device *d = &p->devices[k];
			if (d->first && (!first || d->first < first))
				first = d->first;
			if (d->last > last)
				last = d->last;
		}
		/* records lost: what of the phase the records do not explain
		 * is idle time that cannot be split */
		last = span_end(p, first, last);
		if (last > first) {
			phase += last - first;
			if (records_lost(p))
				b->other_ns += unexplained_ns(c, i, last - first);
		}
	}
	b->phase_ns = phase > b->warmup_ns ? phase - b->warmup_ns : 0;
	c->wall_ns = b->phase_ns ? (double)b->phase_ns : b->span_ns ? (double)b->span_ns : b->wall_s * 1e9;
	b->run_ns = (uint64_t)c->wall_ns;
}

static void build_devices(struct ctx *c)
{
	const struct trace *t = c->t;
	struct trace_report *r = c->r;
	size_t cap = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		cap += t->procs[i].ndevices;
	r->devices = xcalloc(cap + 1, sizeof *r->devices);
	json_t *gpus = json_object_get(t->gpu, "devices");
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i].ndevices; k++) {
			const struct trace_device *d = &t->procs[i].devices[k];
			struct trace_device_row *row = NULL;
			for (size_t j = 0; j < r->ndevices; j++)
				if (r->devices[j].id == d->id)
					row = &r->devices[j];
			if (!row) {
				row = &r->devices[r->ndevices++];
				row->id = d->id;
				size_t gi;
				json_t *g;
				json_array_foreach(gpus, gi, g) {
					json_t *ci = json_object_get(g, "cuda_index");
					if ((json_is_integer(ci) ? (uint32_t)json_integer_value(ci) : (uint32_t)gi) == d->id) {
						row->name = json_string_value(json_object_get(g, "name"));
						json_t *mt = json_object_get(g, "memory_total_bytes");
						double v = json_is_number(mt) ? json_number_value(mt) : 0;
						/* a saved trace is input: a size out of range is no size */
						row->memory_total = v >= 0 && v < 18446744073709551616.0 ? (uint64_t)v : 0;
					}
				}
			}
			row->busy_ns += d->busy_ns;
			row->kernel_ns += d->kernel_ns;
			row->memcpy_ns += d->memcpy_ns;
			row->memset_ns += d->memset_ns;
			row->kernels += d->kernels;
			row->memcpys += d->memcpys;
			row->memsets += d->memsets;
			uint64_t last = span_end(&t->procs[i], d->first, d->last);
			row->span_ns += last > d->first ? last - d->first : 0;
			if (d->mem_peak > row->mem_peak)
				row->mem_peak = d->mem_peak;
			row->allocs += d->allocs;
			row->frees += d->frees;
		}
}

static void build_kernels(struct ctx *c)
{
	const struct trace *t = c->t;
	struct trace_report *r = c->r;
	struct symtab idx = {0};
	size_t cap = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		cap += t->procs[i].nkernels;
	r->kernels = xcalloc(cap + 1, sizeof *r->kernels);
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i].nkernels; k++) {
			const struct trace_kernel *kr = &t->procs[i].kernels[k];
			const struct binding *b = symtab_get(&idx, kr->name, strlen(kr->name));
			struct trace_kernel_row *row;
			if (b) {
				row = &r->kernels[b->func];
				if (kr->min < row->min)
					row->min = kr->min;
				if (kr->max > row->max)
					row->max = kr->max;
			} else {
				symtab_set(&idx, kr->name, strlen(kr->name), B_FUNC, NULL, (int)r->nkernels);
				row = &r->kernels[r->nkernels++];
				row->name = kr->name;
				row->min = kr->min;
				row->max = kr->max;
			}
			row->n += kr->n;
			row->ns += kr->ns;
		}
	symtab_free(&idx);
	qsort(r->kernels, r->nkernels, sizeof *r->kernels, cmp_kernel);
}

static void build_nvtx(struct ctx *c)
{
	const struct trace *t = c->t;
	struct trace_report *r = c->r;
	size_t cap = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		cap += t->procs[i].nnvtx;
	r->nvtx = xcalloc(cap + 1, sizeof *r->nvtx);
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i].nnvtx; k++) {
			const struct trace_nvtx *n = &t->procs[i].nvtx[k];
			const char *where = r->lines[c->m.map[i][n->site]].label;
			struct trace_nvtx_row *row = NULL;
			for (size_t j = 0; j < r->nnvtx; j++)
				if (!strcmp(r->nvtx[j].domain, n->domain) && !strcmp(r->nvtx[j].name, n->name) &&
				    !strcmp(r->nvtx[j].where, where) && r->nvtx[j].mark == n->mark)
					row = &r->nvtx[j];
			if (!row) {
				row = &r->nvtx[r->nnvtx++];
				row->domain = n->domain;
				row->name = n->name;
				row->where = where;
				row->mark = n->mark;
			}
			row->n += n->n;
			row->ns += n->ns;
		}
}

/* ---- the rules ---- */

static double th(const struct ctx *c, enum trace_threshold k)
{
	return c->cfg->th[k];
}

/* Whether cost_ns is worth a finding. */
static bool matters(const struct ctx *c, double cost_ns)
{
	return cost_ns >= th(c, TH_MIN_RULE_SHARE) * c->wall_ns && cost_ns >= th(c, TH_MIN_RULE_SECONDS) * 1e9;
}

static void add_finding(struct ctx *c, enum trace_rule rule, double cost_ns, const char *where,
			const char *const *kv)
{
	struct trace_finding *f = xcalloc(1, sizeof *f);
	f->rule = rule;
	f->text = &c->cfg->rules[rule];
	f->cost_s = cost_ns / 1e9;
	f->where = where ? xstrdup(where) : NULL;
	f->evidence = expand(f->text->evidence, kv);
	ptrvec_push(&c->findings, f);
}

static uint64_t d2h_small(const struct trace_line *l, uint64_t *n, uint64_t *bytes, uint64_t *sync)
{
	*n = *bytes = *sync = 0;
	uint64_t ns = 0;
	for (int h = 0; h < HK_COUNT; h++) {
		*n += l->copy[DIR_D2H][h].n;
		*bytes += l->copy[DIR_D2H][h].bytes;
		*sync += l->copy[DIR_D2H][h].sync;
		ns += l->copy[DIR_D2H][h].ns;
	}
	return ns;
}

/* The host-wait gaps whose earlier call was from `line` and of one of the ops in mask. */
static uint64_t gaps_after(const struct ctx *c, size_t line, unsigned op_mask)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < c->t->nprocs; i++)
		for (size_t k = 0; k < c->t->procs[i].ngaps; k++) {
			const struct trace_gap *g = &c->t->procs[i].gaps[k];
			if (c->m.map[i][g->prev_site] == line && (op_mask & (1u << g->prev_op)) &&
			    g->cls != GAP_CLASS_WARMUP)
				ns += gap_ns(c, i, g);
		}
	return ns;
}

/* The GPU idle after line's calls of the ops in mask drained it: as the
 * API callbacks measured it on the host, for every call (exact, sampled or
 * not), where the tracer wrote it; else the host-wait gaps of the records. */
static uint64_t idle_after(const struct ctx *c, size_t line, unsigned op_mask)
{
	const struct trace_line *l = &c->r->lines[line];
	return l->has_calls ? l->drained_ns : gaps_after(c, line, op_mask);
}

/* "8 B", or "about 6 B" when the copies' sizes differ (or are estimated). */
static char *fmt_each(uint64_t bytes, uint64_t n, bool exact)
{
	uint64_t each = (bytes + n / 2) / n;
	char *b = trace_fmt_bytes(each);
	if (exact && each * n == bytes)
		return b;
	char *s = xasprintf("about %s", b);
	free(b);
	return s;
}

/* Of idle time the GPU spent waiting for the host after a drain (a copy
 * back, a synchronize): what not draining could save. Without the drain
 * the host's work would run while queued GPU work runs, so the saving is
 * at most the GPU work there is to overlap with: the GPU's busy time. Idle
 * beyond it is host work that keeps the GPU waiting with or without the
 * drain (gpu-starved's, not the drain's): on the H200 a JAX training loop
 * that batched on the host for 15 ms per step, copying 8 KiB back each
 * step, read as 24 s of round trips in a 12.8 s GPU phase with 0.2 s of
 * GPU work. */
static uint64_t overlap_bound(const struct ctx *c, uint64_t idle)
{
	uint64_t busy = c->r->budget.busy_ns;
	return idle < busy ? idle : busy;
}

/* The evidence's {overlap}: "" when the bound took nothing off idle, else
 * why the finding costs less than the idle it names. Owned. */
static char *overlap_note(const struct ctx *c, uint64_t idle)
{
	if (overlap_bound(c, idle) >= idle)
		return xstrdup("");
	char *busy = trace_fmt_ns(c->r->budget.busy_ns);
	char *s = xasprintf(" (the GPU had only %s of work in all to overlap with the host's, so not draining "
			    "saves at most that much of it)", busy);
	free(busy);
	return s;
}

static void rule_roundtrip(struct ctx *c)
{
	for (size_t i = 0; i < c->r->nlines; i++) {
		const struct trace_line *l = &c->r->lines[i];
		uint64_t n, bytes, sync;
		uint64_t copy_ns = d2h_small(l, &n, &bytes, &sync);
		/* counts and sizes from the callbacks (every call) where they read them */
		bool exact = !l->estimated;
		if (l->copy_calls[DIR_D2H].n) {
			n = l->copy_calls[DIR_D2H].n;
			bytes = l->copy_calls[DIR_D2H].bytes;
			exact = true;
		}
		if (n < th(c, TH_ROUNDTRIP_MIN_COUNT) || (double)bytes / (double)n > th(c, TH_ROUNDTRIP_MAX_BYTES))
			continue;
		uint64_t idle = idle_after(c, i, 1u << OP_MEMCPY | 1u << OP_SYNC);
		/* what copying back once would save: the copies, the idle after
		 * them that the host's work could overlap with GPU work, and the
		 * host time the calls took beyond any GPU work they could have been
		 * waiting for (their own latency: at least that much) */
		uint64_t calls = l->api_ns[OP_MEMCPY] + l->api_ns[OP_SYNC], busy = c->r->budget.busy_ns;
		double cost = (double)(overlap_bound(c, idle) + copy_ns + (calls > busy ? calls - busy : 0));
		if (!matters(c, cost))
			continue;
		c->roundtrip_line[i] = true;
		char *count = xasprintf("%s%llu", exact ? "" : "about ", (unsigned long long)n);
		char *each = fmt_each(bytes, n, exact);
		char *idle_s = trace_fmt_ns(idle), *host = trace_fmt_ns(l->api_ns[OP_MEMCPY] + l->api_ns[OP_SYNC]);
		char *overlap = overlap_note(c, idle);
		const char *kv[] = {"site", l->label, "count", count, "each", each, "idle_s", idle_s,
				    "host_s", host, "overlap", overlap, NULL};
		add_finding(c, R_ROUNDTRIP_STORM, cost, l->label, kv);
		free(overlap);
		free(count);
		free(each);
		free(idle_s);
		free(host);
	}
}

static void rule_sync(struct ctx *c)
{
	uint64_t count = 0, idle = 0, top_n = 0;
	size_t top = 0;
	for (size_t i = 0; i < c->r->nlines; i++) {
		if (c->roundtrip_line[i])
			continue;
		const struct trace_line *l = &c->r->lines[i];
		count += l->api_n[OP_SYNC];
		if (l->api_n[OP_SYNC] > top_n) {
			top_n = l->api_n[OP_SYNC];
			top = i;
		}
		if (l->api_n[OP_SYNC])
			idle += idle_after(c, i, 1u << OP_SYNC);
	}
	double cost = (double)overlap_bound(c, idle);
	if (count < th(c, TH_SYNC_MIN_COUNT) || !matters(c, cost))
		return;
	char *n = xasprintf("%llu", (unsigned long long)count), *sn = xasprintf("%llu", (unsigned long long)top_n);
	char *idle_s = trace_fmt_ns(idle);
	const struct trace_line *l = &c->r->lines[top];
	char *overlap = overlap_note(c, idle);
	const char *kv[] = {"count", n, "site", l->label, "site_count", sn, "idle_s", idle_s, "overlap", overlap, NULL};
	add_finding(c, R_SYNC_BOUND, cost, l->label, kv);
	c->sync_bound = true;
	free(overlap);
	free(n);
	free(sn);
	free(idle_s);
}

/* Host-wait gaps ending at `line`, split by whether they were short (launch
 * overhead) or long (host work). */
/* Host-wait gaps between a launch and the next call of `line`: short ones
 * are launch overhead, long ones host work. */
static void gaps_before(const struct ctx *c, size_t line, uint64_t *short_ns, uint64_t *long_ns)
{
	*short_ns = *long_ns = 0;
	for (size_t i = 0; i < c->t->nprocs; i++)
		for (size_t k = 0; k < c->t->procs[i].ngaps; k++) {
			const struct trace_gap *g = &c->t->procs[i].gaps[k];
			if (c->m.map[i][g->next_site] != line || g->prev_op != OP_LAUNCH)
				continue;
			if (g->cls == GAP_CLASS_SHORT)
				*short_ns += gap_ns(c, i, g);
			else if (g->cls == GAP_CLASS_LONG)
				*long_ns += gap_ns(c, i, g);
		}
}

static void rule_launch(struct ctx *c)
{
	for (size_t i = 0; i < c->r->nlines; i++) {
		const struct trace_line *l = &c->r->lines[i];
		if (l->api_n[OP_LAUNCH] < th(c, TH_LAUNCH_MIN_COUNT) || !l->kernels ||
		    (double)l->kernel_short < th(c, TH_LAUNCH_SHORT_SHARE) * (double)l->kernels)
			continue;
		uint64_t short_ns, long_ns;
		gaps_before(c, i, &short_ns, &long_ns);
		double cost = (double)short_ns;
		if (l->api_ns[OP_LAUNCH] > l->kernel_ns && (double)(l->api_ns[OP_LAUNCH] - l->kernel_ns) > cost)
			cost = (double)(l->api_ns[OP_LAUNCH] - l->kernel_ns);
		if (!matters(c, cost))
			continue;
		char *n = xasprintf("%llu", (unsigned long long)l->api_n[OP_LAUNCH]);
		char *sh = xasprintf("%llu", (unsigned long long)l->kernel_short);
		char *ks = trace_fmt_ns(l->kernel_ns), *ls = trace_fmt_ns(l->api_ns[OP_LAUNCH]);
		char *gap = trace_fmt_ns(short_ns);
		const char *kv[] = {"site", l->label, "count", n, "short", sh, "kernel_s", ks, "launch_s", ls,
				    "idle_s", gap, NULL};
		add_finding(c, R_LAUNCH_BOUND, cost, l->label, kv);
		free(n);
		free(sh);
		free(ks);
		free(ls);
		free(gap);
	}
}

/* Where the host worked while the GPU waited, between a call of line a and
 * the next call, of line b (neither of which is the host work: the
 * lines between make no CUDA call). Owned. */
static char *host_work(const struct trace_line *a, const struct trace_line *b)
{
	const struct trace_site *x = &a->site, *y = &b->site;
	bool same_file = x->file[0] && !strcmp(x->file, y->file);
	const char *base = strrchr(x->file, '/');
	base = base ? base + 1 : x->file;
	if (!x->file[0] || !y->file[0])
		return xstrdup("the calls come from a thread with no Python frame (a runtime's own thread, as JAX's "
			       "and PyTorch's autograd use), so no line of yours can be named for them");
	if (a == b && trace_site_runtime_thread(x))
		return xasprintf("the host work is the rest of the loop around %s:%u, whose GPU work a runtime thread "
				 "runs: the lines of the loop that hand it no work", base, x->line);
	if (a == b && x->lib_file[0])
		return xasprintf("the host work is inside %s at %s:%u, between its own CUDA calls (the library "
				 "preparing data on the host)", x->lib_func[0] ? x->lib_func : "the library call", base,
				 x->line);
	if (a == b || (same_file && x->line == y->line))
		return xasprintf("the host work is the rest of the loop around %s:%u: the lines that make no CUDA call, "
				 "between one pass over it and the next", base, x->line);
	if (same_file && x->line + 1 == y->line && ((x->lib_file[0] && !trace_site_runtime_thread(x)) ||
						     (y->lib_file[0] && !trace_site_runtime_thread(y))))
		return xasprintf("no line of yours runs between them: the host time is inside the library calls "
				 "themselves (%s returning, %s before its first GPU work): launch overhead of many small "
				 "steps", x->lib_func[0] ? x->lib_func : "the first", y->lib_func[0] ? y->lib_func : "the next");
	if (same_file && x->line + 2 == y->line)
		return xasprintf("the host work is on %s line %u, which makes no CUDA call", base, x->line + 1);
	if (same_file && x->line + 1 < y->line)
		return xasprintf("the host work is on %s lines %u-%u, which make no CUDA call", base, x->line + 1,
				 y->line - 1);
	if (same_file && y->line < x->line)
		return xasprintf("the host work is after line %u of %s, and before line %u in the loop's next pass",
				 x->line, base, y->line);
	return xstrdup("the host work runs between those two calls");
}

static double churn_ns(const struct trace_budget *b);
static bool churn_claimed(const struct ctx *c);

/* The long waits between a call of one line and the next call, of another. */
struct wait_pair {
	size_t prev, next;
	uint64_t ns, n, max;
};

static int cmp_wait_desc(const void *a, const void *b)
{
	uint64_t x = ((const struct wait_pair *)a)->ns, y = ((const struct wait_pair *)b)->ns;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Takes out of the pairs' waits the host time of the allocations and frees
 * their lines made, when memory-pressure claims that time: a free and a
 * new allocation every step keep the GPU waiting inside the wait between
 * two GPU calls, and were counted twice (set5's diffusion_pool_free: 50%
 * gpu-starved and 43% memory-pressure at one line). Each line's churn
 * (its allocation and free time, as memory-pressure counts them) is taken
 * once, from the largest waits first. */
static void take_out_churn(const struct ctx *c, struct wait_pair *pairs, size_t npairs)
{
	if (!churn_claimed(c))
		return;
	const struct trace_budget *b = &c->r->budget;
	double all = (double)(b->alloc_ns + b->free_ns), share = all > 0 ? churn_ns(b) / all : 0;
	double *left = xcalloc(c->r->nlines + 1, sizeof *left);
	for (size_t i = 0; i < c->r->nlines; i++)
		left[i] = share * (double)(c->r->lines[i].api_ns[OP_ALLOC] + c->r->lines[i].api_ns[OP_FREE]);
	qsort(pairs, npairs, sizeof *pairs, cmp_wait_desc);
	for (size_t j = 0; j < npairs; j++) {
		struct wait_pair *p = &pairs[j];
		size_t ends[2] = {p->prev, p->next};
		for (int e = 0; e < (p->prev == p->next ? 1 : 2); e++) {
			double take = left[ends[e]] < (double)p->ns ? left[ends[e]] : (double)p->ns;
			p->ns -= (uint64_t)take;
			left[ends[e]] -= take;
		}
	}
	free(left);
}

static void rule_starved(struct ctx *c)
{
	/* Long host-wait gaps by (previous line, next line). A gap after a
	 * drain (a synchronize, a round trip's copy back) is the drain
	 * finding's when one was made; when none was (the drains, bounded by
	 * the GPU work there was to overlap, explain too little), it is host
	 * work like any other and counts here (set5's first reading: two
	 * processes each copying a scalar back every step, the GPU busy 1% of
	 * its phase, read as nothing at all). */
	uint64_t total = 0, best = 0, best_n = 0, best_max = 0;
	size_t best_prev = 0, best_next = 0;
	struct wait_pair *pairs = NULL;
	size_t npairs = 0, cap = 0;
	for (size_t i = 0; i < c->t->nprocs; i++)
		for (size_t k = 0; k < c->t->procs[i].ngaps; k++) {
			const struct trace_gap *g = &c->t->procs[i].gaps[k];
			/* a wait before a thread's first CUDA call is that thread starting (a
			 * runtime's worker, a compile), not host work between GPU calls */
			if (g->cls != GAP_CLASS_LONG || g->prev_op == OP_NONE)
				continue;
			size_t prev = c->m.map[i][g->prev_site], next = c->m.map[i][g->next_site];
			bool drain = g->prev_op == OP_SYNC || g->prev_op == OP_MEMCPY;
			if ((g->prev_op == OP_SYNC && c->sync_bound) || (drain && c->roundtrip_line[prev]))
				continue;
			size_t j;
			for (j = 0; j < npairs; j++)
				if (pairs[j].prev == prev && pairs[j].next == next)
					break;
			if (j == npairs) {
				if (npairs == cap) {
					cap = cap ? cap * 2 : 16;
					pairs = xrealloc(pairs, cap * sizeof *pairs);
				}
				pairs[npairs].prev = prev;
				pairs[npairs].next = next;
				pairs[npairs].ns = pairs[npairs].n = pairs[npairs].max = 0;
				npairs++;
			}
			pairs[j].ns += gap_ns(c, i, g);
			pairs[j].n += g->n;
			if (g->max_ns > pairs[j].max)
				pairs[j].max = g->max_ns;
		}
	take_out_churn(c, pairs, npairs);
	/* one-off waits (start-up, compiles) are no loop's host work */
	for (size_t j = 0; j < npairs; j++)
		if ((double)pairs[j].n >= th(c, TH_STARVED_MIN_GAPS))
			total += pairs[j].ns;
	for (size_t j = 0; j < npairs; j++)
		if ((double)pairs[j].n >= th(c, TH_STARVED_MIN_GAPS) && pairs[j].ns > best) {
			best = pairs[j].ns;
			best_n = pairs[j].n;
			best_max = pairs[j].max;
			best_prev = pairs[j].prev;
			best_next = pairs[j].next;
		}
	free(pairs);
	/* streams wait side by side: the GPU is idle at most its phase less its busy time */
	double device_idle = c->wall_ns > (double)c->r->budget.busy_ns ? c->wall_ns - (double)c->r->budget.busy_ns : 0;
	if ((double)total > device_idle)
		total = (uint64_t)device_idle;
	if (!best || !matters(c, (double)total))
		return;
	char *idle = trace_fmt_ns(total), *share = fmt_share((double)total, c->wall_ns);
	char *n = xasprintf("%llu", (unsigned long long)best_n), *mx = trace_fmt_ns(best_max);
	const char *prev = c->r->lines[best_prev].label, *next = c->r->lines[best_next].label;
	char *work = host_work(&c->r->lines[best_prev], &c->r->lines[best_next]);
	const char *kv[] = {"idle_s", idle, "share", share, "prev_site", prev, "next_site", next,
			    "gap_count", n, "max_gap", mx, "host_work", work, NULL};
	add_finding(c, R_GPU_STARVED, (double)total, prev, kv);
	free(idle);
	free(share);
	free(n);
	free(mx);
	free(work);
}

static void rule_pageable(struct ctx *c)
{
	for (size_t i = 0; i < c->r->nlines; i++) {
		const struct trace_line *l = &c->r->lines[i];
		for (int dir = DIR_H2D; dir <= DIR_D2H; dir++) {
			const struct trace_copy *cp = &l->copy[dir][HK_PAGEABLE];
			if ((double)cp->bytes < th(c, TH_PAGEABLE_MIN_BYTES) || !cp->ns)
				continue;
			const char *source;
			double pinned = trace_pinned_rate(c->t, c->cfg, dir, 0, &source);
			double at_pinned = pinned > 0 ? (double)cp->bytes / pinned : (double)cp->ns;
			double cost = (double)cp->ns - at_pinned;
			if (cost <= 0 || !matters(c, cost))
				continue;
			char *bytes = trace_fmt_bytes(cp->bytes), *time = trace_fmt_ns(cp->ns);
			char *rate = trace_fmt_rate(cp->bytes, cp->ns);
			char *prate = xasprintf("%.1f GB/s", pinned);
			const char *kv[] = {"site", l->label, "bytes", bytes, "dir", trace_dir_name(dir),
					    "time_s", time, "rate", rate, "pinned_rate", prate,
					    "pinned_source", source, NULL};
			add_finding(c, R_PAGEABLE_TRANSFER, cost, l->label, kv);
			c->pageable_excess += cost;
			free(bytes);
			free(time);
			free(rate);
			free(prate);
		}
	}
}

static void rule_transfer(struct ctx *c)
{
	const struct trace_budget *b = &c->r->budget;
	uint64_t copy_ns = 0;
	struct buf detail = {0};
	for (int dir = DIR_H2D; dir <= DIR_D2H; dir++) {
		uint64_t bytes = 0, ns = 0, pageable = 0;
		for (int h = 0; h < HK_COUNT; h++) {
			bytes += b->copy[dir][h].bytes;
			ns += b->copy[dir][h].ns;
		}
		pageable = b->copy[dir][HK_PAGEABLE].bytes;
		copy_ns += ns;
		if (!bytes)
			continue;
		char *by = trace_fmt_bytes(bytes), *t = trace_fmt_ns(ns), *rate = trace_fmt_rate(bytes, ns);
		buf_printf(&detail, "%s%s %s in %s (%s%s)", detail.len ? ", " : "", trace_dir_name(dir), by, t,
			   rate, pageable * 2 > bytes ? ", mostly pageable" : "");
		free(by);
		free(t);
		free(rate);
	}
	if (!b->busy_ns || (double)copy_ns < th(c, TH_TRANSFER_SHARE) * (double)b->busy_ns ||
	    !matters(c, (double)copy_ns)) {
		buf_free(&detail);
		return;
	}
	/* The copy time pageable memory explains is pageable-transfer's, the more
	 * precise finding with the more precise fix (pin the host buffers); what
	 * is left is what copies cost at the pinned rate. */
	double cost = (double)copy_ns - c->pageable_excess;
	if (cost <= 0 || !matters(c, cost)) {
		buf_free(&detail);
		return;
	}
	size_t top = 0;
	uint64_t top_ns = 0;
	for (size_t i = 0; i < c->r->nlines; i++) {
		uint64_t ns = 0;
		for (int dir = DIR_H2D; dir <= DIR_D2H; dir++)
			for (int h = 0; h < HK_COUNT; h++)
				ns += c->r->lines[i].copy[dir][h].ns;
		if (ns > top_ns) {
			top_ns = ns;
			top = i;
		}
	}
	char *cs = trace_fmt_ns(copy_ns), *bs = trace_fmt_ns(b->busy_ns);
	char *share = fmt_share((double)copy_ns, (double)b->busy_ns);
	const char *kv[] = {"copy_s", cs, "busy_s", bs, "share", share, "detail", detail.data,
			    "site", c->r->lines[top].label, NULL};
	add_finding(c, R_TRANSFER_BOUND, cost, c->r->lines[top].label, kv);
	free(cs);
	free(bs);
	free(share);
	buf_free(&detail);
}

/* The host time of allocation churn: memory allocated and freed again.
 * Allocations that are kept (a model's pinned weights set up once, a pool
 * growing to its size) are no churn, and reusing buffers would not save
 * them: of the allocations' time, only the share that frees undo counts
 * (on the H200, 100 pinned host buffers set up once, 1.18 s, read as
 * memory pressure above the copies that bounded the run). */
static double churn_ns(const struct trace_budget *b)
{
	double undone = b->alloc_n ? (double)(b->free_n < b->alloc_n ? b->free_n : b->alloc_n) / (double)b->alloc_n : 0;
	return (double)b->alloc_ns * undone + (double)b->free_ns;
}

/* Whether memory-pressure counts the allocations' churn (rule_memory). */
static bool churn_claimed(const struct ctx *c)
{
	const struct trace_budget *b = &c->r->budget;
	return b->alloc_n + b->free_n >= th(c, TH_ALLOC_MIN_COUNT) && matters(c, churn_ns(b));
}

static void rule_memory(struct ctx *c)
{
	const struct trace_budget *b = &c->r->budget;
	struct buf detail = {0};
	double cost = 0;
	const char *where = NULL;
	if (churn_claimed(c)) {
		size_t top = 0;
		uint64_t top_n = 0;
		for (size_t i = 0; i < c->r->nlines; i++)
			if (c->r->lines[i].api_n[OP_ALLOC] + c->r->lines[i].api_n[OP_FREE] > top_n) {
				top_n = c->r->lines[i].api_n[OP_ALLOC] + c->r->lines[i].api_n[OP_FREE];
				top = i;
			}
		char *t = trace_fmt_ns(b->alloc_ns + b->free_ns);
		where = c->r->lines[top].label;
		buf_printf(&detail, "%llu allocations and %llu frees took %s of host time, most from %s (%llu)",
			   (unsigned long long)b->alloc_n, (unsigned long long)b->free_n, t, where,
			   (unsigned long long)top_n);
		free(t);
		cost = churn_ns(b);
	}
	for (size_t i = 0; i < c->r->ndevices; i++) {
		const struct trace_device_row *d = &c->r->devices[i];
		if (!d->memory_total || (double)d->mem_peak < th(c, TH_MEMORY_NEAR_CAPACITY) * (double)d->memory_total)
			continue;
		char *peak = trace_fmt_bytes((uint64_t)d->mem_peak), *tot = trace_fmt_bytes(d->memory_total);
		buf_printf(&detail, "%sdevice %u had %s allocated at its peak, of %s (%.0f%%)", detail.len ? "; " : "",
			   d->id, peak, tot, 100.0 * (double)d->mem_peak / (double)d->memory_total);
		free(peak);
		free(tot);
	}
	if (detail.len) {
		const char *kv[] = {"detail", detail.data, NULL};
		add_finding(c, R_MEMORY_PRESSURE, cost, where, kv);
	}
	buf_free(&detail);
}

static void rule_fallback(struct ctx *c)
{
	struct buf detail = {0};
	double cost = 0;
	const char *where = NULL;
	uint64_t where_n = 0;
	for (size_t f = 0; f < c->cfg->nnvtx; f++) {
		const struct trace_nvtx_fallback *fb = &c->cfg->nvtx[f];
		uint64_t slow_n = 0, slow_ns = 0, fast_n = 0;
		for (size_t i = 0; i < c->r->nnvtx; i++) {
			const struct trace_nvtx_row *n = &c->r->nvtx[i];
			if (strcmp(n->domain, fb->domain) != 0)
				continue;
			if (!strcmp(n->name, fb->slow)) {
				slow_n += n->n;
				slow_ns += n->ns;
				if (n->n > where_n) {
					where_n = n->n;
					where = n->where;
				}
			} else if (fb->fast && !strcmp(n->name, fb->fast)) {
				fast_n += n->n;
			}
		}
		if (slow_n < th(c, TH_FALLBACK_MIN_COUNT))
			continue;
		char *t = trace_fmt_ns(slow_ns);
		buf_printf(&detail, "%s%s: %llu of %llu calls ran on the CPU (%s ranges, %s)%s%s",
			   detail.len ? "; " : "", fb->library, (unsigned long long)slow_n,
			   (unsigned long long)(slow_n + fast_n), fb->slow, t, where ? ", most at " : "",
			   where ? where : "");
		free(t);
		cost += (double)slow_ns;
	}
	/* Log lines, by library: fallbacks with their top reasons, and GPU runs. */
	for (size_t i = 0; i < c->t->nlog; i++) {
		const struct trace_logline *l = &c->t->log[i];
		if (strcmp(l->kind, "fallback") != 0)
			continue;
		bool first_of_library = true;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(c->t->log[k].library, l->library) && !strcmp(c->t->log[k].kind, "fallback"))
				first_of_library = false;
		if (!first_of_library)
			continue;
		uint64_t fb = 0, gpu = 0;
		for (size_t k = 0; k < c->t->nlog; k++) {
			if (strcmp(c->t->log[k].library, l->library) != 0)
				continue;
			if (strcmp(c->t->log[k].kind, "fallback") == 0)
				fb += c->t->log[k].n;
			else
				gpu += c->t->log[k].n;
		}
		if (fb < th(c, TH_FALLBACK_MIN_COUNT))
			continue;
		buf_printf(&detail, "%s%s said %llu call%s fell back to the CPU (%llu ran on the GPU):", detail.len ? "; " : "",
			   l->library, (unsigned long long)fb, fb == 1 ? "" : "s", (unsigned long long)gpu);
		int shown = 0;
		for (size_t k = i; k < c->t->nlog && shown < 3; k++) {
			const struct trace_logline *m = &c->t->log[k];
			if (strcmp(m->library, l->library) || strcmp(m->kind, "fallback"))
				continue;
			buf_printf(&detail, "%s %s%s%s (%llu)", shown ? "," : "", m->name ? m->name : "?",
				   m->reason && *m->reason ? ": " : "", m->reason ? m->reason : "",
				   (unsigned long long)m->n);
			shown++;
		}
	}
	if (detail.len) {
		const char *kv[] = {"detail", detail.data, NULL};
		add_finding(c, R_CPU_FALLBACK, cost, where, kv);
	}
	buf_free(&detail);
}

struct trace_report *trace_analyze(const struct trace *t, const struct trace_config *cfg)
{
	struct trace_report *r = xcalloc(1, sizeof *r);
	r->trace = t;
	r->config = cfg;
	struct ctx c = {.t = t, .cfg = cfg, .r = r};
	c.idle_scale = xcalloc(t->nprocs + 1, sizeof *c.idle_scale);
	for (size_t i = 0; i < t->nprocs; i++)
		c.idle_scale[i] = idle_scale_of(&t->procs[i]);
	build_lines(&c);
	build_budget(&c);
	build_devices(&c);
	build_kernels(&c);
	build_nvtx(&c);
	c.roundtrip_line = xcalloc(r->nlines + 1, sizeof *c.roundtrip_line);
	rule_roundtrip(&c);
	rule_sync(&c);
	rule_launch(&c);
	rule_starved(&c);
	rule_pageable(&c);
	rule_transfer(&c);
	rule_memory(&c);
	rule_fallback(&c);
	r->nfindings = c.findings.len;
	r->findings = xcalloc(c.findings.len + 1, sizeof *r->findings);
	for (size_t i = 0; i < c.findings.len; i++) {
		r->findings[i] = *(struct trace_finding *)c.findings.items[i];
		free(c.findings.items[i]);
	}
	ptrvec_free(&c.findings);
	qsort(r->findings, r->nfindings, sizeof *r->findings, cmp_finding);
	free(c.roundtrip_line);
	free(c.idle_scale);
	for (size_t i = 0; i < t->nprocs; i++)
		free(c.m.map[i]);
	free(c.m.map);
	symtab_free(&c.m.index);
	return r;
}

void trace_report_free(struct trace_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nlines; i++)
		free(r->lines[i].label);
	free(r->lines);
	free(r->kernels);
	free(r->devices);
	free(r->nvtx);
	for (size_t i = 0; i < r->nfindings; i++) {
		free(r->findings[i].where);
		free(r->findings[i].evidence);
	}
	free(r->findings);
	free(r);
}
