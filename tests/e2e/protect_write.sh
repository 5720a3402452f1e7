#!/usr/bin/env bash
# protect_write: every object of the runtime state that decides whether
# and how a CFI check is enforced or reported is read-only after start-up.
# The program writes one byte of the real object (its address from the
# test-only fineibt_debug_object, in the test build of the runtime only:
# tests/lib/rtdebug.c) and must die of SIGSEGV (139) before
# the write takes effect, in every mode, with the runtime as a shared
# library or linked statically, and after a dlopen (which opened and
# closed the write window again). Before writing, the program installs a
# SIGILL handler of its own: the sigaction interposer records it through
# the same window, so that path works with the state read-only.
. "$(dirname "$0")/progs/protect_common.bash"

pr_build || { pr_fail build "could not build the protect programs"; exit 1; }

OBJECTS=(mode flags key active sealed nmods mods stubs stub_copies
	 sigill sigill_installed arena module module_flags module_path
	 module_views module_traps module_funcs module_arity module_sample module_syms
	 module_symname)
MODES=(off kcfi fineibt auto fineibt,bhi auto,warn kcfi,norand)
mapfile -t MODES < <(fi_with_sets "${MODES[@]}")	# both sequence sets

# check_write NAME CFI PROG [LIB]
check_write() {
	local obj=$1 m=$2 prog=$3 lib=${4:-} tag
	tag="write-$obj[$m${lib:+,dlopen}${prog##*protect_prog}]"
	pr_run write "$m" env "$PR_DEBUG_ENV" "$prog" write "$obj" $lib
	if [ "$PR_RC" = 139 ] && [ "$PR_OUT_TXT" = "writing $obj" ]; then
		pr_pass "$tag: faults"
	else
		pr_fail "$tag" "want SIGSEGV before the write: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
}

for m in "${MODES[@]}"; do
	for obj in "${OBJECTS[@]}"; do
		check_write "$obj" "$m" "$PROG"
	done
done
# After a dlopen patched a module (window opened and closed again).
for m in $(fi_with_sets kcfi auto fineibt,bhi); do
	for obj in mode flags key mods module module_flags module_traps sigill arena; do
		check_write "$obj" "$m" "$PROG" "$LIB"
	done
done
# The runtime inside the executable (libfineibt.a): its own .bss page.
for m in $(fi_with_sets off auto auto,warn); do
	for obj in mode flags key mods module_flags module_traps sigill; do
		check_write "$obj" "$m" "$PROG_STATIC"
	done
done

# Controls: a write to an ordinary writable word of the library goes
# through (so a write that does not fault is seen), unknown names refused.
for prog in "$PROG" "$PROG_STATIC"; do
	pr_run control auto env "$PR_DEBUG_ENV" "$prog" write writable
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'writing writable\nwrote writable' ]; then
		pr_pass "write-control[${prog##*/}]: a writable word is written"
	else
		pr_fail "write-control[${prog##*/}]" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done
pr_run control auto env "$PR_DEBUG_ENV" "$PROG" write nosuchobject
if [ "$PR_RC" = 2 ] && [ "$PR_OUT_TXT" = "no object nosuchobject" ]; then
	pr_pass "write-control: unknown object refused"
else
	pr_fail "write-control" "rc=$PR_RC out='$PR_OUT_TXT'"
fi

# The shipped runtime has no test-only export (docs/protection.md): not in
# libfineibt.so's dynamic symbols, not in libfineibt.a, and a program run
# against the shipped library does not find it.
if nm -D --defined-only "$ROOT/$BUILD/libfineibt.so" | grep -q debug_object ||
   nm "$ROOT/$BUILD/libfineibt.a" 2>/dev/null | grep -q debug_object; then
	pr_fail "no-debug-export" "libfineibt exports a debug_object symbol"
else
	pr_pass "no-debug-export: libfineibt.so and libfineibt.a have no debug_object symbol"
fi
pr_run shipped auto "$PROG" write mode
if [ "$PR_RC" = 2 ] && [ "$PR_OUT_TXT" = "no debug export" ]; then
	pr_pass "no-debug-export: the shipped library does not give the test its objects"
else
	pr_fail "no-debug-export" "rc=$PR_RC out='$PR_OUT_TXT'"
fi
