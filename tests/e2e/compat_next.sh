#!/usr/bin/env bash
# compat_next: dlsym(RTLD_NEXT) / dlvsym(RTLD_NEXT) from a kCFI LD_PRELOAD
# interposer (the libfaketime pattern; docs/compat.md). Every
# mode, with the program built by fineibt-cc (libfineibt before libc in
# the lookup order) and by plain clang-22 (libfineibt pulled in by the
# preload, behind libc: the runtime points the interposer's dlsym GOT
# slots at its own): the interposer's constructor finds libc's time and
# libm's ldexp and calls them through pointers; two interposers chain
# (a's next is b's time, b's is libc's); a missing name gives NULL; a
# type-confused call through an RTLD_NEXT pointer to kCFI code (a calling
# b's time as long (*)(long, long)) is still caught in every mode.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/compat_next
rt_build "$P" -O2 "$RT_SRC/compat_next_main.c" -lm ||
	{ rt_fail build "fineibt-cc could not build compat_next"; exit 1; }
PR=$RT_OUT/compat_next_plain
clang-22 -O2 -o "$PR" "$RT_SRC/compat_next_main.c" -lm ||
	{ rt_fail build "clang-22 could not build compat_next_plain"; exit 1; }
LA=$RT_OUT/libnext_a.so LB=$RT_OUT/libnext_b.so
rt_build "$LA" -O2 -fPIC -shared -DNEXT_TAG='"a"' "$RT_SRC/compat_next_lib.c" &&
rt_build "$LB" -O2 -fPIC -shared -DNEXT_TAG='"b"' "$RT_SRC/compat_next_lib.c" ||
	{ rt_fail build "fineibt-cc could not build the interposers"; exit 1; }

for m in "${RT_MODES[@]}"; do
	mode=$(rt_base "$m") rmode=$(rt_report_mode "$m")
	for prog in "$P" "$PR"; do
		k=${prog##*/}
		LD_PRELOAD=$LA rt_run next-one "$m" "$prog"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "a>|1000000000 9.0" ] && [ -z "$RT_ERR_TXT" ]; then
			rt_pass "next-one[$k,$m]"
		else
			rt_fail "next-one[$k,$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
		LD_PRELOAD=$LA:$LB rt_run next-chain "$m" "$prog"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "a>b>|1000000000 9.0" ] && [ -z "$RT_ERR_TXT" ]; then
			rt_pass "next-chain[$k,$m]"
		else
			rt_fail "next-chain[$k,$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
		# (v6.18 has no inline arity-1 BHI form: under bhi time()'s check
		# traps in its __bhi_args stub)
		NEXT_CONFUSE=1 LD_PRELOAD=$LA:$LB rt_run next-confused "$m" "$prog"
		if [ "$mode" = off ]; then
			if [ "$RT_RC" = 0 ]; then rt_pass "next-confused[$k,$m]: unchecked"
			else rt_fail "next-confused[$k,$m]" "rc=$RT_RC err='$RT_ERR_TXT'"; fi
		elif [ "$RT_RC" = 132 ] && grep -Eq "CFI failure at ((__cfi_)?time|__bhi_args)\+.*target: time\+0x0;.*mode: $rmode\)" <<<"$RT_ERR_TXT"; then
			rt_pass "next-confused[$k,$m]: caught"
		else
			rt_fail "next-confused[$k,$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	done
done
