#!/usr/bin/env bash
# protect_targets: what an attacker with a write primitive finds
# (docs/protection.md, "What an attacker with a write primitive still
# finds").
# protect_targets (a fineibt-cc program, either runtime) overwrites, one
# by one in forked children, every word of its writable memory that holds
# a code address, raw or mangled with glibc's pointer guard, with the
# address of a function of no expected type, then runs a workload (stdio,
# malloc, qsort, a thread, a signal, dlopen/dlsym/dlclose of a kCFI
# library and of libm, atexit, exit). A word whose child arrives there is
# a live unchecked call target (docs/protection.md, "What an attacker
# with a write primitive still finds").
#  - bound (LD_BIND_NOW=1, as `fineibt run`): no raw word is live
#    anywhere; what is live is glibc's own pointer-mangled words in libc
#    (Debian 12: the atexit entry for _dl_fini), outside what CFI on
#    compiled code defends: uninstrumented glibc calls them, and the
#    guard is readable.
#  - run directly: raw live words only in libc or ld.so (slots the loader
#    binds lazily after start-up), never in the program, the runtime,
#    the kCFI library or the heap.
#  - control: in `off` and `warn` the kCFI library's own function-pointer
#    array is live (its call is checked in every other mode).
. "$(dirname "$0")/progs/protect_common.bash"

pr_build || { pr_fail build "could not build the protect programs"; exit 1; }
SRC=$PR_SRC/protect_targets.c
P=$PR_OUT/protect_targets
{ pr_fresh "$P" "$SRC" || "$FCC" -O2 -Wall "$SRC" -lpthread -o "$P"; } &&
{ pr_fresh "$P-static" "$SRC" || "$FCC" -O2 -Wall -static-fineibt "$SRC" -lpthread -o "$P-static"; } ||
	{ pr_fail build "could not build protect_targets"; exit 1; }

live_raw() { grep -E '^live .* raw$' <<<"$PR_OUT_TXT"; }
checked() { [[ $PR_OUT_TXT =~ (^|$'\n')checked\ [1-9][0-9]*$ ]]; }

for prog in "$P" "$P-static"; do
	p=${prog##*/}
	for m in $(fi_with_sets auto kcfi fineibt fineibt,bhi); do
		pr_run targets "$m" env LD_BIND_NOW=1 "$prog" "$LIB"
		raw=$(live_raw)
		if checked && [ -z "$raw" ] &&
		   ! grep -E '^live ' <<<"$PR_OUT_TXT" | grep -qvE '/libc\.so\.6\+0x[0-9a-f]+ mangled$'; then
			pr_pass "targets-bound[$m,$p]: no raw live target ($(grep -c '^live ' <<<"$PR_OUT_TXT") mangled in libc: glibc's)"
		else
			pr_fail "targets-bound[$m,$p]" "rc=$PR_RC out='$PR_OUT_TXT'"
		fi
	done
	pr_run targets auto "$prog" "$LIB"
	other=$(live_raw | grep -vE '/(libc\.so\.6|ld-linux-x86-64\.so\.2)\+')
	if checked && [ -z "$other" ]; then
		pr_pass "targets-direct[$p]: raw live targets only in libc/ld.so ($(live_raw | wc -l): lazy slots)"
	else
		pr_fail "targets-direct[$p]" "live outside libc/ld.so: '$other' (rc=$PR_RC)"
	fi
	for m in off auto,warn; do
		pr_run targets "$m" env LD_BIND_NOW=1 "$prog" "$LIB"
		if checked && live_raw | grep -q '/libfi_protect\.so+'; then
			pr_pass "control[$m,$p]: the library's pointer array is live unchecked"
		else
			pr_fail "control[$m,$p]" "want a live word in libfi_protect.so: rc=$PR_RC out='$PR_OUT_TXT'"
		fi
	done
done
exit 0
