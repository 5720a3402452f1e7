// SPDX-License-Identifier: MIT
/*
 * How a process uses the shared text cache (docs/runtime.md "Shared
 * text", docs/protection.md "The shared text cache").
 *
 * At start-up the process decides once: it takes its user's key (read
 * from the user's directory, which the root service `fineibt cached`
 * keeps) only if nothing about it is privileged or asks for a key of its
 * own; otherwise it draws its own key, as before, and never maps an
 * entry. With the user's key, each kCFI module built by fineibt-cc is
 * looked up when it is opened, before a page of its text is read: a hit
 * builds the module's image from the header of the entry's site record,
 * maps the entry's registered arrays (the module's entries, arities,
 * coarse bitmap) and, once the mode is settled, maps the entry over its
 * text and registers those arrays (src/rt/rtcache.c); a
 * miss is read and rewritten privately with the same key (so its text is
 * byte for byte what the entry will hold) and the service is asked,
 * without waiting, to fill the entry. Any doubt is a private rewrite with
 * one `debug` line.
 *
 * The first scan opens its modules before the mode is settled (a module
 * patched statically may set it): it looks entries up under the mode the
 * environment asks for, and maps them only if that is the mode settled.
 *
 * Which modules: those with a module index (fineibt-cc's), one executable
 * segment, a build-id, no text relocation, no private page in their text
 * yet (a debugger's breakpoint, a uprobe, which a mapping would drop), in
 * a mode without bhi (a BHI preamble calls a stub page placed near the
 * module in each process: not position-independent, docs/protection.md)
 * that rewrites something (kcfi,norand does not).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "cacheid.h"
#include "cacheuse.h"
#include "image.h"
#include "imgindex.h"
#include "index.h"
#include "patch.h"
#include "print.h"
#include "rawsys.h"
#include "rtcache.h"
#include "rtlive.h"

#define FI_CU_SELF	"/proc/self/exe"

enum fi_cu_mode {
	FI_CU_OFF,	/* a key of its own: the cache is not touched */
	FI_CU_FILL,	/* a key of its own, but ask the service to fill */
	FI_CU_ON,	/* the user's key: map entries, ask for the misses */
};

/* A library's text mapping, as /proc/self/maps tells (fi_cache_scan_begin). */
struct fi_cu_where {
	uint64_t lo, dev, ino;
};

/* A module of this scan the cache looked at when it was opened. */
struct fi_cu_mod {
	const struct fi_image *im;	/* the module's image: its key */
	int fd;				/* a hit: the entry, open; else -1 */
	int mapped;			/* mapped: the entry, open; else -1 */
	/* a hit: the entry's registered arrays, mapped */
	const struct fi_cache_regs *regs;
	size_t regs_len;
	bool stale;			/* a hit under a mode not settled */
	const char *path;		/* its file ("" the executable) */
	uint64_t lo, len;		/* its text mapping */
	struct fi_cache_ident id;
	char name[FI_CACHE_NAME_LEN + 1];	/* "" without the key */
	/* why it is rewritten privately: said at the end of the scan, not
	 * where it is found (a dlopen on a small thread stack, deep in the
	 * scan: printing there overflowed a 16 KiB stack) */
	const char *say_path;
	char why[120];
};

/*
 * One scan's scratch, under the runtime's lock. The user's key stays here
 * only from the first scan's start to fi_rt_config, which takes it into
 * the read-only state, and is wiped at the end of the scan.
 */
static struct {
	enum fi_cu_mode mode;
	struct fineibt_config cfg;	/* the scan's mode (first: asked for) */
	struct fineibt_key key;		/* first scan: the user's key */
	bool first;
	struct fi_cache_dir dir;
	int pm;				/* /proc/self/pagemap, -2 until opened */
	struct fi_cu_where *where;
	size_t nwhere;
	struct fi_cu_mod *mods;
	size_t nmods, cap;
	char root[FI_CACHE_ROOT_MAX];
	bool say;			/* debug lines */
	bool maps_read;			/* the maps reader's buffer is mapped */
	uint64_t *lent;			/* fi_cache_lend's scratch */
	size_t nlent;
} fi_cu = { .dir = { .fd = -1 }, .pm = -2 };

static void fi_cu_no(const char *why)
{
	if (fi_cu.say)
		fi_say("fineibt: cache: not used (%s); the process rewrites "
			  "with a key of its own\n", why);
}

/* Does the process hold a capability (effective or permitted)? */
static bool fi_cu_capable(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (fi_sys3(SYS_capget, (long)&h, (long)d, 0))
		return true;
	return d[0].effective | d[1].effective | d[0].permitted | d[1].permitted;
}

/* The service's socket exists: it runs (or ran) with this directory. */
static bool fi_cu_service(const char *root)
{
	char path[FI_CACHE_ROOT_MAX + 8];
	struct stat st;

	return fi_cache_path(path, sizeof(path), root, FI_CACHE_SOCK) &&
	       !fi_sys6(SYS_newfstatat, AT_FDCWD, (long)path, (long)&st,
			AT_SYMLINK_NOFOLLOW, 0, 0) && S_ISSOCK(st.st_mode);
}

/*
 * The first scan's decision (fi_cache_scan_begin): the mode the process
 * may use the cache in, the user's key read when it may take it.
 */
static enum fi_cu_mode fi_cu_decide(const struct fineibt_config *cfg,
				    bool secure)
{
	/* AT_SECURE: the environment is a less privileged caller's. */
	const char *env = secure ? NULL : getenv("FINEIBT_CACHE");
	const char *root = env && *env ? env : FI_CACHE_DIR_DEFAULT;
	unsigned long uid = getauxval(AT_UID);
	const char *why;

	if (secure)
		return fi_cu_no("a privileged (AT_SECURE) process"), FI_CU_OFF;
	if (!strcmp(root, "off"))
		return fi_cu_no("FINEIBT_CACHE=off"), FI_CU_OFF;
	if (strlen(root) >= FI_CACHE_ROOT_MAX)
		return fi_cu_no("FINEIBT_CACHE is too long"), FI_CU_OFF;
	if (!uid || uid != getauxval(AT_EUID) ||
	    getauxval(AT_GID) != getauxval(AT_EGID))
		return fi_cu_no(uid ? "user or group ids differ" : "root"),
		       FI_CU_OFF;
	/* Before anything of the cache is touched. */
	if (fi_cu_capable())
		return fi_cu_no("the process has capabilities"), FI_CU_OFF;
	strcpy(fi_cu.root, root);
	if (fi_cache_dir_open(root, (uint32_t)uid, &fi_cu.dir, &why)) {
		fi_cu_no(why);
		/* The service does not know this user yet: ask it to fill
		 * this start's modules (it makes the user's key then). */
		return fi_cu_service(root) ? FI_CU_FILL : FI_CU_OFF;
	}
	if (fi_cache_key_read(&fi_cu.dir, &fi_cu.key, &why)) {
		fi_cache_dir_close(&fi_cu.dir);
		return fi_cu_no(why), FI_CU_OFF;
	}
	return FI_CU_ON;
}

static bool fi_cu_exe(const char *path)
{
	return !strcmp(path, FI_CU_SELF);
}

/* Where each new library with a module index has its text mapped. */
static void fi_cu_where_find(const struct fi_rt_found *f, size_t n,
			     const uint64_t *news)
{
	uint64_t *lo, any = 0;
	size_t k = 0;

	for (size_t i = 0; i < (n + 63) / 64; i++)
		any |= news[i];
	if (!any)
		return;
	fi_cu.where = calloc(n + 1, sizeof(*fi_cu.where));
	lo = calloc(3 * n + 3, sizeof(*lo));
	if (!fi_cu.where || !lo) {
		free(lo);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const Elf64_Phdr *ph = f[i].phdr;

		if (!(news[i / 64] & (1ull << (i % 64))) || !f[i].name[0] ||
		    !fi_index_find(ph, f[i].phnum, f[i].bias))
			continue;
		for (size_t p = 0; p < f[i].phnum; p++) {
			if (ph[p].p_type == PT_LOAD && (ph[p].p_flags & PF_X)) {
				lo[k] = (f[i].bias + ph[p].p_vaddr) & ~4095ull;
				fi_cu.where[k].lo = lo[k];
				k++;
				break;
			}
		}
	}
	/* One read of /proc/self/maps for every library of the scan. */
	if (k && !fi_cache_maps_find(lo, k, lo + n + 1, lo + 2 * n + 2)) {
		fi_cu.maps_read = true;
		for (size_t i = 0; i < k; i++) {
			fi_cu.where[i].dev = lo[n + 1 + i];
			fi_cu.where[i].ino = lo[2 * n + 2 + i];
		}
	}
	fi_cu.nwhere = k;
	free(lo);
}

void fi_cache_lend(uint64_t *buf, size_t cap)
{
	fi_cu.lent = buf;
	fi_cu.nlent = buf ? cap : 0;
}

void fi_cache_scan_begin(const struct fi_rt_found *f, size_t n,
			 const uint64_t *news, const struct fineibt_config *cfg,
			 bool secure)
{
	const struct fi_runtime *rt = fi_rt();

	fi_cu.first = cfg != NULL;
	fi_cu.cfg = cfg ? *cfg : rt->cfg;
	fi_cu.say = fi_verbose_on() || (fi_cu.cfg.flags & FINEIBT_F_DEBUG);
	fi_cu.mode = FI_CU_OFF;
	fi_cu.nwhere = fi_cu.nmods = 0;
	if (cfg) {
		fi_cu.mode = fi_cu_decide(cfg, secure);
	} else if (rt->cache.on) {
		memcpy(fi_cu.root, rt->cache.root, sizeof(fi_cu.root));
		fi_cu.mode = FI_CU_ON;
	}
	if (fi_cu.mode != FI_CU_OFF && n)
		fi_cu_where_find(f, n, news);
}

/* The scan's record of module @im (NULL if it has none). */
static struct fi_cu_mod *fi_cu_mod_of(const struct fi_image *im)
{
	for (size_t i = 0; i < fi_cu.nmods; i++) {
		if (fi_cu.mods[i].im == im)
			return &fi_cu.mods[i];
	}
	return NULL;
}

static struct fi_cu_mod *fi_cu_mod_new(const struct fi_image *im)
{
	struct fi_cu_mod *r;

	if (fi_cu.nmods == fi_cu.cap) {
		size_t cap = fi_cu.cap ? 2 * fi_cu.cap : 8;

		r = realloc(fi_cu.mods, cap * sizeof(*r));
		if (!r)
			return NULL;
		fi_cu.mods = r;
		fi_cu.cap = cap;
	}
	r = &fi_cu.mods[fi_cu.nmods++];
	memset(r, 0, sizeof(*r));
	r->im = im;
	r->fd = r->mapped = -1;
	return r;
}

/*
 * Module @r (of @path) is rewritten privately, for @why: said at the end
 * of the scan (fi_cache_finish) under `debug`. Without a record of its
 * own (none could be made) it goes unsaid.
 */
static int fi_cu_pass(struct fi_cu_mod *r, const char *path, const char *why)
{
	if (r) {
		r->say_path = path;
		snprintf(r->why, sizeof(r->why), "%s", why);
	}
	return -ENOENT;
}

/* The scan's debug lines, now that the scan is over. */
static void fi_cu_said(void)
{
	for (size_t i = 0; fi_cu.say && i < fi_cu.nmods; i++) {
		const struct fi_cu_mod *r = &fi_cu.mods[i];

		if (r->why[0])
			fi_say("fineibt: cache: %s: %s; rewritten privately\n",
			       r->say_path, r->why);
	}
}

/* /proc/self/maps' device and inode of the text mapped at @lo, or 0, 0. */
static void fi_cu_where_of(uint64_t lo, uint64_t *dev, uint64_t *ino)
{
	*dev = *ino = 0;
	for (size_t i = 0; i < fi_cu.nwhere; i++) {
		if (fi_cu.where[i].lo == lo) {
			*dev = fi_cu.where[i].dev;
			*ino = fi_cu.where[i].ino;
			return;
		}
	}
}

/* The user's directory, at a scan after start-up (a dlopen). */
static bool fi_cu_dir(struct fi_cu_mod *r, const char *path)
{
	const char *why;

	if (fi_cu.dir.fd >= 0)
		return true;
	if (!fi_cache_dir_open(fi_cu.root, fi_rt()->cache.uid, &fi_cu.dir, &why))
		return true;
	fi_cu_pass(r, path, why);
	fi_cu.mode = FI_CU_OFF;
	return false;
}

/* Does the scan's mode rewrite anything, without bhi? */
static bool fi_cu_mode_cached(void)
{
	return !(fi_cu.cfg.mode == FINEIBT_MODE_KCFI &&
		 !(fi_cu.cfg.flags & FINEIBT_F_RAND));
}

/*
 * Build @im from the entry's record header @rec (its sites are the
 * arrays @regs, @len bytes): 0, the entry left open in @r.
 */
static int fi_cu_hit(struct fi_image *im, struct fi_cu_mod *r, int fd,
		     const char *path, uint64_t bias, const Elf64_Phdr *ph,
		     size_t phnum, const uint32_t *desc,
		     const struct fi_cache_rec *rec,
		     const struct fi_cache_regs *regs, size_t len)
{
	char err[120];
	int ret = fi_image_from_record(im, path, bias, ph, phnum, desc,
				       (const uint8_t *)rec, sizeof(*rec),
				       err, sizeof(err));

	if (ret) {
		fi_cache_entry_unmap(regs, len);
		fi_sys3(SYS_close, fd, 0, 0);
		r->im = NULL;
		return fi_cu_pass(r, path, err);
	}
	r->fd = fd;
	r->regs = regs;
	r->regs_len = len;
	return 0;
}

int fi_cache_open(struct fi_image *im, const char *path, uint64_t bias,
		  const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc)
{
	const char *fpath = fi_cu_exe(path) ? "" : path, *why;
	const struct fineibt_key *key;
	struct fi_cache_conf conf;
	struct fi_cu_mod *r;
	const struct fi_cache_regs *regs;
	struct fi_cache_rec rec;
	uint64_t dev, ino, *buf;
	size_t len, cap;
	int fd;

	if (fi_cu.mode == FI_CU_OFF || !fi_cu_mode_cached() ||
	    !(desc[FI_INDEX_W_FLAGS] & FI_INDEX_FILLED))
		return -ENOENT;
	r = fi_cu_mod_new(im);
	if (!r)
		return -ENOENT;
	if (fi_cu.cfg.flags & FINEIBT_F_BHI) {
		r->im = NULL;
		return fi_cu_pass(r, path, "bhi calls a stub page placed near "
				  "the module in each process");
	}
	r->path = fpath;
	dev = ino = 0;
	for (size_t p = 0; p < phnum; p++) {
		if (ph[p].p_type == PT_LOAD && (ph[p].p_flags & PF_X)) {
			fi_cu_where_of((bias + ph[p].p_vaddr) & ~4095ull, &dev, &ino);
			break;
		}
	}
	if (fi_cache_ident_live(fpath, ph, phnum, bias, dev, ino, &r->id,
				&r->lo, &r->len, &why)) {
		r->im = NULL;
		return fi_cu_pass(r, path, why);
	}
	if (fi_cu.mode == FI_CU_FILL)
		return -ENOENT;
	if (fi_cu.pm == -2)
		fi_cu.pm = (int)fi_sys_open("/proc/self/pagemap",
					O_RDONLY | O_CLOEXEC, 0);
	/* One read of the pagemap for a text of up to 2 MiB, into the
	 * maps reader's buffer once a read of the maps mapped its page, or
	 * the scan's own page (fi_cache_lend): not a fault of its own.
	 * Otherwise the stack's, 32 pages a read. */
	buf = fi_cu.maps_read ? fi_cache_scratch(&cap) : NULL;
	if (!buf) {
		buf = fi_cu.lent;
		cap = fi_cu.nlent;
	}
	if (!fi_live_pages_clean_in(fi_cu.pm, r->lo, r->len, buf, cap)) {
		r->im = NULL;
		return fi_cu_pass(r, path, "a page of its text is private "
				  "already (a breakpoint, a uprobe?)");
	}
	if (!fi_cu_dir(r, path)) {
		r->im = NULL;
		return -ENOENT;
	}
	key = fi_cu.first ? &fi_cu.key : &fi_rt()->key;
	conf = fi_cache_conf_of(&fi_cu.cfg, fi_rt()->have_arity);
	fi_cache_name(key, &r->id, &conf, r->name);
	fd = fi_cache_entry_open(&fi_cu.dir, r->name, &r->id, &rec, &regs, &len,
				 &why);
	if (fd >= 0)
		return fi_cu_hit(im, r, fd, path, bias, ph, phnum, desc, &rec,
				 regs, len);
	if (fd != -ENOENT)
		r->im = NULL;
	return fi_cu_pass(r, path, why);
}

bool fi_cache_settle(const struct fineibt_config *cfg, bool secure,
		     struct fi_module *const *mods, size_t n,
		     struct fineibt_key *key)
{
	struct fi_cache_conf a = fi_cache_conf_of(cfg, false);
	struct fi_cache_conf b = fi_cache_conf_of(&fi_cu.cfg, false);
	const char *why = NULL;
	struct fi_rt_cache c;

	if (fi_cu.mode != FI_CU_ON)
		return false;
	for (size_t i = 0; i < n && !why; i++) {
		if (mods[i]->img.note.present)
			why = "a module patched statically sets the key";
	}
	if (!why && (secure || memcmp(&a.cfg, &b.cfg, sizeof(a.cfg))))
		why = "the mode settled is not the one asked for";
	memset(&c, 0, sizeof(c));
	c.on = true;
	c.uid = (uint32_t)getauxval(AT_UID);
	c.keyid = fi_cache_keyid(&fi_cu.key);
	strcpy(c.root, fi_cu.root);
	if (!why && fi_rt_set_cache(&c))
		why = "cannot record it in the runtime's state";
	if (why) {
		/* Entries found are not this mode's: read those modules. */
		for (size_t i = 0; i < fi_cu.nmods; i++)
			fi_cu.mods[i].stale = true;
		fi_cu.mode = FI_CU_OFF;
		fi_cu_no(why);
		return false;
	}
	*key = fi_cu.key;
	return true;
}

/* @m's image again, discovered from its text (it was built from a record). */
static void fi_cu_reread(struct fi_module *m)
{
	const Elf64_Phdr *ph = m->img.phdr;
	size_t phnum = m->img.phnum;
	uint64_t bias = m->img.bias;
	const uint32_t *desc = fi_index_find(ph, phnum, bias);
	char *path = strdup(m->img.path), err[160];

	fi_image_close(&m->img);
	if (!path || !desc ||
	    fi_image_from_index(&m->img, path, bias, ph, phnum, desc, err,
				sizeof(err)))
		fi_say("fineibt: warning: %s: cannot read its sites again; "
			  "left in compiler form\n", path ? path : "a module");
	free(path);
}

bool fi_cache_idle(void)
{
	return !fi_cu.nmods;
}

bool fi_cache_all_hit(struct fi_module *const *m, size_t n)
{
	if (!n || fi_cu.nmods != n)
		return false;
	for (size_t i = 0; i < fi_cu.nmods; i++) {
		if (fi_cu.mods[i].fd < 0 || fi_cu.mods[i].stale)
			return false;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fi_cu_mod *r = fi_cu_mod_of(&m[i]->img);

		if (!r || r->fd < 0 || m[i]->img.note.present)
			return false;
	}
	return true;
}

/* The mapped arrays of @r, unless they were kept. */
static void fi_cu_unmap(struct fi_cu_mod *r)
{
	fi_cache_entry_unmap(r->regs, r->regs_len);
	r->regs = NULL;
}

/*
 * Do the entry's registered arrays @h cover @m as its registration will
 * (its text range, from its load bias; its mode; the coarse bitmap's
 * size for that range)? Then @m points into them.
 */
static bool fi_cu_regs(struct fi_module *m, const struct fi_cache_regs *h,
		       size_t len)
{
	uint64_t lo = m->text_lo & ~(uint64_t)(FI_PREAMBLE_SIZE - 1);
	uint64_t bits = (m->text_hi - lo + FI_PREAMBLE_SIZE - 1) / FI_PREAMBLE_SIZE;
	const uint8_t *b = (const uint8_t *)h;

	if (h->text_lo + m->img.bias != m->text_lo ||
	    h->text_hi + m->img.bias != m->text_hi ||
	    h->mode != (uint32_t)m->cfg.mode ||
	    (h->coarse_at && h->coarse_words != (bits + 63) / 64))
		return false;
	m->func_base = h->func_base;
	m->nfunc = h->nfunc;
	m->func_off = h->func_off_at ? (const uint32_t *)(b + h->func_off_at) : NULL;
	m->func_arity = h->func_arity_at ? (const int8_t *)(b + h->func_arity_at) : NULL;
	m->nfp = h->nfp;
	m->fp_site = h->fp_at ? (const uint64_t *)(b + h->fp_at) : NULL;
	m->coarse_bits = h->coarse_at ? (const uint64_t *)(b + h->coarse_at) : NULL;
	m->regs = h;
	m->regs_len = len;
	return true;
}

bool fi_cache_take(struct fi_module *m)
{
	struct fi_cu_mod *r = fi_cu_mod_of(&m->img);
	const char *why = "the entry's registered arrays are not this module's";
	int fd;

	if (!r || r->fd < 0)
		return false;
	fd = r->fd;
	r->fd = -1;
	/* fi_cache_entry_map closes the entry unless it mapped it. */
	if (!r->stale && fi_cu_regs(m, r->regs, r->regs_len)) {
		/* The entry's name again, from the read-only key and mode
		 * (settled: the first scan's lookup used the same). */
		struct fi_cache_conf conf = fi_cache_conf_of(&fi_rt()->cfg,
							     fi_rt()->have_arity);
		char name[FI_CACHE_NAME_LEN + 1];
		int err;

		fi_cache_name(&fi_rt()->key, &r->id, &conf, name);
		err = fi_cache_entry_map(fd, &r->id, r->lo, r->len, name, &why);

		if (!err)
			r->mapped = fd;
		fd = -1;
		if (!err) {
			fi_cache_entry_keep(r->regs, r->regs_len);
			r->regs = NULL;
			r->im = NULL;
			return true;
		}
	}
	if (fd >= 0)
		fi_sys3(SYS_close, fd, 0, 0);
	/* Not mapped: the arrays are not the module's either. */
	m->regs = NULL;
	m->regs_len = 0;
	m->func_off = NULL;
	m->func_arity = NULL;
	m->fp_site = NULL;
	m->coarse_bits = NULL;
	m->nfunc = m->nfp = 0;
	fi_cu_unmap(r);
	if (!r->stale)
		fi_cu_pass(r, r->path[0] ? r->path : FI_CU_SELF, why);
	r->im = NULL;
	fi_cu_reread(m);
	return false;
}

/*
 * The fill request: each missed module's file, opened again if it is
 * still the one mapped (a module replaced since is left out), passed to
 * the service with the request. The service reads the file through that
 * descriptor: what it rewrites is a file this process could open for
 * reading, and the entry is named by that file's own identity.
 */
static void fi_cu_request(void)
{
	struct fi_cache_req *q = calloc(1, sizeof(*q));
	int fd[FI_CACHE_REQ_MAX];
	const char *why;
	uint32_t n = 0;

	if (!q)
		return;
	memcpy(q->magic, FI_CACHE_REQ_MAGIC, sizeof(q->magic));
	q->format = FI_CACHE_FORMAT;
	strncpy(q->version, FINEIBT_VERSION, sizeof(q->version));
	q->keyid = fi_cu.mode == FI_CU_ON ? fi_rt()->cache.keyid : 0;
	q->conf = fi_cache_conf_of(&fi_rt()->cfg, fi_rt()->have_arity);
	for (size_t i = 0; i < fi_cu.nmods && n < FI_CACHE_REQ_MAX; i++) {
		const struct fi_cu_mod *r = &fi_cu.mods[i];
		int f;

		if (!r->im || r->fd >= 0 || r->stale)
			continue;
		f = fi_cache_open_module(r->path, &r->id);
		if (f < 0)
			continue;
		q->mod[n].lo = r->lo;
		q->mod[n].hi = r->lo + r->len;
		q->mod[n].id = r->id;
		memcpy(q->mod[n].name, r->name, sizeof(q->mod[n].name));
		fd[n++] = f;
	}
	q->n = n;
	if (n && fi_cache_send(fi_cu.root, q, fi_cache_req_size(n), fd, n, &why) &&
	    fi_cu.say)
		fi_say("fineibt: cache: no fill request sent (%s)\n", why);
	for (uint32_t i = 0; i < n; i++)
		fi_sys3(SYS_close, fd[i], 0, 0);
	free(q);
}

/*
 * The scan's descriptors, closed together: each run of consecutive
 * numbers by one close_range (Linux 5.9), which closes only numbers that
 * are all in the set, so only the scan's own; one close each where the
 * kernel refuses it (older kernels, a system call filter).
 */
#define FI_CU_CLOSE_MAX	32
struct fi_cu_closer {
	int fd[FI_CU_CLOSE_MAX];
	size_t n;
};

static void fi_cu_close_flush(struct fi_cu_closer *c)
{
	for (size_t i = 1; i < c->n; i++) {
		int v = c->fd[i];
		size_t j = i;

		for (; j && c->fd[j - 1] > v; j--)
			c->fd[j] = c->fd[j - 1];
		c->fd[j] = v;
	}
	for (size_t i = 0, j; i < c->n; i = j) {
		for (j = i + 1; j < c->n && c->fd[j] == c->fd[j - 1] + 1; j++)
			;
		if (j - i > 1 &&
		    !fi_sys3(SYS_close_range, c->fd[i], c->fd[j - 1], 0))
			continue;
		for (size_t k = i; k < j; k++)
			fi_sys3(SYS_close, c->fd[k], 0, 0);
	}
	c->n = 0;
}

static void fi_cu_close_add(struct fi_cu_closer *c, int fd)
{
	if (fd < 0)
		return;
	if (c->n == FI_CU_CLOSE_MAX)
		fi_cu_close_flush(c);
	c->fd[c->n++] = fd;
}

void fi_cache_finish(void)
{
	struct fi_cu_closer c = { .n = 0 };

	fi_cu_said();
	if (fi_cu.mode != FI_CU_OFF && fi_cu.nmods)
		fi_cu_request();
	for (size_t i = 0; i < fi_cu.nmods; i++) {
		fi_cu_close_add(&c, fi_cu.mods[i].fd);
		fi_cu_close_add(&c, fi_cu.mods[i].mapped);
		fi_cu_unmap(&fi_cu.mods[i]);
	}
	free(fi_cu.mods);
	fi_cu.mods = NULL;
	fi_cu.nmods = fi_cu.cap = 0;
	free(fi_cu.where);
	fi_cu.where = NULL;
	fi_cu.nwhere = 0;
	fi_cu_close_add(&c, fi_cu.dir.fd);
	fi_cu.dir.fd = -1;
	fi_cu_close_add(&c, fi_cu.pm);
	fi_cu.pm = -2;
	fi_cu_close_flush(&c);
	fi_cache_lend(NULL, 0);
	fi_cu.mode = FI_CU_OFF;
	memset(&fi_cu.key, 0, sizeof(fi_cu.key));
}
