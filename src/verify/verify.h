/* verify: the verify engine's face for code, and what it compares and
 * found. verify_paths() (verify.c) takes two files or directories and
 * returns the report; the comparers append items to it: verify_array.c
 * (.npy files and .npz members), verify_table.c (CSV / TSV tables),
 * verify_recall.c (recall@k of nearest-neighbour results); verify_report.c
 * renders the report as text or JSON.
 *
 * Ownership: a report owns its items, an item its strings, statistics and
 * children; verify_report_free releases everything. */
#ifndef GPUOPT_VERIFY_H
#define GPUOPT_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "compare.h"
#include "core/npy.h"
#include "core/util.h"

struct verify_opts {
	bool rtol_set, atol_set;
	double rtol, atol;
	bool equal_nan;
	bool by_ulp;
	uint64_t ulp;
	bool allow_dtype;
	unsigned show;       /* first mismatches listed per item */
	char **keys;         /* --key columns (NULL-terminated), or NULL */
	bool unordered;
	uint64_t recall_k;   /* 0: no recall */
	const char *dist_ref, *dist_cand;
	double min_recall;
	double epsilon;
	bool verbose;
};

enum vstatus { V_PASS, V_FAIL, V_ERROR };

enum vkind {
	V_ARRAY,   /* a .npy file or an .npz member */
	V_MISSING, /* a file or member on one side only */
	V_TABLE,   /* a CSV / TSV table; its columns are children */
	V_COLUMN,  /* a column of a table */
	V_RECALL,  /* recall@k */
};

/* A listed difference in a table column: where, and the two cells. */
struct vcell {
	uint64_t row;    /* data row in the reference (0-based) */
	uint64_t line;   /* its line in the reference file */
	char *key;       /* "id=7, t=2" with --key, else NULL */
	char *ref, *cand;
	double err;      /* numeric columns: |cand - ref| */
};

enum vcoltype { COL_TEXT, COL_INT, COL_FLOAT, COL_BIGINT /* beyond 128 bits: as decimal text */ };

struct vrecall {
	uint64_t queries, k;
	bool by_distance;
	double epsilon, min_recall;
	double mean, min;
	uint64_t min_at;        /* first query with the minimum */
	uint64_t hist[11];      /* [0, .1), [.1, .2), ..., [.9, 1), exactly 1 */
	uint64_t below;         /* queries under min_recall */
	unsigned nworst;
	uint64_t worst_q[CMP_MAX_SHOW];
	double worst_r[CMP_MAX_SHOW];
};

struct vitem {
	enum vkind kind;
	enum vstatus status;
	char *name;       /* what the report calls it: a path, "a.npz:x", a column name */
	char *ref_path;   /* the files compared (NULL where it does not apply) */
	char *cand_path;
	char *error;      /* V_ERROR: the whole message, naming the file */
	char *note;       /* a remark, e.g. the dtype change under --allow-dtype */
	/* V_ARRAY, V_COLUMN (numeric) */
	struct npy_array ref_a;  /* V_ARRAY: the reference's header (shape, layout, dtype) */
	struct npy_dtype cand_dtype;
	bool have_header;
	char *tol_source;  /* where rtol / atol came from */
	struct cmp_stats *st;
	/* V_TABLE */
	uint64_t ref_rows, cand_rows, matched, ref_only, cand_only;
	struct ptrvec unmatched;  /* char *: the first few unmatched rows, described */
	struct vitem **cols;
	size_t ncols;
	/* V_COLUMN */
	enum vcoltype coltype;
	uint64_t compared, differ;  /* text columns */
	struct vcell *cells;        /* the first differences */
	size_t ncells;
	struct vcell at_max_abs, at_max_rel; /* numeric columns: where st's maxima are */
	/* V_RECALL */
	struct vrecall *recall;
};

struct verify_report {
	const char *reference, *candidate;
	const struct verify_opts *opts;
	struct ptrvec items;    /* struct vitem * */
	struct ptrvec notices;  /* char *, owned */
};

/* A new item, appended to r (r may be NULL for a child item). */
struct vitem *vitem_add(struct verify_report *r, enum vkind kind, const char *name,
			const char *ref_path, const char *cand_path);

/* Marks it as not comparable: status V_ERROR with the message `msg` (taken
 * over). The command says it on stderr (where the report is not). */
void vitem_fail(struct vitem *it, char *msg);

/* Compares CANDIDATE cand with REFERENCE ref (two files, or two
 * directories compared by relative path) under o, which, like the two
 * strings, must outlive the report. Never NULL: what could not be read or
 * compared is an item with status V_ERROR and its message. The caller
 * frees the report with verify_report_free. */
struct verify_report *verify_paths(const struct verify_opts *o, const char *ref, const char *cand);

void vitem_free(struct vitem *it);
void verify_report_free(struct verify_report *r); /* frees r itself; accepts NULL */
void verify_notice(struct verify_report *r, char *msg);

/* Compares two .npy files / two .npz archives member by member. */
void verify_npy(struct verify_report *r, const char *name, const char *ref, const char *cand);
void verify_npz(struct verify_report *r, const char *name, const char *ref, const char *cand);

/* Compares two CSV / TSV tables. */
void verify_table(struct verify_report *r, const char *name, const char *ref, const char *cand);

/* recall@k of the index arrays in two .npy files (r->opts->recall_k). */
void verify_recall(struct verify_report *r, const char *ref, const char *cand);

/* The tolerance a dtype pair is compared with, and where it came from
 * (an owned string). */
void verify_tolerance(const struct verify_opts *o, const struct npy_dtype *a,
		      const struct npy_dtype *b, double *rtol, double *atol, char **source);

/* Renderings, owned by the caller. */
char *verify_report_text(const struct verify_report *r);
char *verify_report_json(const struct verify_report *r);

/* 2 if any item could not be compared, else 1 if any differs, else 0. */
int verify_exit_code(const struct verify_report *r);

#endif
