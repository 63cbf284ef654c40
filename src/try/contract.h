/* contract: what `gpuopt try` is asked to prove, stated once — the baseline
 * command, the outputs it writes and their tolerances, the candidates, the
 * interpreter, warm-up and run limits, the metric. Read from `[tool.gpuopt]`
 * in pyproject.toml or from the top of gpuopt.toml; the TOML is parsed by
 * the Python interpreter's own tomllib (Python 3.11+, or the tomli package),
 * and the JSON it gives is checked here: an unknown key, a wrong type or a
 * tolerance that makes no sense is one clear error naming the key and file.
 *
 * Ownership: a try_contract owns all its strings and arrays;
 * contract_free() releases them. */
#ifndef GPUOPT_TRY_CONTRACT_H
#define GPUOPT_TRY_CONTRACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verify/verify.h"

struct try_output {
	char *path;              /* relative to the run directory; a file or a directory */
	struct verify_opts opts; /* as `gpuopt verify` takes them (keys owned) */
};

struct try_user_candidate {
	char *name;              /* shown in the report ("cupy port"), or the command */
	char *command;           /* a command line, split as bench splits it */
};

struct try_contract {
	char *file;              /* the file it came from, or NULL (command line only) */
	char *dir;               /* the project directory: the file's, else the current one */
	char *python;            /* the interpreter that runs the commands (default python3) */
	char *baseline;          /* the baseline command line */
	struct try_output *outputs;
	size_t noutputs;         /* 0: every file the baseline creates */
	struct try_user_candidate *cands;
	size_t ncands;
	bool accel_auto;         /* accelerators: "auto" (default) */
	char **accel;            /* or these ids (NULL-terminated), or none ("none": empty) */
	unsigned warmup, min_runs, max_runs;
	double min_time, max_time, min_effect, precision, timeout;
	uint64_t seed;
	char *metric;            /* "wall" */
	char *results;           /* the results directory (relative to dir unless absolute) */
	int trace;               /* -1 auto (when a GPU is there), 0 no, 1 yes */
	double log_limit;        /* MB of each stream of a run kept in logs/ (its first and
				  * last half; the middle dropped) */
};

/* The defaults of every field, and dir = the current directory. */
void contract_defaults(struct try_contract *c);

/* Finds the contract for a run: path when given (pyproject.toml or any
 * other name read as gpuopt.toml), else gpuopt.toml, then pyproject.toml
 * with a [tool.gpuopt] table, in dir. Returns the path (owned), or NULL
 * when there is none; *ignored (owned, else NULL) is the pyproject.toml
 * with a [tool.gpuopt] table that a gpuopt.toml beside it overrides. */
char *contract_find(const char *path, const char *dir, char **ignored);

/* Reads file into c (filled with contract_defaults first) using python to
 * parse the TOML. False with *why (owned) naming the file and the key. */
bool contract_load(const char *file, const char *python, struct try_contract *c, char **why);

/* Checks the TOML's JSON form (the [tool.gpuopt] table for a pyproject.toml)
 * into c; what contract_load does after parsing, and what the fuzzer
 * drives. */
bool contract_from_json(json_t *doc, const char *file, struct try_contract *c, char **why);

/* The contract as JSON (owned), as recorded in the results directory. */
json_t *contract_to_json(const struct try_contract *c);

void contract_free(struct try_contract *c);

/* Whether p may name an output: a non-empty path inside the run directory
 * (relative, no ".."); false with *why (owned) saying what is wrong. The
 * contract's outputs and try's --output are held to it alike. */
bool contract_check_output(const char *p, char **why);

#endif
