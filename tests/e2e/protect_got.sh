#!/usr/bin/env bash
# protect_got: fineibt-cc links with full RELRO by default (docs/protection.md). A
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
GOT_RE='^fineibt: warning: .*: its GOT is writable \(partial RELRO'

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

# Once its slots are bound (LD_BIND_NOW, which `fineibt run` sets), a
# kCFI module whose GOT stays writable gets direct PLT entries
# (src/interpose/plt.c): the same write then redirects nothing, in every mode
# and with either runtime. Stock clang-22 kCFI programs linked lazily with
# GNU ld (the default) and lld, each with the plain and the IBT PLT
# (.plt.sec), run with `fineibt run`; fineibt-cc's -z lazy / norelro
# builds with LD_BIND_NOW=1. Without the binding (run directly, or an
# empty LD_BIND_NOW: the user's choice) the controls above still hijack.
stock=$PR_OUT/protect_got-stock-lazy
STOCK_CF="-O2 -fsanitize=kcfi -fpatchable-function-entry=11,11 -fsanitize-cfi-icall-generalize-pointers -fcf-protection=branch"
build_stock() {
	local out=$1
	shift
	pr_fresh "$out" "$SRC" ||
		clang-22 $STOCK_CF "$@" "$SRC" -o "$out" 2>/dev/null ||
		pr_fail build "could not build $out"
}
build_stock "$stock" -Wl,-z,relro,-z,lazy
build_stock "$stock-ibt" -Wl,-z,relro,-z,lazy,-z,ibtplt
build_stock "$stock-lld" -fuse-ld=lld -Wl,-z,relro,-z,lazy
build_stock "$stock-lld-ibt" -fuse-ld=lld -Wl,-z,relro,-z,lazy,-z,force-ibt
build "$G-static-lazy" -static-fineibt -Wl,-z,lazy ||
	pr_fail build "could not build $G-static-lazy"
for v in "$stock-ibt" "$stock-lld-ibt"; do
	if $READELF -SW "$v" | grep -q '\.plt\.sec'; then
		pr_pass "ibt-plt[${v##*/}]: has .plt.sec"
	else
		pr_fail "ibt-plt[${v##*/}]" "no .plt.sec: the IBT PLT is not tested"
	fi
done
direct_ok() {
	[ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'writing GOT[puts]\nnot reached' ]
}
for m in $(fi_with_sets off kcfi fineibt auto fineibt,bhi auto,warn fineibt,paranoid); do
	for v in "run:$stock" "run:$stock-ibt" "run:$stock-lld" "run:$stock-lld-ibt" \
		 "$G-lazy" "$G-norelro" "$G-static-lazy"; do
		tag="got-direct[$m,${v##*/}]"
		case $v in
		run:*) pr_run direct "$m" "$ROOT/$BUILD/fineibt" run "${v#run:}" ;;
		*) pr_run direct "$m" env LD_BIND_NOW=1 "$v" ;;
		esac
		if direct_ok; then
			pr_pass "$tag: the write redirects nothing"
		else
			pr_fail "$tag" "want puts() reached: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
done
# A library linked lazily and dlopen'ed after start-up attacks its own
# GOT: its PLT is made direct when the dlopen returns. A stock clang-22
# library under `fineibt run`, fineibt-cc's with LD_BIND_NOW=1; the
# program is fineibt-cc's. RTLD_LAZY, run directly: not bound, hijacked.
DL_SRC=$PR_SRC/protect_got_dl.c
dlmain=$PR_OUT/protect_got_dl
{ pr_fresh "$dlmain" "$DL_SRC" || "$FCC" -O2 "$DL_SRC" -o "$dlmain"; } &&
{ pr_fresh "$PR_OUT/libpg-stock.so" "$SRC" ||
  clang-22 $STOCK_CF -fPIC -shared -DPG_LIB -Wl,-z,relro,-z,lazy "$SRC" \
	-o "$PR_OUT/libpg-stock.so"; } &&
{ pr_fresh "$PR_OUT/libpg.so" "$SRC" ||
  "$FCC" -O2 -fPIC -shared -DPG_LIB -Wl,-z,lazy "$SRC" -o "$PR_OUT/libpg.so"; } ||
	pr_fail build "could not build the dlopen case"
for m in $(fi_with_sets off kcfi fineibt auto fineibt,paranoid); do
	pr_run direct-dl "$m" "$ROOT/$BUILD/fineibt" run "$dlmain" "$PR_OUT/libpg-stock.so"
	if direct_ok; then
		pr_pass "got-direct-dlopen[$m,stock]: the write redirects nothing"
	else
		pr_fail "got-direct-dlopen[$m,stock]" "want puts() reached: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
	pr_run direct-dl "$m" env LD_BIND_NOW=1 "$dlmain" "$PR_OUT/libpg.so"
	if direct_ok; then
		pr_pass "got-direct-dlopen[$m,fineibt-cc]: the write redirects nothing"
	else
		pr_fail "got-direct-dlopen[$m,fineibt-cc]" "want puts() reached: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done
# The same with a thread of the library calling through its PLT while
# the entries are made direct (the page swap is atomic): 20 runs.
{ pr_fresh "$PR_OUT/libpg-thr.so" "$SRC" ||
  "$FCC" -O2 -fPIC -shared -pthread -DPG_LIB -DPG_THREAD -Wl,-z,lazy "$SRC" \
	-o "$PR_OUT/libpg-thr.so"; } || pr_fail build "could not build libpg-thr.so"
bad=0
for i in $(seq 20); do
	pr_run direct-thr auto env LD_BIND_NOW=1 FINEIBT_VERBOSE=1 "$dlmain" "$PR_OUT/libpg-thr.so"
	direct_ok && grep -qE "libpg-thr.so: [0-9]+ PLT entries made direct" <<<"$PR_ERR_TXT" ||
		{ bad=$((bad + 1)); last="rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"; }
done
if [ "$bad" = 0 ]; then
	pr_pass "got-direct-thread: made direct under a running caller, 20 runs"
else
	pr_fail "got-direct-thread" "$bad of 20 runs: $last"
fi

# Run directly with lazy binding and no thread: what is bound at start-up
# is made direct then, what the program binds later (its dlopen and dlsym
# entries) at the next pass, after its dlopen (PLT0 found again from the
# remembered place).
{ pr_fresh "$dlmain-lazy" "$DL_SRC" || "$FCC" -O2 -Wl,-z,lazy "$DL_SRC" -o "$dlmain-lazy"; } ||
	pr_fail build "could not build $dlmain-lazy"
pr_run direct-late auto env FINEIBT_VERBOSE=1 "$dlmain-lazy" "$PR_OUT/libpg.so" lazy
n=$(grep -cE "protect_got_dl-lazy: [0-9]+ PLT entries made direct" <<<"$PR_ERR_TXT")
if [ "$n" = 2 ]; then
	pr_pass "got-direct-late: entries made direct at start-up and after the dlopen"
else
	pr_fail "got-direct-late" "want a made-direct line for the program: err='$PR_ERR_TXT'"
fi

# Without LD_BIND_NOW, a library dlopen'ed RTLD_LAZY while another thread
# runs: that thread could stand in a lazy entry being bound, so its
# entries are left, and the warning says why (the gap stays). Dlopen'ed
# RTLD_NOW, no slot of it is ever bound lazily (the loader left GOT[2],
# its resolver, empty): made direct even with the thread.
pr_run direct-thr auto env FINEIBT_VERBOSE=1 "$dlmain" "$PR_OUT/libpg-thr.so" lazy
if [ "$PR_RC" = 42 ] && grep -qE "$GOT_RE.*lazy binding, with other threads running" <<<"$PR_ERR_TXT"; then
	pr_pass "got-busy-thread: lazy binding + a thread: left, named"
else
	pr_fail "got-busy-thread" "want the entries left and the line: rc=$PR_RC err='$PR_ERR_TXT'"
fi
pr_run direct-thr auto env FINEIBT_VERBOSE=1 "$dlmain" "$PR_OUT/libpg-thr.so"
if direct_ok && grep -qE "libpg-thr.so: [0-9]+ PLT entries made direct" <<<"$PR_ERR_TXT"; then
	pr_pass "got-now-thread: RTLD_NOW + a thread, no LD_BIND_NOW: made direct"
else
	pr_fail "got-now-thread" "want the entries made direct: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
fi

pr_run direct-dl auto "$dlmain" "$PR_OUT/libpg.so" lazy
if [ "$PR_RC" = 42 ]; then
	pr_pass "control[dlopen,lazy]: not bound, the write redirects puts()"
else
	pr_fail "control[dlopen,lazy]" "want the hijack: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
fi

pr_run lazy-choice auto env LD_BIND_NOW= "$ROOT/$BUILD/fineibt" run "$stock"
if [ "$PR_RC" = 42 ]; then
	pr_pass "run-lazy-choice: an empty LD_BIND_NOW is kept (lazy: hijacked)"
else
	pr_fail "run-lazy-choice" "want the hijack: rc=$PR_RC out='$PR_OUT_TXT'"
fi

# Under FINEIBT_VERBOSE the runtime names a module whose PLT still
# jumps through writable slots (outside PT_GNU_RELRO: not bound yet), and
# one whose entries it made direct; never a full-RELRO one.
DIRECT_RE='^fineibt: .*: [0-9]+ PLT entries made direct'
for v in "$G" "$G-static" "$G-norelro" "$G-lazy" "run:$stock"; do
	tag="got-verbose[${v##*/}]"
	case $v in
	run:*) pr_run verbose auto env FINEIBT_VERBOSE=1 "$ROOT/$BUILD/fineibt" run "${v#run:}" ;;
	*) pr_run verbose auto env FINEIBT_VERBOSE=1 "$v" ;;
	esac
	# Lines about the program only: libc and ld.so get theirs too.
	n=$(grep -E "$GOT_RE" <<<"$PR_ERR_TXT" | grep -c "/${v##*/}: ")
	d=$(grep -E "$DIRECT_RE" <<<"$PR_ERR_TXT" | grep -c "/${v##*/}: ")
	case $v in
	"$G"|"$G-static") want=0 wantd=0 ;;
	run:*) want=0 wantd=1 ;;
	*) want=1 wantd=0 ;;
	esac
	if [ "$n" = "$want" ] && [ "$d" = "$wantd" ]; then
		pr_pass "$tag: $want writable-GOT line(s), $wantd made-direct line(s)"
	else
		pr_fail "$tag" "want $want writable-GOT, $wantd made-direct line: rc=$PR_RC err='$PR_ERR_TXT'"
	fi
done

# A shared object gets the same default.
so=$PR_OUT/libprotect_got.so
{ pr_fresh "$so" "$PR_SRC/protect_lib.c" ||
  "$FCC" -O2 -fPIC -shared "$PR_SRC/protect_lib.c" -o "$so"; } &&
	bind_now "$so" && pr_pass "relro-flags[shared object]" ||
	pr_fail "relro-flags[shared object]" "missing BIND_NOW or GNU_RELRO"
exit 0
