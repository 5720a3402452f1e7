/* SPDX-License-Identifier: MIT */
/*
 * fineibt patch: rewrite a kCFI-built ELF file into one cfi= mode and write
 * the result, with a .fineibt section recording what was done, to a new
 * file. The input is only read; the output appears atomically or not at all.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fineibt.h"
#include "image.h"
#include "options.h"
#include "patch.h"
#include "elfwrite.h"
#include "noteenc.h"
#include "cli.h"

struct patch_args {
	const char *in, *out, *cfi, *key, *seq;
	bool in_place, no_dethunk, quiet;
};

int cmd_patch_help(void)
{
	printf("Usage: fineibt patch FILE -o OUT [--cfi=LIST] [--seq=SET] [--key HEX] [--no-dethunk] [-q]\n"
	       "       fineibt patch FILE --in-place [--cfi=LIST] ...\n\n"
	       "Rewrite the kCFI sequences of FILE (built with clang -fsanitize=kcfi)\n"
	       "into the cfi= mode LIST and write the result to OUT, with a .fineibt\n"
	       "section recording the mode, flags and key. FILE is never modified\n"
	       "(--in-place puts a new file in its name).\n\n"
	       "  -o, --output OUT   where to write (must not be FILE)\n"
	       "  --cfi=LIST         cfi= words (fineibt-cfi(7)): auto (default: kcfi\n"
	       "                     without user IBT, fineibt,paranoid with it), off,\n"
	       "                     kcfi, fineibt, paranoid, bhi, norand, warn; an\n"
	       "                     unknown word is a usage error (exit 2)\n"
	       "  --seq=SET          sequence set: v4 (default) or v6.18 (fineibt-cfi(7))\n"
	       "  --key HEX          rehash key, 32 hex digits (128 bits; default: random);\n"
	       "                     for reproducible output\n"
	       "  --in-place         replace FILE (atomically, through a new file;\n"
	       "                     not with -o)\n"
	       "  --no-dethunk       keep 'cs call __x86_indirect_thunk_*' calls\n"
	       "  -q, --quiet        no summary, no per-site warnings\n\n"
	       "A file already patched is refused: patch the original kCFI build.\n"
	       "bhi needs the __bhi_args stubs linked into FILE (fineibt-cc\n"
	       "-static-fineibt does; its default link has them in libfineibt.so).\n"
	       "Exit status: 0 written, 1 failed (nothing written), 2 usage error.\n");
	return 0;
}

/* --cfi, --seq and --key are checked here, before any file is read. */
static int patch_check_words(const struct patch_args *a)
{
	struct fineibt_config cfg;
	struct fineibt_key key;
	char msgs[2048], bad[64], words[256];

	if (a->cfi && fi_parse_cfi_cli(a->cfi, true, &cfg, msgs, sizeof(msgs),
				       bad, sizeof(bad)) < 0) {
		fi_cfi_word_list(words, sizeof(words));
		return cli_usage("patch", "--cfi: unknown word '%s' (valid: %s)",
				 bad, words);
	}
	if (a->seq && fi_seq_apply(a->seq, strlen(a->seq), &cfg) < 0)
		return cli_usage("patch", "--seq: unknown sequence set '%s' (v4, v6.18)",
				 a->seq);
	if (a->key && fi_key_parse(a->key, &key))
		return cli_usage("patch", "--key '%s': want 32 hex digits (128 bits)",
				 a->key);
	return 0;
}

/* 0: go on; CLI_USAGE; -1: --help was printed. */
static int patch_parse(int argc, char **argv, struct patch_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "cfi", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "seq", required_argument, NULL, 'S' },
		{ "in-place", no_argument, NULL, 'i' },
		{ "no-dethunk", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	cli_getopt_reset();
	while ((c = cli_getopt("patch", argc, argv, "o:qh", opts)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'c': a->cfi = optarg; break;
		case 'k': a->key = optarg; break;
		case 's':
			return cli_usage("patch", "--seed: the rehash key has 128 bits "
					 "now; pass --key with 32 hex digits");
		case 'S': a->seq = optarg; break;
		case 'i': a->in_place = true; break;
		case 'n': a->no_dethunk = true; break;
		case 'q': a->quiet = true; break;
		case 'h': cmd_patch_help(); return -1;
		default: return CLI_USAGE;
		}
	}
	if (optind != argc - 1)
		return cli_usage("patch", optind < argc ? "one FILE at a time" : "no FILE");
	a->in = argv[optind];
	/* Both would leave FILE as it was while the user asked to replace it. */
	if (a->out && a->in_place)
		return cli_usage("patch", "-o OUT and --in-place do not go together");
	if (a->in_place)
		a->out = a->in;
	if (!a->out)
		return cli_usage("patch", "no -o OUT (or --in-place)");
	return patch_check_words(a);
}

/* OUT must not be FILE (by name or by inode) unless --in-place. */
static int patch_check_paths(const struct patch_args *a, const struct stat *in)
{
	struct stat out;

	if (a->in_place)
		return 0;
	if (!strcmp(a->in, a->out) ||
	    (!stat(a->out, &out) && out.st_dev == in->st_dev &&
	     out.st_ino == in->st_ino)) {
		cli_error("%s: output is the input file; use --in-place to replace it",
			a->out);
		return -1;
	}
	return 0;
}

static void patch_already(const char *path, const struct fineibt_config *cfg)
{
	char mode[64] = "mixed";

	if (cfg)
		cli_mode_str(cfg, mode, sizeof(mode));
	cli_error("%s: already patched (mode %s); patch the original kCFI build",
		path, mode);
}

static bool patch_have_arity(const struct fi_image *im)
{
	for (int i = 1; i <= FI_MAX_ARITY; i++) {
		if (im->arity_hist[i])
			return true;
	}
	return false;
}

static size_t patch_kcfi_funcs(const struct fi_image *im)
{
	size_t n = 0;

	for (size_t i = 0; i < im->nfuncs; i++)
		n += im->funcs[i].form != FI_PRE_NONE;
	return n;
}

/* The options from --cfi and --key, checked against what the image holds. */
static int patch_options(const struct patch_args *a, const struct fi_image *im,
			 struct fi_patch_opts *o)
{
	char msgs[2048], bad[64];

	/* The words were checked by patch_check_words. */
	if (fi_parse_cfi_cli(a->cfi ? a->cfi : "auto", patch_have_arity(im),
			     &o->cfg, msgs, sizeof(msgs), bad, sizeof(bad)) < 0)
		return -1;
	if (msgs[0])
		fputs(msgs, stderr);
	if (a->seq && fi_seq_apply(a->seq, strlen(a->seq), &o->cfg) < 0)
		return -1;
	/* Start-up diagnostics are the runtime's business, not the file's. */
	o->cfg.flags &= ~FINEIBT_F_DEBUG;
	fineibt_resolve_auto(&o->cfg);
	if ((o->cfg.flags & FINEIBT_F_BHI) && !im->bhi_args) {
		cli_error("%s: cfi=bhi needs the BHI stubs (__bhi_args) in the image: "
			"link the program with the static runtime "
			"(fineibt-cc -static-fineibt) or drop bhi", a->in);
		return -1;
	}
	if (a->key) {
		if (fi_key_parse(a->key, &o->key))
			return -1;
	} else if (fineibt_random_key(&o->key)) {
		cli_error("cannot draw a random key (getrandom failed); pass --key HEX");
		return -1;
	}
	o->bhi_args = im->bhi_args;
	o->dethunk = !a->no_dethunk;
	/* Calls without a check keep their thunks' coarse check (but in off). */
	o->coarse = fi_patch_coarse(im, &o->cfg);
	o->quiet = a->quiet;
	return 0;
}

static void patch_summary(const struct patch_args *a, const struct fi_patch_opts *o,
			  const struct fi_patch_stats *st)
{
	char mode[64], key[FI_KEY_HEX_LEN + 1];

	cli_mode_str(&o->cfg, mode, sizeof(mode));
	fprintf(stderr, "fineibt: %s -> %s: cfi=%s", a->in, a->out, mode);
	if (o->cfg.flags & FINEIBT_F_RAND) {
		fi_key_hex(&o->key, key);
		fprintf(stderr, " key=%s", key);
	}
	fprintf(stderr, ": %zu preambles, %zu call sites rewritten; %zu indirect "
		"calls de-thunked; %zu ENDBR poisoned; %zu BHI calls, %zu arity-1 "
		"inline; %zu skipped\n",
		st->preambles, st->callers, st->dethunked, st->poisoned, st->bhi,
		st->bhi_inline, st->skipped);
}

/* Open, check, patch and write; the image is closed by the caller. */
static int patch_run(const struct patch_args *a, const struct stat *in,
		     struct fi_image *im)
{
	struct fi_patch_opts o = { 0 };
	struct fi_patch_stats st;
	struct fineibt_config now;
	char err[256];
	int ret;

	ret = fi_image_open(im, a->in, err, sizeof(err));
	if (ret) {
		cli_error("%s: %s", a->in, err[0] ? err : strerror(-ret));
		return 1;
	}
	if (im->note.present) {
		patch_already(a->in, &im->note.cfg);
		return 1;
	}
	if (fi_image_kcfi_unprefixed(im)) {
		cli_error("%s: %zu kCFI checks in a layout that cannot be rewritten: "
			FI_UNPREFIXED_HINT "", a->in, im->ntraps);
		return 1;
	}
	if (!patch_kcfi_funcs(im) && !im->ncalls) {
		cli_error("%s: no kCFI sites (no kCFI preamble and no call site matching the kCFI pattern): "
			"build it with clang -fsanitize=kcfi (fineibt-cc does)", a->in);
		return 1;
	}
	if (patch_options(a, im, &o))
		return 1;
	ret = fi_patch_image(im, &o, &st);
	if (ret == -EALREADY) {
		patch_already(a->in, fi_image_mode(im, &now) < 0 ? NULL : &now);
		return 1;
	}
	if (ret) {
		cli_error("%s: cannot patch: %s", a->in, strerror(-ret));
		return 1;
	}
	ret = fi_image_write_file(im, &o, &st, a->out, in->st_mode & 0777,
				  err, sizeof(err));
	if (ret) {
		cli_error("%s: %s", a->out, err);
		return 1;
	}
	if (!a->quiet)
		patch_summary(a, &o, &st);
	return 0;
}

int cmd_patch(int argc, char **argv)
{
	struct patch_args a = { 0 };
	struct fi_image im = { 0 };
	struct stat in;
	int ret;

	ret = patch_parse(argc, argv, &a);
	if (ret)
		return ret > 0 ? ret : CLI_OK;
	if (stat(a.in, &in)) {
		cli_error("%s: %s", a.in, strerror(errno));
		return 1;
	}
	if (patch_check_paths(&a, &in))
		return 1;
	ret = patch_run(&a, &in, &im);
	fi_image_close(&im);
	return ret;
}
