// SPDX-License-Identifier: MIT
/*
 * Process and file helpers of the driver (driver.h), shared by the
 * compiler driver (fineibt-cc.c), the veneer pass (veneer.c) and the
 * linker wrapper (ld.c): argv building, running a tool, temporary files,
 * looking a program up in PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

extern char **environ;

bool fi_verbose;

static void fi_oom(void)
{
	fprintf(stderr, "fineibt-cc: error: out of memory\n");
	exit(1);
}

void fi_argv_add(struct fi_argv *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 32;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			fi_oom();
	}
	a->v[a->n] = strdup(s);
	if (!a->v[a->n])
		fi_oom();
	a->v[++a->n] = NULL;
}

void fi_argv_addf(struct fi_argv *a, const char *fmt, ...)
{
	char buf[PATH_MAX + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fi_argv_add(a, buf);
}

void fi_argv_free(struct fi_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

void fi_show(const struct fi_argv *a)
{
	if (!fi_verbose)
		return;
	fprintf(stderr, "fineibt-cc:");
	for (size_t i = 0; i < a->n; i++)
		fprintf(stderr, " %s", a->v[i]);
	fprintf(stderr, "\n");
}

/*
 * @spawn_err: NULL to say "cannot run" here when @a cannot be started,
 * else where the errno goes (and nothing is said: the caller words it).
 */
static int fi_spawn(const struct fi_argv *a, int out_fd, bool quiet,
		    int *spawn_err)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, err;

	fi_show(a);
	posix_spawn_file_actions_init(&fa);
	if (quiet) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	} else if (out_fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	}
	err = posix_spawnp(&pid, a->v[0], &fa, NULL, a->v, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		if (spawn_err)
			*spawn_err = err;
		else if (!quiet)
			fprintf(stderr, "fineibt-cc: error: cannot run %s: %s\n",
				a->v[0], strerror(err));
		return 127;
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return 127;
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

int fi_run(const struct fi_argv *a, bool quiet)
{
	return fi_spawn(a, -1, quiet, NULL);
}

int fi_run_try(const struct fi_argv *a, int *spawn_err)
{
	*spawn_err = 0;
	return fi_spawn(a, -1, false, spawn_err);
}

int fi_run_to_fd(const struct fi_argv *a, int fd)
{
	return fi_spawn(a, fd, false, NULL);
}

int fi_tmpfile(void)
{
	const char *t = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/fineibt-cc-XXXXXX", t ? t : "/tmp");
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

bool fi_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

bool fi_has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* The first of @names found in PATH, into @out; false if none. */
bool fi_which(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return fi_exists(name);
	}
	while (path && *path) {
		const char *end = strchrnul(path, ':');

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - path), path,
			 name);
		if (access(buf, X_OK) == 0) {
			snprintf(out, len, "%s", buf);
			return true;
		}
		path = *end ? end + 1 : end;
	}
	return false;
}

int fi_rmtree(const char *dir)
{
	struct fi_argv a = { 0 };
	int rc;

	fi_argv_add(&a, "rm");
	fi_argv_add(&a, "-rf");
	fi_argv_add(&a, dir);
	rc = fi_run(&a, true);
	fi_argv_free(&a);
	return rc;
}

bool fi_is_shlib(const char *s)
{
	const char *so = strstr(s, ".so");

	return so && (so[3] == '\0' || so[3] == '.');
}

/*
 * Is @ld lld (ld.lld, ld.lld-22, a path to one)? Plain clang-22 links with
 * GNU ld here; where lld is stricter by default the driver asks it for GNU
 * ld's behaviour (docs/runtime.md, "The linker"):
 *  --undefined-version: a version script may name symbols the library
 *    does not define (GNU ld ignores them; lld >= 16 refuses the link);
 *  -z nostart-stop-gc: a section referenced only through __start_/__stop_
 *    symbols survives --gc-sections, as with GNU ld (lld collects it and
 *    then fails on the undefined __start_ symbol).
 * Both come before the user's arguments: an explicit opposite wins.
 */
bool fi_is_lld(const char *ld)
{
	const char *b = strrchr(ld, '/');

	return strstr(b ? b + 1 : ld, "lld") != NULL;
}

bool fi_ld_takes_value(const char *w, size_t len)
{
	static const char *const opts[] = {
		"-o", "-L", "-l", "-m", "-z", "-T", "-e", "-u", "-y", "-h",
		"-soname", "-rpath", "-rpath-link", "-dynamic-linker",
		"--dynamic-linker", "-plugin", "-plugin-opt", "--sysroot",
		"--version-script", "--dynamic-list", "-Map", "--hash-style",
		"-F", "-f", "-R", "-a", "-A", "-b", "-c", "-G", "-O", NULL,
	};

	for (size_t i = 0; opts[i]; i++) {
		if (len == strlen(opts[i]) && !memcmp(w, opts[i], len))
			return true;
	}
	return false;
}

int fi_ld_out_word(const char *w, size_t len, size_t *at)
{
	if ((len == 2 && !memcmp(w, "-o", 2)) ||
	    (len == 8 && !memcmp(w, "--output", 8)))
		return 2;
	if (len > 9 && !memcmp(w, "--output=", 9)) {
		*at = 9;
		return 1;
	}
	/* -oFILE, but not --oformat / -omagic spelt with one dash. */
	if (len > 2 && !memcmp(w, "-o", 2) && w[2] != '-' &&
	    !(len >= 8 && !memcmp(w, "-oformat", 8)) &&
	    !(len >= 7 && !memcmp(w, "-omagic", 7))) {
		*at = 2;
		return 1;
	}
	return 0;
}

bool fi_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

int64_t fi_file_off(const Elf64_Phdr *ph, size_t n, uint64_t vaddr,
		    uint64_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr <= ph[i].p_filesz &&
		    len <= ph[i].p_filesz - (vaddr - ph[i].p_vaddr))
			return (int64_t)(ph[i].p_offset + (vaddr - ph[i].p_vaddr));
	}
	return -1;
}
