/* SPDX-License-Identifier: MIT */
/*
 * A decoded CFI trap: what the decoder (trap.c) finds at a #UD, and what
 * the report (report.c) and the veneer side (foreign.c) are given. Apart
 * from trap.h so that those two need not include the handler's header,
 * which includes theirs.
 */
#ifndef FI_TRAPINFO_H
#define FI_TRAPINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

enum fi_trap_kind {
	FI_TRAP_NONE = 0,	/* not a CFI trap: the program's business */
	FI_TRAP_KCFI,		/* ud2 of a kCFI call site (.kcfi_traps) */
	FI_TRAP_PREAMBLE,	/* 0xEA inside a FineIBT preamble */
	FI_TRAP_PARANOID,	/* LOCK Jcc.d8 at offset 0xd of a paranoid caller */
	FI_TRAP_BHI,		/* ud2 inside a BHI stub array */
	FI_TRAP_COARSE,		/* ud2 of a thunk's coarse check (coarse.S) */
};

/* The registers the decoder needs (run-time values at the #UD). */
struct fi_trap_regs {
	uint64_t ip, sp, r10, r11;
	/*
	 * Every general register by x86 number (0 = rax .. 15 = r15): a
	 * stock kCFI site checks and calls through any of them.
	 */
	uint64_t gpr[16];
};

struct fi_trap {
	enum fi_trap_kind kind;
	uint64_t addr;		/* the trapping instruction (ip) */
	uint64_t target;	/* the function the call was going to */
	uint32_t type;		/* the type hash the caller expected */
	uint64_t resume;	/* where cfi=warn continues */
	uint64_t stubs;		/* FI_TRAP_BHI: base of the stub array */
	/* The module whose sequence trapped (its cfg gives mode and warn). */
	const struct fi_module *mod;
	bool warn;
	/*
	 * FI_TRAP_PARANOID at a FineIBT callee: cfi=warn resumes with r10 =
	 * the callee's hash, so that its own preamble check passes and one
	 * violation gives one report (the kernel prints two).
	 */
	bool set_r10;
	uint32_t resume_r10;
	/*
	 * FI_TRAP_COARSE: the return address on the stack, and whether it
	 * follows the call through the thunk (then @addr is that call; a
	 * tail jump leaves none: @addr is 0 and @ret is its caller's).
	 */
	uint64_t ret;
	bool site_known;
};

#endif /* FI_TRAPINFO_H */
