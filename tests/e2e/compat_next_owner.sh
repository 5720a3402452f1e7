#!/usr/bin/env bash
# compat_next_owner: dlsym(RTLD_NEXT) answers relative to the object that
# calls it (src/interpose/dlsym_so.c finds that object with
# _dl_find_object, see foreign.c). Three interposers of time()
# (compat_next_lib.c) preloaded, kCFI, uninstrumented and kCFI in the
# middle, in two orders: each one's next must be the interposer right
# after it, the last one's libc's, so the output names every interposer
# once, in preload order (a wrong owner skips one, repeats one or loops).
# The executable's own RTLD_NEXT lookup finds the first interposer. Every
# mode, program built by fineibt-cc and by plain clang-22.
#
# The module's RTLD_NEXT entry (crt/next.S) is no gadget: the library
# exports no fineibt_crt_next and `fineibt inspect` finds only crt's two
# naked ENDBRs in it; called by an uninstrumented program as an attacker
# would (its note read by hand, our own function as a third argument) it
# answers libc's time and never calls ours, and its dlsym slot cannot be
# written (SIGSEGV); called through a pointer by a kCFI program, it traps
# in every mode that checks, and never calls ours either. On the tree
# before (fineibt_crt_next(name, version, fn)): exported, and called ours.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/next_owner
mkdir -p "$D"
P=$D/main PR=$D/main_plain
LA=$D/libown_a.so LC=$D/libown_c.so LP=$D/libown_p.so
rt_build "$P" -O2 "$RT_SRC/compat_next_owner_main.c" -ldl &&
rt_build "$LA" -O2 -fPIC -shared -DNEXT_TAG='"a"' "$RT_SRC/compat_next_lib.c" &&
rt_build "$LC" -O2 -fPIC -shared -DNEXT_TAG='"c"' "$RT_SRC/compat_next_lib.c" ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
clang-22 -O2 -o "$PR" "$RT_SRC/compat_next_owner_main.c" -ldl &&
clang-22 -O2 -fPIC -shared -DNEXT_TAG='"p"' -o "$LP" "$RT_SRC/compat_next_lib.c" -ldl ||
	{ rt_fail build "clang-22 could not build the plain ones"; exit 1; }

# check NAME WANT: the last rt_run printed WANT and exited 0, silently.
check() {
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$2" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "$1"
	else
		rt_fail "$1" "rc=$RT_RC out='$RT_OUT_TXT' (want '$2') err='$RT_ERR_TXT'"
	fi
}

# Older modules: LA with its RTLD_NEXT note retyped (as linked before
# the note: no entry for the runtime), and LA linked -z norelro (its
# slots would be writable: the runtime refuses the note and fills
# nothing). Both degrade as documented (docs/compat.md): glibc's plain
# pointer, which works without checks and traps where a check is made
# (called by the kCFI program: the plain one is served either way).
LO=$D/libown_old.so LN=$D/libown_norelro.so
python3 - "$LA" "$LO" <<'PY' || rt_fail build "cannot retype the note"
import struct, sys
b = open(sys.argv[1], "rb").read()
old = struct.pack("<III", 8, 16, 0x46490002) + b"FineIBT\0"
assert b.count(old) == 1
open(sys.argv[2], "wb").write(b.replace(old, struct.pack("<III", 8, 16, 0x46490000) + b"FineIBT\0"))
PY
rt_build "$LN" -O2 -fPIC -shared -Wl,-z,norelro -DNEXT_TAG='"a"' "$RT_SRC/compat_next_lib.c" 2>/dev/null ||
	rt_fail build "fineibt-cc could not build the -z norelro library"

# No naked ENDBR but crt's pair, nothing fineibt_-named exported but
# the runtime's hook (an undefined reference).
naked=$("$FIBT" inspect --json "$LA" | python3 -c '
import json, sys
print(" ".join(sorted(n["symbol"] for n in json.load(sys.stdin)["naked_endbr"])))')
if [ "$naked" = "__do_global_dtors_aux frame_dummy" ]; then
	rt_pass "inspect-naked"
else
	rt_fail "inspect-naked" "naked ENDBRs: '$naked' (want crt's two)"
fi
if llvm-readelf-22 --dyn-syms --wide "$LA" | awk '$7 != "UND"' | grep -q fineibt_crt_next; then
	rt_fail "no-export" "libown_a.so exports fineibt_crt_next"
else
	rt_pass "no-export"
fi

for m in "${RT_MODES[@]}"; do
	rt_run own-gadget "$m" "$PR" gadget "$LA"
	check "gadget[main_plain,$m]" "entry>next>ro>"
	rt_run own-gadget-k "$m" "$P" gadget "$LA"
	case $m in off*) want=0 ;; *) want=trap ;; esac
	if [[ $RT_OUT_TXT != *evil* ]] &&
	   { { [ "$want" = 0 ] && [ "$RT_RC" = 0 ]; } ||
	     { [ "$want" = trap ] && [ "$RT_RC" -ge 128 ]; }; }; then
		rt_pass "gadget[main,$m]"
	else
		rt_fail "gadget[main,$m]" "rc=$RT_RC out='$RT_OUT_TXT' (want $want, no evil) err='$RT_ERR_TXT'"
	fi
	for lib in "$LO" "$LN"; do
		k=${lib##*/libown_}
		rt_run own-old "$m" "$P" open "$lib"
		case $m in
		off*) check "degrade[${k%.so},$m]" "a>|1000000000" ;;
		*)	if [ "$RT_RC" -ge 128 ]; then rt_pass "degrade[${k%.so},$m]"
			else rt_fail "degrade[${k%.so},$m]" "rc=$RT_RC out='$RT_OUT_TXT' (want a trap) err='$RT_ERR_TXT'"
			fi ;;
		esac
	done
	for prog in "$P" "$PR"; do
		k=${prog##*/}
		LD_PRELOAD=$LA:$LP:$LC rt_run own-apc "$m" "$prog"
		check "chain-apc[$k,$m]" "a>p>c>|1000000000"
		LD_PRELOAD=$LP:$LC:$LA rt_run own-pca "$m" "$prog"
		check "chain-pca[$k,$m]" "p>c>a>|1000000000"
		LD_PRELOAD=$LC:$LA rt_run own-next "$m" "$prog" next
		check "exe-next[$k,$m]" "c>a>|1000000000"
		# LA dlopen'ed, not preloaded: glibc searches from the
		# root's scope, through LA's RTLD_NEXT entry (crt/next.S).
		rt_run own-open "$m" "$prog" open "$LA"
		check "open[$k,$m]" "a>|1000000000"
	done
done
