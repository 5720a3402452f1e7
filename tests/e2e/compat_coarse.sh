#!/usr/bin/env bash
# compat_coarse: the coarse check of the calls clang leaves without a
# kCFI check (docs/compat.md, "Calls without a kCFI check: the coarse
# check"): calls through an unprototyped `int (*)()` pointer and from a
# no_sanitize("kcfi") function, which go through the module's own
# __x86_indirect_thunk_<reg>. Legal calls of every arity 0..7, a tail
# call, libc's free through its veneer, an uninstrumented library's
# exported entry and an unwind-protect stack modelled on bash's run in
# every mode; a call into the middle of a function, into its preamble,
# into data, into libc past an entry, by tail jump, from
# no_sanitize("kcfi") code, through an overwritten unwind-protect
# cleanup and into a JIT region past its function are stopped with
# "unchecked call site, coarse check" in every mode but off; warn
# reports and continues. `fineibt inspect` says the calls are checked;
# `fineibt patch` keeps them checked (but in off); the static runtime too.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/compat_coarse
rt_build "$P" -O2 -g -Wno-deprecated-non-prototype -I"$ROOT/include" \
	"$RT_SRC/compat_coarse.c" "$RT_SRC/compat_coarse_raw.S" ||
	{ rt_fail build "fineibt-cc could not build compat_coarse"; exit 1; }

COARSE='; unchecked call site, coarse check; mode: '
# what each bad call targets in a report, and what it prints where nothing checks
declare -A TGT=(
	[mid]='coarse_body\+0x10' [pre]='[^;]+' [tail]='coarse_body\+0x10'
	[nocfi]='coarse_body\+0x10' [unwind]='coarse_body\+0x10'
	[data]='0x[0-9a-f]+ in compat_coarse, not instrumented'
	[libc]='(_IO_)?printf\+0x10 in libc\.so\.6, not instrumented'
	[jit]='0x[0-9a-f]+'
)
declare -A OFF=( [mid]=7 [pre]=100 [tail]=7 [nocfi]=8 [unwind]=-1 [jit]=56 )

for m in "${RT_MODES[@]}"; do
	rt_run coarse-legal "$m" "$P" legal
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "coarse-legal[$m]"
	else
		rt_fail "coarse-legal[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done

for m in "${RT_BASE_MODES[@]}"; do
	for bad in mid pre data libc tail nocfi unwind jit; do
		rt_run "coarse-$bad" "$m" "$P" "$bad"
		if rt_is_off "$m"; then
			# Nothing checks: the call runs (data and libc+16 fault).
			if [ -z "$RT_ERR_TXT" ] && { [ "$RT_OUT_TXT" = "${OFF[$bad]:-}" ] ||
			   { [ -z "${OFF[$bad]:-}" ] && [ "$RT_RC" != 0 ] && [ "$RT_RC" != 132 ]; }; }; then
				rt_pass "coarse-$bad[$m]: not checked"
			else
				rt_fail "coarse-$bad[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
			fi
			continue
		fi
		if [ "$bad" = pre ] && rt_is_fineibt "$m"; then
			# The FineIBT preamble is its function's checked landing
			# pad: the coarse check lets it be, its hash check stops it.
			if [ "$RT_RC" = 132 ] && grep -Eq "^fineibt: CFI failure at __cfi_a0\+0x6 \(target: a0\+0x0; expected type: 0x[0-9a-f]{8}; mode: $(rt_report_mode "$m")\)$" <<<"$RT_ERR_TXT"; then
				rt_pass "coarse-$bad[$m]: stopped by the preamble"
			else
				rt_fail "coarse-$bad[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
			fi
			continue
		fi
		site='[^ ]+'
		[ "$bad" = tail ] && site='a tail jump through a thunk \(returning to main\+0x[0-9a-f]+\)'
		[ "$bad" = unwind ] && site='main\+0x[0-9a-f]+'
		[ "$bad" = nocfi ] && site='nocfi\+0x[0-9a-f]+'
		if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] &&
		   grep -Eq "^fineibt: CFI failure at $site \(target: ${TGT[$bad]}${COARSE}$(rt_report_mode "$m")\)$" <<<"$RT_ERR_TXT"; then
			rt_pass "coarse-$bad[$m]: stopped"
		else
			rt_fail "coarse-$bad[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	done
done

# The unwind-protect call's report names its source line (DWARF).
rt_run coarse-unwind-line kcfi "$P" unwind
if grep -Eq '^fineibt:   call site: .*compat_coarse\.c:[0-9]+ \(main\+0x[0-9a-f]+\)$' <<<"$RT_ERR_TXT"; then
	rt_pass "coarse-report-line"
else
	rt_fail "coarse-report-line" "err='$RT_ERR_TXT'"
fi

# warn: reported, and the call is made.
for m in kcfi,warn fineibt,warn fineibt,paranoid,warn fineibt,bhi,warn; do
	for bad in mid unwind jit; do
		rt_run "coarse-warn-$bad" "$m" "$P" "$bad"
		want=${OFF[$bad]}
		[ "$bad" = unwind ] && want=-1
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$want" ] &&
		   grep -Eq "${COARSE}[a-z+]+/v4; warn\)$" <<<"$RT_ERR_TXT" &&
		   [ "$(grep -c '^fineibt: CFI failure' <<<"$RT_ERR_TXT")" = 1 ]; then
			rt_pass "coarse-warn-$bad[$m]"
		else
			rt_fail "coarse-warn-$bad[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	done
done

# The uninstrumented library's entry is let through by the handler: one
# SIGILL for that one call, none for any other legal call.
if command -v strace >/dev/null 2>&1; then
	n=$(FINEIBT_CFI=kcfi strace -f -e trace=none -e signal=SIGILL "$P" legal 2>&1 >/dev/null |
	    grep -c 'SIGILL')
	if [ "$n" = 1 ]; then
		rt_pass "coarse-raw-entry-one-signal"
	else
		rt_fail "coarse-raw-entry-one-signal" "$n SIGILLs"
	fi
fi

# inspect counts the calls and says the thunks check them.
out=$("$FIBT" inspect "$P")
if grep -Eq '^thunk calls without check: [1-9][0-9]* \(coarse check in the thunks: any known function entry\)$' <<<"$out" &&
   "$FIBT" inspect --json "$P" | grep -q '"coarse_thunks": *true'; then
	rt_pass "coarse-inspect"
else
	rt_fail "coarse-inspect" "$(grep 'thunk calls' <<<"$out")"
fi

# fineibt patch leaves the calls to the thunks (but in off): the patched
# file stops the call just as the runtime's rewrite does.
S=$RT_OUT/compat_coarse.patched
for m in kcfi fineibt,paranoid off; do
	rm -f "$S"
	if ! "$FIBT" patch "$P" -o "$S" --cfi="$m" -q >/dev/null 2>&1; then
		rt_fail "coarse-static[$m]" "fineibt patch failed"
		continue
	fi
	n=$("$FIBT" inspect "$S" | sed -n 's/^thunk calls without check: \([0-9]*\).*/\1/p')
	rt_run coarse-static "$m" "$S" mid
	if [ "$m" = off ] && [ "$n" = 0 ] && [ "$RT_OUT_TXT" = 7 ]; then
		rt_pass "coarse-static[$m]: made direct, not checked"
	elif [ "$m" != off ] && [ "${n:-0}" -gt 0 ] && [ "$RT_RC" = 132 ] &&
	     grep -q 'unchecked call site, coarse check' <<<"$RT_ERR_TXT"; then
		rt_pass "coarse-static[$m]: stopped"
	else
		rt_fail "coarse-static[$m]" "tcalls=$n rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done

# The static runtime (-static-fineibt): the link relaxes the thunks' GOT
# load into a lea of the executable's own check; the same stops.
PS=$RT_OUT/compat_coarse_static
rt_build "$PS" -static-fineibt -O2 -g -Wno-deprecated-non-prototype -I"$ROOT/include" \
	"$RT_SRC/compat_coarse.c" "$RT_SRC/compat_coarse_raw.S" ||
	{ rt_fail build "fineibt-cc -static-fineibt could not build compat_coarse"; exit 1; }
for m in kcfi fineibt,paranoid; do
	rt_run coarse-static-legal "$m" "$PS" legal
	a="rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	rt_run coarse-static-mid "$m" "$PS" unwind
	if [ "$a" = "rc=0 out='ok' err=''" ] && [ "$RT_RC" = 132 ] &&
	   grep -Eq "^fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: coarse_body\+0x10${COARSE}$(rt_report_mode "$m")\)$" <<<"$RT_ERR_TXT"; then
		rt_pass "coarse-static-runtime[$m]"
	else
		rt_fail "coarse-static-runtime[$m]" "legal: $a; unwind: rc=$RT_RC err='$RT_ERR_TXT'"
	fi
done
