/* workset: the working set fit answers for — .npy files (their headers
 * only: dtype and shape, never the data), a dtype and a shape, or a byte
 * count — and the parsing of sizes. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/npy.h"
#include "core/paths.h"
#include "core/util.h"
#include "fit.h"

bool fit_parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return false;
	while (*end == ' ')
		end++;
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{"", 1}, {"b", 1}, {"k", 1024.0}, {"kib", 1024.0}, {"kb", 1e3}, {"m", 1048576.0},
		{"mib", 1048576.0}, {"mb", 1e6}, {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
		{"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
	};
	char unit[8] = {0};
	size_t n = strlen(end);
	if (n >= sizeof unit)
		return false;
	for (size_t i = 0; i < n; i++)
		unit[i] = (char)tolower((unsigned char)end[i]);
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (strcmp(unit, units[i].suffix) == 0) {
			double b = v * units[i].mult;
			if (b >= 18446744073709551615.0 || b != b)
				return false;
			*out = (uint64_t)llround(b);
			return true;
		}
	return false;
}

char *fit_bytes_text(uint64_t b)
{
	return bytes_text(b);
}

/* numpy's dtype names and codes -> bytes per element; 0 when unknown. */
static unsigned dtype_size(const char *name, const char **canonical)
{
	static const struct {
		const char *names[4];
		unsigned size;
	} types[] = {
		{{"bool", "?", "b1"}, 1},
		{{"int8", "i1"}, 1},
		{{"uint8", "u1"}, 1},
		{{"int16", "i2"}, 2},
		{{"uint16", "u2"}, 2},
		{{"float16", "f2", "half"}, 2},
		{{"bfloat16"}, 2},
		{{"int32", "i4"}, 4},
		{{"uint32", "u4"}, 4},
		{{"float32", "f4", "single"}, 4},
		{{"int64", "i8", "int"}, 8},
		{{"uint64", "u8"}, 8},
		{{"float64", "f8", "double", "float"}, 8},
		{{"complex64", "c8"}, 8},
		{{"complex128", "c16", "complex"}, 16},
	};
	const char *n = name;
	if (*n == '<' || *n == '>' || *n == '=' || *n == '|')
		n++;
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		for (size_t k = 0; k < 4 && types[i].names[k]; k++)
			if (strcasecmp(n, types[i].names[k]) == 0) {
				*canonical = types[i].names[0];
				return types[i].size;
			}
	return 0;
}

/* "1000000,64", "(1000000, 64)", "1000000x64" -> dims; false when not a shape. */
static bool parse_shape(const char *s, uint64_t *dims, int *ndim)
{
	*ndim = 0;
	const char *p = s;
	while (*p == ' ')
		p++;
	char close = *p == '(' ? ')' : *p == '[' ? ']' : 0;
	if (close)
		p++;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == ')' || *p == ']' || !*p)
			break;
		if (!isdigit((unsigned char)*p) || *ndim == NPY_MAX_DIMS)
			return false;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno)
			return false;
		dims[(*ndim)++] = v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == ',' || *p == 'x' || *p == 'X')
			p++;
		else if (*p && *p != ')' && *p != ']')
			return false;
	}
	if (close) {
		if (*p != close)
			return false;
		p++;
	} else if (*p) {
		return false;
	}
	while (*p == ' ')
		p++;
	return *p == '\0';
}

static char *shape_text(const uint64_t *dims, int ndim)
{
	struct buf b = {0};
	buf_putc(&b, '(');
	for (int i = 0; i < ndim; i++)
		buf_printf(&b, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
	if (ndim == 1)
		buf_putc(&b, ',');
	buf_putc(&b, ')');
	return buf_steal(&b);
}

/* bytes = product of dims x size; false on overflow. row = all but the first. */
static bool array_bytes(const uint64_t *dims, int ndim, unsigned size, uint64_t *bytes, uint64_t *row)
{
	uint64_t total = size, r = size;
	for (int i = 0; i < ndim; i++) {
		if (dims[i] && total > UINT64_MAX / dims[i])
			return false;
		total *= dims[i];
		if (i > 0) {
			if (dims[i] && r > UINT64_MAX / dims[i])
				return false;
			r *= dims[i];
		}
	}
	*bytes = total;
	*row = ndim > 1 ? r : size;
	return true;
}

/* Adds an array (label, dtype and shape owned, taken) to the working set;
 * false with *why (owned) when the sizes would add up past 2^64 - 1. */
static bool add(struct fit_answer *a, char *label, char *dtype, char *shape, uint64_t bytes,
		uint64_t row, char **why)
{
	if (bytes > UINT64_MAX - a->in_bytes) {
		*why = xasprintf("%s: the working set adds up to more than 16 EiB", label);
		free(label);
		free(dtype);
		free(shape);
		return false;
	}
	a->arrays = xrealloc(a->arrays, (a->narrays + 1) * sizeof *a->arrays);
	a->arrays[a->narrays++] = (struct fit_array){label, dtype, shape, bytes, row};
	a->in_bytes += bytes;
	return true;
}

/* Adds the array whose header is in the .npy file path; false with *why
 * (owned) when it cannot be read or is not a .npy file. Only a regular
 * file is opened: the header is checked against the file's size, which a
 * device (/dev/zero), a FIFO or a socket does not have. */
static bool add_npy(struct fit_answer *a, const char *path, char **why)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		*why = xasprintf("cannot read '%s': %s", path, strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*why = xasprintf("cannot read '%s': is a directory", path);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = xasprintf("cannot read '%s': %s, not a .npy file (fit reads the header of a "
				 "regular .npy file)", path, path_kind_name(st.st_mode));
		return false;
	}
	int fd = open_read(path, FIFO_WAIT_S);
	if (fd < 0) {
		*why = xasprintf("cannot read '%s': %s", path, open_read_error(errno));
		return false;
	}
	unsigned char *head = xmalloc(NPY_HEADER_WINDOW);
	ssize_t got = -1;
	if (fstat(fd, &st) != 0) {
		*why = xasprintf("cannot read '%s': %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) { /* replaced since the stat above */
		*why = xasprintf("cannot read '%s': %s, not a .npy file", path, path_kind_name(st.st_mode));
	} else {
		got = pread(fd, head, NPY_HEADER_WINDOW, 0);
		if (got < 0)
			*why = xasprintf("cannot read '%s': %s", path, strerror(errno));
	}
	close(fd);
	if (got < 0) {
		free(head);
		return false;
	}
	struct npy_array arr;
	char *err = NULL;
	bool ok = npy_parse(head, (size_t)got, (uint64_t)st.st_size, &arr, "fit", &err);
	free(head);
	if (!ok) {
		*why = xasprintf("cannot read '%s': %s", path, err);
		free(err);
		return false;
	}
	char *shape = shape_text(arr.shape, arr.ndim);
	uint64_t bytes = arr.nbytes, row = 0;
	if (!array_bytes(arr.shape, arr.ndim, arr.dtype.size, &bytes, &row))
		row = 0;
	if (arr.fortran && arr.ndim > 1) /* the last axis varies slowest: no whole rows to chunk */
		row = 0;
	return add(a, xstrdup(path), xstrdup(npy_dtype_name(&arr.dtype)), shape, bytes, row, why);
}

/* One --dtype T --shape S array into a; false with *why (owned) when
 * either is not understood. */
static bool add_pair(struct fit_answer *a, const char *dtype, const char *shape_arg, char **why)
{
	const char *canonical = NULL;
	unsigned size = dtype_size(dtype, &canonical);
	if (!size) {
		*why = xasprintf("--dtype: '%s' is not a numeric dtype gpuopt knows (float32, float64, "
				 "int64, complex64, bool, ...)", dtype);
		return false;
	}
	uint64_t dims[NPY_MAX_DIMS];
	int ndim;
	uint64_t bytes, row;
	if (!parse_shape(shape_arg, dims, &ndim) || !array_bytes(dims, ndim, size, &bytes, &row)) {
		*why = xasprintf("--shape: '%s' is not a shape such as 1000000,64", shape_arg);
		return false;
	}
	char *shape = shape_text(dims, ndim);
	return add(a, xasprintf("%s %s", canonical, shape), xstrdup(canonical), shape, bytes, row, why);
}

bool fit_working_set(const struct fit_settings *s, struct fit_answer *a, char **why)
{
	*why = NULL;
	for (size_t i = 0; i < s->nfiles; i++)
		if (!add_npy(a, s->files[i], why))
			return false;
	if (s->ndtypes != s->nshapes) {
		*why = s->nshapes == 0 ? xstrdup("--dtype needs --shape")
		       : s->ndtypes == 0 ? xstrdup("--shape needs --dtype")
					 : xasprintf("--dtype is given %zu times and --shape %zu times: each "
						     "array is one --dtype with one --shape", s->ndtypes, s->nshapes);
		return false;
	}
	for (size_t i = 0; i < s->ndtypes; i++)
		if (!add_pair(a, s->dtypes[i], s->shapes[i], why))
			return false;
	if (s->bytes && !add(a, xstrdup("--bytes"), NULL, NULL, s->bytes, 0, why))
		return false;
	a->have = a->narrays > 0;
	return true;
}
