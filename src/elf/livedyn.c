// SPDX-License-Identifier: MIT
/* A loaded module's dynamic section, from memory (livedyn.h). */
#include <string.h>
#include <sys/mman.h>

#include "livedyn.h"

/* glibc relocates the d_ptr of a writable .dynamic in place, not of a
 * read-only one: take either. */
static uintptr_t fi_dyn_ptr(uintptr_t bias, ElfW(Addr) v)
{
	return v >= bias ? (uintptr_t)v : bias + (uintptr_t)v;
}

bool fi_livedyn_read(const struct dl_phdr_info *info, struct fi_livedyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t b = info->dlpi_addr;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + p->p_vaddr);
		if (p->p_type == PT_GNU_RELRO) {
			d->relro_lo = b + p->p_vaddr;
			d->relro_hi = d->relro_lo + p->p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->sym = (const void *)fi_dyn_ptr(b, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->str = (const void *)fi_dyn_ptr(b, dyn->d_un.d_ptr);
			break;
		case DT_RELA:
			d->rel[0] = (const void *)fi_dyn_ptr(b, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->nrel[0] = dyn->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_JMPREL:
			d->rel[1] = (const void *)fi_dyn_ptr(b, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->nrel[1] = dyn->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_RELACOUNT:
			d->nrelative = dyn->d_un.d_val;
			break;
		}
	}
	if (d->nrelative > d->nrel[0])
		d->nrelative = d->nrel[0];
	return d->sym && d->str;
}

void fi_livedyn_store(const struct fi_livedyn *d, void **slot, void *to)
{
	uintptr_t a = (uintptr_t)slot, pg = a & ~(uintptr_t)4095;
	bool ro = a >= d->relro_lo && a < d->relro_hi;

	if (ro && mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n(slot, to, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)pg, 4096, PROT_READ);
}
