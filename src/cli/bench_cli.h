/* bench_cli: the command line of `gpuopt bench` — the options table, each
 * value checked as it is read (errors on stderr, naming the option), and
 * the settings, commands and parameters they give. */
#ifndef GPUOPT_BENCH_CLI_H
#define GPUOPT_BENCH_CLI_H

#include <stdbool.h>

#include "bench/bench.h"
#include "core/util.h"

struct bench_cli {
	struct bench_settings set;
	struct ptrvec commands;   /* borrowed from argv */
	const char *scan_var, *scan_min, *scan_max, *step;
	struct ptrvec lists;      /* pairs: VAR, "a,b,c" */
	bool force;               /* --force: an export may replace a .py, .csv... file */
};

/* Fills c (zeroed by the caller) from argv. False after saying why on
 * stderr. Either way, bench_cli_free releases what c holds. */
bool bench_cli_parse(int argc, char **argv, struct bench_cli *c);
void bench_cli_free(struct bench_cli *c);

#endif
