#!/usr/bin/env bash
# Writes src/libfineibt.order: the input sections of libfineibt.so a
# start-up runs or touches, which the link lays together (Makefile,
# fi_so_link; docs/bench.md, "What a start touches"). Run by hand after
# a change to what start-up calls or writes; the build only reads the
# file (no valgrind).
#
#   bash scripts/startup_order.sh      (BUILD=build, built first: make)
#
# The runs: a hello built by fineibt-cc -O2 in every mode (kcfi,norand,
# auto, kcfi, fineibt, paranoid, bhi), the same file patched statically
# (`fineibt patch --cfi=kcfi`), and, as root with `fineibt cached`
# running on a scratch directory, a plain executable calling a fineibt-cc
# library whose text comes from the cache (callgrind's own
# /proc/self/exe keeps an executable from hitting; a library does).
#
# Text: each run under callgrind; a function "ran" when it has
# instructions of its own in libfineibt.so. Listed as its section
# (-ffunction-sections: .text.NAME), or ARCHIVE:MEMBER .text for what the
# link takes from libc_nonshared.a; the assembly files' functions share
# .text and stay where they are. A function the runtime picks by CPU
# feature stands for its twins (valgrind's CPU has no AVX-512).
# Order: the functions every run ran first, then those of fewer runs; by
# name within each group, so the file depends on what ran and not on the
# layout it produced.
#
# .bss: each run under lackey (every load and store); a variable is
# "touched" when one falls in it (the state, fi_rt_area, is left out: it
# keeps its own pages, read-only and sealed from start-up's first window). Listed as its section
# (-fdata-sections: .bss.NAME). The variables under a page first, those
# most runs touch first, smallest first: on as few pages as their sizes
# allow, none straddling more than it must. Then the arrays of a page or
# more, of which a start touches the front only: the first right after
# the small ones (its front shares their last page when it fits), every
# other from a page boundary (". = ALIGN(4096);"), so that its front is
# one page, not two.
#
# Dropping or reordering lines changes the layout only, never behaviour.
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

# vg NAME PROG [ARGS...]: callgrind and lackey runs of PROG (the
# environment before the call reaching it; VG_AS: a command valgrind
# itself runs under), and where the loader put libfineibt.so.
vg() {
	local name=$1
	shift
	${VG_AS:-} valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name" "$@" \
		>/dev/null 2>&1 || { echo "startup_order: $name: callgrind failed" >&2; exit 1; }
	LD_DEBUG=files ${VG_AS:-} valgrind --tool=lackey --trace-mem=yes \
		--log-file="$out/mem.$name" "$@" >/dev/null 2>"$out/ld.$name" ||
		{ echo "startup_order: $name: lackey failed" >&2; exit 1; }
	sed -n '/file=[^ ]*libfineibt\.so[^ ]* .*generating link map/{n;s/.*base: \(0x[0-9a-f]*\).*/\1/p;q}' \
		"$out/ld.$name" >"$out/base.$name"
	[ -s "$out/base.$name" ] || { echo "startup_order: $name: no libfineibt.so" >&2; exit 1; }
}
for m in kcfi,norand auto kcfi fineibt paranoid bhi; do
	FINEIBT_CFI=$m FINEIBT_CACHE=off vg "$m" "$out/hello"
done
(unset FINEIBT_CFI; FINEIBT_CACHE=off vg patched "$out/hello.patched")

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	printf 'int lib_hello(void) { return 42; }\n' >"$out/lib.c"
	printf 'int lib_hello(void);\nint main(void) { return lib_hello() != 42; }\n' >"$out/main.c"
	"$BUILD/fineibt-cc" -O2 -fPIC -shared -o "$out/libh.so" "$out/lib.c"
	clang-22 -O2 -o "$out/main" "$out/main.c" -L"$out" -lh -Wl,-rpath,"$(realpath "$out")"
	chmod -R a+rX "$out"
	# nobody writes its callgrind output here; sticky: no one replaces
	# the files root built in it
	chmod a+wt "$out"
	cache=$(mktemp -d /dev/shm/fineibt-order.XXXXXX)
	chmod 711 "$cache"
	"$BUILD/fineibt" cached --dir "$cache" >/dev/null 2>&1 &
	svc=$!
	# The script's own status, not the killed service's 143 or chattr's
	# failure (set -e would stop the trap there with theirs).
	trap 'rc=$?; kill $svc 2>/dev/null; wait $svc 2>/dev/null || true; chattr -R -i "$cache" 2>/dev/null || true; rm -rf "$cache"; exit $rc' EXIT
	for _ in $(seq 100); do [ -S "$cache/sock" ] && break; sleep 0.05; done
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	# The service fills an entry after a few misses; a hit maps it.
	for _ in $(seq 40); do
		r=$(FINEIBT_CFI=auto,debug FINEIBT_CACHE=$cache "${nobody[@]}" "$out/main" 2>&1 >/dev/null || true)
		case $r in *"rewritten privately"*) ;; *"mapped from the cache"*) break ;; esac
		sleep 0.25
	done
	FINEIBT_CFI=auto FINEIBT_CACHE=$cache VG_AS="${nobody[*]}" vg hit "$out/main"
fi

# The sections each object offers a function or variable of its own,
# and the archive members the link takes from libc_nonshared.a
# (pthread_atfork: one .text each), listed as ARCHIVE:MEMBER.
for o in "$BUILD"/obj/*/*.c.o; do
	readelf -SW "$o" | sed -n 's/.* \(\.\(text\|bss\)\.[^ ]*\) .*/\1/p'
done | sort -u >"$out/sections"
nm -A --defined-only "$(clang-22 -print-file-name=libc_nonshared.a)" 2>/dev/null |
	sed -n 's|^.*/\([^/:]*\.a\):\([^:]*\): *[0-9a-f]* [TW] \(.*\)$|\3 \1:\2|p' >"$out/members"

# The functions that ran, by object (bench/lib.sh).
. bench/lib.sh
for f in "$out"/cg.*; do
	callgrind_self "$f" >"${f/\/cg./\/self.}"
done

python3 - "$out" "$BUILD/libfineibt.so" >src/libfineibt.order <<'PY'
import bisect, collections, glob, os, subprocess, sys
out, lib = sys.argv[1:]
PAGE = 4096
have = set(open(os.path.join(out, "sections")).read().split())
member = dict(l.split() for l in open(os.path.join(out, "members")))
# start.c picks one by the CPU's features.
twins = {"fi_rt_clear_ymm": ["fi_rt_clear_zmm"], "fi_rt_clear_zmm": ["fi_rt_clear_ymm"]}
runs = collections.Counter()
names_of = sorted(glob.glob(os.path.join(out, "cg.*")))
for f in names_of:
    ran = set()
    for line in open(f.replace("/cg.", "/self.")):
        ir, ob, fn = line.rstrip("\n").split("\t", 2)
        if int(ir) and "libfineibt" in os.path.basename(ob):
            n = fn.split("'")[0]
            ran.update([n] + twins.get(n, []))
    sec = set()
    for n in ran:
        if ".text." + n in have:
            sec.add(".text." + n)
        elif n in member:
            sec.add(member[n] + " .text")
    runs.update(sec)
# The .bss variables (symbol table: address, size) any run touched.
bss, syms = None, []
for l in subprocess.run(["readelf", "-SW", lib], capture_output=True, text=True).stdout.splitlines():
    p = l.split("]", 1)[-1].split()
    if len(p) > 4 and p[0] == ".bss":
        bss = (int(p[2], 16), int(p[2], 16) + int(p[4], 16))
for l in subprocess.run(["nm", "-nS", lib], capture_output=True, text=True).stdout.splitlines():
    p = l.split()
    if len(p) == 4 and p[2] in "bB":
        syms.append((int(p[0], 16), int(p[1], 16), p[3]))
starts = [a for a, _, _ in syms]
touched = collections.defaultdict(set)	# name -> the runs touching it
front = collections.Counter()		# name -> end of the bytes touched
for f in sorted(glob.glob(os.path.join(out, "mem.*"))):
    base = int(open(f.replace("/mem.", "/base.")).read(), 16)
    for line in open(f):
        if line[:2] not in (" S", " L", " M"):
            continue
        a, n = line[3:].split(",", 1)
        a = int(a, 16) - base
        if not bss[0] <= a < bss[1]:
            continue
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and a < syms[i][0] + max(syms[i][1], 1):
            v = syms[i]
            touched[v[2]].add(f)
            front[v[2]] = max(front[v[2]], a - v[0] + int(n))
size = {n: s for _, s, n in syms}
data = [n for n in touched if ".bss." + n in have and n != "fi_rt_area"]
small = sorted((n for n in data if size[n] < PAGE), key=lambda n: (-len(touched[n]), size[n], n))
large = sorted((n for n in data if size[n] >= PAGE), key=lambda n: (-len(touched[n]), front[n], n))
print("# libfineibt.so's start-up, laid together by the link (Makefile,")
print("# fi_so_link). Written by scripts/startup_order.sh from %d runs of" % len(names_of))
print("# hello (%s):" % "; ".join(os.path.basename(f)[3:] for f in names_of))
print("# the functions that ran, by how many runs ran each, then name")
print("# (ARCHIVE:MEMBER SECTION: a member's); the .bss variables touched:")
print("# those under a page by how many runs touched each, then size; then")
print("# the larger ones by runs, then the size of the front touched, each")
print("# but the first from a page of its own.")
for n in sorted(runs, key=lambda n: (-runs[n], n)):
    print(n)
for n in small:
    print(".bss." + n)
for i, n in enumerate(large):
    if i:
        print(". = ALIGN(%d);" % PAGE)
    print(".bss." + n)
PY
n_t=$(grep -c '\.text' src/libfineibt.order)
n_b=$(grep -c '^\.bss\.' src/libfineibt.order)
echo "startup_order: $n_t functions, $n_b variables from $(ls "$out"/cg.* | wc -l) runs"
