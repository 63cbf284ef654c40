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
 * --atol, --ulp); other columns are compared as text, exactly. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvtab.h"
#include "verify.h"

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

static bool parse_int(const char *cell, int64_t *v)
{
	char b[32];
	const char *s = trim(cell, b, sizeof b);
	if (!s || !*s)
		return false;
	const char *p = s + (*s == '+' || *s == '-');
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	errno = 0;
	long long x = strtoll(s, NULL, 10);
	if (errno)
		return false;
	*v = x;
	return true;
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
	bool all_int = true, missing = false;
	const struct csvtab *t[2] = {a, b};
	size_t col[2] = {ca, cb};
	for (int s = 0; s < 2; s++) {
		for (size_t r = 0; r < t[s]->nrows; r++) {
			const char *c = csvtab_cell(t[s], r, col[s]);
			int64_t iv;
			double dv;
			if (all_int && parse_int(c, &iv))
				continue;
			if (is_missing(c)) {
				missing = true;
				continue;
			}
			all_int = false;
			if (!parse_float(c, &dv))
				return COL_TEXT;
		}
	}
	return all_int && !missing ? COL_INT : COL_FLOAT;
}

static double cell_double(const char *c)
{
	double v;
	int64_t i;
	if (parse_int(c, &i))
		return (double)i;
	return parse_float(c, &v) ? v : NAN;
}

static int64_t cell_int(const char *c)
{
	int64_t v = 0;
	parse_int(c, &v);
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
	if (type == COL_INT) {
		int64_t a = cell_int(x), b = cell_int(y);
		return a < b ? -1 : a > b;
	}
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

/* Pairs rows by key: merge of the two tables sorted by their key cells. */
static void pair_by_key(struct pairing *p, const struct csvtab *a, const size_t *ka,
			const struct csvtab *b, const size_t *kb, size_t nk)
{
	size_t *ra = sorted_rows(a, ka, NULL, nk), *rb = sorted_rows(b, kb, NULL, nk);
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
	if (c->coltype == COL_TEXT) {
		for (size_t i = 0; i < p->n; i++) {
			const struct pair *pr = &p->pairs[i];
			if (strcmp(csvtab_cell(a, pr->r, ca), csvtab_cell(b, pr->c, cb)) == 0)
				continue;
			c->differ++;
			if (c->ncells < o->show)
				add_cell(c, a, b, pr, ca, cb, ka, nk, 0, NULL);
		}
		c->status = c->differ ? V_FAIL : V_PASS;
		return;
	}
	struct npy_dtype dt = {c->coltype == COL_INT ? 'i' : 'f', 8, '<', false};
	struct cmp_opts co = {.equal_nan = o->equal_nan, .by_ulp = o->by_ulp, .ulp = o->ulp,
			      .show = o->show};
	verify_tolerance(o, &dt, &dt, &co.rtol, &co.atol, &c->tol_source);
	c->st = xmalloc(sizeof *c->st);
	cmp_init(c->st, c->coltype == COL_INT ? CMP_I64 : CMP_F64, &co);
	_Alignas(16) union { int64_t i[CMP_BLOCK]; double d[CMP_BLOCK]; } rb, cbuf;
	for (size_t s = 0; s < p->n; s += CMP_BLOCK) {
		size_t m = p->n - s < CMP_BLOCK ? p->n - s : CMP_BLOCK;
		for (size_t i = 0; i < m; i++) {
			const struct pair *pr = &p->pairs[s + i];
			const char *x = csvtab_cell(a, pr->r, ca), *y = csvtab_cell(b, pr->c, cb);
			if (c->coltype == COL_INT) {
				rb.i[i] = cell_int(x);
				cbuf.i[i] = cell_int(y);
			} else {
				rb.d[i] = cell_double(x);
				cbuf.d[i] = cell_double(y);
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
	c->status = st->mismatches ? V_FAIL : V_PASS;
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
	if (nk) {
		pair_by_key(&p, &t[0], ka, &t[1], kb, nk);
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
