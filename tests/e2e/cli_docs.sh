#!/usr/bin/env bash
# The man pages and what the programs print agree (one is not generated
# from the other, so this compares them):
#  - every cfi= word FINEIBT_CFI=help lists has an entry in fineibt-cfi(7),
#    and every entry there is a word the runtime knows;
#  - every FINEIBT_* variable the runtime reads is in fineibt-cfi(7)'s
#    ENVIRONMENT, and every one listed there is read;
#  - every long option of every `fineibt COMMAND --help` is in fineibt(1),
#    and every one fineibt(1) names is in some --help;
#  - the words a privileged process refuses are the ones fineibt-cfi(7)
#    names.
# (fineibt-cc's options: tests/e2e/compat_build.sh.)
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
FI=$ROOT/$BUILD/fineibt
OUT=$ROOT/$BUILD/e2e/cli_docs
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG FINEIBT_VERBOSE FINEIBT_SEQ
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
CFI7=$ROOT/man/fineibt-cfi.7
FI1=$ROOT/man/fineibt.1
# same SET-A SET-B NAME: two sorted lists, equal
same() {
	local extra_a extra_b
	extra_a=$(comm -23 "$1" "$2" | tr '\n' ' ')
	extra_b=$(comm -13 "$1" "$2" | tr '\n' ' ')
	if [ -z "$extra_a$extra_b" ]; then pass "$3"
	else fail "$3" "only in the first: '$extra_a'; only in the second: '$extra_b'"; fi
}

# ------------------------------------------------------------ cfi= words
# What the runtime prints (the demo program carries it; any fineibt-cc
# program would do).
PROG=$ROOT/$BUILD/demo/fi-attack
if [ ! -x "$PROG" ]; then
	echo "PASS: cli_docs (skipped: no $PROG in this build)"
	exit 0
fi
FINEIBT_CFI=help "$PROG" >/dev/null 2>"$OUT/help"
sed -n 's/^  \([a-z][a-z0-9=.|]*\)  .*/\1/p' "$OUT/help" | tr '|' '\n' |
	sed 's/^v6\.18$/seq=v6.18/' | sort -u >"$OUT/words.help"
# The man page: the .TP entries between DESCRIPTION and FAILURE REPORT.
awk '/^\.SH DESCRIPTION/ { d = 1 } /^\.SH FAILURE/ { d = 0 }
     d && prev == ".TP" { print } { prev = $0 }' "$CFI7" |
	sed 's/^\.BR\? //; s/ "*, "* /\n/g; s/"//g' | tr ' ' '\n' | grep -v '^$' |
	sort -u >"$OUT/words.man"
same "$OUT/words.help" "$OUT/words.man" cfi-words-help-vs-man
if [ "$(wc -l <"$OUT/words.help")" -ge 11 ]; then pass cfi-words-listed
else fail cfi-words-listed "$(cat "$OUT/help")"; fi

# ------------------------------------------------- FINEIBT_* variables
for f in "$ROOT/$BUILD/libfineibt.so" "$ROOT/$BUILD/libfineibt_audit.so"; do
	llvm-readelf-22 -p .rodata "$f"
done | grep -Eo '\bFINEIBT_[A-Z_]+\b' | sort -u >"$OUT/env.read"
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$CFI7" | grep -Eo '\bFINEIBT_[A-Z_]+\b' |
	sort -u >"$OUT/env.man"
same "$OUT/env.read" "$OUT/env.man" env-read-vs-man

# The variables the fineibt tool itself reads (demo's FINEIBT_DEMO_PROG
# was read and named nowhere) are in fineibt(1) or fineibt-cfi(7).
llvm-readelf-22 -p .rodata "$FI" | grep -Eo '\bFINEIBT_[A-Z_]+\b' | sort -u >"$OUT/env.cli"
sed 's/\\-/-/g' "$FI1" "$CFI7" | grep -Eo '\bFINEIBT_[A-Z_]+\b' | sort -u >"$OUT/env.cli.man"
missing=$(comm -23 "$OUT/env.cli" "$OUT/env.cli.man" | tr '\n' ' ')
if [ ! -s "$OUT/env.cli" ]; then
	fail env-cli-in-man "no FINEIBT_ variable found in $FI"
elif [ -z "$missing" ]; then
	pass env-cli-in-man
else
	fail env-cli-in-man "read by fineibt, in no man page: $missing"
fi

# ----------------------------------------------- the CLI's long options
{ "$FI" help; for c in patch inspect seq run demo version help cached; do "$FI" help "$c"; done; } |
	grep -Eo -- '--[a-z][a-z-]+' | sort -u >"$OUT/opts.help"
sed 's/\\-/-/g' "$FI1" | grep -Eo -- '--[a-z][a-z-]+' | sort -u >"$OUT/opts.man"
same "$OUT/opts.help" "$OUT/opts.man" cli-options-help-vs-man

# Command by command: the options `fineibt help COMMAND` names are the
# ones its entry in fineibt(1)'s COMMANDS names (an option documented
# under another command passed the union above), and `cached`'s are
# fineibt-cached(8)'s.
opts_of() { grep -Eo -- '(^|[^a-z-])-(-[a-z][a-z-]+|[a-z])\b' | grep -Eo -- '-(-[a-z][a-z-]+|[a-z])' | sort -u; }
sed 's/\\-/-/g' "$FI1" | awk '/^\.SH COMMANDS/ { d = 1; next } /^\.SH / { d = 0 }
	!d { next } /^\.TP/ { t = 1; next }
	t { t = 0; l = $0; gsub(/^\.[A-Z]+ /, "", l); gsub(/"/, "", l)
	    split(l, w, " "); cmd = w[1]; sub(/,$/, "", cmd) }
	{ print cmd "\t" $0 }' >"$OUT/man.cmds"
bad=
for c in patch inspect seq run demo cached; do
	"$FI" help "$c" | opts_of >"$OUT/opts.help.$c"
	if [ "$c" = cached ]; then
		sed 's/\\-/-/g' "$ROOT/man/fineibt-cached.8" | sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p; /^\.SH OPTIONS/,/^\.SH ENVIRONMENT/p'
	else
		awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$OUT/man.cmds"
	fi | opts_of >"$OUT/opts.man.$c"
	cmp -s "$OUT/opts.help.$c" "$OUT/opts.man.$c" ||
		bad+="$c: help [$(tr '\n' ' ' <"$OUT/opts.help.$c")] man [$(tr '\n' ' ' <"$OUT/opts.man.$c")]; "
done
if [ ! -s "$OUT/opts.help.patch" ] || [ ! -s "$OUT/opts.man.cached" ]; then
	fail cli-options-per-command "no options read ($OUT)"
elif [ -z "$bad" ]; then
	pass cli-options-per-command
else
	fail cli-options-per-command "$bad"
fi

# The overview (`fineibt help`) gives each command's synopsis: the
# options in its entry are the ones in the Usage lines of `fineibt help
# COMMAND` (the overview of `cached` lacked --user-max and --no-mount).
"$FI" help >"$OUT/overview"
bad=
for c in patch inspect seq run demo cached version help; do
	awk -v c="$c" '/^  [a-z]/ { d = ($1 == c) } /^$/ { d = 0 } d' "$OUT/overview" |
		opts_of >"$OUT/ov.$c"
	"$FI" help "$c" | awk 'NR == 1 || (u && /^ +(fineibt |\[)/) { u = 1; print; next } { u = 0 }' |
		opts_of >"$OUT/usage.$c"
	cmp -s "$OUT/ov.$c" "$OUT/usage.$c" ||
		bad+="$c: overview [$(tr '\n' ' ' <"$OUT/ov.$c")] usage [$(tr '\n' ' ' <"$OUT/usage.$c")]; "
done
if [ ! -s "$OUT/usage.cached" ] || [ ! -s "$OUT/ov.patch" ]; then
	fail help-overview-options "no options read ($OUT)"
elif [ -z "$bad" ]; then
	pass help-overview-options
else
	fail help-overview-options "$bad"
fi

# Every command that takes options says its exit status in its help, the
# usage error's 2 included (seq and cached said none), and so do the man
# pages (fineibt-cached(8) named 1 only; `cached --bogus` exits 2).
bad=
for c in patch inspect seq run demo cached; do
	"$FI" help "$c" | tr '\n' ' ' | grep -Eq 'Exit status: .*\b2\b' || bad+="help $c; "
done
"$FI" cached --bogus >/dev/null 2>&1
rc=$?
sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$ROOT/man/fineibt-cached.8" | grep -q '^2 \|\b2 on a usage error' ||
	bad+="fineibt-cached(8) EXIT STATUS has no 2; "
if [ $rc != 2 ]; then
	fail help-exit-status "fineibt cached --bogus exited $rc"
elif [ -z "$bad" ]; then
	pass help-exit-status
else
	fail help-exit-status "$bad"
fi

# ------------------------------------------------- the man pages' source
# Read as they are (man -l man/fineibt.1, as README says): no
# placeholder a reader would see ('make install' writes the installed
# documentation's directory over PREFIX/share/doc/fineibt).
ph=$(grep -lE '@[A-Z]+@' "$ROOT"/man/*.[1-8] | tr '\n' ' ')
if [ -z "$ph" ]; then pass man-source-no-placeholder
else fail man-source-no-placeholder "@NAME@ in $ph"; fi

# ------------------------------------- what a privileged process refuses
# The words src/core/options.c refuses (its weak[] list; the unit test
# test_options checks the behaviour) are the ones fineibt-cfi(7) names.
grep -A1 'const weak\[\] = ' "$ROOT/src/core/options.c" | grep -Eo '"[a-z]+"' |
	tr -d '"' | sort -u >"$OUT/secure.code"
sed -n '/words that weaken protection/,/are ignored/p' "$CFI7" |
	grep -Eo '^\.(RB \(|BR|B) [a-z]+' | awk '{ print $NF }' | sort -u >"$OUT/secure.man"
if [ -s "$OUT/secure.code" ]; then
	same "$OUT/secure.code" "$OUT/secure.man" secure-words-code-vs-man
else
	fail secure-words-code-vs-man "no weak[] list found in src/core/options.c"
fi
# ------------------------------- the report and its JSON record, as run
# A fineibt-cc -g program whose call fails 10 times under warn: one full
# report (five lines: fineibt-cfi(7) showed three), one "repeated" line,
# and their FINEIBT_LOG records. Each line's label is in the man page's
# example, each record's field is named in its FINEIBT_LOG section.
CC=$ROOT/$BUILD/fineibt-cc
cat >"$OUT/rep.c" <<'EOF'
typedef int (*cmp_fn)(const void *, const void *);
static int by_name(const void *a, const void *b) { return a != b; }
static int by_value(int a, int b) { return a - b; }
__attribute__((noinline)) int call(cmp_fn f) { return f("a", "b"); }
int main(void)
{
	cmp_fn ok = by_name, bad = (cmp_fn)(void *)by_value;
	int s = call(ok);

	for (int i = 0; i < 10; i++)
		s += call(bad);
	return s == 0;
}
EOF
if ! "$CC" -O1 -g -o "$OUT/rep" "$OUT/rep.c" 2>"$OUT/rep.cc.err"; then
	fail report-lines-in-man "cannot build: $(head -c 200 "$OUT/rep.cc.err")"
	fail log-fields-in-man "cannot build"
else
	FINEIBT_CFI=kcfi,warn FINEIBT_LOG=$OUT/rep.json "$OUT/rep" 2>"$OUT/rep.err"
	sed -n 's/^\(fineibt:   [a-z ]*[a-z]\)[: ].*/\1/p' "$OUT/rep.err" | sort -u >"$OUT/rep.labels"
	sed -n '/^\.SH FAILURE REPORT/,/^\.SH UNINSTR/p' "$CFI7" | sed 's/\\-/-/g' >"$OUT/man.report"
	missing=$(while read -r l; do
		grep -qF -- "$l" "$OUT/man.report" || echo "'$l'"; done <"$OUT/rep.labels" | tr '\n' ' ')
	if [ "$(wc -l <"$OUT/rep.labels")" -lt 4 ]; then
		fail report-lines-in-man "fewer report lines than expected: $(cat "$OUT/rep.err")"
	elif [ -z "$missing" ]; then
		pass report-lines-in-man
	else
		fail report-lines-in-man "report lines fineibt-cfi(7)'s FAILURE REPORT does not show: $missing"
	fi
	grep -Eo '"[a-z_]+":' "$OUT/rep.json" | tr -d '":' | sort -u >"$OUT/log.fields"
	sed -n '/^\.SH FINEIBT_LOG/,/^\.SH ENVIRONMENT/p' "$CFI7" | sed 's/\\-/-/g' >"$OUT/man.log"
	missing=$(while read -r f; do
		grep -Eq "(\"$f\"|^\.B[RI]? \(?$f\b|[ (]$f[ ,;)])" "$OUT/man.log" || echo "$f"; done <"$OUT/log.fields" | tr '\n' ' ')
	if ! grep -q '"repeated":10' "$OUT/rep.json"; then
		fail log-fields-in-man "no repeated record: $(cat "$OUT/rep.json")"
	elif [ -z "$missing" ]; then
		pass log-fields-in-man
	else
		fail log-fields-in-man "FINEIBT_LOG fields fineibt-cfi(7) does not name: $missing"
	fi
fi

# fineibt-cc --version: clang's lines first, fineibt's after; fineibt-cc(1)
# says which (it said "before").
"$CC" --version >"$OUT/ccver" 2>&1
first=$(head -n 1 "$OUT/ccver")
if ! grep -q '^fineibt-cc: fineibt ' "$OUT/ccver" || grep -q '^fineibt' <<<"$first"; then
	fail cc-version-order "fineibt-cc --version: $(tr '\n' '|' <"$OUT/ccver")"
elif sed 's/\\-/-/g' "$ROOT/man/fineibt-cc.1" | tr '\n' ' ' |
	grep -Eq -- "--version prints clang's lines, then one with fineibt's version"; then
	pass cc-version-order
else
	fail cc-version-order "fineibt-cc(1) does not say clang's lines come first"
fi
# FINEIBT_VERBOSE: what turns it on is what fineibt-cfi(7) says (it said
# "=1"; the runtime takes any value but 0, the empty one too).
v_on=0
for v in 1 yes ''; do
	FINEIBT_VERBOSE=$v FINEIBT_CFI=kcfi "$PROG" >/dev/null 2>"$OUT/verbose.err"
	grep -q ': rewritten to kcfi' "$OUT/verbose.err" && v_on=$((v_on + 1))
done
FINEIBT_VERBOSE=0 FINEIBT_CFI=kcfi "$PROG" >/dev/null 2>"$OUT/verbose.err"
v_off=$(grep -c ': rewritten to' "$OUT/verbose.err")
if [ "$v_on" != 3 ] || [ "$v_off" != 0 ]; then
	fail verbose-values-in-man "runtime: on for 1, yes, '' = $v_on of 3; =0 printed $v_off lines"
elif sed 's/\\-/-/g' "$CFI7" | tr '\n' ' ' | grep -q 'Any value but .B 0 turns it on, the empty one too'; then
	pass verbose-values-in-man
else
	fail verbose-values-in-man "fineibt-cfi(7) does not say which values turn FINEIBT_VERBOSE on"
fi

# An unknown --fineibt-* word is the driver's to refuse: clang said
# "unknown argument" and named no way to the driver's list. One line
# pointing at --fineibt-help, exit 1, nothing compiled; fineibt-cc(1)
# says so.
printf 'int main(void) { return 0; }\n' >"$OUT/typo.c"
"$CC" --fineibt-exakt -o "$OUT/typo" "$OUT/typo.c" >"$OUT/typo.out" 2>"$OUT/typo.err"
rc=$?
want="fineibt-cc: error: unknown driver option '--fineibt-exakt'; the driver's options: fineibt-cc --fineibt-help"
if [ $rc != 1 ] || [ "$(cat "$OUT/typo.err")" != "$want" ] || [ -e "$OUT/typo" ]; then
	fail cc-typo-points-at-help "rc=$rc err=$(cat "$OUT/typo.err")"
elif sed 's/\\-/-/g' "$ROOT/man/fineibt-cc.1" | tr '\n' ' ' |
	grep -Eq -- 'Any other word that begins with .B --fineibt- is an error'; then
	pass cc-typo-points-at-help
else
	fail cc-typo-points-at-help "fineibt-cc(1) does not say what an unknown --fineibt- option does"
fi
exit 0
