// SPDX-License-Identifier: MIT
/*
 * bench/windows.sh's program: what each operation that writes the
 * runtime's state costs (docs/protection.md, "Writing the state"), per
 * call, median of ROUNDS rounds of N calls. Built with fineibt-cc.
 *
 *   windows sigaction N       sigaction(SIGILL, ...) of a handler of ours
 *   windows jit N [SIZE]      fineibt_jit_register + _unregister of a
 *                             read-execute region of SIZE bytes (256: a
 *                             small generated function; the register scans
 *                             it twice for call sites, ~14 instructions a
 *                             byte) each timed apart: two lines,
 *                             "jit_register" and "jit_unregister"
 *   windows dlsym N           dlsym of a libc function not asked before
 *                             (a new veneer each: N distinct names)
 *   windows dlopen N LIB      dlopen(LIB) + dlclose of a kCFI library
 *                             (rewritten and registered each time)
 *
 * Prints "OP median_ns min_ns" per operation.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fineibt.h"

#define ROUNDS	9

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void say(const char *op, uint64_t *per, int n)
{
	qsort(per, (size_t)n, sizeof(per[0]), cmp_u64);
	printf("%s %llu %llu\n", op, (unsigned long long)per[n / 2],
	       (unsigned long long)per[0]);
}

static void on_ill(int sig)
{
	(void)sig;
}

static int bench_sigaction(int n)
{
	struct sigaction sa = { .sa_handler = on_ill };
	uint64_t per[ROUNDS];

	sigemptyset(&sa.sa_mask);
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < n; i++) {
			sa.sa_flags = i & 1 ? SA_RESTART : 0;
			if (sigaction(SIGILL, &sa, NULL))
				return 1;
		}
		per[r] = (now_ns() - t0) / (uint64_t)n;
	}
	say("sigaction", per, ROUNDS);
	return 0;
}

static int bench_jit(int n, size_t size)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t reg[ROUNDS], unreg[ROUNDS];

	if (code == MAP_FAILED)
		return 1;
	memset(code, 0xc3, 4096);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t a = 0, b = 0, t0, t1, t2;

		for (int i = 0; i < n; i++) {
			t0 = now_ns();
			if (fineibt_jit_register(code, size))
				return 2;
			t1 = now_ns();
			if (fineibt_jit_unregister(code))
				return 3;
			t2 = now_ns();
			a += t1 - t0;
			b += t2 - t1;
		}
		reg[r] = a / (uint64_t)n;
		unreg[r] = b / (uint64_t)n;
	}
	say("jit_register", reg, ROUNDS);
	say("jit_unregister", unreg, ROUNDS);
	return 0;
}

/* libc's defined functions, from its dynamic symbol table. */
static const char **names;
static int nnames;

static int libc_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	size_t nsym = 0;

	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Dyn) *d;

		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		for (; d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_SYMTAB)
				sym = (const void *)d->d_un.d_ptr;
			else if (d->d_tag == DT_STRTAB)
				str = (const void *)d->d_un.d_ptr;
		}
	}
	/* The string table follows the symbol table in libc. */
	if (sym && str && (const void *)str > (const void *)sym)
		nsym = (size_t)((const char *)str - (const char *)sym) / sizeof(*sym);
	names = calloc(nsym + 1, sizeof(*names));
	for (size_t i = 0; names && i < nsym; i++) {
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_shndx &&
		    ELF64_ST_BIND(sym[i].st_info) == STB_GLOBAL && str[sym[i].st_name] != '_')
			names[nnames++] = str + sym[i].st_name;
	}
	return 1;
}

static int bench_dlsym(int n)
{
	uint64_t per[ROUNDS];
	int at = 0;

	dl_iterate_phdr(libc_cb, NULL);
	if (nnames < n * ROUNDS) {
		fprintf(stderr, "windows: only %d libc functions\n", nnames);
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < n; i++)
			(void)!dlsym(RTLD_DEFAULT, names[at++]);
		per[r] = (now_ns() - t0) / (uint64_t)n;
	}
	say("dlsym_new", per, ROUNDS);
	return 0;
}

static int bench_dlopen(int n, const char *lib)
{
	uint64_t per[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < n; i++) {
			void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

			if (!h || dlclose(h))
				return 1;
		}
		per[r] = (now_ns() - t0) / (uint64_t)n;
	}
	say("dlopen_kcfi", per, ROUNDS);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || n <= 0)
		goto usage;
	if (!strcmp(argv[1], "sigaction"))
		return bench_sigaction(n);
	if (!strcmp(argv[1], "jit"))
		return bench_jit(n, argc > 3 && atoi(argv[3]) > 0 &&
				    atoi(argv[3]) <= 4096 ? (size_t)atoi(argv[3]) : 256);
	if (!strcmp(argv[1], "dlsym"))
		return bench_dlsym(n);
	if (!strcmp(argv[1], "dlopen") && argc > 3)
		return bench_dlopen(n, argv[3]);
usage:
	fprintf(stderr, "usage: windows sigaction|dlsym N | jit N [SIZE] | dlopen N LIB\n");
	return 2;
}
