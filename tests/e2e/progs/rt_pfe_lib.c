// SPDX-License-Identifier: MIT
/*
 * tests/e2e/rt_pfe_clean.sh: a library of PFE_N functions (PFE_N * 8
 * bytes of __patchable_function_entries, several pages) that says which
 * pages of its own entries the process wrote: /proc/self/pagemap bit 61
 * (a file page, or shared) stays set on a private file mapping's page
 * until a write copies it into an anonymous one.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#ifndef PFE_N
#define PFE_N 2000
#endif

typedef int (*pfe_fn)(int);

#define F1(n) __attribute__((noinline)) int pfe_f##n(int x) { return x + n; }
#define F10(n) F1(n##0) F1(n##1) F1(n##2) F1(n##3) F1(n##4) \
	       F1(n##5) F1(n##6) F1(n##7) F1(n##8) F1(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) \
		F10(n##5) F10(n##6) F10(n##7) F10(n##8) F10(n##9)
F100(1) F100(2) F100(3) F100(4) F100(5) F100(6) F100(7) F100(8) F100(9)
F100(10) F100(11) F100(12) F100(13) F100(14) F100(15) F100(16) F100(17)
F100(18) F100(19) F100(20)

pfe_fn volatile pfe_tab[] = { pfe_f100, pfe_f2000, pfe_f1234 };

extern const char __start___patchable_function_entries[]
	__attribute__((visibility("hidden")));
extern const char __stop___patchable_function_entries[]
	__attribute__((visibility("hidden")));

/* Pages wholly inside the section: *@clean of them never written. */
int pfe_pages(int *clean)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)__start___patchable_function_entries +
			pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t hi = (uintptr_t)__stop___patchable_function_entries &
		       ~(uintptr_t)(pg - 1);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), n = 0;

	*clean = 0;
	if (fd < 0)
		return -1;
	for (uintptr_t a = lo; a < hi; a += pg) {
		uint64_t e = 0;

		(void)*(const volatile char *)a;	/* present */
		if (pread(fd, &e, 8, (off_t)(a / pg * 8)) != 8)
			break;
		n++;
		if ((e >> 63 & 1) && (e >> 61 & 1))
			(*clean)++;
	}
	close(fd);
	return n;
}

int pfe_call(int i, int x)
{
	return pfe_tab[i % 3](x);
}
