/* SPDX-License-Identifier: MIT */
/*
 * The floor: bench/calls_kernel.c's two loops and bench/gen_callees.sh's
 * callees written by hand, with the CFI sequences of one mode spelled out
 * here instead of being patched in at load time. This file is the one
 * place outside src/seq/insn.c where the sequences are written again, on
 * purpose: it is the independent reference the runtime's output is
 * measured (and byte-compared, by bench.py) against.
 *
 * Build with -DFLOOR_CALLER=kcfi|off|fineibt|paranoid,
 * -DFLOOR_PREAMBLE=kcfi|fineibt|bhi and -DFLOOR_SET=v4|v618 (the sequence
 * set, docs/sequences.md; default v4) (see bench/bench.mk):
 *
 *   mode                   caller     preamble
 *   kcfi                   kcfi       kcfi     (calls de-thunked, as the
 *   off                    off        kcfi      runtime leaves them)
 *   fineibt                fineibt    fineibt
 *   fineibt,paranoid       paranoid   fineibt
 *   fineibt,bhi            fineibt    bhi
 *   fineibt,paranoid,bhi   paranoid   bhi
 *
 * The v618 floors write the userspace v6.18 set from its table in
 * docs/sequences.md: the preamble's cs cs cs jne,pn into the d6 of the
 * 0f 1f 40 d6 poison at func+0, CS-prefix padding in front of the calls,
 * and Linux 7.3's jne .+3; test $0xd6,%al in the kCFI (and cfi=off)
 * callers.
 *
 * The instructions around the sequences are the ones clang-22 -O2 emits
 * for calls_kernel.c with the kCFI flags; keep them in step if it changes.
 */
#include "calls.h"

/*
 * -DFLOOR_PREFIX=floor_x_ renames the three global symbols, so that the
 * floors of every mode can also be linked into bench/calls-cc itself
 * (calls -f MODE times patched and hand-written code in one process).
 */
#ifdef FLOOR_PREFIX
#define FLOOR_CAT2(a, b)	a##b
#define FLOOR_CAT(a, b)		FLOOR_CAT2(a, b)
#define bench_hot		FLOOR_CAT(FLOOR_PREFIX, bench_hot)
#define bench_cold		FLOOR_CAT(FLOOR_PREFIX, bench_cold)
#define bench_funcs		FLOOR_CAT(FLOOR_PREFIX, bench_funcs)
#endif

#ifndef FLOOR_SET
#define FLOOR_SET	v4
#endif

/* One type hash for long (*)(long, long); any non-ENDBR-like value. */
#define HASH	0x5a3c9e71

/* ------------------------------------------------------------ preambles */

/* 16 bytes before a function of arity 2 (edx), then its first insn. */
.macro	preamble
.ifc	FLOOR_PREAMBLE, kcfi
	movl	$HASH, %edx
	.rept	11
	nop
	.endr
.else
0:	endbr64
	subl	$HASH, %r10d
.ifc	FLOOR_PREAMBLE, bhi
	call	floor_bhi_arity2	/* ends exactly at the entry */
.else
.ifc	FLOOR_SET, v618
	/* one not-taken hint and two padding prefixes, ending at func+0 */
	.byte	0x2e, 0x2e, 0x2e
	jne	. + 5			/* func+3: the poison's d6, UDB */
.else
	jne	0b + 6			/* into the subl: the 0xea byte, #UD */
	nopl	(%rax)
.endif
.endif
.endif
.endm

/* The function's first instruction: ENDBR, or the FineIBT poison. */
.macro	entry
.ifc	FLOOR_PREAMBLE, kcfi
	endbr64
.else
.ifc	FLOOR_SET, v618
	nopl	-0x2a(%rax)		/* 0f 1f 40 d6: the v6.18 poison */
.else
	nopw	(%rax)			/* osp nopl (%rax): poisoned ENDBR */
.endif
.endif
.endm

/* The call of an indirect call site and its padding up to 20 bytes. */
.macro	call6
.ifc	FLOOR_SET, v618
	.byte	0x2e, 0x2e, 0x2e	/* CS-prefix padding */
	call	*%r11
.else
	call	*%r11
	nopl	(%rax)
.endif
.endm

/* The call ending a de-thunked kCFI caller (kcfi, off): CS-padded in
 * both sets, so nothing runs after the return. */
.macro	kcall6
	.byte	0x2e, 0x2e, 0x2e	/* CS-prefix padding */
	call	*%r11
.endm

/* The kCFI caller's check after the addl: the failure branch. */
.macro	kcfi_check
.ifc	FLOOR_SET, v618
	jne	. + 3			/* onto the d6 of the test: UDB */
	testb	$0xd6, %al
.else
	je	1f
	ud2
.endif
.endm

/* ------------------------------------------------------------ call sites */

/* 20 bytes: an indirect call to %r11 of a function of type HASH. */
.macro	callsite
.ifc	FLOOR_CALLER, kcfi
	movl	$-HASH, %r10d
	addl	-15(%r11), %r10d
	kcfi_check
1:	kcall6
.endif
.ifc	FLOOR_CALLER, off
	jmp	1f			/* cfi=off: jump over the check */
	.long	-HASH
	addl	-15(%r11), %r10d
	kcfi_check
1:	kcall6
.endif
.ifc	FLOOR_CALLER, fineibt
	movl	$HASH, %r10d
	leaq	-16(%r11), %r11
	{disp8} nopl 0(%rax)
	call6
.endif
.ifc	FLOOR_CALLER, paranoid
	movl	$HASH, %r10d
	cmpl	-9(%r11), %r10d
2:	leaq	-16(%r11), %r11
	jne	2b + 3			/* the 0xf0 byte: LOCK Jcc, #UD */
.ifc	FLOOR_SET, v618
	.byte	0x2e			/* CS-prefix padding */
	call	*%r11
.else
	call	*%r11
	nop
.endif
.endif
.endm

/* ------------------------------------------------------------ the loops */

	.text
	.globl	bench_hot
	.type	bench_hot, @function
	.p2align 6
	preamble
bench_hot:
	entry
	testq	%rdi, %rdi
	jle	9f
	pushq	%r15
	pushq	%r14
	pushq	%rbx
	movq	%rsi, %rbx
	movq	%rdi, %r14
	xorl	%r15d, %r15d
	xorl	%eax, %eax
	.p2align 4
3:	movq	%rax, %rdi
	movq	%r15, %rsi
	movq	%rbx, %r11
	callsite
	incq	%r15
	cmpq	%r15, %r14
	jne	3b
	popq	%rbx
	popq	%r14
	popq	%r15
	retq
9:	xorl	%eax, %eax
	retq
	.size	bench_hot, . - bench_hot

	.globl	bench_cold
	.type	bench_cold, @function
	.p2align 6
	preamble
bench_cold:
	entry
	testq	%rdi, %rdi
	jle	9f
	pushq	%r15
	pushq	%r14
	pushq	%rbx
	movq	%rsi, %rbx
	movq	%rdi, %r14
	xorl	%r15d, %r15d
	xorl	%eax, %eax
	.p2align 4
3:	movq	(%rbx,%r15,8), %r11
	movq	%rax, %rdi
	movq	%r15, %rsi
	callsite
	incq	%r15
	cmpq	%r15, %r14
	jne	3b
	popq	%rbx
	popq	%r14
	popq	%r15
	retq
9:	xorl	%eax, %eax
	retq
	.size	bench_cold, . - bench_cold

/* ------------------------------------------------------------ BHI stub */

/*
 * Slot 2 of a __bhi_args array: on a mismatch (ZF clear) trap; on the
 * speculative path past the jne, poison both argument registers with r10.
 */
	.p2align 5
floor_bhi_arity2:
	jne	floor_bhi_ud
	cmovne	%r10, %rdi
	cmovne	%r10, %rsi
	ret
	int3
	.p2align 3, 0xcc
floor_bhi_ud:
	ud2
	ret
	int3

/* ------------------------------------------------------------ callees */

	.p2align 8
floor_callees:
	.rept	NFUNCS
	.p2align 8
	preamble
	entry
	leaq	(%rdi,%rsi), %rax
	retq
	.endr

	.section .data.rel.ro, "aw", @progbits
	.p2align 3
	.globl	bench_funcs
	.type	bench_funcs, @object
bench_funcs:
	.set	fi, 0
	.rept	NFUNCS
	.quad	floor_callees + fi * CALLEE_STRIDE + 16
	.set	fi, fi + 1
	.endr
	.size	bench_funcs, . - bench_funcs

	.section .note.GNU-stack, "", @progbits
