/* SPDX-License-Identifier: MIT */
/*
 * A "naked" ENDBR: a function entry that starts with endbr64 and has no
 * kCFI/FineIBT preamble in front of it (hand-written assembly, an entry
 * stub). The bytes before it are int3 padding, so no hash sits there.
 */
	.text
	.p2align 5
	.fill 32, 1, 0xcc
	.globl gadget
	.type gadget, @function
gadget:
	endbr64
	movl $1337, %eax
	ret
	/* int3 tail, so gadget+16 (the FineIBT-biased pointer) still names gadget */
	.fill 22, 1, 0xcc
	.size gadget, .-gadget
	.section .note.GNU-stack,"",@progbits
