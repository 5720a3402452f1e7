// SPDX-License-Identifier: MIT
/*
 * compat_next_owner.sh's program, with the interposers of
 * compat_next_lib.c preloaded:
 *   (none)     time(), which the interposers take over: prints the chain
 *   next       the executable's own dlsym(RTLD_NEXT, "time"), called
 *   open LIB   LIB dlopen'ed (not preloaded), its time() called
 *   ns LIB     LIB dlmopen'ed into a new namespace, its time() called,
 *              then that namespace's stdout flushed
 *   gadget LIB LIB dlopen'ed, then its RTLD_NEXT entry (crt/next.S) used
 *              as an attacker would, with an arbitrary call: an exported
 *              fineibt_crt_next (older fineibt-cc) is called with our own
 *              function as its third argument ("exported>", "evil>" if it
 *              was called); the entry found through the module's note is
 *              called the same way ("entry>", "next>" if it answered
 *              libc's time, "evil>" if it called ours), then a child
 *              tries to store our function into its dlsym slot ("ro>"
 *              when that faults)
 * The test runs "open"; not "ns": a kCFI interposer dlmopen'ed gets no
 * veneer from RTLD_NEXT (docs/compat.md); kept to show it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef time_t (*time_fn)(time_t *);
typedef int (*fflush_fn)(FILE *);

static void *owner_load(const char *how, const char *lib)
{
	if (!strcmp(how, "open"))
		return dlopen(lib, RTLD_NOW);
	if (!strcmp(how, "ns"))
		return dlmopen(LM_ID_NEWLM, lib, RTLD_NOW);
	return NULL;
}

typedef void *(*next3_fn)(const char *, const char *, void *);

static void *evil(const char *name, const char *version, void *fn)
{
	fputs("evil>", stdout);
	return NULL;
}

/* LIB's RTLD_NEXT note (src/elf/index.h: FI_NEXT_TYPE), read by hand. */
struct gadget_find {
	const char *lib;
	void *entry;
	void **slot;
};

static int gadget_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct gadget_find *g = arg;

	if (!strstr(info->dlpi_name, g->lib))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t at = 0;

		while (ph->p_type == PT_NOTE && at + 12 <= ph->p_filesz) {
			const uint32_t *n = (const uint32_t *)(p + at);
			const int32_t *d = (const int32_t *)(p + at + 12 +
							     ((n[0] + 3) & ~3u));

			if (n[2] == 0x46490002 && n[1] == 16) {
				g->entry = (char *)d + d[1];
				g->slot = (void **)((char *)d + d[2]);
				return 1;
			}
			at += 12 + ((n[0] + 3) & ~3u) + ((n[1] + 3) & ~3u);
		}
	}
	return 1;
}

static int gadget(const char *lib)
{
	struct gadget_find g = { strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib };
	void *h = dlopen(lib, RTLD_NOW), *libc, *p;
	next3_fn f;
	pid_t pid;
	int st;

	if (!h)
		return 4;
	f = (next3_fn)dlsym(h, "fineibt_crt_next");
	if (f) {
		fputs("exported>", stdout);
		f("time", NULL, (void *)evil);
	}
	dl_iterate_phdr(gadget_cb, &g);
	if (g.entry) {
		fputs("entry>", stdout);
		libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
		p = ((next3_fn)g.entry)("time", NULL, (void *)evil);
		if (libc && p && p == dlsym(libc, "time"))
			fputs("next>", stdout);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			*g.slot = (void *)evil;
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid &&
		    WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
			fputs("ro>", stdout);
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	fflush_fn fl = NULL;
	time_fn t;
	void *h;
	long v;

	if (argc < 2) {
		printf("|%ld\n", (long)time(NULL));
		return 0;
	}
	if (!strcmp(argv[1], "gadget") && argc > 2)
		return gadget(argv[2]);
	if (!strcmp(argv[1], "next")) {
		t = (time_fn)dlsym(RTLD_NEXT, "time");
	} else {
		h = argc > 2 ? owner_load(argv[1], argv[2]) : NULL;
		t = h ? (time_fn)dlsym(h, "time") : NULL;
		fl = h ? (fflush_fn)dlsym(h, "fflush") : NULL;
	}
	if (!t) {
		fprintf(stderr, "owner: no time: %s\n", dlerror());
		return 4;
	}
	v = (long)t(NULL);
	if (fl)
		fl(NULL);
	printf("|%ld\n", v);
	return 0;
}
