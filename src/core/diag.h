/* diag: the exit-code set and the one way gpuopt prints errors:
 * `gpuopt: <what>: <why>` on stderr. */
#ifndef GPUOPT_DIAG_H
#define GPUOPT_DIAG_H

enum exit_code {
	EXIT_OK = 0,     /* success; nothing at or above the failing level */
	EXIT_FAIL = 1,   /* the check failed: findings, differences, a slower candidate */
	EXIT_USAGE = 2,  /* usage or input error: bad option, unreadable input */
};

/* Prints "gpuopt: " + the formatted message + newline to stderr. */
void diag_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
