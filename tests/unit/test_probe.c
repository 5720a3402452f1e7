/* SPDX-License-Identifier: MIT */
/*
 * fi_live_maybe_kcfi, the runtime's question "might this module without
 * an index be kCFI code?" (docs/runtime.md, "Modules without an index"),
 * samples the lowest function entries of the module's unwind search
 * table (.eh_frame_hdr); fi_live_exports_kcfi, the question as it was
 * asked before, samples exported functions through the whole dynamic
 * symbol table. Both must give the same answer:
 *  - on every shared library of the system's library folder, each laid
 *    out from its file at a scratch address as the loader would (no
 *    relocation: the probe takes either form of a dynamic pointer);
 *  - on kCFI libraries built here by stock clang-22 -fsanitize=kcfi
 *    (plain, and with patchable entries, arity and ENDBRs) and by
 *    fineibt-cc: true; on libc and the loader: false;
 *  - on a kCFI library with 40 static functions called only directly
 *    (clang gives them no preamble; it emits them after their caller,
 *    whose preamble comes first): true;
 *  - on one whose first object, 20 functions, was built without kCFI:
 *    true (the sample reaches the next object); the same with its kCFI
 *    object built without unwind tables (the table lists only the
 *    other's functions): true (too few entries, the symbols decide);
 *  - on a library linked without .eh_frame_hdr: the symbol sample.
 * With path arguments: prints both answers for each file instead (a
 * tool for looking at one module); exits 1 if they differ.
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "imgindex.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu"

struct laid {
	uint8_t *base;
	size_t span;
	uint64_t bias;
	Elf64_Phdr ph[64];
	size_t phnum;
};

/*
 * The PT_LOAD segments of @path mapped read-only at their link-time
 * addresses + a scratch base, the rest of the span zero (bss). False for
 * anything but a 64-bit x86-64 ELF module with segments.
 */
static bool lay_out(const char *path, struct laid *l)
{
	Elf64_Ehdr eh;
	uint64_t lo = UINT64_MAX, hi = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = false;

	memset(l, 0, sizeof(*l));
	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > 64)
		goto out;
	l->phnum = eh.e_phnum;
	if (pread(fd, l->ph, l->phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) !=
	    (ssize_t)(l->phnum * sizeof(Elf64_Phdr)))
		goto out;
	for (size_t i = 0; i < l->phnum; i++) {
		if (l->ph[i].p_type != PT_LOAD)
			continue;
		lo = l->ph[i].p_vaddr < lo ? l->ph[i].p_vaddr : lo;
		if (l->ph[i].p_vaddr + l->ph[i].p_memsz > hi)
			hi = l->ph[i].p_vaddr + l->ph[i].p_memsz;
	}
	lo &= ~4095ull;
	if (hi <= lo || hi - lo > (1ull << 32))
		goto out;
	l->span = (hi - lo + 4095) & ~4095ull;
	l->base = mmap(NULL, l->span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (l->base == MAP_FAILED) {
		l->base = NULL;
		goto out;
	}
	l->bias = (uint64_t)(uintptr_t)l->base - lo;
	for (size_t i = 0; i < l->phnum; i++) {
		const Elf64_Phdr *p = &l->ph[i];
		uint64_t pg = p->p_vaddr & ~4095ull, off = p->p_offset & ~4095ull;
		size_t len = p->p_filesz + (p->p_vaddr - pg);

		if (p->p_type != PT_LOAD || !p->p_filesz)
			continue;
		if ((p->p_vaddr & 4095) != (p->p_offset & 4095) ||
		    mmap((void *)(uintptr_t)(pg + l->bias), len, PROT_READ,
			 MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) == MAP_FAILED)
			goto out;
	}
	ok = true;
out:
	close(fd);
	if (!ok && l->base)
		munmap(l->base, l->span);
	return ok;
}

static void lay_drop(struct laid *l)
{
	if (l->base)
		munmap(l->base, l->span);
	l->base = NULL;
}

/* Both answers for @path; false when it cannot be laid out. */
static bool probe_both(const char *path, bool *fde, bool *sym)
{
	struct laid l;

	if (!lay_out(path, &l))
		return false;
	*fde = fi_live_maybe_kcfi(l.ph, l.phnum, l.bias);
	*sym = fi_live_exports_kcfi(l.ph, l.phnum, l.bias);
	lay_drop(&l);
	return true;
}

/* Every shared library of the system's library folder: same answers. */
static void t_system(void)
{
	DIR *d = opendir(LIBDIR);
	struct dirent *e;
	size_t n = 0, differ = 0, yes = 0;
	char path[4096];

	if (!CHECK("probe_libdir", d))
		return;
	while ((e = readdir(d))) {
		struct stat st;
		bool fde, sym;

		if (!strstr(e->d_name, ".so"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", LIBDIR, e->d_name);
		/* Links name the same files again. */
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!probe_both(path, &fde, &sym))
			continue;
		n++;
		yes += fde;
		if (!EXPECT("probe_libdir_same", fde == sym)) {
			printf("  %s: unwind table %d, symbols %d\n", path, fde, sym);
			differ++;
		}
	}
	closedir(d);
	printf("  %zu libraries, %zu might be kCFI, %zu answers differ\n",
	       n, yes, differ);
	/* A system has a few hundred libraries: all were read. */
	CHECK("probe_libdir_count", n >= 20);
	CHECK("probe_libdir_all_same", differ == 0);
}

static bool expect_answer(const char *name, const char *path, bool want)
{
	bool fde = !want, sym = !want;

	if (!EXPECT(name, probe_both(path, &fde, &sym))) {
		printf("  %s: cannot be laid out\n", path);
		return false;
	}
	if (!EXPECT(name, fde == want && sym == want)) {
		printf("  %s: unwind table %d, symbols %d, want %d\n", path,
		       fde, sym, want);
		return false;
	}
	return CHECK(name, true);
}

/* The loader's and libc's files: no kCFI. */
static void t_glibc(void)
{
	expect_answer("probe_libc", LIBDIR "/libc.so.6", false);
	expect_answer("probe_ldso", LIBDIR "/ld-linux-x86-64.so.2", false);
}

static char dir[512];

static bool build(const char *cmd)
{
	char line[2048];

	snprintf(line, sizeof(line), "cd '%s' && %s >>build.log 2>&1", dir, cmd);
	return system(line) == 0;
}

static const char lib_src[] =
	"typedef int (*fn)(int);\n"
	"#define S(n) __attribute__((noinline)) static int s##n(int x) "
	"{ __asm__ volatile(\"\" : \"+r\"(x)); return x * n + 1; }\n"
	"#define T(a) S(a##0) S(a##1) S(a##2) S(a##3) S(a##4) S(a##5) "
	"S(a##6) S(a##7) S(a##8) S(a##9)\n"
	"T(1) T(2) T(3) T(4)\n"
	"#define C(a) s##a##0(x) + s##a##1(x) + s##a##2(x) + s##a##3(x) + "
	"s##a##4(x) + s##a##5(x) + s##a##6(x) + s##a##7(x) + s##a##8(x) + "
	"s##a##9(x)\n"
	"int direct(int x) { return C(1) + C(2) + C(3) + C(4); }\n"
	"static int taken(int x) { return x + 42; }\n"
	"fn pick(void) { return taken; }\n"
	"int call(fn f, int x) { return f(x); }\n";

/* 20 functions of an object built without kCFI, linked first. */
static const char plain_src[] =
	"#define P(n) int plain##n(int x) { return x * n; }\n"
	"#define Q(a) P(a##0) P(a##1) P(a##2) P(a##3) P(a##4) P(a##5) "
	"P(a##6) P(a##7) P(a##8) P(a##9)\n"
	"Q(1) Q(2)\n";

/* Built modules: every kind the runtime meets, and the layouts above. */
static void t_built(const char *build_dir)
{
	static const struct {
		const char *name, *flags;
		bool want;
	} libs[] = {
		{ "libstock.so", "clang-22 -O2 -fsanitize=kcfi", true },
		{ "libstock_pfe.so", "clang-22 -O2 -fsanitize=kcfi "
		  "-fpatchable-function-entry=11,11 -fsanitize-kcfi-arity "
		  "-fcf-protection=branch", true },
		{ "libstock_noeh.so", "clang-22 -O2 -fsanitize=kcfi "
		  "-Wl,--no-eh-frame-hdr", true },
		{ "libfcc.so", "%s/fineibt-cc -O2", true },
		{ "libplain.so", "clang-22 -O2", false },
		{ "libmixed.so", "clang-22 -O2 -fsanitize=kcfi plain.o", true },
		{ "libnounwind.so", "clang-22 -O2 -fsanitize=kcfi "
		  "-fno-asynchronous-unwind-tables -fno-unwind-tables plain.o",
		  true },
	};
	char path[1024], cmd[1536], cc[768];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/tests/probe", build_dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	if (!CHECK("probe_build_dir", system(cmd) == 0))
		return;
	snprintf(path, sizeof(path), "%s/lib.c", dir);
	f = fopen(path, "w");
	if (!CHECK("probe_build_src", f && fputs(lib_src, f) >= 0 && !fclose(f)))
		return;
	snprintf(path, sizeof(path), "%s/plain.c", dir);
	f = fopen(path, "w");
	if (!CHECK("probe_build_plain",
		   f && fputs(plain_src, f) >= 0 && !fclose(f) &&
		   build("clang-22 -O2 -fPIC -c plain.c -o plain.o")))
		return;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char name[96];

		snprintf(cc, sizeof(cc), libs[i].flags, build_dir);
		snprintf(cmd, sizeof(cmd), "%s -fPIC -shared lib.c -o %s",
			 cc, libs[i].name);
		snprintf(name, sizeof(name), "probe_build[%s]", libs[i].name);
		if (!CHECK(name, build(cmd)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, libs[i].name);
		snprintf(name, sizeof(name), "probe_answer[%s]", libs[i].name);
		expect_answer(name, path, libs[i].want);
	}
}

/* One file: both answers. */
static int show(const char *path)
{
	bool fde, sym;

	if (!probe_both(path, &fde, &sym)) {
		fprintf(stderr, "test_probe: %s: not a module we lay out\n", path);
		return 1;
	}
	printf("%s: unwind table %d, symbols %d\n", path, fde, sym);
	return fde != sym;
}

int main(int argc, char **argv)
{
	const char *b = getenv("BUILD");
	char build_dir[512];

	if (argc > 1) {
		int rc = 0;

		for (int i = 1; i < argc; i++)
			rc |= show(argv[i]);
		return rc;
	}
	if (b && b[0] == '/')
		snprintf(build_dir, sizeof(build_dir), "%s", b);
	else {
		char cwd[256];

		if (!getcwd(cwd, sizeof(cwd)))
			return 1;
		snprintf(build_dir, sizeof(build_dir), "%s/%s", cwd,
			 b ? b : "build");
	}
	t_glibc();
	t_system();
	t_built(build_dir);
	return fi_check_exit();
}
