/* SPDX-License-Identifier: MIT */
/*
 * The bounded string builder (src/core/strbuf.h) that every report and
 * name of the runtime is composed with: exact bytes, the widest decimal
 * and hex numbers, padding and its limits, overflow at the capacity (the
 * bytes past it untouched, the string cut and NUL-terminated, the flag
 * set), a builder over no bytes, one that goes on after text already in
 * its buffer, and every cut against snprintf's.
 */
#include <inttypes.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "strbuf.h"

#define GUARD	'Z'

/* Bytes @from.. of @mem[@size] still hold the guard. */
static bool untouched(const char *mem, size_t from, size_t size)
{
	for (size_t i = from; i < size; i++) {
		if (mem[i] != GUARD)
			return false;
	}
	return true;
}

static void test_exact(void)
{
	char buf[64];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	CHECK("strbuf_init_empty", b.len == 0 && buf[0] == '\0' && !b.over);
	fi_strbuf_str(&b, "a=");
	fi_strbuf_dec(&b, 42, 1);
	fi_strbuf_char(&b, ' ');
	fi_strbuf_str(&b, "x=");
	fi_strbuf_hex(&b, 0xff, 4);
	fi_strbuf_str(&b, " y=");
	fi_strbuf_xdigits(&b, 0xab, 1);
	fi_strbuf_str(&b, " t=");
	fi_strbuf_dec(&b, 7, 6);
	fi_strbuf_char(&b, '\0');	/* appends nothing */
	CHECK("strbuf_exact_bytes", !strcmp(buf, "a=42 x=0x00ff y=ab t=000007") &&
				    b.len == strlen(buf) && !b.over);
}

static void test_widest(void)
{
	char buf[64];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_dec(&b, UINT64_MAX, 1);
	CHECK("strbuf_dec_widest", !strcmp(buf, "18446744073709551615") &&
				   b.len == FI_STRBUF_DEC_MAX);
	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_hex(&b, UINT64_MAX, 1);
	CHECK("strbuf_hex_widest", !strcmp(buf, "0xffffffffffffffff"));
	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_dec(&b, 0, 1);
	fi_strbuf_hex(&b, 0, 1);
	fi_strbuf_xdigits(&b, 0, 0);	/* width < 1: one digit */
	fi_strbuf_dec(&b, 0, -5);
	CHECK("strbuf_zero", !strcmp(buf, "00x000"));
	/* Padding stops at the widest number (the digits' stack buffer). */
	fi_strbuf_init(&b, buf, sizeof(buf), 0);
	fi_strbuf_dec(&b, 5, 99);
	fi_strbuf_char(&b, ' ');
	fi_strbuf_hex(&b, 5, 99);
	CHECK("strbuf_width_capped", !strcmp(buf, "00000000000000000005 "
					     "0x0000000000000005"));
}

static void test_overflow(void)
{
	char mem[32];
	struct fi_strbuf b;

	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 8, 0);
	fi_strbuf_str(&b, "abcdefghij");
	CHECK("strbuf_cut_at_capacity", b.len == 7 && !memcmp(mem, "abcdefg", 8) &&
					b.over && untouched(mem, 8, sizeof(mem)));
	fi_strbuf_hex(&b, 0x1234, 1);
	fi_strbuf_char(&b, 'x');
	CHECK("strbuf_full_stays_full", b.len == 7 && mem[7] == '\0' &&
					untouched(mem, 8, sizeof(mem)));

	/* Exactly full is no overflow; one more byte is. */
	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 4, 0);
	fi_strbuf_str(&b, "abc");
	CHECK("strbuf_exact_fit", b.len == 3 && !strcmp(mem, "abc") && !b.over);
	fi_strbuf_str(&b, "");
	CHECK("strbuf_empty_append", !b.over);
	fi_strbuf_char(&b, 'd');
	CHECK("strbuf_one_past", b.over && !strcmp(mem, "abc") &&
				 untouched(mem, 4, sizeof(mem)));

	/* A number cut in its middle keeps its leading digits. */
	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 5, 0);
	fi_strbuf_hex(&b, 0x1234, 1);
	CHECK("strbuf_hex_cut", !strcmp(mem, "0x12") && b.over &&
				untouched(mem, 5, sizeof(mem)));
	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 4, 0);
	fi_strbuf_dec(&b, UINT64_MAX, 1);
	CHECK("strbuf_dec_cut", !strcmp(mem, "184") && b.over &&
				untouched(mem, 4, sizeof(mem)));
}

static void test_small(void)
{
	char mem[8];
	struct fi_strbuf b;

	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 0, 0);
	fi_strbuf_str(&b, "a");
	fi_strbuf_dec(&b, 1, 1);
	CHECK("strbuf_cap0_writes_nothing", b.len == 0 && b.over &&
					    untouched(mem, 0, sizeof(mem)));
	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 1, 0);
	fi_strbuf_str(&b, "a");
	CHECK("strbuf_cap1_nul_only", b.len == 0 && mem[0] == '\0' && b.over &&
				      untouched(mem, 1, sizeof(mem)));
}

static void test_resume(void)
{
	char buf[16] = "hello";
	char mem[16];
	struct fi_strbuf b;

	fi_strbuf_init(&b, buf, sizeof(buf), 5);
	fi_strbuf_str(&b, ", w");
	CHECK("strbuf_goes_on", !strcmp(buf, "hello, w") && b.len == 8 && !b.over);

	memset(mem, GUARD, sizeof(mem));
	fi_strbuf_init(&b, mem, 6, 9);	/* more used than there is room */
	fi_strbuf_str(&b, "x");
	CHECK("strbuf_used_past_cap", b.over && b.len == 5 && mem[5] == '\0' &&
				      untouched(mem, 6, sizeof(mem)));
}

/* Every cut of a mixed line at every capacity, against snprintf's. */
static void test_against_snprintf(void)
{
	static const uint64_t vals[] = { 0, 1, 9, 10, 0xf, 0x10, 12345,
		0xdeadbeef, 1ull << 32, 999999999999ull, UINT64_MAX - 1, UINT64_MAX };
	bool ok = true;

	for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
		for (int w = 1; w <= 20; w++) {
			char want[128], mem[160];
			int n = snprintf(want, sizeof(want), "[%0*" PRIu64 "|0x%0*" PRIx64
					 "|%0*" PRIx64 "]", w, vals[v], w > 16 ? 16 : w,
					 vals[v], w > 16 ? 16 : w, vals[v]);

			for (size_t cap = 0; cap <= (size_t)n + 1; cap++) {
				struct fi_strbuf b;
				char cut[128];

				memset(mem, GUARD, sizeof(mem));
				fi_strbuf_init(&b, mem, cap, 0);
				fi_strbuf_char(&b, '[');
				fi_strbuf_dec(&b, vals[v], w);
				fi_strbuf_char(&b, '|');
				fi_strbuf_hex(&b, vals[v], w);
				fi_strbuf_char(&b, '|');
				fi_strbuf_xdigits(&b, vals[v], w);
				fi_strbuf_char(&b, ']');
				snprintf(cut, cap ? cap : 1, "%s", want);
				ok &= EXPECT("strbuf_vs_snprintf",
					     (cap ? !strcmp(mem, cut) &&
					      b.len == strlen(cut) : b.len == 0) &&
					     b.over == (cap <= (size_t)n) &&
					     untouched(mem, cap, sizeof(mem)));
			}
		}
	}
	CHECK("strbuf_vs_snprintf_all_cuts", ok);
}

/*
 * fi_strbuf_printf (libfineibt.so's snprintf and vsnprintf) against
 * glibc's snprintf: every conversion, flag, width and precision the
 * runtime's messages use and their neighbours, each at every capacity
 * from 0 to past the text: the same bytes, the same count, the bytes past
 * the capacity untouched.
 */
#define FMT_CASE(fmt, ...)						\
	do {								\
		char want[256], mem[256];				\
		int wn = snprintf(want, sizeof(want), fmt, __VA_ARGS__); \
		for (size_t cap = 0; cap <= (size_t)wn + 2; cap++) {	\
			struct fi_strbuf b;				\
			size_t n;					\
			memset(mem, GUARD, sizeof(mem));		\
			fi_strbuf_init(&b, mem, cap, 0);		\
			n = fi_strbuf_printf(&b, fmt, __VA_ARGS__);	\
			if (n != (size_t)wn || !untouched(mem, cap, sizeof(mem)) || \
			    (cap && (strncmp(mem, want, cap - 1) ||	\
				     mem[cap - 1 < (size_t)wn ? cap - 1 : (size_t)wn] != '\0')) || \
			    b.over != (cap <= (size_t)wn)) {		\
				fprintf(stderr, "printf %s cap %zu: '%s' (%zu) want '%s' (%d)\n", \
					#fmt, cap, cap ? mem : "", n, want, wn); \
				ok = false;				\
			}						\
		}							\
	} while (0)

static void test_printf(void)
{
	const char *null = NULL;
	bool ok = true;
	char buf[32];
	struct fi_strbuf b;

	FMT_CASE("%s", "plain");
	FMT_CASE("a%%b%s|%s|", "", "x");
	FMT_CASE("%d %d %d %i", 0, -1, 2147483647, (int)-2147483647 - 1);
	FMT_CASE("%u %x %X %o", 0u, 0xdeadbeefu, 0xabcu, 8u);
	FMT_CASE("%lx %llx %lu %llu %ld %lld", 0x123456789abcUL, ~0ULL, ~0UL,
		 18446744073709551615ULL, (long)-5, (long long)-9223372036854775807LL - 1);
	FMT_CASE("%zu %zx %zd %td %jd", (size_t)123456, (size_t)0xfff, (ssize_t)-7,
		 (ptrdiff_t)-3, (intmax_t)42);
	FMT_CASE("%#x %#llx %#lx %#o %#X %#o", 0u, 0x401000ULL, 0UL, 8u, 255u, 0u);
	FMT_CASE("%08x|%-8x|%8x|%-8X|%+d|% d|%+5d|%05d|%-5d|%.3d|%08.3d", 0x1fu,
		 0x1fu, 0x1fu, 0x1fu, 5, 5, -5, -42, 7, 7, 7);
	FMT_CASE("%.0d|%.0u|%.0x|%#.0o|%5.0d|", 0, 0u, 0u, 0u, 0);
	FMT_CASE("%hhu %hhd %hu %hd", 300, 200, 70000, 40000);
	FMT_CASE("%.64s|%.3s|%.0s|%10s|%-10s|%*s|%-*s|%.*s", "cut", "abcdef",
		 "gone", "right", "left", 6, "st", -6, "neg", 2, "prec");
	FMT_CASE("%s|%.3s|%.6s|%10s", null, null, null, null);
	FMT_CASE("%c%c%5c%-3c|", 'a', 'b', 'c', 'd');
	FMT_CASE("%p %p %20p %-20p|", (void *)0x7fff1234, (void *)0, (void *)0x10,
		 (void *)0x10);
	FMT_CASE("fineibt: %s: %s: %s does not match %s; left unpatched\n",
		 "a.so", "f", "g", "h");
	FMT_CASE("fineibt-rt:%lx:%x", 0x5651234UL, 0xcafeu);
	FMT_CASE("%*d|%-*d|%.*d", 5, 3, 5, 3, -1, 9);
	CHECK("strbuf_printf_vs_snprintf", ok);

	/* Appends after text already there, as the other appends. */
	strcpy(buf, "ab");
	fi_strbuf_init(&b, buf, sizeof(buf), 2);
	CHECK("strbuf_printf_appends", fi_strbuf_printf(&b, "%d-%s", 12, "x") == 4 &&
	      !strcmp(buf, "ab12-x") && b.len == 6 && !b.over);
}

int main(void)
{
	test_exact();
	test_widest();
	test_overflow();
	test_small();
	test_resume();
	test_against_snprintf();
	test_printf();
	return fi_check_exit();
}
