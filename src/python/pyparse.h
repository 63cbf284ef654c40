/* pyparse: the scanner's fast path, a hand-written tokenizer and
 * recursive-descent parser for Python 3 that builds the same pytree that
 * tree-sitter-python 0.23.6 gives (pytree.h), node for node, several times
 * faster. It declines (returns false, the tree left cleared) whatever it does
 * not reproduce exactly — a syntax error, a construct it does not know,
 * nesting deeper than it recurses — and the caller then parses the file with
 * tree-sitter. tests/tools/ptdiff checks the two trees are equal. */
#ifndef GPUOPT_PYPARSE_H
#define GPUOPT_PYPARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "pytree.h"

struct pyparser;

/* Symbol and field ids are looked up by name in lang. One per thread. */
struct pyparser *pyparser_new(const TSLanguage *lang);
void pyparser_free(struct pyparser *p); /* accepts NULL */

/* Parses text[0..len) into out (cleared first). True: out holds the tree.
 * False: declined; out is cleared. */
bool pyparse(struct pyparser *p, const char *text, uint32_t len, struct pt_tree *out);

/* For tools: the line of pyparse.c that declined the last file, and the
 * byte it had reached (the token being parsed; during tokenizing, the last
 * token made). */
void pyparse_why(const struct pyparser *p, int *line, uint32_t *byte);

#endif
