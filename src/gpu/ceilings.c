/* ceilings: see ceilings.h. */
#include "ceilings.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/util.h"
#include "core/version.h"

static const char *const kind_keys[CEIL_KINDS] = {"h2d_pageable", "d2h_pageable", "h2d_pinned",
						   "d2h_pinned"};
static const char *const kind_texts[CEIL_KINDS] = {"host→device, pageable", "device→host, pageable",
						    "host→device, pinned", "device→host, pinned"};
static const char *const latency_keys[4] = {"launch", "launch_gpu", "launch_sync", "sync"};

const char *ceil_kind_key(enum ceil_kind k)
{
	return (unsigned)k < CEIL_KINDS ? kind_keys[k] : "?";
}

const char *ceil_kind_text(enum ceil_kind k)
{
	return (unsigned)k < CEIL_KINDS ? kind_texts[k] : "?";
}

void ceilings_free(struct ceilings *c)
{
	if (!c)
		return;
	free(c->gpuopt_version);
	free(c->measured_at);
	free(c->method);
	free(c->gpu_uuid);
	free(c->gpu_name);
	free(c->pci_bus_id);
	free(c->driver_version);
	free(c->cuda_driver_version);
	free(c->cpus);
	free(c->python_via);
	free(c->python_interpreter);
	for (size_t i = 0; i < c->npeers; i++)
		free(c->peers[i].to_uuid);
	free(c->peers);
	memset(c, 0, sizeof *c);
}

/* ---- encoding ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void put_point(json_t *o, const struct ceil_point *p)
{
	json_object_set_new(o, "bytes", json_integer((json_int_t)p->bytes));
	json_object_set_new(o, "seconds", json_real(p->seconds));
	json_object_set_new(o, "gbps", json_real(p->gbps));
	json_object_set_new(o, "cv", json_real(p->cv));
	json_object_set_new(o, "trials", json_integer(p->trials));
	json_object_set_new(o, "reps", json_integer(p->reps));
}

static json_t *point_json(const struct ceil_point *p, bool have)
{
	if (!have)
		return json_null();
	json_t *o = json_object();
	put_point(o, p);
	return o;
}

/* A share from 0 to 1, or null where it is unknown (negative). */
static json_t *share_json(double x)
{
	return x >= 0 ? json_real(x) : json_null();
}

static json_t *time_json(const struct ceil_time *t)
{
	if (t->n == 0)
		return json_null();
	return json_pack("{s:f, s:f, s:i}", "us", t->us, "cv", t->cv, "n", (int)t->n);
}

json_t *ceilings_to_json(const struct ceilings *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string(CEILINGS_SCHEMA));
	json_object_set_new(o, "gpuopt_version", str_or_null(c->gpuopt_version));
	json_object_set_new(o, "measured_at", str_or_null(c->measured_at));
	json_object_set_new(o, "method", str_or_null(c->method));
	json_object_set_new(o, "gpu", json_pack("{s:o, s:o, s:o, s:i}", "uuid", str_or_null(c->gpu_uuid),
						"name", str_or_null(c->gpu_name), "pci_bus_id",
						str_or_null(c->pci_bus_id), "cuda_index", c->cuda_index));
	json_object_set_new(o, "driver_version", str_or_null(c->driver_version));
	json_object_set_new(o, "cuda_driver_version", str_or_null(c->cuda_driver_version));
	json_object_set_new(o, "memory", json_pack("{s:I, s:I}", "total_bytes",
						   (json_int_t)c->memory_total_bytes, "free_bytes",
						   (json_int_t)c->memory_free_bytes));
	json_object_set_new(o, "pinning", json_pack("{s:o, s:o}", "numa_node",
						    c->numa_node >= 0 ? json_integer(c->numa_node) : json_null(),
						    "cpus", str_or_null(c->cpus)));
	json_object_set_new(o, "huge_page_share", json_pack("{s:o, s:o, s:o}",
		"pageable", share_json(c->huge_share_pageable),
		"first_touch_h2d", share_json(c->huge_share_first_touch[0]),
		"first_touch_d2h", share_json(c->huge_share_first_touch[1])));
	json_t *tr = json_object();
	for (int k = 0; k < CEIL_KINDS; k++) {
		json_t *a = json_array();
		for (size_t i = 0; i < c->npoints[k]; i++)
			json_array_append_new(a, point_json(&c->curve[k][i], true));
		json_object_set_new(tr, kind_keys[k], a);
	}
	json_object_set_new(o, "transfers", tr);
	json_object_set_new(o, "first_touch", json_pack("{s:o, s:o}",
		"h2d_pageable", point_json(&c->first_touch[0], c->have_first_touch[0]),
		"d2h_pageable", point_json(&c->first_touch[1], c->have_first_touch[1])));
	json_t *d2d = point_json(&c->d2d, c->have_d2d);
	if (c->have_d2d)
		json_object_set_new(d2d, "counted", json_string("read+write"));
	json_object_set_new(o, "d2d", d2d);
	const struct ceil_time *lat[4] = {&c->launch, &c->launch_gpu, &c->launch_sync, &c->sync};
	json_t *l = json_object();
	for (int i = 0; i < 4; i++)
		json_object_set_new(l, latency_keys[i], time_json(lat[i]));
	json_object_set_new(o, "latency_us", l);
	if (c->python_via)
		json_object_set_new(o, "python", json_pack("{s:s, s:o, s:o, s:o}", "via", c->python_via,
							   "interpreter", str_or_null(c->python_interpreter),
							   "op", time_json(&c->python_op), "op_sync",
							   time_json(&c->python_op_sync)));
	else
		json_object_set_new(o, "python", json_null());
	json_t *peers = json_array();
	for (size_t i = 0; i < c->npeers; i++) {
		const struct ceil_peer *p = &c->peers[i];
		json_t *e = json_pack("{s:o, s:i, s:b}", "to_uuid", str_or_null(p->to_uuid), "to_cuda_index",
				      p->to_cuda_index, "peer_access", p->peer_access);
		put_point(e, &p->pt);
		json_array_append_new(peers, e);
	}
	json_object_set_new(o, "peers", peers);
	return o;
}

char *ceilings_encode(const struct ceilings *c)
{
	json_t *o = ceilings_to_json(c);
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	json_decref(o);
	if (!text)
		text = xstrdup("{}");
	char *out = xasprintf("%s\n", text);
	free(text);
	return out;
}

/* ---- decoding ---- */

struct dec {
	char *why; /* the first problem, owned */
};

static bool bad(struct dec *d, const char *where, const char *what)
{
	if (!d->why)
		d->why = xasprintf("%s: %s", where, what);
	return false;
}

static bool get_str(struct dec *d, json_t *o, const char *key, const char *where, bool required,
		    char **out)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		if (required) {
			char *w = xasprintf("%s%s%s", where, *where ? "." : "", key);
			bad(d, w, "missing");
			free(w);
			return false;
		}
		return true;
	}
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		char *w = xasprintf("%s%s%s", where, *where ? "." : "", key);
		bad(d, w, "must be a string without NUL");
		free(w);
		return false;
	}
	*out = xstrdup(json_string_value(v));
	return true;
}

static bool get_num(struct dec *d, json_t *o, const char *key, const char *where, double lo,
		    double hi, double *out)
{
	json_t *v = json_object_get(o, key);
	double x = json_is_number(v) ? json_number_value(v) : NAN;
	if (!isfinite(x) || x < lo || x > hi) {
		char *w = xasprintf("%s.%s", where, key);
		char *what = xasprintf("must be a number from %g to %g", lo, hi);
		bad(d, w, what);
		free(what);
		free(w);
		return false;
	}
	*out = x;
	return true;
}

static bool get_int(struct dec *d, json_t *o, const char *key, const char *where, json_int_t lo,
		    json_int_t hi, json_int_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		char *w = xasprintf("%s.%s", where, key);
		char *what = xasprintf("must be a whole number from %lld to %lld", (long long)lo, (long long)hi);
		bad(d, w, what);
		free(what);
		free(w);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

static bool get_point(struct dec *d, json_t *o, const char *where, struct ceil_point *p)
{
	if (!json_is_object(o))
		return bad(d, where, "must be an object");
	json_int_t bytes, trials, reps;
	if (!get_int(d, o, "bytes", where, 1, (json_int_t)1 << 50, &bytes) ||
	    !get_num(d, o, "seconds", where, 1e-12, 1e6, &p->seconds) ||
	    !get_num(d, o, "gbps", where, 0, 1e9, &p->gbps) ||
	    !get_num(d, o, "cv", where, 0, 1e6, &p->cv) ||
	    !get_int(d, o, "trials", where, 1, 1000000, &trials) ||
	    !get_int(d, o, "reps", where, 1, 1000000000, &reps))
		return false;
	p->bytes = (uint64_t)bytes;
	p->trials = (unsigned)trials;
	p->reps = (unsigned)reps;
	return true;
}

static bool get_opt_point(struct dec *d, json_t *o, const char *key, const char *where,
			  struct ceil_point *p, bool *have)
{
	json_t *v = json_object_get(o, key);
	*have = false;
	if (!v || json_is_null(v))
		return true;
	char *w = xasprintf("%s%s%s", where, *where ? "." : "", key);
	bool ok = get_point(d, v, w, p);
	free(w);
	*have = ok;
	return ok;
}

static bool get_time(struct dec *d, json_t *o, const char *key, const char *where, struct ceil_time *t)
{
	json_t *v = json_object_get(o, key);
	memset(t, 0, sizeof *t);
	if (!v || json_is_null(v))
		return true;
	char *w = xasprintf("%s.%s", where, key);
	json_int_t n = 0;
	bool ok = json_is_object(v) ? get_num(d, v, "us", w, 0, 1e9, &t->us) &&
					      get_num(d, v, "cv", w, 0, 1e6, &t->cv) &&
					      get_int(d, v, "n", w, 1, 100000000, &n)
				    : bad(d, w, "must be an object");
	free(w);
	t->n = ok ? (unsigned)n : 0;
	return ok;
}

static bool decode(struct dec *d, json_t *root, struct ceilings *c)
{
	if (!json_is_object(root))
		return bad(d, "file", "is not a JSON object");
	const char *schema = json_string_value(json_object_get(root, "schema"));
	if (!schema || strcmp(schema, CEILINGS_SCHEMA) != 0)
		return bad(d, "schema", "is not \"" CEILINGS_SCHEMA "\"");
	if (!get_str(d, root, "gpuopt_version", "", true, &c->gpuopt_version) ||
	    !get_str(d, root, "measured_at", "", true, &c->measured_at) ||
	    !get_str(d, root, "method", "", false, &c->method) ||
	    !get_str(d, root, "driver_version", "", true, &c->driver_version) ||
	    !get_str(d, root, "cuda_driver_version", "", false, &c->cuda_driver_version))
		return false;
	json_t *gpu = json_object_get(root, "gpu");
	if (!json_is_object(gpu))
		return bad(d, "gpu", "must be an object");
	json_int_t idx;
	if (!get_str(d, gpu, "uuid", "gpu", true, &c->gpu_uuid) ||
	    !get_str(d, gpu, "name", "gpu", false, &c->gpu_name) ||
	    !get_str(d, gpu, "pci_bus_id", "gpu", false, &c->pci_bus_id) ||
	    !get_int(d, gpu, "cuda_index", "gpu", -1, 4096, &idx))
		return false;
	c->cuda_index = (int)idx;
	json_t *mem = json_object_get(root, "memory");
	json_int_t total, freeb;
	if (!json_is_object(mem))
		return bad(d, "memory", "must be an object");
	if (!get_int(d, mem, "total_bytes", "memory", 0, (json_int_t)1 << 60, &total) ||
	    !get_int(d, mem, "free_bytes", "memory", 0, (json_int_t)1 << 60, &freeb))
		return false;
	c->memory_total_bytes = (uint64_t)total;
	c->memory_free_bytes = (uint64_t)freeb;
	c->numa_node = -1;
	json_t *pin = json_object_get(root, "pinning");
	if (json_is_object(pin)) {
		json_t *node = json_object_get(pin, "numa_node");
		if (node && !json_is_null(node)) {
			json_int_t nn;
			if (!get_int(d, pin, "numa_node", "pinning", 0, 65535, &nn))
				return false;
			c->numa_node = (int)nn;
		}
		if (!get_str(d, pin, "cpus", "pinning", false, &c->cpus))
			return false;
	}
	c->huge_share_pageable = c->huge_share_first_touch[0] = c->huge_share_first_touch[1] = -1;
	json_t *hp = json_object_get(root, "huge_page_share");
	if (hp && !json_is_null(hp)) {
		if (!json_is_object(hp))
			return bad(d, "huge_page_share", "must be an object");
		static const char *const keys[3] = {"pageable", "first_touch_h2d", "first_touch_d2h"};
		double *out[3] = {&c->huge_share_pageable, &c->huge_share_first_touch[0],
				  &c->huge_share_first_touch[1]};
		for (int i = 0; i < 3; i++) {
			json_t *v = json_object_get(hp, keys[i]);
			if (v && !json_is_null(v) && !get_num(d, hp, keys[i], "huge_page_share", 0, 1, out[i]))
				return false;
		}
	}
	json_t *tr = json_object_get(root, "transfers");
	if (!json_is_object(tr))
		return bad(d, "transfers", "must be an object");
	for (int k = 0; k < CEIL_KINDS; k++) {
		json_t *a = json_object_get(tr, kind_keys[k]);
		char *where = xasprintf("transfers.%s", kind_keys[k]);
		bool ok = true;
		if (!json_is_array(a) || json_array_size(a) > CEIL_MAX_POINTS) {
			char *what = xasprintf("must be a list of at most %d sizes", CEIL_MAX_POINTS);
			ok = bad(d, where, what);
			free(what);
		}
		for (size_t i = 0; ok && i < json_array_size(a); i++) {
			char *w = xasprintf("%s[%zu]", where, i);
			ok = get_point(d, json_array_get(a, i), w, &c->curve[k][i]);
			if (ok && i > 0 && c->curve[k][i].bytes <= c->curve[k][i - 1].bytes)
				ok = bad(d, w, "bytes must grow from one size to the next");
			free(w);
			c->npoints[k] = ok ? i + 1 : 0;
		}
		free(where);
		if (!ok)
			return false;
	}
	json_t *ft = json_object_get(root, "first_touch");
	if (ft && !json_is_null(ft)) {
		if (!json_is_object(ft))
			return bad(d, "first_touch", "must be an object");
		if (!get_opt_point(d, ft, "h2d_pageable", "first_touch", &c->first_touch[0],
				   &c->have_first_touch[0]) ||
		    !get_opt_point(d, ft, "d2h_pageable", "first_touch", &c->first_touch[1],
				   &c->have_first_touch[1]))
			return false;
	}
	if (!get_opt_point(d, root, "d2d", "", &c->d2d, &c->have_d2d))
		return false;
	json_t *lat = json_object_get(root, "latency_us");
	if (lat && !json_is_null(lat)) {
		if (!json_is_object(lat))
			return bad(d, "latency_us", "must be an object");
		struct ceil_time *t[4] = {&c->launch, &c->launch_gpu, &c->launch_sync, &c->sync};
		for (int i = 0; i < 4; i++)
			if (!get_time(d, lat, latency_keys[i], "latency_us", t[i]))
				return false;
	}
	json_t *py = json_object_get(root, "python");
	if (py && !json_is_null(py)) {
		if (!json_is_object(py))
			return bad(d, "python", "must be an object");
		if (!get_str(d, py, "via", "python", true, &c->python_via) ||
		    !get_str(d, py, "interpreter", "python", false, &c->python_interpreter) ||
		    !get_time(d, py, "op", "python", &c->python_op) ||
		    !get_time(d, py, "op_sync", "python", &c->python_op_sync))
			return false;
	}
	json_t *peers = json_object_get(root, "peers");
	if (peers && !json_is_null(peers)) {
		if (!json_is_array(peers) || json_array_size(peers) > CEIL_MAX_PEERS)
			return bad(d, "peers", "must be a list of at most 64 copies");
		c->peers = xcalloc(json_array_size(peers) + 1, sizeof *c->peers);
		for (size_t i = 0; i < json_array_size(peers); i++) {
			json_t *e = json_array_get(peers, i);
			char *w = xasprintf("peers[%zu]", i);
			struct ceil_peer *p = &c->peers[i];
			json_int_t to = -1;
			bool ok = get_point(d, e, w, &p->pt) &&
				  get_str(d, e, "to_uuid", w, false, &p->to_uuid) &&
				  get_int(d, e, "to_cuda_index", w, 0, 4096, &to);
			json_t *pa = json_object_get(e, "peer_access");
			if (ok && !json_is_boolean(pa))
				ok = bad(d, w, "peer_access must be true or false");
			p->to_cuda_index = (int)to;
			p->peer_access = json_is_true(pa);
			free(w);
			c->npeers = i + 1;
			if (!ok)
				return false;
		}
	}
	return true;
}

bool ceilings_decode(const char *text, size_t len, struct ceilings *out, char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		*why = xasprintf("not JSON: line %d: %s", jerr.line, jerr.text);
		return false;
	}
	struct dec d = {0};
	bool ok = decode(&d, root, out);
	json_decref(root);
	if (!ok) {
		ceilings_free(out);
		*why = d.why ? d.why : xstrdup("not a ceilings file");
		return false;
	}
	return true;
}

bool ceilings_read_file(const char *path, struct ceilings *out, char **why)
{
	struct buf b = {0};
	char *err = NULL;
	memset(out, 0, sizeof *out);
	if (!read_file(path, 16u << 20, &b, &err)) {
		*why = xasprintf("cannot read '%s': %s", path, err);
		free(err);
		buf_free(&b);
		return false;
	}
	bool ok = ceilings_decode(b.data ? b.data : "", b.len, out, &err);
	buf_free(&b);
	if (!ok) {
		*why = xasprintf("'%s' is not a ceilings file of gpuopt fit: %s", path, err);
		free(err);
	}
	return ok;
}

/* ---- the cache ---- */

static bool uuid_ok(const char *u)
{
	if (!u || strncmp(u, "GPU-", 4) != 0 || strlen(u) > 64 || !u[4])
		return false;
	for (const char *p = u + 4; *p; p++)
		if (!isxdigit((unsigned char)*p) && *p != '-')
			return false;
	return true;
}

char *ceilings_cache_path(const char *gpu_uuid)
{
	if (!uuid_ok(gpu_uuid))
		return NULL;
	char *base = user_cache_dir();
	if (!base)
		return NULL;
	char *path = xasprintf("%s/ceilings/%s.json", base, gpu_uuid);
	free(base);
	return path;
}

enum ceil_status ceilings_load_cached(const char *gpu_uuid, const char *driver_version,
				      struct ceilings *out, char **why)
{
	*why = NULL;
	memset(out, 0, sizeof *out);
	char *path = ceilings_cache_path(gpu_uuid);
	if (!path)
		return CEIL_MISSING;
	struct buf b = {0};
	char *err = NULL;
	if (!read_file(path, 16u << 20, &b, &err)) {
		free(err);
		free(path);
		buf_free(&b);
		return CEIL_MISSING;
	}
	struct ceilings c;
	bool ok = ceilings_decode(b.data ? b.data : "", b.len, &c, &err);
	buf_free(&b);
	if (!ok) {
		*why = xasprintf("%s: %s", path, err);
		free(err);
		free(path);
		return CEIL_DAMAGED;
	}
	enum ceil_status st = CEIL_OK;
	if (strcmp(c.gpu_uuid, gpu_uuid) != 0) {
		*why = xasprintf("%s holds another GPU (%s)", path, c.gpu_uuid);
		st = CEIL_DAMAGED;
	} else if (strcmp(c.gpuopt_version, GPUOPT_VERSION) != 0) {
		*why = xasprintf("measured by gpuopt %s, this is %s", c.gpuopt_version, GPUOPT_VERSION);
		st = CEIL_STALE;
	} else if (driver_version && strcmp(c.driver_version, driver_version) != 0) {
		*why = xasprintf("measured under driver %s, this is %s", c.driver_version, driver_version);
		st = CEIL_STALE;
	}
	free(path);
	if (st == CEIL_OK)
		*out = c;
	else
		ceilings_free(&c);
	return st;
}

bool ceilings_save_cached(const struct ceilings *c, char **why)
{
	*why = NULL;
	char *path = ceilings_cache_path(c->gpu_uuid);
	if (!path) {
		*why = xstrdup(uuid_ok(c->gpu_uuid) ? "no cache directory (neither XDG_CACHE_HOME nor HOME is set)"
						    : "the GPU has no UUID");
		return false;
	}
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	bool ok = make_dirs(dir);
	if (!ok)
		*why = xasprintf("cannot make '%s'", dir);
	char *text = ok ? ceilings_encode(c) : NULL;
	if (ok)
		ok = write_file_atomic(path, text, strlen(text), why);
	free(text);
	free(dir);
	free(path);
	return ok;
}

/* ---- rates ---- */

double ceilings_copy_seconds(const struct ceilings *c, enum ceil_kind k, uint64_t bytes)
{
	if ((unsigned)k >= CEIL_KINDS || c->npoints[k] == 0)
		return NAN;
	const struct ceil_point *p = c->curve[k];
	size_t n = c->npoints[k];
	if (bytes <= p[0].bytes)
		return p[0].seconds;
	if (bytes >= p[n - 1].bytes)
		return p[n - 1].seconds * ((double)bytes / (double)p[n - 1].bytes);
	size_t i = 1;
	while (p[i].bytes < bytes)
		i++;
	double x0 = log((double)p[i - 1].bytes), x1 = log((double)p[i].bytes);
	double y0 = log(p[i - 1].seconds), y1 = log(p[i].seconds);
	double t = (log((double)bytes) - x0) / (x1 - x0);
	return exp(y0 + t * (y1 - y0));
}

double ceilings_gbps(const struct ceilings *c, enum ceil_kind k, uint64_t bytes)
{
	double s = ceilings_copy_seconds(c, k, bytes);
	return isnan(s) || s <= 0 ? NAN : (double)bytes / s / 1e9;
}
