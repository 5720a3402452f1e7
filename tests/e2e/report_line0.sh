#!/usr/bin/env bash
# report_line0: a call site whose DWARF line is 0 (DWARF's "no line": code
# the compiler merged from several lines, or '#line 0' here) is reported
# by its file alone, "call site: l0.c (call+0x..)", with "line":null in
# the FINEIBT_LOG record; it used to read "l0.c:0" and "line":0 (seen on
# a daemon whose failing call clang had merged). A site with a line keeps
# "file:line".
. "$(dirname "$0")/progs/rt_lib.bash"
D=$RT_OUT/report_line0
mkdir -p "$D"
cat >"$D/l0.c" <<'C'
typedef long (*fn_t)(long);
static int other(int a) { return a; }
void *volatile p = (void *)other;
__attribute__((noinline)) long call0(long x)
{
#line 0
	return ((fn_t)p)(x);
}
#line 20
__attribute__((noinline)) long call20(long x)
{
	return ((fn_t)p)(x);
}
int main(int argc, char **argv)
{
	(void)argv;
	return (int)(argc > 1 ? call20(1) : call0(1));
}
C
# Built from its directory: the report names the file as the compiler was given it.
(cd "$D" && rt_build "$D/l0" -g -O2 -Wno-gnu-zero-line-directive l0.c) ||
	{ rt_fail "report_line0 build" "fineibt-cc failed"; exit 1; }
for m in kcfi fineibt,paranoid; do
	rm -f "$D/log.json"
	FINEIBT_CFI=$m FINEIBT_LOG=$D/log.json "$D/l0" 2>"$D/err"
	rc=$?
	site=$(grep 'call site:' "$D/err")
	if [ "$rc" = 132 ] && [[ $site =~ ^fineibt:\ \ \ call\ site:\ l0\.c\ \(call0\+0x[0-9a-f]+\)$ ]]; then
		rt_pass "$m: line 0: the file alone"
	else
		rt_fail "$m: line 0: the file alone" "rc=$rc, '$site'"
	fi
	if grep -q '"file":"l0.c","line":null,' "$D/log.json"; then
		rt_pass "$m: line 0: \"line\":null in the record"
	else
		rt_fail "$m: line 0: \"line\":null in the record" "$(grep -o '"file".*' "$D/log.json")"
	fi
	FINEIBT_CFI=$m "$D/l0" x 2>"$D/err"
	site=$(grep 'call site:' "$D/err")
	if [[ $site =~ ^fineibt:\ \ \ call\ site:\ l0\.c:22\ \(call20\+0x[0-9a-f]+\)$ ]]; then
		rt_pass "$m: a line is kept"
	else
		rt_fail "$m: a line is kept" "'$site'"
	fi
done
exit 0
