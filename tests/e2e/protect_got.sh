#!/usr/bin/env bash
# protect_got: fineibt-cc links with full RELRO by default (issue 15). A
# program that overwrites its own GOT entry of puts() with another
# function must fault on the write (SIGSEGV) and never reach that
# function, in every mode and with either runtime; built with
# --fineibt-no-relro the same write redirects puts() (the control: the
# attack is real, and only RELRO stops it). Shared objects built by
# fineibt-cc carry BIND_NOW and GNU_RELRO too; -Wl,-z,lazy still wins.
. "$(dirname "$0")/progs/protect_common.bash"

SRC=$PR_SRC/protect_got.c
G=$PR_OUT/protect_got
READELF=llvm-readelf-22

build() {
	local out=$1
	shift
	pr_fresh "$out" "$SRC" || "$FCC" -O2 -Wall "$@" "$SRC" -o "$out"
}
build "$G" && build "$G-static" -static-fineibt &&
build "$G-norelro" --fineibt-no-relro &&
build "$G-lazy" -Wl,-z,lazy ||
	{ pr_fail build "could not build protect_got"; exit 1; }

bind_now() {
	$READELF -dW "$1" | grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' &&
		$READELF -lW "$1" | grep -q GNU_RELRO
}

for prog in "$G" "$G-static"; do
	for m in $(fi_with_sets off kcfi fineibt auto fineibt,bhi auto,warn); do
		tag="got-write[$m,${prog##*/}]"
		pr_run got "$m" "$prog"
		if [ "$PR_RC" = 139 ] && [ "$PR_OUT_TXT" = "writing GOT[puts]" ]; then
			pr_pass "$tag: faults, puts() not redirected"
		else
			pr_fail "$tag" "want SIGSEGV on the write: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
	if bind_now "$prog"; then
		pr_pass "relro-flags[${prog##*/}]: BIND_NOW + GNU_RELRO"
	else
		pr_fail "relro-flags[${prog##*/}]" "missing BIND_NOW or GNU_RELRO"
	fi
done

for v in norelro lazy; do
	pr_run got auto "$G-$v"
	if [ "$PR_RC" = 42 ] && [ "$PR_OUT_TXT" = $'writing GOT[puts]\nhijacked' ]; then
		pr_pass "control[$v]: without full RELRO the write redirects puts()"
	else
		pr_fail "control[$v]" "want the hijack to work: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done

# The runtime names a kCFI module whose PLT slots stay writable (outside
# PT_GNU_RELRO) under FINEIBT_VERBOSE; never a full-RELRO one. Also for a
# stock clang-22 kCFI program linked lazily and run with `fineibt run`.
GOT_RE='^fineibt: warning: .*: its GOT is writable \(partial RELRO'
stock=$PR_OUT/protect_got-stock-lazy
pr_fresh "$stock" "$SRC" ||
	clang-22 -O2 -fsanitize=kcfi -fpatchable-function-entry=11,11 \
		-fsanitize-cfi-icall-generalize-pointers -fcf-protection=branch \
		-Wl,-z,relro,-z,lazy "$SRC" -o "$stock" ||
	pr_fail build "could not build $stock"
for v in "$G" "$G-static" "$G-norelro" "$G-lazy" "run:$stock"; do
	tag="got-verbose[${v##*/}]"
	case $v in
	run:*) pr_run verbose auto env FINEIBT_VERBOSE=1 "$ROOT/$BUILD/fineibt" run "${v#run:}" ;;
	*) pr_run verbose auto env FINEIBT_VERBOSE=1 "$v" ;;
	esac
	n=$(grep -cE "$GOT_RE" <<<"$PR_ERR_TXT")
	case $v in
	"$G"|"$G-static") want=0 ;;
	*) want=1 ;;
	esac
	if [ "$n" = "$want" ]; then
		pr_pass "$tag: $want writable-GOT line(s)"
	else
		pr_fail "$tag" "want $want writable-GOT line: rc=$PR_RC err='$PR_ERR_TXT'"
	fi
done

# A shared object gets the same default.
so=$PR_OUT/libprotect_got.so
{ pr_fresh "$so" "$PR_SRC/protect_lib.c" ||
  "$FCC" -O2 -fPIC -shared "$PR_SRC/protect_lib.c" -o "$so"; } &&
	bind_now "$so" && pr_pass "relro-flags[shared object]" ||
	pr_fail "relro-flags[shared object]" "missing BIND_NOW or GNU_RELRO"
exit 0
