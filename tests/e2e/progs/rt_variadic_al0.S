/* SPDX-License-Identifier: MIT */
/*
 * double call_al0(double (*f)(int, ...), double x): f(1, x) with %al = 0,
 * as a variadic call would arrive if the CFI check had zeroed %eax
 * (rt_variadic.c). x is already in %xmm0; the ABI says %al must be >= 1.
 */
	.text
	.globl	call_al0
	.type	call_al0, @function
call_al0:
	endbr64
	pushq	%rbx			/* re-align the stack to 16 */
	movq	%rdi, %r11
	movl	$1, %edi
	xorl	%eax, %eax
	call	*%r11
	popq	%rbx
	ret
	.size	call_al0, .-call_al0
	.section .note.GNU-stack, "", @progbits
