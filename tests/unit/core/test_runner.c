/* runner: real processes — exit status, signals, a program that is not
 * there, the timeout (which also kills what the command started), the
 * standard streams, rusage of that run alone, the PATH lookup, and a watched
 * run: a descriptor read while the command runs, and a deadline that the
 * reading moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/caplog.h"
#include "core/runner.h"

static struct runner_stdio quiet(void)
{
	int in = runner_open_in("/dev/null", 0), out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(in >= 0 && out >= 0);
	struct runner_stdio io = {in, out, out};
	return io;
}

static void close_io(struct runner_stdio *io)
{
	close(io->in);
	close(io->out);
}

static void test_exit_status(void **state)
{
	(void)state;
	struct runner_stdio io = quiet();
	struct run_result r;
	char *t[] = {"true", NULL};
	assert_true(runner_run(t, &io, 0, &r));
	assert_true(run_ok(&r));
	assert_int_equal(r.exit_code, 0);
	assert_true(r.wall_s > 0 && r.wall_s < 5);
	assert_true(r.peak_rss_kib > 0);
	char *f[] = {"sh", "-c", "exit 7", NULL};
	assert_true(runner_run(f, &io, 0, &r));
	assert_false(run_ok(&r));
	assert_int_equal(r.exit_code, 7);
	char *d = run_describe(&r, 0);
	assert_string_equal(d, "exited with status 7");
	free(d);
	char *k[] = {"sh", "-c", "kill -9 $$", NULL};
	assert_true(runner_run(k, &io, 0, &r));
	assert_int_equal(r.signal, SIGKILL);
	assert_int_equal(r.exit_code, -1);
	d = run_describe(&r, 0);
	assert_non_null(strstr(d, "killed by signal 9"));
	free(d);
	close_io(&io);
}

static void test_not_found(void **state)
{
	(void)state;
	struct runner_stdio io = quiet();
	struct run_result r;
	char *argv[] = {"gpuopt-no-such-program-here", NULL};
	assert_false(runner_run(argv, &io, 0, &r));
	assert_int_equal(r.spawn_errno, ENOENT);
	assert_false(run_ok(&r));
	char *d = run_describe(&r, 0);
	assert_non_null(strstr(d, "could not be started"));
	free(d);
	close_io(&io);
	assert_false(runner_find_program("gpuopt-no-such-program-here"));
	assert_true(runner_find_program("sh"));
	assert_true(runner_find_program("/bin/sh"));
	assert_false(runner_find_program("/etc/passwd")); /* not executable */
	assert_false(runner_find_program("/"));           /* a directory */
	assert_false(runner_find_program(""));
}

static void test_timeout_kills_the_group(void **state)
{
	(void)state;
	struct runner_stdio io = quiet();
	struct run_result r;
	/* the shell starts a background sleep too: both must die */
	char *argv[] = {"sh", "-c", "sleep 30 & sleep 30; wait", NULL};
	assert_true(runner_run(argv, &io, 0.3, &r));
	assert_true(r.timed_out);
	assert_false(run_ok(&r));
	assert_true(r.wall_s >= 0.3 && r.wall_s < 5);
	char *d = run_describe(&r, 0.3);
	assert_string_equal(d, "timed out after 0.3 s and was killed");
	free(d);
	/* a command that ends in time is not marked */
	char *quick[] = {"true", NULL};
	assert_true(runner_run(quick, &io, 5, &r));
	assert_false(r.timed_out);
	assert_true(run_ok(&r));
	close_io(&io);
}

static void test_streams(void **state)
{
	(void)state;
	char in_path[] = "/tmp/gpuopt-runner-in-XXXXXX", out_path[] = "/tmp/gpuopt-runner-out-XXXXXX";
	int in = mkstemp(in_path), out = mkstemp(out_path);
	assert_true(in >= 0 && out >= 0);
	assert_int_equal(write(in, "abc\n", 4), 4);
	lseek(in, 0, SEEK_SET);
	struct runner_stdio io = {in, out, out};
	struct run_result r;
	char *argv[] = {"sh", "-c", "read x; echo got $x; echo err >&2", NULL};
	assert_true(runner_run(argv, &io, 0, &r));
	assert_true(run_ok(&r));
	char buf[64] = {0};
	assert_true(pread(out, buf, sizeof buf - 1, 0) > 0);
	assert_string_equal(buf, "got abc\nerr\n");
	close(in);
	close(out);
	unlink(in_path);
	unlink(out_path);
}

static void test_streams_kept_in_logs(void **state)
{
	(void)state;
	struct runner_stdio io = quiet();
	struct caplog out, err;
	caplog_init(&out, -1, 1000, NULL, NULL);
	caplog_init(&err, -1, 1000, NULL, NULL);
	io.out_log = &out;
	io.err_log = &err;
	struct run_result r;
	/* 1.1 MB, far more than a pipe holds, and a child that writes after the
	 * command has exited, until the runner ends it: all of what came before
	 * is read, none of it blocks the command */
	char *argv[] = {"sh", "-c",
			"(sleep 0.2; echo late >&2) & i=0; while [ $i -lt 20000 ]; do "
			"echo 'line of sixty bytes, give or take, to fill the pipe.....'; i=$((i+1)); done; "
			"echo bye >&2",
			NULL};
	assert_true(runner_run(argv, &io, 30, &r));
	assert_true(run_ok(&r));
	caplog_finish(&out);
	caplog_finish(&err);
	assert_int_equal(out.total, 20000 * 57);
	assert_int_equal(caplog_dropped(&out), 20000 * 57 - 1000);
	assert_non_null(strstr(caplog_text(&out), "bytes of output dropped here"));
	assert_non_null(strstr(caplog_text(&err), "bye\n"));
	caplog_free(&out);
	caplog_free(&err);
	close_io(&io);
}

static void test_rusage_is_per_run(void **state)
{
	(void)state;
	struct runner_stdio io = quiet();
	struct run_result busy, idle;
	char *spin[] = {"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done", NULL};
	char *sleep[] = {"sleep", "0.05", NULL};
	assert_true(runner_run(spin, &io, 0, &busy));
	assert_true(runner_run(sleep, &io, 0, &idle));
	/* CPU time is this run's own: the sleeper does not inherit the spinner's */
	assert_true(busy.user_s + busy.sys_s > 0.01);
	assert_true(idle.user_s + idle.sys_s < busy.user_s + busy.sys_s);
	assert_true(idle.wall_s >= 0.05);
	close_io(&io);
	assert_true(runner_floor_rss_kib() > 0);
	runner_reset_peak();
	assert_false(runner_interrupted());
}

/* What a watched run said, and the deadline each piece gives: `after` s
 * from the last piece. */
struct heard {
	struct buf text;
	double after;
	int pieces;
};

static double on_piece(void *arg, const char *data, size_t len, double elapsed_s)
{
	struct heard *h = arg;
	buf_append(&h->text, data, len);
	h->pieces++;
	return h->after > 0 ? elapsed_s + h->after : 0;
}

static void test_watched_run(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct runner_stdio io = {null, fds[1], null};
	struct heard h = {.after = 0.5};
	struct runner_watch w = {fds[0], on_piece, &h};
	struct run_result r;
	/* each line moves the deadline: killed 0.5 s after the last one, long before the timeout */
	char *quiet_after[] = {"sh", "-c", "echo one; sleep 0.2; echo two; sleep 30", NULL};
	assert_true(runner_run_watched(quiet_after, &io, 20, &w, &r));
	assert_true(r.timed_out && r.deadline_hit);
	assert_true(r.wall_s >= 0.65 && r.wall_s < 5);
	assert_string_equal(h.text.data, "one\ntwo\n");
	/* the timeout still stands when it comes first */
	buf_free(&h.text);
	h.after = 10;
	char *slow[] = {"sh", "-c", "echo one; sleep 30", NULL};
	assert_true(runner_run_watched(slow, &io, 0.3, &w, &r));
	assert_true(r.timed_out && !r.deadline_hit);
	assert_true(r.wall_s < 5);
	/* a run that ends on its own: not killed, and what it wrote last is read */
	buf_free(&h.text);
	h.after = 0;
	char *ends[] = {"sh", "-c", "echo one; echo last", NULL};
	assert_true(runner_run_watched(ends, &io, 5, &w, &r));
	assert_true(run_ok(&r) && !r.deadline_hit);
	assert_string_equal(h.text.data, "one\nlast\n");
	buf_free(&h.text);
	close(fds[0]);
	close(fds[1]);
	close(null);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_timeout_kills_the_group),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_streams_kept_in_logs),
		cmocka_unit_test(test_rusage_is_per_run),
		cmocka_unit_test(test_watched_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
