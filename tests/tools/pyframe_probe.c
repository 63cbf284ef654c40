/* pyframe_probe: a shared library that a real Python process loads with
 * ctypes to check the tracer's frame walker (src/trace/tracer/pyframe.c)
 * without a GPU. ctypes.CDLL releases the GIL around the call, as CuPy and
 * PyTorch do around driver calls, so the probe reads the calling thread's
 * frames exactly as a CUPTI callback would. Used by
 * tests/e2e/test_trace_pyframe.py. */
#include <stdio.h>
#include <string.h>

#include "trace/tracer/pyframe.h"

__attribute__((visibility("default"))) int gpuopt_pyframe_probe(char *out, int size);

/* Writes one "FILE\tFUNCTION\tLINE\n" per frame, innermost first, into out;
 * the first line is "ok VERSION" or "no REASON". Returns the frame count. */
int gpuopt_pyframe_probe(char *out, int size)
{
	static int inited, ok;
	static char version[32], why[256];
	if (!inited) {
		ok = pyframe_init(version, sizeof version, why, sizeof why);
		inited = 1;
	}
	int at = snprintf(out, (size_t)size, ok ? "ok %s\n" : "no %s\n", ok ? version : why);
	if (!ok)
		return 0;
	struct pyframe frames[256];
	int n = pyframe_walk(frames, 256);
	for (int i = 0; i < n && at < size; i++) {
		char file[1024], func[256];
		pyframe_filename(frames[i].code, file, sizeof file);
		pyframe_funcname(frames[i].code, func, sizeof func);
		at += snprintf(out + at, (size_t)(size - at), "%s\t%s\t%d\n", file, func,
			       pyframe_line(frames[i].code, frames[i].addr));
	}
	return n;
}
