// SPDX-License-Identifier: MIT
/*
 * RTLD_DEEPBIND plug-ins (docs/traps.md): a library dlopen'ed with
 * RTLD_DEEPBIND looks its symbols up in its own dependencies first, so
 * its references to sigaction, signal, sigset... bind to libc's and
 * bypass signals.c's interposers: a SIGILL handler it installs would
 * evict fineibt's. After such a dlopen, every module it brought in has
 * those references rebound to the interposers, as the loader would have
 * bound them without the flag: the GOT slots (GLOB_DAT, JUMP_SLOT, and
 * R_X86_64_64 with no addend) of undefined symbols by those names that
 * hold libc's function, or still the module's lazy PLT entry. A slot in
 * the RELRO segment is written through the kernel (fi_live_store_slot):
 * its page is never writable.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "dyntab.h"
#include "interpose.h"
#include "rtlive.h"
#include "runtime.h"

struct fi_dyn {
	const Elf64_Sym *symtab;
	const char *strtab;
	const Elf64_Rela *rela, *jmprel;
	size_t relasz, pltrelsz;
	uintptr_t relro_lo, relro_hi;
};

static const void *fi_base_of(const void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) ? info.dli_fbase : NULL;
}

static int fi_relro_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_dyn *d = arg;
	const struct link_map *lm = (const void *)d->relro_lo;

	if (info->dlpi_addr != lm->l_addr || info->dlpi_name != lm->l_name)
		return 0;
	d->relro_lo = d->relro_hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const Elf64_Phdr *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO) {
			d->relro_lo = info->dlpi_addr + ph->p_vaddr;
			d->relro_hi = d->relro_lo + ph->p_memsz;
		}
	}
	return 1;
}

static bool fi_dyn_of(const struct link_map *lm, struct fi_dyn *d)
{
	struct fi_dyntab t;

	fi_dyn_read(lm->l_ld, SIZE_MAX, lm->l_addr, FI_DT(SYMTAB) | FI_DT(STRTAB) |
		    FI_DT(RELA) | FI_DT(RELASZ) | FI_DT(JMPREL) | FI_DT(PLTRELSZ), &t);
	d->symtab = (const void *)fi_dyn_get(&t, FI_DT_SYMTAB);
	d->strtab = (const void *)fi_dyn_get(&t, FI_DT_STRTAB);
	d->rela = (const void *)fi_dyn_get(&t, FI_DT_RELA);
	d->relasz = fi_dyn_get(&t, FI_DT_RELASZ);
	d->jmprel = (const void *)fi_dyn_get(&t, FI_DT_JMPREL);
	d->pltrelsz = fi_dyn_get(&t, FI_DT_PLTRELSZ);
	d->relro_lo = (uintptr_t)lm;
	if (dl_iterate_phdr(fi_relro_cb, d) != 1)
		d->relro_lo = d->relro_hi = 0;
	return d->symtab && d->strtab;
}

/*
 * libc's own function for @name, as the runtime resolved it at start-up
 * (the read-only state: src/trap/trap.c), through glibc's aliases:
 * __sigaction is sigaction, bsd_signal and ssignal are signal,
 * __sysv_signal is sysv_signal. Never the loader's tables now: they are
 * writable, and a forged one would name any function here.
 */
static uintptr_t fi_sig_libc_of(const char *name)
{
	const struct fi_rt_sig *g = &fi_rt()->sig;
	const void *p = NULL;

	if (!__atomic_load_n(&g->real_sigaction, __ATOMIC_ACQUIRE))
		return 0;	/* not resolved yet: nothing is libc's */
	if (!strcmp(name, "sigaction") || !strcmp(name, "__sigaction"))
		p = g->real_sigaction;
	else if (!strcmp(name, "signal") || !strcmp(name, "bsd_signal") ||
		 !strcmp(name, "ssignal"))
		p = g->real_signal;
	else if (!strcmp(name, "sysv_signal") || !strcmp(name, "__sysv_signal"))
		p = g->real_sysv_signal;
	else if (!strcmp(name, "sigset"))
		p = g->real_sigset;
	else if (!strcmp(name, "sigignore"))
		p = g->real_sigignore;
	else if (!strcmp(name, "sigvec"))
		p = g->real_sigvec;
	return (uintptr_t)p;
}

static int fi_rebind_rela(const struct link_map *lm, const struct fi_dyn *d,
			  const Elf64_Rela *r, size_t sz, const void *libc)
{
	const void *self = fi_base_of(lm->l_ld);
	int n = 0;

	for (size_t i = 0; r && i < sz / sizeof(*r); i++) {
		uint32_t type = ELF64_R_TYPE(r[i].r_info);
		const Elf64_Sym *s = &d->symtab[ELF64_R_SYM(r[i].r_info)];
		uintptr_t slot = lm->l_addr + r[i].r_offset, cur, ours;
		const void *where;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    !(type == R_X86_64_64 && !r[i].r_addend))
			continue;
		if (!ELF64_R_SYM(r[i].r_info) || s->st_shndx != SHN_UNDEF)
			continue;
		ours = (uintptr_t)fi_sig_own(d->strtab + s->st_name);
		if (!ours)
			continue;
		cur = *(const uintptr_t *)slot;
		where = fi_base_of((const void *)cur);
		if (cur == ours || (where != libc && where != self))
			continue;
		/*
		 * The slot and the relocation naming it come from the loader's
		 * writable link map: a forged one put our sigaction in another
		 * read-only GOT slot (the executable's write(SIGSEGV, act, 0)
		 * then installed a handler: tests/e2e/protect_slot.sh). In
		 * RELRO, only libc's own function of that name is replaced.
		 */
		if (slot >= d->relro_lo && slot < d->relro_hi &&
		    (!cur || cur != fi_sig_libc_of(d->strtab + s->st_name)))
			continue;
		if (fi_live_store_slot(d->relro_lo, d->relro_hi, (void **)slot,
				       (void *)ours))
			continue;
		n++;
	}
	return n;
}

int fi_sigbind_rebind(void *handle)
{
	const void *libc = fi_sig_libc_base(), *me = fi_base_of((void *)fi_sigbind_rebind);
	struct link_map *lm = NULL;
	struct fi_dyn d;
	int n = 0;

	if (!handle || !libc || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm)
		return 0;
	/* The module and those loaded after it (its dependencies). */
	for (; lm; lm = lm->l_next) {
		const void *base = fi_base_of(lm->l_ld);

		if (!base || base == libc || base == me || !fi_dyn_of(lm, &d))
			continue;
		n += fi_rebind_rela(lm, &d, d.rela, d.relasz, libc);
		n += fi_rebind_rela(lm, &d, d.jmprel, d.pltrelsz, libc);
	}
	return n;
}
