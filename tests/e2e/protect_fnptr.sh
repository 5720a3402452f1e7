#!/usr/bin/env bash
# protect_fnptr: no unchecked call target in libfineibt's writable memory
# (docs/protection.md). A program built with fineibt-cc (shared runtime, and
# -static-fineibt) runs, in every mode, through start-up, a dlopen of a
# kCFI library and a call into it, library messages through the default
# print hook and through a hook of its own; then it scans the writable
# part of the object holding libfineibt for 8-byte words pointing into
# an executable mapping (tests/e2e/progs/protect_fnptr.c). Each hit is
# named here by the symbol (llvm-nm) and section (llvm-readelf) holding
# it; any hit fails, except the program's own data in the static case,
# where libfineibt shares the executable's data segment. A control
# run must find that planted pointer, so the scan can see what it looks
# for. The runtime itself is linked with full RELRO and without an
# executable stack (llvm-readelf).
. "$(dirname "$0")/progs/protect_common.bash"

NM=llvm-nm-22
READELF=llvm-readelf-22
SRC=$PR_SRC/protect_fnptr.c
FP=$PR_OUT/protect_fnptr
FP_STATIC=$PR_OUT/protect_fnptr_static

pr_build || { pr_fail build "could not build the protect programs"; exit 1; }
{ pr_fresh "$FP" "$SRC" || "$FCC" -O2 -Wall -I"$ROOT/include" "$SRC" -o "$FP"; } &&
{ pr_fresh "$FP_STATIC" "$SRC" ||
  "$FCC" -O2 -Wall -static-fineibt -I"$ROOT/include" "$SRC" -o "$FP_STATIC"; } ||
	{ pr_fail build "could not build protect_fnptr"; exit 1; }

MODES=(off kcfi kcfi,norand fineibt fineibt,paranoid fineibt,bhi
       fineibt,paranoid,bhi auto auto,warn)
# v6.18 (the set changes which bytes are written, not where pointers
# live): the modes that rewrite preambles and callers differently.
MODES+=(kcfi,seq=v6.18 fineibt,seq=v6.18 fineibt,paranoid,bhi,seq=v6.18)

# name_hits FILE: "hit 0xV -> T" lines of stdin become "SYMBOL (SECTION) -> T"
# ("?" where nothing holds V); fails if FILE's tables cannot be read.
name_hits() {
	local file=$1 syms secs
	syms=$($NM --defined-only -S "$file") && secs=$($READELF -SW "$file") || return 1
	python3 -c '
import re, sys
syms, secs = [], []
for l in sys.argv[1].splitlines():
    f = l.split()
    if len(f) >= 4:
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
for l in sys.argv[2].splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m and int(m.group(2), 16):
        secs.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1)))
for l in sys.stdin:
    f = l.split()
    if not f or f[0] != "hit":
        continue
    v = int(f[1], 16)
    name = next((n for a, z, n in syms if a <= v < a + z), "?")
    sec = next((n for a, z, n in secs if a <= v < a + z), "?")
    print("%s (%s) -> %s" % (name, sec, f[3]))
' "$syms" "$secs"
}

# check_scan TAG PROG ALLOWED-SYMBOLS...
check_scan() {
	local m=$1 prog=$2 how=scan tag obj hits bad
	shift 2
	[ "$prog" = "$FP_STATIC" ] && how=scan-exe
	tag="no-code-ptr[$m,${prog##*/}]"
	pr_run fnptr "$m" "$prog" $how "$LIB"
	obj=$(sed -n 's/^object //p' <<<"$PR_OUT_TXT")
	if [ "$PR_RC" != 0 ] || ! grep -q '^scanned [1-9]' <<<"$PR_OUT_TXT" || [ -z "$obj" ]; then
		pr_fail "$tag" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		return
	fi
	[ "$obj" = "[exe]" ] && obj=$prog
	if ! hits=$(name_hits "$obj" <<<"$PR_OUT_TXT"); then
		pr_fail "$tag" "cannot read the symbols of $obj"
		return
	fi
	bad=$(grep -v -E "^($(IFS='|'; echo "$*")) " <<<"$hits")
	if [ -n "$bad" ]; then
		pr_fail "$tag" "code pointers in writable memory of ${obj##*/}: $(tr '\n' ';' <<<"$bad")"
	elif [ "$(grep -c 'fnptr-scan-' <<<"$PR_ERR_TXT")" != 2 ]; then
		pr_fail "$tag" "want the two default-hook messages on stderr: '$PR_ERR_TXT'"
	else
		pr_pass "$tag: $(grep -o '[0-9]*$' <<<"$(grep '^scanned' <<<"$PR_OUT_TXT")") bytes of ${obj##*/}"
	fi
}

for m in "${MODES[@]}"; do
	check_scan "$m" "$FP" nothing-allowed
	# -static-fineibt: the executable's data is the program's too: its
	# planted pointer and the compiler's function-entry table (metadata
	# the runtime reads, never calls through; docs/protection.md).
	check_scan "$m" "$FP_STATIC" planted '\? \(__patchable_function_entries\)'
done

# docs/protection.md, "What stays writable": the writable mapping that holds libfineibt's
# .bss runs on past it (the kernel merges the next anonymous mapping, ld.so's
# first allocation, into it). Scanned whole: nothing of libfineibt's points
# into code, and each hit past its end is ld.so's record of a module (the
# entry point of libc) or of the vDSO (its version's name): glibc's data,
# which nothing of fineibt calls through (docs/protection.md).
for m in auto kcfi fineibt,paranoid,bhi; do
	tag="no-code-ptr-beyond[$m]"
	pr_run fnptr-beyond "$m" "$FP" scan-beyond "$LIB"
	obj=$(sed -n 's/^object //p' <<<"$PR_OUT_TXT")
	hits=$(grep '^hit ' <<<"$PR_OUT_TXT")
	if [ "$PR_RC" != 0 ] || [ -z "$obj" ] || ! grep -q '^scanned [1-9]' <<<"$PR_OUT_TXT"; then
		pr_fail "$tag" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	elif [ -n "$hits" ] || grep -q '^beyond .*unexplained' <<<"$PR_OUT_TXT"; then
		pr_fail "$tag" "$(name_hits "$obj" <<<"$hits" | tr '\n' ';') $(grep '^beyond' <<<"$PR_OUT_TXT" | tr '\n' ';')"
	else
		pr_pass "$tag: $(grep -o '[0-9]*$' <<<"$(grep '^scanned' <<<"$PR_OUT_TXT")") bytes, past libfineibt's: $(grep '^beyond' <<<"$PR_OUT_TXT" | sed 's/^beyond 0x[0-9a-f]* -> //' | tr '\n' ',' | sed 's/,$//')"
	fi
done

# `fineibt run` adds libfineibt_audit.so (LD_AUDIT), which ld.so calls at
# every dlopen and which calls the runtime's hook from there: after a
# dlopen (the hook has run) its writable memory holds no code pointer
# either. It used to keep the hook in .bss. The program is built by stock
# clang and the library it dlopens by fineibt-cc: the audit hook reaches
# that library before the loader relocated it, so its index's patchable
# entries are not usable yet and the runtime reads its file (imgindex.c;
# this used to leave its preambles in kCFI form and every call trapped).
FIBT=$ROOT/$BUILD/fineibt
FP_STOCK=$PR_OUT/protect_fnptr_stock
{ pr_fresh "$FP_STOCK" "$SRC" ||
  clang-22 -O2 -Wall -DFNPTR_STOCK -fsanitize=kcfi -fsanitize-kcfi-arity \
	-fsanitize-cfi-icall-generalize-pointers \
	-fpatchable-function-entry=11,11 -falign-functions=16 -fcf-protection=branch \
	-mretpoline-external-thunk -mindirect-branch-cs-prefix \
	"$SRC" "$ROOT/crt/thunks.S" -o "$FP_STOCK"; } ||
	pr_fail build "could not build protect_fnptr_stock"
for m in kcfi fineibt,paranoid,bhi auto; do
	tag="no-code-ptr[$m,libfineibt_audit.so]"
	pr_run fnptr-audit "$m" "$FIBT" run --cfi="$m" -- "$FP_STOCK" scan-audit "$LIB"
	obj=$(sed -n 's/^object //p' <<<"$PR_OUT_TXT")
	if [ "$PR_RC" != 0 ] || [ "${obj##*/}" != libfineibt_audit.so ] ||
	   ! grep -q '^scanned [1-9]' <<<"$PR_OUT_TXT"; then
		pr_fail "$tag" "rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	elif hits=$(name_hits "$obj" <<<"$PR_OUT_TXT") && [ -z "$hits" ]; then
		pr_pass "$tag: $(grep -o '[0-9]*$' <<<"$(grep '^scanned' <<<"$PR_OUT_TXT")") bytes"
	else
		pr_fail "$tag" "code pointers in writable memory: $(tr '\n' ';' <<<"$hits")"
	fi
done

# Control: the scan finds a code pointer where there is one.
pr_run fnptr-control auto "$FP" control
if name_hits "$FP" <<<"$PR_OUT_TXT" | grep -q '^planted (.data) -> '; then
	pr_pass "control: the planted pointer is found"
else
	pr_fail control "scan missed the planted pointer: '$PR_OUT_TXT'"
fi

# The runtime's own link: full RELRO, no executable stack, no TEXTREL.
so=$ROOT/$BUILD/libfineibt.so
dyn=$($READELF -dW "$so")
ph=$($READELF -lW "$so")
if grep -q 'GNU_RELRO' <<<"$ph" && grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$dyn"; then
	pr_pass "libfineibt.so: full RELRO (GNU_RELRO + BIND_NOW)"
else
	pr_fail "libfineibt.so-relro" "no GNU_RELRO or no BIND_NOW"
fi
if grep -E 'GNU_STACK' <<<"$ph" | grep -q 'RW ' && ! grep -q TEXTREL <<<"$dyn"; then
	pr_pass "libfineibt.so: stack not executable, no text relocations"
else
	pr_fail "libfineibt.so-stack" "$(grep GNU_STACK <<<"$ph")"
fi
exit 0
