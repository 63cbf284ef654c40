/* pyoffsets.c: prints the CPython struct offsets that the trace tracer's
 * frame walker (src/trace/tracer/pyframe.c) reads, as KEY=VALUE lines, for
 * the interpreter whose headers it is compiled against. Compiled and run by
 * tools/pyoffsets.py once per interpreter; not part of the build. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#else
#include <frameobject.h>
#endif
#if PY_VERSION_HEX >= 0x030D0000
#include "internal/pycore_runtime.h"
#endif
#define P(name, expr) printf("%s=%d\n", name, (int)(expr))
int main(void) {
#if PY_VERSION_HEX < 0x030B0000
	P("ts_frame", offsetof(PyThreadState, frame));
	P("fr_back", offsetof(PyFrameObject, f_back));
	P("fr_code", offsetof(PyFrameObject, f_code));
	P("fr_lasti", offsetof(PyFrameObject, f_lasti));
#elif PY_VERSION_HEX < 0x030D0000
	P("ts_frame", offsetof(PyThreadState, cframe));
	P("cframe_current", offsetof(_PyCFrame, current_frame));
	P("fr_back", offsetof(_PyInterpreterFrame, previous));
	P("fr_code", offsetof(_PyInterpreterFrame, f_code));
	P("fr_lasti", offsetof(_PyInterpreterFrame, prev_instr));
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
#else
	P("ts_frame", offsetof(PyThreadState, current_frame));
	P("fr_back", offsetof(_PyInterpreterFrame, previous));
	P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
	P("fr_lasti", offsetof(_PyInterpreterFrame, instr_ptr));
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	P("co_filename", offsetof(PyCodeObject, co_filename));
	P("co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	P("co_qualname", offsetof(PyCodeObject, co_qualname));
	P("co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#endif
	P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX >= 0x030A0000
	P("co_linetable", offsetof(PyCodeObject, co_linetable));
#else
	P("co_linetable", offsetof(PyCodeObject, co_lnotab));
#endif
	P("bytes_size", offsetof(PyVarObject, ob_size));
	P("bytes_sval", offsetof(PyBytesObject, ob_sval));
	P("uni_length", offsetof(PyASCIIObject, length));
	P("uni_state", offsetof(PyASCIIObject, hash) + sizeof(Py_hash_t));
	P("ascii_size", sizeof(PyASCIIObject));
	P("compact_size", sizeof(PyCompactUnicodeObject));
	return 0;
}
