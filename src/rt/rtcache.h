/* SPDX-License-Identifier: MIT */
/*
 * The runtime's side of the shared text cache (src/rt/rtcache.c;
 * docs/protection.md "The shared text cache", docs/runtime.md "Shared
 * text"): the user's directory and key, a live module's identity, an
 * entry mapped over a module's text, a fill request. Every call is a raw
 * system call (src/seq/rawsys.h): no libc function an interposer could
 * define runs, and nothing here sets errno. Each returns 0 or -errno and,
 * on failure, a static reason in *@why for the one `debug` line.
 */
#ifndef FI_RTCACHE_H
#define FI_RTCACHE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cacheid.h"

/* The user's directory, checked: an O_PATH descriptor and its device. */
struct fi_cache_dir {
	int fd;
	uint64_t dev;
};

/*
 * Open @root/u<@uid> with no symbolic link anywhere on the way
 * (openat2 RESOLVE_NO_SYMLINKS) and check it: a directory owned by root,
 * neither readable nor writable by group or others, on tmpfs (fstatfs:
 * a directory on disk would keep keys and text across reboots).
 */
int fi_cache_dir_open(const char *root, uint32_t uid, struct fi_cache_dir *d,
		      const char **why);
void fi_cache_dir_close(struct fi_cache_dir *d);

/* The user's key from the key file in @d. */
int fi_cache_key_read(const struct fi_cache_dir *d, struct fineibt_key *key,
		      const char **why);

/*
 * The identity of the module loaded at @bias with program headers @ph
 * (@phnum), whose file the loader opened as @path ("" for the executable:
 * /proc/self/exe): its one executable PT_LOAD (filesz == memsz), no text
 * relocation, its build-id from memory, and size and times of the file
 * the kernel mapped. @dev and @ino are those of its text mapping in
 * /proc/self/maps (fi_cache_maps_find) unless it is the executable: a
 * stat of @path that finds another file (replaced since) is refused.
 * *@lo, *@len: the text mapping's run-time range.
 */
int fi_cache_ident_live(const char *path, const Elf64_Phdr *ph, size_t phnum,
			uint64_t bias, uint64_t dev, uint64_t ino,
			struct fi_cache_ident *id, uint64_t *lo, uint64_t *len,
			const char **why);

/*
 * /proc/self/maps, read once: for each of the @n run-time addresses @lo[i]
 * (the start of a mapping), the device (makedev) and inode of the file
 * mapped there, or 0, 0. One open, a few reads, one close.
 */
int fi_cache_maps_find(const uint64_t *lo, size_t n, uint64_t *dev,
		       uint64_t *ino);
/* The same from the maps text @fd reads (from where it stands), which
 * the caller opened and closes. A line that does not parse (rtverify.c,
 * fi_vma_next) gives nothing; one longer than the reader's 4 KiB buffer
 * gives nothing either, nor does its rest pass for a line. */
int fi_cache_maps_find_in(int fd, const uint64_t *lo, size_t n,
			  uint64_t *dev, uint64_t *ino);

/*
 * The maps reader's buffer (*@cap 64-bit entries): scratch for a scan
 * under the runtime's lock between two reads of the maps. Its page is
 * mapped only once a read of the maps has filled it.
 */
uint64_t *fi_cache_scratch(size_t *cap);

/*
 * Open entry @name of @d for a module of identity @id: a regular file
 * owned by root, mode 0444, one link, on @d's file system, holding a copy
 * of the module's file (@id->size bytes, rounded up to a page), its site
 * record, whose header is read into *@rec, and the module's registered
 * arrays, mapped read-only at *@regs (*@len bytes) once their header
 * fits the mapping and the record's counts (magic, every array inside
 * and aligned, as many entries as the record; the contents are the
 * service's, trusted as the text is: docs/protection.md). Returns the
 * entry's descriptor, kept open for fi_cache_entry_map; -ENOENT: no such
 * entry (a miss). The caller unmaps the arrays (fi_cache_entry_unmap) or
 * keeps them (fi_cache_entry_keep).
 */
int fi_cache_entry_open(const struct fi_cache_dir *d, const char *name,
			const struct fi_cache_ident *id, struct fi_cache_rec *rec,
			const struct fi_cache_regs **regs, size_t *len,
			const char **why);
void fi_cache_entry_unmap(const struct fi_cache_regs *regs, size_t len);

/* Keep the arrays @regs (@len bytes) for good: sealed (mseal, where the
 * state holds mseal, as for the arena's chunks). */
void fi_cache_entry_keep(const struct fi_cache_regs *regs, size_t len);

/*
 * Map the entry open at @fd over the module's text [@lo, @lo + @len),
 * from file offset @id->text_off rounded down to a page, read-execute,
 * private. @fd is closed, unless it returns 0: then the caller closes it
 * (cacheuse.c with the scan's other descriptors, in one close_range).
 * @fd, @id, @lo and @len come from the scan's
 * writable scratch, so the kernel is asked first: @fd must be a root-owned
 * 0444 file of one link named @name (the caller computes it from @id with
 * the read-only key and mode), and [@lo, @lo + @len) the executable text
 * of the file @id names, at @id's offset; otherwise nothing is mapped
 * (-EPERM). The text is untouched unless it returns 0; a mapping that
 * failed and took the text with it stops the process (fi_rt_die).
 */
int fi_cache_entry_map(int fd, const struct fi_cache_ident *id, uint64_t lo,
		       uint64_t len, const char *name, const char **why);

/*
 * Send @req (@len bytes) to the service's socket in @root with the @nfd
 * descriptors @fd (each module's file, open for reading, in the order of
 * @req's modules): one datagram, never waiting (a full queue drops it).
 */
int fi_cache_send(const char *root, const void *req, size_t len,
		  const int *fd, size_t nfd, const char **why);

/*
 * Open the file of a module that missed, for the fill request: @path
 * ("" for the executable), read-only, and only if it is still the file
 * @id names (device, inode, size, times). A descriptor, or -errno.
 */
int fi_cache_open_module(const char *path, const struct fi_cache_ident *id);

#endif /* FI_RTCACHE_H */
