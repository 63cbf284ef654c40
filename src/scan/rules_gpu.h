/* rules_gpu: GPU601-GPU604 as passes over the flow model (see rules_gpu.c).
 * A scan of one file makes a gpu_rules, hands gpu_rule_passes and it to
 * flow_run, then removes the port findings of the calls listed in drop
 * (a CPU call given device data is reported as GPU604 instead). */
#ifndef GPUOPT_RULES_GPU_H
#define GPUOPT_RULES_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "flow.h"
#include "kb.h"
#include "pyscan.h"

struct gpu_rules {
	struct scan_result *out;   /* borrowed: findings are appended */
	const struct source *src;
	const struct rule *rule[5]; /* GPU601..GPU605 */
	bool keep_text;
	size_t first;              /* this file's GPU findings start here in out */
	uint32_t *drop;            /* owned: start bytes of calls whose port finding goes */
	size_t ndrop;
};

extern const struct flow_pass gpu_rule_passes[];
extern const size_t gpu_rule_npasses;

void gpu_rules_init(struct gpu_rules *g, const struct kb *kb, struct scan_result *out, const struct source *src,
		    bool keep_text);
void gpu_rules_free(struct gpu_rules *g);

#endif
