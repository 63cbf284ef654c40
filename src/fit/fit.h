/* fit: step 2 of the method, "check suitability before porting" — this
 * machine's real ceilings (measure.h), kept per GPU in the cache
 * (gpu/ceilings.h), and the answer for a working set: does it fit free
 * device memory with room for temporaries, how long moving it in and out
 * takes at the measured pageable and pinned rates, and, given the CPU
 * baseline's time, the best end-to-end speedup possible if GPU compute were
 * free (the transfer floor), with a verdict; too big: a chunk size that
 * fits and the pointer to Dask for several GPUs. The measured numbers stand
 * beside the GPU's published peaks (data/gpus.json).
 *
 * The face for code: a struct fit_settings, fit_run, and a struct
 * fit_result the caller frees with fit_result_free. fit_answer_compute is
 * the arithmetic alone, on any ceilings (the recorded H200 ones in tests).
 * Nothing here prints a report or picks an exit code; problems are in the
 * result (input_error: the caller's input is wrong; error: no GPU could be
 * measured), and the engine prints progress only when settings.progress. */
#ifndef GPUOPT_FIT_H
#define GPUOPT_FIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/ceilings.h"

#define FIT_SCHEMA "gpuopt-fit/1"

struct fit_settings {
	/* the machine */
	bool refresh;              /* measure even when the cache has the ceilings */
	bool quick;                /* sizes x16 up to 256 MiB, 5 trials */
	unsigned trials;           /* timed trials per size; 0: 7 (5 with quick) */
	uint64_t max_bytes;        /* the largest copy; 0: 1 GiB (256 MiB with quick) */
	const char *ceilings_file; /* use this saved ceilings file instead of a GPU */
	int gpu;                   /* this GPU (NVML index) only; -1: every GPU */
	bool peers;                /* copies between GPUs when there are several */
	const char *python;        /* also time tiny operations from this Python; NULL: not */
	bool progress;             /* progress lines on stderr */
	double timeout_s;          /* for the measurement; 0: 600 */
	/* the working set: the sum of all that is given */
	uint64_t bytes;            /* --bytes */
	const char *const *files;  /* .npy files: their headers give dtype and shape */
	size_t nfiles;
	/* arrays: the i-th --dtype with the i-th --shape ("1000000,64") */
	const char *const *dtypes;
	size_t ndtypes;
	const char *const *shapes;
	size_t nshapes;
	uint64_t out_bytes;        /* what comes back to the host */
	bool out_bytes_set;        /* else: as much as goes in */
	double temp_factor;        /* device memory per byte of working set; 0: 3 */
	double cpu_seconds;        /* the CPU baseline's time for this part; < 0: not given */
	double min_speedup;        /* the transfer floor must leave at least this; 0: 2 */
};

/* One GPU's published peaks (data/gpus.json), when the table has it. */
struct fit_peak {
	bool found;
	char *name, *host_link, *source;
	double memory_gbps, host_gbps, nvlink_gbps; /* nvlink: 0 when none */
};

struct fit_gpu {
	int index;              /* NVML's (gpuinfo devices[].index); -1 from a file */
	char *name, *uuid;
	bool measured;          /* the ceilings are valid */
	struct ceilings ceil;
	char *source;           /* "measured now", "cached", "read from FILE" */
	char *cache_path;       /* where they are kept, or NULL */
	char *cache_note;       /* why the cache was not used or not written, or NULL */
	char *error;            /* why this GPU has no ceilings */
	uint64_t memory_free_bytes; /* now (NVML), else as measured */
	char *link;             /* "PCIe Gen5 x16", from NVML, or NULL */
	double link_gbps;       /* that link's rate each way, from the PCIe table; NAN unknown */
	struct fit_peak peak;
};

struct fit_array {
	char *label;            /* the file, or "float32 (1000000, 64)", or "--bytes" */
	char *dtype, *shape;    /* NULL for --bytes */
	uint64_t bytes;
	uint64_t row_bytes;     /* bytes per index of the first axis (chunking), 0: any */
};

enum fit_verdict {
	FIT_VERDICT_NONE,       /* no --cpu-seconds: no verdict */
	FIT_CANNOT_PAY,
	FIT_ONLY_IF_RESIDENT,   /* can pay only if the data stays on the device */
	FIT_ROOM_TO_GAIN,
};
const char *fit_verdict_name(enum fit_verdict v); /* "cannot pay", ... */

struct fit_answer {
	bool have;              /* a working set was given */
	size_t narrays;
	struct fit_array *arrays;
	int gpu;                /* the position in result->gpus answered for */
	uint64_t in_bytes, out_bytes;
	double temp_factor;
	uint64_t need_bytes;    /* in_bytes x temp_factor + the context reserve */
	uint64_t free_bytes;
	bool fits;
	/* seconds to move it in / out */
	double in_pageable, out_pageable, in_pinned, out_pinned, in_fresh, out_fresh;
	double overhead_s;      /* one launch and a synchronize */
	double cpu_seconds;     /* NAN: not given */
	double min_speedup;
	/* best end-to-end speedups if GPU compute were free */
	double best_pageable, best_fresh, best_pinned, best_resident;
	enum fit_verdict verdict;
	char *why;              /* the verdict's reason, one sentence */
	/* when it does not fit */
	uint64_t chunk_bytes, chunk_rows, chunks;
	char *too_big;          /* the pointer to Dask, or NULL */
};

struct fit_result {
	char *input_error;      /* a bad --shape, an unreadable .npy, ...: nothing else was done */
	char *error;            /* no GPU measured: "no NVIDIA GPU: ..." */
	bool no_gpu;            /* error is that there is no NVIDIA GPU or driver */
	json_t *gpuinfo;        /* the GPU record, or NULL with ceilings_file */
	size_t ngpus;
	struct fit_gpu *gpus;
	double measure_s;       /* time spent measuring */
	struct fit_answer answer;
};

/* Runs everything the settings ask for; never NULL. */
struct fit_result *fit_run(const struct fit_settings *s);
void fit_result_free(struct fit_result *r);

/* The result as JSON (schema FIT_SCHEMA), a new object. */
json_t *fit_result_json(const struct fit_result *r);

/* The working set of s (files, dtype and shape, bytes) into a->arrays and
 * a->in_bytes; false with *why owned on bad input. */
bool fit_working_set(const struct fit_settings *s, struct fit_answer *a, char **why);

/* The answer for the working set already in a, on ceilings c with
 * free_bytes of device memory free. Pure arithmetic. */
void fit_answer_compute(const struct ceilings *c, uint64_t free_bytes, const struct fit_settings *s,
			struct fit_answer *a);
void fit_answer_free(struct fit_answer *a);

/* The published peaks of the GPU called name (NVML's name), from
 * data/gpus.json; p->found false when the table has no such GPU. */
void fit_peak_lookup(const char *name, struct fit_peak *p);
void fit_peak_free(struct fit_peak *p);

/* The rate of a PCIe link each way in GB/s (gen 1-6, width lanes), from
 * data/gpus.json; NAN when unknown. */
double fit_pcie_gbps(int gen, int width);

/* Parses a size: 123, 1.5e9, 64KiB, 8GiB (powers of 1024), 8G (the same),
 * 8GB (powers of 1000). False when it is not one. */
bool fit_parse_bytes(const char *s, uint64_t *out);

/* "1.00 GiB", "512 KiB", "123 B": owned. */
char *fit_bytes_text(uint64_t b);

#endif
