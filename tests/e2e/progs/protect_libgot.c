// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_libgot.sh: an attacker with a write primitive in a
 * fineibt-cc program goes for the GOTs the program does not own: those
 * of the ordinary (not kCFI) libraries it links. Debian builds libc,
 * libz, libstdc++... with partial RELRO, so their .got.plt stays
 * writable, and their own code reaches libc's string functions (IFUNC:
 * IRELATIVE slots) and each other through PLT jumps that no mode checks.
 *
 *   protect_libgot MOD WHAT
 *
 * MOD: a substring of the module's path (libc.so, libz.so, ld-linux).
 * WHAT:
 *   bound  - overwrite every writable PLT slot of MOD that holds a bound
 *            target (a code address outside MOD's own PLT) with hijack()
 *   irel   - the same, IRELATIVE slots only (an IFUNC's choice, bound by
 *            the loader at relocation)
 *   lazy   - the same for the slots not bound yet (they hold an address
 *            in MOD's own PLT: the lazy resolver's way in)
 *   got2   - overwrite MOD's GOT[2] (the lazy resolver's address, which
 *            every not-yet-bound PLT entry jumps to)
 * then make MOD call through its PLT (libc: puts, libz: compress, ld.so:
 * a failing dlopen) and print "not reached" if nothing was redirected.
 * Prints "wrote N" first (N = 0: nothing to attack, exit 3). hijack()
 * prints "hijacked" and exits 42.
 *
 * -DPL_EARLY_THREAD: a thread started from .preinit_array, before any
 * constructor (the runtime's included), runs for the whole process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void hijack(void)
{
	if (write(STDOUT_FILENO, "hijacked\n", 9) < 0)
		_exit(2);
	_exit(42);
}

struct mod {
	const char *want, *what;
	const ElfW(Rela) *jmprel;
	size_t n;
	uintptr_t bias, got, relro_lo, relro_hi;
	size_t wrote;
};

static uintptr_t dptr(uintptr_t bias, uintptr_t p)
{
	return p < bias ? p + bias : p;
}

static void relro_range(struct mod *m, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO) {
			m->relro_lo = info->dlpi_addr + ph->p_vaddr;
			m->relro_hi = m->relro_lo + ph->p_memsz;
		}
	}
}

/*
 * A slot not bound yet points at its lazy PLT entry's push (GNU ld, lld:
 * "68 imm32; [f2] e9 rel32"), or at the entry itself in an IBT PLT.
 */
static bool lazy_value(uintptr_t v)
{
	const unsigned char *p = (const unsigned char *)v;

	if (!memcmp(p, "\xf3\x0f\x1e\xfa", 4))
		p += 4;
	return p[0] == 0x68 && (p[5] == 0xe9 || (p[5] == 0xf2 && p[6] == 0xe9));
}

static void attack(struct mod *m)
{

	if (!strcmp(m->what, "got2")) {
		uintptr_t *g = (uintptr_t *)m->got;

		if (m->got >= m->relro_lo && m->got < m->relro_hi)
			return;
		if (g[2]) {
			g[2] = (uintptr_t)hijack;
			m->wrote++;
		}
		return;
	}
	for (size_t k = 0; k < m->n; k++) {
		uintptr_t *s = (uintptr_t *)(m->bias + m->jmprel[k].r_offset);
		unsigned int t = ELF64_R_TYPE(m->jmprel[k].r_info);
		bool lazy;

		if ((uintptr_t)s >= m->relro_lo && (uintptr_t)s < m->relro_hi)
			continue;
		if (t != R_X86_64_JUMP_SLOT && t != R_X86_64_IRELATIVE)
			continue;
		if (!strcmp(m->what, "irel") && t != R_X86_64_IRELATIVE)
			continue;
		if (!*s)
			continue;
		lazy = lazy_value(*s);
		if (lazy != !strcmp(m->what, "lazy"))
			continue;
		*s = (uintptr_t)hijack;
		m->wrote++;
	}
}

static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod *m = arg;
	const ElfW(Dyn) *d = NULL;
	size_t sz = 0;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, m->want))
		return 0;
	m->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_JMPREL)
			m->jmprel = (const void *)dptr(m->bias, d->d_un.d_ptr);
		else if (d->d_tag == DT_PLTRELSZ)
			sz = d->d_un.d_val;
		else if (d->d_tag == DT_PLTGOT)
			m->got = dptr(m->bias, d->d_un.d_ptr);
	}
	m->n = sz / sizeof(ElfW(Rela));
	relro_range(m, info);
	if (m->jmprel && m->got)
		attack(m);
	return 1;
}

#ifdef PL_EARLY_THREAD
#include <pthread.h>

static void *idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void early(int argc, char **argv, char **envp)
{
	pthread_t t;

	(void)argc;
	(void)argv;
	(void)envp;
	pthread_create(&t, NULL, idle, NULL);
}

__attribute__((section(".preinit_array"), used))
static void (*const pl_early)(int, char **, char **) = early;
#endif

/* Make @want call through its PLT. */
static void use(const char *want, bool say)
{
	if (strstr(want, "libz")) {
		unsigned char in[64] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", out[256];
		uLongf n = sizeof(out);

		compress(out, &n, in, sizeof(in));
	} else if (strstr(want, "ld-linux")) {
		dlopen("/nonexistent/protect_libgot.so", RTLD_NOW);
		dlerror();
	}
	if (say)
		puts("not reached");
}

int main(int argc, char **argv)
{
	struct mod m = { 0 };

	if (argc != 3)
		return 2;
	/* Bind what the attack leaves lazy otherwise (a first use). */
	use(argv[1], false);
	m.want = argv[1];
	m.what = argv[2];
	dl_iterate_phdr(find, &m);
	printf("wrote %zu\n", m.wrote);
	fflush(stdout);
	if (!m.wrote)
		return 3;
	use(argv[1], true);
	return 0;
}
