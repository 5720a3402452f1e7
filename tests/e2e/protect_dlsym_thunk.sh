#!/usr/bin/env bash
# protect_dlsym_thunk (docs/compat.md, "Foreign function pointers";
# docs/protection.md): dlsym hands out no veneer for an indirect-branch
# thunk (`__x86_indirect_thunk_<reg>`, `__x86_indirect_call_thunk_*`...)
# or the runtime's coarse check and BHI stubs. A veneer is accepted by
# every check as a function of any type; a thunk behind it jumps to any
# address in a register: together, one dlsym of a name from the program's
# input (a plug-in host, an FFI: Lua's package.loadlib) made a call that
# reaches anywhere. The program dlsym's __x86_indirect_thunk_rax
# (libfineibt.so's) and calls it as long (*)(long) with rax = pwned.
#  - thunk[MODE]: the call is a CFI failure (132, reported), where the
#    caller checks; before: "PWNED", exit 7, no report.
#  - flow[MODE,NAME]: setcontext and longjmp (they load rip and rsp from
#    memory their argument names) get no veneer either: the call is a CFI
#    failure (132, reported), as under stock kCFI; before, the veneer let
#    it through and setcontext(5) crashed on its argument (139).
#  - libc[MODE]: a plain libc function (labs) through its own type still
#    gets its veneer and runs (exit 0).
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/protect_dlsym_thunk
rt_build "$P" -O2 -g "$RT_SRC/protect_dlsym_thunk.c" -ldl ||
	{ rt_fail build "fineibt-cc could not build protect_dlsym_thunk"; exit 1; }

for m in $(fi_with_sets kcfi fineibt,paranoid fineibt,paranoid,bhi) auto; do
	rt_run dlsym_thunk "$m" "$P" __x86_indirect_thunk_rax
	if [ "$RT_RC" = 132 ] && ! grep -q PWNED <<<"$RT_OUT_TXT" &&
	   grep -qE "$RT_REPORT_RE" <<<"$RT_ERR_TXT"; then
		rt_pass "thunk[$m]: no veneer; the call is a CFI failure"
	else
		rt_fail "thunk[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:300}'"
	fi
	for n in setcontext longjmp; do
		rt_run dlsym_flow "$m" "$P" "$n"
		if [ "$RT_RC" = 132 ] && grep -qE "$RT_REPORT_RE" <<<"$RT_ERR_TXT"; then
			rt_pass "flow[$m,$n]: no veneer; the call is a CFI failure"
		else
			rt_fail "flow[$m,$n]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:300}'"
		fi
	done
	rt_run dlsym_thunk_libc "$m" "$P" labs
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "returned 5" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "libc[$m]: labs through its own type still runs"
	else
		rt_fail "libc[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:300}'"
	fi
done
exit 0
