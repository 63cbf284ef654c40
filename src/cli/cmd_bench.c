/* cmd_bench: `gpuopt bench BASELINE [CANDIDATE...]` — run whole commands,
 * interleaved in a shuffled order, until the speedup of each candidate over
 * the baseline is known to the asked precision; say whether each candidate
 * is faster, slower or no different, how sure that is, and on what machine.
 *
 * This file parses the options (bench_cli.c), checks the export paths,
 * runs the engine (bench/bench.h), renders the report and the exports
 * (bench/benchfmt.c) and decides the exit code. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench_cli.h"
#include "commands.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/runner.h"
#include "core/shellsplit.h"

static const char help[] =
	"Usage: gpuopt bench [OPTIONS] BASELINE [CANDIDATE...]\n"
	"\n"
	"Run whole commands (each one quoted command line) and say whether each\n"
	"CANDIDATE is faster than BASELINE, by how much, and how sure that is.\n"
	"\n"
	"Command lines are split like a shell would split them (quotes and backslashes)\n"
	"and started directly, without a shell; pipes, redirections, variables, globs,\n"
	"`~` and NAME=value prefixes are refused unless --shell is given.\n"
	"\n"
	"Each command gets --warmup runs, then measured runs in rounds: every round runs\n"
	"each command once, in a freshly shuffled order, so that drift on a noisy\n"
	"machine hits all commands alike. Measuring goes on for at least --min-runs\n"
	"rounds and until every command has run --min-time seconds in total, then until\n"
	"the 95% confidence interval of every speedup is within +/- --precision, or\n"
	"--max-runs / --max-time is reached. --max-time ends the first round past it,\n"
	"even before the default --min-runs; a --min-runs or --runs given is honoured.\n"
	"\n"
	"Running:\n"
	"  -w, --warmup N            unmeasured runs per command first (default 1)\n"
	"  -m, --min-runs N          at least N measured runs per command (default 10)\n"
	"  -M, --max-runs N          at most N measured runs per command (default: no limit)\n"
	"  -r, --runs N              exactly N measured runs (sets --min-runs and --max-runs)\n"
	"      --min-time SECONDS    at least this much measured time per command (default 3)\n"
	"      --max-time SECONDS    stop at the end of the first round past this long of\n"
	"                            measuring, per comparison (default 60)\n"
	"      --precision PCT       stop once every speedup's 95% CI is within +/-PCT%\n"
	"                            (default 2); with one command, its median's CI\n"
	"      --shell[=SHELL]       run each command line with SHELL -c (default /bin/sh);\n"
	"                            the shell's own start-up is measured and subtracted:\n"
	"                            from wall time, the median of an empty run put in\n"
	"                            each round (of 50 before the runs with under 5\n"
	"                            rounds); from user and system time, of those 50\n"
	"  -p, --prepare CMD         run CMD before every run (warm-ups too), untimed\n"
	"  -s, --setup CMD           run CMD before the first run\n"
	"  -c, --cleanup CMD         run CMD after the last run\n"
	"                            (each of these: give it once for all commands, or once\n"
	"                            per command, in the commands' order; a --setup or\n"
	"                            --cleanup command line runs once per comparison, or once\n"
	"                            per parameter value when it names {VAR})\n"
	"  -P, --parameter-scan VAR MIN MAX\n"
	"                            run for VAR = MIN, MIN+STEP, ... up to MAX, written {VAR}\n"
	"                            in the commands (integers or decimals)\n"
	"  -D, --step STEP           the step of --parameter-scan (default 1)\n"
	"  -L, --parameter-list VAR A,B,C\n"
	"                            run for each listed value of {VAR} (repeatable: every\n"
	"                            combination is run)\n"
	"                            (each VAR must be written in a command line, or\n"
	"                            --prepare, --setup or --cleanup; given parameters, a\n"
	"                            {NAME} there that is none of them is refused as a typo)\n"
	"  -n, --command-name NAME   a name for the next command in the report (repeatable)\n"
	"      --input FILE          the commands' standard input, from its start for every\n"
	"                            run (default: /dev/null); a pipe is read whole into\n"
	"                            memory first, 1 GiB at most\n"
	"      --output WHERE        the commands' standard output: null (default), inherit,\n"
	"                            or a FILE that collects every run's output (a FIFO is\n"
	"                            waited on 10 s at most for a reader, before the runs)\n"
	"      --timeout SECONDS     kill a run (its whole process group) after SECONDS; the\n"
	"                            run counts as failed\n"
	"  -i, --ignore-failure      keep going when a run (or a --cleanup) fails; a comparison\n"
	"                            with failed runs cannot conclude\n"
	"\n"
	"Statistics and verdict:\n"
	"      --min-effect PCT      the smallest change that counts (default 5): a candidate\n"
	"                            is faster only when the whole interval of the speedup lies\n"
	"                            above 1 + PCT%, slower only when it lies below\n"
	"                            1 / (1 + PCT%); otherwise there is no difference\n"
	"      --seed N              seed of the run order and of the bootstrap (default 1):\n"
	"                            the same runs and seed give the same interval\n"
	"      --resamples N         bootstrap resamples for the reported intervals\n"
	"                            (default 10000; the stop rule's checks use 2000)\n"
	"      --fail-on-slower      exit 1 when a candidate is slower than the baseline, or\n"
	"                            when a comparison cannot conclude\n"
	"\n"
	"A comparison whose runs cannot give a verdict says \"cannot conclude\" and why,\n"
	"never a number: runs that failed (with --ignore-failure), fewer than 5 rounds\n"
	"(too few for an interval), or, with --shell, a command that takes no longer\n"
	"than the shell's own start-up. The exports say so too.\n"
	"\n"
	"Record and output:\n"
	"      --python CMD          the interpreter whose version and numpy, scipy, pandas,\n"
	"                            scikit-learn, cupy, torch, cudf and cuml versions are\n"
	"                            recorded (missing ones are absent); default: the Python\n"
	"                            the commands run (the first one that runs python,\n"
	"                            python3, python3.12...), else python3 from PATH; the\n"
	"                            record says which\n"
	"      --export-json FILE    everything: settings, environment, every run's raw\n"
	"                            numbers, statistics and verdicts\n"
	"      --export-csv FILE     one row per command: statistics and speedup\n"
	"      --export-markdown FILE  the tables and verdicts as Markdown\n"
	"                            (exports are written whole or not at all; each path is\n"
	"                            checked before the first run: not a directory, not a\n"
	"                            file the commands name or --input, not an existing\n"
	"                            .py, .ipynb, .npy, .npz, .csv or .tsv file;\n"
	"                            a symbolic link is followed. When the benchmark stops\n"
	"                            on a failure or a signal, the comparisons measured to\n"
	"                            the end are still exported. One FILE may be -, stdout;\n"
	"                            the report then goes to stderr. A FIFO is opened when\n"
	"                            it is written, after the runs, and waited on 10 s at\n"
	"                            most for a reader; a signal ends that wait and a slow\n"
	"                            reader's, as it ends the runs)\n"
	"      --force               let an export or --output FILE replace such a .py,\n"
	"                            .csv... file (never one the commands name)\n"
	"  -h, --help                show this help\n"
	"\n"
	"Per run: wall time on the monotonic clock, user and system CPU time and peak RSS\n"
	"of that run's process alone (wait4), exit status; with an NVIDIA GPU, the\n"
	"device's memory in use (by all processes) and utilization, sampled through NVML\n"
	"every 10 ms while it runs (utilization is NVML's own average over its last\n"
	"sampling period, up to a second, so a short run also sees its neighbours').\n"
	"Peak RSS cannot read below gpuopt's own resident size (recorded as\n"
	"peak_rss_floor_kib): Linux starts a new program's peak at its parent's size.\n"
	"Per command: median, mean, standard deviation, MAD, min, max, p5 / p95 and\n"
	"outliers (modified z-score above 3.5). Speedup = baseline median / candidate\n"
	"median, with a 95% percentile bootstrap interval over resampled rounds (each\n"
	"round's runs stay paired). The report warns when a median is under 5 ms\n"
	"(process start-up dominates), when the first measured run took over 1.5x the\n"
	"median and is an outlier (a warm-up was missing), when variation is high\n"
	"(1.4826 * MAD over 10% of the median, or over 10% outliers), and when an\n"
	"interval is still wider than --precision where --max-runs / --max-time ended.\n"
	"\n"
	"With --parameter-scan / --parameter-list and two or more commands, each value\n"
	"(combination) is its own comparison of the candidates with the baseline; with\n"
	"one command, its runs at each value are compared, the first value as baseline.\n"
	"\n"
	"Recorded with every result: CPU model, cores, governor, memory, OS, kernel, load\n"
	"average; Python and package versions; GPU name, driver, CUDA driver version,\n"
	"memory, clocks and compute capability through NVML and the CUDA driver, loaded\n"
	"at run time (without them: \"no NVIDIA GPU\").\n"
	"\n"
	"Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to the running\n"
	"command's process group, SIGPIPE, SIGUSR1, SIGUSR2 and SIGALRM as SIGTERM; the\n"
	"group is killed 2 s later if still there. Each command runs with a parent-death\n"
	"signal, and a watchdog kills its group, so a gpuopt killed outright (SIGKILL, a\n"
	"dropped session) leaves nothing running.\n"
	"\n"
	"Exit codes: 0 the benchmark ran (whatever the verdicts); 1 a run or a --cleanup\n"
	"failed (the end of its stderr is shown: bench keeps its first and last 32 KB;\n"
	"control characters such as ESC as \\x1b), a signal stopped it, or\n"
	"--fail-on-slower and a candidate is slower or cannot be compared; 2 usage\n"
	"error: a bad option, a command that cannot be split or is not found, an\n"
	"unreadable --input or an export or --output that cannot or may not be written.\n";

/* An export path (or the commands' --output file) checked before the first
 * run, so a benchmark is never run to be thrown away. */
static bool output_ok(const char *opt, const char *path, const struct bench_cli *cli)
{
	if (!path)
		return true;
	const struct bench_settings *s = &cli->set;
	/* what the runs read: --input and the files the commands name */
	struct ptrvec files = {0};
	if (s->input)
		ptrvec_push(&files, xstrdup(s->input));
	for (size_t i = 0; i < cli->commands.len; i++) {
		size_t nw;
		char *bad = NULL;
		char **words = shell_split(cli->commands.items[i], &nw, &bad);
		output_command_files(words, &files); /* none when it cannot be split: said later */
		shell_words_free(words);
		free(bad);
	}
	struct output_inputs in = {(char *const *)files.items, files.len, NULL,
				   strcmp(opt, "--output") == 0 ? "the commands' output" : NULL};
	char *why;
	bool ok = output_check(path, &in, cli->force, &why);
	if (!ok) {
		diag_error("bench: %s '%s': %s", opt, path, why);
		free(why);
	}
	for (size_t i = 0; i < files.len; i++)
		free(files.items[i]);
	ptrvec_free(&files);
	return ok;
}

static bool export_one(const char *opt, const char *path, char *doc)
{
	if (!path) {
		free(doc);
		return true;
	}
	char *why = NULL;
	bool ok = write_file_atomic(path, doc, strlen(doc), &why);
	if (!ok && strcmp(path, "-") != 0) /* stdout's failure is said once, as every command's (main.c) */
		diag_error("bench: %s: cannot write '%s': %s", opt, path, why);
	free(why);
	free(doc);
	return ok;
}

static char *invocation_text(int argc, char **argv)
{
	struct buf b = {0};
	buf_puts(&b, "gpuopt");
	for (int i = 0; i < argc; i++) {
		buf_putc(&b, ' ');
		shell_quote(&b, argv[i], 0);
	}
	return buf_steal(&b);
}


static int run(int argc, char **argv)
{
	struct bench_cli cli;
	memset(&cli, 0, sizeof cli);
	struct bench_result *res = NULL;
	int rc = EXIT_USAGE;
	if (!bench_cli_parse(argc, argv, &cli))
		goto out;
	struct bench_settings *s = &cli.set;
	if (!output_ok("--export-json", s->export_json, &cli) ||
	    !output_ok("--export-csv", s->export_csv, &cli) ||
	    !output_ok("--export-markdown", s->export_markdown, &cli) ||
	    (s->output == OUTPUT_FILE && !output_ok("--output", s->output_file, &cli)))
		goto out;
	s->progress = isatty(STDERR_FILENO);
	res = bench_run(s, (char *const *)cli.commands.items, cli.commands.len);
	res->invocation = invocation_text(argc, argv);
	if (res->status == BENCH_BAD_COMMAND)
		goto out;

	/* What was measured to the end is reported and exported, whatever
	 * stopped the benchmark after it. */
	bool exports = s->export_json || s->export_csv || s->export_markdown;
	bool written = true;
	if (res->nmeasured > 0) {
		bool to_stdout = (s->export_json && strcmp(s->export_json, "-") == 0) ||
				 (s->export_csv && strcmp(s->export_csv, "-") == 0) ||
				 (s->export_markdown && strcmp(s->export_markdown, "-") == 0);
		/* the commands and their words as a terminal may show them */
		struct term_safe_stream ts;
		bench_print_text(term_safe_open(&ts), res);
		term_safe_close(&ts, to_stdout ? stderr : stdout);
		fflush(stdout);
		written = export_one("--export-json", s->export_json, s->export_json ? bench_to_json(res) : NULL);
		written &= export_one("--export-csv", s->export_csv, s->export_csv ? bench_to_csv(res) : NULL);
		written &= export_one("--export-markdown", s->export_markdown,
				      s->export_markdown ? term_safe_take(bench_to_markdown(res)) : NULL);
	}
	const char *kept = !exports ? "" : !written ? "; not every export was written (said above)"
			 : res->nmeasured == res->ngroups ? "; the measurements were exported"
			 : res->nmeasured ? "; the comparisons measured to the end were exported"
			 : "; nothing was measured to the end, nothing was exported";
	bool hint = res->status == BENCH_RUN_FAILED && !s->ignore_failure && res->failed_step &&
		    strcmp(res->failed_step, "run") == 0;
	rc = EXIT_OK;
	switch (res->status) {
	case BENCH_OK:
	case BENCH_BAD_COMMAND:
		break;
	case BENCH_INTERRUPTED:
		diag_error("bench: interrupted by signal %d (%s); the running command was stopped, --cleanup "
			   "was not run%s", res->signal, strsignal(res->signal), kept);
		rc = EXIT_FAIL;
		break;
	case BENCH_CLEANUP_FAILED:
		diag_error("bench: a --cleanup failed after the runs%s", kept);
		rc = EXIT_FAIL;
		break;
	case BENCH_CANNOT_START:
	case BENCH_RUN_FAILED:
		diag_error("bench: stopped%s%s", kept, hint ? " (--ignore-failure keeps going past failed runs)" : "");
		rc = res->status == BENCH_RUN_FAILED ? EXIT_FAIL : EXIT_USAGE;
		break;
	}
	if (s->fail_on_slower)
		for (size_t g = 0; g < res->nmeasured; g++)
			for (size_t i = 0; i + 1 < res->groups[g].ncmds; i++) {
				const struct bench_comparison *cmp = &res->groups[g].cmp[i];
				if (strcmp(cmp->verdict, "slower") == 0 || cmp->why) {
					if (cmp->why && rc == EXIT_OK)
						diag_error("bench: --fail-on-slower: '%s' cannot be compared with '%s' (%s)",
							   res->groups[g].cmds[cmp->candidate].name,
							   res->groups[g].cmds[0].name, cmp->why);
					rc = EXIT_FAIL;
				}
			}
	/* a signal while the exports were written (a FIFO nobody reads is
	 * waited on, a slow reader too) stops them: said, and exit 1 */
	if (runner_interrupted() && res->status != BENCH_INTERRUPTED) {
		int sig = runner_interrupt_signal();
		diag_error("bench: interrupted by signal %d (%s) while writing the exports, after the runs%s", sig,
			   strsignal(sig), kept);
		rc = EXIT_FAIL;
	} else if (!written) {
		rc = res->status == BENCH_INTERRUPTED ? EXIT_FAIL : EXIT_USAGE;
	}
out:
	bench_result_free(res);
	bench_cli_free(&cli);
	return rc;
}

const struct command cmd_bench = {
	.name = "bench",
	.summary = "time whole commands and say, with a confidence interval, which is faster",
	.help = help,
	.run = run,
};
