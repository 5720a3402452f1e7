/* SPDX-License-Identifier: MIT */
/* The one place the library prints: a replaceable hook (libbpf-style). */
#include <stdbool.h>
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

/* FINEIBT_VERBOSE, set once at start-up by the runtime; read by the
 * trap side too, which must not depend on the runtime's constructor. */
static bool fi_verbose;

void fi_verbose_set(bool on)
{
	__atomic_store_n(&fi_verbose, on, __ATOMIC_RELAXED);
}

bool fi_verbose_on(void)
{
	return __atomic_load_n(&fi_verbose, __ATOMIC_RELAXED);
}

FINEIBT_API const char *fineibt_version(void)
{
	return FINEIBT_VERSION;
}
