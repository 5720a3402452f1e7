// SPDX-License-Identifier: MIT
/*
 * libfi_escape.so: the kCFI library tests/e2e/escape_*.sh dlopen. Its
 * text is padded to a size nothing else in the test maps (EL_PAD), so the
 * racing writer of escape_race can tell the runtime's scratch copy of it
 * from other anonymous mappings by size alone.
 */
#define NOINLINE __attribute__((noinline))

typedef long (*el_fn1_t)(long);
typedef long (*el_fnp_t)(const char *, long);

NOINLINE static long twice(long x) { return 2 * x; }
NOINLINE static long add1(long x) { return x + 1; }

static el_fn1_t volatile ops[2] = { twice, add1 };

/* Legal: an indirect call inside the library. Returns 42 for (0, 21). */
long el_apply(int i, long x)
{
	return ops[i & 1](x);
}

/* Confused: twice called as a function of another type. */
long el_confused(long x)
{
	el_fnp_t f = (el_fnp_t)(void *)ops[0];

	return f("confused", x);
}

/* For the coarse check (escape_prog coarse): a static function whose
 * address escapes (an entry, though no dynamic symbol names it) ... */
void *el_entry(void)
{
	return (void *)ops[0];
}

/* ... and a 16-aligned instruction inside a function (no entry), whose
 * label is assembler-local: no symbol of any kind is at it. */
NOINLINE long el_body(void)
{
	__asm__ volatile(".balign 16, 0x90\n.Lel_mid:\n\tnop");
	return 7;
}

void *el_mid(void)
{
	void *p;

	__asm__("lea .Lel_mid(%%rip), %0" : "=r"(p));
	return p;
}

/* Never called: makes the text 5 pages or more (int3 filler). */
void el_pad(void)
{
	__asm__ volatile(".skip 18000, 0xcc");
}
