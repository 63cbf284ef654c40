/* verify_recall: recall@k of nearest-neighbour results. REFERENCE and
 * CANDIDATE are (n_queries, >= k) integer arrays of neighbour ids, from an
 * exact and an approximate search; the first k of each row count.
 *
 * By id sets (the default): the recall of a query is the number of distinct
 * candidate ids among the reference's first k ids, divided by k. Negative
 * ids (Faiss's -1 for "no neighbour") never count.
 *
 * By distance (--distances REF_D CAND_D, smaller is nearer): as
 * ann-benchmarks counts it, a candidate neighbour counts when its distance is
 * at most the reference's k-th distance + epsilon, so a neighbour tied with
 * the true k-th one is not held against the search.
 *
 * The verdict: the mean recall over queries must be at least --min-recall. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapfile.h"
#include "verify.h"

struct arr {
	const char *path;
	struct mapfile map;
	struct npy_array a;
	const unsigned char *data;
};

static bool load(struct vitem *it, struct arr *x, const char *path)
{
	char *why;
	x->path = path;
	if (!mapfile_open(path, &x->map, &why) ||
	    !npy_parse(x->map.data, x->map.size, x->map.size, &x->a, "verify", &why)) {
		vitem_fail(it, xasprintf("cannot read '%s': %s", path, why));
		free(why);
		return false;
	}
	x->data = x->map.data + x->a.offset;
	return true;
}

/* Checks x is (queries, >= k) of the right kind of dtype. */
static bool check_shape(struct vitem *it, const struct arr *x, uint64_t queries, uint64_t k,
			bool ids)
{
	const struct npy_dtype *d = &x->a.dtype;
	bool kind_ok = ids ? (d->kind == 'i' || d->kind == 'u') : (d->kind == 'f' || d->kind == 'i' || d->kind == 'u');
	if (!kind_ok || x->a.ndim != 2 || x->a.shape[1] < k || x->a.shape[0] != queries) {
		struct buf b = {0};
		npy_format_dtype(d, &b);
		buf_putc(&b, ' ');
		npy_format_shape(&x->a, &b);
		vitem_fail(it, xasprintf("--recall-k %llu: '%s' must be a (%llu, >= %llu) %s array; it is %s",
					 (unsigned long long)k, x->path, (unsigned long long)queries,
					 (unsigned long long)k, ids ? "integer (neighbour ids)" : "float (distances)",
					 b.data));
		buf_free(&b);
		return false;
	}
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first k ids of row q into out; an id above INT64_MAX reads as -1
 * (no neighbour). */
static void row_ids(const struct arr *x, uint64_t q, uint64_t k, int64_t *out)
{
	uint64_t idx[2] = {q, 0};
	for (uint64_t j = 0; j < k; j++) {
		idx[1] = j;
		if (!npy_get_int(&x->a, x->data, idx, &out[j]))
			out[j] = -1;
	}
}

void verify_recall(struct verify_report *r, const char *ref, const char *cand)
{
	const struct verify_opts *o = r->opts;
	uint64_t k = o->recall_k;
	char *name = xasprintf("recall@%llu", (unsigned long long)k);
	struct vitem *it = vitem_add(r, V_RECALL, name, ref, cand);
	free(name);
	struct arr x[4];
	memset(x, 0, sizeof x);
	int64_t *truth = NULL, *got = NULL;
	bool dist = o->dist_ref != NULL;
	if (!load(it, &x[0], ref) || !load(it, &x[1], cand))
		goto out;
	uint64_t nq = x[0].a.ndim == 2 ? x[0].a.shape[0] : 0;
	if (!check_shape(it, &x[0], nq, k, true) || !check_shape(it, &x[1], nq, k, true))
		goto out;
	if (dist && (!load(it, &x[2], o->dist_ref) || !load(it, &x[3], o->dist_cand) ||
		     !check_shape(it, &x[2], nq, k, false) || !check_shape(it, &x[3], nq, k, false)))
		goto out;
	struct vrecall *rc = it->recall = xcalloc(1, sizeof *rc);
	rc->queries = nq;
	rc->k = k;
	rc->by_distance = dist;
	rc->epsilon = o->epsilon;
	rc->min_recall = o->min_recall;
	rc->min = nq ? 2 : 1;
	truth = xcalloc(k, sizeof *truth);
	got = xcalloc(k, sizeof *got);
	double sum = 0;
	for (uint64_t q = 0; q < nq; q++) {
		uint64_t hits = 0;
		if (dist) {
			uint64_t idx[2] = {q, k - 1};
			double thr = npy_get_double(&x[2].a, x[2].data, idx) + o->epsilon;
			for (uint64_t j = 0; j < k; j++) {
				idx[1] = j;
				hits += npy_get_double(&x[3].a, x[3].data, idx) <= thr;
			}
		} else {
			row_ids(&x[0], q, k, truth);
			row_ids(&x[1], q, k, got);
			qsort(truth, k, sizeof *truth, cmp_i64);
			qsort(got, k, sizeof *got, cmp_i64);
			for (uint64_t i = 0, j = 0; i < k && j < k;) {
				if (got[j] < 0 || (j > 0 && got[j] == got[j - 1])) {
					j++;
				} else if (truth[i] < got[j]) {
					i++;
				} else if (truth[i] > got[j]) {
					j++;
				} else {
					hits++;
					i++;
					j++;
				}
			}
		}
		double rec = (double)hits / (double)k;
		sum += rec;
		if (rec < rc->min) {
			rc->min = rec;
			rc->min_at = q;
		}
		rc->hist[hits >= k ? 10 : hits * 10 / k]++;
		rc->below += rec < o->min_recall;
		/* the lowest recalls, earliest query first among equals */
		unsigned cap = o->show < CMP_MAX_SHOW ? o->show : CMP_MAX_SHOW;
		if (rec < 1 && (rc->nworst < cap || rec < rc->worst_r[rc->nworst - 1])) {
			unsigned i = rc->nworst < cap ? rc->nworst++ : rc->nworst - 1;
			while (i > 0 && rc->worst_r[i - 1] > rec) {
				rc->worst_r[i] = rc->worst_r[i - 1];
				rc->worst_q[i] = rc->worst_q[i - 1];
				i--;
			}
			rc->worst_r[i] = rec;
			rc->worst_q[i] = q;
		}
	}
	if (nq == 0)
		rc->min = 1;
	rc->mean = nq ? sum / (double)nq : 1;
	it->status = rc->mean >= o->min_recall ? V_PASS : V_FAIL;
out:
	free(truth);
	free(got);
	for (int i = 0; i < 4; i++)
		mapfile_close(&x[i].map);
}
