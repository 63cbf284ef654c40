/* The tracer's summary writer (src/trace/tracer/emit.c) on states set up
 * here as the callbacks and record handlers leave them, with no GPU: what a
 * sampled stretch recorded is scaled to the calls made then (per line and
 * operation, and for the devices by the run's weights), a line none of
 * whose sampled launches was recorded gets a kernel per launch at its mean
 * time, windows whose kernel records came back late or not at all are
 * weighted by the kernels that came, an unsampled run is written as recorded, CUPTI's records
 * without valid times are counted but not timed; and what the writer writes the reader
 * (trace_process_parse) accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cupti.h>
#include <jansson.h>

#include "trace/analyze.h"
#include "trace/config.h"
#include "trace/report.h"
#include "trace/tracefile.h"
#include "trace/tracer/tracer.h"

static char dir[] = "/tmp/gpuopt-emit-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : 1;
}

static int teardown(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/%d.json", dir, t.pid);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* A run of one line (site 2, solve.py:12) on device 0, stream 7. */
static void base_state(void)
{
	memset(&t, 0, sizeof t);
	snprintf(t.dir, sizeof t.dir, "%s", dir);
	t.pid = 4242;
	snprintf(t.status, sizeof t.status, "traced");
	snprintf(t.kinds, sizeof t.kinds, "kernel,memcpy");
	t.sample = 1;
	t.sample_rate = 20000;
	t.sample_period_ns = 100000000;
	t.sample_on_ns = 10000000;
	uint32_t file = str_intern("/home/u/solve.py", 16), func = str_intern("step", 4);
	t.nsites = 3;
	t.sites[2] = (struct site){.file = file, .line = 12, .func = func};
	struct kernel_stats *k = kernel_get("add_kernel");
	assert_non_null(k);
	k->n = 190;
	k->ns = 190000;
	k->min = 900;
	k->max = 1100;
	struct stream_stats *s = stream_get(0, 7);
	assert_non_null(s);
	s->events = 300;
	s->busy_ns = 300000;
	s->kernel_wait_n = 100;
	s->kernel_wait_ns = 200000;
	t.devices[0].used = 1;
	t.devices[0].kernels = 190;
	t.devices[0].kernel_ns = 190000;
	t.devices[0].memcpys = 110;
	t.devices[0].memcpy_ns = 55000;
	t.devices[0].busy = 245000;
	t.launches = 1000;
	struct site_stats *st = &t.stats[2];
	st->api[OP_LAUNCH].n = 1000;
	st->api[OP_LAUNCH].ns = 5000000;
	st->api[OP_MEMCPY].n = 110;
	st->api[OP_MEMCPY].ns = 600000;
	st->kernel.n = 190;
	st->kernel.ns = 190000;
	st->copy[DIR_H2D][HK_PAGEABLE] = (struct copystat){.n = 110, .bytes = 110 * 4096, .ns = 55000, .sync = 110};
}

/* Of the 1,000 launches, 900 were made while sampling and 90 of those
 * recorded (weight 10); of the 110 copies, 100 and 10 (weight 10). */
static void sampled_state(void)
{
	base_state();
	struct site_stats *st = &t.stats[2];
	st->kernel_s = (struct cnt){.n = 90, .ns = 90000};
	st->calls_s[OP_LAUNCH] = 900;
	st->calls_s_on[OP_LAUNCH] = 90;
	st->calls_s[OP_MEMCPY] = 100;
	st->calls_s_on[OP_MEMCPY] = 10;
	st->copy_s[DIR_H2D][HK_PAGEABLE] = (struct copystat){.n = 10, .bytes = 10 * 4096, .ns = 5000, .sync = 10};
	memcpy(t.calls_s, st->calls_s, sizeof t.calls_s);
	memcpy(t.calls_s_on, st->calls_s_on, sizeof t.calls_s_on);
	t.kernels[0].n_s = 90;
	t.kernels[0].ns_s = 90000;
	t.devices[0].kernels_s = 90;
	t.devices[0].kernel_ns_s = 90000;
	t.devices[0].memcpys_s = 10;
	t.devices[0].memcpy_ns_s = 5000;
	struct stream_stats *s = stream_get(0, 7);
	s->busy_s = 90000;
	s->busy_copy_s = 5000;
	s->gap_s[1][0] = 50;
	s->gap_s[1][1] = 100000;
	t.sampling_since = 1;
	t.sample_windows = 9;
	t.sample_on_total = 90000000;
}

/* Writes the summary and reads it back with gpuopt's own reader. */
static void emit_and_read(struct trace_process *p)
{
	emit_summary();
	char path[128];
	snprintf(path, sizeof path, "%s/%d.json", dir, t.pid);
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);
	assert_non_null(doc);
	char *why = NULL;
	memset(p, 0, sizeof *p);
	bool ok = trace_process_parse(doc, p, &why);
	if (!ok)
		fprintf(stderr, "%s\n", why);
	assert_true(ok);
	json_decref(doc);
}

/* The text report of one process's summary (trace show's), malloc'd. */
static char *report_of(struct trace_process *p)
{
	struct trace tr = {0};
	tr.traced = true;
	tr.procs = p;
	tr.nprocs = 1;
	struct trace_config cfg;
	char *why = NULL;
	assert_true(trace_config_load(&cfg, &why));
	struct trace_report *r = trace_analyze(&tr, &cfg);
	assert_non_null(r);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct trace_report_style st = {0, 0};
	trace_report_text(f, r, &st);
	fclose(f);
	trace_report_free(r);
	trace_config_free(&cfg);
	return text;
}

static const struct trace_site_stats *site2(const struct trace_process *p)
{
	for (size_t i = 0; i < p->nstats; i++)
		if (p->stats[i].site == 2)
			return &p->stats[i];
	fail_msg("no stats for site 2");
	return NULL;
}

static void test_sampled_stretch_is_scaled_to_the_calls_made(void **state)
{
	(void)state;
	sampled_state();
	struct trace_process p;
	emit_and_read(&p);
	char *text = report_of(&p);
	assert_non_null(strstr(text, "Sampled: launches came faster"));
	assert_null(strstr(text, "records lost")); /* complete windows */
	free(text);
	assert_true(p.sampled);
	assert_int_equal(p.launches, 1000);
	assert_int_equal(p.sampled_launches, 900);
	assert_int_equal(p.recorded_launches, 90);
	assert_int_equal(p.sample_windows, 9);
	const struct trace_site_stats *s = site2(&p);
	/* 100 recorded before sampling, 90 recorded standing for 900 */
	assert_int_equal(s->kernels, 1000);
	assert_int_equal(s->kernel_ns, 1000000);
	assert_int_equal(s->api_n[OP_LAUNCH], 1000); /* counted, not estimated */
	const struct trace_copy *c = &s->copy[DIR_H2D][HK_PAGEABLE];
	assert_int_equal(c->n, 200);
	assert_int_equal(c->bytes, 200 * 4096);
	assert_int_equal(c->ns, 100000);
	assert_int_equal(c->sync, 200);
	assert_int_equal(p.nkernels, 1);
	assert_int_equal(p.kernels[0].n, 1000);
	assert_int_equal(p.kernels[0].ns, 1000000);
	assert_int_equal(p.kernels[0].min, 900); /* extremes are what was seen */
	assert_int_equal(p.ndevices, 1);
	assert_int_equal(p.devices[0].kernels, 1000);
	assert_int_equal(p.devices[0].kernel_ns, 1000000);
	assert_int_equal(p.devices[0].memcpys, 200);
	assert_int_equal(p.devices[0].memcpy_ns, 100000);
	/* busy: 245,000 recorded + 90,000 x 9 of kernels + 5,000 x 9 of copies */
	assert_int_equal(p.devices[0].busy_ns, 245000 + 810000 + 45000);
	assert_int_equal(p.nstreams, 1);
	assert_int_equal(p.streams[0].busy_ns, 300000 + 810000 + 45000);
	assert_int_equal(p.streams[0].kernel_wait_n, 100 + 50 * 9);
	assert_int_equal(p.streams[0].kernel_wait_ns, 200000 + 100000 * 9);
	trace_process_clear(&p);
}

/* Allocations and frees made while sampling but outside a window: their
 * records were off, so the summary counts them and the report says the
 * memory figures leave them out; those made in a window are not counted. */
static void test_allocations_between_windows_are_counted_and_said(void **state)
{
	(void)state;
	sampled_state();
	t.calls_s[OP_ALLOC] = 5;
	t.calls_s_on[OP_ALLOC] = 1;
	t.calls_s[OP_FREE] = 3;
	t.calls_s_on[OP_FREE] = 2;
	struct trace_process p;
	emit_and_read(&p);
	assert_int_equal(p.sample_unseen_allocs, 4 + 1);
	char *text = report_of(&p);
	assert_non_null(strstr(text, "Sampled, memory: 5 allocations and frees were made while CUPTI's allocation records were off"));
	free(text);
	trace_process_clear(&p);
	sampled_state(); /* none between windows: nothing said */
	emit_and_read(&p);
	assert_int_equal(p.sample_unseen_allocs, 0);
	text = report_of(&p);
	assert_null(strstr(text, "Sampled, memory"));
	free(text);
	trace_process_clear(&p);
}

static void test_line_with_no_recorded_sampled_launch_gets_its_mean(void **state)
{
	(void)state;
	sampled_state();
	/* this line's 900 sampled launches all fell between windows */
	struct site_stats *st = &t.stats[2];
	st->calls_s_on[OP_LAUNCH] = 0;
	st->kernel_s = (struct cnt){0, 0};
	st->kernel.n = 100;
	st->kernel.ns = 100000;
	struct trace_process p;
	emit_and_read(&p);
	const struct trace_site_stats *s = site2(&p);
	assert_int_equal(s->kernels, 100 + 900);
	assert_int_equal(s->kernel_ns, 100000 + 900 * 1000);
	trace_process_clear(&p);
}

/* The kernels recorded in all and while sampling, alike on line 2, the
 * kernel table and device 0. */
static void set_kernels(uint64_t n, uint64_t ns, uint64_t n_s, uint64_t ns_s)
{
	t.stats[2].kernel = (struct cnt){.n = n, .ns = ns};
	t.stats[2].kernel_s = (struct cnt){.n = n_s, .ns = ns_s};
	t.kernels[0].n = t.devices[0].kernels = n;
	t.kernels[0].ns = t.devices[0].kernel_ns = ns;
	t.kernels[0].n_s = t.devices[0].kernels_s = n_s;
	t.kernels[0].ns_s = t.devices[0].kernel_ns_s = ns_s;
}

/* CUPTI's records resumed late in the windows: of the 90 launches made
 * while recording, 9 left their kernels; the estimate weighs by those 9
 * (the kernels that came stand for the 900 launches) and comes out as with
 * complete windows; the summary says how many came. */
static void test_windows_that_lost_records_are_weighted_by_the_kernels_recorded(void **state)
{
	(void)state;
	sampled_state();
	set_kernels(109, 109000, 9, 9000);
	t.devices[0].busy = 245000 - 81000;
	t.sample_toggles = 18;
	t.sample_toggle_ns = 3600000;
	t.sample_toggle_max_ns = 900000;
	struct trace_process p;
	emit_and_read(&p);
	assert_int_equal(p.recorded_launches, 90);
	assert_int_equal(p.sample_kernels, 9);
	/* the sampler's switches of the records, as the reader gets them */
	assert_int_equal(p.sample_toggles, 18);
	assert_int_equal(p.sample_toggle_ns, 3600000);
	assert_int_equal(p.sample_toggle_max_ns, 900000);
	const struct trace_site_stats *s = site2(&p);
	assert_int_equal(s->kernels, 1000);
	assert_int_equal(s->kernel_ns, 1000000);
	assert_int_equal(p.kernels[0].n, 1000);
	assert_int_equal(p.devices[0].kernels, 1000);
	assert_int_equal(p.devices[0].kernel_ns, 1000000);
	assert_int_equal(p.devices[0].busy_ns, 164000 + 9000 * 99 + 5000 * 9);
	/* copies keep their own weight (10) */
	assert_int_equal(s->copy[DIR_H2D][HK_PAGEABLE].n, 200);
	char *text = report_of(&p);
	assert_non_null(strstr(text, "Sampled, records lost: the 90 launches made while recording left 9 kernel records"));
	free(text);
	trace_process_clear(&p);
}

/* Not one kernel of the windows came back: each launch made while
 * sampling counts one kernel at the mean of those recorded before, on the
 * line, the kernel, the device and its stream. */
static void test_windows_with_no_kernel_record_count_a_kernel_per_launch(void **state)
{
	(void)state;
	sampled_state();
	set_kernels(100, 100000, 0, 0);
	t.devices[0].busy = 245000 - 90000;
	struct stream_stats *ss = stream_get(0, 7);
	ss->busy_ns = 300000 - 90000;
	ss->busy_s = 0;
	t.t_last_sampled_launch = 987654321; /* where the GPU phase then ends */
	struct trace_process p;
	emit_and_read(&p);
	assert_int_equal(p.sample_kernels, 0);
	assert_int_equal(p.sample_last_launch, 987654321);
	const struct trace_site_stats *s = site2(&p);
	assert_int_equal(s->kernels, 100 + 900);
	assert_int_equal(s->kernel_ns, 100000 + 900 * 1000);
	assert_int_equal(p.kernels[0].n, 1000);
	assert_int_equal(p.kernels[0].ns, 1000000);
	assert_int_equal(p.devices[0].kernels, 1000);
	assert_int_equal(p.devices[0].kernel_ns, 1000000);
	assert_int_equal(p.devices[0].busy_ns, 155000 + 5000 * 9 + 900000);
	assert_int_equal(p.streams[0].busy_ns, 210000 + 5000 * 9 + 900000);
	trace_process_clear(&p);
}

/* The default: no window in the fast stretch. The 9 kernels recorded as
 * the records went off are left out, and the stretch's 900 launches count
 * one kernel each at the mean time of the line's recorded kernels; its
 * busy time likewise; the report says so, not "records lost", and the GPU
 * phase runs to the last launch made while sampling. */
static void test_stretch_without_windows_counts_its_launches_at_the_mean(void **state)
{
	(void)state;
	sampled_state();
	t.sample_windows = 0;
	t.sample_on_total = 0;
	set_kernels(109, 118000, 9, 18000); /* 100 of 1 us before, 9 of 2 us as the records went off */
	t.devices[0].busy = 245000 - 81000;
	t.t_last_sampled_launch = 987654321;
	struct trace_process p;
	emit_and_read(&p);
	assert_int_equal(p.sample_windows, 0);
	assert_int_equal(p.sample_kernels, 9);
	const struct trace_site_stats *s = site2(&p);
	uint64_t est = (uint64_t)(900.0 * 118000.0 / 109.0 + 0.5);
	assert_int_equal(s->kernels, 100 + 900);
	assert_int_equal(s->kernel_ns, 100000 + est);
	assert_int_equal(p.kernels[0].n, 1000);
	assert_int_equal(p.kernels[0].ns, 100000 + est);
	assert_int_equal(p.devices[0].kernels, 1000);
	assert_int_equal(p.devices[0].kernel_ns, 100000 + est);
	/* busy: less the 9 recorded kernels' 18 us, plus the estimate; copies keep their weight */
	assert_int_equal(p.devices[0].busy_ns, 164000 - 18000 + 5000 * 9 + est);
	assert_int_equal(s->copy[DIR_H2D][HK_PAGEABLE].n, 200);
	char *text = report_of(&p);
	assert_non_null(strstr(text, "count one kernel each at the mean time of the kernels recorded before"));
	assert_null(strstr(text, "records lost"));
	free(text);
	trace_process_clear(&p);
}

/* A loop that copies a 4-byte scalar back 3,000 times at one line, in a
 * stretch without windows: the records kept 199 of the copies (made as
 * they went off), but the callbacks saw every call, read its direction and
 * size, and timed the GPU's idle after each drained it. The writer passes
 * those on, the reader reads them, and the rules count the copies exactly
 * (3000 of 4 B, not an estimate from 199) and weigh their idle time, so
 * the round trips rank first, as a full trace ranks them. */
static void test_callbacks_count_every_copy_and_the_idle_after(void **state)
{
	(void)state;
	sampled_state();
	t.sample_windows = 0;
	t.sample_on_total = 0;
	struct site_stats *st = &t.stats[2];
	memset(st->copy, 0, sizeof st->copy);
	memset(st->copy_s, 0, sizeof st->copy_s);
	st->api[OP_MEMCPY] = (struct cnt){3000, 60000000};
	st->api[OP_SYNC] = (struct cnt){3000, 30000000};
	st->calls_s[OP_MEMCPY] = 2900;
	st->calls_s_on[OP_MEMCPY] = 99;
	st->copy[DIR_D2H][HK_PAGEABLE] = (struct copystat){.n = 199, .bytes = 199 * 4, .ns = 199 * 2000, .sync = 199};
	st->copy_s[DIR_D2H][HK_PAGEABLE] = (struct copystat){.n = 99, .bytes = 99 * 4, .ns = 99 * 2000, .sync = 99};
	memcpy(t.calls_s, st->calls_s, sizeof t.calls_s);
	memcpy(t.calls_s_on, st->calls_s_on, sizeof t.calls_s_on);
	st->copy_calls[DIR_D2H] = (struct copystat){.n = 3000, .bytes = 3000 * 4, .ns = 60000000};
	st->drained = (struct cnt){3000, 900000000}; /* 300 us idle after each */
	t.devices[0].first = 1000;
	t.devices[0].last = 1000 + 1000000000ull;
	t.t_last_sampled_launch = 1000 + 1000000000ull;
	struct trace_process p;
	emit_and_read(&p);
	const struct trace_site_stats *s = site2(&p);
	assert_true(s->has_calls);
	assert_int_equal(s->copy_calls[DIR_D2H].n, 3000);
	assert_int_equal(s->copy_calls[DIR_D2H].bytes, 12000);
	assert_int_equal(s->drained_n, 3000);
	assert_int_equal(s->drained_ns, 900000000);
	char *text = report_of(&p);
	const char *rt = strstr(text, "roundtrip-storm"), *lb = strstr(text, "launch-bound");
	assert_non_null(rt);
	assert_true(!lb || rt < lb);
	assert_non_null(strstr(text, "3000 device→host copies of 4 B each"));
	free(text);
	trace_process_clear(&p);
}

/* The copy calls' parameters as CUPTI hands them: direction and size. */
static void test_copy_calls_read_from_their_parameters(void **state)
{
	(void)state;
	uint64_t bytes;
	int host = 1, dev = 2;
	cudaMemcpyAsync_v3020_params ra = {.dst = &host, .src = &dev, .count = 4, .kind = cudaMemcpyDeviceToHost};
	assert_int_equal(tracer_copy_call(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &ra, &bytes), DIR_D2H);
	assert_int_equal(bytes, 4);
	cudaMemcpy_v3020_params r = {.dst = &dev, .src = &host, .count = 1 << 20, .kind = cudaMemcpyHostToDevice};
	assert_int_equal(tracer_copy_call(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, &r, &bytes), DIR_H2D);
	assert_int_equal(bytes, 1 << 20);
	cudaMemcpy2D_v3020_params r2 = {.width = 16, .height = 3, .kind = cudaMemcpyDeviceToDevice};
	assert_int_equal(tracer_copy_call(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020, &r2, &bytes), DIR_D2D);
	assert_int_equal(bytes, 48);
	cuMemcpyDtoHAsync_v2_params d = {.ByteCount = 8};
	assert_int_equal(tracer_copy_call(0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, &d, &bytes), DIR_D2H);
	assert_int_equal(bytes, 8);
	cuMemcpyHtoD_v2_params h = {.ByteCount = 64};
	assert_int_equal(tracer_copy_call(0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &h, &bytes), DIR_H2D);
	/* unified addressing without a driver to ask, another call, no parameters: unknown */
	r.kind = cudaMemcpyDefault;
	assert_int_equal(tracer_copy_call(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &r, &bytes), DIR_OTHER);
	assert_int_equal(tracer_copy_call(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, &r, &bytes), DIR_OTHER);
	assert_int_equal(bytes, 0);
	assert_int_equal(tracer_copy_call(0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, NULL, &bytes), DIR_OTHER);
}

static void test_unsampled_run_is_written_as_recorded(void **state)
{
	(void)state;
	base_state();
	struct trace_process p;
	emit_and_read(&p);
	assert_false(p.sampled);
	assert_int_equal(p.sampled_launches, 0);
	const struct trace_site_stats *s = site2(&p);
	assert_int_equal(s->kernels, 190);
	assert_int_equal(s->kernel_ns, 190000);
	assert_int_equal(s->copy[DIR_H2D][HK_PAGEABLE].n, 110);
	assert_int_equal(p.devices[0].busy_ns, 245000);
	assert_int_equal(p.streams[0].kernel_wait_ns, 200000);
	trace_process_clear(&p);
}

/* CUPTI's records of no valid time (both 0, or an end before the start)
 * count as kernels and copies but add no GPU time, no busy interval, no
 * "shorter than its launch"; the summary and the report say how many. */
static void test_records_without_times_are_counted_not_timed(void **state)
{
	(void)state;
	base_state();
	for (uint32_t corr = 501; corr <= 503; corr++)
		t.ring[corr % RING] = (struct ring_entry){.corr = corr, .site = 2, .op = OP_LAUNCH,
							  .api_ns = 5000, .enter = 1000000};
	t.ring[503 % RING].op = OP_MEMCPY;
	CUpti_ActivityKernel10 ok = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .start = 2000000,
				     .end = 2001000, .deviceId = 0, .streamId = 7, .correlationId = 501,
				     .name = "add_kernel"};
	CUpti_ActivityKernel10 zero = ok;
	zero.start = zero.end = 0;
	zero.correlationId = 502;
	CUpti_ActivityMemcpy6 back = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY, .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
				      .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
				      .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, .bytes = 4096, .start = 3000000,
				      .end = 2990000, .deviceId = 0, .streamId = 7, .correlationId = 503};
	tracer_record_locked(&ok);
	tracer_record_locked(&zero);
	tracer_record_locked(&back);
	assert_int_equal(t.untimed, 2);
	assert_int_equal(t.early, 0);
	/* one that "starts" before its launch call began: counted as early,
	 * its times kept as CUPTI gave them */
	t.ring[505 % RING] = (struct ring_entry){.corr = 505, .site = 2, .op = OP_LAUNCH, .api_ns = 5000,
						 .enter = 1000000};
	CUpti_ActivityKernel10 early = ok;
	early.correlationId = 505;
	early.start = 990000;
	early.end = 991000;
	tracer_record_locked(&early);
	assert_int_equal(t.early, 1);
	struct trace_process p;
	emit_and_read(&p);
	assert_int_equal(p.untimed, 2);
	assert_int_equal(p.early, 1);
	const struct trace_site_stats *s = site2(&p);
	assert_int_equal(s->kernels, 193);
	assert_int_equal(s->kernel_ns, 192000);
	assert_int_equal(s->kernel_short, 2); /* the timed ones: 1 us against their 5 us launch */
	assert_int_equal(s->copy[DIR_H2D][HK_PAGEABLE].n, 111);
	assert_int_equal(s->copy[DIR_H2D][HK_PAGEABLE].ns, 55000);
	assert_int_equal(p.devices[0].busy_ns, 245000 + 2000);
	assert_int_equal(p.devices[0].first, 990000); /* not 0 */
	char *text = report_of(&p);
	assert_non_null(strstr(text, "Untimed: CUPTI gave 2 kernel, copy or memset records without valid times"));
	free(text);
	trace_process_clear(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampled_stretch_is_scaled_to_the_calls_made),
		cmocka_unit_test(test_allocations_between_windows_are_counted_and_said),
		cmocka_unit_test(test_line_with_no_recorded_sampled_launch_gets_its_mean),
		cmocka_unit_test(test_windows_that_lost_records_are_weighted_by_the_kernels_recorded),
		cmocka_unit_test(test_windows_with_no_kernel_record_count_a_kernel_per_launch),
		cmocka_unit_test(test_stretch_without_windows_counts_its_launches_at_the_mean),
		cmocka_unit_test(test_callbacks_count_every_copy_and_the_idle_after),
		cmocka_unit_test(test_copy_calls_read_from_their_parameters),
		cmocka_unit_test(test_unsampled_run_is_written_as_recorded),
		cmocka_unit_test(test_records_without_times_are_counted_not_timed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
