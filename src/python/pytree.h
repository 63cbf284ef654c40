/* pytree: the compact Python syntax tree the scanner walks.
 *
 * Its nodes are tree-sitter-python's (grammar 0.23.6): the same symbols and
 * field ids, byte ranges and row/column points, so a tree made by the fast
 * hand-written parser (pyparse.c) and one copied from tree-sitter
 * (pytree_from_ts, the fallback, which also carries syntax errors) are equal
 * node for node. Kept: every named node except extras (comments, line
 * continuations), and the anonymous tokens that fill a field (operators, the
 * commas of a for_in_clause's `right`). Dropped: other anonymous tokens
 * (keywords, punctuation), which the scanner never looks at.
 *
 * Nodes live in one array; a node's children are a contiguous run of the
 * kids array, in source order. Children are added before their parent
 * (bottom-up), so the root is the last node added. */
#ifndef GPUOPT_PYTREE_H
#define GPUOPT_PYTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#define PT_NULL UINT32_MAX

enum { PT_NAMED = 1, PT_ERROR = 2 /* ERROR or MISSING below or here */, PT_MISSING = 4 };

struct pt_point {
	uint32_t row, col; /* 0-based; col in bytes, as tree-sitter */
};

struct pt_node {
	uint32_t start, end; /* byte range */
	struct pt_point sp, ep;
	uint32_t parent;     /* PT_NULL for the root */
	uint32_t kids;       /* first child's slot in pt_tree.kids */
	uint32_t nkids;      /* kept children */
	uint32_t nnamed;     /* of which named */
	uint16_t sym;        /* tree-sitter-python symbol id */
	uint16_t field;      /* field id in the parent; 0 = none */
	uint8_t flags;       /* PT_* */
};

/* Owns nodes and kids. */
struct pt_tree {
	struct pt_node *nodes;
	uint32_t n, cap;
	uint32_t *kids;
	uint32_t nk, capk;
	uint32_t root;        /* PT_NULL while empty */
	uint32_t first_error; /* first ERROR / MISSING node in source order, or PT_NULL */
};

/* A node handle, passed by value like TSNode. id == PT_NULL: no node. */
typedef struct {
	const struct pt_tree *t;
	uint32_t id;
} PNode;

/* ---- building ---- */

void pt_init(struct pt_tree *t);
void pt_free(struct pt_tree *t);  /* accepts a zeroed tree; leaves it zeroed */
void pt_clear(struct pt_tree *t); /* empty, keeping the memory for the next file */

struct pt_span {
	uint32_t start, end;
	struct pt_point sp, ep;
};

/* Adds a node spanning `span` whose children are kids[0..n) (already added,
 * in source order, parentless), with their field ids in fields[0..n) (NULL:
 * none). Sets each child's parent and field. Returns the new node's id; the
 * latest node added is the root. Aborts on out-of-memory like xmalloc. */
uint32_t pt_add(struct pt_tree *t, uint16_t sym, bool named, struct pt_span span,
		const uint32_t *kids, const uint16_t *fields, uint32_t n);

/* Nodes built and waiting for their parent, while a tree is built
 * bottom-up: their ids and their field ids. Owns its arrays. */
struct pt_pending {
	uint32_t *ids;
	uint16_t *fields;
	uint32_t n, cap;
};

void pt_pending_push(struct pt_pending *p, uint32_t id, uint16_t field);
void pt_pending_free(struct pt_pending *p); /* leaves it zeroed */

/* pt_add with the pending nodes from index `from` on as the children, which
 * then leave the list. */
uint32_t pt_add_pending(struct pt_tree *t, uint16_t sym, bool named, struct pt_span span,
			struct pt_pending *p, uint32_t from);

/* Copies tree-sitter's tree into t (cleared first), keeping the nodes listed
 * above, and records the first syntax error. */
void pytree_from_ts(struct pt_tree *t, TSNode root);

/* ---- reading (all accept a null node and return null / 0) ---- */

static inline bool pn_is_null(PNode n)
{
	return n.id == PT_NULL;
}

static inline const struct pt_node *pn_get(PNode n)
{
	return &n.t->nodes[n.id];
}

static inline PNode pn_root(const struct pt_tree *t)
{
	return (PNode){t, t->root};
}

static inline PNode pn_null(const struct pt_tree *t)
{
	return (PNode){t, PT_NULL};
}

static inline bool pn_eq(PNode a, PNode b)
{
	return a.id == b.id;
}

uint32_t pn_child_count(PNode n);       /* kept children */
PNode pn_child(PNode n, uint32_t i);
uint32_t pn_named_child_count(PNode n);
PNode pn_named_child(PNode n, uint32_t i);
PNode pn_parent(PNode n);
PNode pn_child_by_field(PNode n, uint16_t field); /* the first child with that field */
uint16_t pn_field(PNode n);                       /* its field in its parent, 0 = none */

static inline uint16_t pn_symbol(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].sym;
}
static inline uint32_t pn_start_byte(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].start;
}
static inline uint32_t pn_end_byte(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].end;
}
static inline struct pt_point pn_start_point(PNode n)
{
	return n.id == PT_NULL ? (struct pt_point){0, 0} : n.t->nodes[n.id].sp;
}
static inline struct pt_point pn_end_point(PNode n)
{
	return n.id == PT_NULL ? (struct pt_point){0, 0} : n.t->nodes[n.id].ep;
}
static inline bool pn_is_named(PNode n)
{
	return n.id != PT_NULL && (n.t->nodes[n.id].flags & PT_NAMED);
}
static inline bool pn_has_error(PNode n)
{
	return n.id != PT_NULL && (n.t->nodes[n.id].flags & PT_ERROR);
}

#endif
