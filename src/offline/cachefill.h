/* SPDX-License-Identifier: MIT */
/*
 * What the cache service writes (src/offline/cachefill.c; docs/protection.md
 * "The shared text cache"): a module file's entry, made by the runtime's
 * own reading and passes, so that its text is byte for byte what a
 * process writes when it rewrites that module privately.
 */
#ifndef FI_CACHEFILL_H
#define FI_CACHEFILL_H

#include <stddef.h>
#include <stdint.h>

#include "cacheid.h"

/*
 * The entry for the module file open at @fd (named @path in messages):
 * the whole file read once, its identity into @id (fstat of @fd before
 * and after the read must agree: a file being written is refused; its
 * build-id and text segment), and a copy of it whose executable segment
 * is rewritten in @conf with @key, followed at the file's size rounded up
 * to a page by the module's site record (struct fi_cache_rec) and, at the
 * next page, its registered arrays (struct fi_cache_regs), into *@out
 * (malloc'ed, *@size bytes). The module is loaded into this process's memory as
 * the dynamic loader would map it (no relocation: the text needs none)
 * and read through its module index, exactly as the runtime reads a
 * loaded module. Refused (-ENOEXEC, -EINVAL, with @err): not a module
 * the runtime would map an entry for (no index, already rewritten, no
 * build-id, text relocations, several executable segments, bhi, nothing
 * to rewrite in @conf). Returns 0 or -errno.
 */
int fi_cache_fill(int fd, const char *path, const struct fi_cache_conf *conf,
		  const struct fineibt_key *key, struct fi_cache_ident *id,
		  uint8_t **out, size_t *size, char *err, size_t errlen);

/*
 * Write @size bytes at @buf as entry @name in directory @dfd: an unnamed
 * file (O_TMPFILE), mode 0444, linked in under its name at the end
 * (linkat), so that no process ever sees it half written. -EEXIST: the
 * entry is there already (another fill won); nothing is left otherwise
 * on error.
 */
int fi_cache_write_entry(int dfd, const char *name, const uint8_t *buf,
			 size_t size);

#endif /* FI_CACHEFILL_H */
