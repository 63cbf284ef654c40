/* flow: the flow-sensitive model of the values in a file's GPU code, the
 * layer under the GPU anti-pattern rules.
 *
 * It interprets the file abstractly, statement by statement in order: an
 * abstract value per name (host or device array or scalar, a device object
 * such as a stream or a torch device, a module or array module, a function,
 * a class instance, a tuple, unknown) with the line it came from; branches
 * are merged (a value that may be on the device is taken to be); loops are
 * iterated until the names stop changing (at most FLOW_LOOP_ROUNDS); a call
 * to a function of the file is analysed with the values its call site
 * passes (results, tuples included, memoised per call signature); a call
 * into another module of the project takes that module's summary from the
 * project (project.h). Library facts come from the kb: what returns device
 * data, what copies, what is zero-copy, what synchronizes, what reads a
 * clock (the knowledge files: "effect", "returns", "flow").
 *
 * The rules are passes over the model: flow_run() hands every event (a copy
 * to the host, a copy to the device, a truth test of a device value, a
 * clock read, a CPU function given device data, a loop) to each pass of a
 * table, with the place it happens (loop depth, the loop that makes it hot,
 * whether it is throttled). Nothing here knows a rule id.
 *
 * It also fills a summary of the file for the project pass: the functions it
 * defines (what they return, whether they leave GPU work pending) and every
 * call to a function, with the loop it sits in and the values passed. */
#ifndef GPUOPT_FLOW_H
#define GPUOPT_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "kb.h"
#include "nodes.h"
#include "python/source.h"

enum vkind {
	V_UNKNOWN = 0,
	V_NONE,          /* None */
	V_HOST_SCALAR,   /* a Python or NumPy scalar, a string, a bool on the host */
	V_HOST_ARRAY,    /* numpy.ndarray, a CPU torch tensor */
	V_DEVICE_SCALAR, /* a 0-d device array / tensor (a reduction's result) */
	V_DEVICE_ARRAY,  /* cupy.ndarray, a CUDA torch tensor, a numba device array */
	V_DEVICE_OBJECT, /* a stream, an event, a cupy.cuda.Device */
	V_DEVSPEC,       /* a torch device or device string; GPU: may name a GPU */
	V_QUAL,          /* a module, library function or class: qual names it */
	V_ARRAY_MODULE,  /* numpy or cupy (xp = cupy.get_array_module(x)); GPU: may be cupy */
	V_FUNCTION,      /* a function of this file: ref (and ref2, one of two) */
	V_CLASS,         /* a class of this file: ref */
	V_INSTANCE,      /* an instance of a class: ref (this file) or qual (project) */
	V_TUPLE,         /* ref indexes the tuple arena, n elements */
};

enum vfam { FAM_NONE = 0, FAM_CUPY, FAM_TORCH, FAM_NUMBA, FAM_JAX };

#define VF_GPU 1u      /* V_DEVSPEC / V_ARRAY_MODULE: may be the GPU; V_INSTANCE: a module moved there */
#define VF_OPAQUE 2u   /* V_FUNCTION: wrapped by a decorator gpuopt does not know */
#define VF_FRESH 4u    /* an array made in place by a constructor (torch.ones(n)) */
#define VF_BACK 8u     /* host data copied from the device (line: where) */
#define VF_CONST 16u   /* a host integer whose value (ival) is known */
#define VF_MASK 32u    /* a boolean device array: a comparison's result, ~ / & / | of masks */
#define VF_ELEMS 64u   /* V_TUPLE: a list of like values (a comprehension, a list that grew), its
                        * one element standing for any of them: xs[i] is it */
#define VF_DICT 128u   /* with VF_ELEMS: a dict of such values (iterated, its keys) */

struct val {
	uint8_t kind;   /* enum vkind */
	uint8_t fam;    /* enum vfam: the device library, for device values */
	uint8_t flags;  /* VF_* */
	uint8_t n;      /* V_TUPLE: elements */
	int32_t ref;    /* see enum vkind; -1 none */
	int32_t ref2;   /* V_FUNCTION: the other function of a join, or -1 */
	const char *qual; /* interned: V_QUAL / V_INSTANCE (project class) name, kb type */
	uint32_t line;  /* where the value was made (1-based, as the user sees it) */
	int64_t ival;   /* VF_CONST: the integer */
};

bool val_on_device(const struct val *v); /* a device array or scalar */
/* The same value as far as the model tells values apart (not where it was
 * made, nor a known integer). */
bool val_eq(const struct val *a, const struct val *b);

/* Where an event happens. */
struct flow_place {
	uint32_t depth;      /* hot loops around it in its function */
	uint32_t loop_line;  /* the innermost hot loop, or the loop that calls the function */
	uint32_t loop_cell;
	bool throttled;      /* under `if i % n == 0`, a first-iteration test or a verbosity flag */
	bool in_stream;      /* inside `with stream:` (work queued on a stream on purpose) */
	bool hot_func;       /* the function runs from a loop (here or in another module) */
	const char *func;    /* the function's name, or NULL at module level */
	const char *via;     /* the file of the loop when it is another module's, or NULL */
};

enum flow_ev {
	FE_D2H,         /* a device->host copy or implicit sync: what, value */
	FE_TRUTH,       /* a device value tested for truth (if, while, and/or/not, assert) */
	FE_H2D,         /* a host->device copy of `data` (the node), data_invariant, back_line */
	FE_CLOCK,       /* a clock read after GPU work (gpu_line) with no sync between */
	FE_TIMEIT,      /* timeit of GPU work that is not waited for */
	FE_CPU_CALL,    /* a CPU library function (entry, lib) given a device value (at = the argument) */
	FE_FOR,         /* a for loop or comprehension over range(): the rule looks at it */
};

struct flow_event {
	enum flow_ev kind;
	PNode at;                   /* where to report */
	PNode node;                 /* FE_H2D: the data; FE_FOR: the loop; FE_CPU_CALL: the call */
	const char *what;           /* the callee or construct, for messages */
	struct val value;           /* the device value involved */
	bool async;                 /* FE_D2H: blocking=False / out= / on a stream */
	bool interface;             /* FE_D2H: the action handed to a CPU environment (env.step) */
	bool retested;              /* FE_D2H: a value the test of the if around it read back already */
	bool elems;                 /* FE_CPU_CALL: the argument is a list of device values */
	bool data_invariant;        /* FE_H2D: the same data every iteration */
	uint32_t gpu_line;          /* FE_CLOCK: the latest GPU work */
	uint32_t back_line;         /* FE_H2D: the data came from the device at this line in the loop */
	const struct kb_library *lib;   /* FE_CPU_CALL */
	const struct kb_entry *entry;   /* FE_CPU_CALL (may be NULL: unlisted) */
	struct flow_place place;
};

struct flow;

/* A pass: one rule family. on_event may be NULL. */
struct flow_pass {
	const char *name;
	void (*on_event)(struct flow *f, const struct flow_event *ev, void *ctx);
};

/* A call recorded for the project pass: from a function of this file (NULL:
 * module level) to a name (a qualified name, or ".method" for a method
 * called on a value gpuopt cannot name), in a hot loop at loop_line (0: not
 * in a loop), with the values of the first FLOW_SUM_ARGS arguments. */
#define FLOW_SUM_ARGS 6
struct flow_call {
	const char *caller, *callee;
	uint32_t loop_line, loop_cell;
	struct val args[FLOW_SUM_ARGS];
	uint8_t nargs;
	bool throttled;
};

/* A function (or method) this file defines, as the project sees it. */
struct flow_func {
	const char *qual;      /* module.func or module.Class.method */
	const char *name;      /* its own name */
	struct val ret;        /* what it returns (joined over its returns) */
	bool ret_parts;        /* it returns a tuple, list or dict, whose parts do not cross files */
	bool does_gpu, ends_pending;
	bool is_class, is_method;
};

struct flow_summary {
	struct flow_func *funcs;
	size_t nfuncs;
	struct flow_call *calls;
	size_t ncalls;
};

struct project; /* project.h */

/* Where flow_run stopped for its work budget (a bound on the nodes it
 * evaluates per file): past it values are unknown and the passes see no
 * more events, so findings of the GPU rules past it may be missing. */
struct flow_stop {
	uint32_t line, cell; /* 1-based line (in its cell, cell 1-based, in a notebook; else cell 0);
			      * line 0: the budget did not run out */
	char *func;          /* owned: the function being analysed then ("Class.method"), NULL at
			      * module level */
};

struct flow_options {
	const struct kb *kb;
	const struct nodeinfo *ni;
	const struct source *src;
	const char *module;        /* this file's module name (project.h), or NULL */
	const struct project *project; /* cross-module facts, or NULL */
	const struct flow_pass *passes;
	size_t npasses;
	void *pass_ctx;
	struct flow_summary *summary; /* filled when not NULL (the caller frees it) */
	struct flow_stop *stop;       /* filled when not NULL (zeroed first; the caller frees func) */
};

/* Runs the model over the tree; events go to the passes. */
void flow_run(const struct flow_options *o, PNode root);

/* For the passes: the node kind, text and position of a node. */
const struct nodeinfo *flow_nodes(const struct flow *f);
const char *flow_text(const struct flow *f, PNode n, size_t *len);
uint32_t flow_user_line(const struct flow *f, PNode n, uint32_t *cell);
/* The value a name has at this point (V_UNKNOWN when unbound). */
struct val flow_lookup(const struct flow *f, const char *name, size_t len);
/* The value of an expression, evaluated without events. */
struct val flow_peek(struct flow *f, PNode expr);
/* The source being analysed. */
const struct source *flow_source(const struct flow *f);

void flow_summary_free(struct flow_summary *s); /* accepts a zeroed summary */

#endif
