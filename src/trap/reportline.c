/* SPDX-License-Identifier: MIT */
/*
 * The first line of a CFI failure report and the handler's other
 * one-line messages (docs/traps.md): "fineibt: CFI failure at <where>
 * (target: <what>; expected type: <hash>; mode: <cfi= list>)", the same
 * line with addresses in hex on a small signal stack, and the lines for a
 * trap the handler does not decode. Composing the whole report (this
 * line, report.c's detail lines, the system log and the FINEIBT_LOG
 * record) is here too; the handler (trap.c) only picks which one its
 * stack has room for.
 *
 * Everything here runs in the SIGILL handler: no allocation, no lock, no
 * stdio; text is built with core/strbuf.h and written with one write(2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "upcall.h"
#include "insn.h"
#include "logsink.h"
#include "rawsys.h"
#include "report.h"
#include "stockven.h"
#include "strbuf.h"

/* "typed veneer" or "dlsym veneer", "+0xoff" when inside it, " of ". */
static void fi_line_veneer(struct fi_strbuf *b, const char *what,
			   uint64_t addr, uint64_t entry)
{
	fi_strbuf_str(b, what);
	if (addr != entry) {
		fi_strbuf_str(b, "+");
		fi_strbuf_hex(b, addr - entry, 1);
	}
	fi_strbuf_str(b, " of ");
}

/* " in libm.so.6": the base name of a loaded object's path. */
static void fi_line_in(struct fi_strbuf *b, const char *path)
{
	const char *base = strrchr(path, '/');

	fi_strbuf_str(b, " in ");
	fi_strbuf_str(b, base ? base + 1 : path);
}

/*
 * An address outside every registered module: "cos+0x10 in libm.so.6, not
 * instrumented" (", not registered" in kCFI text the runtime rewrote but
 * could not register), through the loader's dynamic symbols (dladdr takes the
 * loader's lock; the trapping thread, running instrumented code, does
 * not hold it). A dlsym veneer is named after its function.
 */
static bool fi_line_foreign(struct fi_strbuf *b, uint64_t addr)
{
	uint64_t entry, fn = fi_foreign_slot_target(addr, &entry), sym;
	const char *name, *typed = NULL;
	Dl_info info;

	/* A stock module's typed veneer (stockven.c): named as made. */
	if (!fn && fi_stock_veneer_at(addr, &fn, &entry, &typed)) {
		fi_line_veneer(b, "typed veneer", addr, entry);
		fi_strbuf_str(b, typed);
		if (dladdr((void *)(uintptr_t)fn, &info) && info.dli_fname)
			fi_line_in(b, info.dli_fname);
		fi_strbuf_str(b, ", not instrumented");
		return true;
	}
	if (fn) {
		fi_line_veneer(b, "dlsym veneer", addr, entry);
		addr = fn;
	}
	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_fname) {
		if (fn)
			fi_strbuf_hex(b, addr, 1);
		return fn != 0;
	}
	/* An IFUNC's implementation has no dynamic symbol of its own: the
	 * name dlsym was asked for is nearer then. */
	sym = (uint64_t)(uintptr_t)info.dli_saddr;
	name = info.dli_sname;
	if (!name || !sym)
		sym = 0;
	fi_foreign_name_near(addr, sym, &sym, &name);
	if (name && sym) {
		fi_strbuf_str(b, name);
		fi_strbuf_str(b, "+");
		fi_strbuf_hex(b, addr - sym, 1);
	} else {
		fi_strbuf_hex(b, addr, 1);
	}
	fi_line_in(b, info.dli_fname);
	/* kCFI code the runtime rewrote but could not register. */
	fi_strbuf_str(b, fi_rt_rewritten_at(addr) ? ", not registered" :
						    ", not instrumented");
	return true;
}

/*
 * "sym+0xoff" through the module containing @addr, an uninstrumented
 * object's name (above), else "0xaddr"; always "0xaddr" when @bare.
 */
static void fi_line_addr(struct fi_strbuf *b, uint64_t addr, bool bare)
{
	const struct fi_module *m = bare ? NULL : fi_rt_module_at(addr);

	if (!m && !bare && fi_line_foreign(b, addr))
		return;
	fi_report_sym(b, m, addr);
}

/* The expected type by its compile-time hash (report.h). */
static void fi_line_type(struct fi_strbuf *b, const struct fi_trap *t)
{
	struct fi_report_type ty = fi_report_type_of(t->mod, t->type);
	char buf[64];

	fi_report_type_str(&ty, buf, sizeof(buf));
	fi_strbuf_str(b, buf);
}

/*
 * "; mode: <the cfi= list>)": the list of the module that trapped (with
 * seq=v6.18 in that set: the bytes that trapped differ between sets; with
 * warn when it goes on), or the process's for a coarse stop seen from no
 * module.
 */
/* @tail ending in a newline, kept even when the symbols were too long. */
static void fi_line_end(struct fi_strbuf *b, const char *tail)
{
	fi_strbuf_str(b, tail);
	if (b->len && b->buf[b->len - 1] != '\n')
		b->buf[b->len - 1] = '\n';
}

static void fi_line_mode(struct fi_strbuf *b, const struct fi_trap *t,
			 bool bare)
{
	const struct fineibt_config *cfg = t->mod ? &t->mod->cfg :
					   t->kind == FI_TRAP_COARSE ? &fi_rt()->cfg : NULL;
	char mode[64];

	fi_strbuf_str(b, "; mode: ");
	if (cfg) {
		fineibt_config_str(cfg, mode, sizeof(mode));
		fi_strbuf_str(b, mode);
	} else {
		fi_strbuf_str(b, "?");
	}
	if (bare)
		fi_strbuf_str(b, "; small signal stack: no symbols");
	fi_line_end(b, ")\n");
}

/*
 * "fineibt: CFI failure at <where> (target: <what>": the start of the
 * first line and of the "repeated" line (repeat.c).
 */
static void fi_line_where(struct fi_strbuf *b, const struct fi_trap *t,
			  bool bare)
{
	fi_strbuf_str(b, "fineibt: CFI failure at ");
	if (t->kind == FI_TRAP_COARSE && !t->site_known) {
		fi_strbuf_str(b, "a tail jump through a thunk (returning to ");
		fi_line_addr(b, t->ret, bare);
		fi_strbuf_str(b, ")");
	} else if (t->kind == FI_TRAP_COARSE ||
		   /* A stub copy has no symbol of its own (nor would one help). */
		   (bare && t->kind != FI_TRAP_BHI) || !fi_report_at(b, t)) {
		fi_line_addr(b, t->addr, bare);
	}
	fi_strbuf_str(b, " (target: ");
	fi_line_addr(b, t->target, bare);
}

/*
 * The first line: "fineibt: CFI failure at main+0x2a (target: f+0x0;
 * expected type: 0x1234abcd; mode: kcfi)", or for a coarse stop
 * "... (target: work+0x5; unchecked call site, coarse check; mode:
 * kcfi)": no type, there was none to check; a tail jump through a thunk
 * leaves no site, only its caller's return address.
 */
static size_t fi_line_as(const struct fi_trap *t, char *buf, size_t len,
			 bool bare)
{
	struct fi_strbuf b;

	if (!len)
		return 0;
	fi_strbuf_init(&b, buf, len, 0);
	fi_line_where(&b, t, bare);
	if (t->kind == FI_TRAP_COARSE) {
		fi_strbuf_str(&b, "; unchecked call site, coarse check");
	} else {
		fi_strbuf_str(&b, "; expected type: ");
		fi_line_type(&b, t);
	}
	fi_line_mode(&b, t, bare);
	return b.len;
}

size_t fi_report_line(const struct fi_trap *t, char *buf, size_t len)
{
	return fi_line_as(t, buf, len, false);
}

/*
 * The line above and the details of report.c (expected type by example,
 * call site's source line), in one write, so that lines from concurrent
 * traps never interleave. Not inlined: its buffer is not on the stack
 * while the FINEIBT_LOG record is formatted.
 */
static __attribute__((noinline)) void
fi_report_text(const struct fi_trap *t, const struct fi_report_info *ri)
{
	char line[1280];
	size_t n = fi_report_line(t, line, sizeof(line));

	n = fi_report_format(t, ri, line, n, sizeof(line));
	fi_raw_write(STDERR_FILENO, line, n);
	fi_logsink_send(t->warn, line, n);
}

void fi_report_full(const struct fi_trap *t, uint64_t sp)
{
	struct fi_report_info ri;

	fi_report_collect(t, sp, &ri);
	fi_report_text(t, &ri);
	fi_report_log(t, &ri);
}

void fi_report_bare(const struct fi_trap *t)
{
	char line[224];
	size_t n = fi_line_as(t, line, sizeof(line), true);

	fi_raw_write(STDERR_FILENO, line, n);
}

void fi_report_tiny(void)
{
	static const char tiny[] = "fineibt: CFI failure (signal stack too "
				   "small for a report)\n";

	fi_raw_write(STDERR_FILENO, tiny, sizeof(tiny) - 1);
}

void fi_report_opened(const struct fi_trap *t)
{
	char buf[512];
	struct fi_strbuf b;
	uint64_t site = t->addr - (t->kind == FI_TRAP_KCFI ? FI_KCFI_CALLER_UD :
				   FI_PARANOID_UD);

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_str(&b, "fineibt: ");
	fi_line_addr(&b, site, false);
	fi_strbuf_str(&b, ": call site opened for dlsym veneers (target: ");
	fi_line_addr(&b, t->target, false);
	fi_strbuf_str(&b, ")\n");
	fi_raw_write(STDERR_FILENO, buf, b.len);
}

/* "fineibt: CFI failure at 0x<ip> (<what>; not decoded<tail>": no module to name it by. */
static void fi_report_undecoded(uint64_t ip, const char *what, const char *tail)
{
	char buf[200];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_str(&b, "fineibt: CFI failure at ");
	fi_strbuf_hex(&b, ip, 1);
	fi_strbuf_str(&b, " (");
	fi_strbuf_str(&b, what);
	fi_strbuf_str(&b, "; not decoded");
	fi_strbuf_str(&b, tail);
	fi_raw_write(STDERR_FILENO, buf, b.len);
}

void fi_report_unexplained(uint64_t ip)
{
	fi_report_undecoded(ip, "in rewritten code of a module that is not "
			    "registered", ")\n");
}

void fi_report_compiled(uint64_t ip, bool go_on)
{
	fi_report_undecoded(ip, "a kCFI check of a module left as compiled",
			    go_on ? "; warn)\n" : ")\n");
}

void fi_report_nested(const struct fi_trap *t)
{
	char buf[200];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_str(&b, "fineibt: CFI failure at ");
	fi_strbuf_hex(&b, t->addr, 1);
	fi_strbuf_str(&b, " (target: ");
	fi_strbuf_hex(&b, t->target, 1);
	fi_strbuf_str(&b, "; expected type: ");
	fi_line_type(&b, t);
	fi_strbuf_str(&b, t->warn ? "; warn" : "");
	fi_strbuf_str(&b, ") while reporting another: in a function the "
			  "report called (interposed?)\n");
	fi_raw_write(STDERR_FILENO, buf, b.len);
}

/*
 * A failure counted by repeat.c: "fineibt: CFI failure at main+0x69
 * (target: f+0x0) repeated 100 times", with "; caller: <return address>"
 * where the trap is in the target (a preamble or a BHI stub: the same
 * place for every caller), on stderr, the system log and FINEIBT_LOG.
 */
void fi_report_repeat(const struct fi_trap *t, uint64_t caller, uint64_t n,
		      bool bare)
{
	char line[640];
	struct fi_strbuf b;

	fi_strbuf_init(&b, line, sizeof(line), 0);
	fi_line_where(&b, t, bare);
	if (t->kind == FI_TRAP_PREAMBLE || t->kind == FI_TRAP_BHI) {
		fi_strbuf_str(&b, "; caller: ");
		fi_line_addr(&b, caller, bare);
	}
	fi_strbuf_str(&b, ") repeated ");
	fi_strbuf_dec(&b, n, 1);
	fi_line_end(&b, " times\n");
	fi_raw_write(STDERR_FILENO, line, b.len);
	if (bare)
		return;
	fi_logsink_send(t->warn, line, b.len);
	fi_report_log_repeat(t, caller, n);
}

void fi_report_compiled_repeat(uint64_t ip, uint64_t n)
{
	char buf[200];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_str(&b, "fineibt: CFI failure at ");
	fi_strbuf_hex(&b, ip, 1);
	fi_strbuf_str(&b, " (a kCFI check of a module left as compiled; "
			  "not decoded; warn) repeated ");
	fi_strbuf_dec(&b, n, 1);
	fi_strbuf_str(&b, " times\n");
	fi_raw_write(STDERR_FILENO, buf, b.len);
}
