/* The .npy header parser: every format version, dtype, byte order and
 * layout numpy writes is read right; each kind of bad header is refused
 * with a message that says what is wrong; indices unravel in C and Fortran
 * order; half floats convert exactly. Files are built here byte by byte, as
 * numpy lays them out (e2e/test_verify.py reads files numpy itself wrote). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/npy.h"

/* A .npy file: preamble for `major`, the dict padded to 64 bytes with a
 * final newline, then data_len zero bytes. Returns the length. */
static size_t make(unsigned char *out, int major, const char *dict, size_t data_len)
{
	size_t pre = major == 1 ? 10 : 12, dlen = strlen(dict);
	size_t hlen = dlen + 1;
	hlen += (64 - (pre + hlen) % 64) % 64;
	memcpy(out, "\x93NUMPY", 6);
	out[6] = (unsigned char)major;
	out[7] = 0;
	out[8] = (unsigned char)(hlen & 0xff);
	out[9] = (unsigned char)(hlen >> 8);
	if (major > 1) {
		out[10] = (unsigned char)(hlen >> 16);
		out[11] = (unsigned char)(hlen >> 24);
	}
	memcpy(out + pre, dict, dlen);
	memset(out + pre + dlen, ' ', hlen - dlen - 1);
	out[pre + hlen - 1] = '\n';
	memset(out + pre + hlen, 0, data_len);
	return pre + hlen + data_len;
}

static unsigned char file[1 << 16];

static void parses(const char *dict, int major, size_t data_len, struct npy_array *a)
{
	size_t n = make(file, major, dict, data_len);
	char *why = NULL;
	bool ok = npy_parse(file, n, n, a, "verify", &why);
	if (!ok)
		fail_msg("%s: %s", dict, why);
	assert_null(why);
	assert_int_equal(a->offset % 64, 0);
	assert_int_equal(a->nbytes, data_len);
}

static void refused(const unsigned char *buf, size_t n, const char *needle)
{
	struct npy_array a;
	char *why = NULL;
	assert_false(npy_parse(buf, n, n, &a, "verify", &why));
	assert_non_null(why);
	if (!strstr(why, needle))
		fail_msg("expected '%s' in: %s", needle, why);
	free(why);
}

static void refused_dict(const char *dict, size_t data_len, const char *needle)
{
	size_t n = make(file, 1, dict, data_len);
	refused(file, n, needle);
}

static void test_versions_and_layouts(void **state)
{
	(void)state;
	struct npy_array a;
	parses("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 1, 48, &a);
	assert_int_equal(a.major, 1);
	assert_int_equal(a.ndim, 2);
	assert_int_equal(a.shape[0], 3);
	assert_int_equal(a.shape[1], 4);
	assert_int_equal(a.count, 12);
	assert_false(a.fortran);
	assert_int_equal(a.dtype.kind, 'f');
	assert_int_equal(a.dtype.size, 4);
	assert_false(a.dtype.swap);
	parses("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3, 5), }", 2, 240, &a);
	assert_int_equal(a.major, 2);
	assert_true(a.fortran);
	assert_true(a.dtype.swap);
	assert_int_equal(a.dtype.order, '>');
	assert_int_equal(a.count, 30);
	parses("{'descr': '<c16', 'fortran_order': False, 'shape': (5,), }", 3, 80, &a);
	assert_int_equal(a.major, 3);
	assert_int_equal(a.dtype.kind, 'c');
	assert_int_equal(a.ndim, 1);
	/* 0-d: one element; an empty dimension: none */
	parses("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 1, 8, &a);
	assert_int_equal(a.ndim, 0);
	assert_int_equal(a.count, 1);
	parses("{'descr': '<i8', 'fortran_order': False, 'shape': (4, 0), }", 1, 0, &a);
	assert_int_equal(a.count, 0);
	assert_true(npy_layout_free(&a));
	/* keys in any order, double quotes, Python 2 longs, no trailing comma, newlines */
	parses("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"|u1\"}", 1, 6, &a);
	assert_int_equal(a.dtype.kind, 'u');
	assert_int_equal(a.dtype.order, '|');
	parses("{'descr':'<f2',\n 'fortran_order':False,\n 'shape':(\n7,\n)}", 1, 14, &a);
	assert_int_equal(a.shape[0], 7);
}

static void test_every_dtype(void **state)
{
	(void)state;
	static const struct {
		const char *descr, *name;
		unsigned size;
		bool swap;
	} cases[] = {
		{"|b1", "bool", 1, false},    {"|i1", "int8", 1, false},
		{"<i2", "int16", 2, false},   {">i4", "int32", 4, true},
		{"<i8", "int64", 8, false},   {"|u1", "uint8", 1, false},
		{">u2", "uint16", 2, true},   {"<u4", "uint32", 4, false},
		{">u8", "uint64", 8, true},   {"<f2", "float16", 2, false},
		{">f4", "float32", 4, true},  {"<f8", "float64", 8, false},
		{">c8", "complex64", 8, true}, {"<c16", "complex128", 16, false},
		{"=f8", "float64", 8, false}, {"f4", "float32", 4, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char dict[128];
		snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
			 cases[i].descr);
		struct npy_array a;
		parses(dict, 1, 3 * cases[i].size, &a);
		assert_string_equal(npy_dtype_name(&a.dtype), cases[i].name);
		assert_int_equal(a.dtype.size, cases[i].size);
		assert_int_equal(a.dtype.swap, cases[i].swap);
	}
}

static void test_bad_files(void **state)
{
	(void)state;
	refused((const unsigned char *)"", 0, "empty file");
	refused((const unsigned char *)"PK\x03\x04 this is a zip", 20, "not a .npy header");
	refused((const unsigned char *)"\x93NUMPY\x01", 7, "truncated");
	size_t n = make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12);
	file[6] = 4;
	refused(file, n, "version 4.0");
	file[6] = 1;
	/* the file ends inside the header */
	refused(file, 40, "ends inside");
	/* a header that says it is longer than numpy accepts */
	n = make(file, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12);
	file[8] = 0x20;
	file[9] = 0x4e; /* 20000 */
	file[10] = file[11] = 0;
	refused(file, n, "longer than 10000 bytes");
	/* data shorter and longer than the header says */
	n = make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 40);
	refused(file, n, "truncated: the header says (3, 4) float32, 48 bytes of data, but the file has 40");
	n = make(file, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 16);
	refused(file, n, "does not describe the data");
}

static void test_bad_headers(void **state)
{
	(void)state;
	refused_dict("[1, 2, 3]", 0, "does not start with '{'");
	refused_dict("{'descr': '<f4', 'fortran_order': False}", 0, "lacks 'shape'");
	refused_dict("{'descr': '<f4', 'shape': (1,)}", 4, "lacks 'fortran_order'");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
		     "unexpected key 'x'");
	refused_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
		     "'descr' appears twice");
	refused_dict("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8, "pickle");
	refused_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4,
		     "structured");
	refused_dict("{'descr': '<U5', 'fortran_order': False, 'shape': (1,)}", 20, "'<U5' is not supported");
	refused_dict("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,)}", 8, "not supported");
	refused_dict("{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}", 16, "not supported");
	refused_dict("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", 4, "True or False");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (5)}", 20, "not a tuple");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, "non-negative");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4, "not a tuple");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, "after the closing");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, "expected");
	refused_dict("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 4, "'<f4, ' is not supported");
	refused_dict("{'descr': '<f4', 'fortran_order': False, "
		     "'shape': (4294967296, 4294967296, 4294967296)}", 4, "too large");
	refused_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", 4,
		     "too large");
}

static void test_unravel(void **state)
{
	(void)state;
	struct npy_array a;
	parses("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 1, 96, &a);
	uint64_t idx[3];
	npy_unravel(&a, 23, idx);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 3);
	npy_unravel(&a, 5, idx);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_int_equal(idx[2], 1);
	a.fortran = true;
	npy_unravel(&a, 5, idx); /* 5 = 1 + 2*2 */
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 0);
	struct buf b = {0};
	npy_format_shape(&a, &b);
	assert_string_equal(b.data, "(2, 3, 4)");
	buf_free(&b);
}

static void test_element_access(void **state)
{
	(void)state;
	struct npy_array a;
	size_t n = make(file, 1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }", 8);
	char *why = NULL;
	assert_true(npy_parse(file, n, n, &a, "verify", &why));
	unsigned char *d = file + a.offset; /* column-major: [0,0] [1,0] [0,1] [1,1] */
	const unsigned char be[8] = {0x00, 0x01, 0xff, 0xfe, 0x01, 0x00, 0x7f, 0xff};
	memcpy(d, be, 8);
	uint64_t idx[2] = {1, 0};
	int64_t v;
	assert_true(npy_get_int(&a, d, idx, &v));
	assert_int_equal(v, -2);
	idx[0] = 0;
	idx[1] = 1;
	assert_true(npy_get_int(&a, d, idx, &v));
	assert_int_equal(v, 256);
	idx[0] = 1;
	assert_true(npy_get_double(&a, d, idx) == 32767.0);
}

static void test_half(void **state)
{
	(void)state;
	assert_true(npy_half_to_float(0x3c00) == 1.0f);
	assert_true(npy_half_to_float(0xc000) == -2.0f);
	assert_true(npy_half_to_float(0x7bff) == 65504.0f);
	assert_true(npy_half_to_float(0x0001) == 5.960464477539063e-08f); /* smallest subnormal */
	assert_true(npy_half_to_float(0x03ff) == 6.097555160522461e-05f); /* largest subnormal */
	assert_true(npy_half_to_float(0x7c00) > 3e38f);
	assert_true(npy_half_to_float(0xfc00) < -3e38f);
	float nan = npy_half_to_float(0x7e00);
	assert_true(nan != nan);
	float nz = npy_half_to_float(0x8000);
	assert_true(nz == 0.0f);
	uint32_t bits;
	memcpy(&bits, &nz, 4);
	assert_int_equal(bits, 0x80000000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions_and_layouts),
		cmocka_unit_test(test_every_dtype),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_unravel),
		cmocka_unit_test(test_element_access),
		cmocka_unit_test(test_half),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
