/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL handler, the BHI stubs and the runtime state, without ELF
 * files: the test builds code in mmap'd pages with the insn.h encoders
 * (kCFI, FineIBT and FineIBT-BHI functions, kCFI / FineIBT / paranoid
 * callers), describes it as a synthetic module (struct fi_image filled by
 * hand: one view, .kcfi_traps addresses, symbols), registers it and a copy
 * of the BHI stubs, and makes every trap happen in a forked child.
 *
 * Fatal cases assert that the child died of SIGILL and that its stderr is
 * exactly the report line; warn cases that the report was printed and the
 * call went on to return the right value.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "check.h"
#include "hash.h"
#include "insn.h"
#include "runtime.h"
#include "trap.h"

#define H_GOOD		0x1234abcdu	/* the targets' type hash */
#define H_BAD		0x0badf00du	/* a caller expecting another type */
#define LINK_BASE	0x10000u	/* link-time address of the code page */
#define PAGE		4096u

/* Offsets in the code page. */
enum {
	OFF_THUNK	= 0x000,	/* jmp *%r11: the kCFI sites' thunk */
	OFF_PLAIN	= 0x010,	/* ud2; ret: a SIGILL that is not CFI */
	OFF_FINE	= 0x040,	/* FineIBT function (preamble at -16) */
	OFF_KCFI	= 0x080,	/* kCFI function */
	OFF_BHI		= 0x0c0,	/* FineIBT-BHI function, arity 2 */
	OFF_BHI1	= 0x100,	/* FineIBT-BHI arity 1 inline */
	OFF_CALLERS	= 0x140,	/* caller stubs, 64 bytes apart */
};

enum caller {
	C_KCFI_GOOD, C_KCFI_BAD, C_FINE_GOOD, C_FINE_BAD, C_PAR_GOOD, C_PAR_BAD,
	C_NR,
};

static const char *const caller_names[C_NR] = {
	"caller_kcfi_good", "caller_kcfi_bad", "caller_fine_good",
	"caller_fine_bad", "caller_par_good", "caller_par_bad",
};

/*
 * Test-local glue around the sequences (not CFI sequences themselves):
 * a caller stub is uint64_t f(void *target, uint64_t a, uint64_t b):
 *	49 89 fb	mov %rdi, %r11
 *	48 89 f7	mov %rsi, %rdi
 *	48 89 d6	mov %rdx, %rsi
 *	<20-byte call site>
 *	c3		ret
 * a function body returns a + b + 1:
 *	48 8d 44 37 01	lea 0x1(%rdi,%rsi,1), %rax
 *	c3		ret
 */
static const uint8_t stub_prologue[] = { 0x49, 0x89, 0xfb, 0x48, 0x89, 0xf7,
					 0x48, 0x89, 0xd6 };
static const uint8_t fn_body[] = { 0x48, 0x8d, 0x44, 0x37, 0x01, 0xc3 };
static const uint8_t op_ret = 0xc3;

typedef uint64_t (*caller_fn)(uint64_t target, uint64_t a, uint64_t b);

static uint8_t *code;		/* page 0: the module; page 1: BHI stub copy */
static uint64_t stubs_copy;
static size_t stubs_size;
static struct fi_view view;
static struct fi_sym syms[16];
static uint64_t traps[C_NR];
static struct fi_call calls[C_NR];
static struct fi_module mod;

static uint64_t rt(unsigned int off)
{
	return (uint64_t)(uintptr_t)code + off;
}

static uint64_t caller_at(enum caller c)
{
	return rt(OFF_CALLERS + 64 * c);
}

/* The call site inside a caller stub. */
static uint64_t site_of(enum caller c)
{
	return caller_at(c) + sizeof(stub_prologue);
}

static uint64_t link_of(uint64_t runtime)
{
	return runtime - mod.img.bias;
}

/* The sequence set the page is built in, and its tag in test names. */
static int test_set = FI_SET_V4;
static const char *set_tag = "";

/* @name with the set's tag ("trap_threads_warn_v618"); a few calls live. */
static const char *tagged(const char *name)
{
	static char bufs[4][128];
	static unsigned int next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s%s", name, set_tag);
	return b;
}

static struct fi_buf at(unsigned int off)
{
	struct fi_buf b;

	fi_buf_init_set(&b, code + off, PAGE - off, rt(off), test_set);
	return b;
}

/* func+0 of a FineIBT function: the set's poison. */
static const struct fi_seq *poison_of_set(void)
{
	return fi_set_forms(test_set)->poison;
}

/* A target: preamble at off-16 (written by @pre), func+0 @entry, body. */
static int build_fn(unsigned int off, const struct fi_seq *entry,
		    void (*pre)(struct fi_buf *, unsigned int))
{
	struct fi_buf b = at(off - FI_PREAMBLE_SIZE);

	pre(&b, off);
	fi_emit_seq(&b, entry, 0);
	fi_emit_bytes(&b, fn_body, sizeof(fn_body));
	return b.err;
}

static void pre_fine(struct fi_buf *b, unsigned int off)
{
	fi_emit_fineibt_preamble(b, H_GOOD);
}

static void pre_kcfi(struct fi_buf *b, unsigned int off)
{
	fi_emit_kcfi_preamble(b, H_GOOD, 2);
}

/* FineIBT preamble whose tail calls the stub copy's slot @arity. */
static void pre_bhi_n(struct fi_buf *b, unsigned int off, int arity)
{
	struct fi_buf tail;

	fi_emit_fineibt_preamble(b, H_GOOD);
	fi_buf_init_set(&tail, code + off - FI_PREAMBLE_SIZE + FI_FINEIBT_PREAMBLE_BHI,
			FI_PREAMBLE_SIZE, rt(off) - FI_PREAMBLE_SIZE +
			FI_FINEIBT_PREAMBLE_BHI, test_set);
	fi_emit_bhi_tail(&tail, arity, false, stubs_copy);
	if (tail.err)
		b->err = tail.err;
}

static void pre_bhi(struct fi_buf *b, unsigned int off)
{
	pre_bhi_n(b, off, 2);
}

/* Arity 1 without warn: the inline cmovne form (writes func+0..3 too). */
static void pre_bhi1(struct fi_buf *b, unsigned int off)
{
	pre_bhi_n(b, off, 1);
}

static int build_caller(enum caller c)
{
	struct fi_buf b = at(OFF_CALLERS + 64 * c);
	bool good = !(c & 1);
	uint32_t hash = good ? H_GOOD : H_BAD;

	fi_emit_bytes(&b, stub_prologue, sizeof(stub_prologue));
	switch (c) {
	case C_KCFI_GOOD:
	case C_KCFI_BAD:
		fi_emit_kcfi_caller(&b, hash, false, rt(OFF_THUNK));
		break;
	case C_FINE_GOOD:
	case C_FINE_BAD:
		fi_emit_fineibt_caller(&b, hash, false);
		break;
	default:
		fi_emit_paranoid_caller(&b, hash, false);
		break;
	}
	fi_emit_bytes(&b, &op_ret, 1);
	return b.err;
}

static void add_sym(size_t *n, const char *name, uint64_t runtime)
{
	syms[*n] = (struct fi_sym){ .addr = link_of(runtime), .size = 16, .name = name };
	(*n)++;
}

/* Describe page 0 as a module: link-time LINK_BASE, sorted traps and symbols. */
static void describe_module(void)
{
	size_t n = 0;

	view = (struct fi_view){ .vaddr = LINK_BASE, .size = PAGE, .mem = code,
				 .exec = true };
	mod.img.path = "synthetic";
	mod.img.live = true;
	mod.img.bias = rt(0) - LINK_BASE;
	mod.img.views = &view;
	mod.img.nviews = 1;
	mod.text_lo = rt(0);
	mod.text_hi = rt(PAGE);
	for (int c = 0; c < C_NR; c++) {
		traps[c] = link_of(site_of(c) + FI_KCFI_CALLER_UD);
		calls[c] = (struct fi_call){ .addr = link_of(site_of(c)),
					     .hash = (c & 1) ? H_BAD : H_GOOD };
	}
	mod.img.traps = traps;
	mod.img.ntraps = C_NR;
	mod.img.calls = calls;
	mod.img.ncalls = C_NR;

	add_sym(&n, "thunk_r11", rt(OFF_THUNK));
	add_sym(&n, "plain_ud2", rt(OFF_PLAIN));
	add_sym(&n, "fn_fine", rt(OFF_FINE));
	add_sym(&n, "fn_kcfi", rt(OFF_KCFI));
	add_sym(&n, "fn_bhi", rt(OFF_BHI));
	add_sym(&n, "fn_bhi1", rt(OFF_BHI1));
	for (int c = 0; c < C_NR; c++)
		add_sym(&n, caller_names[c], caller_at(c));
	mod.img.syms = syms;
	mod.img.nsyms = n;
}

static bool build_code(void)
{
	const uint8_t *stubs = fi_bhi_stubs(&stubs_size);
	struct fi_buf b;
	int err = 0;

	code = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return false;
	/* int3 everywhere we do not write. */
	memset(code, 0xcc, 2 * PAGE);
	stubs_copy = rt(PAGE);
	memcpy(code + PAGE, stubs, stubs_size);

	b = at(OFF_THUNK);
	fi_emit_seq(&b, &fi_seq_indirect_jmp, 0);
	err |= b.err;
	b = at(OFF_PLAIN);
	fi_emit_bytes(&b, fi_seq_kcfi_caller.bytes + FI_KCFI_CALLER_UD, 2);
	fi_emit_bytes(&b, &op_ret, 1);
	err |= b.err;
	err |= build_fn(OFF_FINE, poison_of_set(), pre_fine);
	err |= build_fn(OFF_KCFI, &fi_seq_endbr64, pre_kcfi);
	err |= build_fn(OFF_BHI, poison_of_set(), pre_bhi);
	/* func+0 already reads as the BHI magic; writing it again is a no-op. */
	err |= build_fn(OFF_BHI1, test_set == FI_SET_V4 ? &fi_seq_bhi_magic :
			poison_of_set(), pre_bhi1);
	for (int c = 0; c < C_NR; c++)
		err |= build_caller(c);
	describe_module();
	if (err || mprotect(code, 2 * PAGE, PROT_READ | PROT_EXEC))
		return false;
	return true;
}

static uint64_t call(enum caller c, unsigned int target, uint64_t a, uint64_t b)
{
	caller_fn f = (caller_fn)(uintptr_t)caller_at(c);

	return f(rt(target), a, b);
}

/* ------------------------------------------------------- child harness */

struct child {
	int status;
	char err[8192];
};

static void child_setup(struct fineibt_config cfg)
{
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	mod.cfg = cfg;
	if (fi_rt_add_module(&mod) || fi_rt_add_stubs(stubs_copy, stubs_size) ||
	    fi_trap_install()) {
		dprintf(2, "child setup failed\n");
		_exit(99);
	}
}

/* Run @fn(@arg) in a child with @cfg set up; collect exit status and stderr. */
static bool run_child(struct child *ch, struct fineibt_config cfg,
		      void (*fn)(void *), void *arg)
{
	size_t len = 0;
	int pfd[2];
	ssize_t n;
	pid_t pid;

	memset(ch, 0, sizeof(*ch));
	fflush(NULL);
	if (pipe(pfd))
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		child_setup(cfg);
		fn(arg);
		_exit(0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], ch->err + len, sizeof(ch->err) - 1 - len)) > 0)
		len += (size_t)n;
	ch->err[len] = '\0';
	close(pfd[0]);
	return waitpid(pid, &ch->status, 0) == pid;
}

static bool died_of_sigill(const struct child *ch)
{
	return WIFSIGNALED(ch->status) && WTERMSIG(ch->status) == SIGILL;
}

static bool exited_ok(const struct child *ch)
{
	return WIFEXITED(ch->status) && WEXITSTATUS(ch->status) == 0;
}

static const char *sym(uint64_t runtime, char *buf, size_t len)
{
	fi_image_symbolize(&mod.img, link_of(runtime), buf, len);
	return buf;
}

/* The report line for a trap at @addr_s (already symbolised). */
static void expect_line(char *out, size_t len, const char *addr_s,
			uint64_t target, uint32_t type, const char *mode,
			bool warn)
{
	static const struct fineibt_key zero;
	uint32_t ct = 0;
	char t[128];

	/*
	 * The modules are rehashed (cfg_of): the report names the type by
	 * its compile-time hash, the preimage of @type under the process
	 * key (never set here: zero), and the mode by its cfi= words
	 * (fineibt_config_str's order).
	 */
	if (fi_rehash_inverse(type, &zero, &ct))
		ct = ~type;	/* cannot happen for these hashes: fails the test */
	snprintf(out, len,
		 "fineibt: CFI failure at %s (target: %s; expected type: 0x%08x; mode: %s%s%s)\n",
		 addr_s, sym(target, t, sizeof(t)), ct, mode, warn ? ",warn" : "",
		 test_set == FI_SET_V618 ? ",seq=v6.18" : "");
}

/* The module's configuration: @mode, @flags and the page's set. */
static struct fineibt_config cfg_of(enum fineibt_mode mode, unsigned int flags)
{
	/* Rehashed, as the runtime's modules are unless norand. */
	flags |= FINEIBT_F_RAND;
	if (test_set == FI_SET_V618)
		flags |= FINEIBT_F_SEQ_V618;
	return (struct fineibt_config){ .mode = mode, .flags = flags };
}

/* ------------------------------------------------------------- the traps */

struct call_arg {
	enum caller c;
	unsigned int target;
};

/* The child: make the call and print its result on stderr. */
static void do_call(void *p)
{
	const struct call_arg *ca = p;
	uint64_t r = call(ca->c, ca->target, 40, 1);

	dprintf(2, "result %lu\n", (unsigned long)r);
}

struct trap_case {
	const char *name;
	enum caller c;
	unsigned int target;
	enum fineibt_mode mode;
	unsigned int flags;
	const char *mode_s;
	enum fi_trap_kind kind;
};

/* Where a trap of @kind happens for a call from @c to @target, symbolised. */
static void trap_site(enum fi_trap_kind kind, enum caller c, unsigned int target,
		      char *buf, size_t len)
{
	uint64_t site = site_of(c);

	switch (kind) {
	case FI_TRAP_KCFI:
		sym(site + FI_KCFI_CALLER_UD, buf, len);
		break;
	case FI_TRAP_PARANOID:
		sym(site + FI_PARANOID_UD, buf, len);
		break;
	case FI_TRAP_PREAMBLE: {
		/* No __cfi_ symbols (as elf.c reads them): named after the function. */
		char fn[64];

		sym(rt(target), fn, sizeof(fn));
		*strchr(fn, '+') = '\0';
		/* v6.18 traps on the UDB of func+0's poison, func+3. */
		if (test_set == FI_SET_V618)
			snprintf(buf, len, "%s+0x%x", fn,
				 FI_V618_PREAMBLE_UD - FI_PREAMBLE_SIZE);
		else
			snprintf(buf, len, "__cfi_%s+0x%x", fn, FI_FINEIBT_PREAMBLE_UD);
		break;
	}
	default:
		/* The ud2 of slot 2: the first trap site, after slot 1. */
		snprintf(buf, len, "__bhi_args+0x%x",
			 (unsigned int)(FI_BHI_SLOT_SIZE + 8));
		break;
	}
}

static void test_trap_case(const struct trap_case *tc)
{
	struct call_arg ca = { tc->c, tc->target };
	char name[128], where[128], line[512], both[1024];
	struct child ch;

	trap_site(tc->kind, tc->c, tc->target, where, sizeof(where));
	/* Fatal: dies of SIGILL, stderr is exactly the report. */
	snprintf(name, sizeof(name), "trap_%s%s_fatal", tc->name, set_tag);
	expect_line(line, sizeof(line), where, rt(tc->target), H_BAD, tc->mode_s, false);
	if (run_child(&ch, cfg_of(tc->mode, tc->flags), do_call, &ca)) {
		if (!CHECK(name, died_of_sigill(&ch) && !strcmp(ch.err, line)))
			printf("  got status %#x stderr: %s  want: %s", ch.status, ch.err, line);
	}

	/* Warn: reported, and the call goes on to return 40 + 1 + 1. */
	snprintf(name, sizeof(name), "trap_%s%s_warn", tc->name, set_tag);
	expect_line(line, sizeof(line), where, rt(tc->target), H_BAD, tc->mode_s, true);
	/*
	 * Continuing past a paranoid caller's LOCK Jcc calls the preamble
	 * with the caller's hash: the handler resumes with the callee's, so
	 * its own check does not report the same call again (the kernel's
	 * warn mode prints both).
	 */
	snprintf(both, sizeof(both), "%sresult 42\n", line);
	if (run_child(&ch, cfg_of(tc->mode, tc->flags | FINEIBT_F_WARN), do_call, &ca)) {
		if (!CHECK(name, exited_ok(&ch) && !strcmp(ch.err, both)))
			printf("  got status %#x stderr: %s  want: %s", ch.status, ch.err, both);
	}

	/* The matching caller: no report, right result. */
	snprintf(name, sizeof(name), "trap_%s%s_match", tc->name, set_tag);
	ca.c = tc->c - 1;
	if (run_child(&ch, cfg_of(tc->mode, tc->flags), do_call, &ca))
		CHECK(name, exited_ok(&ch) && !strcmp(ch.err, "result 42\n"));
}

/*
 * In the v6.18 page the kCFI callers are the jne/test form: test_traps'
 * "kcfi" case then traps on the UDB at site+13, which is decoded by
 * retrying at ip-1 (the .kcfi_traps address), reported there, and warn
 * resumes at the call (site+14).
 */
static void test_v618_kcfi(void)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)site_of(C_KCFI_BAD);

	CHECK("trap_kcfi_v618: caller is the jne/test form",
	      p[10] == 0x75 && p[11] == 0x01 && p[12] == 0xa8 && p[13] == 0xd6);
}

static void test_traps(void)
{
	static const struct trap_case cases[] = {
		{ "kcfi", C_KCFI_BAD, OFF_KCFI, FINEIBT_MODE_KCFI, 0, "kcfi", FI_TRAP_KCFI },
		{ "preamble", C_FINE_BAD, OFF_FINE, FINEIBT_MODE_FINEIBT, 0, "fineibt",
		  FI_TRAP_PREAMBLE },
		{ "paranoid", C_PAR_BAD, OFF_FINE, FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID,
		  "fineibt,paranoid", FI_TRAP_PARANOID },
		{ "bhi", C_FINE_BAD, OFF_BHI, FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI, "fineibt,bhi",
		  FI_TRAP_BHI },
		{ "paranoid_bhi", C_PAR_BAD, OFF_BHI, FINEIBT_MODE_FINEIBT,
		  FINEIBT_F_PARANOID | FINEIBT_F_BHI, "fineibt,paranoid,bhi", FI_TRAP_PARANOID },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_trap_case(&cases[i]);
}

/*
 * Fatal means the process dies of SIGILL from inside the handler, never
 * returning through the (writable) signal frame: watched from a tracer,
 * the CPU's SIGILL at the trap site is followed by one the thread sent
 * itself (SI_TKILL) while still in the handler, then death by SIGILL.
 * Returns false with *skip set when ptrace is not permitted here.
 */
static bool dies_inside_handler(struct fineibt_config cfg, struct call_arg *ca,
				bool *skip)
{
	struct user_regs_struct regs;
	uint64_t ip[2] = { 0, 0 };
	int code[2] = { 0, 0 };
	siginfo_t si;
	int st, n = 0;
	pid_t pid;

	*skip = false;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		child_setup(cfg);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(97);
		raise(SIGSTOP);
		do_call(ca);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		int sig = WSTOPSIG(st);

		if (sig == SIGILL && n < 2 && !ptrace(PTRACE_GETREGS, pid, NULL, &regs) &&
		    !ptrace(PTRACE_GETSIGINFO, pid, NULL, &si)) {
			code[n] = si.si_code;
			ip[n++] = regs.rip;
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)(sig == SIGSTOP ? 0 : sig));
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 97) {
		*skip = true;
		return false;
	}
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGILL && n == 2 &&
	       code[0] > 0 && code[1] == SI_TKILL && ip[0] != ip[1];
}

static void test_refault(void)
{
	static const struct { const char *name; enum caller c; unsigned int target;
			      unsigned int flags; } cases[] = {
		{ "trap_refault_kcfi", C_KCFI_BAD, OFF_KCFI, 0 },
		{ "trap_refault_preamble", C_FINE_BAD, OFF_FINE, 0 },
		{ "trap_refault_paranoid", C_PAR_BAD, OFF_FINE, FINEIBT_F_PARANOID },
		{ "trap_refault_bhi", C_FINE_BAD, OFF_BHI, FINEIBT_F_BHI },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct call_arg ca = { cases[i].c, cases[i].target };
		enum fineibt_mode m = cases[i].c == C_KCFI_BAD ? FINEIBT_MODE_KCFI :
				      FINEIBT_MODE_FINEIBT;
		bool skip, ok = dies_inside_handler(cfg_of(m, cases[i].flags), &ca, &skip);

		if (skip) {
			printf("note: %s skipped: ptrace not permitted\n", tagged(cases[i].name));
			continue;
		}
		CHECK(tagged(cases[i].name), ok);
	}
}

/*
 * FineIBT-BHI arity 1. v4: the inline cmovne, no stub: a preamble trap.
 * v6.18 has no inline form (docs/sequences.md): the preamble calls slot 1
 * of the stubs, whose jne reaches the first ud2 (BHI trap); warn returns
 * from the stub into the function.
 */
static void test_arity1(void)
{
	enum fi_trap_kind kind = test_set == FI_SET_V4 ? FI_TRAP_PREAMBLE : FI_TRAP_BHI;
	struct call_arg ca = { C_FINE_BAD, OFF_BHI1 };
	char where[128], line[512], both[1024];
	struct child ch;

	trap_site(kind, ca.c, ca.target, where, sizeof(where));
	expect_line(line, sizeof(line), where, rt(OFF_BHI1), H_BAD, "fineibt,bhi", false);
	if (run_child(&ch, cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI), do_call, &ca)) {
		if (!CHECK(tagged("trap_arity1_fatal"), died_of_sigill(&ch) && !strcmp(ch.err, line)))
			printf("  got status %#x stderr: %s  want: %s", ch.status, ch.err, line);
	}
	if (test_set == FI_SET_V618) {
		expect_line(line, sizeof(line), where, rt(OFF_BHI1), H_BAD, "fineibt,bhi", true);
		snprintf(both, sizeof(both), "%sresult 42\n", line);
		if (run_child(&ch, cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI | FINEIBT_F_WARN),
			      do_call, &ca)) {
			if (!CHECK(tagged("trap_arity1_warn"), exited_ok(&ch) && !strcmp(ch.err, both)))
				printf("  got status %#x stderr: %s  want: %s", ch.status, ch.err, both);
		}
	}
	ca.c = C_FINE_GOOD;
	if (run_child(&ch, cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI), do_call, &ca))
		CHECK(tagged("trap_arity1_match"), exited_ok(&ch) && !strcmp(ch.err, "result 42\n"));
}

/* ------------------------------------------------ the program's handlers */

static volatile sig_atomic_t prog_hits, prog_on_altstack;
static sigjmp_buf prog_env;

/* A program handler that steps over the ud2 it was called for. */
static void prog_skip(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	stack_t ss;

	prog_hits++;
	if (!sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK))
		prog_on_altstack = 1;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
	(void)!write(2, "program handler\n", 16);
}

static void prog_jump(int sig)
{
	prog_hits++;
	siglongjmp(prog_env, 1);
}

static void plain_ud2(void)
{
	((void (*)(void))(uintptr_t)rt(OFF_PLAIN))();
}

/* The handler the kernel holds for SIGILL right now (no wrapper involved). */
static void *kernel_sigill_handler(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } k;

	if (syscall(SYS_rt_sigaction, SIGILL, NULL, &k, sizeof(k.mask)))
		return (void *)-1;
	return k.handler;
}

static void do_sigaction_chain(void *p)
{
	struct sigaction sa = { .sa_sigaction = prog_skip, .sa_flags = SA_SIGINFO }, old;
	void *kh;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old);
	kh = kernel_sigill_handler();
	dprintf(2, "old %s kernel %s\n", old.sa_handler == SIG_DFL ? "dfl" : "?",
		kh && kh != (void *)prog_skip && kh != (void *)-1 ? "fineibt" : "program");
	plain_ud2();
	dprintf(2, "hits %d\n", (int)prog_hits);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGILL, &sa, &old);
	dprintf(2, "old %s\n", old.sa_sigaction == prog_skip ? "program" : "?");
	sigaction(SIGILL, NULL, &old);
	dprintf(2, "now %s\n", old.sa_handler == SIG_IGN ? "ign" : "?");
}

static void do_signal_chain(void *p)
{
	sighandler_t prev = signal(SIGILL, prog_jump);

	if (!sigsetjmp(prog_env, 1))
		plain_ud2();
	prev = signal(SIGILL, SIG_DFL) == prog_jump && prev == SIG_DFL ? prev : SIG_ERR;
	dprintf(2, "hits %d %s\n", (int)prog_hits, prev == SIG_ERR ? "bad" : "ok");
}

/* System V semantics: one shot, then the default action kills. */
static void do_sysv_chain(void *p)
{
	sysv_signal(SIGILL, prog_jump);
	if (!sigsetjmp(prog_env, 1))
		plain_ud2();
	dprintf(2, "hits %d\n", (int)prog_hits);
	plain_ud2();
	dprintf(2, "survived\n");
}

/* fineibt's own handler handed back (read with a raw syscall): no recursion. */
static void do_record_self(void *p)
{
	struct sigaction sa = { .sa_flags = SA_SIGINFO };

	sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))kernel_sigill_handler();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, NULL);
	plain_ud2();
	dprintf(2, "survived\n");
}

static void do_plain(void *p)
{
	plain_ud2();
	dprintf(2, "survived\n");
}

/* SIGILL sent, not raised by the CPU: ignored if the program says so. */
static void do_raise(void *ignore)
{
	if (ignore)
		signal(SIGILL, SIG_IGN);
	raise(SIGILL);
	dprintf(2, "survived\n");
}

/* A ud2 outside every module. */
static void do_builtin_trap(void *p)
{
	__builtin_trap();
}

static void do_cfi_with_handler(void *p)
{
	struct sigaction sa = { .sa_sigaction = prog_skip, .sa_flags = SA_SIGINFO };
	struct call_arg ca = { C_FINE_BAD, OFF_FINE };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, NULL);
	do_call(&ca);
}

static void test_chain(void)
{
	struct fineibt_config fine = cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID);
	char where[128], line[512];
	struct child ch;

	if (run_child(&ch, fine, do_sigaction_chain, NULL))
		CHECK(tagged("chain_sigaction"), exited_ok(&ch) && !strcmp(ch.err,
		      "old dfl kernel fineibt\nprogram handler\nhits 1\nold program\nnow ign\n"));
	if (run_child(&ch, fine, do_signal_chain, NULL))
		CHECK(tagged("chain_signal"), exited_ok(&ch) && !strcmp(ch.err, "hits 1 ok\n"));
	if (run_child(&ch, fine, do_sysv_chain, NULL))
		CHECK(tagged("chain_sysv_signal_oneshot"),
		      died_of_sigill(&ch) && !strcmp(ch.err, "hits 1\n"));
	if (run_child(&ch, fine, do_plain, NULL))
		CHECK(tagged("chain_none_dies"), died_of_sigill(&ch) && !strcmp(ch.err, ""));
	if (run_child(&ch, fine, do_record_self, NULL))
		CHECK(tagged("chain_own_handler_not_recorded"),
		      died_of_sigill(&ch) && !strcmp(ch.err, ""));
	if (run_child(&ch, fine, do_raise, NULL))
		CHECK(tagged("chain_sent_default_dies"), died_of_sigill(&ch) && !strcmp(ch.err, ""));
	if (run_child(&ch, fine, do_raise, "ignore"))
		CHECK(tagged("chain_sent_ignored"), exited_ok(&ch) && !strcmp(ch.err, "survived\n"));
	if (run_child(&ch, fine, do_builtin_trap, NULL))
		CHECK(tagged("chain_none_outside_module"), died_of_sigill(&ch) && !strcmp(ch.err, ""));

	/* A CFI trap is fineibt's even with a program handler: fatal, reported. */
	trap_site(FI_TRAP_PREAMBLE, C_FINE_BAD, OFF_FINE, where, sizeof(where));
	expect_line(line, sizeof(line), where, rt(OFF_FINE), H_BAD, "fineibt,paranoid", false);
	if (run_child(&ch, fine, do_cfi_with_handler, NULL))
		CHECK(tagged("chain_cfi_not_swallowed"), died_of_sigill(&ch) && !strcmp(ch.err, line));
}

/* ------------------------------------------------ threads and alt stacks */

#define NTHREADS 8

static pthread_barrier_t barrier;

static void *thread_call(void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	pthread_barrier_wait(&barrier);
	return (void *)(uintptr_t)(call(C_FINE_BAD, OFF_FINE, a, 1000) == a + 1001);
}

static void do_threads(void *p)
{
	pthread_t t[NTHREADS];
	int ok = 0;
	void *r;

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_call, (void *)(uintptr_t)(i * 7));
	for (int i = 0; i < NTHREADS; i++)
		if (!pthread_join(t[i], &r) && r)
			ok++;
	dprintf(2, "threads ok %d\n", ok);
}

static void test_threads(void)
{
	char where[128], line[512], want[8192] = "";
	struct child ch;

	trap_site(FI_TRAP_PREAMBLE, C_FINE_BAD, OFF_FINE, where, sizeof(where));
	expect_line(line, sizeof(line), where, rt(OFF_FINE), H_BAD, "fineibt", true);
	/* One pair (site, target): reported once, the other failures counted
	 * (fewer than 10: no "repeated" line; docs/traps.md). */
	strcat(want, line);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), "threads ok %d\n",
		 NTHREADS);
	if (run_child(&ch, cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_WARN), do_threads, NULL)) {
		if (!CHECK(tagged("trap_threads_warn"), exited_ok(&ch) && !strcmp(ch.err, want)))
			printf("  got: %s\n", ch.err);
	}
}

#define ALTSTACK_SIZE (64 * 1024)

static void do_altstack(void *p)
{
	struct sigaction sa = { .sa_sigaction = prog_skip,
				.sa_flags = SA_SIGINFO | SA_ONSTACK };
	struct call_arg ca = { C_FINE_BAD, OFF_FINE };
	uint8_t *mem = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t ss = { .ss_sp = mem, .ss_size = ALTSTACK_SIZE };
	size_t used = 0;

	memset(mem, 0xa5, ALTSTACK_SIZE);
	if (mem == MAP_FAILED || sigaltstack(&ss, NULL))
		_exit(98);
	do_call(&ca);		/* a CFI trap (warn): handled there */
	for (size_t i = 0; i < ALTSTACK_SIZE; i++)
		used += mem[i] != 0xa5;
	dprintf(2, "altstack %s\n", used ? "used" : "unused");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, NULL);
	plain_ud2();		/* not CFI: chained, still on the alt stack */
	dprintf(2, "chained on altstack %d\n", (int)prog_on_altstack);
}

static void test_altstack(void)
{
	char where[128], line[512], want[1024];
	struct child ch;

	trap_site(FI_TRAP_PREAMBLE, C_FINE_BAD, OFF_FINE, where, sizeof(where));
	expect_line(line, sizeof(line), where, rt(OFF_FINE), H_BAD, "fineibt", true);
	snprintf(want, sizeof(want),
		 "%sresult 42\naltstack used\nprogram handler\nchained on altstack 1\n", line);
	if (run_child(&ch, cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_WARN), do_altstack, NULL)) {
		if (!CHECK(tagged("trap_altstack"), exited_ok(&ch) && !strcmp(ch.err, want)))
			printf("  got: %s\n", ch.err);
	}
}

/* ---------------------------------------------------------- BHI stubs */

/*
 * test_bhi_probe(entry, regs, zf_clear): load rdi rsi rdx rcx r8 r9 r10
 * from regs[0..6], set ZF (zf_clear == 0) or clear it, call entry, store
 * rdi..r9 back into regs[0..5].
 */
void test_bhi_probe(uint64_t entry, uint64_t *regs, int zf_clear);
__asm__(
	"	.text\n"
	"	.globl	test_bhi_probe\n"
	"	.type	test_bhi_probe, @function\n"
	"test_bhi_probe:\n"
	"	push	%rbx\n"
	"	push	%r12\n"
	"	mov	%rdi, %rax\n"
	"	mov	%rsi, %rbx\n"
	"	mov	%edx, %r12d\n"
	"	mov	0(%rbx), %rdi\n"
	"	mov	8(%rbx), %rsi\n"
	"	mov	16(%rbx), %rdx\n"
	"	mov	24(%rbx), %rcx\n"
	"	mov	32(%rbx), %r8\n"
	"	mov	40(%rbx), %r9\n"
	"	mov	48(%rbx), %r10\n"
	"	test	%r12d, %r12d\n"
	"	call	*%rax\n"
	"	mov	%rdi, 0(%rbx)\n"
	"	mov	%rsi, 8(%rbx)\n"
	"	mov	%rdx, 16(%rbx)\n"
	"	mov	%rcx, 24(%rbx)\n"
	"	mov	%r8, 32(%rbx)\n"
	"	mov	%r9, 40(%rbx)\n"
	"	pop	%r12\n"
	"	pop	%rbx\n"
	"	ret\n"
	"	.size	test_bhi_probe, . - test_bhi_probe\n");

#define POISON 0xdeadbeefcafef00dull

/*
 * Slot n with ZF set (hash matched) leaves every argument alone. Past its
 * jne with ZF clear (where speculation would run on a mismatch) the first
 * n argument registers read r10 afterwards. Slot 7 would also load rsp
 * from r10, which cannot be run for real: only its ZF-set path is.
 */
static bool bhi_slots_ok(uint64_t base, const char *what)
{
	char name[64];
	bool ok = true;

	for (int n = 0; n <= FI_MAX_ARITY; n++) {
		for (int zf_clear = 0; zf_clear <= 1; zf_clear++) {
			uint64_t regs[7] = { 1, 2, 3, 4, 5, 6, POISON };

			if (zf_clear && n == FI_MAX_ARITY)
				continue;
			snprintf(name, sizeof(name), "bhi_%s_slot%d_%s", what, n,
				 zf_clear ? "mismatch" : "match");
			test_bhi_probe(base + (uint64_t)n * FI_BHI_SLOT_SIZE + 2 * zf_clear,
				       regs, zf_clear);
			for (int r = 0; r < 6; r++) {
				uint64_t want = zf_clear && r < n ? POISON : (uint64_t)r + 1;

				ok &= EXPECT(name, regs[r] == want);
			}
		}
	}
	return ok;
}

static void test_bhi_stubs(void)
{
	size_t size;
	const uint8_t *own = fi_bhi_stubs(&size);

	CHECK("bhi_size", size == 8 * FI_BHI_SLOT_SIZE);
	CHECK("bhi_slots_linked", bhi_slots_ok((uint64_t)(uintptr_t)own, "linked"));
	CHECK("bhi_slots_copy", bhi_slots_ok(stubs_copy, "copy"));
	CHECK("bhi_copy_identical", !memcmp(own, (void *)(uintptr_t)stubs_copy, size));
}

/* ------------------------------------------ decoder and state, in-process */

static struct fi_trap decode(uint64_t ip, uint64_t sp, uint64_t r10, uint64_t r11)
{
	struct fi_trap_regs r = { .ip = ip, .sp = sp, .r10 = r10, .r11 = r11 };
	struct fi_trap t;

	fi_trap_decode(&r, &t);
	return t;
}

/*
 * The registered module is the runtime's read-only copy of mod (in its
 * arena), not mod itself: same text range and trap table, other address.
 */
static bool is_mod(const struct fi_module *m)
{
	return m && m != &mod && m->text_lo == mod.text_lo &&
	       m->text_hi == mod.text_hi && m->img.ntraps == mod.img.ntraps &&
	       m->img.traps != mod.img.traps &&
	       !memcmp(m->img.traps, mod.img.traps,
		       mod.img.ntraps * sizeof(mod.img.traps[0]));
}

static void test_decode(void)
{
	uint64_t pre = rt(OFF_FINE) - FI_PREAMBLE_SIZE, ret_slot = rt(OFF_BHI);
	uint64_t ud_lo = stubs_copy + FI_BHI_SLOT_SIZE + 8;
	struct fi_trap t;

	mod.cfg = cfg_of(FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID);
	CHECK("rt_add_module", fi_rt_add_module(&mod) == 0);
	CHECK("rt_add_module_twice", fi_rt_add_module(&mod) == -EEXIST);
	CHECK("rt_module_at", is_mod(fi_rt_module_at(rt(OFF_FINE))) &&
	      !fi_rt_module_at(rt(PAGE)) && !fi_rt_module_at(rt(0) - 1));
	CHECK("rt_add_stubs_size", fi_rt_add_stubs(stubs_copy, 32) == -EINVAL);
	CHECK("rt_add_stubs", fi_rt_add_stubs(stubs_copy, stubs_size) == 0);
	CHECK("rt_add_stubs_twice", fi_rt_add_stubs(stubs_copy, stubs_size) == -EEXIST);
	CHECK("rt_bhi_base", fi_rt_bhi_base(ud_lo) == stubs_copy &&
	      fi_rt_bhi_base(stubs_copy + stubs_size) == 0 &&
	      fi_rt_bhi_base((uint64_t)(uintptr_t)fi_bhi_stubs(NULL) + 3) ==
	      (uint64_t)(uintptr_t)fi_bhi_stubs(NULL));
	CHECK("rt_storage_page", ((uintptr_t)fi_rt_storage(NULL) & (PAGE - 1)) == 0 &&
	      (void *)fi_rt() == fi_rt_storage(NULL));

	t = decode(site_of(C_KCFI_BAD) + FI_KCFI_CALLER_UD, 0, 0, rt(OFF_KCFI));
	CHECK("decode_kcfi", t.kind == FI_TRAP_KCFI && t.type == H_BAD &&
	      t.target == rt(OFF_KCFI) && t.resume == t.addr + 2 && is_mod(t.mod));
	t = decode(pre + FI_FINEIBT_PREAMBLE_UD, 0, H_BAD - H_GOOD, 0);
	CHECK("decode_preamble", t.kind == FI_TRAP_PREAMBLE && t.type == H_BAD &&
	      t.target == rt(OFF_FINE) && t.resume == rt(OFF_FINE));
	t = decode(site_of(C_PAR_BAD) + FI_PARANOID_UD, 0, H_BAD, pre);
	CHECK("decode_paranoid", t.kind == FI_TRAP_PARANOID && t.type == H_BAD &&
	      t.target == rt(OFF_FINE) && t.resume == t.addr + 3);
	CHECK("decode_paranoid_resume_r10", t.set_r10 && t.resume_r10 == H_GOOD);
	t = decode(site_of(C_PAR_BAD) + FI_PARANOID_UD, 0, H_BAD,
		   rt(OFF_KCFI) - FI_PREAMBLE_SIZE);
	CHECK("decode_paranoid_no_preamble_keeps_r10",
	      t.kind == FI_TRAP_PARANOID && !t.set_r10);
	t = decode(ud_lo, (uint64_t)(uintptr_t)&ret_slot, H_BAD - H_GOOD, 0);
	CHECK("decode_bhi", t.kind == FI_TRAP_BHI && t.type == H_BAD &&
	      t.target == rt(OFF_BHI) && t.resume == ud_lo + 2 && t.stubs == stubs_copy);
	/* An unmapped stack pointer is read safely and refused. */
	t = decode(ud_lo, 16, H_BAD - H_GOOD, 0);
	CHECK("decode_bhi_bad_sp", t.kind == FI_TRAP_NONE);
	/* A return address that is no BHI preamble: not ours. */
	ret_slot = rt(OFF_FINE);
	t = decode(ud_lo, (uint64_t)(uintptr_t)&ret_slot, 1, 0);
	CHECK("decode_bhi_not_bhi_preamble", t.kind == FI_TRAP_NONE);
	CHECK("decode_plain_ud2", decode(rt(OFF_PLAIN), 0, 0, 0).kind == FI_TRAP_NONE);
	CHECK("decode_outside", decode(rt(PAGE) - 2, 0, 0, 0).kind == FI_TRAP_NONE &&
	      decode(8, 0, 0, 0).kind == FI_TRAP_NONE);
	/* A LOCK Jcc where the trap table says no call site is: not ours. */
	CHECK("decode_jcc_off_site", decode(site_of(C_PAR_BAD) + FI_PARANOID_UD + 1,
					    0, 0, 0).kind == FI_TRAP_NONE);

	CHECK("rt_del_stubs", fi_rt_del_stubs(stubs_copy) == 0 &&
	      fi_rt_bhi_base(ud_lo) == 0 && fi_rt_del_stubs(stubs_copy) == -ENOENT);
	CHECK("rt_del_module", fi_rt_del_module(&mod) == 0 &&
	      !fi_rt_module_at(rt(OFF_FINE)) && fi_rt_del_module(&mod) == -ENOENT);
	CHECK("rt_readd_module", fi_rt_add_module(&mod) == 0 &&
	      is_mod(fi_rt_module_at(rt(OFF_FINE))) && fi_rt()->nmods == 1);
	fi_rt_del_module(&mod);
}

/*
 * The decoder on the v6.18 page: the UDB of func+3 (preamble), the kCFI
 * caller's d6 retried at ip-1, and a d6 that is neither.
 */
static void test_decode_v618(void)
{
	uint64_t site = site_of(C_KCFI_BAD);
	struct fi_trap t;

	mod.cfg = cfg_of(FINEIBT_MODE_FINEIBT, 0);
	if (!CHECK("rt_add_module_v618", fi_rt_add_module(&mod) == 0))
		return;
	t = decode(rt(OFF_FINE) - FI_PREAMBLE_SIZE + FI_V618_PREAMBLE_UD, 0,
		   H_BAD - H_GOOD, 0);
	CHECK("decode_preamble_v618", t.kind == FI_TRAP_PREAMBLE && t.type == H_BAD &&
	      t.target == rt(OFF_FINE) && t.resume == rt(OFF_FINE));
	t = decode(site + FI_V618_KCFI_UD, 0, 0, rt(OFF_KCFI));
	CHECK("decode_kcfi_v618", t.kind == FI_TRAP_KCFI && t.type == H_BAD &&
	      t.target == rt(OFF_KCFI) && t.addr == site + FI_KCFI_CALLER_UD &&
	      t.resume == site + FI_KCFI_CALLER_UD + 2);
	/* a d6 one byte off: no .kcfi_traps entry at ip-1 */
	CHECK("decode_udb_off_site_v618",
	      decode(site + FI_V618_KCFI_UD - 1, 0, 0, rt(OFF_KCFI)).kind == FI_TRAP_NONE);
	CHECK("decode_plain_ud2_v618", decode(rt(OFF_PLAIN), 0, 0, 0).kind == FI_TRAP_NONE);
	fi_rt_del_module(&mod);
}

/*
 * The expected type: by its compile-time hash, never the run-time one
 * unless the process runs with cfi=debug (in a child: the setter is the
 * process state's). Under norand the two are the same hash.
 */
static void test_format_types(struct fi_trap *t)
{
	const struct fineibt_key k = { { 0x11, 0x22, 0x33, 0x44, 0x55 } };
	uint32_t ct = fi_rehash_prp_inverse(0x1f, &k) ^ 0x1000;
	uint32_t rt = fineibt_rehash(ct, &k);
	char buf[512], want[80];
	int status = -1;
	pid_t pid;

	t->type = rt;
	t->warn = false;
	mod.cfg = (struct fineibt_config){ FINEIBT_MODE_KCFI, 0 };
	fi_report_line(t, buf, sizeof(buf));
	snprintf(want, sizeof(want), "; expected type: 0x%08x; mode: kcfi,norand", rt);
	CHECK("format_type_norand: the hash as it is", strstr(buf, want));
	fflush(NULL);
	pid = fork();
	if (!pid) {
		struct fineibt_config proc = { FINEIBT_MODE_KCFI, FINEIBT_F_RAND };
		int bad = 0;

		mod.cfg = proc;
		bad |= fi_rt_set_config(&proc, &k, false) != 0;
		fi_report_line(t, buf, sizeof(buf));
		snprintf(want, sizeof(want), "; expected type: 0x%08x; mode: kcfi)", ct);
		bad |= !strstr(buf, want) << 1;
		/* No run-time hash by default: the pair would help a key search. */
		snprintf(want, sizeof(want), "%08x", rt);
		bad |= (strstr(buf, want) != NULL) << 2;
		proc.flags |= FINEIBT_F_DEBUG;
		bad |= fi_rt_set_config(&proc, &k, false) << 3;
		fi_report_line(t, buf, sizeof(buf));
		snprintf(want, sizeof(want), "; expected type: 0x%08x (run-time 0x%08x); ",
			 ct, rt);
		bad |= !strstr(buf, want) << 4;
		_exit(bad);
	}
	CHECK("format_type: compile-time hash by default, run-time only with debug",
	      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	if (WIFEXITED(status) && WEXITSTATUS(status))
		printf("  child status %d\n", WEXITSTATUS(status));
	t->type = 0x1f;
}

static void test_format(void)
{
	/* The mode as the cfi= words name it, one spelling (docs/traps.md). */
	static const struct { enum fineibt_mode m; unsigned int f; const char *s; } names[] = {
		{ FINEIBT_MODE_KCFI, 0, "kcfi,norand" },
		{ FINEIBT_MODE_KCFI, FINEIBT_F_RAND, "kcfi" },
		{ FINEIBT_MODE_FINEIBT, 0, "fineibt,norand" },
		{ FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID | FINEIBT_F_RAND, "fineibt,paranoid" },
		{ FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI | FINEIBT_F_RAND, "fineibt,bhi" },
		{ FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID | FINEIBT_F_BHI | FINEIBT_F_RAND,
		  "fineibt,paranoid,bhi" },
		{ FINEIBT_MODE_OFF, FINEIBT_F_WARN, "off,warn" },
	};
	struct fi_trap t = { .kind = FI_TRAP_KCFI, .addr = 0x1234, .target = 0xabc,
			     .type = 0x1f, .mod = &mod };
	char buf[512], small[24], want[160];
	bool ok = true;

	const unsigned int set = test_set == FI_SET_V618 ? FINEIBT_F_SEQ_V618 : 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		mod.cfg = (struct fineibt_config){ names[i].m, names[i].f | set };
		fi_report_line(&t, buf, sizeof(buf));
		snprintf(want, sizeof(want), "; mode: %s%s)\n", names[i].s,
			 test_set == FI_SET_V618 ? ",seq=v6.18" : "");
		ok &= EXPECT("format_mode_names", strstr(buf, want) != NULL);
	}
	CHECK("format_mode_names: the cfi= words", ok);
	mod.cfg = (struct fineibt_config){ FINEIBT_MODE_KCFI, FINEIBT_F_WARN | set };
	t.warn = true;
	fi_report_line(&t, buf, sizeof(buf));
	snprintf(want, sizeof(want), "fineibt: CFI failure at 0x1234 (target: 0xabc; "
		 "expected type: 0x0000001f; mode: kcfi,warn,norand%s)\n",
		 test_set == FI_SET_V618 ? ",seq=v6.18" : "");
	CHECK("format_unknown_addrs", !strcmp(buf, want));
	mod.cfg.flags |= FINEIBT_F_SEQ_V618;
	fi_report_line(&t, buf, sizeof(buf));
	CHECK("format_set", strstr(buf, "; mode: kcfi,warn,norand,seq=v6.18)\n"));
	test_format_types(&t);
	CHECK("format_truncated", fi_report_line(&t, small, sizeof(small)) == sizeof(small) - 1 &&
	      small[sizeof(small) - 2] == '\n' && small[sizeof(small) - 1] == '\0');
	CHECK("format_symbol", !strcmp(sym(rt(OFF_FINE), buf, sizeof(buf)), "fn_fine+0x0"));
}

int main(void)
{
	if (!CHECK("trap_build_code", build_code()))
		return fi_check_exit();
	test_bhi_stubs();
	test_traps();
	test_arity1();
	test_refault();
	test_chain();
	test_threads();
	test_altstack();
	test_format();
	test_decode();
	/*
	 * The v6.18 set (docs/sequences.md): the same page rebuilt in it, the
	 * same traps: UDB at func+3, the LOCK Jcc, the BHI stubs.
	 */
	test_set = FI_SET_V618;
	set_tag = "_v618";
	if (!CHECK("trap_build_code_v618", build_code()))
		return fi_check_exit();
	test_v618_kcfi();
	test_traps();
	test_arity1();
	test_refault();
	test_chain();
	test_threads();
	test_altstack();
	test_decode_v618();
	return fi_check_exit();
}
