/* bench: the benchmark engine's face for code, and the data of one session —
 * settings, every run's raw numbers, the statistics and verdicts computed
 * from them, and the environment record. bench_run() (bench.c) measures;
 * benchfmt.c renders the text table, JSON, CSV and Markdown.
 *
 * Ownership: a bench_result owns its groups, their commands, runs, strings
 * and the environment JSON; bench_result_free() releases all of it. */
#ifndef GPUOPT_BENCH_H
#define GPUOPT_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/gpuinfo.h"
#include "core/stats.h"
#include "core/util.h"

#define BENCH_CONFIDENCE 0.95
#define BENCH_SHORT_RUN_S 0.005        /* warn below: process start-up dominates */
#define BENCH_FIRST_RUN_FACTOR 1.5     /* warn when the first measured run is this much slower */
#define BENCH_HIGH_VARIATION 0.10      /* warn when 1.4826 * MAD / median is above */
#define BENCH_OUTLIER_SHARE 0.10       /* warn when more outliers than this share of runs */
#define BENCH_SHELL_CALIBRATION_RUNS 50
#define BENCH_SHELL_DRIFT 0.10         /* with --shell, less left than this share of the start-up: no verdict */
#define BENCH_SHELL_MIN_PROBES 5       /* fewer empty runs in the rounds: the calibration's start-up is used */
#define BENCH_CHECK_RESAMPLES 2000     /* resamples for the stop rule's interval */
#define BENCH_GPU_INTERVAL_MS 10
#define BENCH_MIN_PAIRS 5              /* fewer rounds: no interval, the verdict cannot conclude */
#define MAX_PARAM_VALUES 100000       /* values of one parameter, and combinations of all */

enum output_mode { OUTPUT_NULL, OUTPUT_INHERIT, OUTPUT_FILE };

struct param {
	char *name;
	char **values;   /* owned strings */
	size_t nvalues;
};

struct bench_settings {
	unsigned warmup, min_runs, max_runs;   /* max_runs 0: no limit */
	double min_time_s, max_time_s;          /* max_time_s 0: no limit */
	double precision, min_effect;           /* fractions: 0.02, 0.05 */
	uint64_t seed;
	unsigned resamples;
	const char *shell;                      /* NULL: no shell */
	struct ptrvec prepare, setup, cleanup;  /* command lines (borrowed from argv) */
	struct ptrvec names;                    /* --command-name values */
	struct param *params;
	size_t nparams;
	const char *input;                      /* NULL: /dev/null */
	enum output_mode output;
	const char *output_file;
	double timeout_s;                       /* 0: none */
	bool ignore_failure, fail_on_slower;
	bool min_runs_set;                      /* --min-runs / --runs given: honoured over --max-time */
	const char *python;                     /* NULL: the commands' own Python, else python3 */
	const char *export_json, *export_csv, *export_markdown; /* for the caller; unused by bench_run */
	bool progress;                          /* a progress line on stderr (a terminal) */
	char *const *cwds;                      /* per command line, the directory its runs
						 * (and --prepare, --setup, --cleanup) start in;
						 * NULL: gpuopt's own */
};

/* How a bench_run ended. Every case but BENCH_OK has been said on stderr
 * (the command, why, and a failed run's last stderr lines). Whatever the
 * status, the groups before nmeasured were measured to the end and are
 * concluded: what was measured can still be reported and exported. */
enum bench_status {
	BENCH_OK,            /* every group measured and concluded */
	BENCH_BAD_COMMAND,   /* a command could not be split or is not found; nothing ran */
	BENCH_CANNOT_START,  /* a command could not be started (exec failed) */
	BENCH_RUN_FAILED,    /* a run, --prepare or --setup failed, without --ignore-failure */
	BENCH_CLEANUP_FAILED,/* every run done, but a --cleanup failed */
	BENCH_INTERRUPTED,   /* a signal (SIGINT, SIGTERM, SIGHUP...): the running command was stopped */
};

struct bench_run {
	unsigned round;       /* measured rounds count from 0; warm-up rounds likewise */
	unsigned slot;        /* position of this run in its round's shuffled order */
	bool warmup;
	double wall_s;        /* with --shell: less its group's shell_wall_s, not below 0 */
	double wall_raw_s, user_s, sys_s;
	long peak_rss_kib;
	int exit_code, signal;
	bool timed_out;
	struct gpu_usage *gpu; /* one per sampled device, or NULL */
};

struct gpu_summary {      /* one device over a command's measured runs */
	unsigned samples;
	double mem_peak, mem_mean, util_peak, util_mean;
};

struct bench_command {
	char *text;           /* the command line after {VAR} substitution */
	char *name;           /* --command-name, or the text */
	char **argv;          /* what is executed (NULL-terminated, owned) */
	const char *cwd;      /* where it starts (borrowed from the settings), or NULL */
	char **prepare, **setup, **cleanup; /* argv or NULL */
	char *prepare_text, *setup_text, *cleanup_text;
	char **param_values;  /* one per settings param, owned; NULL without params */
	struct bench_run *runs;
	size_t nruns, cap;
	double measured_s;    /* sum of measured wall times so far */
	/* computed after the runs */
	size_t measured, failed;
	struct summary wall, user, sys;
	double rss_median_kib;
	long rss_max_kib;
	struct gpu_summary *gpu; /* ndev entries or NULL */
	struct ptrvec warnings;  /* owned strings */
};

struct bench_comparison {
	size_t candidate;            /* index into the group's commands (baseline is 0) */
	struct interval speedup;     /* baseline median / candidate median */
	size_t pairs;
	const char *verdict;         /* "faster", "slower", "no difference", "cannot conclude" */
	char *why;                   /* "cannot conclude": why not (owned), else NULL */
	bool conclusive;             /* the interval lies wholly on one side of the thresholds */
	double half_width;           /* max(hi/est - 1, 1 - lo/est) */
};

struct bench_group {
	struct bench_command *cmds;
	size_t ncmds;
	char **param_values;         /* values shared by all commands, or NULL */
	struct bench_comparison *cmp; /* ncmds - 1 */
	struct interval median_ci;   /* one command alone: its median's interval */
	char *median_why;            /* one command: why there is no interval (owned), or NULL */
	size_t rounds;
	double elapsed_s;            /* the measured rounds (what --max-time counts) */
	double total_s;              /* setup, warm-up, rounds and cleanup */
	const char *stop_reason;
	struct ptrvec warnings;
	/* with --shell: one empty shell run in each measured round, at a
	 * shuffled place among the commands, so the start-up subtracted is the
	 * one of the moments the commands ran (a machine that slows or speeds up
	 * after the calibration moves both). Set when concluded: */
	double *shell_probe_s;       /* the empty runs' wall times (owned), nshell_probes of them */
	size_t nshell_probes;
	double shell_wall_s;         /* subtracted from this group's wall times */
	double shell_noise_s;        /* 1.4826 * MAD of the empty runs it comes from */
	bool shell_from_probes;      /* false: too few rounds, the calibration's values */
};

struct bench_result {
	enum bench_status status;
	int signal;                  /* BENCH_INTERRUPTED: the signal that came */
	const struct bench_settings *set; /* borrowed from the caller */
	struct bench_group *groups;
	size_t ngroups;
	size_t nmeasured;            /* groups measured to the end and concluded (all, with BENCH_OK) */
	const char *failed_step;     /* what failed: "run", "--prepare", "--setup", "--cleanup", or NULL */
	size_t ndev;                 /* GPUs sampled during runs (0: none) */
	json_t *env;                 /* {host, python, gpu}; python.chosen_by says whose */
	char *started_at;            /* ISO 8601 UTC */
	double duration_s;
	char *invocation;            /* the gpuopt command line, quoted (owned; set by the caller) */
	long rss_floor_kib;          /* gpuopt's resident size: lowest visible peak RSS */
	bool shell_calibrated;       /* --shell: the empty shell timed before the runs */
	size_t shell_runs;
	double shell_noise_s;        /* 1.4826 * MAD of the empty shell's wall times */
	double shell_wall_s, shell_user_s, shell_sys_s;
};

/* Runs the benchmark of commands (command lines, with {VAR} of s's
 * parameters) under s, which must outlive the result. Never NULL: the
 * caller reads status, and frees the result with bench_result_free. The
 * statistics and verdicts are set for the first nmeasured groups. A
 * comparison whose data cannot give a verdict (failed runs, too few rounds,
 * a time of zero after the shell's start-up) says "cannot conclude" and why,
 * never a number. */
struct bench_result *bench_run(const struct bench_settings *s, char *const *commands, size_t ncommands);
void bench_result_free(struct bench_result *r); /* accepts NULL */

/* Renders the human report (verdicts first, then tables and notes). */
void bench_print_text(FILE *out, const struct bench_result *r);
/* The other formats, as owned NUL-terminated text. */
char *bench_to_json(const struct bench_result *r);
char *bench_to_csv(const struct bench_result *r);
char *bench_to_markdown(const struct bench_result *r);

/* "12.3 ms"-style duration with three significant digits. Owned. */
char *bench_format_seconds(double s);

/* The display label of a command in its group ("baseline", "candidate 1"...). */
const char *bench_role(size_t index);

#endif
