/* commands: the command table. Each subcommand lives in its own file
 * (cmd_NAME.c) and defines one `const struct command cmd_NAME`.
 *
 * Adding a command is three steps:
 *   1. write src/cli/cmd_NAME.c defining `const struct command cmd_NAME`:
 *      it parses options into the engine's settings struct, calls the engine
 *      and renders its result (ARCHITECTURE.md);
 *   2. declare it below and add it to the table in commands.c;
 *   3. add the file to cli_lib in src/cli/meson.build. */
#ifndef GPUOPT_COMMANDS_H
#define GPUOPT_COMMANDS_H

struct command {
	const char *name;
	const char *summary; /* one line for `gpuopt --help` */
	const char *help;    /* full text for `gpuopt help NAME` and `gpuopt NAME --help` */
	/* argv[0] is the command name; returns an exit code from diag.h. */
	int (*run)(int argc, char **argv);
};

extern const struct command cmd_scan;
extern const struct command cmd_rules;
extern const struct command cmd_explain;
extern const struct command cmd_bench;
extern const struct command cmd_verify;
extern const struct command cmd_try;
extern const struct command cmd_report;

extern const struct command *const commands[];

/* The command called name, or NULL. */
const struct command *command_find(const char *name);

#endif
