/* kb: the knowledge base — rules (data/rules.json) and which calls of which
 * CPU library have which GPU path (data/knowledge/ files), loaded once and
 * read-only afterwards, so any number of scanner threads may share it.
 *
 * All strings point into the parsed JSON documents the kb owns; they live
 * until kb_free(). */
#ifndef GPUOPT_KB_H
#define GPUOPT_KB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/data.h"

enum severity { SEV_NOTE, SEV_WARNING, SEV_ERROR, SEV_NONE };
const char *severity_name(enum severity s);
/* Parses "note" / "warning" / "error" / "never"; returns false if unknown. */
bool severity_parse(const char *s, enum severity *out);

struct rule {
	const char *id, *name, *category, *summary, *why, *before, *after;
	enum severity severity;
	size_t index; /* position in kb->rules (SARIF ruleIndex) */
};

enum policy { POL_IGNORE, POL_PORT, POL_NOGPU };

enum fb_kind { FB_PRESENT, FB_EQUALS, FB_NOT_IN, FB_CALLABLE, FB_PREFIX, FB_IS };

/* What a call does to the host/device data path (anti-pattern rules). */
enum effect {
	EF_NONE,
	EF_GPU,            /* launches GPU work */
	EF_D2H,            /* copies device -> host (and so synchronizes) */
	EF_H2D,            /* copies host -> device */
	EF_H2D_IF_DEVICE,  /* copies host -> device when its device_if holds */
	EF_SYNC,           /* waits for the GPU */
	EF_CLOCK,          /* reads a wall clock */
	EF_TIMEIT,         /* times a callable */
};

struct kb_fallback {
	const char *arg;
	int pos; /* -1: keyword only */
	enum fb_kind kind;
	json_t *values;  /* FB_EQUALS / FB_NOT_IN / FB_PREFIX / FB_IS: array (borrowed) */
	json_t *def;     /* the library's default value, or NULL */
	const char *why;
};

struct kb_library;

struct kb_entry {
	const char *name;      /* qualified name, or a glob pattern, or an import's module */
	bool is_pattern;
	bool ignore;
	bool quiet;            /* ignore, and not even a CPU-helper note (test helpers) */
	bool gpu;
	const struct rule *rule;
	bool has_target;       /* the entry names its own target (maybe null) */
	const char *target;
	const char *message, *fix, *why, *gpu_name, *returns, *library;
	/* what the flow model must know beyond the effect: "array-module" (returns
	 * the array module of its argument), "devspec" (a torch device), "zero-copy"
	 * (wraps device data without a copy), "kernel" (a compiled GPU kernel),
	 * "host" (returns host data), "converts" (a NumPy function that converts
	 * its argument, so CuPy refuses it), or NULL */
	const char *flow;
	/* "fills": the call writes data of type fills_type into its argument at
	 * fills_pos (f.readinto(buf)); fills_type NULL: none */
	const char *fills_type;
	int fills_pos;
	/* "by_arg_type": {"pos": N, "types": {TYPE: {"rule", "target", "message", "fix"}}}:
	 * a finding of its own when that argument holds a value of TYPE (borrowed) */
	json_t *by_arg_type;
	struct kb_fallback *fallbacks;
	size_t nfallbacks;
	enum effect effect;
	bool has_device_if;
	struct kb_fallback device_if; /* when it holds, the result is device_returns */
	const char *device_returns;
	const struct kb_library *lib;
};

struct kb_library {
	const char *file, *id, *display, *source;
	const char *target, *message, *fix, *headline_fix, *notebook_fix;
	const char *returns; /* type of what unlisted calls return, or NULL */
	bool verdicts;       /* every call gets a verdict (GPU209 helper, GPU900 unknown) */
	bool passes_device;  /* "device_arrays": "pass-through": device arrays given to it stay as
				they are (Dask's CuPy-backed chunks, meta=cupy.ndarray), no GPU604 */
	bool converts_device; /* "device_arrays": "converts": it makes NumPy arrays of what it is
				 given (matplotlib), lists of device values too: GPU604 */
	const struct rule *rule;
	const struct rule *no_gpu_rule;
	const char *no_gpu_message, *no_gpu_fix;
	enum policy unlisted_classes, unlisted_functions, unlisted_methods;
	const char **prefix_from, **prefix_to;
	size_t nprefix;
	json_t *exact; /* name -> integer index into entries */
	struct kb_entry *entries;
	size_t nentries;
	struct kb_entry **patterns; /* longest first */
	size_t npatterns;
	struct kb_entry *imports;
	size_t nimports;
};

struct kb_type {
	const char *name;
	const struct kb_library *lib;
	enum policy methods;
	bool device;             /* values of this type live in GPU memory */
	bool returns_self;       /* unlisted methods return this type */
	json_t *host_attributes; /* attributes that are host metadata (array) */
	json_t *host_methods;    /* methods that return host metadata (size(), dim(), ...) */
	json_t *module_methods;  /* method -> "device" / "none": no tensor has it, so the value the
				    model took for one is a module (model.parameters(), model.eval()):
				    no GPU work; "device": its result is on the device */
	json_t *attributes;      /* attribute -> the type of its value (object), or NULL */
	const char *items;       /* the type of value[key], or NULL */
	bool mask_sync;          /* "mask_indexing": "sync": x[bool_mask] (get or set) waits for the GPU */
	bool mask_sync_read;     /* "read-sync": only a read, x[bool_mask], waits (a write may not) */
};

struct kb {
	json_t **docs;
	size_t ndocs;
	struct rule *rules;
	size_t nrules;
	struct kb_library *libs;
	size_t nlibs;
	json_t *module_index; /* top-level module -> integer index into libs */
	struct kb_type *types;
	size_t ntypes;
	uint64_t digest; /* hash of every data file's text (cache keys) */
};

/* Loads the kb from GPUOPT_DATA_DIR if set, else from the compiled-in files.
 * Returns NULL and sets *why (owned) when a file is missing or malformed;
 * the message names the file and the entry. */
struct kb *kb_load(char **why);
/* Loads from an explicit list of (name, text) files; used by kb_load and tests. */
struct kb *kb_load_files(const struct data_file *files, size_t n, char **why);
void kb_free(struct kb *kb); /* accepts NULL */

const struct rule *kb_rule(const struct kb *kb, const char *id_or_name); /* NULL kb: NULL */
/* The library whose modules include the first component of qualname. */
const struct kb_library *kb_library_for(const struct kb *kb, const char *qualname);
/* The entry for a qualified name in lib: exact match first, then patterns. */
const struct kb_entry *kb_lookup(const struct kb_library *lib, const char *qualname);
const struct kb_type *kb_type(const struct kb *kb, const char *name);
/* The import entry whose module equals `module` or is a package above it. */
const struct kb_entry *kb_import(const struct kb *kb, const char *module);

/* The GPU name of a CPU name by the library's gpu_prefix (owned), or NULL. */
char *kb_gpu_name(const struct kb_library *lib, const struct kb_entry *e, const char *qualname);

#endif
