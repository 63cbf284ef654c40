/* ptdiff: checks that the fast parser (pyparse) builds the same tree that
 * tree-sitter-python does, node for node, on real files.
 *
 *   ptdiff [-v] FILE...
 *
 * For each file: the tree-sitter tree, filtered as pytree keeps it (named
 * nodes but extras, anonymous tokens with a field), is compared with
 * pyparse's tree and with pytree_from_ts's copy: symbol name, field name,
 * byte range and points of every node, in order. Prints one line per
 * differing file (the first difference) and a summary; exits 1 if any tree
 * differs. Files pyparse declines are counted, not failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "core/fileio.h"
#include "python/pyparse.h"
#include "python/pytree.h"

const TSLanguage *tree_sitter_python(void);

struct line {
	int depth;
	const char *sym, *field;
	uint32_t a, b, ar, ac, br, bc;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

static void add(struct lines *l, struct line x)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			abort();
	}
	l->v[l->n++] = x;
}

/* tree-sitter's tree, filtered; iterative (deep files). */
static void dump_ts(TSNode root, struct lines *out)
{
	TSTreeCursor c = ts_tree_cursor_new(root);
	int depth = 0; /* kept ancestors */
	int stack[100000];
	int sp = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&c);
		const char *f = ts_tree_cursor_current_field_name(&c);
		int keep = (ts_node_is_named(n) && !ts_node_is_extra(n)) || (f && !ts_node_is_extra(n));
		if (keep) {
			TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
			add(out, (struct line){depth, ts_node_type(n), f ? f : "", ts_node_start_byte(n),
					       ts_node_end_byte(n), a.row, a.column, b.row, b.column});
		}
		if (sp < 100000 && ts_tree_cursor_goto_first_child(&c)) {
			stack[sp++] = keep;
			depth += keep;
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&c))
				break;
			if (!ts_tree_cursor_goto_parent(&c)) {
				ts_tree_cursor_delete(&c);
				return;
			}
			depth -= stack[--sp];
		}
	}
}

static void dump_pt(const struct pt_tree *t, const TSLanguage *lang, struct lines *out)
{
	if (t->root == PT_NULL)
		return;
	/* preorder over the compact tree */
	uint32_t *st = malloc(sizeof *st * (t->n + 1));
	int *dep = malloc(sizeof *dep * (t->n + 1));
	size_t sp = 0;
	st[sp] = t->root;
	dep[sp++] = 0;
	while (sp) {
		sp--;
		uint32_t id = st[sp];
		int d = dep[sp];
		const struct pt_node *n = &t->nodes[id];
		const char *f = n->field ? ts_language_field_name_for_id(lang, n->field) : "";
		add(out, (struct line){d, ts_language_symbol_name(lang, n->sym), f ? f : "?", n->start,
				       n->end, n->sp.row, n->sp.col, n->ep.row, n->ep.col});
		for (uint32_t i = n->nkids; i-- > 0;) {
			st[sp] = t->kids[n->kids + i];
			dep[sp++] = d + 1;
		}
	}
	free(st);
	free(dep);
}

static void show(const char *who, const struct line *l)
{
	if (!l) {
		printf("    %-4s (none)\n", who);
		return;
	}
	printf("    %-4s %*s%s%s%s [%u:%u-%u:%u] %u-%u\n", who, l->depth * 2, "", l->field,
	       *l->field ? ": " : "", l->sym, l->ar, l->ac, l->br, l->bc, l->a, l->b);
}

/* Index of the first differing line, or -1. */
static long first_diff(const struct lines *x, const struct lines *y)
{
	size_t n = x->n < y->n ? x->n : y->n;
	for (size_t i = 0; i < n; i++) {
		const struct line *a = &x->v[i], *b = &y->v[i];
		if (a->depth != b->depth || strcmp(a->sym, b->sym) || strcmp(a->field, b->field) ||
		    a->a != b->a || a->b != b->b || a->ar != b->ar || a->ac != b->ac || a->br != b->br ||
		    a->bc != b->bc)
			return (long)i;
	}
	return x->n == y->n ? -1 : (long)n;
}

int main(int argc, char **argv)
{
	int verbose = 0, argi = 1;
	if (argi < argc && strcmp(argv[argi], "-v") == 0) {
		verbose = 1;
		argi++;
	}
	const TSLanguage *lang = tree_sitter_python();
	TSParser *tsp = ts_parser_new();
	ts_parser_set_language(tsp, lang);
	struct pyparser *pp = pyparser_new(lang);
	struct pt_tree fast, copy;
	pt_init(&fast);
	pt_init(&copy);
	long files = 0, declined = 0, same = 0, differ = 0, ts_errors = 0, copy_differ = 0;
	unsigned long long bytes = 0, bytes_declined = 0;
	for (int i = argi; i < argc; i++) {
		struct buf file = {0};
		char *why = NULL;
		if (!read_file(argv[i], 1u << 30, &file, &why)) {
			fprintf(stderr, "ptdiff: %s: %s\n", argv[i], why ? why : "cannot read");
			free(why);
			continue;
		}
		const char *text = file.data ? file.data : "";
		size_t len = file.len;
		files++;
		bytes += len;
		ts_parser_set_language(tsp, lang); /* fresh scanner state, as pyscan does */
		TSTree *tree = ts_parser_parse_string(tsp, NULL, text, (uint32_t)len);
		TSNode root = ts_tree_root_node(tree);
		struct lines want = {0}, got = {0}, copied = {0};
		dump_ts(root, &want);
		pytree_from_ts(&copy, root);
		dump_pt(&copy, lang, &copied);
		/* (error trees: the copy keeps ERROR nodes tree-sitter marks extra) */
		long d = ts_node_has_error(root) ? -1 : first_diff(&want, &copied);
		if (d >= 0) {
			copy_differ++;
			printf("%s: pytree_from_ts differs at node %ld\n", argv[i], d);
			show("ts", (size_t)d < want.n ? &want.v[d] : NULL);
			show("copy", (size_t)d < copied.n ? &copied.v[d] : NULL);
		}
		bool ok = pyparse(pp, text, (uint32_t)len, &fast);
		if (ts_node_has_error(root)) {
			ts_errors++;
			if (ok) {
				differ++;
				printf("%s: tree-sitter found a syntax error, pyparse did not\n", argv[i]);
				pytree_from_ts(&copy, root);
				if (copy.first_error != PT_NULL) {
					const struct pt_node *e = &copy.nodes[copy.first_error];
					printf("    at %u:%u (%s)\n", e->sp.row + 1, e->sp.col,
					       ts_language_symbol_name(lang, e->sym));
				}
			}
		} else if (!ok) {
			declined++;
			bytes_declined += len;
			if (verbose) {
				int line;
				uint32_t at;
				pyparse_why(pp, &line, &at);
				uint32_t r = 1;
				for (uint32_t k = 0; k < at && k < len; k++)
					r += text[k] == '\n';
				printf("%s:%u: declined (pyparse.c:%d)\n", argv[i], r, line);
			}
		} else {
			dump_pt(&fast, lang, &got);
			d = first_diff(&want, &got);
			if (d < 0) {
				same++;
			} else {
				differ++;
				printf("%s: differs at node %ld\n", argv[i], d);
				for (long k = d > 3 ? d - 3 : 0; k < d; k++)
					show("both", &want.v[k]);
				show("ts", (size_t)d < want.n ? &want.v[d] : NULL);
				show("fast", (size_t)d < got.n ? &got.v[d] : NULL);
			}
		}
		free(want.v);
		free(got.v);
		free(copied.v);
		ts_tree_delete(tree);
		buf_free(&file);
	}
	printf("files %ld: same %ld, differ %ld, declined %ld (%.1f%% of bytes), syntax errors %ld;"
	       " pytree_from_ts differs %ld\n",
	       files, same, differ, declined, bytes ? 100.0 * (double)bytes_declined / (double)bytes : 0.0,
	       ts_errors, copy_differ);
	pt_free(&fast);
	pt_free(&copy);
	pyparser_free(pp);
	ts_parser_delete(tsp);
	return differ || copy_differ ? 1 : 0;
}
