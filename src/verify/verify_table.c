/* verify_table: compares two CSV / TSV tables. Columns are matched by name
 * (both headers must hold the same names, in any order). Rows are paired in
 * one of three ways: in order (the default), by the values of the --key
 * columns (exact text; the k-th row with a key pairs with the k-th row with
 * the same key on the other side), or as a multiset (--unordered: both
 * tables are sorted by all their columns — text and integer columns first,
 * then the float ones — and paired in that order).
 *
 * A column whose every cell, on both sides, is a number or missing (empty,
 * NA, NaN, null, None and pandas's other default NA strings) is numeric:
 * integer when every cell is an integer literal and none is missing (as
 * pandas would read it), float otherwise, missing cells being NaN. Numeric
 * columns go through compare.c with int64 / float64 tolerances (or --rtol,
 * --atol, --ulp): integers exactly in 128 bits whatever their size (int64,
 * uint64, and beyond, where pandas would make them float64 or object), and
 * beyond 128 bits as exact decimal values; in a float column integer
 * literals keep every digit (no rounding to float64 before the test). Other
 * columns are compared as text, exactly. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvtab.h"
#include "verify.h"

__extension__ typedef __int128 cmp_i128;

static const char *const na_strings[] = {
	"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
	"<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
};

/* s without leading and trailing spaces, in buf (NULL if too long). */
static const char *trim(const char *s, char *buf, size_t n)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len >= n)
		return NULL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

static bool is_missing(const char *cell)
{
	char b[16];
	const char *s = trim(cell, b, sizeof b);
	if (!s)
		return false;
	for (size_t i = 0; i < sizeof na_strings / sizeof *na_strings; i++)
		if (strcmp(s, na_strings[i]) == 0)
			return true;
	return false;
}

/* The digits of an integer literal ([+-]?[0-9]+, spaces around allowed),
 * of any length: *neg, and *d / *n the digits without leading zeros ("0"
 * for zero). False when the cell is not one. */
static bool int_digits(const char *cell, bool *neg, const char **d, size_t *n)
{
	const char *p = cell;
	while (*p == ' ' || *p == '\t')
		p++;
	*neg = *p == '-';
	if (*p == '+' || *p == '-')
		p++;
	const char *start = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == start)
		return false;
	const char *end = p;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return false;
	while (start + 1 < end && *start == '0')
		start++;
	if (end - start == 1 && *start == '0')
		*neg = false; /* -0 is 0 */
	*d = start;
	*n = (size_t)(end - start);
	return true;
}

static bool parse_int(const char *cell)
{
	bool neg;
	const char *d;
	size_t n;
	return int_digits(cell, &neg, &d, &n);
}

/* The integer literal as a 128-bit integer; false when it is not one or
 * does not fit. */
static bool parse_i128(const char *cell, cmp_i128 *v)
{
	bool neg;
	const char *d;
	size_t n;
	if (!int_digits(cell, &neg, &d, &n) || n > 39)
		return false;
	unsigned __int128 x = 0, lim = neg ? (unsigned __int128)1 << 127 : ((unsigned __int128)1 << 127) - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned dig = (unsigned)(d[i] - '0');
		if (x > (lim - dig) / 10)
			return false;
		x = x * 10 + dig;
	}
	*v = neg ? (cmp_i128)(0 - x) : (cmp_i128)x;
	return true;
}

/* Orders two integer literals by value, whatever their length. */
static int cmp_int_text(const char *x, const char *y)
{
	bool nx, ny;
	const char *dx, *dy;
	size_t lx, ly;
	int_digits(x, &nx, &dx, &lx);
	int_digits(y, &ny, &dy, &ly);
	if (nx != ny)
		return nx ? -1 : 1;
	int c = lx != ly ? (lx < ly ? -1 : 1) : memcmp(dx, dy, lx);
	c = c < 0 ? -1 : c > 0;
	return nx ? -c : c;
}

static bool parse_float(const char *cell, double *v)
{
	char b[64];
	const char *s = trim(cell, b, sizeof b);
	if (!s || !*s || strpbrk(s, "xX"))
		return false;
	char *end;
	*v = strtod(s, &end);
	return *end == '\0';
}

static enum vcoltype classify(const struct csvtab *a, size_t ca, const struct csvtab *b, size_t cb)
{
	bool all_int = true, missing = false, all_i128 = true;
	const struct csvtab *t[2] = {a, b};
	size_t col[2] = {ca, cb};
	for (int s = 0; s < 2; s++) {
		for (size_t r = 0; r < t[s]->nrows; r++) {
			const char *c = csvtab_cell(t[s], r, col[s]);
			double dv;
			cmp_i128 iv;
			if (all_int && parse_int(c)) {
				all_i128 &= parse_i128(c, &iv);
				continue;
			}
			if (is_missing(c)) {
				missing = true;
				continue;
			}
			all_int = false;
			if (!parse_float(c, &dv) && !parse_int(c))
				return COL_TEXT;
		}
	}
	if (all_int && !missing)
		return all_i128 ? COL_INT : COL_BIGINT;
	return COL_FLOAT;
}

/* A float column's cell as a pair of doubles whose sum is its value:
 * integer literals exactly (9223372036854775807 is not 2**63), other
 * numbers as strtod reads them, missing cells NaN. */
static void cell_dd(const char *c, double *hi, double *lo)
{
	cmp_i128 i;
	double v;
	*lo = 0;
	if (parse_i128(c, &i)) {
		*hi = (double)i;
		*lo = (double)(i - (cmp_i128)*hi);
	} else if (parse_float(c, &v)) {
		*hi = v;
	} else if (parse_int(c)) { /* beyond 128 bits */
		*hi = strtod(c, NULL);
	} else {
		*hi = NAN;
	}
}

static double cell_double(const char *c)
{
	double hi, lo;
	cell_dd(c, &hi, &lo);
	return hi;
}

static cmp_i128 cell_int(const char *c)
{
	cmp_i128 v = 0;
	parse_i128(c, &v);
	return v;
}

/* ---- row pairing ---- */

struct pair {
	size_t r, c;
};

struct sort_ctx {
	const struct csvtab *t;
	const size_t *cols;
	const enum vcoltype *types;
	size_t n;
};

static int cmp_cells(const char *x, const char *y, enum vcoltype type)
{
	if (type == COL_INT || type == COL_BIGINT)
		return cmp_int_text(x, y);
	if (type == COL_FLOAT) {
		double a = cell_double(x), b = cell_double(y);
		if (isnan(a) || isnan(b))
			return isnan(a) - isnan(b);
		return a < b ? -1 : a > b;
	}
	return strcmp(x, y);
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *x = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	for (size_t k = 0; k < x->n; k++) {
		int c = cmp_cells(csvtab_cell(x->t, a, x->cols[k]), csvtab_cell(x->t, b, x->cols[k]),
				  x->types ? x->types[k] : COL_TEXT);
		if (c)
			return c;
	}
	return a < b ? -1 : a > b;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	return a->r < b->r ? -1 : a->r > b->r;
}

static size_t *sorted_rows(const struct csvtab *t, const size_t *cols, const enum vcoltype *types,
			   size_t n)
{
	size_t *rows = xcalloc(t->nrows + 1, sizeof *rows);
	for (size_t i = 0; i < t->nrows; i++)
		rows[i] = i;
	struct sort_ctx ctx = {t, cols, types, n};
	qsort_r(rows, t->nrows, sizeof *rows, row_cmp, &ctx);
	return rows;
}

static char *key_text(const struct csvtab *t, size_t row, const size_t *kcols, size_t nk)
{
	struct buf b = {0};
	for (size_t k = 0; k < nk; k++)
		buf_printf(&b, "%s%s=%s", k ? ", " : "", csvtab_name(t, kcols[k]),
			   csvtab_cell(t, row, kcols[k]));
	return buf_steal(&b);
}

struct pairing {
	struct pair *pairs;
	size_t n;
	bool *ref_used, *cand_used;
};

static int key_cmp(const struct csvtab *a, size_t ra, const size_t *ka, const struct csvtab *b, size_t rb,
		   const size_t *kb, size_t nk)
{
	int c = 0;
	for (size_t k = 0; k < nk && !c; k++)
		c = strcmp(csvtab_cell(a, ra, ka[k]), csvtab_cell(b, rb, kb[k]));
	return c;
}

/* A message when two rows of t (sorted by key in rows) have the same key:
 * the pairing would be a guess. Owned, or NULL. */
static char *duplicate_key(const char *path, const struct csvtab *t, const size_t *rows, const size_t *kc,
			   size_t nk)
{
	for (size_t i = 1; i < t->nrows; i++)
		if (key_cmp(t, rows[i - 1], kc, t, rows[i], kc, nk) == 0) {
			size_t x = rows[i - 1] < rows[i] ? rows[i - 1] : rows[i], y = rows[i - 1] ^ rows[i] ^ x;
			char *k = key_text(t, rows[i], kc, nk);
			char *m = xasprintf("--key does not identify the rows of '%s': %s is on lines %zu and %zu; "
					    "add columns to --key, or compare with --unordered", path, k,
					    t->lines[x + 1], t->lines[y + 1]);
			free(k);
			return m;
		}
	return NULL;
}

/* Pairs rows by key: merge of the two tables sorted by their key cells.
 * False with *why (owned) when a key is not unique on one side. */
static bool pair_by_key(struct pairing *p, const struct csvtab *a, const size_t *ka,
			const struct csvtab *b, const size_t *kb, size_t nk, const char *pa, const char *pb,
			char **why)
{
	size_t *ra = sorted_rows(a, ka, NULL, nk), *rb = sorted_rows(b, kb, NULL, nk);
	*why = duplicate_key(pa, a, ra, ka, nk);
	if (!*why)
		*why = duplicate_key(pb, b, rb, kb, nk);
	if (*why) {
		free(ra);
		free(rb);
		return false;
	}
	size_t i = 0, j = 0;
	while (i < a->nrows && j < b->nrows) {
		int c = 0;
		for (size_t k = 0; k < nk && !c; k++)
			c = strcmp(csvtab_cell(a, ra[i], ka[k]), csvtab_cell(b, rb[j], kb[k]));
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			p->pairs[p->n++] = (struct pair){ra[i], rb[j]};
			p->ref_used[ra[i++]] = true;
			p->cand_used[rb[j++]] = true;
		}
	}
	qsort(p->pairs, p->n, sizeof *p->pairs, pair_cmp);
	free(ra);
	free(rb);
	return true;
}

/* ---- numbers beyond float64 ---- */

/* True when cell is a decimal number too large for a double ("1e400"):
 * strtod makes it an infinity, which would equal any other such number. */
static bool overflows(const char *cell)
{
	char b[64];
	const char *s = trim(cell, b, sizeof b);
	if (!s || !*s || strpbrk(s, "xXnNiI"))
		return false;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	return *end == '\0' && errno == ERANGE && isinf(v);
}

/* s as sign, significant digits and decimal exponent ("-0012.50e3" ->
 * "-125e3"-like text), so two decimals compare by value. Owned. */
static char *decimal_key(const char *cell)
{
	char b[64];
	const char *s = trim(cell, b, sizeof b);
	if (!s)
		s = cell;
	bool neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	struct buf digits = {0};
	long exp10 = 0;
	bool dot = false, started = false;
	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.') {
			dot = true;
			continue;
		}
		if (*s == '0' && !started) {
			if (dot)
				exp10--;
			continue;
		}
		started = true;
		buf_putc(&digits, *s);
		if (!dot)
			exp10++;
	}
	if (*s == 'e' || *s == 'E')
		exp10 += strtol(s + 1, NULL, 10);
	while (digits.len && digits.data[digits.len - 1] == '0')
		digits.len--;
	buf_putc(&digits, '\0');
	char *k = digits.len > 1 ? xasprintf("%s0.%se%ld", neg ? "-" : "", digits.data, exp10) : xstrdup("0");
	buf_free(&digits);
	return k;
}

static bool decimals_equal(const char *x, const char *y)
{
	char *a = decimal_key(x), *b = decimal_key(y);
	bool eq = strcmp(a, b) == 0;
	free(a);
	free(b);
	return eq;
}

/* ---- columns ---- */

static void add_cell(struct vitem *c, const struct csvtab *a, const struct csvtab *b,
		     const struct pair *pr, size_t ca, size_t cb, const size_t *ka, size_t nk,
		     double err, struct vcell *into)
{
	struct vcell *v = into;
	if (!v) {
		c->cells = xrealloc(c->cells, (c->ncells + 1) * sizeof *c->cells);
		v = &c->cells[c->ncells++];
	}
	v->row = pr->r;
	v->line = a->lines[pr->r + 1];
	v->key = nk ? key_text(a, pr->r, ka, nk) : NULL;
	v->ref = xstrdup(csvtab_cell(a, pr->r, ca));
	v->cand = xstrdup(csvtab_cell(b, pr->c, cb));
	v->err = err;
}

static void compare_column(struct vitem *c, const struct verify_opts *o, const struct csvtab *a,
			   size_t ca, const struct csvtab *b, size_t cb, const struct pairing *p,
			   const size_t *ka, size_t nk)
{
	c->compared = p->n;
	if (c->coltype == COL_TEXT || c->coltype == COL_BIGINT) {
		/* integers beyond 128 bits: equal when their values are (by text) */
		bool num = c->coltype == COL_BIGINT;
		if (num && (o->rtol_set || o->atol_set || o->by_ulp))
			c->note = xstrdup("integers beyond 128 bits are compared exactly: --rtol, --atol and "
					  "--ulp do not apply to this column");
		for (size_t i = 0; i < p->n; i++) {
			const struct pair *pr = &p->pairs[i];
			const char *x = csvtab_cell(a, pr->r, ca), *y = csvtab_cell(b, pr->c, cb);
			if (num ? cmp_int_text(x, y) == 0 : strcmp(x, y) == 0)
				continue;
			c->differ++;
			if (c->ncells < o->show)
				add_cell(c, a, b, pr, ca, cb, ka, nk, 0, NULL);
		}
		c->status = c->differ ? V_FAIL : V_PASS;
		return;
	}
	/* integers: exact in 128 bits, whatever their size (int64, uint64 and
	 * beyond); numbers: float64, but with integer literals kept exact */
	struct npy_dtype dt = {c->coltype == COL_INT ? 'i' : 'f', 8, '<', false};
	struct cmp_opts co = {.equal_nan = o->equal_nan, .by_ulp = o->by_ulp, .ulp = o->ulp,
			      .show = o->show};
	verify_tolerance(o, &dt, &dt, &co.rtol, &co.atol, &c->tol_source);
	bool ints = c->coltype == COL_INT;
	if (ints && !o->rtol_set && !o->atol_set && !o->by_ulp) {
		free(c->tol_source);
		c->tol_source = xstrdup("integers: exact");
	}
	c->st = xmalloc(sizeof *c->st);
	cmp_init(c->st, ints ? CMP_I128 : o->by_ulp ? CMP_F64 : CMP_DD, &co);
	_Alignas(16) union { cmp_i128 i[CMP_BLOCK]; double d[2 * CMP_BLOCK]; } rb, cbuf;
	uint64_t huge_differ = 0;
	const struct pair *huge_at = NULL;
	for (size_t s = 0; s < p->n; s += CMP_BLOCK) {
		size_t m = p->n - s < CMP_BLOCK ? p->n - s : CMP_BLOCK;
		for (size_t i = 0; i < m; i++) {
			const struct pair *pr = &p->pairs[s + i];
			const char *x = csvtab_cell(a, pr->r, ca), *y = csvtab_cell(b, pr->c, cb);
			if (!ints && (overflows(x) || overflows(y))) {
				/* beyond float64: compared as decimals, exactly */
				if (!decimals_equal(x, y)) {
					huge_differ++;
					if (!huge_at)
						huge_at = pr;
				}
				x = y = "0";
			}
			if (ints) {
				rb.i[i] = cell_int(x);
				cbuf.i[i] = cell_int(y);
			} else if (o->by_ulp) { /* ulps of float64 */
				rb.d[i] = cell_double(x);
				cbuf.d[i] = cell_double(y);
			} else {
				cell_dd(x, &rb.d[2 * i], &rb.d[2 * i + 1]);
				cell_dd(y, &cbuf.d[2 * i], &cbuf.d[2 * i + 1]);
			}
		}
		cmp_block(c->st, &rb, &cbuf, m, s);
	}
	const struct cmp_stats *st = c->st;
	for (unsigned i = 0; i < st->nshown; i++)
		add_cell(c, a, b, &p->pairs[st->shown[i].at], ca, cb, ka, nk, st->shown[i].err, NULL);
	if (st->max_abs.err >= 0)
		add_cell(c, a, b, &p->pairs[st->max_abs.at], ca, cb, ka, nk, st->max_abs.err, &c->at_max_abs);
	if (st->max_rel.err >= 0)
		add_cell(c, a, b, &p->pairs[st->max_rel.at], ca, cb, ka, nk, st->max_rel.err, &c->at_max_rel);
	c->status = st->mismatches || huge_differ ? V_FAIL : V_PASS;
	if (huge_differ) {
		free(c->note);
		c->note = xasprintf("%llu value%s beyond float64's range differ (compared as decimals, exactly): "
				    "ref %s, cand %s (line %zu)", (unsigned long long)huge_differ,
				    huge_differ == 1 ? "" : "s", csvtab_cell(a, huge_at->r, ca),
				    csvtab_cell(b, huge_at->c, cb), a->lines[huge_at->r + 1]);
	}
}

static void describe_unmatched(struct vitem *it, const struct csvtab *t, const bool *used,
			       const char *side, const size_t *kcols, size_t nk, unsigned show,
			       uint64_t *count)
{
	for (size_t r = 0; r < t->nrows; r++) {
		if (used[r])
			continue;
		if (++*count > show)
			continue;
		if (nk) {
			char *k = key_text(t, r, kcols, nk);
			ptrvec_push(&it->unmatched, xasprintf("%s only: %s (line %zu)", side, k, t->lines[r + 1]));
			free(k);
		} else {
			ptrvec_push(&it->unmatched, xasprintf("%s only: row %zu (line %zu)", side, r,
							      t->lines[r + 1]));
		}
	}
}

void verify_table(struct verify_report *r, const char *name, const char *ref, const char *cand)
{
	const struct verify_opts *o = r->opts;
	struct vitem *it = vitem_add(r, V_TABLE, name, ref, cand);
	struct csvtab t[2];
	const char *path[2] = {ref, cand};
	memset(t, 0, sizeof t);
	size_t *cmap = NULL, *ka = NULL, *kb = NULL, nk = 0;
	struct pairing p = {0};
	for (int i = 0; i < 2; i++) {
		char *why;
		if (!csvtab_read(path[i], &t[i], &why)) {
			vitem_fail(it, xasprintf("cannot read '%s': %s", path[i], why));
			free(why);
			goto out;
		}
	}
	/* Columns by name: the same set on both sides. */
	cmap = xcalloc(t[0].ncols + 1, sizeof *cmap);
	struct buf diff = {0};
	for (size_t c = 0; c < t[0].ncols; c++) {
		long k = csvtab_column(&t[1], csvtab_name(&t[0], c));
		if (k < 0)
			buf_printf(&diff, "%scolumn '%s' is only in the reference", diff.len ? "; " : "",
				   csvtab_name(&t[0], c));
		else
			cmap[c] = (size_t)k;
	}
	for (size_t c = 0; c < t[1].ncols; c++)
		if (csvtab_column(&t[0], csvtab_name(&t[1], c)) < 0)
			buf_printf(&diff, "%scolumn '%s' is only in the candidate", diff.len ? "; " : "",
				   csvtab_name(&t[1], c));
	if (diff.len) {
		vitem_fail(it, xasprintf("'%s' and '%s' cannot be compared: the headers differ: %s", ref,
					 cand, diff.data));
		buf_free(&diff);
		goto out;
	}
	buf_free(&diff);
	enum vcoltype *types = xcalloc(t[0].ncols + 1, sizeof *types);
	for (size_t c = 0; c < t[0].ncols; c++)
		types[c] = classify(&t[0], c, &t[1], cmap[c]);
	/* --key columns */
	for (char **k = o->keys; k && *k; k++)
		nk++;
	ka = xcalloc(nk + 1, sizeof *ka);
	kb = xcalloc(nk + 1, sizeof *kb);
	for (size_t k = 0; k < nk; k++) {
		long c = csvtab_column(&t[0], o->keys[k]);
		if (c < 0) {
			vitem_fail(it, xasprintf("--key: '%s' has no column '%s'", ref, o->keys[k]));
			free(types);
			goto out;
		}
		ka[k] = (size_t)c;
		kb[k] = cmap[c];
	}
	size_t nr = t[0].nrows, nc = t[1].nrows;
	p.pairs = xcalloc((nr < nc ? nr : nc) + 1, sizeof *p.pairs);
	p.ref_used = xcalloc(nr + 1, sizeof *p.ref_used);
	p.cand_used = xcalloc(nc + 1, sizeof *p.cand_used);
	char *dup;
	if (nk && !pair_by_key(&p, &t[0], ka, &t[1], kb, nk, ref, cand, &dup)) {
		vitem_fail(it, dup);
		free(types);
		goto out;
	} else if (nk) {
		/* paired */
	} else if (o->unordered) {
		/* sort by every column: text and integer ones first, floats last */
		size_t ncols = t[0].ncols, *ca = xcalloc(ncols + 1, sizeof *ca), *cb = xcalloc(ncols + 1, sizeof *cb);
		enum vcoltype *ty = xcalloc(ncols + 1, sizeof *ty);
		size_t n = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t c = 0; c < ncols; c++)
				if ((types[c] == COL_FLOAT) == (pass == 1)) {
					ca[n] = c;
					cb[n] = cmap[c];
					ty[n++] = types[c];
				}
		size_t *ra = sorted_rows(&t[0], ca, ty, n), *rb = sorted_rows(&t[1], cb, ty, n);
		for (size_t i = 0; i < nr && i < nc; i++) {
			p.pairs[p.n++] = (struct pair){ra[i], rb[i]};
			p.ref_used[ra[i]] = p.cand_used[rb[i]] = true;
		}
		free(ra);
		free(rb);
		free(ca);
		free(cb);
		free(ty);
	} else {
		for (size_t i = 0; i < nr && i < nc; i++) {
			p.pairs[p.n++] = (struct pair){i, i};
			p.ref_used[i] = p.cand_used[i] = true;
		}
	}
	it->ref_rows = nr;
	it->cand_rows = nc;
	it->matched = p.n;
	describe_unmatched(it, &t[0], p.ref_used, "reference", ka, nk, o->show, &it->ref_only);
	describe_unmatched(it, &t[1], p.cand_used, "candidate", kb, nk, o->show, &it->cand_only);
	if (o->unordered && !nk && (it->ref_only || it->cand_only)) {
		/* which rows are left over after sorting says little: give counts only */
		for (size_t i = 0; i < it->unmatched.len; i++)
			free(it->unmatched.items[i]);
		it->unmatched.len = 0;
	}
	if (o->unordered && !nk)
		it->note = xstrdup("rows compared as a multiset (--unordered)");
	else if (nk) {
		struct buf kb_text = {0};
		for (size_t k = 0; k < nk; k++)
			buf_printf(&kb_text, "%s%s", k ? "," : "", o->keys[k]);
		it->note = xasprintf("rows matched by --key %s", kb_text.data);
		buf_free(&kb_text);
	}
	it->ncols = t[0].ncols;
	it->cols = xcalloc(it->ncols + 1, sizeof *it->cols);
	bool bad = it->ref_only || it->cand_only;
	for (size_t c = 0; c < t[0].ncols; c++) {
		struct vitem *col = vitem_add(NULL, V_COLUMN, csvtab_name(&t[0], c), NULL, NULL);
		col->coltype = types[c];
		it->cols[c] = col;
		compare_column(col, o, &t[0], c, &t[1], cmap[c], &p, nk ? ka : NULL, nk);
		bad |= col->status != V_PASS;
	}
	it->status = bad ? V_FAIL : V_PASS;
	free(types);
out:
	free(p.pairs);
	free(p.ref_used);
	free(p.cand_used);
	free(cmap);
	free(ka);
	free(kb);
	csvtab_free(&t[0]);
	csvtab_free(&t[1]);
}
