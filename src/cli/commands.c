/* commands: the table of subcommands, in the order `gpuopt --help` lists them. */
#include "commands.h"

#include <string.h>

const struct command *const commands[] = {
	&cmd_scan,
	&cmd_rules,
	&cmd_explain,
	&cmd_bench,
	&cmd_verify,
	&cmd_try,
	&cmd_report,
	NULL,
};

const struct command *command_find(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}
