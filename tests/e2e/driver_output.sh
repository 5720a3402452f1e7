#!/usr/bin/env bash
# driver_output: fineibt-cc and fineibt-ld rewrite the file the link
# wrote, in place (its module index and DT_RELR, driver/index.c and
# driver/relr.c), so they must name it as the linker does: -o FILE,
# -oFILE, --output[=]FILE, and the linker's own -o / --output passed with
# -Wl, or -Xlinker, the last one winning. Each spelling links prog.c in a
# directory holding an older a.out (a program fineibt-cc built, dated
# 2000): the output's index is filled, and a.out is neither written nor
# touched. Before, every spelling but -o/-oX filled a.out in place and
# left the output's index empty. Last, an output that is a symbolic link
# when the link is done is not written through.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
OUT=$ROOT/$BUILD/e2e/driver_output
FCC=$ROOT/$BUILD/fineibt-cc
FLD=$ROOT/$BUILD/fineibt-ld
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG FINEIBT_VERBOSE
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

cat >"$OUT/prog.c" <<'C'
static int twice(int x) { return 2 * x; }
int (*volatile fp)(int) = twice;
int main(void) { return fp(21) != 42; }
C
if ! "$FCC" -O1 -o "$OUT/old" "$OUT/prog.c"; then
	fail driver_output_build "fineibt-cc could not build prog.c"
	exit 0
fi

# The flags word of FILE's module index (note type 0x46490001), as hex.
index_flags() {
	llvm-readelf-22 --notes "$1" 2>/dev/null |
		awk '/0x46490001/ { getline; print $10 $9 $8 $7; exit }'
}

# link NAME DRIVER WANT-FILE ARGS...: in a fresh directory with the old
# a.out, link prog.c with ARGS; WANT-FILE must come out with its index
# filled (when the driver fills it), a.out stay as it was.
link() {
	local name=$1 drv=$2 want=$3 d=$OUT/$1 flags
	shift 3
	mkdir -p "$d"
	cp "$OUT/old" "$d/a.out"
	touch -d 2000-01-01 "$d/a.out"
	local before
	before=$(stat -c %Y "$d/a.out")
	if [ "$drv" = cc ]; then
		(cd "$d" && "$FCC" -O1 ../prog.c "$@") >"$d/log" 2>&1
	else
		(cd "$d" && clang-22 -O1 -fsanitize=kcfi --ld-path="$FLD" \
			../prog.c "$@") >"$d/log" 2>&1
	fi
	local rc=$?
	flags=$(index_flags "$d/$want")
	if [ $rc != 0 ] || [ ! -x "$d/$want" ]; then
		fail "driver_output[$name]" "rc=$rc, $want not written: $(head -c 300 "$d/log")"
	elif [ "$(stat -c %Y "$d/a.out")" != "$before" ] || ! cmp -s "$d/a.out" "$OUT/old"; then
		fail "driver_output[$name]" "a.out, not the output, was rewritten"
	elif [ "$drv" = cc ] && ! [ $((0x${flags:-0} & 1)) = 1 ]; then
		fail "driver_output[$name]" "the index of $want is not filled (flags '${flags}')"
	else
		pass "driver_output[$name]"
	fi
}

link o cc p1 -o p1
link o-joined cc p2 -op2
link output-eq cc p3 --output=p3
link output cc p4 --output p4
link wl-o cc p5 -Wl,-o,p5
link wl-output-eq cc p6 -Wl,--output=p6
link xlinker-o cc p7 -Xlinker -o -Xlinker p7
link last-wins cc p8 -o early -Wl,-o,p8
link value-not-output cc p9 -o p9 -Wl,-rpath,-onot-me
link ld-output-eq ld q1 -Wl,--output=q1
link ld-o-joined ld q2 -Wl,-oq2

# The output's path a symbolic link when the link is done (another
# process put it there; every linker replaces a link with its file): the
# in-place writes never follow it. A linker wrapper plays the race.
d=$OUT/symlinked
mkdir -p "$d"
cp "$OUT/old" "$d/victim"
touch -d 2000-01-01 "$d/victim"
cat >"$d/ld" <<'SH'
#!/bin/sh
ld.lld-22 "$@" || exit
out=a.out
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
mv "$out" "$out.real" && ln -s victim "$out"
SH
chmod +x "$d/ld"
before=$(stat -c %Y "$d/victim")
(cd "$d" && FINEIBT_CC_LD=$d/ld "$FCC" -O1 -o p ../prog.c) >"$d/log" 2>&1
rc=$?
if [ $rc = 0 ] && [ -L "$d/p" ] && [ "$(stat -c %Y "$d/victim")" = "$before" ] &&
   cmp -s "$d/victim" "$OUT/old"; then
	pass "driver_output[symlinked]"
else
	fail "driver_output[symlinked]" "rc=$rc; the file the link points to was written: $(head -c 300 "$d/log")"
fi

# A TMPDIR that cannot hold the link's temporary directory: one line that
# names it, exit 1 (it said "mkdtemp: No such file or directory").
"$FCC" -O1 -c -o "$OUT/prog.o" "$OUT/prog.c" 2>"$OUT/err" ||
	fail driver_tmpdir "cannot compile prog.c: $(head -c 200 "$OUT/err")"
TMPDIR=$OUT/none "$FCC" -o "$OUT/tmpdir" "$OUT/prog.o" 2>"$OUT/err"
rc=$?
if [ $rc = 1 ] && [ "$(cat "$OUT/err")" = "fineibt-cc: error: cannot make a temporary directory in $OUT/none (No such file or directory); set TMPDIR to a writable directory" ]; then
	pass driver_tmpdir_cc
else
	fail driver_tmpdir_cc "rc=$rc $(head -c 300 "$OUT/err")"
fi
TMPDIR=$OUT/none clang-22 --ld-path="$FLD" -o "$OUT/tmpdir" "$OUT/prog.o" 2>"$OUT/err"
rc=$?
if [ $rc != 0 ] && grep -qx "fineibt-ld: error: cannot make a temporary directory in $OUT/none (No such file or directory); set TMPDIR to a writable directory" "$OUT/err"; then
	pass driver_tmpdir_ld
else
	fail driver_tmpdir_ld "rc=$rc $(head -c 300 "$OUT/err")"
fi
exit 0
