/* SPDX-License-Identifier: MIT */
/*
 * The runtime's reader of /proc/self/maps (src/rt/rtverify.c
 * fi_maps_read, fi_vma_next: no stdio, so that libfineibt.so imports no
 * sscanf or fopen for the loader to bind at every start). Lines of each
 * kind, a path with spaces, a line that does not parse, and, against
 * the kernel, every field of the mapping of this test's own code as
 * PROCMAP_QUERY gives it (fi_rt_vma).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "runtime.h"

static void parse_lines(void)
{
	char text[] =
		"55d0c0a00000-55d0c0a21000 r-xp 00002000 fe:01 1311745                    /usr/bin/a b (deleted)\n"
		"7ffd1c1b4000-7ffd1c1d5000 rw-p 00000000 00:00 0                          [stack]\n"
		"7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
		"not a line\n"
		"7f0000002000-7f0000003000 r--s 0001f000 103:0a 42 /dev/shm/x";
	char *at = text;
	const char *path;
	struct fi_vma v;

	CHECK("maps: a file mapping", fi_vma_next(&at, &v, &path) &&
	      v.lo == 0x55d0c0a00000 && v.hi == 0x55d0c0a21000 && v.r &&
	      !v.w && v.x && v.file && v.off == 0x2000 &&
	      v.dev == ((uint64_t)0xfe << 32 | 1) && v.ino == 1311745 &&
	      !strcmp(path, "/usr/bin/a b (deleted)"));
	CHECK("maps: the stack", fi_vma_next(&at, &v, &path) &&
	      v.lo == 0x7ffd1c1b4000 && v.r && v.w && !v.x && !v.file &&
	      !strcmp(path, "[stack]"));
	CHECK("maps: anonymous, no path", fi_vma_next(&at, &v, &path) &&
	      v.hi == 0x7f0000001000 && !v.r && !v.w && !v.x && !*path);
	CHECK("maps: a line that does not parse", fi_vma_next(&at, &v, &path) &&
	      v.hi == 0);
	CHECK("maps: the last line, no newline", fi_vma_next(&at, &v, &path) &&
	      v.lo == 0x7f0000002000 && v.off == 0x1f000 &&
	      v.dev == ((uint64_t)0x103 << 32 | 0xa) && v.ino == 42 &&
	      !strcmp(path, "/dev/shm/x"));
	CHECK("maps: then the end", !fi_vma_next(&at, &v, &path));
}

/* The line holding this function, against the kernel's own answer. */
static void against_kernel(void)
{
	uint64_t me = (uint64_t)(uintptr_t)against_kernel;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char *buf = fd >= 0 ? fi_maps_read(fd) : NULL, *at = buf;
	struct fi_vma v, k;
	const char *path;
	bool found = false;

	if (fd >= 0)
		close(fd);
	if (!CHECK("maps: read", buf))
		return;
	while (!found && fi_vma_next(&at, &v, &path))
		found = v.hi && me >= v.lo && me < v.hi;
	CHECK("maps: this code's line", found && v.r && v.x && !v.w &&
	      v.file && strstr(path, "test_maps"));
	if (fi_rt_vma(me, &k) == 0)
		CHECK("maps: as the kernel says", found && k.lo == v.lo &&
		      k.hi == v.hi && k.off == v.off && k.ino == v.ino &&
		      k.dev == v.dev && k.r == v.r && k.w == v.w && k.x == v.x);
	free(buf);
}

int main(void)
{
	parse_lines();
	against_kernel();
	return fi_check_exit();
}
