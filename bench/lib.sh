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
