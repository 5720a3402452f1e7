/* SPDX-License-Identifier: MIT */
/* Shared declarations of rt_mods.c, rt_liba.c (linked), rt_libb.c (dlopen'ed). */
#ifndef RT_MODS_H
#define RT_MODS_H

typedef long (*fn1_t)(long);
typedef long (*fn2_t)(long, long);
typedef long (*fnp_t)(const char *, long);

/* libfi_rta.so */
long rta_apply(fn1_t f, long x);
fn2_t rta_op(void);
void rta_set_cb(fn1_t f);
fn1_t rta_get_cb(void);

/* libfi_rtb.so, reached through dlsym */
typedef long (*rtb_apply2_t)(fn2_t f, long a, long b);
typedef fn1_t (*rtb_fn_t)(void);
typedef long (*rtb_ctor_value_t)(void);

#endif
