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
#include <stdlib.h>
#include <string.h>

#include "fineibt.h"
#include "image.h"
#include "note.h"
#include "noteenc.h"
#include "cli.h"

struct insp_opts {
	const char *path, *path_b;	/* FILE, or --diff A B */
	int pid;			/* --pid PID, else 0 */
	bool json, list, diff;
};

int cmd_inspect_help(void)
{
	printf("Usage: fineibt inspect FILE [--json] [--list]\n"
	       "       fineibt inspect --diff A B [--list] [--json]\n"
	       "       fineibt inspect --pid PID [--json]\n"
	       "  Report the kCFI/FineIBT sites of an ELF executable or shared object:\n"
	       "  the mode its sequences are in (and what 'fineibt patch' recorded),\n"
	       "  preambles, call sites, tail calls, thunk calls without a check, the\n"
	       "  arity histogram, __kcfi_typeid_ types, naked ENDBRs (function entries\n"
	       "  with ENDBR but no hash check) and sites that do not match; then the\n"
	       "  hardening audit: RELRO, BIND_NOW, writable GOT, executable stack,\n"
	       "  text relocations and a setuid/setgid file's RUNPATH that others can\n"
	       "  change, one 'audit:' line per hole no CFI check covers.\n"
	       "  --list  also list every site: address, symbol+offset, hash, arity/form\n"
	       "  --json  one JSON object on stdout (fields: fineibt(1), inspect)\n"
	       "  --diff A B  what changed between two images (a kCFI build and its\n"
	       "              patched copy, or two builds)\n"
	       "  --pid PID   the kCFI modules of a running process, from its memory\n"
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
	for (size_t i = 0; i < im->nscalls; i++) {
		const struct fi_scall *c = &im->scalls[i];

		fi_image_symbolize(im, c->addr, sym, sizeof(sym));
		printf("  %-8s %#10" PRIx64 "  %-32s hash %#010x stock (load "
		       "target-%d, register %d)%s\n",
		       c->s.jmp ? "tailcall" : "call", c->addr, sym, c->s.hash,
		       c->s.load, c->s.reg, c->s.off ? " off" : "");
	}
	for (size_t i = 0; i < im->ntcalls; i++) {
		const struct fi_tcall *t = &im->tcalls[i];

		fi_image_symbolize(im, t->addr, sym, sizeof(sym));
		printf("  %-8s %#10" PRIx64 "  %-32s no check, %s through %s\n",
		       "thunk", t->addr, sym, t->jmp ? "jmp" : "call",
		       insp_name(im, t->thunk));
	}
}

/*
 * A stock kCFI module (docs/compat.md, "Stock kCFI modules"): what the
 * runtime does with it, and why.
 */
static void text_stock(const struct fi_image *im)
{
	const char *why = fi_image_stock_refused(im);
	size_t pre = 0;

	for (size_t i = 0; i < im->nfuncs; i++)
		pre += im->funcs[i].stock;
	if (why) {
		printf("stock kCFI:    %zu kCFI checks left as compiled at load "
		       "time: %s; its indirect calls into rewritten code trap\n",
		       im->ntraps, why);
		return;
	}
	printf("stock kCFI:    %zu call sites through any register, %zu "
	       "preambles with the hash at func-4 (clang -fsanitize=kcfi "
	       "without fineibt-cc's flags): rewritten at load time, in every "
	       "mode, sites kept as caller checks (no FineIBT or paranoid "
	       "caller fits them)\n", im->nscalls, pre);
	if (im->ntypeids)
		printf("stock kCFI:    its pointers to the %zu typeid functions "
		       "below get typed veneers where the loader binds them to "
		       "uninstrumented code\n", im->ntypeids);
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
	struct fineibt_config load;
	bool have_load = insp_load_cfg(im, &load);
	char at_load[256], verdict[256];

	insp_load_str(im, at_load, sizeof(at_load));
	printf("%s: %s\n", im->path, insp_type(im));
	printf("mode:          %s%s\n", mode, at_load[0] ? " (on disk)" : "");
	if (at_load[0])
		printf("at load:       %s\n", at_load);
	printf("sequence set:  %s\n", insp_set(im) ? insp_set(im) :
	       im->note.present ? "v4 and v6.18 alike (these sites keep the "
	       "compiler's bytes, the same in both)" :
	       "none yet: the compiler's kCFI form is the same in v4 and v6.18; "
	       "the runtime writes FINEIBT_SEQ's set (unset: v4)");
	if (fi_image_stock(im))
		text_stock(im);
	else if (fi_image_kcfi_unprefixed(im))
		printf("layout:        %zu kCFI checks that cannot be rewritten: "
		       FI_UNPREFIXED_HINT "\n", im->ntraps);
	if (im->note.present && im->note.version != FI_NOTE_VERSION) {
		printf("patched:       record version %u, not readable by this "
		       "fineibt (it reads %u): patch the original again\n",
		       im->note.version, FI_NOTE_VERSION);
	} else if (im->note.present) {
		cli_mode_str(&im->note.cfg, cfg, sizeof(cfg));
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
	printf("thunk calls without check: %zu%s\n", im->ntcalls,
	       !im->ntcalls ? "" : fi_image_coarse_thunks(im) ?
	       " (coarse check in the thunks: any known function entry)" :
	       " (unchecked: the module's thunks have no coarse check)");
	printf("arity:        ");
	for (int a = 0; a <= FI_MAX_ARITY; a++)
		printf(" %d(%s)=%zu", a, fi_arity_reg_name(a), im->arity_hist[a]);
	if (insp_arity_unknown(im))
		printf(" unknown=%zu", insp_arity_unknown(im));
	printf("\ntypeids:       %zu\n", im->ntypeids);
	for (size_t i = 0; i < im->ntypeids; i++)
		printf("  %#010x %s\n", im->typeids[i].hash, im->typeids[i].name);
	printf("naked ENDBRs:  %zu", im->nnaked);
	if (im->nnaked && have_load) {
		insp_naked_verdict(&load, verdict, sizeof(verdict));
		printf(" (entries with ENDBR and no hash check; %s)", verdict);
	}
	printf("\n");
	for (size_t i = 0; i < im->nnaked; i++) {
		const char *why = insp_naked_origin(im, im->naked[i]);

		printf("  %#10" PRIx64 " %s%s%s%s\n", im->naked[i],
		       insp_name(im, im->naked[i]), why ? " (" : "", why ? why : "",
		       why ? ")" : "");
	}
	printf("unmatched:     %zu\n", im->nbad);
	for (size_t i = 0; i < im->nbad; i++) {
		fi_image_symbolize(im, im->bad[i].addr, sym, sizeof(sym));
		printf("  %s at %s (%#" PRIx64 ")\n", im->bad[i].what, sym, im->bad[i].addr);
	}
}

/* ---------------------------------------------------------------- json */

static void json_key(const char *k, bool *first)
{
	printf("%s\n  ", *first ? "{" : ",");
	*first = false;
	cli_json_str(k);
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
		cli_json_str(sym);
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
		cli_json_str(sym);
		printf(", \"hash\": \"%#010x\", \"tail\": %s, \"form\": \"%s%s\"}",
		       c->hash, c->jmp ? "true" : "false", call_form(c->form),
		       insp_site_set(c->set));
	}
	printf("],\n  \"thunk_calls\": [");
	for (size_t i = 0; i < im->ntcalls; i++) {
		const struct fi_tcall *t = &im->tcalls[i];

		fi_image_symbolize(im, t->addr, sym, sizeof(sym));
		printf("%s\n    {\"address\": \"%#" PRIx64 "\", \"symbol\": ", i ? "," : "", t->addr);
		cli_json_str(sym);
		printf(", \"tail\": %s, \"register\": %d}", t->jmp ? "true" : "false", t->reg);
	}
	printf("]}");
}

static void json_lists(const struct fi_image *im)
{
	char sym[256];
	bool first = true;

	struct fineibt_config load;
	bool have_load = insp_load_cfg(im, &load);

	printf("[");
	for (size_t i = 0; i < im->nnaked; i++) {
		const char *why = insp_naked_origin(im, im->naked[i]);

		printf("%s{\"symbol\": ", i ? ", " : "");
		cli_json_str(insp_name(im, im->naked[i]));
		printf(", \"address\": \"%#" PRIx64 "\", \"origin\": ", im->naked[i]);
		if (why)
			cli_json_str(why);
		else
			printf("null");
		printf(", \"matters_at_load\": %s}", !have_load ? "null" :
		       insp_naked_matters(&load) ? "true" : "false");
	}
	printf("],\n  \"typeids\": [");
	for (size_t i = 0; i < im->ntypeids; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		cli_json_str(im->typeids[i].name);
		printf(", \"hash\": \"%#010x\"}", im->typeids[i].hash);
	}
	printf("],\n  \"unmatched\": [");
	for (size_t i = 0; i < im->nbad; i++, first = false) {
		fi_image_symbolize(im, im->bad[i].addr, sym, sizeof(sym));
		printf("%s{\"what\": ", first ? "" : ", ");
		cli_json_str(im->bad[i].what);
		printf(", \"address\": \"%#" PRIx64 "\", \"symbol\": ", im->bad[i].addr);
		cli_json_str(sym);
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
	cli_json_str(insp_relro_name(a));
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
	struct fineibt_config load;
	char cfg[128], lmode[128], key[FI_KEY_HEX_LEN + 1];
	bool first = true;

	json_key("file", &first);
	cli_json_str(im->path);
	json_key("type", &first);
	cli_json_str(insp_type(im));
	json_key("mode", &first);
	cli_json_str(mode);
	json_key("mode_at_load", &first);
	if (insp_load_cfg(im, &load)) {
		cli_mode_str(&load, lmode, sizeof(lmode));
		cli_json_str(lmode);
	} else {
		printf("null");
	}
	json_key("runtime", &first);
	printf("%s", insp_has_runtime(im) ? "true" : "false");
	json_key("seq", &first);
	if (insp_set(im))
		cli_json_str(insp_set(im));
	else
		printf("null");
	json_key("kcfi", &first);
	printf("%s", insp_nothing(im) ? "false" : "true");
	json_key("rewritable", &first);
	printf("%s", fi_image_kcfi_unprefixed(im) ? "false" : "true");
	json_key("stock", &first);
	printf("%s", fi_image_stock(im) ? "true" : "false");
	json_key("stock_sites", &first);
	printf("%zu", im->nscalls);
	json_key("stock_refused", &first);
	if (fi_image_stock_refused(im))
		cli_json_str(fi_image_stock_refused(im));
	else
		printf("null");
	json_key("patched", &first);
	printf("%s", im->note.present ? "true" : "false");
	if (im->note.present) {
		cli_mode_str(&im->note.cfg, cfg, sizeof(cfg));
		json_key("patched_cfi", &first);
		cli_json_str(cfg);
		json_key("key", &first);
		if (im->note.cfg.flags & FINEIBT_F_RAND) {
			fi_key_hex(&im->note.key, key);
			cli_json_str(key);
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
	json_bool("coarse_thunks", fi_image_coarse_thunks(im), &first);
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

/*
 * The three forms share one parser: FILE; --diff A B; --pid PID. Returns
 * 0, CLI_USAGE, or -1 after --help.
 */
static int insp_args(int argc, char **argv, struct insp_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{ "diff", no_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, want;
	char *end;
	long pid;

	cli_getopt_reset();
	while ((c = cli_getopt("inspect", argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'l': o->list = true; break;
		case 'd': o->diff = true; break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || end == optarg || pid <= 0 || pid > INT32_MAX)
				return cli_usage("inspect", "--pid needs a process id, got '%s'",
						 optarg);
			o->pid = (int)pid;
			break;
		case 'h': cmd_inspect_help(); return -1;
		default: return CLI_USAGE;
		}
	}
	if (o->diff && o->pid)
		return cli_usage("inspect", "--diff and --pid do not go together");
	if (o->pid && o->list)
		return cli_usage("inspect", "--list does not go with --pid");
	want = o->diff ? 2 : o->pid ? 0 : 1;
	if (argc - optind != want)
		return cli_usage("inspect", "%s",
				 o->diff ? "--diff needs two files, A and B" :
				 o->pid ? "--pid takes no FILE" :
				 optind < argc ? "one FILE at a time" : "no FILE");
	o->path = want > 0 ? argv[optind] : NULL;
	o->path_b = want > 1 ? argv[optind + 1] : NULL;
	return 0;
}

int cmd_inspect(int argc, char **argv)
{
	struct insp_opts o = { 0 };
	struct insp_audit audit;
	struct fi_image im;
	char err[256] = "", mode[128];
	int ret;

	ret = insp_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? CLI_OK : ret;
	if (o.diff)
		return insp_diff(o.path, o.path_b, o.list, o.json);
	if (o.pid)
		return insp_pid(o.pid, o.json);
	ret = fi_image_open(&im, o.path, err, sizeof(err));
	if (ret) {
		cli_error("%s: %s", o.path, err[0] ? err : "cannot read");
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
