// SPDX-License-Identifier: MIT
/*
 * The runtime's side of the shared text cache (docs/protection.md, "The
 * shared text cache"). A root service (`fineibt cached`) writes, for each
 * user, entries named by a keyed hash of a module file's identity and the
 * whole configuration: copies of the file whose text is rewritten with
 * that user's key. A process of that user maps an entry over its
 * module's text instead of rewriting it, and the module's registered
 * arrays the entry carries instead of building them: one open, fstat,
 * pread of the record's header, two mmaps and a close, before a page of
 * the text is copied; text and arrays then stay shared page cache.
 *
 * Everything the runtime trusts is checked here, with the descriptors it
 * holds, never with a path looked up twice: the user's directory opened
 * with no symbolic link on the way and found root-owned, closed to group
 * and others, on tmpfs; each entry opened relative to it, never through a
 * link, and found root-owned, 0444, with one link and the file's size.
 * No user but root can then change or truncate an entry a process has
 * mapped (MAP_PRIVATE shows later writes to pages not yet touched: the
 * owner is what rules them out). The identity of a module is the
 * kernel's: the device and inode of its text mapping, the size and times
 * of that very inode, its build-id read from memory.
 *
 * Raw system calls only (rawsys.h): the runtime's start-up must not run a
 * libc function a preloaded library interposes, and leaves errno alone.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "rawsys.h"
#include "rtcache.h"
#include "runtime.h"
#include "strbuf.h"

#define FI_PAGE		4096ULL

static uint64_t fi_cpage_down(uint64_t a)
{
	return a & ~(FI_PAGE - 1);
}

static uint64_t fi_cpage_up(uint64_t a)
{
	return (a + FI_PAGE - 1) & ~(FI_PAGE - 1);
}

static int fi_cfail(const char **why, const char *what, int err)
{
	*why = what;
	return err;
}

/*
 * openat2(RESOLVE_NO_SYMLINKS) where it does not exist (Linux before 5.6,
 * valgrind): the path walked one component at a time, none followed if
 * it is a link (O_NOFOLLOW on an O_PATH open of a link opens the link,
 * which O_DIRECTORY then refuses).
 */
static long fi_cache_walk(char *path)
{
	long fd = fi_sys_open("/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	char *p = path + 1;

	while (fd >= 0 && *p) {
		char *end = strchr(p, '/');
		long next;

		if (end)
			*end = '\0';
		next = *p ? fi_sys6(SYS_openat, fd, (long)p, O_PATH | O_DIRECTORY |
				    O_NOFOLLOW | O_CLOEXEC, 0, 0, 0) : fd;
		if (next != fd)
			fi_sys3(SYS_close, fd, 0, 0);
		fd = next == -ENOTDIR ? -ELOOP : next;
		if (!end)
			break;
		*end = '/';
		p = end + 1;
	}
	return fd;
}

int fi_cache_dir_open(const char *root, uint32_t uid, struct fi_cache_dir *d,
		      const char **why)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[512], user[24];
	struct statfs sf;
	struct stat st;
	long fd;

	d->fd = -1;
	fi_cache_user_dir(uid, user, sizeof(user));
	if (!fi_cache_path(path, sizeof(path), root, user) || root[0] != '/')
		return fi_cfail(why, "the cache directory is not an absolute "
				"path of at most 500 bytes", -EINVAL);
	fd = fi_sys6(SYS_openat2, AT_FDCWD, (long)path, (long)&how,
		     sizeof(how), 0, 0);
	if (fd == -ENOSYS)
		fd = fi_cache_walk(path);
	if (fd < 0)
		return fi_cfail(why, fd == -ELOOP ?
				"a symbolic link on the cache directory's path" :
				"no directory of this user in the cache", (int)fd);
	if (fi_sys3(SYS_fstat, fd, (long)&st, 0) ||
	    fi_sys3(SYS_fstatfs, fd, (long)&sf, 0)) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "cannot fstat the user's directory", -EIO);
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0066)) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "the user's directory is not root's, or "
				"group or others may read or write it", -EPERM);
	}
	if ((unsigned long)sf.f_type != TMPFS_MAGIC) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "the cache directory is not on tmpfs",
				-EXDEV);
	}
	d->fd = (int)fd;
	d->dev = st.st_dev;
	return 0;
}

void fi_cache_dir_close(struct fi_cache_dir *d)
{
	if (d->fd >= 0)
		fi_sys3(SYS_close, d->fd, 0, 0);
	d->fd = -1;
}

int fi_cache_key_read(const struct fi_cache_dir *d, struct fineibt_key *key,
		      const char **why)
{
	struct fi_cache_keyfile kf;
	long fd, n;

	/*
	 * No fstat: only root creates files in the checked directory; the
	 * user owns this one, and whatever they write into it only changes
	 * the key of their own processes (docs/protection.md).
	 */
	fd = fi_sys6(SYS_openat, d->fd, (long)FI_CACHE_KEYFILE,
		     O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0, 0, 0);
	if (fd < 0)
		return fi_cfail(why, "no key file in the user's directory", (int)fd);
	n = fi_sys3(SYS_read, fd, (long)&kf, sizeof(kf));
	fi_sys3(SYS_close, fd, 0, 0);
	if (n != (long)sizeof(kf) || memcmp(kf.magic, FI_CACHE_KEY_MAGIC, 8)) {
		memset(&kf, 0, sizeof(kf));
		return fi_cfail(why, "the key file is not one the service wrote",
				-EINVAL);
	}
	*key = kf.key;
	memset(&kf, 0, sizeof(kf));
	return 0;
}

/* Is [a, a + len) inside one PT_LOAD's file image? */
static bool fi_cache_loaded(const Elf64_Phdr *ph, size_t phnum, uint64_t a,
			    uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD && a >= ph[i].p_vaddr &&
		    a - ph[i].p_vaddr <= ph[i].p_filesz &&
		    len <= ph[i].p_filesz - (a - ph[i].p_vaddr))
			return true;
	}
	return false;
}

/* Does the dynamic section ask for text relocations? */
static bool fi_cache_textrel(const Elf64_Phdr *ph, size_t phnum, uint64_t bias)
{
	for (size_t i = 0; i < phnum; i++) {
		const Elf64_Dyn *d;
		size_t n;

		if (ph[i].p_type != PT_DYNAMIC ||
		    !fi_cache_loaded(ph, phnum, ph[i].p_vaddr, ph[i].p_filesz))
			continue;
		d = (const Elf64_Dyn *)(uintptr_t)(ph[i].p_vaddr + bias);
		n = ph[i].p_filesz / sizeof(*d);
		for (size_t k = 0; k < n && d[k].d_tag != DT_NULL; k++) {
			if (d[k].d_tag == DT_TEXTREL ||
			    (d[k].d_tag == DT_FLAGS &&
			     (d[k].d_un.d_val & DF_TEXTREL)))
				return true;
		}
	}
	return false;
}

/* The module's one executable PT_LOAD, or NULL (none, several, bss). */
static const Elf64_Phdr *fi_cache_text_seg(const Elf64_Phdr *ph, size_t phnum)
{
	const Elf64_Phdr *t = NULL;

	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (t)
			return NULL;
		t = &ph[i];
	}
	if (!t || !t->p_filesz || t->p_filesz != t->p_memsz ||
	    (t->p_vaddr & (FI_PAGE - 1)) != (t->p_offset & (FI_PAGE - 1)))
		return NULL;
	return t;
}

static bool fi_cache_live_build_id(const Elf64_Phdr *ph, size_t phnum,
				   uint64_t bias, struct fi_cache_ident *id)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE ||
		    !fi_cache_loaded(ph, phnum, ph[i].p_vaddr, ph[i].p_filesz))
			continue;
		if (fi_cache_build_id((const uint8_t *)(uintptr_t)
				      (ph[i].p_vaddr + bias),
				      ph[i].p_filesz, id))
			return true;
	}
	return false;
}

int fi_cache_ident_live(const char *path, const Elf64_Phdr *ph, size_t phnum,
			uint64_t bias, uint64_t dev, uint64_t ino,
			struct fi_cache_ident *id, uint64_t *lo, uint64_t *len,
			const char **why)
{
	const Elf64_Phdr *t = fi_cache_text_seg(ph, phnum);
	bool exe = !path[0];
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!t)
		return fi_cfail(why, "not one executable segment whose size in "
				"the file is its size in memory", -ENOEXEC);
	if (fi_cache_textrel(ph, phnum, bias))
		return fi_cfail(why, "it has text relocations", -ENOEXEC);
	if (!fi_cache_live_build_id(ph, phnum, bias, id))
		return fi_cfail(why, "no build-id", -ENOEXEC);
	/*
	 * The executable: /proc/self/exe is the very file the kernel
	 * mapped, when the kernel mapped it (not the dynamic loader run as
	 * a program: then AT_PHDR is the loader's).
	 */
	if (exe && getauxval(AT_PHDR) != (uintptr_t)ph - 0 &&
	    getauxval(AT_PHDR) != (uintptr_t)ph)
		return fi_cfail(why, "the executable was not mapped by the "
				"kernel", -ENOENT);
	if (fi_sys6(SYS_newfstatat, AT_FDCWD,
		    (long)(exe ? "/proc/self/exe" : path), (long)&st, 0, 0, 0))
		return fi_cfail(why, "cannot stat the module's file", -ENOENT);
	if (!S_ISREG(st.st_mode))
		return fi_cfail(why, "not a regular file", -ENOENT);
	if (!exe && (st.st_dev != dev || st.st_ino != ino))
		return fi_cfail(why, "its path names another file than the one "
				"mapped (replaced since, or not found in "
				"/proc/self/maps)", -ESTALE);
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = (uint64_t)st.st_size;
	id->mtime_s = st.st_mtim.tv_sec;
	id->mtime_ns = (uint32_t)st.st_mtim.tv_nsec;
	id->ctime_s = st.st_ctim.tv_sec;
	id->ctime_ns = (uint32_t)st.st_ctim.tv_nsec;
	id->text_vaddr = t->p_vaddr;
	id->text_off = t->p_offset;
	id->text_size = t->p_filesz;
	if (t->p_offset + t->p_filesz > id->size)
		return fi_cfail(why, "its text lies past the end of its file",
				-ESTALE);
	*lo = fi_cpage_down(bias + t->p_vaddr);
	*len = fi_cpage_up(bias + t->p_vaddr + t->p_memsz) - *lo;
	return 0;
}

/* The line @line of /proc/self/maps (NUL-terminated): how many of @lo it
 * gave. A line that does not parse gives none. Only a line starting at
 * one of @lo is parsed whole (a process has dozens of lines, this runs
 * at each start). */
static size_t fi_maps_line(char *line, const uint64_t *lo, size_t n,
			   uint64_t *dev, uint64_t *ino)
{
	const char *s = line;
	struct fi_vma v;
	const char *path;
	uint64_t start;
	size_t got = 0, i = 0;

	if (!fi_maps_num(&s, 16, &start))
		return 0;
	while (i < n && lo[i] != start)
		i++;
	if (i == n || !fi_vma_next(&line, &v, &path) || !v.hi)
		return 0;
	/* From the first address asked that starts here (others may too). */
	for (; i < n; i++) {
		if (lo[i] != v.lo)
			continue;
		dev[i] = makedev(v.dev >> 32, v.dev & UINT32_MAX);
		ino[i] = v.ino;
		got++;
	}
	return got;
}

/*
 * Not on the stack: a thread with a small stack may dlopen (its scan runs
 * under the runtime's lock, one at a time). Once a read has filled it,
 * its page is mapped: a scan then borrows it for the pagemap's entries
 * (fi_cache_scratch) instead of taking a fault on a page of its own.
 */
static char fi_maps_buf[4096] __attribute__((aligned(8)));

uint64_t *fi_cache_scratch(size_t *cap)
{
	*cap = sizeof(fi_maps_buf) / sizeof(uint64_t);
	return (uint64_t *)(void *)fi_maps_buf;
}

int fi_cache_maps_find_in(int fd, const uint64_t *lo, size_t n,
			  uint64_t *dev, uint64_t *ino)
{
	char *buf = fi_maps_buf;
	size_t have = 0, found = 0;
	long got = 0;
	bool skip = false;

	for (size_t i = 0; i < n; i++)
		dev[i] = ino[i] = 0;
	/* Lines are parsed as they come; a partial one waits for its end.
	 * Done once every address is found. */
	while (found < n && (got = fi_sys3(SYS_read, fd, (long)(buf + have),
					   (long)(sizeof(fi_maps_buf) - have))) > 0) {
		char *p = buf, *end = buf + have + got, *nl;

		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			*nl = '\0';
			if (!skip)
				found += fi_maps_line(p, lo, n, dev, ino);
			skip = false;
			p = nl + 1;
		}
		have = (size_t)(end - p);
		/* A line longer than the buffer (a long path): its start has
		 * gone by unread, and the rest up to its end is skipped, never
		 * read as a line of its own. */
		if (have == sizeof(fi_maps_buf)) {
			have = 0;
			skip = true;
		}
		memmove(buf, p, have);
	}
	return got < 0 ? (int)got : 0;
}

int fi_cache_maps_find(const uint64_t *lo, size_t n, uint64_t *dev,
		       uint64_t *ino)
{
	long fd = fi_sys_open("/proc/self/maps",
			  O_RDONLY | O_CLOEXEC, 0);
	int ret;

	if (fd < 0) {
		for (size_t i = 0; i < n; i++)
			dev[i] = ino[i] = 0;
		return (int)fd;
	}
	ret = fi_cache_maps_find_in((int)fd, lo, n, dev, ino);
	fi_sys3(SYS_close, fd, 0, 0);
	return ret;
}

/*
 * The registered arrays at @h (@n bytes, mapped), named by the record
 * header @r: their header's magic, counts and every array's offset and
 * alignment fit the mapping and the record's counts (the arrays' contents
 * are the service's, trusted as the text is: docs/protection.md).
 */
static bool fi_cache_regs_ok(const struct fi_cache_rec *r,
			     const struct fi_cache_regs *h, uint64_t n)
{
	return !memcmp(h->magic, FI_CACHE_REGS_MAGIC, sizeof(h->magic)) &&
	       h->nfp <= FI_FP_SITES &&
	       (h->func_off_at ? h->nfunc == r->nfuncs : !h->nfunc) &&
	       (!h->func_arity_at || h->func_off_at) &&
	       !(h->func_off_at & 3) && !(h->fp_at & 7) && !(h->coarse_at & 7) &&
	       (!h->func_off_at || (h->func_off_at >= sizeof(*h) &&
				    h->func_off_at <= n &&
				    n - h->func_off_at >= 4ull * h->nfunc)) &&
	       (!h->func_arity_at || (h->func_arity_at >= sizeof(*h) &&
				      h->func_arity_at <= n &&
				      n - h->func_arity_at >= h->nfunc)) &&
	       (h->fp_at ? h->fp_at >= sizeof(*h) && h->fp_at <= n &&
			   n - h->fp_at >= 8ull * h->nfp : !h->nfp) &&
	       (h->coarse_at ? h->coarse_at >= sizeof(*h) && h->coarse_at <= n &&
			       n - h->coarse_at >= 8ull * h->coarse_words :
			       !h->coarse_words) &&
	       h->text_lo < h->text_hi;
}

int fi_cache_entry_open(const struct fi_cache_dir *d, const char *name,
			const struct fi_cache_ident *id, struct fi_cache_rec *rec,
			const struct fi_cache_regs **regs, size_t *len,
			const char **why)
{
	uint64_t copy = fi_cpage_up(id->size), tail;
	struct stat st;
	long fd, n, p;

	*regs = NULL;
	fd = fi_sys6(SYS_openat, d->fd, (long)name,
		     O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0, 0, 0);
	if (fd < 0)
		return fi_cfail(why, fd == -ENOENT ? "no entry yet" :
				"cannot open the entry", (int)fd);
	if (fi_sys3(SYS_fstat, fd, (long)&st, 0) || !S_ISREG(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & 07777) != 0444 || st.st_nlink != 1 ||
	    st.st_dev != d->dev || (uint64_t)st.st_size <= copy ||
	    (uint64_t)st.st_size - copy > (1ULL << 30)) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "the entry is not a root-owned 0444 file with "
				"one link and the module file's size", -EPERM);
	}
	tail = (uint64_t)st.st_size - copy;
	/* The record's header: its sites stand in the arrays after it. */
	n = fi_sys6(SYS_pread64, fd, (long)rec, sizeof(*rec), (long)copy, 0, 0);
	if (n != (long)sizeof(*rec) ||
	    memcmp(rec->magic, FI_CACHE_REC_MAGIC, sizeof(rec->magic)) ||
	    !rec->regs_off || (rec->regs_off & (FI_PAGE - 1)) ||
	    rec->regs_off > tail || rec->regs_len < sizeof(**regs) ||
	    rec->regs_len > tail - rec->regs_off) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "no site record of this format with "
				"registered arrays in the entry", -EINVAL);
	}
	/*
	 * The registered arrays, mapped: shared page cache of every process
	 * of the key, populated at once (a few pages a large module; no
	 * fault at each first touch), never copied into this process.
	 */
	*len = (size_t)rec->regs_len;
	p = fi_sys6(SYS_mmap, 0, (long)*len, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
		    fd, (long)(copy + rec->regs_off));
	if (p < 0 && p > -4096) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "cannot map the entry's registered arrays",
				(int)p);
	}
	if (!fi_cache_regs_ok(rec, (const struct fi_cache_regs *)p, *len)) {
		fi_sys3(SYS_munmap, p, (long)*len, 0);
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "the entry's registered arrays do not fit "
				"their header", -EINVAL);
	}
	*regs = (const struct fi_cache_regs *)p;
	return (int)fd;
}

void fi_cache_entry_unmap(const struct fi_cache_regs *regs, size_t len)
{
	if (regs)
		fi_sys3(SYS_munmap, (long)regs, (long)len, 0);
}

void fi_cache_entry_keep(const struct fi_cache_regs *regs, size_t len)
{
	/* Sealed as the arena's chunks are (fi_rt_map_sealed). */
	if (fi_rt()->wr.sealed)
		fi_sys3(SYS_mseal, (long)regs, (long)fi_cpage_up(len), 0);
}

/*
 * Is @fd an entry named @name (a root-owned 0444 file of one link: only
 * the service makes one, and the name is the keyed hash of @id), and is
 * [@lo, @lo + @len) the executable text of the file @id names, at @id's
 * offset, to the kernel? The descriptor, the identity and the range were
 * kept in the scan's writable scratch from the lookup to here: a write
 * there moved the mapping onto any other text (another library's,
 * libfineibt's own), or mapped another entry's pages
 * (tests/e2e/cache_forge.sh).
 */
static bool fi_cache_map_ok(int fd, const struct fi_cache_ident *id,
			    uint64_t lo, uint64_t len, const char *name,
			    const char **why)
{
	char link[32], path[FI_CACHE_ROOT_MAX + 64];
	size_t nl = strlen(name);
	struct fi_strbuf b;
	struct fi_vma v;
	struct stat st;
	long n = -1;

	fi_strbuf_init(&b, link, sizeof(link), 0);
	fi_strbuf_str(&b, "/proc/self/fd/");
	fi_strbuf_dec(&b, (uint64_t)fd, 1);
	if (fd >= 0 && !b.over)
		n = fi_sys3(SYS_readlink, (long)link, (long)path, sizeof(path) - 1);
	if (n <= (long)nl || path[n - (long)nl - 1] != '/' ||
	    memcmp(path + n - nl, name, nl) ||
	    fi_sys3(SYS_fstat, fd, (long)&st, 0) || !S_ISREG(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & 07777) != 0444 || st.st_nlink != 1) {
		*why = "the descriptor to map is not this module's entry";
		return false;
	}
	if (fi_rt_vma(lo, &v) || !v.x || v.w || !v.file || v.lo > lo ||
	    lo + len > v.hi || lo + len < lo ||
	    makedev(v.dev >> 32, v.dev & UINT32_MAX) != id->dev ||
	    v.ino != id->ino ||
	    v.off + (lo - v.lo) != fi_cpage_down(id->text_off)) {
		*why = "the range to map over is not this module's text";
		return false;
	}
	return true;
}

int fi_cache_entry_map(int fd, const struct fi_cache_ident *id, uint64_t lo,
		       uint64_t len, const char *name, const char **why)
{
	uint64_t off = fi_cpage_down(id->text_off);
	unsigned char v;
	long p;

	if (off + len > fi_cpage_up(id->size)) {
		fi_sys3(SYS_close, fd, 0, 0);
		return fi_cfail(why, "the text lies past the entry's copy", -EINVAL);
	}
	if (!fi_cache_map_ok(fd, id, lo, len, name, why)) {
		fi_sys3(SYS_close, fd, 0, 0);
		return -EPERM;
	}
	p = fi_sys6(SYS_mmap, (long)lo, (long)len, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_FIXED, fd, (long)off);
	if (p == (long)lo)
		return 0;
	fi_sys3(SYS_close, fd, 0, 0);
	/*
	 * Linux 6.12 and later put the old mapping back when MAP_FIXED
	 * fails; an older kernel may have unmapped it already. Text that
	 * is gone cannot be put back: stop rather than run into a hole.
	 */
	if (fi_sys3(SYS_mincore, (long)lo, (long)FI_PAGE, (long)&v) == -ENOMEM)
		fi_rt_die("a failed mapping of a cache entry took a module's "
			  "text with it");
	return fi_cfail(why, "cannot map the entry", p < 0 ? (int)p : -EIO);
}

int fi_cache_open_module(const char *path, const struct fi_cache_ident *id)
{
	struct stat st;
	/* Without blocking: a path that became a FIFO since the loader
	 * mapped it must not stop the start (the identity check below then
	 * refuses it); reads of a regular file ignore the flag. */
	long fd = fi_sys_open((path[0] ? path : "/proc/self/exe"),
			  O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);

	if (fd < 0)
		return (int)fd;
	if (fi_sys3(SYS_fstat, fd, (long)&st, 0) || st.st_dev != id->dev ||
	    st.st_ino != id->ino || (uint64_t)st.st_size != id->size ||
	    st.st_mtim.tv_sec != id->mtime_s ||
	    (uint32_t)st.st_mtim.tv_nsec != id->mtime_ns ||
	    st.st_ctim.tv_sec != id->ctime_s ||
	    (uint32_t)st.st_ctim.tv_nsec != id->ctime_ns) {
		fi_sys3(SYS_close, fd, 0, 0);
		return -ESTALE;
	}
	return (int)fd;
}

int fi_cache_send(const char *root, const void *req, size_t len,
		  const int *fd, size_t nfd, const char **why)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * FI_CACHE_REQ_MAX)];
	} cm;
	struct iovec iov = { .iov_base = (void *)req, .iov_len = len };
	struct msghdr mh = {
		.msg_name = &sa, .msg_namelen = sizeof(sa),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	long s, r;

	if (!fi_cache_path(sa.sun_path, sizeof(sa.sun_path), root, FI_CACHE_SOCK))
		return fi_cfail(why, "the socket's path is too long", -ENAMETOOLONG);
	if (nfd > FI_CACHE_REQ_MAX)
		return fi_cfail(why, "too many modules", -E2BIG);
	if (nfd) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfd);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int) * nfd);
		memcpy(CMSG_DATA(&cm.h), fd, sizeof(int) * nfd);
	}
	s = fi_sys3(SYS_socket, AF_UNIX,
		    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fi_cfail(why, "no socket", (int)s);
	r = fi_sys3(SYS_sendmsg, s, (long)&mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	fi_sys3(SYS_close, s, 0, 0);
	if (r != (long)len)
		return fi_cfail(why, "the service did not take the request "
				"(not running, or its queue is full)",
				r < 0 ? (int)r : -EIO);
	return 0;
}
