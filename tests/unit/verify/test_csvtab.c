/* The CSV / TSV reader: RFC 4180 quoting (separators, line breaks and ""
 * inside quotes), LF / CRLF / CR line ends, a byte-order mark, blank lines
 * skipped, the line each row starts on; and each malformed table refused
 * with the line that is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "verify/csvtab.h"
#include "core/util.h"

static bool parse(const char *text, char sep, struct csvtab *t, char **why)
{
	size_t n = strlen(text);
	char *copy = xmalloc(n + 1);
	memcpy(copy, text, n);
	return csvtab_parse(copy, n, sep, t, why);
}

static void test_quoting_and_lines(void **state)
{
	(void)state;
	struct csvtab t;
	char *why = NULL;
	assert_true(parse("\xef\xbb\xbfid,text,x\r\n1,\"a, \"\"b\"\"\",2.5\r\n\r\n2,\"two\nlines\",\r\n3,,\"\"",
			  ',', &t, &why));
	assert_int_equal(t.ncols, 3);
	assert_int_equal(t.nrows, 3);
	assert_string_equal(csvtab_name(&t, 0), "id");
	assert_string_equal(csvtab_cell(&t, 0, 1), "a, \"b\"");
	assert_string_equal(csvtab_cell(&t, 1, 1), "two\nlines");
	assert_string_equal(csvtab_cell(&t, 1, 2), "");
	assert_string_equal(csvtab_cell(&t, 2, 1), "");
	assert_string_equal(csvtab_cell(&t, 2, 2), "");
	assert_int_equal(t.lines[0], 1);
	assert_int_equal(t.lines[1], 2);
	assert_int_equal(t.lines[2], 4); /* after a blank line */
	assert_int_equal(t.lines[3], 6); /* after a line break inside quotes */
	assert_int_equal(csvtab_column(&t, "x"), 2);
	assert_int_equal(csvtab_column(&t, "y"), -1);
	csvtab_free(&t);
	assert_true(parse("a\tb\rc\td\r", '\t', &t, &why));
	assert_int_equal(t.nrows, 1);
	assert_string_equal(csvtab_cell(&t, 0, 1), "d");
	csvtab_free(&t);
	assert_int_equal(csvtab_sep_for("x.tsv"), '\t');
	assert_int_equal(csvtab_sep_for("x.csv"), ',');
}

static void refused(const char *text, const char *needle)
{
	struct csvtab t;
	char *why = NULL;
	assert_false(parse(text, ',', &t, &why));
	assert_non_null(why);
	if (!strstr(why, needle))
		fail_msg("expected '%s' in: %s", needle, why);
	free(why);
}

static void test_malformed(void **state)
{
	(void)state;
	refused("a,b\n1,2\n3,4,5\n", "ragged rows: row 1 (line 3) has 3 fields, the header has 2");
	refused("a,b\n1\n", "row 0 (line 2) has 1 field,");
	refused("a,b\n\"1,2\n", "line 2: a quoted field is not closed");
	refused("a,b\n\"1\"x,2\n", "line 2: unexpected text after a closing quote");
	refused("a,a\n1,2\n", "names column 'a' twice");
	refused("", "empty file");
	refused("\n\n", "empty file");
	struct csvtab t;
	char *why = NULL;
	char *text = xmalloc(8);
	memcpy(text, "a,b\n1\0002", 7);
	assert_false(csvtab_parse(text, 7, ',', &t, &why));
	assert_non_null(strstr(why, "NUL byte"));
	free(why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting_and_lines),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
