#!/usr/bin/env bash
# protect_fini (docs/protection.md, "Remaining, known"): a program
# overwrites the first entry of its own DT_FINI_ARRAY and returns from
# main(); ld.so's _dl_fini calls the entry
# with a plain `call *` that no mode checks. With fineibt-cc's default
# (RELRO) and with --fineibt-no-relro (partial RELRO: .init_array,
# .fini_array and .dynamic stay in PT_GNU_RELRO) the write faults, in every
# mode and with either runtime. Linked -Wl,-z,norelro the array is plain
# data and the write hijacks the exit in every mode, FineIBT included (the
# known, documented hole: docs/protection.md, "-z norelro: .init_array,
# .fini_array, .dynamic"), with the shared runtime; with the static one
# the program does not start (its table of interposers would be writable
# too: src/rt/rtvariant.c), and fineibt-cc's link says it will not.
. "$(dirname "$0")/progs/protect_common.bash"

SRC=$PR_SRC/protect_fini.c
G=$PR_OUT/protect_fini

build() {
	local out=$1
	shift
	pr_fresh "$out" "$SRC" || "$FCC" -O2 -Wall "$@" "$SRC" -o "$out"
}
build "$G" && build "$G-static" -static-fineibt &&
build "$G-partial" --fineibt-no-relro &&
build "$G-norelro" --fineibt-no-relro -Wl,-z,norelro &&
{ pr_fresh "$G-norelro-static" "$SRC" ||
  "$FCC" -O2 -Wall -static-fineibt --fineibt-no-relro -Wl,-z,norelro "$SRC" \
	-o "$G-norelro-static" 2>"$G-norelro-static.err"; } ||
	{ pr_fail build "could not build protect_fini"; exit 1; }

for prog in "$G" "$G-static" "$G-partial"; do
	for m in $(fi_with_sets off kcfi fineibt auto fineibt,bhi auto,warn); do
		tag="fini-write[$m,${prog##*/}]"
		pr_run fini "$m" "$prog"
		if [ "$PR_RC" = 139 ] && [ "$PR_OUT_TXT" = "writing FINI_ARRAY[0]" ]; then
			pr_pass "$tag: faults, exit not redirected"
		else
			pr_fail "$tag" "want SIGSEGV on the write: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
done

# The open hole, asserted so that a fix shows up here: -z norelro.
for prog in "$G-norelro"; do
	for m in kcfi auto; do
		pr_run fini "$m" "$prog"
		if [ "$PR_RC" = 42 ] && [ "$PR_OUT_TXT" = $'writing FINI_ARRAY[0]\nhijacked' ]; then
			pr_pass "norelro[$m,${prog##*/}]: open (documented): the write redirects the exit"
		else
			pr_fail "norelro[$m,${prog##*/}]" "the hijack no longer works (closed? update docs/protection.md): rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
		fi
	done
done
# The static runtime refuses to start there (warned at the link).
NR_FATAL='fineibt: fatal: the runtime'"'"'s table of interposers is writable (an executable holding the static runtime, or libfineibt.so, linked -z norelro): link it without -z norelro; terminating'
if [ -e "$G-norelro-static.err" ]; then
	if grep -q '^fineibt-cc: warning: -z norelro with the static runtime leaves its table of interposers writable' "$G-norelro-static.err"; then
		pr_pass "norelro-static: fineibt-cc warns that the program will not start"
	else
		pr_fail norelro-static "no warning at the link: $(cat "$G-norelro-static.err")"
	fi
fi
for m in kcfi auto off; do
	pr_run fini "$m" "$G-norelro-static"
	if [ "$PR_RC" = 127 ] && [ -z "$PR_OUT_TXT" ] && [ "$PR_ERR_TXT" = "$NR_FATAL" ]; then
		pr_pass "norelro[$m,static]: does not start (the table of interposers is writable)"
	else
		pr_fail "norelro[$m,static]" "want the fatal line and status 127: rc=$PR_RC out='$PR_OUT_TXT' err='$PR_ERR_TXT'"
	fi
done
exit 0
