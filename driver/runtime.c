// SPDX-License-Identifier: MIT
/*
 * Where a program linked by fineibt-cc loads its runtime from (docs/
 * runtime.md, "Where the runtime is loaded from").
 *
 * A DT_NEEDED of "libfineibt.so.0" found through a RUNPATH costs every
 * process a search: the loader tries the glibc-hwcaps and legacy
 * capability subdirectories of the RUNPATH directory first (21 failed
 * system calls on x86-64 with glibc 2.36) and then looks for every other
 * library of the program there too (libc: one more). A DT_NEEDED holding
 * the runtime's absolute path is opened as it is, with no search. The
 * linker writes the soname of the library it links against as DT_NEEDED,
 * so the build and `make install` each write a copy of libfineibt.so
 * whose soname is the absolute path of the runtime next to it
 * (fineibt-link/libfineibt.so, Makefile); fineibt-cc links against that
 * copy when its soname names the very file libdir/libfineibt.so.0 (a
 * tree copied elsewhere after `make install` does not: then the soname
 * and a RUNPATH, as before).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

/* The DT_SONAME of the shared object at @path into @out, or false. */
static bool fi_soname(const char *path, char *out, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	Elf64_Dyn dyn[64];
	uint64_t strtab = 0, soname = 0, strsz = 0;
	size_t ndyn = 0;
	bool ok = false, have = false;
	ssize_t n;
	off_t at;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (!fi_pread_full(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > 32 ||
	    !fi_pread_full(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff))
		goto out;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		ndyn = ph[i].p_filesz / sizeof(dyn[0]);
		if (ndyn > 64)
			ndyn = 64;
		if (!fi_pread_full(fd, dyn, ndyn * sizeof(dyn[0]),
				  (off_t)ph[i].p_offset))
			goto out;
	}
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_SONAME) {
			soname = dyn[i].d_un.d_val;
			have = true;
		}
	}
	if (!have || soname >= strsz || len < 2)
		goto out;
	at = fi_file_off(ph, eh.e_phnum, strtab + soname, 1);
	n = at < 0 ? -1 : pread(fd, out, len - 1, at);
	if (n <= 0)
		goto out;
	out[n] = '\0';
	ok = strnlen(out, (size_t)n) < (size_t)n;
out:
	close(fd);
	return ok;
}

bool fi_runtime_link_copy(const char *libdir, char *copy, size_t len)
{
	char soname[4096], rt[4096];
	struct stat a, b;

	if ((size_t)snprintf(copy, len, "%s/fineibt-link/libfineibt.so",
			     libdir) >= len ||
	    (size_t)snprintf(rt, sizeof(rt), "%s/libfineibt.so.0", libdir) >=
	    sizeof(rt))
		return false;
	if (!fi_soname(copy, soname, sizeof(soname)) || soname[0] != '/')
		return false;
	/* The soname must be the runtime the old search would find first. */
	return !stat(soname, &a) && !stat(rt, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}
