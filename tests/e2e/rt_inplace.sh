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
#   - thread[MODE]: the same program with a thread started by an IFUNC
#     resolver of the executable, before every constructor: unshare
#     fails (EINVAL) and the window writes through the kernel;
#   - preload: an LD_PRELOAD library that does not need libfineibt.so
#     (its constructor may run before the runtime's): no unshare asked,
#     through the kernel;
#   - dlopen-first: a plain program that dlopens a library built by
#     fineibt-cc (its own code ran first): no unshare, through the kernel.
# In every case the program runs, and a confused call still traps (132)
# where the mode checks. That the state is read-only after start-up and
# faults when written is protect_write's; that it is never made writable
# by mprotect, rt_windows'.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/inplace
mkdir -p "$D"
printf '#include <dlfcn.h>\n#include <stdio.h>\nint main(int c, char **v) { void *h = dlopen(v[1], RTLD_NOW); printf("inplace %%d\\n", h ? 2 : 0); return !h; }\n' >"$D/host.c"
printf 'int rt_inplace_preload(void) { return 1; }\n' >"$D/pre.c"
{ rt_build "$D/rt_inplace" -O2 "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/rt_inplace_thr" -O2 -DRT_INPLACE_THREAD "$RT_SRC/rt_inplace.c" &&
  rt_build "$D/librt_inplace_lib.so" -O1 -fPIC -shared "$RT_SRC/rt_lazylib.c" &&
  clang-22 -O2 -o "$D/host" "$D/host.c" -ldl &&
  clang-22 -O2 -fPIC -shared -o "$D/libpre.so" "$D/pre.c"; } ||
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

# check TAG WANT(inplace|kernel) CFI CMD...
check() {
	local tag=$1 want=$2 cfi=$3 pw un out
	shift 3
	env FINEIBT_CFI="$cfi" strace -f -qq -o "$D/$tag.trace" "$@" \
		>"$D/$tag.out" 2>"$D/$tag.err" </dev/null
	read -r pw un < <(first "$D/$tag.trace")
	out=$(cat "$D/$tag.out")
	if [ "$out" != "inplace 2" ]; then
		rt_fail "$tag" "program failed: $out $(head -3 "$D/$tag.err")"
	elif [ "$want" = inplace ] && { [ "$un" != 0 ] || [ "$pw" != 1 ]; }; then
		rt_fail "$tag" "first window: $pw pwrites (want 1, the token), unshare $un (want 0)"
	elif [ "$want" = kernel ] && [ "$pw" -le 1 ]; then
		rt_fail "$tag" "first window: $pw pwrites (want the state's, through the kernel), unshare $un"
	elif [ "$want" = thread ] && { [ "$un" != EINVAL ] || [ "$pw" -le 1 ]; }; then
		rt_fail "$tag" "first window: $pw pwrites (want more than the token's), unshare $un (want EINVAL)"
	else
		rt_pass "$tag: first window $pw pwrites, unshare $un"
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
	check "thread[$m]" thread "$m" "$D/rt_inplace_thr"
	trap_check "thread[$m]" "$m" "$D/rt_inplace_thr"
done
check preload kernel kcfi env LD_PRELOAD="$D/libpre.so" "$D/rt_inplace"
check dlopen-first kernel kcfi "$D/host" "$D/librt_inplace_lib.so"
