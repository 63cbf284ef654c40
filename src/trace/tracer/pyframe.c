/* pyframe: the calling thread's CPython frames, read in place without the
 * GIL (see pyframe.h for why that is safe and what is supported). */
#include "pyframe.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct py_layout {
	int major, minor;
	int ts_frame;       /* PyThreadState: frame (<3.11), cframe (3.11, 3.12), current_frame */
	int cframe_current; /* _PyCFrame.current_frame (3.11, 3.12) */
	int fr_back;        /* PyFrameObject.f_back / _PyInterpreterFrame.previous */
	int fr_code;        /* f_code / f_executable */
	int fr_lasti;       /* f_lasti (int) / prev_instr (3.11, 3.12) / instr_ptr (3.13) */
	int fr_owner;       /* _PyInterpreterFrame.owner (char), 3.11+ */
	int owner_cstack;   /* FRAME_OWNED_BY_CSTACK (3.12+): shim frames, skipped */
	int co_filename, co_name, co_qualname, co_code_adaptive, co_firstlineno, co_linetable;
	int bytes_size, bytes_sval;
	int uni_length, uni_state, ascii_size, compact_size;
};

#include "pyoffsets.h"

/* The prefix of CPython 3.13's _Py_DebugOffsets (Include/internal/
 * pycore_runtime.h), the first member of _PyRuntime: every field a uint64_t,
 * so this mirror has the same layout. */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t runtime_state[3];
	uint64_t interpreter_state[13];
	struct { uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
		 datastack_chunk, status; } thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct { uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
		 localsplusnames, localspluskinds, co_code_adaptive; } code_object;
	uint64_t pyobject[2], type_object[4], tuple_object[3], list_object[3], dict_object[3],
		 float_object[2], long_object[3];
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

static struct py_layout L;
static int ready;
static void *(*get_tstate)(void);
static int (*is_initialized)(void);
static const void *code_type, *unicode_type;

#define AT(p, off, type) (*(type const *)((const char *)(p) + (off)))

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;
	if (strncmp(base, "libpython3", 10) == 0) {
		void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			*(void **)data = h;
			return 1;
		}
	}
	return 0;
}

/* A symbol of the interpreter: from the global scope (a python executable
 * exports its symbols; a libpython loaded globally does too), else from a
 * libpython loaded privately (an embedding program). */
static void *pysym(const char *name)
{
	static void *lib;
	static int looked;
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p)
		return p;
	if (!looked) {
		looked = 1;
		dl_iterate_phdr(find_libpython, &lib);
	}
	return lib ? dlsym(lib, name) : NULL;
}

static const struct py_layout *table_row(int major, int minor)
{
	for (size_t i = 0; i < sizeof py_layouts / sizeof py_layouts[0]; i++)
		if (py_layouts[i].major == major && py_layouts[i].minor == minor)
			return &py_layouts[i];
	return NULL;
}

/* 3.13: take the offsets the interpreter publishes. 0 when they are missing
 * or not the 3.13 layout. */
static int layout_from_debug_offsets(unsigned long hexversion, char *why, size_t wsize)
{
	const struct debug_offsets_313 *d = pysym("_PyRuntime");
	if (!d || memcmp(d->cookie, "xdebugpy", 8) != 0) {
		snprintf(why, wsize, "no _PyRuntime.debug_offsets in this interpreter");
		return 0;
	}
	if ((d->version >> 16) != (hexversion >> 16)) {
		snprintf(why, wsize, "_PyRuntime.debug_offsets is for version %llx, not %lx",
			 (unsigned long long)d->version, hexversion);
		return 0;
	}
	if (d->free_threaded) {
		snprintf(why, wsize, "free-threaded CPython builds are not supported");
		return 0;
	}
	const struct py_layout *row = table_row(3, 13);
	L = *row; /* owner_cstack and the compact string size are not published */
	L.ts_frame = (int)d->thread_state.current_frame;
	L.cframe_current = -1;
	L.fr_back = (int)d->interpreter_frame.previous;
	L.fr_code = (int)d->interpreter_frame.executable;
	L.fr_lasti = (int)d->interpreter_frame.instr_ptr;
	L.fr_owner = (int)d->interpreter_frame.owner;
	L.co_filename = (int)d->code_object.filename;
	L.co_name = (int)d->code_object.name;
	L.co_qualname = (int)d->code_object.qualname;
	L.co_linetable = (int)d->code_object.linetable;
	L.co_firstlineno = (int)d->code_object.firstlineno;
	L.co_code_adaptive = (int)d->code_object.co_code_adaptive;
	L.bytes_size = (int)d->bytes_object.ob_size;
	L.bytes_sval = (int)d->bytes_object.ob_sval;
	L.uni_state = (int)d->unicode_object.state;
	L.uni_length = (int)d->unicode_object.length;
	L.ascii_size = (int)d->unicode_object.asciiobject_size;
	L.compact_size = L.ascii_size + 16; /* + utf8_length, utf8 */
	return 1;
}

int pyframe_init(char *version, size_t vsize, char *why, size_t wsize)
{
	version[0] = '\0';
	why[0] = '\0';
	unsigned long hex = 0;
	const unsigned long *pv = pysym("Py_Version");
	if (pv) {
		hex = *pv;
	} else {
		const char *(*getv)(void) = (const char *(*)(void))pysym("Py_GetVersion");
		int maj, min, mic;
		if (!getv || sscanf(getv(), "%d.%d.%d", &maj, &min, &mic) != 3) {
			snprintf(why, wsize, "not a Python process");
			return 0;
		}
		hex = ((unsigned long)maj << 24) | ((unsigned long)min << 16) | ((unsigned long)mic << 8);
	}
	int major = (int)(hex >> 24), minor = (int)((hex >> 16) & 0xff);
	snprintf(version, vsize, "%d.%d.%d", major, minor, (int)((hex >> 8) & 0xff));
	get_tstate = (void *(*)(void))pysym("PyGILState_GetThisThreadState");
	is_initialized = (int (*)(void))pysym("Py_IsInitialized");
	code_type = pysym("PyCode_Type");
	unicode_type = pysym("PyUnicode_Type");
	if (!get_tstate || !is_initialized || !code_type || !unicode_type) {
		snprintf(why, wsize, "Python %s does not export PyGILState_GetThisThreadState, "
			 "Py_IsInitialized, PyCode_Type and PyUnicode_Type", version);
		return 0;
	}
	if (pysym("_Py_NegativeRefcount") || pysym("_Py_RefTotal")) {
		snprintf(why, wsize, "Python %s is a debug build (its layouts differ)", version);
		return 0;
	}
	if (major == 3 && minor == 13) {
		if (!layout_from_debug_offsets(hex, why, wsize))
			return 0;
	} else {
		const struct py_layout *row = table_row(major, minor);
		if (!row) {
			snprintf(why, wsize, "Python %s is not supported for line attribution "
				 "(CPython 3.9-3.13 are)", version);
			return 0;
		}
		L = *row;
	}
	ready = 1;
	return 1;
}

static int is_code(const void *p)
{
	return p && AT(p, 8, const void *) == code_type;
}

int pyframe_walk(struct pyframe *out, int max)
{
	if (!ready || !is_initialized())
		return 0;
	const void *ts = get_tstate();
	if (!ts)
		return 0;
	int n = 0;
	if (L.minor < 11) {
		for (const void *f = AT(ts, L.ts_frame, const void *); f && n < max;
		     f = AT(f, L.fr_back, const void *)) {
			const void *code = AT(f, L.fr_code, const void *);
			if (!is_code(code))
				break;
			int lasti = AT(f, L.fr_lasti, int);
			out[n].code = code;
			out[n].addr = lasti < 0 ? -1 : (L.minor == 9 ? lasti : lasti * 2);
			n++;
		}
		return n;
	}
	const void *f;
	if (L.cframe_current >= 0) {
		const void *cf = AT(ts, L.ts_frame, const void *);
		if (!cf)
			return 0;
		f = AT(cf, L.cframe_current, const void *);
	} else {
		f = AT(ts, L.ts_frame, const void *);
	}
	for (int guard = 0; f && n < max && guard < 4096; f = AT(f, L.fr_back, const void *), guard++) {
		if (L.owner_cstack >= 0 && AT(f, L.fr_owner, char) == L.owner_cstack)
			continue;
		const void *code = AT(f, L.fr_code, const void *);
		if (!is_code(code))
			continue;
		const char *ip = AT(f, L.fr_lasti, const char *);
		const char *first = (const char *)code + L.co_code_adaptive;
		long addr = ip - first;
		out[n].code = code;
		out[n].addr = addr < 0 || addr > (1L << 30) ? -1 : (int32_t)addr;
		n++;
	}
	return n;
}

/* The bytes of a bytes object (NULL when it is not readable). */
static const unsigned char *bytes_of(const void *b, long *len)
{
	if (!b)
		return NULL;
	long n = AT(b, L.bytes_size, long);
	if (n < 0 || n > (1L << 26))
		return NULL;
	*len = n;
	return (const unsigned char *)b + L.bytes_sval;
}

/* 3.11+ location table (Objects/locations.md). */
static unsigned read_varint(const unsigned char **p, const unsigned char *end)
{
	unsigned val = 0, shift = 0;
	while (*p < end) {
		unsigned b = *(*p)++;
		val |= (b & 63u) << shift;
		shift += 6;
		if (!(b & 64) || shift > 28)
			break;
	}
	return val;
}

static int read_svarint(const unsigned char **p, const unsigned char *end)
{
	unsigned u = read_varint(p, end);
	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

static int line_locations(const unsigned char *p, const unsigned char *end, int line, int32_t addr)
{
	int32_t at = 0; /* bytes */
	while (p < end) {
		unsigned first = *p++;
		if (!(first & 128))
			return -1; /* not at an entry start: damaged */
		int code = (first >> 3) & 15;
		int32_t len = (int32_t)((first & 7) + 1) * 2;
		int this_line;
		if (code == 15) {
			this_line = -1;
		} else if (code == 14) {
			line += read_svarint(&p, end);
			this_line = line;
			read_varint(&p, end);
			read_varint(&p, end);
			read_varint(&p, end);
		} else if (code == 13) {
			line += read_svarint(&p, end);
			this_line = line;
		} else if (code >= 10) {
			line += code - 10;
			this_line = line;
			p += 2;
		} else {
			this_line = line;
			p += 1;
		}
		if (addr < at + len)
			return this_line;
		at += len;
	}
	return -1;
}

/* 3.10 line table: (byte delta, signed line delta; -128 none) pairs. */
static int line_310(const unsigned char *p, long n, int line, int32_t addr)
{
	int32_t start = -1, end = 0;
	int ar_line = -1;
	long i = 0;
	while (end <= addr) {
		do {
			if (i + 1 >= n)
				return -1;
			start = end;
			end += p[i];
			int ld = (signed char)p[i + 1];
			i += 2;
			if (ld == -128) {
				ar_line = -1;
			} else {
				line += ld;
				ar_line = line;
			}
		} while (start == end);
	}
	return ar_line;
}

/* 3.9 co_lnotab. */
static int line_39(const unsigned char *p, long n, int line, int32_t addr)
{
	int32_t at = 0;
	for (long i = 0; i + 1 < n; i += 2) {
		at += p[i];
		if (at > addr)
			break;
		line += (signed char)p[i + 1];
	}
	return line;
}

int pyframe_line(const void *code, int32_t addr)
{
	if (!ready || !is_code(code))
		return -1;
	int first = AT(code, L.co_firstlineno, int);
	if (addr < 0)
		return first;
	long n = 0;
	const unsigned char *t = bytes_of(AT(code, L.co_linetable, const void *), &n);
	if (!t)
		return -1;
	if (L.minor == 9)
		return line_39(t, n, first, addr);
	if (L.minor == 10)
		return line_310(t, n, first, addr);
	return line_locations(t, t + n, first, addr);
}

static size_t put_utf8(char *out, size_t size, size_t at, uint32_t c)
{
	char tmp[4];
	size_t k;
	if (c < 0x80) {
		tmp[0] = (char)c;
		k = 1;
	} else if (c < 0x800) {
		tmp[0] = (char)(0xc0 | (c >> 6));
		tmp[1] = (char)(0x80 | (c & 63));
		k = 2;
	} else if (c < 0x10000) {
		tmp[0] = (char)(0xe0 | (c >> 12));
		tmp[1] = (char)(0x80 | ((c >> 6) & 63));
		tmp[2] = (char)(0x80 | (c & 63));
		k = 3;
	} else {
		tmp[0] = (char)(0xf0 | (c >> 18));
		tmp[1] = (char)(0x80 | ((c >> 12) & 63));
		tmp[2] = (char)(0x80 | ((c >> 6) & 63));
		tmp[3] = (char)(0x80 | (c & 63));
		k = 4;
	}
	if (at + k >= size)
		return at;
	memcpy(out + at, tmp, k);
	return at + k;
}

static size_t unicode_utf8(const void *s, char *out, size_t size)
{
	if (size == 0)
		return 0;
	out[0] = '\0';
	if (!s || AT(s, 8, const void *) != unicode_type)
		return 0;
	uint32_t state = AT(s, L.uni_state, uint32_t);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	long len = AT(s, L.uni_length, long);
	if (!compact || len < 0 || len > (1L << 20))
		return 0;
	const unsigned char *data = (const unsigned char *)s + (ascii ? L.ascii_size : L.compact_size);
	size_t at = 0;
	for (long i = 0; i < len; i++) {
		uint32_t c;
		if (kind == 1)
			c = data[i];
		else if (kind == 2)
			c = ((const uint16_t *)data)[i];
		else if (kind == 4)
			c = ((const uint32_t *)data)[i];
		else
			return 0;
		size_t next = put_utf8(out, size, at, c);
		if (next == at)
			break;
		at = next;
	}
	out[at] = '\0';
	return at;
}

size_t pyframe_filename(const void *code, char *out, size_t size)
{
	if (!ready || !is_code(code)) {
		if (size)
			out[0] = '\0';
		return 0;
	}
	return unicode_utf8(AT(code, L.co_filename, const void *), out, size);
}

size_t pyframe_funcname(const void *code, char *out, size_t size)
{
	if (!ready || !is_code(code)) {
		if (size)
			out[0] = '\0';
		return 0;
	}
	return unicode_utf8(AT(code, L.co_qualname >= 0 ? L.co_qualname : L.co_name, const void *),
			    out, size);
}

int pyframe_firstlineno(const void *code)
{
	return ready && is_code(code) ? AT(code, L.co_firstlineno, int) : -1;
}

void pyframe_identity(const void *code, const void **filename, const void **name)
{
	*filename = ready && is_code(code) ? AT(code, L.co_filename, const void *) : NULL;
	*name = ready && is_code(code) ? AT(code, L.co_name, const void *) : NULL;
}
