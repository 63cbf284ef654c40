/* pyparse: see pyparse.h. The tokens come from pylex.c; this part is the
 * parser: recursive descent with the grammar's own precedences (which
 * differ from Python's for `^` and `&`), building pytree nodes bottom-up,
 * each spanning from its first to its last token, as tree-sitter's do.
 *
 * Declining is always safe, so anything rare or ambiguous in how tree-sitter
 * resolves it (Python 2 print/exec statements, match and type statements,
 * non-ASCII identifiers, tabs after spaces in indentation, same-quote strings
 * nested in f-strings, ...) makes pyparse return false. */
#include <stdlib.h>
#include <string.h>

#include "pyparse_int.h"
#include "core/util.h"

/* Deepest nesting of expressions / statements parsed by recursion. */
#define MAX_DEPTH 200

static const char *const sym_names[S_COUNT] = {
	"module", "identifier", "integer", "float", "true", "false", "none", "ellipsis",
	"string", "string_start", "string_content", "string_end", "escape_sequence",
	"escape_interpolation", "interpolation", "type_conversion", "format_specifier",
	"format_expression", "concatenated_string", "call", "argument_list", "attribute",
	"subscript", "slice", "keyword_argument", "list_splat", "dictionary_splat",
	"parenthesized_expression", "tuple", "list", "set", "dictionary", "pair",
	"list_comprehension", "set_comprehension", "dictionary_comprehension",
	"generator_expression", "for_in_clause", "if_clause", "binary_operator",
	"unary_operator", "not_operator", "boolean_operator", "comparison_operator",
	"conditional_expression", "lambda", "lambda_parameters", "named_expression", "await",
	"yield", "as_pattern", "as_pattern_target", "expression_list", "pattern_list",
	"tuple_pattern", "list_pattern", "list_splat_pattern", "dictionary_splat_pattern",
	"expression_statement", "assignment", "augmented_assignment", "type", "generic_type",
	"type_parameter", "union_type", "return_statement", "pass_statement",
	"break_statement", "continue_statement", "delete_statement", "raise_statement",
	"global_statement", "nonlocal_statement", "assert_statement", "import_statement",
	"import_from_statement", "future_import_statement", "aliased_import", "dotted_name",
	"relative_import", "import_prefix", "wildcard_import", "if_statement", "elif_clause",
	"else_clause", "for_statement", "while_statement", "try_statement", "except_clause",
	"except_group_clause", "finally_clause", "with_statement", "with_clause", "with_item",
	"function_definition", "parameters", "default_parameter", "typed_parameter",
	"typed_default_parameter", "keyword_separator", "positional_separator",
	"class_definition", "decorated_definition", "decorator", "block",
	"not in", "is not",
};

static const char *const field_names[F_COUNT] = {
	NULL, "alias", "argument", "arguments", "attribute", "body", "cause", "condition",
	"consequence", "alternative", "definition", "expression", "format_specifier",
	"function", "key", "left", "module_name", "name", "object", "operator", "operators",
	"parameters", "return_type", "right", "subscript", "superclasses", "type",
	"type_conversion", "value",
};

_Noreturn void pyparse_decline_at(struct pyparser *p, int line)
{
	p->why_line = line;
	longjmp(p->fail, 1);
}


/* ---- parser: tokens and nodes ---- */

static inline const struct tok *cur(const struct pyparser *p)
{
	return &p->toks[p->pos];
}

static inline const struct tok *peek(const struct pyparser *p, uint32_t k)
{
	uint32_t i = p->pos + k;
	return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static inline bool tok_is_op(const struct tok *t, uint8_t op)
{
	return t->type == T_OP && t->op == op;
}

static inline bool is_op(const struct pyparser *p, uint8_t op)
{
	return tok_is_op(cur(p), op);
}

static inline bool is_kw(const struct pyparser *p, uint8_t kw)
{
	return cur(p)->type == T_NAME && cur(p)->op == kw;
}

static inline bool tok_is_soft(const struct tok *t)
{
	return t->op == O_NONE || t->op == K_PRINT || t->op == K_EXEC || t->op == K_ASYNC ||
	       t->op == K_AWAIT || t->op == K_MATCH || t->op == K_CASE || t->op == K_TYPE ||
	       t->op == K_FUTURE;
}

/* A name usable as an identifier here. */
static inline bool is_ident(const struct pyparser *p)
{
	return cur(p)->type == T_NAME && tok_is_soft(cur(p));
}

static inline uint32_t advance(struct pyparser *p)
{
	if (cur(p)->type == T_EOF)
		decline(p);
	p->last = p->pos;
	return p->pos++;
}

static void expect_op(struct pyparser *p, uint8_t op)
{
	if (!is_op(p, op))
		decline(p);
	advance(p);
}

static void expect_kw(struct pyparser *p, uint8_t kw)
{
	if (!is_kw(p, kw))
		decline(p);
	advance(p);
}

static void push(struct pyparser *p, uint32_t id, int field)
{
	pt_pending_push(&p->kids, id, field ? p->fld[field] : 0);
}

/* A node from (start, sp) to the end of the last consumed token, whose
 * children are the pending ones above base. */
static uint32_t make_at(struct pyparser *p, uint16_t sym, bool named, uint32_t base, uint32_t start,
			struct pt_point sp)
{
	const struct tok *e = &p->toks[p->last];
	struct pt_span span = {start, e->end, sp, e->ep};
	if (e->end < start) {
		span.end = start;
		span.ep = sp;
	}
	return pt_add_pending(p->t, sym, named, span, &p->kids, base);
}

/* The same, starting at token `t0`. */
static inline uint32_t make(struct pyparser *p, int sym, uint32_t base, uint32_t t0)
{
	return make_at(p, p->sym[sym], true, base, p->toks[t0].start, p->toks[t0].sp);
}

/* The same, starting where node `first` starts. */
static inline uint32_t make_from(struct pyparser *p, int sym, uint32_t base, uint32_t first)
{
	const struct pt_node *n = &p->t->nodes[first];
	return make_at(p, p->sym[sym], true, base, n->start, n->sp);
}

/* A node spanning exactly token t (consumed), of symbol sym. */
static uint32_t leaf_tok(struct pyparser *p, uint16_t sym, bool named, uint32_t t)
{
	const struct tok *k = &p->toks[t];
	struct pt_span span = {k->start, k->end, k->sp, k->ep};
	return pt_add(p->t, sym, named, span, NULL, NULL, 0);
}

static uint32_t leaf_span(struct pyparser *p, int sym, uint32_t a, uint32_t b, struct pt_point ap,
			  struct pt_point bp, uint32_t base)
{
	struct pt_span span = {a, b, ap, bp};
	return pt_add_pending(p->t, p->sym[sym], true, span, &p->kids, base);
}

static uint32_t identifier(struct pyparser *p)
{
	if (!is_ident(p))
		decline(p);
	return leaf_tok(p, p->sym[S_IDENTIFIER], true, advance(p));
}

/* An anonymous operator / keyword token that fills a field. */
static void push_op(struct pyparser *p, int field)
{
	uint32_t t = advance(p);
	uint16_t sym = p->opsym[p->toks[t].op];
	if (!sym)
		decline(p);
	push(p, leaf_tok(p, sym, false, t), field);
}

static void enter(struct pyparser *p)
{
	if (++p->depth > MAX_DEPTH)
		decline(p);
}

static inline void leave(struct pyparser *p)
{
	p->depth--;
}

static inline void set_sym(struct pyparser *p, uint32_t id, int sym)
{
	p->t->nodes[id].sym = p->sym[sym];
}

/* ---- strings ---- */

/* A running position inside a token, for the points of its parts. */
struct cursor {
	uint32_t at;
	struct pt_point pt;
};

static void cursor_to(const struct pyparser *p, struct cursor *c, uint32_t to)
{
	const char *s = p->text;
	while (c->at < to) {
		const char *nl = memchr(s + c->at, '\n', to - c->at);
		if (!nl) {
			c->pt.col += to - c->at;
			c->at = to;
			break;
		}
		uint32_t k = (uint32_t)(nl - s);
		c->pt.row++;
		c->pt.col = 0;
		c->at = k + 1;
	}
}

/* The length of an escape sequence at s[i] == '\\', or 0 if there is none
 * (the backslash is then plain content). */
static uint32_t escape_len(const char *s, uint32_t i, uint32_t end, bool bytes)
{
	uint32_t k = i + 1;
	if (k >= end)
		return 0;
	char c = s[k];
	if (bytes && (c == 'N' || c == 'u' || c == 'U'))
		return 0;
	int hex = c == 'u' ? 4 : c == 'U' ? 8 : c == 'x' ? 2 : 0;
	if (hex) {
		for (int j = 1; j <= hex; j++)
			if (k + (uint32_t)j >= end || !is_hex((unsigned char)s[k + (uint32_t)j]))
				return 0;
		return 2 + (uint32_t)hex;
	}
	if (is_digit((unsigned char)c)) {
		uint32_t j = k;
		while (j < end && j < k + 3 && is_digit((unsigned char)s[j]))
			j++;
		return j - i;
	}
	if (c == '\n')
		return 2;
	if (c == '\r')
		return k + 1 < end && s[k + 1] == '\n' ? 3 : 0;
	if (strchr("'\"abfrntv\\", c))
		return 2;
	if (c == 'N' && k + 1 < end && s[k + 1] == '{') {
		uint32_t j = k + 2;
		while (j < end && s[j] != '}')
			j++;
		if (j < end && j > k + 2)
			return j + 1 - i;
	}
	return 0;
}

/* A string_content node over text[a, b) with its escape sequences (and, in
 * f-strings, escaped braces) as children. c is at a. */
static void push_content(struct pyparser *p, struct cursor *c, uint32_t a, uint32_t b, uint8_t flags)
{
	if (a == b)
		return;
	const char *s = p->text;
	uint32_t base = p->kids.n;
	struct pt_point ap = c->pt;
	for (uint32_t i = a; i < b;) {
		uint32_t n = 0;
		int sym = S_ESCAPE_SEQUENCE;
		if (s[i] == '\\' && !(flags & SF_RAW)) {
			n = escape_len(s, i, b, flags & SF_BYTES);
			if (!n) {
				i += 1; /* a lone backslash: content, and so is what follows */
				continue;
			}
		} else if ((flags & SF_FORMAT) && (s[i] == '{' || s[i] == '}')) {
			n = 2;
			sym = S_ESCAPE_INTERPOLATION;
		} else if (s[i] == '\\') {
			i += (i + 1 < b) ? 2 : 1; /* raw: backslash and the next char */
			continue;
		} else {
			i++;
			continue;
		}
		cursor_to(p, c, i);
		struct pt_point ep_start = c->pt;
		cursor_to(p, c, i + n);
		push(p, leaf_span(p, sym, i, i + n, ep_start, c->pt, p->kids.n), F_NONE);
		i += n;
	}
	cursor_to(p, c, b);
	push(p, leaf_span(p, S_STRING_CONTENT, a, b, ap, c->pt, base), F_NONE);
}

static uint32_t expression(struct pyparser *p);
static uint32_t star_expressions(struct pyparser *p, bool allow_yield, int as_list_sym);

/* string_start of a token: prefix and opening quote(s). */
static void push_start(struct pyparser *p, const struct tok *k, struct cursor *c, uint32_t *body)
{
	const char *s = p->text;
	uint32_t i = k->start;
	while (s[i] != '"' && s[i] != '\'')
		i++;
	i += (k->op & SF_TRIPLE) ? 3 : 1;
	*body = i;
	struct pt_point sp = k->sp;
	cursor_to(p, c, i);
	struct pt_span span = {k->start, i, sp, c->pt};
	push(p, pt_add(p->t, p->sym[S_STRING_START], true, span, NULL, NULL, 0), F_NONE);
}

static void push_end(struct pyparser *p, struct cursor *c, uint32_t a, uint32_t b)
{
	cursor_to(p, c, a);
	struct pt_point ap = c->pt;
	cursor_to(p, c, b);
	push(p, leaf_span(p, S_STRING_END, a, b, ap, c->pt, p->kids.n), F_NONE);
}

/* The fields of an interpolation / format_expression after its '{'. */
static void interpolation_body(struct pyparser *p);

static uint32_t fstring(struct pyparser *p)
{
	uint32_t t0 = advance(p);
	const struct tok *k = &p->toks[t0];
	uint8_t flags = k->op;
	uint32_t base = p->kids.n, body;
	struct cursor c = {k->start, k->sp};
	push_start(p, k, &c, &body);
	for (;;) {
		const struct tok *t = cur(p);
		if (t->type == T_FMID) {
			c = (struct cursor){t->start, t->sp};
			push_content(p, &c, t->start, t->end, flags);
			advance(p);
		} else if (t->type == T_FLBRACE) {
			uint32_t b0 = advance(p);
			uint32_t ib = p->kids.n;
			interpolation_body(p);
			push(p, make(p, S_INTERPOLATION, ib, b0), F_NONE);
		} else if (t->type == T_FEND) {
			c = (struct cursor){t->start, t->sp};
			push_end(p, &c, t->start, t->end);
			advance(p);
			break;
		} else {
			decline(p);
		}
	}
	return make(p, S_STRING, base, t0);
}

static void interpolation_body(struct pyparser *p)
{
	enter(p);
	if (is_kw(p, K_YIELD) || is_op(p, O_STAR))
		decline(p);
	push(p, star_expressions(p, false, S_EXPRESSION_LIST), F_EXPRESSION);
	if (is_op(p, O_EQ))
		advance(p);
	if (cur(p)->type == T_FCONV)
		push(p, leaf_tok(p, p->sym[S_TYPE_CONVERSION], true, advance(p)), F_TYPE_CONVERSION);
	if (cur(p)->type == T_FCOLON) {
		uint32_t c0 = advance(p);
		uint32_t fb = p->kids.n;
		for (;;) {
			if (cur(p)->type == T_FSPEC) {
				advance(p);
			} else if (cur(p)->type == T_FLBRACE) {
				uint32_t b0 = advance(p);
				uint32_t ib = p->kids.n;
				interpolation_body(p);
				push(p, make(p, S_FORMAT_EXPRESSION, ib, b0), F_NONE);
			} else {
				break;
			}
		}
		push(p, make(p, S_FORMAT_SPECIFIER, fb, c0), F_FORMAT_SPECIFIER);
	}
	if (cur(p)->type != T_FRBRACE)
		decline(p);
	advance(p);
	leave(p);
}

/* tree-sitter's scanner steps over a raw string's backslash pairs without
 * counting them as content: when the body has nothing else, the pairs end up
 * in string_end. */
static bool raw_pairs_only(const char *s, uint32_t a, uint32_t b, char q)
{
	if (a == b)
		return false;
	for (uint32_t i = a; i < b;) {
		if (s[i] != '\\')
			return false;
		i++;
		if (i < b && (s[i] == q || s[i] == '\\'))
			i++;
		if (i < b && s[i] == '\r') {
			i++;
			if (i < b && s[i] == '\n')
				i++;
		} else if (i < b && s[i] == '\n') {
			i++;
		}
	}
	return true;
}

static uint32_t plain_string(struct pyparser *p)
{
	uint32_t t0 = advance(p);
	const struct tok *k = &p->toks[t0];
	uint32_t base = p->kids.n, body;
	struct cursor c = {k->start, k->sp};
	push_start(p, k, &c, &body);
	uint32_t qn = (k->op & SF_TRIPLE) ? 3 : 1;
	if ((k->op & SF_RAW) && raw_pairs_only(p->text, body, k->end - qn, p->text[k->end - 1])) {
		push_end(p, &c, body, k->end);
	} else {
		push_content(p, &c, body, k->end - qn, k->op);
		push_end(p, &c, k->end - qn, k->end);
	}
	return make(p, S_STRING, base, t0);
}

static uint32_t strings(struct pyparser *p)
{
	uint32_t t0 = p->pos;
	uint32_t base = p->kids.n;
	int n = 0;
	while (cur(p)->type == T_STRING || cur(p)->type == T_FSTART) {
		push(p, cur(p)->type == T_STRING ? plain_string(p) : fstring(p), F_NONE);
		n++;
	}
	if (n == 1) {
		p->kids.n = base;
		return p->kids.ids[base];
	}
	return make(p, S_CONCATENATED_STRING, base, t0);
}

/* ---- expressions ---- */

static uint32_t disjunction(struct pyparser *p);
static uint32_t bitor(struct pyparser *p);
static uint32_t unary(struct pyparser *p);
static uint32_t primary(struct pyparser *p);
static uint32_t lambda_expr(struct pyparser *p, bool in_for);
static void comprehension_clauses(struct pyparser *p);
static uint32_t yield_expr(struct pyparser *p);
static void argument_list(struct pyparser *p, int field);

/* Whether the current token can begin an expression. */
static bool starts_expression(const struct tok *t)
{
	switch (t->type) {
	case T_NAME:
		return tok_is_soft(t) || t->op == K_NOT || t->op == K_LAMBDA || t->op == K_TRUE ||
		       t->op == K_FALSE || t->op == K_NONE || t->op == K_AWAIT;
	case T_INT: case T_FLOAT: case T_STRING: case T_FSTART:
		return true;
	case T_OP:
		return t->op == O_LPAR || t->op == O_LSQB || t->op == O_LBRACE || t->op == O_MINUS ||
		       t->op == O_PLUS || t->op == O_TILDE || t->op == O_ELLIPSIS;
	default:
		return false;
	}
}

static uint32_t expression(struct pyparser *p)
{
	enter(p);
	uint32_t r;
	if (is_kw(p, K_LAMBDA)) {
		r = lambda_expr(p, false);
	} else if (is_ident(p) && tok_is_op(peek(p, 1), O_WALRUS)) {
		uint32_t base = p->kids.n;
		uint32_t name = identifier(p);
		push(p, name, F_NAME);
		advance(p);
		push(p, expression(p), F_VALUE);
		r = make_from(p, S_NAMED_EXPRESSION, base, name);
	} else {
		r = disjunction(p);
		if (is_kw(p, K_IF)) {
			uint32_t base = p->kids.n;
			push(p, r, F_NONE);
			advance(p);
			push(p, disjunction(p), F_NONE);
			expect_kw(p, K_ELSE);
			push(p, expression(p), F_NONE);
			r = make_from(p, S_CONDITIONAL_EXPRESSION, base, r);
		}
	}
	leave(p);
	return r;
}

static uint32_t comparison(struct pyparser *p)
{
	uint32_t l = bitor(p);
	uint32_t base = p->kids.n;
	bool cmp = false;
	for (;;) {
		const struct tok *t = cur(p), *u = peek(p, 1);
		int two = -1; /* symbol of a two-word operator */
		bool one = false;
		if (t->type == T_OP)
			one = t->op == O_LT || t->op == O_GT || t->op == O_LE || t->op == O_GE ||
			      t->op == O_EQEQ || t->op == O_NE || t->op == O_LTGT;
		else if (t->type == T_NAME && t->op == K_IN)
			one = true;
		else if (t->type == T_NAME && t->op == K_IS)
			if (u->type == T_NAME && u->op == K_NOT)
				two = S_IS_NOT;
			else
				one = true;
		else if (t->type == T_NAME && t->op == K_NOT && u->type == T_NAME && u->op == K_IN)
			two = S_NOT_IN;
		if (!one && two < 0)
			break;
		if (!cmp) {
			push(p, l, F_NONE);
			cmp = true;
		}
		if (two >= 0) {
			uint32_t a = advance(p);
			advance(p);
			const struct tok *ta = &p->toks[a], *tb = &p->toks[p->last];
			struct pt_span span = {ta->start, tb->end, ta->sp, tb->ep};
			push(p, pt_add(p->t, p->sym[two], false, span, NULL, NULL, 0), F_OPERATORS);
		} else {
			push_op(p, F_OPERATORS);
		}
		push(p, bitor(p), F_NONE);
	}
	return cmp ? make_from(p, S_COMPARISON_OPERATOR, base, l) : l;
}

static uint32_t inversion(struct pyparser *p)
{
	if (!is_kw(p, K_NOT))
		return comparison(p);
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	enter(p);
	push(p, inversion(p), F_ARGUMENT);
	leave(p);
	return make(p, S_NOT_OPERATOR, base, t0);
}

/* `or` chains of `and` chains, left-associative. */
static uint32_t boolean_chain(struct pyparser *p, uint8_t kw)
{
	uint32_t l = kw == K_OR ? boolean_chain(p, K_AND) : inversion(p);
	while (is_kw(p, kw)) {
		uint32_t base = p->kids.n;
		push(p, l, F_LEFT);
		push_op(p, F_OPERATOR);
		enter(p);
		push(p, kw == K_OR ? boolean_chain(p, K_AND) : inversion(p), F_RIGHT);
		leave(p);
		l = make_from(p, S_BOOLEAN_OPERATOR, base, l);
	}
	return l;
}

static uint32_t disjunction(struct pyparser *p)
{
	return boolean_chain(p, K_OR);
}

/* tree-sitter-python's binary precedences (^ binds tighter than &). */
static int binary_prec(const struct tok *t)
{
	if (t->type != T_OP)
		return 0;
	switch (t->op) {
	case O_PIPE: return 14;
	case O_AMP: return 15;
	case O_CARET: return 16;
	case O_LSHIFT: case O_RSHIFT: return 17;
	case O_PLUS: case O_MINUS: return 18;
	case O_STAR: case O_AT: case O_SLASH: case O_PERCENT: case O_DSLASH: return 19;
	default: return 0;
	}
}

static uint32_t binary(struct pyparser *p, int min)
{
	uint32_t l = unary(p);
	for (;;) {
		int prec = binary_prec(cur(p));
		if (!prec || prec < min)
			return l;
		uint32_t base = p->kids.n;
		push(p, l, F_LEFT);
		push_op(p, F_OPERATOR);
		enter(p);
		push(p, binary(p, prec + 1), F_RIGHT);
		leave(p);
		l = make_from(p, S_BINARY_OPERATOR, base, l);
	}
}

static uint32_t bitor(struct pyparser *p)
{
	return binary(p, 14);
}

static uint32_t power(struct pyparser *p)
{
	uint32_t l;
	if (is_kw(p, K_AWAIT) && starts_expression(peek(p, 1)) &&
	    !(peek(p, 1)->type == T_NAME && peek(p, 1)->op == K_NOT)) {
		uint32_t base = p->kids.n;
		uint32_t t0 = advance(p);
		enter(p);
		push(p, power(p), F_NONE);
		leave(p);
		return make(p, S_AWAIT, base, t0);
	}
	l = primary(p);
	if (is_op(p, O_POW)) {
		uint32_t base = p->kids.n;
		push(p, l, F_LEFT);
		push_op(p, F_OPERATOR);
		enter(p);
		push(p, unary(p), F_RIGHT);
		leave(p);
		l = make_from(p, S_BINARY_OPERATOR, base, l);
	}
	return l;
}

static uint32_t unary(struct pyparser *p)
{
	if (is_op(p, O_MINUS) || is_op(p, O_PLUS) || is_op(p, O_TILDE)) {
		uint32_t base = p->kids.n;
		uint32_t t0 = p->pos;
		push_op(p, F_OPERATOR);
		enter(p);
		push(p, unary(p), F_ARGUMENT);
		leave(p);
		return make(p, S_UNARY_OPERATOR, base, t0);
	}
	return power(p);
}

/* `*` or `**` (the current token), then its operand: a node of sym. */
static uint32_t splat(struct pyparser *p, int sym, uint32_t (*operand)(struct pyparser *))
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	push(p, operand(p), F_NONE);
	return make(p, sym, base, t0);
}

/* Whether a comprehension clause starts here: `for` or `async for`. */
static inline bool at_for(const struct pyparser *p)
{
	return is_kw(p, K_FOR) || (is_kw(p, K_ASYNC) && peek(p, 1)->op == K_FOR);
}

/* The rest of a comprehension whose body was just parsed: its clauses and
 * the closing bracket; the node (sym) spans from the opening one, t0. */
static uint32_t comprehension(struct pyparser *p, int sym, uint32_t base, uint32_t t0, uint32_t body,
			      uint8_t close)
{
	push(p, body, F_BODY);
	comprehension_clauses(p);
	expect_op(p, close);
	return make(p, sym, base, t0);
}

/* `key: value` once the key is parsed. */
static uint32_t pair_after_key(struct pyparser *p, uint32_t key)
{
	uint32_t base = p->kids.n;
	push(p, key, F_KEY);
	expect_op(p, O_COLON);
	push(p, expression(p), F_VALUE);
	return make_from(p, S_PAIR, base, key);
}

/* An element of a list / tuple / set / call: `*x` or an expression. In
 * lists, sets and expression lists tree-sitter reads `*a.b` as `(*a).b`:
 * there (bare) only `*name` is taken. */
static uint32_t star_element_in(struct pyparser *p, bool bare)
{
	if (!is_op(p, O_STAR))
		return expression(p);
	uint32_t s = splat(p, S_LIST_SPLAT, expression);
	const struct pt_node *n = &p->t->nodes[s];
	if (bare && p->t->nodes[p->t->kids[n->kids]].sym != p->sym[S_IDENTIFIER])
		decline(p);
	return s;
}

static inline uint32_t star_element(struct pyparser *p)
{
	return star_element_in(p, true);
}

/* Comma-separated elements ending before a token that cannot continue
 * them; one element without a trailing comma is returned alone, more are
 * wrapped in list_sym. */
static uint32_t star_expressions(struct pyparser *p, bool allow_yield, int list_sym)
{
	if (allow_yield && is_kw(p, K_YIELD))
		return yield_expr(p);
	uint32_t base = p->kids.n;
	uint32_t first = star_element(p);
	if (!is_op(p, O_COMMA))
		return first;
	push(p, first, F_NONE);
	while (is_op(p, O_COMMA)) {
		advance(p);
		if (!starts_expression(cur(p)) && !is_op(p, O_STAR))
			break;
		push(p, star_element(p), F_NONE);
	}
	return make_from(p, list_sym, base, first);
}

static uint32_t yield_expr(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	if (is_kw(p, K_FROM)) {
		advance(p);
		push(p, expression(p), F_NONE);
	} else if (starts_expression(cur(p))) {
		uint32_t e = star_expressions(p, false, S_EXPRESSION_LIST);
		const struct pt_node *n = &p->t->nodes[e];
		if (n->sym == p->sym[S_EXPRESSION_LIST])
			for (uint32_t i = 0; i < n->nkids; i++)
				if (p->t->nodes[p->t->kids[n->kids + i]].sym == p->sym[S_LIST_SPLAT])
					decline(p); /* tree-sitter does not splat in a yield */
		push(p, e, F_NONE);
	} else if (is_op(p, O_STAR)) {
		decline(p);
	}
	return make(p, S_YIELD, base, t0);
}

/* Collection elements after the first, to the closing bracket. */
static void more_elements(struct pyparser *p, uint8_t close)
{
	while (is_op(p, O_COMMA)) {
		advance(p);
		if (is_op(p, close))
			break;
		if (is_kw(p, K_YIELD))
			push(p, yield_expr(p), F_NONE);
		else
			push(p, star_element_in(p, close != O_RPAR), F_NONE);
	}
	expect_op(p, close);
}

static uint32_t paren_atom(struct pyparser *p)
{
	uint32_t t0 = advance(p);
	uint32_t base = p->kids.n;
	if (is_op(p, O_RPAR)) {
		advance(p);
		return make(p, S_TUPLE, base, t0);
	}
	if (is_kw(p, K_YIELD)) {
		push(p, yield_expr(p), F_NONE);
		if (is_op(p, O_COMMA))
			decline(p);
		expect_op(p, O_RPAR);
		return make(p, S_PARENTHESIZED_EXPRESSION, base, t0);
	}
	bool starred = is_op(p, O_STAR);
	uint32_t e = star_element_in(p, false);
	if (!starred && at_for(p))
		return comprehension(p, S_GENERATOR_EXPRESSION, base, t0, e, O_RPAR);
	push(p, e, F_NONE);
	if (is_op(p, O_RPAR)) {
		if (starred)
			decline(p); /* (*a): parenthesized_list_splat */
		advance(p);
		return make(p, S_PARENTHESIZED_EXPRESSION, base, t0);
	}
	if (!is_op(p, O_COMMA))
		decline(p);
	more_elements(p, O_RPAR);
	return make(p, S_TUPLE, base, t0);
}

static uint32_t list_atom(struct pyparser *p)
{
	uint32_t t0 = advance(p);
	uint32_t base = p->kids.n;
	if (is_op(p, O_RSQB)) {
		advance(p);
		return make(p, S_LIST, base, t0);
	}
	bool starred = is_op(p, O_STAR);
	uint32_t e = is_kw(p, K_YIELD) ? yield_expr(p) : star_element(p);
	if (!starred && at_for(p))
		return comprehension(p, S_LIST_COMPREHENSION, base, t0, e, O_RSQB);
	push(p, e, F_NONE);
	more_elements(p, O_RSQB);
	return make(p, S_LIST, base, t0);
}

static uint32_t dict_item(struct pyparser *p)
{
	if (is_op(p, O_POW))
		return splat(p, S_DICTIONARY_SPLAT, expression);
	return pair_after_key(p, expression(p));
}

static uint32_t brace_atom(struct pyparser *p)
{
	uint32_t t0 = advance(p);
	uint32_t base = p->kids.n;
	if (is_op(p, O_RBRACE)) {
		advance(p);
		return make(p, S_DICTIONARY, base, t0);
	}
	uint32_t first;
	if (is_op(p, O_POW)) {
		first = dict_item(p);
	} else {
		bool starred = is_op(p, O_STAR);
		first = star_element(p);
		if (starred || !is_op(p, O_COLON)) {
			if (!starred && at_for(p))
				return comprehension(p, S_SET_COMPREHENSION, base, t0, first, O_RBRACE);
			push(p, first, F_NONE);
			more_elements(p, O_RBRACE);
			return make(p, S_SET, base, t0);
		}
		first = pair_after_key(p, first);
		if (at_for(p))
			return comprehension(p, S_DICTIONARY_COMPREHENSION, base, t0, first, O_RBRACE);
	}
	push(p, first, F_NONE);
	while (is_op(p, O_COMMA)) {
		advance(p);
		if (is_op(p, O_RBRACE))
			break;
		push(p, dict_item(p), F_NONE);
	}
	expect_op(p, O_RBRACE);
	return make(p, S_DICTIONARY, base, t0);
}

static uint32_t atom(struct pyparser *p)
{
	const struct tok *t = cur(p);
	switch (t->type) {
	case T_NAME:
		switch (t->op) {
		case K_TRUE: return leaf_tok(p, p->sym[S_TRUE], true, advance(p));
		case K_FALSE: return leaf_tok(p, p->sym[S_FALSE], true, advance(p));
		case K_NONE: return leaf_tok(p, p->sym[S_NONE], true, advance(p));
		default: return identifier(p);
		}
	case T_INT: return leaf_tok(p, p->sym[S_INTEGER], true, advance(p));
	case T_FLOAT: return leaf_tok(p, p->sym[S_FLOAT], true, advance(p));
	case T_STRING: case T_FSTART: return strings(p);
	case T_OP:
		switch (t->op) {
		case O_ELLIPSIS: return leaf_tok(p, p->sym[S_ELLIPSIS], true, advance(p));
		case O_LPAR: return paren_atom(p);
		case O_LSQB: return list_atom(p);
		case O_LBRACE: return brace_atom(p);
		default: break;
		}
		break;
	default:
		break;
	}
	decline(p);
}

/* One subscript element: an expression or a slice. */
static uint32_t subscript_element(struct pyparser *p)
{
	uint32_t t0 = p->pos;
	uint32_t base = p->kids.n;
	uint32_t e = PT_NULL;
	if (!is_op(p, O_COLON)) {
		if (is_op(p, O_STAR))
			decline(p);
		e = expression(p);
		if (!is_op(p, O_COLON))
			return e;
		push(p, e, F_NONE);
	}
	advance(p); /* the first ':' */
	if (starts_expression(cur(p)))
		push(p, expression(p), F_NONE);
	if (is_op(p, O_COLON)) {
		advance(p);
		if (starts_expression(cur(p)))
			push(p, expression(p), F_NONE);
	}
	return make(p, S_SLICE, base, t0);
}

static uint32_t primary(struct pyparser *p)
{
	uint32_t a = atom(p);
	for (;;) {
		if (is_op(p, O_DOT)) {
			uint32_t base = p->kids.n;
			push(p, a, F_OBJECT);
			advance(p);
			/* after '.', a keyword is a plain name to tree-sitter */
			if (cur(p)->type != T_NAME)
				decline(p);
			push(p, leaf_tok(p, p->sym[S_IDENTIFIER], true, advance(p)), F_ATTRIBUTE);
			a = make_from(p, S_ATTRIBUTE, base, a);
		} else if (is_op(p, O_LPAR)) {
			uint32_t base = p->kids.n;
			push(p, a, F_FUNCTION);
			argument_list(p, F_ARGUMENTS);
			a = make_from(p, S_CALL, base, a);
		} else if (is_op(p, O_LSQB)) {
			uint32_t base = p->kids.n;
			push(p, a, F_VALUE);
			advance(p);
			enter(p);
			push(p, subscript_element(p), F_SUBSCRIPT);
			while (is_op(p, O_COMMA)) {
				advance(p);
				if (is_op(p, O_RSQB))
					break;
				push(p, subscript_element(p), F_SUBSCRIPT);
			}
			leave(p);
			expect_op(p, O_RSQB);
			a = make_from(p, S_SUBSCRIPT, base, a);
		} else {
			return a;
		}
	}
}

/* `(` arguments `)`: an argument_list, or a generator_expression when a
 * comprehension is the only argument; pushed with `field`. */
static void argument_list(struct pyparser *p, int field)
{
	uint32_t t0 = advance(p);
	uint32_t base = p->kids.n;
	enter(p);
	bool first = true;
	while (!is_op(p, O_RPAR)) {
		if (!first) {
			expect_op(p, O_COMMA);
			if (is_op(p, O_RPAR))
				break;
		}
		if (is_op(p, O_STAR)) {
			push(p, splat(p, S_LIST_SPLAT, expression), F_NONE);
		} else if (is_op(p, O_POW)) {
			push(p, splat(p, S_DICTIONARY_SPLAT, expression), F_NONE);
		} else if (cur(p)->type == T_NAME && tok_is_op(peek(p, 1), O_EQ)) {
			uint32_t b = p->kids.n;
			uint32_t name;
			if (!tok_is_soft(cur(p)))
				decline(p);
			name = identifier(p);
			push(p, name, F_NAME);
			advance(p);
			push(p, expression(p), F_VALUE);
			push(p, make_from(p, S_KEYWORD_ARGUMENT, b, name), F_NONE);
		} else if (is_op(p, O_LPAR) && tok_is_op(peek(p, 1), O_STAR)) {
			decline(p); /* (*a): parenthesized_list_splat */
		} else {
			uint32_t e = expression(p);
			if (first && at_for(p)) {
				uint32_t g = comprehension(p, S_GENERATOR_EXPRESSION, base, t0, e, O_RPAR);
				leave(p);
				push(p, g, field);
				return;
			}
			push(p, e, F_NONE);
		}
		first = false;
	}
	advance(p);
	leave(p);
	push(p, make(p, S_ARGUMENT_LIST, base, t0), field);
}

/* ---- targets (patterns) ---- */

/* Turns an expression node parsed as an assignment / loop target into the
 * pattern tree-sitter builds for it. */
static void to_pattern(struct pyparser *p, uint32_t id)
{
	struct pt_node *n = &p->t->nodes[id];
	uint16_t s = n->sym;
	if (s == p->sym[S_IDENTIFIER] || s == p->sym[S_ATTRIBUTE] || s == p->sym[S_SUBSCRIPT])
		return;
	int to;
	if (s == p->sym[S_TUPLE])
		to = S_TUPLE_PATTERN;
	else if (s == p->sym[S_LIST])
		to = S_LIST_PATTERN;
	else if (s == p->sym[S_EXPRESSION_LIST])
		to = S_PATTERN_LIST;
	else if (s == p->sym[S_LIST_SPLAT])
		to = S_LIST_SPLAT_PATTERN;
	else if (s == p->sym[S_PARENTHESIZED_EXPRESSION])
		to = S_TUPLE_PATTERN;
	else
		decline(p);
	set_sym(p, id, to);
	enter(p);
	for (uint32_t i = 0; i < n->nkids; i++) {
		uint32_t k = p->t->kids[n->kids + i];
		if (to == S_LIST_SPLAT_PATTERN) {
			uint16_t ks = p->t->nodes[k].sym;
			if (ks != p->sym[S_IDENTIFIER] && ks != p->sym[S_ATTRIBUTE] &&
			    ks != p->sym[S_SUBSCRIPT])
				decline(p);
		} else {
			to_pattern(p, k);
		}
	}
	leave(p);
}

/* Loop targets: `a`, `a, b`, `(a, b), *c` (stops before `in`). */
static uint32_t targets(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t first = PT_NULL;
	int n = 0;
	bool comma = false;
	for (;;) {
		uint32_t e = is_op(p, O_STAR) ? splat(p, S_LIST_SPLAT, bitor) : bitor(p);
		if (first == PT_NULL)
			first = e;
		push(p, e, F_NONE);
		n++;
		if (!is_op(p, O_COMMA))
			break;
		advance(p);
		comma = true;
		if (is_kw(p, K_IN))
			break;
	}
	uint32_t r;
	if (n == 1 && !comma) {
		p->kids.n = base;
		r = first;
	} else {
		r = make_from(p, S_EXPRESSION_LIST, base, first);
	}
	to_pattern(p, r);
	return r;
}

static void comprehension_clauses(struct pyparser *p)
{
	enter(p);
	for (;;) {
		if (at_for(p)) {
			uint32_t base = p->kids.n;
			uint32_t t0 = p->pos;
			if (is_kw(p, K_ASYNC))
				advance(p);
			advance(p);
			push(p, targets(p), F_LEFT);
			expect_kw(p, K_IN);
			for (;;) {
				push(p, is_kw(p, K_LAMBDA) ? lambda_expr(p, true) : disjunction(p), F_RIGHT);
				if (!is_op(p, O_COMMA))
					break;
				if (!starts_expression(peek(p, 1))) {
					advance(p); /* a trailing comma: in the range, not a child */
					break;
				}
				push_op(p, F_RIGHT);
			}
			push(p, make(p, S_FOR_IN_CLAUSE, base, t0), F_NONE);
		} else if (is_kw(p, K_IF)) {
			uint32_t base = p->kids.n;
			uint32_t t0 = advance(p);
			push(p, disjunction(p), F_NONE);
			push(p, make(p, S_IF_CLAUSE, base, t0), F_NONE);
		} else {
			break;
		}
	}
	leave(p);
}

/* ---- parameters, lambda, types ---- */

static uint32_t type_node(struct pyparser *p);

/* A generic type: name[type, ...]. */
static uint32_t generic_type(struct pyparser *p)
{
	uint32_t t0 = p->pos;
	uint32_t gb = p->kids.n;
	push(p, identifier(p), F_NONE);
	uint32_t b0 = advance(p);
	uint32_t tb = p->kids.n;
	push(p, type_node(p), F_NONE);
	while (is_op(p, O_COMMA)) {
		advance(p);
		if (is_op(p, O_RSQB))
			break;
		push(p, type_node(p), F_NONE);
	}
	expect_op(p, O_RSQB);
	push(p, make(p, S_TYPE_PARAMETER, tb, b0), F_NONE);
	return make(p, S_GENERIC_TYPE, gb, t0);
}

static inline bool at_generic(const struct pyparser *p)
{
	return is_ident(p) && tok_is_op(peek(p, 1), O_LSQB);
}

/* An annotation. tree-sitter reads it as an expression, except that a
 * leading name[...] is a generic_type, and then `|` makes left-associative
 * union_types whose right side is another generic or an expression that
 * takes all the rest. */
static uint32_t type_node(struct pyparser *p)
{
	uint32_t t0 = p->pos;
	uint32_t base = p->kids.n;
	enter(p);
	if (is_op(p, O_STAR) || is_op(p, O_POW))
		decline(p); /* splat_type */
	if (!at_generic(p)) {
		push(p, expression(p), F_NONE);
		leave(p);
		return make(p, S_TYPE, base, t0);
	}
	push(p, generic_type(p), F_NONE);
	uint32_t left = make(p, S_TYPE, base, t0);
	while (is_op(p, O_PIPE)) {
		uint32_t ub = p->kids.n;
		push(p, left, F_NONE);
		advance(p);
		uint32_t r0 = p->pos;
		uint32_t rb = p->kids.n;
		bool gen = at_generic(p);
		push(p, gen ? generic_type(p) : expression(p), F_NONE);
		push(p, make(p, S_TYPE, rb, r0), F_NONE);
		push(p, make(p, S_UNION_TYPE, ub, t0), F_NONE);
		left = make(p, S_TYPE, ub, t0);
		if (!gen)
			break;
	}
	const struct tok *t = cur(p);
	if (t->type == T_OP && (binary_prec(t) || t->op == O_DOT || t->op == O_LPAR ||
				t->op == O_LSQB || t->op == O_POW))
		decline(p);
	if (t->type == T_NAME && (t->op == K_IF || t->op == K_AND || t->op == K_OR ||
				  t->op == K_IN || t->op == K_IS || t->op == K_NOT))
		decline(p);
	leave(p);
	return left;
}

/* One parameter of a def (typed) or a lambda. */
static uint32_t parameter(struct pyparser *p, bool typed)
{
	uint32_t t0 = p->pos;
	uint32_t base = p->kids.n;
	if (is_op(p, O_SLASH))
		return leaf_tok(p, p->sym[S_POSITIONAL_SEPARATOR], true, advance(p));
	if (is_op(p, O_STAR) || is_op(p, O_POW)) {
		bool dbl = is_op(p, O_POW);
		if (!dbl && (tok_is_op(peek(p, 1), O_COMMA) || tok_is_op(peek(p, 1), O_RPAR) ||
			     tok_is_op(peek(p, 1), O_COLON)))
			return leaf_tok(p, p->sym[S_KEYWORD_SEPARATOR], true, advance(p));
		advance(p);
		push(p, identifier(p), F_NONE);
		uint32_t sp = make(p, dbl ? S_DICTIONARY_SPLAT_PATTERN : S_LIST_SPLAT_PATTERN, base, t0);
		if (typed && is_op(p, O_COLON)) {
			push(p, sp, F_NONE);
			advance(p);
			push(p, type_node(p), F_TYPE);
			return make(p, S_TYPED_PARAMETER, base, t0);
		}
		return sp;
	}
	uint32_t name = identifier(p);
	if (typed && is_op(p, O_COLON)) {
		advance(p);
		uint32_t ty = type_node(p);
		if (is_op(p, O_EQ)) {
			push(p, name, F_NAME);
			push(p, ty, F_TYPE);
			advance(p);
			push(p, expression(p), F_VALUE);
			return make(p, S_TYPED_DEFAULT_PARAMETER, base, t0);
		}
		push(p, name, F_NONE);
		push(p, ty, F_TYPE);
		return make(p, S_TYPED_PARAMETER, base, t0);
	}
	if (is_op(p, O_EQ)) {
		push(p, name, F_NAME);
		advance(p);
		push(p, expression(p), F_VALUE);
		return make(p, S_DEFAULT_PARAMETER, base, t0);
	}
	return name;
}

static uint32_t lambda_expr(struct pyparser *p, bool in_for)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	if (!is_op(p, O_COLON)) {
		uint32_t pb = p->kids.n;
		uint32_t p0 = p->pos;
		for (;;) {
			push(p, parameter(p, false), F_NONE);
			if (!is_op(p, O_COMMA))
				break;
			advance(p);
			if (is_op(p, O_COLON))
				break;
		}
		push(p, make(p, S_LAMBDA_PARAMETERS, pb, p0), F_PARAMETERS);
	}
	expect_op(p, O_COLON);
	enter(p);
	push(p, in_for ? (is_kw(p, K_LAMBDA) ? lambda_expr(p, true) : disjunction(p)) : expression(p),
	     F_BODY);
	leave(p);
	return make(p, S_LAMBDA, base, t0);
}

static uint32_t parameters(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	expect_op(p, O_LPAR);
	while (!is_op(p, O_RPAR)) {
		if (is_op(p, O_LPAR))
			decline(p); /* Python 2 tuple parameters */
		push(p, parameter(p, true), F_NONE);
		if (!is_op(p, O_COMMA))
			break;
		advance(p);
	}
	expect_op(p, O_RPAR);
	return make(p, S_PARAMETERS, base, t0);
}

/* ---- statements ---- */

static void statement(struct pyparser *p);
static void simple_statements(struct pyparser *p);

static bool is_augassign(const struct tok *t)
{
	return t->type == T_OP && t->op >= O_PLUSEQ && t->op <= O_ATEQ;
}

/* After a compound statement's ':': an indented block, or simple
 * statements on the same line; pushed as a block with `field`. */
static void suite(struct pyparser *p, int field)
{
	uint32_t base = p->kids.n;
	enter(p);
	if (cur(p)->type == T_NEWLINE) {
		advance(p);
		if (cur(p)->type != T_INDENT)
			decline(p);
		advance(p);
		uint32_t t0 = p->pos;
		while (cur(p)->type != T_DEDENT)
			statement(p);
		advance(p);
		push(p, make(p, S_BLOCK, base, t0), field);
	} else {
		uint32_t t0 = p->pos;
		simple_statements(p);
		push(p, make(p, S_BLOCK, base, t0), field);
	}
	leave(p);
}

/* The right side of `=`: yield, another assignment, or expressions. */
static uint32_t right_side(struct pyparser *p)
{
	if (is_kw(p, K_YIELD))
		return yield_expr(p);
	uint32_t e = star_expressions(p, false, S_EXPRESSION_LIST);
	if (is_op(p, O_EQ)) {
		uint32_t base = p->kids.n;
		to_pattern(p, e);
		push(p, e, F_LEFT);
		advance(p);
		enter(p);
		push(p, right_side(p), F_RIGHT);
		leave(p);
		return make_from(p, S_ASSIGNMENT, base, e);
	}
	if (is_augassign(cur(p)))
		decline(p);
	return e;
}

static void expression_statement(struct pyparser *p)
{
	uint32_t t0 = p->pos;
	uint32_t base = p->kids.n;
	if (is_kw(p, K_YIELD)) {
		push(p, yield_expr(p), F_NONE);
		push(p, make(p, S_EXPRESSION_STATEMENT, base, t0), F_NONE);
		return;
	}
	/* the elements, kept apart: `a, b` alone is not an expression_list */
	uint32_t first = star_element(p);
	push(p, first, F_NONE);
	bool comma = false, trailing = false;
	while (is_op(p, O_COMMA)) {
		advance(p);
		comma = true;
		if (!starts_expression(cur(p)) && !is_op(p, O_STAR)) {
			trailing = true;
			break;
		}
		push(p, star_element(p), F_NONE);
	}
	uint32_t n = p->kids.n - base;
	const struct tok *t = cur(p);
	/* `a,` ending a line, with no assignment: tree-sitter joins it to the
	 * next line's `b = 0` or `b: 0` (one `a, b = 0`), where Python sees two
	 * statements; left to tree-sitter, so that both trees agree */
	if (trailing && !tok_is_op(t, O_EQ) && !is_augassign(t))
		decline(p);
	if (tok_is_op(t, O_EQ) || is_augassign(t) || (tok_is_op(t, O_COLON) && n == 1 && !comma)) {
		uint32_t left = n == 1 && !comma ? first : make_from(p, S_EXPRESSION_LIST, base, first);
		p->kids.n = base;
		to_pattern(p, left);
		push(p, left, F_LEFT);
		if (tok_is_op(t, O_EQ)) {
			advance(p);
			push(p, right_side(p), F_RIGHT);
			left = make_from(p, S_ASSIGNMENT, base, left);
		} else if (is_augassign(t)) {
			push_op(p, F_OPERATOR);
			push(p, right_side(p), F_RIGHT);
			left = make_from(p, S_AUGMENTED_ASSIGNMENT, base, left);
		} else {
			advance(p);
			push(p, type_node(p), F_TYPE);
			if (is_op(p, O_EQ)) {
				advance(p);
				push(p, right_side(p), F_RIGHT);
			}
			left = make_from(p, S_ASSIGNMENT, base, left);
		}
		push(p, left, F_NONE);
	}
	push(p, make(p, S_EXPRESSION_STATEMENT, base, t0), F_NONE);
}

static uint32_t dotted_name(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	push(p, identifier(p), F_NONE);
	while (is_op(p, O_DOT)) {
		advance(p);
		push(p, identifier(p), F_NONE);
	}
	return make(p, S_DOTTED_NAME, base, t0);
}

/* `a.b`, `a.b as c`, comma-separated, each pushed with field name; with
 * parentheses when allowed. */
static void import_list(struct pyparser *p, bool parens_ok)
{
	bool parens = parens_ok && is_op(p, O_LPAR);
	if (parens)
		advance(p);
	for (;;) {
		uint32_t base = p->kids.n;
		uint32_t d = dotted_name(p);
		if (is_kw(p, K_AS)) {
			push(p, d, F_NAME);
			advance(p);
			push(p, identifier(p), F_ALIAS);
			d = make_from(p, S_ALIASED_IMPORT, base, d);
		}
		push(p, d, F_NAME);
		if (!is_op(p, O_COMMA))
			break;
		advance(p);
		if (parens ? is_op(p, O_RPAR) : cur(p)->type == T_NEWLINE || is_op(p, O_SEMI))
			break;
	}
	if (parens)
		expect_op(p, O_RPAR);
}

static void simple_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	const struct tok *t = cur(p);
	int sym = -1;
	if (t->type == T_NAME) {
		switch (t->op) {
		case K_PASS: advance(p); sym = S_PASS_STATEMENT; break;
		case K_BREAK: advance(p); sym = S_BREAK_STATEMENT; break;
		case K_CONTINUE: advance(p); sym = S_CONTINUE_STATEMENT; break;
		case K_RETURN:
			advance(p);
			if (starts_expression(cur(p)) || is_op(p, O_STAR))
				push(p, star_expressions(p, false, S_EXPRESSION_LIST), F_NONE);
			sym = S_RETURN_STATEMENT;
			break;
		case K_DEL:
			advance(p);
			push(p, star_expressions(p, false, S_EXPRESSION_LIST), F_NONE);
			sym = S_DELETE_STATEMENT;
			break;
		case K_RAISE:
			advance(p);
			if (starts_expression(cur(p)))
				push(p, star_expressions(p, false, S_EXPRESSION_LIST), F_NONE);
			if (is_kw(p, K_FROM)) {
				advance(p);
				push(p, expression(p), F_CAUSE);
			}
			sym = S_RAISE_STATEMENT;
			break;
		case K_GLOBAL:
		case K_NONLOCAL:
			advance(p);
			push(p, identifier(p), F_NONE);
			while (is_op(p, O_COMMA)) {
				advance(p);
				push(p, identifier(p), F_NONE);
			}
			sym = t->op == K_GLOBAL ? S_GLOBAL_STATEMENT : S_NONLOCAL_STATEMENT;
			break;
		case K_ASSERT:
			advance(p);
			push(p, expression(p), F_NONE);
			while (is_op(p, O_COMMA)) {
				advance(p);
				push(p, expression(p), F_NONE);
			}
			sym = S_ASSERT_STATEMENT;
			break;
		case K_IMPORT:
			advance(p);
			import_list(p, false);
			sym = S_IMPORT_STATEMENT;
			break;
		case K_FROM:
			advance(p);
			if (is_kw(p, K_FUTURE) && peek(p, 1)->type == T_NAME && peek(p, 1)->op == K_IMPORT) {
				advance(p);
				advance(p);
				import_list(p, true);
				sym = S_FUTURE_IMPORT_STATEMENT;
				break;
			}
			if (is_op(p, O_DOT) || is_op(p, O_ELLIPSIS)) {
				uint32_t rb = p->kids.n;
				uint32_t r0 = p->pos;
				while (is_op(p, O_DOT) || is_op(p, O_ELLIPSIS))
					advance(p);
				push(p, make(p, S_IMPORT_PREFIX, p->kids.n, r0), F_NONE);
				if (!is_kw(p, K_IMPORT))
					push(p, dotted_name(p), F_NONE);
				push(p, make(p, S_RELATIVE_IMPORT, rb, r0), F_MODULE_NAME);
			} else {
				push(p, dotted_name(p), F_MODULE_NAME);
			}
			expect_kw(p, K_IMPORT);
			if (is_op(p, O_STAR)) {
				push(p, leaf_tok(p, p->sym[S_WILDCARD_IMPORT], true, advance(p)), F_NONE);
			} else {
				import_list(p, true);
			}
			sym = S_IMPORT_FROM_STATEMENT;
			break;
		default:
			break;
		}
	}
	if (sym < 0) {
		expression_statement(p);
		return;
	}
	push(p, make(p, sym, base, t0), F_NONE);
}

/* Simple statements separated by ';' up to and including the NEWLINE;
 * each is pushed. */
static void simple_statements(struct pyparser *p)
{
	for (;;) {
		simple_statement(p);
		if (is_op(p, O_SEMI)) {
			advance(p);
			if (cur(p)->type == T_NEWLINE)
				break;
			continue;
		}
		break;
	}
	if (cur(p)->type != T_NEWLINE)
		decline(p);
	advance(p);
}

static uint32_t function_definition(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	if (is_kw(p, K_ASYNC))
		advance(p);
	expect_kw(p, K_DEF);
	push(p, identifier(p), F_NAME);
	if (is_op(p, O_LSQB))
		decline(p); /* type parameters */
	push(p, parameters(p), F_PARAMETERS);
	if (is_op(p, O_ARROW)) {
		advance(p);
		push(p, type_node(p), F_RETURN_TYPE);
	}
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	return make(p, S_FUNCTION_DEFINITION, base, t0);
}

static uint32_t class_definition(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	push(p, identifier(p), F_NAME);
	if (is_op(p, O_LSQB))
		decline(p);
	if (is_op(p, O_LPAR))
		argument_list(p, F_SUPERCLASSES);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	return make(p, S_CLASS_DEFINITION, base, t0);
}

/* `expr` or `expr as target` (with items, except clauses). */
static uint32_t maybe_as(struct pyparser *p, uint32_t e)
{
	if (!is_kw(p, K_AS))
		return e;
	uint32_t base = p->kids.n;
	push(p, e, F_NONE);
	advance(p);
	uint32_t tb = p->kids.n;
	uint32_t target = expression(p);
	push(p, target, F_NONE);
	push(p, make_from(p, S_AS_PATTERN_TARGET, tb, target), F_ALIAS);
	return make_from(p, S_AS_PATTERN, base, e);
}

static uint32_t with_item(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t e = maybe_as(p, expression(p));
	push(p, e, F_VALUE);
	return make_from(p, S_WITH_ITEM, base, e);
}

/* Whether `with (` opens a parenthesized list of with items: the matching
 * ')' is followed by ':' and a comma or `as` is directly inside. */
static bool parenthesized_items(const struct pyparser *p)
{
	int depth = 0;
	bool list = false;
	for (uint32_t i = p->pos; i < p->ntoks; i++) {
		const struct tok *t = &p->toks[i];
		if (t->type == T_NEWLINE || t->type == T_EOF)
			return false;
		if (t->type == T_OP && (t->op == O_LPAR || t->op == O_LSQB || t->op == O_LBRACE))
			depth++;
		else if (t->type == T_OP && (t->op == O_RPAR || t->op == O_RSQB || t->op == O_RBRACE)) {
			if (--depth == 0)
				return list && i + 1 < p->ntoks && tok_is_op(&p->toks[i + 1], O_COLON);
		} else if (depth == 1 && (tok_is_op(t, O_COMMA) || (t->type == T_NAME && t->op == K_AS)))
			list = true;
	}
	return false;
}

static uint32_t with_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	if (is_kw(p, K_ASYNC))
		advance(p);
	expect_kw(p, K_WITH);
	uint32_t cb = p->kids.n;
	uint32_t c0 = p->pos;
	bool parens = is_op(p, O_LPAR) && parenthesized_items(p);
	if (parens)
		advance(p);
	for (;;) {
		push(p, with_item(p), F_NONE);
		if (!is_op(p, O_COMMA))
			break;
		advance(p);
		if (parens && is_op(p, O_RPAR))
			break;
	}
	if (parens)
		expect_op(p, O_RPAR);
	push(p, make(p, S_WITH_CLAUSE, cb, c0), F_NONE);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	return make(p, S_WITH_STATEMENT, base, t0);
}

static uint32_t else_clause(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	return make(p, S_ELSE_CLAUSE, base, t0);
}

static uint32_t if_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	push(p, expression(p), F_CONDITION);
	expect_op(p, O_COLON);
	suite(p, F_CONSEQUENCE);
	while (is_kw(p, K_ELIF)) {
		uint32_t eb = p->kids.n;
		uint32_t e0 = advance(p);
		push(p, expression(p), F_CONDITION);
		expect_op(p, O_COLON);
		suite(p, F_CONSEQUENCE);
		push(p, make(p, S_ELIF_CLAUSE, eb, e0), F_ALTERNATIVE);
	}
	if (is_kw(p, K_ELSE))
		push(p, else_clause(p), F_ALTERNATIVE);
	return make(p, S_IF_STATEMENT, base, t0);
}

static uint32_t for_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	if (is_kw(p, K_ASYNC))
		advance(p);
	expect_kw(p, K_FOR);
	push(p, targets(p), F_LEFT);
	expect_kw(p, K_IN);
	push(p, star_expressions(p, false, S_EXPRESSION_LIST), F_RIGHT);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	if (is_kw(p, K_ELSE))
		push(p, else_clause(p), F_ALTERNATIVE);
	return make(p, S_FOR_STATEMENT, base, t0);
}

static uint32_t while_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	push(p, expression(p), F_CONDITION);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	if (is_kw(p, K_ELSE))
		push(p, else_clause(p), F_ALTERNATIVE);
	return make(p, S_WHILE_STATEMENT, base, t0);
}

static uint32_t try_statement(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = advance(p);
	expect_op(p, O_COLON);
	suite(p, F_BODY);
	while (is_kw(p, K_EXCEPT)) {
		uint32_t eb = p->kids.n;
		uint32_t e0 = advance(p);
		if (is_op(p, O_STAR))
			decline(p); /* except* */
		if (!is_op(p, O_COLON)) {
			push(p, maybe_as(p, expression(p)), F_VALUE);
			if (is_op(p, O_COMMA)) {
				advance(p);
				push(p, expression(p), F_ALIAS);
			}
		}
		expect_op(p, O_COLON);
		suite(p, F_NONE);
		push(p, make(p, S_EXCEPT_CLAUSE, eb, e0), F_NONE);
	}
	if (is_kw(p, K_ELSE))
		push(p, else_clause(p), F_NONE);
	if (is_kw(p, K_FINALLY)) {
		uint32_t fb = p->kids.n;
		uint32_t f0 = advance(p);
		expect_op(p, O_COLON);
		suite(p, F_NONE);
		push(p, make(p, S_FINALLY_CLAUSE, fb, f0), F_NONE);
	}
	if (p->kids.n - base < 2)
		decline(p);
	return make(p, S_TRY_STATEMENT, base, t0);
}

static uint32_t decorated_definition(struct pyparser *p)
{
	uint32_t base = p->kids.n;
	uint32_t t0 = p->pos;
	while (is_op(p, O_AT)) {
		uint32_t db = p->kids.n;
		uint32_t d0 = advance(p);
		push(p, expression(p), F_NONE);
		if (cur(p)->type != T_NEWLINE)
			decline(p);
		advance(p);
		push(p, make(p, S_DECORATOR, db, d0), F_NONE);
	}
	if (is_kw(p, K_CLASS))
		push(p, class_definition(p), F_DEFINITION);
	else if (is_kw(p, K_DEF) || (is_kw(p, K_ASYNC) && peek(p, 1)->op == K_DEF))
		push(p, function_definition(p), F_DEFINITION);
	else
		decline(p);
	return make(p, S_DECORATED_DEFINITION, base, t0);
}

/* Whether this logical line has an `=` outside brackets. */
static bool line_assigns(const struct pyparser *p)
{
	int depth = 0;
	for (uint32_t i = p->pos; i < p->ntoks; i++) {
		const struct tok *t = &p->toks[i];
		if (t->type == T_NEWLINE || t->type == T_EOF)
			return false;
		if (t->type != T_OP)
			continue;
		if (t->op == O_LPAR || t->op == O_LSQB || t->op == O_LBRACE)
			depth++;
		else if (t->op == O_RPAR || t->op == O_RSQB || t->op == O_RBRACE)
			depth--;
		else if (t->op == O_EQ && depth == 0)
			return true;
	}
	return false;
}

/* Whether this logical line ends with ':' (a match / case header). */
static bool line_ends_with_colon(const struct pyparser *p)
{
	for (uint32_t i = p->pos; i < p->ntoks; i++)
		if (p->toks[i].type == T_NEWLINE || p->toks[i].type == T_EOF)
			return i > p->pos && tok_is_op(&p->toks[i - 1], O_COLON);
	return false;
}

static void statement(struct pyparser *p)
{
	enter(p);
	const struct tok *t = cur(p), *u = peek(p, 1);
	uint32_t r = PT_NULL;
	if (t->type == T_OP && t->op == O_AT) {
		r = decorated_definition(p);
	} else if (t->type == T_NAME) {
		switch (t->op) {
		case K_DEF: r = function_definition(p); break;
		case K_CLASS: r = class_definition(p); break;
		case K_IF: r = if_statement(p); break;
		case K_FOR: r = for_statement(p); break;
		case K_WHILE: r = while_statement(p); break;
		case K_TRY: r = try_statement(p); break;
		case K_WITH: r = with_statement(p); break;
		case K_ASYNC:
			if (u->type == T_NAME && u->op == K_DEF)
				r = function_definition(p);
			else if (u->type == T_NAME && u->op == K_FOR)
				r = for_statement(p);
			else if (u->type == T_NAME && u->op == K_WITH)
				r = with_statement(p);
			else
				decline(p);
			break;
		case K_MATCH:
		case K_CASE:
			if (line_ends_with_colon(p))
				decline(p);
			break;
		case K_TYPE:
			/* tree-sitter reads `type(x).a = 1` as a type alias */
			if (starts_expression(u) && line_assigns(p))
				decline(p);
			break;
		case K_PRINT:
		case K_EXEC:
			if (u->type == T_NAME || u->type == T_STRING || u->type == T_FSTART ||
			    u->type == T_INT || u->type == T_FLOAT || tok_is_op(u, O_RSHIFT))
				decline(p);
			break;
		case K_ELSE: case K_ELIF: case K_EXCEPT: case K_FINALLY:
			decline(p);
		default:
			break;
		}
	} else if (t->type == T_INDENT || t->type == T_DEDENT || t->type == T_NEWLINE ||
		   t->type == T_EOF) {
		decline(p);
	}
	if (r != PT_NULL)
		push(p, r, F_NONE);
	else
		simple_statements(p);
	leave(p);
}

/* ---- public ---- */

bool pyparse(struct pyparser *p, const char *text, uint32_t len, struct pt_tree *out)
{
	pt_clear(out);
	if (!p->usable || len >= UINT32_MAX / 2 || memchr(text, '\0', len))
		return false; /* (tree-sitter stops at a NUL, even in a comment) */
	p->text = text;
	p->len = len;
	p->t = out;
	p->ntoks = 0;
	p->why_byte = UINT32_MAX;
	p->kids.n = 0;
	p->pos = 0;
	p->last = 0;
	p->depth = 0;
	if (setjmp(p->fail)) {
		pt_clear(out);
		return false;
	}
	pylex(p);
	/* the module spans from its first token or comment to the end */
	uint32_t first = 0;
	struct pt_point fp = {0, 0};
	while (first < len && (text[first] == ' ' || text[first] == '\t' || text[first] == '\n' ||
			       text[first] == '\r')) {
		if (text[first] == '\n') {
			fp.row++;
			fp.col = 0;
		} else {
			fp.col++;
		}
		first++;
	}
	while (cur(p)->type != T_EOF)
		statement(p);
	struct cursor c = {0, {0, 0}};
	cursor_to(p, &c, len);
	struct pt_span span = {first, len, fp, c.pt};
	pt_add_pending(out, p->sym[S_MODULE], true, span, &p->kids, 0);
	return true;
}

void pyparse_why(const struct pyparser *p, int *line, uint32_t *byte)
{
	*line = p->why_line;
	*byte = p->why_byte != UINT32_MAX ? p->why_byte
	      : p->pos < p->ntoks     ? p->toks[p->pos].start
				      : p->len;
}

struct pyparser *pyparser_new(const TSLanguage *lang)
{
	struct pyparser *p = xcalloc(1, sizeof *p);
	p->lang = lang;
	p->usable = true;
	for (int k = 0; k < S_COUNT; k++) {
		bool named = k < S_NOT_IN;
		p->sym[k] = ts_language_symbol_for_name(lang, sym_names[k],
							(uint32_t)strlen(sym_names[k]), named);
		if (!p->sym[k])
			p->usable = false;
	}
	for (int k = 1; k < O_COUNT; k++)
		if (pyparse_op_text[k])
			p->opsym[k] = ts_language_symbol_for_name(lang, pyparse_op_text[k],
								  (uint32_t)strlen(pyparse_op_text[k]), false);
	for (int f = 1; f < F_COUNT; f++) {
		p->fld[f] = ts_language_field_id_for_name(lang, field_names[f],
							  (uint32_t)strlen(field_names[f]));
		if (!p->fld[f])
			p->usable = false;
	}
	return p;
}

void pyparser_free(struct pyparser *p)
{
	if (!p)
		return;
	free(p->toks);
	pt_pending_free(&p->kids);
	free(p->cl);
	free(p);
}
