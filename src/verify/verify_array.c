/* verify_array: compares two arrays — two .npy files, or the members of two
 * .npz archives — in one streaming pass. Each side is a source of bytes
 * read front to back: a memory-mapped .npy file (pages handed back to the
 * kernel behind the pass) or a zip member (stored: straight from the mapped
 * archive; deflated: inflated into a fixed window). Windows of elements go
 * through compare.c's kernels directly when their bytes already are the
 * kernel's type, else through a conversion into a block buffer. Memory does
 * not grow with the arrays', except in one case: a C-order array against a
 * Fortran-order one, when the candidate is a deflated member, is inflated
 * whole so that it can be read out of order — after its size was checked
 * against what this process can still take (core/memroom.h), else refused
 * naming the member and its size. A stored member out of order is read
 * where it lies in the mapped archive. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/mapfile.h"
#include "core/memroom.h"
#include "npz.h"
#include "verify.h"

/* Elements per window: at most 1 MB of complex128, under NPZ_MAX_PEEK. */
#define WINDOW ((size_t)65536)

struct asrc {
	const char *label;          /* the file (and member) for messages */
	struct npy_array a;
	const unsigned char *data;  /* addressable data (mapped .npy, or a whole copy) */
	struct mapfile *map;        /* the mapping to hand back behind the pass */
	size_t map_base;            /* offset of the data in the mapping */
	struct npz_reader *zr;      /* streamed member */
	unsigned char *owned;       /* a whole copy of a streamed member */
	uint64_t pos;               /* elements read */
};

static bool src_window(struct asrc *s, size_t n, const unsigned char **p, char **why)
{
	if (s->data) {
		*p = s->data + s->pos * s->a.dtype.size;
		return true;
	}
	size_t avail;
	if (!npz_reader_peek(s->zr, n * s->a.dtype.size, p, &avail, why))
		return false;
	if (avail < n * s->a.dtype.size) {
		*why = xstrdup("the member ends early");
		return false;
	}
	return true;
}

static void src_advance(struct asrc *s, size_t n)
{
	s->pos += n;
	if (s->data) {
		if (s->map)
			mapfile_release(s->map, s->map_base + s->pos * s->a.dtype.size);
		return;
	}
	npz_reader_consume(s->zr, n * s->a.dtype.size);
	if (s->map)
		mapfile_release(s->map, (size_t)npz_reader_input_offset(s->zr));
}

static void describe(struct buf *b, const struct npy_array *a)
{
	npy_format_dtype(&a->dtype, b);
	buf_putc(b, ' ');
	npy_format_shape(a, b);
}

static const char *order_name(const struct npy_array *a)
{
	return a->fortran ? "Fortran order" : "C order";
}

/* Makes a streamed member addressable, for out-of-order access against
 * `other` (the reference): a stored member where it lies in the mapped
 * archive (src_finish checks its CRC-32 afterwards), a deflated one
 * inflated whole into memory — once its size, from its header and the zip's
 * directory, was checked against what this process can still take. False
 * with *why (owned) saying the size and the limit when it cannot. */
static bool src_address(struct asrc *s, const struct asrc *other, char **why)
{
	if (s->data)
		return true;
	struct npz_reader *zr = s->zr;
	if (zr->m->method == 0) {
		s->data = zr->zip + npz_reader_input_offset(zr);
		return true;
	}
	uint64_t nbytes = s->a.nbytes;
	struct mem_room room;
	mem_room_now(&room);
	if (nbytes > room.bytes || nbytes > SIZE_MAX) {
		char *size = bytes_text(nbytes), *can = bytes_text(room.bytes);
		struct buf d = {0};
		describe(&d, &s->a);
		*why = xasprintf("in %s against the reference's %s, this deflated member has to be "
				 "inflated whole to be read out of order: %s (%s), and this process can take "
				 "%s more (%s); save both arrays in one order (np.ascontiguousarray), or "
				 "this one with np.savez, whose stored members are read where they lie",
				 order_name(&s->a), order_name(&other->a), size, d.data, can,
				 room.what ? room.what : "?");
		buf_free(&d);
		free(size);
		free(can);
		return false;
	}
	s->owned = malloc(nbytes ? (size_t)nbytes : 1); /* not xmalloc: a failure names the member */
	if (!s->owned) {
		char *size = bytes_text(nbytes);
		*why = xasprintf("in %s against the reference's %s, this deflated member has to be "
				 "inflated whole to be read out of order, and %s could not be allocated",
				 order_name(&s->a), order_name(&other->a), size);
		free(size);
		return false;
	}
	uint64_t done = 0;
	while (done < nbytes) {
		const unsigned char *p;
		size_t avail;
		size_t want = nbytes - done > NPZ_MAX_PEEK ? NPZ_MAX_PEEK : (size_t)(nbytes - done);
		if (!npz_reader_peek(zr, want, &p, &avail, why))
			return false;
		if (avail > nbytes - done)
			avail = (size_t)(nbytes - done);
		memcpy(s->owned + done, p, avail);
		npz_reader_consume(zr, avail);
		if (s->map)
			mapfile_release(s->map, (size_t)npz_reader_input_offset(zr));
		done += avail;
	}
	s->data = s->owned;
	return true;
}

static bool aligned_for(const void *p, enum cmp_kind k)
{
	uintptr_t a = k == CMP_F32 || k == CMP_C64 ? 4 : k == CMP_I128 ? 16 : 8;
	return ((uintptr_t)p & (a - 1)) == 0;
}

/* Both in memory order: the same layout, or a layout that does not matter. */
static bool same_order(const struct npy_array *a, const struct npy_array *b)
{
	return a->fortran == b->fortran || npy_layout_free(a);
}

/* Out-of-order pass: the reference in its memory order, the candidate
 * gathered element by element with an odometer over its strides. On a
 * failure *failed is the side that could not be read. */
static bool compare_reordered(struct cmp_stats *st, struct asrc *ref, struct asrc *cand,
			      struct asrc **failed, char **why)
{
	*failed = cand;
	if (!src_address(cand, ref, why))
		return false;
	*failed = ref;
	const struct npy_array *ra = &ref->a;
	int nd = ra->ndim;
	uint64_t cstride[NPY_MAX_DIMS], idx[NPY_MAX_DIMS] = {0};
	uint64_t acc = 1;
	for (int k = 0; k < nd; k++) { /* candidate strides, in elements */
		int d = cand->a.fortran ? k : nd - 1 - k;
		cstride[d] = acc;
		acc *= ra->shape[d];
	}
	_Alignas(64) unsigned char rbuf[CMP_BLOCK * 16], cbuf[CMP_BLOCK * 16],
		gather[CMP_BLOCK * 16];
	size_t rsz = ra->dtype.size, csz = cand->a.dtype.size;
	uint64_t coff = 0, n = ra->count, done = 0;
	while (done < n) {
		size_t win = n - done < WINDOW ? (size_t)(n - done) : WINDOW;
		const unsigned char *rp;
		if (!src_window(ref, win, &rp, why))
			return false;
		for (size_t b = 0; b < win; b += CMP_BLOCK) {
			size_t m = win - b < CMP_BLOCK ? win - b : CMP_BLOCK;
			for (size_t i = 0; i < m; i++) {
				memcpy(gather + i * csz, cand->data + coff * csz, csz);
				/* next index in the reference's order */
				for (int k = 0; k < nd; k++) {
					int d = ra->fortran ? k : nd - 1 - k;
					coff += cstride[d];
					if (++idx[d] < ra->shape[d])
						break;
					coff -= ra->shape[d] * cstride[d];
					idx[d] = 0;
				}
			}
			cmp_convert(st->kind, &ra->dtype, rp + b * rsz, m, rbuf);
			cmp_convert(st->kind, &cand->a.dtype, gather, m, cbuf);
			cmp_block(st, rbuf, cbuf, m, done + b);
		}
		src_advance(ref, win);
		done += win;
	}
	return true;
}

/* In-order pass; on a failure *failed is the side that could not be read. */
static bool compare_stream(struct cmp_stats *st, struct asrc *ref, struct asrc *cand,
			   struct asrc **failed, char **why)
{
	_Alignas(64) unsigned char rbuf[CMP_BLOCK * 16], cbuf[CMP_BLOCK * 16];
	enum cmp_kind k = st->kind;
	bool rdirect = cmp_direct(k, &ref->a.dtype), cdirect = cmp_direct(k, &cand->a.dtype);
	size_t rsz = ref->a.dtype.size, csz = cand->a.dtype.size;
	uint64_t n = ref->a.count, done = 0;
	while (done < n) {
		size_t win = n - done < WINDOW ? (size_t)(n - done) : WINDOW;
		const unsigned char *rp, *cp;
		*failed = ref;
		if (!src_window(ref, win, &rp, why))
			return false;
		*failed = cand;
		if (!src_window(cand, win, &cp, why))
			return false;
		bool ra = rdirect && aligned_for(rp, k), ca = cdirect && aligned_for(cp, k);
		for (size_t b = 0; b < win; b += CMP_BLOCK) {
			size_t m = win - b < CMP_BLOCK ? win - b : CMP_BLOCK;
			const void *r = rp + b * rsz, *c = cp + b * csz;
			if (!ra) {
				cmp_convert(k, &ref->a.dtype, rp + b * rsz, m, rbuf);
				r = rbuf;
			}
			if (!ca) {
				cmp_convert(k, &cand->a.dtype, cp + b * csz, m, cbuf);
				c = cbuf;
			}
			cmp_block(st, r, c, m, done + b);
		}
		src_advance(ref, win);
		src_advance(cand, win);
		done += win;
	}
	return true;
}

/* For a member: true once all of it was read and its CRC-32 matched. */
static bool src_finish(struct asrc *s, char **why)
{
	if (!s->zr)
		return true;
	/* a stored member read in place out of order: its CRC-32 over the rest */
	while (s->zr->m->method == 0 && s->zr->out_done < s->zr->m->usize) {
		uint64_t rest = s->zr->m->usize - s->zr->out_done;
		npz_reader_consume(s->zr, rest > (64u << 20) ? (64u << 20) : (size_t)rest);
		if (s->map)
			mapfile_release(s->map, (size_t)npz_reader_input_offset(s->zr));
	}
	if (!npz_reader_verified(s->zr) && s->zr->m->method == 8) {
		/* inflate on to the end of the stream, where the CRC is checked */
		const unsigned char *p;
		size_t avail;
		if (!npz_reader_peek(s->zr, 0, &p, &avail, why))
			return false;
	}
	if (!npz_reader_verified(s->zr)) {
		*why = xasprintf("member '%s' is damaged: its CRC-32 does not match", s->zr->m->name);
		return false;
	}
	return true;
}

static const char *kind_name(enum cmp_kind k)
{
	switch (k) {
	case CMP_F32: return "float32";
	case CMP_F64: return "float64";
	case CMP_C64: return "complex64";
	case CMP_C128: return "complex128";
	case CMP_F16: return "float16";
	case CMP_DD: return "float64 with the integers exact";
	default: return "exact integers";
	}
}

/* Compares ref and cand (headers parsed, data ready) into item it. */
static void compare_sources(struct vitem *it, const struct verify_opts *o, struct asrc *ref,
			    struct asrc *cand)
{
	it->ref_a = ref->a;
	it->cand_dtype = cand->a.dtype;
	it->have_header = true;
	const struct npy_dtype *rd = &ref->a.dtype, *cd = &cand->a.dtype;
	if (!npy_same_shape(&ref->a, &cand->a)) {
		struct buf a = {0}, b = {0};
		describe(&a, &ref->a);
		describe(&b, &cand->a);
		vitem_fail(it, xasprintf("'%s' and '%s' cannot be compared: the shapes differ: reference "
					 "%s, candidate %s", ref->label, cand->label, a.data, b.data));
		buf_free(&a);
		buf_free(&b);
		return;
	}
	bool same_dtype = rd->kind == cd->kind && rd->size == cd->size;
	if (!same_dtype && !o->allow_dtype) {
		enum cmp_kind k = cmp_kind_for(rd, cd);
		vitem_fail(it, xasprintf("'%s' and '%s' cannot be compared: the dtypes differ: reference "
					 "%s, candidate %s (--allow-dtype compares them as %s)",
					 ref->label, cand->label, npy_dtype_name(rd), npy_dtype_name(cd),
					 kind_name(k)));
		return;
	}
	enum cmp_kind k = cmp_kind_for(rd, cd);
	bool inexact = rd->kind == 'f' || rd->kind == 'c' || cd->kind == 'f' || cd->kind == 'c';
	if (o->by_ulp && !same_dtype && inexact) {
		vitem_fail(it, xasprintf("'%s' and '%s' cannot be compared with --ulp: the dtypes differ "
					 "(reference %s, candidate %s) and an ulp is a step of one type",
					 ref->label, cand->label, npy_dtype_name(rd), npy_dtype_name(cd)));
		return;
	}
	if (!same_dtype)
		it->note = xasprintf("dtypes differ: reference %s, candidate %s; compared as %s",
				     npy_dtype_name(rd), npy_dtype_name(cd),
				     kind_name(k));
	struct cmp_opts co = {.equal_nan = o->equal_nan, .by_ulp = o->by_ulp, .ulp = o->ulp,
			      .show = o->show};
	verify_tolerance(o, rd, cd, &co.rtol, &co.atol, &it->tol_source);
	it->st = xmalloc(sizeof *it->st);
	cmp_init(it->st, k, &co);
	char *why = NULL;
	struct asrc *bad = ref;
	bool ok = same_order(&ref->a, &cand->a) ? compare_stream(it->st, ref, cand, &bad, &why)
						: compare_reordered(it->st, ref, cand, &bad, &why);
	if (ok && !src_finish(ref, &why)) {
		ok = false;
		bad = ref;
	} else if (ok && !src_finish(cand, &why)) {
		ok = false;
		bad = cand;
	}
	if (!ok) {
		vitem_fail(it, xasprintf("cannot read '%s': %s", bad->label, why));
		free(why);
		return;
	}
	it->status = it->st->mismatches ? V_FAIL : V_PASS;
}

/* ---- .npy files ---- */

static char *changed_message(const char *path)
{
	return xasprintf("'%s' changed while being compared: it is shorter than when it was opened "
			 "(is the job that writes it still running?); compare it once it is written", path);
}

void verify_npy(struct verify_report *r, const char *name, const char *ref, const char *cand)
{
	struct vitem *it = vitem_add(r, V_ARRAY, name, ref, cand);
	struct mapfile m[2];
	struct asrc s[2];
	const char *path[2] = {ref, cand};
	memset(s, 0, sizeof s);
	memset(m, 0, sizeof m);
	for (int i = 0; i < 2; i++) {
		char *why;
		if (!mapfile_open(path[i], &m[i], &why)) {
			vitem_fail(it, xasprintf("cannot read '%s': %s", path[i], why));
			free(why);
			goto out;
		}
	}
	/* a file cut short under the map raises SIGBUS on a lost page */
	struct mapguard g;
	mapfile_guard_init(&g, &m[0], &m[1]);
	mapfile_guard_begin(&g);
	if (sigsetjmp(g.jb, 1) == 0) {
		bool ok = true;
		for (int i = 0; i < 2 && ok; i++) {
			char *why;
			s[i].label = path[i];
			if (!npy_parse(m[i].data, m[i].size, m[i].size, &s[i].a, "verify", &why)) {
				vitem_fail(it, xasprintf("cannot read '%s': %s", path[i], why));
				free(why);
				ok = false;
				break;
			}
			s[i].data = m[i].data + s[i].a.offset;
			s[i].map = &m[i];
			s[i].map_base = s[i].a.offset;
		}
		if (ok)
			compare_sources(it, r->opts, &s[0], &s[1]);
		mapfile_guard_end(&g);
	} else {
		vitem_fail(it, changed_message(path[g.failed]));
	}
out:
	mapfile_close(&m[0]);
	mapfile_close(&m[1]);
}

/* ---- .npz archives ---- */

static bool open_member(struct asrc *s, struct npz_reader *zr, const unsigned char *zip,
			const struct npz_member *mem, char **why)
{
	memset(s, 0, sizeof *s);
	if (!npz_reader_open(zr, zip, mem, why))
		return false;
	s->zr = zr;
	const unsigned char *p;
	size_t avail;
	size_t want = mem->usize < NPY_HEADER_WINDOW ? (size_t)mem->usize : NPY_HEADER_WINDOW;
	if (!npz_reader_peek(zr, want, &p, &avail, why))
		return false;
	if (!npy_parse(p, avail, mem->usize, &s->a, "verify", why))
		return false;
	npz_reader_consume(zr, s->a.offset);
	return true;
}

static char *member_label(const char *path, const char *member)
{
	return xasprintf("%s:%s", path, member);
}

/* Opens an archive's directory under the guard: NULL, or the error (owned). */
static char *open_archive(struct mapguard *g, const struct mapfile *m, struct npz *z, const char *path)
{
	char *why = NULL;
	mapfile_guard_begin(g);
	if (sigsetjmp(g->jb, 1) == 0) {
		bool ok = npz_open(m->data, m->size, z, &why);
		mapfile_guard_end(g);
		if (ok)
			return NULL;
		char *msg = xasprintf("cannot read '%s': %s", path, why);
		free(why);
		return msg;
	}
	return changed_message(path);
}

/* Compares members mm[0] (reference) and mm[1] under the guard into it;
 * zr and s are the caller's, closed by it whatever happens here. */
static void compare_members(struct verify_report *r, struct vitem *it, struct mapguard *g,
			    struct mapfile *m, const struct npz_member *const mm[2], const char *const labels[2],
			    const char *const path[2], struct npz_reader zr[2], struct asrc s[2])
{
	mapfile_guard_begin(g);
	if (sigsetjmp(g->jb, 1) != 0) {
		vitem_fail(it, changed_message(path[g->failed]));
		return;
	}
	for (int k = 0; k < 2; k++) {
		char *why;
		bool ok = open_member(&s[k], &zr[k], m[k].data, mm[k], &why);
		s[k].label = labels[k];
		s[k].map = &m[k];
		if (!ok) {
			vitem_fail(it, xasprintf("cannot read '%s': %s", labels[k], why));
			free(why);
			mapfile_guard_end(g);
			return;
		}
	}
	compare_sources(it, r->opts, &s[0], &s[1]);
	mapfile_guard_end(g);
}

/* Whether member mem's first n bytes are want[0..n); zr (the caller's,
 * zeroed, closed by the caller) reads them under g. */
static bool peek_magic(struct mapguard *g, const struct mapfile *mf, const struct npz_member *mem,
		       struct npz_reader *zr, const unsigned char *want, size_t n)
{
	if (mem->usize < n)
		return false;
	volatile bool yes = false; /* kept across the guard's longjmp */
	mapfile_guard_begin(g);
	if (sigsetjmp(g->jb, 1) == 0) {
		char *why = NULL;
		const unsigned char *p;
		size_t avail;
		if (npz_reader_open(zr, mf->data, mem, &why) && npz_reader_peek(zr, n, &p, &avail, &why))
			yes = avail >= n && memcmp(p, want, n) == 0;
		free(why);
	}
	mapfile_guard_end(g);
	return yes;
}

static char *array_name(const char *member)
{
	size_t n = strlen(member);
	return str_ends_with(member, ".npy") ? xstrndup(member, n - 4) : xstrdup(member);
}

/* The member np.load(path)[key] reads: the one stored as key, else as
 * key + ".npy"; NULL when neither is there. */
static const struct npz_member *member_for(const struct npz *z, const char *key)
{
	const struct npz_member *m = npz_find(z, key);
	if (m)
		return m;
	char *npy = xasprintf("%s.npy", key);
	m = npz_find(z, npy);
	free(npy);
	return m;
}

/* Whether numpy reads member mem as an array: a name ending ".npy" always
 * counts (a damaged header is then an error, not a skip); any other name
 * when its bytes start with .npy's magic, as np.load's NpzFile decides.
 * The first bytes are read under g: a file cut short reads as "no". */
static bool member_is_npy(struct mapguard *g, const struct mapfile *mf, const struct npz_member *mem)
{
	if (str_ends_with(mem->name, ".npy"))
		return true;
	static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
	struct npz_reader zr;
	memset(&zr, 0, sizeof zr);
	bool yes = peek_magic(g, mf, mem, &zr, magic, sizeof magic);
	npz_reader_close(&zr);
	return yes;
}

void verify_npz(struct verify_report *r, const char *name, const char *ref, const char *cand)
{
	struct mapfile m[2];
	struct npz z[2];
	const char *path[2] = {ref, cand};
	memset(m, 0, sizeof m);
	memset(z, 0, sizeof z);
	struct mapguard g;
	for (int i = 0; i < 2; i++) {
		char *why;
		if (!mapfile_open(path[i], &m[i], &why)) {
			struct vitem *it = vitem_add(r, V_ARRAY, name, ref, cand);
			vitem_fail(it, xasprintf("cannot read '%s': %s", path[i], why));
			free(why);
			goto out;
		}
	}
	mapfile_guard_init(&g, &m[0], &m[1]);
	for (int i = 0; i < 2; i++) {
		char *why = open_archive(&g, &m[i], &z[i], path[i]);
		if (why) {
			struct vitem *it = vitem_add(r, V_ARRAY, name, ref, cand);
			vitem_fail(it, why);
			goto out;
		}
	}
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < z[side].n; i++) {
			const struct npz_member *mem = &z[side].members[i];
			char *an = array_name(mem->name);
			const struct npz_member *other = member_for(&z[1 - side], an);
			if (member_for(&z[side], an) != mem) {
				/* "a.npy" beside "a": np.load(...)["a"] is "a" */
				verify_notice(r, xasprintf("%s: member '%s' is not compared: numpy loads member "
							   "'%s' for the name '%s'", path[side], mem->name, an, an));
			} else if (!member_is_npy(&g, &m[side], mem)) {
				if (side == 0 || !other)
					verify_notice(r, xasprintf("%s: member '%s' is not a .npy array: not compared",
								   path[side], mem->name));
			} else if (side == 0 || !other) {
				char *iname = xasprintf("%s:%s", name, an);
				char *rl = member_label(ref, side == 0 ? mem->name : other ? other->name : an);
				char *cl = member_label(cand, side == 1 ? mem->name : other ? other->name : an);
				if (!other) {
					struct vitem *it = vitem_add(r, V_MISSING, iname, side == 0 ? rl : NULL,
								     side == 1 ? cl : NULL);
					it->status = V_FAIL;
					it->note = xstrdup(side == 0 ? "missing in the candidate"
								     : "missing in the reference");
				} else {
					struct vitem *it = vitem_add(r, V_ARRAY, iname, rl, cl);
					struct npz_reader zr[2];
					struct asrc s[2];
					memset(zr, 0, sizeof zr);
					memset(s, 0, sizeof s);
					const struct npz_member *mm[2] = {mem, other};
					const char *labels[2] = {rl, cl};
					compare_members(r, it, &g, m, mm, labels, path, zr, s);
					for (int k = 0; k < 2; k++) {
						free(s[k].owned);
						npz_reader_close(&zr[k]);
					}
				}
				free(iname);
				free(rl);
				free(cl);
			}
			free(an);
		}
	}
out:
	for (int i = 0; i < 2; i++) {
		npz_free(&z[i]);
		mapfile_close(&m[i]);
	}
}
