/* doctor: see doctor.h. This file gathers the facts (the GPU record, the
 * Python probe), loads the knowledge, puts each package in one shape,
 * orders the problems and writes the result as JSON; the rules are in
 * checks.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "core/version.h"
#include "doctor_int.h"
#include "gpu/gpuinfo.h"
#include "gpu/sysinfo.h"

const char *doctor_severity_name(enum doctor_severity s)
{
	switch (s) {
	case DOCTOR_BLOCKER: return "blocker";
	case DOCTOR_WARNING: return "warning";
	default: return "note";
	}
}

/* Up to 8 numbers of a dotted version; the count read. */
static int version_parts(const char *v, long out[8])
{
	int n = 0;
	while (v && n < 8 && isdigit((unsigned char)*v)) {
		char *end;
		out[n++] = strtol(v, &end, 10);
		if (*end != '.')
			break;
		v = end + 1;
	}
	return n;
}

int doctor_version_cmp(const char *a, const char *b)
{
	long x[8], y[8];
	int nx = version_parts(a, x), ny = version_parts(b, y);
	for (int i = 0; i < (nx > ny ? nx : ny); i++) {
		long p = i < nx ? x[i] : 0, q = i < ny ? y[i] : 0;
		if (p != q)
			return p < q ? -1 : 1;
	}
	return 0;
}

/* ---- knowledge ---- */

static json_t *load_json(const char *name, char **why)
{
	struct buf b = {0};
	json_t *doc = NULL;
	if (data_read(name, &b, why)) {
		json_error_t err;
		doc = json_loadb(b.data, b.len, 0, &err);
		if (!doc)
			*why = xasprintf("data file %s: line %d: %s", name, err.line, err.text);
	}
	buf_free(&b);
	return doc;
}

bool doctor_kb_load(struct doctor_kb *kb, char **why)
{
	memset(kb, 0, sizeof *kb);
	*why = NULL;
	if (!(kb->packages = load_json("doctor/packages.json", why)) ||
	    !(kb->install = load_json("doctor/install.json", why)) ||
	    !(kb->conflicts = load_json("doctor/conflicts.json", why))) {
		doctor_kb_free(kb);
		return false;
	}
	return true;
}

void doctor_kb_free(struct doctor_kb *kb)
{
	json_decref(kb->packages);
	json_decref(kb->install);
	json_decref(kb->conflicts);
	memset(kb, 0, sizeof *kb);
}

/* Replaces {major}, {cuda_version} and {torch_index} in tmpl. */
static char *fill(const struct doctor_kb *kb, const char *tmpl, int major)
{
	char key[8];
	snprintf(key, sizeof key, "%d", major);
	const char *cv = json_string_value(json_object_get(json_object_get(kb->install, "cuda_version"), key));
	const char *ti = json_string_value(json_object_get(json_object_get(kb->install, "torch_index"), key));
	struct buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (strncmp(p, "{major}", 7) == 0) {
			buf_printf(&b, "%d", major);
			p += 7;
		} else if (strncmp(p, "{cuda_version}", 14) == 0) {
			buf_puts(&b, cv ? cv : key);
			p += 14;
		} else if (strncmp(p, "{torch_index}", 13) == 0) {
			buf_puts(&b, ti ? ti : "cu130");
			p += 13;
		} else {
			buf_putc(&b, *p++);
		}
	}
	return buf_steal(&b);
}

/* A template that is a string, or an object keyed by the CUDA major. */
static const char *pick(json_t *v, int major)
{
	if (json_is_string(v))
		return json_string_value(v);
	char key[8];
	snprintf(key, sizeof key, "%d", major);
	return json_string_value(json_object_get(v, key));
}

char *install_command(const struct doctor_kb *kb, const char *name, int major, const char *tool)
{
	json_t *e = json_object_get(json_object_get(kb->install, "packages"), name);
	const char *t = pick(json_object_get(e, tool), major);
	return t ? fill(kb, t, major) : NULL;
}

char *install_dist(const struct doctor_kb *kb, const char *name, int major)
{
	json_t *e = json_object_get(json_object_get(kb->install, "packages"), name);
	const char *t = pick(json_object_get(e, "dist"), major);
	return t ? fill(kb, t, major) : NULL;
}

char *doctor_install_fix(const char *package, int cuda_major, char **why)
{
	struct doctor_kb kb;
	*why = NULL;
	if (!doctor_kb_load(&kb, why))
		return NULL;
	int major = cuda_major >= 12 ? cuda_major : 13;
	char *cmd = install_command(&kb, package, major, "pip");
	char *out = NULL;
	if (!cmd)
		*why = xasprintf("doctor/install.json has no pip command for '%s'", package);
	else if (cuda_major >= 12)
		out = cmd;
	else {
		char *twelve = install_command(&kb, package, 12, "pip");
		out = twelve ? xasprintf("%s (on a driver that serves only CUDA 12: %s; `gpuopt doctor` says "
					 "which)", cmd, twelve)
			     : xstrdup(cmd);
		free(twelve);
		free(cmd);
	}
	doctor_kb_free(&kb);
	return out;
}

/* ---- problems ---- */

struct doctor_problem *problem_add(struct doctor_result *r, enum doctor_severity sev, const char *id,
				   char *title)
{
	r->problems = xrealloc(r->problems, (r->nproblems + 1) * sizeof *r->problems);
	struct doctor_problem *p = &r->problems[r->nproblems++];
	memset(p, 0, sizeof *p);
	p->severity = sev;
	p->id = id;
	p->title = title;
	return p;
}

void problem_fix(struct doctor_problem *p, char *fix)
{
	if (!fix)
		return;
	for (size_t i = 0; i < p->nfixes; i++)
		if (strcmp(p->fixes[i], fix) == 0) {
			free(fix);
			return;
		}
	p->fixes = xrealloc(p->fixes, (p->nfixes + 1) * sizeof *p->fixes);
	p->fixes[p->nfixes++] = fix;
}

const struct doctor_package *package_get(const struct doctor_result *r, const char *name)
{
	for (size_t i = 0; i < r->npackages; i++)
		if (strcmp(r->packages[i].name, name) == 0)
			return &r->packages[i];
	return NULL;
}

/* ---- the facts ---- */

static char *jdup(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

static const json_t *find_by_name(const json_t *list, const char *name)
{
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		if (n && strcmp(n, name) == 0)
			return e;
	}
	return NULL;
}

/* What the probe or a saved report says did not finish in time ("import",
 * "device check") onto p, with the texts that say so. */
static void set_timed_out(struct doctor_package *p, const json_t *o)
{
	const char *step = json_string_value(json_object_get(o, "timed_out"));
	if (!step)
		return;
	json_t *limit = json_object_get(o, "time_limit_s");
	p->time_limit_s = json_is_number(limit) && json_number_value(limit) > 0 ? json_number_value(limit) : 0;
	char in[48] = "in time";
	if (p->time_limit_s > 0)
		snprintf(in, sizeof in, "in %g s", p->time_limit_s);
	free(p->timed_out);
	if (strcmp(step, "device check") == 0) {
		p->timed_out = xstrdup("device check");
		p->importable = true;
		p->device_checked = true;
		p->device_ok = false;
		free(p->device_error);
		p->device_error = xasprintf("the device check did not finish %s", in);
	} else {
		p->timed_out = xstrdup("import");
		p->importable = false;
		free(p->import_error);
		p->import_error = xasprintf("importing %s did not finish %s", p->name, in);
	}
}

/* One struct doctor_package per entry of packages.json, from the probe's
 * "package" events and failures, and from its plan (each package's
 * installation, read before any import) for those it did not come to. */
static void normalize(const struct doctor_kb *kb, struct doctor_result *r)
{
	json_t *table = json_object_get(kb->packages, "packages");
	r->packages = xcalloc(json_array_size(table) + 1, sizeof *r->packages);
	if (!r->python)
		return;
	json_t *seen = json_object_get(r->python, "packages");
	json_t *failures = json_object_get(r->python, "failures");
	size_t i;
	json_t *t;
	json_array_foreach(table, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const json_t *ev = find_by_name(seen, name), *fail = find_by_name(failures, name);
		const json_t *plan = find_by_name(json_object_get(r->python, "plan"), name);
		if (!ev && !fail && !plan)
			continue;
		struct doctor_package *p = &r->packages[r->npackages++];
		p->name = xstrdup(name);
		p->gpu = json_is_true(json_object_get(t, "gpu"));
		p->rapids = json_is_true(json_object_get(t, "rapids"));
		p->device_count = -1;
		p->asked = true;
		if (fail || !ev) { /* what the metadata said, before any import */
			p->installed = json_is_true(json_object_get(plan, "installed"));
			p->dist = jdup(plan, "dist");
			p->version = jdup(plan, "version");
			json_t *major = json_object_get(plan, "cuda_major");
			p->cuda_major = json_is_integer(major) ? (int)json_integer_value(major) : 0;
			p->cuda_from = jdup(plan, "cuda_from");
		}
		if (fail) {
			p->installed = true;
			if (json_is_string(json_object_get(fail, "timed_out"))) {
				set_timed_out(p, fail);
				continue;
			}
			const char *how = json_string_value(json_object_get(fail, "how"));
			const char *err = json_string_value(json_object_get(fail, "stderr"));
			p->crashed = xasprintf("%s%s%s", how ? how : "ended", err && *err ? ": " : "",
					       err ? err : "");
			p->import_error = xasprintf("the import %s", p->crashed);
			continue;
		}
		if (!ev) { /* the probe's time ran out before it came to this one */
			p->asked = !p->installed;
			continue;
		}
		p->asked = !json_is_false(json_object_get(ev, "asked"));
		p->installed = json_is_true(json_object_get(ev, "installed"));
		p->dist = jdup(ev, "dist");
		p->version = jdup(ev, "version");
		json_t *major = json_object_get(ev, "cuda_major");
		p->cuda_major = json_is_integer(major) ? (int)json_integer_value(major) : 0;
		p->cuda_from = jdup(ev, "cuda_from");
		p->runtime_version = jdup(ev, "runtime_version");
		if (!p->cuda_major && p->runtime_version && p->gpu) {
			p->cuda_major = atoi(p->runtime_version);
			free(p->cuda_from);
			p->cuda_from = xasprintf("its runtime (CUDA %s)", p->runtime_version);
		}
		p->importable = json_is_true(json_object_get(ev, "importable"));
		p->import_error = jdup(ev, "import_error");
		json_t *ok = json_object_get(ev, "device_ok");
		p->device_checked = json_is_boolean(ok);
		p->device_ok = json_is_true(ok);
		json_t *count = json_object_get(ev, "device_count");
		p->device_count = json_is_integer(count) ? (int)json_integer_value(count) : -1;
		p->device_error = jdup(ev, "device_error");
		json_t *sub = json_object_get(ev, "submodules");
		p->submodules = json_is_object(sub) ? json_deep_copy(sub) : NULL;
		set_timed_out(p, ev);
	}
}

static int driver_major(const json_t *gpu)
{
	const char *v = json_string_value(json_object_get(gpu, "cuda_driver_version"));
	return v ? atoi(v) : 0;
}

static int severity_rank(const struct doctor_problem *p)
{
	return (int)p->severity;
}

static void order(struct doctor_result *r)
{
	/* stable: blockers first, each group in the order the rules found them */
	struct doctor_problem *sorted = xcalloc(r->nproblems + 1, sizeof *sorted);
	size_t k = 0;
	for (int sev = DOCTOR_BLOCKER; sev <= DOCTOR_NOTE; sev++)
		for (size_t i = 0; i < r->nproblems; i++)
			if (severity_rank(&r->problems[i]) == sev)
				sorted[k++] = r->problems[i];
	free(r->problems);
	r->problems = sorted;
	for (size_t i = 0; i < r->nproblems; i++) {
		r->blockers += r->problems[i].severity == DOCTOR_BLOCKER;
		r->warnings += r->problems[i].severity == DOCTOR_WARNING;
		r->notes += r->problems[i].severity == DOCTOR_NOTE;
	}
	r->ready = r->blockers == 0;
}

struct doctor_result *doctor_check_with(const struct doctor_kb *kb, const json_t *gpu_facts,
					 const json_t *python_facts)
{
	struct doctor_result *r = xcalloc(1, sizeof *r);
	r->gpu = json_deep_copy(gpu_facts);
	r->python = python_facts ? json_deep_copy(python_facts) : NULL;
	r->driver_cuda_major = driver_major(r->gpu);
	normalize(kb, r);
	doctor_rules(kb, r);
	order(r);
	return r;
}

struct doctor_result *doctor_check(const json_t *gpu_facts, const json_t *python_facts)
{
	struct doctor_kb kb;
	char *why = NULL;
	if (!doctor_kb_load(&kb, &why)) {
		struct doctor_result *r = xcalloc(1, sizeof *r);
		r->error = why;
		r->gpu = json_deep_copy(gpu_facts);
		return r;
	}
	struct doctor_result *r = doctor_check_with(&kb, gpu_facts, python_facts);
	doctor_kb_free(&kb);
	return r;
}

struct doctor_result *doctor_run(const struct doctor_settings *s)
{
	json_t *gpu = s->gpu_facts ? json_deep_copy(s->gpu_facts) : gpuinfo_query(20);
	json_t *python = NULL;
	if (s->python_facts) {
		python = json_deep_copy(s->python_facts);
	} else if (!s->no_python) {
		struct buf script = {0}, table = {0};
		char *why = NULL;
		json_t *packages = NULL;
		if (data_read("probes/doctor.py", &script, &why) &&
		    data_read("doctor/packages.json", &table, &why)) {
			json_error_t err;
			json_t *doc = json_loadb(table.data, table.len, 0, &err);
			packages = json_object_get(doc, "packages");
			char *arg = packages ? json_dumps(packages, JSON_COMPACT) : NULL;
			python = sysinfo_python_probe(s->python ? s->python : "python3", script.data,
						      arg ? arg : "[]", s->timeout_s > 0 ? s->timeout_s : 180,
						      s->package_timeout_s > 0 ? s->package_timeout_s : 60);
			free(arg);
			json_decref(doc);
		}
		if (!python) {
			struct doctor_result *r = xcalloc(1, sizeof *r);
			r->error = why ? why : xstrdup("doctor's probe or package table is missing");
			r->gpu = gpu;
			buf_free(&script);
			buf_free(&table);
			return r;
		}
		free(why);
		buf_free(&script);
		buf_free(&table);
	}
	struct doctor_result *r = doctor_check(gpu, python);
	json_decref(gpu);
	json_decref(python);
	return r;
}

void doctor_result_free(struct doctor_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nproblems; i++) {
		struct doctor_problem *p = &r->problems[i];
		free(p->title);
		free(p->detail);
		for (size_t k = 0; k < p->nfixes; k++)
			free(p->fixes[k]);
		free(p->fixes);
		free(p->source);
	}
	free(r->problems);
	for (size_t i = 0; i < r->npackages; i++) {
		struct doctor_package *p = &r->packages[i];
		free(p->name);
		free(p->dist);
		free(p->version);
		free(p->cuda_from);
		free(p->runtime_version);
		free(p->import_error);
		free(p->device_error);
		free(p->crashed);
		free(p->timed_out);
		json_decref(p->submodules);
	}
	free(r->packages);
	json_decref(r->gpu);
	json_decref(r->python);
	free(r->error);
	free(r);
}

/* ---- JSON ---- */

static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *package_json(const struct doctor_package *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "gpu", json_boolean(p->gpu));
	json_object_set_new(o, "installed", json_boolean(p->installed));
	json_object_set_new(o, "dist", str(p->dist));
	json_object_set_new(o, "version", str(p->version));
	json_object_set_new(o, "cuda_major", p->cuda_major ? json_integer(p->cuda_major) : json_null());
	json_object_set_new(o, "cuda_from", str(p->cuda_from));
	json_object_set_new(o, "runtime_version", str(p->runtime_version));
	json_object_set_new(o, "importable", json_boolean(p->importable));
	json_object_set_new(o, "import_error", str(p->import_error));
	json_object_set_new(o, "device_ok", p->device_checked ? json_boolean(p->device_ok) : json_null());
	json_object_set_new(o, "device_count", p->device_count >= 0 ? json_integer(p->device_count)
								     : json_null());
	json_object_set_new(o, "device_error", str(p->device_error));
	json_object_set_new(o, "crashed", str(p->crashed));
	json_object_set_new(o, "timed_out", str(p->timed_out));
	json_object_set_new(o, "time_limit_s", p->timed_out && p->time_limit_s > 0 ? json_real(p->time_limit_s)
										      : json_null());
	json_object_set_new(o, "asked", json_boolean(p->asked));
	json_object_set_new(o, "submodules", p->submodules ? json_incref(p->submodules) : json_null());
	return o;
}

json_t *doctor_result_json(const struct doctor_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "tool", json_string("gpuopt"));
	json_object_set_new(o, "version", json_string(GPUOPT_VERSION));
	json_object_set_new(o, "schema", json_string(DOCTOR_SCHEMA));
	json_object_set_new(o, "error", str(r->error));
	json_object_set_new(o, "ready", json_boolean(r->ready && !r->error));
	json_object_set_new(o, "counts", json_pack("{s:I, s:I, s:I}", "blockers", (json_int_t)r->blockers,
						   "warnings", (json_int_t)r->warnings, "notes",
						   (json_int_t)r->notes));
	json_t *problems = json_array();
	for (size_t i = 0; i < r->nproblems; i++) {
		const struct doctor_problem *p = &r->problems[i];
		json_t *fixes = json_array();
		for (size_t k = 0; k < p->nfixes; k++)
			json_array_append_new(fixes, json_string(p->fixes[k]));
		json_array_append_new(problems, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "severity",
							  doctor_severity_name(p->severity), "id", p->id,
							  "title", p->title, "detail", str(p->detail), "fixes",
							  fixes, "source", str(p->source)));
	}
	json_object_set_new(o, "problems", problems);
	json_object_set_new(o, "gpu", r->gpu ? json_incref(r->gpu) : json_null());
	json_t *py = r->python ? json_deep_copy(r->python) : json_null();
	if (r->python) {
		json_t *pk = json_array();
		for (size_t i = 0; i < r->npackages; i++)
			json_array_append_new(pk, package_json(&r->packages[i]));
		json_object_set_new(py, "packages", pk); /* the normalized table replaces the events */
	}
	json_object_set_new(o, "python", py);
	return o;
}
