/* cmd_rules: `gpuopt rules` — list every rule scan reports. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/diag.h"
#include "scan/kb.h"

static const char help[] =
	"Usage: gpuopt rules [--format text|json]\n"
	"\n"
	"List every rule `gpuopt scan` reports: its id (stable, never reused), name,\n"
	"category, default severity and a one-line summary.\n"
	"`gpuopt explain RULE` prints what a rule detects, why it matters and an example.\n";

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {{"format", required_argument, NULL, 'f'}, {NULL, 0, NULL, 0}};
	const char *format = "text";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f:", longopts, NULL)) != -1) {
		if (c == 'f' && (strcmp(optarg, "text") == 0 || strcmp(optarg, "json") == 0)) {
			format = optarg;
			continue;
		}
		diag_error("rules: %s (see `gpuopt rules --help`)",
			   c == 'f' ? "--format is text or json" : "unknown option");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		diag_error("rules: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	char *why;
	struct kb *kb = kb_load(&why);
	if (!kb) {
		diag_error("knowledge data: %s", why);
		free(why);
		return EXIT_USAGE;
	}
	if (strcmp(format, "json") == 0) {
		json_t *arr = json_array();
		for (size_t i = 0; i < kb->nrules; i++) {
			const struct rule *r = &kb->rules[i];
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", r->id, "name",
							     r->name, "category", r->category, "severity",
							     severity_name(r->severity), "summary", r->summary));
		}
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(arr);
	} else {
		printf("%-7s %-40s %-22s %-8s %s\n", "ID", "NAME", "CATEGORY", "SEVERITY", "SUMMARY");
		for (size_t i = 0; i < kb->nrules; i++) {
			const struct rule *r = &kb->rules[i];
			printf("%-7s %-40s %-22s %-8s %s\n", r->id, r->name, r->category,
			       severity_name(r->severity), r->summary);
		}
	}
	kb_free(kb);
	return EXIT_OK;
}

const struct command cmd_rules = {
	.name = "rules",
	.summary = "list every rule that scan reports",
	.help = help,
	.run = run,
};
