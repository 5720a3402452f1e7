#!/usr/bin/env bash
# protect_uring (docs/protection.md, "Escapes through the runtime's own
# work"): the runtime rewrote a library's text in place, without checking
# it afterwards, whenever unshare(CLONE_VM) said no other task shares the
# address space (rtlive.c, fi_live_patch). An io_uring read is no task:
# it completes in the thread that queued it, at its next return to user
# mode, into the address a provided-buffer ring names, and that ring is
# plain user memory. Found by attack: a program that uses io_uring, one
# forged ring entry (the write primitive) naming a function of a library
# the program opens later, and the peer's data arriving while that
# library's text was writable for its rewrite: the function ran the
# payload (progs/protect_uring.c, "INJECTED"), in 1 of 5 tries or so on
# this VM. Now only start-up (before main) skips the verification; every
# rewrite after it goes through a sealed copy that is verified before it
# is swapped in, so the text is never writable where the ring points.
#  - inject: TRIES runs of the program with FINEIBT_CFI=kcfi (the dlopen
#    rehashes the library); none may print INJECTED, and the library's
#    function must answer 2 in each.
# On the tree before the fix: fails (INJECTED within 30 tries).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/protect_uring
mkdir -p "$D"
python3 - "$D/big.c" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(3000):
        f.write(f"__attribute__((noinline)) int ur_f{i}(int x) {{ return x * {i} + 1; }}\n"
                f"int (*ur_p{i})(int) = ur_f{i};\n")
    f.write("__attribute__((noinline)) int ur_fn(int x) { return x + 1; }\n"
            "int (*ur_get(void))(int) { return ur_fn; }\n")
PY
{ rt_build "$D/libpu_big.so" -O1 -fPIC -shared "$D/big.c" &&
  rt_build "$D/protect_uring" -O2 "$RT_SRC/protect_uring.c" -ldl; } ||
	{ rt_fail build "could not build protect_uring"; exit 1; }

TRIES=${TRIES:-30}
bad= n=0
for ((i = 0; i < TRIES; i++)); do
	rt_run protect_uring kcfi "$D/protect_uring" "$D/libpu_big.so"
	case $RT_OUT_TXT in
	"no io_uring") echo "SKIP: io_uring not available"; exit 0 ;;
	*INJECTED*) bad="try $i: $RT_OUT_TXT"; break ;;
	"same "*" ret 0x2 read "*) n=$((n + 1)) ;;
	*) bad="try $i: '$RT_OUT_TXT' rc=$RT_RC $(head -2 <<<"$RT_ERR_TXT")"; break ;;
	esac
done
if [ -n "$bad" ]; then
	rt_fail inject "$bad"
else
	rt_pass "inject: $n tries, the library's text never took the ring's read"
fi
