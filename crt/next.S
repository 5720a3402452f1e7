/* SPDX-License-Identifier: MIT */
/*
 * fineibt_crt_next(name, version, fn): glibc's dlsym(RTLD_NEXT, name) (or
 * dlvsym when @version is not NULL) called from inside this module, so
 * that glibc, which takes the caller from its return address, searches
 * as it would for this module's own call (a module loaded by dlopen:
 * the scope of its dlopen root). The runtime's dlsym interposer
 * (src/load/dlsym_so.c) finds it through the module's dlopen handle and
 * wraps the answer in a veneer. The runtime passes libc's dlsym (or
 * dlvsym) as @fn: a reference from here would bind to the runtime's
 * interposer again (lld merges dlsym@GLIBC_2.2.5 with the default one).
 * Not a kCFI function (no hash): kCFI code cannot call it.
 */
	.text
	.globl	fineibt_crt_next
	.type	fineibt_crt_next, @function
fineibt_crt_next:
	endbr64
	sub	$8, %rsp
	mov	%rdx, %rax		/* libc's dlsym or dlvsym */
	mov	%rsi, %rdx
	mov	%rdi, %rsi
	mov	$-1, %rdi		/* RTLD_NEXT */
	call	*%rax
	add	$8, %rsp
	ret
	.size	fineibt_crt_next, . - fineibt_crt_next

	.section .note.GNU-stack, "", @progbits
