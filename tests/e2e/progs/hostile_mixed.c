/* SPDX-License-Identifier: MIT */
/*
 * hostile.sh: the kCFI half of a mixed executable. main() (kCFI) hands its
 * callbacks to plain_apply() in hostile_plain.c, built WITHOUT kCFI, which
 * calls them and its own static functions through pointers; kCFI code also
 * calls back a plain function it got as a pointer through a direct call
 * into the plain object. Prints "mixed N" (N fixed by the arithmetic).
 */
#include <stdio.h>

long plain_apply(long (*fn)(long), long x);
long plain_own(long x);
long plain_tail(long (*fn)(long, long), long a, long b);

static long twice(long x) { return 2 * x; }
static long add(long a, long b) { return a + b; }

int main(void)
{
	long (*volatile f)(long) = twice;
	long (*volatile g)(long, long) = add;
	long r = 0;

	for (int i = 0; i < 100; i++) {
		r += plain_apply(f, i);		/* plain -> kCFI via pointer */
		r += plain_own(i);		/* plain -> plain via pointer */
		r += plain_tail(g, i, 1);	/* plain -> kCFI, tail call */
	}
	printf("mixed %ld\n", r);
	return 0;
}
