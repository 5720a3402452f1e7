// SPDX-License-Identifier: MIT
/*
 * bench/coarse_calls.sh, second part: the two lookups the coarse check
 * could make, on the same entries (NENT 16-aligned entries spread over
 * TEXT bytes of text, as a program's address-taken functions are): one
 * bit per 16 bytes (what src/rt/coarse.S does) against a binary search
 * over the sorted entry offsets every registered module already keeps.
 * Looked up: entries and non-entries alternately, from a fixed sequence.
 *   coarse_lookup bits|sorted N [NENT]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEXT	(1u << 20)

static uint64_t bits[TEXT / 16 / 64];
static uint32_t *off;
static size_t noff;

__attribute__((noinline)) static int by_bits(uint32_t o)
{
	uint32_t i = o >> 4;

	return !(o & 15) && (bits[i / 64] >> (i % 64) & 1);
}

__attribute__((noinline)) static int by_sorted(uint32_t o)
{
	size_t lo = 0, hi = noff;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (off[mid] == o)
			return 1;
		if (off[mid] < o)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sorted = argc > 1 && !strcmp(argv[1], "sorted");
	long n = argc > 2 ? atol(argv[2]) : 1000;
	size_t want = argc > 3 ? (size_t)atol(argv[3]) : 2000;
	uint32_t x = 12345, hits = 0;

	off = malloc(want * sizeof(*off));
	for (uint32_t o = 0; o < TEXT && noff < want; o += TEXT / want) {
		off[noff++] = o;
		bits[(o >> 4) / 64] |= 1ull << ((o >> 4) % 64);
	}
	for (long i = 0; i < n; i++) {
		uint32_t o;

		x = x * 1103515245u + 12345u;
		o = (i & 1) ? off[(x >> 8) % noff] : ((x >> 4) % TEXT) & ~15u;
		hits += sorted ? by_sorted(o) : by_bits(o);
	}
	return hits == 0;
}
