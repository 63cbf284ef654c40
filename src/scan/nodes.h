/* nodes: the scanner's view of tree-sitter-python's nodes — the kinds it
 * tells apart (enum nk) and the fields it reads — for a tree of either
 * parser (pytree.h). One nodeinfo per language, read-only once made, so
 * threads share it. */
#ifndef GPUOPT_NODES_H
#define GPUOPT_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "python/pytree.h"

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
	/* statements and expressions the flow model interprets */
	NK_MODULE, NK_BLOCK, NK_EXPR_STMT, NK_ELIF, NK_ELSE, NK_WITH, NK_WITH_CLAUSE, NK_TRY,
	NK_FINALLY, NK_NOT, NK_CONDITIONAL, NK_DICT, NK_SET, NK_EXPR_LIST, NK_AWAIT, NK_GLOBAL,
	NK_NONLOCAL, NK_ASSERT, NK_FOR_IN, NK_IF_CLAUSE, NK_LIST_PATTERN, NK_BREAK, NK_CONTINUE,
	NK_RAISE, NK_DELETE, NK_PAIR, NK_CONCAT_STRING, NK_DEFAULT_PARAM, NK_TYPED_PARAM,
	NK_TYPED_DEFAULT_PARAM, NK_LIST_SPLAT_PATTERN, NK_DICT_SPLAT_PATTERN, NK_PARAMETERS,
	NK_LAMBDA_PARAMETERS, NK_YIELD, NK_MATCH, NK_EXCEPT_GROUP,
	NK_COUNT
};

enum field { F_FUNCTION, F_ARGUMENTS, F_OBJECT, F_ATTRIBUTE, F_NAME, F_ALIAS, F_MODULE_NAME,
	     F_PARAMETERS, F_LEFT, F_RIGHT, F_VALUE, F_ARGUMENT, F_BODY, F_CONDITION,
	     F_SUBSCRIPT, F_OPERATOR, F_CONSEQUENCE, F_ALTERNATIVE, F_SUPERCLASSES, F_DEFINITION,
	     F_EXPRESSION, F_KEY, F_COUNT };

struct nodeinfo {
	uint8_t *kinds;   /* symbol id -> enum nk */
	uint32_t nsymbols;
	TSFieldId fields[F_COUNT];
};

void nodeinfo_init(struct nodeinfo *ni, const TSLanguage *lang);
void nodeinfo_free(struct nodeinfo *ni);

/* Every query accepts a null node (error recovery can leave any field empty). */
enum nk nk_of(const struct nodeinfo *ni, PNode n);
PNode nk_field(const struct nodeinfo *ni, PNode n, enum field f);

#endif
