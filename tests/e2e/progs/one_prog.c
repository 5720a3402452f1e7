// SPDX-License-Identifier: MIT
/*
 * End-to-end program of tests/e2e/protect_dlmopen.sh (docs/protection.md),
 * built with fineibt-cc: one runtime per process.
 *
 *   one_prog LIB CFI [install|forge]
 *
 * After start-up, set FINEIBT_CFI=CFI in the environment, then load LIB
 * into a new link-map namespace (dlmopen(LM_ID_NEWLM)): it brings a
 * second copy of libfineibt.so. "install": the namespace installs a
 * SIGILL handler of its own (prints "namespace handler", exits 3).
 * "ud2": the same, then a plain ud2 (__builtin_trap) in LIB, which is
 * the program's (its handler runs), not a CFI failure.
 * "forge": first publish a forged anchor (src/rt/rtone.c) naming a writable
 * copy of the runtime's state. "api": the namespace's copy of the public
 * API sees the process's mode ("config same") and registers a JIT region
 * with the process's runtime ("jit registered": registering it again from
 * here is -EEXIST). "late LIB2": after the legal call, the namespace
 * dlopens LIB2 (a copy of LIB) and makes its confused call ("survived
 * late" if it returns). Then a legal call ("apply 42") and a confused one
 * ("survived" if it returns).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fineibt.h"

typedef long (*apply_t)(int, long);
typedef long (*confused_t)(long);
typedef int (*install_t)(void);
typedef void (*trap_t)(void);
typedef int (*config_t)(struct fineibt_config *);
typedef void *(*jit_t)(void);

/* A writable "state" that claims the ABI and a warn mode. */
static uint32_t forged[4096] __attribute__((aligned(4096))) = {
	0x46490001u, 0xffffffffu,
};

static int forge(void)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "fineibt-rt:%lx:%x",
		 (unsigned long)(uintptr_t)forged, 0x46490001u);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0 || mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return -1;
	close(fd);
	return 0;
}

static void api(void *h)
{
	config_t config = (config_t)dlsym(h, "ol_config");
	jit_t jit = (jit_t)dlsym(h, "ol_jit");
	struct fineibt_config mine, ns;
	void *region;

	if (!config || !jit)
		return;
	if (!fineibt_get_config(&mine) && !config(&ns) &&
	    mine.mode == ns.mode && mine.flags == ns.flags)
		printf("config same\n");
	region = jit();
	if (region && fineibt_jit_register(region, 4096) == -EEXIST)
		printf("jit registered\n");
}

int main(int argc, char **argv)
{
	const char *how = argc > 3 ? argv[3] : "";
	apply_t apply;
	confused_t confused;
	install_t install;
	trap_t trap;
	void *h;

	if (argc < 3)
		return 2;
	setenv("FINEIBT_CFI", argv[2], 1);
	if (!strcmp(how, "forge") && forge()) {
		printf("forge failed\n");
		return 2;
	}
	h = dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW);
	if (!h) {
		printf("dlmopen: %s\n", dlerror());
		return 2;
	}
	apply = (apply_t)dlsym(h, "ol_apply");
	confused = (confused_t)dlsym(h, "ol_confused");
	install = (install_t)dlsym(h, "ol_install");
	trap = (trap_t)dlsym(h, "ol_trap");
	if (!apply || !confused || !install || !trap)
		return 2;
	if ((!strcmp(how, "install") || !strcmp(how, "ud2")) && install())
		return 2;
	if (!strcmp(how, "api"))
		api(h);
	printf("apply %ld\n", apply(0, 21));
	fflush(stdout);
	if (!strcmp(how, "ud2"))
		trap();
	if (!strcmp(how, "late") && argc > 4) {
		long (*late)(const char *) =
			(long (*)(const char *))dlsym(h, "ol_load_confused");

		if (!late || !late(argv[4]))
			return 2;
		printf("survived late\n");
	}
	confused(1);
	printf("survived\n");
	return 0;
}
