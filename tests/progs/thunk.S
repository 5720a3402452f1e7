/* SPDX-License-Identifier: MIT */
/*
 * The retpoline-external thunk the kCFI flags call through. Local to the
 * test programs (the runtime brings its own); a plain jmp, no retpoline.
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
