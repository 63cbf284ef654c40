/* pyscan_int: the walker's private state, shared by the parts that work on
 * it, which call downward only:
 *   pyscan.c       the driver: parse, walk the tree, run the flow model and
 *                  its passes on GPU code, rank, sort;
 *   rules_lib.c    library findings (ports, no GPU path, fallbacks, imports);
 *   rules_loops.c  element-wise Python loops (GPU605);
 *   names.c        scopes, bindings, resolution, the file's functions, findings.
 * The GPU anti-pattern rules are passes over the flow model (flow.h,
 * rules_gpu.h), which does not use this state. Nothing here is visible
 * outside the scanner. */
#ifndef GPUOPT_PYSCAN_INT_H
#define GPUOPT_PYSCAN_INT_H

#include <tree_sitter/api.h>

#include "python/pyparse.h"
#include "nodes.h"
#include "pyscan.h"
#include "python/pytree.h"
#include "core/symtab.h"
#include "core/util.h"

struct pyscanner {
	const struct kb *kb;
	struct pyparser *fast;     /* the fast parser */
	struct pt_tree tree;       /* the tree of the file being scanned, reused across files */
	struct nodeinfo ni;        /* node kinds and fields of the grammar */
	const struct rule *fallback_rule;
	const struct rule *helper_rule;  /* GPU209: a CPU call with nothing to port */
	const struct rule *unknown_rule; /* GPU900: a call the knowledge has no fact about */
	const struct rule *loop_rule;    /* GPU605: a Python loop over array elements */
	bool keep_text;
	bool force_flow;
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
	PNode def;           /* the function_definition */
	uint32_t hot_line;   /* a loop that calls it (directly or not), or 0 */
	uint32_t hot_cell;   /* notebooks: that loop's cell */
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

/* One function body (or the module) being walked. */
struct frame {
	int func;            /* index in funcs, -1 for the module */
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
	int pass;            /* 1, then 2..3 while call sites teach new parameter types */
	uint32_t pyloop_until; /* inside a reported python-loop nest up to this byte */
};

/* Result of resolving an expression. */
enum rkind { R_NONE, R_QUAL, R_VALUE, R_MEMBER };
struct res {
	enum rkind kind;
	char *name; /* owned: a qualified name, a type, or TYPE.member */
};

/* names.c */
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
uint32_t user_line(const struct ctx *c, PNode n, uint32_t *cell);
void push_scope(struct ctx *c, bool is_class);
void pop_scope(struct ctx *c);
void names_bind(struct ctx *c, const char *name, size_t len, enum bkind k, const char *qual, int func);
void bind_node(struct ctx *c, PNode id, enum bkind k, const char *qual);
int function_record(struct ctx *c, PNode def);
void funcs_free(struct ctx *c);
/* A call to a function of this file: where (hot paths) and the argument types. */
void record_local_call(struct ctx *c, PNode call);
void bind_params(struct ctx *c, PNode params, const struct funcrec *f);
void shadow_targets(struct ctx *c, PNode t, int depth);
void visit_assignment(struct ctx *c, PNode a);
void visit_return(struct ctx *c, PNode ret);
void commit_return(struct ctx *c, int f);
void visit_with_item(struct ctx *c, PNode item);
void visit_named_expr(struct ctx *c, PNode n);

/* Parses src into ps->tree (the fast parser, else tree-sitter). False with
 * *why (owned) when the parser gave up (time limit). pt_clear the tree after. */
bool pyscan_parse(struct pyscanner *ps, const struct source *src, char **why);

/* rules_lib.c */
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

/* rules_loops.c */
void loops_enter_for(struct ctx *c, PNode n);
void loops_enter_comprehension(struct ctx *c, PNode n);

#endif
