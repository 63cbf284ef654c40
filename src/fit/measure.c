/* measure: see measure.h. The child process measures and writes its results
 * as JSON ({"gpus": [ceilings...], "errors": [...]}, the ceilings in their
 * cache format) to a pipe; the parent decodes them with ceilings_decode, the
 * same reader the cache uses. */
#include "measure.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/fileio.h"
#include "core/runner.h"
#include "core/smaps.h"
#include "core/stats.h"
#include "core/util.h"
#include "core/version.h"
#include "gpu/cudadrv.h"
#include "gpu/gpuinfo.h"
#include "spin_ptx.h"

enum {
	SPIN_TIMEOUT_NS = 5000000000ull, /* the spin kernel gives up after 5 s */
	MAX_REPS_QUEUED = 64,            /* copies queued behind one spin kernel */
	MAX_REPS_IDLE = 128,             /* pageable copies per trial */
	LAUNCHES_HOST = 1000,            /* empty launches per trial, enqueue cost */
	LAUNCHES_QUEUED = 100,           /* empty launches behind the spin kernel */
	SYNC_CALLS = 1000,               /* synchronize calls per trial */
	LAUNCH_SYNC_CALLS = 100,         /* launch + synchronize per trial */
};
#define TARGET_TRIAL_BYTES (64ull << 20) /* copies per trial: about this much */
#define NUMPY_OFFSET 16 /* where glibc puts a large malloc in its mapping (numpy_like_alloc) */
#define FIRST_TOUCH_BYTES (256ull << 20)
#define D2D_BYTES (1ull << 30)
#define PEER_BYTES (256ull << 20)

size_t measure_sizes(uint64_t max_bytes, unsigned step, uint64_t *sizes, size_t cap)
{
	size_t n = 0;
	if (step < 2)
		step = 2;
	for (uint64_t s = 4096; s <= max_bytes && n < cap; s *= step)
		sizes[n++] = s;
	return n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *size_text(uint64_t b)
{
	if (b >= (1ull << 30) && b % (1ull << 30) == 0)
		return xasprintf("%llu GiB", (unsigned long long)(b >> 30));
	if (b >= (1ull << 20) && b % (1ull << 20) == 0)
		return xasprintf("%llu MiB", (unsigned long long)(b >> 20));
	return xasprintf("%llu KiB", (unsigned long long)(b >> 10));
}

/* ---- the child ---- */

struct dev {
	int ordinal;
	cu_device dev;
	cu_context ctx;
	bool retained;
	cu_module mod;
	cu_function spin, empty;
	cu_stream stream;
	cu_event ev0, ev1;
	volatile unsigned *flag; /* [0] release, [1] the spin kernel timed out; mapped */
	cu_deviceptr flag_dev;
	cu_deviceptr a, b;       /* device buffers of max bytes */
	void *pinned, *pageable; /* host buffers of max bytes */
	uint64_t max;
	bool spin_timed_out;
};

struct m {
	struct cudadrv cu;
	const struct measure_opts *o;
	char *err; /* the first failure, owned */
};

static bool failed(struct m *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool failed(struct m *m, const char *fmt, ...)
{
	if (m->err)
		return false;
	va_list ap;
	va_start(ap, fmt);
	struct buf b = {0};
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	m->err = buf_steal(&b);
	return false;
}

#define CK(m, call, what)                                                                    \
	do {                                                                                 \
		cu_result rc_ = (call);                                                      \
		if (rc_ != 0)                                                                \
			return failed(m, "%s: %s", what, cudadrv_error(&(m)->cu, rc_));      \
	} while (0)

static void progress(const struct m *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const struct m *m, const char *fmt, ...)
{
	if (!m->o->progress)
		return;
	struct buf line = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&line, fmt, ap);
	va_end(ap);
	diag_error("fit: %s", line.data ? line.data : ""); /* the GPU's name made safe with the rest */
	buf_free(&line);
}

/* "0-15,32-47" -> the set; false when it names no CPU. */
static bool parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	int count = 0;
	while (s && *s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0)
			return false;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return false;
		}
		for (long c = a; c <= b && c < CPU_SETSIZE; c++, count++)
			CPU_SET((int)c, set);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return count > 0;
}

static bool several_numa_nodes(void)
{
	struct stat st;
	return stat("/sys/devices/system/node/node1", &st) == 0;
}

/* Runs this thread near the GPU and takes host memory from its node. */
static void pin_near(const char *bus_id, struct ceilings *c)
{
	int node = -1;
	char *cpus = NULL;
	c->numa_node = -1;
	if (!gpu_pci_locality(bus_id, &node, &cpus))
		return;
	cpu_set_t set;
	if (cpus && parse_cpulist(cpus, &set) && sched_setaffinity(0, sizeof set, &set) == 0)
		c->cpus = xstrdup(cpus);
	if (node >= 0 && several_numa_nodes()) {
		unsigned long mask[16] = {0};
		if (node < (int)(sizeof mask * 8)) {
			mask[node / (8 * sizeof *mask)] |= 1ul << (node % (8 * sizeof *mask));
			if (syscall(SYS_set_mempolicy, 1 /* MPOL_PREFERRED */, mask, sizeof mask * 8) == 0)
				c->numa_node = node;
		}
	}
	free(cpus);
}

static void unpin(void)
{
	syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0);
}

static bool dev_open(struct m *m, struct dev *d, int ordinal)
{
	struct cudadrv *cu = &m->cu;
	memset(d, 0, sizeof *d);
	d->ordinal = ordinal;
	CK(m, cu->device_get(&d->dev, ordinal), "cuDeviceGet");
	CK(m, cu->primary_ctx_retain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain");
	d->retained = true;
	CK(m, cu->ctx_set_current(d->ctx), "cuCtxSetCurrent");
	cu_result rc = cu->module_load_data(&d->mod, fit_spin_ptx);
	if (rc != 0)
		return failed(m, "cannot load the spin kernel's PTX (%s): %s", fit_spin_ptx_origin,
			      cudadrv_error(cu, rc));
	CK(m, cu->module_get_function(&d->spin, d->mod, "gpuopt_spin"), "cuModuleGetFunction(gpuopt_spin)");
	CK(m, cu->module_get_function(&d->empty, d->mod, "gpuopt_empty"), "cuModuleGetFunction(gpuopt_empty)");
	CK(m, cu->stream_create(&d->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	CK(m, cu->event_create(&d->ev0, CU_EVENT_DEFAULT), "cuEventCreate");
	CK(m, cu->event_create(&d->ev1, CU_EVENT_DEFAULT), "cuEventCreate");
	void *flag;
	CK(m, cu->mem_host_alloc(&flag, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
	   "cuMemHostAlloc(flag)");
	d->flag = flag;
	d->flag[0] = d->flag[1] = 0;
	CK(m, cu->mem_host_get_device_pointer(&d->flag_dev, flag, 0), "cuMemHostGetDevicePointer");
	return true;
}

/* Fresh anonymous memory as NumPy takes it for a large array: its
 * allocator asks Linux for transparent huge pages (madvise MADV_HUGEPAGE)
 * on allocations of 4 MiB and more, which makes first touches far cheaper
 * than with 4 KiB pages. NULL (errno set) on failure; free with
 * numpy_like_free. */
static void *numpy_like_alloc(uint64_t bytes)
{
	/* glibc serves a large malloc from a mapping of its own and returns
	 * the address 16 bytes into it (the chunk header), so NumPy's arrays
	 * start 16 bytes past a page boundary; copies into such a buffer were
	 * measured up to 30% slower than into a page-aligned one (device to
	 * host, on the H200's VM), so the buffer starts there too. */
	size_t len = (size_t)bytes + NUMPY_OFFSET;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (bytes >= (4ull << 20))
		madvise(p, len, MADV_HUGEPAGE);
#endif
	return p + NUMPY_OFFSET;
}

/* Frees what numpy_like_alloc returned for bytes. */
static void numpy_like_free(void *mem, uint64_t bytes)
{
	if (mem)
		munmap((char *)mem - NUMPY_OFFSET, (size_t)bytes + NUMPY_OFFSET);
}

/* Host and device buffers of the largest size that fits: max_bytes, halved
 * while two device buffers and two host buffers do not fit. */
static bool dev_buffers(struct m *m, struct dev *d, uint64_t want, size_t free_dev)
{
	struct cudadrv *cu = &m->cu;
	uint64_t max = want;
	while (max > (4ull << 20) && 2 * max + (512ull << 20) > free_dev)
		max /= 2;
	long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t avail = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;
	while (max > (4ull << 20) && 2 * max + FIRST_TOUCH_BYTES + (512ull << 20) > avail)
		max /= 2;
	d->max = max;
	CK(m, cu->mem_alloc(&d->a, max), "cuMemAlloc");
	CK(m, cu->mem_alloc(&d->b, max), "cuMemAlloc");
	CK(m, cu->memset_d8(d->a, 0x5a, max), "cuMemsetD8");
	CK(m, cu->memset_d8(d->b, 0xa5, max), "cuMemsetD8");
	CK(m, cu->mem_host_alloc(&d->pinned, max, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
	memset(d->pinned, 0x3c, max);
	d->pageable = numpy_like_alloc(max);
	if (!d->pageable)
		return failed(m, "cannot map %llu bytes of host memory: %s", (unsigned long long)max,
			      strerror(errno));
	memset(d->pageable, 0xc3, max); /* touched: reused memory, as a program's own arrays */
	return true;
}

static void dev_close(struct m *m, struct dev *d)
{
	struct cudadrv *cu = &m->cu;
	if (!d->retained)
		return;
	cu->ctx_set_current(d->ctx);
	cu->ctx_synchronize();
	if (d->a)
		cu->mem_free(d->a);
	if (d->b)
		cu->mem_free(d->b);
	if (d->pinned)
		cu->mem_free_host(d->pinned);
	if (d->pageable)
		numpy_like_free(d->pageable, d->max);
	if (d->flag)
		cu->mem_free_host((void *)d->flag);
	if (d->ev0)
		cu->event_destroy(d->ev0);
	if (d->ev1)
		cu->event_destroy(d->ev1);
	if (d->stream)
		cu->stream_destroy(d->stream);
	if (d->mod)
		cu->module_unload(d->mod);
	cu->primary_ctx_release(d->dev);
	memset(d, 0, sizeof *d);
}

static bool spin_launch(struct m *m, struct dev *d)
{
	d->flag[0] = 0;
	d->flag[1] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	unsigned long long timeout = SPIN_TIMEOUT_NS;
	cu_deviceptr timed_out = d->flag_dev + sizeof(unsigned);
	void *params[] = {&d->flag_dev, &timeout, &timed_out};
	CK(m, m->cu.launch_kernel(d->spin, 1, 1, 1, 1, 1, 1, 0, d->stream, params, NULL),
	   "cuLaunchKernel(gpuopt_spin)");
	return true;
}

static void spin_release(struct dev *d)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	d->flag[0] = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

enum copy { C_H2D, C_D2H, C_D2D, C_PEER };

struct copy_spec {
	enum copy kind;
	void *host;                 /* C_H2D, C_D2H */
	cu_deviceptr src, dst;      /* device side */
	cu_context src_ctx, dst_ctx; /* C_PEER */
	uint64_t bytes;
	unsigned reps;
	bool spin;
};

static bool enqueue_copy(struct m *m, struct dev *d, const struct copy_spec *s)
{
	struct cudadrv *cu = &m->cu;
	switch (s->kind) {
	case C_H2D:
		CK(m, cu->memcpy_htod_async(s->dst, s->host, s->bytes, d->stream), "cuMemcpyHtoDAsync");
		break;
	case C_D2H:
		CK(m, cu->memcpy_dtoh_async(s->host, s->src, s->bytes, d->stream), "cuMemcpyDtoHAsync");
		break;
	case C_D2D:
		CK(m, cu->memcpy_dtod_async(s->dst, s->src, s->bytes, d->stream), "cuMemcpyDtoDAsync");
		break;
	case C_PEER:
		CK(m, cu->memcpy_peer_async(s->dst, s->dst_ctx, s->src, s->src_ctx, s->bytes, d->stream),
		   "cuMemcpyPeerAsync");
		break;
	}
	return true;
}

/* One trial: reps copies between two events, behind the spin kernel when
 * s->spin. *seconds is the events' time for all of them. */
static bool trial(struct m *m, struct dev *d, const struct copy_spec *s, double *seconds)
{
	struct cudadrv *cu = &m->cu;
	if (s->spin && !spin_launch(m, d))
		return false;
	CK(m, cu->event_record(d->ev0, d->stream), "cuEventRecord");
	for (unsigned r = 0; r < s->reps; r++)
		if (!enqueue_copy(m, d, s)) {
			if (s->spin)
				spin_release(d);
			return false;
		}
	CK(m, cu->event_record(d->ev1, d->stream), "cuEventRecord");
	if (s->spin)
		spin_release(d);
	CK(m, cu->event_synchronize(d->ev1), "cuEventSynchronize");
	float ms = 0;
	CK(m, cu->event_elapsed_time(&ms, d->ev0, d->ev1), "cuEventElapsedTime");
	if (s->spin && d->flag[1]) {
		d->spin_timed_out = true;
		return failed(m, "the spin kernel timed out: enqueuing %u copies took more than %.0f s",
			      s->reps, SPIN_TIMEOUT_NS / 1e9);
	}
	*seconds = (double)ms / 1e3;
	return true;
}

/* Median and coefficient of variation of x[0..n). */
static void median_cv(const double *x, size_t n, double *median, double *cv)
{
	struct summary sm;
	stats_summarize(x, n, &sm);
	*median = sm.median;
	*cv = n > 1 && sm.mean > 0 ? sm.sd / sm.mean : 0;
}

static unsigned reps_for(uint64_t bytes, bool spin)
{
	uint64_t r = (TARGET_TRIAL_BYTES + bytes - 1) / bytes;
	unsigned cap = spin ? MAX_REPS_QUEUED : MAX_REPS_IDLE;
	return r < 1 ? 1 : r > cap ? cap : (unsigned)r;
}

/* One size: a warm-up trial, then o->trials timed ones. counted is the
 * bytes one copy counts for the rate (2 x bytes for device-to-device). */
static bool point(struct m *m, struct dev *d, struct copy_spec *s, uint64_t counted,
		  struct ceil_point *p)
{
	unsigned n = m->o->trials;
	double *t = xcalloc(n, sizeof *t), warm;
	bool ok = trial(m, d, s, &warm);
	for (unsigned i = 0; ok && i < n; i++)
		ok = trial(m, d, s, &t[i]);
	if (ok) {
		double med, cv;
		median_cv(t, n, &med, &cv);
		p->bytes = s->bytes;
		p->reps = s->reps;
		p->trials = n;
		p->seconds = med / s->reps;
		p->gbps = (double)counted / p->seconds / 1e9;
		p->cv = cv;
	}
	free(t);
	return ok;
}

static bool curves(struct m *m, struct dev *d, struct ceilings *c, const char *label)
{
	uint64_t sizes[CEIL_MAX_POINTS];
	size_t n = measure_sizes(d->max, m->o->step, sizes, CEIL_MAX_POINTS);
	static const enum ceil_kind order[] = {CEIL_H2D_PINNED, CEIL_D2H_PINNED, CEIL_H2D_PAGEABLE,
					       CEIL_D2H_PAGEABLE};
	char *lo = size_text(sizes[0]), *hi = size_text(sizes[n - 1]);
	for (size_t k = 0; k < 4; k++) {
		enum ceil_kind kind = order[k];
		bool pinned = kind == CEIL_H2D_PINNED || kind == CEIL_D2H_PINNED;
		bool h2d = kind == CEIL_H2D_PINNED || kind == CEIL_H2D_PAGEABLE;
		progress(m, "%s: %s copies, %s to %s", label, ceil_kind_text(kind), lo, hi);
		for (size_t i = 0; i < n; i++) {
			struct copy_spec s = {.kind = h2d ? C_H2D : C_D2H,
					      .host = pinned ? d->pinned : d->pageable,
					      .src = d->a, .dst = d->a, .bytes = sizes[i],
					      .reps = reps_for(sizes[i], pinned), .spin = pinned};
			if (!point(m, d, &s, sizes[i], &c->curve[kind][i])) {
				free(lo);
				free(hi);
				return false;
			}
			c->npoints[kind] = i + 1;
		}
	}
	free(lo);
	free(hi);
	return true;
}

/* Pageable copies of memory never used before: a fresh mapping per trial,
 * taken as NumPy takes it (numpy_like_alloc), written by the CPU first for
 * host->device, untouched for device->host, as cupy.asnumpy's new array is. */
static bool first_touch(struct m *m, struct dev *d, struct ceilings *c, const char *label)
{
	uint64_t bytes = d->max < FIRST_TOUCH_BYTES ? d->max : FIRST_TOUCH_BYTES;
	char *sz = size_text(bytes);
	progress(m, "%s: first-touch pageable copies, %s", label, sz);
	free(sz);
	for (int dir = 0; dir < 2; dir++) {
		unsigned n = m->o->trials, nhuge = 0;
		double *t = xcalloc(n, sizeof *t), *huge = xcalloc(n, sizeof *huge);
		bool ok = true;
		for (unsigned i = 0; ok && i < n; i++) {
			void *mem = numpy_like_alloc(bytes);
			if (!mem) {
				ok = failed(m, "mmap of %llu bytes: %s", (unsigned long long)bytes, strerror(errno));
				break;
			}
			if (dir == 0)
				memset(mem, 0x42, bytes);
			struct copy_spec s = {.kind = dir == 0 ? C_H2D : C_D2H, .host = mem, .src = d->a,
					      .dst = d->b, .bytes = bytes, .reps = 1};
			ok = trial(m, d, &s, &t[i]);
			double share = smaps_huge_share_self(mem, bytes); /* after the copy, untimed */
			if (share >= 0)
				huge[nhuge++] = share;
			numpy_like_free(mem, bytes);
		}
		c->huge_share_first_touch[dir] = nhuge == n ? stats_median(huge, n) : -1;
		free(huge);
		if (ok) {
			struct ceil_point *p = &c->first_touch[dir];
			double med, cv;
			median_cv(t, n, &med, &cv);
			*p = (struct ceil_point){.bytes = bytes, .seconds = med, .gbps = (double)bytes / med / 1e9,
						 .cv = cv, .trials = n, .reps = 1};
			c->have_first_touch[dir] = true;
		}
		free(t);
		if (!ok)
			return false;
	}
	return true;
}

static bool d2d(struct m *m, struct dev *d, struct ceilings *c, const char *label)
{
	uint64_t bytes = d->max < D2D_BYTES ? d->max : D2D_BYTES;
	char *sz = size_text(bytes);
	progress(m, "%s: device-to-device copies, %s", label, sz);
	free(sz);
	struct copy_spec s = {.kind = C_D2D, .src = d->a, .dst = d->b, .bytes = bytes,
			      .reps = reps_for(bytes, true) < 8 ? 8 : reps_for(bytes, true), .spin = true};
	if (!point(m, d, &s, 2 * bytes, &c->d2d))
		return false;
	c->have_d2d = true;
	return true;
}

static bool launch(struct m *m, struct dev *d, cu_function f)
{
	CK(m, m->cu.launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, d->stream, NULL, NULL), "cuLaunchKernel");
	return true;
}

static void set_time(struct ceil_time *t, double *us, unsigned n)
{
	median_cv(us, n, &t->us, &t->cv);
	t->n = n;
}

static bool latencies(struct m *m, struct dev *d, struct ceilings *c, const char *label)
{
	struct cudadrv *cu = &m->cu;
	unsigned n = m->o->trials;
	double *t = xcalloc(n, sizeof *t);
	bool ok = true;
	progress(m, "%s: launch and synchronize latencies", label);
	/* warm up the kernel (the first launch loads it) */
	ok = launch(m, d, d->empty) && cu->stream_synchronize(d->stream) == 0;
	for (unsigned i = 0; ok && i < n; i++) { /* host cost of one launch */
		double t0 = now_s();
		for (unsigned k = 0; ok && k < LAUNCHES_HOST; k++)
			ok = launch(m, d, d->empty);
		t[i] = (now_s() - t0) / LAUNCHES_HOST * 1e6;
		if (ok && cu->stream_synchronize(d->stream) != 0)
			ok = failed(m, "cuStreamSynchronize failed");
	}
	if (ok)
		set_time(&c->launch, t, n);
	for (unsigned i = 0; ok && i < n; i++) { /* GPU time per launch, back to back */
		ok = spin_launch(m, d) && cu->event_record(d->ev0, d->stream) == 0;
		for (unsigned k = 0; ok && k < LAUNCHES_QUEUED; k++)
			ok = launch(m, d, d->empty);
		ok = ok && cu->event_record(d->ev1, d->stream) == 0;
		spin_release(d);
		float ms = 0;
		ok = ok && cu->event_synchronize(d->ev1) == 0 &&
		     cu->event_elapsed_time(&ms, d->ev0, d->ev1) == 0;
		if (ok && d->flag[1])
			ok = failed(m, "the spin kernel timed out behind %d launches", LAUNCHES_QUEUED);
		t[i] = (double)ms * 1e3 / LAUNCHES_QUEUED;
	}
	if (ok)
		set_time(&c->launch_gpu, t, n);
	for (unsigned i = 0; ok && i < n; i++) { /* launch and wait */
		double t0 = now_s();
		for (unsigned k = 0; ok && k < LAUNCH_SYNC_CALLS; k++)
			ok = launch(m, d, d->empty) && cu->stream_synchronize(d->stream) == 0;
		t[i] = (now_s() - t0) / LAUNCH_SYNC_CALLS * 1e6;
	}
	if (ok)
		set_time(&c->launch_sync, t, n);
	for (unsigned i = 0; ok && i < n; i++) { /* synchronize an idle stream */
		double t0 = now_s();
		for (unsigned k = 0; ok && k < SYNC_CALLS; k++)
			ok = cu->stream_synchronize(d->stream) == 0;
		t[i] = (now_s() - t0) / SYNC_CALLS * 1e6;
	}
	if (ok)
		set_time(&c->sync, t, n);
	free(t);
	if (!ok)
		failed(m, "a launch or synchronize failed");
	return ok;
}

static char *method_text(const struct m *m, const struct ceilings *c, const struct dev *d)
{
	char *lo = size_text(4096), *hi = size_text(d->max);
	char *where;
	if (c->cpus && c->numa_node >= 0)
		where = xasprintf("the CPUs near the GPU (%s), host memory from NUMA node %d", c->cpus,
				  c->numa_node);
	else if (c->cpus)
		where = xasprintf("the CPUs near the GPU (%s)", c->cpus);
	else
		where = xstrdup("any CPU (sysfs does not say which are near the GPU)");
	char *t = xasprintf(
		"CUDA driver API. Pinned host<->device and device-to-device copies are queued behind a spin "
		"kernel (%s) that waits until the host has enqueued them, then timed with CUDA events; "
		"pageable copies, which make the host wait while they are staged, are timed with events on "
		"an idle stream, from and to memory mapped as NumPy maps large arrays (transparent huge "
		"pages asked for); first-touch copies use such memory fresh each trial. Sizes %s to %s by x%u; per size one warm-up, then the median of %u trials "
		"(cv = sd/mean of the trials), each of up to %d copies (about 64 MiB). Device-to-device "
		"counts bytes read + written. Measured on %s.",
		fit_spin_ptx_origin, lo, hi, m->o->step, m->o->trials, MAX_REPS_QUEUED, where);
	free(where);
	free(lo);
	free(hi);
	return t;
}

static bool measure_one(struct m *m, const struct measure_target *t, struct dev *d,
			struct ceilings *c)
{
	struct cudadrv *cu = &m->cu;
	char *label = xasprintf("GPU %d (%s)", t->cuda_index, t->name ? t->name : "?");
	pin_near(t->pci_bus_id, c);
	bool ok = dev_open(m, d, t->cuda_index);
	size_t freeb = 0, total = 0;
	if (ok && cu->mem_get_info(&freeb, &total) != 0)
		ok = failed(m, "cuMemGetInfo failed");
	c->memory_free_bytes = freeb;
	c->memory_total_bytes = total;
	ok = ok && dev_buffers(m, d, m->o->max_bytes, freeb);
	c->huge_share_pageable = c->huge_share_first_touch[0] = c->huge_share_first_touch[1] = -1;
	if (ok)
		c->huge_share_pageable = smaps_huge_share_self(d->pageable, d->max);
	ok = ok && curves(m, d, c, label) && first_touch(m, d, c, label) && d2d(m, d, c, label) &&
	     latencies(m, d, c, label);
	if (ok)
		c->method = method_text(m, c, d);
	free(label);
	unpin();
	return ok;
}

static bool peer_copies(struct m *m, struct dev *devs, const struct measure_target *targets,
			size_t n, int count, struct ceilings *out)
{
	struct cudadrv *cu = &m->cu;
	/* open every other GPU too, for its context and a buffer */
	struct dev *all = xcalloc((size_t)count, sizeof *all);
	cu_deviceptr *bufs = xcalloc((size_t)count, sizeof *bufs);
	bool ok = true;
	for (int j = 0; ok && j < count; j++) {
		size_t i;
		for (i = 0; i < n && targets[i].cuda_index != j; i++)
			;
		if (i < n && devs[i].retained) {
			all[j] = devs[i];
			continue;
		}
		ok = dev_open(m, &all[j], j) && cu->mem_alloc(&bufs[j], PEER_BYTES) == 0;
		if (ok) {
			all[j].b = bufs[j];
			all[j].max = PEER_BYTES;
		}
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct dev *src = &all[targets[i].cuda_index];
		struct ceilings *c = &out[i];
		struct ceilings where = {0}; /* run near the GPU the copies start from */
		pin_near(targets[i].pci_bus_id, &where);
		free(where.cpus);
		c->peers = xcalloc((size_t)count * 2, sizeof *c->peers);
		for (int j = 0; ok && j < count; j++) {
			if (j == targets[i].cuda_index)
				continue;
			struct dev *dst = &all[j];
			uint64_t bytes = PEER_BYTES;
			if (src->max < bytes)
				bytes = src->max;
			if (dst->max < bytes)
				bytes = dst->max;
			int can = 0;
			ok = cu->device_can_access_peer(&can, src->dev, dst->dev) == 0;
			for (int access = 0; ok && access <= can; access++) {
				progress(m, "GPU %d -> GPU %d: copies %s peer access", targets[i].cuda_index, j,
					 access ? "with" : "without");
				if (access) { /* both ways, as nvbandwidth does */
					cu->ctx_set_current(dst->ctx);
					cu_result r1 = cu->ctx_enable_peer_access(src->ctx, 0);
					cu->ctx_set_current(src->ctx);
					cu_result r2 = cu->ctx_enable_peer_access(dst->ctx, 0);
					if ((r1 && r1 != CU_ERROR_PEER_ACCESS_ALREADY_ENABLED) ||
					    (r2 && r2 != CU_ERROR_PEER_ACCESS_ALREADY_ENABLED))
						ok = failed(m, "cuCtxEnablePeerAccess: %s",
							    cudadrv_error(cu, r1 ? r1 : r2));
				}
				cu->ctx_set_current(src->ctx);
				struct copy_spec s = {.kind = C_PEER, .src = src->a, .dst = dst->b,
						      .src_ctx = src->ctx, .dst_ctx = dst->ctx, .bytes = bytes,
						      .reps = reps_for(bytes, true), .spin = true};
				struct ceil_peer *p = &c->peers[c->npeers];
				ok = ok && point(m, src, &s, bytes, &p->pt);
				if (ok) {
					p->to_cuda_index = j;
					p->peer_access = access;
					for (size_t k = 0; k < n; k++)
						if (targets[k].cuda_index == j && targets[k].uuid)
							p->to_uuid = xstrdup(targets[k].uuid);
					c->npeers++;
				}
				if (access) { /* leave it as it was */
					cu->ctx_disable_peer_access(dst->ctx);
					cu->ctx_set_current(dst->ctx);
					cu->ctx_disable_peer_access(src->ctx);
					cu->ctx_set_current(src->ctx);
				}
			}
		}
	}
	unpin();
	for (int j = 0; j < count; j++) {
		bool measured = false;
		for (size_t i = 0; i < n; i++)
			measured |= targets[i].cuda_index == j;
		if (!measured) {
			if (bufs[j])
				cu->mem_free(bufs[j]);
			all[j].b = 0;
			dev_close(m, &all[j]);
		}
	}
	free(bufs);
	free(all);
	return ok;
}

/* The child's whole work; writes the JSON answer to fd and exits. */
static void child_main(const struct measure_opts *o, const struct measure_target *targets, size_t n,
		       const char *driver, const char *cuda_driver, int fd)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	struct m m = {.o = o};
	json_t *answer = json_object(), *gpus = json_array(), *errors = json_array();
	char *why = NULL;
	if (!cudadrv_open(&m.cu, &why)) {
		json_object_set_new(answer, "error", json_string(why));
	} else if (cudadrv_missing(&m.cu)) {
		char *msg = xasprintf("libcuda.so.1 lacks %s (driver too old for gpuopt fit)",
				      cudadrv_missing(&m.cu));
		json_object_set_new(answer, "error", json_string(msg));
		free(msg);
	} else {
		int count = 0;
		m.cu.device_get_count(&count);
		struct dev *devs = xcalloc(n ? n : 1, sizeof *devs);
		struct ceilings *out = xcalloc(n ? n : 1, sizeof *out);
		bool *good = xcalloc(n ? n : 1, sizeof *good);
		for (size_t i = 0; i < n; i++) {
			struct ceilings *c = &out[i];
			c->cuda_index = targets[i].cuda_index;
			if (targets[i].cuda_index < 0 || targets[i].cuda_index >= count) {
				json_array_append_new(errors, json_pack("{s:i, s:s}", "cuda_index",
									targets[i].cuda_index, "error",
									"CUDA does not see this GPU"));
				continue;
			}
			good[i] = measure_one(&m, &targets[i], &devs[i], c);
			if (!good[i]) {
				json_array_append_new(errors, json_pack("{s:i, s:s}", "cuda_index",
									targets[i].cuda_index, "error", m.err));
				free(m.err);
				m.err = NULL;
				dev_close(&m, &devs[i]);
			}
		}
		if (o->peers && count > 1) {
			size_t ngood = 0;
			for (size_t i = 0; i < n; i++)
				ngood += good[i];
			struct measure_target *gt = xcalloc(ngood + 1, sizeof *gt);
			struct dev *gd = xcalloc(ngood + 1, sizeof *gd);
			struct ceilings *gc = xcalloc(ngood + 1, sizeof *gc);
			size_t k = 0;
			for (size_t i = 0; i < n; i++)
				if (good[i]) {
					gt[k] = targets[i];
					gd[k] = devs[i];
					gc[k++] = out[i];
				}
			if (!peer_copies(&m, gd, gt, ngood, count, gc)) {
				json_array_append_new(errors, json_pack("{s:i, s:s}", "cuda_index", -1, "error",
									m.err ? m.err : "peer copies failed"));
				free(m.err);
				m.err = NULL;
			}
			k = 0;
			for (size_t i = 0; i < n; i++)
				if (good[i])
					out[i] = gc[k++];
			free(gt);
			free(gd);
			free(gc);
		}
		for (size_t i = 0; i < n; i++) {
			if (!good[i])
				continue;
			struct ceilings *c = &out[i];
			c->gpuopt_version = xstrdup(GPUOPT_VERSION);
			c->measured_at = utc_now_text();
			c->gpu_uuid = xstrdup(targets[i].uuid ? targets[i].uuid : "GPU-unknown");
			c->gpu_name = targets[i].name ? xstrdup(targets[i].name) : NULL;
			c->pci_bus_id = targets[i].pci_bus_id ? xstrdup(targets[i].pci_bus_id) : NULL;
			c->driver_version = xstrdup(driver ? driver : "unknown");
			c->cuda_driver_version = cuda_driver ? xstrdup(cuda_driver) : NULL;
			json_array_append_new(gpus, ceilings_to_json(c));
			dev_close(&m, &devs[i]);
		}
		for (size_t i = 0; i < n; i++)
			ceilings_free(&out[i]);
		free(devs);
		free(out);
		free(good);
	}
	free(why);
	json_object_set_new(answer, "gpus", gpus);
	json_object_set_new(answer, "errors", errors);
	char *text = json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(9));
	_exit(text && write_all(fd, text, strlen(text)) ? 0 : 1);
}

/* ---- the parent ---- */

struct child_args {
	const struct measure_opts *o;
	const struct measure_target *targets;
	size_t n;
	const char *driver, *cuda_driver;
};

static void child_entry(void *arg, int fd)
{
	const struct child_args *a = arg;
	child_main(a->o, a->targets, a->n, a->driver, a->cuda_driver, fd);
}

bool measure_run(const struct measure_opts *o, const struct measure_target *targets, size_t n,
		 const char *driver_version, const char *cuda_driver_version, struct ceilings *out,
		 char **errors, char **why)
{
	*why = NULL;
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		errors[i] = NULL;
	}
	struct child_args args = {o, targets, n, driver_version, cuda_driver_version};
	struct buf text = {0};
	struct fork_result res;
	if (!runner_fork_read(child_entry, &args, o->timeout_s, &text, &res)) {
		*why = xasprintf("cannot start the measuring process: %s", strerror(errno));
		buf_free(&text);
		return false;
	}
	bool timed_out = res.timed_out;
	int status = res.status;
	if (timed_out) {
		*why = xasprintf("the measurement did not finish within %g s (--timeout)", o->timeout_s);
		buf_free(&text);
		return false;
	}
	if (WIFSIGNALED(status)) {
		*why = xasprintf("the measuring process crashed (signal %d)", WTERMSIG(status));
		buf_free(&text);
		return false;
	}
	json_error_t jerr;
	json_t *answer = text.len ? json_loadb(text.data, text.len, 0, &jerr) : NULL;
	buf_free(&text);
	if (!answer) {
		*why = xstrdup("the measuring process returned nothing");
		return false;
	}
	const char *err = json_string_value(json_object_get(answer, "error"));
	if (err) {
		*why = xstrdup(err);
		json_decref(answer);
		return false;
	}
	size_t k;
	json_t *e;
	json_array_foreach(json_object_get(answer, "errors"), k, e) {
		int idx = (int)json_integer_value(json_object_get(e, "cuda_index"));
		const char *msg = json_string_value(json_object_get(e, "error"));
		for (size_t i = 0; i < n; i++)
			if ((targets[i].cuda_index == idx || idx < 0) && !errors[i])
				errors[i] = xstrdup(msg ? msg : "failed");
	}
	size_t measured = 0;
	json_t *g;
	json_array_foreach(json_object_get(answer, "gpus"), k, g) {
		char *dump = json_dumps(g, JSON_COMPACT | JSON_REAL_PRECISION(9));
		struct ceilings c;
		char *derr = NULL;
		if (dump && ceilings_decode(dump, strlen(dump), &c, &derr)) {
			for (size_t i = 0; i < n; i++)
				if (targets[i].cuda_index == c.cuda_index && !out[i].gpu_uuid) {
					out[i] = c;
					memset(&c, 0, sizeof c);
					measured++;
					break;
				}
			ceilings_free(&c);
		}
		free(derr);
		free(dump);
	}
	json_decref(answer);
	if (measured == 0) {
		*why = xstrdup(n && errors[0] ? errors[0] : "no GPU could be measured");
		return false;
	}
	return true;
}
