#!/usr/bin/env bash
# protect_inplace (docs/protection.md, "The first window"): start-up
# writes the state in place, with plain stores, only when no code of the
# program has run and no other task shares the address space. The
# executable's IFUNC resolvers had run, though (the loader calls them while
# it relocates the executable, before every constructor), and what they
# leave behind acts inside the windows without being a second task: found
# by attack, a resolver installed a SIGALRM handler and a 50 us interval
# timer; a tick between the record's window and the registration's (the
# block held writable across the rewrite) set FINEIBT_F_WARN in the
# state's cfg.flags, and the confused call reported "mode: kcfi,warn" and
# survived (exit 0) in every checking mode, kcfi,norand included. Now a
# module with an IFUNC of its own (an IRELATIVE relocation, an exported
# STT_GNU_IFUNC) means the program's code ran: through the kernel
# (src/load/early.c, fi_early_has_ifunc), and the handler's writes are
# refused from the first window's start: the call traps (132).
#  - sig[MODE]: the program (progs/protect_inplace.c) checks that the word
#    it forges is the state's cfg.flags (fineibt_get_config), that the
#    timer ran and that its write was refused once the state went
#    read-only ("refused 1"); the confused call must trap.
#  - pre[MODE]: the same resolver writes one byte instead, the state's
#    wr.how = FI_RT_KERNEL, in the loader's writable .bss before the
#    runtime starts (as a thread started before it could): the first
#    window took the state as set up and never made it read-only, so it
#    was still writable at main, for every later write primitive
#    ("state writable at main"). Now the window that finds the owner's
#    token missing (a fork child's, or this) makes the area read-only
#    again (src/rt/rtwrite.c, fi_rt_own_open: no call in a real start).
# On the tree before the fixes: every sig[MODE] and pre[MODE] fails
# ("survived", "state writable at main").
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/protect_inplace
mkdir -p "$D"
off=$(nm "$ROOT/$BUILD/libfineibt.so" | awk '$3 == "fi_rt_area" { print "0x" $1 }')
inc=(-I"$ROOT/include")
for d in "$ROOT"/src/*/; do inc+=(-I"$d"); done
[ -n "$off" ] && rt_build "$D/protect_inplace" -O2 "${inc[@]}" \
	-DFI_AREA_OFF="$off" "$RT_SRC/protect_inplace.c" ||
	{ rt_fail build "could not build protect_inplace (fi_rt_area: '$off')"; exit 1; }
rt_build "$D/protect_inplace_pre" -O2 "${inc[@]}" -DPI_PRESET \
	-DFI_AREA_OFF="$off" "$RT_SRC/protect_inplace.c" ||
	{ rt_fail build "could not build protect_inplace_pre"; exit 1; }

for m in kcfi kcfi,norand fineibt,paranoid fineibt,paranoid,bhi auto; do
	rt_run "protect_inplace.$m" "$m" "$D/protect_inplace" 1
	first=$(head -1 <<<"$RT_OUT_TXT")
	if [[ $RT_OUT_TXT == *survived* ]]; then
		rt_fail "sig[$m]" "the confused call survived: $(grep -m1 'mode:' <<<"$RT_ERR_TXT")"
	elif [[ $first != "inplace 2 forged "*" refused 1" ]]; then
		rt_fail "sig[$m]" "program: '$first' rc=$RT_RC $(head -2 <<<"$RT_ERR_TXT")"
	elif [ "$RT_RC" != 132 ]; then
		rt_fail "sig[$m]" "rc=$RT_RC (want 132) $(head -2 <<<"$RT_ERR_TXT")"
	else
		rt_pass "sig[$m]: $first; the confused call traps"
	fi
done

for m in kcfi kcfi,norand fineibt,paranoid auto; do
	rt_run "protect_inplace_pre.$m" "$m" "$D/protect_inplace_pre" 1
	first=$(head -1 <<<"$RT_OUT_TXT")
	if [ "$first" != "inplace 2 state read-only at main" ]; then
		rt_fail "pre[$m]" "program: '$first' rc=$RT_RC $(head -2 <<<"$RT_ERR_TXT")"
	elif [ "$RT_RC" != 132 ]; then
		rt_fail "pre[$m]" "rc=$RT_RC (want 132) $(head -2 <<<"$RT_ERR_TXT")"
	else
		rt_pass "pre[$m]: $first; the confused call traps"
	fi
done
