// SPDX-License-Identifier: MIT
/*
 * rt_plt_inplace: hello world (no argument), or (argument "thread") a
 * program that starts a thread which waits, then dlopens libz with
 * RTLD_NOW: the runtime's PLT pass over libz then runs with another task
 * in the process (tests/e2e/rt_plt_inplace.sh); or (argument "alone")
 * the same dlopen with no other thread. Hello also prints where
 * ld.so's executable segment is ("ldso LO HI"): the kernel mapped it, so
 * no system call in a trace says.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fd[2];

static int ldso_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "ld-linux"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			printf("ldso %lx %lx\n",
			       (unsigned long)(info->dlpi_addr + ph->p_vaddr),
			       (unsigned long)(info->dlpi_addr + ph->p_vaddr +
					       ph->p_memsz));
	}
	return 1;
}

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	return read(fd[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
	pthread_t t;
	void *h;

	if (argc >= 2 && !strcmp(argv[1], "alone")) {
		h = dlopen("libz.so.1", RTLD_NOW);
		printf("%s\n", h ? "loaded" : "no libz");
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "thread")) {
		printf("hello, world\n");
		dl_iterate_phdr(ldso_cb, NULL);
		return 0;
	}
	if (pipe(fd) || pthread_create(&t, NULL, waiter, NULL))
		return 2;
	h = dlopen("libz.so.1", RTLD_NOW);
	if (write(fd[1], "x", 1) != 1 || pthread_join(t, NULL))
		return 3;
	printf("%s\n", h ? "loaded" : "no libz");
	return 0;
}
