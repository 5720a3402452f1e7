/* SPDX-License-Identifier: MIT */
/*
 * The runtime's reader of /proc/self/maps (src/rt/rtverify.c
 * fi_maps_read, fi_vma_next, fi_maps_num: no stdio, so that libfineibt.so
 * imports no sscanf or fopen for the loader to bind at every start), the
 * one parser of maps lines: the anchor's name (rtone.c) and the shared
 * text cache's device and inode (rtcache.c, fi_cache_maps_find) read
 * through it. Lines of each kind, a path with spaces, lines that do not
 * parse (a field missing, a number too large), and, against the kernel,
 * every field of the mapping of this test's own code as PROCMAP_QUERY
 * gives it (fi_rt_vma) and as the cache's reader finds it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "rtcache.h"
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

/* One line: does it parse, and is nothing of it kept when it does not? */
static bool refused(const char *line)
{
	char text[256], *at = text;
	const char *path;
	struct fi_vma v;

	strcpy(text, line);
	return fi_vma_next(&at, &v, &path) && !v.lo && !v.hi && !v.off &&
	       !v.dev && !v.ino && !v.r && !v.file && !*path && !*at;
}

static void bad_lines(void)
{
	char ok[] = "1000-2000 r-xp 00000000 08:01 7 /a";
	const char *p;
	uint64_t v = 5;

	CHECK("maps: the good line parses", !refused(ok));
	CHECK("maps: refused, no hi", refused("1000 r-xp 00000000 08:01 7 /a"));
	CHECK("maps: refused, no perms", refused("1000-2000 00000000 08:01 7 /a"));
	CHECK("maps: refused, perms cut", refused("1000-2000 r-x"));
	CHECK("maps: refused, no offset", refused("1000-2000 r-xp "));
	CHECK("maps: refused, no minor", refused("1000-2000 r-xp 00000000 08: 7 /a"));
	CHECK("maps: refused, no inode", refused("1000-2000 r-xp 00000000 08:01"));
	CHECK("maps: refused, hex inode", refused("1000-2000 r-xp 00000000 08:01 x7 /a"));
	CHECK("maps: refused, lo above hi", refused("2000-1000 r-xp 00000000 08:01 7 /a"));
	CHECK("maps: refused, 17 hex digits",
	      refused("10000000000000000-10000000000000001 r-xp 00000000 08:01 7"));
	CHECK("maps: refused, an offset past 64 bits",
	      refused("1000-2000 r-xp 1ffffffffffffffff 08:01 7"));
	CHECK("maps: refused, an inode past 64 bits",
	      refused("1000-2000 r-xp 00000000 08:01 18446744073709551616 /a"));
	CHECK("maps: refused, a major past 32 bits",
	      refused("1000-2000 r-xp 00000000 100000000:01 7 /a"));
	CHECK("maps: refused, a minor past 32 bits",
	      refused("1000-2000 r-xp 00000000 08:100000000 7 /a"));
	p = "ffffffffffffffff-";
	CHECK("maps: 2^64 - 1 is a number", fi_maps_num(&p, 16, &v) &&
	      v == UINT64_MAX && *p == '-');
	p = "18446744073709551615 ";
	CHECK("maps: so in decimal", fi_maps_num(&p, 10, &v) &&
	      v == UINT64_MAX && *p == ' ');
	v = 5;
	p = "18446744073709551616";
	CHECK("maps: 2^64 is not, and nothing moves",
	      !fi_maps_num(&p, 10, &v) && v == 5 && *p == '1');
	p = "abc";
	CHECK("maps: no decimal digit, no number",
	      !fi_maps_num(&p, 10, &v) && v == 5 && *p == 'a');
	p = "Af";
	CHECK("maps: upper-case is not the kernel's hex",
	      !fi_maps_num(&p, 16, &v) && v == 5);
}

/*
 * The cache's reader (a 4 KiB buffer): a mapping's device and inode from
 * the line that starts at the address asked, the last line without its
 * newline never read (the kernel ends every line), a line that does not
 * parse giving nothing, and a line longer than the buffer whose rest
 * reads as a line of its own (a long path) skipped to its end.
 */
static void cache_lines(void)
{
	static char text[3 * 4096];
	uint64_t lo[5] = { 0x1000, 0x3000, 0x5000, 0x7000, 0xb000 };
	uint64_t dev[5], ino[5];
	size_t at = 0;
	int fd = memfd_create("test_maps", 0);

	if (!CHECK("maps: a memfd", fd >= 0))
		return;
	/* 4096 bytes, no newline: the buffer's first read. */
	at += (size_t)sprintf(text, "9000-a000 r--p 00000000 08:01 1 /");
	memset(text + at, 'd', 4096 - at);
	at = 4096;
	/* What follows would pass for a line of an address asked. */
	at += (size_t)sprintf(text + at, "b000-c000 r-xp 00000000 fe:01 666 /forged\n");
	at += (size_t)sprintf(text + at, "1000-2000 r-xp 00000000 103:0a 42 /a b (deleted)\n");
	at += (size_t)sprintf(text + at, "3000-4000 r-xp 00000000 08:01 43 /b extra\n");
	at += (size_t)sprintf(text + at, "5000-6000 r-xp 00000000 08:01\n");
	at += (size_t)sprintf(text + at, "7000-8000 r-xp 00000000 08:01 44 /no newline");
	if (!CHECK("maps: crafted text written",
		   write(fd, text, at) == (ssize_t)at && !lseek(fd, 0, SEEK_SET)))
		return;
	CHECK("maps: cache reader ran",
	      !fi_cache_maps_find_in(fd, lo, 5, dev, ino));
	CHECK("maps: cache, a long line's rest is no line", !dev[4] && !ino[4]);
	CHECK("maps: cache, a path with spaces",
	      dev[0] == makedev(0x103, 0xa) && ino[0] == 42);
	CHECK("maps: cache, the next line", dev[1] == makedev(8, 1) && ino[1] == 43);
	CHECK("maps: cache, no inode, nothing", !dev[2] && !ino[2]);
	CHECK("maps: cache, no newline, nothing", !dev[3] && !ino[3]);
	close(fd);
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
	if (found) {
		uint64_t dev = 1, ino = 1;
		struct stat st;

		CHECK("maps: the cache's reader finds it too",
		      !fi_cache_maps_find(&v.lo, 1, &dev, &ino) &&
		      !stat("/proc/self/exe", &st) && dev == st.st_dev &&
		      ino == st.st_ino && ino == v.ino &&
		      dev == makedev(v.dev >> 32, v.dev & UINT32_MAX));
	}
	if (fi_rt_vma(me, &k) == 0)
		CHECK("maps: as the kernel says", found && k.lo == v.lo &&
		      k.hi == v.hi && k.off == v.off && k.ino == v.ino &&
		      k.dev == v.dev && k.r == v.r && k.w == v.w && k.x == v.x);
	free(buf);
}

int main(void)
{
	parse_lines();
	bad_lines();
	cache_lines();
	against_kernel();
	return fi_check_exit();
}
