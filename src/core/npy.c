/* npy: see npy.h. The header grammar accepted is what numpy writes and what
 * its reader (ast.literal_eval of the header) takes for these keys:
 *
 *   header := '{' (item (',' item)* ','?)? '}' space*
 *   item   := string ':' value          (keys: descr, fortran_order, shape,
 *                                        each exactly once)
 *   value  := string | 'True' | 'False' | '(' (int (',' int)* ','?)? ')'
 *   int    := digit+ ('L' | 'l')?       (Python 2 wrote 3L)
 *
 * with spaces, tabs and newlines between tokens, strings in ' or " without
 * escapes, and a one-element tuple written (5,). */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_ORDER '>'
#else
#define HOST_ORDER '<'
#endif

struct lex {
	const unsigned char *p, *start, *end;
	char *why;
};

static bool lex_fail(struct lex *l, const char *what)
{
	if (!l->why)
		l->why = xasprintf("the header is not a valid .npy header dict: %s at byte %zu of the header",
				   what, (size_t)(l->p - l->start));
	return false;
}

static void skip_space(struct lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r' ||
				 *l->p == '\f' || *l->p == '\v'))
		l->p++;
}

static bool peek_is(struct lex *l, char c)
{
	skip_space(l);
	return l->p < l->end && *l->p == (unsigned char)c;
}

static bool expect(struct lex *l, char c, const char *what)
{
	if (!peek_is(l, c))
		return lex_fail(l, what);
	l->p++;
	return true;
}

/* A quoted string without escapes; *s points into the header. */
static bool lex_string(struct lex *l, const unsigned char **s, size_t *n)
{
	skip_space(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return lex_fail(l, "expected a quoted string");
	unsigned char q = *l->p++;
	const unsigned char *b = l->p;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' || *l->p == '\n')
			return lex_fail(l, "unsupported character in a string");
		l->p++;
	}
	if (l->p >= l->end)
		return lex_fail(l, "unterminated string");
	*s = b;
	*n = (size_t)(l->p - b);
	l->p++;
	return true;
}

static bool lex_word(struct lex *l, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(l->end - l->p) < n || memcmp(l->p, w, n) != 0)
		return false;
	const unsigned char *after = l->p + n;
	if (after < l->end && (*after == '_' || (*after >= 'a' && *after <= 'z') ||
			       (*after >= 'A' && *after <= 'Z') || (*after >= '0' && *after <= '9')))
		return false;
	l->p = after;
	return true;
}

static bool parse_bool(struct lex *l, bool *out)
{
	skip_space(l);
	if (lex_word(l, "True"))
		*out = true;
	else if (lex_word(l, "False"))
		*out = false;
	else
		return lex_fail(l, "'fortran_order' is not True or False");
	return true;
}

static bool parse_shape(struct lex *l, struct npy_array *a)
{
	if (!expect(l, '(', "'shape' is not a tuple"))
		return false;
	int n = 0;
	bool comma = false;
	for (;;) {
		skip_space(l);
		if (l->p < l->end && *l->p == ')') {
			l->p++;
			break;
		}
		if (n > 0 && !comma)
			return lex_fail(l, "expected ',' or ')' in 'shape'");
		if (l->p >= l->end || *l->p < '0' || *l->p > '9')
			return lex_fail(l, "'shape' holds something other than non-negative integers");
		uint64_t v = 0;
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			unsigned d = (unsigned)(*l->p - '0');
			if (v > (UINT64_MAX - d) / 10)
				return lex_fail(l, "a dimension in 'shape' is too large");
			v = v * 10 + d;
			l->p++;
		}
		if (l->p < l->end && (*l->p == 'L' || *l->p == 'l'))
			l->p++;
		if (n == NPY_MAX_DIMS)
			return lex_fail(l, "'shape' has more than 64 dimensions");
		a->shape[n++] = v;
		comma = false;
		if (peek_is(l, ',')) {
			l->p++;
			comma = true;
		}
	}
	/* (5) is the integer 5 in Python, not a tuple. */
	if (n == 1 && !comma)
		return lex_fail(l, "'shape' is not a tuple (a 1-d shape is written (5,))");
	a->ndim = n;
	return true;
}

/* The descr s[0..n) as a message shows it (text at least 4 * 32 + 5 bytes):
 * its first 32 bytes, a NUL, a control byte or a non-ASCII one as \xNN and
 * a backslash as \\ (so '<f8\x00' is not shown as '<f8'), "..." after a
 * longer one. */
static void descr_shown(const unsigned char *s, size_t n, char *text)
{
	char *t = text;
	for (size_t i = 0; i < n && i < 32; i++) {
		if (s[i] == '\\')
			t += sprintf(t, "\\\\");
		else if (s[i] < 0x20 || s[i] >= 0x7f)
			t += sprintf(t, "\\x%02x", s[i]);
		else
			*t++ = (char)s[i];
	}
	strcpy(t, n > 32 ? "..." : "");
}

/* Fills a->dtype from a descr string, or sets *why. */
static bool parse_descr(const unsigned char *s, size_t n, struct npy_array *a, const char *cmd,
			char **why)
{
	char text[4 * 32 + 5];
	descr_shown(s, n, text);
	size_t i = 0;
	char order = '=';
	if (n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '='))
		order = (char)s[i++];
	if (i < n && s[i] == 'O') {
		*why = xasprintf("it holds an object array (dtype '%s'): its data is a Python pickle, "
				 "which gpuopt never loads", text);
		return false;
	}
	char kind = i < n ? (char)s[i++] : 0;
	unsigned size = 0;
	bool digits = false;
	while (i < n && s[i] >= '0' && s[i] <= '9' && size < 1000) {
		size = size * 10 + (unsigned)(s[i++] - '0');
		digits = true;
	}
	bool ok = i == n && digits;
	if (ok) {
		switch (kind) {
		case 'b': ok = size == 1; break;
		case 'i':
		case 'u': ok = size == 1 || size == 2 || size == 4 || size == 8; break;
		case 'f': ok = size == 2 || size == 4 || size == 8; break;
		case 'c': ok = size == 8 || size == 16; break;
		default: ok = false;
		}
	}
	if (!ok) {
		*why = xasprintf("dtype '%s' is not supported (gpuopt %s reads bool, integer, float "
				 "and complex arrays)%s", text, cmd, kind == 'V' && size == 2 && digits
				 ? "; this is how np.save writes a bfloat16 array: save it as float32"
				 : "");
		return false;
	}
	a->dtype.kind = kind;
	a->dtype.size = (uint8_t)size;
	/* Only the element's own bytes have an order: complex parts are swapped one by one. */
	unsigned unit = kind == 'c' ? size / 2 : size;
	if (unit == 1)
		order = '|';
	else if (order == '=' || order == '|')
		order = HOST_ORDER;
	a->dtype.order = order;
	a->dtype.swap = unit > 1 && order != HOST_ORDER;
	return true;
}

static bool parse_dict(const unsigned char *h, size_t n, struct npy_array *a, const char *cmd,
		       char **why)
{
	struct lex l = {h, h, h + n, NULL};
	bool have_descr = false, have_fortran = false, have_shape = false;
	if (!expect(&l, '{', "it does not start with '{'"))
		goto fail;
	for (;;) {
		if (peek_is(&l, '}')) {
			l.p++;
			break;
		}
		const unsigned char *key;
		size_t klen;
		if (!lex_string(&l, &key, &klen) || !expect(&l, ':', "expected ':' after a key"))
			goto fail;
		if (klen == 5 && memcmp(key, "descr", 5) == 0) {
			if (have_descr) {
				lex_fail(&l, "'descr' appears twice");
				goto fail;
			}
			have_descr = true;
			if (peek_is(&l, '[')) {
				*why = xasprintf("it holds a structured array (a 'descr' list of fields), "
						 "which gpuopt %s does not read", cmd);
				return false;
			}
			const unsigned char *s;
			size_t sn;
			if (!lex_string(&l, &s, &sn))
				goto fail;
			if (!parse_descr(s, sn, a, cmd, why))
				return false;
		} else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
			if (have_fortran) {
				lex_fail(&l, "'fortran_order' appears twice");
				goto fail;
			}
			have_fortran = true;
			if (!parse_bool(&l, &a->fortran))
				goto fail;
		} else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
			if (have_shape) {
				lex_fail(&l, "'shape' appears twice");
				goto fail;
			}
			have_shape = true;
			if (!parse_shape(&l, a))
				goto fail;
		} else {
			l.why = xasprintf("the header has an unexpected key '%.*s'",
					  (int)(klen < 40 ? klen : 40), (const char *)key);
			goto fail;
		}
		if (peek_is(&l, ',')) {
			l.p++;
		} else if (!peek_is(&l, '}')) {
			lex_fail(&l, "expected ',' or '}'");
			goto fail;
		}
	}
	skip_space(&l);
	if (l.p != l.end) {
		lex_fail(&l, "unexpected text after the closing '}'");
		goto fail;
	}
	if (!have_descr || !have_fortran || !have_shape) {
		*why = xasprintf("the header dict lacks '%s'",
				 !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
		return false;
	}
	return true;
fail:
	*why = l.why ? l.why : xstrdup("the header is not a valid .npy header dict");
	return false;
}

bool npy_parse(const unsigned char *buf, size_t len, uint64_t total, struct npy_array *a,
	       const char *cmd, char **why)
{
	memset(a, 0, sizeof *a);
	*why = NULL;
	if (len > total)
		len = total;
	if (len < sizeof magic || memcmp(buf, magic, sizeof magic) != 0) {
		*why = xstrdup(total == 0 ? "empty file: not a .npy file"
					  : "header is not a .npy header (the file does not start with \\x93NUMPY)");
		return false;
	}
	if (len < 8) {
		*why = xstrdup("truncated: the file ends inside the .npy preamble");
		return false;
	}
	a->major = buf[6];
	a->minor = buf[7];
	if (a->major < 1 || a->major > 3 || a->minor != 0) {
		*why = xasprintf("unsupported .npy format version %u.%u (gpuopt reads 1.0, 2.0 and 3.0)",
				 a->major, a->minor);
		return false;
	}
	size_t pre = a->major == 1 ? 10 : 12;
	if (len < pre) {
		*why = xstrdup("truncated: the file ends inside the .npy preamble");
		return false;
	}
	uint64_t hlen = a->major == 1 ? (uint64_t)buf[8] | (uint64_t)buf[9] << 8
				      : (uint64_t)buf[8] | (uint64_t)buf[9] << 8 |
						(uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
	if (hlen > NPY_MAX_HEADER) {
		*why = xasprintf("the header says it is %llu bytes long; numpy itself refuses headers "
				 "longer than %d bytes", (unsigned long long)hlen, NPY_MAX_HEADER);
		return false;
	}
	if (pre + hlen > total) {
		*why = xasprintf("truncated: the file ends inside the %llu-byte header",
				 (unsigned long long)hlen);
		return false;
	}
	if (pre + hlen > len) {
		*why = xstrdup("the header could not be read in full");
		return false;
	}
	if (!parse_dict(buf + pre, (size_t)hlen, a, cmd, why))
		return false;
	a->offset = pre + (size_t)hlen;
	uint64_t count = 1;
	bool overflow = false;
	for (int d = 0; d < a->ndim; d++) {
		if (a->shape[d] && count > UINT64_MAX / a->shape[d])
			overflow = true;
		count *= a->shape[d];
	}
	if (overflow || count > UINT64_MAX / a->dtype.size) {
		struct buf b = {0};
		npy_format_shape(a, &b);
		*why = xasprintf("the header's shape %s is too large to be real", b.data);
		buf_free(&b);
		return false;
	}
	a->count = count;
	a->nbytes = count * a->dtype.size;
	uint64_t have = total - a->offset;
	if (have != a->nbytes) {
		struct buf b = {0};
		npy_format_shape(a, &b);
		if (have < a->nbytes)
			*why = xasprintf("truncated: the header says %s %s, %llu bytes of data, but the file "
					 "has %llu", b.data, npy_dtype_name(&a->dtype),
					 (unsigned long long)a->nbytes, (unsigned long long)have);
		else
			*why = xasprintf("the header says %s %s, %llu bytes of data, but the file has %llu: "
					 "the header does not describe the data", b.data,
					 npy_dtype_name(&a->dtype), (unsigned long long)a->nbytes,
					 (unsigned long long)have);
		buf_free(&b);
		return false;
	}
	return true;
}

const char *npy_dtype_name(const struct npy_dtype *dt)
{
	switch (dt->kind) {
	case 'b': return "bool";
	case 'i':
		return dt->size == 1 ? "int8" : dt->size == 2 ? "int16" : dt->size == 4 ? "int32" : "int64";
	case 'u':
		return dt->size == 1 ? "uint8" : dt->size == 2 ? "uint16" : dt->size == 4 ? "uint32" : "uint64";
	case 'f': return dt->size == 2 ? "float16" : dt->size == 4 ? "float32" : "float64";
	case 'c': return dt->size == 8 ? "complex64" : "complex128";
	default: return "unknown";
	}
}

void npy_format_shape(const struct npy_array *a, struct buf *b)
{
	buf_putc(b, '(');
	for (int d = 0; d < a->ndim; d++)
		buf_printf(b, d ? ", %llu" : "%llu", (unsigned long long)a->shape[d]);
	buf_puts(b, a->ndim == 1 ? ",)" : ")");
}

void npy_format_dtype(const struct npy_dtype *dt, struct buf *b)
{
	buf_puts(b, npy_dtype_name(dt));
	if (dt->order == '>')
		buf_puts(b, " big-endian");
}

bool npy_same_shape(const struct npy_array *a, const struct npy_array *b)
{
	if (a->ndim != b->ndim)
		return false;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return false;
	return true;
}

bool npy_layout_free(const struct npy_array *a)
{
	if (a->count == 0)
		return true;
	int longer = 0;
	for (int d = 0; d < a->ndim; d++)
		longer += a->shape[d] > 1;
	return longer <= 1;
}

void npy_unravel(const struct npy_array *a, uint64_t flat, uint64_t *idx)
{
	if (a->fortran) {
		for (int d = 0; d < a->ndim; d++) {
			idx[d] = a->shape[d] ? flat % a->shape[d] : 0;
			flat = a->shape[d] ? flat / a->shape[d] : 0;
		}
	} else {
		for (int d = a->ndim - 1; d >= 0; d--) {
			idx[d] = a->shape[d] ? flat % a->shape[d] : 0;
			flat = a->shape[d] ? flat / a->shape[d] : 0;
		}
	}
}

static uint64_t ravel(const struct npy_array *a, const uint64_t *idx)
{
	uint64_t flat = 0;
	if (a->fortran)
		for (int d = a->ndim - 1; d >= 0; d--)
			flat = flat * a->shape[d] + idx[d];
	else
		for (int d = 0; d < a->ndim; d++)
			flat = flat * a->shape[d] + idx[d];
	return flat;
}

/* The element's bytes in this machine's order, in a 16-byte buffer. */
static void load_raw(const struct npy_array *a, const unsigned char *data, const uint64_t *idx,
		     unsigned char *raw)
{
	const unsigned char *p = data + ravel(a, idx) * a->dtype.size;
	memcpy(raw, p, a->dtype.size);
	if (a->dtype.swap) {
		unsigned unit = a->dtype.kind == 'c' ? a->dtype.size / 2u : a->dtype.size;
		for (unsigned s = 0; s < a->dtype.size; s += unit)
			for (unsigned i = 0; i < unit / 2; i++) {
				unsigned char t = raw[s + i];
				raw[s + i] = raw[s + unit - 1 - i];
				raw[s + unit - 1 - i] = t;
			}
	}
}

double npy_get_double(const struct npy_array *a, const unsigned char *data, const uint64_t *idx)
{
	unsigned char raw[16];
	load_raw(a, data, idx, raw);
	switch (a->dtype.kind) {
	case 'b': return raw[0] != 0;
	case 'i': {
		int64_t v = 0;
		if (a->dtype.size == 1) { int8_t t; memcpy(&t, raw, 1); v = t; }
		else if (a->dtype.size == 2) { int16_t t; memcpy(&t, raw, 2); v = t; }
		else if (a->dtype.size == 4) { int32_t t; memcpy(&t, raw, 4); v = t; }
		else memcpy(&v, raw, 8);
		return (double)v;
	}
	case 'u': {
		uint64_t v = 0;
		if (a->dtype.size == 1) v = raw[0];
		else if (a->dtype.size == 2) { uint16_t t; memcpy(&t, raw, 2); v = t; }
		else if (a->dtype.size == 4) { uint32_t t; memcpy(&t, raw, 4); v = t; }
		else memcpy(&v, raw, 8);
		return (double)v;
	}
	case 'f':
	case 'c': {
		unsigned unit = a->dtype.kind == 'c' ? a->dtype.size / 2u : a->dtype.size;
		if (unit == 2) {
			uint16_t h;
			memcpy(&h, raw, 2);
			return npy_half_to_float(h);
		}
		if (unit == 4) {
			float f;
			memcpy(&f, raw, 4);
			return f;
		}
		double v;
		memcpy(&v, raw, 8);
		return v;
	}
	default: return 0;
	}
}

bool npy_get_int(const struct npy_array *a, const unsigned char *data, const uint64_t *idx,
		 int64_t *out)
{
	unsigned char raw[16];
	if (a->dtype.kind != 'b' && a->dtype.kind != 'i' && a->dtype.kind != 'u')
		return false;
	load_raw(a, data, idx, raw);
	if (a->dtype.kind == 'b') {
		*out = raw[0] != 0;
	} else if (a->dtype.kind == 'i') {
		if (a->dtype.size == 1) { int8_t t; memcpy(&t, raw, 1); *out = t; }
		else if (a->dtype.size == 2) { int16_t t; memcpy(&t, raw, 2); *out = t; }
		else if (a->dtype.size == 4) { int32_t t; memcpy(&t, raw, 4); *out = t; }
		else memcpy(out, raw, 8);
	} else {
		uint64_t v = 0;
		if (a->dtype.size == 1) v = raw[0];
		else if (a->dtype.size == 2) { uint16_t t; memcpy(&t, raw, 2); v = t; }
		else if (a->dtype.size == 4) { uint32_t t; memcpy(&t, raw, 4); v = t; }
		else memcpy(&v, raw, 8);
		if (v > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)v;
	}
	return true;
}

float npy_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else { /* subnormal: normalise */
			exp = 127 - 15 + 1;
			while (!(man & 0x400u)) {
				man <<= 1;
				exp--;
			}
			bits = sign | exp << 23 | (man & 0x3ffu) << 13;
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | man << 13; /* inf, NaN (payload kept) */
	} else {
		bits = sign | (exp + 127 - 15) << 23 | man << 13;
	}
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}
