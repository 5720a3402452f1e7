/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect FILE [--json] [--list]: what the ELF reader found in a
 * file: the mode its sites are in, preambles, call sites, tail calls,
 * thunk calls without a check, the arity histogram, typeids, naked ENDBRs
 * and sites that did not match their metadata. docs/inspect.md documents
 * the output and every message.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fineibt.h"
#include "image.h"
#include "note.h"
#include "noteenc.h"
#include "cli.h"

struct insp_opts {
	const char *path;
	bool json;
	bool list;
};

int cmd_inspect_help(void)
{
	printf("Usage: fineibt inspect FILE [--json] [--list]\n"
	       "  Report the kCFI/FineIBT sites of an ELF executable or shared object:\n"
	       "  the mode its sequences are in (and what 'fineibt patch' recorded),\n"
	       "  preambles, call sites, tail calls, thunk calls without a check, the\n"
	       "  arity histogram, __kcfi_typeid_ types, naked ENDBRs (function entries\n"
	       "  with ENDBR but no hash check) and sites that do not match; then the\n"
	       "  hardening audit: RELRO, BIND_NOW, writable GOT, executable stack,\n"
	       "  text relocations and a setuid/setgid file's RUNPATH that others can\n"
	       "  change, one 'audit:' line per hole no CFI check covers.\n"
	       "  --list  also list every site: address, symbol+offset, hash, arity/form\n"
	       "  --json  one JSON object on stdout (see docs/inspect.md)\n"
	       "  fineibt inspect --diff A B [--list] [--json]: what changed between\n"
	       "  two images; fineibt inspect --pid PID [--json]: the kCFI modules of\n"
	       "  a running process (docs/ecosystem.md)\n"
	       "  Exit status: 0 (also for a file without kCFI), 1 on error, 2 on usage.\n");
	return 0;
}

static const char *insp_type(const struct fi_image *im)
{
	if (im->e_type == ET_EXEC)
		return "executable";
	return im->interp ? "PIE executable" : "shared object";
}

static const char *pre_form(uint8_t f)
{
	static const char *const n[] = { "none", "kcfi", "fineibt", "fineibt-bhi",
					 "fineibt-arity1" };

	return f < 5 ? n[f] : "?";
}

static const char *call_form(uint8_t f)
{
	static const char *const n[] = { "none", "kcfi", "off", "fineibt",
					 "fineibt-thunk", "paranoid" };

	return f < 6 ? n[f] : "?";
}

/*
 * The sequence set the sites are written in (docs/sequences.md): "v4",
 * "v6.18", "mixed", or NULL when no site is in a set's own form.
 */
static const char *insp_set(const struct fi_image *im)
{
	int set = fi_image_set(im);

	if (set == -1)
		return "mixed";
	return set < 0 ? NULL : fi_set_name(set);
}

/* A site's set as its --list line shows it: "" for v4, "/v6.18". */
static const char *insp_site_set(uint8_t set)
{
	return set == FI_SET_V618 ? "/v6.18" : "";
}

/* The mode the sites are in, as a cfi= list; "mixed" when they disagree. */
void insp_mode(const struct fi_image *im, char *buf, size_t len)
{
	struct fineibt_config cfg;

	if (fi_image_mode(im, &cfg) < 0) {
		snprintf(buf, len, "mixed");
		return;
	}
	/* Randomisation cannot be seen in the bytes: only the note knows. */
	if (!im->note.present)
		cfg.flags |= FINEIBT_F_RAND;
	fineibt_config_str(&cfg, buf, len);
}

static size_t insp_tail_calls(const struct fi_image *im)
{
	size_t n = 0;

	for (size_t i = 0; i < im->ncalls; i++)
		n += im->calls[i].jmp;
	return n;
}

static size_t insp_no_endbr(const struct fi_image *im)
{
	size_t n = 0;

	for (size_t i = 0; i < im->nfuncs; i++)
		n += !im->funcs[i].endbr;
	return n;
}

/* Preambles whose arity the bytes do not tell (plain FineIBT, no BHI). */
static size_t insp_arity_unknown(const struct fi_image *im)
{
	size_t n = im->nfuncs;

	for (int a = 0; a <= FI_MAX_ARITY; a++)
		n -= im->arity_hist[a];
	return n;
}

static bool insp_nothing(const struct fi_image *im)
{
	return !im->nfuncs && !im->ncalls && !im->nbad && !im->ntraps;
}

static const char *insp_name(const struct fi_image *im, uint64_t addr)
{
	const struct fi_sym *s = fi_image_sym(im, addr);

	return s && s->addr == addr ? s->name : "?";
}

/* ---------------------------------------------------------------- text */

static void text_list(const struct fi_image *im)
{
	char sym[256];

	for (size_t i = 0; i < im->nfuncs; i++) {
		const struct fi_func *f = &im->funcs[i];

		fi_image_symbolize(im, f->addr, sym, sizeof(sym));
		printf("  preamble %#10" PRIx64 "  %-32s hash %#010x arity %d (%s) %s%s%s%s\n",
		       f->addr, sym, f->hash, f->arity,
		       f->arity < 0 ? "unknown" : fi_arity_reg_name(f->arity),
		       pre_form(f->form), insp_site_set(f->set), f->endbr ? "" : " no-endbr",
		       f->has_cfi_sym ? "" : " no-cfi-symbol");
	}
	for (size_t i = 0; i < im->ncalls; i++) {
		const struct fi_call *c = &im->calls[i];

		fi_image_symbolize(im, c->addr, sym, sizeof(sym));
		printf("  %-8s %#10" PRIx64 "  %-32s hash %#010x %s%s\n",
		       c->jmp ? "tailcall" : "call", c->addr, sym, c->hash,
		       call_form(c->form), insp_site_set(c->set));
	}
	for (size_t i = 0; i < im->ntcalls; i++) {
		const struct fi_tcall *t = &im->tcalls[i];

		fi_image_symbolize(im, t->addr, sym, sizeof(sym));
		printf("  %-8s %#10" PRIx64 "  %-32s no check, %s through %s\n",
		       "thunk", t->addr, sym, t->jmp ? "jmp" : "call",
		       insp_name(im, t->thunk));
	}
}

/* The hardening audit: one summary line, then one line per finding. */
static void text_audit(const struct insp_audit *a)
{
	if (!a->valid)
		return;
	printf("hardening:     RELRO %s%s; GOT %s; stack %s; %s\n",
	       insp_relro_name(a), a->bind_now ? " (BIND_NOW)" : "",
	       a->writable_got ? "writable" : "read-only",
	       a->exec_stack ? "executable" : "not executable",
	       a->textrel ? "text relocations" : "no text relocations");
	insp_audit_print(a, false);
}

static void text_summary(const struct fi_image *im, const char *mode)
{
	char sym[256], cfg[128], key[FI_KEY_HEX_LEN + 1];

	printf("%s: %s\n", im->path, insp_type(im));
	printf("mode:          %s\n", mode);
	printf("sequence set:  %s\n", insp_set(im) ? insp_set(im) :
	       "either (no site in a set's own form)");
	if (fi_image_kcfi_unprefixed(im))
		printf("layout:        %zu kCFI checks that cannot be rewritten: "
		       FI_UNPREFIXED_HINT "\n", im->ntraps);
	if (im->note.present && im->note.version != FI_NOTE_VERSION) {
		printf("patched:       record version %u, not readable by this "
		       "fineibt (it reads %u): patch the original again\n",
		       im->note.version, FI_NOTE_VERSION);
	} else if (im->note.present) {
		fineibt_config_str(&im->note.cfg, cfg, sizeof(cfg));
		printf("patched:       cfi=%s", cfg);
		if (im->note.cfg.flags & FINEIBT_F_RAND) {
			fi_key_hex(&im->note.key, key);
			printf(" key %s", key);
		}
		printf("\n");
	}
	printf("preambles:     %zu (without ENDBR: %zu; slots without hash: %zu)\n",
	       im->nfuncs, insp_no_endbr(im), im->nslots);
	printf("call sites:    %zu (tail calls: %zu)\n", im->ncalls, insp_tail_calls(im));
	printf("thunk calls without check: %zu\n", im->ntcalls);
	printf("arity:        ");
	for (int a = 0; a <= FI_MAX_ARITY; a++)
		printf(" %d(%s)=%zu", a, fi_arity_reg_name(a), im->arity_hist[a]);
	if (insp_arity_unknown(im))
		printf(" unknown=%zu", insp_arity_unknown(im));
	printf("\ntypeids:       %zu\n", im->ntypeids);
	for (size_t i = 0; i < im->ntypeids; i++)
		printf("  %#010x %s\n", im->typeids[i].hash, im->typeids[i].name);
	printf("naked ENDBRs:  %zu\n", im->nnaked);
	for (size_t i = 0; i < im->nnaked; i++)
		printf("  %#10" PRIx64 " %s\n", im->naked[i], insp_name(im, im->naked[i]));
	printf("unmatched:     %zu\n", im->nbad);
	for (size_t i = 0; i < im->nbad; i++) {
		fi_image_symbolize(im, im->bad[i].addr, sym, sizeof(sym));
		printf("  %s at %s (%#" PRIx64 ")\n", im->bad[i].what, sym, im->bad[i].addr);
	}
}

/* ---------------------------------------------------------------- json */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);	/* names are bytes: keep it ASCII */
		else
			putchar(c);
	}
	putchar('"');
}

static void json_key(const char *k, bool *first)
{
	printf("%s\n  ", *first ? "{" : ",");
	*first = false;
	json_str(k);
	printf(": ");
}

static void json_sites(const struct fi_image *im)
{
	char sym[256];

	printf("{\"preambles\": [");
	for (size_t i = 0; i < im->nfuncs; i++) {
		const struct fi_func *f = &im->funcs[i];

		fi_image_symbolize(im, f->addr, sym, sizeof(sym));
		printf("%s\n    {\"address\": \"%#" PRIx64 "\", \"symbol\": ", i ? "," : "", f->addr);
		json_str(sym);
		printf(", \"hash\": \"%#010x\", \"arity\": %d, \"form\": \"%s%s\", "
		       "\"endbr\": %s, \"cfi_symbol\": %s}", f->hash, f->arity,
		       pre_form(f->form), insp_site_set(f->set), f->endbr ? "true" : "false",
		       f->has_cfi_sym ? "true" : "false");
	}
	printf("],\n  \"calls\": [");
	for (size_t i = 0; i < im->ncalls; i++) {
		const struct fi_call *c = &im->calls[i];

		fi_image_symbolize(im, c->addr, sym, sizeof(sym));
		printf("%s\n    {\"address\": \"%#" PRIx64 "\", \"symbol\": ", i ? "," : "", c->addr);
		json_str(sym);
		printf(", \"hash\": \"%#010x\", \"tail\": %s, \"form\": \"%s%s\"}",
		       c->hash, c->jmp ? "true" : "false", call_form(c->form),
		       insp_site_set(c->set));
	}
	printf("],\n  \"thunk_calls\": [");
	for (size_t i = 0; i < im->ntcalls; i++) {
		const struct fi_tcall *t = &im->tcalls[i];

		fi_image_symbolize(im, t->addr, sym, sizeof(sym));
		printf("%s\n    {\"address\": \"%#" PRIx64 "\", \"symbol\": ", i ? "," : "", t->addr);
		json_str(sym);
		printf(", \"tail\": %s, \"register\": %d}", t->jmp ? "true" : "false", t->reg);
	}
	printf("]}");
}

static void json_lists(const struct fi_image *im)
{
	char sym[256];
	bool first = true;

	printf("[");
	for (size_t i = 0; i < im->nnaked; i++) {
		printf("%s{\"symbol\": ", i ? ", " : "");
		json_str(insp_name(im, im->naked[i]));
		printf(", \"address\": \"%#" PRIx64 "\"}", im->naked[i]);
	}
	printf("],\n  \"typeids\": [");
	for (size_t i = 0; i < im->ntypeids; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		json_str(im->typeids[i].name);
		printf(", \"hash\": \"%#010x\"}", im->typeids[i].hash);
	}
	printf("],\n  \"unmatched\": [");
	for (size_t i = 0; i < im->nbad; i++, first = false) {
		fi_image_symbolize(im, im->bad[i].addr, sym, sizeof(sym));
		printf("%s{\"what\": ", first ? "" : ", ");
		json_str(im->bad[i].what);
		printf(", \"address\": \"%#" PRIx64 "\", \"symbol\": ", im->bad[i].addr);
		json_str(sym);
		printf("}");
	}
	printf("]");
}

static void json_bool(const char *k, bool v, bool *first)
{
	json_key(k, first);
	printf("%s", v ? "true" : "false");
}

static void json_audit(const struct insp_audit *a, bool *first)
{
	if (!a->valid)
		return;
	json_key("relro", first);
	json_str(insp_relro_name(a));
	json_bool("bind_now", a->bind_now, first);
	json_bool("writable_got", a->writable_got, first);
	json_bool("exec_stack", a->exec_stack, first);
	json_bool("textrel", a->textrel, first);
	json_key("audit", first);
	printf("[");
	insp_audit_print(a, true);
	printf("]");
}

static void json_report(const struct fi_image *im, const char *mode, bool list,
			const struct insp_audit *a)
{
	char cfg[128], key[FI_KEY_HEX_LEN + 1];
	bool first = true;

	json_key("file", &first);
	json_str(im->path);
	json_key("type", &first);
	json_str(insp_type(im));
	json_key("mode", &first);
	json_str(mode);
	json_key("seq", &first);
	if (insp_set(im))
		json_str(insp_set(im));
	else
		printf("null");
	json_key("kcfi", &first);
	printf("%s", insp_nothing(im) ? "false" : "true");
	json_key("rewritable", &first);
	printf("%s", fi_image_kcfi_unprefixed(im) ? "false" : "true");
	json_key("patched", &first);
	printf("%s", im->note.present ? "true" : "false");
	if (im->note.present) {
		fineibt_config_str(&im->note.cfg, cfg, sizeof(cfg));
		json_key("patched_cfi", &first);
		json_str(cfg);
		json_key("key", &first);
		if (im->note.cfg.flags & FINEIBT_F_RAND) {
			fi_key_hex(&im->note.key, key);
			json_str(key);
		} else {
			printf("null");
		}
	}
	json_key("preambles", &first);
	printf("%zu", im->nfuncs);
	json_key("preambles_without_endbr", &first);
	printf("%zu", insp_no_endbr(im));
	json_key("slots_without_hash", &first);
	printf("%zu", im->nslots);
	json_key("call_sites", &first);
	printf("%zu", im->ncalls);
	json_key("tail_calls", &first);
	printf("%zu", insp_tail_calls(im));
	json_key("thunk_calls", &first);
	printf("%zu", im->ntcalls);
	json_key("arity", &first);
	for (int a = 0; a <= FI_MAX_ARITY; a++)
		printf("%s%zu", a ? ", " : "[", im->arity_hist[a]);
	printf("]");
	json_key("arity_unknown", &first);
	printf("%zu", insp_arity_unknown(im));
	json_key("naked_endbr", &first);
	json_lists(im);
	json_audit(a, &first);
	if (list) {
		json_key("sites", &first);
		json_sites(im);
	}
	printf("\n}\n");
}

/* ----------------------------------------------------------------- main */

static int insp_args(int argc, char **argv, struct insp_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o->json = true;
		} else if (!strcmp(argv[i], "--list")) {
			o->list = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "Error: inspect: unknown option '%s'; try 'fineibt inspect --help'\n",
				argv[i]);
			return 2;
		} else if (o->path) {
			fprintf(stderr, "Error: inspect: one FILE at a time\n");
			return 2;
		} else {
			o->path = argv[i];
		}
	}
	if (!o->path) {
		fprintf(stderr, "Error: inspect: no FILE; usage: fineibt inspect FILE [--json] [--list]\n");
		return 2;
	}
	return 0;
}

int cmd_inspect(int argc, char **argv)
{
	struct insp_opts o = { 0 };
	struct insp_audit audit;
	struct fi_image im;
	char err[256] = "", mode[128];
	int ret;

	ret = cmd_inspect_ext(argc, argv);	/* --diff, --pid */
	if (ret >= 0)
		return ret;
	ret = insp_args(argc, argv, &o);
	if (ret)
		return ret;
	ret = fi_image_open(&im, o.path, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "Error: %s: %s\n", o.path, err[0] ? err : "cannot read");
		return 1;
	}
	insp_mode(&im, mode, sizeof(mode));
	if (insp_audit(o.path, &audit))
		audit.valid = false;
	if (o.json) {
		json_report(&im, mode, o.list, &audit);
	} else if (insp_nothing(&im)) {
		printf("%s: no kCFI sites: nothing to do\n", o.path);
		text_audit(&audit);
	} else {
		text_summary(&im, mode);
		text_audit(&audit);
		if (o.list)
			text_list(&im);
	}
	fi_image_close(&im);
	return 0;
}
