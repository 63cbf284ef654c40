/* pyframe: read the calling thread's CPython frames from inside the process,
 * without the GIL and without linking Python.
 *
 * The tracer's CUPTI callbacks run on the thread that made the CUDA call,
 * while that thread is blocked inside the call. Its Python frame chain
 * cannot change until the call returns, so it can be read in place even when
 * the call was made with the GIL released (CuPy and PyTorch release it
 * around many driver calls): nothing here takes the GIL or calls into the
 * interpreter except PyGILState_GetThisThreadState (a thread-specific-data
 * read) and Py_IsInitialized (a flag read), both found with dlsym.
 *
 * Layouts: CPython 3.9-3.12 from the table that tools/pyoffsets.py generated
 * from each version's headers (pyoffsets.h); 3.13 from the offsets the
 * interpreter itself publishes in _PyRuntime.debug_offsets (checked against
 * its cookie and version). Other versions, debug and free-threaded builds get
 * no frames (pyframe_init says why). Every code object is checked to be one
 * (its type is PyCode_Type) before anything else in it is read.
 *
 * Not thread-safe to initialise; after pyframe_init, pyframe_walk and the
 * readers may be called from any thread concurrently. */
#ifndef GPUOPT_TRACE_PYFRAME_H
#define GPUOPT_TRACE_PYFRAME_H

#include <stddef.h>
#include <stdint.h>

struct pyframe {
	const void *code;  /* the frame's code object (valid while the frame runs) */
	int32_t addr;      /* byte offset of the current instruction, -1 if unknown */
};

/* Finds the interpreter in this process and its layout. Returns 1 when
 * frames can be read; 0 otherwise, with the reason in why (not Python,
 * an unsupported version, ...). version gets "3.12.3" or "" (size >= 16). */
int pyframe_init(char *version, size_t vsize, char *why, size_t wsize);

/* Up to max frames of the calling thread, innermost first. Returns how many
 * (0: no Python thread state here, the interpreter is not running, or the
 * thread is outside Python code). */
int pyframe_walk(struct pyframe *out, int max);

/* The line that addr of code is on (PyCode_Addr2Line), or -1. */
int pyframe_line(const void *code, int32_t addr);

/* code's co_filename / co_qualname (co_name before 3.11) / co_firstlineno.
 * The strings are written as UTF-8, NUL-terminated, cut to size - 1 bytes;
 * return their length (0 when unreadable). */
size_t pyframe_filename(const void *code, char *out, size_t size);
size_t pyframe_funcname(const void *code, char *out, size_t size);
int pyframe_firstlineno(const void *code);
/* Raw identity of a code object, for caches: its co_filename and co_name
 * pointers (a freed code object's address can be reused by another). */
void pyframe_identity(const void *code, const void **filename, const void **name);

#endif
