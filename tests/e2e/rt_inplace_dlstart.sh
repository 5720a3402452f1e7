#!/usr/bin/env bash
# rt_inplace_dlstart: libfineibt.so started by the program's own dlopen.
# A plug-in host built with plain clang (no runtime, one thread) dlopens
# a fineibt-cc library (rt_sparse.c's, -DRT_SPARSE_LIB), which loads and
# starts the runtime after main. The runtime's state is not sealed yet
# there, and the process is alone, but the program's code has run: a
# write primitive of it could aim an io_uring ring at the library's text
# while it is rewritten in place (tests/e2e/protect_uring.sh). So the
# rewrite takes the sealed, verified copy, swapped whole: in every mode
# that rewrites the library (FINEIBT_VERBOSE says so), its site page and
# its padding page are an anonymous copy; a library kept as compiled is
# the file's throughout; its calls work. Before, the rewrite trusted
# "alone" ("not sealed"): the site page was written in place (a private
# page of the file's mapping) and the padding left the file's.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/inplace_dlstart
mkdir -p "$D"
CC_PLAIN=${CC_PLAIN:-clang-22}
rt_build "$D/librt_sparse.so" -O2 -fPIC -shared -DRT_SPARSE_LIB "$RT_SRC/rt_sparse.c" ||
	{ rt_fail build "fineibt-cc could not build the library"; exit 1; }
"$CC_PLAIN" -O2 -o "$D/host" "$RT_SRC/rt_inplace_dlstart.c" -ldl ||
	{ rt_fail build "$CC_PLAIN could not build the host"; exit 1; }
if readelf -d "$D/host" | grep -q 'libfineibt'; then
	rt_fail build "the host names libfineibt.so"
	exit 1
fi

for m in "${RT_MODES[@]}"; do
	rt_run "inplace-dlstart-$m" "$m" env LD_LIBRARY_PATH="$ROOT/$BUILD" \
		FINEIBT_VERBOSE=1 "$D/host" "$D/librt_sparse.so"
	if grep -q "librt_sparse.so: rewritten to" <<<"$RT_ERR_TXT"; then
		rw=copy want="lib site anon private pad anon private"
	else
		rw=kept want="lib site file shared pad file shared"
	fi
	got=$(head -1 <<<"$RT_OUT_TXT")
	if [ "$RT_RC" != 0 ] || [ "$(sed -n 2p <<<"$RT_OUT_TXT")" != "calls ok" ]; then
		rt_fail "inplace-dlstart[$m]" "rc=$RT_RC: $RT_OUT_TXT $RT_ERR_TXT"
	elif [ "$got" != "$want" ]; then
		rt_fail "inplace-dlstart[$m]" "got '$got', want '$want' ($rw)"
	elif [[ $(rt_base "$m") != kcfi && $rw != copy ]]; then
		rt_fail "inplace-dlstart[$m]" "not rewritten in a mode that rewrites: $RT_ERR_TXT"
	else
		rt_pass "inplace-dlstart[$m]: $got ($rw)"
	fi
done

# The PLT pass of that start (libfineibt.so's constructor, inside the
# host's dlopen): libc's entries are made direct by a verified copy moved
# over its PLT page, never written in place through /proc/self/mem nor
# between two mprotects (in place, a completion could change the list of
# fixes between its check and its store). Before, one pwrite into libc's
# text.
command -v strace >/dev/null || { echo "SKIP: strace not installed (plt part)"; exit 0; }
for m in auto kcfi; do
	t=$D/plt.$m.trace
	LD_LIBRARY_PATH=$ROOT/$BUILD FINEIBT_CFI=$m FINEIBT_VERBOSE=1 strace -f -o "$t" \
		"$D/host" "$D/librt_sparse.so" >"$D/plt.$m.out" 2>"$D/plt.$m.err"
	rc=$?
	read -r mremaps pw rw < <(python3 - "$t" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
fd = None; lo = hi = None; mem = set(); mremaps = pw = rw = 0
for l in lines:
    m = re.search(r'openat\(.*"[^"]*/libc\.so\.6", [^)]*\) = (\d+)', l)
    if m:
        fd = m.group(1)
    m = re.search(r'mmap\(0x([0-9a-f]+), (\d+), PROT_READ\|PROT_EXEC, [^,]*, (\d+),', l)
    if m and fd and m.group(3) == fd and lo is None:
        lo = int(m.group(1), 16); hi = lo + int(m.group(2))
    m = re.search(r'open(at)?\((AT_FDCWD, )?"/proc/self/mem", .*\) = (\d+)', l)
    if m:
        mem.add(m.group(3))
    if re.search(r'\bmremap\(', l):
        mremaps += 1
    m = re.search(r'pwrite64\((\d+), .*, (\d+)\) += \d+', l)
    if m and m.group(1) in mem and lo is not None and lo <= int(m.group(2)) < hi:
        pw += 1
    m = re.search(r'mprotect\(0x([0-9a-f]+), \d+, PROT_READ\|PROT_WRITE\)', l)
    if m and lo is not None and lo <= int(m.group(1), 16) < hi:
        rw += 1
print(mremaps, pw, rw if lo is not None else "nolibc")
PY
)
	if [ "$rc" = 0 ] && [ "$(sed -n 2p "$D/plt.$m.out")" = "calls ok" ] &&
	   [ "$pw" = 0 ] && [ "$rw" = 0 ] && [ "$mremaps" -ge 1 ] &&
	   grep -q 'libc\.so\.6: [0-9]* PLT entries made direct' "$D/plt.$m.err"; then
		rt_pass "inplace-dlstart-plt[$m]: libc's PLT by a moved copy, made direct; no pwrite or read-write window in its text"
	else
		rt_fail "inplace-dlstart-plt[$m]" "rc=$rc mremaps=$mremaps pwrites=$pw rw=$rw $(grep PLT "$D/plt.$m.err" | head -2)"
	fi
done
