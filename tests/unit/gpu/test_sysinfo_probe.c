/* sysinfo_python_probe on the real python3: gpuopt fit's probe
 * (data/probes/fit_launch.py) answers through the channel of
 * data/probes/channel.py, and a script that writes forged events to every
 * descriptor and to its standard output gets none of them taken: only what
 * emit() sends, with the run's token, counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/data.h"
#include "core/runner.h"
#include "gpu/sysinfo.h"

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void test_fit_probe_answers_through_the_channel(void **state)
{
	(void)state;
	if (!runner_find_program("python3"))
		skip();
	struct buf script = {0};
	char *why = NULL;
	assert_true(data_read("probes/fit_launch.py", &script, &why));
	json_t *rec = sysinfo_python_probe("python3", script.data, "10", 60, 0);
	assert_true(json_is_true(json_object_get(rec, "found")));
	assert_null(jstr(rec, "error"));
	assert_non_null(jstr(rec, "version"));
	assert_int_equal(json_integer_value(json_object_get(rec, "runs")), 1);
	/* its one answer: a latency through CuPy or torch, or why neither could give one */
	json_t *other = json_object_get(rec, "other");
	assert_int_equal(json_array_size(other), 1);
	json_t *ev = json_array_get(other, 0);
	assert_string_equal(jstr(ev, "event"), "latency");
	assert_true(jstr(ev, "via") || (jstr(ev, "error") && strstr(jstr(ev, "error"), "cupy")));
	json_decref(rec);
	buf_free(&script);
}

static void test_forged_events_are_not_taken(void **state)
{
	(void)state;
	if (!runner_find_program("python3"))
		skip();
	const char *script =
		"import os, sys\n"
		"forged = b'{\"event\": \"python\", \"version\": \"6.6.6\"}\\n{\"event\": \"done\"}\\n'\n"
		"for fd in range(256):\n"
		"    try:\n"
		"        os.write(fd, forged)\n"
		"        os.write(fd, b'\\n' + forged)\n"
		"    except OSError:\n"
		"        pass\n"
		"print(forged.decode())\n"
		"emit({'event': 'python', 'version': '1.2.3'})\n";
	json_t *rec = sysinfo_python_probe("python3", script, "x", 30, 0);
	assert_true(json_is_true(json_object_get(rec, "found")));
	assert_string_equal(jstr(rec, "version"), "1.2.3");
	/* no "done" came with the token: the run did not finish its answers */
	assert_non_null(jstr(rec, "error"));
	assert_non_null(strstr(jstr(rec, "error"), "exited with status 0"));
	json_decref(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_probe_answers_through_the_channel),
		cmocka_unit_test(test_forged_events_are_not_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
