/* SPDX-License-Identifier: MIT */
/*
 * How fast the rewriting passes run: fi_patch_image alone (not reading,
 * not writing the file), per mode, the median of RUNS runs, as sites per
 * second (sites = preambles + call sites + thunk calls of the image).
 * Before every run the text is restored from a pristine copy (not timed).
 *
 * Usage: patch_speed FILE [RUNS]     a kCFI ELF file (bench/patch_speed.sh)
 *        patch_speed --synthetic N [RUNS]
 *                                    an in-memory image of N functions and
 *                                    N call sites, built with the encoders
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "image.h"
#include "bench_util.h"
#include "patch.h"

#define MAX_RUNS 64

/* N functions (32 bytes each: preamble + endbr + ret) then N call sites. */
static int synth(struct fi_image *im, size_t n)
{
	const uint64_t base = 0x400000, calls = base + 32 * n;
	const uint64_t thunk = calls + FI_CALLSITE_SIZE * n;
	size_t size = 32 * n + FI_CALLSITE_SIZE * n + 16;
	struct fi_view *v = calloc(1, sizeof(*v));
	uint8_t *mem = malloc(size);
	struct fi_buf b;

	im->funcs = calloc(n, sizeof(*im->funcs));
	im->calls = calloc(n, sizeof(*im->calls));
	if (!v || !mem || !im->funcs || !im->calls)
		return -1;
	memset(mem, 0xcc, size);
	for (size_t i = 0; i < n; i++) {
		uint64_t f = base + 32 * i + 16;
		uint32_t h = (uint32_t)(i * 2654435761u) | 1;

		fi_buf_init(&b, mem + 32 * i, 20, f - 16);
		fi_emit_kcfi_preamble(&b, h, (int)(i % 8));
		fi_emit_seq(&b, &fi_seq_endbr64, 0);
		im->funcs[i] = (struct fi_func){ .addr = f, .hash = h,
			.arity = (int8_t)(i % 8), .form = FI_PRE_KCFI, .endbr = true };
		fi_buf_init(&b, mem + (calls - base) + FI_CALLSITE_SIZE * i,
			    FI_CALLSITE_SIZE, calls + FI_CALLSITE_SIZE * i);
		fi_emit_kcfi_caller(&b, h, i % 8 == 0, thunk);
		im->calls[i] = (struct fi_call){ .addr = calls + FI_CALLSITE_SIZE * i,
			.hash = h, .jmp = i % 8 == 0, .form = FI_CALL_KCFI };
	}
	*v = (struct fi_view){ .vaddr = base, .size = size, .mem = mem, .exec = true };
	im->path = "synthetic";
	im->views = v;
	im->nviews = 1;
	im->nfuncs = im->ncalls = n;
	im->thunks[11] = thunk;
	im->bhi_args = thunk - 0x1000;	/* any in-reach address will do */
	im->file = mem;
	im->file_size = size;
	return 0;
}

struct mode {
	const char *name;
	enum fineibt_mode mode;
	unsigned int flags;
};

static const struct mode modes[] = {
	{ "off", FINEIBT_MODE_OFF, 0 },
	{ "kcfi", FINEIBT_MODE_KCFI, FINEIBT_F_RAND },
	{ "fineibt", FINEIBT_MODE_FINEIBT, FINEIBT_F_RAND },
	{ "fineibt,paranoid", FINEIBT_MODE_FINEIBT, FINEIBT_F_RAND | FINEIBT_F_PARANOID },
	{ "fineibt,paranoid,bhi", FINEIBT_MODE_FINEIBT,
	  FINEIBT_F_RAND | FINEIBT_F_PARANOID | FINEIBT_F_BHI },
};

static int bench_mode(struct fi_image *im, const uint8_t *pristine,
		      const struct mode *m, int runs)
{
	struct fi_patch_opts o = {
		.cfg = { m->mode, m->flags }, .key = { { 0x9e, 0x37, 0x79, 0xb9 } },
		.bhi_args = im->bhi_args, .dethunk = true, .quiet = true,
	};
	size_t sites = im->nfuncs + im->ncalls + im->ntcalls;
	struct fi_patch_stats st;
	double t[MAX_RUNS], w[MAX_RUNS];

	if ((m->flags & FINEIBT_F_BHI) && !im->bhi_args)
		return 0;
	for (int r = 0; r < runs; r++) {
		double t0, w0;
		int err;

		memcpy(im->file, pristine, im->file_size);
		/* Thread CPU time and wall clock: on a shared machine the wall
		 * clock also counts the time other processes held the core. */
		w0 = bench_now(CLOCK_MONOTONIC);
		t0 = bench_now(CLOCK_THREAD_CPUTIME_ID);
		err = fi_patch_image(im, &o, &st);
		t[r] = bench_now(CLOCK_THREAD_CPUTIME_ID) - t0;
		w[r] = bench_now(CLOCK_MONOTONIC) - w0;
		if (err) {
			fprintf(stderr, "%s: fi_patch_image: %d\n", m->name, err);
			return 1;
		}
	}
	double med = bench_median(t, runs), wmed = bench_median(w, runs);

	printf("%-22s %7zu sites  cpu %7.3f ms = %5.1f M sites/s  wall %7.3f ms = %5.1f M/s"
	       "  (%zu pre, %zu call, %zu deth, %zu skip)\n",
	       m->name, sites, med * 1e3, sites / med / 1e6, wmed * 1e3,
	       sites / wmed / 1e6, st.preambles, st.callers, st.dethunked, st.skipped);
	return 0;
}

int main(int argc, char **argv)
{
	struct fi_image im = { 0 };
	int runs = 9, ret = 0;
	uint8_t *pristine;
	char err[256];

	if (argc >= 3 && !strcmp(argv[1], "--synthetic")) {
		if (synth(&im, strtoul(argv[2], NULL, 0)))
			return 1;
		if (argc > 3)
			runs = atoi(argv[3]);
	} else if (argc >= 2) {
		if (fi_image_open(&im, argv[1], err, sizeof(err))) {
			fprintf(stderr, "Error: %s: %s\n", argv[1], err);
			return 1;
		}
		if (argc > 2)
			runs = atoi(argv[2]);
	} else {
		fprintf(stderr, "usage: patch_speed FILE [RUNS] | --synthetic N [RUNS]\n");
		return 2;
	}
	if (runs < 1 || runs > MAX_RUNS)
		runs = 9;
	pristine = malloc(im.file_size);
	if (!pristine)
		return 1;
	memcpy(pristine, im.file, im.file_size);
	printf("%s: %zu preambles, %zu call sites, %zu thunk calls; median of %d runs\n",
	       im.path, im.nfuncs, im.ncalls, im.ntcalls, runs);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]) && !ret; i++)
		ret = bench_mode(&im, pristine, &modes[i], runs);
	free(pristine);
	return ret;
}
