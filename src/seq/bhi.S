/* SPDX-License-Identifier: MIT */
/*
 * __bhi_args[]: the FineIBT-BHI stubs (docs/sequences.md).
 *
 * A FineIBT-BHI preamble ends in "call __bhi_args[arity]". It arrives here
 * right after its "subl $hash, %r10d", so ZF is set and r10 is zero when
 * the caller's hash matched, and both are not when it did not:
 *
 *   - architecturally, a mismatch takes the jne to a ud2 (the CFI trap,
 *     decoded by trap.c from the return address at (%rsp));
 *   - speculatively past that jne, the cmovne's overwrite every argument
 *     register the callee uses with r10 (non-zero garbage), so a
 *     mis-speculated call cannot steer the callee with attacker-chosen
 *     arguments; on a match they move nothing.
 *
 * Slot n (32 bytes at __bhi_args + 32 * n) clobbers the first n argument
 * registers rdi, rsi, rdx, rcx, r8, r9; slot 7 (arguments on the stack)
 * also poisons rsp. Slot 0 exists only to keep the array indexable.
 *
 * The two "ud2; ret" sites sit in the alignment holes after slots 1 and 5,
 * so that every jne is a 2-byte Jcc.d8 (slots 0-3 reach the first, 4-7 the
 * second) and the slots still start at multiples of 32. The ret after each
 * ud2 is what cfi=warn resumes at (ip += 2): it returns to the function
 * with its arguments untouched.
 *
 * The array is position-independent (only rel8 jumps inside it, no
 * relocations), so the runtime may copy __bhi_args..__bhi_args_end next to
 * a module that lies beyond rel32 reach of this library, and register the
 * copy (fi_rt_add_stubs) so the trap handler recognises it.
 *
 * No ENDBR anywhere: slots are reached by direct calls only.
 */

	.section .text.fineibt_bhi, "ax", @progbits

/*
 * One slot: the check, then the cmovne's named in the argument list. The
 * .org both places slot n at 32 * n and fails the build should a slot
 * (or a ud2 site in its hole) ever grow past its 32 bytes. Holes are int3.
 */
.macro	BHI_SLOT n, ud, regs:vararg
	.org	__bhi_args + 32 * \n, 0xcc
__bhi_args_\n:
	jne	\ud
	.irp	reg, \regs
	cmovne	%r10, \reg
	.endr
	ret
	int3
.endm

/* A trap site: warn mode continues at the ret that follows the ud2. */
.macro	BHI_UD label
	.balign	8, 0xcc
\label:
	ud2
	ret
	int3
.endm

	.balign	32
	.globl	__bhi_args
	.type	__bhi_args, @function
__bhi_args:
	BHI_SLOT 0, .Lbhi_ud_lo
	BHI_SLOT 1, .Lbhi_ud_lo, %rdi
	BHI_UD	.Lbhi_ud_lo
	BHI_SLOT 2, .Lbhi_ud_lo, %rdi, %rsi
	BHI_SLOT 3, .Lbhi_ud_lo, %rdi, %rsi, %rdx
	BHI_SLOT 4, .Lbhi_ud_hi, %rdi, %rsi, %rdx, %rcx
	BHI_SLOT 5, .Lbhi_ud_hi, %rdi, %rsi, %rdx, %rcx, %r8
	BHI_UD	.Lbhi_ud_hi
	BHI_SLOT 6, .Lbhi_ud_hi, %rdi, %rsi, %rdx, %rcx, %r8, %r9
	BHI_SLOT 7, .Lbhi_ud_hi, %rdi, %rsi, %rdx, %rcx, %r8, %r9, %rsp

	.org	__bhi_args + 8 * 32, 0xcc
	.globl	__bhi_args_end
__bhi_args_end:
	.size	__bhi_args, __bhi_args_end - __bhi_args

	.section .note.GNU-stack, "", @progbits
