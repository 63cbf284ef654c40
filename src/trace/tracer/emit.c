/* emit: writes the process summary, DIR/PID.json, whole: into a temporary
 * file beside it, then renamed over it, so gpuopt reads the last complete
 * summary even when the process dies while a new one is being written.
 * The fields are those that src/trace/tracefile.c reads. Called with
 * t.lock held. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tracer.h"

static const char *const op_names[OP_COUNT] = {"none", "launch", "memcpy", "memset", "sync",
					       "alloc", "free", "reset"};

/* A JSON string: control characters escaped, bytes that are not UTF-8 replaced by '?'. */
static void jstr(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, f);
		} else {
			size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			int ok = len && i + len <= n;
			for (size_t k = 1; ok && k < len; k++)
				ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
			if (ok) {
				fwrite(s + i, 1, len, f);
				i += len - 1;
			} else {
				fputc('?', f);
			}
		}
	}
	fputc('"', f);
}

static void jcstr(FILE *f, const char *s)
{
	if (!s || !*s)
		fputs("null", f);
	else
		jstr(f, s, strlen(s));
}

/* Sampling (inject.c): what was recorded while sampling stands for all
 * the calls made then. An operation's weight: its calls made while sampling
 * per call made while recording; 1 when the run was never sampled. */
static double weight_of(const uint64_t *calls, const uint64_t *on, int op)
{
	return on[op] ? (double)calls[op] / (double)on[op] : 1.0;
}

/* A sampled stretch that opened no window (the default, sample_on 0; or
 * one shorter than the first window's wait): its kernel records went off as
 * it began, so its launches count one kernel each at the mean time of the
 * kernels recorded outside it (lost_kernels), and the few records of
 * launches made as it began, before the records went off, are left out. */
static int windowless(void)
{
	return t.calls_s[OP_LAUNCH] && !t.sample_windows;
}

static double sample_weight(int op)
{
	return weight_of(t.calls_s, t.calls_s_on, op);
}

/* Allocations and frees made while sampling and not recording: the
 * allocation records were off, so their bytes are not in mem_now / peak. */
static uint64_t unseen_allocs(void)
{
	return t.calls_s[OP_ALLOC] - t.calls_s_on[OP_ALLOC] + t.calls_s[OP_FREE] - t.calls_s_on[OP_FREE];
}

/* Kernel records of launches made while sampling, on every device. */
static uint64_t sampled_kernels(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < DEVICE_MAX; i++)
		n += t.devices[i].kernels_s;
	return n;
}

/* Launches' weight, given the kernel records of the launches made while
 * recording: per launch made then, or per kernel recorded where those are
 * fewer. CUPTI's kernel records do not always resume when a window opens
 * (on the H200 a run with 5 ms windows kept no kernel of the 807 launches made
 * while recording: bench/results/h200_trace_sampling_lost_windows.log), and
 * a launch makes one kernel; where the records are more (a graph launch
 * makes several), the launches count. */
static double launch_weight(uint64_t calls, uint64_t on, uint64_t kernels)
{
	if (!on)
		return 1.0;
	return (double)calls / (double)(kernels && kernels < on ? kernels : on);
}

static double run_launch_weight(void)
{
	if (windowless())
		return 0.0;
	return launch_weight(t.calls_s[OP_LAUNCH], t.calls_s_on[OP_LAUNCH], sampled_kernels());
}

/* A line's weight for op: its own, or the run's where it made no such
 * call while sampling (its records then are of calls not matched). */
static double site_weight(const struct site_stats *s, int op)
{
	if (!s->calls_s[op])
		return op == OP_LAUNCH ? run_launch_weight() : sample_weight(op);
	return op == OP_LAUNCH ? launch_weight(s->calls_s[op], s->calls_s_on[op], s->kernel_s.n)
			       : weight_of(s->calls_s, s->calls_s_on, op);
}

/* total, of which part was recorded while sampling: the estimate. */
static unsigned long long scaled(uint64_t total, uint64_t part, double w)
{
	return (unsigned long long)((double)total + (double)part * (w - 1.0) + 0.5);
}

/* When not one kernel of the launches made while sampling was recorded
 * (every window's records lost, or no window: windowless), those launches
 * count one kernel each at the mean time of the kernels recorded outside the windows, shared among
 * the devices, kernels and streams by their part of those: of n of the
 * run's recorded kernels, this many more (and *ns more time). */
static uint64_t lost_kernels(uint64_t n, uint64_t ns_of_n, uint64_t all, uint64_t *ns)
{
	uint64_t lost = windowless() || (t.calls_s_on[OP_LAUNCH] && !sampled_kernels()) ? t.calls_s[OP_LAUNCH] : 0;
	*ns = 0;
	if (!lost || !all)
		return 0;
	*ns = (uint64_t)((double)lost * (double)ns_of_n / (double)all + 0.5);
	return (uint64_t)((double)lost * (double)n / (double)all + 0.5);
}

static uint64_t recorded_kernels(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < DEVICE_MAX; i++)
		n += t.devices[i].kernels;
	return n;
}

static uint64_t recorded_kernel_ns(void)
{
	uint64_t ns = 0;
	for (uint32_t i = 0; i < DEVICE_MAX; i++)
		ns += t.devices[i].kernel_ns;
	return ns;
}

static uint64_t device_busy(struct device_stats *d, uint64_t lost_ns)
{
	busy_flush(d);
	uint64_t busy = d->busy + (d->have_run ? d->run_end - d->run_start : 0);
	return (uint64_t)((double)busy + (double)d->kernel_ns_s * (run_launch_weight() - 1.0) +
			  (double)d->memcpy_ns_s * (sample_weight(OP_MEMCPY) - 1.0) +
			  (double)d->memset_ns_s * (sample_weight(OP_MEMSET) - 1.0) + (double)lost_ns + 0.5);
}

static void emit_site_stats(FILE *f)
{
	fputs(",\n\"site_stats\":[", f);
	int first = 1;
	uint64_t run_kernels = recorded_kernels(), run_kernel_ns = recorded_kernel_ns();
	for (uint32_t i = 0; i < t.nsites; i++) {
		const struct site_stats *s = &t.stats[i];
		int any = s->kernel.n || s->memset.n || s->drained.n;
		for (int op = 1; op < OP_COUNT; op++)
			any |= s->api[op].n != 0;
		for (int d = 0; d < DIR_COUNT; d++)
			for (int h = 0; h < HK_COUNT; h++)
				any |= s->copy[d][h].n != 0;
		if (!any)
			continue;
		fprintf(f, "%s\n{\"site\":%u,\"api\":{", first ? "" : ",", i);
		first = 0;
		int fa = 1;
		for (int op = 1; op < OP_COUNT; op++) {
			if (!s->api[op].n)
				continue;
			fprintf(f, "%s\"%s\":[%llu,%llu]", fa ? "" : ",", op_names[op],
				(unsigned long long)s->api[op].n, (unsigned long long)s->api[op].ns);
			fa = 0;
		}
		/* This line's launches while sampling per launch (or kernel,
		 * launch_weight) recorded then; a line none of whose sampled
		 * launches left a kernel record gets one kernel per launch at its
		 * other kernels' mean time; records
		 * of no call of this line (those whose call left the ring, under
		 * SITE_NONE) take the run's weight. */
		unsigned long long kn, kns, kshort;
		uint64_t ls = s->calls_s[OP_LAUNCH];
		if (!windowless() && ((s->calls_s_on[OP_LAUNCH] && s->kernel_s.n) || !ls)) {
			double w = site_weight(s, OP_LAUNCH);
			kn = scaled(s->kernel.n, s->kernel_s.n, w);
			kns = scaled(s->kernel.ns, s->kernel_s.ns, w);
			kshort = scaled(s->kernel_short, s->kernel_short_s, w);
		} else {
			/* one kernel per launch made while sampling, at this line's
			 * mean (the run's where it has no kernel recorded), in place
			 * of the few recorded then */
			uint64_t n = s->kernel.n, ns = s->kernel.ns, sh = s->kernel_short;
			if (!n) {
				n = run_kernels;
				ns = run_kernel_ns;
				sh = 0;
			}
			kn = s->kernel.n - s->kernel_s.n + ls;
			kns = s->kernel.ns - s->kernel_s.ns + (n ? (uint64_t)((double)ls * (double)ns / (double)n + 0.5) : 0);
			kshort = s->kernel_short - s->kernel_short_s +
				 (n ? (uint64_t)((double)ls * (double)sh / (double)n + 0.5) : 0);
		}
		double wc = site_weight(s, OP_MEMCPY), wm = site_weight(s, OP_MEMSET);
		fprintf(f, "},\"kernel\":[%llu,%llu,%llu],\"copy\":[", kn, kns, kshort);
		int fc = 1;
		for (int d = 0; d < DIR_COUNT; d++)
			for (int h = 0; h < HK_COUNT; h++) {
				const struct copystat *c = &s->copy[d][h], *cs = &s->copy_s[d][h];
				if (!c->n)
					continue;
				fprintf(f, "%s[%d,%d,%llu,%llu,%llu,%llu]", fc ? "" : ",", d, h,
					scaled(c->n, cs->n, wc), scaled(c->bytes, cs->bytes, wc),
					scaled(c->ns, cs->ns, wc), scaled(c->sync, cs->sync, wc));
				fc = 0;
			}
		fprintf(f, "],\"memset\":[%llu,%llu,%llu]", scaled(s->memset.n, s->memset_s.n, wm),
			scaled(s->memset.bytes, s->memset_s.bytes, wm), scaled(s->memset.ns, s->memset_s.ns, wm));
		/* what the callbacks saw of every call: exact, sampled or not */
		fputs(",\"copy_calls\":[", f);
		fc = 1;
		for (int d = 0; d < DIR_COUNT; d++) {
			const struct copystat *c = &s->copy_calls[d];
			if (!c->n)
				continue;
			fprintf(f, "%s[%d,%llu,%llu,%llu]", fc ? "" : ",", d, (unsigned long long)c->n,
				(unsigned long long)c->bytes, (unsigned long long)c->ns);
			fc = 0;
		}
		fprintf(f, "],\"drained\":[%llu,%llu]}", (unsigned long long)s->drained.n,
			(unsigned long long)s->drained.ns);
	}
	fputs("]", f);
}

static void emit_api(FILE *f)
{
	fputs(",\n\"api\":[", f);
	int first = 1;
	for (int runtime = 1; runtime >= 0; runtime--)
		for (uint32_t id = 0; id < API_MAX; id++) {
			const struct cnt *a = runtime ? &t.api_runtime[id] : &t.api_driver[id];
			if (!a->n)
				continue;
			fputs(first ? "\n[" : ",\n[", f);
			first = 0;
			/* "cudaMemcpyAsync_v3020" -> "cudaMemcpyAsync" */
			const char *name = tracer_api_name(runtime, id);
			const char *v = name ? strstr(name, "_v") : NULL;
			if (name && v && v[2] >= '0' && v[2] <= '9')
				jstr(f, name, (size_t)(v - name));
			else
				jcstr(f, name);
			fprintf(f, ",%llu,%llu]", (unsigned long long)a->n, (unsigned long long)a->ns);
		}
	fputs("]", f);
}

void emit_summary(void)
{
	if (!t.dir[0] || t.forked)
		return;
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
	snprintf(path, sizeof path, "%s/%d.json", t.dir, t.pid);
	snprintf(tmp, sizeof tmp, "%s/.%d.json.tmp", t.dir, t.pid);
	FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	static char iobuf[1 << 16];
	setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
	fprintf(f, "{\"format\":\"%s\",\"version\":%d,\"pid\":%d,\"ppid\":%d,\n", TRACE_SUMMARY_FORMAT,
		TRACE_SUMMARY_VERSION, t.pid, t.ppid);
	fprintf(f, "\"status\":\"%s\",\"reason\":", t.status);
	jcstr(f, t.reason);
	if (t.error_api[0]) {
		fputs(",\"error\":{\"api\":", f);
		jcstr(f, t.error_api);
		fprintf(f, ",\"code\":%d,\"name\":", t.error_code);
		jcstr(f, t.error_name);
		fputs("}", f);
	} else {
		fputs(",\"error\":null", f);
	}
	fprintf(f, ",\"conflict\":%s", t.conflict ? "true" : "false");
	if (t.conflict) {
		fputs(",\"libraries\":[", f);
		int first = 1;
		for (const char *p = t.libraries; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			if (!first)
				fputc(',', f);
			jstr(f, p, n);
			first = 0;
			p += n + (nl ? 1 : 0);
		}
		fputs("]", f);
	}
	fprintf(f, ",\"flush\":\"%s\",\"signal\":%d,\n", t.flush_reason[0] ? t.flush_reason : "start", t.signal);
	fputs("\"python\":{\"version\":", f);
	jcstr(f, t.py_version);
	fprintf(f, ",\"lines\":%s,\"why\":", t.py_ok ? "true" : "false");
	jcstr(f, t.py_ok ? NULL : t.py_why);
	fputs("},\n\"cupti\":", f);
	if (t.cupti_path[0]) {
		fputs("{\"path\":", f);
		jcstr(f, t.cupti_path);
		fputs(",\"how\":", f);
		jcstr(f, t.cupti_how);
		fprintf(f, ",\"version\":%u}", t.cupti_version);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"driver_version\":%d,\"nvtx\":", t.driver_version);
	jcstr(f, t.nvtx_status);
	fprintf(f, ",\n\"settings\":{\"timeline\":%s,\"max_events\":%llu,\"full\":%s,\"strict\":%s,"
		"\"callbacks\":%s,\"kernel_wait_ns\":%llu,\"starved_gap_ns\":%llu,\"kinds\":",
		t.timeline ? "true" : "false", (unsigned long long)t.max_events, t.full ? "true" : "false",
		t.strict ? "true" : "false", t.callbacks ? "true" : "false",
		(unsigned long long)t.kernel_wait_ns, (unsigned long long)t.starved_gap_ns);
	jcstr(f, t.kinds);
	fprintf(f, "},\n\"clock\":{\"start\":%llu,\"first\":%llu,\"last\":%llu,\"end\":%llu},\n",
		(unsigned long long)t.t_start, (unsigned long long)t.t_first, (unsigned long long)t.t_last,
		(unsigned long long)now_ns());
	fprintf(f, "\"sampling\":{\"sampled\":%s,\"launches\":%llu,\"sampled_launches\":%llu,"
		"\"recorded_launches\":%llu,\"since\":%llu,\"windows\":%llu,\"recorded_ns\":%llu,"
		"\"rate\":%llu,\"period_ns\":%llu,\"on_ns\":%llu,\"recorded_kernels\":%llu,"
		"\"toggle_errors\":%llu,\"toggle_error\":%d,\"toggles\":%llu,\"toggle_ns\":%llu,"
		"\"toggle_max_ns\":%llu,\"unseen_allocs\":%llu,\"last_launch\":%llu},\n",
		t.calls_s[OP_LAUNCH] ? "true" : "false", (unsigned long long)t.launches,
		(unsigned long long)t.calls_s[OP_LAUNCH], (unsigned long long)t.calls_s_on[OP_LAUNCH],
		(unsigned long long)t.sampling_since, (unsigned long long)t.sample_windows,
		(unsigned long long)t.sample_on_total, (unsigned long long)(t.sample ? t.sample_rate : 0),
		(unsigned long long)t.sample_period_ns, (unsigned long long)t.sample_on_ns,
		(unsigned long long)sampled_kernels(), (unsigned long long)t.sample_toggle_errors,
		t.sample_toggle_last, (unsigned long long)t.sample_toggles,
		(unsigned long long)t.sample_toggle_ns, (unsigned long long)t.sample_toggle_max_ns,
		(unsigned long long)unseen_allocs(), (unsigned long long)t.t_last_sampled_launch);
	fputs("\"unmatched\":[", f);
	for (uint64_t i = 0; i < t.unattributed && i < 8; i++)
		fprintf(f, "%s[%u,%u]", i ? "," : "", t.unmatched[i][0], t.unmatched[i][1]);
	fputs("],\n", f);
	fprintf(f, "\"counts\":{\"records\":%llu,\"dropped\":%llu,\"unattributed\":%llu,\"buffers\":%llu,"
		"\"nested_driver\":%llu,\"strings_dropped\":%llu,\"sites_overflow\":%llu,"
		"\"kernels_overflow\":%llu,\"streams_overflow\":%llu,\"gaps_overflow\":%llu,"
		"\"nvtx_overflow\":%llu,\"events_written\":%llu,\"events_dropped\":%llu,\"untimed\":%llu,"
		"\"early\":%llu},\n",
		(unsigned long long)t.records, (unsigned long long)t.dropped,
		(unsigned long long)t.unattributed, (unsigned long long)t.buffers,
		(unsigned long long)t.nested_driver, (unsigned long long)t.str_dropped,
		(unsigned long long)t.sites_overflow, (unsigned long long)t.kernels_overflow,
		(unsigned long long)t.streams_overflow, (unsigned long long)t.gaps_overflow,
		(unsigned long long)t.nvtx_overflow, (unsigned long long)t.events_written,
		(unsigned long long)t.events_dropped, (unsigned long long)t.untimed, (unsigned long long)t.early);
	fputs("\"strings\":[", f);
	for (uint32_t i = 0; i < t.nstr; i++) {
		uint32_t n;
		const char *s = str_at(i, &n);
		if (i)
			fputs(i % 8 ? "," : ",\n", f);
		jstr(f, s, n);
	}
	fputs("],\n\"sites\":[", f);
	for (uint32_t i = 0; i < t.nsites; i++) {
		const struct site *s = &t.sites[i];
		fprintf(f, "%s[%u,%u,%u,%u,%u,%u]", i ? (i % 8 ? "," : ",\n") : "", s->file, s->line, s->func,
			s->lib_file, s->lib_line, s->lib_func);
	}
	fputs("]", f);
	emit_site_stats(f);
	double w = run_launch_weight(), wc = sample_weight(OP_MEMCPY), wm = sample_weight(OP_MEMSET);
	uint64_t all = recorded_kernels(), all_events = 0, lost_ns;
	fputs(",\n\"kernels\":[", f);
	for (uint32_t i = 0; i < t.nkernels; i++) {
		const struct kernel_stats *k = &t.kernels[i];
		uint64_t lost = lost_kernels(k->n, k->ns, all, &lost_ns);
		fprintf(f, "%s[%u,%llu,%llu,%llu,%llu]", i ? ",\n" : "", k->name, scaled(k->n, k->n_s, w) + lost,
			scaled(k->ns, k->ns_s, w) + lost_ns, (unsigned long long)(k->n ? k->min : 0),
			(unsigned long long)k->max);
	}
	uint64_t lost_all_ns;
	for (uint32_t i = 0; i < t.nstreams; i++)
		all_events += t.streams[i].events;
	lost_kernels(all, recorded_kernel_ns(), all, &lost_all_ns);
	fputs("],\n\"streams\":[", f);
	for (uint32_t i = 0; i < t.nstreams; i++) {
		const struct stream_stats *s = &t.streams[i];
		/* a stream's part of the lost kernels' time: its part of the events */
		lost_ns = all_events ? (uint64_t)((double)lost_all_ns * (double)s->events / (double)all_events + 0.5)
				     : 0;
		fprintf(f, "%s{\"device\":%u,\"stream\":%u,\"events\":%llu,\"busy_ns\":%llu,"
			"\"host_wait\":[%llu,%llu],\"kernel_wait\":[%llu,%llu],\"other\":[%llu,%llu],"
			"\"warmup\":[%llu,%llu],\"held\":[%llu,%llu]}",
			i ? ",\n" : "", s->device, s->stream, (unsigned long long)s->events,
			(unsigned long long)((double)scaled(s->busy_ns, s->busy_s, w) +
					     (double)s->busy_copy_s * (wc - 1.0) + (double)s->busy_set_s * (wm - 1.0) +
					     (double)lost_ns),
			scaled(s->host_wait_n, s->gap_s[0][0], w),
			scaled(s->host_wait_ns, s->gap_s[0][1], w), scaled(s->kernel_wait_n, s->gap_s[1][0], w),
			scaled(s->kernel_wait_ns, s->gap_s[1][1], w), scaled(s->other_n, s->gap_s[2][0], w),
			scaled(s->other_ns, s->gap_s[2][1], w), (unsigned long long)s->warmup_n,
			(unsigned long long)s->warmup_ns, scaled(s->held_n, s->held_s[0], w),
			scaled(s->held_ns, s->held_s[1], w));
	}
	fputs("],\n\"devices\":[", f);
	int first = 1;
	for (uint32_t i = 0; i < DEVICE_MAX; i++) {
		struct device_stats *d = &t.devices[i];
		if (!d->used && !d->allocs)
			continue;
		uint64_t lost = lost_kernels(d->kernels, d->kernel_ns, all, &lost_ns);
		fprintf(f, "%s{\"id\":%u,\"kernels\":%llu,\"kernel_ns\":%llu,\"memcpys\":%llu,\"memcpy_ns\":%llu,"
			"\"memsets\":%llu,\"memset_ns\":%llu,\"busy_ns\":%llu,\"first\":%llu,\"last\":%llu,"
			"\"mem_peak\":%lld,\"mem_now\":%lld,\"allocs\":%llu,\"frees\":%llu}",
			first ? "" : ",\n", i, scaled(d->kernels, d->kernels_s, w) + lost,
			scaled(d->kernel_ns, d->kernel_ns_s, w) + lost_ns,
			scaled(d->memcpys, d->memcpys_s, wc), scaled(d->memcpy_ns, d->memcpy_ns_s, wc),
			scaled(d->memsets, d->memsets_s, wm), scaled(d->memset_ns, d->memset_ns_s, wm),
			(unsigned long long)device_busy(d, lost_ns), (unsigned long long)d->first,
			(unsigned long long)d->last, (long long)d->mem_peak, (long long)d->mem_now,
			(unsigned long long)d->allocs, (unsigned long long)d->frees);
		first = 0;
	}
	fputs("],\n\"gaps\":[", f);
	first = 1;
	for (uint32_t i = 0; i < GAP_MAX; i++) {
		const struct gap_stats *g = &t.gaps[i];
		if (!g->used)
			continue;
		static const char *const classes[GAP_CLASSES] = {"short", "long", "warmup"};
		fprintf(f, "%s[%u,\"%s\",%u,\"%s\",%llu,%llu,%llu]", first ? "" : ",\n", g->prev_site,
			op_names[g->prev_op < OP_COUNT ? g->prev_op : 0], g->next_site,
			classes[g->cls < GAP_CLASSES ? g->cls : 0], scaled(g->n, g->n_s, w),
			scaled(g->ns, g->ns_s, w), (unsigned long long)g->max_ns);
		first = 0;
	}
	fputs("],\n\"nvtx_ranges\":[", f);
	first = 1;
	for (uint32_t i = 0; i < NVTX_MAX; i++) {
		const struct nvtx_stats *s = &t.nvtx[i];
		if (!s->used)
			continue;
		fprintf(f, "%s[%u,%u,%u,%s,%llu,%llu]", first ? "" : ",\n", s->domain, s->name, s->site,
			s->mark ? "true" : "false", (unsigned long long)s->n, (unsigned long long)s->ns);
		first = 0;
	}
	fputs("],\n\"sync_records\":[", f);
	first = 1;
	for (int i = 0; i < 8; i++) {
		if (!t.sync_records[i][0])
			continue;
		double ws = sample_weight(OP_SYNC);
		fprintf(f, "%s[%d,%llu,%llu]", first ? "" : ",", i, scaled(t.sync_records[i][0], t.sync_records_s[i][0], ws),
			scaled(t.sync_records[i][1], t.sync_records_s[i][1], ws));
		first = 0;
	}
	fputs("],\n\"overhead\":[", f);
	first = 1;
	for (int i = 0; i < 16; i++) {
		if (!t.overhead[i][0])
			continue;
		static const char *const names[16] = {"unknown", "buffer-flush", "instrumentation", "resource",
			"module-loading", "lazy-function-loading", "command-buffer-full", "activity-buffer-request",
			"uvm-init", "9", "10", "11", "12", "13", "14", "driver-compiler"};
		fprintf(f, "%s[\"%s\",%llu,%llu]", first ? "" : ",", names[i], (unsigned long long)t.overhead[i][0],
			(unsigned long long)t.overhead[i][1]);
		first = 0;
	}
	fputs("]", f);
	emit_api(f);
	fputs("}\n", f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		unlink(tmp);
		return;
	}
	rename(tmp, path);
}
