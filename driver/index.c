// SPDX-License-Identifier: MIT
/*
 * After a link: fill in the module index (src/elf/index.h) of the output, so
 * that the runtime finds __patchable_function_entries and .kcfi_traps in
 * the loaded image without reading the file (docs/runtime.md, "The module
 * index"). Linkers define __start_/__stop_ symbols only for sections whose
 * name is a C identifier, which .kcfi_traps is not; the section table of
 * the output knows both ranges, so the driver copies them into the note.
 *
 * The note is written in place: the list of thunk calls (version 2), then
 * its first six words with one pwrite. Before the note, the relative
 * relocations of __patchable_function_entries leave the DT_RELR table
 * (driver/relr.c), and the flags say the entries are link-time values.
 * Before that write the output is a complete module whose index says
 * "not filled" (the runtime then reads the file, as it does for modules
 * built without fineibt-cc), so no reader ever sees a wrong index. The
 * ranges come from the section headers and names; the NO_TCALLS flag or
 * the list of thunk calls without a check (written before the flags) from
 * reading the output once as the runtime's discovery would (the link-time
 * cost of a per-process scan of the whole text, docs/index.md).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "image.h"
#include "index.h"

/* Section name tables larger than this are not ours to read. */
#define FI_IDX_MAX_SHSTR	(16u << 20)

struct fi_idx_out {
	int fd;
	uint64_t size;
	Elf64_Shdr *sh;
	size_t shnum;
	char *names;
	size_t names_size;
};

/* One section range for the index: found once, or not usable. */
struct fi_idx_range {
	uint64_t addr, size;
	unsigned int count;
};

static bool fi_idx_fits(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Header and section table; false: not an ELF module we index. */
static bool fi_idx_read_shdrs(struct fi_idx_out *o)
{
	Elf64_Ehdr eh;
	const Elf64_Shdr *ns;

	if (!fi_pread_full(o->fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum ||
	    !fi_idx_fits(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr),
			 o->size))
		return false;
	o->shnum = eh.e_shnum;
	o->sh = malloc(o->shnum * sizeof(*o->sh));
	if (!o->sh || !fi_pread_full(o->fd, o->sh, o->shnum * sizeof(*o->sh),
				    eh.e_shoff))
		return false;
	ns = &o->sh[eh.e_shstrndx];
	if (!ns->sh_size || ns->sh_size > FI_IDX_MAX_SHSTR ||
	    !fi_idx_fits(ns->sh_offset, ns->sh_size, o->size))
		return false;
	o->names_size = ns->sh_size;
	o->names = malloc(o->names_size + 1);
	if (!o->names || !fi_pread_full(o->fd, o->names, o->names_size,
				       ns->sh_offset))
		return false;
	o->names[o->names_size] = '\0';
	return true;
}

static bool fi_idx_named(const struct fi_idx_out *o, const Elf64_Shdr *s,
			 const char *name)
{
	return s->sh_name < o->names_size && !strcmp(o->names + s->sh_name, name);
}

/* The allocated PROGBITS section(s) called @name. */
static struct fi_idx_range fi_idx_find(const struct fi_idx_out *o,
				       const char *name)
{
	struct fi_idx_range r = { 0 };

	for (size_t i = 1; i < o->shnum; i++) {
		const Elf64_Shdr *s = &o->sh[i];

		if (s->sh_type != SHT_PROGBITS || !(s->sh_flags & SHF_ALLOC) ||
		    !fi_idx_named(o, s, name))
			continue;
		r.count++;
		r.addr = s->sh_addr;
		r.size = s->sh_size;
	}
	return r;
}

/* Self-relative offset of @r from the descriptor at @desc, or false. */
static bool fi_idx_put(uint32_t *w, const struct fi_idx_range *r,
		       uint64_t desc)
{
	int64_t off = (int64_t)(r->addr - desc);

	if (!r->count) {
		w[0] = w[1] = 0;
		return true;
	}
	if (r->count != 1 || off < INT32_MIN || off > INT32_MAX ||
	    r->size > UINT32_MAX)
		return false;
	w[0] = (uint32_t)(int32_t)off;
	w[1] = (uint32_t)r->size;
	return true;
}

/*
 * What the runtime's discovery will find of the thunk calls without a
 * check, run here on the linked file with the thunks the runtime will
 * know (the ones the index names, as src/elf/imgindex.c takes them). The
 * symbol table may lack them (a link with -s, local symbols discarded):
 * they are added from the index and the text scanned again; a symbol
 * naming another address for one of them is a doubt. The flags to add to
 * the index at link-time @desc: NO_TCALLS if there is none; TCALL_LIST
 * (version 2 notes, @v2) with the list in words 22-38 of @w if they fit
 * in it, increasing; nothing otherwise, and the runtime scans the text
 * (the link-time cost of a per-process scan, docs/index.md).
 */
static uint32_t fi_idx_tcalls(const char *path, uint32_t *w, uint64_t desc,
			      bool v2)
{
	struct fi_image im;
	bool ok = true, added = false;
	uint32_t flags = 0;

	if (fi_image_open(&im, path, NULL, 0))
		return 0;
	for (int r = 0; ok && r < 16; r++) {
		int32_t off = (int32_t)w[FI_INDEX_W_THUNKS + r];
		uint64_t a = desc + (uint64_t)(int64_t)off;

		if (!off || !fi_image_text(&im, a, 1) || im.thunks[r] == a)
			continue;
		if (im.thunks[r]) {
			ok = false;
			continue;
		}
		im.thunks[r] = a;
		added = true;
	}
	if (ok && added && fi_image_rescan_tcalls(&im))
		ok = false;
	if (ok && !im.ntcalls)
		flags = FI_INDEX_NO_TCALLS;
	else if (ok && v2 && im.ntcalls <= FI_INDEX_TCALLS_MAX)
		flags = FI_INDEX_TCALL_LIST;
	for (size_t i = 0; flags == FI_INDEX_TCALL_LIST && i < im.ntcalls; i++) {
		int64_t off = (int64_t)(im.tcalls[i].addr - desc);

		if (off < INT32_MIN || off > INT32_MAX ||
		    (i && im.tcalls[i].addr <= im.tcalls[i - 1].addr))
			flags = 0;
		w[FI_INDEX_W_TCALLS + i] = (uint32_t)(int32_t)off;
	}
	if (flags == FI_INDEX_TCALL_LIST)
		w[FI_INDEX_W_NTCALLS] = (uint32_t)im.ntcalls;
	fi_image_close(&im);
	return flags;
}

/* The list's words (22-38) of a version 2 note at @desc_at of @s. */
static bool fi_idx_write_list(const struct fi_idx_out *o, const Elf64_Shdr *s,
			      const uint32_t *w, uint64_t desc_at)
{
	const size_t len = (FI_INDEX_WORDS - FI_INDEX_W_NTCALLS) * 4;

	return pwrite(o->fd, w + FI_INDEX_W_NTCALLS, len,
		      (off_t)(s->sh_offset + desc_at + FI_INDEX_W_NTCALLS * 4)) ==
	       (ssize_t)len;
}

/*
 * The entries at link-time values (docs/index.md, "Entries at link-time
 * values"), once, for the first index that will say so: their relative
 * relocations leave DT_RELR (driver/relr.c) before the flag is written.
 * A module without an index keeps them (nothing would tell a reader).
 */
struct fi_idx_link {
	bool want, tried;
	uint32_t flag;		/* FI_INDEX_PFE_LINK once done */
	int err;		/* a write failed half way: the output is broken */
};

static int fi_idx_link(const struct fi_idx_out *o,
		       const struct fi_idx_range *pfe, struct fi_idx_link *lk)
{
	int ret;

	if (!lk->want || lk->tried || pfe->count != 1)
		return 0;
	lk->tried = true;
	ret = fi_relr_drop(o->fd, o->size, o->sh, o->shnum, pfe->addr,
			   pfe->size);
	if (ret < 0)
		lk->err = ret;
	else
		lk->flag = ret ? FI_INDEX_PFE_LINK : 0;
	return ret < 0;
}

/*
 * Fill every index note of section @s; -errno on a write error; 1 if the
 * relocations were left half rewritten (@lk->err).
 */
static int fi_idx_fill_section(const struct fi_idx_out *o, const Elf64_Shdr *s,
			       const struct fi_idx_range *pfe,
			       const struct fi_idx_range *traps,
			       const char *path, struct fi_idx_link *lk)
{
	uint64_t at = 0;

	while (at + 12 <= s->sh_size) {
		uint32_t hdr[3], w[FI_INDEX_WORDS];
		char name[FI_INDEX_NAMESZ];
		uint64_t name_at = at + 12, desc_at;

		if (!fi_pread_full(o->fd, hdr, sizeof(hdr), s->sh_offset + at))
			return -EIO;
		desc_at = name_at + (((uint64_t)hdr[0] + 3) & ~3ull);
		if (desc_at + hdr[1] > s->sh_size)
			return 0;	/* malformed: leave it alone */
		if (hdr[0] == FI_INDEX_NAMESZ &&
		    (hdr[1] == FI_INDEX_DESCSZ || hdr[1] == FI_INDEX_DESCSZ_1) &&
		    hdr[2] == FI_INDEX_TYPE &&
		    fi_pread_full(o->fd, name, sizeof(name),
				 s->sh_offset + name_at) &&
		    !memcmp(name, FI_INDEX_NAME, FI_INDEX_NAMESZ) &&
		    fi_pread_full(o->fd, w, hdr[1], s->sh_offset + desc_at) &&
		    w[FI_INDEX_W_VERSION] ==
		    (hdr[1] == FI_INDEX_DESCSZ ? FI_INDEX_VERSION :
						 FI_INDEX_VERSION_1)) {
			uint64_t desc = s->sh_addr + desc_at;
			bool v2 = hdr[1] == FI_INDEX_DESCSZ;

			memset(w + FI_INDEX_W_NTCALLS, 0,
			       (FI_INDEX_WORDS - FI_INDEX_W_NTCALLS) * 4);
			w[FI_INDEX_W_FLAGS] = 0;
			if (fi_idx_put(w + FI_INDEX_W_PFE, pfe, desc) &&
			    fi_idx_put(w + FI_INDEX_W_TRAPS, traps, desc))
				w[FI_INDEX_W_FLAGS] = FI_INDEX_FILLED;
			if (w[FI_INDEX_W_FLAGS]) {
				if (fi_idx_link(o, pfe, lk))
					return 1;
				w[FI_INDEX_W_FLAGS] |= lk->flag |
					fi_idx_tcalls(path, w, desc, v2);
			}
			/* The list first: the flags say whether to read it. */
			if (v2 && !fi_idx_write_list(o, s, w, desc_at))
				return -EIO;
			/* Words 0-5: the thunks are the linker's. */
			if (pwrite(o->fd, w, FI_INDEX_W_THUNKS * 4,
				   (off_t)(s->sh_offset + desc_at)) !=
			    FI_INDEX_W_THUNKS * 4)
				return -EIO;
		}
		at = desc_at + (((uint64_t)hdr[1] + 3) & ~3ull);
	}
	return 0;
}

int fi_index_fill(const char *path, bool relr)
{
	struct fi_idx_out o = { .fd = -1 };
	struct fi_idx_range pfe, traps;
	struct fi_idx_link lk = { .want = relr };
	struct stat st;
	int ret = 0;

	/*
	 * Written in place: a symbolic link is not the output (lld and GNU
	 * ld replace a link at the output's path with the file), but one
	 * put there since, which must not send the writes elsewhere.
	 */
	o.fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (o.fd < 0 || fstat(o.fd, &st) || !S_ISREG(st.st_mode))
		goto out;	/* not a file we produced (/dev/null, ...) */
	o.size = (uint64_t)st.st_size;
	if (!fi_idx_read_shdrs(&o))
		goto out;
	pfe = fi_idx_find(&o, "__patchable_function_entries");
	traps = fi_idx_find(&o, ".kcfi_traps");
	for (size_t i = 1; i < o.shnum && !ret; i++) {
		const Elf64_Shdr *s = &o.sh[i];

		if (s->sh_type == SHT_NOTE && (s->sh_flags & SHF_ALLOC) &&
		    fi_idx_named(&o, s, FI_INDEX_SECTION) &&
		    fi_idx_fits(s->sh_offset, s->sh_size, o.size))
			ret = fi_idx_fill_section(&o, s, &pfe, &traps, path,
						  &lk);
	}
	if (ret > 0) {
		fprintf(stderr, "fineibt-cc: error: %s: cannot rewrite its "
			"relocations (%s); output removed\n", path,
			strerror(-lk.err));
		close(o.fd);
		o.fd = -1;
		unlink(path);
	} else if (ret)
		fprintf(stderr, "fineibt-cc: warning: %s: cannot write the "
			"module index (%s); the runtime will read the file "
			"at start-up\n", path, strerror(-ret));
out:
	if (o.fd >= 0)
		close(o.fd);
	free(o.sh);
	free(o.names);
	return ret;
}
