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
