/* SPDX-License-Identifier: MIT */
/*
 * src/pass/knr.c: the kCFI type id (xxHash64 of the mangled type name) against
 * values clang-22 emitted (`clang-22 -fsanitize=kcfi -S -emit-llvm`,
 * !kcfi_type), and the mapping of an empty-parentheses definition's hash
 * to that of its implied prototype, exact and generalized.
 */
#include <stdint.h>

#include "check.h"
#include "patch.h"

struct known {
	const char *name;
	uint32_t id;
};

/* void a() {}, void b(void) {}, int c(), int d(void), const char *e(),
 * const char *f(void), as clang-22 hashed them. */
static const struct known exact[] = {
	{ "_ZTSFvE", 0xbcf98444 }, { "_ZTSFvvE", 0xa540670c },
	{ "_ZTSFiE", 0x993e738c }, { "_ZTSFivE", 0x36b1c5a6 },
	{ "_ZTSFPKcE", 0x63d9973a }, { "_ZTSFPKcvE", 0x9b32cf31 },
};
static const struct known gen[] = {
	{ "_ZTSFvE.generalized", 0xa0fed9e3 },
	{ "_ZTSFvvE.generalized", 0x2092ad29 },
	{ "_ZTSFiE.generalized", 0x4091c7b1 },
	{ "_ZTSFivE.generalized", 0x4995f384 },
	{ "_ZTSFPKvE.generalized", 0x497c78fd },
	{ "_ZTSFPKvvE.generalized", 0x396a6d07 },
	/* int f(int) and a K&R int f(a) int a; alike */
	{ "_ZTSFiiE.generalized", 0xa50048c2 },
};

static void check_ids(const struct known *k, size_t n, const char *what)
{
	char name[96];

	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "type-id[%s %s]", what, k[i].name);
		CHECK(name, fi_kcfi_type_id(k[i].name) == k[i].id);
	}
}

/* Pairs (unprototyped, (void)) map; everything else is left alone. */
static void check_map(const struct known *k, size_t n, const char *what)
{
	char name[96];

	for (size_t i = 0; i + 1 < n; i += 2) {
		snprintf(name, sizeof(name), "knr-map[%s %s]", what, k[i].name);
		CHECK(name, fi_knr_hash(k[i].id) == k[i + 1].id);
		snprintf(name, sizeof(name), "knr-keep[%s %s]", what,
			 k[i + 1].name);
		CHECK(name, fi_knr_hash(k[i + 1].id) == k[i + 1].id);
	}
}

int main(void)
{
	/* xxHash64 reference vectors (seed 0). */
	CHECK("xxh64-empty", fi_xxhash64("", 0) == 0xef46db3751d8e999ULL);
	CHECK("xxh64-a", fi_xxhash64("a", 1) == 0xd24ec4f1a98c6e5bULL);
	/* 37 bytes, through the 32-byte stripes: void z(int x 30). */
	CHECK("type-id-long", fi_kcfi_type_id("_ZTSFv" "iiiiiiiiii"
					      "iiiiiiiiii" "iiiiiiiiii" "E") == 1034369039u);
	check_ids(exact, sizeof(exact) / sizeof(exact[0]), "exact");
	check_ids(gen, sizeof(gen) / sizeof(gen[0]), "generalized");
	check_map(exact, sizeof(exact) / sizeof(exact[0]), "exact");
	check_map(gen, 6, "generalized");
	CHECK("knr-keep[int(int)]", fi_knr_hash(0xa50048c2) == 0xa50048c2);
	CHECK("knr-keep[0]", fi_knr_hash(0) == 0);
	/* The table is generated: it must still be what the list gives. */
	CHECK("knr-table", fi_knr_table_check() == 0);
	return fi_check_exit();
}
