// SPDX-License-Identifier: MIT
/*
 * libfineibt_audit.so: an LD_AUDIT library (rtld-audit(7)) that `fineibt
 * run` loads beside the preloaded runtime, so that a kCFI library built
 * without fineibt-cc and dlopen'ed at run time is rewritten before its
 * constructors run (docs/runtime.md "Late modules").
 *
 * The dynamic loader calls la_activity(LA_ACT_CONSISTENT) once the objects
 * a dlopen brought in are mapped, before it relocates them and runs their
 * constructors. There we call the runtime's fineibt_rt_hook(), which
 * rewrites every kCFI module not rewritten yet: the new ones included
 * (their text needs no relocation; the runtime reads them from their
 * files). An audit library lives in a namespace of its own, with its own
 * libc, so the runtime is reached by address: found in libfineibt.so's
 * dynamic symbol table when the loader reports that object opened.
 *
 * The first consistent state of the main namespace is the program's own
 * start-up, before anything is relocated: nothing may run then. Its
 * modules are rewritten as before (early.c while libfineibt.so is
 * relocated, the runtime's constructor, or a crt hook). Uninstrumented:
 * ld.so calls these functions.
 */
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "dyntab.h"

#define FI_AUDIT_API	__attribute__((visibility("default")))
#define FI_AU_PAGE	4096

typedef void (*fi_hook_fn)(void);

/*
 * ld.so calls la_activity at every dlopen, and we call the hook from there
 * without any check: a code pointer kept in writable memory here would be
 * a call target for any write primitive (docs/protection.md: "our own saved
 * pointers"). So the hook and the identity of the main namespace are
 * resolved while the loader maps the program, before any of its code
 * runs, and their page is then made read-only for good. The page holds
 * nothing else.
 */
struct fi_au_sealed {
	struct link_map *main;		/* the main namespace's first object */
	fi_hook_fn hook;		/* fineibt_rt_hook of libfineibt.so, or NULL */
	unsigned char sealed;
};
static union {
	struct fi_au_sealed v;
	unsigned char page[FI_AU_PAGE];
} fi_au __attribute__((aligned(FI_AU_PAGE)));

static unsigned int fi_au_consistent;	/* main-namespace consistent states seen */

/* @name's address in @l, through its DT_GNU_HASH table; 0 if absent. */
static uintptr_t fi_au_lookup(const struct link_map *l, const char *name)
{
	const ElfW(Sym) *sym;
	const uint32_t *gh;
	const char *str;
	uintptr_t b = l->l_addr;
	uint32_t h, i, nb, off, nbloom;
	const uint32_t *buckets, *chain;
	struct fi_dyntab t;

	fi_dyn_read(l->l_ld, SIZE_MAX, b, FI_DT(SYMTAB) | FI_DT(STRTAB) |
		    FI_DT(GNU_HASH), &t);
	sym = (const void *)fi_dyn_get(&t, FI_DT_SYMTAB);
	str = (const void *)fi_dyn_get(&t, FI_DT_STRTAB);
	gh = (const void *)fi_dyn_get(&t, FI_DT_GNU_HASH);
	if (!sym || !str || !gh)
		return 0;
	nb = gh[0];
	off = gh[1];
	nbloom = gh[2];
	buckets = gh + 4 + nbloom * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nb;
	h = fi_gnu_hash(name);
	if (!nb || (i = buckets[h % nb]) < off)
		return 0;
	for (;; i++) {
		uint32_t c = chain[i - off];

		if ((c | 1) == (h | 1) && sym[i].st_shndx != SHN_UNDEF &&
		    !strcmp(str + sym[i].st_name, name))
			return b + sym[i].st_value;
		if (c & 1)
			return 0;
	}
}

FI_AUDIT_API unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

FI_AUDIT_API unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
				     uintptr_t *cookie)
{
	const char *base;

	*cookie = (uintptr_t)map;
	if (lmid != LM_ID_BASE || fi_au.v.sealed)
		return 0;
	if (!fi_au.v.main)
		fi_au.v.main = map;
	base = map->l_name ? strrchr(map->l_name, '/') : NULL;
	if (!base || strncmp(base + 1, "libfineibt.so", 13))
		return 0;
	/* Its dynamic section and symbols are mapped (not yet relocated). */
	fi_au.v.hook = (fi_hook_fn)fi_au_lookup(map, "fineibt_rt_hook");
	fi_au.v.sealed = 1;
	/* Unsealed means unused: a hook we cannot protect is never called. */
	if (mprotect(fi_au.page, sizeof(fi_au.page), PROT_READ))
		fi_au.v.hook = NULL;
	return 0;	/* no symbol binding callbacks */
}

FI_AUDIT_API void la_activity(uintptr_t *cookie, unsigned int flag)
{
	if (flag != LA_ACT_CONSISTENT || !fi_au.v.main ||
	    *cookie != (uintptr_t)fi_au.v.main)
		return;
	/* The first one is start-up: nothing relocated yet. */
	if (fi_au_consistent++ == 0 || !fi_au.v.hook)
		return;
	fi_au.v.hook();
}
