/* SPDX-License-Identifier: MIT */
/*
 * The passes and the writer on arbitrary bytes: parse, fi_patch_image in a
 * mode picked by the input's last byte, then fi_image_write_file into a
 * private temporary directory, and re-read what was written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "image.h"
#include "patch.h"
#include "elfwrite.h"

static char dir[64], out[96];

/* The directory goes when the run ends (libFuzzer exits through exit()). */
static void fuzz_patch_cleanup(void)
{
	unlink(out);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

	snprintf(dir, sizeof(dir), "%s/fi-fuzz-patch.XXXXXX", base);
	if (!mkdtemp(dir))
		abort();
	snprintf(out, sizeof(out), "%s/out", dir);
	atexit(fuzz_patch_cleanup);
	fuzz_silence();
	return 0;
}

/*
 * Options from the input's last byte: bits 0-1 mode (off, kcfi, fineibt,
 * fineibt), 2 rand, 3 warn, 4 paranoid, 5 bhi, 6 dethunk, 7 pretend the
 * BHI stubs are at the start of the first view (reach checks).
 */
static void pick(uint8_t sel, const struct fi_image *im,
		 struct fi_patch_opts *o)
{
	static const enum fineibt_mode modes[] = {
		FINEIBT_MODE_OFF, FINEIBT_MODE_KCFI, FINEIBT_MODE_FINEIBT,
		FINEIBT_MODE_FINEIBT,
	};

	memset(o, 0, sizeof(*o));
	o->cfg.mode = modes[sel & 3];
	o->cfg.flags = (sel & 4 ? FINEIBT_F_RAND : 0) |
		       (sel & 8 ? FINEIBT_F_WARN : 0);
	if (o->cfg.mode == FINEIBT_MODE_FINEIBT)
		o->cfg.flags |= (sel & 16 ? FINEIBT_F_PARANOID : 0) |
				(sel & 32 ? FINEIBT_F_BHI : 0);
	memset(&o->key, 0, sizeof(o->key));
	o->key.bytes[0] = (uint8_t)sel;
	o->key.bytes[15] = 0x9e;
	o->dethunk = sel & 64;
	o->quiet = !(sel & 1);
	o->bhi_args = im->bhi_args;
	if (!o->bhi_args && (sel & 128) && im->nviews)
		o->bhi_args = im->views[0].vaddr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fi_patch_opts o;
	struct fi_patch_stats st;
	struct fi_image im;
	char err[256];
	uint8_t *buf;

	if (!size || !(buf = malloc(size)))
		return 0;
	memcpy(buf, data, size);
	if (fi_image_from_buffer(&im, "fuzz", buf, size, err, sizeof(err)))
		return 0;
	pick(data[size - 1], &im, &o);
	if (!fi_patch_image(&im, &o, &st) &&
	    !fi_image_write_file(&im, &o, &st, out, 0600, err, sizeof(err))) {
		struct fi_image again;

		/* What we wrote must read back, and be refused a second time. */
		if (!fi_image_open(&again, out, err, sizeof(err))) {
			if (fi_patch_image(&again, &o, NULL) == 0 &&
			    again.note.present)
				abort();
			fi_image_close(&again);
		}
		unlink(out);
	}
	fi_image_close(&im);
	return 0;
}
