// SPDX-License-Identifier: MIT
/* The loader's variables in the initial environment (ldenv.h). */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "ldenv.h"

/* ld.so's (libc's in a static executable): the initial stack, argc,
 * argv..., NULL, envp..., NULL, then the auxiliary vector. */
extern void *__libc_stack_end;

/* 0: not walked yet; FI_LDENV_READ and what was found once walked. */
static unsigned int fi_ldenv_bits;

/* The value of @e if it is "@name=...", else NULL. No libc: it may be
 * interposed by code that is not relocated yet (the early start). */
static const char *fi_ldenv_is(const char *e, const char *name)
{
	for (; *name; name++, e++) {
		if (*e != *name)
			return NULL;
	}
	return *e == '=' ? e + 1 : NULL;
}

static unsigned int fi_ldenv_walk(char **env)
{
	unsigned int b = FI_LDENV_READ;

	for (; *env; env++) {
		const char *e = *env, *v;

		/* The first three bytes inline: most variables differ there. */
		if (e[0] != 'L' || e[1] != 'D' || e[2] != '_')
			continue;
		e += 3;
		if ((v = fi_ldenv_is(e, "BIND_NOW")))
			b = *v ? b | FI_LDENV_BIND_NOW : b & ~FI_LDENV_BIND_NOW;
		else if (fi_ldenv_is(e, "AUDIT"))
			b |= FI_LDENV_AUDIT;
		else if (fi_ldenv_is(e, "DYNAMIC_WEAK"))
			b |= FI_LDENV_DYNAMIC_WEAK;
	}
	/* The auxiliary vector, where getauxval reads it too. */
	for (const Elf64_auxv_t *a = (const void *)(env + 1);
	     a->a_type != AT_NULL; a++) {
		if (a->a_type == AT_SECURE && a->a_un.a_val)
			b |= FI_LDENV_SECURE;
	}
	return b;
}

unsigned int fi_ldenv(void)
{
	unsigned int b = __atomic_load_n(&fi_ldenv_bits, __ATOMIC_RELAXED);
	const long *sp = __libc_stack_end;

	if (b)
		return b;
	if (!sp || sp[0] < 0)
		return 0;
	/* Two threads may both walk: the same block, the same bits. */
	b = fi_ldenv_walk((char **)(uintptr_t)(sp + 1) + sp[0] + 1);
	__atomic_store_n(&fi_ldenv_bits, b, __ATOMIC_RELAXED);
	return b;
}
