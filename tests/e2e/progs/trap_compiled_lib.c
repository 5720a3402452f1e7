// SPDX-License-Identifier: MIT
/*
 * tests/e2e/trap_compiled.sh: a library built with clang-22's
 * -fsanitize=kcfi alone (no -fpatchable-function-entry=11,11), which the
 * runtime leaves as compiled. tc_call makes an indirect call of type
 * int(int); tc_trap executes a plain ud2 that is no CFI check.
 */
typedef int (*tc_int_fn)(int);

int tc_call(void *p)
{
	return ((tc_int_fn)p)(41);
}

void tc_trap(void)
{
	__builtin_trap();
}
