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

#endif /* FI_RUNTIME_H */
