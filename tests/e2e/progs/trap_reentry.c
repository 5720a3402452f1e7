/*
 * trap_reentry: a program that interposes the libc functions the trap
 * report used to call (open, fstat, read, write, mmap, munmap, mprotect,
 * close, getpid, clock_gettime, process_vm_readv) and strrchr, with kCFI code that counts its calls and, when
 * armed to 2, itself fails a CFI check. tests/e2e/trap_reentry.sh.
 *
 * argv[1]: 1 = a confused call to kCFI code, interposers count;
 *	    2 = the same, interposers also trap;
 *	    3 = a call into uninstrumented code (trap_reentry_lib.c, a
 *		plain pointer; the report names it with strrchr),
 *		interposers trap.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static volatile int armed;
static unsigned long calls, startup_calls;

__attribute__((noinline)) static int wrong(int x)
{
	return x + 1;
}

typedef long (*lfn)(long, long);
static lfn volatile confuse = (lfn)(void *)wrong;

/* Code in every interposer; armed >= 2: a CFI failure of its own. */
static void hit(void)
{
	if (!armed) {
		startup_calls++;
		return;
	}
	calls++;
	if (armed >= 2)
		confuse(1, 2);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	hit();
	return syscall(SYS_open, path, flags, mode);
}

int fstat(int fd, struct stat *st)
{
	hit();
	return syscall(SYS_fstat, fd, st);
}

ssize_t read(int fd, void *buf, size_t n)
{
	hit();
	return syscall(SYS_read, fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	hit();
	return syscall(SYS_write, fd, buf, n);
}

void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	hit();
	return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
}

int munmap(void *addr, size_t n)
{
	hit();
	return syscall(SYS_munmap, addr, n);
}

int mprotect(void *addr, size_t n, int prot)
{
	hit();
	return syscall(SYS_mprotect, addr, n, prot);
}

int close(int fd)
{
	hit();
	return syscall(SYS_close, fd);
}

pid_t getpid(void)
{
	hit();
	return (pid_t)syscall(SYS_getpid);
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	hit();
	return syscall(SYS_clock_gettime, clk, ts);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local,
			 unsigned long nlocal, const struct iovec *remote,
			 unsigned long nremote, unsigned long flags)
{
	hit();
	return syscall(SYS_process_vm_readv, pid, local, nlocal, remote,
		       nremote, flags);
}

char *strrchr(const char *s, int c)
{
	const char *r = NULL;

	hit();
	for (;; s++) {
		if (*s == (char)c)
			r = s;
		if (!*s)
			return (char *)r;
	}
}

extern int (*const reentry_plain_ptr)(int);

int main(int argc, char **argv)
{
	int how = argc > 1 ? atoi(argv[1]) : 1;
	lfn f = how == 3 ? (lfn)(void *)reentry_plain_ptr : confuse;
	long r;

	armed = how;
	r = f(3, 4);
	armed = 0;
	printf("r=%ld calls=%lu startup=%s\n", r, calls,
	       startup_calls ? "yes" : "no");
	return 0;
}
