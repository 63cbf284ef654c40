/* imports: what a Python file imports, read from its syntax tree — every
 * `import a.b as c` and `from a import b` (in any block: functions, `try`,
 * `if`; several modules on one line; relative imports with their dots) and
 * the dynamic forms with a literal name (`importlib.import_module("x")`,
 * `import_module("x")`, `__import__("x")`), each with its line. gpuopt try
 * asks it which candidates run GPU code and which project modules a script
 * reads, instead of reading import lines by hand. */
#ifndef GPUOPT_SCAN_IMPORTS_H
#define GPUOPT_SCAN_IMPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python/source.h"

struct py_import {
	char *module;   /* "numpy", "numba" (from numba import cuda), ".helper", ".." (owned) */
	char *name;     /* from-imports: the name imported ("cuda"; "*"), else NULL (owned) */
	uint32_t line;  /* 1-based, in the file (a notebook: its joined code) */
	bool dynamic;   /* importlib.import_module / __import__ with a literal name */
};

struct py_imports {
	struct py_import *items;
	size_t n, cap;
};

struct pyscanner;

/* Reads src's imports into out (appended). False with *why (owned) when the
 * parser gave up (time limit). */
bool pyscan_imports(struct pyscanner *ps, const struct source *src, struct py_imports *out, char **why);

/* Loads path (a .py file or a notebook) and reads its imports with a
 * scanner of its own. False with *why (owned, naming the file). */
bool py_imports_of_file(const char *path, struct py_imports *out, char **why);

void py_imports_free(struct py_imports *x); /* accepts a zeroed one; leaves it zeroed */

/* Does the import bring in module `mod` or one of its submodules ("cupy"
 * matches `import cupy.random`, `from cupy import asarray`; "numba.cuda"
 * matches `from numba import cuda` and `import numba.cuda`, not `import
 * numba`)? Relative imports never match. */
bool py_import_is(const struct py_import *im, const char *mod);

#endif
