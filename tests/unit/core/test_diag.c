/* diag: text made safe for a terminal — what is kept (printable ASCII,
 * newlines, tabs, valid UTF-8) and what is escaped (C0 and C1 controls,
 * DEL, bytes that are not UTF-8), byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/diag.h"

static void safe(const char *in, size_t n, const char *want)
{
	struct buf b = {0};
	term_safe_append(&b, in, n);
	assert_string_equal(b.data, want);
	assert_int_equal(b.len, strlen(want));
	buf_free(&b);
}

#define SAFE(lit, want) safe(lit, sizeof lit - 1, want)

static void test_kept(void **state)
{
	(void)state;
	SAFE("", "");
	SAFE("plain text: a/b.py 1.5e3 ~!@#$%^&*()[]{}\\", "plain text: a/b.py 1.5e3 ~!@#$%^&*()[]{}\\");
	SAFE("two\nlines\twith a tab", "two\nlines\twith a tab");
	SAFE("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80 \xc2\xa0", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80 \xc2\xa0");
}

static void test_escaped(void **state)
{
	(void)state;
	SAFE("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07");
	SAFE("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred");
	SAFE("over\rwrite", "over\\x0dwrite");
	SAFE("nul\0inside", "nul\\x00inside");
	SAFE("del\x7f", "del\\x7f");
	SAFE("\b\f\v", "\\x08\\x0c\\x0b");
	/* C1 controls in UTF-8 (U+009B is CSI) and as single bytes */
	SAFE("\xc2\x9b" "2J \xc2\x85", "\\xc2\\x9b2J \\xc2\\x85");
	SAFE("\x9b" "2J", "\\x9b2J");
	/* not UTF-8: overlong, surrogate, past U+10FFFF, cut short, a stray continuation byte */
	SAFE("\xc0\xaf", "\\xc0\\xaf");
	SAFE("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	SAFE("\xed\xa0\x80", "\\xed\\xa0\\x80");
	SAFE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	SAFE("end\xe6\x97", "end\\xe6\\x97");
	SAFE("\x80x", "\\x80x");
	SAFE("\xff", "\\xff");
}

static void test_helpers(void **state)
{
	(void)state;
	char *t = term_safe("a\x1b" "b");
	assert_string_equal(t, "a\\x1bb");
	free(t);
	t = term_safe(NULL);
	assert_string_equal(t, "");
	free(t);
	t = term_safe_take(strdup("x\x07"));
	assert_string_equal(t, "x\\x07");
	free(t);
	t = term_safe_take(NULL);
	assert_string_equal(t, "");
	free(t);
	/* appended to what a buffer holds */
	struct buf b = {0};
	buf_puts(&b, "gpuopt: ");
	term_safe_append(&b, "\x1b", 1);
	assert_string_equal(b.data, "gpuopt: \\x1b");
	buf_free(&b);
	/* a stream for a renderer */
	char *text = NULL;
	size_t len = 0;
	FILE *to = open_memstream(&text, &len);
	struct term_safe_stream ts;
	fprintf(term_safe_open(&ts), "name %s\n", "\x1b]0;t\x07");
	term_safe_close(&ts, to);
	fclose(to);
	assert_string_equal(text, "name \\x1b]0;t\\x07\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
