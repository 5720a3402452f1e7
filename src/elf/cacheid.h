/* SPDX-License-Identifier: MIT */
/*
 * The shared text cache's names (docs/protection.md, "The shared text
 * cache"): what identifies an entry (the module's file as the kernel
 * mapped it, its text segment, the whole resolved configuration, the key),
 * the entry's name (a keyed hash of all of it), the per-user key file and
 * the fill request the runtime sends the service. Shared by the runtime
 * (src/rt/rtcache.c, src/load/cacheuse.c) and the service
 * (src/offline/cachefill.c, tools/cmd_cached.c), so that both name an entry
 * alike.
 */
#ifndef FI_CACHEID_H
#define FI_CACHEID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fineibt.h"
#include "hash.h"

/* The service's directory unless FINEIBT_CACHE names another. */
#define FI_CACHE_DIR_DEFAULT	"/run/fineibt"
/* In it: the fill socket, the master key, the version of the entries. */
#define FI_CACHE_SOCK		"sock"
#define FI_CACHE_MASTER		"master"
#define FI_CACHE_VERFILE	"version"
/* In each user's directory ("u<uid>"): the user's key. */
#define FI_CACHE_KEYFILE	"key"
#define FI_CACHE_NAME_LEN	32	/* hex digits of an entry's name */
#define FI_BUILD_ID_MAX		64
/* Bumped whenever what an entry holds, or how it is named, changes. */
#define FI_CACHE_FORMAT		4

/*
 * A module's file and text segment, as the kernel mapped them: device and
 * inode of the mapping (/proc/self/maps, or /proc/self/exe for the
 * executable), size and times of that inode, the GNU build-id read from
 * the module's memory, and its one executable PT_LOAD (link-time address,
 * file offset, size: filesz == memsz).
 */
struct fi_cache_ident {
	uint64_t dev;			/* makedev(major, minor) */
	uint64_t ino;
	uint64_t size;
	int64_t mtime_s, ctime_s;
	uint32_t mtime_ns, ctime_ns;
	uint64_t text_vaddr, text_off, text_size;
	uint32_t nbuild_id;
	uint8_t build_id[FI_BUILD_ID_MAX];
};

/* What decides the bytes of the rewritten text besides the file and key. */
struct fi_cache_conf {
	struct fineibt_config cfg;	/* resolved; FINEIBT_F_DEBUG cleared */
	uint32_t have_arity;		/* 0 or 1 */
};

/*
 * The site record an entry carries after its copy of the file, at the
 * file's size rounded up to a page: what the runtime's discovery finds in
 * the module (src/elf/imgindex.c, fi_image_from_record), so that a process
 * mapping the entry reads no page of the module's text first. Then:
 * uint32_t func_off[nfuncs] (entries, increasing, from @base),
 * int8_t func_arity[nfuncs] (padded to 4 bytes), uint32_t
 * call_off[ncalls] (call sites, increasing, from @base). @regs_off bytes
 * from the record's start (a page boundary of the entry), @regs_len bytes
 * of the module's registered arrays (struct fi_cache_regs).
 */
#define FI_CACHE_REC_MAGIC	"FIBTREC2"
struct fi_cache_rec {
	char magic[8];
	uint32_t nfuncs, ncalls, nslots;
	uint32_t arity_hist[8];		/* arity 0..7 */
	uint32_t pad;
	uint64_t base;			/* link-time: the executable segment */
	uint64_t regs_off, regs_len;
};

/*
 * The registered arrays of the module (struct fi_module in
 * src/rt/runtime.h: func_off, func_arity, fp_site, coarse_bits), laid out
 * by the runtime's own arena layout (rtarena.c, fi_arena_lay_regs) after
 * the passes ran, every array position-independent: entries from the
 * link-time @func_base, sampled sites at link-time addresses, one coarse
 * bit per 16 bytes from the text's link-time start rounded down to 16.
 * A process mapping the entry maps these read-only and its registered
 * module points into them (docs/protection.md "The shared text cache").
 * The arrays' offsets are from this header (0: none).
 */
#define FI_CACHE_REGS_MAGIC	"FIBTREG2"
struct fi_cache_regs {
	char magic[8];
	uint64_t func_base;
	uint64_t text_lo, text_hi;	/* link-time range the bits cover */
	uint32_t nfunc, nfp, coarse_words, mode;
	uint32_t func_off_at, func_arity_at, fp_at, coarse_at;
	/* fi_fp_hash of the entry's text at the fp_at sample: what a
	 * process mapping the entry registers without reading its text */
	uint64_t fp;
};

/* Bytes of a record of @nfuncs and @ncalls. */
static inline size_t fi_cache_rec_size(uint32_t nfuncs, uint32_t ncalls)
{
	return sizeof(struct fi_cache_rec) + 4 * (size_t)nfuncs +
	       (((size_t)nfuncs + 3) & ~(size_t)3) + 4 * (size_t)ncalls;
}

/* The key file: magic, then the user's key. */
#define FI_CACHE_KEY_MAGIC	"FIBTKEY1"
struct fi_cache_keyfile {
	char magic[8];
	struct fineibt_key key;
};

/*
 * The fill request, one datagram on the service's socket: the modules a
 * process rewrote privately with its user's key because they had no
 * entry yet, each with its file's descriptor (SCM_RIGHTS, in the same
 * order), opened for reading by the process. Every field is a claim: the
 * service names an entry by the identity of the file it reads through
 * the descriptor, and only fills one that matches the claim ([lo, hi):
 * the text mapping in the requester, for messages).
 */
#define FI_CACHE_REQ_MAGIC	"FIBTREQ1"
#define FI_CACHE_REQ_MAX	8
struct fi_cache_req_mod {
	uint64_t lo, hi;
	struct fi_cache_ident id;
	/*
	 * The name the runtime gave the entry ("" without the user's key):
	 * the service names it itself and refuses a request whose name
	 * differs (a runtime of another build than the service's).
	 */
	char name[FI_CACHE_NAME_LEN + 1];
};

struct fi_cache_req {
	char magic[8];
	uint32_t format;		/* FI_CACHE_FORMAT */
	uint32_t n;			/* modules that follow */
	char version[16];		/* FINEIBT_VERSION of the runtime */
	uint64_t keyid;			/* fi_cache_keyid of its key */
	struct fi_cache_conf conf;
	struct fi_cache_req_mod mod[FI_CACHE_REQ_MAX];
};

/* The bytes of a request carrying @n modules. */
static inline size_t fi_cache_req_size(uint32_t n)
{
	return offsetof(struct fi_cache_req, mod) +
	       n * sizeof(struct fi_cache_req_mod);
}

/*
 * A key's public name: a keyed hash of a constant under it. Goes into
 * every entry's name, never the key itself.
 */
uint64_t fi_cache_keyid(const struct fineibt_key *key);

/*
 * The entry's file name under @key: FI_CACHE_NAME_LEN hex digits and a
 * NUL, a keyed hash (SipHash-2-4, then SipHash-2-4 of that) of the
 * format, the runtime version, @id, @conf and the key's id. Without the key nobody can tell
 * which entry belongs to which file.
 */
void fi_cache_name(const struct fineibt_key *key,
		   const struct fi_cache_ident *id,
		   const struct fi_cache_conf *conf, char *out);

/* The conf an entry is named with, from a process's resolved mode. */
struct fi_cache_conf fi_cache_conf_of(const struct fineibt_config *cfg,
				      bool have_arity);

/*
 * The key of user @uid, derived from the service's master key (a keyed
 * hash of the uid under it: the users' keys are independent, and one
 * user's tells nothing about another's or the master key).
 */
void fi_cache_user_key(const struct fineibt_key *master, uint32_t uid,
		       struct fineibt_key *out);

/* "u<uid>": the user's directory under the cache's ("" if @len is short). */
void fi_cache_user_dir(uint32_t uid, char *buf, size_t len);

/* "@dir/@name" into @buf (@len bytes): its length, or 0 if it is too long. */
size_t fi_cache_path(char *buf, size_t len, const char *dir, const char *name);

/*
 * The GNU build-id of an ELF image: the descriptor of the first
 * NT_GNU_BUILD_ID note ("GNU") in the @size bytes of notes at @notes.
 * Copied into @id; false when there is none or it is longer than
 * FI_BUILD_ID_MAX.
 */
bool fi_cache_build_id(const uint8_t *notes, uint64_t size,
		       struct fi_cache_ident *id);

#endif /* FI_CACHEID_H */
