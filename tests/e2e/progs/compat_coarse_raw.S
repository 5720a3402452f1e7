/* SPDX-License-Identifier: MIT */
/*
 * compat_coarse's uninstrumented side: libc's own addresses of abs and
 * printf, as code built without kCFI would hand them out (no veneer).
 */
	.text
	.globl	coarse_raw_abs
	.type	coarse_raw_abs, @function
coarse_raw_abs:
	endbr64
	mov	abs@GOTPCREL(%rip), %rax
	ret
	.size	coarse_raw_abs, . - coarse_raw_abs

	.globl	coarse_raw_printf
	.type	coarse_raw_printf, @function
coarse_raw_printf:
	endbr64
	mov	printf@GOTPCREL(%rip), %rax
	ret
	.size	coarse_raw_printf, . - coarse_raw_printf

	.section .note.GNU-stack, "", @progbits
