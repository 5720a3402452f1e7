# Lua 5.4.4 (Debian source package lua5.4): the upstream `make linux`
# (interpreter lua and compiler luac). The source package ships no test
# suite, so the drivers are our scripts in scripts/real/lua/: every standard
# library function is a lua_CFunction called through a pointer, and sort,
# gsub, load, coroutines, __gc/__close and debug hooks call back and forth
# between C and Lua. luac lists one script's bytecode and
# compiles the other, which lua then loads through the undumper.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=lua5.4
TESTS=(stdlib bench luac)
QUICK_TESTS=(stdlib bench)
BENCH=(bench)
ICOUNT=(bench1)
PROBE="src/lua -v"
luadir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../lua" && pwd)

build_prog() {
	make -j"$JOBS" -C src CC="$CC" MYCFLAGS="$CFLAGS" \
		SYSCFLAGS="-DLUA_USE_LINUX" SYSLIBS="-Wl,-E -ldl" lua luac
}

run_test() {
	local t=$1 tree=$2
	case $t in
	stdlib) "$tree/src/lua" "$luadir/stdlib.lua" ;;
	bench)  "$tree/src/lua" "$luadir/bench.lua" 3 ;;
	bench1) "$tree/src/lua" "$luadir/bench.lua" 1 ;;
	luac)	# list the bytecode, then run it through the undumper
		"$tree/src/luac" -l -l -p "$luadir/stdlib.lua" &&
		"$tree/src/luac" -o b.luac "$luadir/bench.lua" &&
		"$tree/src/lua" b.luac 1 ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}

# luac -l prints prototype addresses.
filter_output() { sed -E 's/0x[0-9a-f]+/<addr>/g'; }
