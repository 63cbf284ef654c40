/* analyze: what a trace says — the run's time budget, a table per Python
 * line sorted by cost, the kernels, the GPU's idle time split as HTA does,
 * and the rules (data/trace.json), each finding with its evidence, the
 * seconds of the run it explains and the fix.
 *
 * Sites of all processes are merged by their text (file, line, function
 * and library frame), devices by id, kernels by name. Nothing here prints;
 * report.h renders. The caller owns the report (trace_report_free accepts
 * NULL); it points into the trace and the config, which must outlive it. */
#ifndef GPUOPT_TRACE_ANALYZE_H
#define GPUOPT_TRACE_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "tracefile.h"

struct trace_line {
	struct trace_site site;
	char *label;                       /* "solve.py:12 (main)" */
	uint64_t api_n[OP_COUNT], api_ns[OP_COUNT];
	uint64_t kernels, kernel_ns, kernel_short;
	struct trace_copy copy[DIR_COUNT][HK_COUNT];
	struct trace_copy memset;
	uint64_t idle_after_ns;            /* GPU host-wait idle that followed its calls */
	uint64_t idle_before_ns;           /* ... that its calls ended */
	uint64_t gpu_ns;                   /* kernels + copies + memsets it caused */
	uint64_t cost_ns;                  /* sort key: max(host time in its calls, gpu_ns) */
	/* from the API callbacks, every call (trace_site_stats): exact where
	 * the records above are sampled estimates */
	struct trace_copy copy_calls[DIR_COUNT];
	uint64_t drained_n, drained_ns;    /* GPU idle after its calls drained the queue */
	bool has_calls;
	bool estimated;                    /* its record figures are scaled from a sample */
};

struct trace_budget {
	double wall_s;                     /* the program's wall time (or its traced span) */
	uint64_t span_ns;                  /* first to last CUDA call, summed over processes */
	uint64_t phase_ns;                 /* first to last GPU operation, less warm-up, summed over processes */
	uint64_t run_ns;                   /* what shares are of: phase_ns, else span_ns, else the wall time */
	uint64_t warmup_ns, warmup_n;      /* host waits that ended at a kernel's first launch */
	uint64_t warmup_max_ns;            /* the longest of them, after a call of warmup_after until */
	const char *warmup_after, *warmup_until; /* ... warmup_until's first launch (labels, or NULL) */
	uint64_t busy_ns, kernel_ns, memset_ns, kernels, launches, launch_ns;
	struct trace_copy copy[DIR_COUNT][HK_COUNT];
	uint64_t sync_n, sync_ns, alloc_n, alloc_ns, free_n, free_ns, memcpy_api_ns;
	uint64_t host_wait_ns, kernel_wait_ns, other_ns; /* HTA's idle time, over all streams */
	uint64_t host_wait_n, kernel_wait_n, other_n;
	uint64_t held_ns, held_n; /* of other: queued work the GPU started late, running other work (shared) */
	uint64_t records, dropped, unattributed, events, events_dropped, overhead_ns, untimed;
	/* kernel sampling (trace_process): launches made while sampling, and of
	 * them those whose kernels were recorded; kernel figures are estimates
	 * when sampled_launches > 0; the kernel records of those recorded, and
	 * CUPTI's refusals to turn records on or off; the allocations and frees
	 * made between windows, which the memory figures leave out */
	uint64_t sampled_launches, recorded_launches, sample_windows, sample_kernels, sample_toggle_errors,
		 sample_unseen_allocs;
};

struct trace_device_row {
	uint32_t id;
	const char *name;                  /* from the GPU record, or NULL */
	uint64_t memory_total;             /* bytes, 0 unknown */
	uint64_t busy_ns, kernel_ns, memcpy_ns, memset_ns, kernels, memcpys, memsets, span_ns;
	int64_t mem_peak;
	uint64_t allocs, frees;
};

struct trace_kernel_row {
	const char *name;
	uint64_t n, ns, min, max;
};

struct trace_finding {
	enum trace_rule rule;
	const struct trace_rule_text *text;
	double cost_s;                     /* seconds of the run it explains (0: not measurable) */
	char *where;                       /* the line it is about, or NULL */
	char *evidence;                    /* the rule's evidence text, filled in */
};

struct trace_nvtx_row {
	const char *domain, *name;
	const char *where;                 /* a line label, or "" */
	bool mark;
	uint64_t n, ns;
};

struct trace_report {
	const struct trace *trace;
	const struct trace_config *config;
	struct trace_budget budget;
	struct trace_line *lines; size_t nlines;         /* sorted by cost */
	struct trace_kernel_row *kernels; size_t nkernels; /* sorted by total time */
	struct trace_device_row *devices; size_t ndevices;
	struct trace_nvtx_row *nvtx; size_t nnvtx;
	struct trace_finding *findings; size_t nfindings; /* most costly first */
};

struct trace_report *trace_analyze(const struct trace *t, const struct trace_config *cfg);
void trace_report_free(struct trace_report *r);

/* Whether s holds calls a runtime's own thread made (no Python frame),
 * charged to the newest Python call before them (TRACE_RUNTIME_THREAD). */
bool trace_site_runtime_thread(const struct trace_site *s);

/* Formatting shared with the report: "1.23 s", "45.6 ms", "12 µs"; "4 B",
 * "1.5 MiB"; "7.9 GB/s". Owned. */
char *trace_fmt_ns(uint64_t ns);
char *trace_fmt_bytes(uint64_t bytes);
char *trace_fmt_rate(uint64_t bytes, uint64_t ns);

#endif
