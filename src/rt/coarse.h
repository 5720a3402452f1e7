/* SPDX-License-Identifier: MIT */
/*
 * The coarse check of calls that carry no kCFI check (docs/compat.md,
 * "Calls without a kCFI check: the coarse check"): clang emits no check
 * for a call through an unprototyped pointer (`int (*)()`), and code
 * built without kCFI has none either, but both still call through the
 * module's own __x86_indirect_thunk_<reg> (crt/thunks.S). Once the passes
 * have made every checked call direct, the thunks see only those calls,
 * so the check lives there, as Microsoft's CFG does it: the target must
 * be a function entry the runtime knows (a kCFI function with an ENDBR
 * of a registered module, a dlsym veneer, a registered JIT function).
 *
 * Each thunk loads the GOT slot (RELRO) of __fineibt_coarse and jumps to
 * the check of its register there (coarse.S), which looks the target up
 * in the known-entry table below
 * and jumps to it, or stops at its ud2 (FI_TRAP_COARSE, trap.c).
 *
 * The table is trusted state: built in the read-only arena inside a
 * write window and published by one release store of its address into
 * the read-only runtime state (rtcoarse.c); a new table replaces the old
 * one whole, so a reader never sees one half updated. coarse.S reaches
 * the state through fi_rt_coarse_slot, a pointer in RELRO.
 *
 * Layout (assembler-friendly: coarse.S includes this file):
 *   u64 n, u64 pad, then n + 1 ranges sorted by lo, the last one
 *   a sentinel with lo = ~0; a range: [lo, hi), and bits: one bit per 16
 *   bytes from lo (entries are 16-aligned), or 0 for the dlsym veneer
 *   region, whose entries are every slot + FI_FVEN_ENTRY. No range
 *   accepts every address: a kCFI module left as compiled or that could
 *   not be registered has the bitmap the scan made of its recorded
 *   entries (fi_coarse_keep), or no range.
 */
#ifndef FI_COARSE_H
#define FI_COARSE_H

#define FI_COARSE_T_RANGES	16
#define FI_COARSE_R_LO		0
#define FI_COARSE_R_HI		8
#define FI_COARSE_R_BITS	16
#define FI_COARSE_R_SIZE	24
/* log2 of the granule one bit covers: entries are 16-aligned. */
#define FI_COARSE_SHIFT		4
/* The veneer region's rule (insn.h: FI_FVEN_SLOT, FI_FVEN_ENTRY). */
#define FI_COARSE_VEN_MASK	63
#define FI_COARSE_VEN_ENTRY	16
/* Register numbers in encoding order (rax = 0 ... r15 = 15). */
#define FI_COARSE_NREGS		16
/* The check of register n is at __fineibt_coarse + n * FI_COARSE_STRIDE. */
#include "thunks.h"

#ifndef __ASSEMBLER__
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

struct fi_coarse_range {
	uint64_t lo, hi;
	/* NULL: the veneer region's slot rule */
	const uint64_t *bits;
};

struct fi_coarse {
	uint64_t n;
	uint64_t pad;
	struct fi_coarse_range r[];	/* n + 1: the last is the sentinel */
};

_Static_assert(offsetof(struct fi_coarse, r) == FI_COARSE_T_RANGES, "coarse.S");
_Static_assert(offsetof(struct fi_coarse_range, lo) == FI_COARSE_R_LO, "coarse.S");
_Static_assert(offsetof(struct fi_coarse_range, hi) == FI_COARSE_R_HI, "coarse.S");
_Static_assert(offsetof(struct fi_coarse_range, bits) == FI_COARSE_R_BITS, "coarse.S");
_Static_assert(sizeof(struct fi_coarse_range) == FI_COARSE_R_SIZE, "coarse.S");

/*
 * @m's known entries for the coarse check: its kCFI functions that have
 * an ENDBR (the ones whose address escapes), from @im, the image with
 * its per-site arrays, over [m->text_lo & ~15, m->text_hi): the 64-bit
 * words of its bitmap (0: no entry, no bitmap), and the bits set into
 * @bits, zeroed by the caller (rtarena.c, when it freezes @m).
 */
size_t fi_coarse_module_words(const struct fi_module *m,
			      const struct fi_image *im);
void fi_coarse_module_fill(uint64_t *bits, const struct fi_module *m,
			   const struct fi_image *im);

/* The 64-bit words of a bitmap over [@lo & ~15, @hi). */
size_t fi_coarse_words(uint64_t lo, uint64_t hi);

/*
 * @im's known entries over [@lo & ~15, @hi), as a registered module's
 * (@pre: their preambles too, the FineIBT modes): the words of their
 * bitmap (0: no entry), and the bits set into @bits, zeroed by the
 * caller. fi_coarse_keep (rtstate.c) keeps one in the arena.
 */
size_t fi_coarse_range_words(uint64_t lo, uint64_t hi,
			     const struct fi_image *im);
void fi_coarse_range_fill(uint64_t *bits, uint64_t lo, uint64_t hi,
			  const struct fi_image *im, bool pre);

/*
 * The bitmap of @im's known entries over [@lo & ~15, @hi), for a kCFI
 * module whose registration failed; with @im NULL, of every 16-aligned
 * ENDBR in the live text [@lo, @hi), for a module left as compiled (its
 * layout may be one the scan cannot read entries from: another
 * -fpatchable-function-entry; its text is the file's, read-execute).
 * Kept in the read-only arena and checked where it landed (rtstate.c).
 * NULL when it has no entry there or it cannot be kept: the module then
 * has no range in the table (no address of it is an entry). Not
 * async-signal-safe.
 */
const uint64_t *fi_coarse_keep(const struct fi_image *im, uint64_t lo,
			       uint64_t hi, bool pre);

/*
 * The range of seen entry @e that a bitmap of fi_coarse_keep covers: its
 * kCFI text (lo, hi), or, left as compiled, its first executable segment.
 * False when it has neither.
 */
bool fi_coarse_seen_range(const struct fi_rt_seen *e, uint64_t *lo,
			  uint64_t *hi);

/*
 * The table for @rt's registered modules, JIT regions and veneer region:
 * its size in bytes, 0 when the process does not enforce the check (off,
 * inactive, not sealed yet, a dlmopen namespace's copy: then no table),
 * and the table written into @t of that size. fi_rt_coarse_publish
 * (rtstate.c) allocates and publishes it.
 */
size_t fi_coarse_table_len(const struct fi_runtime *rt);
void fi_coarse_table_fill(const struct fi_runtime *rt, struct fi_coarse *t);

/*
 * Is @addr a known entry of table @t (what coarse.S decides; every
 * address when @t is NULL)? Async-signal-safe.
 */
bool fi_coarse_known(const struct fi_coarse *t, uint64_t addr);

/*
 * @name is longjmp, _longjmp, siglongjmp, __longjmp_chk, setcontext or
 * swapcontext: functions that load rip and rsp from memory their
 * argument names, never a target the coarse check's exemption
 * (trap/coarsetrap.c) or a dlsym veneer (interpose/foreign.c) lets
 * through.
 */
bool fi_flow_primitive(const char *name);

/*
 * Is @target, which dladdr1 names as the export @sym (@name) of the
 * object at @fbase, really that export by the kernel's maps? dladdr's
 * answer and libc's dlsym answer both rest on the object's link_map
 * (l_addr: writable), so a forged l_addr moves them. True when @target
 * is executable and never writable, in the file whose first page
 * (read-only, file offset 0) is at @fbase (the vDSO: its one mapping),
 * at the file offset @sym's value maps to through that page's program
 * headers, with @sym one of that object's dynamic symbols and @name its
 * own name there (its PT_DYNAMIC, read-only: never the link_map's
 * l_info, which a forger aims at a relocation read as a symbol, or at
 * another string table: longjmp named "abs"); also true when
 * the kernel cannot be asked (-ENODEV). @kept: ask only through the
 * runtime's kept maps descriptor (async-signal-safe: the SIGILL
 * handler, trap/coarsetrap.c); else fi_rt_vma, which may open the maps
 * file (the dlsym veneers, interpose/foreign.c).
 */
bool fi_export_real(uint64_t target, const void *fbase, const ElfW(Sym) *sym,
		    const char *name, bool kept);

/*
 * Is @target what IFUNC @name of the object at @fbase resolves to? An
 * IFUNC's implementation has no dynamic symbol of its own, so dladdr
 * names no export there; the object's own read-only tables (its
 * PT_DYNAMIC, never the link_map's) find @name's symbol, the kernel
 * checks its resolver as fi_export_real checks an export, and the
 * resolver is called. 1 yes, 0 no, -ENODEV when the kernel cannot be
 * asked (fi_rt_vma: may open the maps file; not for the SIGILL handler).
 */
int fi_export_ifunc(uint64_t target, const void *fbase, const char *name);
#endif /* __ASSEMBLER__ */

#endif /* FI_COARSE_H */
