#!/usr/bin/env bash
# rt_startup_io_early: the start-up reads no file of a fineibt-cc module
# even when it runs before the loader relocated that module (docs/bench.md,
# docs/index.md "Not relocated yet"): the early start of early.c (while
# ld.so relocates libfineibt.so) and the LD_AUDIT hook of `fineibt run`
# (before it relocates a dlopen'ed library). Under strace, every mode:
#  - preinit: a fineibt-cc program with a DT_PREINIT_ARRAY function (early
#    start) that needs a fineibt-cc library (libfi_rta.so, unrelocated
#    then too);
#    Also linked with DT_RELR (the entries' link-time values in place,
#    no RELA) and with --apply-dynamic-relocs (in place and in RELA);
#  - foreign: a fineibt-cc program that needs a stock clang-22 kCFI
#    library (early start, as in rt_early.sh) and libfi_rta.so;
#  - audit: `fineibt run` of a stock kCFI program that dlopen's a
#    fineibt-cc library (libfi_rtb.so, through LD_AUDIT).
# Asserted: the program works; no readlink of /proc/self/exe and no open
# of it or of the executable (/proc/self/pagemap, no file on disk, once per
# module rewritten in place: src/rt/rtlive.c); every fineibt-cc module's file opened once
# (by the loader); the loader's own file never. Only modules without a
# module index (the stock ones: nothing in memory says where their
# sections are) may be read by the runtime. A run with FINEIBT_VERBOSE
# checks the early start did happen (the audit case: the library was
# taken by the runtime), so the strace runs test that path.
# The early start allocates nothing from libc's malloc (src/load/alloc.c):
# the program's own malloc still returns memory of the brk heap (main
# arena), in both kinds of early start (progs/rt_early_heap.c); libc made
# the main thread a new arena (mmap'd) on the tree before.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/startup_io_early
mkdir -p "$D"
K="-fsanitize=kcfi -fsanitize-kcfi-arity -fsanitize-cfi-icall-generalize-pointers
   -fpatchable-function-entry=11,11 -falign-functions=16 -fcf-protection=branch
   -mretpoline-external-thunk -mindirect-branch-cs-prefix"
# An absolute run path: $ORIGIN would have the loader readlink
# /proc/self/exe itself, which the test must not confuse with ours.
R="-Wl,-rpath,$D"
{ rt_build "$D/libfi_rta.so" -O2 -fPIC -shared -Wl,-soname,libfi_rta.so "$RT_SRC/rt_liba.c" &&
  rt_build "$D/libfi_rtb.so" -O2 -fPIC -shared "$RT_SRC/rt_libb.c" -L"$D" -lfi_rta &&
  rt_build "$D/pre_fcc" -O2 "$RT_SRC/rt_early_preinit.c" -L"$D" \
	-Wl,--no-as-needed -lfi_rta "$R" &&
  rt_build "$D/pre_relr_fcc" -O2 "$RT_SRC/rt_early_preinit.c" -L"$D" \
	-Wl,--no-as-needed -lfi_rta "$R" -Wl,-z,pack-relative-relocs &&
  rt_build "$D/pre_apply_fcc" -O2 "$RT_SRC/rt_early_preinit.c" -L"$D" \
	-Wl,--no-as-needed -lfi_rta "$R" -Wl,--apply-dynamic-relocs; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
# shellcheck disable=SC2086
{ clang-22 -O2 $K -fPIC -shared -Wl,-soname,librt_early.so "$RT_SRC/rt_early_lib.c" \
	"$ROOT/crt/thunks.S" -o "$D/librt_early.so" &&
  clang-22 -O2 $K "$RT_SRC/rt_mods.c" "$ROOT/crt/thunks.S" -L"$D" -lfi_rta \
	"$R" -o "$D/plain_mods"; } ||
	{ rt_fail build "clang-22 could not build the stock kCFI modules"; exit 1; }
{ rt_build "$D/foreign_fcc" -O2 "$RT_SRC/rt_early_main.c" -L"$D" -lrt_early \
	-Wl,--no-as-needed -lfi_rta "$R" &&
  rt_build "$D/heap_pre" -O2 -DHEAP_PREINIT "$RT_SRC/rt_early_heap.c" &&
  rt_build "$D/heap_foreign" -O2 "$RT_SRC/rt_early_heap.c" -L"$D" \
	-Wl,--no-as-needed -lrt_early "$R"; } ||
	{ rt_fail build "fineibt-cc could not build foreign_fcc, heap_*"; exit 1; }

EARLY_MSG='runtime started before any constructor'

# opens TRACE: "COUNT PATH" of every successful open after the last
# execve (`fineibt run` reads the program before it runs it), most first.
opens() {
	awk '/execve\(/ && !/= -1/ { n = NR } { l[NR] = $0 }
	     END { for (i = n + 1; i <= NR; i++) print l[i] }' "$1" |
		grep -E 'open(at)?\(' | grep -v '= -1' |
		sed -E 's/.*open(at)?\((AT_FDCWD, )?"([^"]*)".*/\3/' | sort | uniq -c | sort -rn
}

# check TAG WANT FOREIGN CMD...: run CMD under strace in mode $m; its
# stdout must be WANT; files matching the ERE FOREIGN (modules without an
# index, and the executable if it is one) may be read by the runtime.
check() {
	local tag=$1 want=$2 foreign=$3 trace=$D/$1.trace o exe=
	shift 3
	# A stock executable has no index: the runtime reads it.
	[ -n "$foreign" ] && [[ /proc/self/exe =~ $foreign ]] && exe=foreign
	{ FINEIBT_CFI=$m strace -f -qq -e trace=open,openat,readlink,execve \
		-o "$trace" "$@" >"$D/$tag.out" 2>"$D/$tag.err" </dev/null; RT_RC=$?; } 2>/dev/null
	o=$(opens "$trace")
	if [ "$RT_RC" != 0 ] || [ "$(cat "$D/$tag.out")" != "$want" ]; then
		rt_fail "$tag" "program failed: rc=$RT_RC out=$(cat "$D/$tag.out") $(cat "$D/$tag.err")"
	elif [ -z "$exe" ] && grep -q 'readlink(' "$trace"; then
		rt_fail "$tag" "readlink: $(grep 'readlink(' "$trace")"
	elif [ -z "$exe" ] && grep -Eq ' (/proc/self/exe|.*/(pre|pre_relr|pre_apply|foreign)_fcc)$' <<<"$o"; then
		rt_fail "$tag" "the executable was opened: $o"
	elif ! [[ /ld-linux-x86-64.so.2 =~ ${foreign:-^$} ]] &&
	     grep -Eq '/ld-linux[^/]*$' <<<"$o"; then
		rt_fail "$tag" "the dynamic loader's file was opened: $o"
	elif awk -v f="${foreign:-^$}" '$1 > 1 && $2 != "/etc/ld.so.cache" &&
			$2 !~ f && $2 != "/proc/self/exe" &&
			$2 != "/proc/self/pagemap" { bad = 1 } END { exit !bad }' <<<"$o"; then
		rt_fail "$tag" "a file was opened twice: $o"
	elif ! grep -q 'libfi_rta\.so$' <<<"$o" || ! grep -q 'libc\.so' <<<"$o"; then
		rt_fail "$tag" "trace incomplete (strace broken?): $o"
	else
		rt_pass "$tag: no fineibt-cc module's file read ($(wc -l <<<"$o") files opened)"
	fi
}

# said TAG RE CMD...: with FINEIBT_VERBOSE=1 in mode $m, stderr matches RE.
said() {
	local tag=$1 re=$2
	shift 2
	rt_run "early-io-$tag" "$m" env FINEIBT_VERBOSE=1 "$@"
	if [ "$RT_RC" = 0 ] && grep -Eq "$re" <<<"$RT_ERR_TXT"; then
		rt_pass "$tag: the path under test was taken"
	else
		rt_fail "$tag" "rc=$RT_RC, no /$re/ in: ${RT_ERR_TXT:0:600}"
	fi
}

for m in "${RT_MODES[@]}"; do
	check "preinit[$m]" "pre=10 same=1" "" "$D/pre_fcc"
	check "preinit-relr[$m]" "pre=10 same=1" "" "$D/pre_relr_fcc"
	check "preinit-apply[$m]" "pre=10 same=1" "" "$D/pre_apply_fcc"
	check "foreign[$m]" "ctor=111 same=1" 'librt_early\.so$' "$D/foreign_fcc"
	# (the loader opens libc and itself again for the audit library's
	# namespace)
	check "audit[$m]" "modules ok" '(plain_mods|/proc/self/exe|/ld-linux-x86-64\.so\.2|/libc\.so\.6)$' \
		"$FIBT" run --cfi="$m" -- "$D/plain_mods" "$D/libfi_rtb.so"
	for h in pre foreign; do
		rt_run "early-heap-$h" "$m" "$D/heap_$h"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = heap=brk ]; then
			rt_pass "heap-$h[$m]: the program's heap is the main arena's"
		else
			rt_fail "heap-$h[$m]" "rc=$RT_RC out=$RT_OUT_TXT err=${RT_ERR_TXT:0:300}"
		fi
		said "heap-$h-early[$m]" "$EARLY_MSG" "$D/heap_$h"
	done
	said "preinit-early[$m]" "$EARLY_MSG" "$D/pre_fcc"
	said "foreign-early[$m]" "$EARLY_MSG" "$D/foreign_fcc"
	said "audit-taken[$m]" 'libfi_rtb\.so: (rewritten to|kept) ' \
		"$FIBT" run --cfi="$m" -- "$D/plain_mods" "$D/libfi_rtb.so"
done
