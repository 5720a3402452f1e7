/* SPDX-License-Identifier: MIT */
/*
 * __x86_indirect_thunk_r11 for the "kCFI, unpatched" stand-in compiler
 * (standin-cc): the DESIGN flags route every indirect call through it.
 * A plain jmp, no retpoline; hidden, so each module links its own copy.
 */
	.text
	.p2align 4
	.globl __x86_indirect_thunk_r11
	.hidden __x86_indirect_thunk_r11
	.type __x86_indirect_thunk_r11, @function
__x86_indirect_thunk_r11:
	jmp *%r11
	.size __x86_indirect_thunk_r11, .-__x86_indirect_thunk_r11

	.section .note.GNU-stack,"",@progbits
