/* bench_cli: see bench_cli.h. */
#include "bench_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/fileio.h"

enum opt_id {
	O_WARMUP, O_MIN_RUNS, O_MAX_RUNS, O_RUNS, O_MIN_TIME, O_MAX_TIME, O_PRECISION, O_MIN_EFFECT,
	O_SEED, O_RESAMPLES, O_SHELL, O_PREPARE, O_SETUP, O_CLEANUP, O_SCAN, O_STEP, O_LIST, O_NAME,
	O_INPUT, O_OUTPUT, O_TIMEOUT, O_IGNORE_FAILURE, O_FAIL_ON_SLOWER, O_PYTHON, O_JSON, O_CSV,
	O_MARKDOWN, O_FORCE,
};

struct opt {
	const char *name;
	char short_name;
	int nargs;           /* 0, 1 or 3 values */
	bool optional_value; /* nargs 0, but --name=VALUE allowed */
	enum opt_id id;
};

static const struct opt opts[] = {
	{"warmup", 'w', 1, false, O_WARMUP},
	{"min-runs", 'm', 1, false, O_MIN_RUNS},
	{"max-runs", 'M', 1, false, O_MAX_RUNS},
	{"runs", 'r', 1, false, O_RUNS},
	{"min-time", 0, 1, false, O_MIN_TIME},
	{"max-time", 0, 1, false, O_MAX_TIME},
	{"precision", 0, 1, false, O_PRECISION},
	{"min-effect", 0, 1, false, O_MIN_EFFECT},
	{"seed", 0, 1, false, O_SEED},
	{"resamples", 0, 1, false, O_RESAMPLES},
	{"shell", 0, 0, true, O_SHELL},
	{"prepare", 'p', 1, false, O_PREPARE},
	{"setup", 's', 1, false, O_SETUP},
	{"cleanup", 'c', 1, false, O_CLEANUP},
	{"parameter-scan", 'P', 3, false, O_SCAN},
	{"step", 'D', 1, false, O_STEP},
	{"parameter-list", 'L', 2, false, O_LIST},
	{"command-name", 'n', 1, false, O_NAME},
	{"input", 0, 1, false, O_INPUT},
	{"output", 0, 1, false, O_OUTPUT},
	{"timeout", 0, 1, false, O_TIMEOUT},
	{"ignore-failure", 'i', 0, false, O_IGNORE_FAILURE},
	{"fail-on-slower", 0, 0, false, O_FAIL_ON_SLOWER},
	{"python", 0, 1, false, O_PYTHON},
	{"export-json", 0, 1, false, O_JSON},
	{"export-csv", 0, 1, false, O_CSV},
	{"export-markdown", 0, 1, false, O_MARKDOWN},
	{"force", 0, 0, false, O_FORCE},
};

static bool parse_count(const char *opt, const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v > max) {
		diag_error("bench: --%s: '%s' is not a whole number from 0 to %lu", opt, s, max);
		return false;
	}
	*out = v;
	return true;
}

static bool parse_seconds(const char *opt, const char *s, bool allow_zero, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > 1e7) {
		diag_error("bench: --%s: '%s' is not a number of seconds%s", opt, s,
			   allow_zero ? "" : " above 0");
		return false;
	}
	*out = v;
	return true;
}

/* "2", "2%" or "2.5" -> 0.02 / 0.025. */
static bool parse_percent(const char *opt, const char *s, bool allow_zero, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end == '%')
		end++;
	if (!*s || *end || errno || !isfinite(v) || v < 0 || (!allow_zero && v == 0) || v >= 100) {
		diag_error("bench: --%s: '%s' is not a percentage %s 0 and under 100 (e.g. 2 or 2%%)", opt, s,
			   allow_zero ? "of at least" : "above");
		return false;
	}
	*out = v / 100;
	return true;
}

static bool valid_var(const char *v)
{
	if (!*v)
		return false;
	for (const char *p = v; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_'))
			return false;
	return true;
}

static bool is_integer_text(const char *s)
{
	char *end;
	errno = 0;
	(void)strtoll(s, &end, 10);
	return *s && !*end && !errno;
}

static int decimals_of(const char *s)
{
	const char *dot = strchr(s, '.');
	if (!dot)
		return 0;
	int n = 0;
	for (const char *p = dot + 1; *p >= '0' && *p <= '9'; p++)
		n++;
	return n;
}

/* The parameter that a "{NAME}" at p names, or -1. */
static long param_at(const struct bench_settings *s, const char *p)
{
	for (size_t k = 0; k < s->nparams; k++) {
		size_t len = strlen(s->params[k].name);
		if (strncmp(p + 1, s->params[k].name, len) == 0 && p[1 + len] == '}')
			return (long)k;
	}
	return -1;
}

/* With parameters, each {NAME} in line must be one of them (a typo would
 * run as literal text); used[k] is set for each one line names. False
 * after saying which. */
static bool placeholders_ok(const struct bench_settings *s, const char *what, const char *line, bool *used)
{
	for (const char *p = strchr(line, '{'); p; p = strchr(p + 1, '{')) {
		long k = param_at(s, p);
		if (k >= 0) {
			used[k] = true;
			continue;
		}
		size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (n == 0 || p[1 + n] != '}')
			continue; /* not a {NAME}: a brace of the command's own */
		struct buf names = {0};
		for (size_t j = 0; j < s->nparams; j++)
			buf_printf(&names, "%s{%s}", j ? ", " : "", s->params[j].name);
		diag_error("bench: %s '%s': '{%.*s}' is not a parameter (given: %s)", what, line, (int)n, p + 1,
			   names.data);
		buf_free(&names);
		return false;
	}
	return true;
}

/* Every {NAME} in the command lines (and --prepare, --setup, --cleanup,
 * --command-name) is a parameter, and every parameter is named in a
 * command line (a name alone does not vary the runs). False after saying
 * why. */
static bool params_used(const struct bench_cli *c)
{
	const struct bench_settings *s = &c->set;
	if (s->nparams == 0)
		return true;
	bool *used = xcalloc(s->nparams, sizeof *used), ok = true;
	const struct {
		const char *what;
		const struct ptrvec *v;
	} lines[] = {{"command", &c->commands}, {"--prepare", &s->prepare}, {"--setup", &s->setup},
		     {"--cleanup", &s->cleanup}};
	for (size_t k = 0; ok && k < sizeof lines / sizeof *lines; k++)
		for (size_t i = 0; ok && i < lines[k].v->len; i++)
			ok = placeholders_ok(s, lines[k].what, lines[k].v->items[i], used);
	bool *ignored = xcalloc(s->nparams, sizeof *ignored);
	for (size_t i = 0; ok && i < s->names.len; i++)
		ok = placeholders_ok(s, "--command-name", s->names.items[i], ignored);
	for (size_t k = 0; ok && k < s->nparams; k++)
		if (!used[k]) {
			diag_error("bench: parameter '%s' is used in no command line: write {%s} where its value goes",
				   s->params[k].name, s->params[k].name);
			ok = false;
		}
	free(used);
	free(ignored);
	return ok;
}

/* The values of --parameter-scan VAR MIN MAX [--step STEP]. */
static bool scan_values(const struct bench_cli *c, struct param *p)
{
	const char *step = c->step ? c->step : "1";
	if (is_integer_text(c->scan_min) && is_integer_text(c->scan_max) && is_integer_text(step)) {
		long long lo = strtoll(c->scan_min, NULL, 10), hi = strtoll(c->scan_max, NULL, 10);
		long long st = strtoll(step, NULL, 10);
		if (st <= 0 || hi < lo || (hi - lo) / st >= MAX_PARAM_VALUES) {
			diag_error("bench: --parameter-scan %s %s %s --step %s: need MIN <= MAX, a step above 0 "
				   "and at most %d values", c->scan_var, c->scan_min, c->scan_max, step,
				   MAX_PARAM_VALUES);
			return false;
		}
		p->nvalues = (size_t)((hi - lo) / st) + 1;
		p->values = xcalloc(p->nvalues, sizeof *p->values);
		for (size_t i = 0; i < p->nvalues; i++)
			p->values[i] = xasprintf("%lld", lo + (long long)i * st);
		p->name = xstrdup(c->scan_var);
		return true;
	}
	char *e1, *e2, *e3;
	double lo = strtod(c->scan_min, &e1), hi = strtod(c->scan_max, &e2), st = strtod(step, &e3);
	if (*e1 || *e2 || *e3 || !*c->scan_min || !*c->scan_max || !*step || !isfinite(lo) ||
	    !isfinite(hi) || !isfinite(st) || st <= 0 || hi < lo || (hi - lo) / st >= MAX_PARAM_VALUES) {
		diag_error("bench: --parameter-scan %s %s %s --step %s: need numbers, MIN <= MAX, a step "
			   "above 0 and at most %d values", c->scan_var, c->scan_min, c->scan_max, step,
			   MAX_PARAM_VALUES);
		return false;
	}
	int dec = decimals_of(c->scan_min);
	if (decimals_of(step) > dec)
		dec = decimals_of(step);
	size_t n = (size_t)floor((hi - lo) / st * (1 + 1e-12) + 1e-9) + 1;
	p->nvalues = n;
	p->values = xcalloc(n, sizeof *p->values);
	for (size_t i = 0; i < n; i++)
		p->values[i] = xasprintf("%.*f", dec, lo + (double)i * st);
	p->name = xstrdup(c->scan_var);
	return true;
}

static bool list_values(const char *var, const char *list, struct param *p)
{
	p->name = xstrdup(var);
	struct ptrvec v = {0};
	const char *s = list;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		ptrvec_push(&v, xstrndup(s, len));
		if (!comma)
			break;
		s = comma + 1;
	}
	p->values = (char **)v.items;
	p->nvalues = v.len;
	return true;
}

static const struct opt *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static const struct opt *find_short(char c)
{
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
		if (opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

static bool apply(struct bench_cli *c, const struct opt *o, const char **v)
{
	struct bench_settings *s = &c->set;
	unsigned long n;
	switch (o->id) {
	case O_WARMUP:
		if (!parse_count(o->name, v[0], 1000000, &n))
			return false;
		s->warmup = (unsigned)n;
		return true;
	case O_MIN_RUNS:
		if (!parse_count(o->name, v[0], 100000000, &n))
			return false;
		s->min_runs = (unsigned)n;
		s->min_runs_set = true;
		return true;
	case O_MAX_RUNS:
		if (!parse_count(o->name, v[0], 100000000, &n))
			return false;
		if (n == 0) {
			diag_error("bench: --max-runs: must be at least 1");
			return false;
		}
		s->max_runs = (unsigned)n;
		return true;
	case O_RUNS:
		if (!parse_count(o->name, v[0], 100000000, &n))
			return false;
		if (n == 0) {
			diag_error("bench: --runs: must be at least 1");
			return false;
		}
		s->min_runs = s->max_runs = (unsigned)n;
		s->min_runs_set = true;
		return true;
	case O_MIN_TIME: return parse_seconds(o->name, v[0], true, &s->min_time_s);
	case O_MAX_TIME: return parse_seconds(o->name, v[0], false, &s->max_time_s);
	case O_TIMEOUT: return parse_seconds(o->name, v[0], false, &s->timeout_s);
	case O_PRECISION: return parse_percent(o->name, v[0], false, &s->precision);
	case O_MIN_EFFECT: return parse_percent(o->name, v[0], true, &s->min_effect);
	case O_SEED: {
		char *end;
		errno = 0;
		unsigned long long seed = strtoull(v[0], &end, 0);
		if (!*v[0] || *end || errno || *v[0] == '-') {
			diag_error("bench: --seed: '%s' is not a whole number", v[0]);
			return false;
		}
		s->seed = (uint64_t)seed;
		return true;
	}
	case O_RESAMPLES:
		if (!parse_count(o->name, v[0], 10000000, &n))
			return false;
		if (n < 100) {
			diag_error("bench: --resamples: at least 100 for a 95%% interval");
			return false;
		}
		s->resamples = (unsigned)n;
		return true;
	case O_SHELL:
		s->shell = v[0] ? v[0] : "/bin/sh";
		if (!*s->shell) {
			diag_error("bench: --shell=: the shell is empty");
			return false;
		}
		return true;
	case O_PREPARE: ptrvec_push(&s->prepare, (void *)v[0]); return true;
	case O_SETUP: ptrvec_push(&s->setup, (void *)v[0]); return true;
	case O_CLEANUP: ptrvec_push(&s->cleanup, (void *)v[0]); return true;
	case O_NAME: ptrvec_push(&s->names, (void *)v[0]); return true;
	case O_SCAN:
		if (c->scan_var) {
			diag_error("bench: --parameter-scan: only one scan (add --parameter-list for more)");
			return false;
		}
		c->scan_var = v[0];
		c->scan_min = v[1];
		c->scan_max = v[2];
		return true;
	case O_STEP: c->step = v[0]; return true;
	case O_LIST:
		ptrvec_push(&c->lists, (void *)v[0]);
		ptrvec_push(&c->lists, (void *)v[1]);
		return true;
	case O_INPUT: s->input = v[0]; return true;
	case O_OUTPUT:
		if (strcmp(v[0], "null") == 0) {
			s->output = OUTPUT_NULL;
		} else if (strcmp(v[0], "inherit") == 0) {
			s->output = OUTPUT_INHERIT;
		} else if (!*v[0]) {
			diag_error("bench: --output: give null, inherit or a file name");
			return false;
		} else {
			s->output = OUTPUT_FILE;
			s->output_file = v[0];
		}
		return true;
	case O_IGNORE_FAILURE: s->ignore_failure = true; return true;
	case O_FAIL_ON_SLOWER: s->fail_on_slower = true; return true;
	case O_PYTHON: s->python = v[0]; return true;
	case O_JSON: s->export_json = v[0]; return true;
	case O_CSV: s->export_csv = v[0]; return true;
	case O_MARKDOWN: s->export_markdown = v[0]; return true;
	case O_FORCE: c->force = true; return true;
	}
	return false;
}

bool bench_cli_parse(int argc, char **argv, struct bench_cli *c)
{
	struct bench_settings *s = &c->set;
	s->warmup = 1;
	s->min_runs = 10;
	s->min_time_s = 3;
	s->max_time_s = 60;
	s->precision = 0.02;
	s->min_effect = 0.05;
	s->seed = 1;
	s->resamples = 10000;
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_done || a[0] != '-' || a[1] == '\0') {
			ptrvec_push(&c->commands, (void *)a);
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		const struct opt *o;
		const char *inline_value = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find_long(a + 2, len);
			if (eq)
				inline_value = eq + 1;
		} else {
			o = find_short(a[1]);
			if (o && a[2])
				inline_value = a + 2;
		}
		if (!o) {
			diag_error("bench: unknown option '%s' (see `gpuopt bench --help`; a command that "
				   "starts with '-' goes after --)", a);
			return false;
		}
		const char *values[3] = {NULL, NULL, NULL};
		if (o->nargs == 0) {
			if (inline_value && !o->optional_value) {
				diag_error("bench: --%s takes no value", o->name);
				return false;
			}
			values[0] = inline_value;
		} else {
			int k = 0;
			if (inline_value)
				values[k++] = inline_value;
			for (; k < o->nargs; k++) {
				if (i + 1 >= argc) {
					diag_error("bench: --%s needs %d value%s", o->name, o->nargs,
						   o->nargs == 1 ? "" : "s");
					return false;
				}
				values[k] = argv[++i];
			}
		}
		if (!apply(c, o, values))
			return false;
	}
	if (c->commands.len == 0) {
		diag_error("bench: which command? (usage: gpuopt bench [OPTIONS] BASELINE [CANDIDATE...])");
		return false;
	}
	if (s->max_runs && s->max_runs < s->min_runs) {
		diag_error("bench: --max-runs %u is below --min-runs %u", s->max_runs, s->min_runs);
		return false;
	}
	if (s->min_runs == 0)
		s->min_runs = 1; /* at least one round, or there is nothing to report */
	if (c->step && !c->scan_var) {
		diag_error("bench: --step goes with --parameter-scan");
		return false;
	}
	size_t nparams = (c->scan_var ? 1 : 0) + c->lists.len / 2;
	s->params = xcalloc(nparams ? nparams : 1, sizeof *s->params);
	if (c->scan_var) {
		if (!valid_var(c->scan_var)) {
			diag_error("bench: --parameter-scan: '%s' is not a name (letters, digits, _)", c->scan_var);
			return false;
		}
		if (!scan_values(c, &s->params[s->nparams]))
			return false;
		s->nparams++;
	}
	for (size_t i = 0; i < c->lists.len; i += 2) {
		const char *var = c->lists.items[i];
		if (!valid_var(var)) {
			diag_error("bench: --parameter-list: '%s' is not a name (letters, digits, _)", var);
			return false;
		}
		for (size_t k = 0; k < s->nparams; k++)
			if (strcmp(s->params[k].name, var) == 0) {
				diag_error("bench: parameter '%s' is given twice", var);
				return false;
			}
		list_values(var, c->lists.items[i + 1], &s->params[s->nparams++]);
	}
	if (!params_used(c))
		return false;
	size_t ncmd = c->commands.len;
	const struct {
		const char *name;
		const struct ptrvec *v;
	} per[] = {{"prepare", &s->prepare}, {"setup", &s->setup}, {"cleanup", &s->cleanup}};
	for (size_t k = 0; k < 3; k++)
		if (per[k].v->len > 1 && per[k].v->len != ncmd) {
			diag_error("bench: --%s given %zu times for %zu commands: give it once, or once per command",
				   per[k].name, per[k].v->len, ncmd);
			return false;
		}
	if (s->names.len > ncmd) {
		diag_error("bench: --command-name given %zu times for %zu commands", s->names.len, ncmd);
		return false;
	}
	const char *exports[3] = {s->export_json, s->export_csv, s->export_markdown};
	int to_stdout = 0;
	for (int k = 0; k < 3; k++)
		to_stdout += exports[k] && strcmp(exports[k], "-") == 0;
	if (to_stdout > 1) {
		diag_error("bench: only one --export-* can go to stdout (-): they would run together");
		return false;
	}
	/* two outputs in one file: the one written last would replace the other */
	const char *outs[4] = {s->export_json, s->export_csv, s->export_markdown,
			       s->output == OUTPUT_FILE ? s->output_file : NULL};
	static const char *const names[4] = {"--export-json", "--export-csv", "--export-markdown", "--output"};
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++)
			if (output_same(outs[a], outs[b])) {
				diag_error("bench: %s and %s both name '%s': one would replace the other", names[a],
					   names[b], outs[b]);
				return false;
			}
	return true;
}

static void settings_free(struct bench_settings *s)
{
	for (size_t i = 0; i < s->nparams; i++) {
		free(s->params[i].name);
		for (size_t k = 0; k < s->params[i].nvalues; k++)
			free(s->params[i].values[k]);
		free(s->params[i].values);
	}
	free(s->params);
	ptrvec_free(&s->prepare);
	ptrvec_free(&s->setup);
	ptrvec_free(&s->cleanup);
	ptrvec_free(&s->names);
}

void bench_cli_free(struct bench_cli *c)
{
	settings_free(&c->set);
	ptrvec_free(&c->commands);
	ptrvec_free(&c->lists);
}
