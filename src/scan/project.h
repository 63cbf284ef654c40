/* project: what the modules of one scan know about each other, so that a
 * loop in one file that calls a helper in another ranks the helper hot and
 * passes it the values it is called with (issue 14: "loops in another
 * file").
 *
 * scan.c first analyses every file that uses a GPU library (a pre-pass) and
 * adds each file's flow summary here; project_finish() then follows the
 * calls: a function called from a loop, or from a function that is hot, is
 * hot, with the loop that makes it so; the values passed to a function are
 * joined over its call sites. The flow model of each file then asks for the
 * facts of the names it imports (project_func). A name is matched by its
 * dotted suffix ("tomocupy.processing.retrieve_phase.paganin_filter" finds
 * the function of src/tomocupy/processing/retrieve_phase.py), and a method
 * called on a value gpuopt cannot type (".update") by its name among the
 * project's methods. Read-only after project_finish, so workers share it. */
#ifndef GPUOPT_PROJECT_H
#define GPUOPT_PROJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "flow.h"

struct project_func {
	const char *qual;      /* module.func or module.Class.method (owned by the project) */
	const char *name;
	const char *path;      /* its file */
	struct val ret;
	bool ret_parts;        /* flow_func's */
	bool does_gpu, ends_pending, is_method;
	bool hot;              /* runs from a loop (of any module) */
	uint32_t hot_line, hot_cell;
	const char *hot_path;  /* the file of that loop */
	struct val args[FLOW_SUM_ARGS]; /* joined over the call sites that name it */
	uint8_t nargs;
	bool called;           /* some call site names it */
};

struct project;

struct project *project_new(void);
void project_free(struct project *p); /* accepts NULL */

/* The module name of a file: its path without the extension, '/' -> '.'
 * ("src/tomocupy/rec.py" -> "src.tomocupy.rec"); owned by the caller. */
char *project_module_name(const char *path);

/* Adds a file's summary (copied). Not after project_finish. */
void project_add(struct project *p, const char *path, const char *module, const struct flow_summary *s);
/* Follows the calls: hot functions and the values passed, to a fixed point. */
void project_finish(struct project *p);

/* The function a qualified name (or a module's own qual) names, or NULL. */
const struct project_func *project_func(const struct project *p, const char *qual);
/* Is qual a class of the project (so calling it makes an instance)? */
bool project_is_class(const struct project *p, const char *qual);
size_t project_size(const struct project *p); /* functions known */

#endif
