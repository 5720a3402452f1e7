#!/usr/bin/env bash
# rt_ctor: the runtime's constructors run before the program's own, in
# the shared runtime and in a -static-fineibt executable, where they
# share its .init_array (src/rt/ctor.h; docs/architecture.md
# "Constructors: the order of start-up"). progs/rt_ctor.c's constructor
# of priority 101 installs a SIGILL handler, calls through a pointer and
# dlopens a kCFI library (progs/rt_ctor_lib.c) to call into it; one with
# no priority calls through the pointer too. In every mode: the calls
# work and main's raise(SIGILL) reaches the program's handler; with the
# calls also made through another type, each is reported on stderr and
# recorded in FINEIBT_LOG (warn: all three, in order; fatal: the first,
# and the process dies of SIGILL). With the runtime's constructors at
# priorities a program's may precede (101 and up, or none), the static
# executable's first constructor ran before FINEIBT_LOG was open: its
# failures reached stderr but not the log.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/ctor
mkdir -p "$D"
{ rt_build "$D/libctor.so" -O2 -fPIC -shared "$RT_SRC/rt_ctor_lib.c" &&
  rt_build "$D/libctor_s.so" -O2 -fPIC -shared -static-fineibt "$RT_SRC/rt_ctor_lib.c" &&
  rt_build "$D/ctor" -O2 "$RT_SRC/rt_ctor.c" &&
  rt_build "$D/ctor_s" -O2 -static-fineibt "$RT_SRC/rt_ctor.c"; } ||
	{ rt_fail build "fineibt-cc could not build the rt_ctor programs"; exit 1; }

OUT_OK='first=42 lib=8 plain=14 ill=1'
# The log's targets, one record a line (the library's is the second:
# ctor_first's calls come first).
log_calls() {
	[ -s "$1" ] || return 0
	sed -E 's/.*"target":"([a-z_]+)\+0x0".*/\1/' "$1"
}
WANT_WARN=$'ctor_twice\nctor_lib_twice\nctor_twice'

for m in off kcfi fineibt fineibt,paranoid,bhi auto; do
	for kind in ctor ctor_s; do
		lib=$D/libctor.so
		[ $kind = ctor_s ] && lib=$D/libctor_s.so
		name="$kind[$m]"
		CTOR_LIB=$lib rt_run ctor "$m" "$D/$kind"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$OUT_OK" ] &&
		   ! grep -q 'CFI failure' <<<"$RT_ERR_TXT"; then
			rt_pass "$name"
		else
			rt_fail "$name" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:600}'"
		fi
		rt_is_off "$m" && continue
		log=$D/$kind.log
		rm -f "$log"
		CTOR_LIB=$lib CTOR_CONFUSE=1 FINEIBT_LOG=$log rt_run ctor "$m,warn" "$D/$kind"
		got=$(log_calls "$log")
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$OUT_OK" ] &&
		   [ "$(grep -cE "$RT_REPORT_RE" <<<"$RT_ERR_TXT")" = 3 ] &&
		   [ "$got" = "$WANT_WARN" ]; then
			rt_pass "$name-warn-log"
		else
			rt_fail "$name-warn-log" "rc=$RT_RC out='$RT_OUT_TXT' log='$got' err='${RT_ERR_TXT:0:600}'"
		fi
		rm -f "$log"
		CTOR_LIB=$lib CTOR_CONFUSE=1 FINEIBT_LOG=$log rt_run ctor "$m" "$D/$kind"
		got=$(log_calls "$log")
		if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] &&
		   grep -qE "$RT_REPORT_RE" <<<"$RT_ERR_TXT" &&
		   [ "$got" = ctor_twice ]; then
			rt_pass "$name-fatal-log"
		else
			rt_fail "$name-fatal-log" "rc=$RT_RC out='$RT_OUT_TXT' log='$got' err='${RT_ERR_TXT:0:600}'"
		fi
	done
done
