/* SPDX-License-Identifier: MIT */
#ifndef FI_SIGBIND_H
#define FI_SIGBIND_H

/*
 * After dlopen(..., RTLD_DEEPBIND) returned @handle: rebind the references
 * to libc's SIGILL-installing functions of that module and those loaded
 * after it to src/trap/trap.c's interposers (src/load/sigbind.c). Returns how many
 * slots were rebound.
 */
int fi_sigbind_rebind(void *handle);

#endif /* FI_SIGBIND_H */
