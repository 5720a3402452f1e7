// SPDX-License-Identifier: MIT
/*
 * Old-style C definitions called through prototyped pointers (GNU-era
 * code): `static void invalidate()` through `void (*)(void)`, K&R
 * `int twice(a) int a;` through `int (*)(int)`, and an empty-parentheses
 * definition returning a pointer. Compiled as C17 (the default): these
 * are valid C.
 *
 *   compat_knr            every legal call; exit 0, prints "ok"
 *   compat_knr arity      invalidate() through void (*)(int): must trap
 *   compat_knr ret        invalidate() through int (*)(void): must trap
 *   compat_knr twice2     twice() through int (*)(int, int): must trap
 *   compat_knr unproto    calls through T (*)() pointers (no check)
 */
#include <stdio.h>
#include <string.h>

static int invalidated;

static void invalidate()
{
	invalidated++;
}

int twice(a)
int a;
{
	return a * 2;
}

int add3(a, b, c)
int a; char b; int c;
{
	return a + b + c;
}

static const char *name()
{
	return "name";
}

static int proto2(int a, int b)
{
	return a - b;
}

typedef void (*v_fn)(void);
typedef int (*i_fn)(int);

static v_fn volatile vp = invalidate;
static i_fn volatile ip = twice;
static int (*volatile i3p)(int, int, int) = add3;
static const char *(*volatile np)(void) = name;
/* Unprototyped pointers, assigned prototyped and old-style functions. */
static int (*volatile up)() = proto2;
static void (*volatile uvp)() = invalidate;

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "arity")) {
		((void (*)(int))vp)(1);
		return 0;
	}
	if (!strcmp(what, "ret"))
		return ((int (*)(void))vp)();
	if (!strcmp(what, "twice2"))
		return ((int (*)(int, int))ip)(1, 2);
	if (!strcmp(what, "unproto")) {
		uvp();
		printf("%d %d\n", up(5, 3), invalidated);
		return 0;
	}
	for (int i = 0; i < 3; i++)
		vp();
	if (invalidated != 3 || ip(21) != 42 || i3p(1, 2, 3) != 6 ||
	    strcmp(np(), "name"))
		return 1;
	printf("ok\n");
	return 0;
}
