/* tracefile: reading the tracer's summaries and events, and reading and
 * writing saved traces (see tracefile.h). */
#include "tracefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/mapfile.h"
#include "core/util.h"
#include "tracetext.h"

static const char *const op_names[OP_COUNT] = {"none", "launch", "memcpy", "memset", "sync",
					       "alloc", "free", "reset"};
static const char *const dir_names[DIR_COUNT] = {"H2D", "D2H", "D2D", "other"};
static const char *const hk_names[HK_COUNT] = {"pageable", "pinned", "other"};

const char *trace_op_name(int op)
{
	return op >= 0 && op < OP_COUNT ? op_names[op] : "none";
}

const char *trace_dir_name(int dir)
{
	return dir >= 0 && dir < DIR_COUNT ? dir_names[dir] : "other";
}

const char *trace_hostkind_name(int hk)
{
	return hk >= 0 && hk < HK_COUNT ? hk_names[hk] : "other";
}

static const char *const gap_names[GAP_CLASS_COUNT] = {"short", "long", "warmup"};

const char *trace_gap_class_name(int cls)
{
	return cls >= 0 && cls < GAP_CLASS_COUNT ? gap_names[cls] : "short";
}

int trace_op_from_name(const char *name)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (strcmp(op_names[i], name) == 0)
			return i;
	return -1;
}

/* ---- checked access ---- */

struct ctx {
	char **why;
	const char *where;
};

static bool bad(struct ctx *c, const char *fmt, const char *what)
{
	if (!*c->why)
		*c->why = xasprintf(fmt, c->where, what);
	return false;
}

static bool u64_of(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static bool get_u64(struct ctx *c, json_t *obj, const char *key, uint64_t *out)
{
	if (!u64_of(json_object_get(obj, key), out))
		return bad(c, "%s: '%s' is not a non-negative integer", key);
	return true;
}

static bool get_int(struct ctx *c, json_t *obj, const char *key, int *out)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < -(1LL << 31) || json_integer_value(v) >= (1LL << 31))
		return bad(c, "%s: '%s' is not an integer", key);
	*out = (int)json_integer_value(v);
	return true;
}

static bool get_bool(struct ctx *c, json_t *obj, const char *key, bool *out)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_boolean(v))
		return bad(c, "%s: '%s' is not true or false", key);
	*out = json_is_true(v);
	return true;
}

/* A string or null (NULL); anything else is an error. */
static bool get_str(struct ctx *c, json_t *obj, const char *key, const char **out)
{
	json_t *v = json_object_get(obj, key);
	if (json_is_null(v) || !v) {
		*out = NULL;
		return true;
	}
	if (!json_is_string(v))
		return bad(c, "%s: '%s' is not a string", key);
	*out = json_string_value(v);
	return true;
}

static json_t *get_array(struct ctx *c, json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_array(v)) {
		bad(c, "%s: '%s' is not an array", key);
		return NULL;
	}
	return v;
}

/* Element i of array a as an array of exactly n non-negative integers. */
static bool row_u64(struct ctx *c, json_t *row, size_t n, uint64_t *out, const char *what)
{
	if (!json_is_array(row) || json_array_size(row) != n)
		return bad(c, "%s: an entry of '%s' has the wrong shape", what);
	for (size_t i = 0; i < n; i++)
		if (!u64_of(json_array_get(row, i), &out[i]))
			return bad(c, "%s: an entry of '%s' has a value that is not a non-negative integer", what);
	return true;
}

static bool string_id(struct ctx *c, const struct trace_process *p, uint64_t id, const char **out,
		      const char *what)
{
	if (id >= p->nstrings)
		return bad(c, "%s: '%s' refers to a string the summary does not have", what);
	*out = p->strings[id];
	return true;
}

static bool site_id(struct ctx *c, const struct trace_process *p, uint64_t id, const char *what)
{
	if (id >= p->nsites)
		return bad(c, "%s: '%s' refers to a site the summary does not have", what);
	return true;
}

/* ---- one process ---- */

static bool parse_counts(struct ctx *c, json_t *o, struct trace_process *p)
{
	json_t *k = json_object_get(o, "counts");
	if (!json_is_object(k))
		return bad(c, "%s: '%s' is not an object", "counts");
	const char *const keys[] = {"records", "dropped", "unattributed", "buffers", "nested_driver",
				    "strings_dropped", "sites_overflow", "kernels_overflow",
				    "streams_overflow", "gaps_overflow", "nvtx_overflow", "events_written",
				    "events_dropped"};
	uint64_t *const dst[] = {&p->records, &p->dropped, &p->unattributed, &p->buffers,
				 &p->nested_driver, &p->strings_dropped, &p->sites_overflow,
				 &p->kernels_overflow, &p->streams_overflow, &p->gaps_overflow,
				 &p->nvtx_overflow, &p->events_written, &p->events_dropped};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!get_u64(c, k, keys[i], dst[i]))
			return false;
	/* records without valid times: 0 in summaries of tracers before it */
	if ((json_object_get(k, "untimed") && !get_u64(c, k, "untimed", &p->untimed)) ||
	    (json_object_get(k, "early") && !get_u64(c, k, "early", &p->early)))
		return false;
	if (p->untimed > p->records || p->early > p->records)
		return bad(c, "%s: %s", "'counts' has more records without times, or starting before their launch, than records");
	return true;
}

/* Record sampling (--sample); summaries of tracers before it have none. */
static bool parse_sampling(struct ctx *c, json_t *o, struct trace_process *p)
{
	json_t *sm = json_object_get(o, "sampling");
	if (!sm)
		return true;
	if (!json_is_object(sm))
		return bad(c, "%s: %s", "'sampling' is not an object");
	if (!get_bool(c, sm, "sampled", &p->sampled) || !get_u64(c, sm, "launches", &p->launches) ||
	    !get_u64(c, sm, "sampled_launches", &p->sampled_launches) ||
	    !get_u64(c, sm, "recorded_launches", &p->recorded_launches) ||
	    !get_u64(c, sm, "windows", &p->sample_windows) ||
	    !get_u64(c, sm, "recorded_ns", &p->sample_recorded_ns) || !get_u64(c, sm, "rate", &p->sample_rate))
		return false;
	if ((json_object_get(sm, "recorded_kernels") && !get_u64(c, sm, "recorded_kernels", &p->sample_kernels)) ||
	    (json_object_get(sm, "toggle_errors") && !get_u64(c, sm, "toggle_errors", &p->sample_toggle_errors)) ||
	    (json_object_get(sm, "toggles") && !get_u64(c, sm, "toggles", &p->sample_toggles)) ||
	    (json_object_get(sm, "toggle_ns") && !get_u64(c, sm, "toggle_ns", &p->sample_toggle_ns)) ||
	    (json_object_get(sm, "toggle_max_ns") && !get_u64(c, sm, "toggle_max_ns", &p->sample_toggle_max_ns)) ||
	    (json_object_get(sm, "unseen_allocs") && !get_u64(c, sm, "unseen_allocs", &p->sample_unseen_allocs)) ||
	    (json_object_get(sm, "last_launch") && !get_u64(c, sm, "last_launch", &p->sample_last_launch)))
		return false;
	if (p->sample_toggle_max_ns > p->sample_toggle_ns)
		return bad(c, "%s: %s", "'sampling' has a longest switch of the records longer than all of them");
	if (!json_object_get(sm, "recorded_kernels"))
		p->sample_kernels = p->recorded_launches; /* before the field: taken as complete */
	if (p->recorded_launches > p->sampled_launches || p->sampled_launches > p->launches)
		return bad(c, "%s: %s", "'sampling' counts more recorded than sampled, or sampled than made, launches");
	return true;
}

static bool parse_header(struct ctx *c, json_t *o, struct trace_process *p)
{
	const char *format;
	int version;
	if (!get_str(c, o, "format", &format) || !format || strcmp(format, TRACE_SUMMARY_FORMAT) != 0)
		return bad(c, "%s: %s", "not a gpuopt tracer summary (format is not " TRACE_SUMMARY_FORMAT ")");
	if (!get_int(c, o, "version", &version))
		return false;
	if (version != TRACE_SUMMARY_VERSION)
		return bad(c, "%s: %s", "a tracer summary of another version (this gpuopt reads version 1)");
	if (!get_int(c, o, "pid", &p->pid) || !get_int(c, o, "ppid", &p->ppid) ||
	    !get_str(c, o, "status", &p->status) || !get_str(c, o, "reason", &p->reason) ||
	    !get_bool(c, o, "conflict", &p->conflict) || !get_str(c, o, "flush", &p->flush) ||
	    !get_int(c, o, "signal", &p->signal) || !get_int(c, o, "driver_version", &p->driver_version) ||
	    !get_str(c, o, "nvtx", &p->nvtx_status))
		return false;
	if (!p->status || (strcmp(p->status, "traced") != 0 && strcmp(p->status, "not-traced") != 0))
		return bad(c, "%s: %s", "'status' is neither traced nor not-traced");
	if (!p->flush)
		return bad(c, "%s: %s", "'flush' is missing");
	json_t *e = json_object_get(o, "error");
	if (json_is_object(e)) {
		if (!get_str(c, e, "api", &p->error_api) || !get_str(c, e, "name", &p->error_name) ||
		    !get_int(c, e, "code", &p->error_code))
			return false;
	} else if (e && !json_is_null(e)) {
		return bad(c, "%s: %s", "'error' is neither an object nor null");
	}
	json_t *libs = json_object_get(o, "libraries");
	if (libs) {
		if (!json_is_array(libs))
			return bad(c, "%s: %s", "'libraries' is not an array");
		p->libraries = xcalloc(json_array_size(libs) + 1, sizeof *p->libraries);
		for (size_t i = 0; i < json_array_size(libs); i++) {
			if (!json_is_string(json_array_get(libs, i)))
				return bad(c, "%s: %s", "'libraries' holds something that is not a string");
			p->libraries[p->nlibraries++] = json_string_value(json_array_get(libs, i));
		}
	}
	json_t *py = json_object_get(o, "python");
	if (!json_is_object(py))
		return bad(c, "%s: %s", "'python' is not an object");
	if (!get_str(c, py, "version", &p->py_version) || !get_bool(c, py, "lines", &p->py_lines) ||
	    !get_str(c, py, "why", &p->py_why))
		return false;
	json_t *cu = json_object_get(o, "cupti");
	if (json_is_object(cu)) {
		uint64_t v;
		if (!get_str(c, cu, "path", &p->cupti_path) || !get_str(c, cu, "how", &p->cupti_how) ||
		    !get_u64(c, cu, "version", &v))
			return false;
		p->cupti_version = (uint32_t)v;
	} else if (!json_is_null(cu)) {
		return bad(c, "%s: %s", "'cupti' is neither an object nor null");
	}
	json_t *s = json_object_get(o, "settings");
	if (!json_is_object(s))
		return bad(c, "%s: %s", "'settings' is not an object");
	if (!get_bool(c, s, "timeline", &p->timeline) || !get_u64(c, s, "max_events", &p->max_events) ||
	    !get_bool(c, s, "full", &p->full) || !get_bool(c, s, "strict", &p->strict) ||
	    !get_bool(c, s, "callbacks", &p->callbacks) ||
	    !get_u64(c, s, "kernel_wait_ns", &p->kernel_wait_ns) ||
	    !get_u64(c, s, "starved_gap_ns", &p->starved_gap_ns) || !get_str(c, s, "kinds", &p->kinds))
		return false;
	json_t *k = json_object_get(o, "clock");
	if (!json_is_object(k))
		return bad(c, "%s: %s", "'clock' is not an object");
	if (!get_u64(c, k, "start", &p->t_start) || !get_u64(c, k, "first", &p->t_first) ||
	    !get_u64(c, k, "last", &p->t_last) || !get_u64(c, k, "end", &p->t_end))
		return false;
	return parse_counts(c, o, p) && parse_sampling(c, o, p);
}

static bool parse_tables(struct ctx *c, json_t *o, struct trace_process *p)
{
	json_t *a = get_array(c, o, "strings");
	if (!a)
		return false;
	p->nstrings = json_array_size(a);
	p->strings = xcalloc(p->nstrings + 1, sizeof *p->strings);
	for (size_t i = 0; i < p->nstrings; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_string(v))
			return bad(c, "%s: %s", "'strings' holds something that is not a string");
		p->strings[i] = json_string_value(v);
	}
	if (p->nstrings == 0) { /* the empty string is id 0 */
		p->nstrings = 1;
		p->strings[0] = "";
	}
	if (!(a = get_array(c, o, "sites")))
		return false;
	p->nsites = json_array_size(a);
	p->sites = xcalloc(p->nsites + 1, sizeof *p->sites);
	for (size_t i = 0; i < p->nsites; i++) {
		uint64_t v[6];
		if (!row_u64(c, json_array_get(a, i), 6, v, "sites"))
			return false;
		struct trace_site *s = &p->sites[i];
		if (!string_id(c, p, v[0], &s->file, "sites") || !string_id(c, p, v[2], &s->func, "sites") ||
		    !string_id(c, p, v[3], &s->lib_file, "sites") || !string_id(c, p, v[5], &s->lib_func, "sites"))
			return false;
		if (v[1] > UINT32_MAX || v[4] > UINT32_MAX)
			return bad(c, "%s: %s", "a site's line number is out of range");
		s->line = (uint32_t)v[1];
		s->lib_line = (uint32_t)v[4];
	}
	if (p->nsites == 0) { /* site 0 means "no Python frame" */
		p->nsites = 1;
		p->sites[0] = (struct trace_site){"", "", 0, "", "", 0};
	}
	if (!(a = get_array(c, o, "site_stats")))
		return false;
	p->nstats = json_array_size(a);
	p->stats = xcalloc(p->nstats + 1, sizeof *p->stats);
	for (size_t i = 0; i < p->nstats; i++) {
		json_t *r = json_array_get(a, i);
		struct trace_site_stats *s = &p->stats[i];
		uint64_t site, v[6];
		if (!json_is_object(r))
			return bad(c, "%s: %s", "'site_stats' holds something that is not an object");
		if (!get_u64(c, r, "site", &site) || !site_id(c, p, site, "site_stats"))
			return false;
		s->site = (uint32_t)site;
		json_t *api = json_object_get(r, "api");
		if (!json_is_object(api))
			return bad(c, "%s: %s", "a site's 'api' is not an object");
		const char *key;
		json_t *val;
		json_object_foreach(api, key, val) {
			int op = trace_op_from_name(key);
			if (op <= 0 || !row_u64(c, val, 2, v, "site_stats"))
				return bad(c, "%s: %s", "a site's 'api' has an unknown operation or a bad entry");
			s->api_n[op] = v[0];
			s->api_ns[op] = v[1];
		}
		if (!row_u64(c, json_object_get(r, "kernel"), 3, v, "site_stats"))
			return false;
		s->kernels = v[0];
		s->kernel_ns = v[1];
		s->kernel_short = v[2];
		json_t *cp = json_object_get(r, "copy");
		if (!json_is_array(cp))
			return bad(c, "%s: %s", "a site's 'copy' is not an array");
		for (size_t k = 0; k < json_array_size(cp); k++) {
			if (!row_u64(c, json_array_get(cp, k), 6, v, "site_stats"))
				return false;
			if (v[0] >= DIR_COUNT || v[1] >= HK_COUNT)
				return bad(c, "%s: %s", "a copy's direction or host memory kind is unknown");
			s->copy[v[0]][v[1]] = (struct trace_copy){v[2], v[3], v[4], v[5]};
		}
		if (!row_u64(c, json_object_get(r, "memset"), 3, v, "site_stats"))
			return false;
		s->memset = (struct trace_copy){v[0], v[1], v[2], 0};
		/* what the callbacks saw of every call (tracers before them: none) */
		json_t *cc = json_object_get(r, "copy_calls");
		if (cc && !json_is_array(cc))
			return bad(c, "%s: %s", "a site's 'copy_calls' is not an array");
		for (size_t k = 0; k < json_array_size(cc); k++) {
			if (!row_u64(c, json_array_get(cc, k), 4, v, "site_stats"))
				return false;
			if (v[0] >= DIR_COUNT)
				return bad(c, "%s: %s", "a copy call's direction is unknown");
			s->copy_calls[v[0]] = (struct trace_copy){v[1], v[2], v[3], 0};
			s->has_calls = true;
		}
		json_t *dr = json_object_get(r, "drained");
		if (dr) {
			if (!row_u64(c, dr, 2, v, "site_stats"))
				return false;
			s->drained_n = v[0];
			s->drained_ns = v[1];
			s->has_calls = true;
		}
	}
	if (!(a = get_array(c, o, "kernels")))
		return false;
	p->nkernels = json_array_size(a);
	p->kernels = xcalloc(p->nkernels + 1, sizeof *p->kernels);
	for (size_t i = 0; i < p->nkernels; i++) {
		uint64_t v[5];
		if (!row_u64(c, json_array_get(a, i), 5, v, "kernels") ||
		    !string_id(c, p, v[0], &p->kernels[i].name, "kernels"))
			return false;
		p->kernels[i].n = v[1];
		p->kernels[i].ns = v[2];
		p->kernels[i].min = v[3];
		p->kernels[i].max = v[4];
	}
	if (!(a = get_array(c, o, "streams")))
		return false;
	p->nstreams = json_array_size(a);
	p->streams = xcalloc(p->nstreams + 1, sizeof *p->streams);
	for (size_t i = 0; i < p->nstreams; i++) {
		json_t *r = json_array_get(a, i);
		struct trace_stream *s = &p->streams[i];
		uint64_t dev, st, v[2];
		if (!json_is_object(r))
			return bad(c, "%s: %s", "'streams' holds something that is not an object");
		if (!get_u64(c, r, "device", &dev) || !get_u64(c, r, "stream", &st) ||
		    !get_u64(c, r, "events", &s->events) || !get_u64(c, r, "busy_ns", &s->busy_ns))
			return false;
		s->device = (uint32_t)dev;
		s->stream = (uint32_t)st;
		if (!row_u64(c, json_object_get(r, "host_wait"), 2, v, "streams"))
			return false;
		s->host_wait_n = v[0];
		s->host_wait_ns = v[1];
		if (!row_u64(c, json_object_get(r, "kernel_wait"), 2, v, "streams"))
			return false;
		s->kernel_wait_n = v[0];
		s->kernel_wait_ns = v[1];
		if (!row_u64(c, json_object_get(r, "other"), 2, v, "streams"))
			return false;
		s->other_n = v[0];
		s->other_ns = v[1];
		if (!row_u64(c, json_object_get(r, "warmup"), 2, v, "streams"))
			return false;
		s->warmup_n = v[0];
		s->warmup_ns = v[1];
		if (s->warmup_ns > s->host_wait_ns)
			return bad(c, "%s: %s", "a stream's warm-up is more than its host wait");
		/* traces written before "held" have none: their held time is in their host wait */
		json_t *held = json_object_get(r, "held");
		if (held) {
			if (!row_u64(c, held, 2, v, "streams"))
				return false;
			s->held_n = v[0];
			s->held_ns = v[1];
			if (s->held_ns > s->other_ns)
				return bad(c, "%s: %s", "a stream's held time is more than its other idle time");
		}
	}
	if (!(a = get_array(c, o, "devices")))
		return false;
	p->ndevices = json_array_size(a);
	p->devices = xcalloc(p->ndevices + 1, sizeof *p->devices);
	for (size_t i = 0; i < p->ndevices; i++) {
		json_t *r = json_array_get(a, i);
		struct trace_device *d = &p->devices[i];
		uint64_t id;
		if (!json_is_object(r))
			return bad(c, "%s: %s", "'devices' holds something that is not an object");
		json_t *peak = json_object_get(r, "mem_peak"), *now = json_object_get(r, "mem_now");
		if (!get_u64(c, r, "id", &id) || !get_u64(c, r, "kernels", &d->kernels) ||
		    !get_u64(c, r, "kernel_ns", &d->kernel_ns) || !get_u64(c, r, "memcpys", &d->memcpys) ||
		    !get_u64(c, r, "memcpy_ns", &d->memcpy_ns) || !get_u64(c, r, "memsets", &d->memsets) ||
		    !get_u64(c, r, "memset_ns", &d->memset_ns) || !get_u64(c, r, "busy_ns", &d->busy_ns) ||
		    !get_u64(c, r, "first", &d->first) || !get_u64(c, r, "last", &d->last) ||
		    !get_u64(c, r, "allocs", &d->allocs) || !get_u64(c, r, "frees", &d->frees))
			return false;
		if (!json_is_integer(peak) || !json_is_integer(now))
			return bad(c, "%s: %s", "a device's memory counters are not integers");
		if (id > 1024)
			return bad(c, "%s: %s", "a device id is out of range");
		d->id = (uint32_t)id;
		d->mem_peak = json_integer_value(peak);
		d->mem_now = json_integer_value(now);
	}
	if (!(a = get_array(c, o, "gaps")))
		return false;
	p->ngaps = json_array_size(a);
	p->gaps = xcalloc(p->ngaps + 1, sizeof *p->gaps);
	for (size_t i = 0; i < p->ngaps; i++) {
		json_t *r = json_array_get(a, i);
		struct trace_gap *g = &p->gaps[i];
		uint64_t v[7];
		if (!json_is_array(r) || json_array_size(r) != 7 || !json_is_string(json_array_get(r, 1)) ||
		    !json_is_string(json_array_get(r, 3)))
			return bad(c, "%s: %s", "an entry of 'gaps' has the wrong shape");
		for (size_t k = 0; k < 7; k++)
			if (k != 1 && k != 3 && !u64_of(json_array_get(r, k), &v[k]))
				return bad(c, "%s: %s", "an entry of 'gaps' has a bad number");
		g->prev_op = trace_op_from_name(json_string_value(json_array_get(r, 1)));
		g->cls = -1;
		for (int k = 0; k < GAP_CLASS_COUNT; k++)
			if (!strcmp(json_string_value(json_array_get(r, 3)), gap_names[k]))
				g->cls = k;
		if (g->prev_op < 0 || g->cls < 0 || !site_id(c, p, v[0], "gaps") || !site_id(c, p, v[2], "gaps"))
			return bad(c, "%s: %s", "an entry of 'gaps' has an unknown operation, class or site");
		g->prev_site = (uint32_t)v[0];
		g->next_site = (uint32_t)v[2];
		g->n = v[4];
		g->ns = v[5];
		g->max_ns = v[6];
	}
	if (!(a = get_array(c, o, "nvtx_ranges")))
		return false;
	p->nnvtx = json_array_size(a);
	p->nvtx = xcalloc(p->nnvtx + 1, sizeof *p->nvtx);
	for (size_t i = 0; i < p->nnvtx; i++) {
		json_t *r = json_array_get(a, i);
		struct trace_nvtx *n = &p->nvtx[i];
		uint64_t v[6];
		if (!json_is_array(r) || json_array_size(r) != 6 || !json_is_boolean(json_array_get(r, 3)))
			return bad(c, "%s: %s", "an entry of 'nvtx_ranges' has the wrong shape");
		for (size_t k = 0; k < 6; k++)
			if (k != 3 && !u64_of(json_array_get(r, k), &v[k]))
				return bad(c, "%s: %s", "an entry of 'nvtx_ranges' has a bad number");
		if (!string_id(c, p, v[0], &n->domain, "nvtx_ranges") ||
		    !string_id(c, p, v[1], &n->name, "nvtx_ranges") || !site_id(c, p, v[2], "nvtx_ranges"))
			return false;
		n->site = (uint32_t)v[2];
		n->mark = json_is_true(json_array_get(r, 3));
		n->n = v[4];
		n->ns = v[5];
	}
	return true;
}

/* [name-or-number, n, ns] rows. */
static bool parse_named(struct ctx *c, json_t *o, const char *key, struct trace_named **out, size_t *n)
{
	static const char *const sync_names[] = {"unknown", "event", "stream-wait-event", "stream",
						 "context", "8", "6", "7"};
	json_t *a = get_array(c, o, key);
	if (!a)
		return false;
	*n = json_array_size(a);
	*out = xcalloc(*n + 1, sizeof **out);
	for (size_t i = 0; i < *n; i++) {
		json_t *r = json_array_get(a, i);
		if (!json_is_array(r) || json_array_size(r) != 3 || !u64_of(json_array_get(r, 1), &(*out)[i].n) ||
		    !u64_of(json_array_get(r, 2), &(*out)[i].ns))
			return bad(c, "%s: an entry of '%s' has the wrong shape", key);
		json_t *name = json_array_get(r, 0);
		uint64_t id;
		if (json_is_string(name))
			(*out)[i].name = json_string_value(name);
		else if (u64_of(name, &id) && id < 8)
			(*out)[i].name = sync_names[id];
		else if (json_is_null(name))
			(*out)[i].name = "?";
		else
			return bad(c, "%s: an entry of '%s' has a bad name", key);
	}
	return true;
}

bool trace_process_parse(json_t *obj, struct trace_process *p, char **why)
{
	memset(p, 0, sizeof *p);
	*why = NULL;
	struct ctx c = {why, "process"};
	if (!json_is_object(obj)) {
		*why = xstrdup("a process summary is not a JSON object");
		return false;
	}
	p->json = json_incref(obj);
	if (!parse_header(&c, obj, p) || !parse_tables(&c, obj, p) ||
	    !parse_named(&c, obj, "sync_records", &p->syncs, &p->nsyncs) ||
	    !parse_named(&c, obj, "overhead", &p->overhead, &p->noverhead) ||
	    !parse_named(&c, obj, "api", &p->api, &p->napi)) {
		trace_process_clear(p);
		return false;
	}
	return true;
}

void trace_process_clear(struct trace_process *p)
{
	if (!p)
		return;
	free(p->libraries);
	free(p->strings);
	free(p->sites);
	free(p->stats);
	free(p->kernels);
	free(p->streams);
	free(p->devices);
	free(p->gaps);
	free(p->nvtx);
	free(p->syncs);
	free(p->overhead);
	free(p->api);
	free(p->events);
	json_decref(p->json);
	memset(p, 0, sizeof *p);
}

/* ---- events ---- */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static bool event_check(const struct trace_event *e, const struct trace_process *p, char **why)
{
	if (e->type == 0 || e->type >= EV_TYPE_COUNT) {
		*why = xstrdup("an event of an unknown type");
		return false;
	}
	if (e->name >= p->nstrings || e->site >= p->nsites ||
	    ((e->type == EV_NVTX_RANGE || e->type == EV_NVTX_MARK) && e->grid[0] >= p->nstrings)) {
		*why = xstrdup("an event refers to a string or site the summary does not have");
		return false;
	}
	if ((e->type == EV_MEMCPY && (e->kind >= DIR_COUNT || e->hostkind >= HK_COUNT)) ||
	    (e->type == EV_API && e->kind >= OP_COUNT)) {
		*why = xstrdup("an event has an unknown kind");
		return false;
	}
	if (e->end < e->start) {
		*why = xstrdup("an event ends before it starts");
		return false;
	}
	return true;
}

bool trace_events_decode(const unsigned char *data, size_t len, uint64_t limit,
			 struct trace_process *p, char **why)
{
	*why = NULL;
	if (len < TRACE_EVENTS_HEADER || memcmp(data, TRACE_EVENTS_MAGIC, 8) != 0) {
		*why = xstrdup("not a gpuopt events file (no " TRACE_EVENTS_MAGIC " header)");
		return false;
	}
	if (rd32(data + 8) != TRACE_EVENTS_VERSION || rd32(data + 12) != TRACE_EVENT_SIZE) {
		*why = xstrdup("an events file of another version or record size");
		return false;
	}
	size_t n = (len - TRACE_EVENTS_HEADER) / TRACE_EVENT_SIZE;
	if (n > limit)
		n = (size_t)limit;
	struct trace_event *ev = xcalloc(n + 1, sizeof *ev);
	const unsigned char *r = data + TRACE_EVENTS_HEADER;
	for (size_t i = 0; i < n; i++, r += TRACE_EVENT_SIZE) {
		struct trace_event *e = &ev[i];
		e->type = r[0];
		e->kind = r[1];
		e->hostkind = r[2];
		e->flags = r[3];
		e->device = rd32(r + 4);
		e->stream = rd32(r + 8);
		e->correlation = rd32(r + 12);
		e->start = rd64(r + 16);
		e->end = rd64(r + 24);
		e->bytes = rd64(r + 32);
		e->name = rd32(r + 40);
		e->site = rd32(r + 44);
		e->tid = rd32(r + 48);
		for (int k = 0; k < 3; k++) {
			e->grid[k] = rd32(r + 52 + 4 * k);
			e->block[k] = rd32(r + 64 + 4 * k);
		}
		if (!event_check(e, p, why)) {
			free(ev);
			return false;
		}
	}
	free(p->events);
	p->events = ev;
	p->nevents = n;
	return true;
}

static bool events_adopt(struct trace_event *ev, size_t n, struct trace_process *p, char **why);

/* Events inlined in a saved trace: one array of TRACE_EVENT_FIELDS integers
 * each (tracetext.h). Most arrive lifted out of the text (tracetext.c);
 * this reads those that did not. */
static bool events_from_json(json_t *a, struct trace_process *p, char **why)
{
	if (!a)
		return true;
	if (!json_is_array(a)) {
		*why = xstrdup("'events' is not an array");
		return false;
	}
	size_t n = json_array_size(a);
	struct trace_event *ev = xcalloc(n + 1, sizeof *ev);
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(a, i);
		uint64_t v[TRACE_EVENT_FIELDS];
		if (!json_is_array(r) || json_array_size(r) != TRACE_EVENT_FIELDS) {
			free(ev);
			*why = xstrdup("an event is not an array of 19 numbers");
			return false;
		}
		bool ok = true;
		for (size_t k = 0; k < TRACE_EVENT_FIELDS && ok; k++)
			ok = u64_of(json_array_get(r, k), &v[k]);
		if (!ok || !trace_event_from_row(v, &ev[i])) {
			free(ev);
			*why = xstrdup("an event has a value out of range");
			return false;
		}
	}
	return events_adopt(ev, n, p, why);
}

/* Takes events (owned ev, n of them: lifted from the text, or read from
 * JSON) into p, each checked against p's strings and sites. */
static bool events_adopt(struct trace_event *ev, size_t n, struct trace_process *p, char **why)
{
	for (size_t i = 0; i < n; i++)
		if (!event_check(&ev[i], p, why)) {
			free(ev);
			return false;
		}
	p->events = ev;
	p->nevents = n;
	return true;
}

static json_t *events_to_json(const struct trace_process *p)
{
	json_t *a = json_array();
	for (size_t i = 0; i < p->nevents; i++) {
		const struct trace_event *e = &p->events[i];
		uint64_t v[TRACE_EVENT_FIELDS] = {e->type, e->kind, e->hostkind, e->flags, e->device, e->stream,
					    e->correlation, e->start, e->end, e->bytes, e->name, e->site,
					    e->tid, e->grid[0], e->grid[1], e->grid[2], e->block[0],
					    e->block[1], e->block[2]};
		json_t *r = json_array();
		for (size_t k = 0; k < TRACE_EVENT_FIELDS; k++)
			json_array_append_new(r, json_integer((json_int_t)v[k]));
		json_array_append_new(a, r);
	}
	return a;
}

/* ---- saved traces ---- */

void trace_clear(struct trace *t)
{
	if (!t)
		return;
	if (t->argv)
		for (char **a = t->argv; *a; a++)
			free(*a);
	free(t->argv);
	free(t->cwd);
	free(t->note);
	json_decref(t->gpu);
	free(t->log);
	for (size_t i = 0; i < t->nprocs; i++)
		trace_process_clear(&t->procs[i]);
	free(t->procs);
	json_decref(t->json);
	memset(t, 0, sizeof *t);
}

/* The saved trace root into t; tt holds the timelines lifted from its text. */
static bool parse_saved(json_t *root, struct tracetext *tt, struct trace *t, char **why)
{
	struct ctx c = {why, "trace"};
	const char *format;
	int version;
	if (!json_is_object(root))
		return bad(&c, "%s: %s", "not a JSON object");
	if (!get_str(&c, root, "format", &format) || !format || strcmp(format, TRACE_FILE_FORMAT) != 0)
		return bad(&c, "%s: %s", "not a saved gpuopt trace (format is not " TRACE_FILE_FORMAT ")");
	if (!get_int(&c, root, "version", &version))
		return false;
	if (version != TRACE_FILE_VERSION)
		return bad(&c, "%s: %s", "a saved trace of another version (this gpuopt reads version 1)");
	json_t *cmd = get_array(&c, root, "command");
	if (!cmd)
		return false;
	t->argv = xcalloc(json_array_size(cmd) + 1, sizeof *t->argv);
	for (size_t i = 0; i < json_array_size(cmd); i++) {
		if (!json_is_string(json_array_get(cmd, i)))
			return bad(&c, "%s: %s", "'command' holds something that is not a string");
		t->argv[i] = xstrdup(json_string_value(json_array_get(cmd, i)));
	}
	json_t *ex = json_object_get(root, "exit");
	if (!json_is_object(ex))
		return bad(&c, "%s: %s", "'exit' is not an object");
	json_t *wall = json_object_get(ex, "wall_s");
	if (!json_is_number(wall) || json_number_value(wall) < 0)
		return bad(&c, "%s: %s", "'exit.wall_s' is not a non-negative number");
	t->wall_s = json_number_value(wall);
	if (!get_int(&c, ex, "code", &t->exit_code) || !get_int(&c, ex, "signal", &t->signal) ||
	    !get_bool(&c, ex, "timed_out", &t->timed_out))
		return false;
	if (!get_bool(&c, root, "traced", &t->traced))
		return false;
	const char *cwd;
	if (!get_str(&c, root, "cwd", &cwd))
		return false;
	t->cwd = cwd ? xstrdup(cwd) : NULL;
	const char *note;
	if (!get_str(&c, root, "note", &note))
		return false;
	t->note = note ? xstrdup(note) : NULL;
	json_t *gpu = json_object_get(root, "gpu");
	if (gpu && !json_is_null(gpu)) {
		if (!json_is_object(gpu))
			return bad(&c, "%s: %s", "'gpu' is not an object");
		t->gpu = json_incref(gpu);
	}
	json_t *log = get_array(&c, root, "log");
	if (!log)
		return false;
	t->log = xcalloc(json_array_size(log) + 1, sizeof *t->log);
	for (size_t i = 0; i < json_array_size(log); i++) {
		json_t *r = json_array_get(log, i);
		struct trace_logline *l = &t->log[t->nlog];
		if (!json_is_object(r) || !get_str(&c, r, "library", &l->library) || !get_str(&c, r, "kind", &l->kind) ||
		    !get_str(&c, r, "name", &l->name) || !get_str(&c, r, "reason", &l->reason) ||
		    !get_u64(&c, r, "count", &l->n) || !l->library || !l->kind)
			return bad(&c, "%s: %s", "an entry of 'log' is malformed");
		t->nlog++;
	}
	json_t *procs = get_array(&c, root, "processes");
	if (!procs)
		return false;
	t->procs = xcalloc(json_array_size(procs) + 1, sizeof *t->procs);
	for (size_t i = 0; i < json_array_size(procs); i++) {
		json_t *po = json_array_get(procs, i);
		char *w = NULL;
		if (!trace_process_parse(po, &t->procs[t->nprocs], &w)) {
			*why = xasprintf("process %zu: %s", i + 1, w);
			free(w);
			return false;
		}
		t->nprocs++;
		struct trace_process *p = &t->procs[t->nprocs - 1];
		struct trace_event *ev;
		size_t nev;
		bool ok = tracetext_take(tt, i, &ev, &nev) ? events_adopt(ev, nev, p, &w)
							   : events_from_json(json_object_get(po, "events"), p, &w);
		if (!ok) {
			*why = xasprintf("process %zu: %s", i + 1, w);
			free(w);
			return false;
		}
	}
	return true;
}

/* Parses text[0..len) (lying in map, when not NULL) into out; *why (owned)
 * without the file's name. */
static bool parse_text(const char *text, size_t len, struct mapfile *map, struct trace *out, char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	json_error_t err;
	struct tracetext tt = {0};
	json_t *root = tracetext_load(&tt, text, len, map, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		*why = tt.shrank ? xstrdup("it changed while being read: it is shorter than when it was opened "
					   "(is the program that writes it still running?)")
				 : xasprintf("not JSON: %s (line %d)", err.text, err.line);
		tracetext_free(&tt);
		return false;
	}
	out->json = root;
	bool ok = parse_saved(root, &tt, out, why);
	tracetext_free(&tt);
	if (!ok) {
		if (!*why)
			*why = xstrdup("malformed");
		trace_clear(out);
		return false;
	}
	return true;
}

bool trace_parse(const char *text, size_t len, struct trace *out, char **why)
{
	return parse_text(text, len, NULL, out, why);
}

/* Whether the first bytes of a file can begin a saved trace: a JSON object
 * (after whitespace), or nothing yet. */
static bool starts_like_trace(const char *head, size_t n)
{
	size_t k = 0;
	while (k < n && (head[k] == ' ' || head[k] == '\t' || head[k] == '\n' || head[k] == '\r'))
		k++;
	return k == n || head[k] == '{';
}

/* The largest saved trace read. */
#define TRACE_LOAD_LIMIT ((size_t)4 << 30)

bool trace_load(const char *path, struct trace *out, char **why)
{
	struct buf b = {0};
	char *w = NULL;
	memset(out, 0, sizeof *out);
	/* a saved trace is a JSON object: anything else (/dev/zero, a binary
	 * file) is refused from its first bytes, not read to the limit */
	int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open_read(path, FIFO_WAIT_S);
	if (fd < 0) {
		*why = xasprintf("cannot read '%s': %s", path, open_read_error(errno));
		return false;
	}
	/* a regular file is mapped (its pages go back to the kernel as it is
	 * read: a trace of 85 MB is never all in memory as text) */
	struct mapfile map;
	char *mwhy = NULL;
	if (mapfile_open_fd(fd, &map, &mwhy)) {
		close(fd);
		const char *text = map.data ? (const char *)map.data : "";
		bool ok = map.size <= TRACE_LOAD_LIMIT;
		if (!ok)
			*why = xasprintf("cannot read '%s': file is larger than the %zu MB limit", path,
					 TRACE_LOAD_LIMIT >> 20);
		else if (!(ok = starts_like_trace(text, map.size < 4096 ? map.size : 4096)))
			*why = xasprintf("'%s' is not a gpuopt trace: it does not begin with a JSON object", path);
		else if (!(ok = parse_text(text, map.size, &map, out, &w))) {
			*why = xasprintf("'%s': %s", path, w);
			free(w);
		}
		mapfile_close(&map);
		return ok;
	}
	free(mwhy); /* not a regular file (stdin, a FIFO, a device): read it */
	char head[4096];
	ssize_t got;
	while ((got = read(fd, head, sizeof head)) < 0 && errno == EINTR)
		;
	if (got < 0) {
		*why = xasprintf("cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return false;
	}
	if (!starts_like_trace(head, (size_t)got)) {
		*why = xasprintf("'%s' is not a gpuopt trace: it does not begin with a JSON object", path);
		close(fd);
		return false;
	}
	buf_append(&b, head, (size_t)got);
	bool read_ok = got == 0 || read_fd(fd, TRACE_LOAD_LIMIT, &b, &w);
	close(fd);
	if (!read_ok) {
		*why = xasprintf("cannot read '%s': %s", path, w ? w : "error");
		free(w);
		buf_free(&b);
		return false;
	}
	bool ok = parse_text(b.data ? b.data : "", b.len, NULL, out, &w);
	buf_free(&b);
	if (!ok) {
		*why = xasprintf("'%s': %s", path, w);
		free(w);
	}
	return ok;
}

/* The saved form; with_events false leaves the processes' events out (their
 * "events" key as the summary had it, or none), for trace_save to write. */
static json_t *saved_root(const struct trace *t, bool with_events)
{
	json_t *root = json_object();
	json_object_set_new(root, "format", json_string(TRACE_FILE_FORMAT));
	json_object_set_new(root, "version", json_integer(TRACE_FILE_VERSION));
	json_t *cmd = json_array();
	for (char **a = t->argv; a && *a; a++)
		json_array_append_new(cmd, json_string(*a));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "exit", json_pack("{s:i, s:i, s:b, s:f}", "code", t->exit_code, "signal",
						    t->signal, "timed_out", t->timed_out, "wall_s", t->wall_s));
	json_object_set_new(root, "traced", json_boolean(t->traced));
	json_object_set_new(root, "cwd", t->cwd ? json_string(t->cwd) : json_null());
	json_object_set_new(root, "note", t->note ? json_string(t->note) : json_null());
	json_object_set_new(root, "gpu", t->gpu ? json_incref(t->gpu) : json_null());
	json_t *log = json_array();
	for (size_t i = 0; i < t->nlog; i++) {
		const struct trace_logline *l = &t->log[i];
		json_array_append_new(log, json_pack("{s:s, s:s, s:s?, s:s?, s:I}", "library", l->library, "kind",
						     l->kind, "name", l->name, "reason", l->reason, "count",
						     (json_int_t)l->n));
	}
	json_object_set_new(root, "log", log);
	json_t *procs = json_array();
	for (size_t i = 0; i < t->nprocs; i++) {
		json_t *po = json_copy(t->procs[i].json);
		if (with_events)
			json_object_set_new(po, "events", events_to_json(&t->procs[i]));
		json_array_append_new(procs, po);
	}
	json_object_set_new(root, "processes", procs);
	return root;
}

json_t *trace_to_json(const struct trace *t)
{
	return saved_root(t, true);
}

/* Where put_saved writes: b, or nowhere when b is NULL (then it only counts
 * the bytes, so the text is made in one allocation of its size). */
struct out {
	struct buf *b;
	size_t n;
};

static void out_put(struct out *o, const char *s, size_t len)
{
	if (o->b)
		buf_append(o->b, s, len);
	o->n += len;
}

static void out_puts(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* x as "%lld" writes it (as jansson writes a json_integer). */
static void out_int(struct out *o, json_int_t x)
{
	char text[24];
	char *p = text + sizeof text;
	unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (x < 0)
		*--p = '-';
	out_put(o, p, (size_t)(text + sizeof text - p));
}

/* Appends v as JSON_COMPACT text. */
static void out_json(struct out *o, json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	out_puts(o, text ? text : "null");
	free(text);
}

static void out_key(struct out *o, const char *key)
{
	json_t *k = json_string(key);
	out_json(o, k);
	json_decref(k);
	out_put(o, ":", 1);
}

/* p's events as events_to_json's array, written straight as text. */
static void out_events(struct out *o, const struct trace_process *p)
{
	out_put(o, "[", 1);
	for (size_t i = 0; i < p->nevents; i++) {
		const struct trace_event *e = &p->events[i];
		uint64_t v[TRACE_EVENT_FIELDS] = {e->type, e->kind, e->hostkind, e->flags, e->device, e->stream,
						  e->correlation, e->start, e->end, e->bytes, e->name, e->site,
						  e->tid, e->grid[0], e->grid[1], e->grid[2], e->block[0],
						  e->block[1], e->block[2]};
		out_put(o, i ? ",[" : "[", i ? 2 : 1);
		for (size_t k = 0; k < TRACE_EVENT_FIELDS; k++) {
			if (k)
				out_put(o, ",", 1);
			out_int(o, (json_int_t)v[k]);
		}
		out_put(o, "]", 1);
	}
	out_put(o, "]", 1);
}

/* The saved trace as json_dumps(trace_to_json(t), JSON_COMPACT) would write
 * it, byte for byte, without the JSON tree of the events (a timeline of a
 * million events took a gigabyte as one): the rest of the tree (root, made
 * by saved_root without events) is dumped value by value and the events
 * are printed in their place. */
static void put_saved(struct out *o, const struct trace *t, json_t *root)
{
	const char *key;
	json_t *v;
	bool first = true;
	out_put(o, "{", 1);
	json_object_foreach(root, key, v) {
		if (!first)
			out_put(o, ",", 1);
		first = false;
		out_key(o, key);
		if (strcmp(key, "processes") != 0) {
			out_json(o, v);
			continue;
		}
		out_put(o, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *po = json_array_get(v, i);
			const char *pk;
			json_t *pv;
			bool pfirst = true, events = false;
			out_puts(o, i ? ",{" : "{");
			json_object_foreach(po, pk, pv) {
				if (!pfirst)
					out_put(o, ",", 1);
				pfirst = false;
				out_key(o, pk);
				if (strcmp(pk, "events") == 0) {
					out_events(o, &t->procs[i]);
					events = true;
				} else {
					out_json(o, pv);
				}
			}
			if (!events) { /* where json_object_set_new puts a new key: last */
				if (!pfirst)
					out_put(o, ",", 1);
				out_key(o, "events");
				out_events(o, &t->procs[i]);
			}
			out_put(o, "}", 1);
		}
		out_put(o, "]", 1);
	}
	out_put(o, "}", 1);
}

bool trace_save(const struct trace *t, const char *path, char **why)
{
	json_t *root = saved_root(t, false);
	struct out count = {NULL, 0};
	put_saved(&count, t, root);
	struct buf b = {xmalloc(count.n + 1), 0, count.n + 1}; /* the text's size: never grown */
	struct out text = {&b, 0};
	put_saved(&text, t, root);
	json_decref(root);
	bool ok = write_file_atomic(path, b.data, b.len, why);
	buf_free(&b);
	return ok;
}
