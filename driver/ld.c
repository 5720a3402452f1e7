// SPDX-License-Identifier: MIT
/*
 * fineibt-ld: the link-time veneers (veneer.c) for builds that use a stock
 * clang with `pkg-config --cflags --libs fineibt` instead of fineibt-cc.
 * The .pc file's Libs name this wrapper with --ld-path=, so clang hands it
 * the linker command line it built; we scan the objects and archives of
 * that line as fineibt-cc would, add the veneer object and one
 * --wrap=<name> per veneer, and run the real linker: FINEIBT_LD_REAL,
 * else ld.lld-22, else ld, with full RELRO (-z relro -z now) as fineibt-cc
 * links. Then the module index is filled in, as the driver does after its
 * link.
 *
 * It is the same binary as fineibt-cc (a link named fineibt-ld), so the
 * veneer code exists once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

/* Objects, archives and the user's shared libraries of the command line. */
static void fi_ld_inputs(int argc, char **argv, struct fi_argv *objs,
			 struct fi_argv *shlibs, const char **out,
			 bool *partial)
{
	struct fi_argv dirs = { 0 }, names = { 0 };
	char path[PATH_MAX];

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		size_t at = 0;

		if (!strcmp(s, "-r") || !strcmp(s, "--relocatable") ||
		    !strcmp(s, "-i"))
			*partial = true;
		/* The output as lld takes it: the last one named. */
		switch (fi_ld_out_word(s, strlen(s), &at)) {
		case 2:
			if (i + 1 < argc)
				*out = argv[++i];
			continue;
		case 1:
			*out = s + at;
			continue;
		}
		if (!strcmp(s, "-L") && i + 1 < argc)
			fi_argv_add(&dirs, argv[i + 1]);
		else if (!strncmp(s, "-L", 2) && s[2])
			fi_argv_add(&dirs, s + 2);
		if (!strcmp(s, "-l") && i + 1 < argc)
			fi_argv_add(&names, argv[i + 1]);
		else if (!strncmp(s, "-l", 2) && s[2] && s[2] != ':')
			fi_argv_add(&names, s + 2);
		if (fi_ld_takes_value(s, strlen(s))) {
			i++;
			continue;
		}
		if (s[0] == '-' || !fi_exists(s))
			continue;
		if (fi_has_suffix(s, ".o") || fi_has_suffix(s, ".a") ||
		    fi_has_suffix(s, ".lo"))
			fi_argv_add(objs, s);
		else if (fi_is_shlib(s))
			fi_argv_add(shlibs, s);
	}
	for (size_t n = 0; n < names.n; n++) {
		for (size_t k = 0; k < dirs.n; k++) {
			snprintf(path, sizeof(path), "%s/lib%s.so", dirs.v[k],
				 names.v[n]);
			if (fi_exists(path)) {
				fi_argv_add(shlibs, path);
				break;
			}
		}
	}
	fi_argv_free(&dirs);
	fi_argv_free(&names);
}

static const char *fi_env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* A static link (static-pie too): its own code relocates it. */
static bool fi_ld_static(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-static") || !strcmp(argv[i], "--static") ||
		    !strcmp(argv[i], "-static-pie") ||
		    !strcmp(argv[i], "--no-dynamic-linker"))
			return true;
	}
	return false;
}

int fi_ld_main(int argc, char **argv)
{
	struct fi_argv link = { 0 }, objs = { 0 }, shlibs = { 0 }, ven = { 0 };
	const char *out = "a.out", *cc, *nm;
	char real[PATH_MAX], tmp[PATH_MAX];
	bool partial = false;
	int rc;

	fi_verbose = getenv("FINEIBT_CC_VERBOSE") &&
		     strcmp(getenv("FINEIBT_CC_VERBOSE"), "0");
	cc = fi_env_or("FINEIBT_CC_CLANG", "clang-22");
	nm = fi_env_or("FINEIBT_CC_NM", "llvm-nm-22");
	snprintf(real, sizeof(real), "%s", fi_env_or("FINEIBT_LD_REAL", ""));
	if (!real[0] && !fi_which("ld.lld-22", real, sizeof(real)))
		snprintf(real, sizeof(real), "ld");
	fi_ld_inputs(argc, argv, &objs, &shlibs, &out, &partial);
	fi_argv_add(&link, real);
	/*
	 * Full RELRO, as fineibt-cc links: the GOT is read-only once relocated,
	 * so no write can turn a PLT call into a jump anywhere. Before the
	 * caller's line, so that a later -z lazy / -z norelro there opts out.
	 */
	if (!partial) {
		fi_argv_add(&link, "-z");
		fi_argv_add(&link, "relro");
		fi_argv_add(&link, "-z");
		fi_argv_add(&link, "now");
	}
	if (fi_is_lld(real) && !partial) {
		fi_argv_add(&link, "--undefined-version");
		fi_argv_add(&link, "-z");
		fi_argv_add(&link, "nostart-stop-gc");
	}
	for (int i = 1; i < argc; i++)
		fi_argv_add(&link, argv[i]);
	snprintf(tmp, sizeof(tmp), "%s/fineibt-ld-XXXXXX",
		 fi_env_or("TMPDIR", "/tmp"));
	if (!mkdtemp(tmp)) {
		/* @tmp holds the template: its directory is TMPDIR's. */
		*strrchr(tmp, '/') = '\0';
		fprintf(stderr, "fineibt-ld: error: cannot make a temporary directory "
			"in %s (%s); set TMPDIR to a writable directory\n",
			tmp, strerror(errno));
		return 1;
	}
	rc = 0;
	if (!partial && fi_veneers(cc, nm, tmp, &objs, &shlibs, &ven) < 0)
		rc = 1;
	/* veneer.c speaks to a compiler driver (-Wl,--wrap=); we are the
	 * linker's command line. */
	for (size_t i = 0; !rc && i < ven.n; i++)
		fi_argv_add(&link, strncmp(ven.v[i], "-Wl,", 4) ?
				   ven.v[i] : ven.v[i] + 4);
	if (!rc)
		rc = fi_run(&link, false);
	if (!rc && !partial && fi_index_fill(out, !fi_ld_static(argc, argv)) > 0)
		rc = 1;
	if (!getenv("FINEIBT_CC_KEEP_TEMPS"))
		fi_rmtree(tmp);
	fi_argv_free(&link);
	fi_argv_free(&objs);
	fi_argv_free(&shlibs);
	fi_argv_free(&ven);
	return rc;
}
