/* pytree: see pytree.h. Building (pt_add), reading (pn_*), and the copy of
 * a tree-sitter tree (pytree_from_ts), which walks it with a cursor and an
 * explicit stack (no recursion: 10,000-deep nesting is fine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "pytree.h"
#include "core/util.h"

void pt_init(struct pt_tree *t)
{
	memset(t, 0, sizeof *t);
	t->root = PT_NULL;
	t->first_error = PT_NULL;
}

void pt_free(struct pt_tree *t)
{
	free(t->nodes);
	free(t->kids);
	memset(t, 0, sizeof *t);
}

void pt_clear(struct pt_tree *t)
{
	t->n = 0;
	t->nk = 0;
	t->root = PT_NULL;
	t->first_error = PT_NULL;
}

/* The new capacity for at least `need` elements (doubling); beyond 32-bit
 * ids it is out of memory, as for xmalloc. */
static uint32_t grow_cap(uint32_t cap, uint64_t need)
{
	uint64_t c = cap ? cap : 256;
	while (c < need)
		c *= 2;
	if (c > UINT32_MAX - 1) {
		if (need > UINT32_MAX - 1) {
			fputs("gpuopt: out of memory\n", stderr);
			exit(EXIT_USAGE);
		}
		c = UINT32_MAX - 1;
	}
	return (uint32_t)c;
}

/* kids must not point into t->kids (it may move). */
uint32_t pt_add(struct pt_tree *t, uint16_t sym, bool named, struct pt_span span,
		const uint32_t *kids, const uint16_t *fields, uint32_t n)
{
	if (t->n == t->cap) {
		t->cap = grow_cap(t->cap, (uint64_t)t->n + 1);
		t->nodes = xrealloc(t->nodes, (size_t)t->cap * sizeof *t->nodes);
	}
	if ((uint64_t)t->nk + n > t->capk) {
		t->capk = grow_cap(t->capk, (uint64_t)t->nk + n);
		t->kids = xrealloc(t->kids, (size_t)t->capk * sizeof *t->kids);
	}
	uint32_t id = t->n++;
	struct pt_node *nd = &t->nodes[id];
	uint32_t nnamed = 0;
	uint8_t flags = named ? PT_NAMED : 0;
	for (uint32_t i = 0; i < n; i++) {
		struct pt_node *ch = &t->nodes[kids[i]];
		t->kids[t->nk + i] = kids[i];
		ch->parent = id;
		ch->field = fields ? fields[i] : 0;
		nnamed += (ch->flags & PT_NAMED) != 0;
		flags |= ch->flags & PT_ERROR;
	}
	*nd = (struct pt_node){
		.start = span.start, .end = span.end, .sp = span.sp, .ep = span.ep,
		.parent = PT_NULL, .kids = t->nk, .nkids = n, .nnamed = nnamed,
		.sym = sym, .field = 0, .flags = flags,
	};
	t->nk += n;
	t->root = id;
	return id;
}

void pt_pending_push(struct pt_pending *p, uint32_t id, uint16_t field)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->ids = xrealloc(p->ids, p->cap * sizeof *p->ids);
		p->fields = xrealloc(p->fields, p->cap * sizeof *p->fields);
	}
	p->ids[p->n] = id;
	p->fields[p->n++] = field;
}

void pt_pending_free(struct pt_pending *p)
{
	free(p->ids);
	free(p->fields);
	memset(p, 0, sizeof *p);
}

uint32_t pt_add_pending(struct pt_tree *t, uint16_t sym, bool named, struct pt_span span,
			struct pt_pending *p, uint32_t from)
{
	uint32_t n = p->n - from;
	uint32_t id = pt_add(t, sym, named, span, n ? p->ids + from : NULL, n ? p->fields + from : NULL, n);
	p->n = from;
	return id;
}

/* ---- reading ---- */

uint32_t pn_child_count(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].nkids;
}

PNode pn_child(PNode n, uint32_t i)
{
	if (n.id == PT_NULL || i >= n.t->nodes[n.id].nkids)
		return (PNode){n.t, PT_NULL};
	return (PNode){n.t, n.t->kids[n.t->nodes[n.id].kids + i]};
}

uint32_t pn_named_child_count(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].nnamed;
}

PNode pn_named_child(PNode n, uint32_t i)
{
	if (n.id == PT_NULL)
		return n;
	const struct pt_node *nd = &n.t->nodes[n.id];
	if (i >= nd->nnamed)
		return (PNode){n.t, PT_NULL};
	const uint32_t *k = n.t->kids + nd->kids;
	if (nd->nnamed == nd->nkids)
		return (PNode){n.t, k[i]};
	for (uint32_t j = 0; j < nd->nkids; j++)
		if ((n.t->nodes[k[j]].flags & PT_NAMED) && i-- == 0)
			return (PNode){n.t, k[j]};
	return (PNode){n.t, PT_NULL};
}

PNode pn_parent(PNode n)
{
	return n.id == PT_NULL ? n : (PNode){n.t, n.t->nodes[n.id].parent};
}

PNode pn_child_by_field(PNode n, uint16_t field)
{
	if (n.id == PT_NULL || field == 0)
		return (PNode){n.t, PT_NULL};
	const struct pt_node *nd = &n.t->nodes[n.id];
	const uint32_t *k = n.t->kids + nd->kids;
	for (uint32_t j = 0; j < nd->nkids; j++)
		if (n.t->nodes[k[j]].field == field)
			return (PNode){n.t, k[j]};
	return (PNode){n.t, PT_NULL};
}

uint16_t pn_field(PNode n)
{
	return n.id == PT_NULL ? 0 : n.t->nodes[n.id].field;
}

/* ---- copying a tree-sitter tree ---- */

/* The first syntax error: an ERROR or MISSING node, found by descending only
 * into the first child that contains one (as the scanner always reported
 * it). A cursor makes each level linear in its children. */
static TSNode ts_first_error(TSNode root)
{
	TSTreeCursor cur = ts_tree_cursor_new(root);
	TSNode n = root;
	for (int guard = 0; guard < 100000; guard++) {
		if (ts_node_is_missing(n) || strcmp(ts_node_type(n), "ERROR") == 0)
			break;
		bool found = false;
		if (ts_tree_cursor_goto_first_child(&cur)) {
			do {
				TSNode ch = ts_tree_cursor_current_node(&cur);
				if (ts_node_has_error(ch)) {
					n = ch;
					found = true;
					break;
				}
			} while (ts_tree_cursor_goto_next_sibling(&cur));
		}
		if (!found)
			break;
	}
	ts_tree_cursor_delete(&cur);
	return n;
}

/* tree-sitter's symbol for ERROR nodes (ts_builtin_sym_error, parser.h). */
#define TS_SYM_ERROR ((uint16_t)-1)

/* A node of the tree-sitter tree on the path from the root to the cursor. */
struct tsnode_info {
	struct pt_span span;
	uint16_t sym, field;
	uint8_t flags; /* PT_* of the node itself */
	bool keep, is_error;
	uint32_t pend; /* where its kept descendants start in the pending list */
};


/* parent_error: the node is a child of an ERROR node. tree-sitter's node
 * API gives those no field (ts_node_child_by_field_id finds none in an
 * ERROR), though its cursor names the field of the production they came
 * from; the tree follows the node API. */
static struct tsnode_info node_info(const TSTreeCursor *cur, TSNode n, bool is_root, bool parent_error,
				    TSNode err)
{
	struct tsnode_info in;
	in.span = (struct pt_span){
		.start = ts_node_start_byte(n), .end = ts_node_end_byte(n),
		.sp = {ts_node_start_point(n).row, ts_node_start_point(n).column},
		.ep = {ts_node_end_point(n).row, ts_node_end_point(n).column},
	};
	in.sym = ts_node_symbol(n);
	in.field = is_root || parent_error ? 0 : ts_tree_cursor_current_field_id(cur);
	bool named = ts_node_is_named(n);
	in.flags = named ? PT_NAMED : 0;
	if (ts_node_has_error(n))
		in.flags |= PT_ERROR;
	if (ts_node_is_missing(n))
		in.flags |= PT_MISSING | PT_ERROR;
	/* Extras are comments and line continuations; an ERROR can be an extra
	 * too, and is kept with what it holds. */
	in.keep = is_root || in.field != 0 ||
		  (named && (!ts_node_is_extra(n) || in.sym == TS_SYM_ERROR));
	in.is_error = !ts_node_is_null(err) && ts_node_eq(n, err);
	return in;
}

/* Adds a finished node whose kept descendants are pending from in->pend;
 * a dropped node leaves them to its nearest kept ancestor. */
static void finish(struct pt_tree *t, struct pt_pending *p, const struct tsnode_info *in,
		   struct tsnode_info *err_out)
{
	if (!in->keep) {
		if (in->is_error)
			*err_out = *in;
		return;
	}
	uint32_t id = pt_add_pending(t, in->sym, in->flags & PT_NAMED, in->span, p, in->pend);
	t->nodes[id].flags |= in->flags;
	if (in->is_error)
		t->first_error = id;
	pt_pending_push(p, id, in->field);
}

void pytree_from_ts(struct pt_tree *t, TSNode root)
{
	pt_clear(t);
	if (ts_node_is_null(root))
		return;
	TSNode err = ts_node_has_error(root) ? ts_first_error(root) : (TSNode){0};
	struct tsnode_info dropped_err = {.keep = false, .is_error = false};
	struct pt_pending p = {0};
	struct tsnode_info *path = NULL; /* the ancestors of the cursor's node */
	size_t npath = 0, cappath = 0;
	TSTreeCursor cur = ts_tree_cursor_new(root);
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		struct tsnode_info in = node_info(&cur, n, npath == 0,
						  npath > 0 && path[npath - 1].sym == TS_SYM_ERROR, err);
		in.pend = p.n;
		if (ts_tree_cursor_goto_first_child(&cur)) {
			if (npath == cappath) {
				cappath = cappath ? cappath * 2 : 64;
				path = xrealloc(path, cappath * sizeof *path);
			}
			path[npath++] = in;
			continue;
		}
		finish(t, &p, &in, &dropped_err);
		while (npath > 0 && !ts_tree_cursor_goto_next_sibling(&cur)) {
			ts_tree_cursor_goto_parent(&cur);
			finish(t, &p, &path[--npath], &dropped_err);
		}
		if (npath == 0)
			break;
	}
	ts_tree_cursor_delete(&cur);
	free(path);
	pt_pending_free(&p);
	if (dropped_err.is_error) {
		/* The error is a token the tree does not keep (a MISSING `)`):
		 * a parentless node outside the tree records where it is. */
		uint32_t r = t->root;
		uint32_t id = pt_add(t, dropped_err.sym, dropped_err.flags & PT_NAMED, dropped_err.span,
				     NULL, NULL, 0);
		t->nodes[id].flags |= dropped_err.flags;
		t->first_error = id;
		t->root = r;
	}
}
