// SPDX-License-Identifier: MIT
/*
 * fineibt run [--cfi=LIST] [--verbose] [--] PROG [ARGS...]
 *
 * Run a program under a cfi= mode: set FINEIBT_CFI and exec it. A kCFI
 * program built without the runtime (plain clang -fsanitize=kcfi) gets
 * libfineibt.so preloaded, whose constructor rewrites it before main. A
 * program that already carries the runtime (linked by fineibt-cc) is
 * only given the mode: preloading a second runtime would patch twice.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fineibt.h"
#include "options.h"

static int run_usage(FILE *f)
{
	fprintf(f,
		"Usage: fineibt run [--cfi=LIST] [--verbose] [-q] [--] PROG [ARGS...]\n"
		"  Run PROG with FINEIBT_CFI=LIST (default: keep the environment's,\n"
		"  else auto: kcfi without user IBT, fineibt,paranoid with it).\n"
		"  A kCFI program built without the runtime gets libfineibt.so\n"
		"  preloaded (LD_PRELOAD) and\n"
		"  libfineibt_audit.so (LD_AUDIT): libraries it dlopen's are\n"
		"  rewritten before their constructors run. LD_BIND_NOW=1 is\n"
		"  set unless the environment has LD_BIND_NOW: a module whose\n"
		"  GOT stays writable then gets direct PLT entries.\n"
		"  An ELF PROG without any kCFI check (no .kcfi_traps, no kCFI\n"
		"  entries) runs as it is, after one warning line: its calls are\n"
		"  not checked (only kCFI libraries it loads are).\n"
		"  --verbose   FINEIBT_VERBOSE=1: one line per module rewritten\n"
		"  -q, --quiet no warning for a PROG without kCFI\n"
		"  LIST        comma-separated cfi= words (fineibt-cfi(7));\n"
		"              an unknown word is a usage error\n"
		"  Exit status: PROG's; 1 or 2 as other commands when fineibt\n"
		"  itself fails; 126 PROG cannot run, 127 PROG (or the interpreter\n"
		"  its #! line names) not found, as env(1); a file without a #!\n"
		"  line that the kernel cannot run is run by /bin/sh, as env(1) does.\n");
	return f == stdout ? 0 : 2;
}

int cmd_run_help(void)
{
	return run_usage(stdout);
}

/*
 * PROG as execvp would find it: 0, -ENOENT when there is no such file
 * (127, as env(1)), -EACCES when there is one but it cannot be executed
 * (126; in a PATH search, when no other directory has an executable one).
 */
static int run_resolve(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	int ret = -ENOENT;

	if (strchr(prog, '/')) {
		snprintf(out, len, "%s", prog);
		if (access(out, X_OK) == 0)
			return 0;
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EACCES;
	}
	while (path && *path) {
		const char *end = strchrnul(path, ':');

		snprintf(out, len, "%.*s/%s", (int)(end - path), path, prog);
		if (access(out, X_OK) == 0)
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			ret = -EACCES;
		path = *end ? end + 1 : end;
	}
	return ret;
}

/* Does the .dynstr of ELF file @path contain @needle (a whole string)? */
static bool run_dynstr_has(const char *path, const char *needle)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(sh))
		goto out;
	for (unsigned int i = 1; i < eh.e_shnum && !found; i++) {
		char *buf;

		if (pread(fd, &sh, sizeof(sh), eh.e_shoff + (off_t)i * sizeof(sh))
		    != sizeof(sh) || sh.sh_type != SHT_STRTAB ||
		    !(sh.sh_flags & SHF_ALLOC) || sh.sh_size > (64u << 20))
			continue;
		buf = malloc(sh.sh_size + 1);
		if (!buf)
			break;
		if (pread(fd, buf, sh.sh_size, sh.sh_offset) == (ssize_t)sh.sh_size) {
			buf[sh.sh_size] = '\0';
			for (size_t o = 0; o < sh.sh_size && !found;
			     o += strlen(buf + o) + 1)
				found = !strncmp(buf + o, needle, strlen(needle));
		}
		free(buf);
	}
out:
	close(fd);
	return found;
}

/*
 * Does ELF file @path carry kCFI: a .kcfi_traps (its checked call
 * sites), __patchable_function_entries (fineibt-cc's entries) or a
 * .fineibt record (fineibt patch)? 1 yes, 0 no, -1 cannot tell (not an
 * ELF file, no section headers: a script, whose interpreter runs). Only
 * the section headers and their names are read, in three preads: a
 * 150 MB library costs what a small one does.
 */
static int run_has_kcfi(const char *path)
{
	static const char *const names[] = {
		".kcfi_traps", "__patchable_function_entries", ".fineibt",
	};
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *strs = NULL;
	size_t shsz, strsz;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	/* The headers and the names in two reads (e_shnum is 16 bits);
	 * names past 1 MiB are no program's: cannot tell. */
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(*sh) ||
	    !eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	shsz = (size_t)eh.e_shnum * sizeof(*sh);
	sh = malloc(shsz);
	if (!sh || pread(fd, sh, shsz, (off_t)eh.e_shoff) != (ssize_t)shsz)
		goto out;
	strsz = sh[eh.e_shstrndx].sh_size;
	if (strsz > (1u << 20))
		goto out;
	strs = malloc(strsz + 1);
	if (!strs || pread(fd, strs, strsz, (off_t)sh[eh.e_shstrndx].sh_offset)
	    != (ssize_t)strsz)
		goto out;
	strs[strsz] = '\0';
	ret = 0;
	for (unsigned int i = 1; i < eh.e_shnum && !ret; i++) {
		if (sh[i].sh_name >= strsz)
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			ret |= !strcmp(strs + sh[i].sh_name, names[k]);
	}
out:
	free(strs);
	free(sh);
	close(fd);
	return ret;
}

/* libfineibt.so next to this binary (build/) or in ../lib[/fineibt]. */
static bool run_find_lib(char *out, size_t len)
{
	static const char *const rel[] = { "", "/../lib/fineibt", "/../lib" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, len, "%s%s/libfineibt.so", exe, rel[i]);
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

/*
 * LD_AUDIT=<libdir>/libfineibt_audit.so (src/load/audit.c), before any the user
 * set: kCFI libraries dlopen'ed later are rewritten before their
 * constructors run. Without the file (an old install) nothing is added.
 */
static int run_audit(const char *lib)
{
	const char *old = getenv("LD_AUDIT");
	char path[PATH_MAX], *v;
	const char *slash = strrchr(lib, '/');
	int ret;

	if (!slash)
		return 0;
	snprintf(path, sizeof(path), "%.*s/libfineibt_audit.so",
		 (int)(slash - lib), lib);
	if (access(path, R_OK))
		return 0;
	if (old && *old) {
		if (asprintf(&v, "%s:%s", path, old) < 0)
			return -ENOMEM;
		ret = setenv("LD_AUDIT", v, 1);
		free(v);
		return ret;
	}
	return setenv("LD_AUDIT", path, 1);
}

static int run_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int ret;

	if (old && *old) {
		if (asprintf(&v, "%s:%s", lib, old) < 0)
			return -ENOMEM;
		ret = setenv("LD_PRELOAD", v, 1);
		free(v);
		return ret;
	}
	return setenv("LD_PRELOAD", lib, 1);
}

/*
 * The options: --cfi=LIST is checked as patch checks it (an unknown word
 * is a usage error here, not the runtime's "ignoring" message later).
 * Returns the index of PROG in @argv, or -CLI_USAGE / -CLI_OK (--help);
 * @quiet is set by -q.
 */
static int run_parse(int argc, char **argv, bool *quiet)
{
	static const struct option opts[] = {
		{ "cfi", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fineibt_config cfg;
	char bad[64], msgs[2048], words[256];
	int c;

	cli_getopt_reset();
	while ((c = cli_getopt("run", argc, argv, "+hq", opts)) != -1) {
		switch (c) {
		case 'c':
			if (fi_parse_cfi_cli(optarg, true, &cfg, msgs, sizeof(msgs),
					     bad, sizeof(bad)) < 0) {
				fi_cfi_word_list(words, sizeof(words));
				return -cli_usage("run", "--cfi: unknown word '%s' (valid: %s)",
						  bad, words);
			}
			setenv("FINEIBT_CFI", optarg, 1);
			break;
		case 'v':
			setenv("FINEIBT_VERBOSE", "1", 1);
			break;
		case 'q':
			*quiet = true;
			break;
		case 'h':
			run_usage(stdout);
			return -CLI_OK;
		default:
			return -CLI_USAGE;
		}
	}
	if (optind >= argc)
		return -cli_usage("run", "no PROG to run");
	return optind;
}

int cmd_run(int argc, char **argv)
{
	char prog[PATH_MAX], lib[PATH_MAX];
	bool quiet = false;
	int i = run_parse(argc, argv, &quiet), err;

	if (i <= 0)
		return -i;
	switch (run_resolve(argv[i], prog, sizeof(prog))) {
	case 0:
		break;
	case -EACCES:
		cli_error("run: %s: cannot execute: %s", argv[i], strerror(EACCES));
		return 126;
	default:
		cli_error("run: %s: not found (searched PATH unless it has a '/')",
			  argv[i]);
		return 127;
	}
	/*
	 * A program with no kCFI at all would run exactly as without
	 * fineibt: say so once, rather than let the user believe it is
	 * checked. It still runs (the runtime still serves kCFI libraries
	 * it loads), with its own exit status.
	 */
	if (!quiet && run_has_kcfi(prog) == 0)
		cli_warn("run: %s: no kCFI checks in it (built without fineibt-cc "
			 "or -fsanitize=kcfi, or no indirect call): its calls are "
			 "not checked", argv[i]);
	if (!run_dynstr_has(prog, "libfineibt.so") &&
	    !run_dynstr_has(prog, "fineibt_rt_hook")) {
		if (!run_find_lib(lib, sizeof(lib))) {
			cli_error("run: cannot find libfineibt.so beside this fineibt "
				  "(same directory, ../lib/fineibt or ../lib): "
				  "reinstall fineibt");
			return CLI_FAIL;
		}
		if (run_preload(lib) || run_audit(lib)) {
			cli_error("run: cannot set LD_PRELOAD/LD_AUDIT: out of memory");
			return CLI_FAIL;
		}
	}
	/*
	 * Bind every PLT slot before any code runs, so that the runtime can
	 * make the PLT entries of a module whose GOT stays writable (partial
	 * RELRO: a stock link) direct (docs/protection.md). An LD_BIND_NOW
	 * already in the environment (even empty: lazy) is the user's choice.
	 */
	if (!getenv("LD_BIND_NOW") && setenv("LD_BIND_NOW", "1", 1)) {
		cli_error("run: cannot set LD_BIND_NOW: out of memory");
		return CLI_FAIL;
	}
	execv(prog, argv + i);
	err = errno;
	/*
	 * A file the kernel does not know how to run (a script without a
	 * #! line) is a shell script to execvp(3), and so to env(1): run it
	 * with /bin/sh, PROG as found and its arguments after it.
	 */
	if (err == ENOEXEC) {
		char **sh = calloc((size_t)(argc - i) + 2, sizeof(*sh));

		if (sh) {
			sh[0] = "/bin/sh";
			sh[1] = prog;
			for (int k = i + 1; k < argc; k++)
				sh[k - i + 1] = argv[k];
			execv(sh[0], sh);
			free(sh);
		}
	}
	/*
	 * As env(1): 127 when something it names is not there (a script's
	 * interpreter), 126 when it is there and cannot run.
	 */
	cli_error("run: %s: cannot execute: %s", argv[i], strerror(err));
	return err == ENOENT ? 127 : 126;
}
