/* fuzz_contract: any bytes as the JSON a contract's TOML turns into (what
 * tomllib gives gpuopt try) — the checker must accept it or say why, never
 * crash or leak, and an accepted contract must round-trip through its
 * JSON record with the same fields. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "try/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!doc)
		return 0;
	struct try_contract c;
	contract_defaults(&c);
	char *why = NULL;
	if (contract_from_json(doc, "fuzz.toml", &c, &why)) {
		if (why)
			abort();
		json_t *rec = contract_to_json(&c);
		if (!rec || json_array_size(json_object_get(rec, "outputs")) != c.noutputs ||
		    json_array_size(json_object_get(rec, "candidates")) != c.ncands)
			abort();
		for (size_t i = 0; i < c.noutputs; i++) {
			const char *p = c.outputs[i].path;
			if (!p || !*p || p[0] == '/')
				abort();
			/* no component is ".." */
			for (const char *s = p; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
				if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
					abort();
		}
		json_decref(rec);
	} else if (!why || strncmp(why, "fuzz.toml: ", 11) != 0) {
		abort();
	}
	free(why);
	contract_free(&c);
	json_decref(doc);
	return 0;
}
