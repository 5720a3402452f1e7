/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL decoder on arbitrary bytes around an ip: the input's tail is
 * the executable text of a synthetic registered module (one view); its
 * head says where the ip is (in the text or in libfineibt's BHI stubs),
 * the registers, the return address on the "stack" and the .kcfi_traps
 * list. fi_trap_decode and fi_report_line run on it, and every classifier
 * of insn.c runs at every offset of the text (an exact-size heap buffer,
 * so that ASan sees any read outside it). The runtime registers a module
 * only if the kernel maps its text executable and never writable
 * (src/rt/rtverify.c): the decoder's text is a read-execute mapping,
 * placed once against the guard page after it and once against the one
 * before it, so that a read past either end faults.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "runtime.h"
#include "trap.h"

#define LINK	0x400000u
#define HDR	30
#define NTRAPS	4

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void classify_all(const uint8_t *text, size_t n, uint64_t rt)
{
	struct fi_preamble_info pi;
	struct fi_caller_info ci;
	struct fi_stock_site ss;
	int len;

	for (size_t i = 0; i < n; i++) {
		fi_decode_ud(text + i, n - i, &len);
		if (n - i >= FI_PREAMBLE_SIZE + 4)
			fi_classify_preamble(text + i, rt + i, &pi);
		if (n - i >= FI_CALLSITE_SIZE)
			fi_classify_caller(text + i, rt + i, &ci);
		fi_match_stock_site(text + i, i, n - i, &ss);
		if (n - i >= 16)
			fi_match_stock_preamble(text + i, &pi.hash, &pi.arity);
	}
}

/* @n bytes of @src in read-execute memory between two PROT_NONE pages,
 * ending at the guard after (@at_end) or starting after the one before. */
static uint8_t *place(const uint8_t *src, size_t n, bool at_end, size_t *maplen)
{
	size_t pages = (n + 4095) / 4096;
	uint8_t *p;

	*maplen = (pages + 2) * 4096;
	p = mmap(NULL, *maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + 4096, pages * 4096, PROT_READ | PROT_WRITE)) {
		munmap(p, *maplen);
		return NULL;
	}
	memcpy(p + 4096 + (at_end ? pages * 4096 - n : 0), src, n);
	mprotect(p + 4096, pages * 4096, PROT_READ | PROT_EXEC);
	return p + 4096 + (at_end ? pages * 4096 - n : 0);
}

static void decode(const uint8_t *h, const uint8_t *text, size_t n)
{
	static struct fi_sym syms[2] = {
		{ .addr = LINK, .size = 16, .name = "fuzz_a" },
		{ .addr = LINK + 16, .size = 0, .name = "fuzz_b" },
	};
	struct fi_module m = { 0 };
	struct fi_view v = { .vaddr = LINK, .size = n, .mem = (uint8_t *)text, .exec = true };
	struct fi_trap_regs r = { 0 };
	struct fi_trap t;
	uint64_t traps[NTRAPS], base = (uint64_t)(uintptr_t)text, ret;
	size_t stubs_size, nt = h[21] % (NTRAPS + 1);
	const uint8_t *stubs = fi_bhi_stubs(&stubs_size);
	char line[512];
	bool registered;
	size_t k = 0;

	/* Each trap's two bytes inside the text, increasing, no repeats:
	 * the runtime registers no other trap list (rtverify.c). */
	for (size_t i = 0; i < nt; i++)
		traps[i] = LINK + (n > 1 ? get16(h + 22 + 2 * i) % (n - 1) : 0);
	if (n < 2)
		nt = 0;
	qsort(traps, nt, sizeof(traps[0]), cmp64);
	for (size_t i = 0; i < nt; i++) {
		if (!k || traps[i] != traps[k - 1])
			traps[k++] = traps[i];
	}
	nt = k;
	m.img.views = &v;
	m.img.nviews = 1;
	m.img.bias = base - LINK;
	m.img.syms = syms;
	m.img.nsyms = 2;
	m.img.traps = traps;
	m.img.ntraps = nt;
	m.img.live = true;
	m.text_lo = base;
	m.text_hi = base + n;
	m.patched = true;
	m.cfg.mode = 1 + h[0] % 3;
	m.cfg.flags = h[0] >> 2 & 0xf;
	/* a stock module too: its ud2s are tried as stock sites first */
	m.stock = h[21] & 0x80;
	/* Refused (a record the runtime would not trust either, e.g. warn in
	 * a process without it): decoded all the same, as a module not ours. */
	registered = !fi_rt_add_module(&m);
	ret = base + get16(h + 19) % (n + 32);
	r.sp = (uint64_t)(uintptr_t)&ret;
	r.r10 = get64(h + 3);
	r.r11 = get64(h + 11);
	if (h[0] & 0x40)
		r.r11 = base + r.r11 % n;
	for (int k = 0; k < 16; k++)	/* a stock site's register: any */
		r.gpr[k] = r.r11 + (uint64_t)k;
	if (h[0] & 0x80)
		r.ip = (uint64_t)(uintptr_t)stubs + get16(h + 1) % stubs_size;
	else
		r.ip = base + get16(h + 1) % n;
	if (fi_trap_decode(&r, &t))
		fi_report_line(&t, line, sizeof(line));
	fi_report_line(&t, line, 16);
	if (registered)
		fi_rt_del_module(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *text, *rx;
	size_t n, maplen;

	if (size <= HDR)
		return 0;
	fuzz_silence();
	n = size - HDR;
	text = malloc(n);
	if (!text)
		return 0;
	memcpy(text, data + HDR, n);
	classify_all(text, n, LINK);
	free(text);
	for (int end = 0; end < 2; end++) {
		rx = place(data + HDR, n, end, &maplen);
		if (!rx)
			return 0;
		decode(data, rx, n);
		munmap((uint8_t *)((uintptr_t)rx & ~(uintptr_t)4095) - 4096, maplen);
	}
	return 0;
}
