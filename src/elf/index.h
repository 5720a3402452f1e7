/* SPDX-License-Identifier: MIT */
/*
 * The module index (docs/index.md): an ELF note that
 * fineibt-cc links into every module (crt/index.S) and fills in after the
 * link (driver/index.c), so that the runtime finds a module's kCFI
 * metadata in the loaded image, through its program headers, without
 * opening its file.
 *
 * Note: namesz 8, name "FineIBT\0", type FI_INDEX_TYPE, in a section
 * .note.fineibt (SHT_NOTE, allocated: the linker puts it in a PT_NOTE
 * segment). Descriptor, FI_INDEX_DESCSZ bytes of little-endian 32-bit
 * words; every "off" is signed and relative to the first byte of the
 * descriptor, so the note needs no relocation and reads the same at any
 * load address:
 *
 *   word  0     version (FI_INDEX_VERSION; FI_INDEX_VERSION_1 notes, 22
 *               words, end after word 21 and are still read)
 *   word  1     flags: FI_INDEX_FILLED once the driver wrote words 2-5;
 *               FI_INDEX_NO_TCALLS: the driver's scan of the linked text
 *               found no call through one of the thunks below that is not
 *               the tail of a kCFI call site (discovery skips that scan);
 *               FI_INDEX_TCALL_LIST (version 2): it found 1 to
 *               FI_INDEX_TCALLS_MAX of them, listed in words 22-38
 *               (discovery takes those, checked, instead of the scan)
 *   word  2, 3  __patchable_function_entries: off, size in bytes (0, 0: none)
 *   word  4, 5  .kcfi_traps: off, size in bytes (0, 0: none)
 *   words 6-21  __x86_indirect_thunk_<reg> of the module for reg 0..15
 *               (rax, rcx, ..., r15 in encoding order): off, 0 if none
 *   word  22    version 2: number of listed thunk calls (valid with
 *               FI_INDEX_TCALL_LIST)
 *   words 23-38 version 2: off of each listed call's 2e e8/e9, increasing
 *
 * FI_INDEX_PFE_LINK: no dynamic relocation writes the entries of
 * __patchable_function_entries (fineibt-cc took their relative
 * relocations out of DT_RELR, driver/relr.c): they hold link-time values
 * (func - 11 at link base 0 for a PIE or DSO, 0 for a discarded function)
 * in memory as in the file; a reader adds the load bias.
 *
 * FI_INDEX_PATCHED (version 2, never with FI_INDEX_TCALL_LIST): `fineibt
 * patch` rewrote the module, and words 22-33 hold its .fineibt record
 * (src/elf/note.h) without the counts only `inspect` prints: the record's
 * bytes 0-31 (magic, version, size, mode, flags, BHI stubs), then its
 * key (bytes FI_NOTE_KEY to the end), the same bytes as the file's
 * section, so that the runtime takes the module from memory too.
 *
 * Only assembler-friendly definitions here: crt/index.S includes it.
 */
#ifndef FI_INDEX_H
#define FI_INDEX_H

#define FI_INDEX_NAME		"FineIBT"
#define FI_INDEX_NAMESZ		8
#define FI_INDEX_TYPE		0x46490001
#define FI_INDEX_VERSION	2
#define FI_INDEX_VERSION_1	1
#define FI_INDEX_FILLED		1
#define FI_INDEX_NO_TCALLS	2
#define FI_INDEX_TCALL_LIST	4
#define FI_INDEX_PATCHED	8
#define FI_INDEX_PFE_LINK	16
#define FI_INDEX_SECTION	".note.fineibt"

#define FI_INDEX_W_VERSION	0
#define FI_INDEX_W_FLAGS	1
#define FI_INDEX_W_PFE		2
#define FI_INDEX_W_TRAPS	4
#define FI_INDEX_W_THUNKS	6
#define FI_INDEX_W_NTCALLS	22
#define FI_INDEX_W_TCALLS	23
#define FI_INDEX_TCALLS_MAX	16
#define FI_INDEX_W_RECORD	22
#define FI_INDEX_RECORD_MAX	((39 - FI_INDEX_W_RECORD) * 4)
#define FI_INDEX_WORDS		39
#define FI_INDEX_DESCSZ		(FI_INDEX_WORDS * 4)
#define FI_INDEX_WORDS_1	22
#define FI_INDEX_DESCSZ_1	(FI_INDEX_WORDS_1 * 4)

/*
 * The RTLD_NEXT note (crt/next.S, docs/index.md): a second note of the
 * same name in .note.fineibt, type FI_NEXT_TYPE, FI_NEXT_DESCSZ bytes:
 *
 *   word 0   version (FI_NEXT_VERSION)
 *   word 1   off of the module's RTLD_NEXT entry (no ENDBR, not exported)
 *   word 2   off of its GOT slot for dlsym@GLIBC_2.2.5 (libc's)
 *   word 3   off of its GOT slot for dlvsym@GLIBC_2.2.5
 *
 * Offsets are relative to the descriptor, as the index's. Readers of the
 * index skip it (another type); older modules have none.
 */
#define FI_NEXT_TYPE		0x46490002
#define FI_NEXT_VERSION		1
#define FI_NEXT_W_ENTRY		1
#define FI_NEXT_W_DLSYM		2
#define FI_NEXT_W_DLVSYM	3
#define FI_NEXT_WORDS		4
#define FI_NEXT_DESCSZ		(FI_NEXT_WORDS * 4)

#endif /* FI_INDEX_H */
