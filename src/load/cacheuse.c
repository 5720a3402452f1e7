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
 * looked up before a byte of it is rewritten: a hit maps the entry over
 * its text (src/rt/rtcache.c); a miss is rewritten privately with the
 * same key (so its text is byte for byte what the entry will hold) and
 * the service is asked, without waiting, to fill the entry. Any doubt is
 * a private rewrite with one `debug` line.
 *
 * Which modules: those read from their module index (fineibt-cc's, in
 * compiler form), with one executable segment, a build-id, no text
 * relocation, no private page in their text yet (a debugger's breakpoint,
 * a uprobe, which a mapping would drop), in a mode without bhi (a BHI
 * preamble calls a stub page placed near the module in each process:
 * not position-independent, docs/protection.md).
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

/* A library's text mapping, as /proc/self/maps tells (fi_cache_prepare). */
struct fi_cu_where {
	const struct fi_module *m;
	uint64_t lo, dev, ino;
};

/*
 * One scan's scratch, under the runtime's lock. Holds no key: the user's
 * key is read from the read-only state when a name is made.
 */
static struct {
	bool decided;		/* mode is this scan's */
	enum fi_cu_mode mode;
	struct fi_cache_dir dir;
	int pm;			/* /proc/self/pagemap, -2 until opened */
	struct fi_cu_where *where;
	size_t nwhere;
	struct fi_cache_req *req;
	/* the file of each module of the request: "" for the executable */
	const char *req_path[FI_CACHE_REQ_MAX];
	char root[FI_CACHE_ROOT_MAX];
	bool say;		/* debug lines */
} fi_cu = { .dir = { .fd = -1 }, .pm = -2 };

static void fi_cu_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	fi_raw_write(2, buf, (size_t)n);
}

static bool fi_cu_no(const char *why)
{
	if (fi_cu.say)
		fi_cu_say("fineibt: cache: not used (%s); the process rewrites "
			  "with a key of its own\n", why);
	return false;
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

bool fi_cache_begin(const struct fineibt_config *cfg, bool secure,
		    struct fi_module *const *mods, size_t n,
		    struct fineibt_key *key)
{
	/* AT_SECURE: the environment is a less privileged caller's. */
	const char *env = secure ? NULL : getenv("FINEIBT_CACHE");
	const char *root = env && *env ? env : FI_CACHE_DIR_DEFAULT;
	struct fi_rt_cache c;
	unsigned long uid = getauxval(AT_UID);
	const char *why;

	fi_cu.decided = true;
	fi_cu.mode = FI_CU_OFF;
	fi_cu.say = fi_verbose_on() || (cfg->flags & FINEIBT_F_DEBUG);
	if (secure)
		return fi_cu_no("a privileged (AT_SECURE) process");
	if (!strcmp(root, "off"))
		return fi_cu_no("FINEIBT_CACHE=off");
	for (size_t i = 0; i < n; i++) {
		if (mods[i]->img.note.present)
			return fi_cu_no("a module patched statically sets the key");
	}
	if (strlen(root) >= FI_CACHE_ROOT_MAX)
		return fi_cu_no("FINEIBT_CACHE is too long");
	if (!uid || uid != getauxval(AT_EUID) ||
	    getauxval(AT_GID) != getauxval(AT_EGID))
		return fi_cu_no(uid ? "user or group ids differ" : "root");
	/* Before anything of the cache is touched. */
	if (fi_cu_capable())
		return fi_cu_no("the process has capabilities");
	strcpy(fi_cu.root, root);
	if (fi_cache_dir_open(root, (uint32_t)uid, &fi_cu.dir, &why)) {
		/* The service does not know this user yet: ask it to fill
		 * this start's modules (it makes the user's key then). */
		if (fi_cu_service(root))
			fi_cu.mode = FI_CU_FILL;
		return fi_cu_no(why);
	}
	if (fi_cache_key_read(&fi_cu.dir, key, &why)) {
		fi_cache_dir_close(&fi_cu.dir);
		return fi_cu_no(why);
	}
	memset(&c, 0, sizeof(c));
	c.on = true;
	c.uid = (uint32_t)uid;
	c.keyid = fi_cache_keyid(key);
	strcpy(c.root, root);
	if (fi_rt_set_cache(&c)) {
		memset(&c, 0, sizeof(c));
		fi_cache_dir_close(&fi_cu.dir);
		return fi_cu_no("cannot record it in the runtime's state");
	}
	memset(&c, 0, sizeof(c));
	fi_cu.mode = FI_CU_ON;
	return true;
}

/* Is @m, taken in mode @cfg, one an entry could be mapped for? */
static bool fi_cu_candidate(const struct fi_module *m)
{
	return m->img.lazy_syms && m->img.phdr && !m->img.note.present;
}

static bool fi_cu_exe(const struct fi_module *m)
{
	return !strcmp(m->img.path, FI_CU_SELF);
}

/* The scan's mode: start-up's decision, else the state's. */
static void fi_cu_decide(void)
{
	const struct fi_rt_cache *c = &fi_rt()->cache;

	if (fi_cu.decided)
		return;
	fi_cu.decided = true;
	fi_cu.say = fi_verbose_on() || (fi_rt()->cfg.flags & FINEIBT_F_DEBUG);
	fi_cu.mode = FI_CU_OFF;
	if (!c->on)
		return;
	memcpy(fi_cu.root, c->root, sizeof(fi_cu.root));
	fi_cu.mode = FI_CU_ON;
}

void fi_cache_prepare(struct fi_module *const *mods, size_t n)
{
	uint64_t *lo;
	size_t k = 0;

	fi_cu_decide();
	fi_cu.nwhere = 0;
	if (fi_cu.mode == FI_CU_OFF || !n)
		return;
	fi_cu.where = calloc(n, sizeof(*fi_cu.where));
	lo = calloc(n, sizeof(*lo) * 3);
	if (!fi_cu.where || !lo) {
		free(lo);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fi_module *m = mods[i];
		const Elf64_Phdr *ph = m->img.phdr;

		if (!fi_cu_candidate(m) || fi_cu_exe(m))
			continue;
		for (size_t p = 0; p < m->img.phnum; p++) {
			if (ph[p].p_type == PT_LOAD && (ph[p].p_flags & PF_X)) {
				fi_cu.where[k].m = m;
				fi_cu.where[k].lo = (m->img.bias + ph[p].p_vaddr) &
						    ~4095ull;
				lo[k] = fi_cu.where[k].lo;
				k++;
				break;
			}
		}
	}
	/* One read of /proc/self/maps for every library of the scan. */
	if (k && !fi_cache_maps_find(lo, k, lo + n, lo + 2 * n)) {
		for (size_t i = 0; i < k; i++) {
			fi_cu.where[i].dev = lo[n + i];
			fi_cu.where[i].ino = lo[2 * n + i];
		}
	}
	fi_cu.nwhere = k;
	free(lo);
}

/* Remember a miss for the fill request (sent by fi_cache_finish). */
static void fi_cu_miss(const char *path, uint64_t lo, uint64_t len,
		       const struct fi_cache_ident *id, const char *name)
{
	struct fi_cache_req *r = fi_cu.req;

	if (!r) {
		r = fi_cu.req = calloc(1, sizeof(*r));
		if (!r)
			return;
		memcpy(r->magic, FI_CACHE_REQ_MAGIC, sizeof(r->magic));
		r->format = FI_CACHE_FORMAT;
		strncpy(r->version, FINEIBT_VERSION, sizeof(r->version));
		r->keyid = fi_cu.mode == FI_CU_ON ? fi_rt()->cache.keyid : 0;
		r->conf = fi_cache_conf_of(&fi_rt()->cfg, fi_rt()->have_arity);
	}
	if (r->n == FI_CACHE_REQ_MAX)
		return;
	fi_cu.req_path[r->n] = path;
	r->mod[r->n].lo = lo;
	r->mod[r->n].hi = lo + len;
	r->mod[r->n].id = *id;
	memcpy(r->mod[r->n].name, name, sizeof(r->mod[r->n].name));
	r->n++;
}

static bool fi_cu_pass(const struct fi_module *m, const char *why)
{
	if (fi_cu.say)
		fi_cu_say("fineibt: cache: %s: %s; rewritten privately\n",
			  fi_cu_exe(m) ? FI_CU_SELF : m->img.path, why);
	return false;
}

/* /proc/self/maps' device and inode of library @m's text, or 0, 0. */
static void fi_cu_where_of(const struct fi_module *m, uint64_t *dev,
			   uint64_t *ino)
{
	*dev = *ino = 0;
	for (size_t i = 0; i < fi_cu.nwhere; i++) {
		if (fi_cu.where[i].m == m) {
			*dev = fi_cu.where[i].dev;
			*ino = fi_cu.where[i].ino;
			return;
		}
	}
}

/* The user's directory, at a scan after start-up (a dlopen). */
static bool fi_cu_dir(void)
{
	const char *why;

	if (fi_cu.dir.fd >= 0)
		return true;
	if (!fi_cache_dir_open(fi_cu.root, fi_rt()->cache.uid, &fi_cu.dir, &why))
		return true;
	if (fi_cu.say)
		fi_cu_say("fineibt: cache: %s; modules loaded now are rewritten "
			  "privately\n", why);
	fi_cu.mode = FI_CU_OFF;
	return false;
}

bool fi_cache_take(struct fi_module *m)
{
	const struct fineibt_config *cfg = &fi_rt()->cfg;
	struct fi_cache_ident id;
	struct fi_cache_conf conf;
	char name[FI_CACHE_NAME_LEN + 1];
	uint64_t lo, len, dev, ino;
	const char *why;
	int err;

	fi_cu_decide();
	if (fi_cu.mode == FI_CU_OFF || !fi_cu_candidate(m))
		return false;
	if (cfg->flags & FINEIBT_F_BHI)
		return fi_cu_pass(m, "bhi calls a stub page placed near the "
				  "module in each process");
	fi_cu_where_of(m, &dev, &ino);
	if (fi_cache_ident_live(fi_cu_exe(m) ? "" : m->img.path, m->img.phdr,
				m->img.phnum, m->img.bias, dev, ino, &id, &lo,
				&len, &why))
		return fi_cu_pass(m, why);
	if (fi_cu.mode == FI_CU_FILL) {
		fi_cu_miss(fi_cu_exe(m) ? "" : m->img.path, lo, len, &id, "");
		return false;
	}
	if (fi_cu.pm == -2)
		fi_cu.pm = (int)fi_sys3(SYS_open, (long)"/proc/self/pagemap",
					O_RDONLY | O_CLOEXEC, 0);
	if (!fi_live_pages_clean(fi_cu.pm, lo, len))
		return fi_cu_pass(m, "a page of its text is private already "
				  "(a breakpoint, a uprobe?)");
	if (!fi_cu_dir())
		return false;
	conf = fi_cache_conf_of(cfg, fi_rt()->have_arity);
	fi_cache_name(&fi_rt()->key, &id, &conf, name);
	err = fi_cache_map(&fi_cu.dir, name, &id, lo, len, &why);
	if (!err)
		return true;
	if (err == -ENOENT)
		fi_cu_miss(fi_cu_exe(m) ? "" : m->img.path, lo, len, &id, name);
	return fi_cu_pass(m, why);
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
	struct fi_cache_req *r = fi_cu.req;
	int fd[FI_CACHE_REQ_MAX];
	const char *why;
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->n; i++) {
		int f = fi_cache_open_module(fi_cu.req_path[i], &r->mod[i].id);

		if (f < 0)
			continue;
		r->mod[n] = r->mod[i];
		fd[n++] = f;
	}
	r->n = n;
	if (n && fi_cache_send(fi_cu.root, r, fi_cache_req_size(n), fd, n,
			       &why) && fi_cu.say)
		fi_cu_say("fineibt: cache: no fill request sent (%s)\n", why);
	for (uint32_t i = 0; i < n; i++)
		fi_sys3(SYS_close, fd[i], 0, 0);
}

void fi_cache_finish(void)
{
	if (fi_cu.req && fi_cu.req->n)
		fi_cu_request();
	free(fi_cu.req);
	fi_cu.req = NULL;
	free(fi_cu.where);
	fi_cu.where = NULL;
	fi_cu.nwhere = 0;
	fi_cache_dir_close(&fi_cu.dir);
	if (fi_cu.pm >= 0)
		fi_sys3(SYS_close, fi_cu.pm, 0, 0);
	fi_cu.pm = -2;
	fi_cu.decided = false;
}
