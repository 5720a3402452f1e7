#!/usr/bin/env bash
# protect_patchmode (docs/protection.md, "Escapes through the runtime's own
# work"): a library patched statically (`fineibt patch`) in a mode whose
# callers check less than the process's is refused when it is dlopen'ed
# after start-up: its call sites cannot be rewritten again, and they would
# leave the process's functions unchecked (an `off` library checks nothing;
# a plain `fineibt` caller jumps into a kCFI preamble, `movl; nop; endbr`,
# which checks nothing, or onto a naked ENDBR that paranoid stops). The
# library's constructor calls the program's pm_victim(long) as
# (const char *, long).
#  - refused[LIB in PROC]: the process stops before the library runs
#    (127, one "fatal: ... weaker than the process's" line, no "ran on").
#    Before: "confused call ran on", exit 0, only a warning that calls
#    "may trap".
#  - caught[LIB in PROC]: a library whose callers check (kcfi, paranoid),
#    or plain fineibt in a fineibt process (the target's preamble checks):
#    the confused call is fatal (132), as before.
#  - off: a process in off takes any library (0).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/patchmode
mkdir -p "$D"
rt_build "$D/libpatchmode.so" -O2 -g -fPIC -shared "$RT_SRC/patchmode_lib.c" &&
rt_build "$D/patchmode_prog" -O2 -g -rdynamic "$RT_SRC/patchmode_prog.c" -ldl ||
	{ rt_fail build "fineibt-cc could not build patchmode"; exit 1; }
for lm in off fineibt kcfi fineibt,paranoid; do
	"$FIBT" patch "$D/libpatchmode.so" -o "$D/libpatchmode_$lm.so" --cfi="$lm" -q >/dev/null ||
		{ rt_fail build "fineibt patch --cfi=$lm failed"; exit 1; }
done

FATAL="^fineibt: fatal: .*libpatchmode_[a-z,]*\.so was patched statically with cfi=[a-z,]*, weaker than the process's [a-z0-9,=.]* \(.*\): refused after start-up; terminating$"

for c in off:kcfi off:auto off:fineibt off:fineibt,paranoid fineibt:kcfi fineibt:auto \
	 fineibt:fineibt,paranoid fineibt:kcfi,seq=v6.18; do
	lib=${c%%:*} m=${c#*:}
	rt_run patchmode "$m" "$D/patchmode_prog" "$D/libpatchmode_$lib.so"
	if [ "$RT_RC" = 127 ] && [ -z "$RT_OUT_TXT" ] &&
	   [ "$(grep -cE "$FATAL" <<<"$RT_ERR_TXT")" = 1 ]; then
		rt_pass "refused[$lib in $m]: stopped before the library ran"
	else
		rt_fail "refused[$lib in $m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:400}'"
	fi
done
for c in fineibt:fineibt kcfi:kcfi kcfi:fineibt,paranoid fineibt,paranoid:kcfi \
	 fineibt,paranoid:fineibt,paranoid; do
	lib=${c%%:*} m=${c#*:}
	rt_run patchmode "$m" "$D/patchmode_prog" "$D/libpatchmode_$lib.so"
	if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && ! grep -q 'fatal:' <<<"$RT_ERR_TXT" &&
	   grep -qE "$RT_REPORT_RE"'pm_victim\+0x0;' <<<"$RT_ERR_TXT"; then
		rt_pass "caught[$lib in $m]: the confused call is fatal"
	else
		rt_fail "caught[$lib in $m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:400}'"
	fi
done
rt_run patchmode off "$D/patchmode_prog" "$D/libpatchmode_off.so"
if [ "$RT_RC" = 0 ] && [ "$(tail -n 1 <<<"$RT_OUT_TXT")" = loaded ]; then
	rt_pass "off: a process in off takes the library"
else
	rt_fail off "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:400}'"
fi
exit 0
