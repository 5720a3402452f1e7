#!/usr/bin/env bash
# trap_compiled: a CFI check in a module left as compiled (built with
# -fsanitize=kcfi alone and stripped: no __cfi_ symbols to find its
# preambles by, so the stock bridge refuses it (docs/compat.md); not
# rewritten, not registered) is the runtime's,
# never the program's SIGILL handler's. The runtime keeps such a module's
# .kcfi_traps read-only and the handler reports a listed ud2 with its
# address (fatal; warn and off continue into the call, as the compiled
# check does); a ud2 that is not listed still reaches the program. Before
# this, the program's handler got the CFI trap and, stepping over it, made
# the wrong-type call in every mode. Under warn a repeat of the check is
# counted (one line at 10, 100, ...).
. "$(dirname "$0")/progs/protect_common.bash"

LIB=$PR_OUT/libtrap_compiled.so
MAIN=$PR_OUT/trap_compiled
STOCK=$PR_OUT/trap_compiled_stock
{ [ "$LIB" -nt "$PR_SRC/trap_compiled_lib.c" ] ||
  clang-22 -O2 -fPIC -shared -fsanitize=kcfi -s "$PR_SRC/trap_compiled_lib.c" -o "$LIB"; } &&
{ pr_fresh "$MAIN" "$PR_SRC/trap_compiled_main.c" "$LIB" ||
  "$FCC" -O2 -Wall "$PR_SRC/trap_compiled_main.c" -L"$PR_OUT" -ltrap_compiled \
	-Wl,-rpath,"$PR_OUT" -o "$MAIN"; } &&
{ pr_fresh "$MAIN-static" "$PR_SRC/trap_compiled_main.c" "$LIB" ||
  "$FCC" -O2 -Wall -static-fineibt "$PR_SRC/trap_compiled_main.c" -L"$PR_OUT" \
	-ltrap_compiled -Wl,-rpath,"$PR_OUT" -o "$MAIN-static"; } &&
{ [ "$STOCK" -nt "$PR_SRC/trap_compiled_main.c" ] ||
  clang-22 -O2 -fsanitize=kcfi -s "$PR_SRC/trap_compiled_main.c" -L"$PR_OUT" \
	-ltrap_compiled -Wl,-rpath,"$PR_OUT" -o "$STOCK"; } ||
	{ pr_fail build "could not build trap_compiled"; exit 1; }

RE='^fineibt: CFI failure at 0x[0-9a-f]+ \(a kCFI check of a module left as compiled; not decoded'
RUN=$ROOT/$BUILD/fineibt

check() {	# tag cfi want(fatal|warn|off) prog...
	local tag=$1 cfi=$2 want=$3
	shift 3
	pr_run tc "$cfi" "$@" call
	local n wrong=0
	n=$(grep -cE "$RE" <<<"$PR_ERR_TXT")
	grep -q 'wrong type reached' <<<"$PR_OUT_TXT" && wrong=1
	case $want in
	fatal) [ "$PR_RC" = 132 ] && [ "$n" = 1 ] && [ $wrong = 0 ] ;;
	warn) [ "$PR_RC" = 0 ] && [ "$n" = 1 ] && [ $wrong = 1 ] &&
		grep -qE "$RE; warn\)" <<<"$PR_ERR_TXT" ;;
	off) [ "$PR_RC" = 0 ] && [ "$n" = 0 ] && [ $wrong = 1 ] ;;
	esac && pr_pass "$tag: $want" ||
		pr_fail "$tag" "want $want: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
}

for m in $(fi_with_sets kcfi fineibt auto fineibt,bhi paranoid); do
	check "call[$m]" "$m" fatal "$MAIN"
done
for m in auto,warn kcfi,warn fineibt,bhi,warn; do
	check "call[$m]" "$m" warn "$MAIN"
done
check "call[off]" off off "$MAIN"
for m in auto kcfi,seq=v6.18 auto,warn; do
	case $m in *warn) w=warn ;; *) w=fatal ;; esac
	check "static[$m]" "$m" $w "$MAIN-static"
done
for m in auto kcfi auto,warn; do
	case $m in *warn) w=warn ;; *) w=fatal ;; esac
	check "run[$m]" "$m" $w "$RUN" run "$STOCK"
done

# warn: the same check failing again is counted, its line at 10 and 100
# (docs/traps.md, "Repeated failures"); before, 100 lines.
for m in kcfi,warn auto,warn; do
	pr_run tc "$m" "$MAIN" calls 100
	n=$(grep -cE "$RE; warn\)$" <<<"$PR_ERR_TXT")
	reps=$(sed -nE "s/$RE; warn\) repeated ([0-9]+) times$/\1/p" <<<"$PR_ERR_TXT" | tr '\n' ' ')
	if [ "$PR_RC" = 0 ] && [ "$(tail -n 1 <<<"$PR_OUT_TXT")" = "calls 100" ] && [ "$n" = 1 ] &&
	   [ "$reps" = "10 100 " ] && [ "$(grep -c 'CFI failure' <<<"$PR_ERR_TXT")" = 3 ]; then
		pr_pass "repeat[$m]: one line, then counted"
	else
		pr_fail "repeat[$m]" "rc=$PR_RC full=$n repeats=$reps err='$(head -c 400 <<<"$PR_ERR_TXT")'"
	fi
done

# A ud2 the library's .kcfi_traps does not list stays the program's.
for m in auto kcfi; do
	pr_run tc "$m" "$MAIN" trap
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "handled 1" ] &&
	   ! grep -qE "$RE" <<<"$PR_ERR_TXT"; then
		pr_pass "plain-ud2[$m]: the program's handler"
	else
		pr_fail "plain-ud2[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done
exit 0
