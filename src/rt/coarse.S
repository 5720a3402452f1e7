/* SPDX-License-Identifier: MIT */
/*
 * __fineibt_coarse + reg * FI_COARSE_STRIDE: the coarse check of a call
 * through a module's __x86_indirect_thunk_<reg> (coarse.h; docs/compat.md,
 * "Calls without a kCFI check: the coarse check"). The thunk jumped here
 * through r11 (r10 for reg r11, which that thunk pushed first and the
 * check pops: a FineIBT caller left thunked passes its hash in r10),
 * loaded from its GOT slot; the call's target is in %reg, the stack is the call's (its
 * return address on top for a call, the caller's caller's for a tail
 * jump). Every register but the flags and that scratch one is kept: the call's arguments are
 * in them (al counts the vector registers of a variadic call), and
 * nothing here knows which.
 *
 * Known entry: jump to it. Anything else: ud2, which the SIGILL handler
 * decodes from this file's table of ud2 sites (FI_TRAP_COARSE); cfi=warn
 * continues right after it, where the registers are restored and the
 * call made. No table published (the runtime does not enforce: off, not
 * started, a dlmopen namespace's copy): jump.
 *
 * Lookup: the table's ranges are sorted by lo and end with a sentinel
 * whose lo is ~0, so the scan stops at the first range above the target;
 * in the range that holds it, one bit per 16 bytes (entries are
 * 16-aligned: an unaligned target fails before the bit test), or, for the
 * dlsym veneer region, the slot rule. No range accepts any address: a
 * kCFI module the runtime could not register has the bitmap the scan made
 * of its entries, or no range at all (rtcoarse.c).
 */
#include "coarse.h"

.macro	COARSE reg, n
	.org	__fineibt_coarse + \n * FI_COARSE_STRIDE, 0xcc
	endbr64			/* reached by the thunk's jmp *%r11 */
.ifc \reg,r11
	pop	%r10		/* the caller's, saved by the r11 thunk */
.endif
	push	%rax
	push	%rcx
	mov	fi_rt_coarse_slot(%rip), %rcx
	mov	(%rcx), %rcx
	test	%rcx, %rcx
	jz	.Lfi_pass_\reg
.ifc \reg,rax
	mov	8(%rsp), %rax
.else
.ifc \reg,rcx
	mov	(%rsp), %rax
.else
.ifc \reg,rsp
	lea	16(%rsp), %rax
.else
	mov	%\reg, %rax
.endif
.endif
.endif
	add	$FI_COARSE_T_RANGES, %rcx
1:	cmp	FI_COARSE_R_LO(%rcx), %rax
	jb	.Lfi_ud_\reg
	cmp	FI_COARSE_R_HI(%rcx), %rax
	jb	2f
	add	$FI_COARSE_R_SIZE, %rcx
	jmp	1b
2:	sub	FI_COARSE_R_LO(%rcx), %rax
	mov	FI_COARSE_R_BITS(%rcx), %rcx
	test	%rcx, %rcx
	jz	3f
	test	$15, %al	/* lo is 16-aligned: the target's own bits */
	jnz	.Lfi_ud_\reg
	shr	$FI_COARSE_SHIFT, %rax
	bt	%rax, (%rcx)
	jc	.Lfi_pass_\reg
	jmp	.Lfi_ud_\reg
3:	and	$FI_COARSE_VEN_MASK, %eax
	cmp	$FI_COARSE_VEN_ENTRY, %eax
	je	.Lfi_pass_\reg
.Lfi_ud_\reg:
	ud2
.Lfi_pass_\reg:
	pop	%rcx
	pop	%rax
	jmp	*%\reg
	int3
.endm

/*
 * One symbol for all sixteen (one GOT slot per module, one symbol lookup
 * by the loader instead of sixteen: ~800 instructions each at every
 * start): the check of register n is at __fineibt_coarse + n *
 * FI_COARSE_STRIDE, which the thunk adds (.org refuses to assemble a
 * check that outgrows its stride).
 */
	.section .text.fi_coarse, "ax", @progbits
	.balign	FI_COARSE_STRIDE
	.globl	__fineibt_coarse
	.type	__fineibt_coarse, @function
__fineibt_coarse:
	COARSE	rax, 0
	COARSE	rcx, 1
	COARSE	rdx, 2
	COARSE	rbx, 3
	COARSE	rsp, 4
	COARSE	rbp, 5
	COARSE	rsi, 6
	COARSE	rdi, 7
	COARSE	r8, 8
	COARSE	r9, 9
	COARSE	r10, 10
	COARSE	r11, 11
	COARSE	r12, 12
	COARSE	r13, 13
	COARSE	r14, 14
	COARSE	r15, 15
	.org	__fineibt_coarse + 16 * FI_COARSE_STRIDE, 0xcc
	.size	__fineibt_coarse, . - __fineibt_coarse

/*
 * Each register's ud2, in encoding order, as offsets from the table
 * itself (no relocation): src/trap/coarsetrap.c's fi_coarse_trap_reg.
 */
	.section .rodata.fi_coarse_sites, "a", @progbits
	.balign	4
	.globl	fi_coarse_uds
	.hidden	fi_coarse_uds
	.type	fi_coarse_uds, @object
fi_coarse_uds:
	.irp	reg, rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15
	.long	.Lfi_ud_\reg - fi_coarse_uds
	.endr
	.size	fi_coarse_uds, . - fi_coarse_uds

	.section .note.GNU-stack, "", @progbits
