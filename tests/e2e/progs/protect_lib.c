// SPDX-License-Identifier: MIT
/*
 * libfi_protect.so: a kCFI library that tests/e2e/protect_*.sh dlopen
 * after start-up, once the runtime state is read-only.
 */
#define NOINLINE __attribute__((noinline))

typedef long (*pl_fn1_t)(long);
/* A type nothing here has: the confused call uses it. */
typedef long (*pl_fnp_t)(const char *, long);

NOINLINE static long twice(long x) { return 2 * x; }
NOINLINE static long add1(long x) { return x + 1; }

static pl_fn1_t volatile ops[2] = { twice, add1 };

/* Legal: a call through a pointer inside the library, and one handed out. */
long pl_apply(int i, long x)
{
	return ops[i & 1](x);
}

pl_fn1_t pl_get(int i)
{
	return ops[i & 1];
}

/* Confused: twice called as a function of another type, from here. */
long pl_confused(long x)
{
	pl_fnp_t f = (pl_fnp_t)(void *)ops[0];

	return f("confused", x);
}
