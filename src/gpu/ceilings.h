/* ceilings: one GPU's measured ceilings — host<->device copy time by size
 * for pageable and pinned host memory, first-touch pageable copies, the
 * device-to-device copy rate, launch and synchronize latencies, and copies
 * to other GPUs — as `gpuopt fit` measures them (src/fit/), kept in a cache
 * that other commands read (`gpuopt trace` compares what a program moved
 * with these rates).
 *
 * The cache is one JSON file per GPU, $XDG_CACHE_HOME/gpuopt/ceilings/
 * UUID.json (else ~/.cache/gpuopt/...), schema "gpuopt-ceilings/1", written
 * whole or not at all. An entry measured under another driver or another
 * gpuopt version is stale: ceilings_load_cached says so and fit measures
 * again.
 *
 * Ownership: a struct ceilings owns its strings and arrays;
 * ceilings_free releases them (a zeroed struct is fine). Decoding accepts
 * any bytes: what is not a valid file is refused with a reason. */
#ifndef GPUOPT_CEILINGS_H
#define GPUOPT_CEILINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CEILINGS_SCHEMA "gpuopt-ceilings/1"
enum { CEIL_MAX_POINTS = 32, CEIL_MAX_PEERS = 64 };

enum ceil_kind { CEIL_H2D_PAGEABLE, CEIL_D2H_PAGEABLE, CEIL_H2D_PINNED, CEIL_D2H_PINNED, CEIL_KINDS };

/* "h2d_pageable", ... (the JSON keys), and "host→device, pageable" for people. */
const char *ceil_kind_key(enum ceil_kind k);
const char *ceil_kind_text(enum ceil_kind k);

/* One measured copy size. */
struct ceil_point {
	uint64_t bytes;  /* one copy's size */
	double seconds;  /* one copy's time: the median trial's time / copies per trial */
	double gbps;     /* bytes / seconds / 1e9 */
	double cv;       /* coefficient of variation of the trials' times (sd / mean) */
	unsigned trials; /* timed trials */
	unsigned reps;   /* copies per trial */
};

/* A latency: median of n timings, in microseconds, and their variation. */
struct ceil_time {
	double us, cv;
	unsigned n;
};

/* Copies from this GPU to another one. */
struct ceil_peer {
	char *to_uuid;
	int to_cuda_index;
	bool peer_access;  /* measured with peer access enabled (else staged by the driver) */
	struct ceil_point pt;
};

struct ceilings {
	char *gpuopt_version, *measured_at, *method;
	char *gpu_uuid, *gpu_name, *pci_bus_id;
	int cuda_index;
	char *driver_version, *cuda_driver_version;
	uint64_t memory_total_bytes, memory_free_bytes;
	int numa_node;  /* -1: unknown or one node */
	char *cpus;     /* the CPUs the measuring thread was pinned to, or NULL */
	/* Shares (0 to 1) of the pageable buffers in transparent huge pages
	 * (core/smaps.h), -1 unknown: the reused buffer, and the first-touch
	 * buffers after their copy (median over the trials; [0] host→device,
	 * [1] device→host). Pageable rates on a VM move with them. */
	double huge_share_pageable;
	double huge_share_first_touch[2];
	size_t npoints[CEIL_KINDS];
	struct ceil_point curve[CEIL_KINDS][CEIL_MAX_POINTS]; /* bytes strictly increasing */
	bool have_first_touch[2];            /* [0] host→device, [1] device→host */
	struct ceil_point first_touch[2];    /* pageable host memory never touched before */
	bool have_d2d;
	struct ceil_point d2d;               /* gbps counts bytes read + bytes written */
	struct ceil_time launch;             /* host time to enqueue one empty kernel */
	struct ceil_time launch_gpu;         /* GPU time per empty kernel, back to back */
	struct ceil_time launch_sync;        /* launch one and wait for it */
	struct ceil_time sync;               /* synchronize an idle stream */
	char *python_via;                    /* "cupy 14.2.0" when measured from Python, else NULL */
	char *python_interpreter;
	struct ceil_time python_op;          /* one tiny array operation, host side */
	struct ceil_time python_op_sync;     /* the same operation and a synchronize */
	size_t npeers;
	struct ceil_peer *peers;
};

void ceilings_free(struct ceilings *c);

/* The file's JSON text (owned, never NULL). */
char *ceilings_encode(const struct ceilings *c);
/* The same as a new JSON object. */
json_t *ceilings_to_json(const struct ceilings *c);

/* Parses a ceilings file of len bytes into *out (zeroed first). False with
 * *why owned ("not JSON: ...", "transfers.h2d_pinned[2]: bytes must grow",
 * ...) when it is not one; *out is then empty. */
bool ceilings_decode(const char *text, size_t len, struct ceilings *out, char **why);

/* Reads and decodes a ceilings file; *why names the file on failure. */
bool ceilings_read_file(const char *path, struct ceilings *out, char **why);

/* The cache file of a GPU (owned), NULL when there is no cache directory or
 * the UUID is not one ("GPU-" and hex digits and dashes). */
char *ceilings_cache_path(const char *gpu_uuid);

enum ceil_status { CEIL_OK, CEIL_MISSING, CEIL_STALE, CEIL_DAMAGED };

/* Loads the cached ceilings of a GPU measured under driver_version by this
 * gpuopt version. CEIL_STALE (another driver or version) and CEIL_DAMAGED
 * set *why (owned); *out is filled only for CEIL_OK. */
enum ceil_status ceilings_load_cached(const char *gpu_uuid, const char *driver_version,
				      struct ceilings *out, char **why);

/* Writes c to its GPU's cache file, whole or not at all, making the
 * directory. False with *why owned. */
bool ceilings_save_cached(const struct ceilings *c, char **why);

/* The time of one copy of `bytes` of kind k, from the measured points:
 * interpolated log-log between sizes, the smallest size's time below it
 * (latency-bound), the largest size's rate above it. NaN when nothing of
 * that kind was measured. */
double ceilings_copy_seconds(const struct ceilings *c, enum ceil_kind k, uint64_t bytes);

/* bytes / ceilings_copy_seconds / 1e9. */
double ceilings_gbps(const struct ceilings *c, enum ceil_kind k, uint64_t bytes);

#endif
