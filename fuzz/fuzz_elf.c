/* SPDX-License-Identifier: MIT */
/*
 * The ELF reader and site discovery on arbitrary bytes: fi_image_from_buffer
 * and every lookup a caller makes on the parsed image (symbols, funcs,
 * traps, mode), over every address the image reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image.h"

static void fuzz_lookups(const struct fi_image *im)
{
	struct fineibt_config cfg;
	char sym[128];

	fi_image_mode(im, &cfg);
	for (size_t i = 0; i < im->nfuncs; i++) {
		uint64_t a = im->funcs[i].addr;

		fi_image_func(im, a);
		fi_image_symbolize(im, a, sym, sizeof(sym));
		fi_image_ptr(im, a - 16, 20);
		fi_image_text(im, a - 16, 20);
	}
	for (size_t i = 0; i < im->ncalls; i++) {
		fi_image_is_trap(im, im->calls[i].addr + 12);
		fi_image_symbolize(im, im->calls[i].addr, sym, 8);
	}
	for (size_t i = 0; i < im->nsyms; i++)
		fi_image_sym(im, im->syms[i].addr + im->syms[i].size);
	for (size_t i = 0; i < im->nnaked; i++)
		fi_image_symbolize(im, im->naked[i], sym, sizeof(sym));
	for (size_t i = 0; i < im->nbad; i++)
		fi_image_symbolize(im, im->bad[i].addr, sym, sizeof(sym));
	for (size_t i = 0; i < im->ntypeids; i++)
		snprintf(sym, sizeof(sym), "%s", im->typeids[i].name);
	fi_image_sym(im, 0);
	fi_image_sym(im, UINT64_MAX);
	fi_image_ptr(im, UINT64_MAX - 3, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fi_image im;
	char err[256];
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	fuzz_silence();
	memcpy(buf, data, size);
	/* The image owns @buf from here, on success and on error. */
	if (fi_image_from_buffer(&im, "fuzz", buf, size, err, sizeof(err)))
		return 0;
	fuzz_lookups(&im);
	fi_image_close(&im);
	return 0;
}
