/* kb: see kb.h. Loading validates structure and reports the first problem
 * as "FILE: ENTRY: problem"; the build-time checker (tools/embed.py) runs the
 * same checks earlier, so compiled-in data never fails here. */
#include "kb.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/fileio.h"
#include "core/util.h"

static const char *const targets[] = {
	"cupy", "cudf.pandas", "cudf", "cuml.accel", "cuml", "nx-cugraph", "cugraph", "cucim",
	"cuvs", "kvikio", "numba-cuda", "numba-cuda-mlir", "warp", "newton", "raft", "dask",
};

const char *severity_name(enum severity s)
{
	switch (s) {
	case SEV_NOTE: return "note";
	case SEV_WARNING: return "warning";
	case SEV_ERROR: return "error";
	default: return "never";
	}
}

bool severity_parse(const char *s, enum severity *out)
{
	static const char *const names[] = {"note", "warning", "error", "never"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum severity)i;
			return true;
		}
	return false;
}

static const char *jstr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Checks an optional target value; returns false if it is not a known one. */
static bool valid_target(json_t *v)
{
	if (json_is_null(v))
		return true;
	if (!json_is_string(v))
		return false;
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
		if (strcmp(json_string_value(v), targets[i]) == 0)
			return true;
	return false;
}

static bool parse_policy(const char *s, enum policy *out)
{
	if (!s)
		return true;
	if (strcmp(s, "port") == 0)
		*out = POL_PORT;
	else if (strcmp(s, "no-gpu") == 0)
		*out = POL_NOGPU;
	else if (strcmp(s, "ignore") == 0)
		*out = POL_IGNORE;
	else
		return false;
	return true;
}

const struct rule *kb_rule(const struct kb *kb, const char *id)
{
	for (size_t i = 0; kb && i < kb->nrules; i++)
		if (strcasecmp(kb->rules[i].id, id) == 0 || strcmp(kb->rules[i].name, id) == 0)
			return &kb->rules[i];
	return NULL;
}

static char *load_rules(struct kb *kb, json_t *doc)
{
	json_t *arr = json_object_get(doc, "rules");
	if (!json_is_array(arr))
		return xstrdup("rules.json: file: no \"rules\" array");
	kb->nrules = json_array_size(arr);
	kb->rules = xcalloc(kb->nrules, sizeof *kb->rules);
	for (size_t i = 0; i < kb->nrules; i++) {
		json_t *r = json_array_get(arr, i);
		struct rule *ru = &kb->rules[i];
		ru->index = i;
		ru->id = jstr(r, "id");
		ru->name = jstr(r, "name");
		ru->category = jstr(r, "category");
		ru->summary = jstr(r, "summary");
		ru->why = jstr(r, "why");
		ru->before = jstr(r, "before");
		ru->after = jstr(r, "after");
		const char *sev = jstr(r, "severity");
		if (!ru->id || !ru->name || !ru->category || !ru->summary || !sev ||
		    !severity_parse(sev, &ru->severity) || ru->severity == SEV_NONE)
			return xasprintf("rules.json: rule #%zu: needs id, name, category, summary and a severity of note/warning/error", i + 1);
	}
	return NULL;
}

/* A condition on one argument (a fallback, or device_if); n numbers it in
 * messages (0: the device_if). */
static char *load_condition(const struct kb_library *lib, const char *where, json_t *f,
			    struct kb_fallback *fb, size_t n)
{
	fb->arg = jstr(f, "arg");
	json_t *pos = json_object_get(f, "pos");
	fb->pos = json_is_integer(pos) ? (int)json_integer_value(pos) : -1;
	fb->why = jstr(f, "why");
	fb->def = json_object_get(f, "default");
	int k = 0;
	if (json_object_get(f, "present")) { fb->kind = FB_PRESENT; k++; }
	if (json_object_get(f, "callable")) { fb->kind = FB_CALLABLE; k++; }
	if ((fb->values = json_object_get(f, "equals"))) { fb->kind = FB_EQUALS; k++; }
	json_t *ni = json_object_get(f, "not_in");
	if (ni) { fb->kind = FB_NOT_IN; fb->values = ni; k++; }
	json_t *pre = json_object_get(f, "prefix");
	if (pre) { fb->kind = FB_PREFIX; fb->values = pre; k++; }
	json_t *is = json_object_get(f, "is");
	if (is) { fb->kind = FB_IS; fb->values = is; k++; }
	if (!fb->arg || k != 1 ||
	    ((fb->kind == FB_EQUALS || fb->kind == FB_NOT_IN || fb->kind == FB_PREFIX ||
	      fb->kind == FB_IS) &&
	     !json_is_array(fb->values))) {
		if (n)
			return xasprintf("%s: %s: fallback #%zu needs \"arg\" and one of present/equals/not_in/callable/prefix/is",
					 lib->file, where, n);
		return xasprintf("%s: %s: device_if needs \"arg\" and one of present/equals/not_in/callable/prefix/is",
				 lib->file, where);
	}
	return NULL;
}

static char *load_entry(const struct kb *kb, struct kb_library *lib, json_t *e,
			struct kb_entry *out, const char *namekey)
{
	const char *where = jstr(e, namekey);
	if (!json_is_object(e) || !where)
		return xasprintf("%s: entry without \"%s\"", lib->file, namekey);
	out->name = where;
	out->is_pattern = strpbrk(where, "*?[") != NULL;
	out->lib = lib;
	out->ignore = json_is_true(json_object_get(e, "ignore"));
	out->quiet = json_is_true(json_object_get(e, "quiet"));
	json_t *gpu = json_object_get(e, "gpu");
	out->gpu = !json_is_false(gpu);
	const char *rule = jstr(e, "rule");
	if (rule && !(out->rule = kb_rule(kb, rule)))
		return xasprintf("%s: %s: unknown rule '%s'", lib->file, where, rule);
	json_t *t = json_object_get(e, "target");
	if (t) {
		if (!valid_target(t))
			return xasprintf("%s: %s: unknown target", lib->file, where);
		out->has_target = true;
		out->target = json_string_value(t);
	}
	out->message = jstr(e, "message");
	out->fix = jstr(e, "fix");
	out->why = jstr(e, "why");
	out->gpu_name = jstr(e, "gpu_name");
	out->returns = jstr(e, "returns");
	out->library = jstr(e, "library");
	out->flow = jstr(e, "flow");
	json_t *fills = json_object_get(e, "fills");
	if (fills) {
		out->fills_type = jstr(fills, "type");
		json_t *fp = json_object_get(fills, "pos");
		if (!out->fills_type || !json_is_integer(fp))
			return xasprintf("%s: %s: \"fills\" needs \"pos\" and \"type\"", lib->file, where);
		out->fills_pos = (int)json_integer_value(fp);
	}
	out->by_arg_type = json_object_get(e, "by_arg_type");
	if (out->by_arg_type) {
		json_t *types = json_object_get(out->by_arg_type, "types");
		const char *tn;
		json_t *spec;
		if (!json_is_integer(json_object_get(out->by_arg_type, "pos")) || !json_is_object(types))
			return xasprintf("%s: %s: \"by_arg_type\" needs \"pos\" and a \"types\" object", lib->file, where);
		json_object_foreach(types, tn, spec) {
			const char *r = jstr(spec, "rule");
			if (!r || !kb_rule(kb, r) || !valid_target(json_object_get(spec, "target")) || !jstr(spec, "message"))
				return xasprintf("%s: %s: by_arg_type.%s needs a known rule, a target and a message", lib->file, where, tn);
		}
	}
	static const char *const flows[] = {"array-module", "devspec", "zero-copy", "kernel", "host", "converts",
					    "device-constructor", "iterates", "same", "to-device", "mask", "reduces"};
	bool known_flow = out->flow == NULL;
	for (size_t i = 0; out->flow && i < sizeof flows / sizeof *flows; i++)
		known_flow |= strcmp(out->flow, flows[i]) == 0;
	if (!known_flow)
		return xasprintf("%s: %s: unknown flow '%s'", lib->file, where, out->flow);
	static const char *const effects[] = {"", "gpu", "d2h", "h2d", "h2d-if-device", "sync", "clock", "timeit"};
	const char *eff = jstr(e, "effect");
	for (size_t i = 1; eff && i < sizeof effects / sizeof *effects; i++)
		if (strcmp(eff, effects[i]) == 0)
			out->effect = (enum effect)i;
	if (eff && out->effect == EF_NONE)
		return xasprintf("%s: %s: unknown effect '%s'", lib->file, where, eff);
	json_t *dif = json_object_get(e, "device_if");
	out->device_returns = jstr(e, "device_returns");
	if (dif) {
		char *err = load_condition(lib, where, dif, &out->device_if, 0);
		if (err)
			return err;
		out->has_device_if = true;
	}
	if ((dif != NULL) != (out->device_returns != NULL))
		return xasprintf("%s: %s: device_if and device_returns go together", lib->file, where);
	json_t *fbs = json_object_get(e, "fallback");
	if (fbs && !json_is_array(fbs))
		return xasprintf("%s: %s: \"fallback\" is not an array", lib->file, where);
	out->nfallbacks = json_array_size(fbs);
	out->fallbacks = xcalloc(out->nfallbacks, sizeof *out->fallbacks);
	for (size_t i = 0; i < out->nfallbacks; i++) {
		char *err = load_condition(lib, where, json_array_get(fbs, i), &out->fallbacks[i], i + 1);
		if (err)
			return err;
	}
	return NULL;
}

static int pattern_cmp(const void *a, const void *b)
{
	const struct kb_entry *x = *(const struct kb_entry *const *)a;
	const struct kb_entry *y = *(const struct kb_entry *const *)b;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	return lx < ly ? 1 : lx > ly ? -1 : strcmp(x->name, y->name);
}

static char *load_library(struct kb *kb, size_t li, const char *file, json_t *doc)
{
	struct kb_library *lib = &kb->libs[li];
	lib->file = file;
	lib->id = jstr(doc, "library");
	lib->display = jstr(doc, "display");
	lib->source = jstr(doc, "source");
	json_t *mods = json_object_get(doc, "modules");
	if (!lib->id || !lib->source || !json_is_array(mods))
		return xasprintf("%s: file: needs \"library\", \"modules\" and \"source\"", file);
	if (!lib->display)
		lib->display = lib->id;
	json_t *t = json_object_get(doc, "target");
	if (t && !valid_target(t))
		return xasprintf("%s: file: unknown target", file);
	lib->target = json_string_value(t);
	lib->message = jstr(doc, "message");
	lib->fix = jstr(doc, "fix");
	lib->headline_fix = jstr(doc, "headline_fix");
	lib->notebook_fix = jstr(doc, "notebook_fix");
	lib->returns = jstr(doc, "returns");
	lib->verdicts = json_is_true(json_object_get(doc, "verdicts"));
	const char *da = jstr(doc, "device_arrays");
	if (da && strcmp(da, "pass-through") && strcmp(da, "converts"))
		return xasprintf("%s: file: \"device_arrays\" is \"pass-through\" or \"converts\"", file);
	lib->passes_device = da && !strcmp(da, "pass-through");
	lib->converts_device = da && !strcmp(da, "converts");
	const char *rule = jstr(doc, "rule");
	if (rule && !(lib->rule = kb_rule(kb, rule)))
		return xasprintf("%s: file: unknown rule '%s'", file, rule);
	json_t *ng = json_object_get(doc, "no_gpu");
	if (ng) {
		const char *r = jstr(ng, "rule");
		if (!r || !(lib->no_gpu_rule = kb_rule(kb, r)))
			return xasprintf("%s: no_gpu: unknown rule", file);
		lib->no_gpu_message = jstr(ng, "message");
		lib->no_gpu_fix = jstr(ng, "fix");
	}
	lib->unlisted_classes = lib->unlisted_functions = lib->unlisted_methods = POL_IGNORE;
	json_t *ul = json_object_get(doc, "unlisted");
	if (!parse_policy(jstr(ul, "classes"), &lib->unlisted_classes) ||
	    !parse_policy(jstr(ul, "functions"), &lib->unlisted_functions) ||
	    !parse_policy(jstr(ul, "methods"), &lib->unlisted_methods))
		return xasprintf("%s: unlisted: a policy is not port/no-gpu/ignore", file);
	json_t *pre = json_object_get(doc, "gpu_prefix");
	lib->nprefix = json_array_size(pre);
	lib->prefix_from = xcalloc(lib->nprefix, sizeof(char *));
	lib->prefix_to = xcalloc(lib->nprefix, sizeof(char *));
	for (size_t i = 0; i < lib->nprefix; i++) {
		json_t *p = json_array_get(pre, i);
		lib->prefix_from[i] = json_string_value(json_array_get(p, 0));
		lib->prefix_to[i] = json_string_value(json_array_get(p, 1));
		if (!lib->prefix_from[i] || !lib->prefix_to[i])
			return xasprintf("%s: gpu_prefix: each item is [\"from.\", \"to.\"]", file);
	}
	size_t mi;
	json_t *m;
	json_array_foreach(mods, mi, m) {
		if (!json_is_string(m))
			return xasprintf("%s: modules: not a string", file);
		if (json_object_get(kb->module_index, json_string_value(m)))
			return xasprintf("%s: modules: '%s' is claimed by two files", file, json_string_value(m));
		json_object_set_new(kb->module_index, json_string_value(m), json_integer((json_int_t)li));
	}
	json_t *apis = json_object_get(doc, "apis");
	lib->nentries = json_array_size(apis);
	lib->entries = xcalloc(lib->nentries, sizeof *lib->entries);
	lib->patterns = xcalloc(lib->nentries, sizeof *lib->patterns);
	lib->exact = json_object();
	for (size_t i = 0; i < lib->nentries; i++) {
		struct kb_entry *e = &lib->entries[i];
		char *err = load_entry(kb, lib, json_array_get(apis, i), e, "name");
		if (err)
			return err;
		if (e->is_pattern)
			lib->patterns[lib->npatterns++] = e;
		else if (json_object_get(lib->exact, e->name))
			return xasprintf("%s: %s: duplicate name", file, e->name);
		else
			json_object_set_new(lib->exact, e->name, json_integer((json_int_t)i));
	}
	qsort(lib->patterns, lib->npatterns, sizeof *lib->patterns, pattern_cmp);
	json_t *imps = json_object_get(doc, "imports");
	lib->nimports = json_array_size(imps);
	lib->imports = xcalloc(lib->nimports, sizeof *lib->imports);
	for (size_t i = 0; i < lib->nimports; i++) {
		char *err = load_entry(kb, lib, json_array_get(imps, i), &lib->imports[i], "module");
		if (err)
			return err;
		if (!lib->imports[i].rule)
			return xasprintf("%s: %s: an import entry needs a rule", file, lib->imports[i].name);
	}
	return NULL;
}

static char *load_types(struct kb *kb)
{
	size_t n = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		n = 0;
		for (size_t li = 0; li < kb->nlibs; li++) {
			json_t *types = json_object_get(kb->docs[li + 1], "types");
			const char *name;
			json_t *spec;
			json_object_foreach(types, name, spec) {
				if (pass == 1) {
					struct kb_type *t = &kb->types[n];
					t->name = name;
					t->lib = &kb->libs[li];
					t->methods = POL_IGNORE;
					if (!parse_policy(jstr(spec, "methods"), &t->methods))
						return xasprintf("%s: types.%s: bad methods policy", kb->libs[li].file, name);
					t->device = json_is_true(json_object_get(spec, "device"));
					const char *ret = jstr(spec, "returns");
					t->returns_self = ret && strcmp(ret, "self") == 0;
					t->host_attributes = json_object_get(spec, "host_attributes");
					t->host_methods = json_object_get(spec, "host_methods");
					t->module_methods = json_object_get(spec, "module_methods");
					if (t->module_methods && !json_is_object(t->module_methods))
						return xasprintf("%s: types.%s: module_methods: an object", kb->libs[li].file, name);
					t->attributes = json_object_get(spec, "attributes");
					t->items = jstr(spec, "items");
					const char *mi = jstr(spec, "mask_indexing");
					if (mi && strcmp(mi, "sync") != 0 && strcmp(mi, "read-sync") != 0)
						return xasprintf("%s: types.%s: mask_indexing: \"sync\" or \"read-sync\"",
								 kb->libs[li].file, name);
					t->mask_sync = mi && !strcmp(mi, "sync");
					t->mask_sync_read = mi != NULL;
				}
				n++;
			}
		}
		if (pass == 0)
			kb->types = xcalloc(n, sizeof *kb->types);
	}
	kb->ntypes = n;
	return NULL;
}

static struct kb *load_kb_files(const struct data_file *files, size_t n, char **why);

/* The data files also hold other parts' files (trace.json): the kb is
 * rules.json and knowledge/ alone. */
struct kb *kb_load_files(const struct data_file *all, size_t nall, char **why)
{
	struct data_file *files = xcalloc(nall ? nall : 1, sizeof *files);
	size_t n = 0;
	for (size_t i = 0; i < nall; i++)
		if (strcmp(all[i].name, "rules.json") == 0 || str_starts_with(all[i].name, "knowledge/"))
			files[n++] = all[i];
	struct kb *kb = load_kb_files(files, n, why);
	free(files);
	return kb;
}

static struct kb *load_kb_files(const struct data_file *files, size_t n, char **why)
{
	*why = NULL;
	struct kb *kb = xcalloc(1, sizeof *kb);
	kb->docs = xcalloc(n ? n : 1, sizeof *kb->docs);
	kb->module_index = json_object();
	/* docs[0] is rules.json; the knowledge files follow in the given order. */
	size_t rules_at = n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(files[i].name, "rules.json") == 0)
			rules_at = i;
	if (rules_at == n) {
		*why = xstrdup("rules.json: file: missing");
		goto fail;
	}
	XXH64_hash_t digest = 0;
	for (size_t i = 0; i < n; i++)
		digest = XXH3_64bits_withSeed(files[i].text, files[i].len, digest);
	kb->digest = digest;
	for (size_t i = 0, slot = 1; i < n; i++) {
		json_error_t jerr;
		json_t *doc = json_loadb(files[i].text, files[i].len, 0, &jerr);
		if (!doc) {
			*why = xasprintf("%s: line %d: %s", files[i].name, jerr.line, jerr.text);
			goto fail;
		}
		kb->docs[i == rules_at ? 0 : slot++] = doc;
		kb->ndocs++;
	}
	if ((*why = load_rules(kb, kb->docs[0])))
		goto fail;
	kb->nlibs = n - 1;
	kb->libs = xcalloc(kb->nlibs, sizeof *kb->libs);
	for (size_t i = 0, li = 0; i < n; i++) {
		if (i == rules_at)
			continue;
		if ((*why = load_library(kb, li, files[i].name, kb->docs[li + 1])))
			goto fail;
		li++;
	}
	if ((*why = load_types(kb)))
		goto fail;
	return kb;
fail:
	kb_free(kb);
	return NULL;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct data_file *)a)->name, ((const struct data_file *)b)->name);
}

struct kb *kb_load(char **why)
{
	const char *dir = getenv("GPUOPT_DATA_DIR");
	if (!dir || !*dir) {
		/* rules.json and knowledge/: the other data files are not the kb's */
		struct data_file *mine = xcalloc(gpuopt_data_file_count, sizeof *mine);
		size_t n = 0;
		for (size_t i = 0; i < gpuopt_data_file_count; i++)
			if (strcmp(gpuopt_data_files[i].name, "rules.json") == 0 ||
			    str_starts_with(gpuopt_data_files[i].name, "knowledge/"))
				mine[n++] = gpuopt_data_files[i];
		struct kb *kb = kb_load_files(mine, n, why);
		free(mine);
		return kb;
	}
	/* Read rules.json and knowledge/ *.json from disk. */
	struct ptrvec names = {0};
	ptrvec_push(&names, xstrdup("rules.json"));
	char *kdir = xasprintf("%s/knowledge", dir);
	DIR *d = opendir(kdir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (str_ends_with(de->d_name, ".json"))
				ptrvec_push(&names, xasprintf("knowledge/%s", de->d_name));
		closedir(d);
	}
	free(kdir);
	struct data_file *files = xcalloc(names.len, sizeof *files);
	struct buf *bufs = xcalloc(names.len, sizeof *bufs);
	struct kb *kb = NULL;
	*why = NULL;
	for (size_t i = 0; i < names.len; i++) {
		char *path = xasprintf("%s/%s", dir, (char *)names.items[i]);
		char *err;
		if (!read_file(path, 64u << 20, &bufs[i], &err)) {
			*why = xasprintf("cannot read '%s': %s", path, err);
			free(err);
			free(path);
			goto out;
		}
		free(path);
		files[i].name = names.items[i];
		files[i].text = bufs[i].data;
		files[i].len = bufs[i].len;
	}
	qsort(files + 1, names.len - 1, sizeof *files, name_cmp);
	kb = kb_load_files(files, names.len, why);
out:
	/* The kb keeps only parsed JSON, so the file texts can go. */
	for (size_t i = 0; i < names.len; i++) {
		buf_free(&bufs[i]);
		free(names.items[i]);
	}
	free(bufs);
	free(files);
	ptrvec_free(&names);
	return kb;
}

void kb_free(struct kb *kb)
{
	if (!kb)
		return;
	for (size_t i = 0; i < kb->nlibs; i++) {
		struct kb_library *lib = &kb->libs[i];
		for (size_t j = 0; j < lib->nentries; j++)
			free(lib->entries[j].fallbacks);
		for (size_t j = 0; j < lib->nimports; j++)
			free(lib->imports[j].fallbacks);
		free(lib->entries);
		free(lib->patterns);
		free(lib->imports);
		free(lib->prefix_from);
		free(lib->prefix_to);
		json_decref(lib->exact);
	}
	free(kb->libs);
	free(kb->rules);
	free(kb->types);
	for (size_t i = 0; i < kb->ndocs; i++)
		json_decref(kb->docs[i]);
	free(kb->docs);
	json_decref(kb->module_index);
	free(kb);
}

const struct kb_library *kb_library_for(const struct kb *kb, const char *qualname)
{
	char top[128];
	size_t n = strcspn(qualname, ".");
	if (n >= sizeof top)
		return NULL;
	memcpy(top, qualname, n);
	top[n] = '\0';
	json_t *v = json_object_get(kb->module_index, top);
	return v ? &kb->libs[json_integer_value(v)] : NULL;
}

const struct kb_entry *kb_lookup(const struct kb_library *lib, const char *qualname)
{
	json_t *v = json_object_get(lib->exact, qualname);
	if (v)
		return &lib->entries[json_integer_value(v)];
	for (size_t i = 0; i < lib->npatterns; i++)
		if (fnmatch(lib->patterns[i]->name, qualname, 0) == 0)
			return lib->patterns[i];
	return NULL;
}

const struct kb_type *kb_type(const struct kb *kb, const char *name)
{
	for (size_t i = 0; i < kb->ntypes; i++)
		if (strcmp(kb->types[i].name, name) == 0)
			return &kb->types[i];
	return NULL;
}

const struct kb_entry *kb_import(const struct kb *kb, const char *module)
{
	const struct kb_library *lib = kb_library_for(kb, module);
	if (!lib)
		return NULL;
	const struct kb_entry *best = NULL;
	for (size_t i = 0; i < lib->nimports; i++) {
		const char *m = lib->imports[i].name;
		size_t n = strlen(m);
		if (strncmp(module, m, n) == 0 && (module[n] == '\0' || module[n] == '.') &&
		    (!best || n > strlen(best->name)))
			best = &lib->imports[i];
	}
	return best;
}

char *kb_gpu_name(const struct kb_library *lib, const struct kb_entry *e, const char *qualname)
{
	if (e && e->gpu_name)
		return xstrdup(e->gpu_name);
	for (size_t i = 0; i < lib->nprefix; i++)
		if (str_starts_with(qualname, lib->prefix_from[i]))
			return xasprintf("%s%s", lib->prefix_to[i], qualname + strlen(lib->prefix_from[i]));
	return NULL;
}
