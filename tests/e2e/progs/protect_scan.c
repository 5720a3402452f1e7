// SPDX-License-Identifier: MIT
/*
 * protect_scan PID EXE [FILE...]: the outside observer of
 * tests/e2e/protect_key.sh (a plain program linked with libfineibt.a,
 * not instrumented, not a fineibt process itself).
 *
 * Finds the rehash key of running process PID the way an observer of a
 * running process could, without any help from it: for kCFI preambles of
 * EXE it reads the compile-time hash from the file and the run-time hash
 * from PID's memory (/proc/PID/mem). Run-time = fineibt_rehash(compile-
 * time, key), a keyed permutation whose 128-bit key no pair gives away,
 * so the observer tries every place the key could be kept: each 4-byte
 * aligned 16 bytes w of every readable mapping, as the key itself
 * (fineibt_rehash(ct, w) == rt for 8 pairs: a chance match is 2^-256)
 * and, in writable mappings, as the first two words of SipHash's state
 * initialised from it (w xor the SipHash constants: a spilled state
 * gives the key back as surely). It prints, one per line:
 *   pairs N                 preambles read (at least 8 needed)
 *   hit MAPPING-PERMS NAME  each aligned occurrence (ro and rw)
 *   key-ro N                occurrences in mappings that are not writable
 *   key-rw N                occurrences in writable mappings
 *   key-env N               /proc/PID/environ and each FILE: raw bytes,
 *                           lower- and upper-case hex
 * The key itself is never printed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fineibt.h"
#include "image.h"
#include "insn.h"

#define NPAIRS 8

struct pair {
	uint32_t ct, rt;
};

static struct pair pairs[NPAIRS];
static size_t npairs;

static int mem_fd;

static bool rd(uint64_t addr, void *buf, size_t len)
{
	return pread(mem_fd, buf, len, (off_t)addr) == (ssize_t)len;
}

/* Load bias of EXE in PID: start of its mapping at file offset 0. */
static uint64_t exe_bias(int pid, const char *exe)
{
	char path[64], line[512], real[4096], name[4096];
	unsigned long lo, hi, off;
	uint64_t bias = 0;
	FILE *f;

	if (!realpath(exe, real))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		name[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi, &off,
			   name) == 4 && off == 0 && !strcmp(name, real)) {
			bias = lo;
			break;
		}
	}
	if (f)
		fclose(f);
	return bias;
}

/* NPAIRS (compile-time, run-time) hashes of EXE's preambles in PID. */
static bool find_pairs(int pid, const char *exe)
{
	struct fi_image im;
	char err[160];
	uint64_t bias = exe_bias(pid, exe);

	if (!bias || fi_image_open(&im, exe, err, sizeof(err)))
		return false;
	/* A non-PIE executable has its link addresses as run-time ones. */
	if (im.e_type == 2 /* ET_EXEC */)
		bias = 0;
	for (size_t i = 0; i < im.nfuncs && npairs < NPAIRS; i++) {
		const struct fi_func *fn = &im.funcs[i];
		struct fi_preamble_info info;
		uint8_t live[FI_PREAMBLE_SIZE + 4];
		uint64_t at = bias + fn->addr - FI_PREAMBLE_SIZE;

		if (fn->form != FI_PRE_KCFI || !fn->endbr || !rd(at, live, sizeof(live)))
			continue;
		if (fi_classify_preamble(live, at, &info) == FI_PRE_NONE)
			continue;
		pairs[npairs++] = (struct pair){ .ct = fn->hash, .rt = info.hash };
	}
	printf("pairs %zu\n", npairs);
	fi_image_close(&im);
	return npairs == NPAIRS;
}

/* @k rehashes every compile-time hash read into its run-time one. */
static bool is_key(const struct fineibt_key *k)
{
	for (size_t i = 0; i < npairs; i++)
		if (fineibt_rehash(pairs[i].ct, k) != pairs[i].rt)
			return false;
	return true;
}

/* SipHash's v0 and v1 are k0 and k1 xor these (hash.c). */
#define SIP_C0 0x736f6d6570736575ull
#define SIP_C1 0x646f72616e646f6dull

/* @p: @len bytes read at address @at (4-aligned). */
static size_t scan_buf(const uint8_t *p, size_t len, uint64_t at, bool rw,
		       struct fineibt_key *key)
{
	size_t hits = 0;

	for (size_t o = 0; o + 16 <= len; o += 4) {
		struct fineibt_key k;
		uint64_t w[2];

		memcpy(k.bytes, p + o, 16);
		/* The first pair alone rules out all but 2^-32 of the places. */
		if (fineibt_rehash(pairs[0].ct, &k) == pairs[0].rt && is_key(&k)) {
			*key = k;
			hits++;
		}
		if (!rw || (at + o) % 8)
			continue;
		memcpy(w, p + o, 16);
		w[0] ^= SIP_C0;
		w[1] ^= SIP_C1;
		memcpy(k.bytes, w, 16);
		if (fineibt_rehash(pairs[0].ct, &k) == pairs[0].rt && is_key(&k)) {
			*key = k;
			hits++;
		}
	}
	return hits;
}

/* Every occurrence of the key in PID's memory; false if there is none. */
static bool scan_maps(int pid, struct fineibt_key *key)
{
	static uint8_t buf[1 << 20];
	char path[64], line[512], perms[8], name[4096];
	unsigned long lo, hi;
	size_t ro = 0, rw = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		size_t hits = 0;

		name[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi,
			   perms, name) < 3 || perms[0] != 'r')
			continue;
		/* Chunks overlap by 12 bytes: a key across a chunk's end is seen. */
		for (unsigned long a = lo; a + 16 <= hi; a += sizeof(buf) - 12) {
			size_t len = hi - a < sizeof(buf) ? hi - a : sizeof(buf);

			if (rd(a, buf, len))
				hits += scan_buf(buf, len, a, perms[1] == 'w', key);
			if (len < sizeof(buf))
				break;
		}
		if (!hits)
			continue;
		printf("hit %s %s (%zu)\n", perms, name[0] ? name : "[anon]", hits);
		if (perms[1] == 'w')
			rw += hits;
		else
			ro += hits;
	}
	if (f)
		fclose(f);
	printf("key-ro %zu\nkey-rw %zu\n", ro, rw);
	return ro + rw != 0;
}

/* The key in any spelling a leak through an environment would use. */
static size_t scan_text_file(const char *path, const struct fineibt_key *key)
{
	static char buf[1 << 20];
	char forms[2][33];
	size_t hits = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (int i = 0; i < 16; i++) {
		snprintf(forms[0] + 2 * i, 3, "%02x", key->bytes[i]);
		snprintf(forms[1] + 2 * i, 3, "%02X", key->bytes[i]);
	}
	for (ssize_t i = 0; i + 16 <= n; i++)
		hits += !memcmp(buf + i, key->bytes, 16);
	for (int k = 0; k < 2; k++) {
		for (char *p = buf; (p = memmem(p, (size_t)(buf + n - p), forms[k],
						strlen(forms[k]))); p++)
			hits++;
	}
	return hits;
}

int main(int argc, char **argv)
{
	char path[64];
	struct fineibt_key key = { { 0 } };
	size_t env = 0;
	int pid;

	if (argc < 3) {
		fprintf(stderr, "usage: protect_scan PID EXE [FILE...]\n");
		return 2;
	}
	pid = atoi(argv[1]);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem_fd = open(path, O_RDONLY);
	if (mem_fd < 0) {
		perror(path);
		return 2;
	}
	if (!find_pairs(pid, argv[2])) {
		printf("no-pairs\n");
		return 1;
	}
	if (!scan_maps(pid, &key)) {
		printf("no-key\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = scan_text_file(path, &key);
	for (int i = 3; i < argc; i++)
		env += scan_text_file(argv[i], &key);
	printf("key-env %zu\n", env);
	return 0;
}
