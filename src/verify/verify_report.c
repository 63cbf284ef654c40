/* verify_report: the items of a verify report (creation, failure, freeing),
 * the tolerance each comparison uses, and the two renderings: text for
 * people (one line per passing item, details for the ones that fail) and
 * JSON for programs (everything, always). Non-finite numbers are written to
 * JSON as the strings "nan", "inf" and "-inf"; complex values as [re, im]. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "verify.h"
#include "core/version.h"

struct vitem *vitem_add(struct verify_report *r, enum vkind kind, const char *name,
			const char *ref_path, const char *cand_path)
{
	struct vitem *it = xcalloc(1, sizeof *it);
	it->kind = kind;
	it->status = V_PASS;
	it->name = xstrdup(name);
	it->ref_path = ref_path ? xstrdup(ref_path) : NULL;
	it->cand_path = cand_path ? xstrdup(cand_path) : NULL;
	if (r)
		ptrvec_push(&r->items, it);
	return it;
}

void vitem_fail(struct vitem *it, char *msg)
{
	it->status = V_ERROR;
	free(it->error);
	it->error = msg;
}

static void vcell_free(struct vcell *c)
{
	free(c->key);
	free(c->ref);
	free(c->cand);
}

void vitem_free(struct vitem *it)
{
	if (!it)
		return;
	free(it->name);
	free(it->ref_path);
	free(it->cand_path);
	free(it->error);
	free(it->note);
	free(it->tol_source);
	free(it->st);
	for (size_t i = 0; i < it->unmatched.len; i++)
		free(it->unmatched.items[i]);
	ptrvec_free(&it->unmatched);
	for (size_t i = 0; i < it->ncols; i++)
		vitem_free(it->cols[i]);
	free(it->cols);
	for (size_t i = 0; i < it->ncells; i++)
		vcell_free(&it->cells[i]);
	free(it->cells);
	vcell_free(&it->at_max_abs);
	vcell_free(&it->at_max_rel);
	free(it->recall);
	free(it);
}

void verify_report_free(struct verify_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->items.len; i++)
		vitem_free(r->items.items[i]);
	ptrvec_free(&r->items);
	for (size_t i = 0; i < r->notices.len; i++)
		free(r->notices.items[i]);
	ptrvec_free(&r->notices);
	free(r);
}

void verify_notice(struct verify_report *r, char *msg)
{
	ptrvec_push(&r->notices, msg);
}

void verify_tolerance(const struct verify_opts *o, const struct npy_dtype *a,
		      const struct npy_dtype *b, double *rtol, double *atol, char **source)
{
	double r1, a1, r2, a2;
	cmp_default_tol(a, &r1, &a1);
	cmp_default_tol(b, &r2, &a2);
	bool same = a->kind == b->kind && a->size == b->size;
	*rtol = o->rtol_set ? o->rtol : r1 > r2 ? r1 : r2;
	*atol = o->atol_set ? o->atol : a1 > a2 ? a1 : a2;
	bool exact = a->kind != 'f' && a->kind != 'c' && b->kind != 'f' && b->kind != 'c';
	char *defaults = same ? xasprintf(exact ? "%s: exact" : "%s defaults", npy_dtype_name(a))
			      : xasprintf(exact ? "%s and %s: exact" : "the larger defaults of %s and %s",
					  npy_dtype_name(a), npy_dtype_name(b));
	if (o->by_ulp)
		*source = xstrdup("--ulp");
	else if (o->rtol_set && o->atol_set)
		*source = xstrdup("--rtol and --atol");
	else if (o->rtol_set)
		*source = xasprintf("--rtol; atol from %s", defaults);
	else if (o->atol_set)
		*source = xasprintf("--atol; rtol from %s", defaults);
	else
		*source = xstrdup(defaults);
	free(defaults);
}

int verify_exit_code(const struct verify_report *r)
{
	int rc = EXIT_OK;
	for (size_t i = 0; i < r->items.len; i++) {
		const struct vitem *it = r->items.items[i];
		if (it->status == V_ERROR)
			return EXIT_USAGE;
		if (it->status == V_FAIL)
			rc = EXIT_FAIL;
	}
	return rc;
}

/* ---- numbers ---- */

/* The shortest decimal that reads back as the same float / double. */
static void shortest(char *out, size_t n, double v, bool single)
{
	if (isnan(v)) {
		snprintf(out, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(out, n, v < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(out, n, "%.*g", p, v);
		if (single ? strtof(out, NULL) == (float)v : strtod(out, NULL) == v)
			return;
	}
}

static void put_value(struct buf *b, const struct cmp_value *v)
{
	char s[40], t[40];
	switch (v->type) {
	case CMP_VINT: buf_printf(b, "%lld", (long long)v->i); break;
	case CMP_VUINT: buf_printf(b, "%llu", (unsigned long long)v->u); break;
	case CMP_VF32:
	case CMP_VF64:
		shortest(s, sizeof s, v->re, v->type == CMP_VF32);
		buf_puts(b, s);
		break;
	case CMP_VC64:
	case CMP_VC128:
		shortest(s, sizeof s, v->re, v->type == CMP_VC64);
		shortest(t, sizeof t, v->im, v->type == CMP_VC64);
		buf_printf(b, "(%s%s%sj)", s, t[0] == '-' ? "" : "+", t);
		break;
	}
}

static void put_err(struct buf *b, double e)
{
	if (isnan(e))
		buf_puts(b, "nan");
	else if (isinf(e))
		buf_puts(b, "inf");
	else
		buf_printf(b, "%.3g", e);
}

static void put_index(struct buf *b, const struct npy_array *a, uint64_t at)
{
	uint64_t idx[NPY_MAX_DIMS];
	npy_unravel(a, at, idx);
	buf_putc(b, '[');
	for (int d = 0; d < a->ndim; d++)
		buf_printf(b, d ? ", %llu" : "%llu", (unsigned long long)idx[d]);
	buf_putc(b, ']');
}

/* One element of an array item: "[i, j]: ref X, cand Y" and a newline. */
static void put_point(struct buf *b, const struct vitem *it, const struct cmp_point *p)
{
	put_index(b, &it->ref_a, p->at);
	buf_puts(b, ": ref ");
	put_value(b, &p->ref);
	buf_puts(b, ", cand ");
	put_value(b, &p->cand);
	buf_putc(b, '\n');
}

static void put_cell_where(struct buf *b, const struct vcell *c)
{
	if (c->key)
		term_safe_append_value(b, c->key, strlen(c->key)); /* one line, as the cells */
	else
		buf_printf(b, "row %llu (line %llu)", (unsigned long long)c->row,
			   (unsigned long long)c->line);
}

static const char *status_word(enum vstatus s)
{
	return s == V_PASS ? "PASS " : s == V_FAIL ? "FAIL " : "ERROR";
}

static const char *kind_of(enum cmp_kind k)
{
	switch (k) {
	case CMP_F32: return "float32";
	case CMP_F64: return "float64";
	case CMP_C64: return "complex64";
	case CMP_C128: return "complex128";
	case CMP_F16: return "float16";
	case CMP_DD: return "float64 with the integers exact";
	default: return "integers";
	}
}

/* ---- text ---- */

static void text_test(struct buf *b, const char *pad, const struct vitem *it)
{
	const struct cmp_stats *st = it->st;
	if (st->opts.by_ulp)
		buf_printf(b, "%stest: at most %llu ulp%s apart (%s)", pad,
			   (unsigned long long)st->opts.ulp, st->opts.ulp == 1 ? "" : "s", kind_of(st->kind));
	else if (st->opts.rtol == 0 && st->opts.atol == 0)
		buf_printf(b, "%stest: cand == ref exactly (%s)", pad, it->tol_source ? it->tol_source : "");
	else {
		char r[40], a[40];
		shortest(r, sizeof r, st->opts.rtol, false);
		shortest(a, sizeof a, st->opts.atol, false);
		buf_printf(b, "%stest: |cand - ref| <= %s + %s * |ref| (%s)", pad, a, r,
			   it->tol_source ? it->tol_source : "");
	}
	if (st->kind >= CMP_F32)
		buf_puts(b, st->opts.equal_nan ? "; NaN equals NaN" : "; NaN never equals NaN");
	buf_putc(b, '\n');
}

/* The statistics block of a numeric array or column. where(b, point) says
 * where a point is. */
static void text_stats(struct buf *b, const struct vitem *it, bool column)
{
	const struct cmp_stats *st = it->st;
	const char *pad = column ? "           " : "       ";
	text_test(b, pad, it);
	uint64_t nan_diff = st->nan_ref_only + st->nan_cand_only +
			    (st->opts.equal_nan ? 0 : st->nan_both);
	if (st->mismatches) {
		buf_printf(b, "%sdiffer: %llu of %llu (%.4g%%)", pad, (unsigned long long)st->mismatches,
			   (unsigned long long)st->n, 100.0 * (double)st->mismatches / (double)st->n);
		if (nan_diff) {
			buf_printf(b, ": %llu out of tolerance, %llu in the NaN pattern (",
				   (unsigned long long)(st->mismatches - nan_diff), (unsigned long long)nan_diff);
			const char *sep = "";
			if (st->nan_ref_only) {
				buf_printf(b, "%llu NaN only in the reference", (unsigned long long)st->nan_ref_only);
				sep = ", ";
			}
			if (st->nan_cand_only) {
				buf_printf(b, "%s%llu NaN only in the candidate", sep,
					   (unsigned long long)st->nan_cand_only);
				sep = ", ";
			}
			if (!st->opts.equal_nan && st->nan_both)
				buf_printf(b, "%s%llu NaN on both sides", sep, (unsigned long long)st->nan_both);
			buf_putc(b, ')');
		}
		buf_putc(b, '\n');
	}
	const struct {
		const char *what;
		const struct cmp_point *p;
		const struct vcell *c;
	} maxima[] = {
		{"largest abs error", &st->max_abs, &it->at_max_abs},
		{"largest rel error", &st->max_rel, &it->at_max_rel},
		{"largest ulp distance", st->opts.by_ulp ? &st->max_ulp : NULL, NULL},
	};
	for (size_t i = 0; i < 3; i++) {
		const struct cmp_point *p = maxima[i].p;
		if (!p || p->err <= 0)
			continue;
		buf_printf(b, "%s%s ", pad, maxima[i].what);
		put_err(b, p->err);
		buf_puts(b, " at ");
		if (column) {
			put_cell_where(b, maxima[i].c);
			buf_printf(b, ": ref %s, cand %s\n", maxima[i].c->ref, maxima[i].c->cand);
			continue;
		}
		put_point(b, it, p);
	}
	/* the errors are over the elements that are numbers on both sides */
	uint64_t nan_any = st->nan_ref_only + st->nan_cand_only + st->nan_both;
	if (st->n && nan_any >= st->n) {
		buf_printf(b, "%srelative L2 error: none (no element is a number on both sides)\n", pad);
	} else {
		buf_printf(b, "%srelative L2 error ||cand - ref|| / ||ref|| = ", pad);
		put_err(b, cmp_rel_l2(st));
		if (nan_any)
			buf_printf(b, " (over the %llu elements that are numbers on both sides)",
				   (unsigned long long)(st->n - nan_any));
		buf_putc(b, '\n');
	}
	if (column) {
		if (it->ncells)
			buf_printf(b, "%sfirst differences:\n", pad);
		for (size_t i = 0; i < it->ncells; i++) {
			buf_printf(b, "%s  ", pad);
			put_cell_where(b, &it->cells[i]);
			buf_puts(b, ": ref ");
			term_safe_append_value(b, it->cells[i].ref, strlen(it->cells[i].ref));
			buf_puts(b, ", cand ");
			term_safe_append_value(b, it->cells[i].cand, strlen(it->cells[i].cand));
			buf_putc(b, '\n');
		}
		return;
	}
	if (st->nshown)
		buf_printf(b, "%sfirst mismatches:\n", pad);
	for (unsigned i = 0; i < st->nshown; i++) {
		const struct cmp_point *p = &st->shown[i];
		buf_printf(b, "%s  ", pad);
		put_point(b, it, p);
	}
}

static void text_column(struct buf *b, const struct vitem *c, bool verbose)
{
	static const char *const types[] = {"text", "integer", "number", "integer beyond 128 bits, exact"};
	buf_printf(b, "    %s column '", status_word(c->status));
	term_safe_append_value(b, c->name, strlen(c->name));
	buf_printf(b, "' (%s)", types[c->coltype]);
	if (c->note)
		buf_printf(b, " (%s)", c->note);
	if (c->coltype == COL_TEXT || c->coltype == COL_BIGINT) {
		if (c->status == V_PASS) {
			buf_printf(b, ": %llu rows equal\n", (unsigned long long)c->compared);
			return;
		}
		buf_printf(b, ": %llu of %llu rows differ\n", (unsigned long long)c->differ,
			   (unsigned long long)c->compared);
		for (size_t i = 0; i < c->ncells; i++) {
			buf_puts(b, "             ");
			put_cell_where(b, &c->cells[i]);
			/* one cell, one line: a quoted newline in it must not break the listing */
			buf_puts(b, ": ref '");
			term_safe_append_value(b, c->cells[i].ref, strlen(c->cells[i].ref));
			buf_puts(b, "', cand '");
			term_safe_append_value(b, c->cells[i].cand, strlen(c->cells[i].cand));
			buf_puts(b, "'\n");
		}
		return;
	}
	if (c->status == V_PASS && !verbose) {
		buf_printf(b, ": %llu rows within tolerance\n", (unsigned long long)c->st->n);
		return;
	}
	buf_putc(b, '\n');
	text_stats(b, c, true);
}

static void text_recall(struct buf *b, const struct vitem *it)
{
	const struct vrecall *rc = it->recall;
	buf_printf(b, "%s  recall@%llu  %s vs %s: %llu queries, mean %.4f, min %.4f (query %llu); "
		   "mean >= %g required\n", status_word(it->status), (unsigned long long)rc->k,
		   it->ref_path, it->cand_path, (unsigned long long)rc->queries, rc->mean, rc->min,
		   (unsigned long long)rc->min_at, rc->min_recall);
	buf_printf(b, "       %s\n", rc->by_distance
		   ? "a neighbour counts when its distance is within the true k-th distance + epsilon"
		   : "a neighbour counts when its id is among the reference's first k");
	if (rc->by_distance)
		buf_printf(b, "       epsilon %g\n", rc->epsilon);
	buf_puts(b, "       distribution over queries:\n");
	for (int i = 10; i >= 0; i--) {
		if (!rc->hist[i])
			continue;
		if (i == 10)
			buf_printf(b, "         recall 1.0       %llu\n", (unsigned long long)rc->hist[i]);
		else
			buf_printf(b, "         recall %.1f-%.1f   %llu\n", i / 10.0, (i + 1) / 10.0,
				   (unsigned long long)rc->hist[i]);
	}
	if (rc->below)
		buf_printf(b, "       %llu queries below %g\n", (unsigned long long)rc->below, rc->min_recall);
	if (rc->nworst && rc->min < 1) {
		buf_puts(b, "       lowest recall:");
		for (unsigned i = 0; i < rc->nworst; i++)
			buf_printf(b, "%s query %llu: %.3g", i ? "," : "", (unsigned long long)rc->worst_q[i],
				   rc->worst_r[i]);
		buf_putc(b, '\n');
	}
}

static void text_item(struct buf *b, const struct vitem *it, bool verbose)
{
	if (it->status == V_ERROR) {
		buf_printf(b, "ERROR  %s: %s\n", it->name, it->error);
		return;
	}
	switch (it->kind) {
	case V_MISSING:
		buf_printf(b, "FAIL   %s: %s\n", it->name, it->note);
		return;
	case V_RECALL:
		text_recall(b, it);
		return;
	case V_ARRAY: {
		const struct cmp_stats *st = it->st;
		buf_printf(b, "%s  %s  ", status_word(it->status), it->name);
		npy_format_dtype(&it->ref_a.dtype, b);
		if (it->cand_dtype.kind != it->ref_a.dtype.kind || it->cand_dtype.size != it->ref_a.dtype.size ||
		    it->cand_dtype.order != it->ref_a.dtype.order) {
			buf_puts(b, " vs ");
			npy_format_dtype(&it->cand_dtype, b);
		}
		buf_putc(b, ' ');
		npy_format_shape(&it->ref_a, b);
		if (it->status == V_PASS) {
			buf_printf(b, ": %llu element%s within tolerance", (unsigned long long)st->n,
				   st->n == 1 ? "" : "s");
			if (st->max_abs.err > 0) {
				buf_puts(b, "; largest abs error ");
				put_err(b, st->max_abs.err);
				buf_puts(b, ", rel ");
				put_err(b, st->max_rel.err);
			} else if (st->n) {
				buf_puts(b, "; all equal");
			}
		} else {
			buf_printf(b, ": %llu of %llu elements differ (%.4g%%)", (unsigned long long)st->mismatches,
				   (unsigned long long)st->n, 100.0 * (double)st->mismatches / (double)st->n);
		}
		buf_putc(b, '\n');
		if (it->note)
			buf_printf(b, "       note: %s\n", it->note);
		if (it->status != V_PASS || verbose)
			text_stats(b, it, false);
		return;
	}
	case V_TABLE: {
		buf_printf(b, "%s  %s  table: ", status_word(it->status), it->name);
		if (it->ref_rows == it->cand_rows)
			buf_printf(b, "%llu rows", (unsigned long long)it->ref_rows);
		else
			buf_printf(b, "%llu rows in the reference, %llu in the candidate",
				   (unsigned long long)it->ref_rows, (unsigned long long)it->cand_rows);
		buf_printf(b, ", %zu columns", it->ncols);
		if (it->status == V_PASS)
			buf_puts(b, ", all within tolerance");
		buf_putc(b, '\n');
		if (it->note)
			buf_printf(b, "       note: %s\n", it->note);
		if (it->ref_only || it->cand_only) {
			buf_printf(b, "       rows without a match: %llu in the reference, %llu in the candidate\n",
				   (unsigned long long)it->ref_only, (unsigned long long)it->cand_only);
			for (size_t i = 0; i < it->unmatched.len; i++)
				buf_printf(b, "         %s\n", (const char *)it->unmatched.items[i]);
		}
		for (size_t i = 0; i < it->ncols; i++)
			if (it->cols[i]->status != V_PASS || verbose)
				text_column(b, it->cols[i], verbose);
		return;
	}
	case V_COLUMN:
		text_column(b, it, verbose);
		return;
	}
}

char *verify_report_text(const struct verify_report *r)
{
	struct buf b = {0};
	size_t pass = 0, fail = 0, err = 0;
	for (size_t i = 0; i < r->items.len; i++) {
		const struct vitem *it = r->items.items[i];
		text_item(&b, it, r->opts->verbose);
		pass += it->status == V_PASS;
		fail += it->status == V_FAIL;
		err += it->status == V_ERROR;
	}
	for (size_t i = 0; i < r->notices.len; i++)
		buf_printf(&b, "note: %s\n", (const char *)r->notices.items[i]);
	size_t n = r->items.len;
	int rc = verify_exit_code(r);
	buf_printf(&b, "\nverify: %s: %zu compared: %zu passed", rc == EXIT_OK ? "PASS" : rc == EXIT_FAIL ? "FAIL" : "ERROR",
		   n, pass);
	if (fail)
		buf_printf(&b, ", %zu differ", fail);
	if (err)
		buf_printf(&b, ", %zu could not be compared", err);
	buf_puts(&b, " (REFERENCE ");
	buf_puts(&b, r->reference);
	buf_puts(&b, ", CANDIDATE ");
	buf_puts(&b, r->candidate);
	buf_puts(&b, ")\n");
	return buf_steal(&b);
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v < 0 ? "-inf" : "inf");
	return json_real(v);
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jvalue(const struct cmp_value *v)
{
	switch (v->type) {
	case CMP_VINT: return json_integer(v->i);
	case CMP_VUINT:
		return v->u <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v->u) : json_real((double)v->u);
	case CMP_VF32:
	case CMP_VF64: return jnum(v->re);
	default: return json_pack("[o, o]", jnum(v->re), jnum(v->im));
	}
}

static json_t *jindex(const struct npy_array *a, uint64_t at)
{
	uint64_t idx[NPY_MAX_DIMS];
	npy_unravel(a, at, idx);
	json_t *arr = json_array();
	for (int d = 0; d < a->ndim; d++)
		json_array_append_new(arr, json_integer((json_int_t)idx[d]));
	return arr;
}

static void jcell_where(json_t *o, const struct vcell *c)
{
	json_object_set_new(o, "row", json_integer((json_int_t)c->row));
	json_object_set_new(o, "line", json_integer((json_int_t)c->line));
	json_object_set_new(o, "key", jstr(c->key));
}

static json_t *jpoint(const struct vitem *it, const struct cmp_point *p, const struct vcell *c)
{
	if (!p || p->err < 0)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "value", jnum(p->err));
	if (c) {
		jcell_where(o, c);
		json_object_set_new(o, "ref", json_string(c->ref));
		json_object_set_new(o, "cand", json_string(c->cand));
	} else {
		json_object_set_new(o, "index", jindex(&it->ref_a, p->at));
		json_object_set_new(o, "ref", jvalue(&p->ref));
		json_object_set_new(o, "cand", jvalue(&p->cand));
	}
	return o;
}

static void jstats(json_t *o, const struct vitem *it, bool column)
{
	const struct cmp_stats *st = it->st;
	json_object_set_new(o, "compared_as", json_string(kind_of(st->kind)));
	json_object_set_new(o, "test", json_pack("{s:o, s:o, s:b, s:o, s:o}",
		"rtol", st->opts.by_ulp ? json_null() : jnum(st->opts.rtol),
		"atol", st->opts.by_ulp ? json_null() : jnum(st->opts.atol),
		"equal_nan", st->opts.equal_nan,
		"ulp", st->opts.by_ulp ? json_integer((json_int_t)st->opts.ulp) : json_null(),
		"source", jstr(it->tol_source)));
	json_object_set_new(o, "elements", json_integer((json_int_t)st->n));
	json_object_set_new(o, "mismatches", json_integer((json_int_t)st->mismatches));
	json_object_set_new(o, "mismatch_share", json_real(st->n ? (double)st->mismatches / (double)st->n : 0));
	json_object_set_new(o, "nan_pattern", json_pack("{s:I, s:I, s:I}",
		"ref_only", (json_int_t)st->nan_ref_only, "cand_only", (json_int_t)st->nan_cand_only,
		"both", (json_int_t)st->nan_both));
	json_object_set_new(o, "max_abs_error", jpoint(it, &st->max_abs, column ? &it->at_max_abs : NULL));
	json_object_set_new(o, "max_rel_error", jpoint(it, &st->max_rel, column ? &it->at_max_rel : NULL));
	json_object_set_new(o, "max_ulp", st->opts.by_ulp && !column ? jpoint(it, &st->max_ulp, NULL)
								       : json_null());
	json_object_set_new(o, "rel_l2_error", jnum(cmp_rel_l2(st)));
	json_t *first = json_array();
	if (column) {
		for (size_t i = 0; i < it->ncells; i++) {
			json_t *e = json_object();
			jcell_where(e, &it->cells[i]);
			json_object_set_new(e, "ref", json_string(it->cells[i].ref));
			json_object_set_new(e, "cand", json_string(it->cells[i].cand));
			json_array_append_new(first, e);
		}
	} else {
		for (unsigned i = 0; i < st->nshown; i++) {
			const struct cmp_point *p = &st->shown[i];
			json_array_append_new(first, json_pack("{s:o, s:o, s:o, s:o}", "index",
				jindex(&it->ref_a, p->at), "ref", jvalue(&p->ref), "cand", jvalue(&p->cand),
				"abs_error", jnum(p->err)));
		}
	}
	json_object_set_new(o, "first_mismatches", first);
}

static json_t *jshape(const struct npy_array *a)
{
	json_t *s = json_array();
	for (int d = 0; d < a->ndim; d++)
		json_array_append_new(s, json_integer((json_int_t)a->shape[d]));
	return s;
}

static json_t *jitem(const struct vitem *it)
{
	static const char *const kinds[] = {"array", "missing", "table", "column", "recall"};
	static const char *const results[] = {"pass", "fail", "error"};
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(it->name));
	json_object_set_new(o, "kind", json_string(kinds[it->kind]));
	json_object_set_new(o, "result", json_string(results[it->status]));
	if (it->kind != V_COLUMN) {
		json_object_set_new(o, "reference", jstr(it->ref_path));
		json_object_set_new(o, "candidate", jstr(it->cand_path));
	}
	json_object_set_new(o, "error", jstr(it->error));
	json_object_set_new(o, "note", jstr(it->note));
	if (it->kind == V_ARRAY && it->have_header) {
		json_object_set_new(o, "dtype", json_string(npy_dtype_name(&it->ref_a.dtype)));
		json_object_set_new(o, "candidate_dtype", json_string(npy_dtype_name(&it->cand_dtype)));
		char ro[2] = {it->ref_a.dtype.order, 0}, co[2] = {it->cand_dtype.order, 0};
		json_object_set_new(o, "byte_order", json_pack("{s:s, s:s}", "reference", ro,
							       "candidate", co));
		json_object_set_new(o, "shape", jshape(&it->ref_a));
		json_object_set_new(o, "fortran_order", json_boolean(it->ref_a.fortran));
		if (it->st)
			jstats(o, it, false);
	} else if (it->kind == V_TABLE && it->status != V_ERROR) {
		json_t *un = json_array();
		for (size_t i = 0; i < it->unmatched.len; i++)
			json_array_append_new(un, json_string(it->unmatched.items[i]));
		json_object_set_new(o, "rows", json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}",
			"reference", (json_int_t)it->ref_rows, "candidate", (json_int_t)it->cand_rows,
			"matched", (json_int_t)it->matched, "reference_only", (json_int_t)it->ref_only,
			"candidate_only", (json_int_t)it->cand_only, "unmatched", un));
		json_t *cols = json_array();
		for (size_t i = 0; i < it->ncols; i++)
			json_array_append_new(cols, jitem(it->cols[i]));
		json_object_set_new(o, "columns", cols);
	} else if (it->kind == V_COLUMN) {
		static const char *const types[] = {"text", "integer", "float", "integer"};
		json_object_set_new(o, "type", json_string(types[it->coltype]));
		if (it->coltype == COL_TEXT || it->coltype == COL_BIGINT) {
			json_object_set_new(o, "elements", json_integer((json_int_t)it->compared));
			json_object_set_new(o, "mismatches", json_integer((json_int_t)it->differ));
			json_t *first = json_array();
			for (size_t i = 0; i < it->ncells; i++) {
				json_t *e = json_object();
				jcell_where(e, &it->cells[i]);
				json_object_set_new(e, "ref", json_string(it->cells[i].ref));
				json_object_set_new(e, "cand", json_string(it->cells[i].cand));
				json_array_append_new(first, e);
			}
			json_object_set_new(o, "first_mismatches", first);
		} else if (it->st) {
			jstats(o, it, true);
		}
	} else if (it->kind == V_RECALL && it->recall) {
		const struct vrecall *rc = it->recall;
		json_t *hist = json_array(), *worst = json_array();
		for (int i = 0; i <= 10; i++)
			json_array_append_new(hist, json_pack("{s:f, s:f, s:I}", "from", i / 10.0, "to",
				i == 10 ? 1.0 : (i + 1) / 10.0, "queries", (json_int_t)rc->hist[i]));
		for (unsigned i = 0; i < rc->nworst; i++)
			json_array_append_new(worst, json_pack("{s:I, s:f}", "query", (json_int_t)rc->worst_q[i],
							       "recall", rc->worst_r[i]));
		json_object_set_new(o, "recall", json_pack("{s:I, s:I, s:f, s:f, s:I, s:f, s:b, s:o, s:I, s:o, s:o}",
			"k", (json_int_t)rc->k, "queries", (json_int_t)rc->queries, "mean", rc->mean,
			"min", rc->min, "min_query", (json_int_t)rc->min_at, "min_recall", rc->min_recall,
			"by_distance", rc->by_distance, "epsilon", rc->by_distance ? json_real(rc->epsilon) : json_null(),
			"below_min", (json_int_t)rc->below, "histogram", hist, "lowest", worst));
	}
	return o;
}

char *verify_report_json(const struct verify_report *r)
{
	json_t *items = json_array(), *notices = json_array();
	size_t pass = 0, fail = 0, err = 0;
	for (size_t i = 0; i < r->items.len; i++) {
		const struct vitem *it = r->items.items[i];
		json_array_append_new(items, jitem(it));
		pass += it->status == V_PASS;
		fail += it->status == V_FAIL;
		err += it->status == V_ERROR;
	}
	for (size_t i = 0; i < r->notices.len; i++)
		json_array_append_new(notices, json_string(r->notices.items[i]));
	int rc = verify_exit_code(r);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I, s:I}, s:o, s:o}",
		"tool", "gpuopt", "version", GPUOPT_VERSION, "command", "verify",
		"reference", r->reference, "candidate", r->candidate,
		"result", rc == EXIT_OK ? "pass" : rc == EXIT_FAIL ? "fail" : "error",
		"summary", "compared", (json_int_t)r->items.len, "passed", (json_int_t)pass,
		"failed", (json_int_t)fail, "errors", (json_int_t)err,
		"items", items, "notices", notices);
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	char *out = xasprintf("%s\n", s ? s : "{}");
	free(s);
	return out;
}
