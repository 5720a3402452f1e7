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
#include <stdio.h>

/* The program's own strerror(3), a function libfineibt.so imports (its
 * system calls are its own since src/load/ownlibc.c): the runtime's calls
 * bind here, into an executable the loader has not relocated when the
 * runtime could start early, so it must wait for its constructor. */
char *strerror(int e)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "error %d", e);
	return buf;
}
#endif
