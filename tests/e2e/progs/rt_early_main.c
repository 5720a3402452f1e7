/* rt_early's program: built by stock clang-22 (run under `fineibt run`)
 * and by fineibt-cc; see rt_early_lib.c. */
#include <stdio.h>

long early_ctor_value(void);
int early_same(void);

int early_cb(int x)
{
	return x + 1;
}

int main(void)
{
	printf("ctor=%ld same=%d\n", early_ctor_value(), early_same());
	return 0;
}

#ifdef EARLY_INTERPOSE
#include <stddef.h>

/* The program's own strrchr(3), a function libfineibt.so imports (its
 * system calls, formatting and strerror are its own since
 * src/load/ownlibc.c): the runtime's calls bind here, into an executable
 * the loader has not relocated when the runtime could start early, so it
 * must wait for its constructor. */
char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	do {
		if (*s == (char)c)
			last = s;
	} while (*s++);
	return (char *)last;
}
#endif
