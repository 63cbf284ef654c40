/* rules_lib: library findings. Each call site into a CPU library with a
 * GPU path becomes at most one finding: a port (the smallest GPU path and
 * its first step), no GPU path (with the reason), or a CPU fallback forced
 * by an argument. Imports of legacy libraries and GPU frameworks are
 * reported once per file at the import. All knowledge comes from the kb. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pyscan_int.h"

/* ---- templates ---- */

struct tvars {
	const char *name, *short_name, *gpu_name, *target, *arg, *value, *why, *script, *library;
};

/* Fills {placeholders} of tmpl from v; unknown ones stay as they are. */
static char *expand(const char *tmpl, const struct tvars *v)
{
	struct buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (*p == '{') {
			const char *end = strchr(p, '}');
			if (end) {
				size_t n = (size_t)(end - p - 1);
				const char *val = NULL;
#define VAR(key, field) if (n == strlen(key) && strncmp(p + 1, key, n) == 0) val = v->field ? v->field : "";
				VAR("name", name) VAR("short", short_name) VAR("gpu_name", gpu_name)
				VAR("target", target) VAR("arg", arg) VAR("value", value) VAR("why", why)
				VAR("script", script) VAR("library", library)
#undef VAR
				if (val) {
					buf_puts(&b, val);
					p = end + 1;
					continue;
				}
			}
		}
		buf_putc(&b, *p++);
	}
	/* A template whose {why} was empty must not end in a dangling colon. */
	while (b.len && (b.data[b.len - 1] == ' ' || b.data[b.len - 1] == ':'))
		b.data[--b.len] = '\0';
	return buf_steal(&b);
}

char *expand_template(const char *tmpl, const char *name, const char *why, const char *script)
{
	struct tvars v = {.name = name, .short_name = name, .why = why, .script = script};
	return expand(tmpl, &v);
}

static const char *script_name(const struct ctx *c)
{
	return strcmp(c->src->path, "-") == 0 ? "script.py" : c->src->path;
}

static const char *fix_template(const struct ctx *c, const struct kb_library *lib,
				const struct kb_entry *e)
{
	if (e && e->fix)
		return e->fix;
	if (c->src->notebook && lib->notebook_fix)
		return lib->notebook_fix;
	return lib->fix;
}

/* ---- argument conditions ---- */

/* The argument node for fb in an argument_list, or a null node. *unknown is
 * set when splats make presence impossible to know. */
static PNode find_arg(const struct ctx *c, PNode args, const struct kb_fallback *fb, bool *unknown)
{
	PNode none = PN_NULL;
	*unknown = false;
	if (node_kind(c, args) != NK_ARGUMENT_LIST)
		return none;
	uint32_t n = pn_named_child_count(args);
	int pos = 0;
	bool splat = false;
	for (uint32_t i = 0; i < n; i++) {
		PNode a = pn_named_child(args, i);
		enum nk k = node_kind(c, a);
		if (k == NK_KEYWORD_ARGUMENT) {
			if (node_text_is(c, node_field(c, a, F_NAME), fb->arg))
				return a;
		} else if (k == NK_LIST_SPLAT || k == NK_DICT_SPLAT) {
			splat = true;
		} else if (k != NK_COMMENT && k != NK_ERROR) {
			if (!splat && fb->pos >= 0 && pos == fb->pos)
				return a;
			pos++;
		}
	}
	*unknown = splat;
	return none;
}

/* A literal argument value as JSON (owned), or NULL when not a literal. */
static json_t *literal(const struct ctx *c, PNode v)
{
	size_t len;
	const char *s;
	switch (node_kind(c, v)) {
	case NK_TRUE: return json_true();
	case NK_FALSE: return json_false();
	case NK_NONE: return json_null();
	case NK_INTEGER:
	case NK_FLOAT: {
		s = node_text(c, v, &len);
		char tmp[64];
		if (len >= sizeof tmp)
			return NULL;
		memcpy(tmp, s, len);
		tmp[len] = '\0';
		char *end;
		if (node_kind(c, v) == NK_INTEGER) {
			long long i = strtoll(tmp, &end, 10);
			if (!*end)
				return json_integer(i);
		}
		double d = strtod(tmp, &end);
		return *end ? NULL : json_real(d);
	}
	case NK_UNARY: {
		json_t *inner = literal(c, node_field(c, v, F_ARGUMENT));
		s = node_text(c, v, &len);
		if (inner && json_is_real(inner) && len && s[0] == '-') {
			json_real_set(inner, -json_real_value(inner));
			return inner;
		}
		if (inner && json_is_integer(inner) && len && s[0] == '-') {
			json_integer_set(inner, -json_integer_value(inner));
			return inner;
		}
		json_decref(inner);
		return NULL;
	}
	case NK_STRING: {
		struct buf b = {0};
		uint32_t n = pn_named_child_count(v);
		for (uint32_t i = 0; i < n; i++) {
			PNode ch = pn_named_child(v, i);
			if (node_kind(c, ch) == NK_INTERPOLATION) {
				buf_free(&b);
				return NULL;
			}
			if (node_kind(c, ch) == NK_STRING_CONTENT) {
				s = node_text(c, ch, &len);
				buf_append(&b, s, len);
			}
		}
		json_t *j = json_stringn(b.data ? b.data : "", b.len);
		buf_free(&b);
		return j;
	}
	default:
		return NULL;
	}
}

static bool json_same(json_t *a, json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal(a, b);
}

static bool value_in(json_t *v, json_t *values)
{
	size_t i;
	json_t *x;
	json_array_foreach(values, i, x)
		if (json_same(v, x))
			return true;
	return false;
}

/* Whether literal V is of one of TYPES ("int", "float", "str", "bool", "null"). */
static bool is_type(json_t *v, json_t *types)
{
	const char *t = json_is_integer(v) ? "int" : json_is_real(v) ? "float"
		      : json_is_string(v) ? "str" : json_is_boolean(v) ? "bool" : "null";
	size_t i;
	json_t *x;
	json_array_foreach(types, i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), t))
			return true;
	return false;
}

static bool has_prefix(json_t *v, json_t *prefixes)
{
	if (!json_is_string(v))
		return false;
	size_t i;
	json_t *x;
	json_array_foreach(prefixes, i, x)
		if (json_is_string(x) && str_starts_with(json_string_value(v), json_string_value(x)))
			return true;
	return false;
}

static char *arg_text(const struct ctx *c, PNode v)
{
	size_t len;
	const char *s = node_text(c, v, &len);
	if (len > 60) {
		len = 60;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	return xstrndup(s, len);
}

bool condition_holds(struct ctx *c, PNode args, const struct kb_fallback *fb, PNode *at,
		     char **value)
{
	bool unknown;
	PNode a = find_arg(c, args, fb, &unknown);
	*at = a;
	*value = NULL;
	PNode v = a;
	if (!pn_is_null(a) && node_kind(c, a) == NK_KEYWORD_ARGUMENT)
		v = node_field(c, a, F_VALUE);
	if (fb->kind == FB_PRESENT) {
		if (pn_is_null(a))
			return false;
		*value = arg_text(c, v);
		return true;
	}
	if (fb->kind == FB_CALLABLE) {
		if (pn_is_null(a))
			return false;
		bool callable = node_kind(c, v) == NK_LAMBDA;
		if (node_kind(c, v) == NK_IDENTIFIER) {
			size_t len;
			const char *s = node_text(c, v, &len);
			const struct binding *b = scope_lookup(c, s, len);
			callable = b && b->kind == B_FUNC;
		}
		if (callable)
			*value = arg_text(c, v);
		return callable;
	}
	json_t *lit;
	if (pn_is_null(a)) {
		if (unknown || !fb->def)
			return false;
		lit = json_incref(fb->def);
	} else if (!(lit = literal(c, v))) {
		return false;
	}
	bool holds = fb->kind == FB_EQUALS ? value_in(lit, fb->values)
		   : fb->kind == FB_PREFIX ? has_prefix(lit, fb->values)
		   : fb->kind == FB_IS ? is_type(lit, fb->values)
		   : !value_in(lit, fb->values);
	if (holds) {
		if (pn_is_null(a)) {
			char *d = json_dumps(lit, JSON_ENCODE_ANY);
			*value = xasprintf("%s (the default)", d ? d : "?");
			free(d);
		} else {
			*value = arg_text(c, v);
		}
	}
	json_decref(lit);
	return holds;
}

/* ---- call sites ---- */

enum site { SITE_FUNCTION, SITE_CLASS, SITE_METHOD };

static void emit(struct ctx *c, PNode at, const struct kb_library *lib, const struct kb_entry *e,
		 const char *qualname, bool gpu, const struct kb_fallback *fb, PNode fb_at,
		 const char *fb_value)
{
	const struct rule *rule;
	const char *target, *msg_t, *fix_t;
	const char *lib_target = e && e->has_target ? e->target : lib->target;
	const char *why = fb ? fb->why : e ? e->why : NULL;
	if (fb) {
		rule = c->ps->fallback_rule;
		target = NULL;
		msg_t = why ? "{short}: {arg}={value} makes {target} fall back to the CPU: {why}"
			    : "{short}: {arg}={value} makes {target} fall back to the CPU";
		fix_t = "keep this call on the CPU; dropping {arg}={value} would change what the call computes, "
			"so do it only if a result without it is still the one you need (then check it with gpuopt verify)";
	} else if (gpu) {
		rule = e && e->rule ? e->rule : lib->rule;
		target = lib_target;
		msg_t = e && e->message ? e->message : lib->message ? lib->message : "{name} has a GPU path: {target}";
		fix_t = fix_template(c, lib, e);
	} else {
		rule = e && e->rule ? e->rule : lib->no_gpu_rule;
		target = NULL;
		msg_t = e && e->message ? e->message
			: lib->no_gpu_message ? lib->no_gpu_message
			: why ? "{name} has no GPU path in {target}: {why}" : "{name} has no GPU path in {target}";
		fix_t = e && e->fix ? e->fix : lib->no_gpu_fix;
	}
	if (!rule)
		return;
	const char *dot = strrchr(qualname, '.');
	char *gpu_name = kb_gpu_name(lib, e, qualname);
	struct tvars v = {
		.name = qualname, .short_name = dot ? dot + 1 : qualname, .gpu_name = gpu_name,
		.target = lib_target, .arg = fb ? fb->arg : NULL, .value = fb_value,
		.why = why, .script = script_name(c),
		.library = e && e->library ? e->library : lib->id,
	};
	struct finding *f = add_finding(c, fb && !pn_is_null(fb_at) ? fb_at : at, rule, v.library,
					e && e->library ? e->library : lib->display, target, qualname);
	f->message = expand(msg_t, &v);
	f->fix = fix_t ? expand(fix_t, &v) : NULL;
	if (gpu && !fb && c->ps->keep_text) {
		/* An entry with a target of its own (numpy.fromfile -> kvikio) has its own first step. */
		const char *h = e && e->has_target && e->fix ? e->fix
			      : c->src->notebook && lib->notebook_fix ? lib->notebook_fix
			      : lib->headline_fix ? lib->headline_fix : lib->fix;
		f->headline = h ? expand(h, &v) : NULL;
	}
	free(gpu_name);
}

static enum policy method_policy(const struct kb_library *lib, const struct kb_type *type)
{
	return type ? type->methods : lib->unlisted_methods;
}

/* The length of a pattern's literal prefix, before its first wildcard. */
static size_t literal_prefix(const char *pattern)
{
	return strcspn(pattern, "*?[");
}

const struct kb_entry *callee_entry(const struct ctx *c, const struct res *r,
				    const struct kb_library **lib_out, const struct kb_type **type_out)
{
	const struct kb_library *lib = NULL;
	size_t type_len = 0;
	*type_out = NULL;
	if (r->kind == R_QUAL) {
		lib = kb_library_for(c->kb, r->name);
	} else if (r->kind == R_MEMBER) {
		char *t = member_type(r->name);
		lib = kb_library_for(c->kb, t);
		*type_out = kb_type(c->kb, t);
		type_len = strlen(t);
		free(t);
	}
	*lib_out = lib;
	if (!lib)
		return NULL;
	const struct kb_entry *e = kb_lookup(lib, r->name);
	/* A module-wide "no GPU" pattern (scipy.*) says nothing about methods of
	 * a value: only patterns written for the type itself apply to them. */
	if (e && r->kind == R_MEMBER && e->is_pattern && literal_prefix(e->name) <= type_len)
		e = NULL;
	return e;
}

/* A CPU library gpuopt covers call by call ("verdicts": true), as opposed
 * to a GPU library or one whose calls only type values. */
static bool covered_library(const struct kb_library *lib)
{
	return lib->verdicts;
}

/* Every call into a covered library has a verdict: an "ignore" entry is a
 * CPU helper with nothing to port (GPU209, with the entry's message), a
 * call no entry names is reported as unknown to the knowledge (GPU900). */
static void verdict(struct ctx *c, PNode call, const struct kb_library *lib, const struct kb_entry *e,
		    const char *name, bool unknown)
{
	const struct rule *rule = unknown ? c->ps->unknown_rule : c->ps->helper_rule;
	if (!rule || !covered_library(lib))
		return;
	const char *dot = strrchr(name, '.');
	const char *last = dot ? dot + 1 : name;
	/* raising the library's exceptions, and its private internals (library
	 * code calling itself), call for no verdict */
	if (str_ends_with(last, "Error") || str_ends_with(last, "Exception") || str_ends_with(last, "Warning") ||
	    *last == '_' || strstr(name, "._"))
		return;
	struct tvars v = {.name = name, .short_name = dot ? dot + 1 : name, .why = e ? e->why : NULL,
			  .script = script_name(c), .library = lib->id};
	struct finding *f = add_finding(c, call, rule, lib->id, lib->display, NULL, name);
	const char *msg = unknown ? "gpuopt's knowledge has no fact about {name}: whether it has a GPU path is not known"
		: e && e->message ? e->message
		: e && e->why ? "{name} stays on the CPU and needs no GPU path: {why}"
		: "{name} stays on the CPU and needs no GPU path (it configures, reads, plots or organizes work rather than computing on the data)";
	f->message = expand(msg, &v);
	f->fix = unknown ? xasprintf("nothing to do here; a knowledge entry for %s (data/knowledge/) would give it a verdict", name)
		 : e && e->fix ? expand(e->fix, &v) : NULL;
}

/* numpy.frombuffer(data) where data came from a file or the network: the
 * entry's finding for that kind of data (KvikIO reads it into GPU memory). */
static bool by_arg_type(struct ctx *c, PNode call, PNode args, const struct kb_library *lib,
			const struct kb_entry *e, const char *name)
{
	int pos = (int)json_integer_value(json_object_get(e->by_arg_type, "pos"));
	if (node_kind(c, args) != NK_ARGUMENT_LIST)
		return false;
	PNode a = PN_NULL;
	uint32_t n = pn_named_child_count(args);
	for (uint32_t i = 0, p = 0; i < n; i++) {
		PNode x = pn_named_child(args, i);
		enum nk k = node_kind(c, x);
		if (k == NK_KEYWORD_ARGUMENT || k == NK_LIST_SPLAT || k == NK_DICT_SPLAT)
			break;
		if (k != NK_COMMENT && (int)p++ == pos) {
			a = x;
			break;
		}
	}
	if (pn_is_null(a))
		return false;
	struct res r = resolve_value(c, a);
	json_t *spec = r.kind == R_VALUE ? json_object_get(json_object_get(e->by_arg_type, "types"), r.name) : NULL;
	free(r.name);
	if (!spec)
		return false;
	const struct rule *rule = kb_rule(c->kb, json_string_value(json_object_get(spec, "rule")));
	const char *target = json_string_value(json_object_get(spec, "target"));
	struct tvars v = {.name = name, .short_name = name, .target = target, .script = script_name(c),
			  .library = lib->id};
	struct finding *f = add_finding(c, call, rule, lib->id, lib->display, target, name);
	f->message = expand(json_string_value(json_object_get(spec, "message")), &v);
	const char *fix = json_string_value(json_object_get(spec, "fix"));
	f->fix = fix ? expand(fix, &v) : NULL;
	if (c->ps->keep_text && fix)
		f->headline = expand(fix, &v);
	return true;
}

void lib_visit_call(struct ctx *c, PNode call, PNode callee, PNode args)
{
	struct res r = resolve(c, callee, 0);
	const struct kb_library *lib;
	const struct kb_type *type;
	const struct kb_entry *e = callee_entry(c, &r, &lib, &type);
	if (!lib) {
		free(r.name);
		return;
	}
	/* f.readinto(buf): buf now holds what the file gives */
	if (e && e->fills_type && node_kind(c, args) == NK_ARGUMENT_LIST) {
		PNode a = pn_named_child(args, (uint32_t)e->fills_pos);
		if (node_kind(c, a) == NK_IDENTIFIER)
			bind_node(c, a, B_VALUE, e->fills_type);
	}
	if (e && e->by_arg_type && by_arg_type(c, call, args, lib, e, r.name)) {
		free(r.name);
		return;
	}
	enum site site = SITE_METHOD;
	if (r.kind == R_QUAL) {
		const char *dot = strrchr(r.name, '.');
		site = isupper((unsigned char)(dot ? dot[1] : r.name[0])) ? SITE_CLASS : SITE_FUNCTION;
	}
	if (e) {
		if (e->ignore && site != SITE_METHOD) {
			if (!e->quiet)
				verdict(c, call, lib, e, r.name, false);
		} else if (!e->ignore && !e->gpu) {
			emit(c, call, lib, e, r.name, false, NULL, PN_NULL, NULL);
		} else if (!e->ignore) {
			for (size_t i = 0; i < e->nfallbacks; i++) {
				PNode at;
				char *value;
				if (condition_holds(c, args, &e->fallbacks[i], &at, &value)) {
					emit(c, call, lib, e, r.name, true, &e->fallbacks[i], at, value);
					free(value);
					free(r.name);
					return;
				}
				free(value);
			}
			/* A method entry exists to check its fallbacks (fit's sample_weight);
			 * the call itself counts only where the type's methods are ports. */
			if (site != SITE_METHOD || method_policy(lib, type) == POL_PORT)
				emit(c, call, lib, e, r.name, true, NULL, PN_NULL, NULL);
		}
	} else {
		enum policy p = site == SITE_CLASS ? lib->unlisted_classes
			      : site == SITE_FUNCTION ? lib->unlisted_functions
			      : method_policy(lib, type);
		if (p != POL_IGNORE)
			emit(c, call, lib, NULL, r.name, p == POL_PORT, NULL, PN_NULL, NULL);
		else if (site != SITE_METHOD)
			verdict(c, call, lib, NULL, r.name, true);
	}
	free(r.name);
}

/* ---- imports ---- */

/* Array libraries: the python-loop rule looks only where one is imported. */
static const char *const array_modules[] = {"cupy", "cupyx", "torch", "numba", "numpy", "scipy", "jax"};

static void import_finding(struct ctx *c, PNode stmt, const char *module)
{
	size_t top = strcspn(module, ".");
	for (size_t i = 0; i < sizeof array_modules / sizeof *array_modules; i++)
		if (strlen(array_modules[i]) == top && strncmp(module, array_modules[i], top) == 0)
			c->array_file = true;
	const struct kb_entry *e = kb_import(c->kb, module);
	if (!e)
		return;
	/* One finding per library per file: "this file uses PyTorch" is one fact. */
	for (size_t i = 0; i < c->nimported; i++)
		if (c->imported[i] == e)
			return;
	if (c->nimported < sizeof c->imported / sizeof *c->imported)
		c->imported[c->nimported++] = e;
	const struct kb_library *lib = e->lib;
	const char *target = e->has_target ? e->target : lib->target;
	struct tvars v = {.name = module, .short_name = module, .target = target, .why = e->why,
			  .script = script_name(c), .library = e->library ? e->library : lib->id};
	struct finding *f = add_finding(c, stmt, e->rule, v.library,
					e->library ? e->library : lib->display, target, module);
	f->message = expand(e->message ? e->message : "{name}: {why}", &v);
	const char *fix_t = fix_template(c, lib, e);
	f->fix = fix_t ? expand(fix_t, &v) : NULL;
}

static char *dotted(const struct ctx *c, PNode n)
{
	size_t len;
	const char *s = node_text(c, n, &len);
	/* dotted_name text may hold spaces or comments ("a . b"): keep names only */
	struct buf b = {0};
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			buf_putc(&b, s[i]);
	return buf_steal(&b);
}

void lib_visit_import(struct ctx *c, PNode stmt)
{
	uint32_t n = pn_named_child_count(stmt);
	for (uint32_t i = 0; i < n; i++) {
		PNode ch = pn_named_child(stmt, i);
		enum nk k = node_kind(c, ch);
		if (k == NK_DOTTED_NAME) { /* import a.b.c  binds a */
			char *full = dotted(c, ch);
			size_t top = strcspn(full, ".");
			char *topname = xstrndup(full, top);
			scope_bind_qual(c, topname, top, topname);
			import_finding(c, stmt, full);
			free(topname);
			free(full);
		} else if (k == NK_ALIASED_IMPORT) { /* import a.b as x  binds x = a.b */
			char *full = dotted(c, node_field(c, ch, F_NAME));
			scope_bind_node_qual(c, node_field(c, ch, F_ALIAS), full);
			import_finding(c, stmt, full);
			free(full);
		}
	}
}

void lib_visit_import_from(struct ctx *c, PNode stmt)
{
	PNode mod = node_field(c, stmt, F_MODULE_NAME);
	if (node_kind(c, mod) != NK_DOTTED_NAME)
		return; /* relative imports name this project's own modules */
	char *base = dotted(c, mod);
	uint32_t n = pn_named_child_count(stmt);
	for (uint32_t i = 0; i < n; i++) {
		PNode ch = pn_named_child(stmt, i);
		if (pn_eq(ch, mod))
			continue;
		enum nk k = node_kind(c, ch);
		PNode name_node = ch, alias = ch;
		if (k == NK_WILDCARD_IMPORT) {
			scope_add_star(c, base);
			import_finding(c, stmt, base);
			continue;
		}
		if (k == NK_ALIASED_IMPORT) {
			name_node = node_field(c, ch, F_NAME);
			alias = node_field(c, ch, F_ALIAS);
		} else if (k != NK_DOTTED_NAME) {
			continue;
		}
		char *name = dotted(c, name_node);
		char *full = xasprintf("%s.%s", base, name);
		if (k == NK_ALIASED_IMPORT)
			scope_bind_node_qual(c, alias, full);
		else
			scope_bind_qual(c, name, strlen(name), full);
		import_finding(c, stmt, full);
		free(name);
		free(full);
	}
	free(base);
}
