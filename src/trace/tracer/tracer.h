/* tracer: the state that the injected tracer's files share (inject.c: CUPTI,
 * callbacks, activity records, flushing; nvtx.c: the NVTX injection;
 * emit.c: the summary file; sites.c: Python sites and the string pool).
 *
 * Everything lives in one static struct tracer, fixed in size when the
 * process starts, so memory stays constant however long the program runs:
 * tables that fill up count what they could not keep. One mutex (t.lock)
 * guards the tables; the callbacks hold it only to update counters. Nothing
 * here allocates after start-up except CUPTI's activity buffers. */
#ifndef GPUOPT_TRACE_TRACER_H
#define GPUOPT_TRACE_TRACER_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "trace/tracefmt.h"

#define STR_ARENA (4u << 20)
#define STR_MAX 65536u
#define STR_HASH (STR_MAX * 2)
#define SITE_MAX 4096u
#define SITE_HASH (SITE_MAX * 4)
#define CODE_CACHE 4096u
#define LINE_CACHE 8192u
#define RING (1u << 18)
#define PHASE_HIST 4096u /* phase changes kept: 200 s of sampling windows */
#define KERNEL_MAX 4096u
#define STREAM_MAX 512u
#define DEVICE_MAX 64u
#define GAP_MAX 4096u
#define NVTX_MAX 2048u
#define BUSY_BATCH 4096u
#define API_MAX 1024u

/* A ring entry's phase: the low 15 bits of t.phase, and this bit when the
 * call was made while sampling. Records are kept in even phases. */
#define PHASE_SAMPLED 0x8000u
#define PHASE_ON(p) (((p) & 1u) == 0)

/* Site 0: a call with no Python frame (not Python, or a thread of its own);
 * site 1: calls from sites beyond SITE_MAX. */
#define SITE_NONE 0u
#define SITE_OVERFLOW 1u

struct cnt {
	uint64_t n, ns;
};

struct copystat {
	uint64_t n, bytes, ns, sync;
};

struct site {
	uint32_t file, line, func;        /* the innermost frame outside libraries */
	uint32_t lib_file, lib_line, lib_func; /* the library frame it called, or 0 */
};

struct site_stats {
	struct cnt api[OP_COUNT];         /* calls and their host time, by operation */
	struct cnt kernel;                /* kernels launched from here: count, GPU ns */
	uint64_t kernel_short;            /* ... that ran shorter than their launch call */
	struct copystat copy[DIR_COUNT][HK_COUNT];
	struct copystat memset;
	uint64_t alloc_bytes;
	uint64_t copy_api_sync;           /* memcpy calls that did not return before the copy ended */
	/* Sampling (see "record sampling" in inject.c): what of the above fell
	 * in the sampled stretch of the run. */
	struct cnt kernel_s;              /* kernels recorded there */
	uint64_t kernel_short_s;
	struct copystat copy_s[DIR_COUNT][HK_COUNT];
	struct copystat memset_s;
	uint64_t calls_s[OP_COUNT], calls_s_on[OP_COUNT]; /* calls made there; those made while recording */
	/* What the API callbacks see of every call, sampled or not (exact):
	 * copy calls by direction, read from their parameters (count, bytes,
	 * host time); and the GPU left idle after a call here drained its
	 * queue (a synchronize, a blocking copy to the host), until the thread's
	 * next call gave it work: how often, and for how long, on the host's clock. */
	struct copystat copy_calls[DIR_COUNT]; /* .sync unused */
	struct cnt drained;
};

struct ring_entry {
	uint32_t corr, site, prev_site;
	uint8_t op, prev_op;
	uint16_t phase;                   /* t.phase at the call (PHASE_SAMPLED: while sampling) */
	uint32_t api_ns;                  /* host time of the call (0 while it runs) */
	uint64_t enter;
};

struct kernel_stats {
	uint32_t name;
	uint32_t pad;
	uint64_t n, ns, min, max;
	uint64_t n_s, ns_s;               /* the part recorded while sampling */
};

struct stream_stats {
	uint32_t device, stream;
	uint64_t events, busy_ns, last_end;
	uint64_t host_wait_ns, kernel_wait_ns, other_ns;
	uint64_t host_wait_n, kernel_wait_n, other_n;
	uint64_t warmup_ns, warmup_n;     /* the part of host wait that was warm-up */
	uint64_t held_ns, held_n;         /* the part of other: queued work the GPU started late (held_gap) */
	uint64_t held_s[2];               /* ... recorded while sampling: n, ns */
	uint64_t busy_s, busy_copy_s, busy_set_s; /* kernel / copy / memset time recorded while sampling */
	uint64_t gap_s[3][2];             /* host / kernel / other wait recorded while sampling: n, ns */
	uint16_t last_phase;
	int have_last;
};

struct device_stats {
	int used;
	uint64_t kernel_ns, memcpy_ns, memset_ns, kernels, memcpys, memsets;
	uint64_t first, last;             /* first GPU start, last GPU end */
	uint64_t busy, run_start, run_end; /* union of busy intervals: committed + open run */
	int have_run;
	uint32_t nbatch;
	uint64_t batch[BUSY_BATCH][2];
	int64_t mem_now;                  /* device memory allocated (CUPTI memory records) */
	int64_t mem_peak;
	uint64_t allocs, frees;
	uint64_t kernels_s, kernel_ns_s;  /* the part recorded while sampling */
	uint64_t memcpys_s, memcpy_ns_s, memsets_s, memset_ns_s;
};

/* GPU idle time that the host caused: the GPU waited after the previous GPU
 * operation on a stream until the next one was even asked for. Charged to
 * the last call the launching thread made before (prev) and to the call
 * that ended the wait (next). */
struct gap_stats {
	uint32_t prev_site, next_site;
	uint8_t prev_op, used, cls;       /* cls: enum gap_class */
	uint8_t pad;
	uint64_t n, ns, max_ns;
	uint64_t n_s, ns_s;               /* the part recorded while sampling */
};

/* What a host-wait gap was: launch overhead (shorter than starved_gap_ns),
 * host work, or warm-up (it ended at the first launch of a kernel: the host
 * was compiling or loading it, or starting a library). */
enum gap_class { GAP_SHORT = 0, GAP_LONG, GAP_WARMUP, GAP_CLASSES };

struct nvtx_stats {
	uint32_t domain, name, site;
	uint8_t used, mark;
	uint16_t pad;
	uint64_t n, ns;
};

struct code_entry {
	const void *code, *fname, *name;
	int firstlineno;
	uint32_t file, func;
	uint8_t lib;
};

struct line_entry {
	const void *code;
	int32_t addr, line;
};

struct tracer {
	pthread_mutex_t lock;
	int core_ready, cupti_ready, finalized, forked, in_flush;
	/* settings */
	char dir[PATH_MAX];
	int timeline, full, strict, callbacks;
	int runtime_api, python_lines; /* diagnostic knobs: 0 leaves that part out */
	uint64_t max_events, kernel_wait_ns, starved_gap_ns;
	int sample;                        /* 1: sample the records when launches come fast */
	uint64_t sample_rate;              /* launches per second that start sampling */
	uint64_t sample_period_ns, sample_on_ns;
	char kinds[256];
	/* process */
	int pid, ppid;
	uint64_t t_start, t_first, t_last; /* CUPTI clock: tracer start, first and last call */
	/* status */
	char status[16];                   /* "traced", "not-traced" */
	char reason[1024];
	char error_api[64];
	int error_code;
	char error_name[96];
	int conflict;                      /* another CUPTI subscriber */
	char libraries[8192];              /* loaded libraries, when there is a conflict */
	char flush_reason[32];
	int signal;
	/* CUPTI and the driver */
	char cupti_path[PATH_MAX];
	char cupti_how[64];
	uint32_t cupti_version;
	int driver_version;
	char nvtx_status[128];
	/* Python */
	int py_ok;
	uint32_t last_py_site;            /* the site of the newest call made from a Python frame (runtime_site) */
	char py_version[32];
	char py_why[256];
	/* the string pool: ids are indices; 0 is "" */
	char arena[STR_ARENA];
	uint32_t arena_used;
	uint32_t str_off[STR_MAX];
	uint32_t str_len[STR_MAX];
	uint32_t nstr;
	uint32_t str_hash[STR_HASH];       /* id + 1, 0 empty */
	uint64_t str_dropped;
	/* sites */
	struct site sites[SITE_MAX];
	struct site_stats stats[SITE_MAX];
	uint32_t nsites;
	uint32_t site_hash[SITE_HASH];
	uint64_t sites_overflow;
	struct code_entry code_cache[CODE_CACHE];
	struct line_entry line_cache[LINE_CACHE];
	/* correlation */
	struct ring_entry ring[RING];
	uint64_t unattributed;
	uint32_t unmatched[8][2];          /* the first records not matched: their id, the ring's */
	/* GPU */
	struct kernel_stats kernels[KERNEL_MAX];
	uint32_t kernel_hash[KERNEL_MAX * 2];
	uint32_t nkernels;
	uint64_t kernels_overflow;
	struct stream_stats streams[STREAM_MAX];
	uint32_t nstreams;
	uint64_t streams_overflow;
	struct device_stats devices[DEVICE_MAX];
	struct gap_stats gaps[GAP_MAX];
	uint64_t gaps_overflow;
	struct nvtx_stats nvtx[NVTX_MAX];
	uint64_t nvtx_overflow;
	uint64_t sync_records[8][2];       /* by CUPTI sync type: count, ns */
	struct cnt api_runtime[API_MAX], api_driver[API_MAX];
	uint64_t overhead[16][2];          /* by CUPTI overhead kind: count, ns */
	uint64_t records, dropped, buffers, nested_driver;
	uint64_t untimed; /* kernel, copy and memset records CUPTI gave no valid times */
	uint64_t early;   /* kernel records that start more than 1 us before their launch call
			     began: times CUPTI got wrong (counted, kept as given) */
	uint64_t nvtx_calls;               /* ranges and markers counted (the flusher's sign of work) */
	/* record sampling: phase is even while records are kept, odd while
	 * not; sampling says the run is in its sampled stretch */
	uint16_t phase;
	int sampling;
	/* where each phase began, by the first correlation id in it: the phase
	 * of a record whose call has left the ring (phase_of_corr) */
	uint32_t last_corr;                /* the newest call's id */
	struct phase_mark { uint32_t corr; uint16_t phase; } phase_hist[PHASE_HIST];
	uint64_t phase_marks;
	uint64_t launches;
	uint64_t calls_s[OP_COUNT], calls_s_on[OP_COUNT]; /* calls while sampling; made while recording */
	uint64_t t_last_sampled_launch;    /* CUPTI clock: the last launch made while sampling returned */
	uint64_t sync_records_s[8][2];
	uint64_t sampling_since, sample_windows, sample_on_total;
	uint64_t sample_toggle_errors; /* cuptiActivityEnable / Disable that failed */
	int sample_toggle_last;        /* the last failure's CUptiResult */
	/* the sampler's calls to turn the sampled kinds on or off: how many,
	 * their host time in all and the longest (a stall of the program's
	 * launches, if CUPTI holds them while it switches) */
	uint64_t sample_toggles, sample_toggle_ns, sample_toggle_max_ns;
	/* the timeline */
	int events_fd;
	char events_buf[1u << 20];
	uint32_t events_buffered;
	uint64_t events_written, events_dropped;
};

extern struct tracer t;

struct tls_state {
	int busy;        /* inside the tracer: ignore CUDA calls it makes itself */
	int rt_depth;    /* inside a traced runtime call: skip the driver calls it makes */
	uint32_t rt_corr;
	uint32_t last_site;
	uint8_t last_op;
	uint32_t tid;
	/* since when the GPU has had nothing queued by this thread (a call that
	 * drained it returned), and the site of that call; 0: work queued */
	uint64_t drained_at;
	uint32_t drained_site;
	/* NVTX push / pop */
	int nvtx_depth;
	struct { uint64_t start; uint32_t domain, name, site; } nvtx_stack[64];
};

extern __thread struct tls_state tls;

/* inject.c: the direction and size of a copy call (cbid of the runtime
 * API when runtime, else of the driver API) from its parameters: the calls
 * frameworks make (CuPy and PyTorch the runtime's cudaMemcpy[Async] and
 * cudaMemcpy2D[Async], JAX and Numba the driver's cuMemcpyDtoH / HtoD /
 * DtoD and cuMemcpy[Async]; cudaMemcpyDefault and unified copies ask the
 * driver where each address is); DIR_OTHER and 0 bytes for the rest. */
enum trace_dir tracer_copy_call(int runtime, uint32_t cbid, const void *params, uint64_t *bytes);

/* sites.c (call with t.lock held unless said) */
uint32_t str_intern(const char *s, uint32_t len);
const char *str_at(uint32_t id, uint32_t *len);
/* The site of the calling thread's current Python line. A thread with no
 * Python frame (a runtime's own: JAX's dispatch, PyTorch's autograd engine)
 * or only a library's (a torch autograd hook) gets a site marked
 * TRACE_RUNTIME_THREAD (tracefmt.h): the site of the newest call made from a
 * user's frame (SITE_NONE, or the innermost library frame, before any).
 * Takes t.lock itself. */
uint32_t site_current(void);
uint32_t site_current_locked(void); /* the same, t.lock held */
/* The kernel-name table, the stream and device tables. */
struct kernel_stats *kernel_get(const char *name);
struct stream_stats *stream_get(uint32_t device, uint32_t stream);
void gap_add(uint32_t prev_site, uint8_t prev_op, uint32_t next_site, uint8_t cls, uint64_t ns, int sampled);
struct nvtx_stats *nvtx_get(uint32_t domain, uint32_t name, uint32_t site, int mark);
uint64_t now_ns(void);
uint32_t thread_id(void);

/* inject.c */
void tracer_core_init(void);
void event_append(const struct trace_event *e); /* t.lock held */
void busy_flush(struct device_stats *d);        /* t.lock held */

/* One CUPTI activity record (a CUpti_Activity *) into the stats, as the
 * buffer callback hands them over (t.lock held). */
void tracer_record_locked(const void *activity);
/* The name of a runtime (runtime = 1) or driver API callback id, or NULL. */
const char *tracer_api_name(int runtime, uint32_t cbid);
void tracer_nvtx_status(const char *s);

/* sample.c: the sampler's decision at each tick (t.lock held): with the
 * launches counted by now, -1 nothing changes, 0 turn the sampled records
 * off, 1 on; it sets t.sampling, sampling_since, sample_windows and
 * sample_on_total. The clock starts zeroed but for last_t (the start). */
struct sample_clock {
	uint64_t last_n, last_t, window, gap;
	unsigned over, under;
};
int sample_tick_locked(struct sample_clock *c, uint64_t now, uint64_t launches);

/* emit.c: writes DIR/PID.json whole (t.lock held). */
void emit_summary(void);

#endif
