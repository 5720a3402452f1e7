#!/usr/bin/env bash
# compat_dlsym: function pointers from dlsym/dlvsym into uninstrumented
# libraries (docs/compat.md). libm's cos and libc's strlen
# (dlvsym), called through their own type, another type and a tail call,
# work in every mode; a checking caller traps once per site and never
# again (counted with strace when it is installed); cos + 16 and the
# veneer + 16 still trap where the caller checks, with a report naming
# the function and the library; a type-confused call through a site that
# has met a veneer is still caught in every mode that checks; data
# symbols are left alone (RTLD_NEXT: compat_next.sh); 8 threads released at once into
# sites that have not met a veneer yet all get through (60 runs where the
# caller checks: a trap decoded while another thread opens its site); children
# forked while a thread sits in dlsym can still make veneers; an uninstrumented
# library calling dlsym gets the plain pointer (dladdr knows it). With the runtime linked
# statically there is no dlsym interposer: the raw pointer is caught.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/compat_dlsym
rt_build "$P" -O2 "$RT_SRC/compat_dlsym.c" ||
	{ rt_fail build "fineibt-cc could not build compat_dlsym"; exit 1; }
PS=$RT_OUT/compat_dlsym_static
rt_build "$PS" -O2 -static-fineibt "$RT_SRC/compat_dlsym.c" ||
	{ rt_fail build "fineibt-cc -static-fineibt could not build compat_dlsym"; exit 1; }
RAW=$RT_OUT/libcompat_raw.so
clang-22 -O2 -shared -fPIC -o "$RAW" "$RT_SRC/compat_rawlib.c" ||
	{ rt_fail build "clang-22 could not build libcompat_raw.so"; exit 1; }
HAVE_STRACE=0
command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null && HAVE_STRACE=1

# sigills CFI ROUNDS: SIGILLs the program takes (strace).
sigills() {
	FINEIBT_CFI=$1 strace -f -o "$RT_OUT/dlsym.strace" -e trace=none \
		-e signal=SIGILL "$P" "$2" >/dev/null 2>&1
	grep -c 'SIGILL' "$RT_OUT/dlsym.strace"
}

for m in "${RT_MODES[@]}"; do
	mode=$(rt_report_mode "$m")	# as the report names it
	rt_run dlsym "$m" "$P" 200
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = 2200.0 ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "dlsym-calls[$m]"
	else
		rt_fail "dlsym-calls[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	# -static-fineibt has no dlsym interposer (src/interpose/dlsym_so.c): the
	# pointer is the function itself, caught where the caller checks.
	if rt_checks_caller "$m"; then
		rt_run dlsym-static "$m" "$PS" 1
		if [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}[^;]* in libm\.so\.6, not instrumented; expected type: 0x[0-9a-f]{8}; mode: $mode\)" <<<"$RT_ERR_TXT"; then
			rt_pass "dlsym-static[$m]: no veneer, caught (documented)"
		else
			rt_fail "dlsym-static[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	fi
	if [ "$HAVE_STRACE" = 1 ]; then
		one=$(sigills "$m" 1)
		many=$(sigills "$m" 200)
		# Three sites meet a veneer: cos, strlen by tail call, strlen as long().
		want=0
		rt_checks_caller "$m" && want=3
		if [ "$one" = "$want" ] && [ "$many" = "$want" ]; then
			rt_pass "dlsym-steady[$m]: $want SIGILL for 1 or 200 rounds"
		else
			rt_fail "dlsym-steady[$m]" "SIGILLs: $one for 1 round, $many for 200, want $want"
		fi
	fi
	FINEIBT_VERBOSE=1 rt_run dlsym-verbose "$m" "$P" 200
	opened=$(grep -c 'call site opened for dlsym veneers (target: dlsym veneer of [a-z]*+0x0 in lib[cm]\.so\.6, not instrumented)' <<<"$RT_ERR_TXT")
	want=0
	rt_checks_caller "$m" && want=3
	if [ "$RT_RC" = 0 ] && [ "$opened" = "$want" ]; then
		rt_pass "dlsym-verbose[$m]: $want sites opened once"
	else
		rt_fail "dlsym-verbose[$m]" "opened $opened, want $want; err='$RT_ERR_TXT'"
	fi
	rt_run dlsym-threads "$m" "$P" threads
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = 176000.0 ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "dlsym-threads[$m]: 8 threads into fresh sites"
	else
		rt_fail "dlsym-threads[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	# A thread whose trap is decoded while another opens the same site
	# (the race lost ~1 run in 150 before trap.c read the site once):
	# many short runs where the caller checks, every one must pass.
	if rt_checks_caller "$m"; then
		bad=0 why=
		for i in $(seq 60); do
			rt_run dlsym-threads-race "$m" "$P" threads
			[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = 176000.0 ] && continue
			bad=$((bad + 1))
			why="rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		done
		if [ "$bad" = 0 ]; then
			rt_pass "dlsym-threads-race[$m]: 60 runs"
		else
			rt_fail "dlsym-threads-race[$m]" "$bad of 60 runs failed (last: $why)"
		fi
	fi
	# fork while another thread is inside dlsym's veneer lock: the child
	# must not inherit it taken (16-25 of 100 children hung before).
	rt_run dlsym-fork "$m" "$P" fork 40
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "forks 40 hung 0" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "dlsym-fork[$m]: 40 children asked dlsym for a new function"
	else
		rt_fail "dlsym-fork[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	FINEIBT_EXPECT_VENEER=1 rt_run dlsym-uninst "$m" "$P" uninst "$RAW"
	if [ "$RT_RC" = 0 ]; then
		rt_pass "dlsym-uninst[$m]: plain pointer for uninstrumented callers"
	else
		rt_fail "dlsym-uninst[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	for w in data same; do
		rt_run "dlsym-$w" "$m" "$P" "$w"
		if [ "$RT_RC" = 0 ]; then
			rt_pass "dlsym-$w[$m]"
		else
			rt_fail "dlsym-$w[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	done
	rt_is_off "$m" && continue
	rt_run dlsym-confused "$m" "$P" confused
	if [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}not_a_double_fn\+0x0; expected type: 0x[0-9a-f]{8}; mode: $mode\)" <<<"$RT_ERR_TXT"; then
		rt_pass "dlsym-confused[$m]: caught"
	else
		rt_fail "dlsym-confused[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	# Callee-only modes cannot check a target that has no preamble
	# (docs/compat.md): cos+16 runs there, as documented.
	rt_checks_caller "$m" || continue
	rt_run dlsym-plus16 "$m" "$P" plus16 "$RAW"
	if [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}cos\+0x10 in libm\.so\.6, not instrumented; expected type: 0x[0-9a-f]{8}; mode: $mode\)" <<<"$RT_ERR_TXT"; then
		rt_pass "dlsym-plus16[$m]: caught, named"
	else
		rt_fail "dlsym-plus16[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	rt_run dlsym-veneer16 "$m" "$P" veneer16
	if [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}dlsym veneer\+0x10 of cos\+0x0 in libm\.so\.6, not instrumented;" <<<"$RT_ERR_TXT"; then
		rt_pass "dlsym-veneer16[$m]: caught, named"
	else
		rt_fail "dlsym-veneer16[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
done

# fineibt inspect --pid reads an opened site through its stub: the module
# is in one mode (not "mixed"), every call site in its rewritten form.
FIFO=$RT_OUT/dlsym.fifo
for m in $(fi_with_sets kcfi auto fineibt,paranoid,bhi); do
	rm -f "$FIFO"
	mkfifo "$FIFO"
	FINEIBT_CFI=$m "$P" hold <"$FIFO" >"$RT_OUT/hold.out" 2>&1 &
	pid=$!
	exec 3>"$FIFO"
	for _ in $(seq 1 200); do
		grep -q ready "$RT_OUT/hold.out" 2>/dev/null && break
		sleep 0.05
	done
	line=$("$FIBT" inspect --pid "$pid" 2>&1 | grep -F "$P")
	exec 3>&-
	wait "$pid"
	read -r _ mode _ calls _ <<<"$line"
	want=$(fi_canon "$m")
	# v4 kcfi (and auto: kcfi) keeps the compiler's forms (only hashes change): 0/N is right
	# (v6.18 rewrites the kCFI callers: N/N).
	if [ "$mode" = "$want" ] && { [ "$want" = kcfi ] || [ "${calls%/*}" = "${calls#*/}" ]; }; then
		rt_pass "dlsym-inspect-pid[$m]: $mode, calls $calls"
	else
		rt_fail "dlsym-inspect-pid[$m]" "line='$line' want mode $want"
	fi
done
rm -f "$FIFO"
