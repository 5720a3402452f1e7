/* SPDX-License-Identifier: MIT */
/*
 * The module's RTLD_NEXT entry: glibc's dlsym(RTLD_NEXT, name) (or
 * dlvsym when version is not NULL) called from inside this module, so
 * that glibc, which takes the caller from its return address, searches
 * as it would for this module's own call (a module loaded by dlopen: the
 * scope of its dlopen root). The runtime's dlsym interposer
 * (src/interpose/dlsym_so.c) calls it and wraps the answer in a veneer.
 *
 * Not a gadget (docs/compat.md, docs/protection.md):
 * - no ENDBR, no kCFI preamble, not exported: no indirect branch lands
 *   here under IBT, a kCFI or FineIBT caller traps (the 16 bytes before
 *   it are int3, where a FineIBT caller enters and where a kCFI check
 *   reads its hash), and the runtime finds it through the note below;
 * - it calls only what its own GOT slots hold, never an argument: it is
 *   called as entry(name, version) (rdi, rsi; nothing else is read).
 *   The slots name libc's compat versions, dlsym@GLIBC_2.2.5 and
 *   dlvsym@GLIBC_2.2.5, which the runtime does not define (its
 *   interposers are @GLIBC_2.34, libfineibt.map): the loader binds them
 *   to libc's, in RELRO, read-only before any code of the module runs,
 *   and the runtime's GOT pass leaves these two slots alone (it finds
 *   them through the note).
 */
#include "../src/elf/index.h"

	.symver	fi_crt_real_dlsym, dlsym@GLIBC_2.2.5
	.symver	fi_crt_real_dlvsym, dlvsym@GLIBC_2.2.5
	/* Weak: a fully static link has no versions (and no RTLD_NEXT
	 * entry to serve: its runtime has no dlsym interposer); 0 there. */
	.weak	fi_crt_real_dlsym
	.weak	fi_crt_real_dlvsym

	.section .note.fineibt, "a", @note
	.balign	4
	.long	FI_INDEX_NAMESZ
	.long	FI_NEXT_DESCSZ
	.long	FI_NEXT_TYPE
	.asciz	FI_INDEX_NAME
.Lfi_next_desc:
	.long	FI_NEXT_VERSION
	.long	fi_crt_next - .Lfi_next_desc
	/* GOTPCREL is relative to the word itself: + its offset. */
	.long	fi_crt_real_dlsym@GOTPCREL + FI_NEXT_W_DLSYM * 4
	.long	fi_crt_real_dlvsym@GOTPCREL + FI_NEXT_W_DLVSYM * 4

	.text
	.balign	16
	.fill	16, 1, 0xcc
	.type	fi_crt_next, @function
fi_crt_next:
	mov	%rsi, %rdx		/* version */
	mov	%rdi, %rsi		/* name */
	mov	$-1, %rdi		/* RTLD_NEXT */
	mov	fi_crt_real_dlsym@GOTPCREL(%rip), %rax
	test	%rdx, %rdx
	jz	1f
	mov	fi_crt_real_dlvsym@GOTPCREL(%rip), %rax
1:	test	%rax, %rax
	jz	2f
	sub	$8, %rsp
	call	*%rax
	add	$8, %rsp
2:	ret				/* rax = 0 without a slot */
	.size	fi_crt_next, . - fi_crt_next

	.section .note.GNU-stack, "", @progbits
