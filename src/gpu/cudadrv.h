/* cudadrv: the CUDA driver API (libcuda.so.1), opened with dlopen at run
 * time. The few types and functions gpuopt calls are declared here — their C
 * ABI has been stable for many driver releases — so gpuopt builds without a
 * CUDA header or library and runs on a machine without a driver, where
 * cudadrv_open says why there is none.
 *
 * One struct cudadrv holds the library handle and the function pointers; a
 * pointer the driver does not export is NULL (an old driver). gpuinfo.c uses
 * the device queries, the fit engine (src/fit/) everything.
 *
 * Ownership: cudadrv_open fills a caller-owned struct; cudadrv_close unloads
 * the library (accepts a struct that never opened). Strings the driver
 * returns are its own. Not thread-safe to open or close; the driver's own
 * calls are. */
#ifndef GPUOPT_CUDADRV_H
#define GPUOPT_CUDADRV_H

#include <stdbool.h>
#include <stddef.h>

typedef int cu_result; /* CUresult: 0 is CUDA_SUCCESS */
typedef int cu_device;
typedef unsigned long long cu_deviceptr;
typedef struct cu_ctx_st *cu_context;
typedef struct cu_stream_st *cu_stream;
typedef struct cu_event_st *cu_event;
typedef struct cu_mod_st *cu_module;
typedef struct cu_func_st *cu_function;

struct cu_uuid {
	unsigned char bytes[16];
};

/* The values gpuopt uses, as cuda.h defines them. */
enum {
	CU_ERROR_NO_DEVICE = 100,
	CU_ERROR_NOT_READY = 600,
	CU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
	CU_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_CAN_MAP_HOST_MEMORY = 19,
	CU_ATTR_PCI_BUS_ID = 33,
	CU_ATTR_PCI_DEVICE_ID = 34,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,
	CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
	CU_ATTR_L2_CACHE_SIZE = 38,
	CU_ATTR_UNIFIED_ADDRESSING = 41,
	CU_ATTR_PCI_DOMAIN_ID = 50,
	CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
	CU_STREAM_NON_BLOCKING = 1,
	CU_EVENT_DEFAULT = 0,
	CU_MEMHOSTALLOC_PORTABLE = 1,
	CU_MEMHOSTALLOC_DEVICEMAP = 2,
};

struct cudadrv {
	void *lib;
	bool initialized; /* cuInit(0) succeeded */
	/* device queries (gpuinfo.c) */
	cu_result (*init)(unsigned flags);
	cu_result (*driver_get_version)(int *version);
	cu_result (*device_get_count)(int *count);
	cu_result (*device_get)(cu_device *dev, int ordinal);
	cu_result (*device_get_name)(char *name, int len, cu_device dev);
	cu_result (*device_total_mem)(size_t *bytes, cu_device dev);
	cu_result (*device_get_attribute)(int *value, int attribute, cu_device dev);
	cu_result (*device_get_uuid)(struct cu_uuid *uuid, cu_device dev);
	cu_result (*device_get_pci_bus_id)(char *bus_id, int len, cu_device dev);
	cu_result (*device_can_access_peer)(int *can, cu_device dev, cu_device peer);
	cu_result (*get_error_string)(cu_result rc, const char **text);
	cu_result (*get_error_name)(cu_result rc, const char **text);
	/* contexts, streams, events */
	cu_result (*primary_ctx_retain)(cu_context *ctx, cu_device dev);
	cu_result (*primary_ctx_release)(cu_device dev);
	cu_result (*ctx_set_current)(cu_context ctx);
	cu_result (*ctx_synchronize)(void);
	cu_result (*ctx_enable_peer_access)(cu_context peer, unsigned flags);
	cu_result (*ctx_disable_peer_access)(cu_context peer);
	cu_result (*stream_create)(cu_stream *stream, unsigned flags);
	cu_result (*stream_destroy)(cu_stream stream);
	cu_result (*stream_synchronize)(cu_stream stream);
	cu_result (*event_create)(cu_event *event, unsigned flags);
	cu_result (*event_destroy)(cu_event event);
	cu_result (*event_record)(cu_event event, cu_stream stream);
	cu_result (*event_synchronize)(cu_event event);
	cu_result (*event_elapsed_time)(float *ms, cu_event start, cu_event end);
	/* memory */
	cu_result (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
	cu_result (*mem_alloc)(cu_deviceptr *ptr, size_t bytes);
	cu_result (*mem_free)(cu_deviceptr ptr);
	cu_result (*mem_host_alloc)(void **ptr, size_t bytes, unsigned flags);
	cu_result (*mem_free_host)(void *ptr);
	cu_result (*mem_host_get_device_pointer)(cu_deviceptr *dptr, void *ptr, unsigned flags);
	cu_result (*memset_d8)(cu_deviceptr ptr, unsigned char value, size_t n);
	cu_result (*memcpy_htod_async)(cu_deviceptr dst, const void *src, size_t n, cu_stream s);
	cu_result (*memcpy_dtoh_async)(void *dst, cu_deviceptr src, size_t n, cu_stream s);
	cu_result (*memcpy_dtod_async)(cu_deviceptr dst, cu_deviceptr src, size_t n, cu_stream s);
	cu_result (*memcpy_peer_async)(cu_deviceptr dst, cu_context dst_ctx, cu_deviceptr src,
				       cu_context src_ctx, size_t n, cu_stream s);
	/* modules and launches */
	cu_result (*module_load_data)(cu_module *mod, const void *image);
	cu_result (*module_unload)(cu_module mod);
	cu_result (*module_get_function)(cu_function *fn, cu_module mod, const char *name);
	cu_result (*launch_kernel)(cu_function fn, unsigned gx, unsigned gy, unsigned gz,
				   unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
				   cu_stream s, void **params, void **extra);
};

/* Loads libcuda.so.1 and calls cuInit(0). True when both worked. On failure
 * returns false with *why owned ("libcuda.so.1: cannot open shared object
 * file: ...", "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is
 * detected)"); after a failed cuInit the library stays loaded (c->lib set),
 * since cuDriverGetVersion works without it. */
bool cudadrv_open(struct cudadrv *c, char **why);

/* Unloads the library; accepts a struct that never opened. */
void cudadrv_close(struct cudadrv *c);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or "CUDA error N". A static
 * or driver-owned string, valid until the next call. */
const char *cudadrv_error(const struct cudadrv *c, cu_result rc);

/* NULL when every function the fit measurements call is there, else the name
 * of the first one missing (a driver too old). */
const char *cudadrv_missing(const struct cudadrv *c);

#endif
