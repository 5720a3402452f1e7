/* SPDX-License-Identifier: MIT */
/*
 * The CFI failure report (docs/traps.md), all of its text: the first line
 * and the handler's other one-line messages (src/trap/reportline.c); what
 * the report says beyond its first line (src/trap/report.c): the expected
 * type named by example ("as in: cmp_int, cmp_long"), the call site's
 * source position from DWARF (src/trap/dwline.c), and the optional
 * FINEIBT_LOG record (one JSON line per failure). Everything here runs in
 * the SIGILL handler: no allocation, no lock, no stdio; text is built
 * with core/strbuf.h.
 */
#ifndef FI_REPORT_H
#define FI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "strbuf.h"
#include "trapinfo.h"

/* ------------------------------------------ reportline.c: one line */

/*
 * Format @t as the one-line report, with a trailing newline:
 * "fineibt: CFI failure at main+0x2a (target: handler+0x0; expected type:
 * 0x1234abcd; mode: fineibt,paranoid)": the expected type by its
 * compile-time hash (its run-time hash too under cfi=debug), the cfi=
 * list of the module that trapped (",warn" when the program goes on,
 * ",seq=v6.18" in that set). Returns the length (truncated to @len - 1,
 * NUL-terminated). Async-signal-safe.
 */
size_t fi_report_line(const struct fi_trap *t, char *buf, size_t len);

/*
 * The report of @t on stderr, in one write each (@sp: the stack pointer
 * at the trap), by the stack the handler has left (trap.h,
 * FI_TRAP_STACK_*): the full report (the first line, the detail lines
 * below, the system log, the FINEIBT_LOG record); the first line alone
 * with addresses in hex ("; small signal stack: no symbols"); a fixed
 * line.
 */
void fi_report_full(const struct fi_trap *t, uint64_t sp);
void fi_report_bare(const struct fi_trap *t);
void fi_report_tiny(void);

/* FINEIBT_VERBOSE: "fineibt: call_d+0xf: call site opened for dlsym
 * veneers (target: ...)" (foreign.c opened the site). */
void fi_report_opened(const struct fi_trap *t);
/* A #UD in rewritten code no registered module covers: not decoded. */
void fi_report_unexplained(uint64_t ip);
/* A check of a module left as compiled; @go_on: warn or off. */
void fi_report_compiled(uint64_t ip, bool go_on);
/* A trap inside the report of another (hex only, no report path). */
void fi_report_nested(const struct fi_trap *t);
/*
 * cfi=warn, a failure counted @n times (trap/repeat.c, fi_repeat_due):
 * "fineibt: CFI failure at <where> (target: <what>) repeated N times",
 * "; caller: <@caller>" before the ")" for a trap in the target (preamble,
 * BHI stub). Addresses in hex and stderr only when @bare (small stack).
 */
void fi_report_repeat(const struct fi_trap *t, uint64_t caller, uint64_t n,
		      bool bare);
/* The same for a check of a module left as compiled (its address only). */
void fi_report_compiled_repeat(uint64_t ip, uint64_t n);

/* --------------------------------------------- report.c: the details */

/*
 * "sym+0xoff" of run-time @addr through module @m (NULL: none), else
 * "0xaddr".
 */
void fi_report_sym(struct fi_strbuf *b, const struct fi_module *m,
		   uint64_t addr);
/*
 * Where @t trapped when the trap site itself reads badly: a stub copy
 * as "__bhi_args+0x<off>", a FineIBT preamble as "__cfi_<callee>+0x<off>"
 * (as the kernel names it; the readers keep __cfi_ symbols out of the
 * symbol table). False, and nothing appended, for any other trap.
 */
bool fi_report_at(struct fi_strbuf *b, const struct fi_trap *t);

#define FI_REPORT_NAMES	3
#define FI_REPORT_PROTO	200

/*
 * A type as a report names it: the compile-time kCFI hash (the same in
 * every process and on every machine: what a fleet groups failures by),
 * and the run-time hash the check compared.
 */
struct fi_report_type {
	uint32_t ct;		/* compile-time hash */
	uint32_t rt;		/* run-time hash (shown only with cfi=debug) */
	bool known;		/* ct is rt's preimage (false: rt is no rehash) */
};

/*
 * Name run-time hash @rt of a check in module @m (NULL: the process's
 * key) by its compile-time hash: the inverse of the keyed rehash under
 * the key @m's sites were rehashed with (docs/traps.md, "Types in
 * reports"). Async-signal-safe, no memory read but the sealed state.
 */
struct fi_report_type fi_report_type_of(const struct fi_module *m, uint32_t rt);

/*
 * Whether reports also show run-time hashes: only under cfi=debug, and
 * never in a privileged (AT_SECURE) process (a compile-time/run-time pair
 * is what a search for the key starts from).
 */
bool fi_report_show_runtime(void);

/*
 * "0x<ct>", or with run-time hashes shown "0x<ct> (run-time 0x<rt>)"; a
 * value that is no rehash of any type: "0x<rt> (no type of this
 * process)". Into @buf (at most @len - 1 bytes, NUL-ended); its length.
 */
size_t fi_report_type_str(const struct fi_report_type *ty, char *buf,
			  size_t len);

struct fi_report_info {
	/* Up to three other functions whose run-time hash is the expected one. */
	const char *as_in[FI_REPORT_NAMES];
	size_t nas_in;
	/* The type in the target's preamble, when it has one. */
	bool have_found;
	struct fi_report_type found;
	/* The type the caller expected (the trap's run-time t->type). */
	struct fi_report_type expected;
	/* The call site (run-time; 0 if unknown) and its source position. */
	uint64_t site;
	char file[192];		/* empty if no DWARF line for the site */
	unsigned int line;
	/*
	 * From .debug_info (empty if none): the target's prototype and that
	 * of the first "as in" function, i.e. of the type the caller wanted.
	 */
	char target_proto[FI_REPORT_PROTO];
	char expected_proto[FI_REPORT_PROTO];
};

/*
 * Gather what the report needs for trap @t; @sp is the stack pointer at
 * the trap (a FineIBT preamble or BHI trap finds its caller from the
 * return address there). Async-signal-safe.
 */
void fi_report_collect(const struct fi_trap *t, uint64_t sp,
		       struct fi_report_info *ri);

/*
 * Append the detail lines ("fineibt:   expected type 0x<compile-time
 * hash>, as in: a, b";
 * with DWARF: "fineibt:   call site: file.c:42 (main+0x1c)", "fineibt:
 * target: int f(void *)", "fineibt:   expected: int g(struct s *)") for
 * @ri to @buf, which
 * holds @used bytes of @len; returns the new length. Lines are only
 * written when there is something to say. Async-signal-safe.
 */
size_t fi_report_format(const struct fi_trap *t, const struct fi_report_info *ri,
			char *buf, size_t used, size_t len);

/*
 * Append one JSON line for the failure to the FINEIBT_LOG file opened at
 * start-up (nothing if none), with one non-blocking write. Async-signal-safe.
 */
void fi_report_log(const struct fi_trap *t, const struct fi_report_info *ri);

/*
 * The FINEIBT_LOG record's "version" (docs/traps.md): 2 names types by
 * their compile-time hash ("expected", "found"; "*_runtime" only with
 * cfi=debug) and modes by their cfi= words. Version 1 (no field) named
 * them by the run-time hash and "paranoid+bhi"-style names.
 */
#define FI_REPORT_JSON_VERSION	"2"

/* Format the JSON record into @buf (for tests); returns its length. */
size_t fi_report_json(const struct fi_trap *t, const struct fi_report_info *ri,
		      char *buf, size_t len);

/*
 * The record of a repeat (fi_report_repeat): the same head ("version" to
 * "kind"), "at", "target", "caller" for a trap in the target or a coarse stop
 * of a tail jump (its return address, as "at" is the same for every
 * caller there), then
 * "repeated":N and "action":"warn". Into @buf; its length (0: no room).
 * fi_report_log_repeat() appends it to the FINEIBT_LOG file.
 */
size_t fi_report_json_repeat(const struct fi_trap *t, uint64_t caller,
			     uint64_t n, char *buf, size_t len);
void fi_report_log_repeat(const struct fi_trap *t, uint64_t caller, uint64_t n);

/*
 * Names of up to @max functions of registered modules whose preamble now
 * holds run-time hash @hash, skipping the function at run-time @skip.
 */
size_t fi_report_as_in(uint32_t hash, uint64_t skip, const char **names,
		       size_t max);

/*
 * The source position of link-time @addr in image @im from its
 * .debug_line (DWARF 2..5), into @file (path as the line table names it)
 * and @line. Reads only @im->file; no allocation. Returns 0, -ENOENT (no
 * line table or no row for @addr) or -EINVAL (a table it cannot read).
 */
int fi_dwarf_line(const struct fi_image *im, uint64_t addr, char *file,
		  size_t flen, unsigned int *line);

/*
 * The C prototype of the function at link-time @addr of image @im, from
 * the DW_TAG_subprogram of its .debug_info (DWARF 4/5) whose low_pc is
 * @addr: "int cmp(const void *, const void *)" into @buf (cut to @len).
 * Reads only @im->file (or the file mapped); no allocation. Returns 0,
 * -ENOENT (no DWARF or no such function) or -EINVAL (unreadable DWARF).
 */
int fi_dwarf_proto(const struct fi_image *im, uint64_t addr, char *buf,
		   size_t len);


#endif /* FI_REPORT_H */
