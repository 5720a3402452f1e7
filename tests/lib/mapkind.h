/*
 * What the kernel says of an address, for test programs: the kind of
 * mapping holding it (/proc/self/maps) and whether its page, once read,
 * is the file's page or a private copy (/proc/self/pagemap). Header
 * only: included by the programs under tests/e2e/progs that need it.
 */
#ifndef FI_TEST_MAPKIND_H
#define FI_TEST_MAPKIND_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* "file" when the mapping holding @a is backed by a file, else "anon". */
static inline const char *kind(uintptr_t a)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	const char *k = "none";

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &ino) == 3 &&
		    a >= lo && a < hi) {
			k = ino ? "file" : "anon";
			break;
		}
	}
	if (f)
		fclose(f);
	return k;
}

/*
 * "shared" when the page holding @a, once read, is the file's page
 * (pagemap bit 61: file page or shared), "private" when it is a copy of
 * this process's own (anonymous, or a private copy of a file page).
 */
static inline const char *page(uintptr_t a)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	(void)*(volatile const char *)a;
	if (fd < 0 || pread(fd, &e, 8, (off_t)(a / 4096 * 8)) != 8)
		e = 0;
	if (fd >= 0)
		close(fd);
	if (!(e >> 63))
		return "absent";
	return (e >> 61) & 1 ? "shared" : "private";
}

#endif
