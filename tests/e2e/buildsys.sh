#!/usr/bin/env bash
# buildsys: examples/buildsys (a shared library called back through
# pointers + a program) built the ways users build: (a) plain Make with
# CC=fineibt-cc, (b) autotools ./configure CC=fineibt-cc (libtool), (c)
# CMake -DCMAKE_C_COMPILER=fineibt-cc, (d) the stock clang-22 with
# `pkg-config --cflags --libs fineibt`, all from an installed prefix on
# PATH. Each result sorts correctly in several modes and dies of a
# type-confused callback with exit 132 and the report: the first line,
# the expected type named by example ("as in"), the call site's
# source line (DWARF, checked against llvm-symbolizer), and a FINEIBT_LOG
# JSON record.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
. "$ROOT/tests/e2e/progs/sets.bash"	# fi_with_sets: both sequence sets
OUT=$ROOT/$BUILD/e2e/ecosystem/buildsys
EX=$ROOT/examples/buildsys
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD PKG_CONFIG_PATH CFLAGS LDFLAGS CC

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

P=$OUT/prefix
if ! make -s -C "$ROOT" BUILD="$BUILD" install PREFIX="$P" >"$OUT/install.log" 2>&1; then
	fail buildsys_install "make install failed: $(tail -n 3 "$OUT/install.log")"
	exit 0
fi
export PATH=$P/bin:$PATH PKG_CONFIG_PATH=$P/lib/pkgconfig

# The line of the checked call in sorter.c (the oracle for file:line).
CALL_LINE=$(grep -n 'cmp(p + (j - 1) \* size, tmp)' "$EX/sorter.c" | cut -d: -f1)
SORTED="1 1 2 3 4 5 6 9"

# copy NAME: a fresh copy of the example to build in.
copy() {
	rm -rf "$OUT/$1"
	mkdir -p "$OUT/$1"
	cp -r "$EX/." "$OUT/$1/"
}

# run_prog NAME CFI PROG ARGS...: sets RC, STDOUT, STDERR.
run_prog() {
	local name=$1 cfi=$2
	shift 2
	rm -f "$OUT/$name.log"
	{ FINEIBT_CFI=$cfi FINEIBT_LOG=$OUT/$name.log "$@" >"$OUT/$name.out" \
		2>"$OUT/$name.err" </dev/null; RC=$?; } 2>/dev/null
	STDOUT=$(cat "$OUT/$name.out")
	STDERR=$(cat "$OUT/$name.err")
}

# verify SYS PROG [LIB]: the built program and its library, end to end.
verify() {
	local sys=$1 prog=$2 lib=${3:-} m re
	if [ ! -x "$prog" ]; then
		fail "buildsys_$sys" "no program at $prog"
		return
	fi
	pass "buildsys_$sys[built]"
	if [ -n "$lib" ]; then
		if llvm-readelf-22 -S "$lib" 2>/dev/null | grep -q kcfi_traps &&
		   llvm-readelf-22 -d "$lib" 2>/dev/null | grep -q 'NEEDED.*libfineibt.so.0'; then
			pass "buildsys_$sys[library is kCFI + runtime]"
		else
			fail "buildsys_$sys[library is kCFI + runtime]" "$lib lacks .kcfi_traps or libfineibt.so.0"
		fi
	fi
	for m in $(fi_with_sets auto kcfi fineibt,bhi off); do
		run_prog "$sys-legal" "$m" "$prog" asc
		if [ "$RC" = 0 ] && [ "$STDOUT" = "$SORTED" ] && [ -z "$STDERR" ]; then
			pass "buildsys_$sys[sorts,$m]"
		else
			fail "buildsys_$sys[sorts,$m]" "rc=$RC out='$STDOUT' err='$STDERR'"
		fi
	done
	for m in $(fi_with_sets auto fineibt fineibt,bhi kcfi); do
		run_prog "$sys-confused-$m" "$m" "$prog" confused
		re='^fineibt: CFI failure at [^ ]+ \(target: by_value\+0x0; expected type: 0x[0-9a-f]{8}; mode: '"$(fi_canon_re "$m")"'\)$'
		if [ "$RC" = 132 ] && grep -Eq "$re" <<<"$STDERR"; then
			pass "buildsys_$sys[caught,$m]"
		else
			fail "buildsys_$sys[caught,$m]" "want 132 + /$re/: rc=$RC err='$STDERR'"
			continue
		fi
		# The comparators of libsorter have the type the caller wanted.
		if grep -Eq '^fineibt:   expected type 0x[0-9a-f]{8}, as in: (cmp_asc, cmp_desc|cmp_desc, cmp_asc)$' <<<"$STDERR"; then
			pass "buildsys_$sys[as-in,$m]"
		else
			fail "buildsys_$sys[as-in,$m]" "no 'as in: cmp_asc, cmp_desc' line: '$STDERR'"
		fi
		if grep -Eq "^fineibt:   call site: (.*/)?sorter\\.c:$CALL_LINE \\(sorter_sort\\+0x[0-9a-f]+\\)$" <<<"$STDERR"; then
			pass "buildsys_$sys[call-site-line,$m]"
		else
			fail "buildsys_$sys[call-site-line,$m]" "want sorter.c:$CALL_LINE: '$STDERR'"
		fi
		if grep -q "\"kind\":\"[a-z]*\".*\"target\":\"by_value+0x0\".*\"line\":$CALL_LINE,\"action\":\"fatal\"}" "$OUT/$sys-confused-$m.log" 2>/dev/null &&
		   [ "$(wc -l <"$OUT/$sys-confused-$m.log")" = 1 ] &&
		   python3 -c 'import json,sys; json.loads(open(sys.argv[1]).read())' "$OUT/$sys-confused-$m.log" 2>/dev/null; then
			pass "buildsys_$sys[log,$m]"
		else
			fail "buildsys_$sys[log,$m]" "FINEIBT_LOG record: '$(cat "$OUT/$sys-confused-$m.log" 2>&1)'"
		fi
	done
	# warn: every failure reported and logged, the program goes on; a
	# repeat of a pair is counted, its "repeated" line logged as well
	# (docs/traps.md, "Repeated failures").
	run_prog "$sys-warn" fineibt,paranoid,warn "$prog" confused
	local nrep nagain nlog nwarn nlogagain
	nrep=$(grep -cE '^fineibt: CFI failure at .*mode: [^)]*,warn[,)]' "$OUT/$sys-warn.err")
	nagain=$(grep -cE '^fineibt: CFI failure at .*\) repeated [0-9]+ times$' "$OUT/$sys-warn.err")
	nlog=$(wc -l <"$OUT/$sys-warn.log" 2>/dev/null || echo 0)
	nwarn=$(grep -c '"action":"warn"}$' "$OUT/$sys-warn.log" 2>/dev/null)
	nlogagain=$(grep -c '"repeated":[0-9]*,' "$OUT/$sys-warn.log" 2>/dev/null)
	if [ "$RC" = 0 ] && [ "$nrep" -gt 0 ] && [ $((nrep + nagain)) = "$nlog" ] &&
	   [ "$nlog" = "$nwarn" ] && [ "$nagain" = "$nlogagain" ]; then
		pass "buildsys_$sys[warn: $nrep reports + $nagain counts = $nlog log records]"
	else
		fail "buildsys_$sys[warn]" "rc=$RC reports=$nrep counts=$nagain log=$nlog warn=$nwarn log-counts=$nlogagain"
	fi
	# The reported line agrees with an independent DWARF reader.
	local site_addr off sym
	site_addr=$(sed -n 's/.*"call_site":"\(sorter_sort+0x[0-9a-f]*\)".*/\1/p' "$OUT/$sys-confused-kcfi.log" 2>/dev/null)
	if [ -n "$site_addr" ] && [ -n "$lib" ]; then
		off=${site_addr#sorter_sort+}
		sym=$(llvm-nm-22 "$lib" | awk '$3 == "sorter_sort" { print $1 }')
		if llvm-symbolizer-22 --obj="$lib" "$(printf '0x%x' $((0x$sym + off)))" 2>/dev/null |
		   grep -q "sorter\\.c:$CALL_LINE:"; then
			pass "buildsys_$sys[line-matches-llvm-symbolizer]"
		else
			fail "buildsys_$sys[line-matches-llvm-symbolizer]" "llvm-symbolizer disagrees at $site_addr"
		fi
	fi
}

# (a) plain Make, CC=fineibt-cc from PATH
copy make
if make -s -C "$OUT/make" -f plain.mk CC=fineibt-cc >"$OUT/make.log" 2>&1; then
	verify make "$OUT/make/sortdemo" "$OUT/make/libsorter.so"
else
	fail buildsys_make "$(tail -n 5 "$OUT/make.log")"
fi

# (b) autotools + libtool: ./configure CC=fineibt-cc
copy autotools
if ! command -v autoreconf >/dev/null 2>&1 || ! command -v libtoolize >/dev/null 2>&1; then
	fail buildsys_autotools "autoreconf/libtoolize missing: run scripts/deps.sh"
elif (cd "$OUT/autotools" && autoreconf -fi && ./configure CC=fineibt-cc --prefix="$OUT/autotools/inst" &&
      make -s && make -s install) >"$OUT/autotools.log" 2>&1; then
	verify autotools "$OUT/autotools/inst/bin/sortdemo" "$OUT/autotools/inst/lib/libsorter.so.0"
	# The uninstalled libtool wrapper script runs the same program.
	run_prog autotools-wrapper auto "$OUT/autotools/sortdemo" asc
	if [ "$RC" = 0 ] && [ "$STDOUT" = "$SORTED" ]; then
		pass "buildsys_autotools[libtool wrapper]"
	else
		fail "buildsys_autotools[libtool wrapper]" "rc=$RC err='$STDERR'"
	fi
else
	fail buildsys_autotools "$(tail -n 8 "$OUT/autotools.log")"
fi

# (c) CMake, -DCMAKE_C_COMPILER=fineibt-cc
copy cmake
if ! command -v cmake >/dev/null 2>&1; then
	fail buildsys_cmake "cmake missing: run scripts/deps.sh"
elif (cd "$OUT/cmake" && cmake -S . -B b -DCMAKE_C_COMPILER=fineibt-cc \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build b -j 2) >"$OUT/cmake.log" 2>&1; then
	verify cmake "$OUT/cmake/b/sortdemo" "$OUT/cmake/b/libsorter.so"
else
	fail buildsys_cmake "$(tail -n 8 "$OUT/cmake.log")"
fi

# (d) the stock compiler with pkg-config's flags, no driver
copy pkgconfig
if make -s -C "$OUT/pkgconfig" -f pkgconfig.mk CC=clang-22 >"$OUT/pkgconfig.log" 2>&1; then
	verify pkgconfig "$OUT/pkgconfig/sortdemo" "$OUT/pkgconfig/libsorter.so"
else
	fail buildsys_pkgconfig "$(tail -n 5 "$OUT/pkgconfig.log")"
fi
exit 0
