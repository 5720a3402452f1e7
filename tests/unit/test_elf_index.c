/* SPDX-License-Identifier: MIT */
/*
 * fi_image_from_index on a module the loader has not relocated yet
 * (docs/index.md "Not relocated yet"): programs built by fineibt-cc
 * (lld's RELA links, which leave the entries zero; --apply-dynamic-relocs;
 * DT_RELR; a shared object), laid out from their file in a scratch
 * mapping as the loader maps them, before any relocation: the sites found
 * are those of the file (fi_image_open). The same after the RELATIVE
 * relocations are applied by hand (then the section is read in place).
 * Loaded at a bias smaller than the text, where a value alone cannot
 * tell: RELA entries are still right (the relocation decides), RELR ones
 * either right or -EAGAIN (the file is read), never wrong.
 *
 * fi_image_from_record (a cache entry's site record): the preambles of
 * the index, the call sites checked but not kept unless there is no
 * preamble; a call site outside the text refuses the record. The
 * fingerprint's sample of a large module lies in a few runs of pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cacheid.h"
#include "check.h"
#include "elf_int.h"
#include "image.h"
#include "imgindex.h"
#include "index.h"
#include "runtime.h"

static char dir[512];

/* Address-taken functions, and over 64 KiB of text: a bias of 64 KiB is
 * smaller than the text. */
static const char src[] =
	"typedef int (*fn_t)(int);\n"
	"__attribute__((noinline)) int ix_a(int x) { return x + 1; }\n"
	"__attribute__((noinline)) int ix_b(int x) { return x * 3; }\n"
	"__attribute__((noinline)) static int ix_c(int x) { return x - 7; }\n"
	"fn_t volatile ix_tab[] = { ix_a, ix_b, ix_c };\n"
	"__asm__(\".text\\n.p2align 4\\nix_pad: .skip 98304, 0xcc\\n\");\n"
	"int ix_call(int i, int x) { return ix_tab[i](x); }\n"
	"#ifndef IX_LIB\n"
	"int main(int argc, char **argv) { (void)argv; return ix_call(argc % 3, 2) != 3; }\n"
	"#endif\n";

static bool same_funcs(const struct fi_image *a, const struct fi_image *b)
{
	if (a->nfuncs != b->nfuncs || a->ncalls != b->ncalls || !a->nfuncs)
		return false;
	for (size_t i = 0; i < a->nfuncs; i++) {
		if (a->funcs[i].addr != b->funcs[i].addr ||
		    a->funcs[i].form != b->funcs[i].form ||
		    a->funcs[i].hash != b->funcs[i].hash ||
		    a->funcs[i].arity != b->funcs[i].arity)
			return false;
	}
	for (size_t i = 0; i < a->ncalls; i++) {
		if (a->calls[i].addr != b->calls[i].addr)
			return false;
	}
	return true;
}

/* The file's segments at @want (0: anywhere) + their link-time address. */
static uint8_t *lay_out(const struct fi_image *ref, uintptr_t want, size_t *len)
{
	uint64_t end = 0;
	uint8_t *base;

	for (size_t i = 0; i < ref->nviews; i++)
		if (ref->elf->segs[i].vaddr + ref->elf->segs[i].memsz > end)
			end = ref->elf->segs[i].vaddr + ref->elf->segs[i].memsz;
	base = mmap((void *)want, end, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS | (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (base == MAP_FAILED || (want && (uintptr_t)base != want))
		return NULL;
	for (size_t i = 0; i < ref->nviews; i++)
		memcpy(base + ref->views[i].vaddr, ref->views[i].mem,
		       ref->views[i].size);
	*len = end;
	return base;
}

/* What the loader does to the places RELATIVE relocations write. */
static size_t relocate(const struct fi_image *ref, uint8_t *base)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const Elf64_Shdr *sh = (const void *)(ref->file + eh->e_shoff);
	size_t done = 0;

	for (size_t i = 1; i < eh->e_shnum; i++) {
		const Elf64_Rela *r = (const void *)(ref->file + sh[i].sh_offset);

		if (sh[i].sh_type != SHT_RELA || !(sh[i].sh_flags & SHF_ALLOC))
			continue;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*r); k++) {
			uint64_t v = (uint64_t)(uintptr_t)base + r[k].r_addend;

			if (ELF64_R_TYPE(r[k].r_info) != R_X86_64_RELATIVE)
				continue;
			memcpy(base + r[k].r_offset, &v, 8);
			done++;
		}
	}
	return done;
}

/* Read @base as the runtime does; 0, or the error. */
static int from_index(const struct fi_image *ref, const char *path,
		      uint8_t *base, struct fi_image *live)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff);
	const uint32_t *desc;
	char err[128];

	/* The program headers lie in the first segment, as loaded. */
	desc = fi_index_find(ph, eh->e_phnum, (uint64_t)(uintptr_t)base);
	if (!desc)
		return -ENOENT;
	return fi_image_from_index(live, path, (uint64_t)(uintptr_t)base, ph,
				   eh->e_phnum, desc, err, sizeof(err));
}

/*
 * Build @src (a file of dir) with fineibt-cc -O1 @flags into dir/@name
 * (@path) and open it as @ref; the checks are "elf_index_@tag_build" and
 * "..._open". Under SAN=1 the runtime fineibt-cc links in is built with
 * ASan: the program must be too (it is only read here, never run).
 */
static bool build_open(const char *tag, const char *name, const char *flags,
		       const char *src, char *path, size_t pathlen,
		       struct fi_image *ref)
{
	const char *san = getenv("FINEIBT_SAN");
	char cmd[1600], t[160];

	snprintf(path, pathlen, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "%s/fineibt-cc -O1 %s%s -x c %s/%s -o %s",
		 getenv("BUILD") ? getenv("BUILD") : "build",
		 san && *san ? "-fsanitize=address " : "", flags, dir, src, path);
	snprintf(t, sizeof(t), "elf_index_%s_build", tag);
	if (!CHECK(t, system(cmd) == 0))
		return false;
	snprintf(t, sizeof(t), "elf_index_%s_open", tag);
	return CHECK(t, fi_image_open(ref, path, cmd, sizeof(cmd)) == 0);
}

/* What the file's dynamic relocations do to __patchable_function_entries. */
struct pfe_relocs {
	uint64_t lo, hi;	/* the section, link-time */
	size_t relr_in, relr_out, rela_in, rela_out;
	bool relr_sized;	/* DT_RELRSZ is the SHT_RELR section's size */
};

static uint64_t dyn_val(const struct fi_image *ref, int64_t tag)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const Elf64_Phdr *ph = (const void *)(ref->file + eh->e_phoff);

	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Dyn *d = (const void *)(ref->file + ph[i].p_offset);

		for (size_t k = 0; ph[i].p_type == PT_DYNAMIC &&
		     d[k].d_tag != DT_NULL; k++)
			if (d[k].d_tag == tag)
				return d[k].d_un.d_val;
	}
	return 0;
}

/* Count the places the RELR table and RELA records name, in and out. */
static void pfe_relocs_of(const struct fi_image *ref, struct pfe_relocs *r)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const Elf64_Shdr *sh = (const void *)(ref->file + eh->e_shoff);
	const char *names = (const char *)ref->file + sh[eh->e_shstrndx].sh_offset;

	memset(r, 0, sizeof(*r));
	for (size_t i = 1; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, "__patchable_function_entries")) {
			r->lo = sh[i].sh_addr;
			r->hi = sh[i].sh_addr + sh[i].sh_size;
		}
	for (size_t i = 1; i < eh->e_shnum; i++) {
		const uint8_t *at = ref->file + sh[i].sh_offset;
		uint64_t next = 0;

		if (sh[i].sh_type == SHT_RELR) {
			r->relr_sized = dyn_val(ref, DT_RELRSZ) == sh[i].sh_size;
			for (size_t k = 0; k < sh[i].sh_size / 8; k++) {
				uint64_t w, a;

				memcpy(&w, at + k * 8, 8);
				for (unsigned int b = 0; b < 64; b++) {
					if (w & 1 ? b == 0 || !(w >> b & 1) : b)
						continue;
					a = w & 1 ? next + (b - 1) * 8ull : w;
					if (a >= r->lo && a < r->hi)
						r->relr_in++;
					else
						r->relr_out++;
				}
				next = w & 1 ? next + 63 * 8 : w + 8;
			}
		}
		if (sh[i].sh_type == SHT_RELA && (sh[i].sh_flags & SHF_ALLOC)) {
			for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Rela); k++) {
				Elf64_Rela e;

				memcpy(&e, at + k * sizeof(e), sizeof(e));
				if (ELF64_R_TYPE(e.r_info) != R_X86_64_RELATIVE &&
				    ELF64_R_TYPE(e.r_info) != R_X86_64_64)
					continue;
				if (e.r_offset >= r->lo && e.r_offset < r->hi)
					r->rela_in++;
				else
					r->rela_out++;
			}
		}
	}
}

/* The flags of the index of @ref laid out at @base. */
static uint32_t index_flags(const struct fi_image *ref, const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const uint32_t *d = fi_index_find((const void *)(base + eh->e_phoff),
					  eh->e_phnum, (uint64_t)(uintptr_t)base);

	return d ? d[FI_INDEX_W_FLAGS] : 0;
}

/*
 * @relr: fineibt-cc linked it with DT_RELR. Then no relocation writes an
 * entry (the driver took them out of the table, the other places are
 * still there) and the index says so: memory holds link-time entries,
 * read in place at any bias. Otherwise (RELA) they keep theirs and the
 * index says nothing.
 */
static void t_case(const char *name, const char *flags, bool relr)
{
	char path[700], tag[160];
	const char *san = getenv("FINEIBT_SAN");
	struct fi_image ref, live;
	struct pfe_relocs rl;
	uint8_t *base;
	size_t len;
	bool linked;
	int ret;

	if (!build_open(name, name, flags, "ix.c", path, sizeof(path), &ref))
		return;

	/* Mapped, not relocated: from the relocations / the places. */
	base = lay_out(&ref, 0, &len);
	linked = base && (index_flags(&ref, base) & FI_INDEX_PFE_LINK);
	pfe_relocs_of(&ref, &rl);
	snprintf(tag, sizeof(tag), "elf_index_%s_pfe_relocs", name);
	CHECK(tag, rl.lo < rl.hi && (relr ?
		   linked && !rl.relr_in && !rl.rela_in && rl.relr_out >= 3 &&
		   rl.relr_sized :
		   !linked && rl.rela_in >= 3 && !rl.relr_in));
	ret = base ? from_index(&ref, path, base, &live) : -ENOMEM;
	snprintf(tag, sizeof(tag), "elf_index_%s_unrelocated", name);
	if (CHECK(tag, ret == 0 && (linked ? live.elf->pfe != NULL &&
					    live.elf->pfe_linked :
					    live.elf->pfe == NULL) &&
		  same_funcs(&ref, &live)))
		fi_image_close(&live);
	/* Relocated (RELATIVE applied): in place, as at any start-up. */
	if (base && !relr) {
		const Elf64_Ehdr *eh = (const void *)ref.file;
		uint32_t *d;

		snprintf(tag, sizeof(tag), "elf_index_%s_relocated", name);
		ret = relocate(&ref, base) ? from_index(&ref, path, base, &live) :
					     -EINVAL;
		if (CHECK(tag, ret == 0 && live.elf->pfe != NULL &&
			  same_funcs(&ref, &live)))
			fi_image_close(&live);
		/*
		 * A forged FI_INDEX_PFE_LINK over relocated entries (a crafted
		 * module): never taken as link-time values; to the file
		 * (-EAGAIN) or the same functions.
		 */
		snprintf(tag, sizeof(tag), "elf_index_%s_forged_link", name);
		d = (uint32_t *)(uintptr_t)fi_index_find(
			(const void *)(base + eh->e_phoff), eh->e_phnum,
			(uint64_t)(uintptr_t)base);
		if (d)
			d[FI_INDEX_W_FLAGS] |= FI_INDEX_PFE_LINK;
		ret = d ? from_index(&ref, path, base, &live) : -ENOENT;
		if (CHECK(tag, ret == -EAGAIN ||
			  (ret == 0 && same_funcs(&ref, &live))) && ret == 0)
			fi_image_close(&live);
	}
	if (base)
		munmap(base, len);

	/* A bias of 64 KiB, below the text's span. */
	base = lay_out(&ref, 0x10000, &len);
	snprintf(tag, sizeof(tag), "elf_index_%s_low_map", name);
	if (!CHECK(tag, base != NULL)) {
		fi_image_close(&ref);
		return;
	}
	ret = from_index(&ref, path, base, &live);
	snprintf(tag, sizeof(tag), "elf_index_%s_low_unrelocated", name);
	/*
	 * An ASan program (SAN=1) leaves places memory cannot tell at such
	 * a bias: -EAGAIN sends the runtime to the file, as with RELR.
	 */
	if (CHECK(tag, !linked && (relr || (san && *san)) ?
		       ret == -EAGAIN || (ret == 0 && same_funcs(&ref, &live)) :
		       ret == 0 && same_funcs(&ref, &live)) && ret == 0)
		fi_image_close(&live);
	if (!relr) {
		snprintf(tag, sizeof(tag), "elf_index_%s_low_relocated", name);
		relocate(&ref, base);
		ret = from_index(&ref, path, base, &live);
		if (CHECK(tag, ret == 0 && same_funcs(&ref, &live)))
			fi_image_close(&live);
	}
	munmap(base, len);
	fi_image_close(&ref);
}

/* Two calls through the thunk without a check, for the index's list. */
static const char tsrc[] =
	"typedef int (*fn_t)(int);\n"
	"static int tw(int x) { return 2 * x; }\n"
	"fn_t volatile th = tw;\n"
	"__attribute__((no_sanitize(\"kcfi\"), noinline)) int tu0(int x) { return th(x) + 1; }\n"
	"__attribute__((no_sanitize(\"kcfi\"), noinline)) int tu1(int x) { return th(x) + 2; }\n"
	"int main(void) { return th(1) + tu0(1) + tu1(1) != 9; }\n";

static bool same_tcalls(const struct fi_image *a, const struct fi_image *b)
{
	if (a->ntcalls != b->ntcalls)
		return false;
	for (size_t i = 0; i < a->ntcalls; i++) {
		if (a->tcalls[i].addr != b->tcalls[i].addr ||
		    a->tcalls[i].thunk != b->tcalls[i].thunk ||
		    a->tcalls[i].jmp != b->tcalls[i].jmp)
			return false;
	}
	return true;
}

/*
 * Read @base (a copy of @ref's module, writable) after @edit changed its
 * index descriptor @d; the thunk calls found, and whether the list was
 * taken (1), refused (0) or absent (-1). -2 if the module did not read.
 */
static int tcalls_after(const struct fi_image *ref, const char *path,
			uint8_t *base, uint32_t *d, uint32_t word, uint32_t val,
			struct fi_image *live)
{
	uint32_t old = d[word];
	int ret;

	d[word] = val;
	ret = from_index(ref, path, base, live);
	d[word] = old;
	if (ret)
		return -2;
	if (!live->elf->has_tcall_list)
		return -1;
	return !fi_image_tcall_list_bad(live);
}

static void t_tcalls(void)
{
	char path[700];
	const Elf64_Ehdr *eh;
	struct fi_image ref, live;
	uint8_t *base;
	uint32_t *d, list0;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ixt.c", dir);
	f = fopen(path, "w");
	if (!CHECK("elf_index_tcalls_src", f && fputs(tsrc, f) >= 0 && !fclose(f)))
		return;
	if (!build_open("tcalls", "ixt", "-Wl,-z,nopack-relative-relocs", "ixt.c",
			path, sizeof(path), &ref))
		return;
	CHECK("elf_index_tcalls_scan_finds_two", ref.ntcalls == 2);
	base = lay_out(&ref, 0, &len);
	if (!CHECK("elf_index_tcalls_map", base && relocate(&ref, base))) {
		fi_image_close(&ref);
		return;
	}
	eh = (const void *)ref.file;
	d = (uint32_t *)fi_index_find((const void *)(base + eh->e_phoff),
				      eh->e_phnum, (uint64_t)(uintptr_t)base);
	if (!CHECK("elf_index_tcalls_v2", d && d[FI_INDEX_W_VERSION] == 2 &&
		   (d[FI_INDEX_W_FLAGS] & FI_INDEX_TCALL_LIST) &&
		   d[FI_INDEX_W_NTCALLS] == 2))
		goto out;
	/* The driver's list, taken: the same calls as the file's scan. */
	CHECK("elf_index_tcalls_list_taken",
	      tcalls_after(&ref, path, base, d, 0, d[0], &live) == 1 &&
	      same_tcalls(&ref, &live) && (fi_image_close(&live), true));
	/* An empty list is followed: nothing scanned, nothing found. */
	CHECK("elf_index_tcalls_empty_followed",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_NTCALLS, 0, &live) == 1 &&
	      live.ntcalls == 0 && (fi_image_close(&live), true));
	/* Bad entries: refused, and the text scanned (the file's calls). */
	list0 = d[FI_INDEX_W_TCALLS];
	CHECK("elf_index_tcalls_bad_entry_scans",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_TCALLS, list0 + 1,
			   &live) == 0 && same_tcalls(&ref, &live) &&
	      (fi_image_close(&live), true));
	CHECK("elf_index_tcalls_outside_text_scans",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_TCALLS, 0, &live) == 0 &&
	      same_tcalls(&ref, &live) && (fi_image_close(&live), true));
	CHECK("elf_index_tcalls_unordered_scans",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_TCALLS,
			   d[FI_INDEX_W_TCALLS + 1], &live) == 0 &&
	      same_tcalls(&ref, &live) && (fi_image_close(&live), true));
	CHECK("elf_index_tcalls_over_capacity_scans",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_NTCALLS,
			   FI_INDEX_TCALLS_MAX + 1, &live) == 0 &&
	      same_tcalls(&ref, &live) && (fi_image_close(&live), true));
	/* Without the flag the words are not read: the text scanned. */
	CHECK("elf_index_tcalls_no_flag_scans",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_FLAGS,
			   FI_INDEX_FILLED, &live) == -1 &&
	      same_tcalls(&ref, &live) && (fi_image_close(&live), true));
	/* A version 1 note: 22 words, then a padding note; read, scanned. */
	d[-4] = FI_INDEX_DESCSZ_1;
	d[FI_INDEX_W_VERSION] = FI_INDEX_VERSION_1;
	d[FI_INDEX_W_NTCALLS] = 0;
	d[FI_INDEX_W_NTCALLS + 1] = (FI_INDEX_WORDS - FI_INDEX_WORDS_1 - 3) * 4;
	d[FI_INDEX_W_NTCALLS + 2] = 0;
	CHECK("elf_index_tcalls_v1_read",
	      tcalls_after(&ref, path, base, d, 0, d[0], &live) == -1 &&
	      same_tcalls(&ref, &live) && live.nfuncs == ref.nfuncs &&
	      (fi_image_close(&live), true));
	CHECK("elf_index_tcalls_v1_no_tcalls",
	      tcalls_after(&ref, path, base, d, FI_INDEX_W_FLAGS,
			   d[FI_INDEX_W_FLAGS] | FI_INDEX_NO_TCALLS, &live) == -1 &&
	      live.ntcalls == 0 && (fi_image_close(&live), true));
	/* A size that is not its version's: no index. */
	d[FI_INDEX_W_VERSION] = FI_INDEX_VERSION;
	CHECK("elf_index_tcalls_size_version_mismatch",
	      !fi_index_find((const void *)(base + eh->e_phoff), eh->e_phnum,
			     (uint64_t)(uintptr_t)base));
out:
	munmap(base, len);
	fi_image_close(&ref);
}

/* A cache entry's record of @ref's sites, as the service writes it. */
static uint8_t *record_of(const struct fi_image *ref, uint64_t base_va,
			  size_t nfuncs, size_t ncalls, size_t *len)
{
	struct fi_cache_rec h;
	uint8_t *rec, *p;

	*len = fi_cache_rec_size((uint32_t)nfuncs, (uint32_t)ncalls);
	rec = calloc(1, *len);
	if (!rec)
		return NULL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, FI_CACHE_REC_MAGIC, sizeof(h.magic));
	h.nfuncs = (uint32_t)nfuncs;
	h.ncalls = (uint32_t)ncalls;
	h.base = base_va;
	memcpy(rec, &h, sizeof(h));
	p = rec + sizeof(h);
	for (size_t i = 0; i < nfuncs; i++, p += 4)
		memcpy(p, &(uint32_t){ (uint32_t)(ref->funcs[i].addr - base_va) }, 4);
	for (size_t i = 0; i < nfuncs; i++)
		*p++ = (uint8_t)ref->funcs[i].arity;
	p += ((nfuncs + 3) & ~(size_t)3) - nfuncs;
	for (size_t i = 0; i < ncalls; i++, p += 4)
		memcpy(p, &(uint32_t){ (uint32_t)(ref->calls[i].addr - base_va) }, 4);
	return rec;
}

static int from_record(const struct fi_image *ref, const char *path,
		       uint8_t *base, const uint8_t *rec, size_t len,
		       struct fi_image *live)
{
	const Elf64_Ehdr *eh = (const void *)ref->file;
	const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff);
	const uint32_t *desc = fi_index_find(ph, eh->e_phnum,
					     (uint64_t)(uintptr_t)base);
	char err[128];

	if (!desc)
		return -ENOENT;
	return fi_image_from_record(live, path, (uint64_t)(uintptr_t)base, ph,
				    eh->e_phnum, desc, rec, len, err,
				    sizeof(err));
}

/* Is @rec refused once its last call site lies past the text? */
static bool last_call_far(const struct fi_image *ref, const char *path,
			  uint8_t *base, uint8_t *rec, size_t rlen)
{
	uint32_t far = 0x7fffff00;
	struct fi_image live;

	memcpy(rec + rlen - 4, &far, 4);
	return from_record(ref, path, base, rec, rlen, &live) == -EINVAL;
}

static void t_record(void)
{
	char path[700];
	struct fi_image ref, live;
	uint64_t text = 0;
	uint8_t *base, *rec;
	size_t len, rlen;
	bool same;

	if (!build_open("record", "ixr", "-Wl,-z,nopack-relative-relocs", "ix.c",
			path, sizeof(path), &ref))
		return;
	for (size_t i = 0; i < ref.nviews && !text; i++)
		if (ref.views[i].exec)
			text = ref.views[i].vaddr;
	base = lay_out(&ref, 0, &len);
	if (!CHECK("elf_index_record_map", base && relocate(&ref, base) &&
		   ref.nfuncs && ref.ncalls)) {
		fi_image_close(&ref);
		return;
	}
	rec = record_of(&ref, text, ref.nfuncs, ref.ncalls, &rlen);
	if (CHECK("elf_index_record_read",
		  rec && from_record(&ref, path, base, rec, rlen, &live) == 0)) {
		same = live.nfuncs == ref.nfuncs;
		for (size_t i = 0; same && i < ref.nfuncs; i++)
			same = live.funcs[i].addr == ref.funcs[i].addr &&
			       live.funcs[i].arity == ref.funcs[i].arity;
		CHECK("elf_index_record_preambles", same);
		CHECK("elf_index_record_calls_not_kept", live.ncalls == 0);
		fi_image_close(&live);
	}
	free(rec);
	/* No preamble: the calls are all the fingerprint has, kept. */
	rec = record_of(&ref, text, 0, ref.ncalls, &rlen);
	if (CHECK("elf_index_record_no_preambles_read",
		  rec && from_record(&ref, path, base, rec, rlen, &live) == 0)) {
		CHECK("elf_index_record_no_preambles_calls_kept",
		      live.ncalls == ref.ncalls &&
		      live.calls[0].addr == ref.calls[0].addr);
		fi_image_close(&live);
	}
	/* A call site past the text: the record is refused, kept or not. */
	CHECK("elf_index_record_call_outside_refused",
	      rec && last_call_far(&ref, path, base, rec, rlen));
	free(rec);
	rec = record_of(&ref, text, ref.nfuncs, ref.ncalls, &rlen);
	CHECK("elf_index_record_unkept_call_outside_refused",
	      rec && last_call_far(&ref, path, base, rec, rlen));
	free(rec);
	munmap(base, len);
	fi_image_close(&ref);
}

/* Pages (of a site's start) in @out[0..@n). */
static size_t fp_pages(const uint64_t *out, size_t n)
{
	uint64_t pages[FI_FP_SITES];
	size_t np = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t k = 0; k < np && !seen; k++)
			seen = pages[k] == (out[i] & ~FI_FP_CALL) >> 12;
		if (!seen)
			pages[np++] = (out[i] & ~FI_FP_CALL) >> 12;
	}
	return np;
}

/* The fingerprint's sample of 8,000 preambles 64 bytes apart (125 pages)
 * reads four pages, its first and last sites among them; of preambles
 * 1,000 bytes apart, four pages too. */
static void t_fp_sample(void)
{
	struct fi_image im;
	uint64_t out[FI_FP_SITES], pages[FI_FP_SITES];
	size_t n, npages = 0;
	bool first = false, last = false;

	memset(&im, 0, sizeof(im));
	im.nfuncs = 8000;
	im.funcs = calloc(im.nfuncs, sizeof(*im.funcs));
	if (!CHECK("elf_index_fp_alloc", im.funcs != NULL))
		return;
	for (size_t i = 0; i < im.nfuncs; i++)
		im.funcs[i].addr = 0x100000 + 16 + 64 * i;
	n = fi_fp_sample(&im, out);
	for (size_t i = 0; i < n; i++) {
		uint64_t pg = out[i] >> 12;
		bool seen = false;

		for (size_t k = 0; k < npages && !seen; k++)
			seen = pages[k] == pg;
		if (!seen)
			pages[npages++] = pg;
		first |= out[i] == im.funcs[0].addr - FI_PREAMBLE_SIZE;
		last |= out[i] == im.funcs[im.nfuncs - 1].addr - FI_PREAMBLE_SIZE;
	}
	CHECK("elf_index_fp_sample_full", n == FI_FP_SITES);
	CHECK("elf_index_fp_sample_ends", first && last);
	CHECK("elf_index_fp_sample_four_pages", npages == 4 &&
	      fp_pages(out, n) == 4);
	for (size_t i = 0; i < im.nfuncs; i++)
		im.funcs[i].addr = 0x100000 + 16 + 1000 * i;
	n = fi_fp_sample(&im, out);
	CHECK("elf_index_fp_sample_sparse_four_pages", n >= 4 &&
	      fp_pages(out, n) == 4 && out[0] == 0x100000 &&
	      out[n - 1] == im.funcs[im.nfuncs - 1].addr - FI_PREAMBLE_SIZE);
	/* A small module on one page: every site, once. */
	im.nfuncs = 50;
	for (size_t i = 0; i < im.nfuncs; i++)
		im.funcs[i].addr = 0x100000 + 16 + 64 * i;
	CHECK("elf_index_fp_sample_small_all", fi_fp_sample(&im, out) == 50 &&
	      out[49] == im.funcs[49].addr - FI_PREAMBLE_SIZE);
	free(im.funcs);
}

int main(void)
{
	const char *build = getenv("BUILD");
	char path[600];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/progs-index", build ? build : "build");
	snprintf(path, sizeof(path), "mkdir -p %s", dir);
	if (!CHECK("elf_index_dir", system(path) == 0))
		return 1;
	snprintf(path, sizeof(path), "%s/ix.c", dir);
	f = fopen(path, "w");
	if (!CHECK("elf_index_src", f && fputs(src, f) >= 0 && !fclose(f)))
		return 1;
	/* fineibt-cc packs relative relocations (DT_RELR) by default: the
	 * RELA cases ask for the records. */
	t_case("ix_pie", "-Wl,-z,nopack-relative-relocs", false);
	t_case("ix_apply", "-Wl,-z,nopack-relative-relocs -Wl,--apply-dynamic-relocs", false);
	t_case("ix_relr", "", true);
	t_case("ix_lib.so", "-Wl,-z,nopack-relative-relocs -DIX_LIB -fPIC -shared", false);
	t_case("ix_lib_relr.so", "-DIX_LIB -fPIC -shared", true);
	t_tcalls();
	t_record();
	t_fp_sample();
	return fi_check_exit();
}
