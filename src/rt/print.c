/* SPDX-License-Identifier: MIT */
/* The one place the library prints: a replaceable hook (libbpf-style). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fineibt.h"
#include "print.h"
#include "rawsys.h"
#include "runtime.h"

/*
 * The default hook: the message to file descriptor 2 in one write, as
 * unbuffered stderr gives it, without stdio (in libfineibt.so, vsnprintf
 * is the string builder's: src/load/ownlibc.c, and neither vfprintf nor
 * stderr is imported). A message longer than the stack buffer is
 * formatted again into one from the heap.
 */
static int fi_print_stderr(enum fineibt_print_level level, const char *fmt,
			   va_list ap)
{
	char buf[1024], *p = buf;
	va_list again;
	int n;

	if (level == FINEIBT_DEBUG)
		return 0;
	va_copy(again, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf)) {
		p = malloc((size_t)n + 1);
		if (p)
			n = vsnprintf(p, (size_t)n + 1, fmt, again);
		else
			p = buf, n = sizeof(buf) - 1;
	}
	va_end(again);
	/* As stdio would: the rest after a short write, again after EINTR. */
	for (size_t off = 0; n > 0 && off < (size_t)n;) {
		ssize_t w = write(2, p + off, (size_t)n - off);

		if (w > 0)
			off += (size_t)w;
		else if (w == 0 || errno != EINTR)
			break;
	}
	if (p != buf)
		free(p);
	return n;
}

/*
 * The hook is a code pointer the (uninstrumented) library calls without a
 * check, so it lives in the read-only runtime state, not in .data: the
 * setter opens a write window (rtstate.c) for the one store, at any time,
 * and a stray write elsewhere cannot choose what the next message calls.
 * Not async-signal-safe, and not to be called from the hook itself.
 */
static fineibt_print_fn fi_print_hook(void)
{
	const struct fi_rt_calls *c = &fi_rt()->calls;

	if (!__atomic_load_n(&c->print_set, __ATOMIC_ACQUIRE))
		return fi_print_stderr;
	return __atomic_load_n(&c->print, __ATOMIC_RELAXED);
}

FINEIBT_API fineibt_print_fn fineibt_set_print(fineibt_print_fn fn)
{
	fineibt_print_fn old = fi_print_hook();
	const struct fi_runtime *rt;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return old;	/* the state cannot be written (rtwrite.c) */
	old = fi_print_hook();
	if (!FI_RT_PUT(rt->calls.print, fn))
		FI_RT_PUT(rt->calls.print_set, true);
	fi_rt_write_end(&saved);
	return old;
}

void fi_print(enum fineibt_print_level level, const char *fmt, ...)
{
	fineibt_print_fn hook = fi_print_hook();
	va_list ap;

	if (!hook)
		return;
	va_start(ap, fmt);
	hook(level, fmt, ap);
	va_end(ap);
}

void fi_vsay(const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	fi_raw_write(2, buf, (size_t)n);
}

void fi_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fi_vsay(fmt, ap);
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
