// SPDX-License-Identifier: MIT
/*
 * Records checked where they landed (docs/protection.md, "Records built
 * from scratch"), the kernel's view of this process's mappings, and
 * reads of this process's memory through the kernel (fi_rt_read_self).
 *
 * A registered module's copy is laid out in writable scratch and written
 * into the read-only arena in one fi_rt_put (rtarena.c). A thread that
 * changed the scratch between the layout and the write, or the module's
 * heap image during the long rewrite before it, would have its bytes
 * published. So before a copy is published (its slot written) it is
 * read back from the read-only arena, where nothing can change it any
 * more, and checked against what a write primitive cannot forge: the
 * process's mode (read-only state), the caller's arguments, the kernel's
 * view of the mappings, and the module's own read-only program headers
 * and module index. What it checks is what the trap handler trusts:
 *
 *   - every pointer of the copy points into the copy itself, or at
 *     read-only memory of its module (its program headers, its
 *     .kcfi_traps read in place);
 *   - its key is the caller's module, and a JIT region's text is the
 *     range its caller registered, its path "[jit]" (and no module's);
 *   - its text is mapped executable and never writable, every byte, and
 *     overlaps no other registered module; its executable views lie in
 *     it; a trap list read in place is the one its module index names
 *     (read-only program headers, note and list); a copied one is sorted
 *     and lies in the text;
 *   - it carries warn only if the process runs in warn (the one bit
 *     that turns a fatal CFI failure into a report);
 *   - its coarse-check bitmap marks only its recorded function entries
 *     (or their preambles in FineIBT modes).
 * (Its BHI stub array, if any, must be a registered one: rtstate.c.)
 *
 * Names, symbols and the fingerprint sample serve reports and the scans'
 * bookkeeping: they are checked to lie in the copy, not for content.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cacheid.h"
#include "imgindex.h"
#include "index.h"
#include "rawsys.h"
#include "runtime.h"

/* ------------------------------------------------ the kernel's view */

/*
 * PROCMAP_QUERY (Linux 6.11, ioctl on /proc/PID/maps): the mapping
 * covering an address, in one system call. The layout is the kernel's
 * ABI (struct procmap_query); older headers do not have it.
 */
struct fi_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define FI_PROCMAP_QUERY	_IOWR('f', 17, struct fi_procmap_query)
#define FI_PQ_R			0x01
#define FI_PQ_W			0x02
#define FI_PQ_X			0x04

/*
 * The runtime's maps descriptor if this process opened it, else -1. Not
 * asked whether it is still that file: only PROCMAP_QUERY is ever sent
 * to it, which nothing but a maps file answers (any other error, and the
 * query is asked of a fresh /proc/self/maps).
 */
static int fi_vma_kept_fd(void)
{
	const struct fi_rt_wr *w = &fi_rt()->wr;

	return w->maps_fd >= 0 && fi_rt_own_here() ? w->maps_fd : -1;
}

char *fi_maps_read(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	long n;

	if (!buf)
		return NULL;
	while ((n = fi_sys6(SYS_pread64, fd, (long)(buf + len), (long)(cap - len),
			    (long)len, 0, 0)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *more = realloc(buf, cap * 2 + 1);

			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

bool fi_maps_num(const char **p, unsigned int base, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	for (;; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else
			break;
		if (n > (UINT64_MAX - d) / base)
			return false;
		n = n * base + d;
	}
	if (s == *p)
		return false;
	*v = n;
	*p = s;
	return true;
}

static bool fi_maps_sep(const char **p, char c)
{
	if (**p != c)
		return false;
	while (**p == c)
		(*p)++;
	return true;
}

/* "lo-hi perms off maj:min ino   path" (proc(5)). */
bool fi_vma_next(char **at, struct fi_vma *v, const char **path)
{
	char *nl;
	const char *s = *at, *perms;
	uint64_t maj, min;

	if (!s || !*s)
		return false;
	nl = strchr(*at, '\n');
	if (nl)
		*nl = '\0';
	*at = nl ? nl + 1 : *at + strlen(*at);
	*v = (struct fi_vma){ 0 };
	*path = "";
	if (!fi_maps_num(&s, 16, &v->lo) || !fi_maps_sep(&s, '-') ||
	    !fi_maps_num(&s, 16, &v->hi) || !fi_maps_sep(&s, ' '))
		goto bad;
	perms = s;
	for (int i = 0; i < 4; i++, s++) {
		if (!*s || *s == ' ')
			goto bad;
	}
	if (!fi_maps_sep(&s, ' ') || !fi_maps_num(&s, 16, &v->off) ||
	    !fi_maps_sep(&s, ' ') || !fi_maps_num(&s, 16, &maj) ||
	    !fi_maps_sep(&s, ':') || !fi_maps_num(&s, 16, &min) ||
	    !fi_maps_sep(&s, ' ') || !fi_maps_num(&s, 10, &v->ino) ||
	    maj > UINT32_MAX || min > UINT32_MAX)
		goto bad;
	while (*s == ' ')
		s++;
	v->r = perms[0] == 'r';
	v->w = perms[1] == 'w';
	v->x = perms[2] == 'x';
	v->file = v->ino != 0;
	v->dev = (maj << 32) | min;
	*path = s;
	if (v->lo <= v->hi)
		return true;
bad:
	*v = (struct fi_vma){ 0 };
	*path = "";
	return true;
}

/* The maps file's line for @addr, parsed (kernels before PROCMAP_QUERY). */
static int fi_vma_parse(int fd, uint64_t addr, struct fi_vma *v)
{
	char *buf = fi_maps_read(fd), *at = buf;
	const char *path;
	struct fi_vma m;
	int ret = -ENOENT;

	if (!buf)
		return -ENOMEM;
	while (fi_vma_next(&at, &m, &path)) {
		if (m.hi && addr >= m.lo && addr < m.hi) {
			*v = m;
			ret = 0;
			break;
		}
	}
	free(buf);
	return ret;
}

/* @parse: @fd is a maps file this call opened (the text is ours to read). */
static int fi_vma_ask(int fd, uint64_t addr, struct fi_vma *v, bool parse)
{
	struct fi_procmap_query q = { .size = sizeof(q), .query_addr = addr };
	long r = fi_sys3(SYS_ioctl, fd, (long)FI_PROCMAP_QUERY, (long)&q);

	if (parse && (r == -ENOTTY || r == -EINVAL))
		return fi_vma_parse(fd, addr, v);
	if (r)
		return (int)r;
	*v = (struct fi_vma){
		.lo = q.vma_start, .hi = q.vma_end,
		.r = q.vma_flags & FI_PQ_R, .w = q.vma_flags & FI_PQ_W,
		.x = q.vma_flags & FI_PQ_X, .file = q.inode != 0,
		.dev = ((uint64_t)q.dev_major << 32) | q.dev_minor,
		.ino = q.inode, .off = q.vma_offset,
	};
	return 0;
}

int fi_rt_vma(uint64_t addr, struct fi_vma *v)
{
	int fd = fi_vma_kept_fd(), ret;

	/* -ENOENT: nothing mapped there; any other answer is not the
	 * maps file's, or no answer at all (a kernel before 6.11). */
	if (fd >= 0 && ((ret = fi_vma_ask(fd, addr, v, false)) == 0 ||
			ret == -ENOENT))
		return ret;
	fd = (int)fi_sys_open("/proc/self/maps",
			  O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)	/* no /proc: not "nothing mapped" */
		return fd == -ENOENT ? -ENODEV : fd;
	ret = fi_vma_ask(fd, addr, v, true);
	fi_raw_close(fd);
	return ret;
}

int fi_rt_vma_kept(uint64_t addr, struct fi_vma *v)
{
	int fd = fi_vma_kept_fd(), ret;

	if (fd < 0)
		return -ENODEV;
	ret = fi_vma_ask(fd, addr, v, false);
	return ret == 0 || ret == -ENOENT ? ret : -ENODEV;
}

/*
 * Made directly (src/seq/rawsys.h): the trap handler and the JIT probes
 * call this, and in libfineibt.a libc's process_vm_readv and getpid are
 * whatever an LD_PRELOAD library defines (libfineibt.so's are its own,
 * src/load/ownlibc.c). -1 and errno on failure, as libc's.
 */
ssize_t fi_rt_read_self(void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	long r = fi_sys6(SYS_process_vm_readv, fi_sys3(SYS_getpid, 0, 0, 0),
			 (long)&local, 1, (long)&remote, 1, 0);

	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

int fi_rt_vma_text(uint64_t lo, uint64_t hi, bool exec, struct fi_vma *first)
{
	struct fi_vma v;
	int err;

	if (lo >= hi)
		return -EACCES;
	for (uint64_t at = lo; at < hi; at = v.hi) {
		err = fi_rt_vma(at, &v);
		if (err == -ENOENT)
			return -EACCES;
		if (err)
			return err;
		if (!v.r || v.w || (exec && !v.x) || v.hi <= at)
			return -EACCES;
		if (first && at == lo)
			*first = v;
	}
	return 0;
}

/* The executable's path (a readlink: no file is opened), or "". */
void fi_rt_exe_path(char *exe, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", exe, len - 1);

	exe[n > 0 ? n : 0] = '\0';
}

/* ------------------------------------------------ the copy itself */

struct fi_ver {
	uintptr_t lo, hi;	/* the copy's bytes */
	bool bad;
};

/* Does @n elements of @size at @p lie in the copy (or is it empty)? */
static void fi_ver_in(struct fi_ver *v, const void *p, size_t n, size_t size)
{
	uintptr_t a = (uintptr_t)p;

	if (!p && !n)
		return;
	if (!p || (size && n > (v->hi - v->lo) / size) || a < v->lo ||
	    a > v->hi || n * size > v->hi - a)
		v->bad = true;
}

static void fi_ver_str(struct fi_ver *v, const char *s)
{
	uintptr_t a = (uintptr_t)s;

	if (!s)
		return;
	if (a < v->lo || a >= v->hi || !memchr(s, '\0', v->hi - a))
		v->bad = true;
}

/* Every pointer of @c's image into the copy; the module's own pointers
 * (program headers, the trap list in place) are checked below. */
static void fi_ver_image(struct fi_ver *v, const struct fi_image *im)
{
	fi_ver_str(v, im->path);
	fi_ver_in(v, im->views, im->nviews, sizeof(*im->views));
	fi_ver_in(v, im->syms, im->nsyms, sizeof(*im->syms));
	fi_ver_in(v, im->typeids, im->ntypeids, sizeof(*im->typeids));
	fi_ver_in(v, im->naked, im->nnaked, sizeof(*im->naked));
	fi_ver_in(v, im->traps, im->ntraps, sizeof(*im->traps));
	if (v->bad)
		return;
	for (size_t i = 0; i < im->nsyms; i++)
		fi_ver_str(v, im->syms[i].name);
	for (size_t i = 0; i < im->ntypeids; i++)
		fi_ver_str(v, im->typeids[i].name);
	if (im->funcs || im->calls || im->tcalls || im->bad || im->file || im->elf)
		v->bad = true;
	/* Views of a live module read it where it is loaded. */
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *w = &im->views[i];

		if (w->mem && (uint64_t)(uintptr_t)w->mem != w->vaddr + im->bias)
			v->bad = true;
	}
}

/* [@a, @a + @n) inside [@lo, @hi)? */
static bool fi_ver_inside(uint64_t a, uint64_t n, uint64_t lo, uint64_t hi)
{
	return a >= lo && a <= hi && n <= hi - a;
}

/* The executable views, the copied trap list and the site records lie in
 * the text. */
static bool fi_ver_text_parts(const struct fi_module *c)
{
	const struct fi_image *im = &c->img;
	uint64_t prev = 0;

	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *w = &im->views[i];

		if (w->exec && !fi_ver_inside(w->vaddr + im->bias, w->size,
					      c->text_lo, c->text_hi))
			return false;
	}
	for (size_t i = 0; i < im->ntraps; i++) {
		if ((i && im->traps[i] <= prev) ||
		    !fi_ver_inside(im->traps[i] + im->bias, 2, c->text_lo, c->text_hi))
			return false;
		prev = im->traps[i];
	}
	/*
	 * Arrays mapped from a cache entry are the service's, increasing as
	 * its text is its own (docs/protection.md): their ends are enough.
	 */
	if (c->func_off && c->regs && c->nfunc) {
		uint64_t first = c->func_base + c->func_off[0] + im->bias;
		uint64_t last = c->func_base + c->func_off[c->nfunc - 1] + im->bias;

		if (!fi_ver_inside(first, 1, c->text_lo, c->text_hi) ||
		    !fi_ver_inside(last, 1, c->text_lo, c->text_hi) ||
		    (c->nfunc > 1 && last <= first))
			return false;
	}
	for (size_t i = 0; c->func_off && !c->regs && i < c->nfunc; i++) {
		if ((i && c->func_off[i] <= c->func_off[i - 1]) ||
		    !fi_ver_inside(c->func_base + c->func_off[i] + im->bias, 1,
				   c->text_lo, c->text_hi))
			return false;
	}
	for (size_t i = 0; i < c->nfp; i++) {
		if (!fi_ver_inside((c->fp_site[i] & ~FI_FP_CALL) + im->bias,
				   FI_PREAMBLE_SIZE, c->text_lo, c->text_hi))
			return false;
	}
	return true;
}

/*
 * Is link-time @at one of @c's first @n recorded entries, or in FineIBT
 * modes (@pre) the preamble 16 bytes before one? @j: where the previous,
 * lower address stopped in the increasing entries; moved on.
 */
static bool fi_ver_known(const struct fi_module *c, size_t n, size_t *j,
			 uint64_t at, bool pre)
{
	while (*j < n && c->func_base + c->func_off[*j] < at)
		(*j)++;
	if (*j < n && c->func_base + c->func_off[*j] == at)
		return true;
	for (size_t k = *j; pre && k < n &&
	     c->func_base + c->func_off[k] <= at + FI_PREAMBLE_SIZE; k++) {
		if (c->func_base + c->func_off[k] == at + FI_PREAMBLE_SIZE)
			return true;
	}
	return false;
}

/*
 * The coarse check's bitmap (coarse.h: one bit per 16 bytes from
 * text_lo & ~15): its size the text's, and each known entry one of the
 * record's functions (or, in FineIBT modes, the preamble just before
 * one): a forged bit would let unchecked calls reach any 16 bytes.
 */
static bool fi_ver_coarse(struct fi_ver *v, const struct fi_module *c)
{
	uint64_t lo = c->text_lo & ~(uint64_t)(FI_PREAMBLE_SIZE - 1);
	uint64_t nbits = (c->text_hi - lo + FI_PREAMBLE_SIZE - 1) / FI_PREAMBLE_SIZE;
	bool pre = c->cfg.mode == FINEIBT_MODE_FINEIBT;
	size_t n = c->func_off ? c->nfunc : 0, j = 0;

	if (!c->coarse_bits)
		return true;
	fi_ver_in(v, c->coarse_bits, (nbits + 63) / 64, sizeof(uint64_t));
	/* Mapped from a cache entry: the service's bits, as its text is. */
	if (v->bad || c->regs)
		return !v->bad;
	/*
	 * The bits and the entries (increasing: fi_ver_text_parts) walked
	 * together, one pass: a binary search per bit was a fifth of the
	 * start-up of a program with 8,000 functions.
	 */
	for (uint64_t w = 0; w < (nbits + 63) / 64; w++) {
		for (uint64_t b = c->coarse_bits[w]; b; b &= b - 1) {
			uint64_t at = lo + (w * 64 + (uint64_t)__builtin_ctzll(b)) *
					  FI_PREAMBLE_SIZE - c->img.bias;

			if (!fi_ver_known(c, n, &j, at, pre))
				return false;
		}
	}
	return true;
}

/*
 * Read-only to the kernel (not writable, mapped), [@p, @p + @n)? @last:
 * the mapping the previous question found (a module's headers, index and
 * trap list usually share one), so it is asked once.
 */
static bool fi_ver_readonly(const void *p, size_t n, struct fi_vma *last)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	int err;

	if (!p || !n || a + n < a)
		return false;
	if (last->hi && a >= last->lo && a + n <= last->hi)
		return last->r && !last->w;
	err = fi_rt_vma(a, last);
	if (err == -ENOENT)
		return false;
	if (err) {
		*last = (struct fi_vma){ 0 };
		return true;	/* the kernel cannot be asked */
	}
	if (a + n <= last->hi)
		return last->r && !last->w;
	return fi_rt_vma_text(a, a + n, false, NULL) != -EACCES;
}

/*
 * A trap list read in place: the one the module index names, the index
 * and the program headers leading to it read-only, and the headers'
 * executable segments the copy's executable views.
 */
static bool fi_ver_ktraps(const struct fi_module *c)
{
	const struct fi_image *im = &c->img;
	const Elf64_Phdr *ph = im->phdr;
	struct fi_vma last = { 0 };
	const uint32_t *desc;
	int32_t off;

	/* Program headers of the module (lazy symbols compare them with
	 * its file): read-only. */
	if (ph && (!im->phnum || im->phnum > 256 ||
		   !fi_ver_readonly(ph, im->phnum * sizeof(*ph), &last)))
		return false;
	if (!im->ktraps)
		return !im->nktraps;
	if (!ph)
		return false;
	for (size_t i = 0, k = 0; i < im->phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		while (k < im->nviews && !im->views[k].exec)
			k++;
		if (k == im->nviews || im->views[k].vaddr != ph[i].p_vaddr)
			return false;
		k++;
	}
	/* Where the index is looked for must be there to read. */
	for (size_t i = 0; i < im->phnum; i++) {
		if (ph[i].p_type == PT_NOTE &&
		    !fi_ver_readonly((const void *)(uintptr_t)(ph[i].p_vaddr + im->bias),
				     ph[i].p_memsz, &last))
			return false;
	}
	desc = fi_index_find(ph, im->phnum, im->bias);
	if (!desc || !fi_ver_readonly(desc, FI_INDEX_DESCSZ_1, &last))
		return false;
	off = (int32_t)desc[FI_INDEX_W_TRAPS];
	return (const uint8_t *)desc + off == im->ktraps &&
	       desc[FI_INDEX_W_TRAPS + 1] / 4 == im->nktraps &&
	       fi_ver_readonly(im->ktraps, im->nktraps * 4, &last);
}

/* No other registered module claims any of [@lo, @hi). */
static bool fi_ver_alone(const struct fi_module *c)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = rt->nmods;

	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = rt->mods[i];

		if (m && m != c && c->text_lo < m->text_hi && m->text_lo < c->text_hi)
			return false;
	}
	return true;
}

/* What the process's mode allows a copy to carry. */
static bool fi_ver_policy(const struct fi_module *c, const void *key, bool jit,
			  uint64_t lo, uint64_t hi)
{
	const struct fi_runtime *rt = fi_rt();
	bool is_jit = c->img.path && !strcmp(c->img.path, "[jit]");

	if (c->key != key || is_jit != jit)
		return false;
	/* Once the process has a mode (before it, nothing registers but
	 * what a program linking the library's parts does itself). */
	if ((c->cfg.flags & FINEIBT_F_WARN) && rt->configured &&
	    !(rt->cfg.flags & FINEIBT_F_WARN))
		return false;
	if (jit && (c->text_lo != lo || c->text_hi != hi))
		return false;
	return true;
}

/*
 * A copy whose arrays are an entry's (c->regs): they lie in the mapped
 * arrays, which the kernel says are read-only and a file's, and the
 * header there agrees with every count, pointer and range the process
 * wrote into the copy. @a: the arrays' range, for fi_ver_in.
 */
static bool fi_ver_regs(const struct fi_module *c, struct fi_ver *a)
{
	const struct fi_cache_regs *h = c->regs;
	const uint8_t *b = c->regs;
	struct fi_vma last = { 0 };

	*a = (struct fi_ver){ (uintptr_t)b, (uintptr_t)b + c->regs_len, false };
	if (c->regs_len < sizeof(*h) || (uintptr_t)b + c->regs_len < (uintptr_t)b ||
	    !fi_ver_readonly(b, c->regs_len, &last) || (last.hi && !last.file))
		return false;
	return !memcmp(h->magic, FI_CACHE_REGS_MAGIC, sizeof(h->magic)) &&
	       h->func_base == c->func_base && h->nfunc == c->nfunc &&
	       h->nfp == c->nfp && h->mode == (uint32_t)c->cfg.mode &&
	       h->text_lo + c->img.bias == c->text_lo &&
	       h->text_hi + c->img.bias == c->text_hi &&
	       c->func_off == (h->func_off_at ? (const void *)(b + h->func_off_at) : NULL) &&
	       (const void *)c->func_arity ==
	       (h->func_arity_at ? (const void *)(b + h->func_arity_at) : NULL) &&
	       c->fp_site == (h->fp_at ? (const void *)(b + h->fp_at) : NULL) &&
	       c->coarse_bits == (h->coarse_at ? (const void *)(b + h->coarse_at) : NULL);
}

int fi_rt_verify_module(const struct fi_module *c, size_t len,
			const void *key, bool jit, uint64_t lo, uint64_t hi)
{
	struct fi_ver v = { (uintptr_t)c, (uintptr_t)c + len, false };
	struct fi_ver a = v;	/* where the registered arrays are */
	int err;

	fi_rt_park("verify", NULL, 0);
	if (len < sizeof(*c))
		return -EBADMSG;
	fi_ver_image(&v, &c->img);
	if (c->regs && (jit || !fi_ver_regs(c, &a)))
		return -EBADMSG;
	fi_ver_in(&a, c->func_off, c->nfunc, sizeof(*c->func_off));
	if (c->func_arity)
		fi_ver_in(&a, c->func_arity, c->nfunc, 1);
	fi_ver_in(&a, c->fp_site, c->nfp, sizeof(*c->fp_site));
	if (v.bad || a.bad || !fi_ver_policy(c, key, jit, lo, hi) ||
	    c->text_lo >= c->text_hi || !fi_ver_text_parts(c) || !fi_ver_alone(c) ||
	    !fi_ver_coarse(&a, c))
		return -EBADMSG;
	fi_rt_park("verify", NULL, 0);
	if (!fi_ver_ktraps(c))
		return -EBADMSG;
	/*
	 * The kernel's view: executable, never writable. Not asked of a
	 * kernel that cannot be (no /proc at all): docs/protection.md. A JIT
	 * region's text is its caller's arguments (checked above), which
	 * fineibt_jit_register has just asked the kernel about.
	 */
	if (jit)
		return 0;
	err = fi_rt_vma_text(c->text_lo, c->text_hi, true, NULL);
	return err == -EACCES ? -EBADMSG : 0;
}
