/* cmd_try: `gpuopt try [SCRIPT]` — the whole method in one command: try the
 * least disruptive GPU paths and the user's own candidates, prove each
 * computes the same thing, measure it, and keep, revise or reject it with
 * the limiting factor named. Parses the options into try settings, runs
 * the engine (try/try.h), prints progress and the verdicts, and picks the
 * exit code; `--init SCRIPT` writes a starter contract instead. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/diag.h"
#include "core/shellsplit.h"
#include "core/util.h"
#include "try/contract.h"
#include "try/try.h"

static const char help[] =
	"Usage: gpuopt try [OPTIONS] [SCRIPT]\n"
	"       gpuopt try --init SCRIPT [-o FILE] [--force]\n"
	"\n"
	"Try GPU versions of a program and keep, revise or reject each, with the evidence:\n"
	"  1. scan the script (and the project modules it imports) for GPU paths;\n"
	"  2. run the baseline once to capture its outputs as the reference;\n"
	"  3. take the candidates, least disruptive first: the accelerator modes that apply\n"
	"     and are installed (python -m cudf.pandas, python -m cuml.accel,\n"
	"     NX_CUGRAPH_AUTOCONFIG=True), then your own (an accelerator that applies but is\n"
	"     not installed is reported with its install command);\n"
	"  4. each candidate: run it once, counting the calls it says fell back to the CPU;\n"
	"     verify its outputs against the reference (as `gpuopt verify`); only if they\n"
	"     match, benchmark it against the baseline (as `gpuopt bench`: interleaved runs,\n"
	"     a bootstrap interval on the speedup);\n"
	"  5. the verdict: keep (same outputs, and faster beyond --min-effect with the whole\n"
	"     interval above it), revise (same outputs but not faster, or faster with waste\n"
	"     that costs), reject (wrong outputs, a crash, or slower), with the limiting factor:\n"
	"     problem size, transfers, unsupported-op fallback, memory pressure, launch\n"
	"     granularity, or the algorithm itself.\n"
	"Every run happens in a private copy of the project directory (runs/ in the results\n"
	"directory): runs never overwrite each other's files, and nothing of yours is touched.\n"
	"Each step's result is saved as it ends (one JSON per step), so an interrupted try\n"
	"resumes where it stopped. A saved step is taken again only if what it ran is\n"
	"unchanged: the contract, the project's files its command reads (its script and the\n"
	"project modules that imports), the interpreter and its installed packages.\n"
	"`gpuopt report RESULTS_DIR` renders them.\n"
	"\n"
	"The contract: `[tool.gpuopt]` in pyproject.toml, or gpuopt.toml, in the project\n"
	"directory (SCRIPT's, else the current one); read with the Python's own tomllib\n"
	"(Python 3.11+, or the tomli package). Its keys:\n"
	"  baseline = \"python3 run.py --n 100000\"   the reference command (default: python3 SCRIPT)\n"
	"  outputs = [\"labels.npy\", {path = \"t.csv\", key = \"id\", rtol = 1e-6}]\n"
	"                        files or directories it writes (default: every file it creates);\n"
	"                        per output: rtol, atol, ulp, equal_nan, allow_dtype, key,\n"
	"                        unordered, recall_k, min_recall (as gpuopt verify takes them)\n"
	"  [tolerance]           rtol, atol, ulp, equal_nan, allow_dtype for every output\n"
	"  candidates = [\"python3 run_gpu.py\", {name = \"cupy port\", command = \"...\"}]\n"
	"  accelerators = \"auto\" | \"none\" | [\"cudf.pandas\", \"cuml.accel\", \"nx-cugraph\"]\n"
	"  python = \"python3\"    the interpreter of the default baseline (python3 SCRIPT), of\n"
	"                        the accelerator candidates and of the environment record;\n"
	"                        the commands you write run as written\n"
	"  warmup = 1, min_runs = 10, max_runs = 0, min_time = 3, max_time = 60 (seconds per\n"
	"  comparison), min_effect = 5, precision = 2 (percent), timeout = 0 (seconds per run;\n"
	"  0: the baseline 1 h, every other run 10x the baseline's time, at least 60 s),\n"
	"  seed = 1, metric = \"wall\", results = \"gpuopt-try\", trace = \"auto\",\n"
	"  log_limit = 4 (MB of each run's stdout, and of its stderr, kept in logs/: the first\n"
	"  and the last half; the middle is dropped, with a line saying how many bytes)\n"
	"\n"
	"Options (each overrides the contract):\n"
	"      --contract FILE       read the contract from FILE; the project directory (where\n"
	"                            the commands run and their outputs are found) is then\n"
	"                            FILE's folder, whatever the current directory\n"
	"      --python CMD          the interpreter (default python3)\n"
	"      --baseline CMD        the baseline command line\n"
	"  -c, --candidate CMD       one more candidate command line (repeatable)\n"
	"      --output PATH         an output to compare (repeatable; replaces the contract's)\n"
	"  -r, --results DIR         the results directory (default gpuopt-try in the project)\n"
	"      --no-accelerators     try only the candidates given\n"
	"      --max-time SECONDS    measuring time per comparison\n"
	"      --min-runs N          at least N measured runs per command\n"
	"      --log-limit MB        what a run's output may take in logs/, per stream\n"
	"      --fresh               start over, ignoring saved results\n"
	"  -q, --quiet               no progress lines on stderr\n"
	"      --init SCRIPT         write a commented starter contract for SCRIPT (gpuopt.toml\n"
	"                            beside it, or -o FILE) from what scan finds, and stop\n"
	"  -o, --out FILE            with --init: where to write it (- for stdout)\n"
	"      --force               with --init: replace an existing file\n"
	"  -h, --help                show this help\n"
	"\n"
	"Exit codes: 0 at least one candidate is kept; 1 none is (each verdict says why);\n"
	"2 a usage or contract error, the baseline failed, or the results cannot be written.\n";

/* Progress and the result show candidates' names, commands and paths: made
 * safe for a terminal (core/diag.h). */
static void progress(void *ctx, const char *line)
{
	(void)ctx;
	fputs("gpuopt try: ", stderr);
	term_safe_fputs(line, stderr);
	fputc('\n', stderr);
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return s;
}

static void print_result(FILE *out, const struct try_result *r)
{
	/* the hint is pasted into a shell: the path quoted as one word */
	struct buf q = {0};
	shell_quote(&q, r->results_dir, 0);
	fprintf(out, "%zu candidate%s tried; results in %s (`gpuopt report %s` renders them)\n", r->ncands,
		r->ncands == 1 ? "" : "s", r->results_dir, q.data);
	buf_free(&q);
	size_t width = 4;
	for (size_t i = 0; i < r->ncands; i++)
		if (strlen(r->cands[i].name) > width)
			width = strlen(r->cands[i].name) < 40 ? strlen(r->cands[i].name) : 40;
	for (size_t i = 0; i < r->ncands; i++) {
		const struct try_candidate_result *c = &r->cands[i];
		fprintf(out, "  %-11s %-*.*s  ", try_verdict_name(c->verdict), (int)width, (int)width, c->name);
		if (c->factor)
			fprintf(out, "[%s] ", c->factor);
		fprintf(out, "%s\n", c->reason);
	}
	if (r->resumed_steps)
		fprintf(out, "(%zu step%s taken from the earlier run's results; --fresh starts over)\n",
			r->resumed_steps, r->resumed_steps == 1 ? "" : "s");
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"contract", required_argument, NULL, 'C'}, {"python", required_argument, NULL, 'P'},
		{"baseline", required_argument, NULL, 'B'}, {"candidate", required_argument, NULL, 'c'},
		{"output", required_argument, NULL, 'O'}, {"results", required_argument, NULL, 'r'},
		{"no-accelerators", no_argument, NULL, 'A'}, {"max-time", required_argument, NULL, 'T'},
		{"min-runs", required_argument, NULL, 'm'}, {"fresh", no_argument, NULL, 'F'},
		{"quiet", no_argument, NULL, 'q'}, {"init", required_argument, NULL, 'I'},
		{"out", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
		{"trace", no_argument, NULL, 't'}, {"no-trace", no_argument, NULL, 'N'},
		{"log-limit", required_argument, NULL, 'L'}, {NULL, 0, NULL, 0},
	};
	struct try_settings s = {.accelerators = -1, .trace = -1, .max_time = -1, .min_runs = 0,
				 .progress = progress};
	struct ptrvec cands = {0}, outs = {0};
	const char *init = NULL, *out = NULL;
	bool force = false, quiet = false;
	int rc = EXIT_USAGE, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:r:qo:", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'C': s.contract = optarg; break;
		case 'P': s.python = optarg; break;
		case 'B': s.baseline = optarg; break;
		case 'c': ptrvec_push(&cands, optarg); break;
		case 'O': ptrvec_push(&outs, optarg); break;
		case 'r': s.results = optarg; break;
		case 'A': s.accelerators = 0; break;
		case 'F': s.fresh = true; break;
		case 'q': quiet = true; break;
		case 'I': init = optarg; break;
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 't': s.trace = 1; break;
		case 'N': s.trace = 0; break;
		case 'T':
			s.max_time = strtod(optarg, &end);
			if (*end || !(s.max_time >= 0.001 && s.max_time <= 86400 * 7)) {
				diag_error("try: --max-time: '%s' is not a number of seconds from 0.001 to 604800", optarg);
				goto done;
			}
			break;
		case 'L':
			s.log_limit = strtod(optarg, &end);
			if (*end || !(s.log_limit >= TRY_LOG_LIMIT_MIN_MB && s.log_limit <= 1e6)) {
				diag_error("try: --log-limit: '%s' is not a number of MB from %g to 1000000", optarg,
					   TRY_LOG_LIMIT_MIN_MB);
				goto done;
			}
			break;
		case 'm':
			s.min_runs = (int)strtol(optarg, &end, 10);
			if (*end || s.min_runs < 1 || s.min_runs > 100000) {
				diag_error("try: --min-runs: '%s' is not a number from 1 to 100000", optarg);
				goto done;
			}
			break;
		default:
			if (optopt && strchr("crOoCPBTmIL", optopt))
				diag_error("try: option %s needs a value", argv[optind - 1]);
			else
				diag_error("try: unknown option '%s' (see `gpuopt try --help`)", argv[optind - 1]);
			goto done;
		}
	}
	if (init) {
		if (optind < argc) {
			diag_error("try: --init takes one SCRIPT ('%s' is one too many)", argv[optind]);
			goto done;
		}
		char *written = NULL, *why = NULL;
		if (!try_init(init, out, force, &written, &why)) {
			diag_error("try: --init: %s", why);
			free(why);
			goto done;
		}
		if (strcmp(written, "-") != 0) {
			fputs("wrote ", stdout);
			term_safe_fputs(written, stdout);
			puts(": check the baseline and the outputs, then run `gpuopt try`");
		}
		free(written);
		rc = EXIT_OK;
		goto done;
	}
	if (out || force) {
		diag_error("try: -o / --force go with --init");
		goto done;
	}
	if (argc - optind > 1) {
		diag_error("try: give at most one SCRIPT ('%s' is one too many)", argv[optind + 1]);
		goto done;
	}
	if (optind < argc)
		s.script = argv[optind];
	/* the values the contract would refuse, refused here too, by option */
	const char *blank = s.contract && !*s.contract ? "--contract"
			    : s.python && !*skip_blanks(s.python) ? "--python"
			    : s.baseline && !*skip_blanks(s.baseline) ? "--baseline"
			    : s.results && !*s.results ? "--results"
			    : s.script && !*s.script ? "SCRIPT" : NULL;
	for (size_t i = 0; !blank && i < cands.len; i++)
		if (!*skip_blanks(cands.items[i]))
			blank = "--candidate";
	if (blank) {
		diag_error("try: %s: an empty value names nothing", blank);
		goto done;
	}
	for (size_t i = 0; i < outs.len; i++) {
		char *why = NULL;
		if (!contract_check_output(outs.items[i], &why)) {
			diag_error("try: --output: %s", why);
			free(why);
			goto done;
		}
	}
	ptrvec_push(&cands, NULL);
	ptrvec_push(&outs, NULL);
	s.candidates = cands.len > 1 ? (char *const *)cands.items : NULL;
	s.outputs = outs.len > 1 ? (char *const *)outs.items : NULL;
	if (quiet)
		s.progress = NULL;
	struct try_result *r = try_run(&s);
	switch (r->status) {
	case TRY_DONE:
		fflush(stderr);
		struct term_safe_stream ts;
		print_result(term_safe_open(&ts), r);
		term_safe_close(&ts, stdout);
		rc = EXIT_FAIL;
		for (size_t i = 0; i < r->ncands; i++)
			if (r->cands[i].verdict == TRY_KEEP)
				rc = EXIT_OK;
		break;
	case TRY_INTERRUPTED:
		rc = EXIT_FAIL;
		break;
	default:
		rc = EXIT_USAGE;
		break;
	}
	try_result_free(r);
done:
	ptrvec_free(&cands);
	ptrvec_free(&outs);
	return rc;
}

const struct command cmd_try = {
	.name = "try",
	.summary = "try GPU versions of a program: verify, benchmark, and keep, revise or reject each",
	.help = help,
	.run = run,
};
