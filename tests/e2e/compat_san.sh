#!/usr/bin/env bash
# Sanitizers and fineibt together (docs/compat.md, "Sanitizers"): a
# program built with fineibt-cc -fsanitize=address (LeakSanitizer on, as
# by default), =undefined, =thread or =memory runs and exits 0 in every
# mode, its sanitizer still reports a real bug, and a CFI failure is
# still reported and stops it (or, with warn, lets it run on).
# What failed before: every ASan program died at exit in LeakSanitizer's
# scan of the runtime's unreadable guard pages (rc 1, "Tracer caught
# signal 11"); TSan and MSan programs crashed before main in their own
# interceptors, called by the runtime's early start.
. "$(dirname "$0")/progs/rt_lib.bash"
SRC=$RT_SRC/compat_san.c
MODES=(off kcfi fineibt fineibt,paranoid fineibt,paranoid,bhi auto)

# san_case NAME CFI PROG ARG WANT_RC ERE: exit status WANT_RC and stderr
# matching ERE (an empty ERE: no sanitizer or fineibt report at all)
san_case() {
	local name=$1 cfi=$2 prog=$3 arg=$4 want=$5 ere=$6
	rt_run "san-$name" "$cfi" "$prog" $arg
	if [ "$RT_RC" != "$want" ]; then
		rt_fail "$name" "rc=$RT_RC (want $want): $(head -c 400 <<<"$RT_ERR_TXT")"
	elif [ -n "$ere" ] && ! grep -Eq "$ere" <<<"$RT_ERR_TXT"; then
		rt_fail "$name" "stderr lacks /$ere/: $(head -c 400 <<<"$RT_ERR_TXT")"
	elif [ -z "$ere" ] && grep -Eq 'Sanitizer|fineibt:' <<<"$RT_ERR_TXT"; then
		rt_fail "$name" "unexpected report: $(head -c 400 <<<"$RT_ERR_TXT")"
	else
		rt_pass "$name"
	fi
}

build() {	# build OUT FLAGS...
	local out=$1
	shift
	rt_build "$out" -O0 -g "$@" "$SRC" -lpthread ||
		{ rt_fail "build ${out##*/}" "fineibt-cc $* failed"; return 1; }
}

CFI_ERE='^fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: add1_long\+0x0'

# ----------------------------------------------- ASan + LSan, every mode
A=$RT_OUT/san_asan
if build "$A" -fsanitize=address; then
	for m in "${MODES[@]}"; do
		san_case "asan-clean-$m" "$m" "$A" "" 0 ""
		san_case "asan-leak-$m" "$m" "$A" leak 1 'LeakSanitizer: detected memory leaks'
		san_case "asan-overflow-$m" "$m" "$A" overflow 1 'AddressSanitizer: heap-buffer-overflow'
	done
	# One leak only: the runtime's own memory is not reported.
	san_case asan-leak-only-the-programs auto "$A" leak 1 '100 byte\(s\) leaked in 1 allocation'
	san_case asan-cfi-stops auto "$A" confused 132 "$CFI_ERE"
	san_case asan-cfi-warn auto,warn "$A" confused 0 "$CFI_ERE.*[;,] ?warn\)"
fi
# The static runtime: the same state, in the executable's .bss.
AS=$RT_OUT/san_asan_static
if build "$AS" -fsanitize=address -static-fineibt; then
	san_case asan-static-clean auto "$AS" "" 0 ""
	san_case asan-static-leak auto "$AS" leak 1 'LeakSanitizer: detected memory leaks'
	san_case asan-static-cfi auto "$AS" confused 132 "$CFI_ERE"
fi

# ----------------------------------------------------------------- UBSan
# -fsanitize=undefined includes function, which clang refuses beside
# kcfi: fineibt-cc drops function (kCFI checks the same calls).
U=$RT_OUT/san_ubsan
if build "$U" -fsanitize=undefined; then
	san_case ubsan-clean auto "$U" "" 0 ""
	san_case ubsan-reports auto "$U" ubsan 0 'runtime error: signed integer overflow'
	san_case ubsan-cfi-warn auto,warn "$U" confused 0 "$CFI_ERE.*[;,] ?warn\)"
	san_case ubsan-cfi-stops auto "$U" confused 132 "$CFI_ERE"
fi

# ---------------------------------------------------------- TSan, MSan
T=$RT_OUT/san_tsan
if build "$T" -fsanitize=thread; then
	for m in off kcfi auto; do
		san_case "tsan-clean-$m" "$m" "$T" "" 0 ""
	done
	san_case tsan-race auto "$T" race 66 'ThreadSanitizer: data race'
	san_case tsan-cfi auto "$T" confused 132 "$CFI_ERE"
fi
M=$RT_OUT/san_msan
if build "$M" -fsanitize=memory; then
	for m in off kcfi auto; do
		san_case "msan-clean-$m" "$m" "$M" "" 0 ""
	done
	san_case msan-uninit auto "$M" uninit 1 'MemorySanitizer: use-of-uninitialized-value'
	san_case msan-cfi auto "$M" confused 132 "$CFI_ERE"
fi
exit 0
