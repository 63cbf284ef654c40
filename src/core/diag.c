/* diag: see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

void diag_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuopt: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
