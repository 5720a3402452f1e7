/* trap_fifo: says "ready" once loaded, waits for a line on stdin, then
 * calls a function of another type through the library's check
 * (tests/e2e/trap_fifo.sh). */
#include <stdio.h>

typedef int (*tf_fn)(int);
int tf_call(tf_fn f, int x);

static long tf_other(const char *s)
{
	return s != NULL;
}

int main(void)
{
	char line[16];

	puts("ready");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;
	return tf_call((tf_fn)(void *)tf_other, 1);
}
