#!/usr/bin/env bash
# protect_libgot: the GOTs a fineibt-cc program does not own. Debian links
# libc, libz, libstdc++... with partial RELRO: their .got.plt stays
# writable, and their own PLT jumps through it (libc's calls to its IFUNC
# string functions, IRELATIVE slots bound at load; ld.so's four slots),
# checked by no mode. The runtime makes the PLT entries of every module
# direct once their slots are bound (src/interpose/plt.c): a write over every
# bound slot of libc, ld.so or libz then redirects nothing. libc's and
# ld.so's are bound at load (run directly); libz's only with LD_BIND_NOW
# (`fineibt run`). Control: libz run directly binds lazily after the
# runtime's pass, and the same write hijacks (docs/protection.md).
. "$(dirname "$0")/progs/protect_common.bash"

SRC=$PR_SRC/protect_libgot.c
P=$PR_OUT/protect_libgot

{ pr_fresh "$P" "$SRC" || "$FCC" -O2 -Wall "$SRC" -lz -o "$P"; } &&
{ pr_fresh "$P-static" "$SRC" || "$FCC" -O2 -Wall -static-fineibt "$SRC" -lz -o "$P-static"; } ||
	{ pr_fail build "could not build protect_libgot (needs zlib1g-dev)"; exit 1; }

# kept: the write reached N slots (N > 0) and the call after it did not
# arrive at hijack().
kept() {
	[ "$PR_RC" = 0 ] && [[ $PR_OUT_TXT =~ ^wrote\ [1-9][0-9]*$'\n'not\ reached$ ]]
}

for prog in "$P" "$P-static"; do
	for m in $(fi_with_sets off kcfi fineibt auto fineibt,bhi auto,warn); do
		for c in "libc.so" "ld-linux" "now:libz.so"; do
			tag="libgot[$m,${prog##*/},$c]"
			case $c in
			now:*) pr_run libgot "$m" env LD_BIND_NOW=1 "$prog" "${c#now:}" bound ;;
			*) pr_run libgot "$m" "$prog" "$c" bound ;;
			esac
			if kept; then
				pr_pass "$tag: every bound slot overwritten, nothing redirected"
			else
				pr_fail "$tag" "want 'wrote N' then 'not reached': rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
			fi
		done
	done
done

# `fineibt run` asks for LD_BIND_NOW: the same for libz.
for m in auto kcfi; do
	pr_run libgot-run "$m" "$ROOT/$BUILD/fineibt" run "$P" libz.so bound
	if kept; then
		pr_pass "libgot-run[$m,libz.so]: nothing redirected"
	else
		pr_fail "libgot-run[$m,libz.so]" "want 'wrote N' then 'not reached': rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done

# A thread started before any constructor (.preinit_array) and never
# stopped: lazily bound entries are left (another thread could stand in
# one), but libc's IRELATIVE slots (the loader resolves them before any
# code runs) and ld.so's (never bound lazily: GOT[2] empty) are still
# made direct.
{ pr_fresh "$P-early" "$SRC" ||
  "$FCC" -O2 -Wall -DPL_EARLY_THREAD "$SRC" -lz -lpthread -o "$P-early"; } ||
	pr_fail build "could not build $P-early"
for c in "libc.so irel" "ld-linux bound"; do
	pr_run libgot-early auto "$P-early" $c
	if kept; then
		pr_pass "libgot-early-thread[$c]: nothing redirected"
	else
		pr_fail "libgot-early-thread[$c]" "want 'wrote N' then 'not reached': rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done

# What is not bound at the pass stays: libz run directly (bound by the
# program's first compress(), after start-up), named under FINEIBT_VERBOSE
# (not as a warning: lazy slots are the norm in a library not built here).
pr_run libgot-lazy auto env FINEIBT_VERBOSE=1 "$P" libz.so bound
if [ "$PR_RC" = 42 ] && grep -qE '^fineibt: .*/libz\.so[^:]*: [0-9]+ of its [0-9]+ PLT entries still read its writable GOT \(not bound yet\)' <<<"$PR_ERR_TXT" &&
   ! grep -q '^fineibt: warning: ' <<<"$PR_ERR_TXT"; then
	pr_pass "control[libz.so,lazy]: bound after the pass, hijacked, named"
else
	pr_fail "control[libz.so,lazy]" "want the hijack and the warning: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
fi
# libc's are named when made direct.
pr_run libgot-verbose auto env FINEIBT_VERBOSE=1 "$P" libc.so bound
if kept && grep -qE '^fineibt: .*/libc\.so\.6: [0-9]+ PLT entries made direct' <<<"$PR_ERR_TXT"; then
	pr_pass "libgot-verbose[libc.so]: made-direct line"
else
	pr_fail "libgot-verbose[libc.so]" "want the made-direct line: rc=$PR_RC err='$PR_ERR_TXT'"
fi
exit 0
