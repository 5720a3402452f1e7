#!/usr/bin/env bash
# Writes src/libfineibt.order: the functions of libfineibt.so a start-up
# runs, which the link lays first in its text (Makefile, fi_so_link;
# docs/bench.md, "What a start touches"). Run by hand after a change to
# what start-up calls; the build only reads the file (no valgrind).
#
#   bash scripts/startup_order.sh      (BUILD=build, built first: make)
#
# The runs: a hello built by fineibt-cc -O2 in every mode (kcfi,norand,
# auto, kcfi, fineibt, paranoid, bhi), the same file patched statically
# (`fineibt patch --cfi=kcfi`), and, as root with `fineibt cached`
# running on a scratch directory, a plain executable calling a fineibt-cc
# library whose text comes from the cache (callgrind's own
# /proc/self/exe keeps an executable from hitting; a library does).
# Each run under callgrind; a function "ran" when it has instructions of
# its own in libfineibt.so. Only names with a section of their own in
# the library's objects (-ffunction-sections: .text.NAME) are listed;
# the assembly files' functions share .text and stay where they are.
#
# The order: the functions every run ran first, then those of fewer
# runs; by name within each group, so the file depends on what ran and
# not on the layout it produced. Dropping or reordering names changes
# the layout only, never behaviour.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out=$BUILD/startup-order
rm -rf "$out"
mkdir -p "$out"
for t in "$BUILD/fineibt-cc" "$BUILD/fineibt" "$BUILD/libfineibt.so"; do
	[ -e "$t" ] || { echo "startup_order: $t missing (run make first)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "startup_order: needs valgrind" >&2; exit 2; }

printf '#include <stdio.h>\nint main(void) { printf("hello, world\\n"); return 0; }\n' >"$out/hello.c"
"$BUILD/fineibt-cc" -O2 -o "$out/hello" "$out/hello.c"
"$BUILD/fineibt" patch -q "$out/hello" -o "$out/hello.patched" --cfi=kcfi \
	--key 00112233445566778899aabbccddeeff

cg() {	# NAME PROG [ARGS...], the environment before the call reaching PROG
	local name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name" "$@" >/dev/null 2>&1 ||
		{ echo "startup_order: $name: callgrind failed" >&2; exit 1; }
}
for m in kcfi,norand auto kcfi fineibt paranoid bhi; do
	FINEIBT_CFI=$m FINEIBT_CACHE=off cg "$m" "$out/hello"
done
(unset FINEIBT_CFI; FINEIBT_CACHE=off cg patched "$out/hello.patched")

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	printf 'int lib_hello(void) { return 42; }\n' >"$out/lib.c"
	printf 'int lib_hello(void);\nint main(void) { return lib_hello() != 42; }\n' >"$out/main.c"
	"$BUILD/fineibt-cc" -O2 -fPIC -shared -o "$out/libh.so" "$out/lib.c"
	clang-22 -O2 -o "$out/main" "$out/main.c" -L"$out" -lh -Wl,-rpath,"$(realpath "$out")"
	chmod -R a+rX "$out"
	cache=$(mktemp -d /dev/shm/fineibt-order.XXXXXX)
	chmod 711 "$cache"
	"$BUILD/fineibt" cached --dir "$cache" 2>/dev/null &
	svc=$!
	trap 'kill $svc 2>/dev/null; wait $svc 2>/dev/null; chattr -R -i "$cache" 2>/dev/null; rm -rf "$cache"' EXIT
	for _ in $(seq 100); do [ -S "$cache/sock" ] && break; sleep 0.05; done
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	# The service fills an entry after a few misses; a hit maps it.
	for _ in $(seq 40); do
		r=$(FINEIBT_CFI=auto,debug FINEIBT_CACHE=$cache "${nobody[@]}" "$out/main" 2>&1 >/dev/null || true)
		case $r in *"rewritten privately"*) ;; *"mapped from the cache"*) break ;; esac
		sleep 0.25
	done
	FINEIBT_CFI=auto FINEIBT_CACHE=$cache cg hit "${nobody[@]}" "$out/main"
fi

# The sections each object offers a function of its own, and the
# archive members the link takes from libc_nonshared.a (pthread_atfork:
# one .text each), listed as ARCHIVE:MEMBER.
for o in "$BUILD"/obj/*/*.c.o; do
	readelf -SW "$o" | sed -n 's/.* \.text\.\([^ ]*\) .*/\1/p'
done | sort -u >"$out/sections"
nm -A --defined-only "$(clang-22 -print-file-name=libc_nonshared.a)" 2>/dev/null |
	sed -n 's|^.*/\([^/:]*\.a\):\([^:]*\): *[0-9a-f]* [TW] \(.*\)$|\3 \1:\2|p' >"$out/members"

python3 - "$out" >src/libfineibt.order <<'PY'
import collections, glob, os, re, sys
out = sys.argv[1]
have = set(open(os.path.join(out, "sections")).read().split())
member = dict(l.split() for l in open(os.path.join(out, "members")))
runs = collections.Counter()
files = sorted(glob.glob(os.path.join(out, "cg.*")))
for f in files:
    names, obn, fn, ran, skip = {}, {}, None, set(), False
    ob = None
    for line in open(f):
        m = re.match(r'^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$', line)
        if m:
            kind, i, name = m.groups()
            table = obn if kind.endswith('ob') else names
            if name is not None:
                table[i] = name.strip()
            if kind == 'ob':
                ob = obn[i]
            elif kind == 'fn':
                fn = names[i]
            continue
        if line.startswith('calls='):
            skip = True
            continue
        if line[:1].isdigit() or line[:1] in '+-*':
            if skip:
                skip = False
                continue
            p = line.split()
            if len(p) >= 2 and int(p[1]) and ob and 'libfineibt' in os.path.basename(ob):
                ran.add(fn.split("'")[0])
    runs.update(n if n in have else member[n] for n in ran if n in have or n in member)
print("# libfineibt.so's start-up functions, laid first in its text (Makefile,")
print("# fi_so_link). Written by scripts/startup_order.sh from %d callgrind" % len(files))
print("# runs of hello (%s);" % "; ".join(os.path.basename(f)[3:] for f in files))
print("# by how many runs ran each, then name. ARCHIVE:MEMBER: a member's .text.")
for n in sorted(runs, key=lambda n: (-runs[n], n)):
    print(n)
PY
echo "startup_order: $(grep -vc '^#' src/libfineibt.order) functions from $(ls "$out"/cg.* | wc -l) runs"
