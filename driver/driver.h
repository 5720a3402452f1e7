/* SPDX-License-Identifier: MIT */
/* fineibt-cc internals: process helpers and the link-time veneers. */
#ifndef FI_DRIVER_H
#define FI_DRIVER_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable NULL-terminated argv. Allocation failure is fatal (a driver). */
struct fi_argv {
	char **v;
	size_t n, cap;
};

void fi_argv_add(struct fi_argv *a, const char *s);
void fi_argv_addf(struct fi_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fi_argv_free(struct fi_argv *a);
/* Print @a on stderr when fi_verbose (FINEIBT_CC_VERBOSE). */
void fi_show(const struct fi_argv *a);

/* Run @a (argv[0] looked up in PATH) and wait: its exit status, 128+sig,
 * or 127 when it could not be started. @quiet sends stdout/stderr to
 * /dev/null. */
int fi_run(const struct fi_argv *a, bool quiet);

/* fi_run, saying nothing when @a cannot be started: 127 then, with the
 * reason in @spawn_err (0 when it ran), for a step that is optional. */
int fi_run_try(const struct fi_argv *a, int *spawn_err);

/* The same, with stdout going to @fd (stderr kept). */
int fi_run_to_fd(const struct fi_argv *a, int fd);

/* An unlinked read/write temporary file, or -1. */
int fi_tmpfile(void);

extern bool fi_verbose;

/* Process and file helpers (proc.c), shared by fineibt-cc.c, veneer.c and ld.c. */
bool fi_exists(const char *path);
bool fi_has_suffix(const char *s, const char *suf);
bool fi_is_shlib(const char *s);
bool fi_which(const char *name, char *out, size_t len);
int fi_rmtree(const char *dir);
/*
 * Does the linker word @w (@len bytes) name the output file (lld and
 * GNU ld: -o FILE, -oFILE, --output FILE, --output=FILE)? 2: the next
 * word is the file; 1: the file is @w from byte *@at; 0: no.
 */
int fi_ld_out_word(const char *w, size_t len, size_t *at);
/* Is the linker word @w (@len bytes) an option whose value is the next
 * word (GNU ld / lld: -L, -soname, -rpath, ...)? */
bool fi_ld_takes_value(const char *w, size_t len);

/* Reading an output ELF file (proc.c), for index.c, relr.c, runtime.c. */
/* All @len bytes at @off, or false. */
bool fi_pread_full(int fd, void *buf, size_t len, uint64_t off);
/* The file offset of link-time [@vaddr, @vaddr + @len) in a PT_LOAD's
 * file bytes, or -1. */
int64_t fi_file_off(const Elf64_Phdr *ph, size_t n, uint64_t vaddr,
		    uint64_t len);

/*
 * fineibt-ld (ld.c): the driver invoked under that name is a linker
 * wrapper for stock clang (`--ld-path=.../fineibt-ld`, which
 * `pkg-config --libs fineibt` gives): the veneers, then the real linker
 * with the same arguments. Returns the exit status.
 */
int fi_ld_main(int argc, char **argv);

/*
 * Link-time veneers (DESIGN §5). Scan the objects and archives in @objs
 * for __kcfi_typeid_<name> whose <name> none of them defines and no kCFI
 * shared library in @shlibs defines with a preamble, write one
 * veneer per name into @dir/veneers.S, assemble it with @cc into
 * @dir/veneers.o, and append that object plus -Wl,--wrap=<name> for each
 * name to @link. Returns the number of veneers (0: nothing appended) or
 * -1 on error (message printed).
 */
int fi_veneers(const char *cc, const char *nm, const char *dir,
	       const struct fi_argv *objs, const struct fi_argv *shlibs,
	       struct fi_argv *link);

/*
 * Fill in the module index (src/elf/index.h) of the module just linked at
 * @path: the ranges of __patchable_function_entries and .kcfi_traps from
 * its section table. With @relr (a dynamic link, not a static one), the
 * relative relocations of __patchable_function_entries are taken out of
 * its DT_RELR table (fi_relr_drop) before the first index that will be
 * filled is written, and that index says the entries hold link-time
 * values (FI_INDEX_PFE_LINK); a module without an index keeps them. Nothing happens to files
 * that are not ELF modules with an index. Returns 0; -errno after
 * printing a warning (the module still works: the runtime then reads its
 * file at start-up); 1 after printing an error and removing @path, when
 * a write left its relocations half rewritten.
 */
int fi_index_fill(const char *path, bool relr);

/*
 * driver/relr.c: in the output open as @fd (@size bytes, its section
 * headers @sh, @shnum of them), drop the addresses of [@lo, @lo + @len)
 * from its DT_RELR table, shrinking DT_RELRSZ. 1: no dynamic relocation
 * writes that range any more (or ever did, in an ET_DYN); 0: left as it
 * was (no dynamic section, a RELA record writes the range, the table
 * would not fit again, a table we do not read); -errno: a write failed
 * once the table was changed (the output is broken).
 */
int fi_relr_drop(int fd, uint64_t size, const Elf64_Shdr *sh, size_t shnum,
		 uint64_t lo, uint64_t len);

/*
 * driver/direct.c: in the module just linked at @path with --emit-relocs,
 * retarget every direct call/jmp/jcc whose target is a function's endbr64
 * to the instruction after it, then strip the relocation sections. Returns
 * 0, or -errno after printing a warning (the module still works).
 */
int fi_direct_skip_endbr(const char *path);

/* Is the linker @ld lld (proc.c)? */
bool fi_is_lld(const char *ld);

/*
 * driver/runtime.c: the copy of libfineibt.so to link against so that the
 * program's DT_NEEDED is the runtime's absolute path (@libdir/fineibt-link/
 * libfineibt.so, whose soname names @libdir/libfineibt.so.0), written to
 * @copy. False when there is none, or its soname is not that file.
 */
bool fi_runtime_link_copy(const char *libdir, char *copy, size_t len);

#endif
