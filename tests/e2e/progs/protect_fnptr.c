// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_fnptr.sh: no code pointer in libfineibt's writable
 * memory once the process runs (docs/protection.md). Built with fineibt-cc, shared
 * runtime or -static-fineibt.
 *
 *   protect_fnptr scan [LIB]   after start-up, dlopen LIB and a call into
 *                    it, a call through dlsym's veneer for strlen, a
 *                    library message through the default print hook
 *                    and one through a hook of our own (set and restored),
 *                    scan the writable part of the object that holds
 *                    libfineibt (libfineibt.so, or this executable with
 *                    -static-fineibt)
 *   protect_fnptr scan-exe [LIB]  the same, scanning this executable
 *                    (-static-fineibt: LIB built without it loads
 *                    libfineibt.so as well, which "scan" would find)
 *   protect_fnptr scan-audit [LIB]  the same exercise, then scan
 *                    libfineibt_audit.so, the LD_AUDIT library `fineibt
 *                    run` loads (ld.so calls into it at every dlopen);
 *                    built -DFNPTR_STOCK by stock clang (no fineibt API
 *                    calls), as `fineibt run` adds the audit library only
 *                    to programs without the runtime
 *   protect_fnptr control      scan this executable, which holds a planted
 *                    code pointer (the scanner's own check)
 *   protect_fnptr scan-beyond [LIB]  the same exercise, then every word of
 *                    the whole writable mappings that hold libfineibt.so's
 *                    writable segment, past the segment's end too (the
 *                    kernel merges the next anonymous mapping into its .bss:
 *                    docs/protection.md, "What stays writable"). A hit past the end is printed as
 *                      beyond 0xADDR -> WHAT
 *                    WHAT: "entry NAME" (the value is the entry point of a
 *                    loaded module: ld.so's record of it), "string 'S'" (a
 *                    NUL-terminated name in the vDSO: ld.so's record of
 *                    the vDSO's version), or "unexplained"
 *
 * The scan: every PT_LOAD segment with PF_W of the object, as far as
 * /proc/self/maps shows it writable now (RELRO pages are read-only by
 * then); every aligned 8-byte word whose value lies in an executable
 * mapping is printed as
 *   hit 0xVADDR -> NAME
 * with VADDR the link-time address of the word (for llvm-nm) and NAME the
 * file of the mapping pointed into. Then "object PATH" and "scanned N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FNPTR_STOCK
#include "fineibt.h"
#endif

#define MAX_MAPS 4096

struct map {
	uintptr_t lo, hi;
	char perms[8];
	char name[256];
};

/* On the heap: the scanner's own data must not sit in the scanned
 * executable (-static-fineibt). */
static struct map *maps;
static size_t nmaps;

static void planted_fn(void)
{
}

/* The control's code pointer in writable data: the scan must find it. */
void (*volatile planted)(void) = planted_fn;

static int read_maps(void)
{
	char line[4608];
	FILE *f = fopen("/proc/self/maps", "r");

	maps = calloc(MAX_MAPS, sizeof(*maps));
	if (!f || !maps)
		return -1;
	while (nmaps < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct map *m = &maps[nmaps];

		m->name[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &m->lo, &m->hi,
			   m->perms, m->name) >= 3)
			nmaps++;
	}
	fclose(f);
	return 0;
}

static const struct map *exec_map(uintptr_t v)
{
	for (size_t i = 0; i < nmaps; i++) {
		if (maps[i].perms[2] == 'x' && v >= maps[i].lo && v < maps[i].hi)
			return &maps[i];
	}
	return NULL;
}

struct target {
	uintptr_t addr;			/* an address inside the object, or 0: */
	const char *name;		/* the object whose path holds this */
	const struct dl_phdr_info *info;
	struct dl_phdr_info copy;
	char path[4096];
};

static int find_obj(struct dl_phdr_info *info, size_t size, void *data)
{
	struct target *t = data;

	if (t->name) {
		if (!info->dlpi_name || !strstr(info->dlpi_name, t->name))
			return 0;
		t->copy = *info;
		t->info = &t->copy;
		snprintf(t->path, sizeof(t->path), "%s", info->dlpi_name);
		return 1;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && t->addr >= lo && t->addr < lo + ph->p_memsz) {
			t->copy = *info;
			t->info = &t->copy;
			snprintf(t->path, sizeof(t->path), "%s", info->dlpi_name);
			return 1;
		}
	}
	return 0;
}

/*
 * An object of another link-map namespace (LD_AUDIT libraries), which
 * dl_iterate_phdr does not show: its lowest mapping by path is its ELF
 * header, whose program headers are in memory too.
 */
static int find_mapped(struct target *t)
{
	size_t n = strlen(t->name);
	const ElfW(Ehdr) *eh;

	for (size_t i = 0; i < nmaps; i++) {
		size_t l = strlen(maps[i].name);

		if (l < n || strcmp(maps[i].name + l - n, t->name))
			continue;
		eh = (const ElfW(Ehdr) *)maps[i].lo;
		if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
			return 0;
		t->copy.dlpi_addr = maps[i].lo;
		t->copy.dlpi_phdr = (const ElfW(Phdr) *)(maps[i].lo + eh->e_phoff);
		t->copy.dlpi_phnum = eh->e_phnum;
		t->info = &t->copy;
		snprintf(t->path, sizeof(t->path), "%s", maps[i].name);
		return 1;
	}
	return 0;
}

/* Words of [lo, hi) (writable now) that point into executable code. */
static size_t scan_range(const struct target *t, uintptr_t lo, uintptr_t hi)
{
	size_t n = 0;

	lo = (lo + 7) & ~(uintptr_t)7;
	for (uintptr_t p = lo; p + 8 <= hi; p += 8) {
		uintptr_t v = *(const volatile uintptr_t *)p;
		const struct map *m = v ? exec_map(v) : NULL;

		if (m)
			printf("hit 0x%lx -> %s\n",
			       (unsigned long)(p - t->info->dlpi_addr),
			       m->name[0] ? m->name : "[anon]");
		n += 8;
	}
	return n;
}

/* A module's entry point (e_entry + load address), by name; 0 if none. */
struct entry_find {
	uintptr_t value;
	char name[256];
};

static int entry_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct entry_find *e = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const ElfW(Ehdr) *eh;

		if (ph->p_type != PT_LOAD || ph->p_offset)
			continue;
		eh = (const ElfW(Ehdr) *)(info->dlpi_addr + ph->p_vaddr);
		if (eh->e_entry && info->dlpi_addr + eh->e_entry == e->value) {
			snprintf(e->name, sizeof(e->name), "%s",
				 info->dlpi_name && *info->dlpi_name ?
				 info->dlpi_name : "[exe]");
			return 1;
		}
		break;
	}
	return 0;
}

/* What a word past libfineibt's segment that points into code is. */
static void explain(uintptr_t at, uintptr_t v, const struct map *m)
{
	struct entry_find e = { .value = v };
	const char *s = (const char *)v;
	size_t n = 0;

	if (dl_iterate_phdr(entry_cb, &e)) {
		printf("beyond 0x%lx -> entry %s\n", (unsigned long)at, e.name);
		return;
	}
	if (!strcmp(m->name, "[vdso]")) {
		while (v + n < m->hi && n < 64 && s[n] >= 0x20 && s[n] < 0x7f)
			n++;
		if (n && v + n < m->hi && !s[n]) {
			printf("beyond 0x%lx -> string '%.*s'\n", (unsigned long)at,
			       (int)n, s);
			return;
		}
	}
	printf("beyond 0x%lx -> unexplained (%s+0x%lx)\n", (unsigned long)at,
	       m->name[0] ? m->name : "[anon]", (unsigned long)(v - m->lo));
}

/*
 * The whole of writable mapping @m that holds part of [@lo, @hi) (the
 * object's writable segment): inside the segment as scan_range does, past
 * it explained.
 */
static size_t scan_whole(const struct target *t, const struct map *mp,
			 uintptr_t lo, uintptr_t hi)
{
	size_t n = 0;

	for (uintptr_t p = mp->lo; p + 8 <= mp->hi; p += 8) {
		uintptr_t v = *(const volatile uintptr_t *)p;
		const struct map *m = v ? exec_map(v) : NULL;

		n += 8;
		if (!m)
			continue;
		if (p >= lo && p < hi)
			printf("hit 0x%lx -> %s\n",
			       (unsigned long)(p - t->info->dlpi_addr),
			       m->name[0] ? m->name : "[anon]");
		else
			explain(p, v, m);
	}
	return n;
}

/* @beyond: the whole mappings (scan_whole), not only the segment. */
static int scan(uintptr_t inside, const char *name, bool beyond)
{
	struct target t = { .name = name };
	size_t scanned = 0;

	if (read_maps())
		return 2;
	/* libfineibt.so if loaded, else (-static-fineibt) what holds @inside. */
	if (!inside && !dl_iterate_phdr(find_obj, &t) && !find_mapped(&t)) {
		t.name = NULL;
		t.addr = (uintptr_t)&planted;
	} else if (inside) {
		t.name = NULL;
		t.addr = inside;
	}
	if (!t.info && !dl_iterate_phdr(find_obj, &t)) {
		printf("cannot find the object\n");
		return 2;
	}
	for (int i = 0; i < t.info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &t.info->dlpi_phdr[i];
		uintptr_t lo = t.info->dlpi_addr + ph->p_vaddr;
		uintptr_t hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		for (size_t j = 0; j < nmaps; j++) {
			uintptr_t a = maps[j].lo > lo ? maps[j].lo : lo;
			uintptr_t b = maps[j].hi < hi ? maps[j].hi : hi;

			if (beyond) {
				if (maps[j].perms[1] == 'w' && maps[j].hi > lo &&
				    maps[j].lo < ((hi + 4095) & ~(uintptr_t)4095))
					scanned += scan_whole(&t, &maps[j], lo, hi);
				continue;
			}

			if (a < b && maps[j].perms[1] == 'w')
				scanned += scan_range(&t, a, b);
		}
	}
	printf("object %s\n", t.path[0] ? t.path : "[exe]");
	printf("scanned %zu\n", scanned);
	return 0;
}

#ifndef FNPTR_STOCK
static char hook_buf[256];

static int own_hook(enum fineibt_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vsnprintf(hook_buf, sizeof(hook_buf), fmt, ap);
}

/* Library messages through the default print hook and our own. */
static int messages(void)
{
	struct fineibt_config cfg;
	fineibt_print_fn old;

	/* A library message through the default hook (stderr)... */
	fineibt_parse_cfi("fnptr-scan-default", false, &cfg, NULL, 0);
	/* ...and through the program's own, then the default again. */
	old = fineibt_set_print(own_hook);
	fineibt_parse_cfi("fnptr-scan-own", false, &cfg, NULL, 0);
	fineibt_set_print(old);
	if (!strstr(hook_buf, "fnptr-scan-own")) {
		printf("own print hook not called\n");
		return 2;
	}
	fineibt_parse_cfi("fnptr-scan-restored", false, &cfg, NULL, 0);
	return 0;
}

#else
static int messages(void)
{
	return 0;
}
#endif

static void fnptr_on_sig(int sig)
{
	(void)sig;
}

static void fnptr_on_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

/*
 * Every way a program installs a SIGILL handler: the runtime records it
 * (its state, read-only) and must leave no copy of it, or of libc's
 * entry points, in its writable memory.
 */
static int handlers(void)
{
	struct sigaction sa = { .sa_sigaction = fnptr_on_info,
				.sa_flags = SA_SIGINFO }, old;

	if (signal(SIGILL, fnptr_on_sig) == SIG_ERR ||
	    sigaction(SIGILL, &sa, &old) ||
	    sigset(SIGILL, fnptr_on_sig) == SIG_ERR ||
	    signal(SIGUSR1, fnptr_on_sig) == SIG_ERR ||
	    sigaction(SIGILL, &old, NULL)) {
		printf("signal handlers failed\n");
		return 2;
	}
	return 0;
}

/* Paths that used to leave code pointers behind: dlopen, messages,
 * signal handlers. */
static int exercise(const char *lib, bool veneer)
{
	if (handlers())
		return 2;
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW);
		long (*apply)(int, long) = h ? (long (*)(int, long))dlsym(h, "pl_apply") : NULL;

		if (!apply || apply(0, 21) != 42) {
			printf("dlopen/call failed\n");
			return 2;
		}
	}
	/* A dlsym veneer for a libc function, called through the pointer:
	 * checking modes open the call site (foreign.c's stub pages).
	 * Shared runtime only: -static-fineibt does not interpose dlsym. */
	if (veneer) {
		size_t (*sl)(const char *) =
			(size_t (*)(const char *))dlsym(RTLD_DEFAULT, "strlen");

		if (!sl || sl("four") != 4 || sl("fours") != 5) {
			printf("dlsym veneer failed\n");
			return 2;
		}
	}
	return messages();
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "control"))
		return scan((uintptr_t)&planted, NULL, false);
	if (strcmp(cmd, "scan") && strcmp(cmd, "scan-exe") &&
	    strcmp(cmd, "scan-audit") && strcmp(cmd, "scan-beyond")) {
		fprintf(stderr, "usage: protect_fnptr scan|scan-exe|scan-audit|scan-beyond [LIB] | control\n");
		return 2;
	}
	rc = exercise(argc > 2 ? argv[2] : NULL, strcmp(cmd, "scan-exe"));
	if (rc)
		return rc;
	if (!strcmp(cmd, "scan-audit"))
		return scan(0, "/libfineibt_audit.so", false);
	return scan(strcmp(cmd, "scan-exe") ? 0 : (uintptr_t)&planted,
		    "/libfineibt.so", !strcmp(cmd, "scan-beyond"));
}
