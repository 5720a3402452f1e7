/* SPDX-License-Identifier: MIT */
/*
 * The source position of an address, from the DWARF line table
 * (.debug_line, versions 2 to 5), for the CFI failure report.
 *
 * It runs in the SIGILL handler, so it streams: each line-number program
 * is executed row by row and only the row covering the address is kept;
 * nothing is allocated and every read is bounds-checked against the
 * section, so a damaged table ends the search instead of the process.
 * The file name is resolved from the header of the unit that matched.
 * It reads the image's file buffer, or maps the module's file when the
 * runtime no longer keeps the buffer.
 * Compressed sections (SHF_COMPRESSED, -gz) and string forms that need
 * .debug_str_offsets (DW_FORM_strx*) are not read: -ENOENT / -EINVAL.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dwarf.h"
#include "rawsys.h"
#include "report.h"
#include "strbuf.h"
#include "symfile.h"

/* ------------------------------------------------------------ sections */

/* An ELF file's bytes. */
struct fi_dw_file {
	const uint8_t *file;
	size_t file_size;
};

/* The ELF section @name of @file (not compressed); empty if absent. */
bool fi_dw_section(const uint8_t *file, size_t size, const char *name,
		  struct fi_dw_sect *out)
{
	const Elf64_Ehdr *eh = (const void *)file;
	const Elf64_Shdr *sh, *str;
	size_t nlen = strlen(name) + 1;

	*out = (struct fi_dw_sect){ 0 };
	if (!file || size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(*sh) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(*sh) < eh->e_shnum ||
	    eh->e_shoff % 8 || eh->e_shstrndx >= eh->e_shnum)
		return false;
	sh = (const void *)(file + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	if (str->sh_offset > size || str->sh_size > size - str->sh_offset)
		return false;
	for (unsigned int i = 1; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= str->sh_size ||
		    str->sh_size - sh[i].sh_name < nlen ||
		    memcmp(file + str->sh_offset + sh[i].sh_name, name, nlen))
			continue;
		if (sh[i].sh_type == SHT_NOBITS ||
		    (sh[i].sh_flags & SHF_COMPRESSED) ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			return false;
		out->data = file + sh[i].sh_offset;
		out->size = sh[i].sh_size;
		return true;
	}
	return false;
}

/* ---------------------------------------------------------- the header */

struct fi_dw_unit {
	unsigned int version;
	bool dwarf64;
	uint8_t addr_size;
	uint8_t min_insn;
	bool default_stmt;
	int8_t line_base;
	uint8_t line_range;
	uint8_t opcode_base;
	const uint8_t *std_lens;	/* opcode_base - 1 entries */
	const uint8_t *tables;		/* directory/file tables (after std_lens) */
	const uint8_t *prog, *end;	/* the line-number program */
};

static bool fi_dw_unit(struct fi_dw *d, struct fi_dw_unit *u)
{
	uint64_t len = fi_dw_uint(d, 4), hlen;
	const uint8_t *after_hlen;
	struct fi_dw h;

	u->dwarf64 = len == 0xffffffffu;
	if (u->dwarf64)
		len = fi_dw_uint(d, 8);
	if (d->bad || len > (uint64_t)(d->end - d->p) || len < 2) {
		d->bad = true;		/* cannot find the next unit either */
		return false;
	}
	u->end = d->p + len;
	h = (struct fi_dw){ .p = d->p, .end = u->end };
	d->p = u->end;			/* the next unit */
	u->version = (unsigned int)fi_dw_uint(&h, 2);
	if (u->version < 2 || u->version > 5)
		return false;
	u->addr_size = 8;
	if (u->version >= 5) {
		u->addr_size = (uint8_t)fi_dw_uint(&h, 1);
		fi_dw_uint(&h, 1);	/* segment selector size */
	}
	hlen = fi_dw_uint(&h, u->dwarf64 ? 8 : 4);
	after_hlen = h.p;
	u->min_insn = (uint8_t)fi_dw_uint(&h, 1);
	if (u->version >= 4)
		fi_dw_uint(&h, 1);	/* max ops per insn: 1 on x86 */
	u->default_stmt = fi_dw_uint(&h, 1);
	u->line_base = (int8_t)fi_dw_uint(&h, 1);
	u->line_range = (uint8_t)fi_dw_uint(&h, 1);
	u->opcode_base = (uint8_t)fi_dw_uint(&h, 1);
	u->std_lens = h.p;
	fi_dw_skip(&h, u->opcode_base ? u->opcode_base - 1u : 0);
	u->tables = h.p;
	/* header_length must cover the fields just read: the tables lie
	 * between them and the program, never past its start. */
	if (h.bad || !u->line_range || !u->opcode_base ||
	    hlen > (uint64_t)(u->end - after_hlen) ||
	    hlen < (uint64_t)(u->tables - after_hlen) || u->addr_size > 8)
		return false;
	u->prog = after_hlen + hlen;
	return true;
}

/* ------------------------------------------------- v5 entry formats */

enum {
	FI_DW_LNCT_PATH = 1, FI_DW_LNCT_DIR = 2,
	FI_DW_FORM_data2 = 0x05, FI_DW_FORM_data4 = 0x06,
	FI_DW_FORM_data8 = 0x07, FI_DW_FORM_string = 0x08,
	FI_DW_FORM_block = 0x09, FI_DW_FORM_data1 = 0x0b,
	FI_DW_FORM_strp = 0x0e, FI_DW_FORM_udata = 0x0f,
	FI_DW_FORM_data16 = 0x1e, FI_DW_FORM_line_strp = 0x1f,
};

struct fi_dw_strs {
	struct fi_dw_sect str, line_str;
	bool have_str, have_line_str;
};

/* A string at offset @off of @s, or NULL. */
static const char *fi_dw_at(const struct fi_dw_sect *s, bool have, uint64_t off)
{
	if (!have || off >= s->size ||
	    !memchr(s->data + off, 0, s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

/*
 * Read one attribute of @form: a string (into *@s) or a number (into
 * *@num). Returns false for a form this reader does not know.
 */
static bool fi_dw_form(struct fi_dw *d, const struct fi_dw_unit *u,
		       const struct fi_dw_strs *ss, uint64_t form,
		       const char **s, uint64_t *num)
{
	size_t off = u->dwarf64 ? 8 : 4;

	switch (form) {
	case FI_DW_FORM_string:
		*s = fi_dw_str(d);
		return true;
	case FI_DW_FORM_line_strp:
		*s = fi_dw_at(&ss->line_str, ss->have_line_str, fi_dw_uint(d, off));
		return true;
	case FI_DW_FORM_strp:
		*s = fi_dw_at(&ss->str, ss->have_str, fi_dw_uint(d, off));
		return true;
	case FI_DW_FORM_udata:
		*num = fi_dw_uleb(d);
		return true;
	case FI_DW_FORM_data1:
		*num = fi_dw_uint(d, 1);
		return true;
	case FI_DW_FORM_data2:
		*num = fi_dw_uint(d, 2);
		return true;
	case FI_DW_FORM_data4:
		*num = fi_dw_uint(d, 4);
		return true;
	case FI_DW_FORM_data8:
		*num = fi_dw_uint(d, 8);
		return true;
	case FI_DW_FORM_data16:
		fi_dw_skip(d, 16);
		return true;
	case FI_DW_FORM_block:
		fi_dw_skip(d, fi_dw_uleb(d));
		return true;
	default:
		return false;
	}
}

/*
 * Entry @want of a v5 directory or file table at @d (which is left after
 * the table): its path and directory index.
 */
static bool fi_dw_v5_entry(struct fi_dw *d, const struct fi_dw_unit *u,
			   const struct fi_dw_strs *ss, uint64_t want,
			   const char **path, uint64_t *dir)
{
	uint64_t nfmt = fi_dw_uint(d, 1), fmt[2][16], count;

	if (nfmt > 16)
		return false;
	for (uint64_t i = 0; i < nfmt; i++) {
		fmt[0][i] = fi_dw_uleb(d);
		fmt[1][i] = fi_dw_uleb(d);
	}
	count = fi_dw_uleb(d);
	/* Entries without fields take no bytes: no bound on count then. */
	if (!nfmt)
		return false;
	for (uint64_t e = 0; e < count && !d->bad; e++) {
		for (uint64_t i = 0; i < nfmt; i++) {
			const char *s = NULL;
			uint64_t num = 0;

			if (!fi_dw_form(d, u, ss, fmt[1][i], &s, &num))
				return false;
			if (e != want)
				continue;
			if (fmt[0][i] == FI_DW_LNCT_PATH)
				*path = s;
			else if (fmt[0][i] == FI_DW_LNCT_DIR)
				*dir = num;
		}
	}
	return !d->bad && want < count;
}

/* The name of file @idx of unit @u, with its directory when relative. */
static void fi_dw_file_name(const struct fi_dw_unit *u,
			    const struct fi_dw_strs *ss, uint64_t idx,
			    char *out, size_t len)
{
	struct fi_dw d = { .p = u->tables, .end = u->prog };
	const char *name = NULL, *dir = NULL;
	uint64_t dir_idx = 0, n;
	struct fi_strbuf b;

	out[0] = '\0';
	if (u->version >= 5) {
		const uint8_t *dirs = d.p;
		uint64_t unused;

		/* Skip the directories to reach the files, then come back. */
		if (!fi_dw_v5_entry(&d, u, ss, ~0ULL, &name, &unused) && d.bad)
			return;
		if (!fi_dw_v5_entry(&d, u, ss, idx, &name, &dir_idx) || !name)
			return;
		d.p = dirs;
		d.bad = false;
		if (dir_idx && !fi_dw_v5_entry(&d, u, ss, dir_idx, &dir, &unused))
			dir = NULL;
	} else {
		/* include_directories, then file_names; both 1-based. */
		const char *s;

		while ((s = fi_dw_str(&d)) && *s)
			;
		for (n = 1; (s = fi_dw_str(&d)) && *s; n++) {
			uint64_t di = fi_dw_uleb(&d);

			fi_dw_uleb(&d);		/* mtime */
			fi_dw_uleb(&d);		/* length */
			if (n == idx) {
				name = s;
				dir_idx = di;
				break;
			}
		}
		if (!name || d.bad)
			return;
		d = (struct fi_dw){ .p = u->tables, .end = u->prog };
		for (n = 1; n <= dir_idx && (s = fi_dw_str(&d)) && *s; n++)
			dir = s;
		if (n <= dir_idx)
			dir = NULL;
	}
	/* dir 0 is the compilation directory: a relative name stands alone. */
	fi_strbuf_init(&b, out, len, 0);
	if (name[0] != '/' && dir && dir[0] && dir[0] != '/' && dir_idx) {
		/* A directory cut short still leaves room for its '/'. */
		fi_strbuf_init(&b, out, len - 1, 0);
		fi_strbuf_str(&b, dir);
		fi_strbuf_init(&b, out, len, b.len);
		fi_strbuf_char(&b, '/');
	}
	fi_strbuf_str(&b, name);
}

/* --------------------------------------------------------- the program */

struct fi_dw_row {
	uint64_t addr;
	uint64_t file;
	uint64_t line;
};

struct fi_dw_match {
	bool found;
	struct fi_dw_row row;
};

/*
 * Run the program of @u; a row R followed (in the same sequence) by a row
 * at a higher address covers [R.addr, next.addr).
 */
static void fi_dw_run(const struct fi_dw_unit *u, uint64_t want,
		      struct fi_dw_match *mt)
{
	struct fi_dw d = { .p = u->prog, .end = u->end };
	struct fi_dw_row r = { .file = 1, .line = 1 }, prev = { 0 };
	bool have_prev = false;

	while (d.p < d.end && !d.bad && !mt->found) {
		uint8_t op = (uint8_t)fi_dw_uint(&d, 1);
		bool emit = false, end_seq = false;

		if (op >= u->opcode_base) {
			uint8_t adj = op - u->opcode_base;

			r.addr += (uint64_t)(adj / u->line_range) * u->min_insn;
			r.line += (int64_t)u->line_base + adj % u->line_range;
			emit = true;
		} else if (op == 0) {
			uint64_t len = fi_dw_uleb(&d);
			const uint8_t *next;
			uint8_t sub;

			/* Checked before the pointer is formed (no overflow). */
			if (!len || len > (uint64_t)(d.end - d.p))
				return;
			next = d.p + len;
			sub = (uint8_t)fi_dw_uint(&d, 1);
			if (sub == 1)
				emit = end_seq = true;
			else if (sub == 2 && len - 1 <= 8)
				r.addr = fi_dw_uint(&d, (size_t)(len - 1));
			d.p = next;
		} else {
			switch (op) {
			case 1:		/* copy */
				emit = true;
				break;
			case 2:		/* advance_pc */
				r.addr += fi_dw_uleb(&d) * u->min_insn;
				break;
			case 3:		/* advance_line */
				r.line += (uint64_t)fi_dw_sleb(&d);
				break;
			case 4:		/* set_file */
				r.file = fi_dw_uleb(&d);
				break;
			case 8:		/* const_add_pc */
				r.addr += (uint64_t)((255 - u->opcode_base) /
						     u->line_range) * u->min_insn;
				break;
			case 9:		/* fixed_advance_pc */
				r.addr += fi_dw_uint(&d, 2);
				break;
			default:	/* operands as the header declares */
				for (unsigned int i = 0; i < u->std_lens[op - 1]; i++)
					fi_dw_uleb(&d);
				break;
			}
		}
		if (!emit)
			continue;
		if (have_prev && prev.addr <= want && want < r.addr) {
			mt->found = true;
			mt->row = prev;
			return;
		}
		prev = r;
		have_prev = !end_seq;
		if (end_seq)
			r = (struct fi_dw_row){ .file = 1, .line = 1 };
	}
}

static int fi_dw_lookup(const struct fi_dw_file *im, uint64_t addr,
			char *file, size_t flen, unsigned int *line)
{
	struct fi_dw_sect sec;
	struct fi_dw_strs ss = { 0 };
	struct fi_dw d;

	if (!fi_dw_section(im->file, im->file_size, ".debug_line", &sec))
		return -ENOENT;
	ss.have_str = fi_dw_section(im->file, im->file_size, ".debug_str", &ss.str);
	ss.have_line_str = fi_dw_section(im->file, im->file_size, ".debug_line_str", &ss.line_str);
	d = (struct fi_dw){ .p = sec.data, .end = sec.data + sec.size };
	while (d.p < d.end && !d.bad) {
		struct fi_dw_unit u;
		struct fi_dw_match mt = { 0 };

		if (!fi_dw_unit(&d, &u)) {
			if (d.bad || d.p >= d.end)
				return -EINVAL;
			continue;	/* a unit of a version we skip */
		}
		fi_dw_run(&u, addr, &mt);
		if (!mt.found)
			continue;
		fi_dw_file_name(&u, &ss, mt.row.file, file, flen);
		if (!file[0])
			return -EINVAL;
		*line = (unsigned int)mt.row.line;
		return 0;
	}
	return -ENOENT;
}

/*
 * The runtime may not keep a module's file in memory (the registered
 * copy drops the buffer): then map the file read-only for the lookup.
 * fi_raw_map_file and munmap are raw system calls (rawsys.h):
 * this runs in the SIGILL handler, where a program's interposer of them
 * must not run.
 */
int fi_dw_file_open(const struct fi_image *im, struct fi_dw_sect *bytes)
{
	size_t size = 0;
	void *map;

	if (im->file) {
		*bytes = (struct fi_dw_sect){ im->file, im->file_size };
		return 0;
	}
	if (!im->path)
		return -ENOENT;
	map = fi_raw_map_file(im->path, 1, &size);
	if (map == MAP_FAILED)
		return -ENOENT;
	/* A module read from memory: is this still its file? */
	if (!fi_symfile_same(im, map, size)) {
		fi_raw_munmap(map, size);
		return -ESTALE;
	}
	*bytes = (struct fi_dw_sect){ map, size };
	return 0;
}

void fi_dw_file_close(const struct fi_image *im, struct fi_dw_sect *bytes)
{
	if (!im->file && bytes->data)
		fi_raw_munmap((void *)bytes->data, bytes->size);
	*bytes = (struct fi_dw_sect){ 0 };
}

int fi_dwarf_line(const struct fi_image *im, uint64_t addr, char *file,
		  size_t flen, unsigned int *line)
{
	struct fi_dw_sect bytes;
	struct fi_dw_file f;
	int ret;

	if (!flen)
		return -EINVAL;
	file[0] = '\0';
	ret = fi_dw_file_open(im, &bytes);
	if (ret)
		return ret;
	f = (struct fi_dw_file){ .file = bytes.data, .file_size = bytes.size };
	ret = fi_dw_lookup(&f, addr, file, flen, line);
	fi_dw_file_close(im, &bytes);
	return ret;
}
