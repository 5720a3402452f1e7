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
#include <sys/syscall.h>
#include <unistd.h>

/* The program's own write(2): the runtime's calls bind here, into an
 * executable the loader has not relocated when the runtime could start
 * early, so it must wait for its constructor. */
ssize_t write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}
#endif
