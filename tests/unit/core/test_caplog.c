/* caplog: the kept text against the whole output cut by hand, for many
 * limits and write sizes (the tail ring wraps at every offset); the lines
 * a watcher sees against the output's own lines, dropped ones included;
 * a file kept through a descriptor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/caplog.h"
#include "core/fileio.h"

/* What caplog should keep of text[0..n) within limit. Owned. */
static char *expected(const char *text, size_t n, size_t limit)
{
	size_t head = limit / 2, tail = limit - head;
	if (n <= limit) { /* not strndup: text has no NUL (ASan's strict_string_checks reads to one) */
		char *all = malloc(n + 1);
		memcpy(all, text, n);
		all[n] = '\0';
		return all;
	}
	size_t dropped = n - head - tail;
	char note[256];
	snprintf(note, sizeof note,
		 "%s[gpuopt: %zu bytes of output dropped here: only the first %zu and the last %zu bytes are kept]\n",
		 head && text[head - 1] != '\n' ? "\n" : "", dropped, head, tail);
	struct buf b = {0};
	buf_append(&b, text, head);
	buf_puts(&b, note);
	buf_append(&b, text + n - tail, tail);
	return buf_steal(&b);
}

static void test_head_and_tail_at_every_wrap(void **state)
{
	(void)state;
	char text[5000];
	for (size_t i = 0; i < sizeof text; i++)
		text[i] = i % 37 == 36 ? '\n' : (char)('a' + i % 26);
	const size_t limits[] = {0, 1, 2, 7, 64, 100, 999, 4999, 5000, 6000};
	const size_t steps[] = {1, 3, 50, 64, 101, 5000};
	for (size_t li = 0; li < sizeof limits / sizeof *limits; li++)
		for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
			struct caplog c;
			caplog_init(&c, -1, limits[li], NULL, NULL);
			for (size_t off = 0; off < sizeof text; off += steps[si]) {
				size_t k = sizeof text - off < steps[si] ? sizeof text - off : steps[si];
				caplog_write(&c, text + off, k);
			}
			assert_true(caplog_finish(&c));
			char *want = expected(text, sizeof text, limits[li]);
			assert_string_equal(caplog_text(&c), want);
			size_t keep = limits[li] < sizeof text ? limits[li] : sizeof text;
			assert_int_equal(caplog_dropped(&c), sizeof text - keep);
			free(want);
			caplog_free(&c);
		}
}

struct seen {
	struct buf all; /* every line, each with a '\n' put back */
	size_t n;
};

static void on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;
	assert_int_equal(strlen(line), len);
	assert_true(len <= CAPLOG_LINE_MAX);
	buf_append(&s->all, line, len);
	buf_putc(&s->all, '\n');
	s->n++;
}

static void test_lines_dropped_ones_too(void **state)
{
	(void)state;
	struct buf text = {0};
	for (int i = 0; i < 20000; i++)
		buf_printf(&text, "line %d\n", i);
	buf_puts(&text, "\n\nlast without a break");
	struct seen s = {0};
	struct caplog c;
	caplog_init(&c, -1, 100, on_line, &s);
	for (size_t off = 0; off < text.len; off += 777)
		caplog_write(&c, text.data + off, text.len - off < 777 ? text.len - off : 777);
	caplog_finish(&c);
	assert_int_equal(s.n, 20003);
	buf_putc(&text, '\n');
	assert_string_equal(s.all.data, text.data);
	assert_true(caplog_dropped(&c) > 0);
	caplog_free(&c);
	buf_free(&s.all);
	/* a line longer than the most a watcher is given comes in pieces */
	struct seen p = {0};
	caplog_init(&c, -1, 10, on_line, &p);
	char *big = malloc(CAPLOG_LINE_MAX * 2 + 11);
	memset(big, 'y', CAPLOG_LINE_MAX * 2 + 10);
	big[CAPLOG_LINE_MAX * 2 + 10] = '\n';
	caplog_write(&c, big, CAPLOG_LINE_MAX * 2 + 11);
	caplog_finish(&c);
	assert_int_equal(p.n, 3);
	free(big);
	caplog_free(&c);
	buf_free(&p.all);
	buf_free(&text);
}

static void test_kept_in_a_file(void **state)
{
	(void)state;
	int fd = temp_fd();
	assert_true(fd >= 0);
	struct caplog c;
	caplog_init(&c, fd, 20, NULL, NULL);
	const char *text = "0123456789\nabcdefghij\nABCDEFGHIJ\n";
	caplog_write(&c, text, strlen(text));
	assert_true(caplog_finish(&c));
	char *got = temp_fd_text(fd, 1 << 20);
	char *want = expected(text, strlen(text), 20);
	assert_string_equal(got, want);
	assert_int_equal(caplog_dropped(&c), strlen(text) - 20);
	free(got);
	free(want);
	caplog_free(&c);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_and_tail_at_every_wrap),
		cmocka_unit_test(test_lines_dropped_ones_too),
		cmocka_unit_test(test_kept_in_a_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
