#!/usr/bin/env bash
# rt_startup_io: the runtime's start-up path reads no file (docs/bench.md,
# docs/index.md). Under strace, in every cfi= mode, a program built by
# fineibt-cc (executable + linked kCFI library + dlopen'ed kCFI library):
# the executable and /proc/self/exe are never opened, and no file is
# opened more often than the dynamic loader opens it itself (once: libc,
# the kCFI libraries, libfineibt; ld.so never; /proc/self/pagemap, no file
# on disk, once per module rewritten in place: src/rt/rtlive.c). Control: the same program
# with its module index marked "not filled" (as a build without the index)
# still runs, through the file-reading path, and that path's opens are
# seen. Reports read symbols and lines lazily: names and source line when
# the file is there (an executable is read through /proc/self/exe, so even
# after it was deleted); addresses for a library deleted after loading.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/startup_io
mkdir -p "$D"
{ rt_build "$D/libfi_rta.so" -O2 -fPIC -shared -Wl,-soname,libfi_rta.so "$RT_SRC/rt_liba.c" &&
  rt_build "$D/libfi_rtb.so" -O2 -fPIC -shared "$RT_SRC/rt_libb.c" -L"$D" -lfi_rta &&
  rt_build "$D/rt_mods" -O2 "$RT_SRC/rt_mods.c" -L"$D" -lfi_rta '-Wl,-rpath,$ORIGIN' &&
  rt_build "$D/rt_lazy" -O1 -g "$RT_SRC/rt_lazy.c" -ldl &&
  rt_build "$D/librt_lazylib.so" -O1 -g -fPIC -shared "$RT_SRC/rt_lazylib.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

# unfill FILE: clear the module index's "filled" flag (src/elf/index.h), as
# `fineibt patch` does and as a build without the index looks.
unfill() {
	python3 - "$1" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.find(b'FineIBT\0')
assert i > 12 and struct.unpack_from('<I', b, i - 4)[0] == 0x46490001
struct.pack_into('<I', b, i + 8 + 4, 0)
open(sys.argv[1], 'wb').write(b)
PY
}

# opens TRACE: "COUNT PATH" of every successful open, most first.
opens() {
	grep -E 'open(at)?\(' "$1" | grep -v '= -1' |
		sed -E 's/.*open(at)?\((AT_FDCWD, )?"([^"]*)".*/\3/' | sort | uniq -c | sort -rn
}

check_io() {
	local tag=$1 exe=$2 trace=$D/$1.trace o
	shift 2
	{ FINEIBT_CFI=$m strace -f -qq -e trace=open,openat -o "$trace" \
		"$exe" "$@" >"$D/$tag.out" 2>"$D/$tag.err" </dev/null; RT_RC=$?; } 2>/dev/null
	o=$(opens "$trace")
	if [ "$RT_RC" != 0 ] || [ "$(cat "$D/$tag.out")" != "modules ok" ]; then
		rt_fail "$tag" "program failed: rc=$RT_RC $(cat "$D/$tag.err")"
	elif grep -Eq " (/proc/self/exe|$exe)$" <<<"$o"; then
		rt_fail "$tag" "the executable was opened: $o"
	elif grep -Eq '/ld-linux[^/]*$' <<<"$o"; then
		rt_fail "$tag" "the dynamic loader's file was opened: $o"
	elif awk '$1 > 1 && $2 != "/etc/ld.so.cache" && $2 != "/proc/self/pagemap" { bad = 1 } END { exit !bad }' <<<"$o"; then
		rt_fail "$tag" "a file was opened twice: $o"
	elif ! grep -q 'libfi_rtb\.so$' <<<"$o" || ! grep -q 'libc\.so' <<<"$o"; then
		rt_fail "$tag" "trace incomplete (strace broken?): $o"
	else
		rt_pass "$tag: only the loader's opens ($(wc -l <<<"$o") files)"
	fi
}

cp "$D/rt_mods" "$D/rt_mods_noindex"
unfill "$D/rt_mods_noindex"

for m in "${RT_MODES[@]}"; do
	check_io "startup-io[$m]" "$D/rt_mods" "$D/libfi_rtb.so"

	# Control: the same program without a usable index reads its file.
	{ FINEIBT_CFI=$m strace -f -qq -e trace=open,openat -o "$D/noindex.trace" \
		"$D/rt_mods_noindex" "$D/libfi_rtb.so" >"$D/noindex.out" 2>&1 </dev/null; RT_RC=$?; } 2>/dev/null
	if [ "$RT_RC" = 0 ] && [ "$(head -1 "$D/noindex.out")" = "modules ok" ] &&
	   opens "$D/noindex.trace" | grep -q ' /proc/self/exe$'; then
		rt_pass "startup-io-control[$m]: without the index the file is read (and seen)"
	else
		rt_fail "startup-io-control[$m]" "rc=$RT_RC $(cat "$D/noindex.out"); $(opens "$D/noindex.trace")"
	fi

	rt_is_off "$m" && continue
	# Lazy symbols and lines: the file is still there.
	rt_run lazy "$m" "$D/rt_lazy"
	# (callee-side modes know no call site when the call is a tail jmp;
	# v6.18 preambles trap at func+3, named after the function)
	if [ "$RT_RC" = 132 ] &&
	   grep -Eq "^fineibt: CFI failure at (lz_call|__cfi_lz_two|lz_two|__bhi_args)\+0x[0-9a-f]+ \(target: lz_two\+0x0;" <<<"$RT_ERR_TXT" &&
	   grep -q '^fineibt:   expected type 0x[0-9a-f]*, as in: lz_one$' <<<"$RT_ERR_TXT" &&
	   grep -q '^fineibt:   target: long lz_two(long, long)$' <<<"$RT_ERR_TXT" &&
	   { ! rt_checks_caller "$m" ||
	     grep -Eq '^fineibt:   call site: .*rt_lazy\.c:[0-9]+' <<<"$RT_ERR_TXT"; }; then
		rt_pass "lazy-symbols[$m]: names and source line read at report time"
	else
		rt_fail "lazy-symbols[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	# The executable deleted after start-up: still symbolised (it is
	# read through /proc/self/exe, the file the process runs).
	cp "$D/rt_lazy" "$D/rt_lazy_gone"
	rt_run lazy_gone "$m" "$D/rt_lazy_gone" "$D/rt_lazy_gone" gone
	if [ "$RT_RC" = 132 ] && [ ! -e "$D/rt_lazy_gone" ] &&
	   grep -Eq "^fineibt: CFI failure at (lz_call|__cfi_lz_two|lz_two|__bhi_args)\+0x[0-9a-f]+ \(target: lz_two\+0x0;" <<<"$RT_ERR_TXT"; then
		rt_pass "lazy-exe-gone[$m]: still named through /proc/self/exe"
	else
		rt_fail "lazy-exe-gone[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	# A library: named while its file is there...
	cp "$D/librt_lazylib.so" "$D/librt_lazylib_copy.so"
	rt_run lazy_lib "$m" "$D/rt_lazy" lib "$D/librt_lazylib_copy.so"
	if [ "$RT_RC" = 132 ] &&
	   grep -Eq "^fineibt: CFI failure at (ll_call|__cfi_ll_two|ll_two|__bhi_args)\+0x[0-9a-f]+ \(target: ll_two\+0x0;" <<<"$RT_ERR_TXT"; then
		rt_pass "lazy-lib[$m]: library symbols read at report time"
	else
		rt_fail "lazy-lib[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
	# ...and deleted after it was loaded: a report with addresses.
	rt_run lazy_lib_gone "$m" "$D/rt_lazy" lib "$D/librt_lazylib_copy.so" gone
	if [ "$RT_RC" = 132 ] && [ ! -e "$D/librt_lazylib_copy.so" ] &&
	   grep -Eq "^fineibt: CFI failure at (__bhi_args\+)?0x[0-9a-f]+ \(target: 0x[0-9a-f]+; expected type: 0x[0-9a-f]{8}; mode: $(rt_report_mode "$m")" <<<"$RT_ERR_TXT"; then
		rt_pass "lazy-lib-gone[$m]: report with addresses"
	else
		rt_fail "lazy-lib-gone[$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
done

# Statically patched modules (`fineibt patch`, docs/patch.md): the index
# carries the .fineibt record (src/elf/index.h, FI_INDEX_PATCHED), so the
# runtime takes them from memory too: no open of the executable or of
# /proc/self/exe, "kept static" in the file's mode. Control: the same file
# with its index unfilled (what `fineibt patch` wrote before) is read.
P=$D/patched
mkdir -p "$P"
for cfi in kcfi fineibt fineibt,paranoid off; do
	tag=${cfi//,/-}
	ok=1
	for f in rt_mods libfi_rta.so libfi_rtb.so; do
		"$FIBT" patch -q "$D/$f" -o "$P/$f" --cfi="$cfi" --key 00112233445566778899aabbccddeeff || ok=0
	done
	[ $ok = 1 ] || { rt_fail "patched-build[$tag]" "fineibt patch failed"; continue; }
	m=auto check_io "patched-startup-io[$tag]" "$P/rt_mods" "$P/libfi_rtb.so"
	err=$(FINEIBT_VERBOSE=1 "$P/rt_mods" "$P/libfi_rtb.so" 2>&1 >/dev/null)
	if grep -q "^fineibt: $P/rt_mods: kept static $cfi$" <<<"$err" ||
	   grep -q "^fineibt: /proc/self/exe: kept static $cfi$" <<<"$err"; then
		rt_pass "patched-kept[$tag]: taken as patched, from memory"
	else
		rt_fail "patched-kept[$tag]" "$err"
	fi
	cp "$P/rt_mods" "$P/rt_mods_unfilled"
	unfill "$P/rt_mods_unfilled"
	{ strace -f -qq -e trace=open,openat -o "$D/unfilled.trace" \
		"$P/rt_mods_unfilled" "$P/libfi_rtb.so" >"$D/unfilled.out" 2>"$D/unfilled.err" </dev/null; RT_RC=$?; } 2>/dev/null
	if [ "$RT_RC" = 0 ] && [ "$(head -1 "$D/unfilled.out")" = "modules ok" ] &&
	   opens "$D/unfilled.trace" | grep -q ' /proc/self/exe$'; then
		rt_pass "patched-unfilled[$tag]: an unfilled index still reads the file"
	else
		rt_fail "patched-unfilled[$tag]" "rc=$RT_RC $(cat "$D/unfilled.out" "$D/unfilled.err")"
	fi
done
# The record in the index is the file's .fineibt section, byte for byte,
# but for its counts: bytes 0-31, then the key (bytes 64 to the end).
python3 - "$P/rt_mods" <<'PY' && rt_pass "patched-record: the index holds the .fineibt section's bytes" || rt_fail patched-record "index record differs from the .fineibt section"
import struct, subprocess, sys
b = open(sys.argv[1], 'rb').read()
i = b.find(b'FineIBT\0')
d = i + 8
flags = struct.unpack_from('<I', b, d + 4)[0]
sec = None
out = subprocess.run(['llvm-readelf-22', '-SW', sys.argv[1]], capture_output=True, text=True).stdout
for l in out.splitlines():
    f = l.replace('[ ', '[').split()
    if len(f) > 5 and f[1] == '.fineibt':
        off, size = int(f[4], 16), int(f[5], 16)
        sec = b[off:off + size]
assert flags & 8 and not flags & 4, flags
r = d + 22 * 4
assert sec and len(sec) == 80
assert b[r:r + 32] == sec[:32] and b[r + 32:r + 48] == sec[64:80]
PY
