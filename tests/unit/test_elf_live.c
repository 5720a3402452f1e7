/* SPDX-License-Identifier: MIT */
/*
 * fi_image_open_live (the runtime's reader) against fi_image_open +
 * fi_image_attach_live (the reference): same views, symbols and names,
 * sites, traps, type ids, thunks, note and errors, on every test program
 * laid out in a scratch mapping and on a dlopen'ed kCFI DSO; the image
 * keeps no file. Also the sort that replaced qsort for symbols: the same
 * symbol per address as the old comparator, and a stable sort by address.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "elf_int.h"
#include "image.h"
#include "livedyn.h"

static char progs[512];

static bool same_views(const struct fi_image *a, const struct fi_image *b)
{
	bool ok = a->nviews == b->nviews && a->live && b->live &&
		  a->bias == b->bias && a->e_type == b->e_type &&
		  a->interp == b->interp;

	for (size_t i = 0; ok && i < a->nviews; i++)
		ok = a->views[i].vaddr == b->views[i].vaddr &&
		     a->views[i].size == b->views[i].size &&
		     a->views[i].mem == b->views[i].mem &&
		     a->views[i].exec == b->views[i].exec;
	return ok;
}

static bool same_syms(const struct fi_image *a, const struct fi_image *b)
{
	if (a->nsyms != b->nsyms || a->ntypeids != b->ntypeids)
		return false;
	for (size_t i = 0; i < a->nsyms; i++) {
		if (a->syms[i].addr != b->syms[i].addr ||
		    a->syms[i].size != b->syms[i].size ||
		    strcmp(a->syms[i].name, b->syms[i].name))
			return false;
	}
	for (size_t i = 0; i < a->ntypeids; i++) {
		if (a->typeids[i].hash != b->typeids[i].hash ||
		    strcmp(a->typeids[i].name, b->typeids[i].name))
			return false;
	}
	return true;
}

static bool same_funcs(const struct fi_image *a, const struct fi_image *b)
{
	if (a->nfuncs != b->nfuncs || a->nslots != b->nslots)
		return false;
	for (size_t i = 0; i < a->nfuncs; i++) {
		const struct fi_func *x = &a->funcs[i], *y = &b->funcs[i];

		if (x->addr != y->addr || x->hash != y->hash ||
		    x->arity != y->arity || x->form != y->form ||
		    x->endbr != y->endbr || x->has_cfi_sym != y->has_cfi_sym)
			return false;
	}
	return !memcmp(a->arity_hist, b->arity_hist, sizeof(a->arity_hist));
}

static bool same_calls(const struct fi_image *a, const struct fi_image *b)
{
	if (a->ncalls != b->ncalls || a->ntcalls != b->ntcalls ||
	    a->ntraps != b->ntraps || a->nnaked != b->nnaked)
		return false;
	for (size_t i = 0; i < a->ncalls; i++) {
		const struct fi_call *x = &a->calls[i], *y = &b->calls[i];

		if (x->addr != y->addr || x->hash != y->hash ||
		    x->jmp != y->jmp || x->form != y->form)
			return false;
	}
	for (size_t i = 0; i < a->ntcalls; i++) {
		const struct fi_tcall *x = &a->tcalls[i], *y = &b->tcalls[i];

		if (x->addr != y->addr || x->thunk != y->thunk ||
		    x->reg != y->reg || x->jmp != y->jmp)
			return false;
	}
	return (!a->ntraps || !memcmp(a->traps, b->traps, a->ntraps * 8)) &&
	       (!a->nnaked || !memcmp(a->naked, b->naked, a->nnaked * 8));
}

static bool same_sites(const struct fi_image *a, const struct fi_image *b)
{
	bool ok = same_funcs(a, b) && same_calls(a, b) && a->nbad == b->nbad;

	for (size_t i = 0; ok && i < a->nbad; i++)
		ok = a->bad[i].addr == b->bad[i].addr &&
		     !strcmp(a->bad[i].what, b->bad[i].what);
	return ok && !memcmp(a->thunks, b->thunks, sizeof(a->thunks)) &&
	       a->bhi_args == b->bhi_args &&
	       a->note.present == b->note.present &&
	       a->note.cfg.mode == b->note.cfg.mode &&
	       a->note.cfg.flags == b->note.cfg.flags &&
	       !memcmp(&a->note.key, &b->note.key, sizeof(a->note.key)) &&
	       a->note.bhi_args == b->note.bhi_args;
}

/* A private copy of the file laid out at its link-time addresses + base. */
static uint8_t *scratch_map(const struct fi_image *im, size_t *len)
{
	uint64_t end = 0;
	uint8_t *base;

	for (size_t i = 0; i < im->nviews; i++)
		if (im->elf->segs[i].vaddr + im->elf->segs[i].memsz > end)
			end = im->elf->segs[i].vaddr + im->elf->segs[i].memsz;
	base = mmap(NULL, end, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < im->nviews; i++)
		memcpy(base + im->views[i].vaddr, im->views[i].mem, im->views[i].size);
	*len = end;
	return base;
}

/*
 * The symbols the reader kept, recomputed the way it did before its
 * sort changed: qsort by (address, sized first, name), first per address.
 */
static int old_cmp(const void *a, const void *b)
{
	const struct fi_sym *x = a, *y = b;
	int rx = x->size ? 0 : 1, ry = y->size ? 0 : 1;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (rx != ry)
		return rx - ry;
	return strcmp(x->name, y->name);
}

static bool syms_as_before(const struct fi_image *im, const uint8_t *file)
{
	const Elf64_Ehdr *eh = (const void *)file;
	const Elf64_Shdr *sh = (const void *)(file + eh->e_shoff), *st = NULL;
	const char *str;
	struct fi_sym *v;
	size_t n = 0, out = 0, cnt;
	bool ok;

	for (size_t i = 1; i < eh->e_shnum && !st; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			st = &sh[i];
	for (size_t i = 1; i < eh->e_shnum && !st; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			st = &sh[i];
	if (!st)
		return im->nsyms == 0;
	str = (const char *)file + sh[st->sh_link].sh_offset;
	cnt = st->sh_size / sizeof(Elf64_Sym);
	v = calloc(cnt, sizeof(*v));
	for (size_t k = 1; v && k < cnt; k++) {
		const Elf64_Sym *s = (const Elf64_Sym *)(file + st->sh_offset) + k;
		int type = ELF64_ST_TYPE(s->st_info);
		const char *name = str + s->st_name;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    s->st_shndx == SHN_UNDEF || !s->st_value || !*name ||
		    !strncmp(name, "__cfi_", 6) || !strncmp(name, "__kcfi_typeid_", 14) ||
		    !strcmp(name, "__bhi_args"))
			continue;
		v[n++] = (struct fi_sym){ s->st_value, s->st_size, name };
	}
	qsort(v, n, sizeof(*v), old_cmp);
	for (size_t i = 0; i < n; i++)
		if (!out || v[out - 1].addr != v[i].addr)
			v[out++] = v[i];
	ok = v && out == im->nsyms;
	for (size_t i = 0; ok && i < out; i++)
		ok = v[i].addr == im->syms[i].addr && v[i].size == im->syms[i].size &&
		     !strcmp(v[i].name, im->syms[i].name);
	free(v);
	return ok;
}

/* One program: reference and live reader over the same scratch layout. */
static void t_prog(const char *name)
{
	struct fi_image ref, live;
	char path[600], err[128], tag[160];
	uint8_t *base;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", progs, name);
	snprintf(tag, sizeof(tag), "elf_live_%s_open", name);
	if (!CHECK(tag, fi_image_open(&ref, path, err, sizeof(err)) == 0))
		return;
	snprintf(tag, sizeof(tag), "elf_live_%s_syms_as_before", name);
	CHECK(tag, syms_as_before(&ref, ref.file));
	base = scratch_map(&ref, &len);
	if (!base || fi_image_attach_live(&ref, (uint64_t)(uintptr_t)base)) {
		CHECK("elf_live_scratch", false);
		fi_image_close(&ref);
		return;
	}
	ret = fi_image_open_live(&live, path, (uint64_t)(uintptr_t)base,
				 err, sizeof(err));
	snprintf(tag, sizeof(tag), "elf_live_%s_same", name);
	if (CHECK(tag, ret == 0 && same_views(&ref, &live) &&
		  same_syms(&ref, &live) && same_sites(&ref, &live) &&
		  !strcmp(ref.path, live.path))) {
		snprintf(tag, sizeof(tag), "elf_live_%s_keeps_no_file", name);
		CHECK(tag, live.file == NULL && live.file_size == 0 &&
		      live.elf->names && live.elf->shstr == NULL);
		fi_image_close(&live);
	}
	fi_image_close(&ref);
	munmap(base, len);
}

struct find_mod {
	const char *suffix;
	uint64_t bias;
	bool found;
	char path[512];
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_mod *m = data;
	size_t n = strlen(info->dlpi_name), s = strlen(m->suffix);

	if (n >= s && !strcmp(info->dlpi_name + n - s, m->suffix)) {
		m->bias = info->dlpi_addr;
		m->found = true;
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* A module really loaded by the dynamic loader (relocated, RELRO). */
static void t_loaded_dso(void)
{
	struct find_mod m = { .suffix = "/libfiprog_relr.so" };
	struct fi_image ref, live;
	char path[600], err[128], buf[64];
	void *h;

	snprintf(path, sizeof(path), "%s/libfiprog_relr.so", progs);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!CHECK("elf_live_dso_dlopen", h != NULL))
		return;
	dl_iterate_phdr(find_cb, &m);
	if (!CHECK("elf_live_dso_open",
		   m.found && fi_image_open(&ref, path, err, sizeof(err)) == 0))
		return;
	CHECK("elf_live_dso_attach", fi_image_attach_live(&ref, m.bias) == 0);
	if (CHECK("elf_live_dso_open_live",
		  fi_image_open_live(&live, path, m.bias, err, sizeof(err)) == 0)) {
		CHECK("elf_live_dso_same", live.nfuncs > 0 &&
		      same_views(&ref, &live) && same_syms(&ref, &live) &&
		      same_sites(&ref, &live));
		fi_image_symbolize(&live, live.funcs[0].addr + 2, buf, sizeof(buf));
		CHECK("elf_live_dso_symbolize",
		      strlen(buf) > 4 && !strcmp(buf + strlen(buf) - 4, "+0x2"));
		fi_image_close(&live);
		CHECK("elf_live_close_clears", live.elf == NULL && live.nsyms == 0);
	}
	fi_image_close(&ref);
	dlclose(h);
}

/*
 * libc, as loaded: thousands of aliases (several names at one address)
 * exercise the choice of one symbol per address; not a kCFI module, which
 * the reader takes as it is.
 */
static void t_loaded_libc(void)
{
	struct find_mod m = { .suffix = "/libc.so.6" };
	char path[600], err[128];
	struct fi_image ref, live;
	size_t aliases = 0;

	dl_iterate_phdr(find_cb, &m);
	if (!m.found)
		m.suffix = "libc.so.6";		/* named without a directory */
	dl_iterate_phdr(find_cb, &m);
	if (!CHECK("elf_live_libc_found", m.found))
		return;
	snprintf(path, sizeof(path), "%s", m.path);
	if (!CHECK("elf_live_libc_open", fi_image_open(&ref, path, err, sizeof(err)) == 0))
		return;
	for (const struct fi_sym *s = ref.syms; s && s < ref.syms + ref.nsyms; s++)
		aliases += fi_image_sym(&ref, s->addr) != s;
	CHECK("elf_live_libc_syms_as_before", ref.nsyms > 500 && aliases == 0 &&
	      syms_as_before(&ref, ref.file));
	CHECK("elf_live_libc_attach", fi_image_attach_live(&ref, m.bias) == 0);
	if (CHECK("elf_live_libc_open_live",
		  fi_image_open_live(&live, path, m.bias, err, sizeof(err)) == 0)) {
		CHECK("elf_live_libc_same", same_views(&ref, &live) &&
		      same_syms(&ref, &live) && same_sites(&ref, &live));
		fi_image_close(&live);
	}
	fi_image_close(&ref);
}

/* Same error and reason as fi_image_open, nothing left open. */
static void t_errors(void)
{
	static const char *const junk[] = { "", "hello", "\x7f\x45LF" };
	char path[600], e1[128], e2[128];
	struct fi_image a, b;
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "%s/no-such-file", progs);
	CHECK("elf_live_enoent",
	      fi_image_open_live(&b, path, 0, e2, sizeof(e2)) == -ENOENT &&
	      fi_image_open(&a, path, e1, sizeof(e1)) == -ENOENT && !strcmp(e1, e2));
	CHECK("elf_live_directory",
	      fi_image_open_live(&b, progs, 0, e2, sizeof(e2)) == -EISDIR);
	snprintf(path, sizeof(path), "%s/elf-live-junk", progs);
	for (size_t i = 0; i < 3; i++) {
		int r1, r2;

		f = fopen(path, "w");
		if (!f || fwrite(junk[i], 1, strlen(junk[i]), f) != strlen(junk[i])) {
			ok = false;
			break;
		}
		fclose(f);
		e1[0] = e2[0] = 0;
		r1 = fi_image_open(&a, path, e1, sizeof(e1));
		r2 = fi_image_open_live(&b, path, 0, e2, sizeof(e2));
		ok &= r1 == -ENOEXEC && r2 == r1 && e1[0] && !strcmp(e1, e2);
	}
	unlink(path);
	CHECK("elf_live_bad_files_same_errors", ok);
	/* A bias that makes a segment wrap is refused, as by attach_live. */
	snprintf(path, sizeof(path), "%s/prog_nopie", progs);
	if (fi_image_open(&a, path, e1, sizeof(e1)) == 0) {
		uint64_t bias = 0 - a.views[a.nviews - 1].vaddr - 8;

		CHECK("elf_live_bias_wraps",
		      fi_image_attach_live(&a, bias) == -EINVAL &&
		      fi_image_open_live(&b, path, bias, e2, sizeof(e2)) == -EINVAL &&
		      e2[0]);
		fi_image_close(&a);
	}
}

/* fi_sort_by_addr: sorted by key, stable, all three record sizes. */
struct rec24 { uint64_t key, idx, pad; };

static int cmp_rec(const void *a, const void *b)
{
	const struct rec24 *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* @runs > 0: the input is that many ascending runs (a symbol table). */
static bool sort_case(size_t n, uint64_t mask, uint64_t or, size_t size,
		      size_t runs)
{
	struct rec24 *v = calloc(n + 1, sizeof(*v)), *w = calloc(n + 1, sizeof(*w));
	uint8_t *r = calloc(n + 1, size);
	uint64_t x = 0x9e3779b97f4a7c15ull * (n + 1);
	bool ok = v && w && r;

	for (size_t i = 0; ok && i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = (struct rec24){ (x & mask) | or, i, 0 };
	}
	for (size_t k = 0; ok && runs && k < runs; k++) {
		size_t lo = n * k / runs, hi = n * (k + 1) / runs;

		qsort(v + lo, hi - lo, sizeof(*v), cmp_rec);
	}
	for (size_t i = 0; ok && i < n; i++) {
		v[i].idx = i;
		memcpy(r + i * size, &v[i], size);
	}
	ok = ok && fi_sort_by_addr(r, n, size) == 0;
	qsort(v, n, sizeof(*v), cmp_rec);
	for (size_t i = 0; ok && i < n; i++) {
		memcpy(&w[i], r + i * size, size);
		/* 8-byte records carry no index: compare keys only */
		ok = w[i].key == v[i].key && (size == 8 || w[i].idx == v[i].idx);
	}
	free(v);
	free(w);
	free(r);
	return ok;
}

static void t_sort(void)
{
	static const size_t sizes[] = { 8, 16, 24 };
	bool ok = true;

	for (size_t s = 0; s < 3; s++) {
		ok &= sort_case(0, ~0ull, 0, sizes[s], 0);
		ok &= sort_case(1, ~0ull, 0, sizes[s], 0);
		ok &= sort_case(1000, ~0ull, 0, sizes[s], 0);		/* 64 bits */
		ok &= sort_case(5000, 0xfff0, 0x400000, sizes[s], 0);	/* aligned */
		ok &= sort_case(5000, 0x7, 0, sizes[s], 0);		/* many equal */
		ok &= sort_case(3000, 0x1ffffff0, 0x555000000000ull, sizes[s], 0);
		ok &= sort_case(100, 0, 42, sizes[s], 0);		/* all equal */
		/* few ascending runs: merged, not radix-sorted */
		ok &= sort_case(5000, 0xfff0, 0x400000, sizes[s], 1);
		ok &= sort_case(5000, 0xfff0, 0x400000, sizes[s], 2);
		ok &= sort_case(5001, 0xfff0, 0x400000, sizes[s], 5);
		ok &= sort_case(4999, 0x3, 0, sizes[s], 7);		/* ties */
		ok &= sort_case(6400, ~0ull, 0, sizes[s], 64);
		ok &= sort_case(6500, ~0ull, 0, sizes[s], 65);		/* radix */
	}
	CHECK("elf_sort_by_addr_stable", ok);
}

/*
 * fi_sort_stable (libfineibt.so's qsort, load/alloc.c): by a comparator
 * that sees only the key, records of equal keys keep their order, with
 * scratch (the merge sort) and without (the insertion sort), for the
 * sizes the merge copies inline and one it does not (12 bytes).
 */
static int cmp_key(const void *a, const void *b)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	return x < y ? -1 : x > y;
}

static bool sort_stable_case(size_t n, uint64_t mask, size_t size, bool scratch)
{
	uint8_t *r = calloc(n + 1, size), *tmp = scratch ? malloc(n * size + 1) : NULL;
	bool *seen = calloc(n + 1, 1);
	uint64_t x = 0x9e3779b97f4a7c15ull * (n + 3), key, prev = 0;
	uint32_t idx, pidx = 0;
	bool ok = r && seen && (tmp || !scratch);

	for (size_t i = 0; ok && i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		key = x & mask;
		idx = (uint32_t)i;
		memcpy(r + i * size, &key, 8);
		memcpy(r + i * size + 8, &idx, 4);
	}
	if (ok)
		fi_sort_stable(r, n, size, cmp_key, tmp);
	for (size_t i = 0; ok && i < n; i++) {
		memcpy(&key, r + i * size, 8);
		memcpy(&idx, r + i * size + 8, 4);
		ok = idx < n && !seen[idx] &&
		     (!i || prev < key || (prev == key && pidx < idx));
		if (ok)
			seen[idx] = true;
		prev = key;
		pidx = idx;
	}
	free(r);
	free(tmp);
	free(seen);
	return ok;
}

static void t_sort_stable(void)
{
	static const size_t sizes[] = { 12, 16, 24, 40 };
	bool ok = true;

	for (size_t s = 0; s < 4; s++) {
		for (int t = 0; t < 2; t++) {
			ok &= sort_stable_case(0, ~0ull, sizes[s], t);
			ok &= sort_stable_case(1, ~0ull, sizes[s], t);
			ok &= sort_stable_case(2, 0, sizes[s], t);
			ok &= sort_stable_case(777, ~0ull, sizes[s], t);
			ok &= sort_stable_case(1000, 0x7, sizes[s], t);	/* ties */
			ok &= sort_stable_case(513, 0, sizes[s], t);	/* all equal */
		}
		ok &= sort_stable_case(20000, 0xff, sizes[s], true);
	}
	CHECK("elf_sort_stable", ok);
}

/*
 * fi_livedyn_next against libc's dlsym(RTLD_NEXT) from this executable:
 * whenever it answers, the same address; for the names the runtime
 * resolves at start-up (libc's sigaction, signal, sysv_signal, dlopen:
 * one version each, or two at one address) it does answer; for what
 * dlsym treats in ways of its own (an IFUNC, two versions at different
 * addresses) and for names libc does not define it leaves the question
 * to dlsym.
 */
static void t_next(void)
{
	static const char *const answered[] = {
		"sigaction", "signal", "sysv_signal", "dlopen", "malloc",
		"environ", "__libc_start_main",
	};
	static const char *const asked[] = {
		"strlen", "memcpy", "pthread_cond_wait", "fi_no_such_symbol",
	};
	bool same = true, all = true, none = true;

	for (size_t i = 0; i < sizeof(answered) / sizeof(answered[0]); i++) {
		void *p = fi_livedyn_next(answered[i]);

		all &= p != NULL;
		same &= !p || p == dlsym(RTLD_NEXT, answered[i]);
	}
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++)
		none &= !fi_livedyn_next(asked[i]);
	CHECK("livedyn_next_as_dlsym", same);
	CHECK("livedyn_next_answers_libc_names", all);
	CHECK("livedyn_next_leaves_ifunc_versions_unknown", none);

	/*
	 * The tables the first lookups kept (the modules up to libc) stay
	 * right across libraries loaded and unloaded since: a link map a
	 * dlclose freed is what the next dlopen gets.
	 */
	static const char *const libs[] = {
		"libresolv.so.2", "libz.so.1", "libresolv.so.2", "libanl.so.1",
	};
	bool cycled = true, opened = true;

	for (size_t k = 0; k < sizeof(libs) / sizeof(libs[0]); k++) {
		void *h = dlopen(libs[k], RTLD_NOW | RTLD_GLOBAL);

		opened &= h != NULL;
		for (size_t i = 0; i < sizeof(answered) / sizeof(answered[0]); i++) {
			void *p = fi_livedyn_next(answered[i]);

			cycled &= p && p == dlsym(RTLD_NEXT, answered[i]);
		}
		for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++)
			cycled &= !fi_livedyn_next(asked[i]);
		if (h)
			dlclose(h);
	}
	CHECK("livedyn_next_across_dlopen_dlclose", opened && cycled);

	/*
	 * fi_livedyn_next_ver against dlvsym(RTLD_NEXT): a compat version
	 * (sigvec has no other), one of two versions at different addresses
	 * (pthread_cond_wait), a default version; an IFUNC left open, a
	 * version or name libc does not define not found.
	 */
	static const char *const vanswered[][2] = {
		{ "sigvec", "GLIBC_2.2.5" }, { "sigset", "GLIBC_2.2.5" },
		{ "sigaction", "GLIBC_2.2.5" },
		{ "pthread_cond_wait", "GLIBC_2.2.5" },
		{ "pthread_cond_wait", "GLIBC_2.3.2" },
	};
	static const char *const vasked[][2] = {
		{ "memcpy", "GLIBC_2.14" }, { "sigvec", "GLIBC_2.34" },
		{ "sigvec", "FI_NO_SUCH_VERSION" },
		{ "fi_no_such_symbol", "GLIBC_2.2.5" },
	};
	bool vsame = true, vall = true, vnone = true;

	for (size_t i = 0; i < sizeof(vanswered) / sizeof(vanswered[0]); i++) {
		void *p = fi_livedyn_next_ver(vanswered[i][0], vanswered[i][1]);

		vall &= p != NULL;
		vsame &= p == dlvsym(RTLD_NEXT, vanswered[i][0], vanswered[i][1]);
	}
	vsame &= fi_livedyn_next_ver("pthread_cond_wait", "GLIBC_2.2.5") !=
		 fi_livedyn_next_ver("pthread_cond_wait", "GLIBC_2.3.2");
	for (size_t i = 0; i < sizeof(vasked) / sizeof(vasked[0]); i++)
		vnone &= !fi_livedyn_next_ver(vasked[i][0], vasked[i][1]);
	CHECK("livedyn_next_ver_as_dlvsym", vsame);
	CHECK("livedyn_next_ver_answers_compat_versions", vall);
	CHECK("livedyn_next_ver_leaves_ifunc_unknown_versions_out", vnone);
}

int main(void)
{
	static const char *const names[] = {
		"prog_pie", "prog_nopie", "prog_relr", "prog_noarity",
		"prog_noarity_nopie", "prog_bhi", "prog_plain", "prog_stripped",
		"libfiprog.so", "libfiprog_relr.so",
	};
	const char *build = getenv("BUILD");
	char cmd[1200];

	snprintf(progs, sizeof(progs), "%s/progs", build ? build : "build");
	snprintf(cmd, sizeof(cmd), "bash tests/progs/build.sh '%s' >/dev/null", progs);
	if (!CHECK("elf_live_build_progs", system(cmd) == 0))
		return 1;
	t_sort();
	t_sort_stable();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		t_prog(names[i]);
	t_loaded_dso();
	t_loaded_libc();
	t_errors();
	t_next();
	return fi_check_exit();
}
