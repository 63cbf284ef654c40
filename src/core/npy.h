/* npy: the NumPy .npy format, versions 1.0, 2.0 and 3.0. Parses the
 * preamble (magic \x93NUMPY, version, header length) and the header, a
 * Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)},
 * checks that the data that follows is exactly as long as the header says,
 * and describes the array: dtype, byte order, layout, shape, where the data
 * starts. The data itself is never copied here: callers read it where it
 * lies (a mapped file, a zip member).
 *
 * Accepted dtypes: bool, int8-int64, uint8-uint64, float16/32/64,
 * complex64/128, in either byte order. Object arrays (dtype 'O') are pickles
 * of Python objects and are refused without reading past the header, as are
 * structured, string, datetime and other dtypes.
 *
 * Ownership: nothing here allocates except the error messages (*why), which
 * the caller frees. */
#ifndef GPUOPT_NPY_H
#define GPUOPT_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum {
	NPY_MAX_DIMS = 64,      /* numpy 2's limit (numpy 1 allows 32) */
	NPY_MAX_HEADER = 10000, /* longest header accepted, numpy's own limit */
	/* Bytes that always hold the preamble and the longest accepted header. */
	NPY_HEADER_WINDOW = 12 + NPY_MAX_HEADER,
};

struct npy_dtype {
	char kind;    /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex */
	uint8_t size; /* bytes per element: 1, 2, 4, 8 or 16 */
	char order;   /* '<' little-endian, '>' big-endian, '|' single byte */
	bool swap;    /* the bytes are in the other order than this machine's */
};

struct npy_array {
	struct npy_dtype dtype;
	bool fortran; /* column-major: the first index varies fastest */
	int ndim;     /* 0 for a 0-d array (one element) */
	uint64_t shape[NPY_MAX_DIMS];
	uint64_t count;  /* elements: the product of shape (1 when ndim is 0) */
	uint64_t nbytes; /* count * dtype.size */
	size_t offset;   /* where the data starts, from the start of the file */
	uint8_t major, minor;
};

/* Parses a .npy file of `total` bytes whose first `len` bytes are at buf
 * (len may be less than total when only a prefix is at hand, as for a
 * compressed zip member; NPY_HEADER_WINDOW bytes always suffice). cmd is
 * the command reading ("verify", "fit"): a message about what it cannot
 * read names it. Returns true and fills *a, or returns false with *why set
 * to an owned message saying what is wrong ("not a .npy file: ...",
 * "truncated: ...", ...). */
bool npy_parse(const unsigned char *buf, size_t len, uint64_t total, struct npy_array *a,
	       const char *cmd, char **why);

/* "float32", "int64", "bool", "complex128", ... */
const char *npy_dtype_name(const struct npy_dtype *dt);

/* Appends "(3, 4)", "(5,)" or "()" to b. */
void npy_format_shape(const struct npy_array *a, struct buf *b);

/* Appends the dtype with its byte order when it matters: "float32",
 * "float32 big-endian". */
void npy_format_dtype(const struct npy_dtype *dt, struct buf *b);

/* True when a and b have the same number of dimensions and sizes. */
bool npy_same_shape(const struct npy_array *a, const struct npy_array *b);

/* True when the array's memory order is the same in C and Fortran layout
 * (at most one dimension longer than 1, or no elements). */
bool npy_layout_free(const struct npy_array *a);

/* The index of the element at position `flat` in memory order, written to
 * idx[0..ndim). */
void npy_unravel(const struct npy_array *a, uint64_t flat, uint64_t *idx);

/* The element at idx[0..ndim) converted to a double (integers above 2^53
 * round; complex: the real part). data is the array's first byte. */
double npy_get_double(const struct npy_array *a, const unsigned char *data, const uint64_t *idx);

/* The integer element at idx; false when the dtype is not bool or integer,
 * or the value does not fit an int64. */
bool npy_get_int(const struct npy_array *a, const unsigned char *data, const uint64_t *idx,
		 int64_t *out);

/* Converts IEEE half-precision bits to a float (exact). */
float npy_half_to_float(uint16_t h);

#endif
