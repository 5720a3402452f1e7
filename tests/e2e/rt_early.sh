#!/usr/bin/env bash
# rt_early: a kCFI library built by stock clang-22 (no crt hook, no module
# index), loaded at start-up (DT_NEEDED), is rewritten before any
# constructor runs (src/load/early.c; docs/runtime.md "Before any
# constructor"): under `fineibt run` of a stock-clang program, and in a
# program built by fineibt-cc that links it. The library's constructor
# (progs/rt_early_lib.c) snapshots its own text and calls through
# pointers into itself and into the program: main checks the text is the
# one the constructor saw (same=1) and the calls worked (ctor=111), in
# every mode. EARLY_CONFUSE=1: the constructor calls through a wrong type,
# caught there with a report in the process's mode (fatal, and warn).
# Without the early start the constructor runs in compiler form: same=0
# where the mode rewrites, and its confused call dies of a bare SIGILL.
# The same for the executable's own DT_PREINIT_ARRAY function
# (progs/rt_early_preinit.c). Also: a program with no such library starts as before (at the
# constructor, module index read), and one that interposes write(2)
# (runtime calls would enter unrelocated code) waits for the constructor.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/early
mkdir -p "$D"
K="-fsanitize=kcfi -fsanitize-kcfi-arity -fsanitize-cfi-icall-generalize-pointers
   -fpatchable-function-entry=11,11 -falign-functions=16 -fcf-protection=branch
   -mretpoline-external-thunk -mindirect-branch-cs-prefix"
# shellcheck disable=SC2086
{ clang-22 -O2 $K -fPIC -shared -Wl,-soname,librt_early.so "$RT_SRC/rt_early_lib.c" \
	"$ROOT/crt/thunks.S" -o "$D/librt_early.so" &&
  clang-22 -O2 $K "$RT_SRC/rt_early_main.c" "$ROOT/crt/thunks.S" -L"$D" -lrt_early \
	'-Wl,-rpath,$ORIGIN' -o "$D/early_plain" &&
  clang-22 -O2 $K -DEARLY_INTERPOSE "$RT_SRC/rt_early_main.c" "$ROOT/crt/thunks.S" \
	-L"$D" -lrt_early '-Wl,-rpath,$ORIGIN' -o "$D/early_interpose"; } ||
	{ rt_fail build "clang-22 could not build the rt_early programs"; exit 1; }
rt_build "$D/early_fcc" -O2 "$RT_SRC/rt_early_main.c" -L"$D" -lrt_early '-Wl,-rpath,$ORIGIN' ||
	{ rt_fail build "fineibt-cc could not build early_fcc"; exit 1; }
# shellcheck disable=SC2086
clang-22 -O2 $K "$RT_SRC/rt_early_preinit.c" "$ROOT/crt/thunks.S" -o "$D/preinit_plain" ||
	{ rt_fail build "clang-22 could not build preinit_plain"; exit 1; }
rt_build "$D/preinit_fcc" -O2 "$RT_SRC/rt_early_preinit.c" ||
	{ rt_fail build "fineibt-cc could not build preinit_fcc"; exit 1; }
# -static-fineibt: the runtime inside the executable starts from its
# DT_PREINIT_ARRAY (src/load/preinit.c).
# (Not before the executable's own DT_PREINIT_ARRAY functions: they are
# linked first.)
rt_build "$D/early_fccs" -O2 -static-fineibt "$RT_SRC/rt_early_main.c" -L"$D" -lrt_early \
	'-Wl,-rpath,$ORIGIN' ||
	{ rt_fail build "fineibt-cc could not build the -static-fineibt programs"; exit 1; }

# early_cmd KIND PROG [warn]: the command line (array CMD) and FINEIBT_CFI
# value (CFI) running PROG in mode $m: plain under `fineibt run`, fcc and
# fccs (-static-fineibt) directly.
early_cmd() {
	local kind=$1 prog=$2 w=${3:+,warn}
	case $kind in
	plain)	CMD=("$FIBT" run --cfi="$m$w" --verbose -- "$D/${prog}_plain"); CFI="" ;;
	*)	CMD=(env FINEIBT_VERBOSE=1 "$D/${prog}_$kind"); CFI=$m$w ;;
	esac
}
# The early start says so, except the static runtime's (always early).
early_said() {
	[ "$1" = fccs ] || grep -q "$EARLY_MSG" <<<"$RT_ERR_TXT"
}
printf 'int main(void) { return 0; }\n' >"$D/none.c"
rt_build "$D/early_none" -O2 "$D/none.c" ||
	{ rt_fail build "fineibt-cc could not build early_none"; exit 1; }

EARLY_MSG='runtime started before any constructor'
# (a v6.18 preamble traps at func+3, named after the function)
REPORT_RE='CFI failure at (early_ctor|__cfi_early_twice|early_twice|__bhi_args)\+0x[0-9a-f]+ \(target: early_twice\+0x0; '

for m in "${RT_MODES[@]}"; do
	mode=$(rt_report_mode "$m")	# as the report names it (cfi= words)
	wmode=$(rt_report_mode "$m,warn")
	for kind in plain fcc fccs; do
		early_cmd $kind early
		rt_run early "$CFI" "${CMD[@]}"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "ctor=111 same=1" ] &&
		   early_said $kind && ! grep -q 'CFI failure' <<<"$RT_ERR_TXT"; then
			rt_pass "early-$kind[$m]"
		else
			rt_fail "early-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		fi
		EARLY_CONFUSE=1 rt_run early-confuse "$CFI" "${CMD[@]}"
		if rt_is_off "$m"; then
			[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "ctor=10 same=1" ] &&
				rt_pass "early-confuse-$kind[$m]" ||
				rt_fail "early-confuse-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
			continue
		fi
		if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] &&
		   grep -Eq "${REPORT_RE}.*mode: $mode\)" <<<"$RT_ERR_TXT"; then
			rt_pass "early-confuse-$kind[$m]"
		else
			rt_fail "early-confuse-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		fi
		early_cmd $kind early warn
		EARLY_CONFUSE=1 rt_run early-confuse-warn "$CFI" "${CMD[@]}"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "ctor=10 same=1" ] &&
		   [ "$(grep -c 'CFI failure' <<<"$RT_ERR_TXT")" = 1 ] &&
		   grep -Eq "${REPORT_RE}.*mode: $wmode\)" <<<"$RT_ERR_TXT"; then
			rt_pass "early-confuse-warn-$kind[$m]"
		else
			rt_fail "early-confuse-warn-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		fi
	done
done

# The executable's own DT_PREINIT_ARRAY runs before every constructor
# (the crt hook's included): the runtime starts before it too.
PRE_RE='CFI failure at (pre_init|__cfi_pre_twice|pre_twice|__bhi_args)\+0x[0-9a-f]+ \(target: pre_twice\+0x0; '
for m in "${RT_MODES[@]}"; do
	mode=$(rt_report_mode "$m")	# as the report names it (cfi= words)
	wmode=$(rt_report_mode "$m,warn")
	for kind in plain fcc; do
		early_cmd $kind preinit
		rt_run preinit "$CFI" "${CMD[@]}"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "pre=10 same=1" ] &&
		   early_said $kind; then
			rt_pass "preinit-$kind[$m]"
		else
			rt_fail "preinit-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		fi
		PREINIT_CONFUSE=1 rt_run preinit-confuse "$CFI" "${CMD[@]}"
		if rt_is_off "$m"; then
			[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "pre=10 same=1" ] &&
				rt_pass "preinit-confuse-$kind[$m]" ||
				rt_fail "preinit-confuse-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		elif [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] &&
		     grep -Eq "${PRE_RE}.*mode: $mode\)" <<<"$RT_ERR_TXT"; then
			rt_pass "preinit-confuse-$kind[$m]"
		else
			rt_fail "preinit-confuse-$kind[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
		fi
	done
done

# Only when needed: a program of fineibt-cc modules only starts at the
# constructor, its modules read through their index.
for m in $(fi_with_sets kcfi auto); do
	FINEIBT_VERBOSE=1 rt_run early-none "$m" "$D/early_none"
	if [ "$RT_RC" = 0 ] && grep -q 'runtime started in' <<<"$RT_ERR_TXT" &&
	   ! grep -q "$EARLY_MSG" <<<"$RT_ERR_TXT"; then
		rt_pass "early-none[$m]"
	else
		rt_fail "early-none[$m]" "rc=$RT_RC err='${RT_ERR_TXT:0:800}'"
	fi
	# The program's own strrchr(3): no early start, runs as before.
	rt_run early-interpose "" "$FIBT" run --cfi="$m" --verbose -- "$D/early_interpose"
	if [ "$RT_RC" = 0 ] && [[ $RT_OUT_TXT == "ctor=111 same="[01] ]] &&
	   grep -q 'runtime started in' <<<"$RT_ERR_TXT" &&
	   ! grep -q "$EARLY_MSG" <<<"$RT_ERR_TXT"; then
		rt_pass "early-interposed-write[$m]"
	else
		rt_fail "early-interposed-write[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:800}'"
	fi
done
