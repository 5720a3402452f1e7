// SPDX-License-Identifier: MIT
/* compat_next.sh's program: time() and ldexp(), which the preloaded
 * interposers take over. Built both with fineibt-cc and with plain
 * clang-22 (the runtime then comes in behind libc, with the preload). */
#include <math.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	double (*volatile f)(double, int) = ldexp;
	long t = (long)time(NULL);

	printf("|%ld %.1f\n", t, f(1.0, argc + 2));
	return 0;
}
