#!/usr/bin/env bash
# What the module index's list of thunk calls without a check saves at
# start-up (docs/index.md, docs/bench.md "Listed thunk calls"): the same
# executable run with its version 2 index (the list: no scan of the text)
# and rewritten into a version 1 note (no list: the runtime scans the whole
# text), under callgrind (instructions: the whole process, the runtime's
# start-up and the thunk-call discovery) and perf stat (page faults,
# median of RUNS). Not a test: prints numbers.
# Usage: bench/index_tcalls.sh [PROGRAM [ARGS...]]   (BUILD=build, RUNS=9,
#        MODE=auto). Without PROGRAM: a generated one (NFUNCS=4000
#        address-taken functions, one call without a check), built here.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
runs=${RUNS:-9}
out=$BUILD/bench/index_tcalls
mkdir -p "$out"
if [ $# -eq 0 ]; then
	n=${NFUNCS:-4000}
	python3 - "$out/gen.c" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, 'w') as f:
    f.write('#include <stdio.h>\ntypedef int (*fn_t)(int);\n')
    for i in range(n):
        f.write(f'int f{i}(int x) {{ return x * {i % 7 + 1} + {i}; }}\n')
    f.write('fn_t volatile tab[] = {' + ','.join(f'f{i}' for i in range(n)) + '};\n')
    f.write('__attribute__((no_sanitize("kcfi"), noinline)) int u(int x) { return tab[1](x); }\n')
    f.write('int main(int c, char **v) { (void)v; printf("%d\\n", tab[c % %d](1) + u(1)); return 0; }\n'.replace('%d]', f'{n}]'))
PY
	"$BUILD/fineibt-cc" -O1 -o "$out/gen" "$out/gen.c"
	set -- "$out/gen"
fi
prog=$1
shift
cp "$prog" "$out/v2"
python3 - "$out/v2" "$out/v1" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.find(b'FineIBT\0')
d = i + 8
w = lambda n: struct.unpack_from('<I', b, d + 4 * n)[0]
assert struct.unpack_from('<I', b, i - 8)[0] == 156 and w(0) == 2, 'not a version 2 index'
print('index flags %d, listed thunk calls %d' % (w(1), w(22) if w(1) & 4 else 0))
struct.pack_into('<I', b, i - 8, 88)
struct.pack_into('<II', b, d, 1, w(1) & ~4)
struct.pack_into('<III', b, d + 88, 0, 56, 0)
b[d + 100:d + 156] = bytes(56)
open(sys.argv[2], 'wb').write(b)
PY
chmod +x "$out/v1" "$out/v2"
# fi_discover_tcalls is inlined: fi_elf_discover (all of discovery) holds it.
printf '%-4s %12s %12s %12s %8s\n' note total rt-hook discover faults
for v in v1 v2; do
	FINEIBT_CFI=${MODE:-auto} LD_LIBRARY_PATH=$BUILD valgrind --tool=callgrind \
		--dump-instr=no --callgrind-out-file="$out/$v.cg" "$out/$v" "$@" \
		>/dev/null 2>"$out/$v.err"
	callgrind_annotate --inclusive=yes "$out/$v.cg" >"$out/$v.ann" 2>/dev/null
	ir() { awk -v f=":$1\$" '$0 ~ f {gsub(",", "", $1); print $1; exit}' "$out/$v.ann"; }
	tot=$(awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}' "$out/$v.ann")
	for _ in $(seq "$runs"); do
		FINEIBT_CFI=${MODE:-auto} LD_LIBRARY_PATH=$BUILD perf stat -x, \
			-e page-faults "$out/$v" "$@" 2>&1 >/dev/null |
			awk -F, '/page-faults/ {print $1}'
	done | sort -n >"$out/$v.pf"
	pf=$(sed -n "$(( (runs + 1) / 2 ))p" "$out/$v.pf")
	printf '%-4s %12s %12s %12s %8s\n' "$v" "$tot" \
		"$(ir fineibt_rt_hook)" "$(ir fi_elf_discover)" "$pf"
done
