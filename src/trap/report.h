/* SPDX-License-Identifier: MIT */
/*
 * What the CFI failure report says beyond its first line (src/trap/report.c):
 * the expected type named by example ("as in: cmp_int, cmp_long"), the
 * call site's source position from DWARF (src/trap/dwline.c), and the optional
 * FINEIBT_LOG record (one JSON line per failure). Everything here runs in
 * the SIGILL handler: no allocation, no lock, no stdio.
 */
#ifndef FI_REPORT_H
#define FI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "trapinfo.h"

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
