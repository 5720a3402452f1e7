/* SPDX-License-Identifier: MIT */
/*
 * __x86_indirect_thunk_<reg>: "jmp *%reg", for all 16 registers.
 *
 * Why these exist at all: kCFI programs are compiled with
 * -mretpoline-external-thunk -mindirect-branch-cs-prefix, which is what
 * gives every checked call site its fixed 20-byte shape ending in
 * "cs call __x86_indirect_thunk_r11" (docs/sequences.md). The compiler
 * only references the thunks; someone must define them. The passes
 * de-thunk patched call sites into "call *%r11", so after patching the
 * thunks serve only calls that carry no check and sites left unpatched.
 *
 * Why no retpoline: a retpoline is the kernel's defence against branch
 * target injection across privilege levels. In userspace the kernel
 * already isolates tasks' indirect branch predictors (IBPB / STIBP on
 * context switch per the spectre_v2_user policy), and a program that wants
 * more opts into it with prctl(PR_SET_SPECULATION_CTRL). So the thunks
 * are the plain indirect jump, and an int3 after it stops straight-line
 * speculation past the jmp.
 *
 * Each thunk is global with default visibility, so libfineibt.so exports
 * them (src/libfineibt.map) for modules that do not carry their own.
 * crt/thunks.S includes this file with FI_THUNKS_HIDDEN defined: every
 * module fineibt-cc links then carries a hidden copy, so its calls stay
 * direct rel32 inside the module (no PLT) and the passes recognise them.
 * Each thunk has its own section so --gc-sections drops unused ones.
 * No ENDBR: thunks are only ever reached by direct call/jmp.
 *
 * The coarse check (src/rt/coarse.h, docs/compat.md): a module's own
 * thunks load the GOT slot of the runtime's __fineibt_coarse and jump to
 * the check of their register there, which lets the call reach only a
 * function entry the runtime knows (r11 is scratch at a call; r10 too
 * when the target is in r11). The slot is bound by the loader (RELRO under
 * fineibt-cc's -z relro -z now: read-only before any code of the module
 * runs), so the thunk is position-independent and the same bytes in
 * every process: no text is written for it. The reference is weak: a
 * module loaded where no runtime defines the check (fineibt-cc
 * --fineibt-no-runtime, a process without libfineibt) has a null slot,
 * and the thunk is the plain jump. The passes leave the calls through
 * these thunks as they are, except in cfi=off (src/pass/patch.c).
 * libfineibt.so's exported copies stay the plain jump.
 */

#include "thunks.h"

.macro	THUNK reg, n
	.section .text.__x86_indirect_thunk_\reg, "ax", @progbits
	.balign	16, 0xcc
	.globl	__x86_indirect_thunk_\reg
#ifdef FI_THUNKS_HIDDEN
	.hidden	__x86_indirect_thunk_\reg
#endif
	.type	__x86_indirect_thunk_\reg, @function
__x86_indirect_thunk_\reg:
#ifdef FI_THUNKS_HIDDEN
	/* r11 is scratch at every call; r10 (saved) when r11 is the target */
.ifc \reg,r11
	/* r10 kept: a FineIBT caller left thunked passes its hash there;
	 * the check of r11 pops it first */
	push	%r10
	mov	__fineibt_coarse@GOTPCREL(%rip), %r10
	test	%r10, %r10
	jz	2f
	add	$(\n * FI_COARSE_STRIDE), %r10
	jmp	*%r10
2:	pop	%r10
.else
	mov	__fineibt_coarse@GOTPCREL(%rip), %r11
	test	%r11, %r11
	jz	1f
	add	$(\n * FI_COARSE_STRIDE), %r11
	jmp	*%r11
.endif
1:
#endif
	jmp	*%\reg
	int3
	.size	__x86_indirect_thunk_\reg, . - __x86_indirect_thunk_\reg
.endm

#ifdef FI_THUNKS_HIDDEN
	.weak	__fineibt_coarse
#endif
	THUNK	rax, 0
	THUNK	rcx, 1
	THUNK	rdx, 2
	THUNK	rbx, 3
	THUNK	rsp, 4
	THUNK	rbp, 5
	THUNK	rsi, 6
	THUNK	rdi, 7
	THUNK	r8, 8
	THUNK	r9, 9
	THUNK	r10, 10
	THUNK	r11, 11
	THUNK	r12, 12
	THUNK	r13, 13
	THUNK	r14, 14
	THUNK	r15, 15

	.section .note.GNU-stack, "", @progbits
