/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect --diff A B: what changed between two images (a kCFI
 * build and its patched copy, or two builds), per site kind.
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
		cli_json_str(name);
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
		cli_json_str(im[0].path);
		printf(", \"mode\": \"%s\", \"patched\": %s},\n  \"b\": {\"file\": ",
		       mode[0], im[0].note.present ? "true" : "false");
		cli_json_str(im[1].path);
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

int insp_diff(const char *a, const char *b, bool list, bool json)
{
	struct diff_opts o = { .a = a, .b = b, .list = list, .json = json };
	struct fi_image im[2];
	struct ext_sites s[2][K_NKINDS] = { 0 };
	char err[256];
	int ret = 0, opened = 0;

	for (; opened < 2; opened++) {
		const char *p = opened ? o.b : o.a;

		err[0] = '\0';
		if (fi_image_open(&im[opened], p, err, sizeof(err))) {
			cli_error("%s: %s", p, err[0] ? err : "cannot read");
			ret = 1;
			goto out;
		}
		for (int k = 0; k < K_NKINDS; k++) {
			if (ext_collect(&im[opened], k, &s[opened][k])) {
				cli_error("inspect: out of memory");
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
