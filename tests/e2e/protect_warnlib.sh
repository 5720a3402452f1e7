#!/usr/bin/env bash
# protect_warnlib (docs/protection.md): a library patched statically with
# `fineibt patch --cfi=...,warn` brings warn into the process only at
# start-up, and never into a privileged (AT_SECURE) one. The library's
# constructor makes a type-confused call inside the library (no call
# crosses modules); the hashes are not randomised (norand) on either side.
#  - dl[MODE]: dlopen'ed after start-up by a process that enforces: warn
#    refused (one line), the call fatal (132), reported without ",warn".
#    Before the fix: a warn report, "survived ctor", exit 0.
#  - dl-warn: the process itself runs in warn: the library's warn stands.
#  - linked: linked into the program (start-up): the process adopts the
#    library's mode, warn included (the program's own choice).
#  - suid-*: a setuid-root copy run as nobody (needs root and setpriv):
#    warn refused both at start-up and after it; a plain fineibt library
#    dlopen'ed there checks less than the process's fineibt,paranoid and
#    is refused whole (exit 127, docs/protection.md).
. "$(dirname "$0")/progs/protect_common.bash"

D=$ROOT/$BUILD/e2e/warnlib
FIBT=$ROOT/$BUILD/fineibt
mkdir -p "$D/plain" "$D/linked"
PROG=$D/warn_prog
{ pr_fresh "$D/plain/libfi_warn.so" "$PR_SRC/warn_lib.c" ||
  "$FCC" -O2 -fPIC -shared -Wl,-soname,libfi_warn.so "$PR_SRC/warn_lib.c" \
	-o "$D/plain/libfi_warn.so"; } &&
{ pr_fresh "$PROG" "$PR_SRC/warn_prog.c" ||
  "$FCC" -O2 -Wall "$PR_SRC/warn_prog.c" -o "$PROG" -ldl; } &&
{ pr_fresh "$D/linked/warn_prog" "$PR_SRC/warn_prog.c" "$D/plain/libfi_warn.so" ||
  "$FCC" -O2 -Wall "$PR_SRC/warn_prog.c" -o "$D/linked/warn_prog" \
	-L"$D/plain" -Wl,--no-as-needed -lfi_warn '-Wl,-rpath,$ORIGIN'; } &&
"$FIBT" patch "$D/plain/libfi_warn.so" -o "$D/libfi_warn_fineibt.so" \
	--cfi=fineibt,warn,norand -q >/dev/null &&
"$FIBT" patch "$D/plain/libfi_warn.so" -o "$D/libfi_warn_paranoid.so" \
	--cfi=fineibt,paranoid,warn,norand -q >/dev/null &&
cp "$D/libfi_warn_fineibt.so" "$D/linked/libfi_warn.so" ||
	{ pr_fail build "could not build or patch the warn library"; exit 1; }

REFUSED='was patched statically with warn, refused after start-up; its CFI failures are fatal$'
NOWARN='^fineibt: CFI failure at .*; mode: [a-z]+(,(paranoid|bhi|norand))*(,seq=v6\.18)?\)$'
WARN='^fineibt: CFI failure at .*; mode: [^)]*,warn[,)]'

# dl: the process enforces (its mode as the library's, without warn).
for lm in fineibt:fineibt,norand paranoid:fineibt,paranoid,norand; do
	lib=$D/libfi_warn_${lm%%:*}.so m=${lm#*:}
	pr_run dl "$m" "$PROG" "$lib"
	if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] &&
	   [ "$(grep -c "$REFUSED" <<<"$PR_ERR_TXT")" = 1 ] &&
	   grep -Eq "$NOWARN" <<<"$PR_ERR_TXT"; then
		pr_pass "dl[$m]: the library's warn refused after start-up; its trap fatal"
	else
		pr_fail "dl[$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
pr_run dl-warn fineibt,norand,warn "$PROG" "$D/libfi_warn_fineibt.so"
if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'survived ctor\nloaded' ] &&
   ! grep -q refused <<<"$PR_ERR_TXT" && grep -Eq "$WARN" <<<"$PR_ERR_TXT"; then
	pr_pass "dl-warn: a process in warn keeps the library's warn"
else
	pr_fail "dl-warn" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
fi
pr_run linked fineibt,norand "$D/linked/warn_prog"
if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'survived ctor\nloaded' ] &&
   ! grep -q refused <<<"$PR_ERR_TXT" && grep -Eq "$WARN" <<<"$PR_ERR_TXT"; then
	pr_pass "linked: at start-up the process adopts the library's mode, warn included"
else
	pr_fail "linked" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
fi

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: suid cases: need root and setpriv"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -m 755 "$T/linked"
# A setuid program ignores $ORIGIN: linked again with $T's absolute path.
cp "$PROG" "$D/libfi_warn_fineibt.so" "$D/libfi_warn_paranoid.so" "$T/" &&
"$FCC" -O2 -Wall "$PR_SRC/warn_prog.c" -o "$T/linked/warn_prog" \
	-L"$D/plain" -Wl,--no-as-needed -lfi_warn -Wl,-rpath,"$T/linked" &&
cp "$D/linked/libfi_warn.so" "$T/linked/" &&
chown root:root "$T/warn_prog" "$T/linked/warn_prog" &&
chmod 4755 "$T/warn_prog" "$T/linked/warn_prog" &&
chmod 644 "$T/libfi_warn_fineibt.so" "$T/libfi_warn_paranoid.so" "$T/linked/libfi_warn.so" ||
	{ pr_fail suid-setup "could not make the setuid copies"; exit 1; }
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
SUID_REFUSED='was patched statically with warn, refused in a privileged \(setuid\) process; its CFI failures are fatal$'
pr_run probe-suid auto,warn "${NOBODY[@]}" "$T/warn_prog"
if ! grep -q "not allowed in a privileged" <<<"$PR_ERR_TXT"; then
	echo "SKIP: suid cases: $T is not setuid-capable (nosuid mount?)"
	exit 0
fi
# A privileged process refuses norand from its environment: the library's
# hashes are then not the process's, which no call here crosses. Its
# fineibt is fineibt,paranoid there: the paranoid library, whose callers
# check as the process's do (protect_patchmode).
pr_run suid-dl fineibt,warn "${NOBODY[@]}" "$T/warn_prog" "$T/libfi_warn_paranoid.so"
if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] &&
   grep -Eq "$SUID_REFUSED" <<<"$PR_ERR_TXT" && grep -Eq "$NOWARN" <<<"$PR_ERR_TXT"; then
	pr_pass "suid-dl: warn refused in a privileged process after start-up"
else
	pr_fail "suid-dl" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
fi
# The plain fineibt library checks less than the privileged process's
# fineibt,paranoid: refused whole, before it runs.
pr_run suid-dl-weaker fineibt,warn "${NOBODY[@]}" "$T/warn_prog" "$T/libfi_warn_fineibt.so"
if [ "$PR_RC" = 127 ] && [ -z "$PR_OUT_TXT" ] &&
   grep -q "weaker than the process's fineibt,paranoid (its calls to a naked ENDBR go unchecked): refused in a setuid process; terminating$" <<<"$PR_ERR_TXT"; then
	pr_pass "suid-dl-weaker: a plain fineibt library refused in a privileged process"
else
	pr_fail "suid-dl-weaker" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:400}'"
fi
pr_run suid-linked fineibt "${NOBODY[@]}" "$T/linked/warn_prog"
if [ "$PR_RC" = 132 ] && [ -z "$PR_OUT_TXT" ] &&
   grep -Eq "$SUID_REFUSED" <<<"$PR_ERR_TXT" && grep -Eq "$NOWARN" <<<"$PR_ERR_TXT"; then
	pr_pass "suid-linked: warn refused in a privileged process at start-up"
else
	pr_fail "suid-linked" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
fi
