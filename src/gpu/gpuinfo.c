/* gpuinfo: see gpuinfo.h. The few NVML and CUDA driver declarations needed
 * are written here (their C ABI has been stable for years), so no CUDA
 * header or library is needed to build. */
#include "gpuinfo.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/util.h"

/* ---- NVML ---- */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_utilization {
	unsigned int gpu, memory;
};
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };

struct nvml {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*driver_version)(char *, unsigned);
	nvml_return (*nvml_version)(char *, unsigned);
	nvml_return (*cuda_driver_version)(int *);
	nvml_return (*count)(unsigned *);
	nvml_return (*handle)(unsigned, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned);
	nvml_return (*uuid)(nvml_device, char *, unsigned);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
	nvml_return (*clock)(nvml_device, int, unsigned *);
	nvml_return (*max_clock)(nvml_device, int, unsigned *);
	nvml_return (*capability)(nvml_device, int *, int *);
	nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
	nvml_return (*temperature)(nvml_device, int, unsigned *);
};

/* Opens and initializes NVML. On failure returns false with *why owned. */
static bool nvml_open(struct nvml *n, char **why)
{
	memset(n, 0, sizeof *n);
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *e = dlerror();
		*why = xstrdup(e ? e : "libnvidia-ml.so.1: cannot be loaded");
		return false;
	}
#define SYM(field, name) (n->field = (__typeof__(n->field))dlsym(n->lib, name))
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(error_string, "nvmlErrorString");
	SYM(driver_version, "nvmlSystemGetDriverVersion");
	SYM(nvml_version, "nvmlSystemGetNVMLVersion");
	if (!SYM(cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2"))
		SYM(cuda_driver_version, "nvmlSystemGetCudaDriverVersion");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(name, "nvmlDeviceGetName");
	SYM(uuid, "nvmlDeviceGetUUID");
	SYM(memory, "nvmlDeviceGetMemoryInfo");
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
	SYM(capability, "nvmlDeviceGetCudaComputeCapability");
	SYM(utilization, "nvmlDeviceGetUtilizationRates");
	SYM(temperature, "nvmlDeviceGetTemperature");
#undef SYM
	if (!n->init || !n->shutdown || !n->count || !n->handle) {
		*why = xstrdup("libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 (driver too old)");
		dlclose(n->lib);
		n->lib = NULL;
		return false;
	}
	nvml_return rc = n->init();
	if (rc != 0) {
		*why = xasprintf("nvmlInit failed: %s",
				 n->error_string ? n->error_string(rc) : "error");
		dlclose(n->lib);
		n->lib = NULL;
		return false;
	}
	return true;
}

static void nvml_close(struct nvml *n)
{
	if (!n->lib)
		return;
	n->shutdown();
	dlclose(n->lib);
	n->lib = NULL;
}

/* ---- CUDA driver API ---- */
typedef int cu_result;
struct cu_uuid {
	unsigned char bytes[16];
};
enum {
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,
	CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
	CU_ATTR_L2_CACHE_SIZE = 38,
	CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
};

struct cuda {
	void *lib;
	cu_result (*init)(unsigned);
	cu_result (*driver_version)(int *);
	cu_result (*count)(int *);
	cu_result (*get)(int *, int);
	cu_result (*name)(char *, int, int);
	cu_result (*total_mem)(size_t *, int);
	cu_result (*attribute)(int *, int, int);
	cu_result (*uuid)(struct cu_uuid *, int);
	cu_result (*error_string)(cu_result, const char **);
};

static const char *cu_error(const struct cuda *c, cu_result rc)
{
	const char *s = NULL;
	if (c->error_string && c->error_string(rc, &s) == 0 && s)
		return s;
	return "error";
}

static bool cuda_open(struct cuda *c, char **why)
{
	memset(c, 0, sizeof *c);
	c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c->lib) {
		const char *e = dlerror();
		*why = xstrdup(e ? e : "libcuda.so.1: cannot be loaded");
		return false;
	}
#define SYM(field, name) (c->field = (__typeof__(c->field))dlsym(c->lib, name))
	SYM(init, "cuInit");
	SYM(driver_version, "cuDriverGetVersion");
	SYM(count, "cuDeviceGetCount");
	SYM(get, "cuDeviceGet");
	SYM(name, "cuDeviceGetName");
	SYM(total_mem, "cuDeviceTotalMem_v2");
	SYM(attribute, "cuDeviceGetAttribute");
	if (!SYM(uuid, "cuDeviceGetUuid_v2"))
		SYM(uuid, "cuDeviceGetUuid");
	SYM(error_string, "cuGetErrorString");
#undef SYM
	if (!c->init || !c->driver_version || !c->count || !c->get) {
		*why = xstrdup("libcuda.so.1 lacks cuInit / cuDeviceGetCount");
		dlclose(c->lib);
		c->lib = NULL;
		return false;
	}
	cu_result rc = c->init(0);
	if (rc != 0) {
		*why = xasprintf("cuInit failed: %s", cu_error(c, rc));
		/* cuDriverGetVersion works without cuInit: keep the library. */
		return false;
	}
	return true;
}

/* ---- the record ---- */
static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *uint_or_null(nvml_return rc, unsigned v)
{
	return rc == 0 ? json_integer((json_int_t)v) : json_null();
}

static char *cuda_version_text(int v)
{
	return xasprintf("%d.%d", v / 1000, (v % 1000) / 10);
}

static json_t *clocks(const struct nvml *n, nvml_device d,
		      nvml_return (*get)(nvml_device, int, unsigned *))
{
	json_t *o = json_object();
	static const struct {
		const char *key;
		int type;
	} kinds[] = {{"graphics", NVML_CLOCK_GRAPHICS}, {"sm", NVML_CLOCK_SM}, {"memory", NVML_CLOCK_MEM}};
	(void)n;
	for (size_t i = 0; i < 3; i++) {
		unsigned mhz = 0;
		nvml_return rc = get ? get(d, kinds[i].type, &mhz) : -1;
		json_object_set_new(o, kinds[i].key, uint_or_null(rc, mhz));
	}
	return o;
}

static json_t *nvml_device_record(const struct nvml *n, unsigned index)
{
	json_t *o = json_object();
	nvml_device d;
	json_object_set_new(o, "index", json_integer(index));
	if (n->handle(index, &d) != 0) {
		json_object_set_new(o, "error", json_string("nvmlDeviceGetHandleByIndex failed"));
		return o;
	}
	char text[128];
	json_object_set_new(o, "name", n->name && n->name(d, text, sizeof text) == 0
					       ? json_string(text) : json_null());
	json_object_set_new(o, "uuid", n->uuid && n->uuid(d, text, sizeof text) == 0
					       ? json_string(text) : json_null());
	struct nvml_memory m;
	if (n->memory && n->memory(d, &m) == 0) {
		json_object_set_new(o, "memory_total_bytes", json_integer((json_int_t)m.total));
		json_object_set_new(o, "memory_used_bytes", json_integer((json_int_t)m.used));
		json_object_set_new(o, "memory_free_bytes", json_integer((json_int_t)m.free));
	} else {
		json_object_set_new(o, "memory_total_bytes", json_null());
		json_object_set_new(o, "memory_used_bytes", json_null());
		json_object_set_new(o, "memory_free_bytes", json_null());
	}
	int major = 0, minor = 0;
	if (n->capability && n->capability(d, &major, &minor) == 0) {
		char *cc = xasprintf("%d.%d", major, minor);
		json_object_set_new(o, "compute_capability", json_string(cc));
		free(cc);
	} else {
		json_object_set_new(o, "compute_capability", json_null());
	}
	json_object_set_new(o, "clocks_mhz", clocks(n, d, n->clock));
	json_object_set_new(o, "max_clocks_mhz", clocks(n, d, n->max_clock));
	struct nvml_utilization u;
	if (n->utilization && n->utilization(d, &u) == 0)
		json_object_set_new(o, "utilization_pct",
				    json_pack("{s:i, s:i}", "gpu", (int)u.gpu, "memory", (int)u.memory));
	else
		json_object_set_new(o, "utilization_pct", json_null());
	unsigned temp = 0;
	nvml_return rc = n->temperature ? n->temperature(d, NVML_TEMPERATURE_GPU, &temp) : -1;
	json_object_set_new(o, "temperature_c", uint_or_null(rc, temp));
	return o;
}

static void uuid_text(const struct cu_uuid *u, char out[48])
{
	const unsigned char *b = u->bytes;
	snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static json_t *int_attr(const struct cuda *c, int dev, int attr)
{
	int v = 0;
	if (c->attribute && c->attribute(&v, attr, dev) == 0)
		return json_integer(v);
	return json_null();
}

/* Adds what CUDA says about device ordinal i to o (creating fields NVML did
 * not fill). */
static void cuda_device_fill(const struct cuda *c, int i, json_t *o)
{
	int dev;
	if (c->get(&dev, i) != 0)
		return;
	json_object_set_new(o, "cuda_index", json_integer(i));
	char text[128];
	if (json_is_null(json_object_get(o, "name")) || !json_object_get(o, "name"))
		json_object_set_new(o, "name", c->name && c->name(text, sizeof text, dev) == 0
						       ? json_string(text) : json_null());
	size_t total = 0;
	json_t *t = json_object_get(o, "memory_total_bytes");
	if ((!t || json_is_null(t)) && c->total_mem && c->total_mem(&total, dev) == 0)
		json_object_set_new(o, "memory_total_bytes", json_integer((json_int_t)total));
	int major = 0, minor = 0;
	json_t *cc = json_object_get(o, "compute_capability");
	if ((!cc || json_is_null(cc)) && c->attribute &&
	    c->attribute(&major, CU_ATTR_COMPUTE_CAPABILITY_MAJOR, dev) == 0 &&
	    c->attribute(&minor, CU_ATTR_COMPUTE_CAPABILITY_MINOR, dev) == 0) {
		char *s = xasprintf("%d.%d", major, minor);
		json_object_set_new(o, "compute_capability", json_string(s));
		free(s);
	}
	json_object_set_new(o, "multiprocessors", int_attr(c, dev, CU_ATTR_MULTIPROCESSOR_COUNT));
	json_object_set_new(o, "l2_cache_bytes", int_attr(c, dev, CU_ATTR_L2_CACHE_SIZE));
	json_object_set_new(o, "memory_bus_width_bits", int_attr(c, dev, CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH));
}

static bool cuda_uuid_of(const struct cuda *c, int i, char out[48])
{
	int dev;
	struct cu_uuid u;
	if (!c->uuid || c->get(&dev, i) != 0 || c->uuid(&u, dev) != 0)
		return false;
	uuid_text(&u, out);
	return true;
}

static void set_lib(json_t *rec, const char *key, bool loaded, const char *error)
{
	json_object_set_new(rec, key, json_pack("{s:b, s:o}", "loaded", loaded, "error",
						str_or_null(error)));
}

/* Builds the record in this process. */
static json_t *query_here(void)
{
	json_t *rec = json_object();
	json_t *devices = json_array();
	char *nvml_why = NULL, *cuda_why = NULL;
	struct nvml n;
	struct cuda c;
	bool have_nvml = nvml_open(&n, &nvml_why);
	bool have_cuda = cuda_open(&c, &cuda_why);
	json_t *driver = json_null(), *cuda_driver = json_null(), *nvml_version = json_null();

	if (have_nvml) {
		char text[96];
		if (n.driver_version && n.driver_version(text, sizeof text) == 0)
			json_decref(driver), driver = json_string(text);
		if (n.nvml_version && n.nvml_version(text, sizeof text) == 0)
			json_decref(nvml_version), nvml_version = json_string(text);
		int v = 0;
		if (n.cuda_driver_version && n.cuda_driver_version(&v) == 0 && v > 0) {
			char *s = cuda_version_text(v);
			json_decref(cuda_driver);
			cuda_driver = json_string(s);
			free(s);
		}
		unsigned count = 0;
		if (n.count(&count) != 0)
			count = 0;
		for (unsigned i = 0; i < count; i++)
			json_array_append_new(devices, nvml_device_record(&n, i));
		if (count == 0 && !nvml_why)
			nvml_why = xstrdup("NVML sees no device");
		nvml_close(&n);
	}
	if (c.lib) {
		int v = 0;
		if (json_is_null(cuda_driver) && c.driver_version(&v) == 0 && v > 0) {
			char *s = cuda_version_text(v);
			json_decref(cuda_driver);
			cuda_driver = json_string(s);
			free(s);
		}
	}
	if (have_cuda) {
		int count = 0;
		if (c.count(&count) != 0)
			count = 0;
		for (int i = 0; i < count; i++) {
			char uuid[48];
			json_t *match = NULL;
			if (cuda_uuid_of(&c, i, uuid)) {
				size_t k;
				json_t *d;
				json_array_foreach(devices, k, d) {
					const char *u = json_string_value(json_object_get(d, "uuid"));
					if (u && strcmp(u, uuid) == 0)
						match = d;
				}
			}
			if (!match && json_array_size(devices) == (size_t)count && !c.uuid)
				match = json_array_get(devices, (size_t)i); /* same count, no uuid: same order */
			if (!match) {
				match = json_object();
				json_object_set_new(match, "index", json_integer((json_int_t)json_array_size(devices)));
				json_object_set_new(match, "uuid", cuda_uuid_of(&c, i, uuid) ? json_string(uuid)
											 : json_null());
				json_array_append_new(devices, match);
			}
			cuda_device_fill(&c, i, match);
		}
		if (count == 0 && !cuda_why)
			cuda_why = xstrdup("CUDA sees no device");
	}
	if (c.lib)
		dlclose(c.lib);

	size_t ndev = json_array_size(devices);
	json_object_set_new(rec, "found", json_boolean(ndev > 0));
	if (ndev > 0) {
		char *status = xasprintf("%zu NVIDIA GPU%s", ndev, ndev == 1 ? "" : "s");
		json_object_set_new(rec, "status", json_string(status));
		free(status);
		json_object_set_new(rec, "reason", json_null());
	} else {
		json_object_set_new(rec, "status", json_string("no NVIDIA GPU"));
		char *reason = xasprintf("NVML: %s; CUDA: %s", nvml_why ? nvml_why : "no device",
					 cuda_why ? cuda_why : "no device");
		json_object_set_new(rec, "reason", json_string(reason));
		free(reason);
	}
	json_object_set_new(rec, "driver_version", driver);
	json_object_set_new(rec, "cuda_driver_version", cuda_driver);
	json_object_set_new(rec, "nvml_version", nvml_version);
	set_lib(rec, "nvml", have_nvml, have_nvml ? NULL : nvml_why);
	set_lib(rec, "cuda", have_cuda, have_cuda ? NULL : cuda_why);
	json_object_set_new(rec, "devices", devices);
	free(nvml_why);
	free(cuda_why);
	return rec;
}

static json_t *failed_record(const char *why)
{
	json_t *rec = json_object();
	json_object_set_new(rec, "found", json_false());
	json_object_set_new(rec, "status", json_string("GPU query failed"));
	json_object_set_new(rec, "reason", json_string(why));
	json_object_set_new(rec, "driver_version", json_null());
	json_object_set_new(rec, "cuda_driver_version", json_null());
	json_object_set_new(rec, "nvml_version", json_null());
	set_lib(rec, "nvml", false, why);
	set_lib(rec, "cuda", false, why);
	json_object_set_new(rec, "devices", json_array());
	return rec;
}

json_t *gpuinfo_query(double timeout_s)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return query_here();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return query_here();
	}
	if (pid == 0) {
		close(fds[0]);
		json_t *rec = query_here();
		char *text = json_dumps(rec, JSON_COMPACT);
		_exit(!text || write_all(fds[1], text, strlen(text)) ? 0 : 1);
	}
	close(fds[1]);
	struct buf out = {0};
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool timed_out = false;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double left = timeout_s - ((double)(now.tv_sec - t0.tv_sec) +
					   (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		buf_reserve(&out, 4096);
		ssize_t n = read(fds[0], out.data + out.len, out.cap - out.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out.len += (size_t)n;
		out.data[out.len] = '\0';
	}
	close(fds[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	json_t *rec = NULL;
	if (timed_out) {
		char *why = xasprintf("the NVML / CUDA driver query did not answer within %g s", timeout_s);
		rec = failed_record(why);
		free(why);
	} else if (WIFSIGNALED(status)) {
		char *why = xasprintf("the NVML / CUDA driver query crashed (signal %d)", WTERMSIG(status));
		rec = failed_record(why);
		free(why);
	} else if (out.len) {
		json_error_t err;
		rec = json_loadb(out.data, out.len, 0, &err);
	}
	if (!rec)
		rec = failed_record("the NVML / CUDA driver query returned nothing");
	buf_free(&out);
	return rec;
}

/* ---- sampler ----
 * The sampler is a child process (fork, then NVML loaded there), not a
 * thread: NVML adds some 20 MB to the process that loads it, and gpuopt's
 * own resident size is the floor of every peak RSS it reports (runner.h).
 * gpuopt and the sampler talk over a socket pair: 'b' starts a run's
 * sampling, 'e' ends it and the sampler answers with one gpu_usage per
 * device; end of file ends the sampler. */
struct acc {
	unsigned samples;
	double mem_first, mem_peak, mem_sum, util_peak, util_sum;
};

struct gpu_sampler {
	pid_t pid;
	int sock;
	size_t ndev;
	bool dead;
};

static bool send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* Reads exactly n bytes, waiting at most timeout_ms overall (-1: no limit). */
static bool recv_all(int fd, void *p, size_t n, int timeout_ms)
{
	char *c = p;
	while (n) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t got = recv(fd, c, n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		c += got;
		n -= (size_t)got;
	}
	return true;
}

static void sample_once(const struct nvml *n, nvml_device *dev, size_t ndev, struct acc *acc)
{
	for (size_t i = 0; i < ndev; i++) {
		struct nvml_memory m;
		struct nvml_utilization u;
		bool mem_ok = n->memory && n->memory(dev[i], &m) == 0;
		bool util_ok = n->utilization && n->utilization(dev[i], &u) == 0;
		if (!mem_ok && !util_ok)
			continue;
		double used = mem_ok ? (double)m.used : 0, util = util_ok ? (double)u.gpu : 0;
		struct acc *a = &acc[i];
		if (a->samples == 0)
			a->mem_first = used;
		a->samples++;
		a->mem_sum += used;
		a->util_sum += util;
		if (used > a->mem_peak)
			a->mem_peak = used;
		if (util > a->util_peak)
			a->util_peak = util;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The sampler process: never returns. */
static void sampler_main(int sock, unsigned interval_ms)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	struct nvml n;
	char *why = NULL;
	uint32_t ndev = 0;
	nvml_device *dev = NULL;
	if (nvml_open(&n, &why)) {
		unsigned count = 0;
		if (n.count(&count) == 0 && count > 0) {
			dev = calloc(count, sizeof *dev);
			for (unsigned i = 0; dev && i < count; i++)
				if (n.handle(i, &dev[ndev]) == 0)
					ndev++;
		}
	}
	if (!send_all(sock, &ndev, sizeof ndev) || ndev == 0)
		_exit(0);
	struct acc *acc = calloc(ndev, sizeof *acc);
	struct gpu_usage *out = calloc(ndev, sizeof *out);
	if (!acc || !out)
		_exit(1);
	bool active = false;
	double next = 0;
	for (;;) {
		int wait = -1;
		if (active) {
			double left = next - now_ms();
			wait = left <= 0 ? 0 : (int)left + 1;
		}
		struct pollfd pf = {.fd = sock, .events = POLLIN};
		int r = poll(&pf, 1, wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0) {
			char cmd;
			ssize_t got = recv(sock, &cmd, 1, 0);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break; /* gpuopt is done */
			if (cmd == 'b') {
				memset(acc, 0, ndev * sizeof *acc);
				active = true;
				next = 0; /* a first sample at once */
			} else if (cmd == 'e') {
				active = false;
				for (size_t i = 0; i < ndev; i++) {
					out[i].samples = acc[i].samples;
					out[i].mem_used_first = acc[i].mem_first;
					out[i].mem_used_peak = acc[i].mem_peak;
					out[i].util_peak = acc[i].util_peak;
					out[i].mem_used_mean = acc[i].samples ? acc[i].mem_sum / acc[i].samples : 0;
					out[i].util_mean = acc[i].samples ? acc[i].util_sum / acc[i].samples : 0;
				}
				if (!send_all(sock, out, ndev * sizeof *out))
					break;
			}
			continue;
		}
		if (active && now_ms() >= next) {
			sample_once(&n, dev, ndev, acc);
			next = now_ms() + interval_ms;
		}
	}
	nvml_close(&n);
	_exit(0);
}

struct gpu_sampler *gpu_sampler_new(unsigned interval_ms)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (pid == 0) {
		close(sv[0]);
		sampler_main(sv[1], interval_ms ? interval_ms : 10);
	}
	close(sv[1]);
	uint32_t ndev = 0;
	if (!recv_all(sv[0], &ndev, sizeof ndev, 20000) || ndev == 0) {
		close(sv[0]);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return NULL;
	}
	struct gpu_sampler *s = xcalloc(1, sizeof *s);
	s->pid = pid;
	s->sock = sv[0];
	s->ndev = ndev;
	return s;
}

size_t gpu_sampler_devices(const struct gpu_sampler *s)
{
	return s ? s->ndev : 0;
}

void gpu_sampler_begin(struct gpu_sampler *s)
{
	if (!s->dead && !send_all(s->sock, "b", 1))
		s->dead = true;
}

void gpu_sampler_end(struct gpu_sampler *s, struct gpu_usage *out)
{
	memset(out, 0, s->ndev * sizeof *out);
	if (s->dead)
		return;
	if (!send_all(s->sock, "e", 1) || !recv_all(s->sock, out, s->ndev * sizeof *out, 10000)) {
		memset(out, 0, s->ndev * sizeof *out);
		s->dead = true;
	}
}

void gpu_sampler_free(struct gpu_sampler *s)
{
	if (!s)
		return;
	close(s->sock); /* end of file: the sampler exits */
	int status;
	for (int i = 0; i < 200; i++) { /* up to 2 s, then stop it */
		pid_t r = waitpid(s->pid, &status, WNOHANG);
		if (r == s->pid || (r < 0 && errno != EINTR))
			break;
		if (i == 199) {
			kill(s->pid, SIGKILL);
			while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec nap = {0, 10000000};
		nanosleep(&nap, NULL);
	}
	free(s);
}
