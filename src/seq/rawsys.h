/* SPDX-License-Identifier: MIT */
/*
 * System calls made directly, not through libc. The runtime's start-up
 * must not call libc functions that an LD_PRELOAD interposer may define
 * (libfaketime: clock_gettime, getrandom, getpid, syscall...): such an
 * interposer is kCFI code that would run before it is rewritten, from
 * inside the runtime, and trap there (docs/compat.md). Nor may
 * the trap report: an interposed open or fstat that itself traps would
 * re-enter the SIGILL handler from inside it (docs/traps.md "Reports and
 * interposers").
 */
#ifndef FI_RAWSYS_H
#define FI_RAWSYS_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

/* Linux 6.10's mseal, where the C library does not name it yet. */
#ifndef SYS_mseal
#define SYS_mseal	462
#endif

/* The raw result: >= 0, or -errno. */
static inline long fi_sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long fi_sys6(long nr, long a, long b, long c, long d, long e,
			   long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * The calls the report path makes, with libc's return conventions minus
 * errno (-1 / MAP_FAILED on failure). x86-64's struct stat is the
 * kernel's.
 */
/*
 * open(2) as openat(AT_FDCWD, ...), as glibc makes it: a seccomp filter
 * written from what a program calls (systemd's SystemCallFilter=, a
 * container's profile) may allow openat and not open, and the runtime
 * opens files from the SIGILL handler too. -errno on failure.
 */
static inline long fi_sys_open(const char *path, int flags, int mode)
{
	return fi_sys6(SYS_openat, AT_FDCWD, (long)path, flags, mode, 0, 0);
}

static inline int fi_raw_open(const char *path, int flags, int mode)
{
	long r = fi_sys_open(path, flags, mode);

	return r < 0 ? -1 : (int)r;
}

/*
 * A descriptor the runtime keeps (/proc/self/mem and maps, the FINEIBT_LOG
 * file, the system log's socket), moved above 0, 1 and 2 when it landed on
 * one of them: in a program started with those closed, or in the fork
 * child of a daemon that closed them, it would otherwise be the program's
 * stdin or stdout (the program's next open would not get 0), or its
 * stderr, where the reports go. One fcntl and one close, only then; the
 * moved descriptor is close-on-exec. @fd, its new number, or -errno (@fd
 * is closed then).
 */
static inline long fi_fd_above_stdio(long fd)
{
	long moved;

	if (fd < 0 || fd > 2)
		return fd;
	moved = fi_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
	fi_sys3(SYS_close, fd, 0, 0);
	return moved;
}

static inline int fi_raw_fstat(int fd, struct stat *st)
{
	return fi_sys3(SYS_fstat, fd, (long)st, 0) < 0 ? -1 : 0;
}

static inline int fi_raw_close(int fd)
{
	return fi_sys3(SYS_close, fd, 0, 0) < 0 ? -1 : 0;
}

/*
 * All of @n bytes, or -1: a write a signal interrupted is made again
 * (EINTR before a byte went, or a short count after some did: a stream
 * socket such as a service's journal, a terminal), so a report is not cut
 * by a handler installed without SA_RESTART. A write that takes nothing
 * ends it (-1), as an error does.
 */
static inline ssize_t fi_raw_write(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	size_t done = 0;

	while (done < n) {
		long r = fi_sys3(SYS_write, fd, (long)(p + done),
				 (long)(n - done));

		if (r == -EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static inline void *fi_raw_mmap(void *addr, size_t len, int prot, int flags,
				int fd, off_t off)
{
	long r = fi_sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);

	/* Addresses never fall in the last page: -4095..-1 are errors. */
	return (unsigned long)r > -4096UL ? (void *)-1 : (void *)r;
}

static inline int fi_raw_munmap(void *addr, size_t len)
{
	return fi_sys3(SYS_munmap, (long)addr, (long)len, 0) < 0 ? -1 : 0;
}

static inline int fi_raw_mprotect(void *addr, size_t len, int prot)
{
	return fi_sys3(SYS_mprotect, (long)addr, (long)len, prot) < 0 ? -1 : 0;
}

/*
 * A module's file mapped read-only, for the report to read its symbols
 * and DWARF: @path opened without blocking and without taking a
 * terminal (a path that became a FIFO or a device since the module was
 * loaded must not hang the SIGILL handler, nor a device's open run from
 * it), and mapped only if it is a regular file of at least @min bytes.
 * MAP_FAILED, or the mapping with its size in @size.
 */
static inline void *fi_raw_map_file(const char *path, size_t min, size_t *size)
{
	struct stat st;
	void *map = (void *)-1;
	int fd = fi_raw_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
			     0);

	if (fd < 0)
		return map;
	if (!fi_raw_fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size >= min) {
		map = fi_raw_mmap(NULL, (size_t)st.st_size, PROT_READ,
				  MAP_PRIVATE, fd, 0);
		*size = (size_t)st.st_size;
	}
	fi_raw_close(fd);
	return map;
}

/*
 * The whole pages of a block about to be written in full (@n bytes at
 * @p, fresh memory) faulted in by one system call instead of one fault
 * each on first touch. On a virtual machine a fault costs about twice the
 * page it brings (this project's VM: 10 us a fault, under 5 us a page
 * through MADV_POPULATE_WRITE; docs/bench.md "Page faults"). Only for
 * blocks written whole: a page populated and never touched costs its
 * zeroing for nothing. Small blocks, and kernels without
 * MADV_POPULATE_WRITE (before 5.14), are left to fault.
 */
#define FI_PREFAULT_MIN	(4 * 4096UL)

static inline void fi_prefault(void *p, size_t n)
{
	unsigned long lo = ((unsigned long)p + 4095) & ~4095UL;
	unsigned long hi = ((unsigned long)p + n) & ~4095UL;

	if (p && n >= FI_PREFAULT_MIN && hi > lo)
		fi_sys3(SYS_madvise, (long)lo, (long)(hi - lo),
			MADV_POPULATE_WRITE);
}

/*
 * The page of @p (writable memory every start writes: a variable of the
 * runtime's .bss), faulted in by one system call instead of a fault on
 * first touch; with @n > 1, the @n pages from there. For the few pages
 * each start writes anyway: the call saves the fault's trap (10 us or
 * more on a virtual machine, the call about 2 us).
 */
static inline void fi_prefault_pages(const void *p, size_t n)
{
	unsigned long lo = (unsigned long)p & ~4095UL;

	if (p && n)
		fi_sys3(SYS_madvise, (long)lo, (long)(n * 4096), MADV_POPULATE_WRITE);
}

/*
 * Pages of a mapped file about to be read, mapped by one system call
 * instead of a fault each (file pages in the page cache: MADV_POPULATE_READ
 * maps them without reading anything). The pages [@lo, @hi), rounded out
 * to whole pages. A kernel before 5.14 refuses it: they fault as before.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
static inline void fi_prefault_read(unsigned long lo, unsigned long hi)
{
	lo &= ~4095UL;
	hi = (hi + 4095) & ~4095UL;
	if (lo && hi > lo)
		fi_sys3(SYS_madvise, (long)lo, (long)(hi - lo), MADV_POPULATE_READ);
}

#endif
