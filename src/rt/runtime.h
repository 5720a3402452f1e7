/* SPDX-License-Identifier: MIT */
/*
 * rt/: the process state, what rt/ defines (docs/architecture.md). It is
 * filled by start-up and the module walk (src/load/, load.h: the
 * constructor, fineibt_rt_hook, each dlopen's scan) and read by the trap
 * handler (src/trap/) and the JIT emitter (src/jit/). Everything here is
 * read-only from the end of start-up's first window on: it is written
 * through the kernel (fi_rt_put, rtwrite.c), never through a writable
 * mapping; only that first window, alone and before any code of the
 * program, may store into the state's block in place (docs/protection.md,
 * "The first window"). The SIGILL handler only reads it and never
 * allocates.
 */
#ifndef FI_RUNTIME_H
#define FI_RUNTIME_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "fineibt.h"
#include "image.h"

struct fi_coarse;

#define FI_MAX_MODULES	256
/* JIT regions (jit.c) have slots of their own: they never crowd out modules. */
#define FI_MAX_JIT	256
#define FI_MAX_SLOTS	(FI_MAX_MODULES + FI_MAX_JIT)
/* Modules the start-up and dlopen scans keep track of (start.c). */
#define FI_MAX_SEEN	1024
/* Exit status of a process stopped by fi_rt_die(). */
#define FI_RT_DIE_STATUS 127

struct fi_module {
	struct fi_image img;		/* link-time view + sites */
	uint64_t text_lo, text_hi;	/* run-time range of its executable views */
	uint64_t bhi_args;		/* run-time BHI stub array its preambles call, 0 if none */
	bool patched;			/* by the runtime, or statically (note) */
	struct fineibt_config cfg;	/* the mode its sequences are in */
	struct fineibt_key rehash_key;	/* valid when cfg.flags & FINEIBT_F_RAND */
	/*
	 * A registered copy keeps no per-site arrays of 16 bytes (its img
	 * has no funcs, calls or tcalls; its traps may be the module's own,
	 * img.ktraps): only this, built by fi_arena_freeze. Its preambles'
	 * entries as sorted 32-bit offsets from link-time @func_base, each
	 * one's arity (NULL when none is known), and the sites
	 * fi_rt_fingerprint reads (fi_fp_sample).
	 */
	uint64_t func_base;
	const uint32_t *func_off;
	const int8_t *func_arity;
	size_t nfunc;
	const uint64_t *fp_site;
	size_t nfp;
	/* Of a registered copy: the caller's module it was made from (its
	 * identity for fi_rt_module_of and fi_rt_del_module). */
	const void *key;
	/*
	 * A stock kCFI module (docs/compat.md, "Stock kCFI modules"): its
	 * checks go through any register (the trap decoder reads the site),
	 * and its pointers to uninstrumented functions may be typed veneers,
	 * in the read-only page run [sven_lo, sven_hi) (src/trap/stockven.c).
	 */
	bool stock;
	uint64_t sven_lo, sven_hi;
	/* Of a registered copy: its known entries for the coarse check
	 * (coarse.h), one bit per 16 bytes from text_lo & ~15, or NULL. */
	const uint64_t *coarse_bits;
	/*
	 * Of a module mapped from the shared text cache: func_off,
	 * func_arity, fp_site and coarse_bits point into the entry's
	 * registered arrays, mapped read-only and sealed from the entry
	 * (@regs_len bytes from its struct fi_cache_regs at @regs;
	 * docs/protection.md "The shared text cache"), not into the arena.
	 * NULL otherwise.
	 */
	const void *regs;
	size_t regs_len;
};

/*
 * A sample of at most FI_FP_SITES sites of @im (its calls and preambles),
 * in runs of neighbours on a few pages (rtarena.c), into @out: link-time
 * addresses of the 16-byte site (call site, or preamble at func - 16),
 * FI_FP_CALL set for a call site. How many; with @out NULL, only that.
 */
#define FI_FP_SITES	256
#define FI_FP_CALL	(1ull << 63)
size_t fi_fp_sample(const struct fi_image *im, uint64_t *out);
/*
 * The fingerprint of @im's text at the @n sampled sites @sample (a hash
 * of their live bytes, read as words: 8, 8 and 4 bytes of each 20-byte
 * window; of a call site's first word only bytes 6 and 7). The cache
 * service stores the one of an entry's text in its registered arrays'
 * header (struct fi_cache_regs), so that a hit does not read the pages.
 */
uint64_t fi_fp_hash(const struct fi_image *im, const uint64_t *sample, size_t n);

/*
 * The registered arrays of @m (func_off, func_arity, fp_site, coarse_bits,
 * from @m's image, text range and mode) laid out as the arena lays them,
 * after @hdr bytes, into @buf (@cap bytes; NULL: measure only), with
 * the arrays' offsets from @buf in @out's pointers. Their size, or 0 if
 * they do not fit. The cache service writes them into an entry
 * (src/offline/cachefill.c) for the processes that map it.
 */
size_t fi_arena_lay_regs(const struct fi_module *m, size_t hdr, uint8_t *buf,
			 size_t cap, struct fi_module *out);

/* A registered module's preamble count, and the entry (link-time) of the @i-th. */
size_t fi_module_nfuncs(const struct fi_module *m);
uint64_t fi_module_func(const struct fi_module *m, size_t i);
/* The arity recorded for the function at link-time @func, or -1. */
int fi_module_arity(const struct fi_module *m, uint64_t func);

/*
 * The arena (src/rt/rtarena.c): chunks holding the registered modules
 * (struct fi_module, its image and every array and string the trap
 * handler reads through it), read-only and sealed like the state, written
 * only through fi_rt_put.
 */
#define FI_ARENA_CHUNKS	64
struct fi_arena_chunk {
	uint8_t *base;
	size_t size, used;
};
struct fi_arena {
	size_t nchunks;
	struct fi_arena_chunk chunk[FI_ARENA_CHUNKS];
};

/* trap.c's record of the program's own SIGILL disposition. */
struct fi_rt_sig {
	struct sigaction user_act;	/* what the program asked for */
	unsigned int user_seq;		/* odd while user_act is being written */
	bool installed;			/* fineibt's handler holds SIGILL */
	/* libc's sigaction, signal, sysv_signal (uninstrumented calls). */
	void *real_sigaction, *real_signal, *real_sysv_signal;
	/* libc's sigset, sigignore, sigvec: never called, only compared
	 * (sigbind.c rebinds a RELRO slot only away from libc's own). */
	void *real_sigset, *real_sigignore, *real_sigvec;
};

/*
 * The scans' record of a module (start.c), kept in the read-only state:
 * it decides which modules are new and which to withdraw, so a forged
 * entry must not be possible. An entry with a range is also the record of
 * rewritten code: a #UD there that no registered module explains is fatal,
 * never the program's (fi_rt_rewritten_at). Slots are free when key is 0.
 */
struct fi_rt_seen {
	uint64_t key, size;	/* its first executable segment: identity */
	uint64_t lo, hi;	/* its kCFI text, or 0, 0 when not kCFI */
	uint64_t fp;		/* fingerprint of its sites, when fp_set */
	const void *fbase;	/* dladdr's load base of the object */
	const struct fi_module *mod;	/* its registered copy, or NULL */
	/*
	 * A kCFI module left as compiled (no patchable entries): its
	 * .kcfi_traps as sorted offsets from @key, in a read-only mapping of
	 * its own (fi_rt_compiled_trap), or NULL.
	 */
	const uint32_t *ctraps;
	/*
	 * A kCFI module left as compiled or whose registration failed: the
	 * coarse check's bitmap of its recorded entries (fi_coarse_keep),
	 * read-only, over fi_coarse_seen_range; NULL: none (then no address
	 * of it is an entry).
	 */
	const uint64_t *cbits;
	uint32_t nctraps;
	bool fp_set;
};

/*
 * The other code pointers the library calls through, kept here read-only
 * (docs/protection.md, "No code pointer in writable memory"): written only
 * inside a write window, by dlhook.c and print.c.
 */
struct fi_rt_calls {
	void *real_dlopen;		/* libc's dlopen (RTLD_NEXT) */
	fineibt_print_fn print;		/* fineibt_set_print()'s hook, if set */
	bool print_set;			/* false: the built-in stderr printer */
};

/*
 * The shared text cache as this process uses it (src/load/cacheuse.c,
 * docs/runtime.md "Shared text"): settled at start-up with the key, read
 * at each later scan (a dlopen). @on: the process's key is its user's,
 * read from the directory @root (u<@uid> in it); off, the key is the
 * process's own and the cache is never touched.
 */
#define FI_CACHE_ROOT_MAX	256
struct fi_rt_cache {
	bool on;
	uint32_t uid;
	uint64_t keyid;		/* of the process's key, which is the user's */
	char root[FI_CACHE_ROOT_MAX];
};

/*
 * src/interpose/foreign.c's veneer and stub-page bookkeeping
 * (docs/compat.md): it decides which targets the SIGILL handler accepts as veneers and where
 * stubs are written, and holds executable addresses, so it is read-only
 * too (written in windows: at dlsym time, and by the handler opening a
 * site). The names mapping is read-only outside its own writes.
 */
#define FI_FSTUB_PAGES	64
struct fi_rt_foreign {
	uint64_t fven_base;		/* the veneer region, 0 until reserved */
	void *fven_names;		/* struct fi_fven_name[], foreign.c */
	size_t nstub_pages;
	struct { uint64_t page, used; } stub_pages[FI_FSTUB_PAGES];
	/* stockven.c's typed veneers: their region and records (read-only) */
	uint64_t sven_base;
	void *sven_recs;
};

/*
 * A range of a module's text that the runtime replaced with a copy of
 * its own (mremap of an anonymous mapping): the file, and the file offset
 * of @lo, the pages were copied from (the kernel's answer as the copy was
 * made). Only fi_rt_copy_note adds one, inside a window.
 */
#define FI_MAX_COPIES	64
struct fi_rt_copy {
	uint64_t lo, hi;
	uint64_t dev, ino, off;
};

/*
 * How the state is written (rtwrite.c): through the kernel (pwrite on
 * /proc/self/mem, the default), or, where that cannot be had at start-up,
 * through windows that make the pages written read-write meanwhile (the
 * weaker property, docs/protection.md). The descriptors, and the regions
 * fi_rt_put may write besides the state and the arena.
 */
enum { FI_RT_UNSET, FI_RT_KERNEL, FI_RT_WINDOWS };
#define FI_RT_REGIONS	8
struct fi_rt_wr {
	uint8_t how;			/* FI_RT_* */
	bool sealed;			/* mseal held (Linux 6.10+) */
	/*
	 * Start-up's first window is writing the state in place (rtwrite.c,
	 * "The first window"): true only while the state is still the
	 * writable .bss the loader mapped, cleared as it is made read-only.
	 */
	bool inplace;
	/*
	 * The start path's proof that no code of the program had run when
	 * the first window opened (fi_rt_first_unrun), kept for good: the
	 * runtime's text rewrites of that start-up may go unverified when
	 * alone (rtlive.h, fi_live_unverified_ok). Never true for a
	 * libfineibt.so started by the program's dlopen.
	 */
	bool unrun;
	int err;			/* FI_RT_WINDOWS: why (errno) */
	int mem_fd, maps_fd;		/* /proc/self/mem, /proc/self/maps */
	uint64_t mem_dev, mem_ino;	/* the mem descriptor's file (fstat) */
	size_t nregions;
	struct { uint64_t base, size; } region[FI_RT_REGIONS];
};

/*
 * A module found by dl_iterate_phdr, not looked at yet (start.c). Also
 * what a second runtime instance hands the process's runtime (below).
 */
struct fi_rt_found {
	const char *name;
	uint64_t bias;
	uint64_t key, size;
	const void *phdr;	/* the loaded module's program headers */
	size_t phnum;
};

/*
 * One runtime per process (docs/protection.md). A library loaded into
 * another link-map namespace (dlmopen) brings a second copy of the
 * runtime; it must never choose a mode of its own. The process's runtime
 * (the primary) publishes where its state is (src/rt/rtone.c: an anchor only
 * a system call can make) and fills this in; a second instance checks
 * abi and size, then hands its namespace's modules to adopt (rewritten
 * into the primary's mode, registered with the primary's trap handler)
 * and its namespace's SIGILL installs to sigaction (its JIT registrations
 * likewise; its JIT emitters read the primary's mode and key).
 */
#define FI_RT_ABI	0x46490001u
struct fi_rt_self {
	uint32_t abi;		/* FI_RT_ABI */
	uint32_t size;		/* sizeof(struct fi_runtime) */
	uint32_t found_size;	/* sizeof(struct fi_rt_found) */
	void (*adopt)(const struct fi_rt_found *f, size_t n,
		      unsigned long long subs);
	int (*sigaction)(int sig, const struct sigaction *act,
			 struct sigaction *old);
	/* fineibt_jit_register/unregister (its JIT regions' table). */
	int (*jit_register)(const void *code, size_t len);
	int (*jit_unregister)(const void *code);
};

/*
 * FINEIBT_LOG=syslog (src/trap/logsink.c): the socket the SIGILL handler
 * sends reports to, read-only like the rest (a forged fd would send them
 * elsewhere). sock1 is the descriptor + 1: 0, the storage's initial
 * value, is "no system log".
 */
struct fi_rt_syslog {
	int sock1;
	uint64_t dev, ino;		/* the socket's, as fstat saw it */
	char path[108];			/* sun_path it was connected to */
	char ident[32];			/* the program's name in each line */
};

/*
 * cfi=warn reports a (call site, target) pair in full once, then counts
 * it (src/trap/repeat.c, docs/traps.md "Repeated failures"). The pairs
 * reported are here, not in writable memory: a forged entry would hide
 * the first report of a new failure. Added by the SIGILL handler in a
 * window, read without a lock (a slot is put before @n). Full: new pairs
 * are reported in full every time. (The counts are repeat.c's.)
 */
#define FI_RT_REPEAT	64
struct fi_rt_repeat {
	size_t n;
	/* @type: the type the caller expected (a tail call's trap in the
	 * target is keyed by the return address of its caller's caller,
	 * which two different tail calls share). */
	struct { uint64_t site, target, type; } pair[FI_RT_REPEAT];
};

/*
 * Never writable (fi_rt_put). Page 0 holds what start-up settles (mode,
 * key, flags) and every code pointer the runtime calls through; from
 * page 1 on, what windows after start-up write: counts, the veneer
 * bookkeeping, the arena's table, the record, the tables. The split
 * matters only where the state is written through windows (FI_RT_WINDOWS:
 * a window makes the pages it writes read-write), where a write racing
 * an ordinary window then cannot reach page 0 (docs/protection.md).
 */
struct fi_runtime {
	struct fi_rt_self self;		/* first: read before anything else */
	/* A second instance: the process's runtime it defers to, or NULL. */
	const struct fi_runtime *primary;
	bool active;			/* constructor ran and installed the handler */
	bool sealed;			/* start-up over: config and active are final */
	bool configured;		/* fi_rt_set_config ran */
	bool have_arity;		/* some module carries kCFI arity */
	/* AT_SECURE, read at start-up (the auxiliary vector is writable). */
	bool secure;
	struct fineibt_config cfg;	/* resolved process mode */
	struct fineibt_key key;		/* the rehash key (cfg has RAND) */
	struct fi_rt_sig sig;
	struct fi_rt_calls calls;
	struct fi_rt_syslog syslog;
	struct fi_rt_cache cache;
	struct fi_rt_wr wr;
	/* ---- page 1: what windows after start-up write ---- */
	size_t page1 __attribute__((aligned(4096)));
	/*
	 * Slots [0, FI_MAX_MODULES) of mods[] hold modules, the rest JIT
	 * regions; nmods is one past the highest slot ever used.
	 */
	size_t nmods;
	size_t nseen;				/* one past the highest used */
	size_t nstubs;
	size_t nstub_copies;
	struct fi_rt_foreign foreign;
	struct fi_arena arena;
	/*
	 * The coarse check's known-entry table (coarse.h), in the arena;
	 * NULL while the process does not enforce it. Replaced whole by
	 * fi_rt_coarse_publish; coarse.S reads it through fi_rt_coarse_slot.
	 */
	const struct fi_coarse *coarse;
	/* ---- the tables ---- */
	struct fi_rt_seen seen[FI_MAX_SEEN];
	/* Frozen copies, in the arena; each one's .key is the caller's module. */
	const struct fi_module *mods[FI_MAX_SLOTS] __attribute__((aligned(4096)));
	/* BHI stub arrays in use (one near each module that needs one). */
	uint64_t stubs[FI_MAX_MODULES];
	uint64_t stub_size[FI_MAX_MODULES];	/* [stubs[i], stubs[i] + stub_size[i]) */
	/* The copies of the stubs the runtime mapped itself (rtlive.c). */
	uint64_t stub_copies[FI_MAX_MODULES];
	/*
	 * cfi=warn: the failures reported in full so far (trap/repeat.c).
	 * Last: written by the handler only, it moves none of the fields a
	 * window at dlopen writes onto another page (rt_windows counts them).
	 */
	struct fi_rt_repeat repeat;
	/*
	 * Text pages the runtime moved a copy of its own over (the PLT pass
	 * after start-up, src/interpose/plt.c): anonymous memory to the
	 * kernel, the file's bytes to the runtime (fi_rt_copy_note).
	 * After the rest, on a page of its own: it moves no field a window
	 * writes onto another page (rt_windows counts them), and a note
	 * writes this one page.
	 */
	size_t ncopies __attribute__((aligned(4096)));
	struct fi_rt_copy copies[FI_MAX_COPIES];
};

/* Record the FINEIBT_LOG=syslog socket (before the state is sealed). */
int fi_rt_set_syslog(const struct fi_rt_syslog *s);

/* The process state (never NULL; .active false when not started). */
const struct fi_runtime *fi_rt(void);

/* The module whose executable text holds run-time @addr, or NULL. */
const struct fi_module *fi_rt_module_at(uint64_t addr);

/*
 * If run-time @addr lies inside a BHI stub array, its base; else 0.
 * Async-signal-safe.
 */
uint64_t fi_rt_bhi_base(uint64_t addr);

/*
 * Writing the state (src/rt/rtwrite.c, docs/architecture.md "Writing the
 * state"). Nothing the runtime trusts is writable in the process once
 * start-up's windows have closed: the state, the arena and the regions
 * of fi_rt_map_protected are written only by fi_rt_put, through the
 * kernel. Inside start-up's windows alone, when no code of the program
 * has run and none can (fi_rt_first_unrun) and no other task shares the
 * address space (asked again as each window opens), the state's block is
 * still the loader's writable .bss and fi_rt_put stores into it; the end
 * of the last of them (fi_rt_inplace_hold) makes it read-only and seals
 * it.
 *
 * fi_rt_write_begin() opens a window: it blocks every signal in the
 * calling thread and takes the one writer lock; it returns the state
 * (read-only, as always), or NULL and errno when the state cannot be
 * written (nothing was). fi_rt_write_end() closes it. Windows nest within
 * a thread (the inner pair does nothing), so several updates share one
 * (fi_rt_batch_begin/end). Both are async-signal-safe (the SIGILL
 * handler writes too). Readers take no lock: a writer puts a slot before
 * the count or pointer that publishes it.
 *
 * fi_rt_put() writes @len bytes of @src at @dst inside a window, in one
 * system call; @dst must lie in the state, the arena or a region of
 * fi_rt_map_protected. @src is what the writer computed, on its own
 * stack (another thread's write primitive there already owns its return
 * addresses: docs/protection.md). fi_rt_put_scratch() is the same for a
 * buffer built in writable memory (a module's record): the caller
 * verifies what landed against trusted sources before publishing it
 * (rtverify.c). fi_rt_put_module() is fi_rt_put_scratch() for a
 * registered module's copy (rtarena.c): the test build's park hook
 * (fi_rt_park) is told "put module" rather than "put". 0 or -errno.
 * FI_RT_PUT(lvalue, value) puts one field.
 */
const struct fi_runtime *fi_rt_write_begin(sigset_t *saved);
void fi_rt_write_end(const sigset_t *saved);
int fi_rt_put(const void *dst, const void *src, size_t len);
int fi_rt_put_scratch(const void *dst, const void *src, size_t len);
int fi_rt_put_module(const void *dst, const void *src, size_t len);
#define FI_RT_PUT(lv, val) __extension__({				\
	__typeof__(lv) fi_put_v_ = (val);				\
	fi_rt_put(&(lv), &fi_put_v_, sizeof(fi_put_v_));		\
})
/* Is this thread inside a window? */
bool fi_rt_writing(void);
/*
 * The start path's word (src/load/: early.c, start.c) that no code of the
 * program has run yet and that none can run inside the first window
 * (every function the runtime calls is bound into its own dependencies):
 * with it, and no other task sharing the address space when the window
 * opens, the first window writes the state's block in place. Asked only
 * by the first window; the first window clears it.
 */
void fi_rt_first_unrun(void);
/* Said and not yet taken by the first window (rtone.c's question). */
bool fi_rt_first_unrun_said(void);
/* Was the first window written in place? Once: the stack scrub of the
 * same start asks, and the answer is false after (rtstate.c). */
bool fi_rt_first_inplace_take(void);
/*
 * The start path (start.c) says that another start-up window follows
 * (true) or that the next window to close is start-up's last (false):
 * a block written in place stays writable across the rewrite between
 * them, only the runtime's own code running in the one task.
 * fi_rt_inplace_seal() ends start-up: a block still writable (a start
 * that went wrong between its windows) is made read-only and sealed.
 */
void fi_rt_inplace_hold(bool on);
void fi_rt_inplace_seal(void);
/*
 * Inside this thread's window while the block is written in place: that
 * window blocked every signal and, as it opened, found the process alone
 * (fi_rt_alone), and start-up's first window opened and checked the
 * kernel's writer: its descriptor, for a caller that needs those proofs
 * (the PLT pass, src/load/pltwalk.c) and need not ask them again. -1
 * anywhere else.
 */
int fi_rt_window_alone_fd(void);
/*
 * Zero @n bytes at @p that held a key, so that the compiler keeps the
 * stores (glibc's explicit_bzero, without binding one more versioned
 * symbol at every start-up).
 */
static inline void fi_rt_wipe(void *p, size_t n)
{
	__builtin_memset(p, 0, n);
	__asm__ volatile("" : : "r"(p) : "memory");
}
/*
 * Were the descriptors in the state (fi_rt()->wr) opened by this process
 * (not inherited across fork)? Whether each is still open is asked
 * separately.
 */
bool fi_rt_own_here(void);
/*
 * This process's /proc/self/mem descriptor, asked of the kernel (fstat)
 * that the number still names it, or -1 (windows mode, a fork child
 * before its first window, a number the program closed). For a writer
 * that must change read-only memory outside the runtime's regions with
 * no window in its own mappings (plt.c, the PLT entries of a start-up).
 * fi_rt_pwrite() writes @len bytes of @src at @dst through such a
 * descriptor (EINTR and short writes retried): 0 or -errno.
 */
int fi_rt_mem_fd(void);
long fi_rt_pwrite(int fd, const void *src, size_t len, const void *dst);
#define fi_rt_batch_begin	fi_rt_write_begin
#define fi_rt_batch_end		fi_rt_write_end
/*
 * Inside a window: @size bytes (page-rounded) of memory only fi_rt_put
 * writes, read-only between guard pages and sealed with the state (the
 * dlsym veneer names, foreign.c). FI_RT_REGIONS of them. NULL + errno.
 */
void *fi_rt_map_protected(size_t size);
/* The same mapping, not registered (the arena's chunks are in its table). */
void *fi_rt_map_sealed(size_t size);
/*
 * The arena's first chunk: FI_RT_ARENA0 bytes inside the state's sealed,
 * read-only block (between its lower guard and the state), which needs
 * no mapping of its own. Its base; its size in @size.
 */
#define FI_RT_ARENA0	(2 * 4096)
uint8_t *fi_rt_arena_first(size_t *size);

/*
 * The kernel's view of the mapping holding @addr (rtverify.c: one
 * PROCMAP_QUERY on the runtime's /proc/self/maps descriptor, or a read
 * of the maps file): 0, -ENOENT when nothing is mapped there, or -errno
 * when the kernel cannot be asked.
 */
struct fi_vma {
	uint64_t lo, hi;		/* [lo, hi) */
	bool r, w, x, file;		/* file: backed by a file (dev, ino) */
	uint64_t dev, ino, off;		/* off: file offset of @lo */
};
int fi_rt_vma(uint64_t addr, struct fi_vma *v);
/* The same from the runtime's kept descriptor only (never an open or a
 * read of the maps file): -ENODEV when it cannot be asked that way. */
int fi_rt_vma_kept(uint64_t addr, struct fi_vma *v);
/*
 * Text pages of a module the runtime itself copied and moved over (an
 * anonymous mapping to the kernel; the PLT pass, src/interpose/plt.c):
 * fi_rt_copy_note records, before the move, the file and offset the
 * pages [@lo, @hi) hold now (the kernel's answer, or an earlier record's
 * for a copy moved over again), in the read-only state, inside a window;
 * an overlapping record of another file is replaced, one of the same
 * file and offsets merged. 0 or -errno (-ENOSPC: the table is full; the
 * copy is then judged by the kernel's answer alone). fi_rt_copy_as_file:
 * @v, the kernel's anonymous mapping at @addr, lies inside such a record:
 * it takes the record's file, and the offset of @v->lo in it.
 * Async-signal-safe (reads the state only).
 */
int fi_rt_copy_note(uint64_t lo, uint64_t hi);
bool fi_rt_copy_as_file(uint64_t addr, struct fi_vma *v);
/*
 * The maps file (rtverify.c), read without stdio: the whole of @fd (read
 * from offset 0) in a malloc'd, NUL-terminated buffer, or NULL. Then
 * fi_vma_next parses the line at @*at into @v and @path (NUL-terminated
 * in place: "" for an anonymous mapping) and moves @*at past it; false
 * at the end. A line that does not parse (a field missing or out of
 * order, a number too large for its field) gives all of @v zero and
 * @path "": never a line half read. The one parser of maps lines
 * (rtone.c's anchor, rtcache.c's text mappings).
 */
char *fi_maps_read(int fd);
bool fi_vma_next(char **at, struct fi_vma *v, const char **path);
/*
 * A number as the maps file writes it, at @*p: hexadecimal (@base 16,
 * lower-case digits) or decimal (@base 10), and @*p moved past it. False,
 * @*p and @v untouched, when no digit is there or the number does not
 * fit in 64 bits.
 */
bool fi_maps_num(const char **p, unsigned int base, uint64_t *v);
/*
 * @len bytes of this process at @addr copied to @dst through the kernel
 * (process_vm_readv on ourselves, rtverify.c), which fails with EFAULT
 * where a load would fault: the bytes read, or -1 and errno (ENOSYS or
 * EPERM where a sandbox forbids the call). Async-signal-safe: the SIGILL
 * handler's stack slots (trap/trapmem.c) and the JIT API's probes of
 * code it was handed (jit/jit.c) both read this way.
 */
ssize_t fi_rt_read_self(void *dst, uint64_t addr, size_t len);
/*
 * Is [@lo, @hi) mapped, every byte, readable and executable when @exec,
 * and never writable? -EACCES when not, -errno when the kernel cannot be
 * asked, 0 when it is. When @file, the first mapping's file in @v.
 */
int fi_rt_vma_text(uint64_t lo, uint64_t hi, bool exec, struct fi_vma *v);

/*
 * The process mode and key: settable until fi_rt_seal(), -EPERM after.
 * fi_rt_set_active(false) is refused after the seal as well.
 */
int fi_rt_set_config(const struct fineibt_config *cfg,
		     const struct fineibt_key *key, bool have_arity);
int fi_rt_set_active(bool active);
/* The process's use of the cache: settable until fi_rt_seal(), -EPERM after. */
int fi_rt_set_cache(const struct fi_rt_cache *c);
/* Start-up is over: no setter of the mode exists from now on. */
void fi_rt_seal(void);
/* fi_rt_set_active(true) and fi_rt_seal() in one put (start-up's end). */
void fi_rt_seal_active(void);
/*
 * Test builds only (tests/lib/rtdebug.c; no-ops otherwise, never active
 * in an AT_SECURE process): park the writing thread at @where ("window",
 * "put" with the scratch it is about to write, "verify"), and pretend
 * /proc/self/mem cannot be opened.
 */
void fi_rt_park(const char *where, const void *scratch, size_t len);
bool fi_rt_hook_no_procmem(void);
/*
 * Inside a window: build and publish the coarse check's known-entry
 * table (src/rt/coarse.h) from the registered modules, JIT regions and
 * the veneer region; every change of those calls it. Laid out in
 * scratch, put in the arena, checked where it landed against the same
 * table made again from the read-only state, then published. 0 or
 * -errno (the old table stays).
 */
int fi_rt_coarse_publish(const struct fi_runtime *rt);

/*
 * src/rt/rtone.c. fi_rt_publish(): the primary records @calls (the entry
 * points of the layers above, given by load/start.c) in fi_rt()->self
 * (in start-up's last window); fi_rt_publish_anchor() then publishes the
 * anchor (once, at the end of start-up, outside any window). fi_rt_primary():
 * called by an instance before it reads anything of its configuration:
 * the process's runtime if another instance is it (verified), NULL if
 * there is none; terminates the process (fi_rt_die) when an anchor is
 * there but cannot be verified. fi_rt_defer(): record @p as the one to
 * defer to and seal this instance (inactive, no mode of its own).
 */
void fi_rt_publish(const struct fi_rt_self *calls);
void fi_rt_publish_anchor(void);
const struct fi_runtime *fi_rt_primary(void);
/* fi_rt_primary found SIGILL taken, no anchor, and runs in a dlmopen
 * namespace: read FINEIBT_CFI as in a privileged process. */
bool fi_rt_unanchored(void);
void fi_rt_defer(const struct fi_runtime *p);

/*
 * Publish @m: a deep copy of it (the module, its image, the views, site
 * arrays, symbols and their names) is made in the read-only arena and
 * registered; the handler only ever reads the copy. @m stays the caller's
 * and is the key fi_rt_del_module() recognises; its rehash key fields
 * are cleared (the copy keeps them), so no writable copy of the rehash
 * key remains. Fill m->img, text_lo/text_hi, cfg and rehash_key first. Returns 0, -EEXIST,
 * -ENOSPC, -ENOMEM.
 */
int fi_rt_add_module(struct fi_module *m);
/* The same for a JIT region, [@lo, @hi) (the caller's arguments): its
 * own FI_MAX_JIT slots. */
int fi_rt_add_jit(struct fi_module *m, uint64_t lo, uint64_t hi);
/*
 * A read-only copy of @len bytes of @src in the arena (a window of its
 * own), or NULL: for lists the caller built in scratch and checks where
 * they landed before it publishes them.
 */
const void *fi_rt_keep(const void *src, size_t len);
/* The registered copy of @key (the caller's module), or NULL. */
const struct fi_module *fi_rt_module_of(const void *key);
/*
 * Withdraw @m (the caller's module or its registered copy; dlclose). Its
 * slot reads NULL afterwards and may be reused; the copy stays in the
 * arena, since a handler running concurrently may still hold it.
 * Returns 0 or -ENOENT.
 */
int fi_rt_del_module(const struct fi_module *m);
/*
 * Withdraw the JIT region whose registered (read-only) copy's text starts
 * at @lo, the program's argument to fineibt_jit_unregister: the JIT's own
 * list of regions is heap memory, and a forged entry must not pick which
 * region goes. Its caller's module (the copy's key) in *@key. 0 or
 * -ENOENT.
 */
int fi_rt_del_jit(uint64_t lo, const void **key);

/*
 * The scans' record (struct fi_rt_seen), one window per call.
 * fi_rt_seen_add() records @e[0..@n) in free slots, in order, and returns
 * how many it could (it stops at a key of 0 or a full record).
 * fi_rt_seen_set() copies .mod, .fp and .cbits of each @e[k] to the entry
 * with its key; returns how many it found. fi_rt_seen_drop() retires entry @i
 * and withdraws its registered module in the same window: call it only
 * once the module is known to be unloaded.
 */
size_t fi_rt_seen_add(const struct fi_rt_seen *e, size_t n);
size_t fi_rt_seen_set(const struct fi_rt_seen *e, size_t n);
void fi_rt_seen_drop(size_t i);
/* Does @addr lie in recorded kCFI text? Async-signal-safe. */
bool fi_rt_rewritten_at(uint64_t addr);
/* Is @addr a kCFI check's ud2 in a module left as compiled? */
bool fi_rt_compiled_trap(uint64_t addr);
/* [@lo, @hi) overlaps a registered module's text or a rewritten range. */
bool fi_rt_range_owned(uint64_t lo, uint64_t hi);

/* Report @why on stderr and terminate (FI_RT_DIE_STATUS): async-signal-safe. */
__attribute__((noreturn)) void fi_rt_die(const char *why);

/*
 * Register a BHI stub array at run-time [@base, @base + @size): the copy in
 * libfineibt itself (always recognised, no need to add it) or a copy of
 * fi_bhi_stubs() the runtime placed within rel32 reach of a module.
 * Returns 0, -EINVAL (size not a whole array), -EEXIST, -ENOSPC.
 */
int fi_rt_add_stubs(uint64_t base, uint64_t size);
int fi_rt_del_stubs(uint64_t base);
/* Register a copy the runtime mapped itself; it is also remembered in
 * stub_copies[] for other modules within its reach. */
int fi_rt_add_stub_copy(uint64_t base, uint64_t size);

/*
 * The BHI stub array linked into libfineibt (src/seq/bhi.S): 8 slots of
 * FI_BHI_SLOT_SIZE bytes, position-independent (only rel8 jumps inside),
 * so it may be copied byte for byte anywhere executable. Returns its
 * address and stores its size in @size.
 */
const uint8_t *fi_bhi_stubs(size_t *size);

/* The page-aligned storage holding the state, and its size (pages). */
void *fi_rt_storage(size_t *size);

/*
 * The arena (src/rt/rtarena.c), inside a write window only.
 * fi_arena_alloc(): @len bytes, 16-aligned, read-only: written with
 * fi_rt_put; NULL when out of memory.
 */
void *fi_arena_alloc(const struct fi_arena *a, size_t len);
/* Do @len bytes at @p lie inside what @a has handed out? Async-signal-safe. */
bool fi_arena_owns(const struct fi_arena *a, const void *p, size_t len);
/*
 * Deep copy of @m into @a, built in scratch, written in one fi_rt_put
 * and verified in place (fi_rt_verify_module) before it is returned;
 * NULL and errno (ENOMEM, or EBADMSG when what landed is not a record
 * the runtime would have made: docs/protection.md). @jit: a JIT region,
 * whose text is [@lo, @hi) (the caller's arguments, not @m's fields).
 */
const struct fi_module *fi_arena_freeze(const struct fi_arena *a,
					const struct fi_module *m, bool jit,
					uint64_t lo, uint64_t hi);
/*
 * Verify registered copy @c (src/rt/rtverify.c): self-contained (every
 * pointer into its own bytes, or read-only memory of its module), text
 * mapped executable and never writable as the kernel sees it, no warn
 * unless the process runs in warn, @key its key; for a JIT region its
 * text is [@lo, @hi) and its path "[jit]". 0 or -EBADMSG.
 */
int fi_rt_verify_module(const struct fi_module *c, size_t len,
			const void *key, bool jit, uint64_t lo, uint64_t hi);

/*
 * Wipe the dead stack below the caller (the key passes through locals
 * of the patching code): call it from a shallow frame once done.
 */
void fi_rt_scrub_stack(void);

/* rtstate.c: the recorded module (fi_rt()->seen) whose text starts at
 * @key, or -1. */
long fi_rt_seen_find(uint64_t key);
/* rtverify.c: the executable's path (a readlink of /proc/self/exe, for
 * messages), or "" (@len includes the NUL). */
void fi_rt_exe_path(char *exe, size_t len);

#endif /* FI_RUNTIME_H */
