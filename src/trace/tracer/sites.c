/* sites: the tracer's bounded tables — the string pool, Python sites (the
 * innermost frame outside site-packages and the standard library, and the
 * library frame it called), kernels by name, streams, idle gaps and NVTX
 * ranges. Every function here except site_current expects t.lock held. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pyframe.h"
#include "tracer.h"

static uint32_t hash_bytes(const char *s, uint32_t len)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static uint32_t hash_u32s(const uint32_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

uint32_t str_intern(const char *s, uint32_t len)
{
	if (len == 0)
		return 0;
	if (t.nstr == 0) { /* id 0 is "" */
		t.str_off[0] = 0;
		t.str_len[0] = 0;
		t.arena[0] = '\0';
		t.arena_used = 1;
		t.nstr = 1;
	}
	uint32_t h = hash_bytes(s, len);
	for (uint32_t i = h % STR_HASH, probes = 0; probes < STR_HASH; i = (i + 1) % STR_HASH, probes++) {
		uint32_t id = t.str_hash[i];
		if (id == 0) {
			if (t.nstr >= STR_MAX || t.arena_used + len + 1 > STR_ARENA) {
				t.str_dropped++;
				return 0;
			}
			id = t.nstr++;
			t.str_off[id] = t.arena_used;
			t.str_len[id] = len;
			memcpy(t.arena + t.arena_used, s, len);
			t.arena[t.arena_used + len] = '\0';
			t.arena_used += len + 1;
			t.str_hash[i] = id + 1;
			return id;
		}
		id--;
		if (t.str_len[id] == len && memcmp(t.arena + t.str_off[id], s, len) == 0)
			return id;
	}
	t.str_dropped++;
	return 0;
}

const char *str_at(uint32_t id, uint32_t *len)
{
	if (id >= t.nstr) {
		*len = 0;
		return "";
	}
	*len = t.str_len[id];
	return t.arena + t.str_off[id];
}

/* Whether dir holds an installed distribution's metadata (NAME.dist-info):
 * the root of packages installed with pip --target, on PYTHONPATH or in an
 * unusual prefix. (Not .egg-info: `setup.py develop` leaves one in the
 * user's own source tree.) Each directory is read once. */
static int dir_has_dist_info(const char *dir, size_t len)
{
	static struct { uint32_t hash; uint32_t len; int8_t result; } cache[256];
	uint32_t h = hash_bytes(dir, (uint32_t)len);
	unsigned slot = h % 256;
	if (cache[slot].len == len && cache[slot].hash == h && cache[slot].result >= 0)
		return cache[slot].result;
	char path[4096];
	if (len >= sizeof path)
		return 0;
	memcpy(path, dir, len);
	path[len] = '\0';
	int found = 0;
	DIR *d = opendir(path);
	if (d) {
		struct dirent *de;
		while (!found && (de = readdir(d)))
			found = str_has_suffix(de->d_name, ".dist-info");
		closedir(d);
	}
	cache[slot].hash = h;
	cache[slot].len = (uint32_t)len;
	cache[slot].result = (int8_t)found;
	return found;
}

/* A file that belongs to a library: site-packages, dist-packages, the
 * standard library (.../lib/pythonX.Y/...), frozen modules, or a folder
 * below an installation root (dir_has_dist_info). */
static int is_library_file(const char *f)
{
	if (f[0] == '<')
		return strncmp(f, "<frozen", 7) == 0;
	if (strstr(f, "/site-packages/") || strstr(f, "/dist-packages/"))
		return 1;
	if (f[0] == '/') {
		const char *end = strrchr(f, '/');
		for (int depth = 0; end && end > f && depth < 6; depth++) {
			if (dir_has_dist_info(f, (size_t)(end - f)))
				return 1;
			const char *up = end - 1;
			while (up > f && *up != '/')
				up--;
			end = up;
		}
	}
	for (const char *p = strstr(f, "/python3."); p; p = strstr(p + 1, "/python3.")) {
		const char *q = p + 9;
		while (*q >= '0' && *q <= '9')
			q++;
		int lib = (p >= f + 4 && strncmp(p - 4, "/lib", 4) == 0) ||
			  (p >= f + 6 && strncmp(p - 6, "/lib64", 6) == 0);
		if (*q == '/' && lib)
			return 1;
	}
	return 0;
}

static struct code_entry *code_lookup(const void *code)
{
	uintptr_t k = (uintptr_t)code;
	struct code_entry *e = &t.code_cache[(k >> 4) % CODE_CACHE];
	const void *fname, *name;
	pyframe_identity(code, &fname, &name);
	if (e->code == code && e->fname == fname && e->name == name)
		return e;
	char buf[2048];
	e->code = code;
	e->fname = fname;
	e->name = name;
	e->firstlineno = pyframe_firstlineno(code);
	uint32_t n = (uint32_t)pyframe_filename(code, buf, sizeof buf);
	e->lib = (uint8_t)is_library_file(buf);
	e->file = str_intern(buf, n);
	n = (uint32_t)pyframe_funcname(code, buf, sizeof buf);
	e->func = str_intern(buf, n);
	return e;
}

static int line_lookup(const void *code, int32_t addr)
{
	uintptr_t k = ((uintptr_t)code >> 4) * 31u + (uint32_t)addr;
	struct line_entry *e = &t.line_cache[k % LINE_CACHE];
	if (e->code == code && e->addr == addr)
		return e->line;
	e->code = code;
	e->addr = addr;
	e->line = pyframe_line(code, addr);
	return e->line;
}

static uint32_t site_get(const struct site *s)
{
	uint32_t key[6] = {s->file, s->line, s->func, s->lib_file, s->lib_line, s->lib_func};
	if (t.nsites < 2) {
		memset(&t.sites[0], 0, sizeof t.sites[0] * 2);
		t.nsites = 2;
	}
	uint32_t h = hash_u32s(key, 6);
	for (uint32_t i = h % SITE_HASH, probes = 0; probes < SITE_HASH; i = (i + 1) % SITE_HASH, probes++) {
		uint32_t id = t.site_hash[i];
		if (id == 0) {
			if (t.nsites >= SITE_MAX) {
				t.sites_overflow++;
				return SITE_OVERFLOW;
			}
			id = t.nsites++;
			t.sites[id] = *s;
			t.site_hash[i] = id + 1;
			return id;
		}
		if (memcmp(&t.sites[id - 1], s, sizeof *s) == 0)
			return id - 1;
	}
	t.sites_overflow++;
	return SITE_OVERFLOW;
}

/* A call from a thread with no Python frame, or only a library's: the work a runtime thread
 * does was handed to it by a Python call (JAX's asynchronous dispatch runs
 * a jitted step's copies and launches on its own threads; PyTorch's
 * backward runs on the autograd engine's), most likely the newest one, so
 * it is charged to that call's line, marked as a runtime thread's (the
 * reports say so). On the H200, a JAX training loop's copies and 5,070 of
 * its launches had no line at all. */
static uint32_t runtime_site(void)
{
	if (t.last_py_site == SITE_NONE || t.last_py_site >= t.nsites)
		return SITE_NONE;
	struct site s = t.sites[t.last_py_site];
	s.lib_file = str_intern(TRACE_RUNTIME_THREAD, (uint32_t)strlen(TRACE_RUNTIME_THREAD));
	s.lib_line = 0;
	s.lib_func = 0;
	return site_get(&s);
}

uint32_t site_current(void)
{
	pthread_mutex_lock(&t.lock);
	uint32_t id = site_current_locked();
	pthread_mutex_unlock(&t.lock);
	return id;
}

uint32_t site_current_locked(void)
{
	if (!t.py_ok || !t.python_lines)
		return SITE_NONE;
	/* The user's frame is nearly always among the innermost few: read 8,
	 * and the rest of the stack (up to 96) only when they are all library. */
	struct pyframe fr[96];
	int n = pyframe_walk(fr, 8);
	if (n <= 0)
		return runtime_site();
	int user = -1;
	struct code_entry *ce = NULL, *lib = NULL;
	for (int i = 0; i < n; i++) {
		ce = code_lookup(fr[i].code);
		if (!ce->lib) {
			user = i;
			break;
		}
		if (i == 7 && n == 8)
			n = pyframe_walk(fr, 96);
	}
	if (user < 0) {
		/* only library frames: a library's own thread (a torch autograd
		 * hook, a loader's worker) doing work a user's call handed it, as a
		 * runtime thread does (on the H200, save_on_cpu's unpack hook's
		 * copies were charged to torch/autograd/graph.py:405); before any
		 * user call, the innermost library frame */
		uint32_t rt = runtime_site();
		if (rt != SITE_NONE)
			return rt;
		user = 0;
		ce = code_lookup(fr[0].code);
	} else if (user > 0) {
		lib = code_lookup(fr[user - 1].code);
		ce = code_lookup(fr[user].code); /* the lookup may have replaced it */
	}
	struct site s = {0};
	s.file = ce->file;
	s.func = ce->func;
	int line = line_lookup(fr[user].code, fr[user].addr);
	s.line = line < 0 ? 0 : (uint32_t)line;
	if (lib) {
		s.lib_file = lib->file;
		s.lib_func = lib->func;
		line = line_lookup(fr[user - 1].code, fr[user - 1].addr);
		s.lib_line = line < 0 ? 0 : (uint32_t)line;
	}
	uint32_t id = site_get(&s);
	if (id != SITE_OVERFLOW && !ce->lib)
		t.last_py_site = id;
	return id;
}

struct kernel_stats *kernel_get(const char *name)
{
	uint32_t len = name ? (uint32_t)strnlen(name, 4096) : 0;
	uint32_t sid = str_intern(name ? name : "", len);
	for (uint32_t i = sid % (KERNEL_MAX * 2), probes = 0; probes < KERNEL_MAX * 2;
	     i = (i + 1) % (KERNEL_MAX * 2), probes++) {
		uint32_t id = t.kernel_hash[i];
		if (id == 0) {
			if (t.nkernels >= KERNEL_MAX) {
				t.kernels_overflow++;
				return NULL;
			}
			struct kernel_stats *k = &t.kernels[t.nkernels];
			k->name = sid;
			k->min = UINT64_MAX;
			t.kernel_hash[i] = ++t.nkernels;
			return k;
		}
		if (t.kernels[id - 1].name == sid)
			return &t.kernels[id - 1];
	}
	return NULL;
}

struct stream_stats *stream_get(uint32_t device, uint32_t stream)
{
	for (uint32_t i = 0; i < t.nstreams; i++)
		if (t.streams[i].device == device && t.streams[i].stream == stream)
			return &t.streams[i];
	if (t.nstreams >= STREAM_MAX) {
		t.streams_overflow++;
		return NULL;
	}
	struct stream_stats *s = &t.streams[t.nstreams++];
	s->device = device;
	s->stream = stream;
	return s;
}

void gap_add(uint32_t prev_site, uint8_t prev_op, uint32_t next_site, uint8_t cls, uint64_t ns, int sampled)
{
	uint32_t key[4] = {prev_site, prev_op, next_site, cls};
	uint32_t h = hash_u32s(key, 4);
	for (uint32_t i = h % GAP_MAX, probes = 0; probes < GAP_MAX; i = (i + 1) % GAP_MAX, probes++) {
		struct gap_stats *g = &t.gaps[i];
		if (!g->used) {
			g->used = 1;
			g->prev_site = prev_site;
			g->prev_op = prev_op;
			g->next_site = next_site;
			g->cls = cls;
		}
		if (g->prev_site == prev_site && g->prev_op == prev_op && g->next_site == next_site && g->cls == cls) {
			g->n++;
			g->ns += ns;
			if (sampled) {
				g->n_s++;
				g->ns_s += ns;
			}
			if (ns > g->max_ns)
				g->max_ns = ns;
			return;
		}
	}
	t.gaps_overflow++;
}

struct nvtx_stats *nvtx_get(uint32_t domain, uint32_t name, uint32_t site, int mark)
{
	uint32_t key[4] = {domain, name, site, (uint32_t)mark};
	uint32_t h = hash_u32s(key, 4);
	for (uint32_t i = h % NVTX_MAX, probes = 0; probes < NVTX_MAX; i = (i + 1) % NVTX_MAX, probes++) {
		struct nvtx_stats *s = &t.nvtx[i];
		if (!s->used) {
			s->used = 1;
			s->domain = domain;
			s->name = name;
			s->site = site;
			s->mark = (uint8_t)mark;
		}
		if (s->domain == domain && s->name == name && s->site == site && s->mark == mark)
			return s;
	}
	t.nvtx_overflow++;
	return NULL;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t thread_id(void)
{
	if (!tls.tid)
		tls.tid = (uint32_t)syscall(SYS_gettid);
	return tls.tid;
}
