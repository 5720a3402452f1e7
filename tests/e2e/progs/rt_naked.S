/* SPDX-License-Identifier: MIT */
/*
 * naked_endbr: an entry with endbr64 and no kCFI preamble (hand-written
 * assembly is never instrumented): the pivot target of the naked-ENDBR
 * test. Returns its argument + 1.
 */
	.text
	.p2align 4
	.globl naked_endbr
	.type naked_endbr, @function
naked_endbr:
	endbr64
	leaq 1(%rdi), %rax
	ret
	.size naked_endbr, .-naked_endbr

	.section .note.GNU-stack,"",@progbits
