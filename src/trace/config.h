/* config: what gpuopt trace knows, from data/trace.json (compiled in, or
 * read from $GPUOPT_DATA_DIR): the rules' thresholds and texts, the pinned
 * copy rates used when nothing better is known, the tools that hold CUPTI's
 * one subscription, the NVTX ranges and log lines that say an accelerator
 * mode fell back to the CPU. Thresholds can be overridden (--set).
 *
 * Ownership: trace_config_load fills a struct the caller frees with
 * trace_config_free; the strings point into its JSON document. */
#ifndef GPUOPT_TRACE_CONFIG_H
#define GPUOPT_TRACE_CONFIG_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

enum trace_threshold {
	TH_KERNEL_WAIT_GAP_US,
	TH_MIN_RULE_SHARE,
	TH_MIN_RULE_SECONDS,
	TH_TRANSFER_SHARE,
	TH_ROUNDTRIP_MIN_COUNT,
	TH_ROUNDTRIP_MAX_BYTES,
	TH_PAGEABLE_MIN_BYTES,
	TH_SYNC_MIN_COUNT,
	TH_LAUNCH_MIN_COUNT,
	TH_LAUNCH_SHORT_SHARE,
	TH_STARVED_MIN_GAP_US,
	TH_STARVED_MIN_GAPS,
	TH_ALLOC_MIN_COUNT,
	TH_MEMORY_NEAR_CAPACITY,
	TH_FALLBACK_MIN_COUNT,
	TH_SAMPLE_LAUNCH_RATE,
	TH_SAMPLE_WINDOW_MS,
	TH_SAMPLE_PERIOD_MS,
	TH_COUNT
};

enum trace_rule {
	R_TRANSFER_BOUND,
	R_ROUNDTRIP_STORM,
	R_PAGEABLE_TRANSFER,
	R_SYNC_BOUND,
	R_LAUNCH_BOUND,
	R_GPU_STARVED,
	R_MEMORY_PRESSURE,
	R_CPU_FALLBACK,
	R_COUNT
};

struct trace_rule_text {
	const char *name, *severity, *summary, *evidence, *fix;
};

struct trace_subscriber {
	const char *match, *tool;
};

struct trace_nvtx_fallback {
	const char *library, *domain, *slow, *fast;
};

struct trace_log_pattern {
	const char *library, *kind, *text;
	int name_group, reason_group;
	regex_t re;
};

struct trace_config {
	json_t *doc;
	double th[TH_COUNT];
	const char *th_about[TH_COUNT];
	struct trace_rule_text rules[R_COUNT];
	double pinned_gbps[2];   /* H2D, D2H */
	const char *pinned_source;
	struct trace_subscriber *subscribers; size_t nsubscribers;
	struct trace_nvtx_fallback *nvtx; size_t nnvtx;
	struct trace_log_pattern *patterns; size_t npatterns;
};

/* The threshold and rule names as in data/trace.json. */
extern const char *const trace_threshold_names[TH_COUNT];
extern const char *const trace_rule_names[R_COUNT];

/* Loads and checks trace.json. False with *why (owned) when it is missing
 * or malformed (names the entry). */
bool trace_config_load(struct trace_config *c, char **why);
/* "NAME=VALUE": sets a threshold. False with *why (owned). */
bool trace_config_set(struct trace_config *c, const char *assignment, char **why);
void trace_config_free(struct trace_config *c);

/* The tool that a library path or injection path belongs to, or NULL. */
const char *trace_config_subscriber(const struct trace_config *c, const char *path);

#endif
