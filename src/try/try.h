/* try: the whole method in one process — the engine behind `gpuopt try`.
 *
 * try_run() reads the contract (contract.h), scans the script, runs the
 * baseline in a run directory of its own to capture the reference outputs,
 * then tries the candidates, least disruptive first: the accelerator modes
 * that apply (from the scan) and are installed, then the user's own. Each
 * candidate is run once (its CPU fallbacks counted from what it printed),
 * its outputs verified against the reference (verify_paths), and only if
 * they match, benchmarked against the baseline (bench_run, interleaved,
 * bootstrap interval); with a GPU, one separate run is traced. Each gets a
 * verdict — keep, revise or reject — with the limiting factor named and the
 * evidence for it (verdict.c).
 *
 * Every step's result is a JSON file in the results directory, written
 * whole as soon as the step ends, so an interrupted try resumes where it
 * stopped and `gpuopt report` can be run on the directory at any time:
 *   contract.json, environment.json, scan.json, baseline.json,
 *   candidate-N.json (N from 1, in the order tried), verdict.json,
 *   reference/ (the baseline's outputs), runs/ (the run directories),
 *   logs/ (every run's stdout and stderr).
 *
 * Nothing here prints a report or picks an exit code: progress goes to the
 * caller's callback, problems to stderr through diag, the outcome into the
 * result. */
#ifndef GPUOPT_TRY_H
#define GPUOPT_TRY_H

#include <stdbool.h>
#include <stddef.h>

/* What a run's output may take in logs/, per stream, by default and at
 * least (MB: 10^6 bytes); the contract's log_limit, --log-limit. */
#define TRY_LOG_LIMIT_MB 4.0
#define TRY_LOG_LIMIT_MIN_MB 0.001

struct try_settings {
	const char *script;          /* SCRIPT, or NULL (the contract's baseline) */
	const char *contract;        /* a contract file, or NULL: found in the project directory */
	const char *python;          /* overrides the contract's, or NULL */
	const char *baseline;        /* overrides the contract's, or NULL */
	char *const *candidates;     /* more candidate command lines (NULL-terminated), or NULL */
	char *const *outputs;        /* replace the contract's outputs (NULL-terminated), or NULL */
	const char *results;         /* overrides the results directory, or NULL */
	int accelerators;            /* -1: the contract's choice; 0: none */
	int trace;                   /* -1: the contract's (auto: when a GPU is there); 0 no; 1 yes */
	double max_time;             /* < 0: the contract's */
	int min_runs;                /* < 1: the contract's */
	double log_limit;            /* MB of each stream of a run kept in logs/; 0: the contract's */
	bool fresh;                  /* start over, ignoring the steps an earlier run saved */
	/* Called with one line per step ("baseline: run 1 ..."), or NULL. */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

enum try_status {
	TRY_DONE,            /* every candidate has a verdict */
	TRY_BAD_CONTRACT,    /* the contract or the command line is wrong: nothing ran */
	TRY_BASELINE_FAILED, /* the baseline failed, or wrote no declared output */
	TRY_INTERRUPTED,     /* SIGINT / SIGTERM: what was done is saved, a rerun resumes */
	TRY_IO_ERROR,        /* the results directory could not be written */
};

enum try_verdict { TRY_KEEP, TRY_REVISE, TRY_REJECT, TRY_UNAVAILABLE };

struct try_candidate_result {
	char *name;              /* "cuml.accel", "cupy port" */
	char *kind;              /* "accelerator" or "candidate" */
	char *command;           /* what was benchmarked */
	enum try_verdict verdict;
	char *factor;            /* the limiting factor, or NULL */
	char *reason;            /* one sentence, the evidence first */
	double speedup, lo, hi;  /* baseline / candidate median time, 95% interval */
	bool have_speedup;
};

struct try_result {
	enum try_status status;
	char *results_dir;       /* absolute */
	char *message;           /* what stopped it (status != TRY_DONE), also said on stderr */
	struct try_candidate_result *cands;
	size_t ncands;
	size_t resumed_steps;    /* steps taken from an earlier run's results */
};

/* Runs the method. Never NULL; the caller frees with try_result_free. */
struct try_result *try_run(const struct try_settings *s);
void try_result_free(struct try_result *r); /* accepts NULL */

const char *try_verdict_name(enum try_verdict v); /* "keep", "revise", "reject", "unavailable" */

/* Writes a commented starter contract for script (gpuopt.toml beside it,
 * or out) from what scan finds in it. False with *why (owned); refuses to
 * replace an existing file unless force. */
bool try_init(const char *script, const char *out, bool force, char **written, char **why);

#endif
