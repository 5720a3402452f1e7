/* SPDX-License-Identifier: MIT */
/*
 * Allocations of the shared runtime's early start from private pools,
 * not libc's malloc (rtalloc.c: libfineibt.so only, linked with --wrap).
 */
#ifndef FI_RTALLOC_H
#define FI_RTALLOC_H

/* Between the two, the runtime's malloc & co. use private pools. */
void fi_alloc_private_begin(void);
void fi_alloc_private_end(void);

#endif
