#!/usr/bin/env bash
# compat_knr: old-style C definitions (docs/compat.md). An
# empty-parentheses definition `static void invalidate()` called through
# `void (*)(void)`, a K&R `int twice(a) int a;` through `int (*)(int)`,
# K&R with a promoted char parameter, and `const char *name()` through
# `const char *(*)(void)` run in every mode; the same functions called
# with another arity or return type are still caught wherever a check
# runs (kcfi, and every FineIBT mode: callee or caller side), with the
# usual report. Calls through unprototyped `T (*)()` pointers carry no
# check (clang emits none) and keep working.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/compat_knr
rt_build "$P" -O2 -std=gnu17 -Wno-deprecated-non-prototype "$RT_SRC/compat_knr.c" ||
	{ rt_fail build "fineibt-cc could not build compat_knr"; exit 1; }
PX=$RT_OUT/compat_knr_exact
rt_build "$PX" -O2 --fineibt-exact -Wno-deprecated-non-prototype "$RT_SRC/compat_knr.c" ||
	{ rt_fail build "fineibt-cc --fineibt-exact could not build compat_knr"; exit 1; }

for m in "${RT_MODES[@]}"; do
	for bin in "$P" "$PX"; do
		tag=$m${bin#"$P"}
		rt_run knr "$m" "$bin"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] && [ -z "$RT_ERR_TXT" ]; then
			rt_pass "knr-legal[$tag]"
		else
			rt_fail "knr-legal[$tag]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	done
	rt_run knr-unproto "$m" "$P" unproto
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "2 1" ]; then
		rt_pass "knr-unproto[$m]"
	else
		rt_fail "knr-unproto[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	for bad in arity ret twice2; do
		rt_run "knr-$bad" "$m" "$P" "$bad"
		if rt_is_off "$m"; then
			# Nothing checks; the call itself is harmless here.
			rt_pass "knr-$bad[$m]: not checked"
			continue
		fi
		target=invalidate
		[ "$bad" = twice2 ] && target=twice
		if [ "$RT_RC" = 132 ] &&
		   grep -Eq "${RT_REPORT_RE}${target}\+0x0; expected type: 0x[0-9a-f]{8}; mode: $(rt_report_mode "$m")\)" <<<"$RT_ERR_TXT"; then
			rt_pass "knr-$bad[$m]: caught"
		else
			rt_fail "knr-$bad[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	done
done

# Static patching applies the same rule.
S=$RT_OUT/compat_knr.patched
rm -f "$S"
if "$FIBT" patch "$P" -o "$S" --cfi=kcfi >/dev/null 2>&1 && { "$S" >/dev/null 2>&1; [ $? = 0 ]; }; then
	rt_pass "knr-static-patch"
else
	rt_fail "knr-static-patch" "fineibt patch --cfi=kcfi output does not run"
fi
