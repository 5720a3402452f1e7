/* SPDX-License-Identifier: MIT */
#ifndef FI_PRINT_H
#define FI_PRINT_H

#include <stdarg.h>
#include <stdbool.h>
#include "fineibt.h"

/* Messages are one line each and start with "fineibt: ". */
void fi_print(enum fineibt_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * One message straight to stderr, formatted into a stack buffer (512
 * bytes) and written with one write: no stdio, no allocation (start-up
 * messages, before libc may be initialised).
 */
void fi_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fi_vsay(const char *fmt, va_list ap);

/* FINEIBT_VERBOSE diagnostics on/off (async-signal-safe read). */
void fi_verbose_set(bool on);
bool fi_verbose_on(void);

#define fi_warn(...)	fi_print(FINEIBT_WARN, "fineibt: " __VA_ARGS__)
#define fi_info(...)	fi_print(FINEIBT_INFO, "fineibt: " __VA_ARGS__)
#define fi_debug(...)	fi_print(FINEIBT_DEBUG, "fineibt: " __VA_ARGS__)

#endif
