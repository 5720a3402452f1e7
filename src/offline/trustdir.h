/* SPDX-License-Identifier: MIT */
/*
 * Whether a directory can be trusted with code a privileged program loads
 * (a RUNPATH of a setuid executable): the driver's link-time warning and
 * `fineibt inspect`'s audit ask the same question (docs/protection.md,
 * "Privileged programs").
 */
#ifndef FI_TRUSTDIR_H
#define FI_TRUSTDIR_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Check absolute directory @dir and every directory above it: each must
 * be owned by root or by @owner, and writable by no one else (group
 * writable counts when the group is not root's; a sticky ancestor may be
 * writable: nobody but the owner of the next component can replace it).
 * A directory that does not exist is judged by its nearest existing
 * ancestor, which must then be safe to create it in. Returns 0 (trusted),
 * 1 (not trusted: @why says why, "/x/y is writable by others"), or
 * -EINVAL (not an absolute path).
 */
int fi_dir_untrusted(const char *dir, uid_t owner, char *why, size_t len);

#endif /* FI_TRUSTDIR_H */
