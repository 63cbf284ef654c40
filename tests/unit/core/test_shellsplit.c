/* shellsplit: command lines split the way sh splits a simple command;
 * everything sh would do beyond splitting is refused with a message that
 * names it; shell_quote() output splits back to the same word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/shellsplit.h"

struct ok_case {
	const char *line;
	const char *words[6]; /* NULL-terminated */
};

static const struct ok_case ok_cases[] = {
	{"true", {"true"}},
	{"a b  c", {"a", "b", "c"}},
	{"  lead\ttab\nnewline  ", {"lead", "tab", "newline"}},
	{"'single quoted' x", {"single quoted", "x"}},
	{"\"double quoted\" x", {"double quoted", "x"}},
	{"python3 -c 'print(\"hi\")'", {"python3", "-c", "print(\"hi\")"}},
	{"python3 -c \"import sys; sys.exit(3)\"", {"python3", "-c", "import sys; sys.exit(3)"}},
	{"a\\ b", {"a b"}},
	{"''", {""}},
	{"a '' b", {"a", "", "b"}},
	{"x\"y\"'z'", {"xyz"}},
	{"line\\\ncont", {"linecont"}},
	{"\"a\\$b\" \"c\\\\d\" \"e\\\"f\" \"g\\nh\"", {"a$b", "c\\d", "e\"f", "g\\nh"}},
	{"'$HOME' '*.py' '~' '#' 'a|b'", {"$HOME", "*.py", "~", "#", "a|b"}},
	{"\\$HOME \\* \\~ \\# \\|", {"$HOME", "*", "~", "#", "|"}},
	{"env A=1 cmd", {"env", "A=1", "cmd"}},
	{"--n=5 x", {"--n=5", "x"}},
	{"'A'=1 x", {"A=1", "x"}},
	{"a#b x~ y]", {"a#b", "x~", "y]"}},
	{"sleep 0.020", {"sleep", "0.020"}},
	{"'it'\\''s'", {"it's"}},
	{"caf\xc3\xa9 \xe2\x86\x92", {"caf\xc3\xa9", "\xe2\x86\x92"}},
};

static void test_splits(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ok_cases / sizeof *ok_cases; i++) {
		const struct ok_case *c = &ok_cases[i];
		char *why = NULL;
		size_t n = 99;
		char **w = shell_split(c->line, &n, &why);
		if (!w)
			fail_msg("'%s' did not split: %s", c->line, why);
		size_t expect = 0;
		while (c->words[expect])
			expect++;
		assert_int_equal(n, expect);
		for (size_t k = 0; k < expect; k++)
			assert_string_equal(w[k], c->words[k]);
		assert_null(w[expect]);
		assert_null(why);
		shell_words_free(w);
	}
}

struct bad_case {
	const char *line;
	const char *message; /* a part of the message */
};

static const struct bad_case bad_cases[] = {
	{"", "empty command"},
	{"   \t\n ", "empty command"},
	{"echo 'abc", "single quote at column 6 is never closed"},
	{"echo \"abc", "double quote at column 6 is never closed"},
	{"abc\\", "backslash at column 4 escapes nothing"},
	{"ls | wc", "'|' at column 4 is shell syntax (a pipe)"},
	{"a > f", "'>' at column 3 is shell syntax (a redirection)"},
	{"a < f", "a redirection"},
	{"a; b", "a command list"},
	{"a && b", "&&"},
	{"sleep 1 &", "background"},
	{"(a)", "a subshell"},
	{"echo $HOME", "'$' at column 6 is shell syntax (a variable or command substitution)"},
	{"echo \"$HOME\"", "also inside double quotes"},
	{"echo `date`", "a command substitution"},
	{"echo \"`date`\"", "also inside double quotes"},
	{"ls *.py", "a glob pattern"},
	{"ls a?", "a glob pattern"},
	{"ls [ab]", "a glob pattern"},
	{"~/venv/bin/python x.py", "the home directory"},
	{"echo # comment", "a comment"},
	{"FOO=1 cmd", "'=' at column 4 makes the first word a variable assignment"},
	{"_X9=a b", "assignment"},
};

static void test_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
		const struct bad_case *c = &bad_cases[i];
		char *why = NULL;
		size_t n = 99;
		char **w = shell_split(c->line, &n, &why);
		if (w)
			fail_msg("'%s' split but should not", c->line);
		assert_non_null(why);
		if (!strstr(why, c->message))
			fail_msg("'%s': message '%s' lacks '%s'", c->line, why, c->message);
		assert_int_equal(n, 99); /* untouched on failure */
		free(why);
	}
}

/* Quoted as the first word, or as an argument after "cmd", word splits back. */
static void roundtrip(const char *word, int first)
{
	struct buf b = {0};
	if (!first)
		buf_puts(&b, "cmd ");
	shell_quote(&b, word, first);
	char *why = NULL;
	size_t n = 0;
	char **w = shell_split(b.data, &n, &why);
	if (!w)
		fail_msg("quoted '%s' as <%s> does not split: %s", word, b.data, why);
	assert_int_equal(n, first ? 1 : 2);
	assert_string_equal(w[first ? 0 : 1], word);
	shell_words_free(w);
	buf_free(&b);
}

static void test_quote_roundtrip(void **state)
{
	(void)state;
	const char *words[] = {"plain", "", "two words", "it's", "$HOME", "a|b", "*", "~", "#x",
			       "FOO=1", "--n=5", "\\", "\"", "tab\there", "new\nline", "caf\xc3\xa9", "'",
			       "''", "a'b'c"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		roundtrip(words[i], 0);
		roundtrip(words[i], 1);
	}
	/* plain words stay plain */
	struct buf b = {0};
	shell_quote(&b, "sleep", 1);
	buf_putc(&b, ' ');
	shell_quote(&b, "--n=5", 0);
	buf_putc(&b, ' ');
	shell_quote(&b, "FOO=1", 1);
	assert_string_equal(b.data, "sleep --n=5 'FOO=1'");
	buf_free(&b);
}

static void test_join(void **state)
{
	(void)state;
	char *argv[] = {"python3", "-c", "print('hi there')", "", NULL};
	struct buf b = {0};
	shell_join(&b, argv);
	assert_string_equal(b.data, "python3 -c 'print('\\''hi there'\\'')' ''");
	char *why = NULL;
	size_t n = 0;
	char **w = shell_split(b.data, &n, &why);
	assert_non_null(w);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(w[i], argv[i]);
	shell_words_free(w);
	buf_free(&b);
	shell_words_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splits),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_quote_roundtrip),
		cmocka_unit_test(test_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
