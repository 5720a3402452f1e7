// SPDX-License-Identifier: MIT
/*
 * startup: main() of the start-up benchmark program (the rest is
 * bench/gen_big.py's output, whose own main is renamed gen_big_main).
 *
 * A DT_PREINIT_ARRAY entry of the executable runs before the constructors
 * of every shared library, so the time from it to main() is what the
 * constructors cost: in a fineibt-cc program, the runtime (libfineibt.so's
 * constructor, or the crt hook of a -static-fineibt link) opening, reading
 * and rewriting the executable. main() then reports that time and the
 * process's Private_Dirty and Rss from /proc/self/smaps_rollup: text pages
 * the runtime wrote are private copies from then on.
 *
 * Output: "init_us=%.1f private_dirty_kb=%ld rss_kb=%ld anon_kb=%ld" on
 * one line, then the generated main's own line. anon_kb (Anonymous) counts
 * copied pages only: text mapped from the shared text cache (tmpfs) is
 * Private_Dirty while this process alone maps it, though not a copy.
 *
 * The preinit entry changes what it measures: an executable with
 * DT_PREINIT_ARRAY functions makes libfineibt.so start the runtime early,
 * while the loader relocates it, before the executable is relocated
 * (docs/runtime.md "Before any constructor"). Built with
 * -DSTARTUP_NO_PREINIT there is no entry: the common start, from the
 * crt hook at the executable's first constructor; no init_us then (only
 * the wall time from fork to exit tells the cost).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

int gen_big_main(void);

static struct timespec t_preinit;

static __attribute__((unused)) void mark_preinit(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_preinit);
}

#ifndef STARTUP_NO_PREINIT
__attribute__((used, section(".preinit_array")))
static void (*const preinit_entry)(void) = mark_preinit;
#endif

static long rollup_kb(const char *key)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	size_t n = strlen(key);
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			sscanf(line + n + 1, "%ld", &kb);
			break;
		}
	}
	if (f)
		fclose(f);
	return kb;
}

int main(void)
{
	struct timespec t;
	double us;

	clock_gettime(CLOCK_MONOTONIC, &t);
	us = (t.tv_sec - t_preinit.tv_sec) * 1e6 +
	     (t.tv_nsec - t_preinit.tv_nsec) / 1e3;
	if (t_preinit.tv_sec || t_preinit.tv_nsec)
		printf("init_us=%.1f ", us);
	printf("private_dirty_kb=%ld rss_kb=%ld anon_kb=%ld\n",
	       rollup_kb("Private_Dirty"), rollup_kb("Rss"),
	       rollup_kb("Anonymous"));
	fflush(stdout);
	/* Then run a little of the program (through patched call sites). */
	return gen_big_main();
}
