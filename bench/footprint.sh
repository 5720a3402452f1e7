#!/usr/bin/env bash
# What each layer of src/ weighs, and what the runtime maps per process
# (not a test: prints numbers; README "What the runtime weighs").
#
#   bash bench/footprint.sh [BUILD]      (default build/)
#
# 1. libfineibt.so relinked as the Makefile links it, with a link map:
#    the bytes each layer's objects put into .text, read-only data
#    (.rodata, .eh_frame), .data (+.data.rel.ro, .got, .init_array) and
#    .bss, after --gc-sections. Then the whole files: libfineibt.so,
#    libfineibt_offline.a (src/offline/), the CLI.
# 2. A hello program built with fineibt-cc (shared runtime) and with plain
#    clang-22, each stopped in main: /proc/PID/smaps of libfineibt.so's
#    mappings, its .bss (the runtime state) included (Size, Rss, Pss,
#    Private_Dirty), and the process totals (smaps_rollup), per mode.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=$BUILD/bench/footprint
mkdir -p "$OUT"
make -s BUILD="$BUILD" "$BUILD/libfineibt.so" "$BUILD/libfineibt_offline.a" \
	"$BUILD/fineibt" "$BUILD/fineibt-cc" >/dev/null

# ---------------------------------------------------------------- layers
objs=$(make -s -pq BUILD="$BUILD" 2>/dev/null | sed -n 's/^LIB_OBJ := //p' |
	tr ' ' '\n' | grep -v '/dlsym_a\.c\.o$\|/preinit\.c\.o$')
# shellcheck disable=SC2086
clang-22 -shared -o "$OUT/libfineibt.so" $objs -Wl,-soname,libfineibt.so.0 \
	-Wl,--version-script=src/libfineibt.map -Wl,-z,noexecstack \
	-Wl,-z,relro -Wl,-z,now -Wl,--gc-sections -Wl,-Map="$OUT/so.map" \
	-ldl -lpthread
cmp -s <(size -A "$OUT/libfineibt.so" | grep -E '^\.(text|rodata|data|bss) ') \
	<(size -A "$BUILD/libfineibt.so" | grep -E '^\.(text|rodata|data|bss) ') ||
	echo "note: the relinked copy differs from $BUILD/libfineibt.so"

python3 - "$OUT/so.map" <<'EOF'
import collections, re, sys
lines = open(sys.argv[1]).read().split("\n")
kind = {".text": "text", ".rodata": "rodata", ".eh_frame": "rodata",
        ".eh_frame_hdr": "rodata", ".data": "data", ".data.rel.ro": "data",
        ".init_array": "data", ".fini_array": "data", ".got": "data",
        ".got.plt": "data", ".bss": "bss"}
acc = collections.defaultdict(collections.Counter)
out = None
for l in lines[lines.index("Linker script and memory map"):]:
    m = re.match(r"^(\.[\w.]+)(\s+0x[0-9a-f]+\s+0x[0-9a-f]+)?\s*$", l)
    if m:
        out = m.group(1)
        continue
    m = re.match(r"^ (\S+)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o)\b", l)
    if m and kind.get(out):
        f = m.group(3)
        lay = re.search(r"obj/(\w+)/", f)
        acc[lay.group(1) if lay else "(libc, libgcc)"][kind[out]] += int(m.group(2), 16)
print("libfineibt.so by layer (bytes of input sections kept by --gc-sections):")
print("  %-16s %8s %8s %8s %8s" % ("layer", "text", "rodata", "data", "bss"))
tot = collections.Counter()
for k in sorted(acc, key=lambda k: -acc[k]["text"]):
    v = acc[k]
    tot.update(v)
    print("  %-16s %8d %8d %8d %8d" % (k, v["text"], v["rodata"], v["data"], v["bss"]))
print("  %-16s %8d %8d %8d %8d" % ("total", tot["text"], tot["rodata"], tot["data"], tot["bss"]))
EOF

echo "whole files (size: text = code + read-only data):"
size "$BUILD/libfineibt.so" "$BUILD/fineibt" "$BUILD/fineibt-cc" | sed 's/^/  /'
size -t "$BUILD/libfineibt_offline.a" | tail -n 1 | sed "s|(TOTALS)|$BUILD/libfineibt_offline.a|; s/^/  /"

# ------------------------------------------------------ per process maps
cat >"$OUT/hello.c" <<'EOF'
#include <signal.h>
#include <stdio.h>

int main(void)
{
	printf("hello\n");
	fflush(stdout);
	raise(SIGSTOP);		/* the script reads our smaps, then continues us */
	return 0;
}
EOF
"$BUILD/fineibt-cc" -O2 -o "$OUT/hello_fi" "$OUT/hello.c"
clang-22 -O2 -o "$OUT/hello_plain" "$OUT/hello.c"

# maps PROG [ENV...]: one line of numbers for a process stopped in main.
maps() {
	local prog=$1 pid
	shift
	env "$@" "$prog" >/dev/null 2>&1 &
	pid=$!
	while [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != T ]; do
		kill -0 "$pid" 2>/dev/null || { echo "  $prog exited early"; return; }
		sleep 0.02
	done
	python3 - "$pid" <<'EOF'
import re, sys
pid = sys.argv[1]
lib = {"Size": 0, "Rss": 0, "Pss": 0, "Private_Dirty": 0}
# Its file mappings, and the anonymous one right after them (its .bss,
# which holds the runtime state).
mine = False
last = None
for l in open("/proc/%s/smaps" % pid):
    m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(\S*)", l)
    if m:
        name = m.group(3)
        if name.endswith("libfineibt.so") or name.endswith("libfineibt.so.0"):
            mine = True
        else:
            mine = mine and name == "" and last == m.group(1)
        last = m.group(2)
        continue
    k = l.split(":")[0]
    if mine and k in lib:
        lib[k] += int(l.split()[1])
roll = {}
for l in open("/proc/%s/smaps_rollup" % pid):
    k = l.split(":")[0]
    if k in ("Rss", "Pss", "Private_Dirty"):
        roll[k] = int(l.split()[1])
print("%8d %8d %8d %8d   %8d %8d %8d" % (lib["Size"], lib["Rss"], lib["Pss"],
      lib["Private_Dirty"], roll["Rss"], roll["Pss"], roll["Private_Dirty"]))
EOF
	kill -CONT "$pid"
	wait "$pid" || true
}

echo "per process, stopped in main (kB; libfineibt.so's mappings | whole process):"
printf '  %-22s %8s %8s %8s %8s   %8s %8s %8s\n' program Size Rss Pss Dirty \
	Rss Pss Dirty
printf '  %-22s' "plain clang-22"
maps "$OUT/hello_plain"
for m in off kcfi fineibt fineibt,paranoid; do
	printf '  %-22s' "fineibt cfi=$m"
	maps "$OUT/hello_fi" FINEIBT_CFI=$m
done
