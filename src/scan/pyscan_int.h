/* pyscan_int: the scanner's private state, shared by its three parts:
 *   pyscan.c      the walk, scopes and name bindings, resolution, ranking;
 *   pyscan_lib.c  library findings (ports, no GPU path, fallbacks, imports);
 *   pyscan_gpu.c  GPU anti-patterns (round trips, transfers, timing,
 *                 host/device mixing, element-wise Python loops).
 * Nothing here is visible outside the scanner. */
#ifndef GPUOPT_PYSCAN_INT_H
#define GPUOPT_PYSCAN_INT_H

#include <tree_sitter/api.h>

#include "python/pyparse.h"
#include "pyscan.h"
#include "python/pytree.h"
#include "core/symtab.h"
#include "core/util.h"

/* No node (the tree does not matter: pn_* test the id). */
#define PN_NULL ((PNode){NULL, PT_NULL})

enum nk {
	NK_OTHER = 0, NK_CALL, NK_ATTRIBUTE, NK_IDENTIFIER, NK_IMPORT, NK_IMPORT_FROM,
	NK_ALIASED_IMPORT, NK_DOTTED_NAME, NK_WILDCARD_IMPORT, NK_RELATIVE_IMPORT,
	NK_FUNCTION_DEF, NK_CLASS_DEF, NK_LAMBDA, NK_ASSIGNMENT, NK_AUG_ASSIGNMENT, NK_DECORATOR,
	NK_KEYWORD_ARGUMENT, NK_ARGUMENT_LIST, NK_STRING, NK_STRING_CONTENT, NK_INTERPOLATION,
	NK_INTEGER, NK_FLOAT, NK_TRUE, NK_FALSE, NK_NONE, NK_UNARY, NK_PARENTHESIZED,
	NK_FOR, NK_WHILE, NK_IF, NK_SUBSCRIPT, NK_LIST_SPLAT, NK_DICT_SPLAT, NK_EXCEPT, NK_ERROR,
	NK_FUTURE_IMPORT, NK_COMMENT, NK_BINARY, NK_COMPARISON, NK_BOOLEAN, NK_RETURN,
	NK_LIST_COMP, NK_SET_COMP, NK_DICT_COMP, NK_GENERATOR, NK_TUPLE, NK_LIST, NK_NAMED_EXPR,
	NK_PATTERN_LIST, NK_TUPLE_PATTERN, NK_AS_PATTERN, NK_WITH_ITEM, NK_SLICE, NK_DECORATED_DEF,
	NK_COUNT
};

enum field { F_FUNCTION, F_ARGUMENTS, F_OBJECT, F_ATTRIBUTE, F_NAME, F_ALIAS, F_MODULE_NAME,
	     F_PARAMETERS, F_LEFT, F_RIGHT, F_VALUE, F_ARGUMENT, F_BODY, F_CONDITION,
	     F_SUBSCRIPT, F_OPERATOR, F_COUNT };

struct pyscanner {
	const struct kb *kb;
	TSParser *parser;          /* the fallback parser (syntax errors, what pyparse declines) */
	struct pyparser *fast;     /* the fast parser */
	struct pt_tree tree;       /* the tree of the file being scanned, reused across files */
	uint8_t *kinds; /* symbol id -> enum nk */
	uint32_t nsymbols;
	TSFieldId fields[F_COUNT];
	const struct rule *fallback_rule;
	const struct rule *anti[5]; /* GPU601..GPU605 */
	bool keep_text;
};

struct scope {
	struct symtab tab;
	bool is_class;
	struct ptrvec stars; /* owned module names from `from M import *` */
};

/* An enclosing loop: a for/while body, or a comprehension. */
struct loopframe {
	PNode node;  /* the body (or comprehension) the frame covers */
	PNode stmt;  /* the for/while statement or comprehension */
	uint32_t line, cell; /* where the user sees it (cell: notebooks, else 0) */
};

/* A function defined in the file: what the rules learn about it. */
struct funcrec {
	char *name;
	uint32_t hot_line;   /* a loop that calls it (directly or not), or 0 */
	uint32_t hot_cell;   /* notebooks: that loop's cell */
	bool does_gpu;       /* launches GPU work */
	bool ends_pending;   /* returns with GPU work not waited for */
	char *ret_type;      /* the one type all its returns have (last pass), or NULL */
	char *ret_next;      /* the same, collected in this pass */
	bool ret_mixed;
	char **param_names;  /* positional parameters, in order */
	char **param_types;  /* the type every call site passed (last pass), or NULL */
	char **param_next;   /* the same, collected in this pass */
	bool *param_mixed;
	size_t nparams;
	bool jitted;         /* compiled by a JIT decorator (numba.jit, ...): loops are not Python */
};

/* A call from one function of the file (-1: module level) to another. */
struct callrec {
	int caller;
	int callee;
	uint32_t loop_line; /* innermost loop around the call, or 0 */
	uint32_t loop_cell;
};

/* Timing and GPU-work state of one function body (or the module). */
struct frame {
	int func;            /* index in funcs, -1 for the module */
	bool pending;        /* GPU work launched and not waited for */
	bool clock_started;  /* a clock was read in this body */
	bool gpu_since_clock;
	bool did_gpu;        /* launched GPU work somewhere in the body */
	uint32_t gpu_line;   /* the latest GPU work */
};

struct ctx {
	const struct pyscanner *ps;
	const struct kb *kb;
	const struct source *src;
	const char *text;
	struct scan_result *out;
	struct scope *scopes;
	size_t nscopes, capscopes;
	int except_depth;
	const struct kb_entry *imported[32]; /* import entries already reported */
	size_t nimported;
	/* the ancestors of the node being visited, and the slot (in tree.kids)
	 * of the child of each that the walk is in */
	PNode *anc;
	uint32_t *ancslot;
	size_t nanc, capanc;
	struct loopframe *loops;
	size_t nloops, caploops;
	struct frame *frames;
	size_t nframes, capframes;
	struct funcrec *funcs;
	size_t nfuncs, capfuncs;
	size_t funcs_seen;   /* functions defined so far in this pass */
	struct callrec *calls;
	size_t ncalls, capcalls;
	bool array_file;     /* the file imports an array library */
	bool gpu_file;       /* the file imports a GPU array library */
	int pass;            /* 1, then 2..3 while call sites teach new parameter types */
	uint32_t pyloop_until; /* inside a reported python-loop nest up to this byte */
};

/* Result of resolving an expression. */
enum rkind { R_NONE, R_QUAL, R_VALUE, R_MEMBER };
struct res {
	enum rkind kind;
	char *name; /* owned: a qualified name, a type, or TYPE.member */
};

/* pyscan.c */
enum nk node_kind(const struct ctx *c, PNode n);
PNode node_field(const struct ctx *c, PNode n, enum field f);
const char *node_text(const struct ctx *c, PNode n, size_t *len);
bool node_text_is(const struct ctx *c, PNode n, const char *s);
const struct binding *scope_lookup(const struct ctx *c, const char *name, size_t len);
void scope_bind_qual(struct ctx *c, const char *name, size_t len, const char *qual);
void scope_bind_node_qual(struct ctx *c, PNode id, const char *qual);
void scope_add_star(struct ctx *c, const char *module);
struct res resolve(struct ctx *c, PNode n, int depth);
/* resolve() for a value: members become the value they read, or nothing. */
struct res resolve_value(struct ctx *c, PNode n);
const struct kb_type *device_type(const struct ctx *c, const struct res *r);
char *member_type(const char *member);
struct finding *add_finding(struct ctx *c, PNode at, const struct rule *rule,
			    const char *library, const char *display, const char *target,
			    const char *symbol);
int current_func(const struct ctx *c);
uint32_t node_line(PNode n);
/* Ends a finding's span where node `end` ends. */
void finding_end_at(struct ctx *c, struct finding *f, PNode end);
/* Frees the strings a finding owns (not the finding). */
void finding_free(struct finding *f);

/* pyscan_lib.c */
void lib_visit_call(struct ctx *c, PNode call, PNode callee, PNode args);
void lib_visit_import(struct ctx *c, PNode stmt);
void lib_visit_import_from(struct ctx *c, PNode stmt);
/* Does a fallback-style condition hold for this call? *value gets the
 * argument's text (owned) when it does. */
bool condition_holds(struct ctx *c, PNode args, const struct kb_fallback *fb, PNode *at,
		     char **value);
char *expand_template(const char *tmpl, const char *name, const char *why, const char *script);
/* The kb entry for a resolved callee (NULL if none), its library and, for a
 * method on a typed value, the type. */
const struct kb_entry *callee_entry(const struct ctx *c, const struct res *r,
				    const struct kb_library **lib_out, const struct kb_type **type_out);

/* pyscan_gpu.c */
void gpu_after_call(struct ctx *c, PNode call);
void gpu_after_binary(struct ctx *c, PNode n);
void gpu_check_condition(struct ctx *c, PNode cond);
void gpu_enter_for(struct ctx *c, PNode n);
void gpu_leave_function(struct ctx *c, int func);

#endif
