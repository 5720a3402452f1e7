#!/usr/bin/env bash
# Start-up cost and private memory of the load-time runtime, on a program
# with >= 100k functions and call sites (not a test: prints numbers).
#
#   bash bench/rt_startup.sh [BUILD]      (default build/)
#
# The program is generated (or taken from bench/gen_big.sh when that
# exists and honours OUT/NFUNCS), built once with fineibt-cc, and run
# RUNS times per mode; we report the median wall time of the whole
# process, the runtime's own time (FINEIBT_VERBOSE), and Private_Dirty
# from /proc/self/smaps_rollup as the program sees it in main().
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=$BUILD/bench/rt_startup
NFILES=${NFILES:-20}
PER=${PER:-5000}		# leaf functions per file; as many callers
RUNS=${RUNS:-11}
mkdir -p "$OUT"

gen() {
	local f=$1 i
	{
		echo '#include "big.h"'
		for ((i = 0; i < PER; i++)); do
			echo "long l${f}_$i(long x) { return x + $i; }"
		done
		echo "fn_t tab_$f[] = {"
		for ((i = 0; i < PER; i++)); do echo "l${f}_$i,"; done
		echo "};"
		for ((i = 0; i < PER; i++)); do
			echo "long c${f}_$i(fn_t *t, long x) { return t[$i](x) + 1; }"
		done
	} >"$OUT/big_$f.c"
}

if [ ! -x "$OUT/big" ]; then
	cat >"$OUT/big.h" <<'H'
typedef long (*fn_t)(long);
H
	cat >"$OUT/main.c" <<'C'
#include <stdio.h>
#include <string.h>
typedef long (*fn_t)(long);
extern fn_t tab_0[];
long c0_1(fn_t *t, long x);
static void rollup(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Private_Dirty:", 14) ||
		    !strncmp(line, "Rss:", 4))
			fputs(line, stdout);
	if (f)
		fclose(f);
}
int main(int argc, char **argv)
{
	if (c0_1(tab_0, 1) != 3)
		return 1;
	if (argc > 1)
		rollup();
	return 0;
}
C
	for ((f = 0; f < NFILES; f++)); do gen "$f"; done
	objs=()
	for ((f = 0; f < NFILES; f++)); do
		"$BUILD/fineibt-cc" -O1 -c "$OUT/big_$f.c" -o "$OUT/big_$f.o" &
		objs+=("$OUT/big_$f.o")
		if (( f % 2 == 1 )); then wait; fi
	done
	wait
	"$BUILD/fineibt-cc" -O1 -c "$OUT/main.c" -o "$OUT/main.o"
	"$BUILD/fineibt-cc" -o "$OUT/big" "$OUT/main.o" "${objs[@]}"
	"$BUILD/fineibt-cc" --fineibt-no-runtime -o "$OUT/big_nort" \
		"$OUT/main.o" "${objs[@]}" crt/thunks.S
fi

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

wall_us() {	# CFI PROG: median wall time in microseconds
	local cfi=$1 prog=$2 i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		FINEIBT_CFI=$cfi "$prog" >/dev/null
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | median
}

text_hex=$(llvm-readelf-22 -S -W "$OUT/big" | awk '{for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 4)}')
echo "program: $(stat -c %s "$OUT/big") bytes, .text $((16#$text_hex)) bytes;" \
     "$("$BUILD/fineibt" inspect "$OUT/big" 2>/dev/null | grep -Ei 'preambles|call sites' | tr -s ' \n' ' ')"
printf '%-28s %10s %12s %14s %10s\n' mode wall_us runtime_us private_dirty rss
printf '%-28s %10s %12s %14s %10s\n' "no runtime (kcfi as built)" \
	"$(wall_us kcfi "$OUT/big_nort")" - \
	"$("$OUT/big_nort" x | awk '/Private_Dirty/{print $2" kB"}')" \
	"$("$OUT/big_nort" x | awk '/Rss/{print $2" kB"}')"
for m in kcfi,norand kcfi off fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto; do
	rt=$(FINEIBT_VERBOSE=1 FINEIBT_CFI=$m "$OUT/big" 2>&1 >/dev/null |
	     grep -Eo 'started in [0-9]+ us' | head -1 | grep -Eo '[0-9]+')
	printf '%-28s %10s %12s %14s %10s\n' "$m" "$(wall_us "$m" "$OUT/big")" "${rt:--}" \
		"$(FINEIBT_CFI=$m "$OUT/big" x | awk '/Private_Dirty/{print $2" kB"}')" \
		"$(FINEIBT_CFI=$m "$OUT/big" x | awk '/Rss/{print $2" kB"}')"
done
