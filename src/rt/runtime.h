/* SPDX-License-Identifier: MIT */
/*
 * Process-wide runtime state, shared by the loader side (runtime.c: the
 * constructor, module walk, dlopen), the trap handler (trap.c) and the JIT
 * emitter (jit.c). Everything here is read-only once start-up is over,
 * except during the short, locked window in which a new module is patched.
 * The SIGILL handler only reads it and never allocates.
 */
#ifndef FI_RUNTIME_H
#define FI_RUNTIME_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "fineibt.h"
#include "image.h"

#define FI_MAX_MODULES	256
/* JIT regions (jit.c) have slots of their own: they never crowd out modules. */
#define FI_MAX_JIT	256
#define FI_MAX_SLOTS	(FI_MAX_MODULES + FI_MAX_JIT)
/* Modules the start-up and dlopen scans keep track of (runtime.c). */
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
};

/*
 * A spread-out sample of at most FI_FP_SITES sites of @im (its calls and
 * preambles) into @out: link-time addresses of the 16-byte site (call
 * site, or preamble at func - 16), FI_FP_CALL set for a call site.
 */
#define FI_FP_SITES	256
#define FI_FP_CALL	(1ull << 63)
size_t fi_fp_sample(const struct fi_image *im, uint64_t *out);

/* A registered module's preamble count, and the entry (link-time) of the @i-th. */
size_t fi_module_nfuncs(const struct fi_module *m);
uint64_t fi_module_func(const struct fi_module *m, size_t i);
/* The arity recorded for the function at link-time @func, or -1. */
int fi_module_arity(const struct fi_module *m, uint64_t func);

/*
 * The arena (src/rt/rtarena.c): mmap'd chunks holding the registered modules
 * (struct fi_module, its image and every array and string the trap
 * handler reads through it). Read-only but inside a write window.
 */
#define FI_ARENA_CHUNKS	64
struct fi_arena_chunk {
	uint8_t *base;
	size_t size, used;
	bool open;			/* made writable by the current window */
	uint32_t open_pg;		/* from this page on (the rest stays read-only) */
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
};

/*
 * The scans' record of a module (runtime.c), kept in the read-only state:
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
 * foreign.c's veneer and stub-page bookkeeping (docs/compat.md): it
 * decides which targets the SIGILL handler accepts as veneers and where
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
};

/*
 * A module found by dl_iterate_phdr, not looked at yet (runtime.c). Also
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
 * Laid out for cheap write windows (rtstate.c, docs/protection.md): a
 * window makes only the pages it writes read-write, and on this kind of
 * machine changing a page's protection costs per page that is present.
 *
 * Page 0, the sealed page: what start-up settles (mode, key, flags) and
 * every code pointer the runtime calls through. Windows open it only
 * until the state is sealed; after that only the rare writers of its
 * fields open it (fi_rt_write_open: the program's SIGILL handler, the
 * print hook, libc's dlopen if resolved late), so that a write racing
 * an ordinary window (a dlopen, a dlsym veneer, a site opened by the
 * handler) cannot reach them (docs/protection.md, "The sealed page").
 * Then, from page 1, what windows after start-up write: the small
 * fields every window opens, the record (its first entries share that
 * page), the tables.
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
	struct fi_rt_cache cache;
	/* ---- page 1: what every window opens ---- */
	/* Written by fi_rt_write_open: faults outside a real window. */
	bool wprobe __attribute__((aligned(4096)));
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
	/* ---- opened page by page, as written (fi_rt_write_open) ---- */
	struct fi_rt_seen seen[FI_MAX_SEEN];
	/* Frozen copies, in the arena; each one's .key is the caller's module. */
	struct fi_module *mods[FI_MAX_SLOTS] __attribute__((aligned(4096)));
	/* BHI stub arrays in use (one near each module that needs one). */
	uint64_t stubs[FI_MAX_MODULES];
	uint64_t stub_size[FI_MAX_MODULES];	/* [stubs[i], stubs[i] + stub_size[i]) */
	/* The copies of the stubs the runtime mapped itself (rtlive.c). */
	uint64_t stub_copies[FI_MAX_MODULES];
};

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
 * Registration (src/rt/rtstate.c). The state lives in its own page-aligned,
 * page-sized storage (fi_rt_storage()) that is read-only except inside a
 * write window (docs/protection.md): fi_rt_write_begin() blocks every
 * signal in the calling thread, takes the one writer spin lock and makes
 * the storage's first fields writable (the tables: fi_rt_write_open);
 * fi_rt_write_end() makes all of it (and the arena chunks written)
 * read-only again, drops the lock and restores the mask. Both are
 * async-signal-safe (the SIGILL handler uses them for SA_RESETHAND). They
 * nest within one thread (the inner pair does nothing). Readers (fi_rt_module_at, fi_rt_bhi_base, the handler) take
 * no lock: a slot is filled before the count that publishes it is
 * release-stored. Every function below opens its own window.
 */
struct fi_runtime *fi_rt_write_begin(sigset_t *saved);
void fi_rt_write_end(const sigset_t *saved);
/*
 * Inside a window: make [@p, @p + @len) of the state writable too. A
 * window opens only the state's first fields (those before seen[]); the
 * tables after them are opened page by page as written (rtstate.c does
 * it for every table it writes). 0, or -errno (nothing was opened).
 */
int fi_rt_write_open(const void *p, size_t len);
/*
 * Inside a window: open the sealed page too (page 0: mode, key, flags,
 * the SIGILL record, every code pointer the runtime calls through),
 * which windows after the seal leave closed. Every writer of those
 * fields calls it first (after the seal, a write without it faults).
 * 0, or -errno (nothing was opened: do not write).
 */
int fi_rt_write_open_sealed(void);
/*
 * A window around several calls that each open their own: inside it they
 * nest (no mprotect, no lock, no mask change of their own), so start-up's
 * short consecutive updates cost one window. Only around quick work:
 * never around patching, which must run with the state read-only.
 */
#define fi_rt_batch_begin	fi_rt_write_begin
#define fi_rt_batch_end		fi_rt_write_end

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

/*
 * src/rt/rtone.c. fi_rt_publish(): the primary records @calls (the entry
 * points of the layers above, given by load/runtime.c) in fi_rt()->self
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
/* The same for a JIT region: its own FI_MAX_JIT slots. */
int fi_rt_add_jit(struct fi_module *m);
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
 * The scans' record (struct fi_rt_seen), one window per call.
 * fi_rt_seen_add() records @e[0..@n) in free slots, in order, and returns
 * how many it could (it stops at a key of 0 or a full record).
 * fi_rt_seen_set() copies .mod and .fp of each @e[k] to the entry with
 * its key; returns how many it found. fi_rt_seen_drop() retires entry @i
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
 * The arena (src/rt/rtarena.c): @len bytes, 16-aligned, inside a write window
 * only; NULL when out of memory. fi_arena_close() makes every chunk the
 * window wrote read-only again (fi_rt_write_end calls it).
 */
void *fi_arena_alloc(struct fi_arena *a, size_t len);
int fi_arena_close(struct fi_arena *a);
/* Do @len bytes at @p lie inside what @a has handed out? Async-signal-safe. */
bool fi_arena_owns(const struct fi_arena *a, const void *p, size_t len);
/* Deep copy of @m into @a (inside a window), or NULL. */
struct fi_module *fi_arena_freeze(struct fi_arena *a, const struct fi_module *m);

/*
 * Wipe the dead stack below the caller (the key passes through locals
 * of the patching code): call it from a shallow frame once done.
 */
void fi_rt_scrub_stack(void);

/*
 * Start the runtime from the loader's relocation of libfineibt.so, before
 * any constructor runs (src/load/rtearly.c): every module is mapped, not all
 * are relocated yet.
 */
void fi_rt_start_early(void);

/*
 * Did the early check (src/load/rtearly.c, libfineibt.so only) sample module
 * @f and find no kCFI, with @subs modules unloaded so far as then? For the
 * first scan only: fi_early_forget() ends it once start-up is over.
 */
bool fi_early_said_plain(const struct fi_rt_found *f, unsigned long long subs)
	__attribute__((weak));
void fi_early_forget(void) __attribute__((weak));

#endif /* FI_RUNTIME_H */
