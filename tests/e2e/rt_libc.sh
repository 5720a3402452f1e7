#!/usr/bin/env bash
# rt_libc: a program keeping open/read/write/close/strlen in a table and
# calling through it runs unchanged in every cfi= mode, thanks to the
# veneers fineibt-cc links for uninstrumented functions whose address the
# program takes; a libc pointer obtained from dlsym works too (the
# runtime's dlsym veneers; tests/e2e/compat_dlsym.sh has the details).
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/rt_libc
rt_build "$P" -O2 "$RT_SRC/rt_libc.c" ||
	{ rt_fail build "fineibt-cc could not build rt_libc"; exit 1; }
IN=$RT_OUT/rt_libc.in
printf 'line one\nline two\n' >"$IN"

# The link gave the program one veneer per libc function in the table.
syms=$(llvm-nm-22 "$P" 2>/dev/null | grep -Eo ' __wrap_(open|read|write|close|strlen)$' | tr -d ' ' | sort | tr '\n' ' ')
if [ "$syms" = "__wrap_close __wrap_open __wrap_read __wrap_strlen __wrap_write " ]; then
	rt_pass "libc-veneers: one per address-taken libc function"
else
	rt_fail "libc-veneers" "got '$syms'"
fi

for m in "${RT_MODES[@]}"; do
	rt_run libc "$m" "$P" "$IN"
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$(cat "$IN")" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "libc-table[$m]"
	else
		rt_fail "libc-table[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	rt_run libc-dlsym "$m" "$P" "$IN" dlsym
	# dlsym hands out a veneer for an uninstrumented function (foreign.c).
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$(cat "$IN")" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "libc-dlsym[$m]: pointer from dlsym works"
	else
		rt_fail "libc-dlsym[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done
