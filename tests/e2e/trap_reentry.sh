#!/usr/bin/env bash
# trap_reentry: the trap report never runs a program's interposer of the
# functions it needs (docs/traps.md "Reports and interposers").
# The program (progs/trap_reentry.c) defines open, fstat, read, write,
# mmap, munmap, mprotect, close, getpid, clock_gettime, process_vm_readv
# and strrchr in kCFI code that counts its
# calls and, armed, fails a CFI check itself. A confused call is then
# reported once, with its log record, and none of them runs: libfineibt.so
# does not even import the first eight (src/load/ownlibc.c; checked below),
# so neither the report nor the start-up reaches them (startup=no).
# strrchr still serves naming an uninstrumented target: an interposer
# that traps there is told in one line ("while reporting another")
# instead of re-entering the report until the stack runs out.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/trap_reentry
L=$RT_OUT/libtrap_reentry.so
clang-22 -O2 -shared -fPIC -o "$L" "$RT_SRC/trap_reentry_lib.c" ||
	{ rt_fail build "clang-22 could not build libtrap_reentry"; exit 1; }
rt_build "$P" -g -O1 "$RT_SRC/trap_reentry.c" -L"$RT_OUT" -ltrap_reentry \
	-Wl,-rpath,"$RT_OUT" ||
	{ rt_fail build "fineibt-cc could not build trap_reentry"; exit 1; }
LOG=$RT_OUT/trap_reentry.log

nfail() { grep -c '^fineibt: CFI failure at ' <<<"$RT_ERR_TXT"; }

# check NAME WANT_RC WANT_OUT WANT_LINES WANT_LOG: rc, stdout, number of
# "CFI failure" lines, number of FINEIBT_LOG records.
check() {
	local name=$1 rc=$2 out=$3 lines=$4 recs=$5 got
	got=$(wc -l <"$LOG" 2>/dev/null || echo 0)
	if [ "$RT_RC" = "$rc" ] && [ "$RT_OUT_TXT" = "$out" ] &&
	   [ "$(nfail)" = "$lines" ] && [ "$got" = "$recs" ]; then
		rt_pass "$name"
	else
		rt_fail "$name" "rc=$RT_RC out='$RT_OUT_TXT' lines=$(nfail) log=$got err='${RT_ERR_TXT:0:600}'"
	fi
}

# The functions the runtime calls as its own, not through libc: no
# dynamic import of them in libfineibt.so (SAN=1 keeps libc's).
if [ -z "${FINEIBT_SAN:-}" ]; then
	und=$(llvm-readelf-22 --dyn-syms -W "$ROOT/$BUILD/libfineibt.so" |
		awk '$7 == "UND" { sub(/@.*/, "", $8); print $8 }' |
		grep -xE 'open|fstat|read|write|mmap|munmap|mprotect|close')
	[ -z "$und" ] && rt_pass "reentry-no-imports: the runtime imports none of the interposed system calls" ||
		rt_fail reentry-no-imports "libfineibt.so imports: $und"
fi

for m in "${RT_MODES[@]}"; do
	mode=$(rt_report_mode "$m")	# as the report names it
	for how in 1 2; do
		rm -f "$LOG"
		FINEIBT_LOG=$LOG rt_run reentry "$m" "$P" "$how"
		if rt_is_off "$m"; then
			check "reentry$how[$m]" 0 "r=4 calls=0 startup=no" 0 0
			continue
		fi
		check "reentry$how[$m]" 132 "" 1 1
		grep -Eq "mode: $mode\)" <<<"$RT_ERR_TXT" ||
			rt_fail "reentry$how-mode[$m]" "'$RT_ERR_TXT'"
		rm -f "$LOG"
		FINEIBT_LOG=$LOG rt_run reentry "$m,warn" "$P" "$how"
		check "reentry$how-warn[$m]" 0 "r=4 calls=0 startup=no" 1 1
	done
	# A target in uninstrumented code: only a checking caller traps.
	rt_checks_caller "$m" || continue
	rm -f "$LOG"
	rt_run reentry "$m" "$P" 3
	check "reentry3[$m]" 132 "" 1 0
	grep -q 'while reporting another' <<<"$RT_ERR_TXT" ||
		rt_fail "reentry3-nested[$m]" "'$RT_ERR_TXT'"
	rt_run reentry "$m,warn" "$P" 3
	if [ "$RT_RC" = 0 ] && [ "$(nfail)" = 2 ] &&
	   grep -q '^r=.* calls=1 startup=no$' <<<"$RT_OUT_TXT" &&
	   grep -q 'while reporting another' <<<"$RT_ERR_TXT" &&
	   grep -q 'target: reentry_plain+0x0 in libtrap_reentry.so, not instrumented' <<<"$RT_ERR_TXT"; then
		rt_pass "reentry3-warn[$m]"
	else
		rt_fail "reentry3-warn[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:600}'"
	fi
done

# The static runtime (-static-fineibt) is linked into the program, whose
# definitions are then the runtime's too: its start-up calls them
# (startup=yes, unarmed), but a report, with its log record (time and
# pid) and the reads of this process's memory the FineIBT modes make
# (the pushed hash, the stub's slot), calls none of them: the trap path
# makes those system calls itself (src/seq/rawsys.h).
PS=$RT_OUT/trap_reentry_static
rt_build "$PS" -static-fineibt -g -O1 "$RT_SRC/trap_reentry.c" -L"$RT_OUT" \
	-ltrap_reentry -Wl,-rpath,"$RT_OUT" ||
	{ rt_fail build "fineibt-cc -static-fineibt could not build trap_reentry"; exit 1; }
for m in kcfi fineibt fineibt,paranoid fineibt,paranoid,bhi; do
	rm -f "$LOG"
	FINEIBT_LOG=$LOG rt_run reentry_static "$m,warn" "$PS" 2
	check "reentry-static-warn[$m]" 0 "r=4 calls=0 startup=yes" 1 1
done
