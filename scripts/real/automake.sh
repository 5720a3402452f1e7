# Sourced by the progs/*.sh modules whose test is an automake harness.
# automake_check DIR: `make -C DIR check` as a real-program test: the
# harness's result lines (PASS/FAIL/SKIP/... and its "# " summary), the
# tail of each failed test's log for the diagnosis, and make's exit
# status. The harness writes its logs into DIR: one run at a time.
automake_check() {
	local dir=$1 rc f
	make -C "$dir" check >make.out 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS|# )' make.out
	sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' make.out | while read -r f; do
		echo "--- $f.log"; tail -n 20 "$dir/$f.log"; done
	return "$rc"
}
