/* nvtx: the tracer as an NVTX tool. gpuopt trace sets NVTX_INJECTION64_PATH
 * to this library, so every NVTX client in the process (the nvtx package,
 * cupy.cuda.nvtx, torch.cuda.nvtx, cudf.pandas' EXECUTE_FAST / EXECUTE_SLOW
 * ranges of domain cudf_pandas) calls InitializeInjectionNvtx2 at its first
 * NVTX call, and we fill in its function table: markers and ranges (push /
 * pop per thread, start / end across threads), domains and registered
 * strings. Each range is counted per (domain, message, Python site) with its
 * total time, and with --timeline also appended to the events file. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tracer.h"

#define EXPORT __attribute__((visibility("default")))

/* Handles are string ids + 1 (a domain's handle is its name's id + 1; the
 * default domain, NULL, is id 0). */
static uint32_t handle_id(const void *h)
{
	return h ? (uint32_t)((uintptr_t)h - 1) : 0;
}

static const void *id_handle(uint32_t id)
{
	return (const void *)(uintptr_t)(id + 1);
}

static uint32_t intern_locked(const char *s)
{
	pthread_mutex_lock(&t.lock);
	uint32_t id = s ? str_intern(s, (uint32_t)strnlen(s, 4096)) : 0;
	pthread_mutex_unlock(&t.lock);
	return id;
}

static uint32_t intern_wide(const wchar_t *w)
{
	char buf[1024];
	size_t at = 0;
	for (; w && *w && at + 4 < sizeof buf; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			buf[at++] = (char)c;
		} else if (c < 0x800) {
			buf[at++] = (char)(0xc0 | (c >> 6));
			buf[at++] = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			buf[at++] = (char)(0xe0 | (c >> 12));
			buf[at++] = (char)(0x80 | ((c >> 6) & 63));
			buf[at++] = (char)(0x80 | (c & 63));
		} else {
			buf[at++] = (char)(0xf0 | (c >> 18));
			buf[at++] = (char)(0x80 | ((c >> 12) & 63));
			buf[at++] = (char)(0x80 | ((c >> 6) & 63));
			buf[at++] = (char)(0x80 | (c & 63));
		}
	}
	buf[at] = '\0';
	return intern_locked(buf);
}

static uint32_t message_id(const nvtxEventAttributes_t *a)
{
	if (!a)
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return intern_locked(a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return intern_wide(a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return handle_id(a->message.registered);
	default:
		return 0;
	}
}

static int recording(void)
{
	return t.core_ready && !t.forked && !t.finalized && !tls.busy;
}

/* Counts one range or marker and puts it on the timeline. */
static void account(uint32_t domain, uint32_t name, uint32_t site, uint64_t start, uint64_t end, int mark)
{
	pthread_mutex_lock(&t.lock);
	t.nvtx_calls++;
	struct nvtx_stats *s = nvtx_get(domain, name, site, mark);
	if (s) {
		s->n++;
		s->ns += end - start;
	}
	if (t.events_fd >= 0) {
		struct trace_event ev = {0};
		ev.type = mark ? EV_NVTX_MARK : EV_NVTX_RANGE;
		ev.start = start;
		ev.end = end;
		ev.name = name;
		ev.site = site;
		ev.tid = thread_id();
		ev.grid[0] = domain;
		event_append(&ev);
	}
	pthread_mutex_unlock(&t.lock);
}

static int push(uint32_t domain, uint32_t name)
{
	if (!recording())
		return 0;
	uint32_t site = site_current();
	int d = tls.nvtx_depth++;
	if (d < 64) {
		tls.nvtx_stack[d].start = now_ns();
		tls.nvtx_stack[d].domain = domain;
		tls.nvtx_stack[d].name = name;
		tls.nvtx_stack[d].site = site;
	}
	return d;
}

static int pop(void)
{
	if (tls.nvtx_depth <= 0)
		return -1;
	int d = --tls.nvtx_depth;
	if (d < 64 && recording())
		account(tls.nvtx_stack[d].domain, tls.nvtx_stack[d].name, tls.nvtx_stack[d].site,
			tls.nvtx_stack[d].start, now_ns(), 0);
	return d;
}

static void mark(uint32_t domain, uint32_t name)
{
	if (!recording())
		return;
	uint32_t site = site_current();
	uint64_t now = now_ns();
	account(domain, name, site, now, now, 1);
}

/* Start / end ranges may end on another thread: a small table by id. */
#define OPEN_MAX 256
static struct { uint64_t id, start; uint32_t domain, name, site; } open_ranges[OPEN_MAX];
static uint64_t next_range_id = 1;

static nvtxRangeId_t start_range(uint32_t domain, uint32_t name)
{
	if (!recording())
		return 0;
	uint32_t site = site_current();
	pthread_mutex_lock(&t.lock);
	uint64_t id = next_range_id++;
	for (int i = 0; i < OPEN_MAX; i++)
		if (!open_ranges[i].id) {
			open_ranges[i].id = id;
			open_ranges[i].start = now_ns();
			open_ranges[i].domain = domain;
			open_ranges[i].name = name;
			open_ranges[i].site = site;
			break;
		}
	pthread_mutex_unlock(&t.lock);
	return id;
}

static void end_range(nvtxRangeId_t id)
{
	if (!id || !recording())
		return;
	pthread_mutex_lock(&t.lock);
	int found = -1;
	for (int i = 0; i < OPEN_MAX; i++)
		if (open_ranges[i].id == id) {
			found = i;
			open_ranges[i].id = 0;
			break;
		}
	pthread_mutex_unlock(&t.lock);
	if (found >= 0)
		account(open_ranges[found].domain, open_ranges[found].name, open_ranges[found].site,
			open_ranges[found].start, now_ns(), 0);
}

/* ---- the NVTX entry points ---- */

static void NVTX_API markEx(const nvtxEventAttributes_t *a) { mark(0, message_id(a)); }
static void NVTX_API markA(const char *m) { mark(0, intern_locked(m)); }
static void NVTX_API markW(const wchar_t *m) { mark(0, intern_wide(m)); }
static nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t *a) { return start_range(0, message_id(a)); }
static nvtxRangeId_t NVTX_API rangeStartA(const char *m) { return start_range(0, intern_locked(m)); }
static nvtxRangeId_t NVTX_API rangeStartW(const wchar_t *m) { return start_range(0, intern_wide(m)); }
static void NVTX_API rangeEnd(nvtxRangeId_t id) { end_range(id); }
static int NVTX_API rangePushEx(const nvtxEventAttributes_t *a) { return push(0, message_id(a)); }
static int NVTX_API rangePushA(const char *m) { return push(0, intern_locked(m)); }
static int NVTX_API rangePushW(const wchar_t *m) { return push(0, intern_wide(m)); }
static int NVTX_API rangePop(void) { return pop(); }

static void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mark(handle_id(d), message_id(a));
}
static nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start_range(handle_id(d), message_id(a));
}
static void NVTX_API domainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	end_range(id);
}
static int NVTX_API domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(handle_id(d), message_id(a));
}
static int NVTX_API domainRangePop(nvtxDomainHandle_t d)
{
	(void)d;
	return pop();
}
static nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)id_handle(intern_locked(s));
}
static nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	return (nvtxStringHandle_t)id_handle(intern_wide(s));
}
static nvtxDomainHandle_t NVTX_API domainCreateA(const char *name)
{
	return (nvtxDomainHandle_t)id_handle(intern_locked(name));
}
static nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t *name)
{
	return (nvtxDomainHandle_t)id_handle(intern_wide(name));
}
static void NVTX_API domainDestroy(nvtxDomainHandle_t d) { (void)d; }

static void set(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer f)
{
	if (id < size && table[id])
		*table[id] = f;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	tracer_core_init();
	if (!t.core_ready)
		return 0;
	const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	if (!cb || !cb->GetModuleFunctionTable) {
		tracer_nvtx_status("the NVTX library offers no callback table");
		return 0;
	}
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned n1 = 0, n2 = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n1) || !core ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n2) || !core2) {
		tracer_nvtx_status("the NVTX library's core tables are missing");
		return 0;
	}
#define F(x) ((NvtxFunctionPointer)(x))
	set(core, n1, NVTX_CBID_CORE_MarkEx, F(markEx));
	set(core, n1, NVTX_CBID_CORE_MarkA, F(markA));
	set(core, n1, NVTX_CBID_CORE_MarkW, F(markW));
	set(core, n1, NVTX_CBID_CORE_RangeStartEx, F(rangeStartEx));
	set(core, n1, NVTX_CBID_CORE_RangeStartA, F(rangeStartA));
	set(core, n1, NVTX_CBID_CORE_RangeStartW, F(rangeStartW));
	set(core, n1, NVTX_CBID_CORE_RangeEnd, F(rangeEnd));
	set(core, n1, NVTX_CBID_CORE_RangePushEx, F(rangePushEx));
	set(core, n1, NVTX_CBID_CORE_RangePushA, F(rangePushA));
	set(core, n1, NVTX_CBID_CORE_RangePushW, F(rangePushW));
	set(core, n1, NVTX_CBID_CORE_RangePop, F(rangePop));
	set(core2, n2, NVTX_CBID_CORE2_DomainMarkEx, F(domainMarkEx));
	set(core2, n2, NVTX_CBID_CORE2_DomainRangeStartEx, F(domainRangeStartEx));
	set(core2, n2, NVTX_CBID_CORE2_DomainRangeEnd, F(domainRangeEnd));
	set(core2, n2, NVTX_CBID_CORE2_DomainRangePushEx, F(domainRangePushEx));
	set(core2, n2, NVTX_CBID_CORE2_DomainRangePop, F(domainRangePop));
	set(core2, n2, NVTX_CBID_CORE2_DomainRegisterStringA, F(domainRegisterStringA));
	set(core2, n2, NVTX_CBID_CORE2_DomainRegisterStringW, F(domainRegisterStringW));
	set(core2, n2, NVTX_CBID_CORE2_DomainCreateA, F(domainCreateA));
	set(core2, n2, NVTX_CBID_CORE2_DomainCreateW, F(domainCreateW));
	set(core2, n2, NVTX_CBID_CORE2_DomainDestroy, F(domainDestroy));
	tracer_nvtx_status("recording");
	return 1;
}
