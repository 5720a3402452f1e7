# Shared by the bench scripts that count instructions with callgrind
# (source it; bash). Not a bench itself.

# bench_strip_lib LIB OUT: a copy of LIB without debug info at OUT.
# valgrind 3.19 cannot read clang-22's DWARF 5 in libfineibt.so.
bench_strip_lib() {
	llvm-objcopy-22 --strip-debug "$1" "$2"
}

# callgrind_ir [CALLGRIND OPTIONS...] PROG [ARGS...]: the instructions
# callgrind collected running PROG (its output discarded). Environment
# assignments written before the call reach PROG.
callgrind_ir() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# callgrind_objects CALLGRIND_OUT: "total ld.so libfineibt libc" self
# instructions of the process, by the object that executed them (ld.so's
# work on libfineibt.so is ld.so's; libc's functions libfineibt calls are
# libc's).
callgrind_objects() {
	python3 - "$1" <<'PY'
import re, sys, collections
names, ob, per, skip = {}, None, collections.Counter(), False
for line in open(sys.argv[1]):
    m = re.match(r'^(c?ob)=\((\d+)\)(?: (.*))?$', line)
    if m:
        if m.group(3) is not None:
            names[m.group(2)] = m.group(3).strip()
        if m.group(1) == 'ob':
            ob = names[m.group(2)]
        continue
    if line.startswith('calls='):
        skip = True
        continue
    if line[:1].isdigit() or line[:1] in '+-*':
        if skip:
            skip = False
            continue
        f = line.split()
        if len(f) >= 2:
            per[ob] += int(f[1])
def of(pat):
    return sum(c for o, c in per.items() if o and pat in o.rsplit('/', 1)[-1])
print(sum(per.values()), of('ld-linux'), of('libfineibt'), of('libc.so'))
PY
}

# strace_counts PROG [ARGS...]: "calls errors" of the whole process
# (strace -f -c), environment assignments before the call reaching PROG.
strace_counts() {
	local t
	t=$(mktemp)
	strace -f -c -o "$t" "$@" >/dev/null 2>&1
	awk '$NF == "total" { print $(NF-2), ($(NF-1) ~ /^[0-9]+$/ ? $(NF-1) : 0) }' "$t"
	rm -f "$t"
}

# bench_variants OUT LIBDIR...: a stripped copy of each LIBDIR's
# libfineibt.so.0 (or libfineibt.so) in OUT/vI/, for LD_LIBRARY_PATH=OUT/vI.
bench_variants() {
	local out=$1 i=0 lib d
	shift
	for lib in "$@"; do
		d=$out/v$i
		mkdir -p "$d"
		bench_strip_lib "$lib/libfineibt.so.0" "$d/libfineibt.so.0" 2>/dev/null ||
			bench_strip_lib "$lib/libfineibt.so" "$d/libfineibt.so.0"
		i=$((i + 1))
	done
}
