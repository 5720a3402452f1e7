/*
 * rt_early: a kCFI program with a DT_PREINIT_ARRAY function, which the
 * loader runs before every constructor (libc's and the runtime's
 * included). It snapshots a preamble and calls through a pointer; main
 * checks the text it saw is the final one. PREINIT_CONFUSE set: the call
 * goes through another type, to be caught in the process's mode.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fn1_t)(int);
typedef long (*fn2_t)(long, long);

__attribute__((noinline)) int pre_twice(int x)
{
	return 2 * x;
}

static fn1_t volatile pre_fp = pre_twice;
static long pre_value = -1;
static unsigned char seen[32];

/* libc is not initialised yet: envp is the third argument. */
static void pre_init(int argc, char **argv, char **envp)
{
	bool confuse = false;

	memcpy(seen, (const char *)pre_twice - 16, sizeof(seen));
	for (char **e = envp; *e; e++)
		confuse |= !strncmp(*e, "PREINIT_CONFUSE=", 16);
	if (confuse)
		pre_value = ((fn2_t)(void *)pre_fp)(5, 6);
	else
		pre_value = pre_fp(5);
}

__attribute__((used, section(".preinit_array")))
static void (*const pre_entry)(int, char **, char **) = pre_init;

int main(void)
{
	printf("pre=%ld same=%d\n", pre_value,
	       !memcmp(seen, (const char *)pre_twice - 16, sizeof(seen)));
	return 0;
}
