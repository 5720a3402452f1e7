#!/usr/bin/env bash
# protect_slot (docs/protection.md, "Escapes through the runtime's own
# work", "Where a binding store may land"): the binding passes after a
# dlopen (dlsym_so.c's interposers, sigbind.c, stockven.c) store into a
# module's RELRO slots through /proc/self/mem, which ignores page
# protection. The slots and the RELRO range came from the loader's link
# map (l_phdr, l_addr: ld.so's writable data): an attacker with a write
# primitive pointed the executable's l_phdr at program headers of its own
# (a dynamic section, relocations and a RELRO range of its making) and
# the runtime wrote its dlsym interposer's address where it was told.
# Now the kernel decides where such a store may land (rtlive.c,
# fi_live_slot_ok). Run against the test runtime (fineibt_debug_object).
#  - state: two unaligned stores over the state's sig.installed: the
#    program's sigaction(SIGILL) then evicted fineibt's handler and its
#    own handler swallowed the confused call ("swallowed", exit 3) in
#    every mode. Now: installed 1, the report, SIGILL.
#  - mods: one aligned store over the executable's entry in the module
#    table: the module was no longer registered (the report undecoded).
#    Now: kept, the decoded report.
#  - relro: one aligned store into libfineibt's own RELRO
#    (fi_rt_coarse_slot, read by the coarse check): forged. Now: kept.
#  - dlopen: with the store's checks above, one aligned store into the
#    executable's own GOT (full RELRO: a read-only file mapping, another
#    module's) of the runtime's dlopen interposer, for the slot of open:
#    the program's open(PAYLOAD, O_RDWR) then loaded PAYLOAD (O_RDWR is
#    RTLD_NOW), a library load from a data write. Now dlsym_so.c rebinds a
#    slot only while it holds libc's function of that name (as the
#    runtime's own read-only GOT binds it): kept, open opens.
#  - sigbind: the library's link map forged (l_ld, l_phdr) so that the
#    RTLD_DEEPBIND rebinding of the SIGILL family (sigbind.c) stores the
#    runtime's sigaction in the executable's GOT slot of write: the
#    program's write(SIGSEGV, &sa, 0) then installed sa's handler ("segv
#    forged"). Now a slot in RELRO is rebound only while it holds libc's
#    own function of that name (the read-only state's): "segv kept".
#  - sigbind_sigset: the same with a relocation named sigset, and the
#    runtime's own record of the loader's search list (livedyn.c's
#    fi_next_kept, writable) forged so that a lookup of sigset answers
#    libc's write: sigbind.c asked that lookup for sigset, sigignore and
#    sigvec ("segv forged"). Now it compares with libc's sigset as
#    resolved at start-up into the read-only state: "segv kept".
#  - none: the control (no forgery): the decoded report.
# On the tree before the fix: 20 of the 24 cases fail (state, mods, relro,
# dlopen, sigbind in each mode); with the store's check alone, the 8
# dlopen and sigbind ones. sigbind_sigset (4 more): all 4 fail on the
# tree before sigset, sigignore, sigvec were kept in the state.
. "$(dirname "$0")/progs/protect_common.bash"
pr_build || { pr_fail build "could not build protect_prog"; exit 1; }
SP=$PR_OUT/protect_slot
{ pr_fresh "$SP" "$PR_SRC/protect_slot.c" ||
  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -Wall -I"$ROOT/include" "$PR_SRC/protect_slot.c" -o "$SP"; } ||
	{ pr_fail build "could not build protect_slot"; exit 1; }
PAYLOAD=$PR_OUT/libfi_slot_payload.so
{ pr_fresh "$PAYLOAD" "$PR_SRC/protect_slot_lib.c" ||
  "$FCC" -O2 -fPIC -shared "$PR_SRC/protect_slot_lib.c" -o "$PAYLOAD"; } ||
	{ pr_fail build "could not build the payload library"; exit 1; }
# livedyn.c's record of the loader's search list, from the test runtime's
# symbol table (the attacker is assumed to know every address).
KEPT=$(nm -S "$PR_TESTLIB/libfineibt.so" 2>/dev/null |
	awk '$4 == "fi_next_kept" { print $1 "," $2; exit }')
LIBC=$(ldd "$SP" | awk '$1 == "libc.so.6" { print $3 }')
SIGSET=$(nm -D --defined-only "$LIBC" 2>/dev/null | awk '$3 == "sigset@@GLIBC_2.2.5" { print $1; exit }')
[ -n "$SIGSET" ] && KEPT+=",$SIGSET" || KEPT=
[ -z "$KEPT" ] && echo "SKIP: sigbind_sigset: no fi_next_kept in the test runtime's symbols"
DECODED='^fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: twice\+0x0; '
DECODED_PRE='^fineibt: CFI failure at __cfi_twice\+0x[0-9a-f]+ \(target: twice\+0x0; '

decoded() {
	grep -Eq "$DECODED|$DECODED_PRE" <<<"$PR_ERR_TXT"
}

for m in kcfi fineibt fineibt,paranoid auto; do
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" none "$LIB"
	if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] && decoded; then
		pr_pass "none[$m]: the control: the confused call reported, fatal"
	else
		pr_fail "none[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" state "$LIB"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "installed 1" ] && decoded; then
		pr_pass "state[$m]: no store into the state; the handler stays, the call is fatal"
	else
		pr_fail "state[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" mods "$LIB"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "mods kept" ] && decoded; then
		pr_pass "mods[$m]: the module table kept; the report decoded"
	else
		pr_fail "mods[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" dlopen "$LIB" "$PAYLOAD"
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'dlopen kept\nopen opened' ]; then
		pr_pass "dlopen[$m]: the executable's GOT slot of open kept; open opens"
	else
		pr_fail "dlopen[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" sigbind "$LIB"
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "segv kept" ]; then
		pr_pass "sigbind[$m]: the executable's GOT slot of write kept"
	else
		pr_fail "sigbind[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	if [ -n "$KEPT" ]; then
		pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" sigbind_sigset "$LIB" "$KEPT"
		if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "segv kept" ]; then
			pr_pass "sigbind_sigset[$m]: a forged lookup of sigset: the GOT slot of write kept"
		else
			pr_fail "sigbind_sigset[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	fi
	pr_run slot "$m" env "$PR_DEBUG_ENV" "$SP" relro "$LIB"
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "relro kept" ]; then
		pr_pass "relro[$m]: libfineibt's own RELRO kept"
	else
		pr_fail "relro[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
