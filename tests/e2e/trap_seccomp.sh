#!/usr/bin/env bash
# trap_seccomp: a CFI failure in a process whose seccomp filter kills it
# on open(2) but allows openat(2) (a profile written from what glibc
# calls: glibc opens files with openat) is reported, with the function
# names the report reads from the program's file (the caller's, or
# under fineibt the callee's preamble), and the process dies of SIGILL. Before, the report's own open of that file was open(2): the
# filter killed the process (SIGSYS) and nothing was reported.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/trap_seccomp.d
rm -rf "$D"
mkdir -p "$D"
"$FCC" -O1 "$RT_SRC/trap_seccomp.c" -o "$D/trap_seccomp" ||
	{ rt_fail build "fineibt-cc could not build trap_seccomp"; exit 1; }

for mode in kcfi fineibt fineibt,paranoid; do
	rt_run trap_seccomp "$mode" "$D/trap_seccomp"
	if [ "$RT_RC" = 132 ] && grep -q '^filtered$' <<<"$RT_OUT_TXT" &&
	   grep -Eq "$RT_REPORT_RE" <<<"$RT_ERR_TXT" &&
	   grep -Eq 'CFI failure at (ts_call|__cfi_ts_other)\+0x[0-9a-f]+ \(target: ts_other\+0x0' <<<"$RT_ERR_TXT"; then
		rt_pass "$mode: reported with its names under the filter"
	else
		rt_fail "$mode" "rc=$RT_RC out=$RT_OUT_TXT err=$(head -c 600 <<<"$RT_ERR_TXT")"
	fi
done
rm -rf "$D"
exit 0
