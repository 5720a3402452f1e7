#!/usr/bin/env bash
# rt_inplace: start-up's first window writes the state in place only when
# no code of the program has run and no other task shares the address
# space (docs/protection.md, "The first window"). Under strace, the first
# window (from the first rt_sigprocmask blocking every signal to the one
# that restores the mask) of:
#   - inplace[MODE]: a program built by fineibt-cc, its runtime started
#     from libfineibt.so's constructor: unshare(CLONE_VM) succeeds there
#     and the window's only pwrite is the owner token's (the probe);
#     before, every update of the state was a pwrite (about 20 on a hit);
#     where the start rewrites text, the registration window after the
#     rewrite writes in place too: at most 3 pwrites before main (the
#     token, the PLT pass's two), where it wrote 14 or more;
#   - stock-noendbr: the same with a rewrite that fails between the two
#     windows (a stock kCFI library without ENDBRs in the v6.18 set);
#   - thread[MODE]: the same program with a thread started by an IFUNC
#     resolver of the executable, before every constructor: the window
#     writes through the kernel. A module with an IFUNC resolver of the
#     program is itself enough (early.c, fi_early_has_ifunc: its code
#     ran; protect_inplace.sh), so unshare is no longer asked there
#     ("none"); were it asked, it fails (EINVAL);
#   - sigill[MODE]: the same program with a SIGILL handler installed by
#     an IFUNC resolver of the executable: written through the kernel
#     (the resolver is program code, as above), so the start asks about
#     SIGILL before its install (the query a first start written in
#     place skips: no code but the runtime's has run there, rtone.c), and
#     keeps that handler as the program's (a ud2 outside any CFI site
#     reaches it);
#   - spawn[MODE]: a task started inside the first window (the test
#     library's hook): the registration window finds the process not
#     alone (unshare EINVAL), seals the block at once and writes through
#     the kernel;
#   - preload: an LD_PRELOAD library that does not need libfineibt.so
#     (its constructor may run before the runtime's): no unshare asked,
#     through the kernel;
#   - dlopen-first: a plain program that dlopens a library built by
#     fineibt-cc (its own code ran first): no unshare, through the kernel;
#   - dlopen-stock[MODE]: the same with a stock kCFI library that names
#     libfineibt.so: the runtime starts while the dlopen relocates it
#     (early.c), which is no start-up: through the kernel (it wrote in
#     place, taking the dlopen for the program's start); a program that
#     cleared its environment before that dlopen finds it cleared after;
#   - static-dl[MODE]: a -static-fineibt program that dlopens a library
#     naming libfineibt.so (tests/e2e/progs/rt_static_dl.c): the copy
#     the dlopen loads defers to the executable's runtime (one SIGILL
#     handler installed, no warning), calls before and after the dlopen
#     run, and a confused call still traps where the mode checks.
# In every case the program runs, finds the runtime's state read-only at
# main (the anchor's address in /proc/self/maps: rt_inplace.c), and a
# confused call still traps (132) where the mode checks. That the state is read-only after start-up and
# faults when written is protect_write's; that it is never made writable
# by mprotect, rt_windows'.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/inplace
mkdir -p "$D"
printf '#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(int c, char **v) { if (c > 2) clearenv(); void *h = dlopen(v[1], RTLD_NOW); printf("inplace %%d\\n", h && (c < 3 || !environ) ? 2 : 0); return !h; }\n' >"$D/host.c"
printf 'int rt_inplace_preload(void) { return 1; }\n' >"$D/pre.c"
{ rt_build "$D/rt_inplace" -O2 "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/rt_inplace_thr" -O2 -DRT_INPLACE_THREAD "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/rt_inplace_ill" -O2 -DRT_INPLACE_SIGILL "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/librt_inplace_lib.so" -O1 -fPIC -shared "$RT_SRC/rt_lazylib.c" &&
  rt_build "$D/rt_static_dl" -O2 -static-fineibt "$RT_SRC/rt_static_dl.c" &&
  clang-22 -O2 -o "$D/host" "$D/host.c" -ldl &&
  clang-22 -O2 -fPIC -shared -o "$D/libpre.so" "$D/pre.c" &&
  clang-22 -O2 -fsanitize=kcfi -fcf-protection=none -fPIC -shared \
	-o "$D/libstock_noendbr.so" "$RT_SRC/rt_lazylib.c" \
	-Wl,--no-as-needed "$ROOT/$BUILD/libfineibt.so" &&
  FINEIBT_CC_RUNPATH=1 rt_build "$D/rt_inplace_rp" -O2 "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/rt_inplace_stock" -O2 "$RT_SRC/rt_inplace.c" \
	-Wl,--no-as-needed "$D/libstock_noendbr.so" -Wl,-rpath,"$D"; } ||
	{ rt_fail build "could not build the programs"; exit 1; }

# first TRACE: "PWRITES UNSHARE" of the first window (UNSHARE: 0, EINVAL,
# or none when it was not asked).
first() {
	python3 - "$1" <<'PY'
import re, sys
pid = None
pw, un = 0, "none"
for l in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+(.*)', l)
    if not m:
        continue
    p, call = m.groups()
    if pid is None:
        if call.startswith("rt_sigprocmask(SIG_SETMASK, ~["):
            pid = p
        continue
    if p != pid:
        continue
    if call.startswith("rt_sigprocmask(SIG_SETMASK, ["):
        break
    if call.startswith("pwrite64("):
        pw += 1
    # Another task's call may split it in two lines under strace -f
    # ("unshare(CLONE_VM <unfinished ...>", "<... unshare resumed>) = ...").
    if call.startswith("unshare(CLONE_VM") or call.startswith("<... unshare resumed>"):
        r = re.search(r'\) += (0|-1 (\w+))', call)
        un = (r.group(2) or r.group(1)) if r else "?"
print(pw, un)
PY
}

# tomain TRACE: the pwrites before the program's output (start-up's
# windows: in place, the registration window after the rewrite too).
tomain() {
	awk '/write\(1, "inplace/ { exit } /pwrite64\(/ { n++ } END { print n + 0 }' "$1"
}

# check TAG WANT(inplace|kernel) CFI CMD...
check() {
	local tag=$1 want=$2 cfi=$3 pw un out all
	shift 3
	env FINEIBT_CFI="$cfi" strace -f -qq -o "$D/$tag.trace" "$@" \
		>"$D/$tag.out" 2>"$D/$tag.err" </dev/null
	read -r pw un < <(first "$D/$tag.trace")
	all=$(tomain "$D/$tag.trace")
	out=$(cat "$D/$tag.out")
	if [ "$out" != "inplace 2" ]; then
		rt_fail "$tag" "program failed: $out $(head -3 "$D/$tag.err")"
	elif [ "$want" = inplace ] && { [ "$un" != 0 ] || [ "$pw" != 1 ]; }; then
		rt_fail "$tag" "first window: $pw pwrites (want 1, the token), unshare $un (want 0)"
	elif [ "$want" = inplace ] && [ "$all" -gt "${LIMIT:-3}" ]; then
		# The token, and the two puts of the PLT pass after the seal
		# (LIMIT: a case that writes more after it); a registration
		# window through the kernel would add 13 or more.
		rt_fail "$tag" "start-up: $all pwrites before main (want at most ${LIMIT:-3}: the registration window in place too)"
	elif [ "$want" = spawn ] && { [ "$un" != 0 ] || [ "$pw" != 1 ] || [ "$all" -le 3 ]; }; then
		rt_fail "$tag" "first window: $pw pwrites (want 1), unshare $un (want 0); $all before main (want the registration's, through the kernel)"
	elif [ "$want" = thread ] && [ "$all" -le 3 ]; then
		rt_fail "$tag" "start-up: $all pwrites before main (want the state's, through the kernel)"
	elif [ "$want" = kernel ] && [ "$pw" -le 1 ]; then
		rt_fail "$tag" "first window: $pw pwrites (want the state's, through the kernel), unshare $un"
	elif [ "$want" = thread ] && { [ "$un" = 0 ] || [ "$pw" -le 1 ]; }; then
		rt_fail "$tag" "first window: $pw pwrites (want more than the token's), unshare $un (want none or EINVAL)"
	else
		rt_pass "$tag: first window $pw pwrites, unshare $un; $all before main"
	fi
}

# trap TAG CFI PROG: the confused call is still caught.
trap_check() {
	local tag=$1 cfi=$2 prog=$3
	local rc
	{ FINEIBT_CFI=$cfi "$prog" 1 >/dev/null 2>"$D/$tag.trap.err"; rc=$?; } 2>/dev/null
	if rt_checks_caller "$cfi" || rt_is_fineibt "$cfi"; then
		[ "$rc" = 132 ] && rt_pass "$tag: the confused call traps" ||
			rt_fail "$tag" "confused call: rc=$rc (want 132) $(head -2 "$D/$tag.trap.err")"
	fi
}

for m in off kcfi kcfi,norand fineibt fineibt,paranoid,bhi auto; do
	check "inplace[$m]" inplace "$m" "$D/rt_inplace"
	trap_check "inplace[$m]" "$m" "$D/rt_inplace"
	# Written in place, nothing but the runtime ran: no SIGILL query.
	q=$(grep -c 'rt_sigaction(SIGILL, NULL' "$D/inplace[$m].trace")
	[ "$q" = 0 ] && rt_pass "inplace[$m]: no SIGILL query" ||
		rt_fail "inplace[$m]" "SIGILL queries: $q (want 0: no code but the runtime's ran)"
	check "thread[$m]" thread "$m" "$D/rt_inplace_thr"
	trap_check "thread[$m]" "$m" "$D/rt_inplace_thr"
	check "sigill[$m]" thread "$m" "$D/rt_inplace_ill"
	{ FINEIBT_CFI=$m "$D/rt_inplace_ill" ud2 >/dev/null 2>"$D/sigill.err"; rc=$?; } 2>/dev/null
	q=$(grep -c 'rt_sigaction(SIGILL, NULL' "$D/sigill[$m].trace")
	if [ "$rc" = 7 ] && [ "$q" = 1 ]; then
		rt_pass "sigill[$m]: the resolver's handler is the program's; SIGILL asked once"
	else
		rt_fail "sigill[$m]" "ud2: rc=$rc (want 7, the program's handler) $(head -2 "$D/sigill.err"); SIGILL queries: $q (want 1: program code ran)"
	fi
done
# A rewrite that fails between the windows (a stock kCFI library
# without ENDBRs, which names libfineibt.so, in the v6.18 set): the
# start goes on in place and the state is still read-only at main.
# One write more after the seal than the others (the stock library's).
LIMIT=4 check stock-noendbr inplace fineibt,paranoid,seq=v6.18 "$D/rt_inplace_stock"
if grep -q 'libstock_noendbr.so: cannot rewrite: a stock kCFI module without ENDBRs' "$D/stock-noendbr.err"; then
	rt_pass "stock-noendbr: its rewrite failed"
else
	rt_fail stock-noendbr "no rewrite failure said: $(head -3 "$D/stock-noendbr.err")"
fi
# A task appears after the first window (the test library's hook, a raw
# clone there): the registration window, after the rewrite, finds the
# process not alone, seals the block as it opens and writes through the
# kernel; the state is read-only at main all the same.
for m in kcfi fineibt,paranoid; do
	check "spawn[$m]" spawn "$m" env FINEIBT_TEST_SPAWN_AT_WINDOW=1 \
		LD_LIBRARY_PATH="$ROOT/$BUILD/testlib" "$D/rt_inplace_rp"
done
check preload kernel kcfi env LD_PRELOAD="$D/libpre.so" "$D/rt_inplace"
check dlopen-first kernel kcfi "$D/host" "$D/librt_inplace_lib.so"
# At a dlopen (the program's code ran): never in place, whatever the
# mode; the program's environment stays as it left it.
for m in kcfi kcfi,norand fineibt,paranoid auto; do
	check "dlopen-stock[$m]" kernel "$m" env LD_LIBRARY_PATH="$ROOT/$BUILD" \
		"$D/host" "$D/libstock_noendbr.so"
done
check dlopen-stock-clearenv kernel kcfi env LD_LIBRARY_PATH="$ROOT/$BUILD" \
	"$D/host" "$D/libstock_noendbr.so" clear
# A -static-fineibt program's dlopen of a library naming libfineibt.so.
for m in "${RT_MODES[@]}"; do
	tag="static-dl[$m]"
	{ FINEIBT_CFI=$m strace -f -qq -e trace=rt_sigaction -o "$D/$tag.trace" \
		"$D/rt_static_dl" "$D/librt_inplace_lib.so" >"$D/$tag.out" 2>"$D/$tag.err" \
		</dev/null; rc=$?; } 2>/dev/null
	ills=$(grep -c 'rt_sigaction(SIGILL, {sa_handler=0x' "$D/$tag.trace")
	if [ "$rc" != 0 ] || [ "$(cat "$D/$tag.out")" != "static-dl 2" ] ||
	   grep -q '^fineibt:' "$D/$tag.err" || [ "$ills" != 1 ]; then
		rt_fail "$tag" "rc=$rc (want 0) out='$(cat "$D/$tag.out")' SIGILL handlers installed: $ills (want 1, the executable's runtime) $(head -3 "$D/$tag.err")"
	else
		rt_pass "$tag: calls run after the dlopen, one runtime, no warning"
	fi
	if rt_checks_caller "$m" || rt_is_fineibt "$m"; then
		{ FINEIBT_CFI=$m "$D/rt_static_dl" "$D/librt_inplace_lib.so" bad \
			>/dev/null 2>"$D/$tag.bad.err" </dev/null; rc=$?; } 2>/dev/null
		if [ "$rc" = 132 ] && grep -Eq "$RT_REPORT_RE" "$D/$tag.bad.err"; then
			rt_pass "$tag: the confused call traps"
		else
			rt_fail "$tag" "confused call: rc=$rc (want 132 and a report) $(head -2 "$D/$tag.bad.err")"
		fi
	fi
done
