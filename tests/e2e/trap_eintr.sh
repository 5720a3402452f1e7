#!/usr/bin/env bash
# trap_eintr: a CFI failure's report reaches standard error when its
# write is interrupted. The program's stderr is a pipe it has filled to
# the last byte itself (no newline: the report follows the filler on its
# line), read only a second later, and a 20 ms timer's signal (a handler
# without SA_RESTART) interrupts the blocked write over and over
# (EINTR). In warn mode the program goes on; the reader must find the
# report, then the program's "continued". Two reports: the check of the
# program's own rewritten code (the full report, which retried on EINTR
# already) and the check of a kCFI library left as compiled (a one-line
# report through the runtime's raw write, which gave up at the first
# EINTR before: the line was lost).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/trap_eintr.d
rm -rf "$D"
mkdir -p "$D"
clang-22 -O2 -fPIC -shared -fsanitize=kcfi -s \
	"$RT_SRC/trap_compiled_lib.c" -o "$D/libtrap_compiled.so" &&
"$FCC" -O1 "$RT_SRC/trap_eintr.c" -L"$D" -ltrap_compiled \
	-Wl,-rpath,"$D" -o "$D/trap_eintr" ||
	{ rt_fail build "could not build trap_eintr"; exit 1; }

OWN_RE="$RT_REPORT_RE"
COMPILED_RE='^fineibt: CFI failure at 0x[0-9a-f]+ \(a kCFI check of a module left as compiled; not decoded; warn\)'

for how in own compiled; do
	for mode in kcfi,warn fineibt,warn; do
		rm -f "$D/err" "$D/rc"
		# The reader waits 1 s, then takes everything; the group's
		# stderr hides bash's notices.
		{
			FINEIBT_CFI=$mode "$D/trap_eintr" $how >"$D/out" \
				2> >(sleep 1; cat >"$D/err.part"; mv "$D/err.part" "$D/err")
			echo $? >"$D/rc"
		} 2>/dev/null
		# The reader outlives the program: a bound on its wait.
		for _ in $(seq 100); do
			[ -e "$D/err" ] && break
			sleep 0.1
		done
		rc=$(cat "$D/rc")
		[ $how = own ] && re=$OWN_RE || re=$COMPILED_RE
		if [ "$rc" = 0 ] && grep -q '^continued$' "$D/out" &&
		   grep -ao 'fineibt: CFI failure at .*' "$D/err" | grep -Eq "$re"; then
			rt_pass "$how[$mode]: reported through EINTR"
		else
			rt_fail "$how[$mode]" "rc=$rc out=$(cat "$D/out") err=$(tr -d . <"$D/err" 2>/dev/null | head -c 600)"
		fi
	done
done
rm -rf "$D"
exit 0
