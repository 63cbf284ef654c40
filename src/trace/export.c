/* export: the Chrome trace-event export (see export.h). */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/util.h"

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, "\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* A correlation id -> the host call that made it, for the ac2g flows. */
struct corr_map {
	uint32_t *keys;
	const struct trace_event **vals;
	size_t cap;
};

static void corr_put(struct corr_map *m, const struct trace_event *e)
{
	for (size_t i = (e->correlation * 2654435761u) % m->cap;; i = (i + 1) % m->cap)
		if (!m->vals[i] || m->keys[i] == e->correlation) {
			m->keys[i] = e->correlation;
			m->vals[i] = e;
			return;
		}
}

static const struct trace_event *corr_get(const struct corr_map *m, uint32_t corr)
{
	for (size_t i = (corr * 2654435761u) % m->cap;; i = (i + 1) % m->cap) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == corr)
			return m->vals[i];
	}
}

static const char *copy_name(const struct trace_event *e)
{
	static const char *const names[DIR_COUNT][HK_COUNT] = {
		{"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD"},
		{"Memcpy DtoH (Device -> Pageable)", "Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH"},
		{"Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"},
		{"Memcpy", "Memcpy", "Memcpy"}};
	return names[e->kind < DIR_COUNT ? e->kind : DIR_OTHER][e->hostkind < HK_COUNT ? e->hostkind : HK_OTHER];
}

static const char *sync_name(int kind)
{
	static const char *const names[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
					    "Context Sync"};
	return kind >= 0 && kind < 5 ? names[kind] : "Sync";
}

static void site_name(FILE *f, const struct trace_process *p, uint32_t site)
{
	const struct trace_site *s = &p->sites[site < p->nsites ? site : 0];
	char *n = s->file[0] ? xasprintf("%s(%u): %s", s->file, s->line, s->func) : xstrdup("(no Python frame)");
	jstr(f, n);
	free(n);
}

static void process(FILE *f, const struct trace_process *p, bool *first)
{
#define SEP() (fputs(*first ? "\n" : ",\n", f), *first = false)
	struct corr_map m = {0};
	m.cap = p->nevents * 2 + 16;
	m.keys = xcalloc(m.cap, sizeof *m.keys);
	m.vals = xcalloc(m.cap, sizeof *m.vals);
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].type == EV_API)
			corr_put(&m, &p->events[i]);
	SEP();
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"python (pid %d)\"}}",
		p->pid, p->pid);
	/* python_function spans: consecutive calls of one thread from one line. */
	const struct trace_event *run_first = NULL, *run_last = NULL;
	for (size_t i = 0; i <= p->nevents; i++) {
		const struct trace_event *e = i < p->nevents ? &p->events[i] : NULL;
		if (e && e->type != EV_API)
			continue;
		if (run_first && (!e || e->tid != run_first->tid || e->site != run_first->site)) {
			if (run_first->site) {
				SEP();
				fputs("{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":", f);
				site_name(f, p, run_first->site);
				fprintf(f, ",\"pid\":%d,\"tid\":%u,", p->pid, run_first->tid);
				ts(f, "ts", run_first->start);
				fputc(',', f);
				ts(f, "dur", run_last->end > run_first->start ? run_last->end - run_first->start : 0);
				fputs(",\"args\":{}}", f);
			}
			run_first = NULL;
		}
		if (e && (!run_first || e->start >= run_last->end)) {
			if (!run_first)
				run_first = e;
			run_last = e;
		}
	}
	for (size_t i = 0; i < p->nevents; i++) {
		const struct trace_event *e = &p->events[i];
		const char *name = p->strings[e->name];
		SEP();
		switch (e->type) {
		case EV_API:
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", strncmp(name, "cuda", 4) ? "cuda_driver" : "cuda_runtime");
			jstr(f, name);
			fprintf(f, ",\"pid\":%d,\"tid\":%u,", p->pid, e->tid);
			ts(f, "ts", e->start);
			fputc(',', f);
			ts(f, "dur", e->end - e->start);
			fprintf(f, ",\"args\":{\"correlation\":%u,\"python\":", e->correlation);
			site_name(f, p, e->site);
			fputs("}}", f);
			break;
		case EV_KERNEL:
		case EV_MEMCPY:
		case EV_MEMSET: {
			const char *cat = e->type == EV_KERNEL ? "kernel" : e->type == EV_MEMCPY ? "gpu_memcpy" : "gpu_memset";
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
			jstr(f, e->type == EV_KERNEL ? name : e->type == EV_MEMCPY ? copy_name(e) : "Memset (Device)");
			fprintf(f, ",\"pid\":%u,\"tid\":%u,", e->device, e->stream);
			ts(f, "ts", e->start);
			fputc(',', f);
			ts(f, "dur", e->end - e->start);
			fprintf(f, ",\"args\":{\"device\":%u,\"stream\":%u,\"correlation\":%u,\"python\":", e->device,
				e->stream, e->correlation);
			site_name(f, p, e->site);
			if (e->type == EV_KERNEL)
				fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", e->grid[0], e->grid[1], e->grid[2],
					e->block[0], e->block[1], e->block[2]);
			else
				fprintf(f, ",\"bytes\":%llu,\"memory bandwidth (GB/s)\":%.3f", (unsigned long long)e->bytes,
					e->end > e->start ? (double)e->bytes / (double)(e->end - e->start) : 0.0);
			fputs("}}", f);
			const struct trace_event *call = corr_get(&m, e->correlation);
			if (call) {
				SEP();
				fprintf(f, "{\"ph\":\"s\",\"id\":%u,\"pid\":%d,\"tid\":%u,", e->correlation, p->pid, call->tid);
				ts(f, "ts", call->start);
				fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}", f);
				SEP();
				fprintf(f, "{\"ph\":\"f\",\"id\":%u,\"pid\":%u,\"tid\":%u,", e->correlation, e->device, e->stream);
				ts(f, "ts", e->start);
				fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", f);
			}
			break;
		}
		case EV_SYNC:
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,",
				sync_name(e->kind), p->pid, e->tid);
			ts(f, "ts", e->start);
			fputc(',', f);
			ts(f, "dur", e->end - e->start);
			fprintf(f, ",\"args\":{\"stream\":%d,\"correlation\":%u}}", e->kind == 3 ? (int)e->stream : -1,
				e->correlation);
			break;
		case EV_NVTX_RANGE:
		case EV_NVTX_MARK:
			fputs("{\"ph\":\"", f);
			fputs(e->type == EV_NVTX_MARK ? "i\",\"s\":\"t" : "X", f);
			fputs("\",\"cat\":\"user_annotation\",\"name\":", f);
			jstr(f, name);
			fprintf(f, ",\"pid\":%d,\"tid\":%u,", p->pid, e->tid);
			ts(f, "ts", e->start);
			if (e->type == EV_NVTX_RANGE) {
				fputc(',', f);
				ts(f, "dur", e->end - e->start);
			}
			fputs(",\"args\":{\"domain\":", f);
			jstr(f, p->strings[e->grid[0]]);
			fputs(",\"python\":", f);
			site_name(f, p, e->site);
			fputs("}}", f);
			break;
		default:
			fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"?\",\"pid\":0,\"tid\":0,\"ts\":0}", f);
			break;
		}
	}
	free(m.keys);
	free(m.vals);
#undef SEP
}

void trace_export_chrome_to(const struct trace *t, FILE *f)
{
	fputs("{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\",\"traceName\":", f);
	struct buf cmd = {0};
	for (char **a = t->argv; a && *a; a++)
		buf_printf(&cmd, "%s%s", cmd.len ? " " : "", *a);
	jstr(f, cmd.data ? cmd.data : "");
	buf_free(&cmd);
	fputs(",\"distributedInfo\":{\"rank\":0,\"world_size\":1},\"deviceProperties\":[", f);
	size_t gi;
	json_t *g;
	json_array_foreach(json_object_get(t->gpu, "devices"), gi, g) {
		const char *name = json_string_value(json_object_get(g, "name"));
		fprintf(f, "%s{\"id\":%zu,\"name\":", gi ? "," : "", gi);
		jstr(f, name ? name : "GPU");
		json_t *mem = json_object_get(g, "memory_total_bytes");
		fprintf(f, ",\"totalGlobalMem\":%.0f}", json_is_number(mem) ? json_number_value(mem) : 0.0);
	}
	fputs("],\"traceEvents\":[", f);
	bool first = true;
	uint8_t devices_seen[1025] = {0};
	for (size_t i = 0; i < t->nprocs; i++) {
		process(f, &t->procs[i], &first);
		for (size_t k = 0; k < t->procs[i].nevents; k++) {
			uint32_t d = t->procs[i].events[k].device;
			if (t->procs[i].events[k].type <= EV_MEMSET && d <= 1024)
				devices_seen[d] = 1;
		}
	}
	for (uint32_t d = 0; d <= 1024; d++)
		if (devices_seen[d])
			fprintf(f, "%s\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":\"GPU %u\"}}",
				first ? "" : ",", d, d);
	fputs("\n]}\n", f);
}

bool trace_export_chrome(const struct trace *t, const char *path, char **why)
{
	size_t events = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		events += t->procs[i].nevents;
	if (!events) {
		*why = xstrdup("the trace has no timeline to export (record with --timeline)");
		return false;
	}
	struct atomic_file af;
	if (!atomic_open(&af, path, why))
		return false;
	trace_export_chrome_to(t, af.f);
	if (ferror(af.f)) {
		atomic_abort(&af);
		*why = xasprintf("cannot write '%s'", path);
		return false;
	}
	return atomic_commit(&af, why);
}
