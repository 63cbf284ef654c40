/* cudadrv: see cudadrv.h. Versioned entry points (_v2) are what cuda.h
 * maps the plain names to; where an older driver lacks the _v2 name the
 * older one with the same signature is taken. */
#include "cudadrv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

struct sym {
	size_t offset;
	const char *names[3]; /* tried in order */
	bool required;        /* by the device queries (gpuinfo) */
};

#define F(field) offsetof(struct cudadrv, field)
static const struct sym syms[] = {
	{F(init), {"cuInit"}, true},
	{F(driver_get_version), {"cuDriverGetVersion"}, true},
	{F(device_get_count), {"cuDeviceGetCount"}, true},
	{F(device_get), {"cuDeviceGet"}, true},
	{F(device_get_name), {"cuDeviceGetName"}, false},
	{F(device_total_mem), {"cuDeviceTotalMem_v2"}, false},
	{F(device_get_attribute), {"cuDeviceGetAttribute"}, false},
	{F(device_get_uuid), {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, false},
	{F(device_get_pci_bus_id), {"cuDeviceGetPCIBusId"}, false},
	{F(device_can_access_peer), {"cuDeviceCanAccessPeer"}, false},
	{F(get_error_string), {"cuGetErrorString"}, false},
	{F(get_error_name), {"cuGetErrorName"}, false},
	{F(primary_ctx_retain), {"cuDevicePrimaryCtxRetain"}, false},
	{F(primary_ctx_release), {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, false},
	{F(ctx_set_current), {"cuCtxSetCurrent"}, false},
	{F(ctx_synchronize), {"cuCtxSynchronize"}, false},
	{F(ctx_enable_peer_access), {"cuCtxEnablePeerAccess"}, false},
	{F(ctx_disable_peer_access), {"cuCtxDisablePeerAccess"}, false},
	{F(stream_create), {"cuStreamCreate"}, false},
	{F(stream_destroy), {"cuStreamDestroy_v2", "cuStreamDestroy"}, false},
	{F(stream_synchronize), {"cuStreamSynchronize"}, false},
	{F(event_create), {"cuEventCreate"}, false},
	{F(event_destroy), {"cuEventDestroy_v2", "cuEventDestroy"}, false},
	{F(event_record), {"cuEventRecord"}, false},
	{F(event_synchronize), {"cuEventSynchronize"}, false},
	{F(event_elapsed_time), {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, false},
	{F(mem_get_info), {"cuMemGetInfo_v2"}, false},
	{F(mem_alloc), {"cuMemAlloc_v2"}, false},
	{F(mem_free), {"cuMemFree_v2"}, false},
	{F(mem_host_alloc), {"cuMemHostAlloc"}, false},
	{F(mem_free_host), {"cuMemFreeHost"}, false},
	{F(mem_host_get_device_pointer), {"cuMemHostGetDevicePointer_v2"}, false},
	{F(memset_d8), {"cuMemsetD8_v2"}, false},
	{F(memcpy_htod_async), {"cuMemcpyHtoDAsync_v2"}, false},
	{F(memcpy_dtoh_async), {"cuMemcpyDtoHAsync_v2"}, false},
	{F(memcpy_dtod_async), {"cuMemcpyDtoDAsync_v2"}, false},
	{F(memcpy_peer_async), {"cuMemcpyPeerAsync"}, false},
	{F(module_load_data), {"cuModuleLoadData"}, false},
	{F(module_unload), {"cuModuleUnload"}, false},
	{F(module_get_function), {"cuModuleGetFunction"}, false},
	{F(launch_kernel), {"cuLaunchKernel"}, false},
};
#undef F

static void **slot(struct cudadrv *c, const struct sym *s)
{
	return (void **)((char *)c + s->offset);
}

bool cudadrv_open(struct cudadrv *c, char **why)
{
	memset(c, 0, sizeof *c);
	*why = NULL;
	c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c->lib) {
		const char *e = dlerror();
		*why = xstrdup(e ? e : "libcuda.so.1: cannot be loaded");
		return false;
	}
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
		void *p = NULL;
		for (size_t k = 0; k < 3 && syms[i].names[k] && !p; k++)
			p = dlsym(c->lib, syms[i].names[k]);
		*slot(c, &syms[i]) = p;
		if (!p && syms[i].required) {
			*why = xasprintf("libcuda.so.1 lacks %s (driver too old)", syms[i].names[0]);
			dlclose(c->lib);
			memset(c, 0, sizeof *c);
			return false;
		}
	}
	cu_result rc = c->init(0);
	if (rc != 0) {
		*why = xasprintf("cuInit failed: %s", cudadrv_error(c, rc));
		return false;
	}
	c->initialized = true;
	return true;
}

void cudadrv_close(struct cudadrv *c)
{
	if (c->lib)
		dlclose(c->lib);
	memset(c, 0, sizeof *c);
}

const char *cudadrv_error(const struct cudadrv *c, cu_result rc)
{
	static _Thread_local char text[192];
	const char *name = NULL, *desc = NULL;
	if (c->get_error_name && c->get_error_name(rc, &name) != 0)
		name = NULL;
	if (c->get_error_string && c->get_error_string(rc, &desc) != 0)
		desc = NULL;
	if (name && desc)
		snprintf(text, sizeof text, "%s (%s)", name, desc);
	else if (name || desc)
		snprintf(text, sizeof text, "%s", name ? name : desc);
	else
		snprintf(text, sizeof text, "CUDA error %d", rc);
	return text;
}

const char *cudadrv_missing(const struct cudadrv *c)
{
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!*slot((struct cudadrv *)c, &syms[i]))
			return syms[i].names[0];
	return NULL;
}
