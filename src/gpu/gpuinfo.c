/* gpuinfo: see gpuinfo.h. The few NVML declarations needed are written here
 * (their C ABI has been stable for years), as are the CUDA driver's
 * (cudadrv.h), so no CUDA header or library is needed to build. */
#include "gpuinfo.h"

#include <ctype.h>
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
#include "core/runner.h"
#include "core/util.h"
#include "cudadrv.h"

/* ---- NVML ---- */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_utilization {
	unsigned int gpu, memory;
};
/* nvmlPciInfo_t (v3) */
struct nvml_pci {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};
/* nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 fills it */
struct nvml_process {
	unsigned pid;
	unsigned long long used_gpu_memory;
	unsigned gpu_instance_id, compute_instance_id;
};
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_INSUFFICIENT_SIZE = 7 };
enum { NVML_MEMORY_ERROR_CORRECTED = 0, NVML_MEMORY_ERROR_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_P2P_READ = 0, NVML_P2P_WRITE = 1, NVML_P2P_NVLINK = 2, NVML_P2P_ATOMICS = 3 };
enum { NVML_NVLINK_LINKS_ASKED = 36 }; /* NVML_NVLINK_MAX_LINKS of current NVML */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

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
	nvml_return (*pci_info)(nvml_device, struct nvml_pci *);
	nvml_return (*pcie_gen)(nvml_device, unsigned *);
	nvml_return (*pcie_max_gen)(nvml_device, unsigned *);
	nvml_return (*pcie_gpu_max_gen)(nvml_device, unsigned *);
	nvml_return (*pcie_width)(nvml_device, unsigned *);
	nvml_return (*pcie_max_width)(nvml_device, unsigned *);
	nvml_return (*persistence)(nvml_device, int *);
	nvml_return (*mig_mode)(nvml_device, unsigned *, unsigned *);
	nvml_return (*ecc_mode)(nvml_device, int *, int *);
	nvml_return (*ecc_errors)(nvml_device, int, int, unsigned long long *);
	nvml_return (*processes)(nvml_device, unsigned *, struct nvml_process *);
	nvml_return (*nvlink_state)(nvml_device, unsigned, int *);
	nvml_return (*nvlink_version)(nvml_device, unsigned, unsigned *);
	nvml_return (*nvlink_remote_pci)(nvml_device, unsigned, struct nvml_pci *);
	nvml_return (*topology)(nvml_device, nvml_device, int *);
	nvml_return (*p2p_status)(nvml_device, nvml_device, int, int *);
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
	SYM(pci_info, "nvmlDeviceGetPciInfo_v3");
	SYM(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
	SYM(pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
	SYM(pcie_gpu_max_gen, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
	SYM(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
	SYM(pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth");
	SYM(persistence, "nvmlDeviceGetPersistenceMode");
	SYM(mig_mode, "nvmlDeviceGetMigMode");
	SYM(ecc_mode, "nvmlDeviceGetEccMode");
	SYM(ecc_errors, "nvmlDeviceGetTotalEccErrors");
	SYM(processes, "nvmlDeviceGetComputeRunningProcesses_v3");
	SYM(nvlink_state, "nvmlDeviceGetNvLinkState");
	SYM(nvlink_version, "nvmlDeviceGetNvLinkVersion");
	SYM(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	SYM(topology, "nvmlDeviceGetTopologyCommonAncestor");
	SYM(p2p_status, "nvmlDeviceGetP2PStatus");
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

/* ---- PCI locality (sysfs) ---- */

/* "00000000:19:00.0" (NVML) or "0000:19:00.0" (CUDA) -> "0000:19:00.0",
 * lower case, the form of /sys/bus/pci/devices/. False when malformed. */
static bool sysfs_bus_id(const char *bus_id, char out[16])
{
	const char *colon = strchr(bus_id, ':');
	if (!colon || colon - bus_id < 4 || strlen(colon) != 8)
		return false;
	snprintf(out, 16, "%.4s%s", colon - 4, colon);
	for (char *p = out; *p; p++) {
		if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
			return false;
		*p = (char)tolower((unsigned char)*p);
	}
	return true;
}

bool gpu_pci_locality(const char *bus_id, int *numa_node, char **cpulist)
{
	*numa_node = -1;
	*cpulist = NULL;
	char id[16];
	if (!bus_id || !sysfs_bus_id(bus_id, id))
		return false;
	char *path = xasprintf("/sys/bus/pci/devices/%s/numa_node", id);
	struct buf b = {0};
	char *why = NULL;
	bool found = read_file(path, 4096, &b, &why);
	if (found)
		*numa_node = atoi(b.data);
	free(why);
	free(path);
	buf_free(&b);
	path = xasprintf("/sys/bus/pci/devices/%s/local_cpulist", id);
	why = NULL;
	if (read_file(path, 65536, &b, &why)) {
		found = true;
		b.data[strcspn(b.data, "\n")] = '\0';
		*cpulist = b.len ? buf_steal(&b) : NULL;
	}
	free(why);
	free(path);
	buf_free(&b);
	return found;
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

static json_t *ull_or_null(nvml_return rc, unsigned long long v)
{
	return rc == 0 && v != NVML_VALUE_NOT_AVAILABLE_ULL ? json_integer((json_int_t)v) : json_null();
}

static char *cuda_version_text(int v)
{
	return xasprintf("%d.%d", v / 1000, (v % 1000) / 10);
}

static json_t *clocks(nvml_device d, nvml_return (*get)(nvml_device, int, unsigned *))
{
	json_t *o = json_object();
	static const struct {
		const char *key;
		int type;
	} kinds[] = {{"graphics", NVML_CLOCK_GRAPHICS}, {"sm", NVML_CLOCK_SM}, {"memory", NVML_CLOCK_MEM}};
	for (size_t i = 0; i < 3; i++) {
		unsigned mhz = 0;
		nvml_return rc = get ? get(d, kinds[i].type, &mhz) : -1;
		json_object_set_new(o, kinds[i].key, uint_or_null(rc, mhz));
	}
	return o;
}

static nvml_return call_uint(nvml_return (*f)(nvml_device, unsigned *), nvml_device d, unsigned *v)
{
	return f ? f(d, v) : -1;
}

static json_t *pcie_record(const struct nvml *n, nvml_device d)
{
	unsigned gen = 0, max_gen = 0, gpu_max_gen = 0, width = 0, max_width = 0;
	nvml_return r1 = call_uint(n->pcie_gen, d, &gen), r2 = call_uint(n->pcie_max_gen, d, &max_gen),
		    r3 = call_uint(n->pcie_gpu_max_gen, d, &gpu_max_gen),
		    r4 = call_uint(n->pcie_width, d, &width), r5 = call_uint(n->pcie_max_width, d, &max_width);
	if (r1 && r2 && r3 && r4 && r5)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "generation", uint_or_null(r1, gen));
	json_object_set_new(o, "max_generation", uint_or_null(r2, max_gen));
	json_object_set_new(o, "gpu_max_generation", uint_or_null(r3, gpu_max_gen));
	json_object_set_new(o, "width", uint_or_null(r4, width));
	json_object_set_new(o, "max_width", uint_or_null(r5, max_width));
	return o;
}

static json_t *ecc_record(const struct nvml *n, nvml_device d)
{
	int cur = 0, pending = 0;
	if (!n->ecc_mode || n->ecc_mode(d, &cur, &pending) != 0)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "enabled", json_boolean(cur != 0));
	json_object_set_new(o, "pending", json_boolean(pending != 0));
	static const struct {
		const char *key;
		int type, counter;
	} counts[] = {
		{"uncorrected_volatile", NVML_MEMORY_ERROR_UNCORRECTED, NVML_VOLATILE_ECC},
		{"corrected_volatile", NVML_MEMORY_ERROR_CORRECTED, NVML_VOLATILE_ECC},
		{"uncorrected_aggregate", NVML_MEMORY_ERROR_UNCORRECTED, NVML_AGGREGATE_ECC},
		{"corrected_aggregate", NVML_MEMORY_ERROR_CORRECTED, NVML_AGGREGATE_ECC},
	};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
		unsigned long long v = 0;
		nvml_return rc = cur && n->ecc_errors ? n->ecc_errors(d, counts[i].type, counts[i].counter, &v) : -1;
		json_object_set_new(o, counts[i].key, ull_or_null(rc, v));
	}
	return o;
}

static char *process_name(unsigned pid)
{
	char *path = xasprintf("/proc/%u/comm", pid);
	struct buf b = {0};
	char *why = NULL;
	char *name = NULL;
	if (read_file(path, 4096, &b, &why)) {
		b.data[strcspn(b.data, "\n")] = '\0';
		name = buf_steal(&b);
	}
	free(why);
	free(path);
	buf_free(&b);
	return name;
}

static json_t *process_list(const struct nvml *n, nvml_device d)
{
	if (!n->processes)
		return json_null();
	unsigned count = 0;
	nvml_return rc = n->processes(d, &count, NULL);
	if (rc == 0)
		return json_array(); /* none */
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
		return json_null();
	count = count * 2 + 8;
	struct nvml_process *p = xcalloc(count, sizeof *p);
	if (n->processes(d, &count, p) != 0) {
		free(p);
		return json_null();
	}
	json_t *a = json_array();
	for (unsigned i = 0; i < count; i++) {
		char *name = process_name(p[i].pid);
		json_array_append_new(a, json_pack("{s:i, s:o, s:o}", "pid", (int)p[i].pid, "name",
						   str_or_null(name), "memory_used_bytes",
						   ull_or_null(0, p[i].used_gpu_memory)));
		free(name);
	}
	free(p);
	return a;
}

static const char *nvlink_version_text(unsigned v)
{
	/* nvmlNvlinkVersion_t */
	static const char *const names[] = {NULL, "1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"};
	return v < sizeof names / sizeof *names ? names[v] : NULL;
}

/* The active NVLinks of d: [{link, version, remote_pci_bus_id}]; null when
 * NVML answers nothing (no NVLink, or not supported). */
static json_t *nvlink_list(const struct nvml *n, nvml_device d)
{
	if (!n->nvlink_state)
		return json_null();
	json_t *a = json_array();
	bool answered = false;
	for (unsigned link = 0; link < NVML_NVLINK_LINKS_ASKED; link++) {
		int active = 0;
		nvml_return rc = n->nvlink_state(d, link, &active);
		if (rc == NVML_ERROR_INVALID_ARGUMENT)
			break; /* past the device's last link */
		if (rc != 0)
			continue;
		answered = true;
		if (!active)
			continue;
		unsigned version = 0;
		struct nvml_pci pci;
		memset(&pci, 0, sizeof pci);
		nvml_return vr = n->nvlink_version ? n->nvlink_version(d, link, &version) : -1;
		nvml_return pr = n->nvlink_remote_pci ? n->nvlink_remote_pci(d, link, &pci) : -1;
		json_array_append_new(a, json_pack("{s:i, s:o, s:o}", "link", (int)link, "version",
						   vr == 0 ? str_or_null(nvlink_version_text(version)) : json_null(),
						   "remote_pci_bus_id", pr == 0 ? str_or_null(pci.bus_id) : json_null()));
	}
	if (!answered) {
		json_decref(a);
		return json_null();
	}
	return a;
}

static json_t *nvml_device_record(const struct nvml *n, unsigned index, nvml_device *handle)
{
	json_t *o = json_object();
	nvml_device d;
	json_object_set_new(o, "index", json_integer(index));
	if (n->handle(index, &d) != 0) {
		*handle = NULL;
		json_object_set_new(o, "error", json_string("nvmlDeviceGetHandleByIndex failed"));
		return o;
	}
	*handle = d;
	char text[128];
	json_object_set_new(o, "name", n->name && n->name(d, text, sizeof text) == 0
					       ? json_string(text) : json_null());
	json_object_set_new(o, "uuid", n->uuid && n->uuid(d, text, sizeof text) == 0
					       ? json_string(text) : json_null());
	struct nvml_pci pci;
	memset(&pci, 0, sizeof pci);
	bool have_pci = n->pci_info && n->pci_info(d, &pci) == 0;
	json_object_set_new(o, "pci_bus_id", have_pci ? str_or_null(pci.bus_id) : json_null());
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
	json_object_set_new(o, "clocks_mhz", clocks(d, n->clock));
	json_object_set_new(o, "max_clocks_mhz", clocks(d, n->max_clock));
	struct nvml_utilization u;
	if (n->utilization && n->utilization(d, &u) == 0)
		json_object_set_new(o, "utilization_pct",
				    json_pack("{s:i, s:i}", "gpu", (int)u.gpu, "memory", (int)u.memory));
	else
		json_object_set_new(o, "utilization_pct", json_null());
	unsigned temp = 0;
	nvml_return rc = n->temperature ? n->temperature(d, NVML_TEMPERATURE_GPU, &temp) : -1;
	json_object_set_new(o, "temperature_c", uint_or_null(rc, temp));
	json_object_set_new(o, "pcie", pcie_record(n, d));
	int persist = 0;
	rc = n->persistence ? n->persistence(d, &persist) : -1;
	json_object_set_new(o, "persistence_mode", rc == 0 ? json_boolean(persist != 0) : json_null());
	unsigned mig = 0, mig_pending = 0;
	rc = n->mig_mode ? n->mig_mode(d, &mig, &mig_pending) : -1;
	json_object_set_new(o, "mig_mode", rc == 0 ? json_pack("{s:b, s:b}", "enabled", mig != 0,
							       "pending", mig_pending != 0)
						: json_null());
	json_object_set_new(o, "ecc", ecc_record(n, d));
	json_object_set_new(o, "processes", process_list(n, d));
	json_object_set_new(o, "nvlinks", nvlink_list(n, d));
	int numa = -1;
	char *cpus = NULL;
	if (have_pci && gpu_pci_locality(pci.bus_id, &numa, &cpus)) {
		json_object_set_new(o, "numa_node", numa >= 0 ? json_integer(numa) : json_null());
		json_object_set_new(o, "local_cpus", str_or_null(cpus));
	} else {
		json_object_set_new(o, "numa_node", json_null());
		json_object_set_new(o, "local_cpus", json_null());
	}
	free(cpus);
	return o;
}

/* nvmlGpuTopologyLevel_t as nvidia-smi topo -m names it. */
static const char *topology_code(int level)
{
	switch (level) {
	case 0: return "internal"; /* the same board */
	case 10: return "PIX";     /* one PCIe switch */
	case 20: return "PXB";     /* several PCIe switches */
	case 30: return "PHB";     /* a PCIe host bridge */
	case 40: return "NODE";    /* host bridges within one NUMA node */
	case 50: return "SYS";     /* across NUMA nodes */
	default: return NULL;
	}
}

static json_t *p2p_value(const struct nvml *n, nvml_device a, nvml_device b, int what)
{
	int status = -1;
	if (!n->p2p_status || n->p2p_status(a, b, what, &status) != 0)
		return json_null();
	return json_boolean(status == 0); /* NVML_P2P_STATUS_OK */
}

/* For every pair of devices: how they are linked (NVLink or PCIe), the
 * common PCIe ancestor, and what NVML says peer-to-peer access allows. */
static void nvml_peers(const struct nvml *n, json_t *devices, nvml_device *handles, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		json_t *di = json_array_get(devices, i);
		json_t *peers = json_array();
		for (size_t j = 0; j < count && handles[i]; j++) {
			if (j == i || !handles[j])
				continue;
			json_t *dj = json_array_get(devices, j);
			const char *bus_j = json_string_value(json_object_get(dj, "pci_bus_id"));
			int direct = 0;
			size_t k;
			json_t *l;
			json_array_foreach(json_object_get(di, "nvlinks"), k, l) {
				const char *remote = json_string_value(json_object_get(l, "remote_pci_bus_id"));
				if (remote && bus_j && strcasecmp(remote, bus_j) == 0)
					direct++;
			}
			int level = -1;
			bool have_level = n->topology && n->topology(handles[i], handles[j], &level) == 0;
			json_t *nvlink = p2p_value(n, handles[i], handles[j], NVML_P2P_NVLINK);
			bool by_nvlink = direct > 0 || json_is_true(nvlink);
			json_t *p = json_object();
			json_object_set_new(p, "index", json_integer((json_int_t)j));
			json_object_set_new(p, "link", json_string(by_nvlink ? "NVLink" : "PCIe"));
			json_object_set_new(p, "nvlinks_direct", json_integer(direct));
			json_object_set_new(p, "topology", have_level ? str_or_null(topology_code(level))
								   : json_null());
			json_object_set_new(p, "p2p_read", p2p_value(n, handles[i], handles[j], NVML_P2P_READ));
			json_object_set_new(p, "p2p_write", p2p_value(n, handles[i], handles[j], NVML_P2P_WRITE));
			json_object_set_new(p, "p2p_nvlink", nvlink);
			json_object_set_new(p, "p2p_atomics",
					    p2p_value(n, handles[i], handles[j], NVML_P2P_ATOMICS));
			json_object_set_new(p, "cuda_can_access_peer", json_null());
			json_array_append_new(peers, p);
		}
		json_object_set_new(di, "peers", peers);
	}
}

static void uuid_text(const struct cu_uuid *u, char out[48])
{
	const unsigned char *b = u->bytes;
	snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static json_t *int_attr(const struct cudadrv *c, cu_device dev, int attr)
{
	int v = 0;
	if (c->device_get_attribute && c->device_get_attribute(&v, attr, dev) == 0)
		return json_integer(v);
	return json_null();
}

static bool is_unset(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return !v || json_is_null(v);
}

/* Adds what CUDA says about device ordinal i to o (creating fields NVML did
 * not fill). */
static void cuda_device_fill(const struct cudadrv *c, int i, json_t *o)
{
	cu_device dev;
	if (c->device_get(&dev, i) != 0)
		return;
	json_object_set_new(o, "cuda_index", json_integer(i));
	char text[128];
	if (is_unset(o, "name"))
		json_object_set_new(o, "name", c->device_get_name && c->device_get_name(text, sizeof text, dev) == 0
						       ? json_string(text) : json_null());
	size_t total = 0;
	if (is_unset(o, "memory_total_bytes") && c->device_total_mem && c->device_total_mem(&total, dev) == 0)
		json_object_set_new(o, "memory_total_bytes", json_integer((json_int_t)total));
	int major = 0, minor = 0;
	if (is_unset(o, "compute_capability") && c->device_get_attribute &&
	    c->device_get_attribute(&major, CU_ATTR_COMPUTE_CAPABILITY_MAJOR, dev) == 0 &&
	    c->device_get_attribute(&minor, CU_ATTR_COMPUTE_CAPABILITY_MINOR, dev) == 0) {
		char *s = xasprintf("%d.%d", major, minor);
		json_object_set_new(o, "compute_capability", json_string(s));
		free(s);
	}
	if (is_unset(o, "pci_bus_id") && c->device_get_pci_bus_id &&
	    c->device_get_pci_bus_id(text, sizeof text, dev) == 0)
		json_object_set_new(o, "pci_bus_id", json_string(text));
	json_object_set_new(o, "multiprocessors", int_attr(c, dev, CU_ATTR_MULTIPROCESSOR_COUNT));
	json_object_set_new(o, "l2_cache_bytes", int_attr(c, dev, CU_ATTR_L2_CACHE_SIZE));
	json_object_set_new(o, "memory_bus_width_bits", int_attr(c, dev, CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH));
}

static bool cuda_uuid_of(const struct cudadrv *c, int i, char out[48])
{
	cu_device dev;
	struct cu_uuid u;
	if (!c->device_get_uuid || c->device_get(&dev, i) != 0 || c->device_get_uuid(&u, dev) != 0)
		return false;
	uuid_text(&u, out);
	return true;
}

/* Fills each peer's cuda_can_access_peer (CUDA ordinals through cuda_index). */
static void cuda_peers(const struct cudadrv *c, json_t *devices)
{
	if (!c->device_can_access_peer)
		return;
	size_t i;
	json_t *d;
	json_array_foreach(devices, i, d) {
		json_t *ci = json_object_get(d, "cuda_index");
		json_t *peers = json_object_get(d, "peers");
		if (!json_is_integer(ci))
			continue;
		if (!peers) {
			peers = json_array();
			json_object_set_new(d, "peers", peers);
		}
		size_t j;
		json_t *e;
		json_array_foreach(devices, j, e) {
			json_t *cj = json_object_get(e, "cuda_index");
			if (j == i || !json_is_integer(cj))
				continue;
			cu_device a, b;
			int can = 0;
			if (c->device_get(&a, (int)json_integer_value(ci)) != 0 ||
			    c->device_get(&b, (int)json_integer_value(cj)) != 0 ||
			    c->device_can_access_peer(&can, a, b) != 0)
				continue;
			json_t *p = NULL, *q;
			size_t k;
			json_array_foreach(peers, k, q)
				if (json_integer_value(json_object_get(q, "index")) == (json_int_t)j)
					p = q;
			if (!p) { /* NVML did not see the pair */
				p = json_pack("{s:i, s:n, s:n, s:n}", "index", (int)j, "link", "topology",
					      "p2p_read");
				json_array_append_new(peers, p);
			}
			json_object_set_new(p, "cuda_can_access_peer", json_boolean(can != 0));
		}
	}
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
	struct cudadrv c;
	bool have_nvml = nvml_open(&n, &nvml_why);
	bool have_cuda = cudadrv_open(&c, &cuda_why);
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
		nvml_device *handles = xcalloc(count ? count : 1, sizeof *handles);
		for (unsigned i = 0; i < count; i++)
			json_array_append_new(devices, nvml_device_record(&n, i, &handles[i]));
		nvml_peers(&n, devices, handles, count);
		free(handles);
		if (count == 0 && !nvml_why)
			nvml_why = xstrdup("NVML sees no device");
		nvml_close(&n);
	}
	if (c.lib) {
		int v = 0;
		if (json_is_null(cuda_driver) && c.driver_get_version(&v) == 0 && v > 0) {
			char *s = cuda_version_text(v);
			json_decref(cuda_driver);
			cuda_driver = json_string(s);
			free(s);
		}
	}
	if (have_cuda) {
		int count = 0;
		if (c.device_get_count(&count) != 0)
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
			if (!match && json_array_size(devices) == (size_t)count && !c.device_get_uuid)
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
		cuda_peers(&c, devices);
		if (count == 0 && !cuda_why)
			cuda_why = xstrdup("CUDA sees no device");
	}
	cudadrv_close(&c);

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

static void query_child(void *arg, int fd)
{
	(void)arg;
	json_t *rec = query_here();
	char *text = json_dumps(rec, JSON_COMPACT);
	_exit(!text || write_all(fd, text, strlen(text)) ? 0 : 1);
}

json_t *gpuinfo_query(double timeout_s)
{
	struct buf out = {0};
	struct fork_result res;
	if (!runner_fork_read(query_child, NULL, timeout_s, &out, &res)) {
		buf_free(&out);
		return query_here();
	}
	bool timed_out = res.timed_out;
	int status = res.status;
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
