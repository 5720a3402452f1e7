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

# callgrind_self CALLGRIND_OUT: one line a function that ran, its self
# instructions, object and name, tab-separated (a call's cost is the
# callee's, not counted again for the caller).
callgrind_self() {
	python3 - "$1" <<'PY'
import re, sys, collections
names, ob, fn, per, skip = {}, None, None, collections.Counter(), False
for line in open(sys.argv[1]):
    m = re.match(r'^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$', line)
    if m:
        kind, i, name = m.groups()
        table = names.setdefault(kind[-2:], {})
        if name is not None:
            table[i] = name.strip()
        if kind == 'ob':
            ob = table[i]
        elif kind == 'fn':
            fn = table[i]
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
            per[(ob, fn)] += int(f[1])
for (o, f), c in per.items():
    print("%d\t%s\t%s" % (c, o or "", f or ""))
PY
}

# callgrind_objects CALLGRIND_OUT: "total ld.so libfineibt libc" self
# instructions of the process, by the object that executed them (ld.so's
# work on libfineibt.so is ld.so's; libc's functions libfineibt calls are
# libc's).
callgrind_objects() {
	callgrind_self "$1" | awk -F '\t' '
		{ n = $2; sub(/.*\//, "", n); t += $1 }
		n ~ /ld-linux/ { l += $1 } n ~ /libfineibt/ { f += $1 } n ~ /libc\.so/ { c += $1 }
		END { printf "%d %d %d %d\n", t, l, f, c }'
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
