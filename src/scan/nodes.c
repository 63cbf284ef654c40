/* nodes: see nodes.h. */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char *const nk_names[NK_COUNT] = {
	[NK_CALL] = "call", [NK_ATTRIBUTE] = "attribute", [NK_IDENTIFIER] = "identifier",
	[NK_IMPORT] = "import_statement", [NK_IMPORT_FROM] = "import_from_statement",
	[NK_ALIASED_IMPORT] = "aliased_import", [NK_DOTTED_NAME] = "dotted_name",
	[NK_WILDCARD_IMPORT] = "wildcard_import", [NK_RELATIVE_IMPORT] = "relative_import",
	[NK_FUNCTION_DEF] = "function_definition", [NK_CLASS_DEF] = "class_definition",
	[NK_LAMBDA] = "lambda", [NK_ASSIGNMENT] = "assignment",
	[NK_AUG_ASSIGNMENT] = "augmented_assignment", [NK_DECORATOR] = "decorator",
	[NK_KEYWORD_ARGUMENT] = "keyword_argument", [NK_ARGUMENT_LIST] = "argument_list",
	[NK_STRING] = "string", [NK_STRING_CONTENT] = "string_content",
	[NK_INTERPOLATION] = "interpolation", [NK_INTEGER] = "integer", [NK_FLOAT] = "float",
	[NK_TRUE] = "true", [NK_FALSE] = "false", [NK_NONE] = "none",
	[NK_UNARY] = "unary_operator", [NK_PARENTHESIZED] = "parenthesized_expression",
	[NK_FOR] = "for_statement", [NK_WHILE] = "while_statement", [NK_IF] = "if_statement",
	[NK_SUBSCRIPT] = "subscript", [NK_LIST_SPLAT] = "list_splat",
	[NK_DICT_SPLAT] = "dictionary_splat", [NK_EXCEPT] = "except_clause", [NK_ERROR] = "ERROR",
	[NK_FUTURE_IMPORT] = "future_import_statement", [NK_COMMENT] = "comment",
	[NK_BINARY] = "binary_operator", [NK_COMPARISON] = "comparison_operator",
	[NK_BOOLEAN] = "boolean_operator", [NK_RETURN] = "return_statement",
	[NK_LIST_COMP] = "list_comprehension", [NK_SET_COMP] = "set_comprehension",
	[NK_DICT_COMP] = "dictionary_comprehension", [NK_GENERATOR] = "generator_expression",
	[NK_TUPLE] = "tuple", [NK_LIST] = "list", [NK_NAMED_EXPR] = "named_expression",
	[NK_PATTERN_LIST] = "pattern_list", [NK_TUPLE_PATTERN] = "tuple_pattern",
	[NK_AS_PATTERN] = "as_pattern", [NK_WITH_ITEM] = "with_item", [NK_SLICE] = "slice",
	[NK_DECORATED_DEF] = "decorated_definition",
	[NK_MODULE] = "module", [NK_BLOCK] = "block", [NK_EXPR_STMT] = "expression_statement",
	[NK_ELIF] = "elif_clause", [NK_ELSE] = "else_clause", [NK_WITH] = "with_statement",
	[NK_WITH_CLAUSE] = "with_clause", [NK_TRY] = "try_statement", [NK_FINALLY] = "finally_clause",
	[NK_NOT] = "not_operator", [NK_CONDITIONAL] = "conditional_expression",
	[NK_DICT] = "dictionary", [NK_SET] = "set", [NK_EXPR_LIST] = "expression_list",
	[NK_AWAIT] = "await", [NK_GLOBAL] = "global_statement", [NK_NONLOCAL] = "nonlocal_statement",
	[NK_ASSERT] = "assert_statement", [NK_FOR_IN] = "for_in_clause", [NK_IF_CLAUSE] = "if_clause",
	[NK_LIST_PATTERN] = "list_pattern", [NK_BREAK] = "break_statement",
	[NK_CONTINUE] = "continue_statement", [NK_RAISE] = "raise_statement",
	[NK_DELETE] = "delete_statement", [NK_PAIR] = "pair", [NK_CONCAT_STRING] = "concatenated_string",
	[NK_DEFAULT_PARAM] = "default_parameter", [NK_TYPED_PARAM] = "typed_parameter",
	[NK_TYPED_DEFAULT_PARAM] = "typed_default_parameter",
	[NK_LIST_SPLAT_PATTERN] = "list_splat_pattern", [NK_DICT_SPLAT_PATTERN] = "dictionary_splat_pattern",
	[NK_PARAMETERS] = "parameters", [NK_LAMBDA_PARAMETERS] = "lambda_parameters",
	[NK_YIELD] = "yield", [NK_MATCH] = "match_statement", [NK_EXCEPT_GROUP] = "except_group_clause",
};

static const char *const field_names[F_COUNT] = {
	"function", "arguments", "object", "attribute", "name", "alias", "module_name",
	"parameters", "left", "right", "value", "argument", "body", "condition",
	"subscript", "operator", "consequence", "alternative", "superclasses", "definition",
	"expression", "key",
};

void nodeinfo_init(struct nodeinfo *ni, const TSLanguage *lang)
{
	ni->nsymbols = ts_language_symbol_count(lang);
	ni->kinds = xcalloc(ni->nsymbols, 1);
	for (uint32_t s = 0; s < ni->nsymbols; s++) {
		const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
		if (!name || ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular)
			continue;
		for (int k = 1; k < NK_COUNT; k++)
			if (nk_names[k] && strcmp(name, nk_names[k]) == 0)
				ni->kinds[s] = (uint8_t)k;
	}
	for (int f = 0; f < F_COUNT; f++)
		ni->fields[f] = ts_language_field_id_for_name(lang, field_names[f],
							      (uint32_t)strlen(field_names[f]));
}

void nodeinfo_free(struct nodeinfo *ni)
{
	free(ni->kinds);
	ni->kinds = NULL;
}

enum nk nk_of(const struct nodeinfo *ni, PNode n)
{
	if (pn_is_null(n))
		return NK_OTHER;
	uint16_t s = pn_symbol(n);
	return s < ni->nsymbols ? (enum nk)ni->kinds[s] : NK_OTHER;
}

PNode nk_field(const struct nodeinfo *ni, PNode n, enum field f)
{
	if (pn_is_null(n))
		return n;
	return pn_child_by_field(n, ni->fields[f]);
}
