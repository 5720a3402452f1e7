/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL side (docs/traps.md; seeds 002, 004, 006, 007, 009).
 *
 * Every CFI failure is a #UD, so a SIGILL. The handler decides from the
 * faulting ip whether one of our sequences trapped:
 *
 *   ud2 at a .kcfi_traps site		kcfi: type = -imm of the movl at ip-12,
 *					target = r11
 *   0xEA in a FineIBT preamble		type = r10 + hash at preamble+7,
 *					target = preamble+16
 *   LOCK Jcc.d8 at caller+0xd		paranoid: type = r10, target = r11+16
 *   ud2 in a BHI stub array		type = r10 + hash, target = (%rsp)
 *
 * and reports it with one write(2) (the text: reportline.c, report.c).
 * Fatal (default): the process dies of
 * SIGILL from inside the handler (fi_trap_die), never returning through
 * the writable signal frame. cfi=warn: continue as the kernel does.
 * Anything else belongs to the program: chain to its handler.
 *
 * Nothing here allocates, locks (in the handler) or uses stdio. Memory is
 * read only where it is known to be mapped (trapmem.c): the executable
 * views of a registered module, a registered stub array, and the one
 * stack slot the BHI case needs (read with process_vm_readv, which fails
 * cleanly).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "ctor.h"
#include "coarsetrap.h"
#include "upcall.h"
#include "insn.h"
#include "livedyn.h"
#include "rawsys.h"
#include "print.h"
#include "repeat.h"
#include "report.h"
#include "trap.h"
#include "trapmem.h"
#include "variant.h"

/* ------------------------------------------------------------- decoders */

/*
 * The call site at run-time @site as the CPU ran it, into @out: its
 * live bytes, with the movl of an opened site (its first five bytes jump
 * to a stub, foreign.c) taken from the stub. Another thread may open the
 * site while this one decodes a trap the site's old bytes raised: the
 * bytes are read once here and every test looks at this copy; a copy
 * that a publication tore (one mremap replaces the page, but a copy is
 * several loads) fails the caller's test, which reads again (at most
 * once more: a site is opened once).
 */
static bool fi_site_snapshot(uint64_t site, uint8_t out[FI_CALLSITE_SIZE])
{
	const uint8_t *p = fi_trap_text(site, FI_CALLSITE_SIZE, NULL);
	const uint8_t *head;

	if (!p)
		return false;
	__builtin_memcpy(out, p, FI_CALLSITE_SIZE);
	head = fi_foreign_site_head(out, site);
	if (head)
		__builtin_memcpy(out, head, FI_CALLER_MOVL_SIZE);
	return true;
}

/*
 * A stock kCFI site's ud2 at @ud (docs/compat.md, "Stock kCFI modules"):
 * the hash from its movl, the target from the register it loads.
 */
static bool fi_decode_stock(const struct fi_trap_regs *r, uint64_t ud,
			    const struct fi_module *m, struct fi_trap *t)
{
	const size_t before = FI_KCFI_CALLER_UD + 1;
	size_t after = 5;	/* ud2 + the longest call; 4 at the text's end */
	const uint8_t *p;
	struct fi_stock_site s;

	if (!m->stock || ud < before)
		return false;
	p = fi_trap_text(ud - before, before + after, NULL);
	if (!p)
		p = fi_trap_text(ud - before, before + --after, NULL);
	if (!p || !fi_match_stock_site(p + before, before, after, &s))
		return false;
	t->type = s.hash;
	t->target = r->gpr[s.reg];
	t->addr = ud;
	t->resume = ud + 2;		/* the call proceeds */
	t->mod = m;
	return true;
}

/*
 * @ud is the .kcfi_traps address: the ud2 (ip), or with v6.18's
 * "jne .+3; test $0xd6, %al" the test one byte before the UDB (ip - 1).
 */
static bool fi_decode_kcfi(const struct fi_trap_regs *r, uint64_t ud,
			   const struct fi_module *m, struct fi_trap *t)
{
	uint64_t site = ud - FI_KCFI_CALLER_UD;
	uint8_t p[FI_CALLSITE_SIZE];

	if (!fi_image_is_trap(&m->img, ud - m->img.bias))
		return false;
	if (fi_decode_stock(r, ud, m, t))
		return true;
	/* 0 if the movl is not there (cannot happen for a compiled site). */
	t->type = 0;
	for (int i = 0; i < 2 && !t->type; i++) {
		if (fi_site_snapshot(site, p))
			t->type = fi_decode_caller_hash(p);
	}
	t->target = r->r11;
	t->addr = ud;
	t->resume = site + FI_KCFI_CALLER_CALL;	/* the call proceeds */
	t->mod = m;
	return true;
}

/* A FineIBT-family preamble (any tail) at run-time @pre: its hash. */
static bool fi_trap_preamble(uint64_t pre, const struct fi_module **mp,
			     struct fi_preamble_info *info)
{
	const uint8_t *p = fi_trap_text(pre, FI_PREAMBLE_SIZE + 4, mp);

	if (!p || !fi_exact_endbr(p))
		return false;
	switch (fi_classify_preamble(p, pre, info)) {
	case FI_PRE_FINEIBT:
	case FI_PRE_FINEIBT_BHI:
	case FI_PRE_FINEIBT_ARITY1:
		return true;
	default:
		return false;
	}
}

/* @ud: where the set's preamble traps (the EA byte, or v6.18's UDB). */
static bool fi_decode_preamble(const struct fi_trap_regs *r, int ud,
			       struct fi_trap *t)
{
	uint64_t pre = r->ip - (uint64_t)ud;
	struct fi_preamble_info info;

	if (!fi_trap_preamble(pre, &t->mod, &info))
		return false;
	/* subl left r10 = caller's hash - ours. */
	t->type = (uint32_t)r->r10 + info.hash;
	t->target = pre + FI_PREAMBLE_SIZE;
	t->resume = t->target;
	return true;
}

/*
 * The call a paranoid caller refused goes on under cfi=warn into the
 * callee's preamble, which checks r10 again: with the hash it compares
 * (the word the caller's cmpl read) the second check passes, so one
 * violation is reported once. Only for a FineIBT preamble we recognise.
 */
static void fi_paranoid_resume_hash(struct fi_trap *t)
{
	struct fi_preamble_info info;
	const struct fi_module *m;

	if (!fi_trap_preamble(t->target - FI_PREAMBLE_SIZE, &m, &info))
		return;
	t->set_r10 = true;
	t->resume_r10 = info.hash;
}

static bool fi_decode_paranoid(const struct fi_trap_regs *r,
			       const struct fi_module *m, int len,
			       struct fi_trap *t)
{
	uint64_t site = r->ip - FI_PARANOID_UD;
	uint8_t p[FI_CALLSITE_SIZE];
	bool ok = false;

	/* The site's ud2 slot is still what .kcfi_traps lists. */
	if (!fi_image_is_trap(&m->img, site + FI_KCFI_CALLER_UD - m->img.bias))
		return false;
	for (int i = 0; i < 2 && !ok; i++) {
		ok = fi_site_snapshot(site, p) &&
		     fi_classify_caller(p, site, NULL) == FI_CALL_PARANOID;
	}
	if (!ok)
		return false;
	t->type = (uint32_t)r->r10;
	t->target = r->r11 + FI_PREAMBLE_SIZE;	/* the lea already moved r11 */
	t->resume = r->ip + (uint64_t)len;	/* on to the call */
	t->mod = m;
	fi_paranoid_resume_hash(t);
	return true;
}

static bool fi_decode_bhi(const struct fi_trap_regs *r, uint64_t base,
			  struct fi_trap *t)
{
	struct fi_preamble_info info;
	size_t size;
	uint64_t ret;

	/* The preamble's call ends at func+0: the return address is the target. */
	if (!fi_trap_read_pushed(r->sp, &ret))
		return false;
	if (!fi_trap_preamble(ret - FI_PREAMBLE_SIZE, &t->mod, &info))
		return false;
	fi_bhi_stubs(&size);
	if (info.form != FI_PRE_FINEIBT_BHI || info.bhi_target < base ||
	    info.bhi_target - base >= size)
		return false;
	t->type = (uint32_t)r->r10 + info.hash;
	t->target = ret;
	t->resume = r->ip + 2;		/* the ret after the ud2 */
	t->stubs = base;
	return true;
}

bool fi_trap_decode(const struct fi_trap_regs *r, struct fi_trap *t)
{
	const struct fi_module *m = NULL;
	uint64_t base = fi_rt_bhi_base(r->ip);
	const uint8_t *p = NULL;
	size_t avail = 0;
	bool ok = false;
	int len;

	*t = (struct fi_trap){ .kind = FI_TRAP_NONE, .addr = r->ip };
	if (fi_coarse_decode(r, t))
		return true;
	if (base) {
		fi_bhi_stubs(&avail);
		avail -= r->ip - base;
		p = (const uint8_t *)(uintptr_t)r->ip;
	} else if ((m = fi_rt_module_at(r->ip))) {
		avail = fi_trap_span(m, r->ip);
		p = avail ? (const uint8_t *)(uintptr_t)r->ip : NULL;
	}
	if (!p)
		return false;

	switch (fi_decode_ud(p, avail, &len)) {
	case FI_UD_UD2:
		if (base && (ok = fi_decode_bhi(r, base, t)))
			t->kind = FI_TRAP_BHI;
		else if (m && (ok = fi_decode_kcfi(r, r->ip, m, t)))
			t->kind = FI_TRAP_KCFI;
		break;
	case FI_UD_EA:
		if (m && (ok = fi_decode_preamble(r, FI_FINEIBT_PREAMBLE_UD, t)))
			t->kind = FI_TRAP_PREAMBLE;
		break;
	case FI_UD_UDB:
		/* v6.18: func+3 of a preamble, or a kCFI caller's test. */
		if (m && (ok = fi_decode_preamble(r, FI_V618_PREAMBLE_UD, t)))
			t->kind = FI_TRAP_PREAMBLE;
		else if (m && (ok = fi_decode_kcfi(r, r->ip - 1, m, t)))
			t->kind = FI_TRAP_KCFI;
		break;
	case FI_UD_LOCK_JCC:
		if (m && (ok = fi_decode_paranoid(r, m, len, t)))
			t->kind = FI_TRAP_PARANOID;
		break;
	default:
		break;
	}
	if (!ok) {
		*t = (struct fi_trap){ .kind = FI_TRAP_NONE, .addr = r->ip };
		return false;
	}
	t->warn = !!(t->mod->cfg.flags & FINEIBT_F_WARN);
	return true;
}

/* ----------------------------------------------- the report's stack */

/*
 * The bytes of the alternate signal stack below @sp, where the kernel's
 * frame ends (the handler's ucontext is at its low end); SIZE_MAX when
 * the handler runs on the thread's own stack (a guard page ends that
 * one: an overrun faults, it clobbers nothing). An
 * alternate stack smaller than the kernel's frame may leave @sp just
 * below it: no room at all.
 */
static size_t fi_trap_stack_room(uint64_t sp)
{
	uint64_t lo;
	stack_t ss;

	/* Raw, as the report's other system calls: no interposer runs here. */
	if (fi_sys3(SYS_sigaltstack, 0, (long)&ss, 0) || (ss.ss_flags & SS_DISABLE))
		return SIZE_MAX;
	lo = (uint64_t)(uintptr_t)ss.ss_sp;
	if (sp > lo && sp - lo <= ss.ss_size)
		return sp - lo;
	return sp <= lo && lo - sp < 64 * 1024 ? 0 : SIZE_MAX;
}

/*
 * Report trap @t (@sp: the stack pointer at the trap) within the stack
 * the handler has (docs/traps.md "Stack use"): a program may give its
 * signals a small alternate stack (8 KiB, MINSIGSTKSZ-era code), from
 * which the kernel's frame already took up to 3.4 KiB (AVX-512), and
 * memory below it is the program's. The text is reportline.c's.
 */
static void fi_trap_report(const struct fi_trap *t, uint64_t sp, size_t room)
{
	if (room >= FI_TRAP_STACK_FULL)
		fi_report_full(t, sp);
	else if (room >= FI_TRAP_STACK_LINE)
		fi_report_bare(t);
	else
		fi_report_tiny();
}

/* ------------------------------------------- the program's SIGILL handler */

/*
 * While installed, the kernel always holds fineibt's handler; what the
 * program asked for through sigaction()/signal() is recorded in the
 * runtime state (fi_rt()->sig), read-only like the rest of it: a write
 * that replaced the record would pick what a CFI trap chains to. It is
 * written only inside the state's write window (rtstate.c: all signals
 * blocked, one spin lock, mprotect RW then R), so a handler can never
 * interrupt its own thread's writer, and behind a sequence counter so
 * that the handler (which may not lock) reads a consistent copy. libc's
 * entry points live there too: they are called without any CFI check.
 */
typedef int (*fi_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

#define FI_SIG()	(&fi_rt()->sig)

/* Resolved at load time: dlsym is not async-signal-safe. */
__attribute__((constructor(FI_CTOR_TRAP))) static void fi_trap_resolve(void)
{
	void *sa, *sig[5];
	const struct fi_runtime *rt;
	sigset_t saved;

	if (__atomic_load_n(&FI_SIG()->real_sigaction, __ATOMIC_ACQUIRE))
		return;
	/* Asked now, while the loader's tables are the loader's. */
	sig[0] = fi_variant.next_libc("signal");
	sig[1] = fi_variant.next_libc("sysv_signal");
	sig[2] = fi_variant.next_libc("sigset");
	sig[3] = fi_variant.next_libc("sigignore");
	/*
	 * sigvec is a compat symbol only (glibc 2.21 on: sigvec@GLIBC_2.2.5,
	 * no default version): the lookup without a version finds nothing
	 * and libc's dlsym would fail, allocating its error message from
	 * libc's malloc, during the early start too (src/load/alloc.c: the
	 * program's heap would leave the brk heap). The version's own
	 * definition, from the modules' tables, never from dlvsym.
	 */
	sig[4] = fi_livedyn_next_ver("sigvec", "GLIBC_2.2.5");
	sa = fi_variant.next_libc("sigaction");
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return;
	/* sigaction last: it says the others are there. */
	_Static_assert(offsetof(struct fi_rt_sig, real_sigvec) ==
		       offsetof(struct fi_rt_sig, real_signal) + 4 * sizeof(void *),
		       "signal, sysv_signal, sigset, sigignore, sigvec side by "
		       "side: one put");
	if (!fi_rt_put(&rt->sig.real_signal, sig, sizeof(sig)))
		FI_RT_PUT(rt->sig.real_sigaction, sa);
	fi_rt_write_end(&saved);
}

/*
 * A fully static program has no libc "after" us (RTLD_NEXT finds
 * nothing): the system call, with a restorer of our own as glibc's
 * (rt_sigreturn; the bytes debuggers recognise as a signal trampoline).
 */
void fi_trap_restore_rt(void);
__asm__(".text\n.p2align 4\n.type fi_trap_restore_rt,@function\n"
	"fi_trap_restore_rt:\n\tmovq $15, %rax\n\tsyscall\n"
	".size fi_trap_restore_rt, .-fi_trap_restore_rt\n");

#define FI_SA_RESTORER	0x04000000

static int fi_raw_sigaction(int sig, const struct sigaction *act,
			    struct sigaction *old)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; }
		k = { 0 }, ko = { 0 };
	long ret;

	if (act) {
		k.handler = (void *)act->sa_handler;
		k.flags = (unsigned long)act->sa_flags | FI_SA_RESTORER;
		k.restorer = (void *)fi_trap_restore_rt;
		__builtin_memcpy(&k.mask, &act->sa_mask, sizeof(k.mask));
	}
	ret = fi_sys6(SYS_rt_sigaction, sig, act ? (long)&k : 0,
		      old ? (long)&ko : 0, sizeof(k.mask), 0, 0);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	if (old) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = (sighandler_t)ko.handler;
		old->sa_flags = (int)ko.flags;
		old->sa_restorer = (void (*)(void))ko.restorer;
		__builtin_memcpy(&old->sa_mask, &ko.mask, sizeof(ko.mask));
	}
	return 0;
}

int fi_trap_sys_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	fi_sigaction_fn f = (fi_sigaction_fn)__atomic_load_n(
		&FI_SIG()->real_sigaction, __ATOMIC_ACQUIRE);

	/* Fully static, or called before our constructor (and possibly
	 * inside a write window: no lookup from here). */
	if (!f)
		return fi_raw_sigaction(sig, act, old);
	return f(sig, act, old);
}

fi_signal_fn fi_trap_real_signal(bool sysv)
{
	void *const *p = sysv ? &FI_SIG()->real_sysv_signal : &FI_SIG()->real_signal;

	return (fi_signal_fn)__atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Lock-free, for the handler. */
static void fi_user_get(struct sigaction *act)
{
	const struct fi_rt_sig *s = FI_SIG();
	unsigned int s1, s2;

	for (;;) {
		s1 = __atomic_load_n(&s->user_seq, __ATOMIC_ACQUIRE);
		if (!(s1 & 1)) {
			__builtin_memcpy(act, &s->user_act, sizeof(*act));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			s2 = __atomic_load_n(&s->user_seq, __ATOMIC_RELAXED);
			if (s1 == s2)
				return;
		}
		sched_yield();
	}
}

bool fi_trap_installed(void)
{
	return __atomic_load_n(&FI_SIG()->installed, __ATOMIC_ACQUIRE);
}

/* --------------------------------------------------------- the handler */

/* A raw system call: no libc wrapper (nor its return address) in between. */
static long fi_trap_sys(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * A fatal CFI trap ends here, inside the handler: never by returning to
 * the faulting instruction, because the signal frame holding the saved
 * registers is ordinary writable stack and another thread could point its
 * ip elsewhere before sigreturn loads it. SIGILL goes back to SIG_DFL and
 * is unblocked, the thread sends it to itself (the process dies of SIGILL
 * and dumps core as before, status 132, the core's registers those of
 * this frame); should anything have replaced the disposition in between
 * (a raw rt_sigaction from another thread), exit_group(128 + SIGILL).
 */
static __attribute__((noreturn)) void fi_trap_die(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; }
		ksa = { .handler = NULL };
	uint64_t ill = 1ULL << (SIGILL - 1);

	for (;;) {
		fi_trap_sys(SYS_rt_sigaction, SIGILL, (long)&ksa, 0, sizeof(ksa.mask));
		fi_trap_sys(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&ill, 0, sizeof(ill));
		fi_trap_sys(SYS_tgkill, fi_trap_sys(SYS_getpid, 0, 0, 0, 0),
			    fi_trap_sys(SYS_gettid, 0, 0, 0, 0), SIGILL, 0);
		fi_trap_sys(SYS_exit_group, 128 + SIGILL, 0, 0, 0);
	}
}

/*
 * Not ours: do what the kernel would have done with the program's handler.
 * Not inlined, so that its frame is not the handler's on the other paths.
 */
static __attribute__((noinline)) void fi_trap_chain(int sig, siginfo_t *si,
						    ucontext_t *uc)
{
	struct sigaction pa;
	sigset_t mask;

	fi_user_get(&pa);
	if (pa.sa_handler == SIG_IGN && si->si_code <= 0)
		return;
	/*
	 * A faulting SIGILL cannot be ignored: the kernel forces SIG_DFL.
	 * Die from here too (a fault at an ip that is no trap of ours would
	 * die on re-execution; returning would only let a rewritten frame
	 * resume somewhere else).
	 */
	if (pa.sa_handler == SIG_DFL || pa.sa_handler == SIG_IGN)
		fi_trap_die();
	if (pa.sa_flags & SA_RESETHAND) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		const struct fi_runtime *rt;
		sigset_t saved;

		rt = fi_rt_write_begin(&saved);
		if (rt) {
			fi_trap_user_set(&rt->sig, &dfl);
			fi_rt_write_end(&saved);
		}
	}
	/* Its mask while it runs; sigreturn restores uc_sigmask after. */
	mask = pa.sa_mask;
	if (!(pa.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (pa.sa_flags & SA_SIGINFO)
		pa.sa_sigaction(sig, si, uc);
	else
		pa.sa_handler(sig);
}

/*
 * A #UD in code the runtime rewrote or kept in kCFI form (the read-only
 * record, runtime.h) that no registered module covers: its module could
 * not be registered, or its entry is gone. Nothing can tell a CFI trap
 * there from another, so it is never the program's to handle: fatal.
 * (In a registered module, the copy's trap table and sequences decide.)
 */
static bool fi_trap_unexplained(const struct fi_trap_regs *r)
{
	uint64_t ret;

	if (fi_rt_rewritten_at(r->ip) && !fi_rt_module_at(r->ip))
		return true;
	/*
	 * The ud2 of a BHI stub called by such a module's preamble (its
	 * return address is func+0, right after the preamble): every
	 * arity in v6.18, arity >= 2 in v4. Without this the program's
	 * handler got it as a plain ud2.
	 */
	return fi_rt_bhi_base(r->ip) && fi_trap_read_pushed(r->sp, &ret) &&
	       fi_rt_rewritten_at(ret - 1) && !fi_rt_module_at(ret - 1);
}

/*
 * A check of a module left as compiled (built with -fsanitize=kcfi alone:
 * no patchable entries, so not rewritten nor registered, start.c): its
 * .kcfi_traps says this ud2 is a CFI check, which is never the program's
 * to handle (its handler could step over it and make the call). Told in
 * one line with the address only (its sequences are not decoded);
 * continues past the ud2, into the call, in warn or off, as the compiled
 * check does there.
 */
static bool fi_trap_compiled(uint64_t ip, greg_t *g)
{
	const struct fineibt_config *c = &fi_rt()->cfg;
	bool go_on = (c->flags & FINEIBT_F_WARN) ||
		     c->mode == FINEIBT_MODE_OFF;
	uint64_t n;

	if (!fi_rt_compiled_trap(ip))
		return false;
	if (c->mode != FINEIBT_MODE_OFF) {
		/* Its target is not decoded: the site alone names the pair
		 * (the line names nothing else). Counted under warn. */
		n = (c->flags & FINEIBT_F_WARN) ? fi_repeat_seen(ip, 0, 0) : 1;
		if (!n)
			n = fi_repeat_add(ip, 0, 0);
		if (n == 1)
			fi_report_compiled(ip, go_on);
		else if (fi_repeat_due(n))
			fi_report_compiled_repeat(ip, n);
	}
	if (!go_on)
		fi_trap_die();
	g[REG_RIP] = (greg_t)(ip + 2);
	return true;
}

/*
 * Threads inside a report, by tid. Its system calls are raw, but the
 * report still calls into libc (dladdr, string functions): a program that
 * interposes one of them with code that itself fails a CFI check would
 * trap again inside the report and, SIGILL being deliverable there
 * (SA_NODEFER), recurse until the stack ran out. The inner trap is told
 * in one line of hex instead, without the report path; fatal or warn as
 * any other. A forged entry only shortens a report, never lets a call
 * through.
 */
#define FI_TRAP_REPORTERS 64
static int fi_trap_reporting[FI_TRAP_REPORTERS];

/* This thread's slot; -1 if it is reporting already; FI_TRAP_REPORTERS
 * if every slot is taken (the report goes unguarded). */
static int fi_trap_report_enter(int tid)
{
	for (int i = 0; i < FI_TRAP_REPORTERS; i++) {
		if (__atomic_load_n(&fi_trap_reporting[i], __ATOMIC_RELAXED) == tid)
			return -1;
	}
	for (int i = 0; i < FI_TRAP_REPORTERS; i++) {
		int none = 0;

		if (__atomic_compare_exchange_n(&fi_trap_reporting[i], &none, tid,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return i;
	}
	return FI_TRAP_REPORTERS;
}

static void fi_trap_report_leave(int slot)
{
	if (slot >= 0 && slot < FI_TRAP_REPORTERS)
		__atomic_store_n(&fi_trap_reporting[slot], 0, __ATOMIC_RELEASE);
}

/*
 * The call site a repeat is counted by (repeat.c): the trapping
 * instruction of a caller's check; for a check in the target (preamble,
 * BHI stub) the return address its call pushed, as the trap is at the
 * same place for every caller; for a coarse stop of a tail jump its
 * caller's return address. 0 when unreadable: reported in full.
 */
static uint64_t fi_trap_site_key(const struct fi_trap *t, uint64_t sp)
{
	uint64_t ret;

	switch (t->kind) {
	case FI_TRAP_PREAMBLE:
		return fi_trap_read_pushed(sp, &ret) ? ret : 0;
	case FI_TRAP_BHI:
		/* (%rsp) returns into the target; the caller's is above it. */
		return fi_trap_read_pushed(sp + 8, &ret) ? ret : 0;
	case FI_TRAP_COARSE:
		return t->site_known ? t->addr : t->ret;
	default:
		return t->addr;
	}
}

/*
 * The report of @t, once per thread at a time, within the stack left
 * below @frame (fi_trap_stack_room). Under cfi=warn a pair reported
 * before is counted instead, its count told at 10, 100, ... (repeat.c):
 * a known pair costs no system call here, not even the stack's.
 */
static void fi_trap_report_once(const struct fi_trap *t, uint64_t sp,
				uint64_t frame)
{
	uint64_t site = t->warn ? fi_trap_site_key(t, sp) : 0;
	uint64_t n = fi_repeat_seen(site, t->target, t->type);
	size_t room;
	int slot;

	if (n > 1 && !fi_repeat_due(n))
		return;
	room = fi_trap_stack_room(frame);
	/* A new pair: remembered in a window, if the stack has room for it. */
	if (!n)
		n = room >= FI_TRAP_STACK_LINE ?
		    fi_repeat_add(site, t->target, t->type) : 1;
	if (n > 1 && !fi_repeat_due(n))
		return;
	slot = fi_trap_report_enter((int)fi_sys3(SYS_gettid, 0, 0, 0));
	if (slot < 0) {
		fi_report_nested(t);
		return;
	}
	if (n == 1)
		fi_trap_report(t, sp, room);
	else if (room >= FI_TRAP_STACK_LINE)
		fi_report_repeat(t, site, n, room < FI_TRAP_STACK_FULL);
	else
		fi_report_tiny();
	fi_trap_report_leave(slot);
}

void fi_trap_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	struct fi_trap_regs r = {
		.ip = (uint64_t)g[REG_RIP], .sp = (uint64_t)g[REG_RSP],
		.r10 = (uint64_t)g[REG_R10], .r11 = (uint64_t)g[REG_R11],
		.gpr = {
			(uint64_t)g[REG_RAX], (uint64_t)g[REG_RCX],
			(uint64_t)g[REG_RDX], (uint64_t)g[REG_RBX],
			(uint64_t)g[REG_RSP], (uint64_t)g[REG_RBP],
			(uint64_t)g[REG_RSI], (uint64_t)g[REG_RDI],
			(uint64_t)g[REG_R8], (uint64_t)g[REG_R9],
			(uint64_t)g[REG_R10], (uint64_t)g[REG_R11],
			(uint64_t)g[REG_R12], (uint64_t)g[REG_R13],
			(uint64_t)g[REG_R14], (uint64_t)g[REG_R15],
		},
	};
	int saved_errno = errno;
	struct fi_trap t = { .kind = FI_TRAP_NONE };
	bool opened;
	uint64_t frame = (uint64_t)(uintptr_t)ctx;

	/* si_code > 0: raised by the CPU, not sent by kill(). */
	if (si->si_code > 0 && fi_trap_decode(&r, &t) &&
	    fi_foreign_take(&t, &opened)) {
		/* A checking caller met a dlsym veneer: accepted (foreign.c). */
		g[REG_RIP] = (greg_t)t.resume;
		if (opened && fi_verbose_on() &&
		    fi_trap_stack_room(frame) >= FI_TRAP_STACK_FULL)
			fi_report_opened(&t);
	} else if (t.kind == FI_TRAP_COARSE &&
		   (fi_coarse_take(&t) || fi_variant.sig_is_own(t.target))) {
		/* An uninstrumented library's exported entry (coarsetrap.c),
		 * or an interposer dlsym hands out for a SIGILL-installing
		 * name: under the static runtime it lives in the executable,
		 * a registered module, built without kCFI. */
		g[REG_RIP] = (greg_t)t.resume;
	} else if (t.kind != FI_TRAP_NONE) {
		fi_trap_report_once(&t, r.sp, frame);
		if (!t.warn)
			fi_trap_die();
		g[REG_RIP] = (greg_t)t.resume;
		if (t.set_r10)
			g[REG_R10] = (greg_t)t.resume_r10;
	} else if (si->si_code > 0 && fi_trap_unexplained(&r)) {
		fi_report_unexplained(r.ip);
		fi_trap_die();
	} else if (si->si_code > 0 && fi_trap_compiled(r.ip, g)) {
		/* Told (and fatal unless warn or off). */
	} else {
		fi_trap_chain(sig, si, uc);
	}
	errno = saved_errno;
}

/* ------------------------------------------------------- install/remove */

int fi_trap_install(void)
{
	struct sigaction sa = { .sa_sigaction = fi_trap_handler }, old;
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	fi_trap_resolve();
	/*
	 * SA_NODEFER: SIGILL stays deliverable while we run, as a fault in a
	 * chained handler (a CPU-feature probe) must reach it again.
	 * SA_ONSTACK: a trap on a thread whose stack is exhausted still runs.
	 */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sig.installed)
		goto out;
	if (fi_trap_sys_sigaction(SIGILL, &sa, &old) < 0) {
		ret = -errno;
		goto out;
	}
	/*
	 * Held by the kernel now: the record must say so, or stop. The
	 * program's handler and the installed flag in one put (they are
	 * adjacent; only writers, under the lock, read the flag).
	 */
	if (fi_trap_user_installed(&rt->sig, &old))
		fi_rt_die("cannot record the SIGILL handler");
out:
	fi_rt_write_end(&saved);
	return ret;
}

/* Refused once start-up is over: nothing may take the handler away. */
int fi_trap_uninstall(void)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sealed) {
		ret = -EPERM;
	} else if (rt->sig.installed) {
		if (fi_trap_sys_sigaction(SIGILL, &rt->sig.user_act, NULL) < 0)
			ret = -errno;
		else
			ret = FI_RT_PUT(rt->sig.installed, false);
	}
	fi_rt_write_end(&saved);
	return ret;
}
