/* SPDX-License-Identifier: MIT */
/*
 * fi_dir_untrusted (trustdir.h). The loader searches a RUNPATH for every
 * library the program needs, in a setuid program too (only relative and
 * $ORIGIN entries are dropped there): whoever can write one of those
 * directories, or replace one on the way to it, chooses the code that
 * program runs with its privileges.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trustdir.h"

/* Why directory @path lets someone else change what it holds, or NULL. */
static const char *fi_dir_hazard(const char *path, uid_t owner, bool last)
{
	struct stat st;
	bool writable;

	if (stat(path, &st))
		return "cannot be read";
	writable = (st.st_mode & S_IWOTH) ||
		   ((st.st_mode & S_IWGRP) && st.st_gid != 0);
	if (st.st_uid != 0 && st.st_uid != owner)
		return "is owned by another user";
	if (writable && (last || !(st.st_mode & S_ISVTX)))
		return (st.st_mode & S_IWOTH) ? "is writable by others" :
						"is writable by its group";
	return NULL;
}

/*
 * @dir with symbolic links resolved as far as it exists (the rest kept
 * as written) into @out; *@exists: the length of the existing part.
 */
static bool fi_dir_resolve(const char *dir, char *out, size_t *exists)
{
	char head[PATH_MAX], real[PATH_MAX];
	size_t n = strlen(dir);
	const char *rest;

	if (n >= sizeof(head))
		return false;
	memcpy(head, dir, n + 1);
	while (!realpath(head, real)) {
		char *slash = strrchr(head, '/');

		if (!slash)
			return false;
		slash[slash == head] = '\0';	/* "/x" -> "/" */
	}
	*exists = strlen(real);
	/* Below "/", the rest of @dir is all of it. */
	rest = strcmp(head, "/") ? dir + strlen(head) : dir;
	if (!strcmp(real, "/"))
		real[0] = '\0';
	return snprintf(out, PATH_MAX, "%s%s", real, rest) < PATH_MAX;
}

static int fi_dir_say(const char *path, const char *hazard, char *why, size_t len)
{
	snprintf(why, len, "%s %s", path, hazard);
	return 1;
}

int fi_dir_untrusted(const char *dir, uid_t owner, char *why, size_t len)
{
	char path[PATH_MAX], prefix[PATH_MAX];
	const char *hazard;
	size_t exists;

	if (!dir || dir[0] != '/' || !fi_dir_resolve(dir, path, &exists))
		return -EINVAL;
	hazard = fi_dir_hazard("/", owner, exists == 1);
	if (hazard)
		return fi_dir_say("/", hazard, why, len);
	for (size_t i = 2; i <= exists; i++) {
		if (i < exists && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		hazard = fi_dir_hazard(prefix, owner, i == exists);
		if (hazard)
			return fi_dir_say(prefix, hazard, why, len);
	}
	return 0;
}
