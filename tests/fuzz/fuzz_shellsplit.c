/* fuzz_shellsplit: any bytes as a command line (up to the first NUL) —
 * shell_split must neither crash nor leak; what it splits, joined back with
 * shell_join, must split to the same words; and any bytes quoted as one word
 * must split back to exactly that word. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/shellsplit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_same(char **a, char **b)
{
	size_t i = 0;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			abort();
	if (a[i] || b[i])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	memcpy(line, data, size);
	line[size] = '\0';

	char *why = NULL;
	size_t n = 0;
	char **words = shell_split(line, &n, &why);
	if (words) {
		if (why || n == 0 || words[n] != NULL)
			abort();
		struct buf joined = {0};
		shell_join(&joined, words);
		char *why2 = NULL;
		char **again = shell_split(joined.data, NULL, &why2);
		if (!again)
			abort(); /* quoting produced something the splitter refuses */
		check_same(words, again);
		shell_words_free(again);
		buf_free(&joined);
		shell_words_free(words);
	} else {
		if (!why || !*why)
			abort();
		free(why);
	}

	/* the whole input as one word */
	struct buf quoted = {0};
	shell_quote(&quoted, line, 1);
	char *why3 = NULL;
	char **one = shell_split(quoted.data, &n, &why3);
	if (!one || n != 1 || strcmp(one[0], line) != 0)
		abort();
	shell_words_free(one);
	buf_free(&quoted);
	free(line);
	return 0;
}
