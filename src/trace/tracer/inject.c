/* inject: gpuopt's CUPTI tracer, loaded into a traced process by the CUDA
 * driver (CUDA_INJECTION64_PATH names this library; the driver calls
 * InitializeInjection inside the process's first cuInit).
 *
 * It loads libcupti at run time (never linked): GPUOPT_TRACE_CUPTI if set,
 * else a libcupti the process already loaded (PyTorch does), the
 * nvidia-*-cupti wheel beside a site-packages the process loaded from, the
 * toolkit's places ($CUDA_HOME, /usr/local/cuda*), then the loader's path.
 * It subscribes to the runtime and driver API callbacks of the calls that
 * matter (launches, copies, memsets, synchronizes, allocations, device
 * resets: classified by name, the table below), where the calling thread is
 * blocked and its Python line is read (pyframe.c, sites.c), and enables the
 * activity records that time the GPU side (kernels, copies, memsets,
 * synchronizations, memory, CUPTI's own overhead). Records are matched to
 * their call by correlation id, counted per site, per kernel, per stream
 * (idle time split as HTA does) and per device, and with --timeline also
 * appended to the events file.
 *
 * Flushed: every 2 s by a thread of its own (so a process that ends in
 * _exit keeps nearly everything), at cudaDeviceReset, at exit, and when a
 * signal that would end the process arrives (fatal_signals below) — the
 * handler wakes that thread, waits for it at most 3 s, then lets the
 * signal take its course: a fault re-executes its instruction, any other
 * signal is raised again, so the process ends as it would have untraced. If CUPTI cannot be used (not found,
 * another subscriber, too old) the process runs untraced and its summary
 * says why; with strict=1 the tracer ends it with TRACE_STRICT_EXIT. */
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <link.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pyframe.h"
#include "tracer.h"

#define EXPORT __attribute__((visibility("default")))

/* Zero-initialised (in .bss, not in the file): the lock's zero state is
 * PTHREAD_MUTEX_INITIALIZER on glibc; core_init_once sets the rest. */
struct tracer t;
__thread struct tls_state tls;

/* GPUOPT_TRACE_DIAG's CUPTI settings, for measuring what they cost:
 * zeroed_buffers=1 hands CUPTI buffers already zero (fresh pages) so that
 * it does not clear them on the launching thread; host_pinned=1 keeps its
 * kernel, copy and memset records in pinned host memory, not on the device;
 * per_thread_buffers=0 one buffer for all threads; device_buffer_mb=N its
 * device buffer per context; buffer_kb=N the buffers the tracer hands it.
 * -1 / 0: CUPTI's default. */
static struct { int zeroed, host_pinned, per_thread; size_t device_buffer, buffer; } diag_cupti = {0, -1, -1, 0, 0};

/* ---- libcupti, loaded at run time ---- */

#define CUPTI_FUNCS(X) \
	X(cuptiSubscribe) X(cuptiEnableCallback) X(cuptiGetCallbackName) \
	X(cuptiActivityEnable) X(cuptiActivityRegisterCallbacks) X(cuptiActivityGetNextRecord) \
	X(cuptiActivityFlushAll) X(cuptiActivityGetNumDroppedRecords) X(cuptiGetResultString) \
	X(cuptiGetVersion) X(cuptiGetTimestamp)
#define DECL(f) static __typeof__(f) *p_##f;
CUPTI_FUNCS(DECL)
static __typeof__(cuptiActivityFlushPeriod) *p_cuptiActivityFlushPeriod;
static __typeof__(cuptiActivityRegisterTimestampCallback) *p_cuptiActivityRegisterTimestampCallback;
static __typeof__(cuptiActivityEnableDriverApi) *p_cuptiActivityEnableDriverApi;
static __typeof__(cuptiActivityEnableRuntimeApi) *p_cuptiActivityEnableRuntimeApi;
static __typeof__(cuptiActivityDisable) *p_cuptiActivityDisable;
static __typeof__(cuptiActivitySetAttribute) *p_cuptiActivitySetAttribute;

static uint8_t runtime_op[API_MAX], driver_op[API_MAX];
/* copy calls that return before the copy ends ("...Async"): they do not drain the queue */
static uint8_t runtime_async[API_MAX], driver_async[API_MAX];
static uint64_t (*clock_now)(void) = now_ns;

static uint64_t cupti_clock(void)
{
	uint64_t ts = 0;
	p_cuptiGetTimestamp(&ts);
	return ts;
}

static int try_cupti(const char *path, const char *how)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
	int ok = 1;
#define LOAD(f) if (!(p_##f = (__typeof__(f) *)dlsym(h, #f))) ok = 0;
	CUPTI_FUNCS(LOAD)
	if (!ok) {
		snprintf(t.reason, sizeof t.reason, "%s is not a usable libcupti (a function is missing)", path);
		dlclose(h);
		return -1;
	}
	p_cuptiActivityFlushPeriod = (__typeof__(cuptiActivityFlushPeriod) *)dlsym(h, "cuptiActivityFlushPeriod");
	p_cuptiActivityRegisterTimestampCallback =
		(__typeof__(cuptiActivityRegisterTimestampCallback) *)dlsym(h, "cuptiActivityRegisterTimestampCallback");
	p_cuptiActivityEnableDriverApi = (__typeof__(cuptiActivityEnableDriverApi) *)dlsym(h, "cuptiActivityEnableDriverApi");
	p_cuptiActivityEnableRuntimeApi = (__typeof__(cuptiActivityEnableRuntimeApi) *)dlsym(h, "cuptiActivityEnableRuntimeApi");
	p_cuptiActivityDisable = (__typeof__(cuptiActivityDisable) *)dlsym(h, "cuptiActivityDisable");
	p_cuptiActivitySetAttribute = (__typeof__(cuptiActivitySetAttribute) *)dlsym(h, "cuptiActivitySetAttribute");
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0])
		snprintf(t.cupti_path, sizeof t.cupti_path, "%s", lm->l_name);
	else
		snprintf(t.cupti_path, sizeof t.cupti_path, "%s", path);
	snprintf(t.cupti_how, sizeof t.cupti_how, "%s", how);
	return 1;
}

struct phdr_search {
	char found[PATH_MAX];
	char sitepkgs[8][PATH_MAX];
	int nsite;
};

static int scan_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct phdr_search *s = data;
	const char *name = info->dlpi_name;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!s->found[0] && strncmp(base, "libcupti.so", 11) == 0)
		snprintf(s->found, sizeof s->found, "%s", name);
	const char *sp = strstr(name, "/site-packages/");
	if (sp && s->nsite < 8) {
		size_t n = (size_t)(sp - name) + strlen("/site-packages/");
		for (int i = 0; i < s->nsite; i++)
			if (strncmp(s->sitepkgs[i], name, n) == 0 && s->sitepkgs[i][n] == '\0')
				return 0;
		snprintf(s->sitepkgs[s->nsite], PATH_MAX, "%.*s", (int)n, name);
		s->nsite++;
	}
	return 0;
}

static int load_cupti(void)
{
	const char *explicit = getenv("GPUOPT_TRACE_CUPTI");
	if (explicit && *explicit) {
		int r = try_cupti(explicit, "--cupti");
		if (r == 0)
			snprintf(t.reason, sizeof t.reason, "cannot load libcupti %s (--cupti): %s", explicit, dlerror());
		return r == 1;
	}
	struct phdr_search s = {0};
	dl_iterate_phdr(scan_loaded, &s);
	if (s.found[0] && try_cupti(s.found, "already loaded by the program") == 1)
		return 1;
	for (int i = 0; i < s.nsite; i++) {
		char pat[PATH_MAX + 64];
		glob_t g;
		snprintf(pat, sizeof pat, "%snvidia/*/lib/libcupti.so*", s.sitepkgs[i]);
		if (glob(pat, 0, NULL, &g) == 0) {
			for (size_t k = g.gl_pathc; k-- > 0;)
				if (try_cupti(g.gl_pathv[k], "the nvidia cupti wheel") == 1) {
					globfree(&g);
					return 1;
				}
			globfree(&g);
		}
	}
	const char *homes[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	static const char *const subs[] = {"extras/CUPTI/lib64/libcupti.so", "lib64/libcupti.so",
					   "targets/x86_64-linux/lib/libcupti.so",
					   "targets/sbsa-linux/lib/libcupti.so"};
	for (int i = 0; i < 3; i++) {
		if (!homes[i] || !*homes[i])
			continue;
		for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s/%s", homes[i], subs[k]);
			if (access(p, R_OK) == 0 && try_cupti(p, "the CUDA toolkit") == 1)
				return 1;
		}
	}
	glob_t g;
	if (glob("/usr/local/cuda-*/targets/*/lib/libcupti.so", 0, NULL, &g) == 0) {
		for (size_t k = g.gl_pathc; k-- > 0;)
			if (try_cupti(g.gl_pathv[k], "the CUDA toolkit") == 1) {
				globfree(&g);
				return 1;
			}
		globfree(&g);
	}
	static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
		if (try_cupti(names[k], "the library path") == 1)
			return 1;
	if (!t.reason[0])
		snprintf(t.reason, sizeof t.reason,
			 "libcupti not found (looked in the program's libraries, the nvidia cupti wheel, "
			 "$CUDA_HOME, /usr/local/cuda*, the library path); give one with --cupti PATH");
	return 0;
}

/* ---- settings ---- */

/* KEY=N,KEY=N... from gpuopt trace (GPUOPT_TRACE_OPTS) or, for measuring
 * what the tracer's parts cost, from the user (GPUOPT_TRACE_DIAG:
 * runtime_api=0 drops the runtime-API callbacks, python_lines=0 the frame
 * walk; diag_cupti above).
 * Unknown keys are ignored. */
static void parse_opts(const char *o)
{
	while (o && *o) {
		char key[32];
		unsigned long long v = 0;
		int n = 0;
		if (sscanf(o, "%31[a-z_]=%llu%n", key, &v, &n) == 2) {
			if (!strcmp(key, "timeline"))
				t.timeline = v != 0;
			else if (!strcmp(key, "max_events"))
				t.max_events = v;
			else if (!strcmp(key, "full"))
				t.full = v != 0;
			else if (!strcmp(key, "strict"))
				t.strict = v != 0;
			else if (!strcmp(key, "kernel_wait_ns"))
				t.kernel_wait_ns = v;
			else if (!strcmp(key, "starved_gap_ns"))
				t.starved_gap_ns = v;
			else if (!strcmp(key, "runtime_api"))
				t.runtime_api = v != 0;
			else if (!strcmp(key, "python_lines"))
				t.python_lines = v != 0;
			else if (!strcmp(key, "sample"))
				t.sample = v != 0;
			else if (!strcmp(key, "sample_rate"))
				t.sample_rate = v;
			else if (!strcmp(key, "sample_period_ms"))
				t.sample_period_ns = v * 1000000ull;
			else if (!strcmp(key, "sample_on_ms"))
				t.sample_on_ns = v * 1000000ull;
			else if (!strcmp(key, "zeroed_buffers"))
				diag_cupti.zeroed = v != 0;
			else if (!strcmp(key, "host_pinned"))
				diag_cupti.host_pinned = v != 0;
			else if (!strcmp(key, "per_thread_buffers"))
				diag_cupti.per_thread = v != 0;
			else if (!strcmp(key, "device_buffer_mb") && v > 0 && v <= 4096)
				diag_cupti.device_buffer = (size_t)v << 20;
			else if (!strcmp(key, "buffer_kb") && v >= 64 && v <= (1u << 20))
				diag_cupti.buffer = (size_t)v << 10;
			o += n;
		}
		const char *c = strchr(o, ',');
		if (!c)
			break;
		o = c + 1;
	}
}

static void read_settings(void)
{
	const char *dir = getenv("GPUOPT_TRACE_DIR");
	snprintf(t.dir, sizeof t.dir, "%s", dir ? dir : "");
	t.max_events = 1000000;
	t.kernel_wait_ns = 30000;
	t.starved_gap_ns = 50000;
	t.callbacks = 1;
	t.runtime_api = 1;
	t.python_lines = 1;
	t.sample = 1; /* gpuopt trace samples unless --exact */
	t.sample_rate = 20000;
	t.sample_period_ns = 200000000ull;
	t.sample_on_ns = 0; /* no windows (gpuopt trace passes sample_on_ms) */
	snprintf(t.kinds, sizeof t.kinds, "kernel,memcpy,memset,sync,memory,overhead");
	parse_opts(getenv("GPUOPT_TRACE_OPTS"));
	parse_opts(getenv("GPUOPT_TRACE_DIAG"));
	if (t.full)
		snprintf(t.kinds, sizeof t.kinds, "kernel,memcpy,memset,sync,memory,overhead,runtime,driver");
	if (t.timeline || t.full)
		t.sample = 0; /* a timeline or --full keeps every kernel */
	if (t.sample_on_ns >= t.sample_period_ns)
		t.sample = 0;
	const char *k = getenv("GPUOPT_TRACE_KINDS");
	if (k)
		snprintf(t.kinds, sizeof t.kinds, "%s", k);
	const char *cb = getenv("GPUOPT_TRACE_CALLBACKS");
	if (cb && !strcmp(cb, "0"))
		t.callbacks = 0;
}

/* CUPTI's record kinds by their names in t.kinds; sampled: turned off
 * between the sampling windows. The kernel records come first: without
 * them there is no trace. */
static const struct {
	const char *name;
	CUpti_ActivityKind kind;
	int sampled;
} record_kinds[] = {
	{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY, 1},
	{"memset", CUPTI_ACTIVITY_KIND_MEMSET, 1}, {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 1},
	{"memory", CUPTI_ACTIVITY_KIND_MEMORY2, 1}, {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD, 1},
	{"runtime", CUPTI_ACTIVITY_KIND_RUNTIME, 0}, {"driver", CUPTI_ACTIVITY_KIND_DRIVER, 0},
};
#define NRECORD_KINDS (sizeof record_kinds / sizeof record_kinds[0])

static int kind_on(const char *name)
{
	size_t n = strlen(name);
	for (const char *p = t.kinds; (p = strstr(p, name)); p += n)
		if ((p == t.kinds || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* ---- the events file ---- */

static void events_write_out(void)
{
	if (t.events_fd < 0 || t.events_buffered == 0)
		return;
	const char *p = t.events_buf;
	size_t left = t.events_buffered;
	while (left) {
		ssize_t w = write(t.events_fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		left -= (size_t)w;
	}
	t.events_written += (t.events_buffered - left) / TRACE_EVENT_SIZE;
	t.events_buffered = 0;
}

void event_append(const struct trace_event *e)
{
	if (t.events_fd < 0)
		return;
	if (t.events_written + t.events_buffered / TRACE_EVENT_SIZE >= t.max_events) {
		t.events_dropped++;
		return;
	}
	if (t.events_buffered + TRACE_EVENT_SIZE > sizeof t.events_buf)
		events_write_out();
	memcpy(t.events_buf + t.events_buffered, e, TRACE_EVENT_SIZE);
	t.events_buffered += TRACE_EVENT_SIZE;
}

static void events_open(void)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%d.events", t.dir, t.pid);
	t.events_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t.events_fd < 0)
		return;
	char head[TRACE_EVENTS_HEADER];
	memcpy(head, TRACE_EVENTS_MAGIC, 8);
	uint32_t v = TRACE_EVENTS_VERSION, sz = TRACE_EVENT_SIZE;
	memcpy(head + 8, &v, 4);
	memcpy(head + 12, &sz, 4);
	if (write(t.events_fd, head, sizeof head) != (ssize_t)sizeof head) {
		close(t.events_fd);
		t.events_fd = -1;
	}
}

/* ---- flushing ---- */

static int wake_fd[2] = {-1, -1};
static sem_t flushed;
static volatile sig_atomic_t signal_pending;

/* Writes the events buffered and the summary (t.lock held). */
static void write_out(const char *why)
{
	snprintf(t.flush_reason, sizeof t.flush_reason, "%s", why);
	events_write_out();
	emit_summary();
}

/* pthread_mutex_timedlock with a limit in milliseconds: 1 if locked. */
static int lock_within(pthread_mutex_t *m, long ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(m, &until) == 0;
}

/* One flush at a time, and none of the flusher's once the process has
 * begun its flush at exit: a flush still inside CUPTI while the process
 * tears CUDA down can crash it (on the H200 a program died of SIGSEGV at
 * exit while the flusher asked CUPTI for records every 100 ms; the
 * flusher's own flushes come every 2 s or when the program goes quiet,
 * which is often just before it exits). */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static int exiting;

/* Delivers what CUPTI holds and writes the summary (and the events).
 * flush_lock held. */
static void flush_locked(const char *why, int forced)
{
	tls.busy++;
	if (t.cupti_ready && p_cuptiActivityFlushAll)
		p_cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	pthread_mutex_lock(&t.lock);
	write_out(why);
	pthread_mutex_unlock(&t.lock);
	tls.busy--;
}

/* flush_locked unless the exit's flush has begun; wait_ms < 0 waits for
 * flush_lock as long as it takes, else gives up after that long. */
static void flush_all_within(const char *why, int forced, long wait_ms)
{
	if (t.forked)
		return;
	if (wait_ms < 0)
		pthread_mutex_lock(&flush_lock);
	else if (!lock_within(&flush_lock, wait_ms))
		return;
	if (!__atomic_load_n(&exiting, __ATOMIC_ACQUIRE))
		flush_locked(why, forced);
	pthread_mutex_unlock(&flush_lock);
}

static void flush_all(const char *why, int forced)
{
	flush_all_within(why, forced, -1);
}

/* The summary of what is in hand, before CUPTI is asked for its buffers:
 * at a signal, the thread it stopped may be one that CUPTI's flush needs,
 * or hold t.lock (it is frozen in the handler, so the tables do not move:
 * after half a second they are read without the lock). */
static void write_in_hand(const char *why)
{
	int locked = lock_within(&t.lock, 500);
	write_out(why);
	if (locked)
		pthread_mutex_unlock(&t.lock);
}

/* Waits for a flush under way (2 s at most: one stuck inside CUPTI must
 * not hang the program's exit), then makes the last one. */
static void at_exit(void)
{
	if (t.finalized || t.forked)
		return;
	__atomic_store_n(&exiting, 1, __ATOMIC_RELEASE);
	int locked = lock_within(&flush_lock, 2000);
	flush_locked("exit", 1);
	t.finalized = 1;
	if (locked)
		pthread_mutex_unlock(&flush_lock);
}

static void *flusher(void *arg)
{
	(void)arg;
	tls.busy = 1; /* nothing this thread does is the program's */
	/* The summary is rewritten every 2 s while the program works, and as
	 * soon as it has been quiet for a quarter of a second with something
	 * not yet written: a pool worker that finished its task and is then
	 * killed (multiprocessing's terminate) leaves its trace even when the
	 * signal cannot be handled in time. */
	uint64_t seen = UINT64_MAX, last = 0, written_at = 0;
	for (;;) {
		struct pollfd p = {.fd = wake_fd[0], .events = POLLIN};
		int r = poll(&p, 1, 250);
		if (t.finalized)
			continue;
		if (r > 0) {
			int sig = 0;
			if (read(wake_fd[0], &sig, sizeof sig) == (ssize_t)sizeof sig) {
				t.signal = sig;
				write_in_hand("signal");
				/* the stopped thread may hold flush_lock (a reset's flush) */
				flush_all_within("signal", 1, 1000);
				t.finalized = 1;
				sem_post(&flushed);
			}
			continue;
		}
		uint64_t gen = t.records + t.t_last + t.nvtx_calls, now = now_ns();
		int quiet = gen == last;
		last = gen;
		if (gen != seen && (quiet || now - written_at >= 2000000000ull)) {
			seen = gen;
			written_at = now;
			flush_all("periodic", 0);
		}
	}
	return NULL;
}

/* Signals whose default action ends the process: the trace is saved
 * before it ends. The first ones are taken whatever handled them before
 * (their old action still runs after the save); the others only where
 * nothing handles or ignores them (Python turns SIGINT into
 * KeyboardInterrupt, and then exits normally; it ignores SIGPIPE and
 * SIGXFSZ). */
#define SIGNAL_MAX 65
static struct sigaction old_actions[SIGNAL_MAX];
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
static const int default_fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,
					    SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

/* A signal the kernel raised for a faulting instruction (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL with a positive si_code): returning re-executes the
 * instruction under the old action, which then gets the fault's own
 * siginfo. Every other signal, sent by kill / raise / sigqueue / tgkill
 * (si_code <= 0) or asynchronous, is raised again, or the program would
 * carry on as if it had never come (os.kill(os.getpid(), signal.SIGSEGV)
 * did, and exited 0). */
static int faulted(int sig, const siginfo_t *info)
{
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL)
		return 0;
	return info && info->si_code > 0;
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	int saved = errno;
	if (!signal_pending && !t.finalized && wake_fd[1] >= 0) {
		signal_pending = 1;
		if (write(wake_fd[1], &sig, sizeof sig) == (ssize_t)sizeof sig) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 3;
			while (sem_timedwait(&flushed, &until) < 0 && errno == EINTR)
				;
		}
	}
	sigaction(sig, &old_actions[sig], NULL);
	errno = saved;
	/* blocked until this handler returns, then delivered to the old action */
	if (!faulted(sig, info))
		raise(sig);
}

static void install_signal(int sig, int only_default)
{
	struct sigaction old;
	if (sig <= 0 || sig >= SIGNAL_MAX || sigaction(sig, NULL, &old) != 0)
		return;
	if (only_default && ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL))
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	old_actions[sig] = old;
	sigaction(sig, &sa, NULL);
}

static void install_signals(void)
{
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
		install_signal(fatal_signals[i], 0);
	for (size_t i = 0; i < sizeof default_fatal_signals / sizeof default_fatal_signals[0]; i++)
		install_signal(default_fatal_signals[i], 1);
}

static void in_child(void)
{
	/* CUDA does not survive fork; the child records nothing and writes no file. */
	t.forked = 1;
	t.events_fd = -1;
}

/* Starts a detached thread of the tracer's own, which takes no signal.
 * False when it could not be started. */
static int start_thread(void *(*fn)(void *))
{
	pthread_t th;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int ok = pthread_create(&th, &a, fn, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return ok;
}

static void core_init_once(void)
{
	t.events_fd = -1;
	read_settings();
	t.pid = (int)getpid();
	t.ppid = (int)getppid();
	t.t_start = now_ns();
	snprintf(t.status, sizeof t.status, "traced");
	t.py_ok = pyframe_init(t.py_version, sizeof t.py_version, t.py_why, sizeof t.py_why);
	if (!t.dir[0])
		return; /* not started by gpuopt trace: record nothing */
	if (t.timeline)
		events_open();
	if (pipe2(wake_fd, O_CLOEXEC) == 0) {
		sem_init(&flushed, 0, 0);
		start_thread(flusher);
	}
	pthread_atfork(NULL, NULL, in_child);
	atexit(at_exit);
	install_signals();
	t.core_ready = 1;
}

void tracer_core_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, core_init_once);
}

/* ---- API callbacks ---- */

/* Which calls are traced, by the callback's name (the _v2 / _ptsz / ...
 * suffixes stripped): launches, copies, memsets, synchronizes, allocations,
 * frees, resets. First match wins. */
static const struct { const char *prefix; uint8_t op; } api_classes[] = {
	{"cudaLaunchHostFunc", OP_NONE}, {"cuLaunchHostFunc", OP_NONE},
	{"cudaLaunch", OP_LAUNCH}, {"cuLaunch", OP_LAUNCH},
	{"cudaGraphLaunch", OP_LAUNCH}, {"cuGraphLaunch", OP_LAUNCH},
	{"cudaMemcpy", OP_MEMCPY}, {"cuMemcpy", OP_MEMCPY},
	{"cudaMemset", OP_MEMSET}, {"cuMemset", OP_MEMSET},
	{"cudaDeviceSynchronize", OP_SYNC}, {"cudaThreadSynchronize", OP_SYNC},
	{"cudaStreamSynchronize", OP_SYNC}, {"cudaEventSynchronize", OP_SYNC},
	{"cuCtxSynchronize", OP_SYNC}, {"cuStreamSynchronize", OP_SYNC}, {"cuEventSynchronize", OP_SYNC},
	{"cudaMallocHost", OP_ALLOC}, {"cudaHostAlloc", OP_ALLOC}, {"cudaMalloc", OP_ALLOC},
	{"cuMemAlloc", OP_ALLOC}, {"cuMemHostAlloc", OP_ALLOC},
	{"cudaFreeHost", OP_FREE}, {"cudaFree", OP_FREE}, {"cuMemFree", OP_FREE},
	{"cudaDeviceReset", OP_RESET}, {"cudaThreadExit", OP_RESET}, {"cuDevicePrimaryCtxReset", OP_RESET},
};

static uint8_t classify(const char *name)
{
	for (size_t i = 0; i < sizeof api_classes / sizeof api_classes[0]; i++) {
		size_t n = strlen(api_classes[i].prefix);
		if (strncmp(name, api_classes[i].prefix, n) == 0)
			return api_classes[i].op;
	}
	return OP_NONE;
}

/* The phase a call made now is in (PHASE_SAMPLED while sampling), and a
 * mark of it from the next call on, for phase_of_corr. Under t.lock. */
static uint16_t phase_now_locked(void)
{
	return (uint16_t)((t.phase & 0x7fffu) | (t.sampling ? PHASE_SAMPLED : 0));
}

static void phase_mark_locked(void)
{
	struct phase_mark *m = &t.phase_hist[t.phase_marks++ % PHASE_HIST];
	m->corr = t.last_corr + 1;
	m->phase = phase_now_locked();
}

/* ---- copy calls, read from their parameters ---- */

static CUresult (*p_cuPointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);

/* Host or device memory, as the driver says (unified addressing): memory
 * it does not know (plain malloc'd, pageable) is host memory. */
static int on_device(const void *ptr)
{
	if (!p_cuPointerGetAttribute)
		return -1;
	unsigned int type = 0;
	tls.busy++;
	CUresult r = p_cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)ptr);
	tls.busy--;
	if (r != CUDA_SUCCESS)
		return 0;
	return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY;
}

static enum trace_dir unified_dir(const void *dst, const void *src)
{
	int d = on_device(dst), s = on_device(src);
	if (d < 0 || s < 0)
		return DIR_OTHER;
	return s && d ? DIR_D2D : s ? DIR_D2H : d ? DIR_H2D : DIR_OTHER;
}

static enum trace_dir runtime_kind_dir(enum cudaMemcpyKind kind, const void *dst, const void *src)
{
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return DIR_H2D;
	case cudaMemcpyDeviceToHost:
		return DIR_D2H;
	case cudaMemcpyDeviceToDevice:
		return DIR_D2D;
	case cudaMemcpyDefault:
		return unified_dir(dst, src);
	default:
		return DIR_OTHER;
	}
}

enum trace_dir tracer_copy_call(int runtime, uint32_t cbid, const void *params, uint64_t *bytes)
{
	*bytes = 0;
	if (!params)
		return DIR_OTHER;
	if (runtime) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000: {
			const cudaMemcpy_v3020_params *p = params;
			*bytes = p->count;
			return runtime_kind_dir(p->kind, p->dst, p->src);
		}
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
			const cudaMemcpyAsync_v3020_params *p = params;
			*bytes = p->count;
			return runtime_kind_dir(p->kind, p->dst, p->src);
		}
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000: {
			const cudaMemcpy2D_v3020_params *p = params;
			*bytes = (uint64_t)p->width * p->height;
			return runtime_kind_dir(p->kind, p->dst, p->src);
		}
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000: {
			const cudaMemcpy2DAsync_v3020_params *p = params;
			*bytes = (uint64_t)p->width * p->height;
			return runtime_kind_dir(p->kind, p->dst, p->src);
		}
		default:
			return DIR_OTHER;
		}
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds:
		*bytes = ((const cuMemcpyDtoH_v2_params *)params)->ByteCount;
		return DIR_D2H;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz:
		*bytes = ((const cuMemcpyDtoHAsync_v2_params *)params)->ByteCount;
		return DIR_D2H;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds:
		*bytes = ((const cuMemcpyHtoD_v2_params *)params)->ByteCount;
		return DIR_H2D;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz:
		*bytes = ((const cuMemcpyHtoDAsync_v2_params *)params)->ByteCount;
		return DIR_H2D;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds:
		*bytes = ((const cuMemcpyDtoD_v2_params *)params)->ByteCount;
		return DIR_D2D;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz:
		*bytes = ((const cuMemcpyDtoDAsync_v2_params *)params)->ByteCount;
		return DIR_D2D;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds: {
		const cuMemcpy_params *p = params;
		*bytes = p->ByteCount;
		return unified_dir((const void *)(uintptr_t)p->dst, (const void *)(uintptr_t)p->src);
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz: {
		const cuMemcpyAsync_params *p = params;
		*bytes = p->ByteCount;
		return unified_dir((const void *)(uintptr_t)p->dst, (const void *)(uintptr_t)p->src);
	}
	default:
		return DIR_OTHER;
	}
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	if (tls.busy || t.forked || t.finalized || cbid >= API_MAX)
		return;
	const CUpti_CallbackData *cb = data;
	int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	uint8_t op = runtime ? runtime_op[cbid] : driver_op[cbid];
	if (op == OP_NONE)
		return;
	uint32_t corr = cb->correlationId;
	if (!runtime && tls.rt_depth > 0) {
		/* A driver call made by a traced runtime call: one operation, but
		 * its records may carry either id. */
		if (cb->callbackSite == CUPTI_API_ENTER) {
			pthread_mutex_lock(&t.lock);
			struct ring_entry *outer = &t.ring[tls.rt_corr % RING];
			if (outer->corr == tls.rt_corr) {
				struct ring_entry *e = &t.ring[corr % RING];
				*e = *outer;
				e->corr = corr;
			}
			t.nested_driver++;
			pthread_mutex_unlock(&t.lock);
		}
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (op == OP_RESET)
			flush_all("reset", 1);
		if (runtime) {
			tls.rt_depth++;
			tls.rt_corr = corr;
		}
		pthread_mutex_lock(&t.lock);
		uint32_t site = site_current_locked();
		uint64_t now = clock_now();
		/* work for a GPU this thread drained: it sat idle since */
		if (tls.drained_at && (op == OP_LAUNCH || op == OP_MEMCPY || op == OP_MEMSET)) {
			struct cnt *d = &t.stats[tls.drained_site].drained;
			d->n++;
			d->ns += now > tls.drained_at ? now - tls.drained_at : 0;
			tls.drained_at = 0;
		}
		if (cb->correlationData)
			*cb->correlationData = now;
		struct ring_entry *e = &t.ring[corr % RING];
		e->corr = corr;
		e->site = site;
		e->prev_site = tls.last_site;
		e->op = op;
		e->prev_op = tls.last_op;
		e->phase = phase_now_locked();
		t.last_corr = corr;
		e->api_ns = 0;
		e->enter = now;
		if (!t.t_first)
			t.t_first = now;
		pthread_mutex_unlock(&t.lock);
		return;
	}
	/* API exit */
	uint64_t now = clock_now();
	uint64_t enter = cb->correlationData ? *cb->correlationData : now;
	uint64_t dur = now > enter ? now - enter : 0;
	if (runtime && tls.rt_depth > 0)
		tls.rt_depth--;
	/* a copy's direction and size, read before the lock (it may ask the driver) */
	uint64_t bytes = 0;
	enum trace_dir dir = op == OP_MEMCPY ? tracer_copy_call(runtime, cbid, cb->functionParams, &bytes) : DIR_OTHER;
	pthread_mutex_lock(&t.lock);
	struct ring_entry *e = &t.ring[corr % RING];
	uint32_t site = e->corr == corr ? e->site : SITE_NONE;
	if (e->corr == corr)
		e->api_ns = dur > UINT32_MAX ? UINT32_MAX : (uint32_t)dur;
	struct site_stats *s = &t.stats[site];
	s->api[op].n++;
	s->api[op].ns += dur;
	int drains = op == OP_SYNC;
	if (op == OP_MEMCPY) {
		struct copystat *c = &s->copy_calls[dir];
		c->n++;
		c->bytes += bytes;
		c->ns += dur;
		drains = dir == DIR_D2H && !(runtime ? runtime_async : driver_async)[cbid];
	}
	/* the first call that left the GPU nothing to do counts the idle time */
	if (drains && !tls.drained_at) {
		tls.drained_at = now;
		tls.drained_site = site;
	}
	if (op == OP_LAUNCH)
		t.launches++;
	if (e->corr == corr && (e->phase & PHASE_SAMPLED)) {
		s->calls_s[op]++;
		t.calls_s[op]++;
		if (op == OP_LAUNCH)
			t.t_last_sampled_launch = now;
		if (PHASE_ON(e->phase)) {
			s->calls_s_on[op]++;
			t.calls_s_on[op]++;
		}
	}
	struct cnt *a = runtime ? &t.api_runtime[cbid] : &t.api_driver[cbid];
	a->n++;
	a->ns += dur;
	t.t_last = now;
	if (t.events_fd >= 0) {
		struct trace_event ev = {0};
		ev.type = EV_API;
		ev.kind = op;
		ev.correlation = corr;
		ev.start = enter;
		ev.end = now;
		ev.site = site;
		ev.tid = thread_id();
		ev.name = str_intern(cb->functionName ? cb->functionName : "",
				     cb->functionName ? (uint32_t)strlen(cb->functionName) : 0);
		event_append(&ev);
	}
	pthread_mutex_unlock(&t.lock);
	tls.last_site = site;
	tls.last_op = op;
}

/* ---- activity records ---- */

/* CUPTI returns a buffer when it is full (its periodic flush, every 100 ms,
 * returns only full ones), and a record must come back before the ring
 * entry of its call is reused: RING ids, which CuPy's 4 ids a launch use up
 * in 0.7 s at 100,000 launches a second. Recording everything, 4 MiB (about
 * 19,000 kernel records of 216 bytes) fills in a fifth of a second; sampled,
 * with a tenth of the records, it took seconds and the ring wrapped (H200,
 * CuPy: records no longer found their calls, estimates 0.70-0.73 of the
 * truth), so sampled runs take 256 KiB buffers (about 1,200 kernel
 * records), full in a fifth of a second at that rate.
 * (Asking for the records from the flusher every 100 ms instead, with
 * cuptiActivityFlushAll(0), delivered no buffer at all and the program died
 * of SIGSEGV at exit: H200, 2026-12-01.) */
#define BUF_SIZE (4u << 20)
#define BUF_SIZE_SAMPLED (256u << 10)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	size_t n = diag_cupti.buffer ? diag_cupti.buffer : t.sample ? BUF_SIZE_SAMPLED : BUF_SIZE;
	void *p = NULL;
	if (diag_cupti.zeroed)
		p = calloc(1, n); /* glibc maps a fresh zero mapping for sizes this large */
	else if (posix_memalign(&p, 8, n) != 0)
		p = NULL;
	*buffer = p;
	*size = p ? n : 0;
	*max_records = 0;
}

static enum trace_dir copy_dir(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return DIR_H2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return DIR_D2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return DIR_D2D;
	default:
		return DIR_OTHER;
	}
}

static enum trace_hostkind host_kind(uint8_t mem)
{
	if (mem == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
		return HK_PAGEABLE;
	if (mem == CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
		return HK_PINNED;
	return HK_OTHER;
}

static struct device_stats *device_at(uint32_t id)
{
	return id < DEVICE_MAX ? &t.devices[id] : NULL;
}

static int cmp_iv(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

void busy_flush(struct device_stats *d)
{
	qsort(d->batch, d->nbatch, sizeof d->batch[0], cmp_iv);
	for (uint32_t i = 0; i < d->nbatch; i++) {
		uint64_t s = d->batch[i][0], e = d->batch[i][1];
		if (!d->have_run) {
			d->run_start = s;
			d->run_end = e;
			d->have_run = 1;
		} else if (s > d->run_end) {
			d->busy += d->run_end - d->run_start;
			d->run_start = s;
			d->run_end = e;
		} else if (e > d->run_end) {
			d->run_end = e;
		}
	}
	d->nbatch = 0;
}

/* Of an idle gap of `gap` ns before an operation whose call came `host` ns
 * after the stream's last operation ended: the part the GPU took to start
 * the work once the call had queued it, beyond an ordinary launch latency
 * (t.kernel_wait_ns). The host was not late for that part: the GPU was
 * running other work (another process's context, time-sliced, or another
 * stream's kernels). On the H200, three programs sharing the GPU showed
 * tens of thousands of back-to-back kernels and a few hundred waits of up
 * to 7 ms, which counted whole as host wait read as host work between
 * launches (gpu-starved) in loops that only launch. */
static uint64_t held_gap(uint64_t gap, uint64_t host)
{
	if (host >= gap)
		return 0;
	uint64_t latency = gap - host;
	return latency > t.kernel_wait_ns ? latency - t.kernel_wait_ns : 0;
}

/* One GPU operation [start, end) on a device's stream, launched by the
 * call in ring entry e (NULL when unknown): busy time, and the idle gap
 * before it classified as HTA does; phase: the call's (phase_of_corr).
 * op: OP_LAUNCH, OP_MEMCPY or OP_MEMSET
 * (what the time recorded while sampling is scaled by); first: the first
 * launch of its kernel. */
static void gpu_op(uint32_t device, uint32_t stream, uint64_t start, uint64_t end,
		   const struct ring_entry *e, uint16_t phase, int first, int op)
{
	struct device_stats *d = device_at(device);
	if (d) {
		d->used = 1;
		if (!d->first || start < d->first)
			d->first = start;
		if (end > d->last)
			d->last = end;
		if (d->nbatch == BUSY_BATCH)
			busy_flush(d);
		d->batch[d->nbatch][0] = start;
		d->batch[d->nbatch][1] = end;
		d->nbatch++;
	}
	struct stream_stats *s = stream_get(device, stream);
	if (!s)
		return;
	/* An idle gap is measured only between two operations of one phase in
	 * which kernels were recorded: across a sampling window's edge, or while
	 * kernels are not recorded, the operations between are not all seen. */
	int sampled = (phase & PHASE_SAMPLED) != 0;
	int same = !s->have_last || phase == s->last_phase;
	s->last_phase = phase;
	s->events++;
	s->busy_ns += end > start ? end - start : 0;
	if (sampled)
		*(op == OP_LAUNCH ? &s->busy_s : op == OP_MEMCPY ? &s->busy_copy_s : &s->busy_set_s) +=
			end > start ? end - start : 0;
	if (s->have_last && same && PHASE_ON(phase) && start >= s->last_end) {
		uint64_t gap = start - s->last_end;
		int k;
		if (e && e->enter > s->last_end) {
			k = 0;
			uint64_t held = held_gap(gap, e->enter - s->last_end);
			gap -= held;
			s->host_wait_ns += gap;
			s->host_wait_n++;
			uint8_t cls = first ? GAP_WARMUP : gap < t.starved_gap_ns ? GAP_SHORT : GAP_LONG;
			if (first) {
				s->warmup_ns += gap;
				s->warmup_n++;
			}
			gap_add(e->prev_site, e->prev_op, e->site, cls, gap, sampled && !first);
			if (held) {
				s->other_ns += held;
				s->other_n++;
				s->held_ns += held;
				s->held_n++;
				if (sampled && !first) {
					s->gap_s[2][0]++;
					s->gap_s[2][1] += held;
					s->held_s[0]++;
					s->held_s[1] += held;
				}
			}
		} else if (gap < t.kernel_wait_ns) {
			k = 1;
			s->kernel_wait_ns += gap;
			s->kernel_wait_n++;
		} else {
			k = 2;
			s->other_ns += gap;
			s->other_n++;
		}
		if (sampled && !first) {
			s->gap_s[k][0]++;
			s->gap_s[k][1] += gap;
		}
	}
	if (!s->have_last || end > s->last_end)
		s->last_end = end;
	s->have_last = 1;
}

/* The phase of the call with id corr, whose ring entry (e, or NULL) may
 * have been overwritten by a later call: the newest mark at or before it
 * (ids grow by one per call, modulo 2^32); 0, recorded and not sampled,
 * before the first mark or past the history. Under t.lock. */
static uint16_t phase_of_corr(uint32_t corr, const struct ring_entry *e)
{
	if (e)
		return e->phase;
	for (uint64_t k = t.phase_marks; k > 0 && t.phase_marks - k < PHASE_HIST; k--) {
		const struct phase_mark *m = &t.phase_hist[(k - 1) % PHASE_HIST];
		if ((int32_t)(corr - m->corr) >= 0)
			return m->phase;
	}
	return 0;
}

static const struct ring_entry *ring_find(uint32_t corr)
{
	const struct ring_entry *e = &t.ring[corr % RING];
	if (e->corr == corr && corr != 0)
		return e;
	if (t.unattributed < 8) {
		t.unmatched[t.unattributed][0] = corr;
		t.unmatched[t.unattributed][1] = e->corr;
	}
	t.unattributed++;
	return NULL;
}

static void copy_add(struct copystat *c, uint64_t bytes, uint64_t ns, int sync)
{
	c->n++;
	c->bytes += bytes;
	c->ns += ns;
	c->sync += (uint64_t)(sync != 0);
}

/* CUPTI writes 0 for both times of a record it could not time (and CUPTI
 * before CUDA 13.1 did so wrongly with a timestamp callback registered, as
 * here, at the start of a collection); an end before the start is as
 * useless. Such a record is counted, but its time and place on the
 * timeline are left out (t.untimed says how many). Its duration (0 for
 * one of those); *bad: whether it was one. */
static uint64_t record_ns(uint64_t start, uint64_t end, int *bad)
{
	*bad = start == 0 || end < start;
	t.untimed += (uint64_t)*bad;
	return *bad ? 0 : end - start;
}

static void record(const CUpti_Activity *r)
{
	t.records++;
	struct trace_event ev = {0};
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)r;
		const struct ring_entry *e = ring_find(k->correlationId);
		uint32_t site = e ? e->site : SITE_NONE;
		int bad;
		uint64_t dur = record_ns(k->start, k->end, &bad);
		/* pytorch/pytorch#192021: kernels recorded at the start of a
		 * collection that "began" before their own launch */
		t.early += (uint64_t)(!bad && e && e->enter && k->start + 1000 < e->enter);
		struct site_stats *s = &t.stats[site];
		s->kernel.n++;
		s->kernel.ns += dur;
		int is_short = !bad && e && e->api_ns && dur < e->api_ns;
		uint16_t phase = phase_of_corr(k->correlationId, e);
		int sampled = (phase & PHASE_SAMPLED) != 0;
		if (is_short)
			s->kernel_short++;
		if (sampled) {
			s->kernel_s.n++;
			s->kernel_s.ns += dur;
			s->kernel_short_s += (uint64_t)is_short;
		}
		struct kernel_stats *ks = kernel_get(k->name);
		int first = ks && ks->n == 0;
		if (ks) {
			ks->n++;
			ks->ns += dur;
			if (!bad && dur < ks->min)
				ks->min = dur;
			if (dur > ks->max)
				ks->max = dur;
			if (sampled) {
				ks->n_s++;
				ks->ns_s += dur;
			}
		}
		struct device_stats *d = device_at(k->deviceId);
		if (d) {
			d->kernel_ns += dur;
			d->kernels++;
			if (sampled) {
				d->kernel_ns_s += dur;
				d->kernels_s++;
			}
		}
		if (bad)
			break;
		gpu_op(k->deviceId, k->streamId, k->start, k->end, e, phase, first, OP_LAUNCH);
		ev.type = EV_KERNEL;
		ev.flags = (uint8_t)is_short;
		ev.device = k->deviceId;
		ev.stream = k->streamId;
		ev.correlation = k->correlationId;
		ev.start = k->start;
		ev.end = k->end;
		ev.name = ks ? ks->name : 0;
		ev.site = site;
		ev.grid[0] = (uint32_t)k->gridX;
		ev.grid[1] = (uint32_t)k->gridY;
		ev.grid[2] = (uint32_t)k->gridZ;
		ev.block[0] = (uint32_t)k->blockX;
		ev.block[1] = (uint32_t)k->blockY;
		ev.block[2] = (uint32_t)k->blockZ;
		event_append(&ev);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;
		const struct ring_entry *e = ring_find(m->correlationId);
		uint32_t site = e ? e->site : SITE_NONE;
		int bad;
		uint64_t dur = record_ns(m->start, m->end, &bad);
		enum trace_dir dir = copy_dir(m->copyKind);
		enum trace_hostkind hk = dir == DIR_H2D ? host_kind(m->srcKind)
				       : dir == DIR_D2H ? host_kind(m->dstKind) : HK_OTHER;
		int async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
		uint16_t phase = phase_of_corr(m->correlationId, e);
		int sampled = (phase & PHASE_SAMPLED) != 0;
		copy_add(&t.stats[site].copy[dir][hk], m->bytes, dur, !async);
		if (sampled)
			copy_add(&t.stats[site].copy_s[dir][hk], m->bytes, dur, !async);
		struct device_stats *d = device_at(m->deviceId);
		if (d) {
			d->memcpy_ns += dur;
			d->memcpys++;
			if (sampled) {
				d->memcpy_ns_s += dur;
				d->memcpys_s++;
			}
		}
		if (bad)
			break;
		gpu_op(m->deviceId, m->streamId, m->start, m->end, e, phase, 0, OP_MEMCPY);
		ev.type = EV_MEMCPY;
		ev.kind = (uint8_t)dir;
		ev.hostkind = (uint8_t)hk;
		ev.flags = (uint8_t)async;
		ev.device = m->deviceId;
		ev.stream = m->streamId;
		ev.correlation = m->correlationId;
		ev.start = m->start;
		ev.end = m->end;
		ev.bytes = m->bytes;
		ev.site = site;
		ev.grid[0] = m->srcKind;
		ev.grid[1] = m->dstKind;
		ev.grid[2] = m->copyKind;
		event_append(&ev);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		const struct ring_entry *e = ring_find(m->correlationId);
		uint32_t site = e ? e->site : SITE_NONE;
		int bad;
		uint64_t dur = record_ns(m->start, m->end, &bad);
		uint16_t phase = phase_of_corr(m->correlationId, e);
		int sampled = (phase & PHASE_SAMPLED) != 0;
		copy_add(&t.stats[site].memset, m->bytes, dur, 0);
		if (sampled)
			copy_add(&t.stats[site].memset_s, m->bytes, dur, 0);
		struct device_stats *d = device_at(m->deviceId);
		if (d) {
			d->memset_ns += dur;
			d->memsets++;
			if (sampled) {
				d->memset_ns_s += dur;
				d->memsets_s++;
			}
		}
		if (bad)
			break;
		gpu_op(m->deviceId, m->streamId, m->start, m->end, e, phase, 0, OP_MEMSET);
		ev.type = EV_MEMSET;
		ev.device = m->deviceId;
		ev.stream = m->streamId;
		ev.correlation = m->correlationId;
		ev.start = m->start;
		ev.end = m->end;
		ev.bytes = m->bytes;
		ev.site = site;
		event_append(&ev);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)r;
		const struct ring_entry *e = &t.ring[s->correlationId % RING];
		uint32_t type = s->type < 8 ? s->type : 0;
		t.sync_records[type][0]++;
		t.sync_records[type][1] += s->end > s->start ? s->end - s->start : 0;
		if (phase_of_corr(s->correlationId, e->corr == s->correlationId ? e : NULL) & PHASE_SAMPLED) {
			t.sync_records_s[type][0]++;
			t.sync_records_s[type][1] += s->end > s->start ? s->end - s->start : 0;
		}
		ev.type = EV_SYNC;
		ev.kind = (uint8_t)type;
		ev.stream = s->streamId;
		ev.correlation = s->correlationId;
		ev.start = s->start;
		ev.end = s->end;
		ev.site = e->corr == s->correlationId ? e->site : SITE_NONE;
		event_append(&ev);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const CUpti_ActivityMemory4 *m = (const void *)r;
		struct device_stats *d = device_at(m->deviceId);
		if (!d || m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
			break;
		if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
			d->mem_now += (int64_t)m->bytes;
			d->allocs++;
			if (d->mem_now > d->mem_peak)
				d->mem_peak = d->mem_now;
		} else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
			d->mem_now -= (int64_t)m->bytes;
			d->frees++;
		}
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		/* --full: every API call; those the callbacks trace are counted there. */
		const CUpti_ActivityAPI *a = (const void *)r;
		int runtime = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
		if (a->cbid >= API_MAX || (runtime ? runtime_op : driver_op)[a->cbid] != OP_NONE)
			break;
		struct cnt *c = runtime ? &t.api_runtime[a->cbid] : &t.api_driver[a->cbid];
		c->n++;
		c->ns += a->end > a->start ? a->end - a->start : 0;
		const char *name = tracer_api_name(runtime, a->cbid);
		ev.type = EV_API;
		ev.kind = OP_NONE;
		ev.correlation = a->correlationId;
		ev.start = a->start;
		ev.end = a->end > a->start ? a->end : a->start;
		ev.tid = a->threadId;
		uint32_t len = name ? (uint32_t)strlen(name) : 0;
		const char *v = name ? strstr(name, "_v") : NULL; /* "cudaFree_v3020" -> "cudaFree" */
		if (v && v[2] >= '0' && v[2] <= '9')
			len = (uint32_t)(v - name);
		ev.name = name ? str_intern(name, len) : 0;
		event_append(&ev);
		break;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = (const void *)r;
		uint32_t k = (uint32_t)o->overheadKind;
		uint32_t slot = k == CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER ? 15 : (k >> 16) & 15;
		t.overhead[slot][0]++;
		t.overhead[slot][1] += o->end > o->start ? o->end - o->start : 0;
		break;
	}
	default:
		break;
	}
}

void tracer_record_locked(const void *activity)
{
	record(activity);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	int busy = tls.busy++;
	(void)busy;
	pthread_mutex_lock(&t.lock);
	t.buffers++;
	CUpti_Activity *r = NULL;
	unsigned chunk = 0;
	while (valid && p_cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		record(r);
		if (++chunk == 256) { /* let the program's callbacks in */
			chunk = 0;
			pthread_mutex_unlock(&t.lock);
			pthread_mutex_lock(&t.lock);
		}
	}
	size_t dropped = 0;
	if (p_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		t.dropped += dropped;
	pthread_mutex_unlock(&t.lock);
	(void)size;
	free(buffer);
	tls.busy--;
}

/* ---- record sampling ----
 *
 * CUPTI's activity records are what cost in a loop of tiny launches:
 * measured on the H200, 1.30-1.77x on 20,000 PyTorch launches with every
 * record, against 1.07-1.10x for the callbacks and Python lines alone. So
 * when launches come faster than sample_rate per second (about 3 us of
 * CUPTI's time each: 6% at the default 20,000/s) for 20 ms, the run enters
 * its sampled stretch and every sampled record kind goes off. By default
 * they stay off until the stretch ends: turning CUPTI's records on again in
 * a running process leaves its launches slow for the rest of it, records on
 * or off (H200, session 12: one window of 10 ms in the loop, then nothing,
 * cost 1.73x on 20,000 cudaLaunchKernel calls, windows of 10 ms every 200
 * 1.63x, 1.27x on PyTorch's loop and 1.22x on CuPy's; the records off once
 * the stretch began, never on again, 1.22x, 1.07x and 1.07x, against
 * 1.14x, 1.09x and 1.17x for the callbacks alone: bench/results/README.md).
 * The callbacks still count every call, by line, with its host time, and
 * emit.c counts the stretch's launches one kernel each at the mean time of
 * the kernels recorded before it (per line where the line has some). With
 * sample_on (sample_window_ms) > 0 the records come back sample_on of every
 * sample_period instead (the first window at most 90 ms in), and emit.c
 * scales what they recorded by calls / calls recorded (calls_s_on). When the
 * rate falls below half the threshold for 100 ms the run goes back to
 * recording everything. On unless --exact, --timeline or --full. One thread
 * decides; it calls CUPTI without holding t.lock (the buffer callbacks take
 * it), and counts CUPTI's refusals.
 * As a window closes its kinds go off and CUPTI's buffers are then flushed
 * (forced), the order CUPTI's guide gives between turning a kind off and on
 * again. Without that flush (H200, sessions 8-10), a window's kernel records
 * came back in some processes and not at all in others; with it, most
 * windows' records came back (8 of 10 processes, session 10). emit.c's
 * weights and the report's "records lost" line answer a window that keeps
 * none. */

#define SAMPLER_TICK_NS 5000000ull /* sample.c decides at each tick */

/* Turns the sampled kinds on or off, and after turning them off delivers
 * what CUPTI holds (a forced flush; skipped once the exit's flush has
 * begun, or when another flush holds the lock for 100 ms). A failure to
 * switch a kind is counted (under t.lock) and written in the summary, not
 * retried; so is the time it took. */
static void set_sampled_records(int on)
{
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < NRECORD_KINDS; i++)
		if (record_kinds[i].sampled && kind_on(record_kinds[i].name)) {
			CUptiResult r = (on ? p_cuptiActivityEnable : p_cuptiActivityDisable)(record_kinds[i].kind);
			if (r != CUPTI_SUCCESS) {
				pthread_mutex_lock(&t.lock);
				t.sample_toggle_errors++;
				t.sample_toggle_last = (int)r;
				pthread_mutex_unlock(&t.lock);
			}
		}
	if (!on && lock_within(&flush_lock, 100)) {
		if (!__atomic_load_n(&exiting, __ATOMIC_ACQUIRE) && t.cupti_ready && p_cuptiActivityFlushAll)
			p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		pthread_mutex_unlock(&flush_lock);
	}
	uint64_t dt = now_ns() - t0;
	pthread_mutex_lock(&t.lock);
	t.sample_toggles++;
	t.sample_toggle_ns += dt;
	if (dt > t.sample_toggle_max_ns)
		t.sample_toggle_max_ns = dt;
	pthread_mutex_unlock(&t.lock);
}

static void *sampler(void *arg)
{
	(void)arg;
	tls.busy = 1; /* what CUPTI does on this thread is not the program's */
	struct sample_clock clock = {.last_t = now_ns()};
	struct timespec tick = {0, (long)SAMPLER_TICK_NS};
	while (!t.finalized && !t.forked) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&t.lock);
		int change = sample_tick_locked(&clock, now_ns(), t.launches); /* -1 none, 0 off, 1 on */
		if (change == 1)
			t.phase++; /* the phase first: a launch in between counts as recorded */
		if (change >= 0)
			phase_mark_locked();
		pthread_mutex_unlock(&t.lock);
		if (change < 0)
			continue;
		set_sampled_records(change);
		if (change == 0) {
			pthread_mutex_lock(&t.lock);
			t.phase++;
			phase_mark_locked();
			pthread_mutex_unlock(&t.lock);
		}
	}
	return NULL;
}

static void start_sampler(void)
{
	if (!t.sample || !p_cuptiActivityDisable || !kind_on("kernel"))
		return;
	if (!start_thread(sampler))
		t.sample = 0;
}

/* ---- start ---- */

static void fail(const char *api, CUptiResult r, const char *what)
{
	const char *s = NULL;
	if (p_cuptiGetResultString)
		p_cuptiGetResultString(r, &s);
	snprintf(t.error_api, sizeof t.error_api, "%s", api);
	t.error_code = (int)r;
	snprintf(t.error_name, sizeof t.error_name, "%s", s ? s : "?");
	if (!t.reason[0])
		snprintf(t.reason, sizeof t.reason, "%s: %s", what, s ? s : "error");
}

/* diag_cupti's settings, before the buffers are registered; one CUPTI
 * refuses is noted on stderr (a diagnosis, not a trace, depends on it). */
static void set_diag_attributes(void)
{
	struct { CUpti_ActivityAttribute a; const char *name; int on; uint8_t v8; size_t vz; int is_size; } set[] = {
		{CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, "zeroed_buffers", diag_cupti.zeroed, 1, 0, 0},
		{CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, "host_pinned", diag_cupti.host_pinned >= 0,
		 (uint8_t)(diag_cupti.host_pinned > 0), 0, 0},
		{CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, "per_thread_buffers", diag_cupti.per_thread >= 0,
		 (uint8_t)(diag_cupti.per_thread > 0), 0, 0},
		{CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, "device_buffer_mb", diag_cupti.device_buffer != 0, 0,
		 diag_cupti.device_buffer, 1},
	};
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
		if (!set[i].on)
			continue;
		size_t n = set[i].is_size ? sizeof(size_t) : sizeof(uint8_t);
		void *v = set[i].is_size ? (void *)&set[i].vz : (void *)&set[i].v8;
		CUptiResult r = p_cuptiActivitySetAttribute ? p_cuptiActivitySetAttribute(set[i].a, &n, v)
			      : CUPTI_ERROR_NOT_SUPPORTED;
		if (r != CUPTI_SUCCESS)
			fprintf(stderr, "gpuopt trace: GPUOPT_TRACE_DIAG %s: CUPTI refused it (%d)\n", set[i].name,
				(int)r);
	}
}

static int add_library(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	size_t used = strlen(t.libraries), n = strlen(info->dlpi_name);
	if (n && used + n + 2 < sizeof t.libraries) {
		memcpy(t.libraries + used, info->dlpi_name, n);
		t.libraries[used + n] = '\n';
		t.libraries[used + n + 1] = '\0';
	}
	return 0;
}

static void not_traced(void)
{
	snprintf(t.status, sizeof t.status, "not-traced");
	fprintf(stderr, "gpuopt: trace: process %d: %s; it runs untraced\n", t.pid, t.reason);
	if (t.core_ready)
		flush_all("start", 0);
	if (t.strict) {
		fprintf(stderr, "gpuopt: trace: --strict: stopping process %d\n", t.pid);
		_exit(TRACE_STRICT_EXIT);
	}
}

static void driver_version(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!cuda)
		return;
	int (*get)(int *) = (int (*)(int *))dlsym(cuda, "cuDriverGetVersion");
	if (get)
		get(&t.driver_version);
	dlclose(cuda);
}

static int cupti_major(uint32_t v)
{
	return v >= 130000 ? (int)(v / 10000) : v >= 19 ? 12 : v >= 13 ? 11 : 10;
}

EXPORT int InitializeInjection(void);
int InitializeInjection(void)
{
	static int done;
	if (done++)
		return 1;
	tracer_core_init();
	if (!t.core_ready)
		return 1; /* loaded outside gpuopt trace */
	tls.busy++;
	driver_version();
	if (!load_cupti()) {
		tls.busy--;
		not_traced();
		return 1;
	}
	p_cuptiGetVersion(&t.cupti_version);
	CUpti_SubscriberHandle sub;
	CUptiResult r = p_cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			t.conflict = 1;
			dl_iterate_phdr(add_library, NULL);
		}
		fail("cuptiSubscribe", r, r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
		     ? "another CUPTI subscriber is active in this process (CUDA allows one)"
		     : "cannot subscribe to CUPTI");
		if (t.driver_version && cupti_major(t.cupti_version) < t.driver_version / 1000) {
			size_t n = strlen(t.reason);
			snprintf(t.reason + n, sizeof t.reason - n,
				 " (libcupti %s is for CUDA %d, older than the driver's CUDA %d.%d: "
				 "use the CUPTI of a matching toolkit, --cupti PATH)",
				 t.cupti_path, cupti_major(t.cupti_version), t.driver_version / 1000,
				 (t.driver_version % 1000) / 10);
		}
		tls.busy--;
		not_traced();
		return 1;
	}
	if (t.callbacks) {
		const char *name;
		for (CUpti_CallbackId id = 1; id < API_MAX; id++) {
			if (t.runtime_api &&
			    p_cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_SUCCESS && name &&
			    (runtime_op[id] = classify(name)) != OP_NONE) {
				runtime_async[id] = strstr(name, "Async") != NULL;
				p_cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
			}
			if (p_cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS && name &&
			    (driver_op[id] = classify(name)) != OP_NONE) {
				driver_async[id] = strstr(name, "Async") != NULL;
				p_cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
			}
		}
		/* the driver, loaded by now, says whether an address is on the device */
		void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (cuda)
			p_cuPointerGetAttribute = (CUresult(*)(void *, CUpointer_attribute, CUdeviceptr))dlsym(
				cuda, "cuPointerGetAttribute");
	}
	if (p_cuptiActivityRegisterTimestampCallback &&
	    p_cuptiActivityRegisterTimestampCallback(now_ns) == CUPTI_SUCCESS)
		clock_now = now_ns;
	else
		clock_now = cupti_clock;
	set_diag_attributes();
	r = p_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		fail("cuptiActivityRegisterCallbacks", r, "cannot register CUPTI's activity buffers");
		tls.busy--;
		not_traced();
		return 1;
	}
	for (size_t i = 0; i < NRECORD_KINDS; i++) {
		if (!kind_on(record_kinds[i].name))
			continue;
		r = p_cuptiActivityEnable(record_kinds[i].kind);
		if (r != CUPTI_SUCCESS && i == 0) {
			fail("cuptiActivityEnable", r, "cannot enable CUPTI's kernel records");
			tls.busy--;
			not_traced();
			return 1;
		}
	}
	/* Full buffers back within 100 ms (see BUF_SIZE). */
	if (p_cuptiActivityFlushPeriod)
		p_cuptiActivityFlushPeriod(100);
	t.cupti_ready = 1;
	start_sampler();
	tls.busy--;
	return 1;
}

const char *tracer_api_name(int runtime, uint32_t cbid)
{
	const char *name = NULL;
	if (!p_cuptiGetCallbackName ||
	    p_cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
				   &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

void tracer_nvtx_status(const char *s)
{
	snprintf(t.nvtx_status, sizeof t.nvtx_status, "%s", s);
}
