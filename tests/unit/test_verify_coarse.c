/* SPDX-License-Identifier: MIT */
/*
 * The coarse check's bitmap as fi_rt_verify_module (src/rt/rtverify.c)
 * checks it before a module's record is trusted: every set bit must be
 * one of the record's function entries, or, in FineIBT modes, the
 * preamble 16 bytes before one; a bit anywhere else (which would let an
 * unchecked call reach those 16 bytes) makes the record refused. The
 * record here is laid out by hand over a read-execute page, as a
 * registered copy is: functions at +0x40, +0x100, +0x200.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "runtime.h"

static struct {
	struct fi_module m;
	uint32_t off[3];
	uint64_t bits[4];	/* 4096 bytes of text, one bit per 16 */
} rec;
static int key;

static int verify(enum fineibt_mode mode, const unsigned int *bit, size_t n)
{
	memset(rec.bits, 0, sizeof(rec.bits));
	for (size_t i = 0; i < n; i++)
		rec.bits[bit[i] / 64] |= 1ull << (bit[i] % 64);
	rec.m.cfg.mode = mode;
	return fi_rt_verify_module(&rec.m, sizeof(rec), &key, false, 0, 0);
}

int main(void)
{
	uint8_t *text = fi_test_text(4096);
	static const unsigned int funcs[] = { 4, 16, 32 };
	static const unsigned int between[] = { 4, 5, 16, 32 };
	static const unsigned int below[] = { 0, 4, 16, 32 };
	static const unsigned int above[] = { 4, 16, 32, 33 };
	static const unsigned int pre[] = { 3, 4, 15, 16, 31, 32 };
	static const unsigned int pre2[] = { 2, 4 };

	if (!CHECK("coarse verify: text", text))
		return fi_check_exit();
	rec.m.text_lo = (uint64_t)(uintptr_t)text;
	rec.m.text_hi = rec.m.text_lo + 4096;
	rec.m.func_base = rec.m.text_lo;
	rec.off[0] = 0x40;
	rec.off[1] = 0x100;
	rec.off[2] = 0x200;
	rec.m.func_off = rec.off;
	rec.m.nfunc = 3;
	rec.m.coarse_bits = rec.bits;
	rec.m.key = &key;

	CHECK("coarse verify: no bit", verify(FINEIBT_MODE_KCFI, NULL, 0) == 0);
	CHECK("coarse verify: the functions",
	      verify(FINEIBT_MODE_KCFI, funcs, 3) == 0);
	CHECK("coarse verify: a bit between two functions",
	      verify(FINEIBT_MODE_KCFI, between, 4) == -EBADMSG);
	CHECK("coarse verify: a bit below the first function",
	      verify(FINEIBT_MODE_KCFI, below, 4) == -EBADMSG);
	CHECK("coarse verify: a bit above the last function",
	      verify(FINEIBT_MODE_KCFI, above, 4) == -EBADMSG);
	CHECK("coarse verify: kcfi, a preamble's bit",
	      verify(FINEIBT_MODE_KCFI, pre, 6) == -EBADMSG);
	CHECK("coarse verify: fineibt, the preambles and the functions",
	      verify(FINEIBT_MODE_FINEIBT, pre, 6) == 0);
	CHECK("coarse verify: fineibt, 32 bytes before a function",
	      verify(FINEIBT_MODE_FINEIBT, pre2, 2) == -EBADMSG);
	rec.m.func_off = NULL;
	CHECK("coarse verify: no functions recorded",
	      verify(FINEIBT_MODE_KCFI, funcs, 3) == -EBADMSG);
	return fi_check_exit();
}
