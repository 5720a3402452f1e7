/* SPDX-License-Identifier: MIT */
/*
 * The foreign-target sequences of src/seq/insn.c (docs/compat.md): the dlsym
 * veneer slot, and the per-site stubs for kcfi and paranoid call sites,
 * checked byte by byte against their objdump-style layout in insn.h, and
 * the stub's jumps decoded back to the places they must reach.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "insn.h"

static int32_t rel32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void test_veneer(void)
{
	uint8_t s[FI_FVEN_SLOT];
	static const uint8_t head[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x0a };
	static const uint8_t entry[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25,
					 0x06, 0x00, 0x00, 0x00 };
	uint64_t fn = 0x7f0011223344ULL, got;

	fi_emit_foreign_veneer(s, fn);
	CHECK("veneer: endbr64; jmp +10 at V-16", !memcmp(s, head, sizeof(head)));
	/* jmp +10 from 6 reaches the entry at 16 */
	CHECK("veneer: short jmp reaches V", 6 + (int8_t)s[5] == FI_FVEN_ENTRY);
	CHECK("veneer: endbr64; jmp *32(%rip) at V",
	      !memcmp(s + FI_FVEN_ENTRY, entry, sizeof(entry)));
	memcpy(&got, s + FI_FVEN_ENTRY + 10 + rel32(s + FI_FVEN_ENTRY + 6), 8);
	CHECK("veneer: the pointer it jumps through is F", got == fn);
	CHECK("veneer: padding is int3", s[6] == 0xcc && s[15] == 0xcc &&
	      s[26] == 0xcc && s[40] == 0xcc && s[63] == 0xcc);
}

static void test_stub(bool paranoid)
{
	uint8_t site[FI_CALLSITE_SIZE], stub[FI_FSTUB_SIZE], jmp[5];
	const char *k = paranoid ? "paranoid" : "kcfi";
	uint64_t site_ip = 0x555555551000ULL, stub_ip = 0x555555600040ULL;
	uint64_t entry0 = 0x7f0000000010ULL, neg, t;
	size_t n, fail, call_jmp;
	char name[96];
	int32_t size;

	memset(site, 0x90, sizeof(site));
	site[0] = 0x41;
	site[1] = 0xba;
	fi_store32(site + 2, paranoid ? 0x12345678u : (uint32_t)-0x12345678);
	n = fi_emit_foreign_stub(stub, site, site_ip, stub_ip, paranoid, entry0,
				 1u << 20);
	snprintf(name, sizeof(name), "stub[%s]: length", k);
	if (!CHECK(name, n == (paranoid ? 60u : 56u)))
		return;
	snprintf(name, sizeof(name), "stub[%s]: starts with the site's movl", k);
	CHECK(name, !memcmp(stub, site, 6));
	snprintf(name, sizeof(name), "stub[%s]: the site's check", k);
	CHECK(name, !memcmp(stub + 6, paranoid ? "\x45\x3b\x53\xf7" :
			    "\x45\x03\x53\xf1", 4) && stub[10] == 0x74);
	memcpy(&neg, stub + 14, 8);
	snprintf(name, sizeof(name), "stub[%s]: movabs -entry0, add, test, cmp", k);
	CHECK(name, stub[12] == 0x49 && stub[13] == 0xba && neg == 0 - entry0 &&
	      !memcmp(stub + 22, "\x4d\x01\xda\x41\xf6\xc2\x3f\x75", 8) &&
	      !memcmp(stub + 31, "\x49\x81\xfa", 3) && stub[38] == 0x73);
	memcpy(&size, stub + 34, 4);
	snprintf(name, sizeof(name), "stub[%s]: region size", k);
	CHECK(name, size == 1 << 20);
	call_jmp = paranoid ? 44 : 40;
	fail = call_jmp + 5;
	snprintf(name, sizeof(name), "stub[%s]: lea -16(%%r11) before the call", k);
	CHECK(name, !paranoid || !memcmp(stub + 40, "\x4d\x8d\x5b\xf0", 4));
	snprintf(name, sizeof(name), "stub[%s]: hash match goes to %s", k,
		 paranoid ? "the reload (site's own check)" : "the call");
	CHECK(name, 12 + (int8_t)stub[11] == (int)(paranoid ? fail : call_jmp));
	snprintf(name, sizeof(name), "stub[%s]: range misses go to the reload", k);
	CHECK(name, 31 + (int8_t)stub[30] == (int)fail &&
	      40 + (int8_t)stub[39] == (int)fail);
	t = stub_ip + call_jmp + 5 + (uint64_t)(int64_t)rel32(stub + call_jmp + 1);
	snprintf(name, sizeof(name), "stub[%s]: on to the site's call", k);
	CHECK(name, stub[call_jmp] == 0xe9 && t == site_ip + (paranoid ? 16 : 14));
	snprintf(name, sizeof(name), "stub[%s]: reload is the site's movl", k);
	CHECK(name, !memcmp(stub + fail, site, 6));
	t = stub_ip + fail + 11 + (uint64_t)(int64_t)rel32(stub + fail + 7);
	snprintf(name, sizeof(name), "stub[%s]: back to the site's check", k);
	CHECK(name, stub[fail + 6] == 0xe9 && t == site_ip + 6);
	snprintf(name, sizeof(name), "stub[%s]: site jmp decodes to the stub", k);
	CHECK(name, fi_emit_site_jmp(jmp, site_ip, stub_ip) &&
	      fi_decode_site_jmp(jmp, site_ip, &t) && t == stub_ip);
	snprintf(name, sizeof(name), "stub[%s]: the site's hash from the stub", k);
	CHECK(name, fi_decode_caller_hash(stub) == fi_decode_caller_hash(site));
}

int main(void)
{
	uint8_t stub[FI_FSTUB_SIZE], site[FI_CALLSITE_SIZE] = { 0x90 }, jmp[5];

	test_veneer();
	test_stub(false);
	test_stub(true);
	CHECK("stub: refused on a site that is not a movl",
	      !fi_emit_foreign_stub(stub, site, 0x1000, 0x2000, false, 0x10, 64));
	CHECK("site jmp: out of rel32 reach refused",
	      !fi_emit_site_jmp(jmp, 0x1000, 0x7f0000000000ULL));
	return fi_check_exit();
}
