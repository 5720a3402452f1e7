/* SPDX-License-Identifier: MIT */
#ifndef FI_CTOR_H
#define FI_CTOR_H

/*
 * The runtime's constructors, in the order they run (lowest first;
 * docs/architecture.md, "Constructors: the order of start-up"). Explicit,
 * so that the order does not follow the link order of the files.
 *
 * Below 101, the range C reserves for the implementation: in a
 * -static-fineibt executable the runtime's constructors share the
 * executable's .init_array with the program's, sorted by priority, and a
 * program's constructor of the highest priority it may ask for (101)
 * must find the runtime's set up (FINEIBT_LOG open, the fork handlers
 * registered, the PLT's direct entries made). After the crt hook's 0
 * (crt/hook.c) and AddressSanitizer's module constructors (1, in a SAN=1
 * build of the runtime itself). clang-22 takes these for the constructor
 * attribute without a warning (its -Winit-priority-reserved is C++'s
 * init_priority only).
 */
#define FI_CTOR_REPORT	10	/* trap/report.c: open FINEIBT_LOG's file */
#define FI_CTOR_RTWRITE	20	/* rt/rtwrite.c: the state lock's fork handlers;
				 * the state's first pages populated, before
				 * any constructor reads them */
#define FI_CTOR_DLHOOK	30	/* interpose/dlhook.c: libc's dlopen after an
				 * early start */
#define FI_CTOR_FOREIGN	40	/* trap/foreign.c: the veneer lock's fork
				 * handlers, after rtwrite's (so taken before
				 * its lock at fork) */
#define FI_CTOR_RUNTIME	50	/* load/start.c: fineibt_rt_hook, what waited
				 * for every module to be relocated, the PLT */
#define FI_CTOR_TRAP	60	/* trap/trap.c: libc's sigaction & co., if the
				 * runtime's start has not resolved them (after
				 * it: no window of its own) */

#endif /* FI_CTOR_H */
