/* SPDX-License-Identifier: MIT */
/*
 * The loader's variables in the environment the process started with
 * (ldenv.c): what ld.so read and acted on (bound every slot at load, ran
 * an auditor, let a weak definition stand), not what the program's
 * setenv or putenv made of `environ` since, and whether it ran in secure
 * mode (AT_SECURE, from the auxiliary vector that follows the block).
 * One walk of the initial block, the first time any of them is asked; it
 * calls nothing.
 */
#ifndef FI_LDENV_H
#define FI_LDENV_H

#define FI_LDENV_READ		0x1u	/* the initial environment was found */
#define FI_LDENV_BIND_NOW	0x2u	/* LD_BIND_NOW non-empty (the last one) */
#define FI_LDENV_AUDIT		0x4u	/* an LD_AUDIT entry */
#define FI_LDENV_DYNAMIC_WEAK	0x8u	/* an LD_DYNAMIC_WEAK entry */
#define FI_LDENV_SECURE		0x10u	/* AT_SECURE: the loader ran in secure mode */

/* The FI_LDENV_* bits of the initial environment; without FI_LDENV_READ
 * (its block not known: asked again next time), none of the others. */
unsigned int fi_ldenv(void);

#endif /* FI_LDENV_H */
