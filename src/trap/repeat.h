/* SPDX-License-Identifier: MIT */
/*
 * cfi=warn: a failure seen before is counted, not reported in full again
 * (trap/repeat.c, docs/traps.md "Repeated failures").
 */
#ifndef FI_REPEAT_H
#define FI_REPEAT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The pair (@site, @target), with the type @type its caller expected,
 * failed again: if it was seen before, count it and return how many
 * times it has failed now, this one included (> 1); 0 if it was not seen
 * (nor for @site 0). Lock-free, no system call, a few words of stack.
 */
uint64_t fi_repeat_seen(uint64_t site, uint64_t target, uint32_t type);

/*
 * Remember a pair fi_repeat_seen() did not know: 1 (report it in full),
 * also when the table is full, for @site 0, or when the state cannot be
 * written; > 1 if another thread added it meanwhile (counted). One
 * window (runtime.h). Both from the SIGILL handler, async-signal-safe.
 */
uint64_t fi_repeat_add(uint64_t site, uint64_t target, uint32_t type);

/* Does count @n (> 1) get its "repeated N times" line: 10, 100, 1000... */
bool fi_repeat_due(uint64_t n);

#endif /* FI_REPEAT_H */
