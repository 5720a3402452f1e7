/* SPDX-License-Identifier: MIT */
/*
 * The external retpoline thunks that kCFI code built with
 * -mretpoline-external-thunk calls (`cs call __x86_indirect_thunk_r11`).
 * Each module built by fineibt-cc carries its own, hidden, so the call
 * stays a direct rel32 inside the module (no PLT) and the passes can
 * recognise it and turn it into `call *%r11`. A plain indirect jump: the
 * speculation hardening we want is the CFI check, not a retpoline.
 */
	.macro fi_thunk reg
	.section .text.__x86_indirect_thunk_\reg,"ax",@progbits
	.p2align 4
	.globl __x86_indirect_thunk_\reg
	.hidden __x86_indirect_thunk_\reg
	.type __x86_indirect_thunk_\reg, @function
__x86_indirect_thunk_\reg:
	jmp *%\reg
	int3
	.size __x86_indirect_thunk_\reg, .-__x86_indirect_thunk_\reg
	.endm

	fi_thunk rax
	fi_thunk rbx
	fi_thunk rcx
	fi_thunk rdx
	fi_thunk rsi
	fi_thunk rdi
	fi_thunk rbp
	fi_thunk r8
	fi_thunk r9
	fi_thunk r10
	fi_thunk r11
	fi_thunk r12
	fi_thunk r13
	fi_thunk r14
	fi_thunk r15

	.section .note.GNU-stack,"",@progbits
