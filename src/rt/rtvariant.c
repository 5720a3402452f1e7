// SPDX-License-Identifier: MIT
/*
 * The variant's table read-only, or no start (docs/architecture.md,
 * "Calls that go up"; docs/protection.md, "-z norelro").
 *
 * The runtime calls through fi_variant without a check, as through a GOT
 * slot: a write there would pick what the SIGILL handler's coarse check
 * lets pass, which dlsym and dlopen slots start-up binds, and which
 * sigaction a dlmopen namespace's copy calls. The table is const, so it
 * sits in .data.rel.ro, which the loader makes read-only once it has
 * relocated the object, inside PT_GNU_RELRO. An executable linked
 * -z norelro that holds the static runtime has no PT_GNU_RELRO: its
 * .data.rel.ro stays writable for the whole run. So start-up asks the
 * kernel whether the table's pages are writable, and stops the process
 * if they are.
 *
 * Asked once, at the end of start-up, before the handler is installed
 * and before any call through the table (the static runtime's first is
 * there); after an early start (libfineibt.so, src/load/early.c: the
 * loader is still relocating it, RELRO not applied yet) at the
 * constructor, before the program's code runs. The question goes to the
 * runtime's maps descriptor, open by then: one PROCMAP_QUERY. Where the
 * kernel cannot be asked (no /proc), the link's layout answers: the
 * table must lie inside its module's PT_GNU_RELRO.
 */
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"
#include "variant.h"

struct fi_variant_span {
	uint64_t lo, hi;	/* the table, run-time addresses */
	int found;		/* 1: in a module; 2: and inside its RELRO */
};

static int fi_variant_relro_cb(struct dl_phdr_info *info, size_t size,
			       void *arg)
{
	struct fi_variant_span *s = arg;
	bool in = false, relro = false;

	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;

		if (s->lo < lo || s->hi > hi)
			continue;
		in |= p->p_type == PT_LOAD;
		relro |= p->p_type == PT_GNU_RELRO;
	}
	if (!in)
		return 0;
	s->found = relro ? 2 : 1;
	return 1;
}

void fi_variant_check(void)
{
	static bool done;
	struct fi_variant_span s = {
		.lo = (uint64_t)(uintptr_t)&fi_variant,
		.hi = (uint64_t)(uintptr_t)&fi_variant + sizeof(fi_variant),
	};
	int w;

	if (done)
		return;
	/* Read-only and mapped (0), not (-EACCES), or no answer. */
	w = fi_rt_vma_text(s.lo, s.hi, false, NULL);
	if (w != 0 && w != -EACCES) {
		dl_iterate_phdr(fi_variant_relro_cb, &s);
		w = s.found != 2;
	}
	if (w)
		fi_rt_die("the runtime's table of interposers is writable (an "
			  "executable holding the static runtime, or "
			  "libfineibt.so, linked -z norelro): link it without "
			  "-z norelro");
	done = true;
}
