/*
 * rt_startup_io_early: does the program's heap stay in libc's main arena
 * (the brk heap) after the runtime's early start? A malloc in that start
 * would make libc give the main thread a new arena (src/load/alloc.c).
 * With -DHEAP_PREINIT it has a DT_PREINIT_ARRAY function (an early
 * start); without, link a stock kCFI library for one. Prints
 * "heap=brk" or "heap=elsewhere".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef HEAP_PREINIT
static int preinit_ran;

static void heap_preinit(void)
{
	preinit_ran = 1;
}

__attribute__((used, section(".preinit_array")))
static void (*const heap_entry)(void) = heap_preinit;
#else
/* What the stock kCFI library (rt_early_lib.c) calls back. */
int early_cb(int x)
{
	return x + 1;
}
#endif

extern char end;	/* the linker's: the end of the executable's data */

int main(void)
{
	void *p = malloc(64);
	uintptr_t a = (uintptr_t)p;
	int brk = a >= (uintptr_t)&end && a < (uintptr_t)sbrk(0);

	printf("heap=%s\n", brk ? "brk" : "elsewhere");
	free(p);
	return 0;
}
