#!/usr/bin/env bash
# install: `make install` into a temporary prefix (and with DESTDIR), the
# layout (versioned soname, links, exported symbols limited by the
# version script), pkg-config, man pages; the installed fineibt-cc builds
# from its own prefix, also after the prefix is moved; `fineibt demo`
# works from the prefix; no installed file or message names a file that
# is not installed; `make uninstall` removes everything it installed.
# docs/ecosystem.md.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
OUT=$ROOT/$BUILD/e2e/ecosystem/install
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD PKG_CONFIG_PATH
VER=$(sed -n 's/^#define FINEIBT_VERSION "\(.*\)"/\1/p' "$ROOT/include/fineibt.h")
P=$OUT/prefix

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
check() {	# check NAME WHY CMD...
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

mk() { make -s -C "$ROOT" BUILD="$BUILD" "$@"; }

if ! mk install PREFIX="$P" >"$OUT/install.log" 2>&1; then
	fail install "make install failed: $(tail -n 3 "$OUT/install.log")"
	exit 0
fi
pass install

# ------------------------------------------------------------- layout
for f in bin/fineibt bin/fineibt-cc lib/libfineibt.a lib/libfineibt_crt.a \
	 include/fineibt.h lib/pkgconfig/fineibt.pc share/man/man1/fineibt.1 \
	 share/man/man1/fineibt-cc.1 share/man/man7/fineibt-cfi.7 \
	 libexec/fineibt/fi-attack share/doc/fineibt/index.md \
	 share/man/man8/fineibt-cached.8 lib/systemd/system/fineibt-cached.service; do
	check "install_file[$f]" "missing" test -f "$P/$f"
done
check install_cxx_link "bin/fineibt-c++ is not a link to fineibt-cc" \
	test "$(readlink "$P/bin/fineibt-c++")" = fineibt-cc
check install_so_real "lib/libfineibt.so.$VER is not a regular file" \
	test -f "$P/lib/libfineibt.so.$VER" -a ! -L "$P/lib/libfineibt.so.$VER"
check install_so_soname_link "libfineibt.so.0 -> libfineibt.so.$VER" \
	test "$(readlink "$P/lib/libfineibt.so.0")" = "libfineibt.so.$VER"
check install_so_dev_link "libfineibt.so -> libfineibt.so.0" \
	test "$(readlink "$P/lib/libfineibt.so")" = libfineibt.so.0
check install_soname "DT_SONAME is not libfineibt.so.0" \
	grep -q 'SONAME.*\[libfineibt\.so\.0\]' <<<"$(llvm-readelf-22 -d "$P/lib/libfineibt.so.$VER")"

# Exported symbols: only what src/libfineibt.map lets out.
llvm-nm-22 -D --defined-only "$P/lib/libfineibt.so.$VER" | awk '{print $3}' \
	| sed 's/@.*//' | sort -u >"$OUT/exports"
grep -Ev '^(fineibt_.*|__bhi_args|__bhi_args_end|__x86_indirect_thunk_.*|__fineibt_coarse|sigaction|__sigaction|signal|bsd_signal|ssignal|sysv_signal|__sysv_signal|sigset|sigignore|sigvec|dlopen|dlsym|dlvsym|FINEIBT_0|FINEIBT_0\.2|GLIBC_2\.2\.5|GLIBC_2\.34)$' \
	"$OUT/exports" >"$OUT/extra" || true
check install_exports_limited "symbols outside the version script: $(tr '\n' ' ' <"$OUT/extra")" \
	test ! -s "$OUT/extra"
check install_exports_api "fineibt_rehash/fineibt_rt_hook not exported" \
	sh -c "grep -qx fineibt_rehash '$OUT/exports' && grep -qx fineibt_rt_hook '$OUT/exports'"
check install_exports_no_internal "an fi_ symbol is exported" \
	sh -c "! grep -q '^fi_' '$OUT/exports'"

# ---------------------------------------------------------- pkg-config
export PKG_CONFIG_PATH=$P/lib/pkgconfig
cflags=$(pkg-config --cflags fineibt 2>&1)
libs=$(pkg-config --libs fineibt 2>&1)
check pkgconfig_version "pkg-config --modversion is not $VER" \
	test "$(pkg-config --modversion fineibt 2>&1)" = "$VER"
for f in -fsanitize=kcfi -fsanitize-kcfi-arity -fpatchable-function-entry=11,11 \
	 -falign-functions=16 -fcf-protection=branch -mretpoline-external-thunk \
	 -mindirect-branch-cs-prefix "-I$P/include"; do
	check "pkgconfig_cflags[$f]" "missing from: $cflags" grep -qF -- " $f " <<<" $cflags "
done
check pkgconfig_libs_crt "crt not linked whole: $libs" \
	grep -qF -- "-Wl,--whole-archive,$P/lib/libfineibt_crt.a,--no-whole-archive" <<<"$libs"
check pkgconfig_libs_runtime "no -lfineibt/-L: $libs" \
	grep -qE -- "-L$P/lib .*-lfineibt" <<<"$libs"
unset PKG_CONFIG_PATH

# ---------------------------------------------------------- man pages
for m in man1/fineibt.1 man1/fineibt-cc.1 man7/fineibt-cfi.7 man8/fineibt-cached.8; do
	page=$P/share/man/$m
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 man -l "$page" >"$OUT/man.txt" 2>"$OUT/man.err"
		check "man[$m]" "renders badly: $(head -c 200 "$OUT/man.err")" \
			sh -c "[ ! -s '$OUT/man.err' ] && grep -q '^NAME' '$OUT/man.txt' && grep -q '^SEE ALSO' '$OUT/man.txt'"
	else
		check "man[$m]" "no .TH header" grep -q '^\.TH ' "$page"
	fi
done
check man_cfi_modes "fineibt-cfi(7) does not list every mode" \
	sh -c "for w in auto off kcfi fineibt paranoid bhi norand warn FINEIBT_LOG; do grep -q \"\$w\" '$P/share/man/man7/fineibt-cfi.7' || exit 1; done"

# ------------------------------------------- the installed tools work
cat >"$OUT/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
static int twice(int x) { return 2 * x; }
static int len(const char *s) { return (int)strlen(s); }
int main(int argc, char **argv)
{
	int (*volatile f)(int) = twice;
	if (argc > 1 && !strcmp(argv[1], "confused"))
		f = (int (*)(int))(void *)len;
	printf("%d\n", f(21));
	return 0;
}
EOF
check installed_version "fineibt --version" \
	test "$("$P/bin/fineibt" --version 2>&1)" = "fineibt $VER"
check installed_cc_builds "installed fineibt-cc cannot build" \
	"$P/bin/fineibt-cc" -O2 -o "$OUT/prog" "$OUT/prog.c"
# The runtime by its absolute path in the prefix (no search, no RUNPATH:
# docs/runtime.md "Where the runtime is loaded from").
dyn=$(llvm-readelf-22 -d "$OUT/prog" 2>&1)
needed=$(sed -n 's/.*NEEDED.*\[\(.*libfineibt[^]]*\)\]/\1/p' <<<"$dyn" | head -n 1)
check installed_cc_needed "runtime named '$needed', not the prefix's lib/libfineibt.so.0" \
	test "$needed" = "$P/lib/libfineibt.so.0"
no_rpath() { ! grep -qE 'R(UN)?PATH' <<<"$dyn"; }
check installed_cc_no_rpath "a RUNPATH was written: $(grep -E 'R(UN)?PATH' <<<"$dyn")" no_rpath
rt=$(ldd "$OUT/prog" 2>&1 | awk '$1 ~ /libfineibt\.so\.0$/ { print ($3 ~ /^\// ? $3 : $1) }')
check installed_cc_runtime "program loads '$rt', not the installed runtime" \
	test "$(realpath -m "$rt")" = "$(realpath -m "$P/lib/libfineibt.so.$VER")"
check installed_prog_runs "program fails in auto" \
	test "$(FINEIBT_CFI=auto "$OUT/prog" 2>&1)" = 42
{ FINEIBT_CFI=auto "$OUT/prog" confused >/dev/null 2>"$OUT/prog.err"; rc=$?; } 2>/dev/null
check installed_prog_caught "rc=$rc err=$(cat "$OUT/prog.err")" \
	sh -c "[ $rc = 132 ] && grep -q '^fineibt: CFI failure at .*target: len+0x0' '$OUT/prog.err'"
check installed_run_cmd "fineibt run in the prefix" \
	test "$("$P/bin/fineibt" run --cfi=kcfi -- "$OUT/prog" 2>&1)" = 42

# `fineibt demo` from the prefix: the installed demo program, in every mode.
demo_ok() {	# demo_ok PREFIX
	local out rc
	out=$("$1/bin/fineibt" demo 2>&1)
	rc=$?
	[ $rc = 0 ] && grep -Eq '^kcfi +stopped +stopped +stopped +reported, ran on' <<<"$out" &&
		grep -Eq '^off +NOT STOPPED' <<<"$out"
}
check installed_demo "fineibt demo fails: $("$P/bin/fineibt" demo 2>&1 | tail -n 3)" demo_ok "$P"
if command -v man >/dev/null 2>&1; then
	MANWIDTH=200 man -l "$P/share/man/man1/fineibt.1" >"$OUT/man1.txt" 2>/dev/null
	check man_demo "fineibt(1) does not describe demo as it is" \
		grep -Eq 'Attack +a +small +program +built +with' "$OUT/man1.txt"
fi

# ------------------------- no reference to a file that is not installed
# Every text a user of the prefix reads: man pages, fineibt.pc, every
# --help, and the messages compiled into the programs and libraries.
{
	# The man pages as read: without troff's break points (\:) in paths.
	sed 's/\\://g' "$P"/share/man/man*/*
	cat "$P/lib/pkgconfig/fineibt.pc"
	"$P/bin/fineibt" help
	for c in help version demo patch inspect seq run; do "$P/bin/fineibt" help "$c"; done
	"$P/bin/fineibt-cc" --fineibt-help
	# The messages: read-only strings, not the debug info's source names.
	for f in "$P"/bin/fineibt "$P"/bin/fineibt-cc "$P"/lib/libfineibt.so.* \
		 "$P"/lib/libfineibt_audit.so "$P"/libexec/fineibt/fi-attack; do
		llvm-readelf-22 -p .rodata "$f"
	done
} >"$OUT/texts" 2>&1
grep -Eo '(docs|scripts|tests|src)/[A-Za-z0-9_./-]+|DESIGN[A-Za-z.]*|README[A-Za-z.]*|@[A-Z]+@|PREFIX/share/doc' \
	"$OUT/texts" | sort -u >"$OUT/badrefs"
check installed_refs_only_installed "names files not installed: $(tr '\n' ' ' <"$OUT/badrefs")" \
	test ! -s "$OUT/badrefs"
grep -Eo "$P/share/doc/fineibt/[A-Za-z0-9_.-]*[A-Za-z0-9_]" "$OUT/texts" | sort -u >"$OUT/docrefs"
missing=$(while read -r f; do [ -e "$f" ] || echo "$f"; done <"$OUT/docrefs")
check installed_doc_refs_exist "cited but not installed: $missing" \
	sh -c "[ -s '$OUT/docrefs' ] && [ -z '$missing' ]"
check installed_docs_no_design "installed docs cite DESIGN: $(grep -l DESIGN "$P"/share/doc/fineibt/* 2>/dev/null)" \
	sh -c "! grep -q DESIGN '$P'/share/doc/fineibt/*"

# Move the prefix: the driver finds its files from where it is now (its
# link copy names the old place: the moved runtime through a RUNPATH).
mv "$P" "$OUT/moved"
check installed_relocated "moved prefix: fineibt-cc cannot build" \
	"$OUT/moved/bin/fineibt-cc" -O2 -o "$OUT/prog2" "$OUT/prog.c"
check installed_relocated_runs "moved prefix: program fails" \
	test "$(FINEIBT_CFI=fineibt "$OUT/prog2" 2>&1)" = 42
rpath=$(llvm-readelf-22 -d "$OUT/prog2" 2>&1 | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p')
check installed_relocated_rpath "moved prefix: RUNPATH '$rpath', not the moved lib/" \
	test "$(realpath -m "$rpath")" = "$(realpath -m "$OUT/moved/lib")"
check installed_relocated_demo "moved prefix: fineibt demo fails" demo_ok "$OUT/moved"
mv "$OUT/moved" "$P"

# ------------------------------------------------------------- DESTDIR
# A long prefix: the man pages print the documentation's directory, which
# must wrap (at a slash) rather than overflow a line.
D=$OUT/destdir
LP=/opt/fineibt-test/a-prefix-whose-doc-directory-is-longer-than-a-line-of-a-man-page
if mk install DESTDIR="$D" PREFIX=$LP >"$OUT/destdir.log" 2>&1; then
	check destdir_layout "files not under DESTDIR/PREFIX" \
		test -f "$D$LP/lib/libfineibt.so.$VER" -a -f "$D$LP/bin/fineibt-cc"
	check destdir_pc_prefix "fineibt.pc does not say prefix=$LP" \
		grep -qx "prefix=$LP" "$D$LP/lib/pkgconfig/fineibt.pc"
	check destdir_nothing_outside "something installed outside DESTDIR" \
		test ! -e /opt/fineibt-test
	if command -v man >/dev/null 2>&1; then
		for m in man1/fineibt.1 man1/fineibt-cc.1 man7/fineibt-cfi.7 man8/fineibt-cached.8; do
			MANWIDTH=80 man -l "$D$LP/share/man/$m" >"$OUT/man.txt" 2>"$OUT/man.err"
			check "destdir_man[$m]" "renders badly with a long prefix: $(head -c 200 "$OUT/man.err")" \
				sh -c "[ ! -s '$OUT/man.err' ] && grep -q 'share/doc/' '$OUT/man.txt'"
		done
	fi
	mk uninstall DESTDIR="$D" PREFIX=$LP >/dev/null 2>&1
	check destdir_uninstall "files left: $(find "$D" -type f -o -type l | head -3)" \
		test -z "$(find "$D" -type f -o -type l)"
else
	fail destdir_install "$(tail -n 3 "$OUT/destdir.log")"
fi

# ----------------------------------------------------------- uninstall
if mk uninstall PREFIX="$P" >"$OUT/uninstall.log" 2>&1; then
	check uninstall "files left: $(find "$P" -type f -o -type l | head -5 | tr '\n' ' ')" \
		test -z "$(find "$P" -type f -o -type l)"
else
	fail uninstall "$(tail -n 3 "$OUT/uninstall.log")"
fi
exit 0
