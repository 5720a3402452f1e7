#!/usr/bin/env bash
# rt_cxx: C++ through build/fineibt-c++ (virtual calls, std::function,
# std::sort with a lambda) in every cfi= mode, and a type-confused call
# through a function pointer caught (clang's kCFI does not check virtual
# calls); then fineibt-cc / fineibt-c++ as the compilers of a CMake
# project (configure, build, run).
. "$(dirname "$0")/progs/rt_lib.bash"

FCXX=$ROOT/$BUILD/fineibt-c++
P=$RT_OUT/rt_cxx
# rt_build with the C++ driver (a C++ link needs clang++ and libstdc++).
FCC=$FCXX rt_build "$P" -O2 "$RT_SRC/rt_cxx.cc" ||
	{ rt_fail build "fineibt-c++ could not build rt_cxx"; exit 1; }

for m in "${RT_MODES[@]}"; do
	rt_run cxx "$m" "$P"
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "cxx ok" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "cxx-calls[$m]"
	else
		rt_fail "cxx-calls[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	rt_run cxx-confuse "$m" "$P" confuse
	if rt_is_off "$m"; then
		[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = survived ] &&
			{ rt_pass "cxx-confuse[$m]: not checked"; continue; }
	elif [ "$RT_RC" = 132 ] &&
	     grep -Eq "${RT_REPORT_RE}_Z4halfd\\+0x0; .*mode: $(rt_report_mode "$m")\\)" <<<"$RT_ERR_TXT"; then
		rt_pass "cxx-confuse[$m]: caught"
		continue
	fi
	rt_fail "cxx-confuse[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
done

# CMake with fineibt-cc / fineibt-c++ as the compilers.
if ! command -v cmake >/dev/null 2>&1; then
	echo "rt_cxx: cmake not installed; CMake case skipped"
	exit 0
fi
C=$RT_OUT/cmake
rm -rf "$C"
mkdir -p "$C/src"
cp "$RT_SRC/rt_libc.c" "$RT_SRC/rt_cxx.cc" "$C/src/"
cat >"$C/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
project(fineibt_cmake C CXX)
add_executable(vfs rt_libc.c)
add_executable(cxx rt_cxx.cc)
CM
if (cd "$C" && cmake -S src -B b -DCMAKE_C_COMPILER="$FCC" \
	-DCMAKE_CXX_COMPILER="$FCXX" >cmake.log 2>&1 &&
    cmake --build b -j 2 >>cmake.log 2>&1); then
	rt_pass "cmake-configure-build"
else
	rt_fail "cmake-configure-build" "see $C/cmake.log"
	exit 0
fi
printf 'cmake\n' >"$C/in"
rt_run cmake-vfs auto "$C/b/vfs" "$C/in"
if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = cmake ]; then
	rt_pass "cmake-c-program[auto]"
else
	rt_fail "cmake-c-program[auto]" "rc=$RT_RC err='$RT_ERR_TXT'"
fi
rt_run cmake-cxx fineibt,paranoid,bhi "$C/b/cxx"
if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "cxx ok" ]; then
	rt_pass "cmake-cxx-program[fineibt,paranoid,bhi]"
else
	rt_fail "cmake-cxx-program[fineibt,paranoid,bhi]" "rc=$RT_RC err='$RT_ERR_TXT'"
fi
