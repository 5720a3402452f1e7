// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_got.sh: an attacker with a write primitive overwrites
 * this program's own GOT entry of puts() with a function of its choice,
 * then the program calls puts(). The PLT jump is no kCFI call site, so no
 * mode checks it: only a read-only GOT (full RELRO, fineibt-cc's default)
 * stops it, by faulting on the write.
 *
 * Prints "writing GOT[puts]" then, if the write did not fault, whatever
 * the next puts() reaches: "hijacked" (exit 42) or the real "not reached".
 * With -DPG_LIB it is a library doing the same to its own GOT from
 * pg_attack(), which protect_got_dl.c calls after dlopen'ing it.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hijack(const char *s)
{
	(void)s;
	if (write(STDOUT_FILENO, "hijacked\n", 9) < 0)
		_exit(2);
	_exit(42);
}

struct dyn {
	const ElfW(Rela) *rela[2];
	size_t relasz[2];
	const ElfW(Sym) *sym;
	const char *str;
};

/* The slot a JUMP_SLOT or GLOB_DAT relocation for @name fills. */
static void **got_slot(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *d = NULL;
	struct dyn y = { 0 };

	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		/* glibc relocates these in place; be safe if it did not. */
		uintptr_t p = d->d_un.d_ptr;

		if (p < info->dlpi_addr)
			p += info->dlpi_addr;
		switch (d->d_tag) {
		case DT_JMPREL: y.rela[0] = (const void *)p; break;
		case DT_PLTRELSZ: y.relasz[0] = d->d_un.d_val; break;
		case DT_RELA: y.rela[1] = (const void *)p; break;
		case DT_RELASZ: y.relasz[1] = d->d_un.d_val; break;
		case DT_SYMTAB: y.sym = (const void *)p; break;
		case DT_STRTAB: y.str = (const void *)p; break;
		}
	}
	for (int t = 0; t < 2 && y.sym && y.str; t++) {
		for (size_t i = 0; y.rela[t] && i < y.relasz[t] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &y.rela[t][i];
			unsigned type = ELF64_R_TYPE(r->r_info);

			if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) &&
			    !strcmp(y.str + y.sym[ELF64_R_SYM(r->r_info)].st_name, name))
				return (void **)(info->dlpi_addr + r->r_offset);
		}
	}
	return NULL;
}

#ifdef PG_LIB
/* Built as a library (-DPG_LIB): its own GOT, found by its own address. */
static int first(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)got_slot;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && me >= info->dlpi_addr + ph->p_vaddr &&
		    me < info->dlpi_addr + ph->p_vaddr + ph->p_memsz) {
			*(void ***)data = got_slot(info, "puts");
			return 1;
		}
	}
	return 0;
}

#ifdef PG_THREAD
/*
 * -DPG_THREAD: the library's constructor starts a thread that calls
 * through the library's own PLT without a pause, so that the runtime
 * makes the entries direct (when the dlopen returns) under a running
 * caller; pg_attack stops and joins it first.
 */
#include <pthread.h>
#include <sched.h>

static pthread_t pg_thr;
static volatile int pg_stop;
static unsigned long pg_calls;	/* written by the thread only */

static void *pg_spin(void *arg)
{
	unsigned int seed = 1;

	(void)arg;
	while (!pg_stop) {
		seed += (unsigned int)rand_r(&seed);
		__atomic_add_fetch(&pg_calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

__attribute__((constructor)) static void pg_start(void)
{
	if (pthread_create(&pg_thr, NULL, pg_spin, NULL))
		_exit(4);
	/* Running before the dlopen returns (and the entries change). */
	while (!__atomic_load_n(&pg_calls, __ATOMIC_RELAXED))
		sched_yield();
}

static void pg_join(void)
{
	pg_stop = 1;
	pthread_join(pg_thr, NULL);
}
#else
static void pg_join(void)
{
}
#endif
#define main pg_attack
#else
static int first(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(void ***)data = got_slot(info, "puts");
	return 1;	/* the executable comes first */
}
#endif

int main(void)
{
	void **slot = NULL;

#ifdef PG_LIB
	pg_join();
#endif
	setvbuf(stdout, NULL, _IONBF, 0);
	dl_iterate_phdr(first, &slot);
	if (!slot) {
		printf("no GOT slot for puts\n");
		return 2;
	}
	printf("writing GOT[puts]\n");
	*(void *volatile *)slot = (void *)hijack;
	puts("not reached");
	return 0;
}
