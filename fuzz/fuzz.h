/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses under fuzz/: silence the library's
 * print hook (messages are part of normal operation on bad input and
 * would drown libFuzzer's own output) and pick options from input bytes.
 */
#ifndef FI_FUZZ_H
#define FI_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fineibt.h"

static int fuzz_quiet(enum fineibt_print_level level, const char *fmt,
		      va_list ap)
{
	char buf[512];

	/* Still format every message: the format path is under test too. */
	return vsnprintf(buf, sizeof(buf), fmt, ap);
}

static inline void fuzz_silence(void)
{
	fineibt_set_print(fuzz_quiet);
}

#endif /* FI_FUZZ_H */
