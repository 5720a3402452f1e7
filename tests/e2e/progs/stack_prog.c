// SPDX-License-Identifier: MIT
/*
 * End-to-end program of tests/e2e/protect_stack.sh (docs/traps.md
 * "Stack use"): the runtime on small stacks. Built with fineibt-cc; LIB is
 * libfi_escape.so (escape_lib.c).
 *
 *   stack_prog thread LIB KIB  on a thread with a KIB KiB stack: dlopen LIB
 *                       (rewritten there, then the stack scrub), a legal
 *                       call ("dl ok"), then a confused call ("survived"
 *                       if it returns)
 *   stack_prog alt LIB SIZE  dlopen LIB; a child process sets up an
 *                       alternate signal stack of SIZE bytes with a 16 KiB
 *                       canary region right below it, both in memory
 *                       shared with the parent and filled with a pattern,
 *                       and makes a confused call in LIB (the handler runs
 *                       on that stack); "survived" if the call returns
 *                       (warn). The parent then prints "rc S frame F
 *                       used N canary ok" (or "canary clobbered K"): S the
 *                       child's exit status as the shell shows it, F the
 *                       kernel's signal frame (kernel_frame), N the bytes
 *                       of the alternate stack written (kernel frame and
 *                       handler), K the
 *                       bytes of the canary region written
 *   stack_prog carved LIB KIB  on a thread whose KIB KiB stack is carved
 *                       out of the main thread's (a local array of main),
 *                       right above a 16 KiB canary region of that array:
 *                       dlopen LIB and a legal call ("dl ok"); then main
 *                       prints "canary ok" (or "canary clobbered K"): the
 *                       scrub after the rewrite must stay inside the
 *                       thread's stack, not the initial stack's mapping
 *   stack_prog frame    prints "frame F"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CANARY		(16 * 1024)
#define PATTERN		0xa5

typedef long (*apply_t)(int, long);
typedef long (*confused_t)(long);

static apply_t apply;
static confused_t confused;
static uintptr_t frame_sp;

static void frame_handler(int sig)
{
	uintptr_t sp;

	(void)sig;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	frame_sp = sp;
}

/*
 * The bytes the kernel's signal frame takes (with this CPU's xsave area)
 * plus a minimal handler's frame: the stack a handler starts with.
 */
static size_t kernel_frame(void)
{
	static uint8_t mem[64 * 1024];
	stack_t ss = { .ss_sp = mem, .ss_size = sizeof(mem) }, old;
	struct sigaction sa = { .sa_handler = frame_handler,
				.sa_flags = SA_ONSTACK };

	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, &old) || sigaction(SIGUSR1, &sa, NULL) ||
	    raise(SIGUSR1) || sigaltstack(&old, NULL))
		return 0;
	return (uintptr_t)(mem + sizeof(mem)) - frame_sp;
}

static int open_lib(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);

	apply = h ? (apply_t)dlsym(h, "el_apply") : NULL;
	confused = h ? (confused_t)dlsym(h, "el_confused") : NULL;
	if (!apply || !confused || apply(0, 21) != 42) {
		printf("dl failed: %s\n", h ? "symbols" : dlerror());
		return 2;
	}
	printf("dl ok\n");
	return 0;
}

static void *thread_main(void *lib)
{
	if (open_lib(lib))
		return lib;
	confused(1);
	printf("survived\n");
	return NULL;
}

static int do_thread(const char *lib, size_t kib)
{
	pthread_attr_t a;
	pthread_t t;
	void *ret = NULL;

	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, kib * 1024) ||
	    pthread_create(&t, &a, thread_main, (void *)lib)) {
		printf("no thread with a %zu KiB stack\n", kib);
		return 2;
	}
	pthread_join(t, &ret);
	return ret ? 2 : 0;
}

static void *carved_main(void *lib)
{
	return open_lib(lib) ? lib : NULL;
}

static int do_carved(const char *lib, size_t kib)
{
	uint8_t region[CANARY + 64 * 1024] __attribute__((aligned(64)));
	size_t size = kib * 1024, low;
	pthread_attr_t a;
	pthread_t t;
	void *ret = NULL;

	if (size > sizeof(region) - CANARY)
		return 2;
	memset(region, PATTERN, CANARY + size);
	if (pthread_attr_init(&a) ||
	    pthread_attr_setstack(&a, region + CANARY, size) ||
	    pthread_create(&t, &a, carved_main, (void *)lib)) {
		printf("no thread on a %zu KiB stack of main's\n", kib);
		return 2;
	}
	pthread_join(t, &ret);
	for (low = 0; low < CANARY && region[low] == PATTERN; low++)
		;
	if (low >= CANARY)
		printf("canary ok\n");
	else
		printf("canary clobbered %zu\n", CANARY - low);
	return ret ? 2 : 0;
}

static int do_alt(const char *lib, size_t size)
{
	uint8_t *mem = mmap(NULL, CANARY + size, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t low, used;
	int status;
	pid_t pid;

	if (mem == MAP_FAILED || open_lib(lib))
		return 2;
	memset(mem, PATTERN, CANARY + size);
	pid = fork();
	if (pid == 0) {
		stack_t ss = { .ss_sp = mem + CANARY, .ss_size = size };

		if (sigaltstack(&ss, NULL))
			_exit(2);
		confused(1);
		printf("survived\n");
		fflush(stdout);
		_exit(apply(0, 21) == 42 ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	for (low = 0; low < CANARY + size && mem[low] == PATTERN; low++)
		;
	used = CANARY + size - low;
	printf("rc %d frame %zu used %zu ",
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status),
	       kernel_frame(), used > size ? size : used);
	if (low >= CANARY)
		printf("canary ok\n");
	else
		printf("canary clobbered %zu\n", CANARY - low);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "thread"))
		return do_thread(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "carved"))
		return do_carved(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 2 && !strcmp(argv[1], "frame")) {
		printf("frame %zu\n", kernel_frame());
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "alt"))
		return do_alt(argv[2], strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: stack_prog thread LIB KIB | carved LIB KIB | "
		"alt LIB SIZE | frame\n");
	return 2;
}
