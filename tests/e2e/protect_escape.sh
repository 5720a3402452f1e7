#!/usr/bin/env bash
# protect_escape (docs/protection.md, "Escapes through the runtime's own work"): escapes through the
# runtime's own work. (tests/unit/test_protect_escape.c: the rest.)
#  - race: a writer thread hammers the runtime's scratch copy of a
#    library's text (process_vm_writev) while the library is dlopen'ed,
#    called and dlclose'd in a loop. What becomes code is verified after
#    the copy is sealed: the writer's bytes never run (a rewrite they
#    touched is abandoned, the library left in kCFI form), in every mode.
#    Calls from the rewritten program into an abandoned library may then
#    fail their check (its hashes are not the process's): fatal, reported.
#    Removing the check (src/rt/rtlive.c, fi_scratch_verify) makes this fail:
#    "injected" or a crash within a few rounds.
#  - mapfull: see below.
#  - jitfull: after every JIT slot is taken, a dlopen'ed kCFI library is
#    still registered: its confused call is reported and fatal.
#  - modfull: 260 copies of the library take every module slot; the last
#    ones cannot be registered, but their text is in the read-only record
#    of rewritten code: their confused call is fatal (never the program's
#    SIGILL handler, which the program installed).
#  - coarse: the same 260 copies; a call without a kCFI check (the coarse
#    check) into the last, unregistered one reaches a static function
#    whose address escapes (an entry of the bitmap the scan made of its
#    recorded entries) and traps at the middle of a function. The whole
#    text of such a module used to be accepted (FI_COARSE_ALL): "mid ran 7".
#  - forged: an uninstrumented library's link_map (l_addr, heap) moved so
#    that dladdr names the middle of a function as an export; the SIGILL
#    handler's exemption for exports took it ("forged ran 7"). The kernel
#    now checks the answer (the target's file offset is the symbol's).
#  - dlsymforged: the same forged l_addr, only around a dlsym of the
#    export from a kCFI caller; libc's moved answer got a dlsym veneer
#    (valid for every type) and a call of another type through it ran
#    ("forged ran 7"). The interposer now has the kernel check the answer
#    (the same check), and gives the plain address: the caller traps.
#    Moved into another object (inside libc's labs: dladdr names no
#    export there), it is taken only if that object gives it for the
#    name ("cross plain"; "cross veneer" before).
. "$(dirname "$0")/progs/protect_common.bash"

ES_OUT=$ROOT/$BUILD/e2e/escape
mkdir -p "$ES_OUT/copies"
PROG=$ES_OUT/escape_prog
LIB=$ES_OUT/libfi_escape.so
# Named by soname (FINEIBT_CC_RUNPATH=1): mapfull runs them against the
# test runtime through LD_LIBRARY_PATH (PR_DEBUG_ENV).
{ pr_fresh "$PROG" "$PR_SRC/escape_prog.c" ||
  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -Wall -I"$ROOT/include" "$PR_SRC/escape_prog.c" -o "$PROG" -lpthread; } &&
{ pr_fresh "$ES_OUT/libfi_plain.so" "$PR_SRC/escape_plain.c" ||
  clang-22 -O2 -fPIC -shared "$PR_SRC/escape_plain.c" -o "$ES_OUT/libfi_plain.so"; } &&
{ pr_fresh "$LIB" "$PR_SRC/escape_lib.c" ||
  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -fPIC -shared "$PR_SRC/escape_lib.c" -o "$LIB"; } ||
	{ pr_fail build "could not build escape_prog"; exit 1; }
COPIES=()
for i in $(seq -w 0 259); do
	cp "$LIB" "$ES_OUT/copies/lib$i.so"
	COPIES+=("$ES_OUT/copies/lib$i.so")
done

ROUNDS=${ES_ROUNDS:-40}
abandoned=0
# MODE[:SET]: the v6.18 sequence set (FINEIBT_SEQ) is verified too.
for ms in kcfi kcfi,norand fineibt fineibt,bhi fineibt,paranoid auto auto,warn \
	  fineibt:v6.18 auto:v6.18; do
	m=${ms%%:*}
	seq=v4
	[[ $ms == *:* ]] && seq=${ms#*:}
	pr_run race "$m" env FINEIBT_SEQ="$seq" "$PROG" race "$LIB" "$ROUNDS"
	[ "$seq" = v4 ] || m="$m][seq=$seq"
	if [ "$PR_RC" = 0 ] && [[ "$PR_OUT_TXT" == "race ok $ROUNDS hits "* ]]; then
		pr_pass "race[$m]: the writer's bytes never ran (${PR_OUT_TXT#race ok $ROUNDS })"
	elif [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] &&
	     grep -q 'rewrite abandoned, left in kCFI form' <<<"$PR_ERR_TXT" &&
	     grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
		# Fail closed: the abandoned library keeps its compile-time
		# hashes, so a call into it from the rewritten program is
		# (rightly) a CFI failure.
		pr_pass "race[$m]: a rewrite the writer touched was abandoned; calls into it trap"
	else
		pr_fail "race[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	abandoned=$((abandoned + $(grep -c 'rewrite abandoned, left in kCFI form' "$PR_OUT/race.err")))
done
echo "note: race: $abandoned rewrites abandoned (a write landed in the copy)"

# mapfull: the state and the arena are read-only again after every
# window, with the process at its map-count limit and a thread taking
# each slot that frees up (the state was once writable).
for m in $(fi_with_sets kcfi fineibt auto); do
	pr_run mapfull "$m" env "$PR_DEBUG_ENV" "$PROG" mapfull "$LIB"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = $'mapfull ok\ndl ok' ] &&
	   grep -q '^fineibt: CFI failure at ' <<<"$PR_ERR_TXT"; then
		pr_pass "mapfull[$m]: state and arena read-only at the map-count limit; trap fatal"
	else
		pr_fail "mapfull[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done

for m in $(fi_with_sets kcfi fineibt fineibt,bhi auto); do
	pr_run jitfull "$m" "$PROG" jitfull "$LIB"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = $'jit 256\ndl ok' ] &&
	   grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
		pr_pass "jitfull[$m]: 256 JIT regions, the library still registered, its trap fatal"
	else
		pr_fail "jitfull[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
pr_run jitfull auto,warn "$PROG" jitfull "$LIB"
if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'jit 256\ndl ok\nsurvived' ] &&
   grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
	pr_pass "jitfull[auto,warn]: reported, continues"
else
	pr_fail "jitfull[auto,warn]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
fi

UNREG='^fineibt: CFI failure at 0x[0-9a-f]+ \(in rewritten code of a module that is not registered; not decoded\)$'
for m in $(fi_with_sets kcfi fineibt fineibt,bhi auto auto,warn); do
	pr_run modfull "$m" "$PROG" modfull "${COPIES[@]}"
	nreg=$(grep -c 'cannot register (No space left on device)' "$PR_OUT/modfull.err")
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = $'loaded 260\ndl ok' ] &&
	   [ "$nreg" -ge 1 ] && grep -Eq "$UNREG" <<<"$PR_ERR_TXT"; then
		pr_pass "modfull[$m]: $nreg libraries not registered, the trap in one is fatal"
	else
		pr_fail "modfull[$m]" "rc=$PR_RC nreg=$nreg out='$PR_OUT_TXT' err='$(grep -v 'cannot register' "$PR_OUT/modfull.err" | head -c 300)'"
	fi
done
pr_run modfull off "$PROG" modfull "${COPIES[@]}"
if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'loaded 260\ndl ok\nsurvived' ]; then
	pr_pass "modfull[off]: no checks, no trap"
else
	pr_fail "modfull[off]" "rc=$PR_RC out='$PR_OUT_TXT'"
fi

# coarse: a module whose registration failed (here: every slot taken, a
# benign cause; a racing writer could force one) has the bitmap of its
# recorded entries, not its whole text. With one copy (registered), the
# same calls as a control.
for m in $(fi_with_sets kcfi fineibt auto); do
	for n in 260 1; do
		pr_run coarse "$m" "$PROG" coarse "${COPIES[@]:0:$n}"
		want=$'loaded '$n$'\nentry 42'
		where=';'
		[ "$n" = 1 ] || where=' in lib[0-9]+\.so, not registered;'
		if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "$want" ] &&
		   grep -Eq "^fineibt: CFI failure at [^ ]+ \(target: el_body\+0x10$where.*coarse check" <<<"$PR_ERR_TXT"; then
			pr_pass "coarse[$m,$n]: an entry of an unregistered library passes, the middle of a function traps"
		else
			pr_fail "coarse[$m,$n]" "rc=$PR_RC out='$PR_OUT_TXT' err='$(grep -v 'cannot register' "$PR_OUT/coarse.err" | head -c 300)'"
		fi
	done
done

# forged: a write into the loader's heap (an uninstrumented library's
# l_addr) makes dladdr name the middle of a function as its export.
for m in $(fi_with_sets kcfi fineibt auto); do
	pr_run forged "$m" "$PROG" forged "$ES_OUT/libfi_plain.so"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = 'entry 5' ] &&
	   grep -Eq '^fineibt: CFI failure at [^ ]+ \(target: .*coarse check' <<<"$PR_ERR_TXT"; then
		pr_pass "forged[$m]: an export named by a forged link_map is refused; the real one passes"
	else
		pr_fail "forged[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
# dlsymforged: libc's dlsym answer moved by the same write (around the
# dlsym only) gets no veneer; a typed call of another type through it
# traps. Plain fineibt has no caller check (without IBT it cannot stop a
# call to code without a preamble): its paranoid form.
for m in $(fi_with_sets kcfi fineibt,paranoid auto); do
	pr_run dlsymforged "$m" "$PROG" dlsymforged "$ES_OUT/libfi_plain.so"
	if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = $'entry 5\ncross plain' ] &&
	   grep -Eq "$PR_REPORT_RE"'.* in libfi_plain\.so, not instrumented' <<<"$PR_ERR_TXT"; then
		pr_pass "dlsymforged[$m]: libc's dlsym answer moved by a forged link_map gets no veneer; the real one does"
	else
		pr_fail "dlsymforged[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
