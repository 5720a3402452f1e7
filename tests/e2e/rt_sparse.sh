#!/usr/bin/env bash
# rt_sparse: a module rewritten with no other task in the process (every
# start-up) gets private copies of the pages holding sites only; its other
# text pages stay the file's (shared page cache, nothing copied). A module
# rewritten while another thread runs (dlopen) is copied and swapped whole,
# in one mremap per segment (docs/runtime.md, src/rt/rtlive.c).
# tests/e2e/progs/rt_sparse.c: sites on some pages, 4 pages of padding
# without one; the executable, and a library of the same shape dlopen'ed
# with a second thread alive. In every mode: the calls work; where the
# module is rewritten (FINEIBT_VERBOSE says so) its site page is a copy
# ("anon"), the padding page of the executable is the file's and that of
# the library a copy; where it is kept (kcfi,norand) both are the file's.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/sparse
mkdir -p "$D"
{ rt_build "$D/rt_sparse" -O2 "$RT_SRC/rt_sparse.c" -ldl -lpthread &&
  rt_build "$D/librt_sparse.so" -O2 -fPIC -shared -DRT_SPARSE_LIB "$RT_SRC/rt_sparse.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

for m in "${RT_MODES[@]}"; do
	rt_run "sparse-$m" "$m" env FINEIBT_VERBOSE=1 "$D/rt_sparse" "$D/librt_sparse.so"
	exe_rw=copy lib_rw=copy
	grep -q "rt_sparse: rewritten to" <<<"$RT_ERR_TXT" || exe_rw=kept
	grep -q "librt_sparse.so: rewritten to" <<<"$RT_ERR_TXT" || lib_rw=kept
	if [ $exe_rw = copy ]; then want_exe="exe site anon pad file"; else want_exe="exe site file pad file"; fi
	if [ $lib_rw = copy ]; then want_lib="lib site anon pad anon"; else want_lib="lib site file pad file"; fi
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
done
