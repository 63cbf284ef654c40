/* config: data/trace.json, loaded and checked (see config.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "core/fileio.h"
#include "core/util.h"

const char *const trace_threshold_names[TH_COUNT] = {
	"kernel_wait_gap_us", "min_rule_share", "min_rule_seconds", "transfer_share",
	"roundtrip_min_count", "roundtrip_max_bytes", "pageable_min_bytes", "sync_min_count",
	"launch_min_count", "launch_short_share", "starved_min_gap_us", "starved_min_gaps", "alloc_min_count",
	"memory_near_capacity", "fallback_min_count", "sample_launch_rate",
	"sample_window_ms", "sample_period_ms",
};

const char *const trace_rule_names[R_COUNT] = {
	"transfer-bound", "roundtrip-storm", "pageable-transfer", "sync-bound",
	"launch-bound", "gpu-starved", "memory-pressure", "cpu-fallback",
};

static const char *str_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *load_text(struct buf *b, char **why)
{
	const char *dir = getenv("GPUOPT_DATA_DIR");
	if (dir && *dir) {
		char *path = xasprintf("%s/trace.json", dir);
		char *err = NULL;
		if (!read_file(path, 16u << 20, b, &err)) {
			*why = xasprintf("cannot read '%s': %s", path, err ? err : "error");
			free(err);
			free(path);
			return NULL;
		}
		free(path);
		return b->data;
	}
	for (size_t i = 0; i < gpuopt_data_file_count; i++)
		if (strcmp(gpuopt_data_files[i].name, "trace.json") == 0) {
			buf_append(b, gpuopt_data_files[i].text, gpuopt_data_files[i].len);
			return b->data;
		}
	*why = xstrdup("trace.json: missing from the data files");
	return NULL;
}

static bool fail(char **why, const char *where, const char *what)
{
	*why = xasprintf("trace.json: %s: %s", where, what);
	return false;
}

static bool load_doc(struct trace_config *c, char **why)
{
	json_t *th = json_object_get(c->doc, "thresholds");
	if (!json_is_object(th))
		return fail(why, "thresholds", "missing");
	for (int i = 0; i < TH_COUNT; i++) {
		json_t *e = json_object_get(th, trace_threshold_names[i]);
		json_t *v = json_object_get(e, "value");
		if (!json_is_number(v))
			return fail(why, trace_threshold_names[i], "missing, or without a numeric value");
		c->th[i] = json_number_value(v);
		c->th_about[i] = str_field(e, "about");
	}
	json_t *rules = json_object_get(c->doc, "rules");
	for (size_t i = 0; i < json_array_size(rules); i++) {
		json_t *r = json_array_get(rules, i);
		const char *name = str_field(r, "name");
		for (int k = 0; name && k < R_COUNT; k++)
			if (strcmp(name, trace_rule_names[k]) == 0)
				c->rules[k] = (struct trace_rule_text){name, str_field(r, "severity"),
					str_field(r, "summary"), str_field(r, "evidence"), str_field(r, "fix")};
	}
	for (int k = 0; k < R_COUNT; k++) {
		struct trace_rule_text *r = &c->rules[k];
		if (!r->name || !r->severity || !r->summary || !r->evidence || !r->fix)
			return fail(why, trace_rule_names[k], "rule missing, or without severity, summary, evidence and fix");
	}
	json_t *pr = json_object_get(c->doc, "pinned_rates_gbps");
	if (!json_is_number(json_object_get(pr, "H2D")) || !json_is_number(json_object_get(pr, "D2H")))
		return fail(why, "pinned_rates_gbps", "needs H2D and D2H numbers");
	c->pinned_gbps[0] = json_number_value(json_object_get(pr, "H2D"));
	c->pinned_gbps[1] = json_number_value(json_object_get(pr, "D2H"));
	c->pinned_source = str_field(pr, "source");
	json_t *a = json_object_get(c->doc, "subscribers");
	c->subscribers = xcalloc(json_array_size(a) + 1, sizeof *c->subscribers);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		struct trace_subscriber s = {str_field(e, "match"), str_field(e, "tool")};
		if (!s.match || !s.tool)
			return fail(why, "subscribers", "an entry needs 'match' and 'tool'");
		c->subscribers[c->nsubscribers++] = s;
	}
	a = json_object_get(c->doc, "nvtx_fallbacks");
	c->nvtx = xcalloc(json_array_size(a) + 1, sizeof *c->nvtx);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		struct trace_nvtx_fallback f = {str_field(e, "library"), str_field(e, "domain"),
						str_field(e, "slow"), str_field(e, "fast")};
		if (!f.library || !f.domain || !f.slow)
			return fail(why, "nvtx_fallbacks", "an entry needs 'library', 'domain' and 'slow'");
		c->nvtx[c->nnvtx++] = f;
	}
	a = json_object_get(c->doc, "log_patterns");
	c->patterns = xcalloc(json_array_size(a) + 1, sizeof *c->patterns);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		struct trace_log_pattern *p = &c->patterns[c->npatterns];
		p->library = str_field(e, "library");
		p->kind = str_field(e, "kind");
		p->text = str_field(e, "regex");
		p->name_group = (int)json_integer_value(json_object_get(e, "name"));
		p->reason_group = (int)json_integer_value(json_object_get(e, "reason"));
		if (!p->library || !p->kind || !p->text || p->name_group < 0 || p->name_group > 9 ||
		    p->reason_group < 0 || p->reason_group > 9)
			return fail(why, "log_patterns", "an entry needs library, kind, regex and name / reason groups 0-9");
		if (regcomp(&p->re, p->text, REG_EXTENDED) != 0)
			return fail(why, "log_patterns", "a regex does not compile");
		c->npatterns++;
	}
	return true;
}

bool trace_config_load(struct trace_config *c, char **why)
{
	memset(c, 0, sizeof *c);
	*why = NULL;
	struct buf b = {0};
	if (!load_text(&b, why)) {
		buf_free(&b);
		return false;
	}
	json_error_t err;
	c->doc = json_loadb(b.data, b.len, 0, &err);
	buf_free(&b);
	if (!c->doc) {
		*why = xasprintf("trace.json: line %d: %s", err.line, err.text);
		return false;
	}
	if (!load_doc(c, why)) {
		trace_config_free(c);
		return false;
	}
	return true;
}

bool trace_config_set(struct trace_config *c, const char *assignment, char **why)
{
	const char *eq = strchr(assignment, '=');
	if (!eq) {
		*why = xasprintf("--set '%s': expected NAME=VALUE", assignment);
		return false;
	}
	for (int i = 0; i < TH_COUNT; i++) {
		size_t n = strlen(trace_threshold_names[i]);
		if ((size_t)(eq - assignment) != n || strncmp(assignment, trace_threshold_names[i], n) != 0)
			continue;
		char *end;
		double v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !isfinite(v) || v < 0) {
			*why = xasprintf("--set %s: '%s' is not a finite non-negative number", trace_threshold_names[i],
					 eq + 1);
			return false;
		}
		/* a share of something: memory_near_capacity, min_rule_share, ... */
		const char *name = trace_threshold_names[i];
		if ((str_ends_with(name, "_share") || str_ends_with(name, "_capacity")) && v > 1) {
			*why = xasprintf("--set %s: '%s' is a share, between 0 and 1", name, eq + 1);
			return false;
		}
		c->th[i] = v;
		return true;
	}
	*why = xasprintf("--set: unknown threshold '%.*s' (`gpuopt trace rules` lists them)",
			 (int)(eq - assignment), assignment);
	return false;
}

void trace_config_free(struct trace_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npatterns; i++)
		regfree(&c->patterns[i].re);
	free(c->patterns);
	free(c->subscribers);
	free(c->nvtx);
	json_decref(c->doc);
	memset(c, 0, sizeof *c);
}

const char *trace_config_subscriber(const struct trace_config *c, const char *path)
{
	for (size_t i = 0; i < c->nsubscribers; i++)
		if (strstr(path, c->subscribers[i].match))
			return c->subscribers[i].tool;
	return NULL;
}
