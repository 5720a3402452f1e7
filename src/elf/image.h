/* SPDX-License-Identifier: MIT */
/*
 * An ELF image (a file, or a module loaded in this process) and the CFI
 * sites found in it.
 *
 * All addresses in this interface are link-time addresses (st_value,
 * sh_addr, p_vaddr). A loaded module adds @bias to get run-time ones.
 * Bytes are always reached through the image's views, so that the same
 * passes run on a file buffer, on live text, or on a scratch copy of live
 * text that the runtime later maps in place.
 */
#ifndef FI_IMAGE_H
#define FI_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fineibt.h"
#include "insn.h"

/* One PT_LOAD segment and where its bytes are right now. */
struct fi_view {
	uint64_t vaddr;		/* link-time start */
	uint64_t size;		/* bytes reachable through @mem */
	uint8_t *mem;		/* file buffer + p_offset, or live/scratch memory */
	bool exec;		/* PF_X: the only views passes may write */
};

struct fi_sym {
	uint64_t addr;		/* link-time */
	uint64_t size;
	const char *name;	/* points into the image's string tables */
};

/*
 * A function with a patchable preamble slot (__patchable_function_entries).
 * 16 bytes: a module's array of these is written once per start (8,000
 * functions: 32 pages, each a page fault of its own), so the flags are
 * bits.
 */
struct fi_func {
	uint64_t addr;		/* func+0 (entry); the preamble is at addr-16 */
	uint32_t hash;		/* hash in the preamble as discovered */
	int8_t arity;		/* 0..7, -1 unknown */
	uint8_t form;		/* enum fi_preamble_form as discovered */
	uint8_t set;		/* FineIBT forms: FI_SET_* of the bytes */
	bool endbr : 1;		/* func+0 held an ENDBR-like value when found */
	bool has_cfi_sym : 1;	/* a __cfi_<name> symbol names this preamble */
	bool stock : 1;		/* stock layout: hash at func-4 (insn.h) */
};
_Static_assert(sizeof(struct fi_func) == 16, "fi_func: 16 bytes");

/* A kCFI-family call site (.kcfi_traps). */
struct fi_call {
	uint64_t addr;		/* site start = ud2 - 12 */
	uint32_t hash;		/* the type hash it expects */
	bool jmp;		/* tail call */
	uint8_t form;		/* enum fi_caller_form as discovered */
	uint8_t set;		/* FI_SET_V618 when a form only it writes */
};

/* A stock kCFI call site (.kcfi_traps; insn.h, fi_match_stock_site). */
struct fi_scall {
	uint64_t addr;		/* site start = ud2 - 12 (or - 13) */
	struct fi_stock_site s;	/* as discovered */
};

/* A call/jmp through an indirect thunk that carries no kCFI check. */
struct fi_tcall {
	uint64_t addr;		/* the 2e e8/e9 rel32 */
	uint64_t thunk;		/* its target */
	int reg;		/* register of the thunk (0..15), -1 unknown */
	bool jmp;
};

/* An external address-taken function and its expected type. */
struct fi_typeid {
	const char *name;	/* without the __kcfi_typeid_ prefix */
	uint32_t hash;
};

/* A site that did not match the pattern its metadata promised. */
struct fi_bad {
	uint64_t addr;
	const char *what;	/* static string: "call site", "preamble", ... */
};

/* What fineibt patch recorded in the file's .fineibt section. */
struct fi_note {
	bool present;
	uint16_t version;		/* of the record; the rest is valid only
					 * when it is FI_NOTE_VERSION (note.h) */
	struct fineibt_config cfg;	/* resolved */
	struct fineibt_key key;		/* valid when cfg.flags & FINEIBT_F_RAND */
	uint64_t bhi_args;		/* link-time address used for BHI, 0 if none */
};

struct fi_image {
	const char *path;		/* for messages */
	bool live;			/* a module of this process */
	uint64_t bias;			/* run-time = link-time + bias */
	uint16_t e_type;		/* ET_EXEC or ET_DYN */
	bool interp;			/* has PT_INTERP: ET_DYN is then a PIE */

	/* The file as read (owned); for a live module, the file on disk. */
	uint8_t *file;
	size_t file_size;

	struct fi_view *views;
	size_t nviews;

	/* Function symbols, sorted by address (symtab, else dynsym). */
	struct fi_sym *syms;
	size_t nsyms;
	/*
	 * Read from memory (fi_image_from_index): no symbols were read; the
	 * lookups below read them from @path when asked (src/elf/symfile.c),
	 * after checking that the file is still the module's: its program
	 * headers (@phdr, @phnum: the loaded module's own, Elf64_Phdr) and
	 * notes must match.
	 */
	bool lazy_syms;
	const void *phdr;
	size_t phnum;

	struct fi_func *funcs;		/* sorted by addr */
	size_t nfuncs;
	/*
	 * Built from a cache entry's record that carries the module's
	 * registered arrays (fi_image_from_record): its preambles and call
	 * sites, counted here, are not read (@funcs and @calls stay empty);
	 * the module registers the entry's arrays, or is read again from
	 * its text (src/load/cacheuse.c). 0 otherwise.
	 */
	size_t rec_sites;
	struct fi_call *calls;		/* sorted by addr */
	size_t ncalls;
	struct fi_tcall *tcalls;
	size_t ntcalls;
	/*
	 * Stock kCFI call sites (docs/compat.md, "Stock kCFI modules"):
	 * checks through any register, calling it directly. Sorted by addr.
	 */
	struct fi_scall *scalls;
	size_t nscalls;
	struct fi_typeid *typeids;
	size_t ntypeids;
	uint64_t *naked;		/* func+0 of naked ENDBRs, sorted */
	size_t nnaked;
	struct fi_bad *bad;
	size_t nbad;
	/*
	 * fi_image_stock's answer, found once by the discovery that filled
	 * the sites above (fi_elf_discover): it walks every function, and
	 * start-up asked it up to four times a module.
	 */
	bool is_stock;
	size_t arity_hist[FI_MAX_ARITY + 1];

	/* ud2 addresses listed in .kcfi_traps, sorted (fi_image_is_trap). */
	uint64_t *traps;
	size_t ntraps;
	/*
	 * Or .kcfi_traps itself, in the loaded module (fi_image_from_index,
	 * docs/index.md "The trap list in place"): @nktraps 32-bit entries,
	 * each relative to its own run-time address, at run-time @ktraps,
	 * their targets strictly increasing, inside a read-only PT_LOAD (no
	 * write, no execute). Then @traps is NULL: no private copy is kept,
	 * and the trap handler reads this list where the loader mapped it.
	 * Read it through fi_image_ntraps()/fi_image_trap().
	 */
	const uint8_t *ktraps;
	size_t nktraps;
	/*
	 * Patchable entries whose slot holds only the 11 nops: functions
	 * that never got a hash (not address-taken). Not in funcs[].
	 */
	size_t nslots;

	uint64_t bhi_args;		/* link-time __bhi_args in this image, 0 if none */
	uint64_t thunks[16];		/* link-time __x86_indirect_thunk_<reg>, 0 if none */
	struct fi_note note;

	/* Counters kept by fi_image_poke(). */
	size_t bytes_written;
	size_t writes;

	struct fi_elf *elf;		/* the reader's private state (elf.c) */
};

/*
 * Read the ELF file at @path into @im and discover its sites. Returns 0 or
 * -errno; on error @err (if not NULL) holds a one-line reason naming the
 * problem ("section header table past end of file") without the path.
 */
int fi_image_open(struct fi_image *im, const char *path,
		  char *err, size_t errlen);

/*
 * Same, from a buffer the image takes ownership of (malloc'd). Used by
 * fi_image_open, the fuzzers and tests.
 */
int fi_image_from_buffer(struct fi_image *im, const char *name, uint8_t *buf,
			 size_t size, char *err, size_t errlen);

/*
 * Turn an opened file image into a view of the module loaded at @bias in
 * this process: views now point at live memory (read-only until the
 * caller swaps in writable memory) and sites are re-read from it.
 */
int fi_image_attach_live(struct fi_image *im, uint64_t bias);

/*
 * fi_image_open + fi_image_attach_live for the runtime, with the same
 * sites, symbols and errors, at a fraction of the time and memory: the
 * file is mapped read-only only while its headers, symbols, relocations
 * and kCFI metadata are parsed; sites are discovered once, from live
 * memory. The image keeps no file: @im->file is NULL (so no DWARF lines,
 * no fi_image_write_file), symbol and type-id names are copied into a pool.
 * Since nothing is rediscovered from the file, a live module whose bytes
 * differ from its file gets no arity from the file (fi_image_attach_live
 * keeps the file's arity where the live preamble carries none).
 */
int fi_image_open_live(struct fi_image *im, const char *path, uint64_t bias,
		       char *err, size_t errlen);

void fi_image_close(struct fi_image *im);

/*
 * Scan the text again for calls through a thunk that are not the tail of
 * a kCFI call site (im->tcalls), with the thunks now in im->thunks (the
 * driver adds those its module index names: driver/index.c).
 */
int fi_image_rescan_tcalls(struct fi_image *im);

/* @len bytes at link-time @addr, or NULL if not inside one view. */
uint8_t *fi_image_ptr(const struct fi_image *im, uint64_t addr, size_t len);

/* The same, but only inside an executable view. */
uint8_t *fi_image_text(const struct fi_image *im, uint64_t addr, size_t len);

/*
 * The one write primitive: copy @len bytes to @addr, which must lie inside
 * one executable view. Returns 0 or -EFAULT.
 */
int fi_image_poke(struct fi_image *im, uint64_t addr, const void *bytes,
		  size_t len);

/* The function symbol containing @addr (or the nearest one below it). */
const struct fi_sym *fi_image_sym(const struct fi_image *im, uint64_t addr);

/*
 * Write "sym+0xoff" (or "0xaddr" without symbols) for link-time @addr.
 * No allocation, no stdio: usable from the trap handler.
 */
size_t fi_image_symbolize(const struct fi_image *im, uint64_t addr,
			  char *buf, size_t len);

/* The func whose entry is @addr, or NULL. */
const struct fi_func *fi_image_func(const struct fi_image *im, uint64_t addr);

/* Is @addr (link-time) inside .kcfi_traps' list of ud2 sites? */
bool fi_image_is_trap(const struct fi_image *im, uint64_t ud2_addr);

/* The number of listed ud2 sites, and the @i-th (link-time, increasing). */
size_t fi_image_ntraps(const struct fi_image *im);
uint64_t fi_image_trap(const struct fi_image *im, size_t i);

/*
 * Compiled with -fsanitize=kcfi but not in the layout the passes rewrite
 * (no -fpatchable-function-entry=11,11, or other slots; or calls not made
 * through r11 by the thunk flags, so no check is a site we know): .kcfi_traps
 * lists checks, yet none is a call site we recognise. Such a module keeps
 * its compile-time checks; FI_UNPREFIXED_HINT says why and what to do.
 */
bool fi_image_kcfi_unprefixed(const struct fi_image *im);

/*
 * A stock kCFI module the passes can bridge (docs/compat.md, "Stock kCFI
 * modules"): every listed check is a stock or a known call site, every
 * __cfi_ symbol names a preamble, and its preambles are known exactly
 * (a symbol table, or patchable entries). NULL if so (or if it has no
 * stock site or preamble at all: fi_image_stock says which); else the
 * reason, naming the flags that would make it fit.
 */
bool fi_image_stock(const struct fi_image *im);
const char *fi_image_stock_refused(const struct fi_image *im);
#define FI_UNPREFIXED_HINT						\
	"built with -fsanitize=kcfi but not with all the flags of fineibt-cc(1) " \
	"(-fpatchable-function-entry=11,11, -mretpoline-external-thunk, ...; " \
	"fineibt-cc adds them)"

/*
 * The mode the image's sites are in now, judged from the sites themselves
 * (and the note): kcfi, off, fineibt (+paranoid, +bhi), or mixed (-1).
 * Returns the enum fineibt_mode (KCFI for an image without sites) and fills
 * @cfg (if not NULL) with it and the flags seen (paranoid, bhi, the v6.18
 * set; rand and warn only from the note); -1 when sites disagree, also
 * when some are in v4's own forms and some in v6.18's (@cfg: majority
 * guess).
 * Preambles without ENDBR (left alone by the passes) are not counted.
 */
int fi_image_mode(const struct fi_image *im, struct fineibt_config *cfg);

/*
 * fi_image_mode(@im, NULL) == FINEIBT_MODE_KCFI, without counting: every
 * call site and every preamble with an ENDBR is in the compiler's kCFI
 * form (asked at each module's start-up).
 */
bool fi_image_is_kcfi_mode(const struct fi_image *im);

/*
 * The sequence set the image's FineIBT and v6.18 sites are written in:
 * FI_SET_V4 or FI_SET_V618; -1 when both show; -ENOENT when no site is in
 * a set's own form (kCFI as compiled, or v4's kcfi mode).
 */
int fi_image_set(const struct fi_image *im);

/*
 * Are @im's own indirect thunks the checking ones (src/seq/thunks.S: the
 * coarse check of the calls that carry no kCFI check)? True when it has
 * at least one thunk and each one it has is in that form.
 */
bool fi_image_coarse_thunks(const struct fi_image *im);

#endif /* FI_IMAGE_H */
