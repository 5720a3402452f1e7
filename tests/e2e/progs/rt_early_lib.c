/*
 * rt_early: a kCFI library built by stock clang-22 (no crt hook, no module
 * index) that the program needs at start-up. Its constructor snapshots
 * its own text (a preamble and its own call sites) and calls through
 * function pointers: into itself and back into the program. main asks
 * later whether the text the constructor saw is the text it runs now,
 * i.e. whether the runtime had rewritten it before the constructor ran.
 * EARLY_CONFUSE set: the constructor calls early_twice through another
 * type, to be caught there in the process's mode.
 */
#include <stdlib.h>
#include <string.h>

typedef int (*fn1_t)(int);
typedef long (*fn2_t)(long, long);

int early_cb(int x);	/* the program's */

__attribute__((noinline)) int early_twice(int x)
{
	return 2 * x;
}

static fn1_t volatile early_fp = early_twice;
static fn1_t volatile early_cbp = early_cb;
static long ctor_value = -1;
static unsigned char seen_pre[32], seen_ctor[96];

static void early_ctor(void);

static void early_snap(unsigned char *pre, unsigned char *ctor)
{
	memcpy(pre, (const char *)early_twice - 16, sizeof(seen_pre));
	memcpy(ctor, (const char *)early_ctor, sizeof(seen_ctor));
}

__attribute__((constructor)) static void early_ctor(void)
{
	early_snap(seen_pre, seen_ctor);
	if (getenv("EARLY_CONFUSE"))
		ctor_value = ((fn2_t)(void *)early_fp)(5, 6);
	else
		ctor_value = early_fp(5) + early_cbp(100);
}

long early_ctor_value(void)
{
	return ctor_value;
}

/* 1: the constructor ran on the text as it is now. */
int early_same(void)
{
	unsigned char pre[sizeof(seen_pre)], ctor[sizeof(seen_ctor)];

	early_snap(pre, ctor);
	return !memcmp(pre, seen_pre, sizeof(pre)) &&
	       !memcmp(ctor, seen_ctor, sizeof(ctor));
}
