// SPDX-License-Identifier: MIT
/*
 * A table of libc function pointers (the shape of a database VFS) called
 * through: libc is not instrumented, so without fineibt-cc's veneers every
 * kCFI-family check would fail on these targets.
 *
 *   rt_libc FILE        copy FILE to stdout through the table, and sort
 *                       with qsort (libc calls our comparator through a
 *                       pointer: uninstrumented code entering at func+0)
 *   rt_libc FILE dlsym  the same with read() taken from dlsym(): no
 *                       link-time veneer; the runtime's dlsym gives one
 *                       (docs/compat.md)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vfs {
	int (*open)(const char *, int, ...);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	int (*close)(int);
	size_t (*len)(const char *);
};

static struct vfs volatile sys = { open, read, write, close, strlen };

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long v[] = { 5, 3, 9, 1, 7 };
	char buf[256];
	ssize_t n;
	int fd;

	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "dlsym"))
		sys.read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_DEFAULT, "read");
	fd = sys.open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = sys.read(fd, buf, sizeof(buf))) > 0) {
		if (sys.write(1, buf, (size_t)n) != n)
			return 1;
	}
	if (sys.close(fd))
		return 1;
	qsort(v, 5, sizeof(v[0]), cmp_long);
	if (v[0] != 1 || v[4] != 9)
		return 1;
	return sys.len("four") == 4 ? 0 : 1;
}
