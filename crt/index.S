/* SPDX-License-Identifier: MIT */
/*
 * The module index (format in src/elf/index.h): one per module, linked whole
 * with the rest of libfineibt_crt.a. The thunk offsets are resolved by
 * the linker (the thunks are this module's own, hidden: crt/thunks.S);
 * the section ranges are written by fineibt-cc once the link is done,
 * since no linker defines bounds for a section named ".kcfi_traps". Until
 * then FI_INDEX_FILLED is clear and the runtime reads the module's file,
 * as for a module without an index. The list of thunk calls without a
 * check has a fixed capacity reserved here, so that the driver can write
 * it in place without changing the layout (docs/index.md).
 */
#include "../src/elf/index.h"

	.section .note.fineibt, "a", @note
	.balign	4
	.long	FI_INDEX_NAMESZ
	.long	FI_INDEX_DESCSZ
	.long	FI_INDEX_TYPE
	.asciz	FI_INDEX_NAME
.Lfi_index_desc:
	.long	FI_INDEX_VERSION
	.long	0			/* flags */
	.long	0, 0			/* __patchable_function_entries */
	.long	0, 0			/* .kcfi_traps */
	.irp	reg, rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15
	.long	__x86_indirect_thunk_\reg - .Lfi_index_desc
	.endr
	.long	0			/* listed thunk calls */
	.fill	FI_INDEX_TCALLS_MAX, 4, 0

	.section .note.GNU-stack, "", @progbits
