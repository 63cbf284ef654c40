/* tracefile: a trace in memory, and the files it is read from and saved to.
 *
 * Three readers, each strict about what it accepts (a damaged file is an
 * error naming the file and the problem, never a crash: each has a fuzz
 * target in tests/fuzz):
 *   - trace_process_parse: one process's summary as the tracer writes it
 *     (DIR/PID.json, format "gpuopt-trace-process", see tracefmt.h);
 *   - trace_events_decode: the tracer's binary events file (DIR/PID.events);
 *   - trace_load / trace_parse: a saved trace, as `gpuopt trace -o FILE`
 *     writes it (format "gpuopt-trace"): the command, how it ended, the GPU
 *     record, the log lines that said where a library fell back to the CPU,
 *     and every process's summary with its events inlined. The events are
 *     read from the text straight into struct trace_event (tracetext.h), and
 *     trace_load maps a regular file and hands its pages back as it reads:
 *     the peak is about the events (80 bytes each, ~67 bytes of text), not
 *     a JSON tree of them (~1 kB each).
 * trace_save writes the saved form, whole or not at all, printing the
 * events as text rather than making a JSON tree of them.
 *
 * Ownership: a struct trace and everything in it belong to the caller, who
 * frees it with trace_free (NULL is fine). */
#ifndef GPUOPT_TRACE_TRACEFILE_H
#define GPUOPT_TRACE_TRACEFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracefmt.h"

#define TRACE_FILE_FORMAT "gpuopt-trace"
#define TRACE_FILE_VERSION 1

struct trace_site {
	const char *file, *func;         /* "" when there is no Python frame */
	uint32_t line;
	const char *lib_file, *lib_func; /* the library frame it called, "" if none */
	uint32_t lib_line;
};

struct trace_copy {
	uint64_t n, bytes, ns, sync;
};

struct trace_site_stats {
	uint32_t site;
	uint64_t api_n[OP_COUNT], api_ns[OP_COUNT];
	uint64_t kernels, kernel_ns, kernel_short;
	struct trace_copy copy[DIR_COUNT][HK_COUNT];
	struct trace_copy memset;
	/* From the API callbacks, every call (exact where the records are
	 * sampled): copy calls by direction (n, bytes, host ns), and the GPU
	 * idle after a call of this site drained its queue until the thread's
	 * next call (host clock). has_calls: the tracer wrote them. */
	struct trace_copy copy_calls[DIR_COUNT];
	uint64_t drained_n, drained_ns;
	bool has_calls;
};

struct trace_kernel {
	const char *name;
	uint64_t n, ns, min, max;
};

struct trace_stream {
	uint32_t device, stream;
	uint64_t events, busy_ns;
	uint64_t host_wait_n, host_wait_ns, kernel_wait_n, kernel_wait_ns, other_n, other_ns;
	uint64_t warmup_n, warmup_ns; /* part of host wait */
	uint64_t held_n, held_ns;     /* part of other: queued work the GPU started late (it ran other work) */
};

struct trace_device {
	uint32_t id;
	uint64_t kernels, kernel_ns, memcpys, memcpy_ns, memsets, memset_ns, busy_ns, first, last;
	int64_t mem_peak, mem_now;
	uint64_t allocs, frees;
};

/* Host-wait gaps (the GPU idle until the host asked for more) by the call
 * before them and the call that ended them, and by class: launch overhead,
 * host work, or warm-up (ended by a kernel's first launch). */
enum trace_gap_class { GAP_CLASS_SHORT = 0, GAP_CLASS_LONG, GAP_CLASS_WARMUP, GAP_CLASS_COUNT };

struct trace_gap {
	uint32_t prev_site, next_site;
	int prev_op; /* enum trace_op */
	int cls;     /* enum trace_gap_class */
	uint64_t n, ns, max_ns;
};

struct trace_nvtx {
	const char *domain, *name;
	uint32_t site;
	bool mark;
	uint64_t n, ns;
};

struct trace_named {
	const char *name;
	uint64_t n, ns;
};

struct trace_process {
	int pid, ppid;
	const char *status;  /* "traced" or "not-traced" */
	const char *reason;  /* why not traced, or NULL */
	const char *error_api, *error_name;
	int error_code;
	bool conflict;
	const char **libraries; size_t nlibraries;
	const char *flush;   /* "exit", "signal", "reset", "periodic", "start" */
	int signal;
	const char *py_version, *py_why;
	bool py_lines;
	const char *cupti_path, *cupti_how;
	uint32_t cupti_version;
	int driver_version;
	const char *nvtx_status;
	bool timeline, full, strict, callbacks;
	uint64_t max_events, kernel_wait_ns, starved_gap_ns;
	const char *kinds;
	uint64_t t_start, t_first, t_last, t_end;
	uint64_t records, dropped, unattributed, buffers, nested_driver, strings_dropped,
		 sites_overflow, kernels_overflow, streams_overflow, gaps_overflow, nvtx_overflow,
		 events_written, events_dropped;
	uint64_t untimed; /* kernel, copy and memset records CUPTI gave no valid times (counted, not timed) */
	uint64_t early;   /* kernel records starting before their launch call did (kept as given) */
	/* Kernel sampling: launches in the run, those made in its sampled
	 * stretch and those of them whose kernels were recorded (the rest are
	 * estimated from them), the recording windows, their time, and the
	 * launch rate that starts it (0: off); the kernel records of the
	 * launches made while recording (fewer when CUPTI's records resumed late
	 * in a window), CUPTI's refusals to turn records on or off, and the
	 * sampler's switches of them: how many, their host time in all and the
	 * longest, and the allocations and frees made between windows, whose
	 * bytes are not in the devices' memory figures (these: 0 in summaries
	 * of tracers before them). */
	bool sampled;
	uint64_t launches, sampled_launches, recorded_launches, sample_windows, sample_recorded_ns, sample_rate;
	uint64_t sample_kernels, sample_toggle_errors, sample_toggles, sample_toggle_ns, sample_toggle_max_ns,
		 sample_unseen_allocs;
	uint64_t sample_last_launch; /* CUPTI clock: when the last launch made while sampling returned (0: none
				      * or a tracer before it): where the GPU phase ends when the windows lost
				      * their records */
	const char **strings; size_t nstrings;
	struct trace_site *sites; size_t nsites;
	struct trace_site_stats *stats; size_t nstats;
	struct trace_kernel *kernels; size_t nkernels;
	struct trace_stream *streams; size_t nstreams;
	struct trace_device *devices; size_t ndevices;
	struct trace_gap *gaps; size_t ngaps;
	struct trace_nvtx *nvtx; size_t nnvtx;
	struct trace_named *syncs; size_t nsyncs;       /* name: the CUPTI sync type as text */
	struct trace_named *overhead; size_t noverhead;
	struct trace_named *api; size_t napi;
	struct trace_event *events; size_t nevents;
	json_t *json;        /* the summary as read (owns the strings above) */
};

/* One line of program output that says a library ran a call on the CPU
 * (or on the GPU), counted: see data/trace.json's "log_patterns". */
struct trace_logline {
	const char *library, *kind, *name, *reason; /* kind: "fallback" or "gpu" */
	uint64_t n;
};

struct trace {
	char **argv;         /* the command, NULL-terminated */
	char *cwd;           /* where it ran (labels are shown relative to it), or NULL */
	int exit_code;       /* -1 when ended by a signal */
	int signal;
	bool timed_out;
	double wall_s;       /* the program's wall time */
	bool traced;         /* the tracer recorded at least one process */
	char *note;          /* why there is no trace, or NULL */
	json_t *gpu;         /* gpuinfo_query's record, or NULL */
	struct trace_logline *log; size_t nlog;
	struct trace_process *procs; size_t nprocs;
	json_t *json;        /* what was loaded (owns the strings of log) */
};

/* Parses one process summary object (its strings stay owned by obj, which
 * p takes a reference to). False with *why (owned) when it is malformed. */
bool trace_process_parse(json_t *obj, struct trace_process *p, char **why);

/* Decodes an events file's bytes into p->events (replacing them); at most
 * limit records (the summary's events_written), a short tail is ignored.
 * False with *why (owned) when the header is not an events header or a
 * record refers to a string or site the summary does not have. */
bool trace_events_decode(const unsigned char *data, size_t len, uint64_t limit,
			 struct trace_process *p, char **why);

/* Parses a saved trace. False with *why (owned). */
bool trace_parse(const char *text, size_t len, struct trace *out, char **why);
/* Reads and parses a saved trace file; errors name the file. */
bool trace_load(const char *path, struct trace *out, char **why);

/* Builds the saved form (a new reference). */
json_t *trace_to_json(const struct trace *t);
/* Writes it to path whole or not at all. */
bool trace_save(const struct trace *t, const char *path, char **why);

/* Releases everything in t (not t itself); accepts a zeroed struct. */
void trace_clear(struct trace *t);
void trace_process_clear(struct trace_process *p);

/* Names: "launch", "memcpy", ...; "H2D", "D2H", "D2D", "other"; "pageable", "pinned", "other". */
const char *trace_op_name(int op);
const char *trace_dir_name(int dir);
const char *trace_hostkind_name(int hk);
const char *trace_gap_class_name(int cls);
int trace_op_from_name(const char *name);

#endif
