/* fuzz_pyparse: the fast parser against tree-sitter on any bytes. pyparse
 * must never crash or leak, must decline whatever tree-sitter finds a
 * syntax error in, and whenever it accepts, its tree must equal the one
 * copied from tree-sitter node for node (symbol name, field, bytes, points). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "python/pyparse.h"
#include "python/pytree.h"

const TSLanguage *tree_sitter_python(void);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs are cut here: both parsers are linear, and short inputs keep the
 * rate over a thousand a second under the sanitizers. */
#define MAX_INPUT 512

static struct pyparser *pp;
static struct pt_tree fast, copy;

static bool same_node(const TSLanguage *lang, const struct pt_node *a, const struct pt_node *b)
{
	return strcmp(ts_language_symbol_name(lang, a->sym), ts_language_symbol_name(lang, b->sym)) == 0 &&
	       a->field == b->field && a->start == b->start && a->end == b->end &&
	       a->sp.row == b->sp.row && a->sp.col == b->sp.col && a->ep.row == b->ep.row &&
	       a->ep.col == b->ep.col && a->nkids == b->nkids && a->nnamed == b->nnamed;
}

/* Both trees in preorder, in step. */
static bool same_tree(const TSLanguage *lang, const struct pt_tree *x, const struct pt_tree *y)
{
	if (x->n != y->n)
		return false;
	uint32_t *st = malloc(sizeof *st * 2 * (x->n + 1));
	size_t sp = 0;
	bool ok = true;
	st[sp++] = x->root;
	st[sp++] = y->root;
	while (ok && sp) {
		uint32_t b = st[--sp], a = st[--sp];
		const struct pt_node *na = &x->nodes[a], *nb = &y->nodes[b];
		ok = same_node(lang, na, nb);
		for (uint32_t i = 0; ok && i < na->nkids; i++) {
			st[sp++] = x->kids[na->kids + i];
			st[sp++] = y->kids[nb->kids + i];
		}
	}
	free(st);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const TSLanguage *lang = tree_sitter_python();
	if (!pp) {
		pp = pyparser_new(lang);
		pt_init(&fast);
		pt_init(&copy);
	}
	if (size > MAX_INPUT)
		size = MAX_INPUT;
	bool ok = pyparse(pp, (const char *)data, (uint32_t)size, &fast);
	/* A fresh tree-sitter parser, as pyscan makes one per file: a reused one
	 * keeps buffers across inputs, and an input whose allocations do not
	 * balance makes libFuzzer scan the whole heap for leaks. */
	TSParser *tsp = ts_parser_new();
	ts_parser_set_language(tsp, lang);
	TSTree *tree = ts_parser_parse_string(tsp, NULL, (const char *)data, (uint32_t)size);
	ts_parser_delete(tsp);
	TSNode root = ts_tree_root_node(tree);
	if (ok) {
		if (ts_node_has_error(root))
			abort(); /* accepted what tree-sitter calls a syntax error */
		pytree_from_ts(&copy, root);
		if (!same_tree(lang, &fast, &copy))
			abort(); /* a different tree */
	} else if (fast.n != 0) {
		abort(); /* declined but left nodes */
	}
	ts_tree_delete(tree);
	return 0;
}
