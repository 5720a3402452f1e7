#!/usr/bin/env bash
# The ELF reader on malformed input: tests/malformed/gen.py derives a
# corpus from a good kCFI program (truncations, wrong class/machine/type,
# headers and sections past EOF, huge counts, bad string tables,
# overlapping tables, bad segments, non-ELF, empty file, a directory).
# err-* cases: `fineibt inspect` exits 1 with exactly one "fineibt: error: FILE: ..."
# line on stderr and nothing on stdout. any-* cases (valid ELF, garbage kCFI
# metadata): exit 0 or 1, valid JSON when 0. Never a signal, never a hang.
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
FI=$BUILD/fineibt
out=$BUILD/e2e/elf_malformed
corpus=$out/corpus
progs=$BUILD/progs
mkdir -p "$out"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

if ! bash tests/progs/build.sh "$progs" >"$out/build.log" 2>&1; then
	fail build_progs "tests/progs/build.sh failed (see $out/build.log)"
	exit 1
fi
rm -rf "$corpus"
if ! python3 tests/malformed/gen.py "$progs/prog_pie" "$corpus" >"$out/gen.log" 2>&1; then
	fail malformed_generate "$(tail -n 1 "$out/gen.log")"
	exit 1
fi
pass malformed_generate

n_err=0
for f in "$corpus"/err-*; do
	name=malformed_${f##*/}
	timeout 10 "$FI" inspect "$f" >"$out/stdout" 2>"$out/stderr"
	rc=$?
	lines=$(wc -l <"$out/stderr")
	if [ $rc = 1 ] && [ "$lines" = 1 ] && [ ! -s "$out/stdout" ] &&
	   grep -q "^fineibt: error: $f: [^ ]" "$out/stderr"; then
		pass "$name"
	else
		fail "$name" "status $rc, $lines stderr lines: $(head -c 160 "$out/stderr")"
	fi
	n_err=$((n_err + 1))
done
for f in "$corpus"/any-*; do
	name=malformed_${f##*/}
	timeout 10 "$FI" inspect "$f" --json --list >"$out/stdout" 2>"$out/stderr"
	rc=$?
	if [ $rc = 0 ] && python3 -m json.tool "$out/stdout" >/dev/null 2>&1; then
		pass "$name"
	elif [ $rc = 1 ] && [ "$(wc -l <"$out/stderr")" = 1 ]; then
		pass "$name"
	else
		fail "$name" "status $rc: $(head -c 160 "$out/stderr")"
	fi
done
# The corpus really covers what it claims (guards against a generator bug).
if [ "$n_err" -ge 100 ] && [ -d "$corpus/err-directory" ] && [ -f "$corpus/err-empty" ] &&
   [ ! -s "$corpus/err-empty" ] && ls "$corpus" | grep -q '^err-truncated-'; then
	pass malformed_corpus_complete
else
	fail malformed_corpus_complete "only $n_err error cases"
fi
exit 0
