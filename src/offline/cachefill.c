// SPDX-License-Identifier: MIT
/*
 * The cache service's entries (docs/protection.md, "The shared text
 * cache"). An entry is a copy of a module's whole file whose executable
 * segment holds the text the runtime would write into that module in one
 * configuration with one key. A whole copy, not the text alone: a process
 * maps it over the module's text at the segment's own file offset, and
 * tools that name a mapping's file (perf, /proc/PID/maps) then find the
 * same ELF headers, symbols and build-id there.
 *
 * The text must be what a process writes when it rewrites the module
 * itself (a miss does just that, with the same key): so the module is
 * read the runtime's way. Its segments are placed in an anonymous
 * mapping of this process at their link-time offsets, as the dynamic
 * loader maps them (the executable's at its link-time address), without
 * relocating anything (the runtime reads modules not relocated yet too:
 * docs/index.md "Not relocated yet"); then the module index is read from
 * there (fi_image_from_index), the sites discovered and the passes run
 * (fi_patch_image) with the runtime's options, on that memory.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachefill.h"
#include "coarse.h"
#include "image.h"
#include "imgindex.h"
#include "patch.h"
#include "rtlive.h"
#include "runtime.h"

#define FI_PAGE		4096ULL

static int fi_cf_fail(char *err, size_t errlen, int ret, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return ret;
}

/* The whole file, read once; its fstat before the read in @st. */
static int fi_cf_read(int fd, struct stat *st, uint8_t **buf, char *err,
		      size_t errlen)
{
	struct stat after;
	size_t got = 0;

	if (fstat(fd, st))
		return fi_cf_fail(err, errlen, -errno, "cannot fstat");
	if (!S_ISREG(st->st_mode) || st->st_size < (off_t)sizeof(Elf64_Ehdr))
		return fi_cf_fail(err, errlen, -ENOEXEC, "not an ELF file");
	*buf = malloc((size_t)st->st_size);
	if (!*buf)
		return fi_cf_fail(err, errlen, -ENOMEM, "out of memory");
	while (got < (size_t)st->st_size) {
		ssize_t n = pread(fd, *buf + got, (size_t)st->st_size - got,
				  (off_t)got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	/* Written to meanwhile: its identity is not the one read. */
	if (got != (size_t)st->st_size || fstat(fd, &after) ||
	    after.st_size != st->st_size ||
	    after.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != st->st_mtim.tv_nsec ||
	    after.st_ctim.tv_sec != st->st_ctim.tv_sec ||
	    after.st_ctim.tv_nsec != st->st_ctim.tv_nsec) {
		free(*buf);
		*buf = NULL;
		return fi_cf_fail(err, errlen, -EAGAIN,
				  "the file changed while it was read");
	}
	return 0;
}

/* The program headers of the file @buf (@size), checked, or NULL. */
static const Elf64_Phdr *fi_cf_phdrs(const uint8_t *buf, size_t size,
				     uint16_t *type, size_t *phnum)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64 ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum ||
	    eh->e_phoff > size ||
	    (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum ||
	    (eh->e_phoff & 7))
		return NULL;
	*type = eh->e_type;
	*phnum = eh->e_phnum;
	return (const Elf64_Phdr *)(buf + eh->e_phoff);
}

/* The identity the runtime computes from the loaded module (rtcache.c). */
static int fi_cf_ident(const uint8_t *buf, size_t size, const Elf64_Phdr *ph,
		       size_t phnum, const struct stat *st,
		       struct fi_cache_ident *id, char *err, size_t errlen)
{
	const Elf64_Phdr *t = NULL;
	bool bid = false;

	memset(id, 0, sizeof(*id));
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_offset > size || ph[i].p_filesz > size - ph[i].p_offset)
			return fi_cf_fail(err, errlen, -ENOEXEC,
					  "a segment lies past the end of the file");
		if (ph[i].p_type == PT_NOTE && !bid)
			bid = fi_cache_build_id(buf + ph[i].p_offset,
						ph[i].p_filesz, id);
		if (ph[i].p_type == PT_DYNAMIC) {
			const Elf64_Dyn *d = (const Elf64_Dyn *)(buf + ph[i].p_offset);

			for (size_t k = 0; k < ph[i].p_filesz / sizeof(*d) &&
			     d[k].d_tag != DT_NULL; k++) {
				if (d[k].d_tag == DT_TEXTREL ||
				    (d[k].d_tag == DT_FLAGS &&
				     (d[k].d_un.d_val & DF_TEXTREL)))
					return fi_cf_fail(err, errlen, -ENOEXEC,
							  "it has text relocations");
			}
		}
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (t)
			return fi_cf_fail(err, errlen, -ENOEXEC,
					  "more than one executable segment");
		t = &ph[i];
	}
	if (!t || !t->p_filesz || t->p_filesz != t->p_memsz ||
	    (t->p_vaddr & (FI_PAGE - 1)) != (t->p_offset & (FI_PAGE - 1)))
		return fi_cf_fail(err, errlen, -ENOEXEC, "no executable segment "
				  "whose size in the file is its size in memory");
	if (!bid)
		return fi_cf_fail(err, errlen, -ENOEXEC, "no build-id");
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_s = st->st_mtim.tv_sec;
	id->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	id->ctime_s = st->st_ctim.tv_sec;
	id->ctime_ns = (uint32_t)st->st_ctim.tv_nsec;
	id->text_vaddr = t->p_vaddr;
	id->text_off = t->p_offset;
	id->text_size = t->p_filesz;
	return 0;
}

/*
 * The file's loadable segments at their link-time offsets from a bias in
 * one anonymous read-write mapping (an ET_EXEC at its own addresses), as
 * the loader lays them out. *@bias; the mapping's extent in *@lo, *@len.
 */
static int fi_cf_load(const uint8_t *buf, const Elf64_Phdr *ph, size_t phnum,
		      uint16_t type, uint64_t *bias, uint64_t *lo,
		      uint64_t *len)
{
	uint64_t first = UINT64_MAX, end = 0;
	void *p;

	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		if (ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr ||
		    ph[i].p_filesz > ph[i].p_memsz)
			return -ENOEXEC;
		first = ph[i].p_vaddr < first ? ph[i].p_vaddr : first;
		if (ph[i].p_vaddr + ph[i].p_memsz > end)
			end = ph[i].p_vaddr + ph[i].p_memsz;
	}
	if (first >= end || end - first > (1ULL << 34))
		return -ENOEXEC;
	first &= ~(FI_PAGE - 1);
	*len = ((end + FI_PAGE - 1) & ~(FI_PAGE - 1)) - first;
	p = mmap(type == ET_EXEC ? (void *)(uintptr_t)first : NULL, *len,
		 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 (type == ET_EXEC ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (type == ET_EXEC && (uint64_t)(uintptr_t)p != first) {
		munmap(p, *len);
		return -EADDRINUSE;
	}
	*lo = (uint64_t)(uintptr_t)p;
	*bias = *lo - first;
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			memcpy((uint8_t *)(uintptr_t)(*bias + ph[i].p_vaddr),
			       buf + ph[i].p_offset, ph[i].p_filesz);
	}
	return 0;
}

/* Would the runtime take this image (start.c): kCFI, compiler form. */
static bool fi_cf_kcfi(const struct fi_image *im)
{
	if (!fi_image_is_kcfi_mode(im))
		return false;
	if (im->ncalls)
		return true;
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (im->funcs[i].form == FI_PRE_KCFI)
			return true;
	}
	return false;
}

/* Rewrite the loaded image as the runtime does (fi_rt_take). */
static int fi_cf_patch(struct fi_image *im, const struct fi_cache_conf *conf,
		       const struct fineibt_key *key, char *err, size_t errlen)
{
	struct fi_patch_opts o = {
		.cfg = conf->cfg, .dethunk = true, .quiet = true,
	};
	int ret;

	if (!fi_cf_kcfi(im))
		return fi_cf_fail(err, errlen, -ENOEXEC, "not a kCFI module in "
				  "compiler form");
	if (o.cfg.flags & FINEIBT_F_BHI)
		return fi_cf_fail(err, errlen, -EINVAL, "bhi: its stubs are "
				  "placed per process");
	o.coarse = fi_patch_coarse(im, &o.cfg);
	if (fi_patch_keeps(im, &o))
		return fi_cf_fail(err, errlen, -EINVAL, "nothing to rewrite in "
				  "this mode");
	if (o.cfg.flags & FINEIBT_F_RAND)
		o.key = *key;
	ret = fi_patch_image(im, &o, NULL);
	memset(&o, 0, sizeof(o));
	if (ret)
		return fi_cf_fail(err, errlen, ret, "the passes refused it");
	return 0;
}

/*
 * The site record of @im (struct fi_cache_rec) at @out + @at: its funcs and
 * calls as offsets from the executable segment @id->text_vaddr, and their
 * counts, as discovery found them before the passes ran.
 */
static int fi_cf_record(const struct fi_image *im,
			const struct fi_cache_ident *id, uint8_t **out,
			size_t have, size_t at, size_t *size)
{
	size_t len = fi_cache_rec_size((uint32_t)im->nfuncs, (uint32_t)im->ncalls);
	struct fi_cache_rec h;
	uint8_t *buf, *p;

	if (im->nfuncs > UINT32_MAX / 8 || im->ncalls > UINT32_MAX / 8)
		return -E2BIG;
	buf = realloc(*out, at + len);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	memset(buf + have, 0, at - have + len);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, FI_CACHE_REC_MAGIC, sizeof(h.magic));
	h.nfuncs = (uint32_t)im->nfuncs;
	h.ncalls = (uint32_t)im->ncalls;
	h.nslots = (uint32_t)im->nslots;
	for (int a = 0; a <= FI_MAX_ARITY && a < 8; a++)
		h.arity_hist[a] = (uint32_t)im->arity_hist[a];
	h.base = id->text_vaddr;
	p = buf + at;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (size_t i = 0; i < im->nfuncs; i++, p += 4) {
		uint64_t off = im->funcs[i].addr - id->text_vaddr;

		if (off >= id->text_size)
			return -ERANGE;
		memcpy(p, &(uint32_t){ (uint32_t)off }, 4);
	}
	for (size_t i = 0; i < im->nfuncs; i++)
		*p++ = (uint8_t)im->funcs[i].arity;
	p += ((im->nfuncs + 3) & ~(size_t)3) - im->nfuncs;
	for (size_t i = 0; i < im->ncalls; i++, p += 4) {
		uint64_t off = im->calls[i].addr - id->text_vaddr;

		if (off >= id->text_size)
			return -ERANGE;
		memcpy(p, &(uint32_t){ (uint32_t)off }, 4);
	}
	*size = at + len;
	return 0;
}

/*
 * The registered arrays of the rewritten @im (loaded at @bias, rewritten
 * in @conf), laid out by the runtime's arena layout, appended to the entry
 * at *@size rounded up to a page, and named in the record's header at
 * @at: what a process registering the module after its own rewrite
 * would hold (rtarena.c), which a process mapping the entry maps instead.
 */
static int fi_cf_regs(const struct fi_image *im, const struct fi_cache_conf *conf,
		      uint64_t bias, uint8_t **out, size_t at, size_t *size)
{
	struct fi_module m, c;
	struct fi_cache_regs h;
	size_t start = (*size + FI_PAGE - 1) & ~(FI_PAGE - 1), len, off;
	struct fi_cache_rec rec;
	uint8_t *buf;

	memset(&m, 0, sizeof(m));
	m.img = *im;
	m.cfg = conf->cfg;
	fi_live_text_range(im, &m.text_lo, &m.text_hi);
	len = fi_arena_lay_regs(&m, sizeof(h), NULL, 0, &c);
	if (!len || m.text_lo >= m.text_hi)
		return -E2BIG;
	buf = realloc(*out, start + len);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	memset(buf + *size, 0, start + len - *size);
	if (fi_arena_lay_regs(&m, sizeof(h), buf + start, len, &c) != len)
		return -EBADMSG;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, FI_CACHE_REGS_MAGIC, sizeof(h.magic));
	h.func_base = c.func_base;
	h.text_lo = m.text_lo - bias;
	h.text_hi = m.text_hi - bias;
	h.nfunc = (uint32_t)c.nfunc;
	h.nfp = (uint32_t)c.nfp;
	h.coarse_words = (uint32_t)fi_coarse_module_words(&m, im);
	h.mode = (uint32_t)conf->cfg.mode;
	/* The pointers laid out are offsets from the buffer (at 0). */
	h.func_off_at = (uint32_t)(uintptr_t)c.func_off;
	h.func_arity_at = (uint32_t)(uintptr_t)c.func_arity;
	h.fp_at = (uint32_t)(uintptr_t)c.fp_site;
	h.coarse_at = (uint32_t)(uintptr_t)c.coarse_bits;
	if (!h.coarse_at)
		h.coarse_words = 0;
	/* The rewritten text's fingerprint at the sample laid out (the
	 * image is the rewritten copy, at @bias): the one a process would
	 * read from the entry's text. */
	h.fp = fi_fp_hash(im, (const uint64_t *)(const void *)(buf + start + h.fp_at),
			  h.fp_at ? h.nfp : 0);
	memcpy(buf + start, &h, sizeof(h));
	memcpy(&rec, buf + at, sizeof(rec));
	off = start - at;
	rec.regs_off = off;
	rec.regs_len = len;
	memcpy(buf + at, &rec, sizeof(rec));
	*size = start + len;
	return 0;
}

int fi_cache_fill(int fd, const char *path, const struct fi_cache_conf *conf,
		  const struct fineibt_key *key, struct fi_cache_ident *id,
		  uint8_t **out, size_t *size, char *err, size_t errlen)
{
	const Elf64_Phdr *fph;
	Elf64_Phdr *ph = NULL;
	struct fi_image im;
	const uint32_t *desc;
	uint64_t bias = 0, lo = 0, len = 0;
	uint8_t *buf = NULL;
	struct stat st;
	uint16_t type;
	size_t phnum;
	int ret;

	*out = NULL;
	ret = fi_cf_read(fd, &st, &buf, err, errlen);
	if (ret)
		return ret;
	fph = fi_cf_phdrs(buf, (size_t)st.st_size, &type, &phnum);
	if (!fph) {
		ret = fi_cf_fail(err, errlen, -ENOEXEC, "not an x86-64 ELF "
				 "executable or shared object");
		goto out;
	}
	ret = fi_cf_ident(buf, (size_t)st.st_size, fph, phnum, &st, id, err,
			  errlen);
	if (ret)
		goto out;
	/* The loader's view: program headers of their own (the image keeps
	 * a pointer), segments at their offsets. */
	ph = malloc(phnum * sizeof(*ph));
	if (!ph) {
		ret = fi_cf_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(ph, fph, phnum * sizeof(*ph));
	ret = fi_cf_load(buf, ph, phnum, type, &bias, &lo, &len);
	if (ret) {
		fi_cf_fail(err, errlen, ret, "cannot lay the segments out");
		goto out;
	}
	desc = fi_index_find(ph, phnum, bias);
	if (!desc) {
		ret = fi_cf_fail(err, errlen, -ENOEXEC, "no module index (not "
				 "linked by fineibt-cc)");
		goto out;
	}
	ret = fi_image_from_index(&im, path, bias, ph, phnum, desc, err, errlen);
	if (ret)
		goto out;
	/* the copy, then at its size rounded to a page the site record */
	ret = fi_cf_record(&im, id, &buf, (size_t)st.st_size,
			   (size_t)((st.st_size + FI_PAGE - 1) & ~(FI_PAGE - 1)),
			   size);
	if (ret)
		fi_cf_fail(err, errlen, ret, "no site record");
	else
		ret = fi_cf_patch(&im, conf, key, err, errlen);
	if (!ret && (ret = fi_cf_regs(&im, conf, bias, &buf,
				      (size_t)((st.st_size + FI_PAGE - 1) &
					       ~(FI_PAGE - 1)), size)))
		fi_cf_fail(err, errlen, ret, "no registered arrays");
	fi_image_close(&im);
	if (ret)
		goto out;
	memcpy(buf + id->text_off,
	       (const uint8_t *)(uintptr_t)(bias + id->text_vaddr), id->text_size);
	*out = buf;
	buf = NULL;
out:
	if (len)
		munmap((void *)(uintptr_t)lo, len);
	free(ph);
	free(buf);
	return ret;
}

int fi_cache_write_entry(int dfd, const char *name, const uint8_t *buf,
			 size_t size)
{
	char proc[64];
	size_t done = 0;
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0444);
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t n = write(fd, buf + done, size - done);

		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		done += (size_t)n;
	}
	/* umask may have taken bits; root-owned (we are root) */
	if (fchmod(fd, 0444)) {
		ret = -errno;
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW))
		ret = -errno;
out:
	close(fd);
	return ret;
}
