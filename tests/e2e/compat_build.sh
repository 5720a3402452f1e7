#!/usr/bin/env bash
# compat_build (docs/compat.md, build routes): a program that stores libc
# functions (strlen, puts) in a table and calls them through kCFI, built
#  (a) with a stock clang-22 and `pkg-config --cflags --libs fineibt` from
#      an installed prefix (veneers come from fineibt-ld, the --ld-path the
#      .pc file names): works in every mode, a type-confused call through
#      the same table is still caught;
#  (b) with `fineibt-cc --fineibt-no-runtime`: links (thunks from the crt),
#      no libfineibt, keeps its veneers, runs kCFI as compiled, confused
#      call dies of SIGILL;
#  (c) `fineibt-cc --fineibt-help` and man/fineibt-cc.1 name every option
#      and environment variable the driver's sources parse.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
. "$ROOT/tests/e2e/progs/sets.bash"	# fi_with_sets: both sequence sets
OUT=$ROOT/$BUILD/e2e/compat_build
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD PKG_CONFIG_PATH FINEIBT_VERBOSE
MODES="off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
check() {	# check NAME WHY CMD...
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

cat >"$OUT/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libc functions in a table: their addresses are taken in this module. */
static size_t (*volatile len)(const char *) = strlen;
static int (*volatile out)(const char *) = puts;

int main(int argc, char **argv)
{
	long sum = 0;

	for (int i = 0; i < 100; i++)
		sum += (long)len("fineibt");
	printf("sum %ld\n", sum);
	out("puts ok");
	if (argc > 1) {
		/* puts through strlen's type: a type confusion. */
		size_t (*bad)(const char *) = (size_t (*)(const char *))(void *)out;
		printf("confused %zu\n", bad("x"));
	}
	fflush(stdout);
	return 0;
}
EOF
want=$(printf 'sum 700\nputs ok')

# ------------------------------------------ (a) stock clang + pkg-config
P=$OUT/prefix
if ! make -s -C "$ROOT" BUILD="$BUILD" install PREFIX="$P" >"$OUT/install.log" 2>&1; then
	fail compat_build_install "make install failed: $(tail -n 3 "$OUT/install.log")"
	exit 0
fi
export PKG_CONFIG_PATH=$P/lib/pkgconfig
check compat_build_pc_ldpath "pkg-config --libs names no fineibt-ld" \
	grep -q -- "--ld-path=$P/bin/fineibt-ld" <<<"$(pkg-config --libs fineibt)"
check compat_build_ld_link "bin/fineibt-ld is not a link to fineibt-cc" \
	test "$(readlink "$P/bin/fineibt-ld")" = fineibt-cc
# shellcheck disable=SC2046  # pkg-config output is a list of words
if clang-22 -O2 $(pkg-config --cflags fineibt) -o "$OUT/pc" "$OUT/prog.c" \
		$(pkg-config --libs fineibt) >"$OUT/pc.log" 2>&1; then
	pass compat_build_pc_link
else
	fail compat_build_pc_link "$(tail -n 3 "$OUT/pc.log")"
fi
check compat_build_pc_relro "fineibt-ld linked without full RELRO (BIND_NOW)" \
	sh -c "llvm-readelf-22 -d '$OUT/pc' | grep -q 'FLAGS.*BIND_NOW' && llvm-readelf-22 -l '$OUT/pc' | grep -q GNU_RELRO"
clang-22 -O2 $(pkg-config --cflags fineibt) -o "$OUT/pc-lazy" "$OUT/prog.c" \
	$(pkg-config --libs fineibt) -Wl,-z,lazy >/dev/null 2>&1
check compat_build_pc_lazy "-Wl,-z,lazy did not opt out of BIND_NOW under fineibt-ld" \
	sh -c "! llvm-readelf-22 -d '$OUT/pc-lazy' | grep -q 'BIND_NOW'"
check compat_build_pc_veneers "no __wrap_strlen/__wrap_puts veneer in the program" \
	sh -c "llvm-nm-22 '$OUT/pc' | grep -q ' __wrap_strlen\$' && llvm-nm-22 '$OUT/pc' | grep -q ' __wrap_puts\$'"
# The same without the wrapper: what the .pc file gave before (the bug).
# shellcheck disable=SC2046
clang-22 -O2 $(pkg-config --cflags fineibt) -o "$OUT/pc-nover" "$OUT/prog.c" \
	$(pkg-config --libs fineibt | sed 's/--ld-path=[^ ]*//') >/dev/null 2>&1
for m in $(fi_with_sets $MODES); do
	got=$(FINEIBT_CFI=$m "$OUT/pc" 2>"$OUT/pc.$m.err")
	check "compat_build_pc_run[$m]" "rc $? output '$got' $(head -n 1 "$OUT/pc.$m.err")" \
		test "$got" = "$want"
	FINEIBT_CFI=$m "$OUT/pc" confuse >"$OUT/pc.$m.bad" 2>&1
	rc=$?
	check "compat_build_pc_confused[$m]" "rc $rc, want 132: $(tail -n 1 "$OUT/pc.$m.bad")" \
		test "$rc" = 132 -o "$(fi_no_set "$m")" = off
done
# Without veneers the checking modes trap on &strlen: proves the test sees
# the difference the wrapper makes.
FINEIBT_CFI=kcfi "$OUT/pc-nover" >/dev/null 2>&1
rc=$?
check compat_build_pc_without_wrapper_traps "a build without fineibt-ld ran (rc $rc): the test proves nothing" \
	test "$rc" = 132

# ------------------------------------------- (b) --fineibt-no-runtime
if "$ROOT/$BUILD/fineibt-cc" --fineibt-no-runtime -O2 -o "$OUT/nort" "$OUT/prog.c" \
		>"$OUT/nort.log" 2>&1; then
	pass compat_build_nort_link
else
	fail compat_build_nort_link "$(tail -n 3 "$OUT/nort.log")"
fi
check compat_build_nort_no_runtime "libfineibt is a dependency" \
	sh -c "! llvm-readelf-22 -d '$OUT/nort' | grep -q libfineibt"
check compat_build_nort_veneers "no __wrap_strlen veneer" \
	sh -c "llvm-nm-22 '$OUT/nort' | grep -q ' __wrap_strlen\$'"
check compat_build_nort_no_hook "the module hook was linked" \
	sh -c "! llvm-nm-22 '$OUT/nort' | grep -q fineibt_rt_hook"
got=$("$OUT/nort" 2>&1)
check compat_build_nort_run "output '$got'" test "$got" = "$want"
"$OUT/nort" confuse >"$OUT/nort.bad" 2>&1
rc=$?
check compat_build_nort_confused "rc $rc, want 132 (kCFI ud2)" test "$rc" = 132
# A partial link keeps thunks and veneers for the final link.
"$ROOT/$BUILD/fineibt-cc" --fineibt-no-runtime -O2 -r -o "$OUT/part.o" "$OUT/prog.c" \
	>"$OUT/part.log" 2>&1
check compat_build_nort_partial "-r failed: $(tail -n 1 "$OUT/part.log")" \
	sh -c "llvm-nm-22 '$OUT/part.o' | grep -q ' U __x86_indirect_thunk_r11'"

# ------------------------------------------------- (c) --fineibt-help
help=$("$ROOT/$BUILD/fineibt-cc" --fineibt-help 2>&1)
check compat_build_help_rc "--fineibt-help failed" \
	sh -c "\"$ROOT/$BUILD/fineibt-cc\" --fineibt-help >/dev/null"
man=$(sed 's/\\-/-/g' "$ROOT/man/fineibt-cc.1")
# What the sources parse: option literals compared with strcmp, and the
# variables read with getenv / fi_env_on / fi_env_or.
opts=$(grep -ohE 'strcmp\([^,]+, "-[-a-z]*fineibt[-a-z]*"' "$ROOT"/driver/*.c |
	sed 's/.*"\(.*\)"/\1/' | sort -u)
envs=$(grep -ohE '(getenv|fi_env_on|fi_env_or)\("FINEIBT_[A-Z_]+"' "$ROOT"/driver/*.c |
	sed 's/.*"\(.*\)"/\1/' | sort -u)
check compat_build_help_found "found only $(wc -w <<<"$opts") options, $(wc -w <<<"$envs") variables in driver/" \
	test "$(wc -w <<<"$opts")" -ge 6 -a "$(wc -w <<<"$envs")" -ge 8
for o in $opts $envs; do
	check "compat_build_help[$o]" "not in fineibt-cc --fineibt-help" \
		grep -qF -- "$o" <<<"$help"
	check "compat_build_man[$o]" "not in man/fineibt-cc.1" \
		grep -qF -- "$o" <<<"$man"
done
"$ROOT/$BUILD/fineibt-cc" --help >/dev/null 2>"$OUT/help.err"
check compat_build_help_pointer "--help does not point to --fineibt-help" \
	grep -q -- --fineibt-help "$OUT/help.err"

# ------------------- (d) links what clang-22 (GNU ld) links (docs/runtime.md)
# A version script naming symbols the library does not define (libxml2's
# docb* and xmlDllMain), and a section kept only through __start_/__stop_
# under --gc-sections: GNU ld takes both, lld refuses both by default.
printf 'V1 { global: vs_foo; docbGone; xmlDllMain; local: *; };\n' >"$OUT/v.map"
printf 'int vs_foo(void) { return 7; }\n' >"$OUT/vs.c"
cat >"$OUT/ss.c" <<'SS'
#include <stdio.h>
__attribute__((section("fiset"), used)) static int a = 1;
extern int __start_fiset[], __stop_fiset[];
int main(void) { printf("%ld\n", (long)(__stop_fiset - __start_fiset)); return 0; }
SS
printf '__attribute__((section("fiset"))) int b = 2;\n' >"$OUT/ss2.c"
for cc in clang-22 "$ROOT/$BUILD/fineibt-cc"; do
	tag=$([ "$cc" = clang-22 ] && echo plain || echo fineibt-cc)
	check "compat_build_version_script[$tag]" "$(
		"$cc" -shared -fPIC -o "$OUT/vs-$tag.so" "$OUT/vs.c" \
			-Wl,--version-script="$OUT/v.map" 2>&1 | tail -n 2)" \
		"$cc" -shared -fPIC -o "$OUT/vs-$tag.so" "$OUT/vs.c" \
			-Wl,--version-script="$OUT/v.map"
	"$cc" -O2 -ffunction-sections -fdata-sections -Wl,--gc-sections \
		"$OUT/ss.c" "$OUT/ss2.c" -o "$OUT/ss-$tag" >"$OUT/ss.log" 2>&1
	check "compat_build_start_stop_gc[$tag]" "$(tail -n 2 "$OUT/ss.log") $("$OUT/ss-$tag" 2>&1)" \
		test "$("$OUT/ss-$tag" 2>/dev/null)" = 2
done
# The user's explicit choice still wins: lld's strict check on request.
if "$ROOT/$BUILD/fineibt-cc" -shared -fPIC -o "$OUT/vs-strict.so" "$OUT/vs.c" \
	-Wl,--version-script="$OUT/v.map" -Wl,--no-undefined-version >/dev/null 2>&1; then
	fail compat_build_version_script_strict "--no-undefined-version was overridden"
else
	pass compat_build_version_script_strict
fi
# The pkg-config route (fineibt-ld) too.
check compat_build_version_script_pc "$(clang-22 -shared -fPIC $(pkg-config --cflags fineibt) \
	-o "$OUT/vs-pc.so" "$OUT/vs.c" -Wl,--version-script="$OUT/v.map" \
	$(pkg-config --libs fineibt) 2>&1 | tail -n 2)" \
	test -e "$OUT/vs-pc.so"
exit 0
