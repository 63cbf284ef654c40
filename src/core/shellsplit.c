/* shellsplit: see shellsplit.h. The quoting rules are those of POSIX
 * (XCU 2.2): a backslash outside quotes keeps the next character (and
 * removes a newline); single quotes keep everything up to the next single
 * quote; inside double quotes a backslash quotes only $ ` " \ and newline. */
#include "shellsplit.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* What a shell would do with an unquoted c; NULL when it is plain text. */
static const char *unquoted_meaning(char c, bool word_started)
{
	switch (c) {
	case '|': return "a pipe";
	case '&': return "a background job or && list";
	case ';': return "a command list";
	case '<':
	case '>': return "a redirection";
	case '(':
	case ')': return "a subshell";
	case '$': return "a variable or command substitution";
	case '`': return "a command substitution";
	case '*':
	case '?':
	case '[': return "a glob pattern";
	case '~': return word_started ? NULL : "the home directory";
	case '#': return word_started ? NULL : "a comment";
	default: return NULL;
	}
}

struct splitter {
	const char *line;
	struct ptrvec words;
	struct buf word;
	bool started;   /* a word is open (possibly empty, as in '') */
	bool quoted;    /* some part of the open word was quoted */
	char *why;
};

static void push_word(struct splitter *s)
{
	if (!s->started)
		return;
	ptrvec_push(&s->words, buf_steal(&s->word));
	s->started = s->quoted = false;
}

/* True when the open word is the first one and, unquoted so far, reads as
 * NAME (so that the '=' about to be added makes NAME=value). */
static bool looks_like_assignment(const struct splitter *s)
{
	if (s->words.len != 0 || s->quoted || s->word.len == 0 || !is_name_start(s->word.data[0]))
		return false;
	for (size_t i = 1; i < s->word.len; i++)
		if (!is_name_char(s->word.data[i]))
			return false;
	return true;
}

static bool split(struct splitter *s)
{
	const char *p = s->line;
	size_t i = 0;
	while (p[i]) {
		char c = p[i];
		if (is_blank(c)) {
			push_word(s);
			i++;
			continue;
		}
		if (c == '\\') {
			if (p[i + 1] == '\0') {
				s->why = xasprintf("the backslash at column %zu escapes nothing", i + 1);
				return false;
			}
			if (p[i + 1] != '\n') {
				buf_putc(&s->word, p[i + 1]);
				s->started = s->quoted = true;
			}
			i += 2;
			continue;
		}
		if (c == '\'') {
			const char *end = strchr(p + i + 1, '\'');
			if (!end) {
				s->why = xasprintf("the single quote at column %zu is never closed", i + 1);
				return false;
			}
			buf_append(&s->word, p + i + 1, (size_t)(end - (p + i + 1)));
			s->started = s->quoted = true;
			i = (size_t)(end - p) + 1;
			continue;
		}
		if (c == '"') {
			size_t open = i++;
			s->started = s->quoted = true;
			for (;;) {
				char d = p[i];
				if (d == '\0') {
					s->why = xasprintf("the double quote at column %zu is never closed", open + 1);
					return false;
				}
				if (d == '"') {
					i++;
					break;
				}
				if (d == '\\' && p[i + 1] && strchr("$`\"\\\n", p[i + 1])) {
					if (p[i + 1] != '\n')
						buf_putc(&s->word, p[i + 1]);
					i += 2;
					continue;
				}
				if (d == '$' || d == '`') {
					s->why = xasprintf("'%c' at column %zu is shell syntax (%s, also inside double quotes)",
							   d, i + 1, d == '$' ? "a variable or command substitution"
									      : "a command substitution");
					return false;
				}
				buf_putc(&s->word, d);
				i++;
			}
			continue;
		}
		const char *meaning = unquoted_meaning(c, s->started);
		if (meaning) {
			s->why = xasprintf("'%c' at column %zu is shell syntax (%s)", c, i + 1, meaning);
			return false;
		}
		if (c == '=' && looks_like_assignment(s)) {
			s->why = xasprintf("'=' at column %zu makes the first word a variable assignment "
					   "in a shell", i + 1);
			return false;
		}
		buf_putc(&s->word, c);
		s->started = true;
		i++;
	}
	push_word(s);
	if (s->words.len == 0) {
		s->why = xstrdup("empty command");
		return false;
	}
	return true;
}

char **shell_split(const char *line, size_t *count, char **why)
{
	struct splitter s = {.line = line};
	*why = NULL;
	if (!split(&s)) {
		for (size_t i = 0; i < s.words.len; i++)
			free(s.words.items[i]);
		ptrvec_free(&s.words);
		buf_free(&s.word);
		*why = s.why;
		return NULL;
	}
	buf_free(&s.word);
	if (count)
		*count = s.words.len;
	ptrvec_push(&s.words, NULL);
	return (char **)s.words.items;
}

void shell_words_free(char **words)
{
	if (!words)
		return;
	for (size_t i = 0; words[i]; i++)
		free(words[i]);
	free(words);
}

static bool is_safe(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_@%+=:,./-", c));
}

void shell_quote(struct buf *out, const char *word, int first)
{
	bool plain = *word != '\0';
	for (const char *q = word; *q && plain; q++)
		plain = is_safe((unsigned char)*q);
	if (plain && first) {
		/* NAME=value as a first word would be an assignment. */
		const char *eq = strchr(word, '=');
		if (eq && is_name_start(word[0])) {
			bool name = true;
			for (const char *q = word + 1; q < eq; q++)
				name &= is_name_char(*q);
			plain = !name;
		}
	}
	if (plain) {
		buf_puts(out, word);
		return;
	}
	buf_putc(out, '\'');
	for (const char *q = word; *q; q++) {
		if (*q == '\'')
			buf_puts(out, "'\\''");
		else
			buf_putc(out, *q);
	}
	buf_putc(out, '\'');
}

void shell_join(struct buf *out, char *const *words)
{
	for (size_t i = 0; words[i]; i++) {
		if (i)
			buf_putc(out, ' ');
		shell_quote(out, words[i], i == 0);
	}
}
