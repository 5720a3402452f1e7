/* SPDX-License-Identifier: MIT */
/*
 * fineibt demo: one example function (hash 0x12345678, two arguments) and
 * one indirect call site to it, shown in every mode, bytes as the passes
 * would write them, disassembled by llvm-mc when it is installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fineibt.h"
#include "insn.h"
#include "cli.h"

#define DEMO_HASH	0x12345678u
#define DEMO_ARITY	2
#define DEMO_FUNC	0x401010u	/* func+0 */
#define DEMO_SITE	0x402000u
#define DEMO_THUNK	0x403000u
#define DEMO_STUBS	0x404000u

static void show(const char *what, const uint8_t *p, size_t n, uint64_t ip)
{
	char cmd[4096];
	size_t at;
	FILE *f;

	printf("  %s @ %#llx:\n", what, (unsigned long long)ip);
	at = (size_t)snprintf(cmd, sizeof(cmd), "printf '");
	for (size_t i = 0; i < n && at < sizeof(cmd) - 64; i++)
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, "0x%02x ", p[i]);
	snprintf(cmd + at, sizeof(cmd) - at,
		 "' | llvm-mc-22 --disassemble -triple=x86_64 -output-asm-variant=0 2>/dev/null"
		 " | grep -v '^\\s*\\.text'");
	f = access("/usr/bin/llvm-mc-22", X_OK) == 0 ? popen(cmd, "r") : NULL;
	printf("    bytes:");
	for (size_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
	if (f) {
		char line[256];

		while (fgets(line, sizeof(line), f))
			printf("    %s", line[0] == '\t' ? line + 1 : line);
		pclose(f);
	}
}

static void demo_mode(const char *title, const char *cfi)
{
	uint8_t pre[FI_PREAMBLE_SIZE + 4], site[FI_CALLSITE_SIZE];
	struct fineibt_config cfg;
	struct fi_buf b;
	uint32_t hash = DEMO_HASH;
	bool bhi, warn;

	fineibt_parse_cfi(cfi, true, &cfg, NULL, 0);
	fineibt_resolve_auto(&cfg);
	bhi = cfg.flags & FINEIBT_F_BHI;
	warn = cfg.flags & FINEIBT_F_WARN;
	printf("\n== %s (cfi=%s)\n", title, cfi);

	fi_buf_init(&b, pre, sizeof(pre), DEMO_FUNC - FI_PREAMBLE_SIZE);
	if (cfg.mode == FINEIBT_MODE_FINEIBT) {
		fi_emit_bytes(&b, fi_seq_fineibt_preamble.bytes, FI_FINEIBT_PREAMBLE_BHI);
		fi_store32(pre + FI_FINEIBT_PREAMBLE_HASH, hash);
		fi_emit_bhi_tail(&b, bhi ? DEMO_ARITY : 0, warn, DEMO_STUBS);
		if (b.len == FI_PREAMBLE_SIZE)
			fi_emit_seq(&b, &fi_seq_endbr_poison, 0);
	} else {
		fi_emit_kcfi_preamble(&b, hash, DEMO_ARITY);
		fi_emit_seq(&b, &fi_seq_endbr64, 0);
	}
	show("preamble (func-16 .. func+3)", pre, b.len, b.ip);

	fi_buf_init(&b, site, sizeof(site), DEMO_SITE);
	if (cfg.mode != FINEIBT_MODE_FINEIBT) {
		fi_emit_kcfi_caller(&b, hash, false, DEMO_THUNK);
		if (cfg.mode == FINEIBT_MODE_OFF)
			memcpy(site, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
	} else if (cfg.flags & FINEIBT_F_PARANOID) {
		fi_emit_paranoid_caller(&b, hash, false);
	} else {
		fi_emit_fineibt_caller(&b, hash, false);
	}
	show("call site", site, b.len, b.ip);
}

int cmd_demo(int argc, char **argv)
{
	printf("fineibt %s: the sequences of each mode for one function\n"
	       "(type hash %#x, %d integer arguments) and one call site to it.\n",
	       fineibt_version(), DEMO_HASH, DEMO_ARITY);
	demo_mode("kCFI, as clang emits it", "kcfi,norand");
	demo_mode("off: callers jump over the check", "off");
	demo_mode("FineIBT: callee checks the hash after ENDBR", "fineibt,norand");
	demo_mode("paranoid FineIBT: caller checks too", "fineibt,paranoid,norand");
	demo_mode("FineIBT-BHI: args clobbered on mismatch", "fineibt,bhi,norand");
	demo_mode("auto (userspace default)", "auto,norand");
	return 0;
}
