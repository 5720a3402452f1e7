#!/usr/bin/env bash
# rt_sparse: a module rewritten with no other task in the process (every
# start-up) is written in place: only its pages holding sites become
# private copies (still in the file's mapping); its other text pages stay
# the file's (shared page cache, never copied). A module rewritten while
# another thread runs (dlopen) is copied and swapped whole, in one mremap
# per segment. An executable holding the runtime (-static-fineibt) keeps
# the copy even alone: the runtime runs while the pages being written are
# not executable (docs/runtime.md, src/rt/rtlive.c).
# tests/e2e/progs/rt_sparse.c: sites on some pages, 4 pages of padding
# without one; the executable, and a library of the same shape dlopen'ed
# with a second thread alive. In every mode: the calls work; where a
# module is rewritten (FINEIBT_VERBOSE says so) its site page is a private
# page (executable: in the file's mapping; library: an anonymous copy);
# the executable's padding page is the file's, the library's a copy; where
# a module is kept (kcfi,norand) every page is the file's. The
# -static-fineibt build links a site (sp_exe_near) on the page of the
# runtime's fi_live_patch: written in place, that page would not be
# executable while the runtime runs on it. The strrchr build defines a
# function the runtime calls (through its GOT): the program's code runs
# inside the runtime, so its start has no proof that none of it ran
# (src/load/early.c) and every rewrite is the verified copy of the whole
# segment, its padding page included (src/rt/rtlive.h,
# fi_live_unverified_ok).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/sparse
mkdir -p "$D"
{ rt_build "$D/rt_sparse" -O2 "$RT_SRC/rt_sparse.c" -ldl -lpthread &&
  rt_build "$D/librt_sparse.so" -O2 -fPIC -shared -DRT_SPARSE_LIB "$RT_SRC/rt_sparse.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

# the site on the runtime's page: lld places sections in this order
printf '%s\n' sp_exe_near fi_live_patch fi_patch_image >"$D/order.txt"
rt_build "$D/rt_sparse_static" -O2 -static-fineibt -fuse-ld=lld \
	-Wl,--symbol-ordering-file="$D/order.txt" "$RT_SRC/rt_sparse.c" -ldl -lpthread ||
	{ rt_fail build "fineibt-cc could not build the -static-fineibt program"; exit 1; }
# an executable defining strrchr, which the runtime calls: copied too
rt_build "$D/rt_sparse_strrchr" -O2 -DRT_SPARSE_STRRCHR "$RT_SRC/rt_sparse.c" -ldl -lpthread ||
	{ rt_fail build "fineibt-cc could not build the strrchr program"; exit 1; }
near=$(nm "$D/rt_sparse_static" | awk '$3 == "sp_exe_near" || $3 == "fi_live_patch" { print substr($1, 1, length($1) - 3) }' | sort -u | wc -l)
if [ "$near" != 1 ]; then
	rt_fail "sparse-static-layout" "sp_exe_near and fi_live_patch not on one page: $(nm "$D/rt_sparse_static" | grep -E ' (sp_exe_near|fi_live_patch)$')"
fi

for m in "${RT_MODES[@]}"; do
	rt_run "sparse-$m" "$m" env FINEIBT_VERBOSE=1 "$D/rt_sparse" "$D/librt_sparse.so"
	exe_rw=copy lib_rw=copy
	grep -q "rt_sparse: rewritten to" <<<"$RT_ERR_TXT" || exe_rw=kept
	grep -q "librt_sparse.so: rewritten to" <<<"$RT_ERR_TXT" || lib_rw=kept
	if [ $exe_rw = copy ]; then want_exe="exe site file private pad file shared"; else want_exe="exe site file shared pad file shared"; fi
	if [ $lib_rw = copy ]; then want_lib="lib site anon private pad anon private"; else want_lib="lib site file shared pad file shared"; fi
	got=$(tr '\n' '|' <<<"$RT_OUT_TXT")
	if [ "$RT_RC" != 0 ]; then
		rt_fail "sparse[$m]" "rc=$RT_RC: $RT_OUT_TXT $RT_ERR_TXT"
	elif [ "$got" != "$want_exe|$want_lib|" ]; then
		rt_fail "sparse[$m]" "got '$got', want '$want_exe|$want_lib|' ($exe_rw/$lib_rw)"
	elif [[ $(rt_base "$m") != kcfi && ( $exe_rw != copy || $lib_rw != copy ) ]]; then
		rt_fail "sparse[$m]" "not rewritten in a mode that rewrites: $RT_ERR_TXT"
	else
		rt_pass "sparse[$m]: $got ($exe_rw/$lib_rw)"
	fi

	for v in static strrchr; do
		rt_run "sparse-$v-$m" "$m" env FINEIBT_VERBOSE=1 "$D/rt_sparse_$v"
		if grep -q "rt_sparse_$v: rewritten to" <<<"$RT_ERR_TXT"; then
			exe_rw=copy want_exe="exe site anon private pad file shared"
			[ $v = strrchr ] && want_exe="exe site anon private pad anon private"
		else
			exe_rw=kept want_exe="exe site file shared pad file shared"
		fi
		if [ "$RT_RC" != 0 ]; then
			rt_fail "sparse-$v[$m]" "rc=$RT_RC: $RT_OUT_TXT $RT_ERR_TXT"
		elif [ "$RT_OUT_TXT" != "$want_exe" ]; then
			rt_fail "sparse-$v[$m]" "got '$RT_OUT_TXT', want '$want_exe' ($exe_rw)"
		elif [[ $(rt_base "$m") != kcfi && $exe_rw != copy ]]; then
			rt_fail "sparse-$v[$m]" "not rewritten in a mode that rewrites: $RT_ERR_TXT"
		else
			rt_pass "sparse-$v[$m]: $RT_OUT_TXT ($exe_rw)"
		fi
	done
done
