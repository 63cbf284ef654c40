/* cmd_explain: `gpuopt explain RULE` — what a rule detects, why it matters,
 * and a before / after example. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/diag.h"
#include "scan/kb.h"

static const char help[] =
	"Usage: gpuopt explain RULE\n"
	"\n"
	"Print what RULE (an id such as GPU104, or a name such as sklearn-to-cuml-accel)\n"
	"detects, why it matters, and a before / after example.\n";

static void indent(const char *text)
{
	fputs("    ", stdout);
	for (const char *p = text; *p; p++) {
		putchar(*p);
		if (*p == '\n' && p[1])
			fputs("    ", stdout);
	}
	putchar('\n');
}

static int run(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		diag_error("explain: %s (usage: gpuopt explain RULE)",
			   argc < 2 ? "which rule?" : argc > 2 ? "one rule at a time" : "unknown option");
		return EXIT_USAGE;
	}
	char *why;
	struct kb *kb = kb_load(&why);
	if (!kb) {
		diag_error("knowledge data: %s", why);
		free(why);
		return EXIT_USAGE;
	}
	const struct rule *r = kb_rule(kb, argv[1]);
	if (!r) {
		diag_error("explain: no rule '%s' (`gpuopt rules` lists them)", argv[1]);
		kb_free(kb);
		return EXIT_USAGE;
	}
	printf("%s %s (%s, %s)\n\n%s\n", r->id, r->name, r->category, severity_name(r->severity), r->summary);
	if (r->why)
		printf("\nWhy it matters:\n%s\n", r->why);
	if (r->before) {
		puts("\nBefore:");
		indent(r->before);
	}
	if (r->after) {
		puts("\nAfter:");
		indent(r->after);
	}
	kb_free(kb);
	return EXIT_OK;
}

const struct command cmd_explain = {
	.name = "explain",
	.summary = "say what a rule detects, why it matters, with an example",
	.help = help,
	.run = run,
};
