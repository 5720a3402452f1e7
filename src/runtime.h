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

#include <stdbool.h>
#include <stdint.h>

#include "fineibt.h"
#include "image.h"

#define FI_MAX_MODULES	256

struct fi_module {
	struct fi_image img;		/* link-time view + sites */
	uint64_t text_lo, text_hi;	/* run-time range of its executable views */
	uint64_t bhi_args;		/* run-time BHI stub array its preambles call, 0 if none */
	bool patched;			/* by the runtime, or statically (note) */
	struct fineibt_config cfg;	/* the mode its sequences are in */
	uint32_t seed;			/* valid when cfg.flags & FINEIBT_F_RAND */
};

struct fi_runtime {
	bool active;			/* constructor ran and installed the handler */
	bool have_arity;		/* some module carries kCFI arity */
	struct fineibt_config cfg;	/* resolved process mode */
	uint32_t seed;
	size_t nmods;
	struct fi_module *mods[FI_MAX_MODULES];
	/* BHI stub arrays in use (one near each module that needs one). */
	size_t nstubs;
	uint64_t stubs[FI_MAX_MODULES];
	uint64_t stub_size[FI_MAX_MODULES];	/* [stubs[i], stubs[i] + stub_size[i]) */
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
 * Registration (src/rtstate.c). The state lives in its own page-aligned,
 * page-sized storage (fi_rt_storage()) so that a later step can mprotect it
 * read-only once start-up is over. Writers serialise on one mutex; readers
 * (fi_rt_module_at, fi_rt_bhi_base, the SIGILL handler) take no lock: a
 * slot is filled before the count that publishes it is release-stored.
 * These are not async-signal-safe (mutex): call them from normal context.
 */
void fi_rt_set_config(const struct fineibt_config *cfg, uint32_t seed,
		      bool have_arity);
void fi_rt_set_active(bool active);

/*
 * Publish @m (which must stay valid and unchanged while registered: the
 * trap handler may read it at any time, from any thread). Fill m->img,
 * text_lo/text_hi, cfg and seed first. Returns 0, -EEXIST, -ENOSPC.
 */
int fi_rt_add_module(struct fi_module *m);
/*
 * Withdraw @m (dlclose). Its slot reads NULL afterwards and may be reused;
 * a handler running concurrently may still hold @m, so the caller should
 * not free it (leak it, or free it only once no thread can be trapping).
 * Returns 0 or -ENOENT.
 */
int fi_rt_del_module(const struct fi_module *m);

/*
 * Register a BHI stub array at run-time [@base, @base + @size): the copy in
 * libfineibt itself (always recognised, no need to add it) or a copy of
 * fi_bhi_stubs() the runtime placed within rel32 reach of a module.
 * Returns 0, -EINVAL (size not a whole array), -EEXIST, -ENOSPC.
 */
int fi_rt_add_stubs(uint64_t base, uint64_t size);
int fi_rt_del_stubs(uint64_t base);

/*
 * The BHI stub array linked into libfineibt (src/bhi.S): 8 slots of
 * FI_BHI_SLOT_SIZE bytes, position-independent (only rel8 jumps inside),
 * so it may be copied byte for byte anywhere executable. Returns its
 * address and stores its size in @size.
 */
const uint8_t *fi_bhi_stubs(size_t *size);

/* The page-aligned storage holding the state, and its size (pages). */
void *fi_rt_storage(size_t *size);

#endif /* FI_RUNTIME_H */
