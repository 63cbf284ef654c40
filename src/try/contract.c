/* contract: see contract.h. */
#include "contract.h"

#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/runner.h"
#include "core/shellsplit.h"
#include "try.h"

static const char *const top_keys[] = {
	"baseline", "python", "outputs", "tolerance", "candidates", "accelerators", "warmup",
	"min_runs", "max_runs", "min_time", "max_time", "min_effect", "precision", "timeout",
	"seed", "metric", "results", "trace", "log_limit", NULL,
};
static const char *const output_keys[] = {
	"path", "rtol", "atol", "ulp", "equal_nan", "allow_dtype", "key", "unordered",
	"recall_k", "min_recall", NULL,
};
static const char *const tolerance_keys[] = {"rtol", "atol", "ulp", "equal_nan", "allow_dtype", NULL};
static const char *const candidate_keys[] = {"name", "command", NULL};
static const char *const accel_ids[] = {"cudf.pandas", "cuml.accel", "nx-cugraph", NULL};

void contract_defaults(struct try_contract *c)
{
	memset(c, 0, sizeof *c);
	char *cwd = getcwd(NULL, 0);
	c->dir = cwd ? cwd : xstrdup(".");
	c->python = xstrdup("python3");
	c->accel_auto = true;
	c->warmup = 1;
	c->min_runs = 10;
	c->max_runs = 0;
	c->min_time = 3;
	c->max_time = 60;
	c->min_effect = 0.05;
	c->precision = 0.02;
	c->timeout = 0;
	c->seed = 1;
	c->metric = xstrdup("wall");
	c->results = xstrdup("gpuopt-try");
	c->trace = -1;
	c->log_limit = TRY_LOG_LIMIT_MB;
}

void contract_free(struct try_contract *c)
{
	if (!c)
		return;
	free(c->file);
	free(c->dir);
	free(c->python);
	free(c->baseline);
	for (size_t i = 0; i < c->noutputs; i++) {
		free(c->outputs[i].path);
		strv_free(c->outputs[i].opts.keys);
	}
	free(c->outputs);
	for (size_t i = 0; i < c->ncands; i++) {
		free(c->cands[i].name);
		free(c->cands[i].command);
	}
	free(c->cands);
	strv_free(c->accel);
	free(c->metric);
	free(c->results);
	memset(c, 0, sizeof *c);
}

/* ---- finding and parsing the file ---- */

static bool has_tool_gpuopt(const char *path)
{
	struct buf b = {0};
	char *why = NULL;
	bool found = false;
	if (read_file(path, 16u << 20, &b, &why))
		found = b.data && strstr(b.data, "[tool.gpuopt") != NULL;
	free(why);
	buf_free(&b);
	return found;
}

char *contract_find(const char *path, const char *dir, char **ignored)
{
	*ignored = NULL;
	if (path)
		return xstrdup(path);
	char *g = xasprintf("%s/gpuopt.toml", dir);
	if (access(g, F_OK) == 0) {
		char *p = xasprintf("%s/pyproject.toml", dir);
		if (access(p, F_OK) == 0 && has_tool_gpuopt(p))
			*ignored = p;
		else
			free(p);
		return g;
	}
	free(g);
	char *p = xasprintf("%s/pyproject.toml", dir);
	if (access(p, F_OK) == 0 && has_tool_gpuopt(p))
		return p;
	free(p);
	return NULL;
}

/* Python that prints the TOML file as JSON, or the parser's own message. */
static const char toml_to_json[] =
	"import json, math, sys\n"
	"try:\n"
	"    import tomllib\n"
	"except ImportError:\n"
	"    try:\n"
	"        import tomli as tomllib\n"
	"    except ImportError:\n"
	"        sys.stderr.write('reading TOML needs Python 3.11 or later (tomllib), or the tomli package; '\n"
	"                         'this is Python %d.%d' % sys.version_info[:2])\n"
	"        sys.exit(3)\n"
	"try:\n"
	"    with open(sys.argv[1], 'rb') as f:\n"
	"        doc = tomllib.load(f)\n"
	"except OSError as e:\n"
	"    sys.stderr.write(e.strerror or str(e))\n"
	"    sys.exit(4)\n"
	"except Exception as e:\n"
	"    sys.stderr.write('not valid TOML: %s' % e)\n"
	"    sys.exit(4)\n"
	"def finite(v):\n"
	"    # JSON has no nan or inf: such a float comes as {'nonfinite': 'nan'}\n"
	"    if isinstance(v, float) and not math.isfinite(v):\n"
	"        return {'nonfinite': repr(v)}\n"
	"    if isinstance(v, dict):\n"
	"        return {k: finite(x) for k, x in v.items()}\n"
	"    if isinstance(v, list):\n"
	"        return [finite(x) for x in v]\n"
	"    return v\n"
	"json.dump(finite(doc), sys.stdout, default=str)\n";

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Runs python on the TOML file; the parsed document, or NULL and *why. */
static json_t *parse_toml(const char *file, const char *python, char **why)
{
	char *split_why = NULL;
	char **words = shell_split(python, NULL, &split_why);
	if (!words) {
		*why = xasprintf("--python '%s': %s", python, split_why);
		free(split_why);
		return NULL;
	}
	size_t n = 0;
	while (words[n])
		n++;
	char **argv = xcalloc(n + 4, sizeof *argv);
	for (size_t i = 0; i < n; i++)
		argv[i] = words[i];
	argv[n] = "-c";
	argv[n + 1] = (char *)toml_to_json;
	argv[n + 2] = (char *)file;
	int out = temp_fd(), err = temp_fd();
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	json_t *doc = NULL;
	if (out < 0 || err < 0 || in < 0) {
		*why = xasprintf("cannot make a temporary file: %s", strerror(errno));
		goto out;
	}
	struct runner_stdio io = {in, out, err, NULL};
	struct run_result r;
	if (!runner_run(argv, &io, 60, &r)) {
		*why = xasprintf("cannot run the Python interpreter '%s' to read it: %s", python,
				 strerror(r.spawn_errno));
		goto out;
	}
	if (!run_ok(&r)) {
		char *msg = temp_fd_text(err, 16u << 20);
		chomp(msg);
		/* the last line is the message; a traceback before it is noise */
		char *last = strrchr(msg, '\n');
		if (r.exit_code == 3 || r.exit_code == 4)
			*why = xstrdup(last ? last + 1 : msg);
		else {
			char *how = run_describe(&r, 60);
			*why = xasprintf("'%s' could not read it (%s)%s%s", python, how, *msg ? ": " : "",
					 last ? last + 1 : msg);
			free(how);
		}
		free(msg);
		goto out;
	}
	char *text = temp_fd_text(out, 16u << 20);
	json_error_t jerr;
	doc = json_loads(text, 0, &jerr);
	free(text);
	if (!doc)
		*why = xasprintf("the TOML parser gave no JSON: %s", jerr.text);
out:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	if (in >= 0)
		close(in);
	free(argv);
	shell_words_free(words);
	return doc;
}

bool contract_load(const char *file, const char *python, struct try_contract *c, char **why)
{
	*why = NULL;
	struct stat st;
	if (stat(file, &st) != 0) {
		*why = xasprintf("%s: %s", file, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = xasprintf("%s: not a regular file", file);
		return false;
	}
	char *perr = NULL;
	json_t *doc = parse_toml(file, python, &perr);
	if (!doc) {
		*why = xasprintf("%s: %s", file, perr);
		free(perr);
		return false;
	}
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	json_t *table = doc;
	if (strcmp(base, "pyproject.toml") == 0) {
		table = json_object_get(json_object_get(doc, "tool"), "gpuopt");
		if (!json_is_object(table)) {
			*why = xasprintf("%s: no [tool.gpuopt] table", file);
			json_decref(doc);
			return false;
		}
	}
	bool ok = contract_from_json(table, file, c, why);
	json_decref(doc);
	if (ok) {
		free(c->file);
		c->file = xstrdup(file);
		char *copy = xstrdup(file);
		char *slash = strrchr(copy, '/');
		free(c->dir);
		if (slash) {
			*slash = '\0';
			c->dir = realpath(*copy ? copy : "/", NULL);
			if (!c->dir)
				c->dir = xstrdup(copy);
		} else {
			char *cwd = getcwd(NULL, 0);
			c->dir = cwd ? cwd : xstrdup(".");
		}
		free(copy);
	}
	return ok;
}

/* ---- checking the document ---- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

/* Unknown keys of obj: an error naming the first, with the nearest known one. */
static bool known_keys(json_t *obj, const char *const *known, const char *file, const char *where,
		       char **why)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		bool ok = false;
		const char *near = NULL;
		size_t best = 3;
		for (size_t i = 0; known[i]; i++) {
			if (strcmp(k, known[i]) == 0)
				ok = true;
			size_t d = edit_distance(k, known[i]);
			if (d < best) {
				best = d;
				near = known[i];
			}
		}
		if (!ok) {
			struct buf b = {0};
			buf_printf(&b, "%s: %s%s'%s': unknown key", file, where, *where ? ": " : "", k);
			if (near)
				buf_printf(&b, " (did you mean '%s'?)", near);
			else {
				buf_puts(&b, "; known keys:");
				for (size_t i = 0; known[i]; i++)
					buf_printf(&b, "%s %s", i ? "," : "", known[i]);
			}
			*why = buf_steal(&b);
			return false;
		}
	}
	return true;
}

static bool want_string(json_t *v, const char *file, const char *key, char **out, char **why)
{
	if (!json_is_string(v) || !json_string_value(v)[strspn(json_string_value(v), " \t\n")]) {
		*why = xasprintf("%s: '%s' must be a non-empty string (not only blanks)", file, key);
		return false;
	}
	free(*out);
	*out = xstrdup(json_string_value(v));
	return true;
}

/* v as a number from lo to hi (both finite: nan and inf are refused, as
 * the TOML reader hands them over: {"nonfinite": "nan"}). */
static bool want_number(json_t *v, const char *file, const char *key, double lo, double hi, double *out,
			char **why)
{
	const char *nf = json_string_value(json_object_get(v, "nonfinite"));
	if (nf) {
		*why = hi == DBL_MAX ? xasprintf("%s: '%s' = %s makes no sense: it must be a finite number, %g or more",
						 file, key, nf, lo)
				     : xasprintf("%s: '%s' = %s makes no sense: it must be a number from %g to %g", file,
						 key, nf, lo, hi);
		return false;
	}
	if (!json_is_number(v) || json_is_boolean(v)) {
		*why = xasprintf("%s: '%s' must be a number", file, key);
		return false;
	}
	double x = json_number_value(v);
	if (!(x >= lo && x <= hi)) {
		*why = hi == DBL_MAX ? xasprintf("%s: '%s' = %g makes no sense: it must be %g or more", file, key, x, lo)
				     : xasprintf("%s: '%s' = %g makes no sense: it must be from %g to %g", file, key, x, lo, hi);
		return false;
	}
	*out = x;
	return true;
}

static bool want_count(json_t *v, const char *file, const char *key, json_int_t lo, json_int_t hi,
		       json_int_t *out, char **why)
{
	if (!json_is_integer(v)) {
		*why = xasprintf("%s: '%s' must be a whole number", file, key);
		return false;
	}
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi) {
		*why = xasprintf("%s: '%s' = %lld makes no sense: it must be from %lld to %lld", file, key,
				 (long long)x, (long long)lo, (long long)hi);
		return false;
	}
	*out = x;
	return true;
}

static bool want_bool(json_t *v, const char *file, const char *key, bool *out, char **why)
{
	if (!json_is_boolean(v)) {
		*why = xasprintf("%s: '%s' must be true or false", file, key);
		return false;
	}
	*out = json_is_true(v);
	return true;
}

/* Tolerance keys of obj (a [tolerance] table or one output's table) into o. */
static bool read_tolerance(json_t *obj, const char *file, const char *where, struct verify_opts *o,
			   char **why)
{
	json_t *v;
	char key[128];
	if ((v = json_object_get(obj, "rtol"))) {
		snprintf(key, sizeof key, "%s.rtol", where);
		if (!want_number(v, file, key, 0, 1, &o->rtol, why))
			return false;
		o->rtol_set = true;
	}
	if ((v = json_object_get(obj, "atol"))) {
		snprintf(key, sizeof key, "%s.atol", where);
		if (!want_number(v, file, key, 0, DBL_MAX, &o->atol, why))
			return false;
		o->atol_set = true;
	}
	if ((v = json_object_get(obj, "ulp"))) {
		snprintf(key, sizeof key, "%s.ulp", where);
		json_int_t u;
		if (!want_count(v, file, key, 0, INT64_MAX, &u, why))
			return false;
		o->by_ulp = true;
		o->ulp = (uint64_t)u;
	}
	if (o->by_ulp && (o->rtol_set || o->atol_set)) {
		*why = xasprintf("%s: %s: 'ulp' replaces 'rtol' / 'atol': give one or the other", file, where);
		return false;
	}
	if ((v = json_object_get(obj, "equal_nan"))) {
		snprintf(key, sizeof key, "%s.equal_nan", where);
		if (!want_bool(v, file, key, &o->equal_nan, why))
			return false;
	}
	if ((v = json_object_get(obj, "allow_dtype"))) {
		snprintf(key, sizeof key, "%s.allow_dtype", where);
		if (!want_bool(v, file, key, &o->allow_dtype, why))
			return false;
	}
	return true;
}

static bool safe_relative(const char *p)
{
	if (!*p || p[0] == '/')
		return false;
	for (const char *s = p; *s; ) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return false;
		if (!e)
			break;
		s = e + 1;
	}
	return true;
}

bool contract_check_output(const char *p, char **why)
{
	if (!*p) {
		*why = xstrdup("an empty path names nothing");
		return false;
	}
	if (!safe_relative(p)) {
		*why = xasprintf("'%s': give a path inside the run directory (relative, without '..')", p);
		return false;
	}
	return true;
}

static bool read_outputs(json_t *arr, const char *file, const struct verify_opts *base,
			 struct try_contract *c, char **why)
{
	if (!json_is_array(arr)) {
		*why = xasprintf("%s: 'outputs' must be a list of paths or of tables with a 'path'", file);
		return false;
	}
	size_t n = json_array_size(arr);
	c->outputs = xcalloc(n ? n : 1, sizeof *c->outputs);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(arr, i);
		char where[64];
		snprintf(where, sizeof where, "outputs[%zu]", i);
		struct try_output *o = &c->outputs[c->noutputs++];
		o->opts = *base;
		o->opts.keys = NULL;
		json_t *path = e;
		if (json_is_object(e)) {
			if (!known_keys(e, output_keys, file, where, why))
				return false;
			path = json_object_get(e, "path");
			if (!path) {
				*why = xasprintf("%s: %s: a 'path' is needed", file, where);
				return false;
			}
			if (!read_tolerance(e, file, where, &o->opts, why))
				return false;
			json_t *v;
			char key[96];
			if ((v = json_object_get(e, "key"))) {
				snprintf(key, sizeof key, "%s.key", where);
				json_t *names = json_is_string(v) ? json_pack("[O]", v) : json_incref(v);
				if (!json_is_array(names) || json_array_size(names) == 0) {
					*why = xasprintf("%s: '%s' must be a column name or a list of them", file, key);
					json_decref(names);
					return false;
				}
				o->opts.keys = xcalloc(json_array_size(names) + 1, sizeof *o->opts.keys);
				for (size_t k = 0; k < json_array_size(names); k++) {
					json_t *s = json_array_get(names, k);
					if (!json_is_string(s) || !*json_string_value(s)) {
						*why = xasprintf("%s: '%s' must be a column name or a list of them",
								 file, key);
						json_decref(names);
						return false;
					}
					o->opts.keys[k] = xstrdup(json_string_value(s));
				}
				json_decref(names);
			}
			if ((v = json_object_get(e, "unordered"))) {
				snprintf(key, sizeof key, "%s.unordered", where);
				if (!want_bool(v, file, key, &o->opts.unordered, why))
					return false;
			}
			if (o->opts.keys && o->opts.unordered) {
				*why = xasprintf("%s: %s: 'key' and 'unordered': give one or the other", file, where);
				return false;
			}
			if ((v = json_object_get(e, "recall_k"))) {
				snprintf(key, sizeof key, "%s.recall_k", where);
				json_int_t k;
				if (!want_count(v, file, key, 1, 1000000, &k, why))
					return false;
				o->opts.recall_k = (uint64_t)k;
			}
			if ((v = json_object_get(e, "min_recall"))) {
				snprintf(key, sizeof key, "%s.min_recall", where);
				if (!want_number(v, file, key, 0, 1, &o->opts.min_recall, why))
					return false;
			}
		}
		if (!json_is_string(path) || !*json_string_value(path)) {
			*why = xasprintf("%s: %s: the path must be a non-empty string", file, where);
			return false;
		}
		const char *p = json_string_value(path);
		char *bad = NULL;
		if (!contract_check_output(p, &bad)) {
			*why = xasprintf("%s: %s: %s", file, where, bad);
			free(bad);
			return false;
		}
		o->path = xstrdup(p);
		size_t len = strlen(o->path);
		while (len > 1 && o->path[len - 1] == '/')
			o->path[--len] = '\0';
		for (size_t k = 0; k + 1 < c->noutputs; k++)
			if (strcmp(c->outputs[k].path, o->path) == 0) {
				*why = xasprintf("%s: %s: '%s' is named twice", file, where, o->path);
				return false;
			}
	}
	return true;
}

static bool read_candidates(json_t *arr, const char *file, struct try_contract *c, char **why)
{
	if (!json_is_array(arr)) {
		*why = xasprintf("%s: 'candidates' must be a list of commands or of tables with 'command'", file);
		return false;
	}
	size_t n = json_array_size(arr);
	c->cands = xcalloc(n ? n : 1, sizeof *c->cands);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(arr, i);
		char where[64];
		snprintf(where, sizeof where, "candidates[%zu]", i);
		struct try_user_candidate *u = &c->cands[c->ncands++];
		json_t *cmd = e, *name = NULL;
		if (json_is_object(e)) {
			if (!known_keys(e, candidate_keys, file, where, why))
				return false;
			cmd = json_object_get(e, "command");
			name = json_object_get(e, "name");
			if (!cmd) {
				*why = xasprintf("%s: %s: a 'command' is needed", file, where);
				return false;
			}
		}
		char key[96];
		snprintf(key, sizeof key, "%s.command", where);
		if (!want_string(cmd, file, json_is_object(e) ? key : where, &u->command, why))
			return false;
		if (name) {
			snprintf(key, sizeof key, "%s.name", where);
			if (!want_string(name, file, key, &u->name, why))
				return false;
		} else {
			u->name = xstrdup(u->command);
		}
	}
	return true;
}

static bool read_accelerators(json_t *v, const char *file, struct try_contract *c, char **why)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (strcmp(s, "auto") == 0) {
			c->accel_auto = true;
			return true;
		}
		if (strcmp(s, "none") == 0) {
			c->accel_auto = false;
			c->accel = xcalloc(1, sizeof *c->accel);
			return true;
		}
		v = NULL;
	}
	if (!json_is_array(v)) {
		*why = xasprintf("%s: 'accelerators' must be \"auto\", \"none\" or a list of cudf.pandas, "
				 "cuml.accel, nx-cugraph", file);
		return false;
	}
	c->accel_auto = false;
	strv_free(c->accel);
	c->accel = xcalloc(json_array_size(v) + 1, sizeof *c->accel);
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *e = json_array_get(v, i);
		bool known = false;
		for (size_t k = 0; json_is_string(e) && accel_ids[k]; k++)
			known |= strcmp(json_string_value(e), accel_ids[k]) == 0;
		if (!known) {
			*why = xasprintf("%s: accelerators[%zu]: '%s' is not one of cudf.pandas, cuml.accel, "
					 "nx-cugraph", file, i, json_is_string(e) ? json_string_value(e) : "?");
			return false;
		}
		c->accel[i] = xstrdup(json_string_value(e));
	}
	return true;
}

bool contract_from_json(json_t *doc, const char *file, struct try_contract *c, char **why)
{
	*why = NULL;
	if (!json_is_object(doc)) {
		*why = xasprintf("%s: the contract must be a table", file);
		return false;
	}
	if (!known_keys(doc, top_keys, file, "", why))
		return false;
	json_t *v;
	if ((v = json_object_get(doc, "baseline")) && !want_string(v, file, "baseline", &c->baseline, why))
		return false;
	if ((v = json_object_get(doc, "python")) && !want_string(v, file, "python", &c->python, why))
		return false;
	struct verify_opts base = {.equal_nan = true, .show = 5, .min_recall = 0.9, .epsilon = 1e-3};
	if ((v = json_object_get(doc, "tolerance"))) {
		if (!json_is_object(v)) {
			*why = xasprintf("%s: 'tolerance' must be a table (rtol, atol, ulp, equal_nan, allow_dtype)",
					 file);
			return false;
		}
		if (!known_keys(v, tolerance_keys, file, "tolerance", why) ||
		    !read_tolerance(v, file, "tolerance", &base, why))
			return false;
	}
	if ((v = json_object_get(doc, "outputs")) && !read_outputs(v, file, &base, c, why))
		return false;
	if ((v = json_object_get(doc, "candidates")) && !read_candidates(v, file, c, why))
		return false;
	if ((v = json_object_get(doc, "accelerators")) && !read_accelerators(v, file, c, why))
		return false;
	json_int_t n;
	if ((v = json_object_get(doc, "warmup"))) {
		if (!want_count(v, file, "warmup", 0, 1000, &n, why))
			return false;
		c->warmup = (unsigned)n;
	}
	if ((v = json_object_get(doc, "min_runs"))) {
		if (!want_count(v, file, "min_runs", 1, 100000, &n, why))
			return false;
		c->min_runs = (unsigned)n;
	}
	if ((v = json_object_get(doc, "max_runs"))) {
		if (!want_count(v, file, "max_runs", 0, 1000000, &n, why))
			return false;
		c->max_runs = (unsigned)n;
	}
	if (c->max_runs && c->max_runs < c->min_runs) {
		*why = xasprintf("%s: 'max_runs' = %u is below 'min_runs' = %u", file, c->max_runs, c->min_runs);
		return false;
	}
	double pct;
	if ((v = json_object_get(doc, "min_time")) && !want_number(v, file, "min_time", 0, 86400, &c->min_time, why))
		return false;
	/* 0 would leave the benchmark unbounded (bench refuses --max-time 0 too) */
	if ((v = json_object_get(doc, "max_time")) && !want_number(v, file, "max_time", 0.001, 86400 * 7, &c->max_time, why))
		return false;
	if ((v = json_object_get(doc, "min_effect"))) {
		if (!want_number(v, file, "min_effect", 0, 1000, &pct, why))
			return false;
		c->min_effect = pct / 100;
	}
	if ((v = json_object_get(doc, "precision"))) {
		if (!want_number(v, file, "precision", 0.01, 100, &pct, why))
			return false;
		c->precision = pct / 100;
	}
	if ((v = json_object_get(doc, "timeout")) && !want_number(v, file, "timeout", 0, 86400 * 7, &c->timeout, why))
		return false;
	if ((v = json_object_get(doc, "seed"))) {
		if (!want_count(v, file, "seed", 0, INT64_MAX, &n, why))
			return false;
		c->seed = (uint64_t)n;
	}
	if ((v = json_object_get(doc, "metric"))) {
		if (!want_string(v, file, "metric", &c->metric, why))
			return false;
		if (strcmp(c->metric, "wall") != 0) {
			*why = xasprintf("%s: metric '%s' is not supported: \"wall\" (end-to-end wall time, "
					 "transfers included) is what gpuopt try measures", file, c->metric);
			return false;
		}
	}
	if ((v = json_object_get(doc, "results")) && !want_string(v, file, "results", &c->results, why))
		return false;
	if ((v = json_object_get(doc, "log_limit")) &&
	    !want_number(v, file, "log_limit", TRY_LOG_LIMIT_MIN_MB, 1e6, &c->log_limit, why))
		return false;
	if ((v = json_object_get(doc, "trace"))) {
		bool t;
		if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
			c->trace = -1;
		} else {
			if (!json_is_boolean(v)) {
				*why = xasprintf("%s: 'trace' must be true, false or \"auto\"", file);
				return false;
			}
			want_bool(v, file, "trace", &t, why);
			c->trace = t;
		}
	}
	return true;
}

json_t *contract_to_json(const struct try_contract *c)
{
	json_t *outs = json_array();
	for (size_t i = 0; i < c->noutputs; i++) {
		const struct try_output *o = &c->outputs[i];
		json_t *e = json_pack("{s:s, s:b, s:b}", "path", o->path, "equal_nan", o->opts.equal_nan,
				      "allow_dtype", o->opts.allow_dtype);
		if (o->opts.rtol_set)
			json_object_set_new(e, "rtol", json_real(o->opts.rtol));
		if (o->opts.atol_set)
			json_object_set_new(e, "atol", json_real(o->opts.atol));
		if (o->opts.by_ulp)
			json_object_set_new(e, "ulp", json_integer((json_int_t)o->opts.ulp));
		if (o->opts.keys) {
			json_t *k = json_array();
			for (size_t j = 0; o->opts.keys[j]; j++)
				json_array_append_new(k, json_string(o->opts.keys[j]));
			json_object_set_new(e, "key", k);
		}
		if (o->opts.unordered)
			json_object_set_new(e, "unordered", json_true());
		if (o->opts.recall_k)
			json_object_set_new(e, "recall_k", json_integer((json_int_t)o->opts.recall_k));
		json_array_append_new(outs, e);
	}
	json_t *cands = json_array();
	for (size_t i = 0; i < c->ncands; i++)
		json_array_append_new(cands, json_pack("{s:s, s:s}", "name", c->cands[i].name, "command",
						       c->cands[i].command));
	json_t *acc;
	if (c->accel_auto) {
		acc = json_string("auto");
	} else {
		acc = json_array();
		for (size_t i = 0; c->accel && c->accel[i]; i++)
			json_array_append_new(acc, json_string(c->accel[i]));
	}
	return json_pack("{s:s?, s:s, s:s, s:s?, s:o, s:o, s:o, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, "
			 "s:I, s:s, s:s, s:s, s:f}",
			 "file", c->file, "dir", c->dir, "python", c->python, "baseline", c->baseline,
			 "outputs", outs, "candidates", cands, "accelerators", acc, "warmup", (int)c->warmup,
			 "min_runs", (int)c->min_runs, "max_runs", (int)c->max_runs, "min_time", c->min_time,
			 "max_time", c->max_time, "min_effect", c->min_effect * 100, "precision",
			 c->precision * 100, "timeout", c->timeout, "seed", (json_int_t)c->seed, "metric",
			 c->metric, "results", c->results, "trace",
			 c->trace < 0 ? "auto" : c->trace ? "yes" : "no", "log_limit", c->log_limit);
}
