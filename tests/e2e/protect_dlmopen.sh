#!/usr/bin/env bash
# protect_dlmopen (docs/protection.md): one runtime per process. After
# start-up the program sets FINEIBT_CFI to something weaker in its
# environment, then dlmopen(LM_ID_NEWLM)s a kCFI library: the namespace
# brings a second copy of libfineibt.so, which must defer to the process's
# runtime (src/rt/rtone.c), never read the environment:
#  - dl[MODE,ENV]: the library is rewritten into the process's mode; its
#    confused call is reported in that mode (never ",warn" unless the
#    process runs in warn) and fatal; for the shared and the static
#    (-static-fineibt) runtime. Before the fix: a warn report, exit 0.
#  - install[MODE]: the namespace installs a SIGILL handler of its own
#    through its own libc: the CFI trap still never reaches it.
#  - ud2[MODE]: a plain ud2 (__builtin_trap) in that registered library
#    is the program's: the namespace's handler runs (docs/protection.md,
#    "Traps that are not CFI checks"), where the CFI trap (install) never
#    reaches it.
#  - late[MODE]: the namespace dlopens a second library after it started:
#    handed to the process's runtime as well, its confused call fatal.
#  - api[MODE]: the namespace's copy of the public API reads the
#    process's mode, and registers JIT regions with the process's runtime.
#  - warn: a process in warn stays in warn there (reported, continues).
#  - forge: an anchor naming writable memory is refused: the process
#    ends (127) before the namespace runs in a mode nobody checked.
. "$(dirname "$0")/progs/protect_common.bash"

D=$ROOT/$BUILD/e2e/dlmopen
mkdir -p "$D"
PROG=$D/one_prog
PROG_STATIC=$D/one_prog_static
LIB=$D/libfi_one.so
{ pr_fresh "$PROG" "$PR_SRC/one_prog.c" ||
  "$FCC" -O2 -Wall -I"$ROOT/include" "$PR_SRC/one_prog.c" -o "$PROG" -ldl; } &&
{ pr_fresh "$PROG_STATIC" "$PR_SRC/one_prog.c" ||
  "$FCC" -O2 -Wall -static-fineibt -I"$ROOT/include" "$PR_SRC/one_prog.c" \
	-o "$PROG_STATIC" -ldl; } &&
{ pr_fresh "$LIB" "$PR_SRC/one_lib.c" ||
  "$FCC" -O2 -fPIC -shared -I"$ROOT/include" "$PR_SRC/one_lib.c" -o "$LIB"; } ||
	{ pr_fail build "could not build one_prog"; exit 1; }
NOMEMFD=$D/nomemfd
{ [ "$NOMEMFD" -nt "$PR_SRC/nomemfd.c" ] ||
  clang-22 -O2 "$PR_SRC/nomemfd.c" -o "$NOMEMFD"; } ||
	{ pr_fail build "could not build nomemfd"; exit 1; }
LIB2=$D/libfi_one2.so
cp "$LIB" "$LIB2"


for prog in "$PROG" "$PROG_STATIC"; do
	kind=shared
	[ "$prog" = "$PROG_STATIC" ] && kind=static
	for m in kcfi fineibt fineibt,bhi auto; do
		for env in warn off; do
			pr_run dl "$m" "$prog" "$LIB" "$env"
			re="^fineibt: CFI failure at .*mode: $(fi_canon_re "$m")\)\$"
			if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "apply 42" ] &&
			   grep -Eq "$re" <<<"$PR_ERR_TXT"; then
				pr_pass "dl[$kind,$m,$env]: the namespace runs in the process's mode; trap fatal"
			else
				pr_fail "dl[$kind,$m,$env]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
			fi
		done
	done
	for m in kcfi auto; do
		pr_run install "$m" "$prog" "$LIB" warn install
		if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "apply 42" ] &&
		   grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
			pr_pass "install[$kind,$m]: the namespace's SIGILL handler never gets the CFI trap"
		else
			pr_fail "install[$kind,$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	for m in kcfi fineibt auto; do
		pr_run ud2 "$m" "$prog" "$LIB" warn ud2
		if [ "$PR_RC" = 3 ] && [ "$PR_OUT_TXT" = $'apply 42\nnamespace handler' ] &&
		   [ -z "$PR_ERR_TXT" ]; then
			pr_pass "ud2[$kind,$m]: a plain ud2 in the registered library reaches the program's handler"
		else
			pr_fail "ud2[$kind,$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	for m in kcfi fineibt auto; do
		pr_run late "$m" "$prog" "$LIB" warn late "$LIB2"
		re="^fineibt: CFI failure at .*mode: $(fi_canon_re "$m")\)\$"
		if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "apply 42" ] &&
		   grep -Eq "$re" <<<"$PR_ERR_TXT"; then
			pr_pass "late[$kind,$m]: a library the namespace loads later runs in the process's mode"
		else
			pr_fail "late[$kind,$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	for m in kcfi auto; do
		pr_run api "$m" "$prog" "$LIB" warn api
		if [ "$PR_RC" = 132 ] &&
		   [ "$PR_OUT_TXT" = $'config same\njit registered\napply 42' ]; then
			pr_pass "api[$kind,$m]: the namespace's API reads the process's mode and registers with it"
		else
			pr_fail "api[$kind,$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	pr_run warn auto,warn "$prog" "$LIB" auto
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'apply 42\nsurvived' ] &&
	   grep -Eq '^fineibt: CFI failure at .*mode: kcfi,warn\)$' <<<"$PR_ERR_TXT"; then
		pr_pass "warn[$kind]: a process in warn stays in warn in the namespace"
	else
		pr_fail "warn[$kind]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	# No anchor (memfd_create refused by seccomp): the namespace's copy
	# finds SIGILL taken and reads FINEIBT_CFI as in a privileged
	# process: the program's later "warn"/"off" is ignored, the trap
	# fatal. Before: "survived".
	for env in warn off; do
		# The static runtime and the namespace's copy then run with
		# seeds of their own: the program's first call into the
		# library already traps (fail closed), before "apply 42".
		# With the shared runtime too: the namespace's copy starts
		# after main (no proof that no code of the program ran), so
		# it rewrites the library through the verified copy, which
		# is anonymous memory to the kernel, and the primary's dlsym
		# veneer check (fi_export_real) cannot place ol_apply in its
		# file. Before, written in place, it got a veneer.
		want_out=
		pr_run nomemfd auto "$NOMEMFD" "$prog" "$LIB" "$env"
		if [ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "$want_out" ] &&
		   grep -q "^fineibt: ignoring '$env'" <<<"$PR_ERR_TXT" &&
		   grep -Eq '^fineibt: CFI failure at .*mode: kcfi\)$' <<<"$PR_ERR_TXT"; then
			pr_pass "nomemfd[$kind,$env]: no anchor, the namespace ignores the weaker mode"
		else
			pr_fail "nomemfd[$kind,$env]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	pr_run forge auto "$prog" "$LIB" warn forge
	if [ "$PR_RC" = 127 ] && [ -z "$PR_OUT_TXT" ] &&
	   grep -q '^fineibt: fatal: another fineibt runtime runs in this process (dlmopen) and its state cannot be verified; terminating$' <<<"$PR_ERR_TXT"; then
		pr_pass "forge[$kind]: an anchor naming writable memory ends the process"
	else
		pr_fail "forge[$kind]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
