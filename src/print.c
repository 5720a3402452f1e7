/* SPDX-License-Identifier: MIT */
/* The one place the library prints: a replaceable hook (libbpf-style). */
#include <stdio.h>

#include "fineibt.h"
#include "print.h"

static int fi_print_stderr(enum fineibt_print_level level, const char *fmt,
			   va_list ap)
{
	if (level == FINEIBT_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static fineibt_print_fn fi_print_hook = fi_print_stderr;

FINEIBT_API fineibt_print_fn fineibt_set_print(fineibt_print_fn fn)
{
	fineibt_print_fn old = fi_print_hook;

	fi_print_hook = fn;
	return old;
}

void fi_print(enum fineibt_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!fi_print_hook)
		return;
	va_start(ap, fmt);
	fi_print_hook(level, fmt, ap);
	va_end(ap);
}

FINEIBT_API const char *fineibt_version(void)
{
	return FINEIBT_VERSION;
}
