#!/usr/bin/env bash
# compat_next_owner: dlsym(RTLD_NEXT) answers relative to the object that
# calls it (issue 13: src/load/dlsym_so.c finds that object with
# _dl_find_object, see foreign.c). Three interposers of time()
# (compat_next_lib.c) preloaded, kCFI, uninstrumented and kCFI in the
# middle, in two orders: each one's next must be the interposer right
# after it, the last one's libc's, so the output names every interposer
# once, in preload order (a wrong owner skips one, repeats one or loops).
# The executable's own RTLD_NEXT lookup finds the first interposer. Every
# mode, program built by fineibt-cc and by plain clang-22.
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

for m in "${RT_MODES[@]}"; do
	for prog in "$P" "$PR"; do
		k=${prog##*/}
		LD_PRELOAD=$LA:$LP:$LC rt_run own-apc "$m" "$prog"
		check "chain-apc[$k,$m]" "a>p>c>|1000000000"
		LD_PRELOAD=$LP:$LC:$LA rt_run own-pca "$m" "$prog"
		check "chain-pca[$k,$m]" "p>c>a>|1000000000"
		LD_PRELOAD=$LC:$LA rt_run own-next "$m" "$prog" next
		check "exe-next[$k,$m]" "c>a>|1000000000"
		# LA dlopen'ed, not preloaded: glibc searches from the
		# root's scope, through LA's fineibt_crt_next (crt/next.S).
		rt_run own-open "$m" "$prog" open "$LA"
		check "open[$k,$m]" "a>|1000000000"
	done
done
