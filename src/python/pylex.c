/* pylex: the fast parser's tokenizer (see pyparse_int.h). It turns the
 * whole text into tokens the way tree-sitter-python's lexer and external
 * scanner split it: NEWLINE is zero-width right after a line's last token or
 * trailing comment, DEDENT is zero-width where that scanner emits it (after
 * the comment lines indented at least as deep as the block it closes),
 * f-strings are split into literal runs and interpolations. Whatever it
 * does not reproduce (tabs after spaces, non-ASCII names, a NUL, ...) it
 * declines. */
#include <stdlib.h>
#include <string.h>

#include "pyparse_int.h"
#include "core/util.h"

const char *const pyparse_op_text[O_COUNT] = {
	[O_LPAR] = "(", [O_RPAR] = ")", [O_LSQB] = "[", [O_RSQB] = "]", [O_LBRACE] = "{",
	[O_RBRACE] = "}", [O_COMMA] = ",", [O_COLON] = ":", [O_SEMI] = ";", [O_DOT] = ".",
	[O_ELLIPSIS] = "...", [O_AT] = "@", [O_EQ] = "=", [O_ARROW] = "->", [O_WALRUS] = ":=",
	[O_PLUS] = "+", [O_MINUS] = "-", [O_STAR] = "*", [O_SLASH] = "/", [O_DSLASH] = "//",
	[O_PERCENT] = "%", [O_POW] = "**", [O_LSHIFT] = "<<", [O_RSHIFT] = ">>", [O_AMP] = "&",
	[O_PIPE] = "|", [O_CARET] = "^", [O_TILDE] = "~", [O_LT] = "<", [O_GT] = ">",
	[O_LE] = "<=", [O_GE] = ">=", [O_EQEQ] = "==", [O_NE] = "!=", [O_LTGT] = "<>",
	[O_PLUSEQ] = "+=", [O_MINUSEQ] = "-=", [O_STAREQ] = "*=", [O_SLASHEQ] = "/=",
	[O_DSLASHEQ] = "//=", [O_PERCENTEQ] = "%=", [O_POWEQ] = "**=", [O_RSHIFTEQ] = ">>=",
	[O_LSHIFTEQ] = "<<=", [O_AMPEQ] = "&=", [O_CARETEQ] = "^=", [O_PIPEEQ] = "|=",
	[O_ATEQ] = "@=",
	[K_AND] = "and", [K_AS] = "as", [K_ASSERT] = "assert", [K_ASYNC] = "async",
	[K_AWAIT] = "await", [K_BREAK] = "break", [K_CLASS] = "class", [K_CONTINUE] = "continue",
	[K_DEF] = "def", [K_DEL] = "del", [K_ELIF] = "elif", [K_ELSE] = "else",
	[K_EXCEPT] = "except", [K_EXEC] = "exec", [K_FINALLY] = "finally", [K_FOR] = "for",
	[K_FROM] = "from", [K_GLOBAL] = "global", [K_IF] = "if", [K_IMPORT] = "import",
	[K_IN] = "in", [K_IS] = "is", [K_LAMBDA] = "lambda", [K_NONLOCAL] = "nonlocal",
	[K_NOT] = "not", [K_OR] = "or", [K_PASS] = "pass", [K_PRINT] = "print",
	[K_RAISE] = "raise", [K_RETURN] = "return", [K_TRY] = "try", [K_WHILE] = "while",
	[K_WITH] = "with", [K_YIELD] = "yield", [K_MATCH] = "match", [K_CASE] = "case",
	[K_TYPE] = "type", [K_TRUE] = "True", [K_FALSE] = "False", [K_NONE] = "None",
	[K_FUTURE] = "__future__",
};

/* ---- tokenizer ---- */

struct lexer {
	struct pyparser *p;
	const char *s;
	uint32_t len, i;
	uint32_t row, line_start;
	int brackets;            /* open ( [ { of code at f-string depth 0 */
	uint32_t indents[100];
	int nindent;
	bool pending;            /* a token since the last NEWLINE */
	uint32_t nl_at;          /* where that NEWLINE goes: after the last token or comment */
	struct pt_point nl_pt;
	char quotes[64];         /* quote characters of the enclosing f-strings */
	bool triples[64];        /* and whether each is triple-quoted */
	int nquotes;
	size_t ncl;              /* comment lines in p->cl */
};

#define lx_decline(lx) ((lx)->p->why_byte = (lx)->i, decline((lx)->p))

static inline struct pt_point lpoint(const struct lexer *lx, uint32_t at)
{
	return (struct pt_point){lx->row, at - lx->line_start};
}

static struct tok *push_tok(struct pyparser *p)
{
	if (p->ntoks == p->captoks) {
		p->captoks = p->captoks ? p->captoks * 2 : 4096;
		p->toks = xrealloc(p->toks, p->captoks * sizeof *p->toks);
	}
	return &p->toks[p->ntoks++];
}

/* A token from start to the current position. */
static void emit(struct lexer *lx, uint8_t type, uint8_t op, uint32_t start, struct pt_point sp)
{
	struct tok *t = push_tok(lx->p);
	*t = (struct tok){type, op, start, lx->i, sp, lpoint(lx, lx->i)};
	lx->pending = true;
	lx->nl_at = t->end;
	lx->nl_pt = t->ep;
}

/* A zero-width NEWLINE / INDENT / DEDENT. */
static void emit_at(struct lexer *lx, uint8_t type, uint32_t at, struct pt_point pt)
{
	struct tok *t = push_tok(lx->p);
	*t = (struct tok){type, 0, at, at, pt, pt};
}

static uint8_t keyword(const char *s, uint32_t n)
{
	if (n < 2 || n > 10)
		return O_NONE;
	for (int k = K_FIRST; k < O_COUNT; k++) {
		const char *w = pyparse_op_text[k];
		if (w[0] == s[0] && w[1] == s[1] && strlen(w) == n && memcmp(w, s, n) == 0)
			return (uint8_t)k;
	}
	return O_NONE;
}

/* s[at] is a newline inside a token or between tokens. */
static inline void next_line(struct lexer *lx, uint32_t at)
{
	lx->row++;
	lx->line_start = at + 1;
}

/* Python numbers as the grammar's integer / float tokens. */
static void lex_number(struct lexer *lx)
{
	const char *s = lx->s;
	uint32_t start = lx->i, i = lx->i, n = lx->len;
	struct pt_point sp = lpoint(lx, start);
	bool is_float = false;
	if (s[i] == '0' && i + 1 < n && s[i + 1] && strchr("xXoObB", s[i + 1])) {
		char k = (char)(s[i + 1] | 0x20);
		i += 2;
		uint32_t d0 = i;
		while (i < n && (s[i] == '_' || (k == 'x' ? is_hex((unsigned char)s[i])
					      : k == 'o' ? (s[i] >= '0' && s[i] <= '7')
							 : (s[i] == '0' || s[i] == '1'))))
			i++;
		if (i == d0)
			lx_decline(lx);
		if (i < n && (s[i] == 'l' || s[i] == 'L'))
			i++;
	} else {
		while (i < n && (is_digit((unsigned char)s[i]) || s[i] == '_'))
			i++;
		if (i < n && s[i] == '.') {
			is_float = true;
			i++;
			while (i < n && (is_digit((unsigned char)s[i]) || s[i] == '_'))
				i++;
		}
		if (i < n && (s[i] == 'e' || s[i] == 'E')) {
			uint32_t j = i + 1;
			if (j < n && (s[j] == '+' || s[j] == '-'))
				j++;
			if (j < n && is_digit((unsigned char)s[j])) {
				is_float = true;
				i = j;
				while (i < n && (is_digit((unsigned char)s[i]) || s[i] == '_'))
					i++;
			}
		}
		if (i < n && (s[i] == 'j' || s[i] == 'J'))
			i++;
		else if (!is_float && i < n && (s[i] == 'l' || s[i] == 'L'))
			i++;
	}
	if (i < n && (is_id_char((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80 || s[i] == '.'))
		lx_decline(lx); /* 1if, 1.real, 1..2: left to tree-sitter */
	lx->i = i;
	emit(lx, is_float ? T_FLOAT : T_INT, 0, start, sp);
}

static void lex_code(struct lexer *lx, bool interp);

/* The body of a string after its opening quote(s), up to and including the
 * closing ones. In an f-string each interpolation is lexed as code and
 * emitted as T_FLBRACE ... T_FRBRACE between T_FMID literal runs. */
static void lex_string_body(struct lexer *lx, uint8_t flags, char q)
{
	const char *s = lx->s;
	uint32_t n = lx->len;
	bool triple = flags & SF_TRIPLE, fmt = flags & SF_FORMAT, raw = flags & SF_RAW;
	uint32_t run = lx->i;
	struct pt_point run_sp = lpoint(lx, run);
	for (;;) {
		if (lx->i >= n)
			lx_decline(lx);
		char c = s[lx->i];
		if (c == q && (!triple || (lx->i + 2 < n && s[lx->i + 1] == q && s[lx->i + 2] == q))) {
			if (fmt) {
				if (lx->i > run)
					emit(lx, T_FMID, 0, run, run_sp);
				uint32_t start = lx->i;
				struct pt_point sp = lpoint(lx, start);
				lx->i += triple ? 3 : 1;
				emit(lx, T_FEND, 0, start, sp);
			} else {
				lx->i += triple ? 3 : 1;
			}
			return;
		}
		if (c == '\\') {
			lx->i++;
			if (lx->i >= n || s[lx->i] == '\r')
				lx_decline(lx);
			if (s[lx->i] == '\n')
				next_line(lx, lx->i);
			else if (raw && s[lx->i] != q && s[lx->i] != '\\')
				continue; /* raw: the backslash alone */
			else if (fmt && (s[lx->i] == '{' || s[lx->i] == '}'))
				lx_decline(lx);
			lx->i++;
			continue;
		}
		if (c == '\n') {
			if (!triple)
				lx_decline(lx);
			next_line(lx, lx->i);
			lx->i++;
			continue;
		}
		if (c == '\r' && triple && lx->i + 1 < n && s[lx->i + 1] == '\n') {
			lx->i++;
			continue;
		}
		if (c == '\r' || c == '\0')
			lx_decline(lx);
		if (fmt && (c == '{' || c == '}')) {
			if (lx->i + 1 < n && s[lx->i + 1] == c) {
				lx->i += 2;
				continue;
			}
			if (c == '}' || lx->nquotes == 64)
				lx_decline(lx); /* a lone } */
			if (lx->i > run)
				emit(lx, T_FMID, 0, run, run_sp);
			uint32_t start = lx->i;
			struct pt_point sp = lpoint(lx, start);
			lx->i++;
			emit(lx, T_FLBRACE, 0, start, sp);
			lx->triples[lx->nquotes] = triple;
			lx->quotes[lx->nquotes++] = q;
			lex_code(lx, true);
			lx->nquotes--;
			run = lx->i;
			run_sp = lpoint(lx, run);
			continue;
		}
		lx->i++;
	}
}

/* A string whose quote is at lx->i; its prefix began at start. */
static void lex_string(struct lexer *lx, uint32_t start, uint8_t flags)
{
	const char *s = lx->s;
	char q = s[lx->i];
	struct pt_point sp = lpoint(lx, start);
	bool triple = lx->i + 2 < lx->len && s[lx->i + 1] == q && s[lx->i + 2] == q;
	for (int d = 0; d < lx->nquotes; d++)
		if (lx->quotes[d] == q && (!lx->triples[d] || triple))
			lx_decline(lx); /* would end the enclosing f-string */
	if (triple) {
		flags |= SF_TRIPLE;
		lx->i += 3;
	} else {
		lx->i += 1;
	}
	if (flags & SF_FORMAT) {
		emit(lx, T_FSTART, flags, start, sp);
		lex_string_body(lx, flags, q);
	} else {
		/* one token for the whole literal: the parser splits it */
		lex_string_body(lx, flags, q);
		emit(lx, T_STRING, flags, start, sp);
	}
}

/* The format spec after an interpolation's ':', through its closing brace. */
static void lex_format_spec(struct lexer *lx)
{
	const char *s = lx->s;
	uint32_t n = lx->len;
	for (;;) {
		if (lx->i >= n)
			lx_decline(lx);
		uint32_t b = lx->i;
		struct pt_point bp = lpoint(lx, b);
		char d = s[b];
		if (d == '}') {
			lx->i++;
			emit(lx, T_FRBRACE, 0, b, bp);
			return;
		}
		if (d == '{') {
			lx->i++;
			emit(lx, T_FLBRACE, 0, b, bp);
			lex_code(lx, true);
			continue;
		}
		while (lx->i < n && s[lx->i] != '{' && s[lx->i] != '}') {
			char e = s[lx->i];
			if (e == '\n' || e == '\r' || e == '\\' || e == '"' || e == '\'')
				lx_decline(lx);
			lx->i++;
		}
		emit(lx, T_FSPEC, 0, b, bp);
	}
}

/* At the start of a line (outside brackets): skips blank and comment lines,
 * then emits the INDENT or DEDENTs the next code line (or the end) calls
 * for. Each DEDENT goes where tree-sitter's scanner puts it: after the
 * comment lines that follow and are indented at least as deep as the block
 * it closes. */
static void line_start(struct lexer *lx)
{
	const char *s = lx->s;
	uint32_t n = lx->len;
	uint32_t indent = 0;
	lx->ncl = 0;
	for (;;) {
		indent = 0;
		bool space_seen = false;
		while (lx->i < n && (s[lx->i] == ' ' || s[lx->i] == '\t')) {
			if (s[lx->i] == ' ') {
				indent++;
				space_seen = true;
			} else {
				if (space_seen)
					lx_decline(lx); /* tree-sitter and Python count this differently */
				indent += 8;
			}
			lx->i++;
		}
		if (lx->i >= n)
			break;
		char c = s[lx->i];
		if (c == '\n' || (c == '\r' && lx->i + 1 < n && s[lx->i + 1] == '\n')) {
			if (c == '\r')
				lx->i++;
			next_line(lx, lx->i);
			lx->i++;
			continue;
		}
		if (c == '#') {
			while (lx->i < n && s[lx->i] != '\n')
				lx->i++;
			struct pyparser *p = lx->p;
			if (lx->ncl == p->capcl) {
				p->capcl = p->capcl ? p->capcl * 2 : 16;
				p->cl = xrealloc(p->cl, p->capcl * sizeof *p->cl);
			}
			p->cl[lx->ncl++] = (struct cline){indent, lx->i, lpoint(lx, lx->i)};
			continue;
		}
		if (c == '\\' || c == '\r' || c == '\f' || c == '\v')
			lx_decline(lx);
		break;
	}
	if (lx->i >= n)
		indent = 0;
	uint32_t top = lx->indents[lx->nindent - 1];
	if (indent > top) {
		if (lx->p->ntoks == 0 || lx->nindent == 100)
			lx_decline(lx); /* an indented first line, or too deep */
		lx->indents[lx->nindent++] = indent;
		emit_at(lx, T_INDENT, lx->i, lpoint(lx, lx->i));
		return;
	}
	size_t c0 = 0;
	uint32_t at = lx->nl_at;
	struct pt_point at_pt = lx->nl_pt;
	while (indent < lx->indents[lx->nindent - 1]) {
		uint32_t cur = lx->indents[lx->nindent - 1];
		while (c0 < lx->ncl && lx->p->cl[c0].indent >= cur) {
			at = lx->p->cl[c0].end;
			at_pt = lx->p->cl[c0].ep;
			c0++;
		}
		emit_at(lx, T_DEDENT, at, at_pt);
		lx->nindent--;
	}
	if (indent != lx->indents[lx->nindent - 1])
		lx_decline(lx); /* a dedent to a level never opened */
}

/* The end of a logical line: its NEWLINE, after its last token or comment. */
static void end_line(struct lexer *lx)
{
	if (lx->pending) {
		emit_at(lx, T_NEWLINE, lx->nl_at, lx->nl_pt);
		lx->pending = false;
	}
}

/* Tokens of code, to the end of the text, or (interp) to the closing brace
 * of an f-string interpolation, which is emitted here; there newlines are
 * whitespace. */
static void lex_code(struct lexer *lx, bool interp)
{
	static const char ops3[][4] = {"...", "//=", "**=", ">>=", "<<="};
	static const uint8_t ops3c[] = {O_ELLIPSIS, O_DSLASHEQ, O_POWEQ, O_RSHIFTEQ, O_LSHIFTEQ};
	static const char ops2[][3] = {"->", ":=", "//", "**", "<<", ">>", "<=", ">=", "==",
				       "!=", "<>", "+=", "-=", "*=", "/=", "%=", "&=", "^=",
				       "|=", "@="};
	static const uint8_t ops2c[] = {O_ARROW, O_WALRUS, O_DSLASH, O_POW, O_LSHIFT, O_RSHIFT,
					O_LE, O_GE, O_EQEQ, O_NE, O_LTGT, O_PLUSEQ, O_MINUSEQ,
					O_STAREQ, O_SLASHEQ, O_PERCENTEQ, O_AMPEQ, O_CARETEQ,
					O_PIPEEQ, O_ATEQ};
	static const char ops1[] = "()[]{},:;.@=+-*/%&|^~<>";
	static const uint8_t ops1c[] = {O_LPAR, O_RPAR, O_LSQB, O_RSQB, O_LBRACE, O_RBRACE,
					O_COMMA, O_COLON, O_SEMI, O_DOT, O_AT, O_EQ, O_PLUS,
					O_MINUS, O_STAR, O_SLASH, O_PERCENT, O_AMP, O_PIPE,
					O_CARET, O_TILDE, O_LT, O_GT};
	const char *s = lx->s;
	uint32_t n = lx->len;
	int depth = 0; /* brackets opened inside this interpolation */
	if (!interp)
		line_start(lx);
	for (;;) {
		if (lx->i >= n) {
			if (interp || lx->brackets > 0)
				lx_decline(lx);
			end_line(lx);
			line_start(lx);
			return;
		}
		unsigned char c = (unsigned char)s[lx->i];
		uint32_t start = lx->i;
		struct pt_point sp = lpoint(lx, start);
		if (c == ' ' || c == '\t') {
			lx->i++;
			continue;
		}
		if (c == '\n' || c == '\r') {
			if (c == '\r') {
				if (!(lx->i + 1 < n && s[lx->i + 1] == '\n'))
					lx_decline(lx);
				lx->i++;
			}
			next_line(lx, lx->i);
			lx->i++;
			if (!interp && lx->brackets == 0) {
				end_line(lx);
				line_start(lx);
			}
			continue;
		}
		if (c == '#') {
			while (lx->i < n && s[lx->i] != '\n')
				lx->i++;
			if (interp)
				lx_decline(lx);
			if (lx->brackets == 0 && lx->pending) {
				lx->nl_at = lx->i; /* NEWLINE goes after a trailing comment */
				lx->nl_pt = lpoint(lx, lx->i);
			}
			continue;
		}
		if (c == '\\') {
			uint32_t k = lx->i + 1;
			if (k < n && s[k] == '\r')
				k++;
			if (k < n && s[k] == '\n' && lx->pending) {
				lx->i = k;
				next_line(lx, lx->i);
				lx->i++;
				continue;
			}
			lx_decline(lx);
		}
		if (c >= 0x80 || c == '`' || c == '$' || c == '?' || c == '\0' || c == '\f' || c == '\v')
			lx_decline(lx);
		if (is_id_start(c)) {
			uint32_t i = lx->i + 1;
			while (i < n && is_id_char((unsigned char)s[i]))
				i++;
			if (i < n && (unsigned char)s[i] >= 0x80)
				lx_decline(lx);
			if (i < n && (s[i] == '"' || s[i] == '\'')) {
				uint8_t flags = 0;
				if (i - lx->i > 2)
					lx_decline(lx);
				for (uint32_t k = lx->i; k < i; k++) {
					switch (s[k]) {
					case 'r': case 'R': flags |= SF_RAW; break;
					case 'b': case 'B': flags |= SF_BYTES; break;
					case 'f': case 'F': flags |= SF_FORMAT; break;
					case 'u': case 'U': break;
					default: lx_decline(lx);
					}
				}
				lx->i = i;
				lex_string(lx, start, flags);
				continue;
			}
			lx->i = i;
			emit(lx, T_NAME, keyword(s + start, i - start), start, sp);
			continue;
		}
		if (is_digit(c) || (c == '.' && lx->i + 1 < n && is_digit((unsigned char)s[lx->i + 1]))) {
			lex_number(lx);
			continue;
		}
		if (c == '"' || c == '\'') {
			lex_string(lx, start, 0);
			continue;
		}
		if (interp && depth == 0) {
			if (c == '}') {
				lx->i++;
				emit(lx, T_FRBRACE, 0, start, sp);
				return;
			}
			if (c == '!' && lx->i + 1 < n && s[lx->i + 1] != '=') {
				if (!(s[lx->i + 1] >= 'a' && s[lx->i + 1] <= 'z'))
					lx_decline(lx);
				lx->i += 2;
				emit(lx, T_FCONV, 0, start, sp);
				continue;
			}
			if (c == ':' && !(lx->i + 1 < n && s[lx->i + 1] == '=')) {
				lx->i++;
				emit(lx, T_FCOLON, 0, start, sp);
				lex_format_spec(lx);
				return;
			}
		}
		uint8_t op = O_NONE;
		uint32_t w = 0;
		if (lx->i + 3 <= n)
			for (size_t k = 0; k < sizeof ops3c; k++)
				if (memcmp(s + lx->i, ops3[k], 3) == 0) {
					op = ops3c[k];
					w = 3;
					break;
				}
		if (!op && lx->i + 2 <= n)
			for (size_t k = 0; k < sizeof ops2c; k++)
				if (s[lx->i] == ops2[k][0] && s[lx->i + 1] == ops2[k][1]) {
					op = ops2c[k];
					w = 2;
					break;
				}
		if (!op) {
			const char *f = memchr(ops1, c, sizeof ops1 - 1);
			if (!f)
				lx_decline(lx);
			op = ops1c[f - ops1];
			w = 1;
		}
		lx->i += w;
		if (op == O_LPAR || op == O_LSQB || op == O_LBRACE) {
			depth++;
			if (!interp)
				lx->brackets++;
		} else if (op == O_RPAR || op == O_RSQB || op == O_RBRACE) {
			if (interp ? depth == 0 : lx->brackets == 0)
				lx_decline(lx);
			depth--;
			if (!interp)
				lx->brackets--;
		}
		emit(lx, T_OP, op, start, sp);
	}
}

void pylex(struct pyparser *p)
{
	struct lexer lx = {.p = p, .s = p->text, .len = p->len, .nindent = 1};
	lx.indents[0] = 0;
	lex_code(&lx, false);
	emit_at(&lx, T_EOF, p->len, lpoint(&lx, p->len));
}

