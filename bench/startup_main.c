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
 * Output: "init_us=%.1f private_dirty_kb=%ld rss_kb=%ld" on one line,
 * then the generated main's own line.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

int gen_big_main(void);

static struct timespec t_preinit;

static void mark_preinit(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_preinit);
}

__attribute__((used, section(".preinit_array")))
static void (*const preinit_entry)(void) = mark_preinit;

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
	printf("init_us=%.1f private_dirty_kb=%ld rss_kb=%ld\n", us,
	       rollup_kb("Private_Dirty"), rollup_kb("Rss"));
	fflush(stdout);
	/* Then run a little of the program (through patched call sites). */
	return gen_big_main();
}
