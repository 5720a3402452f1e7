// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_targets.sh: what an attacker with a write primitive
 * finds. After start-up and a dlopen, every 8-byte word of the process's
 * writable memory (every read-write mapping but the stacks) that holds a
 * code address, raw or mangled with glibc's pointer guard (which lives
 * in the TCB: readable, so a mangled pointer is no obstacle), is a
 * candidate. For each, a forked child overwrites it with the address of
 * hijack() (a function of no type any caller expects) and runs a
 * workload: stdio, malloc family, qsort with a callback, a thread, a
 * signal handler, dlopen/dlsym/dlclose of LIB and of libm, atexit, exit.
 * A child that arrives in hijack() exits 42: the word is a live,
 * unchecked call target.
 *
 *   protect_targets LIB
 *
 * Prints one line per live word: "live MAPPING+OFFSET raw|mangled WHERE"
 * (WHERE: the module the mapping belongs to, or "anon"), then "checked N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXMAP	1024
#define MAXCAND	65536

struct map {
	uintptr_t lo, hi;
	char perm[5];
	char name[200];		/* its own, or the file mapping before it */
};

struct cand {
	uintptr_t at;
	int map;
	int mangled;
};

/* In their own mapping, skipped by the scan (they hold code addresses). */
static struct map *maps;
static int nmaps;
static struct cand *cands;
static int ncands;
static const char *lib;

static void hijack(void)
{
	if (write(STDOUT_FILENO, "H", 1) < 0)
		_exit(2);
	_exit(42);
}

static uintptr_t guard(void)
{
	uintptr_t g;

	__asm__ volatile("mov %%fs:0x30, %0" : "=r"(g));
	return g;
}

static uintptr_t mangle(uintptr_t v)
{
	v ^= guard();
	return (v << 0x11) | (v >> (64 - 0x11));
}

static uintptr_t demangle(uintptr_t v)
{
	return ((v >> 0x11) | (v << (64 - 0x11))) ^ guard();
}

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], last[200] = "anon";

	while (f && fgets(line, sizeof(line), f) && nmaps < MAXMAP) {
		struct map *m = &maps[nmaps];
		char name[200] = "";

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %199[^\n]", &m->lo,
			   &m->hi, m->perm, name) < 3)
			continue;
		if (name[0] == '/')
			snprintf(last, sizeof(last), "%s", name);
		else if (name[0])
			snprintf(last, sizeof(last), "%s", name);
		snprintf(m->name, sizeof(m->name), "%s", name[0] ? name : last);
		nmaps++;
	}
	if (f)
		fclose(f);
}

static int in_code(uintptr_t v)
{
	for (int i = 0; i < nmaps; i++) {
		if (maps[i].perm[2] == 'x' && v >= maps[i].lo && v < maps[i].hi)
			return 1;
	}
	return 0;
}

static int scannable(const struct map *m)
{
	uintptr_t me = (uintptr_t)maps, c = (uintptr_t)cands;

	if (m->perm[0] != 'r' || m->perm[1] != 'w')
		return 0;
	if (strstr(m->name, "[stack") || strstr(m->name, "[vvar") ||
	    strstr(m->name, "[vsyscall"))
		return 0;
	return !(me >= m->lo && me < m->hi) && !(c >= m->lo && c < m->hi);
}

static void collect(void)
{
	for (int i = 0; i < nmaps; i++) {
		if (!scannable(&maps[i]))
			continue;
		for (uintptr_t p = maps[i].lo; p + 8 <= maps[i].hi &&
		     ncands < MAXCAND; p += 8) {
			uintptr_t v = *(volatile uintptr_t *)p;
			int raw = in_code(v), mg = !raw && v && in_code(demangle(v));

			if (!raw && !mg)
				continue;
			cands[ncands].at = p;
			cands[ncands].map = i;
			cands[ncands].mangled = mg;
			ncands++;
		}
	}
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void *thr(void *arg)
{
	return arg;
}

static void at_exit_fn(void)
{
}

/* Everything a program commonly does, through glibc and the runtime. */
static void workload(void)
{
	int v[8] = { 5, 3, 7, 1, 8, 2, 6, 4 };
	char buf[64], *s;
	void *h, *p;
	pthread_t t;
	struct sigaction sa = { .sa_handler = on_usr1 };
	FILE *f;

	atexit(at_exit_fn);
	qsort(v, 8, sizeof(v[0]), by_value);
	snprintf(buf, sizeof(buf), "%d %s %f", v[0], "x", 1.5);
	s = strdup(buf);
	p = realloc(calloc(4, 16), 4096);
	free(p);
	free(s);
	f = fopen("/dev/null", "w");
	if (f) {
		fprintf(f, "%s\n", buf);
		fclose(f);
	}
	puts("w");
	fflush(stdout);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	if (!pthread_create(&t, NULL, thr, NULL))
		pthread_join(t, NULL);
	h = dlopen(lib, RTLD_NOW);
	if (h) {
		long (*fn)(int, long) = (long (*)(int, long))dlsym(h, "pl_apply");

		if (fn)
			fn(0, 1);
		dlclose(h);
	}
	h = dlopen("libm.so.6", RTLD_NOW);
	if (h) {
		/* Looked up, not called: with -static-fineibt dlsym hands
		 * out no veneer, and the call would (rightly) trap. */
		if (!dlsym(h, "cos"))
			puts("no cos");
		dlclose(h);
	}
	exit(0);
}

static void try_one(const struct cand *c)
{
	int st, fd[2];
	pid_t pid;
	char r = 0;

	if (pipe(fd))
		return;
	pid = fork();
	if (pid == 0) {
		uintptr_t *w = (uintptr_t *)c->at;

		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		*w = c->mangled ? mangle((uintptr_t)hijack) : (uintptr_t)hijack;
		workload();
	}
	close(fd[1]);
	while (read(fd[0], &r, 1) == 1 && r != 'H')
		;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 42 && r == 'H') {
		const struct map *m = &maps[c->map];

		printf("live %s+0x%lx %s\n", m->name,
		       (unsigned long)(c->at - m->lo),
		       c->mangled ? "mangled" : "raw");
	}
}

int main(int argc, char **argv)
{
	void *h;

	if (argc != 2)
		return 2;
	lib = argv[1];
	/* Start-up is over; one dlopen pass, as a program would do. */
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		return 3;
	maps = mmap(NULL, MAXMAP * sizeof(*maps) + MAXCAND * sizeof(*cands),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (maps == MAP_FAILED)
		return 4;
	cands = (struct cand *)(maps + MAXMAP);
	read_maps();
	collect();
	fflush(stdout);
	for (int i = 0; i < ncands; i++)
		try_one(&cands[i]);
	printf("checked %d\n", ncands);
	return 0;
}
