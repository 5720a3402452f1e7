// SPDX-License-Identifier: MIT
/*
 * libwarn_reload_{a,b}.so (tests/e2e/warn_reload.sh): one source built
 * twice, -DWR_B naming the target otherwise. Same code, same layout: the
 * two libraries loaded one after the other at the same address have their
 * confused call at the same address, to a target at the same address,
 * though the target is another function of another library.
 */
#define NOINLINE __attribute__((noinline))

#ifdef WR_B
#define WR_TARGET b_target
#else
#define WR_TARGET a_target
#endif

typedef long (*wr_fn1_t)(long);
typedef long (*wr_fnp_t)(const char *, long);

NOINLINE long WR_TARGET(long x) { return 2 * x; }

static wr_fn1_t volatile wr_target = WR_TARGET;

/* Confused: a long (long) function called as long (const char *, long). */
NOINLINE long wr_confused(long x)
{
	wr_fnp_t f = (wr_fnp_t)(void *)wr_target;

	return f("confused", x) + 1;
}
