/* tracefmt: what the injected tracer writes and gpuopt reads, shared by both
 * (it includes nothing of ours).
 *
 * The tracer, loaded into every process of the traced program that calls
 * cuInit (CUDA_INJECTION64_PATH) or an NVTX function (NVTX_INJECTION64_PATH),
 * writes into the directory $GPUOPT_TRACE_DIR:
 *   PID.json    the process's summary: its status, the Python sites, per-site
 *               counters, kernels, streams, devices, NVTX ranges; rewritten
 *               whole (temporary file + rename) at every flush: periodically,
 *               at cudaDeviceReset, at exit and on fatal signals;
 *   PID.events  with --timeline: a header and then fixed-size little-endian
 *               struct trace_event records, appended; the summary's
 *               "events_written" says how many are complete.
 * The summary's fields are described in src/trace/tracefile.h, which reads it.
 *
 * Settings reach the tracer in the environment: GPUOPT_TRACE_DIR (required),
 * GPUOPT_TRACE_OPTS ("timeline=0,max_events=N,full=0,strict=0,
 * kernel_wait_ns=N,starved_gap_ns=N"), GPUOPT_TRACE_CUPTI (a libcupti to use, from --cupti),
 * GPUOPT_TRACE_KINDS (which CUPTI activity kinds to enable, for overhead
 * experiments: a comma list of kernel, memcpy, memset, sync, memory,
 * overhead, runtime, driver; "none" for none), GPUOPT_TRACE_CALLBACKS=0 (no
 * API callbacks: no lines, no host times). */
#ifndef GPUOPT_TRACE_TRACEFMT_H
#define GPUOPT_TRACE_TRACEFMT_H

#include <stdint.h>

#define TRACE_SUMMARY_FORMAT "gpuopt-trace-process"
#define TRACE_SUMMARY_VERSION 1
#define TRACE_EVENTS_MAGIC "GPUOPTEV"
/* A site's library file for calls from a thread with no Python frame (a
 * runtime's own), charged to the newest call made from a Python frame:
 * that call's file, line and function, with this as its library file. */
#define TRACE_RUNTIME_THREAD "<runtime thread>"
#define TRACE_EVENTS_VERSION 1
/* The exit status the tracer gives a process it stops under --strict. */
#define TRACE_STRICT_EXIT 97

/* What a CUDA API call does, as the tracer classifies it. */
enum trace_op {
	OP_NONE = 0,
	OP_LAUNCH,  /* kernel or graph launches */
	OP_MEMCPY,
	OP_MEMSET,
	OP_SYNC,    /* device / stream / event synchronize */
	OP_ALLOC,   /* device, host (pinned) or managed allocation */
	OP_FREE,
	OP_RESET,   /* cudaDeviceReset and the like: the tracer flushes */
	OP_COUNT
};

/* Copy directions of the per-site counters. */
enum trace_dir { DIR_H2D = 0, DIR_D2H, DIR_D2D, DIR_OTHER, DIR_COUNT };
/* The host side of a copy (device-to-device copies count as "device"). */
enum trace_hostkind { HK_PAGEABLE = 0, HK_PINNED, HK_OTHER, HK_COUNT };

/* Timeline event types. */
enum trace_event_type {
	EV_KERNEL = 1,
	EV_MEMCPY,
	EV_MEMSET,
	EV_SYNC,       /* the GPU side of a synchronization (CUPTI record) */
	EV_API,        /* a traced CUDA API call on a host thread; kind = enum trace_op */
	EV_NVTX_RANGE,
	EV_NVTX_MARK,
	EV_TYPE_COUNT
};

/* One timeline record: 80 bytes, little-endian, as written by the tracer. */
struct trace_event {
	uint8_t type;      /* enum trace_event_type */
	uint8_t kind;      /* memcpy: enum trace_dir; api: enum trace_op; sync: CUPTI sync type */
	uint8_t hostkind;  /* memcpy: enum trace_hostkind */
	uint8_t flags;     /* memcpy: 1 async; kernel: 1 shorter than its launch call */
	uint32_t device;
	uint32_t stream;
	uint32_t correlation;
	uint64_t start, end; /* ns on CUPTI's clock */
	uint64_t bytes;      /* memcpy / memset bytes */
	uint32_t name;       /* string id: kernel name, API name, NVTX message */
	uint32_t site;       /* Python site of the call (the launching call for GPU work) */
	uint32_t tid;        /* host thread (API, NVTX) */
	uint32_t grid[3];    /* kernels; NVTX: grid[0] is the domain's string id */
	uint32_t block[3];
	uint32_t reserved;
};

#define TRACE_EVENT_SIZE 80
/* The events file starts with the 8-byte magic, then uint32 version and
 * uint32 record size. */
#define TRACE_EVENTS_HEADER 16

#endif
