// SPDX-License-Identifier: MIT
/*
 * An LD_PRELOAD interposer in the style of libfaketime (compat_next.sh):
 * time() and ldexp() found with dlsym(RTLD_NEXT) and dlvsym(RTLD_NEXT)
 * and called through those pointers. Built twice, as libnext_a.so and
 * libnext_b.so (-DNEXT_TAG): preloaded together, a's "next" is b's
 * (kCFI: the plain pointer) and b's is libc's / libm's (veneers).
 * ldexp is looked up with a version, which b's (unversioned) does not
 * have: both get libm's.
 *
 *   NEXT_CONFUSE=1   time() calls its RTLD_NEXT pointer through another
 *                    type (long (*)(long, long)). When that is b's time
 *                    (kCFI, typed) it must trap wherever a check is made;
 *                    libc's has no type and may be called through any
 *                    (docs/compat.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef NEXT_TAG
#define NEXT_TAG "a"
#endif

typedef time_t (*time_fn)(time_t *);
typedef double (*ldexp_fn)(double, int);

static time_fn next_time;
static ldexp_fn next_ldexp;

/* In the constructor, as libfaketime's ftpl_init does. */
__attribute__((constructor)) static void next_init(void)
{
	next_time = (time_fn)dlsym(RTLD_NEXT, "time");
	next_ldexp = (ldexp_fn)dlvsym(RTLD_NEXT, "ldexp", "GLIBC_2.2.5");
	if (!next_time || !next_ldexp || dlsym(RTLD_NEXT, "no_such_function")) {
		fprintf(stderr, "next_%s: RTLD_NEXT lookup failed\n", NEXT_TAG);
		exit(5);
	}
}

time_t time(time_t *t)
{
	if (getenv("NEXT_CONFUSE")) {
		long (*bad)(long, long) = (long (*)(long, long))(void *)next_time;

		return (time_t)bad(0, 0);
	}
	fputs(NEXT_TAG ">", stdout);
	return next_time(t) >= 1000000000 ? 1000000000 : 0;
}

double ldexp(double x, int e)
{
	return next_ldexp(x, e) + 1.0;
}
