/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect --diff A B: what changed between two images (a kCFI
 * build and its patched copy, or two builds), per site kind.
 * fineibt inspect --pid PID: the kCFI modules of a running process as
 * they are in its memory: mode, sites rewritten, hashes randomised or not
 * (the seed itself is never printed).
 *
 * Sites are matched by name, not address, so two builds of the same
 * program compare too: a preamble by its function's symbol, a call site
 * by (containing function, ordinal within it). Addresses are the key only
 * for sites without a symbol. docs/ecosystem.md documents the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fineibt.h"
#include "image.h"
#include "cli.h"

enum ext_kind { K_PRE, K_CALL, K_TCALL, K_TYPEID, K_NAKED, K_NKINDS };

static const char *const ext_kind_name[K_NKINDS] = {
	"preambles", "call_sites", "thunk_calls", "typeids", "naked_endbr",
};

static const char *const ext_kind_one[K_NKINDS] = {
	"preamble", "call", "thunk", "typeid", "naked",
};

/* One site, keyed for matching across images. */
struct ext_site {
	const char *sym;	/* function name ("" if none) */
	uint64_t ord;		/* ordinal within sym, or the address if no sym */
	uint64_t addr;
	uint32_t hash;
	int form;		/* enum fi_preamble_form / fi_caller_form, -1 n/a */
	bool jmp;
};

struct ext_sites {
	struct ext_site *v;
	size_t n;
};

struct ext_counts {
	size_t a, b, same, form, hash, only_a, only_b;
};

static const char *pre_form_name(int f)
{
	static const char *const n[] = { "none", "kcfi", "fineibt", "fineibt-bhi",
					 "fineibt-arity1" };

	return f >= 0 && f < 5 ? n[f] : "-";
}

static const char *call_form_name(int f)
{
	static const char *const n[] = { "none", "kcfi", "off", "fineibt",
					 "fineibt-thunk", "paranoid" };

	return f >= 0 && f < 6 ? n[f] : "-";
}

static const char *ext_form_name(enum ext_kind k, int f)
{
	return k == K_PRE ? pre_form_name(f) : k == K_CALL ? call_form_name(f) : "-";
}

static int ext_cmp(const void *x, const void *y)
{
	const struct ext_site *a = x, *b = y;
	int c = strcmp(a->sym, b->sym);

	if (c)
		return c;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static int ext_cmp_addr(const void *x, const void *y)
{
	const struct ext_site *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The exact symbol at @addr, or "". */
static const char *ext_exact(const struct fi_image *im, uint64_t addr)
{
	const struct fi_sym *s = fi_image_sym(im, addr);

	return s && s->addr == addr && s->name ? s->name : "";
}

/*
 * Give each site its key: sites sorted by address, the n-th site inside
 * function f gets (f, n); preambles and naked ENDBRs are keyed by their
 * own name. Then sort by key.
 */
static void ext_key(const struct fi_image *im, struct ext_sites *s, bool own)
{
	const char *prev = NULL;
	uint64_t n = 0;

	qsort(s->v, s->n, sizeof(*s->v), ext_cmp_addr);
	for (size_t i = 0; i < s->n; i++) {
		struct ext_site *e = &s->v[i];
		const struct fi_sym *sym = own ? NULL : fi_image_sym(im, e->addr);

		e->sym = own ? ext_exact(im, e->addr) : sym && sym->name ? sym->name : "";
		if (!e->sym[0]) {
			e->ord = e->addr;
			continue;
		}
		n = prev && !strcmp(prev, e->sym) ? n + 1 : 0;
		prev = e->sym;
		e->ord = own ? 0 : n;
	}
	qsort(s->v, s->n, sizeof(*s->v), ext_cmp);
}

static int ext_collect(const struct fi_image *im, enum ext_kind k,
		       struct ext_sites *s)
{
	size_t n = k == K_PRE ? im->nfuncs : k == K_CALL ? im->ncalls :
		   k == K_TCALL ? im->ntcalls : k == K_TYPEID ? im->ntypeids :
		   im->nnaked;

	s->n = n;
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ext_site *e = &s->v[i];

		e->form = -1;
		switch (k) {
		case K_PRE:
			e->addr = im->funcs[i].addr;
			e->hash = im->funcs[i].hash;
			e->form = im->funcs[i].form;
			break;
		case K_CALL:
			e->addr = im->calls[i].addr;
			e->hash = im->calls[i].hash;
			e->form = im->calls[i].form;
			e->jmp = im->calls[i].jmp;
			break;
		case K_TCALL:
			e->addr = im->tcalls[i].addr;
			e->jmp = im->tcalls[i].jmp;
			break;
		case K_TYPEID:
			e->sym = im->typeids[i].name;
			e->hash = im->typeids[i].hash;
			break;
		default:
			e->addr = im->naked[i];
			break;
		}
	}
	if (k == K_TYPEID)
		qsort(s->v, s->n, sizeof(*s->v), ext_cmp);
	else
		ext_key(im, s, k == K_PRE || k == K_NAKED);
	return 0;
}

/* ------------------------------------------------------------------ diff */

struct diff_opts {
	const char *a, *b;
	bool json, list;
};

static void diff_site_name(const struct ext_site *e, enum ext_kind k,
			   char *buf, size_t len)
{
	if (!e->sym[0])
		snprintf(buf, len, "%#" PRIx64, e->addr);
	else if (k == K_CALL || k == K_TCALL)
		snprintf(buf, len, "%s#%" PRIu64, e->sym, e->ord);
	else
		snprintf(buf, len, "%s", e->sym);
}

static void diff_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* One changed/added/removed site, as text or a JSON array element. */
static void diff_print_change(const struct diff_opts *o, enum ext_kind k,
			      const struct ext_site *x, const struct ext_site *y,
			      bool *first)
{
	char name[300];
	const struct ext_site *e = x ? x : y;
	const char *what = !x ? "added" : !y ? "removed" : "changed";

	diff_site_name(e, k, name, sizeof(name));
	if (o->json) {
		printf("%s\n    {\"kind\": \"%s\", \"change\": \"%s\", \"name\": ",
		       *first ? "" : ",", ext_kind_one[k], what);
		diff_json_str(name);
		if (x)
			printf(", \"a\": {\"address\": \"%#" PRIx64 "\", \"form\": \"%s\", \"hash\": \"%#010x\"}",
			       x->addr, ext_form_name(k, x->form), x->hash);
		if (y)
			printf(", \"b\": {\"address\": \"%#" PRIx64 "\", \"form\": \"%s\", \"hash\": \"%#010x\"}",
			       y->addr, ext_form_name(k, y->form), y->hash);
		printf("}");
		*first = false;
		return;
	}
	if (!y || !x) {
		printf("  %c %-8s %-36s %s %#010x\n", x ? '-' : '+', ext_kind_one[k],
		       name, ext_form_name(k, e->form), e->hash);
		return;
	}
	printf("    %-8s %-36s %s %#010x -> %s %#010x\n", ext_kind_one[k], name,
	       ext_form_name(k, x->form), x->hash, ext_form_name(k, y->form),
	       y->hash);
}

/* Merge the two key-sorted lists; count, and print changes if asked. */
static void diff_kind(const struct diff_opts *o, enum ext_kind k,
		      const struct ext_sites *a, const struct ext_sites *b,
		      struct ext_counts *c, bool print, bool *first)
{
	size_t i = 0, j = 0;

	*c = (struct ext_counts){ .a = a->n, .b = b->n };
	while (i < a->n || j < b->n) {
		int r = i == a->n ? 1 : j == b->n ? -1 : ext_cmp(&a->v[i], &b->v[j]);
		const struct ext_site *x = r <= 0 ? &a->v[i] : NULL;
		const struct ext_site *y = r >= 0 ? &b->v[j] : NULL;
		bool changed = !x || !y;

		if (x && y) {
			c->form += x->form != y->form;
			c->hash += x->hash != y->hash;
			changed = x->form != y->form || x->hash != y->hash;
			c->same += !changed;
		} else {
			c->only_a += !!x;
			c->only_b += !!y;
		}
		if (changed && print)
			diff_print_change(o, k, x, y, first);
		i += r <= 0;
		j += r >= 0;
	}
}

static int diff_args(int argc, char **argv, struct diff_opts *o)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--diff"))
			continue;
		if (!strcmp(argv[i], "--json"))
			o->json = true;
		else if (!strcmp(argv[i], "--list"))
			o->list = true;
		else if (argv[i][0] == '-' && argv[i][1])
			bad++;
		else if (!o->a)
			o->a = argv[i];
		else if (!o->b)
			o->b = argv[i];
		else
			bad++;
	}
	if (!bad && o->a && o->b)
		return 0;
	fprintf(stderr, "Error: inspect: usage: fineibt inspect --diff A B [--list] [--json]\n");
	return 2;
}

static void diff_output(const struct diff_opts *o, struct fi_image im[2],
			struct ext_sites s[2][K_NKINDS])
{
	struct ext_counts c[K_NKINDS];
	char mode[2][128];
	bool first = true;

	for (int x = 0; x < 2; x++)
		insp_mode(&im[x], mode[x], sizeof(mode[x]));
	if (o->json) {
		printf("{\n  \"a\": {\"file\": ");
		diff_json_str(im[0].path);
		printf(", \"mode\": \"%s\", \"patched\": %s},\n  \"b\": {\"file\": ",
		       mode[0], im[0].note.present ? "true" : "false");
		diff_json_str(im[1].path);
		printf(", \"mode\": \"%s\", \"patched\": %s},\n  \"changes\": [",
		       mode[1], im[1].note.present ? "true" : "false");
	} else {
		printf("a: %s (%s%s)\nb: %s (%s%s)\n", im[0].path, mode[0],
		       im[0].note.present ? ", patched" : "", im[1].path, mode[1],
		       im[1].note.present ? ", patched" : "");
		if (o->list)
			printf("changes (- only in a, + only in b):\n");
	}
	for (int k = 0; k < K_NKINDS; k++)
		diff_kind(o, k, &s[0][k], &s[1][k], &c[k], o->list, &first);
	if (o->json) {
		printf("%s],\n  \"kinds\": {", first ? "" : "\n  ");
		for (int k = 0; k < K_NKINDS; k++)
			printf("%s\n    \"%s\": {\"a\": %zu, \"b\": %zu, \"unchanged\": %zu, "
			       "\"form_changed\": %zu, \"hash_changed\": %zu, "
			       "\"only_a\": %zu, \"only_b\": %zu}", k ? "," : "",
			       ext_kind_name[k], c[k].a, c[k].b, c[k].same, c[k].form,
			       c[k].hash, c[k].only_a, c[k].only_b);
		printf("\n  }\n}\n");
		return;
	}
	printf("%-12s %7s %7s %9s %7s %7s %7s %7s\n", "kind", "a", "b",
	       "unchanged", "form", "hash", "only-a", "only-b");
	for (int k = 0; k < K_NKINDS; k++)
		printf("%-12s %7zu %7zu %9zu %7zu %7zu %7zu %7zu\n",
		       ext_kind_name[k], c[k].a, c[k].b, c[k].same, c[k].form,
		       c[k].hash, c[k].only_a, c[k].only_b);
}

static int cmd_inspect_diff(int argc, char **argv)
{
	struct diff_opts o = { 0 };
	struct fi_image im[2];
	struct ext_sites s[2][K_NKINDS] = { 0 };
	char err[256];
	int ret = diff_args(argc, argv, &o), opened = 0;

	if (ret)
		return ret;
	for (; opened < 2; opened++) {
		const char *p = opened ? o.b : o.a;

		err[0] = '\0';
		if (fi_image_open(&im[opened], p, err, sizeof(err))) {
			fprintf(stderr, "Error: %s: %s\n", p, err[0] ? err : "cannot read");
			ret = 1;
			goto out;
		}
		for (int k = 0; k < K_NKINDS; k++) {
			if (ext_collect(&im[opened], k, &s[opened][k])) {
				fprintf(stderr, "Error: inspect: out of memory\n");
				ret = 1;
				opened++;
				goto out;
			}
		}
	}
	diff_output(&o, im, s);
out:
	for (int x = 0; x < 2; x++)
		for (int k = 0; k < K_NKINDS; k++)
			free(s[x][k].v);
	while (opened--)
		fi_image_close(&im[opened]);
	return ret;
}

/* ------------------------------------------------------------------- pid */

#define PID_MAX_MODS	512

struct pid_mod {
	char path[4096];
	uint64_t base;		/* lowest mapping at file offset 0 */
};

/*
 * The file-backed mappings of @pid, one per path. Whether they hold code
 * is not in the permissions: the runtime replaces a module's text (or its
 * site pages) with anonymous memory when it rewrites it on a copy, so its
 * text range no longer names the file, or only in part (pages written in
 * place still do). The module's ELF headers say where the text is.
 */
static int pid_maps(int pid, struct pid_mod *mods, size_t *nmods)
{
	char path[64], line[4352];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*nmods = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[4096];
		size_t i;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi,
			   perms, &off, file) < 5 || file[0] != '/' ||
		    strstr(file, " (deleted)"))
			continue;
		for (i = 0; i < *nmods && strcmp(mods[i].path, file); i++)
			;
		if (i == *nmods) {
			if (*nmods == PID_MAX_MODS)
				continue;
			memset(&mods[i], 0, sizeof(mods[i]));
			snprintf(mods[i].path, sizeof(mods[i].path), "%s", file);
			mods[i].base = UINT64_MAX;
			(*nmods)++;
		}
		if (off == 0 && lo < mods[i].base)
			mods[i].base = lo;
	}
	fclose(f);
	return 0;
}

/* The live bytes of every executable view of @im, read from @memfd. */
static int pid_read_views(const struct fi_image *im, int memfd, uint64_t bias,
			  uint8_t **bufs)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		bufs[i] = NULL;
		if (!v->exec || !v->size)
			continue;
		bufs[i] = malloc(v->size);
		if (!bufs[i])
			return -ENOMEM;
		if (pread(memfd, bufs[i], v->size, (off_t)(v->vaddr + bias)) !=
		    (ssize_t)v->size)
			return errno ? -errno : -EIO;
	}
	return 0;
}

/* @len live bytes at link-time @addr, or NULL. */
static const uint8_t *pid_bytes(const struct fi_image *im, uint8_t **bufs,
				uint64_t addr, size_t len)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		if (bufs[i] && addr >= v->vaddr && addr - v->vaddr < v->size &&
		    v->size - (addr - v->vaddr) >= len)
			return bufs[i] + (addr - v->vaddr);
	}
	return NULL;
}

struct pid_summary {
	char mode[128];
	size_t pre, pre_changed, calls, calls_changed, hash_changed, hashes;
	bool rand;		/* rehashed at run time, or by a static patch */
	bool static_patch;	/* the file itself was rewritten (fineibt patch) */
};

/*
 * Classify the live sites of @im (loaded at @bias) and judge the mode
 * from them with the same rules as for a file (fi_image_mode), on a
 * copy of the image whose site forms are the live ones.
 */
/*
 * A call site the runtime opened for dlsym veneers (src/trap/foreign.c) starts
 * with a jmp to its stub, whose first 6 bytes are the site's own: put
 * them back in @copy so that the site classifies as what it is.
 */
static const uint8_t *pid_opened_site(const uint8_t *p, uint64_t ip, int memfd,
				      uint8_t copy[FI_CALLSITE_SIZE])
{
	uint64_t stub;

	if (!fi_decode_site_jmp(p, ip, &stub))
		return p;
	memcpy(copy, p, FI_CALLSITE_SIZE);
	if (pread(memfd, copy, 6, (off_t)stub) != 6)
		return p;
	return copy;
}

static int pid_summarise(struct fi_image *im, uint8_t **bufs, uint64_t bias,
			 int memfd, struct pid_summary *ps)
{
	struct fi_image live = *im;
	struct fineibt_config cfg;
	struct fi_func *funcs = calloc(im->nfuncs + 1, sizeof(*funcs));
	struct fi_call *calls = calloc(im->ncalls + 1, sizeof(*calls));

	if (!funcs || !calls) {
		free(funcs);
		free(calls);
		return -ENOMEM;
	}
	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < im->nfuncs; i++) {
		struct fi_preamble_info info = { 0 };
		uint64_t pre = im->funcs[i].addr - FI_PREAMBLE_SIZE;
		const uint8_t *p = pid_bytes(im, bufs, pre, FI_PREAMBLE_SIZE + 4);

		funcs[i] = im->funcs[i];
		if (p && fi_classify_preamble(p, pre + bias, &info) != FI_PRE_NONE) {
			funcs[i].form = info.form;
			funcs[i].hash = info.hash;
			funcs[i].set = (uint8_t)info.set;
		}
		ps->pre++;
		ps->pre_changed += funcs[i].form != im->funcs[i].form ||
				   funcs[i].set != im->funcs[i].set;
		ps->hashes++;
		ps->hash_changed += funcs[i].hash != im->funcs[i].hash;
	}
	for (size_t i = 0; i < im->ncalls; i++) {
		struct fi_caller_info ci = { 0 };
		const uint8_t *p = pid_bytes(im, bufs, im->calls[i].addr, FI_CALLSITE_SIZE);
		uint8_t copy[FI_CALLSITE_SIZE];

		if (p)
			p = pid_opened_site(p, im->calls[i].addr + bias, memfd, copy);
		calls[i] = im->calls[i];
		if (p && fi_classify_caller(p, im->calls[i].addr + bias, &ci) != FI_CALL_NONE) {
			calls[i].form = ci.form;
			calls[i].hash = ci.hash;
			calls[i].set = (uint8_t)ci.set;
		}
		ps->calls++;
		/* v6.18's kCFI callers keep their form, not their bytes */
		ps->calls_changed += calls[i].form != im->calls[i].form ||
				     calls[i].set != im->calls[i].set;
		ps->hashes++;
		ps->hash_changed += calls[i].hash != im->calls[i].hash;
	}
	live.funcs = funcs;
	live.calls = calls;
	/* Rehashed sites mean a key is in use; its value stays secret. */
	ps->static_patch = im->note.present;
	ps->rand = ps->hash_changed ||
		   (im->note.present && (im->note.cfg.flags & FINEIBT_F_RAND));
	if (fi_image_mode(&live, &cfg) < 0) {
		snprintf(ps->mode, sizeof(ps->mode), "mixed");
	} else {
		if (ps->rand)
			cfg.flags |= FINEIBT_F_RAND;
		else
			cfg.flags &= ~FINEIBT_F_RAND;
		fineibt_config_str(&cfg, ps->mode, sizeof(ps->mode));
	}
	free(funcs);
	free(calls);
	return 0;
}

/* FINEIBT_CFI as the process was started with it, or "". */
static void pid_env_cfi(int pid, char *out, size_t len)
{
	char path[64], buf[65536];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
		buf[n] = '\0';
		if (!strncmp(buf + i, "FINEIBT_CFI=", 12)) {
			snprintf(out, len, "%s", buf + i + 12);
			return;
		}
	}
}

static void pid_print(bool json, bool *first, const char *path,
		      const struct pid_summary *ps)
{
	bool rand = ps->rand;

	if (!json) {
		printf("%-40s %-22s %5zu/%-5zu %5zu/%-5zu %s%s\n", path, ps->mode,
		       ps->pre_changed, ps->pre, ps->calls_changed, ps->calls,
		       rand ? "present" : "none",
		       ps->static_patch ? " (file patched statically)" : "");
		*first = false;
		return;
	}
	printf("%s\n    {\"module\": ", *first ? "" : ",");
	diff_json_str(path);
	printf(", \"mode\": \"%s\", \"preambles\": %zu, \"preambles_rewritten\": %zu, "
	       "\"call_sites\": %zu, \"call_sites_rewritten\": %zu, \"key\": %s, "
	       "\"static_patch\": %s}",
	       ps->mode, ps->pre, ps->pre_changed, ps->calls, ps->calls_changed,
	       rand ? "true" : "false", ps->static_patch ? "true" : "false");
	*first = false;
}

/* A cheap look at the magic before reading a whole mapped file. */
static bool pid_is_elf(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && read(fd, m, 4) == 4 && !memcmp(m, "\177ELF", 4);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* One module: open its file, read its text from the process, summarise. */
static int pid_module(const struct pid_mod *pm, int memfd, bool json, bool *first)
{
	struct fi_image im;
	struct pid_summary ps;
	uint8_t **bufs;
	uint64_t bias;
	char err[256];
	int ret;

	if (fi_image_open(&im, pm->path, err, sizeof(err)))
		return 0;		/* not an ELF file we read: not ours */
	if ((!im.nfuncs && !im.ncalls) || !im.nviews) {
		fi_image_close(&im);
		return 0;
	}
	bias = pm->base - (im.views[0].vaddr & ~(uint64_t)0xfff);
	bufs = calloc(im.nviews, sizeof(*bufs));
	ret = bufs ? pid_read_views(&im, memfd, bias, bufs) : -ENOMEM;
	if (!ret)
		ret = pid_summarise(&im, bufs, bias, memfd, &ps);
	if (!ret)
		pid_print(json, first, pm->path, &ps);
	for (size_t i = 0; bufs && i < im.nviews; i++)
		free(bufs[i]);
	free(bufs);
	fi_image_close(&im);
	if (ret)
		fprintf(stderr, "Error: inspect: %s: cannot read its text from the process (%s)\n",
			pm->path, strerror(-ret));
	return ret ? 1 : 0;
}

static int cmd_inspect_pid(int argc, char **argv)
{
	struct pid_mod *mods = calloc(PID_MAX_MODS, sizeof(*mods));
	bool json = false, first = true;
	char path[64], cfi[256];
	int pid = 0, memfd, ret = 0;
	size_t n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else
			pid = -1;
	}
	if (pid <= 0 || !mods) {
		fprintf(stderr, "Error: inspect: usage: fineibt inspect --pid PID [--json]\n");
		free(mods);
		return 2;
	}
	ret = pid_maps(pid, mods, &n);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = ret ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (ret || memfd < 0) {
		fprintf(stderr, "Error: inspect: cannot read process %d (%s): it must exist "
			"and you need ptrace rights over it (same user; see "
			"kernel.yama.ptrace_scope)\n", pid, strerror(ret ? -ret : errno));
		free(mods);
		return 1;
	}
	pid_env_cfi(pid, cfi, sizeof(cfi));
	if (json) {
		printf("{\n  \"pid\": %d,\n  \"env_cfi\": ", pid);
		if (cfi[0])
			diff_json_str(cfi);
		else
			printf("null");
		printf(",\n  \"modules\": [");
	} else {
		printf("pid %d: FINEIBT_CFI=%s\n%-40s %-22s %11s %11s %s\n", pid,
		       cfi[0] ? cfi : "(unset: auto)", "module", "mode",
		       "rewr/pre", "rewr/calls", "key");
	}
	for (size_t i = 0; i < n; i++) {
		if (mods[i].base != UINT64_MAX && pid_is_elf(mods[i].path))
			ret |= pid_module(&mods[i], memfd, json, &first);
	}
	if (json)
		printf("%s]\n}\n", first ? "" : "\n  ");
	else if (first)
		printf("(no kCFI module)\n");
	close(memfd);
	free(mods);
	return ret;
}

/* ------------------------------------------------------------- dispatch */

int cmd_inspect_ext(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--diff"))
			return cmd_inspect_diff(argc, argv);
		if (!strcmp(argv[i], "--pid"))
			return cmd_inspect_pid(argc, argv);
	}
	return -1;
}
