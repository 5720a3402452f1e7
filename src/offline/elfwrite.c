/* SPDX-License-Identifier: MIT */
/*
 * Writing a statically patched ELF file: the (rewritten) file buffer as it
 * is, followed by a tail that adds one non-ALLOC section, .fineibt:
 *
 *   [ original bytes, patched in place ][pad][.fineibt record]
 *   [ new .shstrtab = old names + ".fineibt" ][pad][ new section headers ]
 *
 * The ELF header's e_shoff and e_shnum are updated; e_shstrndx keeps its
 * index, whose header now points at the new string table. The old string
 * table and header table stay behind as unreferenced bytes: nothing that
 * is loaded moves, so every address, segment and offset the program uses
 * is unchanged, and a byte diff against the input shows only the patched
 * sites, the two header fields, the module index (if fineibt-cc linked
 * one: it gets a copy of the record, see fi_index_patched) and the tail.
 *
 * The output is written to a temporary file in the destination directory,
 * fsync'd and renamed over the destination, so a reader never sees a
 * partial file and a failure leaves nothing behind.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgindex.h"
#include "index.h"
#include "noteenc.h"
#include "patch.h"
#include "elfwrite.h"

#define FI_ALIGN8(x)	(((x) + 7) & ~(size_t)7)

struct fi_tail {
	Elf64_Ehdr ehdr;	/* the updated header */
	uint8_t *buf;		/* everything after the original bytes */
	size_t len;
};

static int fi_werr(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* The header and section table are sane enough to add a section to. */
static int fi_check_layout(const struct fi_image *im, const Elf64_Ehdr *eh,
			   char *err, size_t errlen)
{
	const unsigned char *id = eh->e_ident;
	const Elf64_Shdr *sh;
	uint64_t end;

	if (im->file_size < sizeof(*eh) || memcmp(id, ELFMAG, SELFMAG))
		return fi_werr(err, errlen, -EINVAL, "not an ELF file");
	if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB)
		return fi_werr(err, errlen, -EINVAL, "not a 64-bit little-endian ELF file");
	if (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX)
		return fi_werr(err, errlen, -ENOTSUP,
			       "no section header table, or extended section numbering "
			       "(e_shnum 0 / SHN_XINDEX): cannot add the .fineibt section");
	if (eh->e_shnum >= SHN_LORESERVE - 1)
		return fi_werr(err, errlen, -ENOTSUP,
			       "too many sections to add .fineibt without extended numbering");
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return fi_werr(err, errlen, -EINVAL, "unexpected e_shentsize %u",
			       eh->e_shentsize);
	end = eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	if (eh->e_shoff % 8 || eh->e_shoff > im->file_size ||
	    end > im->file_size || end < eh->e_shoff)
		return fi_werr(err, errlen, -EINVAL, "section header table past end of file");
	if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
		return fi_werr(err, errlen, -EINVAL, "bad section name table index");
	sh = (const Elf64_Shdr *)(im->file + eh->e_shoff) + eh->e_shstrndx;
	if (sh->sh_type != SHT_STRTAB || sh->sh_offset > im->file_size ||
	    sh->sh_size > im->file_size - sh->sh_offset)
		return fi_werr(err, errlen, -EINVAL, "bad section name table");
	return 0;
}

/* Is there already a section called @name? */
static bool fi_has_section(const uint8_t *file, const Elf64_Ehdr *eh,
			   const char *name)
{
	const Elf64_Shdr *shdrs = (const Elf64_Shdr *)(file + eh->e_shoff);
	const Elf64_Shdr *str = &shdrs[eh->e_shstrndx];
	const char *names = (const char *)file + str->sh_offset;
	size_t len = strlen(name);

	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		uint32_t off = shdrs[i].sh_name;

		if (off < str->sh_size && str->sh_size - off > len &&
		    !memcmp(names + off, name, len + 1))
			return true;
	}
	return false;
}

/* The record of the .fineibt section, as the tail and the index hold it. */
static struct fi_note fi_out_note(const struct fi_patch_opts *o)
{
	return (struct fi_note){ .present = true, .cfg = o->cfg,
				 .key = o->key, .bhi_args = o->bhi_args };
}

/*
 * The runtime takes a file fineibt-cc linked by its module index, from
 * memory, and would never see the .fineibt section added here: the index
 * gets a copy of the record (src/elf/index.h, FI_INDEX_PATCHED), or, when
 * it cannot hold one, is marked not filled so that the runtime reads this
 * file.
 */
static int fi_index_patched(uint8_t *file, size_t size, const Elf64_Ehdr *eh,
			    const struct fi_patch_opts *o,
			    const struct fi_patch_stats *st)
{
	struct fi_note n = fi_out_note(o);
	uint8_t rec[FI_NOTE_SIZE];
	ssize_t rlen = fi_note_encode(&n, st, rec, sizeof(rec));
	const Elf64_Shdr *shdrs = (const Elf64_Shdr *)(file + eh->e_shoff);
	const Elf64_Shdr *str = &shdrs[eh->e_shstrndx];
	const char *names = (const char *)file + str->sh_offset;
	size_t len = strlen(FI_INDEX_SECTION);

	if (rlen < 0)
		return (int)rlen;
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = &shdrs[i];

		if (sh->sh_type != SHT_NOTE || sh->sh_name >= str->sh_size ||
		    str->sh_size - sh->sh_name <= len ||
		    memcmp(names + sh->sh_name, FI_INDEX_SECTION, len + 1) ||
		    sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
			continue;
		fi_index_set_record(file + sh->sh_offset, sh->sh_size, rec,
				    (size_t)rlen);
	}
	return 0;
}

/* Lay out the tail and the updated header (see the top of the file). */
static int fi_build_tail(const struct fi_image *im, const struct fi_patch_opts *o,
			 const struct fi_patch_stats *st, struct fi_tail *t)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->file;
	const Elf64_Shdr *old = (const Elf64_Shdr *)(im->file + eh->e_shoff);
	const Elf64_Shdr *ostr = &old[eh->e_shstrndx];
	struct fi_note n = fi_out_note(o);
	const size_t base = FI_ALIGN8(im->file_size);
	size_t note_at, str_at, str_len, name_at, sh_at, nsh = eh->e_shnum;
	Elf64_Shdr *sh;
	ssize_t nlen;

	note_at = base;
	str_at = note_at + FI_NOTE_SIZE;
	name_at = ostr->sh_size;
	if (name_at && im->file[ostr->sh_offset + name_at - 1] != '\0')
		name_at++;	/* keep the last old name terminated */
	str_len = name_at + sizeof(FI_NOTE_SECTION);
	sh_at = FI_ALIGN8(str_at + str_len);
	t->len = sh_at + (nsh + 1) * sizeof(Elf64_Shdr) - im->file_size;
	t->buf = calloc(1, t->len);
	if (!t->buf)
		return -ENOMEM;

	/* t->buf[0] is file offset im->file_size */
	nlen = fi_note_encode(&n, st, t->buf + note_at - im->file_size, FI_NOTE_SIZE);
	if (nlen < 0)
		return (int)nlen;
	memcpy(t->buf + str_at - im->file_size, im->file + ostr->sh_offset,
	       ostr->sh_size);
	memcpy(t->buf + str_at - im->file_size + name_at, FI_NOTE_SECTION,
	       sizeof(FI_NOTE_SECTION));

	/* built aside: the tail buffer need not be aligned like the file */
	sh = calloc(nsh + 1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	memcpy(sh, old, nsh * sizeof(Elf64_Shdr));
	sh[eh->e_shstrndx].sh_offset = str_at;
	sh[eh->e_shstrndx].sh_size = str_len;
	sh[nsh] = (Elf64_Shdr){
		.sh_name = (Elf64_Word)name_at,
		.sh_type = SHT_PROGBITS,
		.sh_offset = note_at,
		.sh_size = FI_NOTE_SIZE,
		.sh_addralign = 8,
	};
	memcpy(t->buf + sh_at - im->file_size, sh, (nsh + 1) * sizeof(*sh));
	free(sh);

	t->ehdr = *eh;
	t->ehdr.e_shoff = sh_at;
	t->ehdr.e_shnum = (Elf64_Half)(nsh + 1);
	return 0;
}

static int fi_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fi_write_fd(int fd, const struct fi_image *im, const struct fi_tail *t,
		       unsigned int mode)
{
	int err;

	err = fi_write_all(fd, &t->ehdr, sizeof(t->ehdr));
	if (!err)
		err = fi_write_all(fd, im->file + sizeof(t->ehdr),
				   im->file_size - sizeof(t->ehdr));
	if (!err)
		err = fi_write_all(fd, t->buf, t->len);
	if (!err && fchmod(fd, mode & 07777))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	return err;
}

/* "DIR/.BASE.XXXXXX" next to @out, so that rename() stays in one fs. */
static int fi_tmp_name(const char *out, char *tmp, size_t len)
{
	const char *slash = strrchr(out, '/');
	int dlen = slash ? (int)(slash - out + 1) : 0;
	int n;

	n = snprintf(tmp, len, "%.*s.%s.XXXXXX", dlen, out, slash ? slash + 1 : out);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Make the rename durable too; a failure here loses nothing. */
static void fi_sync_dir(const char *out)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(out, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out) ? (int)(slash - out) : 1, out);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int fi_image_write_file(struct fi_image *im, const struct fi_patch_opts *o,
			const struct fi_patch_stats *st,
			const char *out, unsigned int mode,
			char *err, size_t errlen)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->file;
	struct fi_tail t = { .buf = NULL };
	char tmp[PATH_MAX];
	int fd, ret;

	if (!im->file)
		return fi_werr(err, errlen, -EINVAL, "no file buffer to write");
	ret = fi_check_layout(im, eh, err, errlen);
	if (ret)
		return ret;
	if (fi_has_section(im->file, eh, FI_NOTE_SECTION))
		return fi_werr(err, errlen, -EALREADY, "already has a %s section",
			       FI_NOTE_SECTION);
	ret = fi_index_patched(im->file, im->file_size, eh, o, st);
	if (!ret)
		ret = fi_build_tail(im, o, st, &t);
	if (ret) {
		free(t.buf);
		return fi_werr(err, errlen, ret, "cannot build the %s section: %s",
			       FI_NOTE_SECTION, strerror(-ret));
	}
	if (fi_tmp_name(out, tmp, sizeof(tmp))) {
		free(t.buf);
		return fi_werr(err, errlen, -ENAMETOOLONG, "output path too long");
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		free(t.buf);
		return fi_werr(err, errlen, ret, "cannot create a temporary file next to %s: %s",
			       out, strerror(-ret));
	}
	ret = fi_write_fd(fd, im, &t, mode);
	free(t.buf);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, out))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return fi_werr(err, errlen, ret, "cannot write %s: %s", out,
			       strerror(-ret));
	}
	fi_sync_dir(out);
	return 0;
}
