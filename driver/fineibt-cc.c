// SPDX-License-Identifier: MIT
/*
 * fineibt-cc: a compiler driver for CC= in Make, autotools and CMake
 * builds. It runs clang-22 with the kCFI flags of DESIGN §1 and, when it
 * links, adds the fineibt runtime (libfineibt.so, or libfineibt.a with
 * -static-fineibt), the per-module crt (libfineibt_crt.a, whole) and the
 * veneers for external functions whose address the program takes.
 *
 * A link that names sources is split: each source is compiled to a
 * temporary object first, so that the veneer scan sees every object of
 * the link. Everything the driver does not know is passed through.
 *
 * Driver options (removed before clang sees them) and environment:
 *   --fineibt-exact / FINEIBT_CC_EXACT=1     exact pointer types in hashes
 *   -static-fineibt / FINEIBT_CC_STATIC=1    link libfineibt.a
 *   --fineibt-no-veneers                     no link-time veneers
 *   --fineibt-no-jump-tables / FINEIBT_CC_JUMP_TABLES=0
 *                                            compare chains instead of
 *                                            switch jump tables (the default
 *                                            keeps them: DESIGN §1)
 *   --fineibt-jump-tables                    keep them (the default)
 *   --fineibt-no-runtime                     kCFI flags, thunks, veneers; no runtime
 *   --fineibt-no-relro                       no -z relro -z now at link time
 *   --fineibt-no-skip-endbr / FINEIBT_CC_SKIP_ENDBR=0
 *                                            direct calls keep landing on
 *                                            the ENDBR (driver/direct.c)
 *   --fineibt-help                           list these (fi_help)
 *   FINEIBT_CC_RUNPATH=1    name the runtime by its soname and a RUNPATH
 *                           (searched; LD_LIBRARY_PATH may then choose
 *                           another copy) instead of by its absolute path
 *   FINEIBT_CC_CLANG=path   the compiler (default clang-22, clang++-22
 *                           when invoked as fineibt-c++)
 *   FINEIBT_CC_LD=path      the linker (default ld.lld-22 when present)
 *   FINEIBT_CC_OBJCOPY=path objcopy for driver/direct.c (llvm-objcopy-22)
 *   FINEIBT_CC_VERBOSE=1    print each command
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "trustdir.h"
#include "fineibt.h"

struct fi_drv {
	const char *cc;
	const char *nm;
	char ld[PATH_MAX];		/* empty: clang's default linker */
	char libdir[PATH_MAX];		/* libfineibt.{so,a}, libfineibt_crt.a */
	bool exact, static_rt, full_static, veneers, jump_tables, runtime, relro;
	bool user_norelro;	/* the caller's own -z norelro */
	bool user_lazy;		/* the caller's own -z lazy */
	bool skip_endbr;	/* driver/direct.c after the link */
	bool link, shared, passthrough, has_x, partial;
	struct fi_argv args;		/* user arguments, driver options removed */
};

/* ------------------------------------------------------------ helpers */

static bool fi_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

static bool fi_env_off(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "0");
}

/* The last component of @path. */
static const char *fi_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* ---------------------------------------------------------- locating */

/*
 * Our files sit next to the driver (build/) or in ../lib/fineibt of an
 * installed prefix (bin/fineibt-cc).
 */
static int fi_find_libdir(struct fi_drv *d)
{
	static const char *const rel[] = { "", "/../lib/fineibt", "/../lib" };
	char exe[PATH_MAX], try[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(try, sizeof(try), "%s%s/libfineibt_crt.a", exe, rel[i]);
		if (fi_exists(try)) {
			snprintf(d->libdir, sizeof(d->libdir), "%s%s", exe, rel[i]);
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------ argument scan */

/* Options whose value is the next argument. */
static bool fi_takes_value(const char *a)
{
	static const char *const opts[] = {
		"-o", "-x", "-I", "-D", "-U", "-include", "-imacros",
		"-isystem", "-iquote", "-idirafter", "-iprefix",
		"-iwithprefix", "-iwithprefixbefore", "-isysroot", "-MF",
		"-MT", "-MQ", "-L", "-l", "-Xlinker", "-Xclang",
		"-Xassembler", "-Xpreprocessor", "-target", "-arch", "-T",
		"-z", "-u", "-e", "-mllvm", "--param", "-aux-info",
		"-dependency-file", "--sysroot", "-B", NULL,
	};

	for (size_t i = 0; opts[i]; i++) {
		if (!strcmp(a, opts[i]))
			return true;
	}
	return false;
}

static bool fi_is_source(const char *a)
{
	static const char *const ext[] = {
		".c", ".i", ".cc", ".cp", ".cxx", ".cpp", ".c++", ".C", ".ii",
		".s", ".S", ".sx", ".m", ".mm", NULL,
	};

	for (size_t i = 0; ext[i]; i++) {
		if (fi_has_suffix(a, ext[i]))
			return true;
	}
	return false;
}

/* Arguments that make clang do something other than build. */
/*
 * Does @a ask the linker for -z @word (norelro, lazy): -Wl,-z,WORD,
 * -Wl,-zWORD, or the value of -z or -Xlinker (@prev: the option @a is the
 * value of, or "")?
 */
static bool fi_says_z(const char *a, const char *prev, const char *word)
{
	char buf[PATH_MAX], *save = NULL;
	const char *last = "";

	if (!strcmp(prev, "-z"))
		return !strcmp(a, word);
	if (!strcmp(prev, "-Xlinker"))
		return (!strncmp(a, "-z", 2) && !strcmp(a + 2, word)) ||
		       !strcmp(a, word);
	if (strncmp(a, "-Wl,", 4) || strlen(a) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", a + 4);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if ((!strncmp(t, "-z", 2) && !strcmp(t + 2, word)) ||
		    (!strcmp(t, word) && !strcmp(last, "-z")))
			return true;
		last = t;
	}
	return false;
}

/* The caller's -z norelro / -z lazy, in @a (the value of @prev, or ""). */
static void fi_note_z(struct fi_drv *d, const char *a, const char *prev)
{
	if (fi_says_z(a, prev, "norelro"))
		d->user_norelro = true;
	if (fi_says_z(a, prev, "lazy"))
		d->user_lazy = true;
}

static bool fi_is_query(const char *a)
{
	return !strcmp(a, "--version") || !strcmp(a, "-dumpversion") ||
	       !strcmp(a, "-dumpmachine") || !strcmp(a, "-###") ||
	       !strncmp(a, "-print-", 7) || !strncmp(a, "--print-", 8) ||
	       !strcmp(a, "--help");
}

/*
 * -fsanitize=undefined includes -fsanitize=function, which clang refuses
 * beside kcfi: both check the type of an indirect call's target, and
 * kCFI is the check this driver is for. The rest of UBSan stays.
 */
static bool fi_wants_ubsan_function(const char *a)
{
	const char *p;

	if (strncmp(a, "-fsanitize=", 11))
		return false;
	for (p = a + 11; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");

		if ((n == 9 && !strncmp(p, "undefined", 9)) ||
		    (n == 8 && !strncmp(p, "function", 8)))
			return true;
		p += n;
	}
	return false;
}

static int fi_parse(struct fi_drv *d, int argc, char **argv)
{
	int inputs = 0;
	bool only_v = true;

	d->veneers = d->runtime = d->link = d->relro = true;
	d->skip_endbr = !fi_env_off("FINEIBT_CC_SKIP_ENDBR");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--fineibt-exact")) {
			d->exact = true;
			continue;
		}
		if (!strcmp(a, "-static-fineibt")) {
			d->static_rt = true;
			continue;
		}
		if (!strcmp(a, "--fineibt-no-veneers")) {
			d->veneers = false;
			continue;
		}
		if (!strcmp(a, "--fineibt-jump-tables")) {
			d->jump_tables = true;
			continue;
		}
		if (!strcmp(a, "--fineibt-no-jump-tables")) {
			d->jump_tables = false;
			continue;
		}
		if (!strcmp(a, "--fineibt-no-runtime")) {
			d->runtime = false;
			continue;
		}
		if (!strcmp(a, "--fineibt-no-relro")) {
			d->relro = false;
			continue;
		}
		if (!strcmp(a, "--fineibt-no-skip-endbr")) {
			d->skip_endbr = false;
			continue;
		}
		/*
		 * Any other --fineibt-* is a typo of ours, not clang's: say
		 * where the list is, rather than let clang call it unknown.
		 * (--fineibt-help and --fineibt-version stand alone: main.)
		 */
		if (!strncmp(a, "--fineibt-", 10)) {
			if (!strcmp(a, "--fineibt-help") || !strcmp(a, "--fineibt-version"))
				fprintf(stderr, "fineibt-cc: error: '%s' takes no other "
					"argument\n", a);
			else
				fprintf(stderr, "fineibt-cc: error: unknown driver option "
					"'%s'; the driver's options: fineibt-cc "
					"--fineibt-help\n", a);
			return -1;
		}
		fi_argv_add(&d->args, a);
		if (fi_wants_ubsan_function(a))
			fi_argv_add(&d->args, "-fno-sanitize=function");
		fi_note_z(d, a, "");
		if (strcmp(a, "-v"))
			only_v = false;
		if (fi_is_query(a))
			d->passthrough = true;
		if (!strcmp(a, "-c") || !strcmp(a, "-S") || !strcmp(a, "-E") ||
		    !strcmp(a, "-M") || !strcmp(a, "-MM") ||
		    !strcmp(a, "-fsyntax-only") || !strcmp(a, "-emit-llvm"))
			d->link = false;
		if (!strcmp(a, "-shared"))
			d->shared = true;
		/* A partial link (-r) makes an object for a later link, which
		 * gets the runtime then; a fully static one cannot use the .so. */
		if (!strcmp(a, "-r") || !strcmp(a, "-Wl,-r")) {
			d->runtime = false;
			d->partial = true;
		}
		if (!strcmp(a, "-static") || !strcmp(a, "-static-pie"))
			d->static_rt = d->full_static = true;
		if (!strncmp(a, "-x", 2))
			d->has_x = true;
		if (fi_takes_value(a) && i + 1 < argc) {
			fi_note_z(d, argv[i + 1], a);
			fi_argv_add(&d->args, argv[++i]);
			continue;
		}
		if (a[0] != '-' || !strcmp(a, "-"))
			inputs++;
	}
	/* `cc -v` alone, or no input at all: nothing to build; clang
	 * prints its version or its own error. */
	if (!inputs || only_v)
		d->passthrough = true;
	return 0;
}

/* ---------------------------------------------------------- the flags */

static bool fi_probe_arity(const struct fi_drv *d)
{
	struct fi_argv a = { 0 };
	const char *env = getenv("FINEIBT_CC_ARITY");
	int rc;

	if (env && *env)
		return strcmp(env, "0") != 0;
	fi_argv_add(&a, d->cc);
	fi_argv_add(&a, "-fsanitize=kcfi");
	fi_argv_add(&a, "-fsanitize-kcfi-arity");
	fi_argv_add(&a, "-fsyntax-only");
	fi_argv_add(&a, "-x");
	fi_argv_add(&a, "c");
	fi_argv_add(&a, "/dev/null");
	rc = fi_run(&a, true);
	fi_argv_free(&a);
	return rc == 0;
}

static void fi_add_kcfi_flags(const struct fi_drv *d, struct fi_argv *a,
			      bool arity)
{
	static const char *const base[] = {
		"-fsanitize=kcfi", "-fpatchable-function-entry=11,11",
		"-falign-functions=16", "-fcf-protection=branch",
		"-mretpoline-external-thunk", "-mindirect-branch-cs-prefix",
		NULL,
	};

	for (size_t i = 0; base[i]; i++)
		fi_argv_add(a, base[i]);
	if (arity)
		fi_argv_add(a, "-fsanitize-kcfi-arity");
	if (!d->exact)
		fi_argv_add(a, "-fsanitize-cfi-icall-generalize-pointers");
	/*
	 * A call to a static function in the same section is resolved by
	 * the assembler and leaves no relocation: with a section per
	 * function, driver/direct.c sees those calls too.
	 */
	if (d->skip_endbr)
		fi_argv_add(a, "-ffunction-sections");
	if (d->jump_tables) {
		fi_argv_add(a, "-Xclang");
		fi_argv_add(a, "-target-feature");
		fi_argv_add(a, "-Xclang");
		fi_argv_add(a, "-retpoline-indirect-branches");
	}
}

/*
 * The output loads the runtime from @dir, in a setuid or setgid program
 * too: by its absolute path, or (@runpath) through a RUNPATH that is
 * searched for every library the program needs. The driver cannot know
 * whether the output will become set-ID, so it warns whenever someone
 * other than root and the user linking could change that directory
 * (`fineibt inspect` flags such a setuid file: docs/protection.md).
 */
static void fi_warn_runpath(const char *dir, bool runpath)
{
	char why[PATH_MAX + 64];

	if (fi_dir_untrusted(dir, geteuid(), why, sizeof(why)) != 1)
		return;
	if (runpath)
		fprintf(stderr, "fineibt-cc: warning: RUNPATH %s: %s; a setuid or "
			"setgid program linked now would load its libraries from "
			"there (install fineibt where only root can write, or link "
			"such programs with -static-fineibt)\n", dir, why);
	else
		fprintf(stderr, "fineibt-cc: warning: runtime directory %s: %s; "
			"a setuid or setgid program linked now would load its "
			"runtime from there (install fineibt where only root can "
			"write, or link such programs with -static-fineibt)\n",
			dir, why);
}

static void fi_add_runtime(const struct fi_drv *d, struct fi_argv *a)
{
	char copy[PATH_MAX + 32];

	/* Without the runtime the module still calls through the indirect
	 * thunks (-mretpoline-external-thunk): the crt archive, not whole,
	 * gives just those, and no module hook. A partial link (-r) leaves
	 * them to the final link. */
	if (!d->runtime) {
		if (!d->partial)
			fi_argv_addf(a, "%s/libfineibt_crt.a", d->libdir);
		return;
	}
	fi_argv_add(a, "-Wl,--whole-archive");
	fi_argv_addf(a, "%s/libfineibt_crt.a", d->libdir);
	fi_argv_add(a, "-Wl,--no-whole-archive");
	/* The crt's RTLD_NEXT entry (crt/next.S) names libc's compat
	 * dlsym@GLIBC_2.2.5 and dlvsym@GLIBC_2.2.5; a fully static link has
	 * no versions and no RTLD_NEXT to serve (its runtime interposes no
	 * dlsym): the slots are 0 and the entry answers NULL. */
	if (d->full_static) {
		fi_argv_add(a, "-Wl,--defsym=\"dlsym@GLIBC_2.2.5\"=0");
		fi_argv_add(a, "-Wl,--defsym=\"dlvsym@GLIBC_2.2.5\"=0");
	}
	if (d->static_rt) {
		/* One runtime per process: a shared object built this way
		 * reaches the executable's through the dynamic symbol. */
		if (!d->shared) {
			/* -u: the crt's reference is weak and would not pull
			 * the runtime out of the archive by itself. */
			fi_argv_add(a, "-Wl,-u,fineibt_rt_hook");
			/* Its start before any constructor (preinit.c). */
			fi_argv_add(a, "-Wl,-u,fi_rt_preinit");
			fi_argv_addf(a, "%s/libfineibt.a", d->libdir);
			fi_argv_add(a, "-Wl,--export-dynamic-symbol=fineibt_rt_hook");
			/* Shared objects' thunks find the coarse check there. */
			fi_argv_add(a, "-Wl,--export-dynamic-symbol=__fineibt_coarse");
			/* The executable's lookups of libc's sigaction & co.
			 * get the interposers (src/interpose/dlsym_a.c). */
			if (!d->full_static)
				fi_argv_add(a, "-Wl,--wrap=dlsym,--wrap=dlvsym");
		}
		return;
	}
	/* The runtime by its absolute path: loaded without a search
	 * (driver/runtime.c), unless asked for the soname and a RUNPATH. */
	if (!fi_env_on("FINEIBT_CC_RUNPATH") &&
	    fi_runtime_link_copy(d->libdir, copy, sizeof(copy))) {
		fi_argv_add(a, copy);
		fi_warn_runpath(d->libdir, false);
		return;
	}
	fi_argv_addf(a, "%s/libfineibt.so", d->libdir);
	fi_argv_addf(a, "-Wl,-rpath,%s", d->libdir);
	fi_warn_runpath(d->libdir, true);
}

/* ------------------------------------------------------------- help */

/*
 * Every option and variable the driver itself reads (tests/e2e/
 * compat_build.sh checks that each one it parses is listed here and in
 * man/fineibt-cc.1).
 */
static void fi_help(void)
{
	fputs("usage: fineibt-cc [clang options] file...\n"
	      "clang-22 with the kCFI flags, the fineibt crt, runtime and "
	      "libc veneers.\n"
	      "Driver options (removed before clang sees them):\n"
	      "  --fineibt-exact        exact pointer types in the type hashes\n"
	      "  -static-fineibt        link libfineibt.a instead of libfineibt.so\n"
	      "  --fineibt-no-veneers   no link-time veneers for libc functions\n"
	      "  --fineibt-no-jump-tables  switches as compare chains (default:\n"
	      "                         jump tables, notrack jumps; computed goto\n"
	      "                         is then an unchecked jmp: fineibt-cc(1))\n"
	      "  --fineibt-jump-tables  keep jump tables (the default)\n"
	      "  --fineibt-no-runtime   kCFI flags, thunks and veneers only; no\n"
	      "                         runtime (the program runs kCFI as compiled)\n"
	      "  --fineibt-no-relro     link without -z relro -z now (the default\n"
	      "                         makes the GOT read-only after start-up)\n"
	      "  --fineibt-no-skip-endbr  direct calls land on func+0's ENDBR (the\n"
	      "                         default moves them past it after the link)\n"
	      "  --fineibt-version      print the driver's version\n"
	      "  --fineibt-help         this list (--help is clang's)\n"
	      "Environment:\n"
	      "  FINEIBT_CC_EXACT=1, FINEIBT_CC_STATIC=1, FINEIBT_CC_JUMP_TABLES=0,\n"
	      "  FINEIBT_CC_SKIP_ENDBR=0  as the options above\n"
	      "  FINEIBT_CC_CLANG, FINEIBT_CC_LD, FINEIBT_CC_NM, FINEIBT_CC_OBJCOPY\n"
	      "                         compiler, linker, nm and objcopy to run\n"
	      "  FINEIBT_CC_ARITY=0|1   -fsanitize-kcfi-arity off/on (default: probed)\n"
	      "  FINEIBT_CC_VERBOSE=1   print each command\n"
	      "  FINEIBT_CC_KEEP_TEMPS=1  keep the temporary directory\n"
	      "  FINEIBT_CC_RUNPATH=1   name the runtime by soname + RUNPATH (a\n"
	      "                         search; LD_LIBRARY_PATH can pick another\n"
	      "                         copy) instead of by its absolute path\n"
	      "Invoked as fineibt-ld (pkg-config's --ld-path), it is a linker\n"
	      "wrapper that adds the veneers; FINEIBT_LD_REAL is the linker it runs.\n"
	      "Programs read FINEIBT_CFI at start-up: see fineibt-cfi(7).\n",
	      stdout);
}

/* ----------------------------------------------------------- the steps */

static int fi_exec_clang(const struct fi_drv *d, bool kcfi, bool arity)
{
	struct fi_argv a = { 0 };

	fi_argv_add(&a, d->cc);
	if (kcfi)
		fi_add_kcfi_flags(d, &a, arity);
	for (size_t i = 0; i < d->args.n; i++)
		fi_argv_add(&a, d->args.v[i]);
	fi_show(&a);
	execvp(a.v[0], a.v);
	fprintf(stderr, "fineibt-cc: error: cannot run %s: %s\n", d->cc,
		strerror(errno));
	return 127;
}

static bool fi_asks_version(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--version"))
			return true;
	}
	return false;
}

/*
 * --version: clang's lines first (build systems read the first line to
 * name the compiler), then the driver's own.
 */
static int fi_version(const struct fi_drv *d)
{
	struct fi_argv a = { 0 };
	int rc;

	fi_argv_add(&a, d->cc);
	for (size_t i = 0; i < d->args.n; i++)
		fi_argv_add(&a, d->args.v[i]);
	fflush(stdout);
	rc = fi_run(&a, false);
	fi_argv_free(&a);
	printf("fineibt-cc: fineibt %s (kCFI flags, crt and runtime of fineibt)\n",
	       fineibt_version());
	return rc;
}

/* Compile @src to @obj with every user flag except inputs and -o. */
static int fi_compile_one(const struct fi_drv *d, bool arity,
			  const char *src, const char *obj)
{
	struct fi_argv a = { 0 };
	int rc;

	fi_argv_add(&a, d->cc);
	fi_add_kcfi_flags(d, &a, arity);
	for (size_t i = 0; i < d->args.n; i++) {
		const char *s = d->args.v[i];

		if (fi_takes_value(s) && i + 1 < d->args.n) {
			if (strcmp(s, "-o") && strcmp(s, "-l") &&
			    strcmp(s, "-L") && strcmp(s, "-Xlinker") &&
			    strcmp(s, "-T") && strcmp(s, "-z") &&
			    strcmp(s, "-u") && strcmp(s, "-e")) {
				fi_argv_add(&a, s);
				fi_argv_add(&a, d->args.v[i + 1]);
			}
			i++;
			continue;
		}
		if (s[0] != '-' || !strncmp(s, "-l", 2) ||
		    !strncmp(s, "-Wl,", 4) || !strncmp(s, "-L", 2))
			continue;
		fi_argv_add(&a, s);
	}
	fi_argv_add(&a, "-Wno-unused-command-line-argument");
	fi_argv_add(&a, "-c");
	fi_argv_add(&a, src);
	fi_argv_add(&a, "-o");
	fi_argv_add(&a, obj);
	rc = fi_run(&a, false);
	fi_argv_free(&a);
	return rc;
}

/*
 * The shared libraries of the link that the user named: explicit paths,
 * and -lNAME found as libNAME.so in the user's -L directories (the
 * system's libraries are not instrumented; no need to look there).
 */
static void fi_user_shlibs(const struct fi_argv *args, struct fi_argv *out)
{
	struct fi_argv dirs = { 0 }, names = { 0 };
	char path[PATH_MAX];

	for (size_t i = 0; i < args->n; i++) {
		const char *s = args->v[i];
		bool sep = i + 1 < args->n && s[2] == '\0';

		if (!strncmp(s, "-L", 2))
			fi_argv_add(&dirs, sep ? args->v[++i] : s + 2);
		else if (!strncmp(s, "-l", 2) && s[2] != ':')
			fi_argv_add(&names, sep ? args->v[++i] : s + 2);
		else if (fi_takes_value(s))
			i++;
		else if (s[0] != '-' && fi_is_shlib(s) && fi_exists(s))
			fi_argv_add(out, s);
	}
	for (size_t n = 0; n < names.n; n++) {
		for (size_t k = 0; k < dirs.n; k++) {
			snprintf(path, sizeof(path), "%s/lib%s.so", dirs.v[k],
				 names.v[n]);
			if (fi_exists(path)) {
				fi_argv_add(out, path);
				break;
			}
		}
	}
	fi_argv_free(&dirs);
	fi_argv_free(&names);
}

/* The file the link writes: the last -o, else clang's a.out. */
/* One word the linker is passed: a -Xlinker value, or a piece of a -Wl,
 * list (not NUL-terminated there). */
struct fi_ldword {
	const char *p;
	size_t len;
};

/*
 * The file the link writes: -o X, -oX, --output[=]X, or the linker's
 * own -o / --output passed through -Wl, or -Xlinker, which lld takes
 * last (clang's -o comes before the words passed to the linker); a.out
 * without any. The output is read and rewritten in place after the link
 * (its index, its DT_RELR), so a spelling missed here would leave the
 * output's index empty and rewrite an older a.out.
 */
static const char *fi_output(const struct fi_argv *args)
{
	/* One argument's bytes at most (MAX_ARG_STRLEN). */
	static char buf[128 * 1024];
	const char *out = "a.out";
	struct fi_ldword w[256], lout = { NULL, 0 };
	size_t n = 0;

	for (size_t i = 0; i < args->n; i++) {
		const char *s = args->v[i];

		if ((!strcmp(s, "-o") || !strcmp(s, "--output")) &&
		    i + 1 < args->n) {
			out = args->v[++i];
		} else if (!strncmp(s, "--output=", 9)) {
			out = s + 9;
		} else if (!strncmp(s, "-o", 2) && s[2]) {
			out = s + 2;
		} else if (!strncmp(s, "-Wl,", 4)) {
			for (const char *p = s + 4; n < 256;) {
				size_t len = strcspn(p, ",");

				w[n++] = (struct fi_ldword){ p, len };
				if (!p[len])
					break;
				p += len + 1;
			}
		} else if (!strcmp(s, "-Xlinker") && i + 1 < args->n) {
			if (n < 256)
				w[n++] = (struct fi_ldword){ args->v[i + 1],
							     strlen(args->v[i + 1]) };
			i++;
		} else if (fi_takes_value(s)) {
			i++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = 0;
		int k = fi_ld_out_word(w[i].p, w[i].len, &at);

		if (k == 2 && i + 1 < n)
			lout = w[++i];
		else if (k == 1)
			lout = (struct fi_ldword){ w[i].p + at, w[i].len - at };
		else if (fi_ld_takes_value(w[i].p, w[i].len))
			i++;	/* -soname -oX: a value, not the output */
	}
	if (!lout.p)
		return out;
	if (lout.len >= sizeof(buf))
		lout.len = sizeof(buf) - 1;	/* no such argument */
	memcpy(buf, lout.p, lout.len);
	buf[lout.len] = '\0';
	return buf;
}

/* Is @w (one linker option) --emit-relocs/-q, or a strip lld refuses
 * to combine with it? */
static bool fi_relocs_word(const char *w)
{
	static const char *const words[] = {
		"--emit-relocs", "-emit-relocs", "-q", "--strip-all",
		"-strip-all", "-s", NULL,
	};

	for (size_t i = 0; words[i]; i++) {
		if (!strcmp(w, words[i]))
			return true;
	}
	return false;
}

/*
 * Does the user's link keep its own relocations (-Wl,--emit-relocs: they
 * must stay true to the code) or strip all symbols (-s: lld refuses
 * --emit-relocs with it)? Then driver/direct.c stays out of the way.
 */
static bool fi_keeps_relocs(const struct fi_argv *args)
{
	for (size_t i = 0; i < args->n; i++) {
		const char *s = args->v[i];

		if (!strcmp(s, "-s"))
			return true;
		if (!strcmp(s, "-Xlinker") && i + 1 < args->n &&
		    fi_relocs_word(args->v[++i]))
			return true;
		if (!strncmp(s, "-Wl,", 4)) {
			char buf[PATH_MAX], *w, *save = NULL;

			snprintf(buf, sizeof(buf), "%s", s + 4);
			for (w = strtok_r(buf, ",", &save); w;
			     w = strtok_r(NULL, ",", &save)) {
				if (fi_relocs_word(w))
					return true;
			}
		}
	}
	return false;
}

static int fi_link(struct fi_drv *d, bool arity, const char *tmp)
{
	struct fi_argv link = { 0 }, objs = { 0 }, shlibs = { 0 };
	char obj[PATH_MAX];
	unsigned int nsrc = 0;
	bool skip;
	int rc;

	/* docs/protection.md, "-z norelro": what no rewrite can protect. */
	if (d->user_norelro)
		fprintf(stderr, "fineibt-cc: warning: -z norelro leaves .got, "
			".init_array and .fini_array writable, and ld.so calls "
			".fini_array without a check: one write redirects the "
			"exit in every mode\n");
	/* docs/protection.md, "-z norelro": the static runtime's table. */
	if (d->user_norelro && d->runtime && d->static_rt && !d->shared)
		fprintf(stderr, "fineibt-cc: warning: -z norelro with the static "
			"runtime leaves its table of interposers writable: the "
			"program will stop at start-up; drop -z norelro, or "
			"link against libfineibt.so\n");
	/* docs/protection.md, "A writable GOT": fineibt-cc's -z now undone. */
	if (d->user_lazy)
		fprintf(stderr, "fineibt-cc: warning: -z lazy leaves the GOT's "
			"PLT slots writable and bound only when first called: a "
			"write there redirects a PLT jump, which no mode checks "
			"(run the program with LD_BIND_NOW=1, as `fineibt run` "
			"does, or drop -z lazy)\n");
	fi_argv_add(&link, d->cc);
	fi_add_kcfi_flags(d, &link, arity);
	/*
	 * Full RELRO: the GOT is read-only once relocated, so no write can
	 * redirect a PLT jump (an unchecked transfer in every mode). Before
	 * the user's arguments, so that an explicit -z lazy still wins.
	 */
	if (d->relro && !d->partial) {
		fi_argv_add(&link, "-Wl,-z,relro");
		fi_argv_add(&link, "-Wl,-z,now");
	}
	/*
	 * DT_RELR (glibc 2.36): the relative relocations, one per function
	 * entry in __patchable_function_entries, as bitmap words the loader
	 * applies in a loop instead of 24-byte records (docs/bench.md,
	 * "The fixed start-up cost": 8,000 functions, -112k instructions
	 * in ld.so and a 390 KB smaller file). Not for a static executable
	 * (its own start-up code relocates it). A later
	 * -z nopack-relative-relocs wins.
	 */
	if (!d->partial && !d->full_static)
		fi_argv_add(&link, "-Wl,-z,pack-relative-relocs");
	/* lld, where plain clang-22 links with GNU ld: take what GNU ld takes. */
	if (d->ld[0] && fi_is_lld(d->ld) && !d->partial) {
		fi_argv_add(&link, "-Wl,--undefined-version");
		fi_argv_add(&link, "-Wl,-z,nostart-stop-gc");
	}
	for (size_t i = 0; i < d->args.n; i++) {
		const char *s = d->args.v[i];

		if (fi_takes_value(s) && i + 1 < d->args.n) {
			fi_argv_add(&link, s);
			fi_argv_add(&link, d->args.v[++i]);
			continue;
		}
		if (s[0] == '-' || d->has_x) {
			fi_argv_add(&link, s);
			continue;
		}
		if (fi_is_source(s)) {
			snprintf(obj, sizeof(obj), "%s/%u.o", tmp, nsrc++);
			rc = fi_compile_one(d, arity, s, obj);
			if (rc)
				goto out;
			fi_argv_add(&link, obj);
			fi_argv_add(&objs, obj);
			continue;
		}
		fi_argv_add(&link, s);
		if ((fi_has_suffix(s, ".o") || fi_has_suffix(s, ".a") ||
		     fi_has_suffix(s, ".lo")) && fi_exists(s))
			fi_argv_add(&objs, s);
	}
	fi_user_shlibs(&d->args, &shlibs);
	if (d->veneers && !d->partial &&
	    fi_veneers(d->cc, d->nm, tmp, &objs, &shlibs, &link) < 0) {
		rc = 1;
		goto out;
	}
	/* A user's -x applies to every later input: end it before ours. */
	if (d->has_x) {
		fi_argv_add(&link, "-x");
		fi_argv_add(&link, "none");
	}
	fi_add_runtime(d, &link);
	if (d->ld[0])
		fi_argv_addf(&link, "--ld-path=%s", d->ld);
	skip = d->skip_endbr && !d->partial && !fi_keeps_relocs(&d->args);
	if (skip)
		fi_argv_add(&link, "-Wl,--emit-relocs");
	fi_argv_add(&link, "-Wno-unused-command-line-argument");
	rc = fi_run(&link, false);
	if (!rc && skip)
		fi_direct_skip_endbr(fi_output(&d->args));
	if (!rc && d->runtime &&
	    fi_index_fill(fi_output(&d->args), !d->full_static) > 0)
		rc = 1;
out:
	fi_argv_free(&link);
	fi_argv_free(&objs);
	fi_argv_free(&shlibs);
	return rc;
}

static void fi_setup(struct fi_drv *d, const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	const char *ld = getenv("FINEIBT_CC_LD");
	const char *jt;

	base = base ? base + 1 : argv0;
	d->cc = getenv("FINEIBT_CC_CLANG");
	if (!d->cc || !*d->cc)
		d->cc = fi_has_suffix(base, "++") ? "clang++-22" : "clang-22";
	d->nm = getenv("FINEIBT_CC_NM");
	if (!d->nm || !*d->nm)
		d->nm = "llvm-nm-22";
	if (ld && *ld)
		snprintf(d->ld, sizeof(d->ld), "%s", ld);
	else if (!fi_which("ld.lld-22", d->ld, sizeof(d->ld)))
		d->ld[0] = '\0';
	d->exact = fi_env_on("FINEIBT_CC_EXACT");
	d->static_rt = fi_env_on("FINEIBT_CC_STATIC");
	/*
	 * Jump tables are kept unless asked otherwise: without them a switch
	 * becomes a compare chain, ~10% more instructions in interpreters.
	 * The `notrack jmp` of a table reads its target from a read-only
	 * table indexed by a bounds-checked value, so it is no new indirect
	 * call edge (docs/runtime.md, "Jump tables").
	 */
	jt = getenv("FINEIBT_CC_JUMP_TABLES");
	d->jump_tables = !jt || strcmp(jt, "0");
	fi_verbose = fi_env_on("FINEIBT_CC_VERBOSE");
}

int main(int argc, char **argv)
{
	struct fi_drv d = { 0 };
	char tmp[PATH_MAX];
	bool arity;
	int rc;

	fi_setup(&d, argv[0]);
	if (!strcmp(fi_base(argv[0]), "fineibt-ld"))
		return fi_ld_main(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "--fineibt-version")) {
		printf("fineibt-cc %s\n", fineibt_version());
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--fineibt-help")) {
		fi_help();
		return 0;
	}
	if (fi_parse(&d, argc, argv))
		return 1;
	/* clang's --help knows nothing of ours: say where they are. */
	if (d.passthrough && argc == 2 && !strcmp(argv[1], "--help"))
		fprintf(stderr, "fineibt-cc: clang's options follow; the "
				"driver's own: fineibt-cc --fineibt-help\n");
	if (fi_env_on("FINEIBT_CC_EXACT"))
		d.exact = true;
	if (d.passthrough && fi_asks_version(argc, argv))
		return fi_version(&d);
	if (d.passthrough)
		return fi_exec_clang(&d, false, false);
	arity = fi_probe_arity(&d);
	if (!d.link)
		return fi_exec_clang(&d, true, arity);
	if (fi_find_libdir(&d)) {
		fprintf(stderr, "fineibt-cc: error: cannot find libfineibt_crt.a "
				"next to this driver or in ../lib/fineibt\n");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s/fineibt-cc-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		/* @tmp holds the template: its directory is TMPDIR's. */
		*strrchr(tmp, '/') = '\0';
		fprintf(stderr, "fineibt-cc: error: cannot make a temporary directory "
			"in %s (%s); set TMPDIR to a writable directory\n",
			tmp, strerror(errno));
		return 1;
	}
	rc = fi_link(&d, arity, tmp);
	if (!fi_env_on("FINEIBT_CC_KEEP_TEMPS"))
		fi_rmtree(tmp);
	fi_argv_free(&d.args);
	return rc;
}
