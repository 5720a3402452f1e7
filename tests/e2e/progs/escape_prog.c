// SPDX-License-Identifier: MIT
/*
 * End-to-end program of tests/e2e/escape_*.sh (docs/protection.md), built with
 * fineibt-cc:
 *
 *   escape_prog race LIB N   dlopen/el_apply/dlclose LIB N times while a
 *                       writer thread hammers, with process_vm_writev,
 *                       every anonymous read-write mapping of the size of
 *                       LIB's text (the runtime's scratch copy while it is
 *                       patched) with "mov $1337, %eax; ret" at every 16
 *                       bytes. Prints "injected" and exits 1 as soon as
 *                       el_apply returns 1337; else "race ok N hits H"
 *                       (H: writes that landed in some mapping)
 *   escape_prog mapfull LIB  dlopen LIB, fill the process's map count
 *                       while a thread takes every slot that frees up,
 *                       open and close 300 write windows of the state
 *                       (sigaction(SIGILL)); then no object of the state
 *                       or the arena is writable ("writable NAME", exit 1)
 *                       ("mapfull ok"), and a confused call in LIB as
 *                       jitfull
 *   escape_prog jitfull LIB  register JIT regions until the runtime says
 *                       no ("jit N"), then dlopen LIB, a legal call
 *                       ("dl ok") and a confused call ("survived")
 *                       with a SIGILL handler of its own installed (which
 *                       prints "program handler" and exits 3)
 *   escape_prog modfull LIB... dlopen every LIB ("loaded N"), a legal
 *                       call into the last ("dl ok"), then a confused call
 *                       in it ("survived")
 *   escape_prog coarse LIB...  dlopen every LIB ("loaded N"), then two
 *                       calls without a kCFI check (through an
 *                       unprototyped pointer: the coarse check) into the
 *                       last: to a static function whose address escapes
 *                       ("entry 42"), then to the middle of a function
 *                       ("mid ran 7": the check let it through)
 *   escape_prog forged PLAIN   an uninstrumented library's link_map
 *                       forged (its l_addr moved so that its symbol
 *                       table names the middle of a function as its
 *                       export plain_entry), then a call without a kCFI
 *                       check there: "forged ran 7" when the SIGILL
 *                       handler's exemption for exports let it through
 *                       (a control call of the real export first:
 *                       "entry 5")
 *   escape_prog dlsymforged PLAIN  the same forged l_addr, only around
 *                       a dlsym of plain_entry from this kCFI program,
 *                       then a call of another type through the answer:
 *                       "forged ran 7" when libc's moved answer got a
 *                       dlsym veneer (valid for every type); a control
 *                       dlsym and call first ("entry 5"); then the
 *                       answer moved into libc (inside labs, no export
 *                       there): "cross plain", or "cross veneer" when
 *                       it got one
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fineibt.h"

#define MAX_CAND 64

typedef long (*apply_t)(int, long);
typedef long (*confused_t)(long);

static volatile int stop;
static size_t text_size;
static unsigned long hits;

/*
 * The page-rounded size of LIB's executable segment (the one holding
 * el_apply), from its program headers: the size of the runtime's scratch
 * copy when it copies the segment whole, as it does with another thread
 * present (the writer). A load with no other thread copies only the pages
 * holding sites (docs/runtime.md), so the mapping's size would not do.
 */
struct text_find {
	unsigned long at;
	size_t size;
};

static int text_cb(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct text_find *t = arg;

	(void)sz;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		unsigned long lo = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) ||
		    t->at < lo || t->at >= lo + p->p_memsz)
			continue;
		t->size = ((lo + p->p_memsz + 4095) & ~4095UL) - (lo & ~4095UL);
		return 1;
	}
	return 0;
}

static size_t lib_text_size(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	struct text_find t = { 0, 0 };

	t.at = h ? (unsigned long)dlsym(h, "el_apply") : 0;
	if (t.at)
		dl_iterate_phdr(text_cb, &t);
	if (h)
		dlclose(h);
	return t.size;
}

/*
 * Add the anonymous rw mappings of the text's size (candidates for the
 * copy) to @out, which keeps every one ever seen: the next copy tends to
 * be mapped where the last one was.
 */
static size_t candidates(unsigned long *out, size_t n)
{
	char line[512], perms[8];
	unsigned long lo, hi, ino;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && n < MAX_CAND && fgets(line, sizeof(line), f)) {
		size_t k;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &lo, &hi, perms,
			   &ino) != 4 || ino || strcmp(perms, "rw-p") ||
		    hi - lo != text_size || strchr(line, '['))
			continue;
		for (k = 0; k < n && out[k] != lo; k++)
			;
		if (k == n)
			out[n++] = lo;
	}
	if (f)
		fclose(f);
	return n;
}

static void *writer(void *arg)
{
	unsigned long cand[MAX_CAND];
	uint8_t *payload = arg;
	size_t n = 0;

	while (!stop) {
		n = candidates(cand, n);
		/* Rescanning is slow: hammer what was found meanwhile. */
		for (int round = 0; round < 500 && !stop; round++) {
			for (size_t i = 0; i < n; i++) {
				struct iovec l = { payload, text_size };
				struct iovec r = { (void *)cand[i], text_size };

				if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) > 0)
					__atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
			}
		}
	}
	return NULL;
}

static int do_race(const char *lib, int n)
{
	static const uint8_t blk[16] = { 0xb8, 0x39, 0x05, 0x00, 0x00, 0xc3,
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc };
	uint8_t *payload;
	pthread_t t;

	text_size = lib_text_size(lib);
	if (!text_size || !(payload = malloc(text_size))) {
		printf("no text size for %s\n", lib);
		return 2;
	}
	for (size_t i = 0; i < text_size; i += 16)
		memcpy(payload + i, blk, 16);
	pthread_create(&t, NULL, writer, payload);
	for (int i = 0; i < n; i++) {
		void *h = dlopen(lib, RTLD_NOW);
		apply_t apply = h ? (apply_t)dlsym(h, "el_apply") : NULL;
		long v;

		if (!apply) {
			printf("dlopen failed: %s\n", dlerror());
			return 2;
		}
		v = apply(0, 21);
		if (v == 1337) {
			printf("injected at round %d\n", i);
			fflush(stdout);
			_exit(1);
		}
		if (v != 42) {
			printf("wrong result %ld at round %d\n", v, i);
			return 2;
		}
		dlclose(h);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("race ok %d hits %lu\n", n, hits);
	return 0;
}

/* The program's own SIGILL handler: a CFI trap must never reach it. */
static void own_sigill(int sig)
{
	static const char msg[] = "program handler\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

static int call_lib(void *h)
{
	apply_t apply = h ? (apply_t)dlsym(h, "el_apply") : NULL;
	confused_t confused = h ? (confused_t)dlsym(h, "el_confused") : NULL;

	if (!apply || !confused || apply(0, 21) != 42) {
		printf("dl failed: %s\n", h ? "symbols" : dlerror());
		return 2;
	}
	printf("dl ok\n");
	fflush(stdout);
	signal(SIGILL, own_sigill);
	confused(1);
	printf("survived\n");
	return 0;
}

/* ------------------------------------------------ map count exhaustion */

/* Test-only (tests/lib/rtdebug.c): in the test build of the runtime only
 * ($(BUILD)/testlib, LD_LIBRARY_PATH); weak: see mapfull. */
const void *fineibt_debug_object(const char *name) __attribute__((weak));

static volatile int eat_stop;

/* Takes every mapping slot that frees up, as a benign busy thread may. */
static void *eater(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!eat_stop) {
		if (mmap(NULL, 4096, (n & 1) ? PROT_READ : PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
			n++;
		else
			sched_yield();
	}
	return NULL;
}

static bool writable(const char *name)
{
	const uint8_t *p = fineibt_debug_object(name);
	struct iovec l, r;
	uint8_t b;

	if (!p)
		return true;
	b = *p;
	l = (struct iovec){ &b, 1 };
	r = (struct iovec){ (void *)p, 1 };
	return process_vm_writev(getpid(), &l, 1, &r, 1, 0) == 1;
}

static int do_mapfull(const char *lib)
{
	static const char *const objs[] = { "flags", "mods", "sigill", "arena",
					    "module_flags", "module_traps" };
	struct sigaction sa = { .sa_handler = own_sigill };
	void *h = dlopen(lib, RTLD_NOW);
	unsigned long n = 0;
	pthread_t t;
	int bad = 0;

	if (!h || !dlsym(RTLD_DEFAULT, "fineibt_debug_object")) {
		printf("setup failed\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	pthread_create(&t, NULL, eater, NULL);
	while (mmap(NULL, 4096, (n & 1) ? PROT_READ : PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
		n++;
	/* Each sigaction(SIGILL) opens and closes a window of the state. */
	for (int i = 0; i < 300; i++)
		sigaction(SIGILL, &sa, NULL);
	eat_stop = 1;
	pthread_join(t, NULL);
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		if (writable(objs[i])) {
			printf("writable %s\n", objs[i]);
			bad++;
		}
	}
	if (bad)
		return 1;
	printf("mapfull ok\n");
	return call_lib(h);
}

static int do_jitfull(const char *lib)
{
	size_t len = 64, max = 4096, n = 0;
	uint8_t *code = mmap(NULL, max * len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		return 2;
	memset(code, 0xcc, max * len);
	mprotect(code, max * len, PROT_READ | PROT_EXEC);
	while (n < max && fineibt_jit_register(code + n * len, len) == 0)
		n++;
	printf("jit %zu\n", n);
	return call_lib(dlopen(lib, RTLD_NOW));
}

static int do_modfull(int n, char **libs)
{
	void *h = NULL;
	int i;

	for (i = 0; i < n; i++) {
		h = dlopen(libs[i], RTLD_NOW);
		if (!h) {
			printf("dlopen %s: %s\n", libs[i], dlerror());
			return 2;
		}
	}
	printf("loaded %d\n", n);
	return call_lib(h);
}

typedef long Function ();
typedef void *(*getter_t)(void);

static int do_coarse(int n, char **libs)
{
	getter_t entry, mid;
	Function *f;
	void *h = NULL;

	for (int i = 0; i < n; i++) {
		h = dlopen(libs[i], RTLD_NOW);
		if (!h) {
			printf("dlopen %s: %s\n", libs[i], dlerror());
			return 2;
		}
	}
	printf("loaded %d\n", n);
	entry = (getter_t)dlsym(h, "el_entry");
	mid = (getter_t)dlsym(h, "el_mid");
	if (!entry || !mid) {
		printf("dl failed: symbols\n");
		return 2;
	}
	f = (Function *)entry();
	printf("entry %ld\n", f(21L));
	f = (Function *)mid();
	printf("mid ran %ld\n", f());
	return 0;
}

static int do_forged(const char *plain)
{
	void *h = dlopen(plain, RTLD_NOW);
	getter_t entry, mid;
	struct link_map *lm = NULL;
	char *e, *m;
	Function *f;

	entry = h ? (getter_t)dlsym(h, "plain_entry_addr") : NULL;
	mid = h ? (getter_t)dlsym(h, "plain_mid_addr") : NULL;
	if (!entry || !mid || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm) {
		printf("dl failed\n");
		return 2;
	}
	e = entry();
	m = mid();
	f = (Function *)e;
	printf("entry %ld\n", f());
	/* The write primitive: one word of the loader's heap. */
	lm->l_addr += (ElfW(Addr))(m - e);
	f = (Function *)m;
	printf("forged ran %ld\n", f());
	lm->l_addr -= (ElfW(Addr))(m - e);
	return 0;
}

/* A type plain_entry does not have: only a veneer lets the call pass. */
typedef long (*confused_dl_t)(const char *, int);

static int do_dlsym_forged(const char *plain)
{
	void *h = dlopen(plain, RTLD_NOW);
	getter_t entry, mid, labs_at;
	struct link_map *lm = NULL;
	confused_dl_t f;
	char *in_libc;
	ElfW(Addr) d;

	entry = h ? (getter_t)dlsym(h, "plain_entry_addr") : NULL;
	mid = h ? (getter_t)dlsym(h, "plain_mid_addr") : NULL;
	if (!entry || !mid || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm) {
		printf("dl failed\n");
		return 2;
	}
	d = (ElfW(Addr))((char *)mid() - (char *)entry());
	f = (confused_dl_t)dlsym(h, "plain_entry");
	printf("entry %ld\n", f ? f("x", 1) : -1L);
	/* Into another object: dladdr names no export there. */
	labs_at = h ? (getter_t)dlsym(h, "plain_labs_addr") : NULL;
	if (!labs_at) {
		printf("dl failed\n");
		return 2;
	}
	in_libc = (char *)labs_at() + 4;
	lm->l_addr += (ElfW(Addr))(in_libc - (char *)entry());
	f = (confused_dl_t)dlsym(h, "plain_entry");
	lm->l_addr -= (ElfW(Addr))(in_libc - (char *)entry());
	printf("cross %s\n", (char *)f == in_libc ? "plain" : "veneer");
	/* The write primitive: one word of the loader's heap, moved for
	 * the lookup only. */
	lm->l_addr += d;
	f = (confused_dl_t)dlsym(h, "plain_entry");
	lm->l_addr -= d;
	printf("forged ran %ld\n", f ? f("x", 1) : -1L);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "race"))
		return do_race(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "mapfull"))
		return do_mapfull(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "jitfull"))
		return do_jitfull(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "modfull"))
		return do_modfull(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "coarse"))
		return do_coarse(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "forged"))
		return do_forged(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "dlsymforged"))
		return do_dlsym_forged(argv[2]);
	fprintf(stderr, "usage: escape_prog race LIB N | jitfull LIB | modfull LIB... | coarse LIB... | forged PLAIN | dlsymforged PLAIN\n");
	return 2;
}
