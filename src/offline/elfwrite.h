/* SPDX-License-Identifier: MIT */
/* Writing a patched ELF file (src/offline/elfwrite.c): `fineibt patch` only. */
#ifndef FI_ELFWRITE_H
#define FI_ELFWRITE_H

#include <stddef.h>

#include "patch.h"

/*
 * Write a statically patched copy of @im (whose file buffer the passes have
 * rewritten) to @out, with a .fineibt section recording @o and @st's
 * counts (@st may be NULL), atomically (temporary file in @out's directory,
 * fsync, rename), with @mode permission bits. On error nothing is left at
 * @out (an existing @out is untouched) and @err holds a one-line reason.
 */
int fi_image_write_file(struct fi_image *im, const struct fi_patch_opts *o,
			const struct fi_patch_stats *st,
			const char *out, unsigned int mode,
			char *err, size_t errlen);

#endif /* FI_ELFWRITE_H */
