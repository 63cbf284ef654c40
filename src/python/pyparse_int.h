/* pyparse_int: what the fast parser's two parts share:
 *   pylex.c    the tokenizer (tokens as tree-sitter-python's lexer and
 *              external scanner split the text);
 *   pyparse.c  the recursive-descent parser that builds the pytree.
 * Nothing here is visible outside them. */
#ifndef GPUOPT_PYPARSE_INT_H
#define GPUOPT_PYPARSE_INT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "pyparse.h"

/* ---- tokens ---- */

enum tk {
	T_EOF, T_NAME, T_INT, T_FLOAT, T_STRING, T_OP, T_NEWLINE, T_INDENT, T_DEDENT,
	T_FSTART, T_FMID, T_FLBRACE, T_FRBRACE, T_FCONV, T_FCOLON, T_FSPEC, T_FEND,
};

/* Operators and keywords share one code space (struct tok.op). */
enum op {
	O_NONE,
	/* operators */
	O_LPAR, O_RPAR, O_LSQB, O_RSQB, O_LBRACE, O_RBRACE, O_COMMA, O_COLON, O_SEMI, O_DOT,
	O_ELLIPSIS, O_AT, O_EQ, O_ARROW, O_WALRUS, O_PLUS, O_MINUS, O_STAR, O_SLASH,
	O_DSLASH, O_PERCENT, O_POW, O_LSHIFT, O_RSHIFT, O_AMP, O_PIPE, O_CARET, O_TILDE,
	O_LT, O_GT, O_LE, O_GE, O_EQEQ, O_NE, O_LTGT, O_PLUSEQ, O_MINUSEQ, O_STAREQ,
	O_SLASHEQ, O_DSLASHEQ, O_PERCENTEQ, O_POWEQ, O_RSHIFTEQ, O_LSHIFTEQ, O_AMPEQ,
	O_CARETEQ, O_PIPEEQ, O_ATEQ,
	/* keywords (T_NAME tokens) */
	K_FIRST, K_AND = K_FIRST, K_AS, K_ASSERT, K_ASYNC, K_AWAIT, K_BREAK, K_CLASS,
	K_CONTINUE, K_DEF, K_DEL, K_ELIF, K_ELSE, K_EXCEPT, K_EXEC, K_FINALLY, K_FOR, K_FROM,
	K_GLOBAL, K_IF, K_IMPORT, K_IN, K_IS, K_LAMBDA, K_NONLOCAL, K_NOT, K_OR, K_PASS,
	K_PRINT, K_RAISE, K_RETURN, K_TRY, K_WHILE, K_WITH, K_YIELD, K_MATCH, K_CASE, K_TYPE,
	K_TRUE, K_FALSE, K_NONE, K_FUTURE,
	O_COUNT
};

extern const char *const pyparse_op_text[O_COUNT];

struct tok {
	uint8_t type;   /* enum tk */
	uint8_t op;     /* enum op (T_OP, and keywords on T_NAME); string flags on T_STRING/T_FSTART */
	uint32_t start, end;
	struct pt_point sp, ep;
};

/* String prefix flags (struct tok.op of T_STRING / T_FSTART). */
enum { SF_RAW = 1, SF_BYTES = 2, SF_FORMAT = 4, SF_TRIPLE = 8 };

/* Symbols and fields, looked up by name in the language. */
enum sym {
	S_MODULE, S_IDENTIFIER, S_INTEGER, S_FLOAT, S_TRUE, S_FALSE, S_NONE, S_ELLIPSIS,
	S_STRING, S_STRING_START, S_STRING_CONTENT, S_STRING_END, S_ESCAPE_SEQUENCE,
	S_ESCAPE_INTERPOLATION, S_INTERPOLATION, S_TYPE_CONVERSION, S_FORMAT_SPECIFIER,
	S_FORMAT_EXPRESSION, S_CONCATENATED_STRING, S_CALL, S_ARGUMENT_LIST, S_ATTRIBUTE,
	S_SUBSCRIPT, S_SLICE, S_KEYWORD_ARGUMENT, S_LIST_SPLAT, S_DICTIONARY_SPLAT,
	S_PARENTHESIZED_EXPRESSION, S_TUPLE, S_LIST, S_SET, S_DICTIONARY, S_PAIR,
	S_LIST_COMPREHENSION, S_SET_COMPREHENSION, S_DICTIONARY_COMPREHENSION,
	S_GENERATOR_EXPRESSION, S_FOR_IN_CLAUSE, S_IF_CLAUSE, S_BINARY_OPERATOR,
	S_UNARY_OPERATOR, S_NOT_OPERATOR, S_BOOLEAN_OPERATOR, S_COMPARISON_OPERATOR,
	S_CONDITIONAL_EXPRESSION, S_LAMBDA, S_LAMBDA_PARAMETERS, S_NAMED_EXPRESSION, S_AWAIT,
	S_YIELD, S_AS_PATTERN, S_AS_PATTERN_TARGET, S_EXPRESSION_LIST, S_PATTERN_LIST,
	S_TUPLE_PATTERN, S_LIST_PATTERN, S_LIST_SPLAT_PATTERN, S_DICTIONARY_SPLAT_PATTERN,
	S_EXPRESSION_STATEMENT, S_ASSIGNMENT, S_AUGMENTED_ASSIGNMENT, S_TYPE, S_GENERIC_TYPE,
	S_TYPE_PARAMETER, S_UNION_TYPE, S_RETURN_STATEMENT, S_PASS_STATEMENT,
	S_BREAK_STATEMENT, S_CONTINUE_STATEMENT, S_DELETE_STATEMENT, S_RAISE_STATEMENT,
	S_GLOBAL_STATEMENT, S_NONLOCAL_STATEMENT, S_ASSERT_STATEMENT, S_IMPORT_STATEMENT,
	S_IMPORT_FROM_STATEMENT, S_FUTURE_IMPORT_STATEMENT, S_ALIASED_IMPORT, S_DOTTED_NAME,
	S_RELATIVE_IMPORT, S_IMPORT_PREFIX, S_WILDCARD_IMPORT, S_IF_STATEMENT, S_ELIF_CLAUSE,
	S_ELSE_CLAUSE, S_FOR_STATEMENT, S_WHILE_STATEMENT, S_TRY_STATEMENT, S_EXCEPT_CLAUSE,
	S_EXCEPT_GROUP_CLAUSE, S_FINALLY_CLAUSE, S_WITH_STATEMENT, S_WITH_CLAUSE, S_WITH_ITEM,
	S_FUNCTION_DEFINITION, S_PARAMETERS, S_DEFAULT_PARAMETER, S_TYPED_PARAMETER,
	S_TYPED_DEFAULT_PARAMETER, S_KEYWORD_SEPARATOR, S_POSITIONAL_SEPARATOR,
	S_CLASS_DEFINITION, S_DECORATED_DEFINITION, S_DECORATOR, S_BLOCK,
	S_NOT_IN, S_IS_NOT,
	S_COUNT
};

enum fld {
	F_NONE, F_ALIAS, F_ARGUMENT, F_ARGUMENTS, F_ATTRIBUTE, F_BODY, F_CAUSE, F_CONDITION,
	F_CONSEQUENCE, F_ALTERNATIVE, F_DEFINITION, F_EXPRESSION, F_FORMAT_SPECIFIER,
	F_FUNCTION, F_KEY, F_LEFT, F_MODULE_NAME, F_NAME, F_OBJECT, F_OPERATOR, F_OPERATORS,
	F_PARAMETERS, F_RETURN_TYPE, F_RIGHT, F_SUBSCRIPT, F_SUPERCLASSES, F_TYPE,
	F_TYPE_CONVERSION, F_VALUE,
	F_COUNT
};

/* Full-line comments between two code lines: where DEDENTs go. */
struct cline {
	uint32_t indent, end;
	struct pt_point ep;
};

struct pyparser {
	const TSLanguage *lang;
	uint16_t sym[S_COUNT];
	uint16_t opsym[O_COUNT]; /* anonymous symbol of each operator / keyword */
	uint16_t fld[F_COUNT];
	bool usable;             /* every symbol and field was found */

	/* per file */
	const char *text;
	uint32_t len;
	struct tok *toks;
	uint32_t ntoks, captoks;
	struct pt_pending kids;  /* built nodes waiting for their parent */
	struct pt_tree *t;
	uint32_t pos;            /* current token */
	uint32_t last;           /* last consumed token, or UINT32_MAX */
	int depth;
	jmp_buf fail;
	struct cline *cl;        /* tokenizer scratch: comment lines */
	size_t capcl;
	int why_line;            /* where in this file the last decline happened */
	uint32_t why_byte;       /* the tokenizer's position then, or UINT32_MAX */
};

/* Gives up on this file (longjmp to pyparse); the line of the source that
 * gave up is kept for pyparse_why. */
_Noreturn void pyparse_decline_at(struct pyparser *p, int line);
#define decline(p) pyparse_decline_at((p), __LINE__)

/* Character classes (ASCII: other bytes are declined outside strings). */
static inline bool is_id_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_id_char(unsigned char c)
{
	return is_id_start(c) || (c >= '0' && c <= '9');
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Tokenizes p->text[0..p->len) into p->toks, ending with T_EOF. */
void pylex(struct pyparser *p);

#endif
