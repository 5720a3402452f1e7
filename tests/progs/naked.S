/* SPDX-License-Identifier: MIT */
/*
 * naked_endbr: an entry that starts with endbr64 and has no kCFI preamble
 * before it (hand-written assembly is never instrumented). fineibt inspect
 * reports it as a naked ENDBR. Returns its first argument + 1.
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
