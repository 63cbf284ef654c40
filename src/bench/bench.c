/* bench: the benchmark engine — build the commands (with {VAR}
 * substitution and checks that each can start), run them interleaved in a
 * shuffled order every round until the stop rule says the speedups are
 * known well enough, then compute the statistics, verdicts and warnings.
 * runner.c starts and measures each run, stats.c does the arithmetic,
 * sysinfo.c / gpuinfo.c record the environment; benchfmt.c renders.
 * Problems are said on stderr through diag (naming the command); the
 * caller reads the outcome from the result's status. */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/caplog.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/memroom.h"
#include "core/runner.h"
#include "core/shellsplit.h"
#include "core/stats.h"
#include "gpu/gpuinfo.h"
#include "gpu/sysinfo.h"

/* ---- building the commands ---- */

/* tmpl with every {NAME} of the parameters replaced by its value. Owned. */
static char *substitute(const char *tmpl, const struct bench_settings *s, char **values)
{
	struct buf b = {0};
	for (const char *p = tmpl; *p; ) {
		bool done = false;
		if (*p == '{' && values) {
			for (size_t k = 0; k < s->nparams && !done; k++) {
				size_t len = strlen(s->params[k].name);
				if (strncmp(p + 1, s->params[k].name, len) == 0 && p[1 + len] == '}') {
					buf_puts(&b, values[k]);
					p += len + 2;
					done = true;
				}
			}
		}
		if (!done)
			buf_putc(&b, *p++);
	}
	return buf_steal(&b);
}

/* The argv that runs text (split, or through the shell), checked: split
 * cleanly and the program exists. NULL after an error message. */
static char **command_argv(const struct bench_settings *s, const char *text, const char *what,
			    const char *cwd)
{
	char **argv;
	if (s->shell) {
		argv = xcalloc(4, sizeof *argv);
		argv[0] = xstrdup(s->shell);
		argv[1] = xstrdup("-c");
		argv[2] = xstrdup(text);
		return argv;
	}
	char *why = NULL;
	argv = shell_split(text, NULL, &why);
	if (!argv) {
		const char *hint = strstr(why, "assignment") ? ": run it as `env NAME=value CMD`, or use --shell"
				   : strstr(why, "shell syntax") ? ": quote it, or run the commands with --shell"
				   : "";
		diag_error("bench: %s '%s': %s%s", what, text, why, hint);
		free(why);
		return NULL;
	}
	/* a relative program path is taken from the command's own directory */
	char *prog = cwd && strchr(argv[0], '/') && argv[0][0] != '/' ? xasprintf("%s/%s", cwd, argv[0])
								    : xstrdup(argv[0]);
	bool found = runner_find_program(prog);
	free(prog);
	if (!found) {
		diag_error("bench: %s '%s': '%s' %s", what, text, argv[0],
			   strchr(argv[0], '/') ? "is not an executable file"
						: "is not found in PATH (command not found)");
		shell_words_free(argv);
		return NULL;
	}
	return argv;
}

static const char *per_command(const struct ptrvec *v, size_t i)
{
	if (v->len == 0)
		return NULL;
	return v->len == 1 ? v->items[0] : v->items[i];
}

/* Fills cmd from template i with parameter values (owned copy kept). */
static bool build_command(const struct bench_settings *s, const struct ptrvec *templates, size_t i,
			  char **values, struct bench_command *cmd)
{
	memset(cmd, 0, sizeof *cmd);
	if (values) {
		cmd->param_values = xcalloc(s->nparams, sizeof *cmd->param_values);
		for (size_t k = 0; k < s->nparams; k++)
			cmd->param_values[k] = xstrdup(values[k]);
	}
	cmd->text = substitute(templates->items[i], s, values);
	cmd->name = i < s->names.len ? substitute(s->names.items[i], s, values) : xstrdup(cmd->text);
	cmd->cwd = s->cwds ? s->cwds[i] : NULL;
	cmd->argv = command_argv(s, cmd->text, "command", cmd->cwd);
	if (!cmd->argv)
		return false;
	const char *aux[3] = {per_command(&s->prepare, i), per_command(&s->setup, i),
			      per_command(&s->cleanup, i)};
	char **texts[3] = {&cmd->prepare_text, &cmd->setup_text, &cmd->cleanup_text};
	char ***argvs[3] = {&cmd->prepare, &cmd->setup, &cmd->cleanup};
	const char *what[3] = {"--prepare", "--setup", "--cleanup"};
	for (int k = 0; k < 3; k++) {
		if (!aux[k])
			continue;
		*texts[k] = substitute(aux[k], s, values);
		*argvs[k] = command_argv(s, *texts[k], what[k], cmd->cwd);
		if (!*argvs[k])
			return false;
	}
	return true;
}

static void command_free(struct bench_command *c)
{
	free(c->text);
	free(c->name);
	shell_words_free(c->argv);
	shell_words_free(c->prepare);
	shell_words_free(c->setup);
	shell_words_free(c->cleanup);
	free(c->prepare_text);
	free(c->setup_text);
	free(c->cleanup_text);
	for (size_t i = 0; i < c->nruns; i++)
		free(c->runs[i].gpu);
	free(c->runs);
	free(c->gpu);
	for (size_t i = 0; i < c->warnings.len; i++)
		free(c->warnings.items[i]);
	ptrvec_free(&c->warnings);
}

void bench_result_free(struct bench_result *r)
{
	if (!r)
		return;
	for (size_t g = 0; g < r->ngroups; g++) {
		struct bench_group *grp = &r->groups[g];
		for (size_t i = 0; i < grp->ncmds; i++) {
			if (grp->cmds[i].param_values)
				for (size_t k = 0; k < r->set->nparams; k++)
					free(grp->cmds[i].param_values[k]);
			free(grp->cmds[i].param_values);
			command_free(&grp->cmds[i]);
		}
		free(grp->cmds);
		for (size_t i = 0; grp->cmp && i + 1 < grp->ncmds; i++)
			free(grp->cmp[i].why);
		free(grp->cmp);
		free(grp->median_why);
		if (grp->param_values)
			for (size_t k = 0; k < r->set->nparams; k++)
				free(grp->param_values[k]);
		free(grp->param_values);
		for (size_t i = 0; i < grp->warnings.len; i++)
			free(grp->warnings.items[i]);
		ptrvec_free(&grp->warnings);
		free(grp->shell_probe_s);
	}
	free(r->groups);
	json_decref(r->env);
	free(r->started_at);
	free(r->invocation);
	free(r);
}

/* Builds the groups: one per parameter combination when there are two or
 * more commands; one group of every combination when there is one. */
static bool build_groups(const struct bench_settings *s, const struct ptrvec *templates,
			 struct bench_result *res)
{
	size_t ncomb = 1;
	for (size_t k = 0; k < s->nparams; k++) {
		ncomb *= s->params[k].nvalues;
		if (ncomb > MAX_PARAM_VALUES) {
			diag_error("bench: the parameters make over %d combinations", MAX_PARAM_VALUES);
			return false;
		}
	}
	size_t *odo = xcalloc(s->nparams ? s->nparams : 1, sizeof *odo);
	char **values = s->nparams ? xcalloc(s->nparams, sizeof *values) : NULL;
	bool one_template = templates->len == 1 && s->nparams > 0;
	res->ngroups = one_template ? 1 : ncomb;
	res->groups = xcalloc(res->ngroups, sizeof *res->groups);
	if (one_template) {
		res->groups[0].ncmds = ncomb;
		res->groups[0].cmds = xcalloc(ncomb, sizeof *res->groups[0].cmds);
	}
	bool ok = true;
	for (size_t comb = 0; comb < ncomb && ok; comb++) {
		for (size_t k = 0; k < s->nparams; k++)
			values[k] = s->params[k].values[odo[k]];
		if (one_template) {
			ok = build_command(s, templates, 0, values, &res->groups[0].cmds[comb]);
		} else {
			struct bench_group *g = &res->groups[comb];
			g->cmds = xcalloc(templates->len, sizeof *g->cmds);
			g->ncmds = templates->len;
			if (values) {
				g->param_values = xcalloc(s->nparams, sizeof *g->param_values);
				for (size_t k = 0; k < s->nparams; k++)
					g->param_values[k] = xstrdup(values[k]);
			}
			for (size_t i = 0; i < templates->len && ok; i++)
				ok = build_command(s, templates, i, values, &g->cmds[i]);
		}
		/* next combination: the last parameter turns fastest */
		for (size_t k = s->nparams; k-- > 0; ) {
			if (++odo[k] < s->params[k].nvalues)
				break;
			odo[k] = 0;
		}
	}
	if (one_template && s->names.len == 1)
		for (size_t i = 0; i < ncomb; i++) {
			/* one name for a sweep: tell the values apart */
			struct buf b = {0};
			buf_puts(&b, res->groups[0].cmds[i].name);
			bool changed = strcmp(s->names.items[0], res->groups[0].cmds[i].name) != 0;
			if (!changed) {
				for (size_t k = 0; k < s->nparams; k++)
					buf_printf(&b, "%s%s=%s", k ? ", " : " (", s->params[k].name,
						   res->groups[0].cmds[i].param_values[k]);
				buf_putc(&b, ')');
			}
			free(res->groups[0].cmds[i].name);
			res->groups[0].cmds[i].name = buf_steal(&b);
		}
	free(odo);
	free(values);
	return ok;
}

/* ---- measuring ---- */

struct ctx {
	const struct bench_settings *set;
	struct bench_result *res;
	int null_fd, null_out, in_fd, out_fd; /* /dev/null read-only (stdin), write-only (stdout) */
	struct caplog err_log; /* the last run's stderr, its start and end (BENCH_STDERR_KEPT) */
	struct gpu_sampler *sampler;
	struct rng rng;
	bool progress;
	double last_progress;
	enum bench_status rc; /* what went wrong, once something did */
	bool cleanup_failed;  /* a --cleanup failed after its group was measured */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What is kept of a run's stderr, in memory, to show when it fails: its
 * first and last half (the middle dropped, however much it writes). */
#define BENCH_STDERR_KEPT (64u << 10)

/* Starts keeping the stderr of the next run (io's err_log). */
static struct caplog *capture(struct ctx *c)
{
	caplog_free(&c->err_log);
	caplog_init(&c->err_log, -1, BENCH_STDERR_KEPT, NULL, NULL);
	return &c->err_log;
}

/* Prints the last lines of what the failed run wrote to stderr (kept in
 * log), made safe for a terminal (term_safe_append: an escape sequence, or
 * a NUL byte, is shown as \x1b, \x00; a NUL does not end the text). */
static void show_stderr(struct caplog *log)
{
	caplog_finish(log);
	size_t size = log->mem.len;
	if (!size) {
		fputs("gpuopt: bench: it wrote nothing to stderr\n", stderr);
		return;
	}
	size_t start = size > 8192 ? size - 8192 : 0;
	const char *buf = caplog_text(log) + start;
	ssize_t n = (ssize_t)(size - start);
	/* the last 20 lines */
	int lines = 0;
	const char *end = buf + n, *p = end;
	if (p > buf && p[-1] == '\n')
		p--;
	while (p > buf && lines < 20) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	fprintf(stderr, "gpuopt: bench: its stderr%s:\n", start > 0 || p > buf ? " ended with" : " was");
	if (end > buf && end[-1] == '\n')
		end--;
	struct buf safe = {0};
	term_safe_append(&safe, p, (size_t)(end - p));
	fputs("  | ", stderr);
	for (size_t i = 0; i < safe.len; i++) {
		if (safe.data[i] == '\n')
			fputs("\n  | ", stderr);
		else
			fputc(safe.data[i], stderr);
	}
	fputc('\n', stderr);
	buf_free(&safe);
}

static void report_failure(struct ctx *c, const char *what, const char *text, const struct run_result *r)
{
	if (c->progress)
		fputs("\r\033[K", stderr);
	if (!c->res->failed_step)
		c->res->failed_step = what[0] == '-' ? what : "run";
	if (r->spawn_errno) {
		diag_error("bench: %s '%s' could not be started: %s", what, text, strerror(r->spawn_errno));
		c->rc = BENCH_CANNOT_START;
		return;
	}
	char *how = run_describe(r, c->set->timeout_s);
	diag_error("bench: %s '%s' %s", what, text, how);
	free(how);
	show_stderr(&c->err_log);
	c->rc = BENCH_RUN_FAILED;
}

/* Runs a --prepare / --setup / --cleanup command; false after reporting. */
static bool run_aux(struct ctx *c, char **argv, const char *text, const char *what, const char *cwd)
{
	struct runner_stdio io = {c->null_fd, c->null_out, -1, cwd, NULL, capture(c)};
	struct run_result r;
	runner_run(argv, &io, c->set->timeout_s, &r);
	if (runner_interrupted())
		return false;
	if (!run_ok(&r)) {
		report_failure(c, what, text, &r);
		return false;
	}
	return true;
}

static void progress(struct ctx *c, const struct bench_group *g, size_t rounds, const char *phase)
{
	if (!c->progress)
		return;
	double t = now_s();
	if (t - c->last_progress < 0.2)
		return;
	c->last_progress = t;
	fprintf(stderr, "\r\033[Kgpuopt bench: %s, group %zu of %zu, round %zu", phase,
		(size_t)(g - c->res->groups) + 1, c->res->ngroups, rounds);
	fflush(stderr);
}

/* One run of cmd; false when the benchmark must stop (reported). */
static bool measure(struct ctx *c, struct bench_command *cmd, unsigned round, unsigned slot, bool warmup)
{
	const struct bench_settings *s = c->set;
	if (cmd->prepare && !run_aux(c, cmd->prepare, cmd->prepare_text, "--prepare", cmd->cwd))
		return false;
	if (c->in_fd != c->null_fd)
		lseek(c->in_fd, 0, SEEK_SET);
	struct runner_stdio io = {c->in_fd, c->out_fd, -1, cmd->cwd, NULL, capture(c)};
	struct gpu_usage *gpu = NULL;
	if (c->sampler && !warmup) {
		gpu = xcalloc(c->res->ndev, sizeof *gpu);
		gpu_sampler_begin(c->sampler);
	}
	struct run_result r;
	bool started = runner_run(cmd->argv, &io, s->timeout_s, &r);
	if (gpu)
		gpu_sampler_end(c->sampler, gpu);
	if (!started) {
		free(gpu);
		report_failure(c, "command", cmd->text, &r);
		return false;
	}
	if (cmd->nruns == cmd->cap) {
		cmd->cap = cmd->cap ? cmd->cap * 2 : 64;
		cmd->runs = xrealloc(cmd->runs, cmd->cap * sizeof *cmd->runs);
	}
	struct bench_run *run = &cmd->runs[cmd->nruns++];
	memset(run, 0, sizeof *run);
	run->round = round;
	run->slot = slot;
	run->warmup = warmup;
	run->wall_raw_s = r.wall_s;
	run->wall_s = r.wall_s;
	run->user_s = r.user_s;
	run->sys_s = r.sys_s;
	if (c->res->shell_calibrated) {
		run->wall_s = fmax(0, r.wall_s - c->res->shell_wall_s);
		run->user_s = fmax(0, r.user_s - c->res->shell_user_s);
		run->sys_s = fmax(0, r.sys_s - c->res->shell_sys_s);
	}
	run->peak_rss_kib = r.peak_rss_kib;
	run->exit_code = r.exit_code;
	run->signal = r.signal;
	run->timed_out = r.timed_out;
	run->gpu = gpu;
	if (!warmup)
		cmd->measured_s += run->wall_s;
	if (runner_interrupted())
		return false;
	if (!run_ok(&r) && !s->ignore_failure) {
		char *what = xasprintf("%s run %u of command", warmup ? "warm-up" : "measured", round + 1);
		report_failure(c, what, cmd->text, &r);
		free(what);
		return false;
	}
	return true;
}

/* The measured wall times of cmd in round order. Owned; *n set. */
static double *measured_walls(const struct bench_command *cmd, size_t *n)
{
	double *x = xmalloc((cmd->nruns ? cmd->nruns : 1) * sizeof *x);
	size_t k = 0;
	for (size_t i = 0; i < cmd->nruns; i++)
		if (!cmd->runs[i].warmup)
			x[k++] = cmd->runs[i].wall_s;
	*n = k;
	return x;
}

static uint64_t derive_seed(uint64_t seed, size_t group, size_t index)
{
	return seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(group * 4096 + index + 1);
}

static double half_width(const struct interval *iv)
{
	if (!(iv->estimate > 0) || isnan(iv->lo) || isnan(iv->hi))
		return INFINITY;
	return fmax(iv->hi / iv->estimate - 1, 1 - iv->lo / iv->estimate);
}

/* The interval of each comparison (or of the median alone) with resamples. */
static void compare_all(const struct ctx *c, struct bench_group *g, unsigned resamples)
{
	size_t gi = (size_t)(g - c->res->groups);
	size_t nb;
	double *base = measured_walls(&g->cmds[0], &nb);
	if (g->ncmds == 1)
		stats_median_ci(base, nb, resamples, BENCH_CONFIDENCE, derive_seed(c->set->seed, gi, 0),
				&g->median_ci);
	for (size_t i = 1; i < g->ncmds; i++) {
		size_t nc;
		double *cand = measured_walls(&g->cmds[i], &nc);
		size_t n = nb < nc ? nb : nc;
		struct bench_comparison *cmp = &g->cmp[i - 1];
		cmp->candidate = i;
		cmp->pairs = n;
		stats_ratio_ci(base, cand, n, resamples, BENCH_CONFIDENCE, derive_seed(c->set->seed, gi, i),
			       &cmp->speedup);
		cmp->half_width = half_width(&cmp->speedup);
		free(cand);
	}
	free(base);
}

static bool precise_enough(const struct ctx *c, struct bench_group *g)
{
	compare_all(c, g, BENCH_CHECK_RESAMPLES);
	if (g->ncmds == 1)
		return half_width(&g->median_ci) <= c->set->precision;
	for (size_t i = 0; i + 1 < g->ncmds; i++)
		if (!(g->cmp[i].half_width <= c->set->precision))
			return false;
	return true;
}

static const char *should_stop(struct ctx *c, struct bench_group *g, size_t rounds, double elapsed,
			       size_t *next_check)
{
	const struct bench_settings *s = c->set;
	/* --max-time ends the first round past it, before the default
	 * --min-runs; a --min-runs / --runs given is honoured */
	if (s->max_time_s > 0 && elapsed >= s->max_time_s && (!s->min_runs_set || rounds >= s->min_runs))
		return "max-time";
	if (rounds < s->min_runs)
		return NULL;
	if (s->max_runs && rounds >= s->max_runs)
		return s->max_runs == s->min_runs ? "runs" : "max-runs";
	for (size_t i = 0; i < g->ncmds; i++)
		if (g->cmds[i].measured_s < s->min_time_s)
			return NULL;
	if (rounds < *next_check)
		return NULL;
	*next_check = rounds + (rounds / 20 > 1 ? rounds / 20 : 1);
	return precise_enough(c, g) ? "precision" : NULL;
}

/* Runs the empty shell once (what --shell puts before every command):
 * true with its result in *r; false, said on stderr, when it failed or a
 * signal came. */
static bool run_empty_shell(struct ctx *c, struct run_result *r)
{
	char *argv[] = {(char *)c->set->shell, "-c", "", NULL};
	struct runner_stdio io = {c->null_fd, c->null_out, -1, NULL, NULL, capture(c)};
	runner_run(argv, &io, c->set->timeout_s, r);
	if (run_ok(r) && !runner_interrupted())
		return true;
	if (!runner_interrupted()) {
		c->res->failed_step = "--shell";
		char *text = xasprintf("%s -c ''", c->set->shell);
		report_failure(c, "the empty shell run", text, r);
		free(text);
	}
	return false;
}

/* One round: every command once in a shuffled order and, in a measured
 * round with --shell, one empty shell run among them (g->shell_probe_s). */
static bool run_round(struct ctx *c, struct bench_group *g, unsigned round, bool warmup, size_t *order)
{
	bool probe = c->res->shell_calibrated && !warmup;
	size_t n = g->ncmds + probe; /* index ncmds: the empty shell */
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	rng_shuffle(&c->rng, order, n);
	for (size_t k = 0; k < n; k++) {
		if (order[k] == g->ncmds) {
			struct run_result r;
			if (!run_empty_shell(c, &r))
				return false;
			g->shell_probe_s = xrealloc(g->shell_probe_s, (g->nshell_probes + 1) * sizeof *g->shell_probe_s);
			g->shell_probe_s[g->nshell_probes++] = r.wall_s;
		} else if (!measure(c, &g->cmds[order[k]], round, (unsigned)k, warmup))
			return false;
	}
	return true;
}

/* True when no command before i in g has the same text in the field at
 * offset (a char * member): a --setup or --cleanup given once runs once per
 * group, or once per parameter value when it names {VAR}. */
static bool first_with_text(const struct bench_group *g, size_t i, size_t offset)
{
	const char *mine = *(char *const *)((const char *)&g->cmds[i] + offset);
	for (size_t j = 0; j < i; j++) {
		const char *other = *(char *const *)((const char *)&g->cmds[j] + offset);
		if (other && strcmp(other, mine) == 0)
			return false;
	}
	return true;
}

/* Measures group g: setup, warm-up, rounds until the stop rule, cleanup.
 * True when its rounds ran to the end (a failed --cleanup after them is
 * c->cleanup_failed); false when a run, --prepare or --setup failed or a
 * signal came. */
static bool run_group(struct ctx *c, struct bench_group *g)
{
	const struct bench_settings *s = c->set;
	double begin = now_s();
	size_t *order = xcalloc(g->ncmds + 1, sizeof *order);
	g->cmp = xcalloc(g->ncmds > 1 ? g->ncmds - 1 : 1, sizeof *g->cmp);
	bool ok = true;
	size_t set_up = 0; /* commands whose --setup ran (or that have none) */
	for (; set_up < g->ncmds; set_up++) {
		struct bench_command *cmd = &g->cmds[set_up];
		if (cmd->setup && first_with_text(g, set_up, offsetof(struct bench_command, setup_text)) &&
		    !run_aux(c, cmd->setup, cmd->setup_text, "--setup", cmd->cwd)) {
			ok = false;
			break;
		}
	}
	for (unsigned w = 0; w < s->warmup && ok; w++) {
		progress(c, g, 0, "warming up");
		ok = run_round(c, g, w, true, order);
	}
	double start = now_s();
	size_t rounds = 0, next_check = 0;
	while (ok) {
		runner_reset_peak();
		ok = run_round(c, g, (unsigned)rounds, false, order);
		if (!ok)
			break;
		rounds++;
		progress(c, g, rounds, "measuring");
		g->stop_reason = should_stop(c, g, rounds, now_s() - start, &next_check);
		if (g->stop_reason)
			break;
	}
	g->rounds = rounds;
	g->elapsed_s = now_s() - start;
	if (!runner_interrupted()) {
		/* cleanup runs even after a failure, for the commands that were set up */
		for (size_t i = 0; i < set_up; i++)
			if (g->cmds[i].cleanup &&
			    first_with_text(g, i, offsetof(struct bench_command, cleanup_text)) &&
			    !run_aux(c, g->cmds[i].cleanup, g->cmds[i].cleanup_text, "--cleanup", g->cmds[i].cwd))
				c->cleanup_failed = true;
	}
	g->total_s = now_s() - begin;
	free(order);
	return ok && !runner_interrupted();
}

/* ---- statistics and warnings ---- */

static void warn(struct ptrvec *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ptrvec *w, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	ptrvec_push(w, buf_steal(&b));
}

static void summarize_command(const struct ctx *c, const struct bench_group *g, struct bench_command *cmd)
{
	size_t n = 0;
	double *wall = measured_walls(cmd, &n);
	double *user = xmalloc((n ? n : 1) * sizeof *user), *sys = xmalloc((n ? n : 1) * sizeof *sys);
	double *rss = xmalloc((n ? n : 1) * sizeof *rss);
	size_t k = 0;
	cmd->failed = 0;
	cmd->rss_max_kib = 0;
	double first = NAN;
	for (size_t i = 0; i < cmd->nruns; i++) {
		const struct bench_run *r = &cmd->runs[i];
		if (r->warmup)
			continue;
		if (k == 0)
			first = r->wall_s;
		user[k] = r->user_s;
		sys[k] = r->sys_s;
		rss[k] = (double)r->peak_rss_kib;
		if (r->peak_rss_kib > cmd->rss_max_kib)
			cmd->rss_max_kib = r->peak_rss_kib;
		if (r->exit_code != 0 || r->signal || r->timed_out)
			cmd->failed++;
		k++;
	}
	cmd->measured = n;
	stats_summarize(wall, n, &cmd->wall);
	stats_summarize(user, n, &cmd->user);
	stats_summarize(sys, n, &cmd->sys);
	cmd->rss_median_kib = stats_median(rss, n);
	size_t ndev = c->res->ndev;
	if (ndev) {
		cmd->gpu = xcalloc(ndev, sizeof *cmd->gpu);
		for (size_t d = 0; d < ndev; d++) {
			struct gpu_summary *gs = &cmd->gpu[d];
			double mem_sum = 0, util_sum = 0;
			for (size_t i = 0; i < cmd->nruns; i++) {
				const struct bench_run *r = &cmd->runs[i];
				if (r->warmup || !r->gpu || r->gpu[d].samples == 0)
					continue;
				const struct gpu_usage *u = &r->gpu[d];
				gs->samples += u->samples;
				mem_sum += u->mem_used_mean * u->samples;
				util_sum += u->util_mean * u->samples;
				gs->mem_peak = fmax(gs->mem_peak, u->mem_used_peak);
				gs->util_peak = fmax(gs->util_peak, u->util_peak);
			}
			if (gs->samples) {
				gs->mem_mean = mem_sum / gs->samples;
				gs->util_mean = util_sum / gs->samples;
			}
		}
	}
	/* warnings */
	const struct summary *w = &cmd->wall;
	if (n && w->median < BENCH_SHORT_RUN_S) {
		char *m = bench_format_seconds(w->median);
		warn(&cmd->warnings, "median %s is under 5 ms: process start-up dominates; time a larger "
			 "workload, or repeat the work inside one process", m);
		free(m);
	}
	if (n > 2 && first > BENCH_FIRST_RUN_FACTOR * w->median && w->mad > 0 &&
	    0.6745 * (first - w->median) / w->mad > STATS_OUTLIER_Z) {
		char *f = bench_format_seconds(first);
		warn(&cmd->warnings, "the first measured run took %s, %.1fx the median: a warm-up was missing "
			 "or too short (raise --warmup)", f, first / w->median);
		free(f);
	}
	if (n > 2 && w->median > 0 && 1.4826 * w->mad / w->median > BENCH_HIGH_VARIATION)
		warn(&cmd->warnings, "high variation: 1.4826 x MAD is %.0f%% of the median; close other "
			 "programs, check the load average, or add runs", 100 * 1.4826 * w->mad / w->median);
	size_t outliers = w->outliers_low + w->outliers_high;
	if (n > 2 && (double)outliers > BENCH_OUTLIER_SHARE * (double)n)
		warn(&cmd->warnings, "%zu of %zu runs are outliers (modified z-score above 3.5): the machine "
			 "was busy, or the command's time varies", outliers, n);
	if (cmd->failed)
		warn(&cmd->warnings, "%zu of %zu measured runs failed and are counted (--ignore-failure)",
		     cmd->failed, n);
	if (c->res->shell_calibrated && n && w->median < g->shell_wall_s) {
		char *sh = bench_format_seconds(g->shell_wall_s);
		warn(&cmd->warnings, "the shell's own start-up (%s, subtracted) is longer than what is left "
			 "of this command: drop --shell if it can run without one", sh);
		free(sh);
	}
	free(wall);
	free(user);
	free(sys);
	free(rss);
}

/* Why the runs of commands a (and b, if not NULL) cannot give an
 * interval or a verdict, or NULL when they can: failed runs (their time
 * says nothing about the work), a median of zero once the shell's start-up
 * is taken off, too few rounds. Owned. */
static char *no_conclusion(const struct ctx *c, const struct bench_group *g,
			   const struct bench_command *a, const struct bench_command *b, size_t pairs)
{
	const struct bench_command *both[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		const struct bench_command *x = both[k];
		if (x && x->failed)
			return xasprintf("%zu of %zu measured runs of '%s' failed (--ignore-failure counted them): "
					 "the time of a failed run says nothing about the work", x->failed,
					 x->measured, x->name);
	}
	for (int k = 0; k < 2; k++) {
		const struct bench_command *x = both[k];
		/* with --shell: what is left once the start-up is taken off must
		 * stand out of the start-up's own noise, and of a tenth of it
		 * (CI's ASan run once left 33 and 44 µs of two builtins after
		 * taking off 679 µs measured before the runs, above a noise of
		 * about 20 µs; the start-up now comes from the rounds themselves) */
		if (!x)
			continue;
		double floor = c->res->shell_calibrated
			       ? fmax(g->shell_noise_s, BENCH_SHELL_DRIFT * g->shell_wall_s) : 0;
		size_t zero = 0;
		for (size_t i = 0; i < x->nruns; i++)
			zero += !x->runs[i].warmup && !(x->runs[i].wall_s > 0);
		if (!(x->wall.median > floor) || (double)zero >= 0.05 * (double)x->measured) {
			char *m = bench_format_seconds(x->wall.median), *f = bench_format_seconds(floor);
			char *left = zero ? xasprintf("%zu of %zu runs come to 0 or less", zero, x->measured)
				   : xasprintf("what is left (median %s) is within the start-up's own noise "
					       "(%s: its spread, or a tenth of it where that is more)", m, f);
			char *why = c->res->shell_calibrated
				    ? xasprintf("'%s' took no longer than the shell's own start-up, which is "
						"subtracted: %s; time a larger workload, or drop --shell", x->name, left)
				    : xasprintf("the median time of '%s' is 0", x->name);
			free(left);
			free(m);
			free(f);
			return why;
		}
	}
	if (pairs < BENCH_MIN_PAIRS)
		return xasprintf("only %zu round%s: too few for a 95%% interval (at least %d; the default "
				 "--min-runs is 10)%s", pairs, pairs == 1 ? "" : "s", BENCH_MIN_PAIRS,
				 g->stop_reason && strcmp(g->stop_reason, "max-time") == 0
				 ? "; --max-time ended it: raise it, or give --min-runs" : "");
	return NULL;
}

/* With --shell: the start-up to take off g's wall times, from the empty
 * runs of its own rounds (the calibration's when there are too few), and
 * every run's wall time made its raw time less that, not below 0. */
static void settle_shell(const struct ctx *c, struct bench_group *g)
{
	if (!c->res->shell_calibrated)
		return;
	g->shell_from_probes = g->nshell_probes >= BENCH_SHELL_MIN_PROBES;
	if (g->shell_from_probes) {
		struct summary sw;
		stats_summarize(g->shell_probe_s, g->nshell_probes, &sw);
		g->shell_wall_s = sw.median;
		g->shell_noise_s = 1.4826 * sw.mad;
	} else {
		g->shell_wall_s = c->res->shell_wall_s;
		g->shell_noise_s = c->res->shell_noise_s;
	}
	for (size_t i = 0; i < g->ncmds; i++)
		for (size_t k = 0; k < g->cmds[i].nruns; k++) {
			struct bench_run *r = &g->cmds[i].runs[k];
			r->wall_s = fmax(0, r->wall_raw_s - g->shell_wall_s);
		}
}

static void conclude_group(const struct ctx *c, struct bench_group *g)
{
	const struct bench_settings *s = c->set;
	settle_shell(c, g);
	for (size_t i = 0; i < g->ncmds; i++)
		summarize_command(c, g, &g->cmds[i]);
	compare_all(c, g, s->resamples);
	double up = 1 + s->min_effect, down = 1 / up;
	bool concluded = g->ncmds > 1;
	for (size_t i = 0; i + 1 < g->ncmds; i++) {
		struct bench_comparison *cmp = &g->cmp[i];
		const struct interval *iv = &cmp->speedup;
		cmp->why = no_conclusion(c, g, &g->cmds[0], &g->cmds[cmp->candidate], cmp->pairs);
		if (!cmp->why && !(isfinite(iv->estimate) && isfinite(iv->lo) && isfinite(iv->hi) && iv->lo > 0))
			cmp->why = xstrdup("the interval is not finite: some resampled medians are 0 (time a "
					   "larger workload)");
		if (cmp->why) {
			cmp->verdict = "cannot conclude";
			cmp->conclusive = false;
			concluded = false;
			continue;
		}
		if (iv->lo > up) {
			cmp->verdict = "faster";
			cmp->conclusive = true;
		} else if (iv->hi < down) {
			cmp->verdict = "slower";
			cmp->conclusive = true;
		} else {
			cmp->verdict = "no difference";
			cmp->conclusive = iv->lo >= down && iv->hi <= up;
		}
		if (cmp->half_width > s->precision && strcmp(g->stop_reason ? g->stop_reason : "", "precision"))
			warn(&g->warnings, "%s: the interval is +/-%.1f%%, wider than --precision %.3g%% "
				 "(stopped by --%s)", g->cmds[cmp->candidate].name, 100 * cmp->half_width,
			     100 * s->precision, g->stop_reason ? g->stop_reason : "?");
	}
	if (g->ncmds == 1) {
		g->median_why = no_conclusion(c, g, &g->cmds[0], NULL, g->rounds);
		concluded = !g->median_why;
		double hw = half_width(&g->median_ci);
		if (concluded && hw > s->precision && strcmp(g->stop_reason ? g->stop_reason : "", "precision"))
			warn(&g->warnings, "the median's interval is +/-%.1f%%, wider than --precision %.3g%% "
				 "(stopped by --%s)", 100 * hw, 100 * s->precision,
			     g->stop_reason ? g->stop_reason : "?");
	}
	if (g->rounds < 10 && (concluded || g->rounds >= BENCH_MIN_PAIRS))
		warn(&g->warnings, "only %zu round%s: a bootstrap interval from so few runs is rough; "
			 "use at least 10 (--min-runs)", g->rounds, g->rounds == 1 ? "" : "s");
}

/* ---- the whole session ---- */

/* True when the program name is a Python interpreter: python, python3,
 * python3.12, pypy3 ... (the base name). */
static bool is_python(const char *prog)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	const char *rest = str_starts_with(base, "python") ? base + 6 : str_starts_with(base, "pypy") ? base + 4 : NULL;
	if (!rest)
		return false;
	for (; *rest; rest++)
		if (!((*rest >= '0' && *rest <= '9') || *rest == '.'))
			return false;
	return true;
}

/* The Python a command runs, or NULL (owned): its program, or the program
 * after `env` and its options and NAME=value words; with --shell, of the
 * command line's first simple command. */
static char *python_of_command(const struct bench_settings *s, const struct bench_command *cmd)
{
	char **words = cmd->argv, **split = NULL;
	if (s->shell) {
		char *why = NULL;
		split = shell_split(cmd->text, NULL, &why);
		free(why);
		if (!split)
			return NULL;
		words = split;
	}
	size_t i = 0;
	const char *b = strrchr(words[0], '/');
	if (strcmp(b ? b + 1 : words[0], "env") == 0)
		for (i = 1; words[i] && (words[i][0] == '-' || strchr(words[i], '=')); i++)
			;
	char *py = words[i] && is_python(words[i]) ? xstrdup(words[i]) : NULL;
	shell_words_free(split);
	return py;
}

/* The interpreter the environment record describes, as a command line
 * (owned), and *by saying who chose it: --python; else the Python the
 * commands run (the first one that runs one, in the order given); else
 * python3 from PATH. *others: how many other interpreters the commands run. */
static char *record_python(const struct bench_settings *s, const struct bench_result *res,
			   char **by, struct ptrvec *others)
{
	if (s->python) {
		*by = xstrdup("--python");
		return xstrdup(s->python);
	}
	char *chosen = NULL;
	for (size_t g = 0; g < res->ngroups; g++)
		for (size_t i = 0; i < res->groups[g].ncmds; i++) {
			char *py = python_of_command(s, &res->groups[g].cmds[i]);
			if (!py)
				continue;
			if (!chosen) {
				chosen = py;
				*by = xasprintf("the command '%s'", res->groups[g].cmds[i].name);
				continue;
			}
			bool known = strcmp(py, chosen) == 0;
			for (size_t k = 0; k < others->len && !known; k++)
				known = strcmp(others->items[k], py) == 0;
			if (known)
				free(py);
			else
				ptrvec_push(others, py);
		}
	if (chosen) {
		struct buf b = {0};
		shell_quote(&b, chosen, 1);
		free(chosen);
		return buf_steal(&b);
	}
	*by = xstrdup("the default (python3 on PATH; no command runs a Python)");
	return xstrdup("python3");
}

/* With --shell: the empty shell's start-up before any group, subtracted
 * from the runs while they are measured (the stop rule's view) and used for
 * a group with too few rounds to have its own (settle_shell). */
static bool calibrate_shell(struct ctx *c)
{
	if (!runner_find_program(c->set->shell)) {
		const char *shell = c->set->shell;
		struct stat st;
		diag_error("bench: --shell: '%s' %s", shell,
			   !strchr(shell, '/') ? "is not found in PATH"
			   : stat(shell, &st) != 0 ? "does not exist"
			   : S_ISDIR(st.st_mode) ? "is a directory, not a program"
			   : "is not executable");
		c->rc = BENCH_CANNOT_START;
		return false;
	}
	size_t n = BENCH_SHELL_CALIBRATION_RUNS;
	double *wall = xcalloc(n, sizeof *wall), *user = xcalloc(n, sizeof *user),
	       *sys = xcalloc(n, sizeof *sys);
	bool ok = true;
	for (size_t i = 0; i < n + 3 && ok; i++) {
		struct run_result r;
		ok = run_empty_shell(c, &r);
		if (ok && i >= 3) { /* three warm-ups first */
			wall[i - 3] = r.wall_s;
			user[i - 3] = r.user_s;
			sys[i - 3] = r.sys_s;
		}
	}
	if (ok) {
		c->res->shell_calibrated = true;
		c->res->shell_runs = n;
		c->res->shell_wall_s = stats_median(wall, n);
		struct summary sw;
		stats_summarize(wall, n, &sw);
		c->res->shell_noise_s = 1.4826 * sw.mad;
		c->res->shell_user_s = stats_median(user, n);
		c->res->shell_sys_s = stats_median(sys, n);
	}
	free(wall);
	free(user);
	free(sys);
	return ok;
}

/* The most of a pipe given as --input that is kept (in memory, to replay
 * for every run): 1 GiB, or half the memory this process may still take. */
static uint64_t input_pipe_max(void)
{
	struct mem_room room;
	mem_room_now(&room);
	uint64_t max = (uint64_t)1 << 30;
	return room.bytes / 2 < max ? room.bytes / 2 : max;
}

static bool open_streams(struct ctx *c)
{
	const struct bench_settings *s = c->set;
	c->null_fd = runner_open_in("/dev/null", 0);
	c->null_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (c->null_fd < 0 || c->null_out < 0) {
		diag_error("bench: cannot open /dev/null: %s", strerror(errno));
		return false;
	}
	/* /dev/null opened read-only serves stdin; a second one serves stdout */
	c->in_fd = c->null_fd;
	if (s->input) {
		uint64_t pipe_max = input_pipe_max();
		c->in_fd = runner_open_in(s->input, pipe_max);
		struct stat st;
		if (c->in_fd < 0 && errno == EFBIG) {
			char *max = bytes_text(pipe_max);
			diag_error("bench: --input: '%s' is a pipe that holds more than %s (a pipe is kept "
				   "in memory whole, to give every run the same input): give a file", s->input, max);
			free(max);
			return false;
		}
		if (c->in_fd < 0 || fstat(c->in_fd, &st) != 0 || S_ISDIR(st.st_mode)) {
			diag_error("bench: --input: cannot read '%s': %s", s->input,
				   c->in_fd < 0 ? open_read_error(errno) : "is a directory");
			if (c->in_fd >= 0)
				close(c->in_fd);
			c->in_fd = c->null_fd;
			return false;
		}
	}
	switch (s->output) {
	case OUTPUT_NULL: c->out_fd = c->null_out; break;
	case OUTPUT_INHERIT: c->out_fd = STDOUT_FILENO; break;
	case OUTPUT_FILE:
		c->out_fd = runner_open_out(s->output_file);
		if (c->out_fd < 0) {
			diag_error("bench: --output: cannot write '%s': %s", s->output_file, direct_error(errno));
			c->out_fd = -1;
			return false;
		}
		break;
	}
	return true;
}

static void close_streams(struct ctx *c)
{
	if (c->in_fd >= 0 && c->in_fd != c->null_fd)
		close(c->in_fd);
	if (c->null_fd >= 0)
		close(c->null_fd);
	if (c->out_fd > STDERR_FILENO && c->out_fd != c->null_out)
		close(c->out_fd);
	if (c->null_out >= 0)
		close(c->null_out);
	caplog_free(&c->err_log);
}


struct bench_result *bench_run(const struct bench_settings *s, char *const *commands, size_t ncommands)
{
	struct bench_result *res = xcalloc(1, sizeof *res);
	res->set = s;
	struct ptrvec templates = {0};
	for (size_t i = 0; i < ncommands; i++)
		ptrvec_push(&templates, commands[i]);
	struct ctx c = {.set = s, .res = res, .null_fd = -1, .null_out = -1, .in_fd = -1, .out_fd = -1,
			 .rc = BENCH_BAD_COMMAND};
	res->status = BENCH_BAD_COMMAND;
	if (!build_groups(s, &templates, res) || !open_streams(&c))
		goto out;

	runner_install_signals();
	double t0 = now_s();
	res->started_at = utc_now_text();
	/* The environment first: the GPU query forks, so before any thread. */
	json_t *gpu = gpuinfo_query(20);
	json_t *host = sysinfo_host();
	char *by = NULL;
	struct ptrvec others = {0};
	char *py = record_python(s, res, &by, &others);
	json_t *python = sysinfo_python(py, 30);
	json_object_set_new(python, "chosen_by", json_string(by));
	json_t *oth = json_array();
	for (size_t i = 0; i < others.len; i++) {
		json_array_append_new(oth, json_string(others.items[i]));
		free(others.items[i]);
	}
	json_object_set_new(python, "other_interpreters", oth);
	ptrvec_free(&others);
	free(py);
	free(by);
	res->env = json_pack("{s:o, s:o, s:o}", "host", host, "python", python, "gpu", gpu);
	if (json_is_true(json_object_get(gpu, "found"))) {
		c.sampler = gpu_sampler_new(BENCH_GPU_INTERVAL_MS);
		res->ndev = gpu_sampler_devices(c.sampler);
	}
	rng_seed(&c.rng, s->seed);
	c.progress = s->progress;
	c.rc = BENCH_OK;

	bool ok = !s->shell || calibrate_shell(&c);
	for (size_t g = 0; g < res->ngroups && ok; g++) {
		ok = run_group(&c, &res->groups[g]);
		if (ok)
			res->nmeasured = g + 1;
		if (c.cleanup_failed && !s->ignore_failure)
			break; /* the next setup may depend on it */
	}
	if (c.progress)
		fputs("\r\033[K", stderr);
	res->rss_floor_kib = runner_floor_rss_kib();
	res->duration_s = now_s() - t0;
	/* what was measured to the end is concluded, whatever came after */
	for (size_t g = 0; g < res->nmeasured; g++)
		conclude_group(&c, &res->groups[g]);
	if (runner_interrupted()) {
		res->status = BENCH_INTERRUPTED;
		res->signal = runner_interrupt_signal();
	} else if (!ok)
		res->status = c.rc == BENCH_OK ? BENCH_RUN_FAILED : c.rc;
	else if (c.cleanup_failed)
		res->status = BENCH_CLEANUP_FAILED;
	else
		res->status = BENCH_OK;
out:
	gpu_sampler_free(c.sampler);
	close_streams(&c);
	ptrvec_free(&templates);
	return res;
}
