/* SPDX-License-Identifier: MIT */
/*
 * Repeated failures under cfi=warn (docs/traps.md "Repeated failures").
 *
 * A program that goes on after a failure usually fails again at the same
 * call with the same target, in a loop: a full report each time (its
 * lines on stderr, in the system log, a FINEIBT_LOG record) floods the
 * log and, under a rate-limited system log, pushes out the report of a
 * new failure. So a pair (call site, target; with the type the caller
 * expected) is reported in full once;
 * later failures of it are counted and the count is told at 10, 100,
 * 1000, ...
 *
 * The pairs seen are the trusted state's (runtime.h, struct fi_rt_repeat),
 * so a write into the process's memory cannot make a first failure look
 * like a repeat. A pair is added inside a window (rtwrite.c): the window
 * blocks every signal in the thread that holds its lock, so no thread
 * this handler interrupts can hold it, and two threads that fail at once
 * with a new pair are ordered by it (the second finds the first's entry
 * and counts). A pair seen before is found without the lock and counted
 * with an atomic add (each failure gets its own count: one thread tells
 * 10, one 100). A pair is retired when the module holding its site or
 * target goes away (src/rt/rtstate.c, fi_rt_repeat_forget); its slot is
 * taken again once the table is full. With every slot a live pair, new
 * pairs are reported in full every time.
 */
#include <signal.h>

#include "repeat.h"
#include "runtime.h"

_Static_assert(sizeof(((struct fi_rt_repeat *)0)->pair[0]) == 3 * sizeof(uint64_t),
	       "a pair is put as three words");

/*
 * The count of the pair in slot i, less one (the failure reported in
 * full): writable, as only a window may write the state and a window
 * per failure costs four system calls (two sigprocmask, fstat, pwrite).
 * Forged, it only changes which "repeated" lines are written; it never
 * makes a new pair look seen.
 */
static uint64_t fi_repeat_more[FI_RT_REPEAT];

/* The slot of (@site, @target, @type) in @r, or -1. Lock-free: a slot
 * is put before the count that publishes it. */
static long fi_repeat_find(const struct fi_rt_repeat *r, uint64_t site,
			   uint64_t target, uint32_t type)
{
	size_t n = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n && i < FI_RT_REPEAT; i++) {
		/* The site first: a retired slot taken again (site 0) gets
		 * its target and type before its site (fi_repeat_put). */
		if (__atomic_load_n(&r->pair[i].site, __ATOMIC_ACQUIRE) == site &&
		    r->pair[i].target == target && r->pair[i].type == type)
			return (long)i;
	}
	return -1;
}

/* A retired slot (its module went away: rtstate.c), or -1. */
static long fi_repeat_retired(const struct fi_rt_repeat *r)
{
	size_t n = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n && i < FI_RT_REPEAT; i++) {
		if (!__atomic_load_n(&r->pair[i].site, __ATOMIC_ACQUIRE))
			return (long)i;
	}
	return -1;
}

/* A pair in slot @i failed once more: its count (> 1; 1 if forged). */
static uint64_t fi_repeat_bump(long i)
{
	return __atomic_add_fetch(&fi_repeat_more[i], 1, __ATOMIC_RELAXED) + 1;
}

/* Under the window: the pair added to @r (when there is room): 1. */
static uint64_t fi_repeat_put(const struct fi_rt_repeat *r, uint64_t site,
			      uint64_t target, uint32_t type)
{
	/* Another thread may have added it since the look-up. */
	long i = fi_repeat_find(r, site, target, type);

	if (i >= 0)
		return fi_repeat_bump(i);
	if (r->n < FI_RT_REPEAT) {
		/* The slot, then the count that publishes it. */
		if (!fi_rt_put(&r->pair[r->n], (uint64_t[]){ site, target, type },
			       sizeof(r->pair[0])))
			FI_RT_PUT(r->n, r->n + 1);
		return 1;
	}
	/*
	 * Full: a retired slot is taken again. Its site stays 0 (no reader
	 * matches it) while its target and type are put, and its count
	 * starts again; the site, put last, publishes it.
	 */
	i = fi_repeat_retired(r);
	if (i < 0)
		return 1;
	__atomic_store_n(&fi_repeat_more[i], 0, __ATOMIC_RELAXED);
	if (!fi_rt_put(&r->pair[i].target, (uint64_t[]){ target, type },
		       2 * sizeof(uint64_t)))
		FI_RT_PUT(r->pair[i].site, site);
	return 1;
}

uint64_t fi_repeat_seen(uint64_t site, uint64_t target, uint32_t type)
{
	long i = site ? fi_repeat_find(&fi_rt()->repeat, site, target, type) : -1;

	return i >= 0 ? fi_repeat_bump(i) : 0;
}

uint64_t fi_repeat_add(uint64_t site, uint64_t target, uint32_t type)
{
	const struct fi_runtime *rt = fi_rt();
	sigset_t saved;
	uint64_t c;

	if (!site || (__atomic_load_n(&rt->repeat.n, __ATOMIC_ACQUIRE) >= FI_RT_REPEAT &&
		      fi_repeat_retired(&rt->repeat) < 0))
		return 1;
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return 1;
	c = fi_repeat_put(&rt->repeat, site, target, type);
	fi_rt_write_end(&saved);
	return c;
}

bool fi_repeat_due(uint64_t n)
{
	if (n < 10)
		return false;
	while (n % 10 == 0)
		n /= 10;
	return n == 1;
}
