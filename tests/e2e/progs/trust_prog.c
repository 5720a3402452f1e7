// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_trust.sh's program (docs/protection.md, "Writing the state
 * through the kernel"): an attacker thread that
 * knows every address of the runtime's trusted memory writes into it, at
 * leisure, while the runtime's writer is parked inside each of its windows
 * and checks (the test build's hook, tests/lib/rtdebug.c). Built with
 * fineibt-cc, with -I for src/rt (struct layouts) and, with
 * -static-fineibt, tests/lib/rtdebug.o; run against $BUILD/testlib.
 *
 *   trust_prog ATTACK LIB [noveneer]
 *
 * ATTACK: what the attacker writes at every park, besides trying each page
 * of every protected range with bytes saved at an earlier park (older
 * valid values) and forged values at the fields that matter (mode, flags,
 * key, module and JIT tables, arena table, veneer base and names, saved
 * libc entry points, the SIGILL record, the scan record, the descriptors):
 *   state    nothing more
 *   scratch  also each module record the writer is about to put (built in
 *            writable scratch): warn set in it
 *   seen     also each scan record about to be put: its kCFI range emptied
 *   fork     state, in a forked child that opens the windows; the parent
 *            then checks that its own state did not change
 *   none     no attacker, no park: the windows and the confused call
 * The program installs a SIGILL handler of its own (it prints "swallowed"
 * and exits 3: a CFI trap must never reach it), then, with the attacker
 * running: sigaction(SIGILL) twice, fineibt_set_print, a JIT region
 * registered and withdrawn, dlopen(LIB) and a legal call ("dl ok"), a
 * dlsym veneer for strlen called through its pointer (unless noveneer:
 * -static-fineibt does not interpose dlsym). Then it prints
 *   landed P scratch S parks N how H
 * (P: stores that landed in protected memory, S: in the writer's scratch,
 * N: parks, H: 1 kernel writes, 2 windows) and makes a type-confused call
 * in LIB ("survived" if it returns). The first store that lands in
 * protected memory is said at once: "a store landed".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fineibt.h"
#include "runtime.h"

/* tests/lib/rtdebug.c (the test build of the runtime) */
struct fineibt_debug_range {
	const void *base;
	size_t size;
	const char *what;
};
/* Weak: the shipped library has none of them; the test runs against the
 * test build (LD_LIBRARY_PATH), or links rtdebug.o (-static-fineibt). */
const void *fineibt_debug_object(const char *name) __attribute__((weak));
void fineibt_debug_park(void (*fn)(const char *, const void *, size_t))
	__attribute__((weak));
size_t fineibt_debug_ranges(struct fineibt_debug_range *out, size_t max,
			    int *how) __attribute__((weak));

#define MAX_RANGES	96
#define fi_rt_debug()	((const struct fi_runtime *)fineibt_debug_object("state"))

typedef long (*apply_t)(int, long);
typedef long (*confused_t)(long);

static enum { A_STATE, A_SCRATCH, A_SEEN, A_NONE } attack;

/* One request at a time: the writer parks, the attacker runs a round. */
static struct {
	const char *volatile where;
	const void *volatile scratch;
	volatile size_t len;
	volatile unsigned long seq, done;
} req;
static volatile int stop;
static unsigned long landed, scratch_landed, parks;
static const struct fi_module *forged;

/* Older valid values: each range as it was at the previous park. */
static struct fineibt_debug_range ranges[MAX_RANGES];
static uint8_t *saved[MAX_RANGES];
static size_t nsaved;

static bool vm_write(const void *dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { (void *)dst, len };

	return process_vm_writev(getpid(), &l, 1, &r, 1, 0) > 0;
}

static bool vm_read(const void *src, void *dst, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)src, len };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len;
}

static void try_write(const void *dst, const void *src, size_t len)
{
	/* Said at once: a store that lands may take the process down. */
	if (dst && vm_write(dst, src, len) && !landed++)
		(void)!write(1, "a store landed\n", 15);
}

static void forge_word(const char *name, uint64_t v)
{
	try_write(fineibt_debug_object(name), &v, sizeof(v));
}

static void attacker_sigill(int sig, siginfo_t *si, void *uc);

/* The fields that matter, with forged values. */
static void forge_fields(void)
{
	const struct fi_runtime *rt = fi_rt_debug();
	uint32_t flags = rt->cfg.flags | FINEIBT_F_WARN;
	struct sigaction sa = { .sa_sigaction = attacker_sigill };
	int fd = 1;

	try_write(fineibt_debug_object("flags"), &flags, sizeof(flags));
	forge_word("key", 0x41414141);
	forge_word("active", 0);
	forge_word("nmods", 1);
	forge_word("nseen", 0);
	for (size_t i = 0; i < FI_MAX_SLOTS; i += 37)
		try_write(&rt->mods[i], &forged, sizeof(forged));
	forge_word("jit", (uint64_t)(uintptr_t)forged);
	/* The arena's table: a chunk of ours, owning the forged record. */
	try_write(&rt->arena.chunk[0].base, &forged, sizeof(forged));
	forge_word("arena", rt->arena.nchunks + 1);
	/* Any address a veneer; the names anywhere. */
	forge_word("veneer_base", 16);
	forge_word("veneer_names", (uint64_t)(uintptr_t)forged);
	forge_word("real_sigaction", (uint64_t)(uintptr_t)attacker_sigill);
	forge_word("real_dlopen", (uint64_t)(uintptr_t)attacker_sigill);
	forge_word("print", (uint64_t)(uintptr_t)attacker_sigill);
	try_write(fineibt_debug_object("sigill"), &sa, sizeof(sa));
	try_write(&rt->seen[0].lo, &rt->seen[0].hi, sizeof(uint64_t));
	/* The descriptors: the writer's puts would go to stdout. */
	try_write(&rt->wr.mem_fd, &fd, sizeof(fd));
	forge_word("module_flags", flags);
}

/* Each page of each range: bytes saved at an earlier park, then junk. */
static void rollback(void)
{
	static const uint8_t junk[64] = { [0 ... 63] = 0xcc };

	for (size_t r = 0; r < nsaved; r++) {
		const uint8_t *b = ranges[r].base;

		for (size_t off = 0; off < ranges[r].size; off += 4096) {
			if (saved[r])
				try_write(b + off, saved[r] + off, 4096);
			try_write(b + off + 64, junk, sizeof(junk));
		}
	}
}

static void snapshot(void)
{
	int how;
	size_t n = fineibt_debug_ranges(ranges, MAX_RANGES, &how);

	n = n < MAX_RANGES ? n : MAX_RANGES;
	for (size_t r = 0; r < n; r++) {
		if (r >= nsaved || !saved[r]) {
			saved[r] = malloc(ranges[r].size);
		} else if (r < nsaved && ranges[r].size > 4096 * 64) {
			continue;	/* big regions: the first copy is old enough */
		}
		if (saved[r] && !vm_read(ranges[r].base, saved[r], ranges[r].size)) {
			free(saved[r]);
			saved[r] = NULL;
		}
	}
	nsaved = n;
}

/*
 * The writer's scratch: what it is about to put. A module's copy is told
 * by the park's name, not by its length (a copy whose length happened to
 * be a multiple of a scan record's was taken for scan records).
 */
static void forge_scratch(const char *where, const void *scratch, size_t len)
{
	bool module = where && !strcmp(where, "put module");

	if (!scratch)
		return;
	if (attack == A_SCRATCH && module && len >= sizeof(struct fi_module)) {
		uint32_t warn = FINEIBT_F_WARN | FINEIBT_F_RAND;
		const struct fi_module *m = scratch;

		if (vm_write(&m->cfg.flags, &warn, sizeof(warn)))
			scratch_landed++;
	}
	if (attack == A_SEEN && !module && len &&
	    len % sizeof(struct fi_rt_seen) == 0) {
		const struct fi_rt_seen *e = scratch;
		uint64_t zero[2] = { 0, 0 };

		for (size_t i = 0; i < len / sizeof(*e); i++)
			scratch_landed += vm_write(&e[i].lo, zero, sizeof(zero));
	}
}

static void *attacker(void *arg)
{
	unsigned long seen = 0;

	(void)arg;
	snapshot();
	while (!stop) {
		unsigned long s = req.seq;

		if (s == seen) {
			sched_yield();
			continue;
		}
		forge_scratch(req.where, req.scratch, req.len);
		rollback();
		forge_fields();
		snapshot();
		parks++;
		seen = s;
		__atomic_store_n(&req.done, s, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* In the writer: signals blocked, the runtime's lock held. Spins only. */
static void park(const char *where, const void *scratch, size_t len)
{
	unsigned long s = req.seq + 1;

	req.where = where;
	req.scratch = scratch;
	req.len = len;
	__atomic_store_n(&req.seq, s, __ATOMIC_RELEASE);
	while (__atomic_load_n(&req.done, __ATOMIC_ACQUIRE) != s && !stop)
		sched_yield();
}

static void attacker_sigill(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	(void)!write(1, "attacker\n", 9);
	_exit(4);
}

static void program_sigill(int sig)
{
	(void)sig;
	(void)!write(1, "swallowed\n", 10);
	_exit(3);
}

static int own_print(enum fineibt_print_level l, const char *fmt, va_list ap)
{
	(void)l;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Every kind of window a running program opens. */
static int windows(const char *lib, bool veneer, void **handle)
{
	struct sigaction sa = { .sa_handler = program_sigill };
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	apply_t apply;

	if (sigaction(SIGILL, &sa, NULL) || sigaction(SIGILL, &sa, NULL))
		return 10;
	fineibt_set_print(fineibt_set_print(own_print));
	if (code == MAP_FAILED)
		return 11;
	memset(code, 0xc3, 4096);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 11;
	/* A forged record makes the registration fail: never fatal here. */
	if (!fineibt_jit_register(code, 256))
		fineibt_jit_unregister(code);
	*handle = dlopen(lib, RTLD_NOW);
	apply = *handle ? (apply_t)dlsym(*handle, "el_apply") : NULL;
	if (!apply || apply(0, 21) != 42)
		return 12;
	printf("dl ok\n");
	if (veneer) {
		size_t (*sl)(const char *) =
			(size_t (*)(const char *))dlsym(RTLD_DEFAULT, "strlen");

		if (!sl || sl("four") != 4 || sl("fours") != 5)
			return 13;
	}
	return 0;
}

/* The race, in this process; the confused call at the end. */
static int race(const char *lib, bool veneer)
{
	const struct fi_runtime *rt = fi_rt_debug();
	uint32_t flags = rt->cfg.flags;
	struct fi_module *copy;
	confused_t confused;
	void *handle = NULL;
	pthread_t t;
	int rc, how = 0;

	/* A record of the executable's, with warn: what a forger would plant. */
	copy = malloc(sizeof(*copy));
	if (!fineibt_debug_object("module"))
		return 23;
	*copy = *(const struct fi_module *)fineibt_debug_object("module");
	copy->cfg.flags |= FINEIBT_F_WARN;
	forged = copy;
	fineibt_debug_ranges(NULL, 0, &how);
	if (attack != A_NONE) {
		if (pthread_create(&t, NULL, attacker, NULL))
			return 20;
		fineibt_debug_park(park);
	}
	rc = windows(lib, veneer, &handle);
	if (attack != A_NONE) {
		fineibt_debug_park(NULL);
		stop = 1;
		pthread_join(t, NULL);
	}
	if (rc)
		return rc;
	printf("landed %lu scratch %lu parks %lu how %d\n", landed,
	       scratch_landed, parks, how);
	if (rt->cfg.flags != flags) {
		printf("mode changed\n");
		return 21;
	}
	fflush(stdout);
	confused = (confused_t)dlsym(handle, "el_confused");
	if (!confused)
		return 22;
	confused(1);
	printf("survived\n");
	return 0;
}

/* The race in a forked child; the parent's state must not change. */
static int race_forked(const char *lib, bool veneer)
{
	struct fineibt_debug_range r[MAX_RANGES];
	size_t n = fineibt_debug_ranges(r, MAX_RANGES, NULL);
	uint8_t *before = malloc(r[0].size);
	int status;
	pid_t pid;

	memcpy(before, r[0].base, r[0].size);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 30;
	if (!pid)
		_exit(race(lib, veneer));
	if (waitpid(pid, &status, 0) != pid)
		return 31;
	printf("child %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	(void)n;
	printf("parent state %s\n", memcmp(before, r[0].base, r[0].size) ?
	       "changed" : "unchanged");
	fflush(stdout);
	return race(lib, veneer);
}

int main(int argc, char **argv)
{
	bool veneer = !(argc > 3 && !strcmp(argv[3], "noveneer"));

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		goto usage;
	/* Not "!fineibt_debug_park": an undefined weak function may have a
	 * PLT address. */
	if (!dlsym(RTLD_DEFAULT, "fineibt_debug_park") && !getenv("TRUST_LINKED")) {
		printf("no debug export\n");
		return 2;
	}
	if (!strcmp(argv[1], "state") || !strcmp(argv[1], "fork"))
		attack = A_STATE;
	else if (!strcmp(argv[1], "scratch"))
		attack = A_SCRATCH;
	else if (!strcmp(argv[1], "seen"))
		attack = A_SEEN;
	else if (!strcmp(argv[1], "none"))
		attack = A_NONE;
	else
		goto usage;
	return !strcmp(argv[1], "fork") ? race_forked(argv[2], veneer) :
					  race(argv[2], veneer);
usage:
	fprintf(stderr, "usage: trust_prog state|scratch|seen|fork|none LIB [noveneer]\n");
	return 2;
}
