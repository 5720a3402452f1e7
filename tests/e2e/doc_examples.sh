#!/usr/bin/env bash
# The output the documentation quotes is the output the programs print
# today (a newcomer compares them first):
#  - docs/inspect.md's "Text output": `fineibt inspect build/demo/fi-attack`
#    (it showed 14 preambles and 17 call sites of an older demo program,
#    and no hardening line);
#  - examples/buildsys's report of `FINEIBT_CFI=auto ./sortdemo confused`
#    (it showed mode paranoid and another hash), and the same report in
#    docs/ecosystem.md ("What a failure report says"), fineibt-cfi(7) and
#    README.md.
# Addresses and offsets are the compiler's (masked); counts, names,
# hashes, modes, source lines and prototypes are compared as printed.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
FI=$ROOT/$BUILD/fineibt
CC=$ROOT/$BUILD/fineibt-cc
OUT=$ROOT/$BUILD/e2e/doc_examples
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG FINEIBT_VERBOSE FINEIBT_SEQ FINEIBT_TEST_USER_IBT CFLAGS
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
# Code addresses (a naked ENDBR's line: six spaces, 0x...) and +0x offsets.
mask() { sed -E 's/^( {6})0x[0-9a-f]+ /\10xA /; s/\+0x[0-9a-f]+/+0xN/g'; }
# same NAME DOC ACTUAL: equal after mask
same() {
	mask <"$2" >"$2.m"
	mask <"$3" >"$3.m"
	if [ ! -s "$2.m" ]; then
		fail "$1" "no example found in the documentation"
	elif cmp -s "$2.m" "$3.m"; then
		pass "$1"
	else
		fail "$1" "$(diff "$2.m" "$3.m" | head -n 12 | tr '\n' '|')"
	fi
}

# ------------------------------------------------ docs/inspect.md's example
PROG=$ROOT/$BUILD/demo/fi-attack
if [ -x "$PROG" ]; then
	# The indented block under "## Text output", up to its blank line.
	awk '/^## Text output/ { d = 1; next } d && /^    / { print substr($0, 5); b = 1; next }
	     d && b { exit }' "$ROOT/docs/inspect.md" >"$OUT/inspect.doc"
	(cd "$ROOT" && "$FI" inspect "$BUILD/demo/fi-attack") >"$OUT/inspect.out" 2>&1
	# The document names the file as in the default build directory.
	sed -i "1s|^$BUILD/demo/fi-attack:|build/demo/fi-attack:|" "$OUT/inspect.out"
	same inspect-text-example "$OUT/inspect.doc" "$OUT/inspect.out"
else
	echo "PASS: inspect-text-example (skipped: no $PROG in this build)"
fi

# --------------------------------------------- the sortdemo report, quoted
EX=$OUT/buildsys
cp -r "$ROOT/examples/buildsys" "$EX"
if ! make -s -C "$EX" -f plain.mk CC="$CC" >"$OUT/build.log" 2>&1; then
	fail sortdemo-build "$(tail -n 3 "$OUT/build.log")"
	exit 0
fi
asc=$("$EX/sortdemo" asc 2>&1)
[ "$asc" = "1 1 2 3 4 5 6 9" ] && pass sortdemo-asc || fail sortdemo-asc "$asc"
# The README's block: the line after "FINEIBT_CFI=auto ./sortdemo
# confused", its indented report lines.
awk '/^    FINEIBT_CFI=auto \.\/sortdemo confused$/ { d = 1; next }
     d && /^    fineibt:/ { print substr($0, 5); next } d { exit }' \
	"$ROOT/examples/buildsys/README.md" >"$OUT/readme.doc"
FINEIBT_CFI=auto "$EX/sortdemo" confused >/dev/null 2>"$OUT/auto.out"
rc=$?
[ $rc = 132 ] && pass sortdemo-confused-132 || fail sortdemo-confused-132 "rc=$rc"
same buildsys-readme-report "$OUT/readme.doc" "$OUT/auto.out"
# docs/ecosystem.md and fineibt-cfi(7) show the kcfi report of the same
# call (the first block of "What a failure report says"; the man page's
# FAILURE REPORT example).
FINEIBT_CFI=kcfi "$EX/sortdemo" confused >/dev/null 2>"$OUT/kcfi.out"
awk '/^## What a failure report says/ { d = 1; next } d && /^    fineibt:/ { print substr($0, 5); b = 1; next }
     d && b { exit }' "$ROOT/docs/ecosystem.md" >"$OUT/ecosystem.doc"
same ecosystem-report "$OUT/ecosystem.doc" "$OUT/kcfi.out"
sed -n '/^\.SH FAILURE REPORT/,/^\.fi/p' "$ROOT/man/fineibt-cfi.7" | grep '^fineibt:' >"$OUT/man.doc"
same man-cfi7-report "$OUT/man.doc" "$OUT/kcfi.out"
# README's (it quoted a program of no file here: sorter.c:22, by_len).
awk '/^A failure, by default, stops the program/ { d = 1; next } d && /^    fineibt:/ { print substr($0, 5); b = 1; next }
     d && b { exit }' "$ROOT/README.md" >"$OUT/readme-top.doc"
same readme-report "$OUT/readme-top.doc" "$OUT/kcfi.out"
# ------------------------------------------- every page where it is listed
# Each docs/*.md is in README.md's table and in fineibt(1)'s FILES (the
# list an installed prefix's reader has; it named 9 of 14 pages, and
# README called index.md, the module index's format, "the design, start
# here").
bad=
for f in "$ROOT"/docs/*.md; do
	n=${f##*/}
	grep -q "^| .*\[docs/$n\](docs/$n)" "$ROOT/README.md" || bad+="README:$n "
	sed -n '/^\.SH FILES/,/^\.SH SEE/p' "$ROOT/man/fineibt.1" | sed 's/\\-/-/g' |
		grep -q "\b$n\b" || bad+="fineibt.1:$n "
done
grep -q '^| \[docs/index.md\](docs/index.md) | the module index' "$ROOT/README.md" ||
	bad+="README:index.md-described-as-'$(grep '^| \[docs/index.md\]' "$ROOT/README.md" | cut -d'|' -f3)' "
[ -z "$bad" ] && pass docs-pages-listed || fail docs-pages-listed "$bad"
# Each field `fineibt inspect` prints (the label before the colon) has its
# bullet in docs/inspect.md (hardening had none).
if [ -s "$OUT/inspect.out" ]; then
	bad=
	while read -r l; do
		grep -q "^- \*\*$l\*\*" "$ROOT/docs/inspect.md" || bad+="'$l' "
	done < <(sed -n 's/^\([a-zA-Z][a-zA-Z ]*\):  .*/\1/p' "$OUT/inspect.out" | sort -u)
	[ -z "$bad" ] && pass inspect-fields-described || fail inspect-fields-described "no bullet for $bad"
fi
# Every source file README, docs/, the man pages and the examples' READMEs
# name is in the tree (docs/architecture.md named load/'s files by their
# names before the rename, src/load/rtearly.c and rtpreinit.c). Build
# outputs ($(BUILD)/..., build/...) and placeholders (NAME) are not files.
bad=
for f in "$ROOT"/README.md "$ROOT"/docs/*.md "$ROOT"/man/*.[1-8] "$ROOT"/examples/*/README.md; do
	for p in $(sed 's/\\-/-/g' "$f" |
		grep -Eo '(\)/|build/|[A-Za-z0-9_]/)?\b(tests|src|tools|driver|crt|scripts|include|examples|fuzz)/[A-Za-z0-9_./-]*\.(c|h|S|sh|py|bash|map|in|order)\b' |
		grep -Ev '^(\)/|build/|[A-Za-z0-9_]/)' | grep -v NAME | sort -u); do
		[ -e "$ROOT/$p" ] || bad+="${f#"$ROOT"/}:$p "
	done
done
[ -z "$bad" ] && pass docs-source-paths-exist || fail docs-source-paths-exist "$bad"
# Every `make check T=NAME` the documentation shows runs some test (README
# showed T=paranoid, which matches none: "no test matches", exit 1).
names=$( (cd "$ROOT/tests/e2e" && ls -- *.sh | sed 's/\.sh$//'
	  cd "$ROOT/tests/unit" && ls -- test_*.c | sed 's/^test_//; s/\.c$//') )
bad=
for f in "$ROOT"/README.md "$ROOT"/docs/*.md "$ROOT"/man/*.[1-8]; do
	for t in $(grep -Eo 'make check( [A-Z]+=[^ `]*)* T=[A-Za-z0-9_]+' "$f" | sed 's/.*T=//' | sort -u); do
		[ "$t" = NAME ] && continue
		grep -qF -- "$t" <<<"$names" || bad+="${f#"$ROOT"/}:T=$t "
	done
done
[ -z "$bad" ] && pass docs-check-names-run || fail docs-check-names-run "no test matches $bad"
# The four builds of examples/buildsys as its README and docs/ecosystem.md
# show them are the same commands (ecosystem.md's CMake line had no build
# type: no -g, and a report without its source line and prototypes, while
# the README and tests/e2e/buildsys.sh build RelWithDebInfo).
builds() { grep -E '# \([a-d]\)' "$1" | sed 's/ *# (\([a-d]\)).*/ (\1)/; s/^ *//; s/  */ /g'; }
builds "$ROOT/examples/buildsys/README.md" >"$OUT/builds.readme"
builds "$ROOT/docs/ecosystem.md" >"$OUT/builds.ecosystem"
if [ "$(wc -l <"$OUT/builds.readme")" != 4 ]; then
	fail buildsys-commands-agree "examples/buildsys/README.md: $(cat "$OUT/builds.readme")"
elif cmp -s "$OUT/builds.readme" "$OUT/builds.ecosystem"; then
	pass buildsys-commands-agree
else
	fail buildsys-commands-agree "$(diff "$OUT/builds.readme" "$OUT/builds.ecosystem" | tr '\n' '|')"
fi
# Every section a page cites by title (`docs/protection.md, "The key"`,
# `README "Modes"`) is a heading or a bold paragraph title of that page:
# docs/bench.md sent readers to README's "Against the peers", a section
# README no longer has (it is bench.md's own).
python3 - "$ROOT" >"$OUT/cites" <<'PY'
import glob, os, re, sys
os.chdir(sys.argv[1])
pages = ['README.md'] + sorted(glob.glob('docs/*.md'))
def norm(s):
    return re.sub(r'\s+', ' ', re.sub(r'[`*\\]', '', s)).strip().lower()
def flat(f):
    return re.sub(r'\s*\n\s*', ' ', open(f).read())
titles = {}
for f in pages:
    t = open(f).read()
    titles[f] = [norm(m.group(1)) for m in re.finditer(r'^#+\s+(.*)$', t, re.M)]
    titles[f] += [norm(m.group(1)) for m in re.finditer(r'\*\*(.{3,100}?)\*\*', flat(f))]
cite = re.compile(r'(README(?:\.md)?|(?:docs/)?[a-z][a-z0-9_-]*\.md)'
                  r'(?:\]\([^)]*\))?[,:]?\s+\(?"([^"]{3,80})"')
n, bad = 0, []
for f in pages + sorted(glob.glob('examples/*/README.md')):
    for m in cite.finditer(flat(f)):
        doc, title = m.groups()
        to = 'README.md' if doc.startswith('README') else 'docs/' + os.path.basename(doc)
        if to not in titles:
            continue
        n += 1
        if not any(h.startswith(norm(title)) for h in titles[to]):
            bad.append('%s cites %s "%s"' % (f, to, title))
print(n)
print('; '.join(bad))
PY
ncites=$(sed -n 1p "$OUT/cites")
bad=$(sed -n 2p "$OUT/cites")
if [ "${ncites:-0}" -lt 20 ]; then
	fail docs-cited-sections-exist "only ${ncites:-no} citations found: the pattern no longer reads the pages"
elif [ -z "$bad" ]; then
	pass docs-cited-sections-exist
else
	fail docs-cited-sections-exist "$bad"
fi
exit 0
