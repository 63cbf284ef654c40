/* verdict: keep, revise or reject one candidate, with the limiting factor
 * named — problem size, transfers, unsupported-op fallback, memory
 * pressure, launch granularity, or the algorithm itself — and the evidence
 * in one sentence. Pure: the facts in, the verdict out; the thresholds come
 * from data/try.json ("verdict").
 *
 *   reject  the candidate crashed, its outputs differ from the reference,
 *           or it is slower (the whole interval below 1 / (1 + min effect));
 *   revise  it computes the same thing but is not faster, or it is faster
 *           while the trace (or its own fallback messages) names waste that
 *           costs at least waste_share of its run (not for an accelerator
 *           mode, whose synchronizes and copies are the library's own);
 *   keep    it computes the same thing and is faster beyond the minimum
 *           effect with the whole interval above it, and nothing costly is
 *           named.
 * An accelerator that applies but is not installed is `unavailable`, with
 * its install command.
 *
 * The limiting factor of a traced GPU candidate that is not faster: when
 * its GPU phase alone is shorter than the whole baseline, the GPU work
 * would win and start-up loses it (problem size); otherwise the time is
 * inside the phase, and the costliest waste the trace names there (its
 * share of the phase, try.json's "factors" mapping rule to factor) with
 * its line; a GPU idle most of its phase with no such waste is host-bound
 * (launch granularity), naming the line that held the host; the algorithm
 * only when the trace explains nothing. */
#ifndef GPUOPT_TRY_VERDICT_H
#define GPUOPT_TRY_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "try.h"

struct waste {               /* one cost the trace names */
	const char *rule;        /* "roundtrip-storm", "pageable-transfer", ... */
	const char *where;       /* "solve.py:12", or NULL */
	const char *fix;         /* or NULL */
	double share;            /* of the traced run's wall time (try computes it from cost_s):
				  * what it does to the end-to-end time the benchmark compares */
	double phase_share;      /* of the GPU phase (the trace's own share): what it does to the
				  * time the GPU work takes, host driving included */
};

struct verdict_in {
	bool available;          /* false: an accelerator that is not installed */
	const char *install;     /* its install command */
	bool ran;                /* the observed run finished with status 0 */
	const char *crash;       /* how it failed ("exit status 1: ..."), when !ran */
	bool crash_no_gpu;       /* the failure says there is no usable GPU */
	int verified;            /* 0 same outputs, 1 differ, 2 cannot compare */
	const char *mismatch;    /* the first difference, when verified != 0 */
	bool benched;
	const char *bench;       /* "faster", "slower", "no difference", or "cannot conclude: ..." */
	double speedup, lo, hi;  /* baseline / candidate */
	double base_median_s, cand_median_s;
	double min_effect;
	size_t fallbacks, gpu_calls;
	const char *fallback_top; /* the commonest fallback ("KMeans.fit: callable init"), or NULL */
	bool gpu;                /* the candidate uses the GPU (an accelerator, or GPU code) */
	bool no_gpu_here;        /* this machine has no usable NVIDIA GPU */
	const struct waste *waste; /* the trace's costs, most costly first */
	size_t nwaste;
	bool traced;
	bool accel;              /* an accelerator mode: the trace's waste is the library's own */
	double trace_wall_s;     /* the traced run's wall time */
	double gpu_window_s;     /* its GPU phase: first to last GPU call, warm-up left out (0: none) */
	double gpu_busy_s;       /* the GPU's busy time in it */
	const char *host_line;   /* the line whose CUDA calls held the host longest, or NULL */
};

struct verdict_out {
	enum try_verdict verdict;
	char *factor;            /* owned, or NULL */
	char *reason;            /* owned */
};

/* Decides; thresholds is try.json's "verdict" object (defaults if NULL). */
void verdict_decide(const struct verdict_in *in, json_t *thresholds, struct verdict_out *out);

#endif
