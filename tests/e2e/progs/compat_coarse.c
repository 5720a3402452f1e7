// SPDX-License-Identifier: MIT
/*
 * compat_coarse (tests/e2e/compat_coarse.sh): calls that carry no kCFI
 * check, which the module's thunks check coarsely (docs/compat.md,
 * "Calls without a kCFI check: the coarse check"). clang emits no check
 * for a call through an unprototyped pointer, `int (*)()` (bash's
 * `typedef int Function ();`), nor in a function marked
 * no_sanitize("kcfi"); both still call through the thunks.
 *
 *   legal    every arity 0..7 through Function *, a tail call, a
 *            no_sanitize("kcfi") call, libc's free through its veneer,
 *            an uninstrumented library's exported entry, and an
 *            unwind-protect stack modelled on bash's (unwind_prot.c:
 *            (*(elt->head.cleanup))(elt->arg.v)); prints "ok"
 *   mid      a call to a 16-aligned address inside a function
 *   pre      a call to a function's preamble (entry - 16)
 *   data     a call into data
 *   libc     a call into an uninstrumented library, not at an entry
 *   tail     a tail jump to the middle of a function
 *   nocfi    a no_sanitize("kcfi") call to the middle of a function
 *   unwind   an unwind-protect frame whose cleanup was overwritten
 *   jit      a registered JIT function (entry: legal; +16: not)
 *   mid-repeat N, tail-repeat N   mid or tail, N times (warn_repeat.sh)
 * A stopped call prints nothing more; where it runs (off, warn) the
 * program prints what the call returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fineibt.h"

typedef int Function ();

/* compat_coarse_raw.S: uninstrumented code handing out raw pointers. */
extern void *coarse_raw_abs(void);
extern void *coarse_raw_printf(void);

static int a0(void) { return 100; }
static int a1(int a) { return a; }
static int a2(int a, int b) { return a + 2 * b; }
static int a3(int a, int b, int c) { return a + b + c; }
static int a4(int a, int b, int c, int d) { return a * b + c * d; }
static int a5(int a, int b, int c, int d, int e) { return a + b + c + d + e; }
static int a6(int a, int b, int c, int d, int e, int f)
{
	return a + b + c + d + e + f;
}
static int a7(int a, int b, int c, int d, int e, int f, int g, int h)
{
	return a + b + c + d + e + f + g * h;
}

/* A frameless function with a 16-aligned instruction inside it. */
__attribute__((noinline)) int coarse_body(void)
{
	__asm__ volatile(".balign 16, 0x90\n\t.globl coarse_mid\n"
			 "coarse_mid:\n\tnop");
	return 7;
}
extern char coarse_mid[];

static const unsigned char coarse_data[32] __attribute__((aligned(16))) = { 0xc3 };

Function *volatile slot;

__attribute__((noinline)) static int tail2(Function *f, int x)
{
	return f(x, 1);		/* cs jmp __x86_indirect_thunk_<reg> */
}

typedef int (*typed_fn)(int, int);
__attribute__((no_sanitize("kcfi"), noinline)) static int nocfi(typed_fn f)
{
	return f(3, 4) + 1;	/* a call, not a tail jump */
}

/* ------------------------------------------------ bash's unwind-protect */

union uwp {
	struct { Function *cleanup; } head;
	struct { Function *cleanup; char *v; } arg;
};
static union uwp frames[8];
static int nframes, restored;

static void add_unwind_protect(Function *cleanup, char *arg)
{
	frames[nframes].arg.cleanup = cleanup;
	frames[nframes].arg.v = arg;
	nframes++;
}

static void run_unwind_frames(void)
{
	while (nframes > 0) {
		union uwp *elt = &frames[--nframes];

		(*(elt->head.cleanup))(elt->arg.v);
	}
}

static int restore_var(int *p) { *p = 42; restored++; return 0; }
static void xfree(char *p) { free(p); restored++; }

/* ------------------------------------------------------------------ JIT */

static Function *jit_func(void)
{
	uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fineibt_hash h = fineibt_rehash_hash(0x12345678);
	/* at entry + 4 (after its ENDBR), then at entry + 16 */
	static const uint8_t body[] = { 0xb8, 5, 0, 0, 0, 0xc3,
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xb8, 6, 0, 0, 0, 0xc3 };
	size_t n;

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0xcc, 4096);
	if (fineibt_emit_preamble(m, 4096, (uint64_t)(uintptr_t)m, h, 0, &n))
		return NULL;
	memcpy(m + n, body, sizeof(body));
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC) ||
	    fineibt_jit_register(m, 4096))
		return NULL;
	return (Function *)(m + FINEIBT_PREAMBLE_SIZE);
}

static int legal(void)
{
	Function *f[] = { (Function *)a0, (Function *)a1, (Function *)a2,
		(Function *)a3, (Function *)a4, (Function *)a5, (Function *)a6,
		(Function *)a7 };
	int v, bad = 0, x = 0;
	char *mem = malloc(16);

	bad |= (slot = f[0], slot()) != 100;
	bad |= (slot = f[1], slot(5)) != 5;
	bad |= (slot = f[2], slot(1, 2)) != 5;
	bad |= (slot = f[3], slot(1, 2, 3)) != 6;
	bad |= (slot = f[4], slot(2, 3, 4, 5)) != 26;
	bad |= (slot = f[5], slot(1, 2, 3, 4, 5)) != 15;
	bad |= (slot = f[6], slot(1, 2, 3, 4, 5, 6)) != 21;
	bad |= (slot = f[7], slot(1, 2, 3, 4, 5, 6, 7, 8)) != 77;
	bad |= tail2((Function *)a2, 3) != 5;
	bad |= nocfi(a2) != 12;
	/* free through its link-time veneer; abs raw from uninstrumented code */
	slot = (Function *)free;
	slot(malloc(8));
	slot = (Function *)coarse_raw_abs();
	bad |= (v = slot(-9)) != 9;
	add_unwind_protect((Function *)xfree, mem);
	add_unwind_protect((Function *)restore_var, (char *)&x);
	run_unwind_frames();
	bad |= x != 42 || restored != 2;
	puts(bad ? "bad" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "legal";
	Function *jf;
	int r = -1;

	if (!strcmp(what, "legal"))
		return legal();
	if (!strcmp(what, "mid"))
		r = (slot = (Function *)coarse_mid, slot());
	else if (!strcmp(what, "pre"))
		r = (slot = (Function *)((char *)a0 - 16), slot());
	else if (!strcmp(what, "data"))
		r = (slot = (Function *)coarse_data, slot());
	else if (!strcmp(what, "libc"))
		r = (slot = (Function *)((char *)coarse_raw_printf() + 16), 0);
	else if (!strcmp(what, "tail"))
		r = tail2((Function *)coarse_mid, 0);
	else if (!strcmp(what, "mid-repeat") || !strcmp(what, "tail-repeat")) {
		/* warn_repeat.sh: one coarse stop, again and again */
		long n = argc > 2 ? atol(argv[2]) : 10;

		for (long i = 0; i < n; i++)
			r = what[0] == 'm' ? (slot = (Function *)coarse_mid, slot()) :
			    tail2((Function *)coarse_mid, 0);
	}
	else if (!strcmp(what, "nocfi"))
		r = nocfi((typed_fn)coarse_mid);
	else if (!strcmp(what, "unwind")) {
		add_unwind_protect((Function *)restore_var, (char *)&r);
		frames[0].head.cleanup = (Function *)coarse_mid;
		run_unwind_frames();
	} else if (!strcmp(what, "jit") && (jf = jit_func())) {
		r = (slot = jf, slot()) * 10;
		r += (slot = (Function *)((char *)jf + 16), slot());
	}
	if (!strcmp(what, "libc"))
		r = slot(0);
	printf("%d\n", r);
	return 0;
}
