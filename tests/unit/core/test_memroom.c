/* memroom: the fields of /proc-style text, and this process's room under
 * the limits set on it (ulimit -v and -d, lowered here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "core/memroom.h"

static const char meminfo[] =
	"MemTotal:       24562456 kB\n"
	"MemFree:        16011296 kB\n"
	"MemAvailable:   23701668 kB\n"
	"Buffers:          212484 kB\n"
	"SwapFree:              0 kB\n"
	"Bad:            abc kB\n";

static void test_fields(void **state)
{
	(void)state;
	assert_int_equal(mem_room_field(meminfo, "MemAvailable", 1024), 23701668LL * 1024);
	assert_int_equal(mem_room_field(meminfo, "MemTotal", 1), 24562456LL);
	assert_int_equal(mem_room_field(meminfo, "SwapFree", 1024), 0);
	/* only at a line's start, the whole key, a number */
	assert_int_equal(mem_room_field(meminfo, "Free", 1024), -1);
	assert_int_equal(mem_room_field(meminfo, "Mem", 1024), -1);
	assert_int_equal(mem_room_field(meminfo, "Bad", 1024), -1);
	assert_int_equal(mem_room_field(meminfo, "Missing", 1024), -1);
	assert_int_equal(mem_room_field("Big: 99999999999999999999 kB\n", "Big", 1024), -1);
	assert_int_equal(mem_room_field("", "MemAvailable", 1024), -1);
}

/* /proc/self/status's VmData, in bytes. */
static long long vm_data(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	static char text[16384];
	size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = '\0';
	return mem_room_field(text, "VmData", 1024);
}

static void test_room_under_a_data_limit(void **state)
{
	(void)state;
	struct mem_room r;
	mem_room_now(&r);
	assert_true(r.bytes > 0);
	/* ulimit -d at 64 MiB above what the process holds: the room is about that, and named */
	long long data = vm_data();
	assert_true(data > 0);
	struct rlimit old, rl;
	assert_int_equal(getrlimit(RLIMIT_DATA, &old), 0);
	rl = old;
	rl.rlim_cur = (rlim_t)data + ((rlim_t)64 << 20);
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < rl.rlim_cur)
		skip();
	assert_int_equal(setrlimit(RLIMIT_DATA, &rl), 0);
	mem_room_now(&r);
	assert_int_equal(setrlimit(RLIMIT_DATA, &old), 0);
	assert_true(r.bytes <= (uint64_t)64 << 20);
	assert_true(r.bytes >= (uint64_t)32 << 20);
	assert_string_equal(r.what, "ulimit -d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_room_under_a_data_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
