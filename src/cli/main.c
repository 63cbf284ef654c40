/* main: global options (--help, --version), `gpuopt help CMD`, dispatch
 * through the command table, and the one check, for every command, that
 * what it wrote to stdout arrived. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/diag.h"
#include "core/fileio.h"
#include "core/version.h"

static void usage(FILE *out)
{
	fputs("gpuopt - find where a GPU library can take over scientific Python code, and prove it pays\n"
	      "\n"
	      "Usage: gpuopt [--version] [--help] COMMAND [ARGS...]\n"
	      "\n"
	      "Commands:\n", out);
	for (size_t i = 0; commands[i]; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n"
	      "`gpuopt help COMMAND` or `gpuopt COMMAND --help` shows a command's options.\n"
	      "Exit codes: 0 ok, 1 the check failed (findings at the failing level), 2 usage or input error.\n",
	      out);
}

static int help_for(const char *name)
{
	const struct command *c = command_find(name);
	if (!c) {
		diag_error("help: unknown command '%s' (see `gpuopt --help`)", name);
		return EXIT_USAGE;
	}
	fputs(c->help, stdout);
	return EXIT_OK;
}

/* Started with fd 0, 1 or 2 closed (CI runners, daemons), gpuopt would hand
 * those numbers to the next file it opens, and a command it spawns would
 * then read or write that file. Keep them taken by /dev/null, opened the
 * other way round (stdin for writing, stdout and stderr for reading), so
 * that they still act closed: reading stdin or writing stdout fails with
 * EBADF, and `scan - <&-` or `scan x.py >&-` is an error, not a silent
 * empty input or a report sent nowhere. */
static void reserve_standard_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (n >= 0 && n != fd)
			close(n);
	}
}

/* rc, unless what was written to stdout did not arrive (closed, full):
 * then that is said ("gpuopt: CMD: standard output: why") and the exit code
 * is a usage or input error's. */
static int finish(const char *cmd, int rc)
{
	int err = stdout_flush_error();
	if (!err)
		return rc;
	if (cmd)
		diag_error("%s: standard output: %s", cmd, strerror(err));
	else
		diag_error("standard output: %s", strerror(err));
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	reserve_standard_fds();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *first = argv[1];
	if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
		usage(stdout);
		return finish(NULL, EXIT_OK);
	}
	if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
		printf("gpuopt %s\n", GPUOPT_VERSION);
		return finish(NULL, EXIT_OK);
	}
	if (strcmp(first, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return finish(NULL, EXIT_OK);
		}
		return finish("help", help_for(argv[2]));
	}
	if (first[0] == '-') {
		diag_error("unknown option '%s' (see `gpuopt --help`)", first);
		return EXIT_USAGE;
	}
	const struct command *c = command_find(first);
	if (!c) {
		diag_error("'%s' is not a gpuopt command (see `gpuopt --help`)", first);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return finish(c->name, help_for(first));
	return finish(c->name, c->run(argc - 1, argv + 1));
}
