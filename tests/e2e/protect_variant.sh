#!/usr/bin/env bash
# protect_variant: the runtime's table of interposers (src/rt/variant.h)
# is read-only, or the process does not start (src/rt/rtvariant.c;
# docs/protection.md, "-z norelro"). A program holding the static runtime
# linked -Wl,-z,norelro (-static-fineibt, -static) stops at start-up with
# one line and status 127, and fineibt-cc's link warns that it will; the
# default links run, and so does a -z norelro executable with the shared
# runtime (the table is libfineibt.so's, inside its PT_GNU_RELRO). The
# check runs in both runtimes, and after an early start: gdb makes the
# table's page writable where the check is entered, and the process
# stops. Without /proc (root: a mount namespace without it) the link's
# layout answers: the default links run, the norelro ones stop.
. "$(dirname "$0")/progs/protect_common.bash"

D=$PR_OUT/variant
mkdir -p "$D"
SRC=$D/hello.c
printf '#include <stdio.h>\nint main(void) { puts("ran"); return 0; }\n' >"$SRC.new"
cmp -s "$SRC.new" "$SRC" && rm "$SRC.new" || mv "$SRC.new" "$SRC"
FATAL="fineibt: fatal: the runtime's table of interposers is writable (an executable holding the static runtime, or libfineibt.so, linked -z norelro): link it without -z norelro; terminating"
WARN='^fineibt-cc: warning: -z norelro with the static runtime leaves its table of interposers writable: the program will stop at start-up'

# build NAME ARGS...: $D/NAME, its link's stderr in $D/NAME.err.
build() {
	local out=$D/$1
	shift
	pr_fresh "$out" "$SRC" || "$FCC" -O2 "$@" "$SRC" -o "$out" 2>"$out.err"
}
# A kCFI library built by stock clang-22 (no crt hook) that the program
# needs: libfineibt.so starts while the loader relocates it (early).
printf 'int stock_twice(int x) { return 2 * x; }\n' >"$D/stock.c"
K="-fsanitize=kcfi -fpatchable-function-entry=11,11 -falign-functions=16
   -fcf-protection=branch -mretpoline-external-thunk -mindirect-branch-cs-prefix"
# shellcheck disable=SC2086
{ pr_fresh "$D/libstock.so" "$D/stock.c" ||
  clang-22 -O2 $K -fPIC -shared "$D/stock.c" "$ROOT/crt/thunks.S" -o "$D/libstock.so"; } &&
{ build shared && build static -static-fineibt && build full -static &&
  build early -L"$D" -lstock '-Wl,-rpath,$ORIGIN' &&
  build shared_nr -Wl,-z,norelro && build static_nr -static-fineibt -Wl,-z,norelro &&
  build full_nr -static -Wl,-z,norelro; } ||
	{ pr_fail build "could not build the protect_variant programs"; exit 1; }

# runs NAME [ENV...]: runs to the end, or stops with the line.
runs() {
	local p=$1
	shift
	pr_run variant "" env "$@" "$D/$p"
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = ran ] && [ -z "$PR_ERR_TXT" ]; then
		pr_pass "variant-runs[$p${*:+,$*}]"
	else
		pr_fail "variant-runs[$p${*:+,$*}]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
}
stops() {
	local p=$1
	shift
	pr_run variant "" env "$@" "$D/$p"
	if [ "$PR_RC" = 127 ] && [ -z "$PR_OUT_TXT" ] && [ "$PR_ERR_TXT" = "$FATAL" ]; then
		pr_pass "variant-stops[$p${*:+,$*}]"
	else
		pr_fail "variant-stops[$p${*:+,$*}]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
}

for p in shared static full shared_nr early; do runs $p; done
for p in static_nr full_nr; do
	stops $p
	stops $p FINEIBT_CFI=off
	if grep -q "$WARN" "$D/$p.err"; then
		pr_pass "variant-link-warns[$p]"
	else
		pr_fail "variant-link-warns[$p]" "$(cat "$D/$p.err")"
	fi
done
if ! grep -q 'table of interposers' "$D/shared_nr.err" "$D/static.err"; then
	pr_pass "variant-link-quiet: no such warning for the shared runtime or a default link"
else
	pr_fail variant-link-quiet "$(cat "$D/shared_nr.err" "$D/static.err")"
fi

# The check entered, its page made writable there: the process stops.
# (shared_nr: the executable's -z norelro changes nothing of the table.)
if command -v gdb >/dev/null; then
	for p in shared static shared_nr early; do
		g=$(FINEIBT_VERBOSE=1 timeout 120 gdb -batch -nx -ex 'set breakpoint pending on' \
			-ex 'break fi_variant_check' -ex run \
			-ex 'call (int)mprotect((void *)((unsigned long)&fi_variant & ~4095UL), 4096, 3)' \
			-ex continue --args "$D/$p" 2>&1 </dev/null)
		if grep -qF "$FATAL" <<<"$g" && grep -q 'exited with code 0177' <<<"$g" &&
		   ! grep -q '^ran$' <<<"$g" &&
		   { [ $p != early ] || grep -q 'runtime started before any constructor' <<<"$g"; }; then
			pr_pass "variant-checked[$p]: a writable table stops the process"
		else
			pr_fail "variant-checked[$p]" "${g:0:1500}"
		fi
	done
else
	echo "SKIP: variant-checked: no gdb"
fi

# No /proc: the link's layout (PT_GNU_RELRO) answers. Needs root.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	for p in shared static full static_nr full_nr; do
		pr_run variant "" unshare -m sh -c 'umount -l /proc && exec "$0"' "$D/$p"
		case $p in *_nr) want=127 wout="" werr=$FATAL ;; *) want=0 wout=ran werr="" ;; esac
		if [ "$PR_RC" = $want ] && [ "$PR_OUT_TXT" = "$wout" ] && [ "$PR_ERR_TXT" = "$werr" ]; then
			pr_pass "variant-noproc[$p]"
		else
			pr_fail "variant-noproc[$p]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
else
	echo "SKIP: variant-noproc: needs root and unshare -m"
fi
exit 0
