// SPDX-License-Identifier: MIT
/*
 * The per-module hook: every executable and shared object linked by
 * fineibt-cc carries this (libfineibt_crt.a, linked whole). Its entry in
 * .init_array.00000 sorts first in the module's DT_INIT_ARRAY, so it runs
 * after the module is relocated and after its dependencies' constructors
 * (libfineibt.so is one of them), but before any constructor of the module
 * itself. It asks the runtime to patch every module not patched yet: for
 * a library loaded by dlopen, that is this one, before any of its code
 * runs.
 *
 * Built without kCFI, like all of the runtime. The reference is weak so a
 * module linked with -static-fineibt (runtime inside the executable, found
 * through its dynamic symbol table) still loads where no runtime exists.
 */
void fineibt_rt_hook(void) __attribute__((weak));

static void fi_crt_init(void)
{
	if (fineibt_rt_hook)
		fineibt_rt_hook();
}

__attribute__((used, section(".init_array.00000")))
static void (*const fi_crt_init_entry)(void) = fi_crt_init;
