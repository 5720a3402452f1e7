/* SPDX-License-Identifier: MIT */
/*
 * Laying out a registered copy's arrays (fi_arena_lay_regs,
 * src/rt/rtarena.c), the step a start's first scan takes for each module
 * it registers, under the scan's own 2.6 KiB frame:
 *  - the fingerprint sample it lays out is the one fi_fp_sample takes
 *    (counted first, then taken straight into its room), for a module
 *    small enough to sample whole and for one of 3,000 sites (four runs);
 *  - it takes less than 1 KiB of stack (BOUND): the sample was a 2 KiB array on
 *    the stack, which took a start one stack page deeper in some
 *    environments (docs/bench.md, "The arena's first chunk in the
 *    state's block").
 * The stack is measured by the usual painting: a frame of a known byte
 * left below the caller, then the call (made once before, so that no
 * lazy binding is counted), then the lowest byte changed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime.h"

#define PAINT	(16 * 1024)
#define BYTE	0xa5
/*
 * The bound: 1 KiB, or 3 KiB under SAN=1, whose instrumentation gives
 * every frame redzones and its own calls (about 2 KiB for this layout;
 * the old 2 KiB array would take it past 4).
 */
#if defined(__SANITIZE_ADDRESS__)
#define BOUND	(3 * 1024)
#else
#define BOUND	1024
#endif

static uint8_t *painted;

static __attribute__((noinline)) void paint(void)
{
	volatile uint8_t area[PAINT];

	memset((void *)area, BYTE, sizeof(area));
	painted = (uint8_t *)area;
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) size_t lay(const struct fi_module *m,
					    uint8_t *buf, size_t cap,
					    struct fi_module *out)
{
	return fi_arena_lay_regs(m, 64, buf, cap, out);
}

/* The stack the layout of @m takes: bytes below the paint's top. */
static __attribute__((noinline)) size_t depth(const struct fi_module *m,
					      uint8_t *buf, size_t cap,
					      struct fi_module *out, size_t *len)
{
	const volatile uint8_t *p;

	paint();
	*len = lay(m, buf, cap, out);
	__asm__ volatile("" ::: "memory");
	for (p = painted; p < painted + PAINT && *p == BYTE; p++)
		;
	return (size_t)(painted + PAINT - (const uint8_t *)p);
}

static void module_of(struct fi_module *m, struct fi_func *f, size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fi_func){ .addr = 0x10000 + 0x40 * i,
					 .arity = (int8_t)(i % 4) };
	m->img.funcs = f;
	m->img.nfuncs = n;
}

static void one(const char *name, size_t n)
{
	static struct fi_func f[3000];
	static struct fi_module m, out;
	static uint64_t want[FI_FP_SITES];
	static uint8_t buf[64 * 1024];
	size_t need, len, used, nwant;
	char what[128];

	module_of(&m, f, n);
	nwant = fi_fp_sample(&m.img, want);
	/* Once before measuring: the loader binds libc's functions at their
	 * first call, on this stack. */
	lay(&m, NULL, 0, &out);
	used = depth(&m, NULL, 0, &out, &need);
	snprintf(what, sizeof(what), "lay stack: %s: measured", name);
	if (!CHECK(what, need > 64 && need <= sizeof(buf)))
		return;
	snprintf(what, sizeof(what), "lay stack: %s: under %d bytes (%zu)",
		 name, BOUND, used);
	CHECK(what, used < BOUND);
	used = depth(&m, buf, need, &out, &len);
	snprintf(what, sizeof(what), "lay stack: %s: filled, under %d bytes (%zu)",
		 name, BOUND, used);
	CHECK(what, len == need && used < BOUND);
	snprintf(what, sizeof(what), "lay stack: %s: the sample (%zu sites) as fi_fp_sample takes it",
		 name, nwant);
	CHECK(what, out.nfp == nwant && nwant > 0 && out.fp_site &&
	      !memcmp(buf + ((uintptr_t)out.fp_site), want,
		      nwant * sizeof(want[0])));
	snprintf(what, sizeof(what), "lay stack: %s: counting writes nothing", name);
	CHECK(what, fi_fp_sample(&m.img, NULL) == nwant);
}

int main(void)
{
	one("12 functions", 12);
	one("3000 functions", 3000);
	return fi_check_exit();
}
