// SPDX-License-Identifier: MIT
/*
 * Link-time veneers for external functions whose address kCFI code takes
 * (DESIGN §5). A program that stores &write in a table calls it through a
 * kCFI check, but libc's write has no type hash in front of it, so every
 * kCFI-family check would fail. For each such function the compiler left
 * a weak absolute __kcfi_typeid_<name> holding the expected hash; we give
 * the program a veneer carrying that hash:
 *
 *   __cfi___wrap_<name>:  movl $<hash>, %edi   (kCFI preamble; the value
 *                                              of __kcfi_typeid_<name>)
 *                         11 x nop                          (patchable entry)
 *   __wrap_<name>:        endbr64
 *                         jmp __real_<name>
 *
 * and link with --wrap=<name>, which sends every reference the program's
 * own objects make to <name> (address-taking and direct calls alike) to
 * __wrap_<name>, and __real_<name> to the real function. The preamble is
 * listed in __patchable_function_entries, so the passes rewrite and
 * rehash it like any compiled function.
 *
 * The arity register is edi (7, "arguments on the stack too"): we cannot
 * know how many registers the callee reads, and under cfi=bhi a larger
 * arity only clobbers more registers on the mispredicted path.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "image.h"

#define TYPEID_PREFIX "__kcfi_typeid_"

/* A small string set: sorted array, binary search. */
struct fi_names {
	char **v;
	size_t n, cap;
};

static int fi_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fi_names_add(struct fi_names *s, const char *name)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("fineibt-cc");
			exit(1);
		}
	}
	s->v[s->n] = strdup(name);
	if (!s->v[s->n]) {
		perror("fineibt-cc");
		exit(1);
	}
	s->n++;
}

/* Sort and drop duplicates. */
static void fi_names_seal(struct fi_names *s)
{
	size_t i, j = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), fi_cmp_str);
	for (i = 1; i < s->n; i++) {
		if (!strcmp(s->v[i], s->v[j]))
			free(s->v[i]);
		else
			s->v[++j] = s->v[i];
	}
	s->n = j + 1;
}

static bool fi_names_has(const struct fi_names *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof(*s->v), fi_cmp_str);
}

static void fi_names_free(struct fi_names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* A C identifier: the only names we put into generated assembly. */
static bool fi_is_ident(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' &&
		    *s != '$')
			return false;
	}
	return true;
}

/*
 * One line of `nm -P`: "name type value size", or a "file:" header.
 * Global definitions go to @defs, typeids to @typeids as "name hash".
 */
static void fi_nm_line(char *line, struct fi_names *defs,
		       struct fi_names *typeids)
{
	char *name = strtok(line, " \t\n");
	char *type = strtok(NULL, " \t\n");

	if (!name || !type || type[1])
		return;
	if (!strncmp(name, TYPEID_PREFIX, strlen(TYPEID_PREFIX))) {
		char *value = strtok(NULL, " \t\n"), *end;
		unsigned long long hash;
		char entry[512];

		/* "name hash": the hash goes into the veneer as an immediate,
		 * which every linker accepts in any output (GNU ld refuses an
		 * R_X86_64_32 against the weak symbol in a PIE). */
		if (*type == 'U' || *type == 'w' || !value ||
		    strlen(name) - strlen(TYPEID_PREFIX) > 400)
			return;
		hash = strtoull(value, &end, 16);
		if (*end || hash > 0xffffffffULL)
			return;
		snprintf(entry, sizeof(entry), "%s %08llx",
			 name + strlen(TYPEID_PREFIX), hash);
		fi_names_add(typeids, entry);
		return;
	}
	/* Upper case = global; U undefined; w/v weak undefined/object. */
	if (isupper((unsigned char)*type) && *type != 'U')
		fi_names_add(defs, name);
}

static int fi_nm_scan(const char *nm, const struct fi_argv *objs,
		      struct fi_names *defs, struct fi_names *typeids)
{
	struct fi_argv cmd = { 0 };
	char line[4096];
	FILE *in;
	int fd, rc;

	fi_argv_add(&cmd, nm);
	fi_argv_add(&cmd, "-P");
	fi_argv_add(&cmd, "--no-sort");
	/* Objects without symbols (crtn.o of every link) are no news. */
	fi_argv_add(&cmd, "--quiet");
	for (size_t i = 0; i < objs->n; i++)
		fi_argv_add(&cmd, objs->v[i]);
	fd = fi_tmpfile();
	if (fd < 0)
		return -1;
	rc = fi_run_to_fd(&cmd, fd);
	fi_argv_free(&cmd);
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return -1;
	}
	rewind(in);
	while (fgets(line, sizeof(line), in))
		fi_nm_line(line, defs, typeids);
	fclose(in);
	if (rc) {
		fprintf(stderr, "fineibt-cc: error: %s failed (status %d)\n",
			nm, rc);
		return -1;
	}
	fi_names_seal(defs);
	fi_names_seal(typeids);
	return 0;
}

static void fi_emit_veneer(FILE *s, const char *entry, unsigned int idx)
{
	char name[512];
	const char *hash = strchr(entry, ' ');

	snprintf(name, sizeof(name), "%.*s", (int)(hash - entry), entry);
	hash++;
	fprintf(s,
		"\t.section .text.fineibt_veneer.%s,\"ax\",@progbits\n"
		"\t.p2align 4\n"
		"\t.type __cfi___wrap_%s,@function\n"
		"__cfi___wrap_%s:\n"
		"\tmovl $0x%s, %%edi\t/* __kcfi_typeid_%s */\n"
		".Lfi_pfe_%u:\n"
		"\t.rept 11\n\tnop\n\t.endr\n"
		"\t.globl __wrap_%s\n"
		"\t.hidden __wrap_%s\n"
		"\t.type __wrap_%s,@function\n"
		"__wrap_%s:\n"
		"\tendbr64\n"
		"\tjmp __real_%s@PLT\n"
		"\t.size __wrap_%s, .-__wrap_%s\n"
		"\t.weak __real_%s\n"
		"\t.section __patchable_function_entries,\"awo\",@progbits,"
		".text.fineibt_veneer.%s\n"
		"\t.p2align 3\n"
		"\t.quad .Lfi_pfe_%u\n",
		name, name, name, hash, name, idx, name, name, name, name,
		name, name, name, name, name, idx);
}

static int fi_write_veneers(const char *path, const struct fi_names *names)
{
	FILE *s = fopen(path, "w");

	if (!s) {
		fprintf(stderr, "fineibt-cc: error: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(s, "/* generated by fineibt-cc: kCFI veneers for "
		   "uninstrumented functions whose address is taken */\n");
	for (size_t i = 0; i < names->n; i++)
		fi_emit_veneer(s, names->v[i], (unsigned int)i);
	fprintf(s, "\t.section .note.GNU-stack,\"\",@progbits\n");
	if (fclose(s)) {
		fprintf(stderr, "fineibt-cc: error: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Length of the name part of a "name hash" entry. */
static size_t fi_entry_len(const char *e)
{
	const char *sp = strchr(e, ' ');

	return sp ? (size_t)(sp - e) : strlen(e);
}

/* Does @im define a function @name that carries a kCFI preamble? */
static bool fi_lib_has_kcfi_func(const struct fi_image *im, const char *entry)
{
	size_t len = fi_entry_len(entry);

	for (size_t i = 0; i < im->nsyms; i++) {
		const struct fi_func *f;

		if (!im->syms[i].name || strncmp(im->syms[i].name, entry, len) ||
		    im->syms[i].name[len])
			continue;
		f = fi_image_func(im, im->syms[i].addr);
		if (f && f->form == FI_PRE_KCFI)
			return true;
	}
	return false;
}

/*
 * A function a kCFI shared library of the link defines already has a
 * preamble: no veneer for it (which also keeps &name equal to the
 * library's own pointer to it). Libraries that cannot be read are taken
 * as uninstrumented.
 */
static void fi_drop_instrumented(struct fi_names *need,
				 const struct fi_argv *shlibs)
{
	/* Quiet: a library's odd sites are not the link's business. */
	fineibt_print_fn old = fineibt_set_print(NULL);

	for (size_t l = 0; l < shlibs->n && need->n; l++) {
		struct fi_image im;
		size_t j = 0;

		if (fi_image_open(&im, shlibs->v[l], NULL, 0))
			continue;
		for (size_t i = 0; i < need->n; i++) {
			if (fi_lib_has_kcfi_func(&im, need->v[i]))
				free(need->v[i]);
			else
				need->v[j++] = need->v[i];
		}
		need->n = j;
		fi_image_close(&im);
	}
	fineibt_set_print(old);
}

int fi_veneers(const char *cc, const char *nm, const char *dir,
	       const struct fi_argv *objs, const struct fi_argv *shlibs,
	       struct fi_argv *link)
{
	struct fi_names defs = { 0 }, typeids = { 0 }, need = { 0 };
	struct fi_argv as = { 0 };
	char src[4096], obj[4096];
	int rc = -1;

	if (!objs->n)
		return 0;
	if (fi_nm_scan(nm, objs, &defs, &typeids))
		goto out;
	for (size_t i = 0; i < typeids.n; i++) {
		const char *e = typeids.v[i];
		size_t len = fi_entry_len(e);
		char name[512];

		snprintf(name, sizeof(name), "%.*s", (int)len, e);
		/* Sorted: the same name with another hash follows at once. */
		if (i && !strncmp(typeids.v[i - 1], e, len) &&
		    typeids.v[i - 1][len] == ' ') {
			fprintf(stderr, "fineibt-cc: warning: '%s' is declared "
				"with different types in the link's objects; its "
				"veneer carries one of them (calls through the "
				"other trap)\n", name);
			continue;
		}
		if (!fi_names_has(&defs, name) && fi_is_ident(name))
			fi_names_add(&need, e);
	}
	fi_drop_instrumented(&need, shlibs);
	rc = 0;
	if (!need.n)
		goto out;
	snprintf(src, sizeof(src), "%s/veneers.S", dir);
	snprintf(obj, sizeof(obj), "%s/veneers.o", dir);
	rc = -1;
	if (fi_write_veneers(src, &need))
		goto out;
	fi_argv_add(&as, cc);
	fi_argv_add(&as, "-c");
	fi_argv_add(&as, src);
	fi_argv_add(&as, "-o");
	fi_argv_add(&as, obj);
	if (fi_run(&as, false)) {
		fprintf(stderr, "fineibt-cc: error: could not assemble the "
				"veneers (%s)\n", src);
		goto out;
	}
	fi_argv_add(link, obj);
	for (size_t i = 0; i < need.n; i++)
		fi_argv_addf(link, "-Wl,--wrap=%.*s", (int)fi_entry_len(need.v[i]),
			     need.v[i]);
	rc = (int)need.n;
out:
	fi_argv_free(&as);
	fi_names_free(&defs);
	fi_names_free(&typeids);
	fi_names_free(&need);
	return rc;
}
