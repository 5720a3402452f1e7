#!/usr/bin/env bash
# report_proto: the prototype lines of the CFI failure report
# ("fineibt:   target: ..." / "fineibt:   expected: ...", src/trap/dwinfo.c)
# and their FINEIBT_LOG fields, for a program built with fineibt-cc -g
# whose functions have several signatures (struct pointers, typedefs,
# qualifiers, a function-pointer parameter, varargs). Each type-confused
# call is made in several modes; the printed prototypes are checked
# against the source and against llvm-dwarfdump-22 (an independent DWARF
# reader); without -g the lines are absent and the rest of the report is
# unchanged.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
. "$ROOT/tests/e2e/progs/sets.bash"	# fi_with_sets: both sequence sets
OUT=$ROOT/$BUILD/e2e/report_proto
FCC=$ROOT/$BUILD/fineibt-cc
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

cat >"$OUT/proto.c" <<'EOF'
#include <stdio.h>
#include <string.h>

struct item { int key; };
typedef unsigned long my_size;
typedef int (*item_cmp)(const struct item *, const struct item *);
typedef long (*cb_user)(long (*)(char *, unsigned), const char *const *);

#define FN __attribute__((noinline))

FN int cmp_asc(const struct item *a, const struct item *b) { return a->key - b->key; }
FN int cmp_desc(const struct item *a, const struct item *b) { return b->key - a->key; }
FN int by_value(struct item a, struct item b) { return a.key - b.key; }
FN long with_cb(long (*cb)(char *, unsigned), const char *const *argv) { return cb((char *)argv[0], 1); }
FN long other_cb(long (*cb)(char *, unsigned), const char *const *argv) { return argv != 0; }
FN my_size sized(my_size n, volatile char *p, ...) { return n + (my_size)*p; }
FN long take(char *s, unsigned n) { return (long)strlen(s) + n; }

item_cmp volatile cmps[] = { cmp_asc, cmp_desc };
cb_user volatile users[] = { other_cb };
void *volatile any[] = { (void *)by_value, (void *)with_cb, (void *)sized };

int main(int argc, char **argv)
{
	struct item x = { 1 }, y = { 2 };
	const char *args[] = { "ab", 0 };

	if (argc > 1 && !strcmp(argv[1], "cmp")) {
		item_cmp f = (item_cmp)any[0];
		printf("%d\n", f(&x, &y));
	} else if (argc > 1 && !strcmp(argv[1], "cb")) {
		/* with_cb has the same prototype: legal. */
		cb_user u = (cb_user)any[1];
		printf("%ld\n", u(take, args) + users[0](take, args));
		/* sized does not. */
		u = (cb_user)any[2];
		printf("%ld\n", u(take, args));
	} else {
		printf("%d %d\n", cmps[0](&x, &y), cmps[1](&x, &y));
	}
	return 0;
}
EOF

if ! "$FCC" -g -O1 "$OUT/proto.c" -o "$OUT/proto" >"$OUT/cc.log" 2>&1 ||
   ! "$FCC" -O1 "$OUT/proto.c" -o "$OUT/proto_nog" >>"$OUT/cc.log" 2>&1; then
	fail report_proto_build "fineibt-cc failed: $(tail -n 3 "$OUT/cc.log")"
	exit 0
fi

# oracle FUNC: the prototype of FUNC as llvm-dwarfdump-22 describes it.
oracle() {
	llvm-dwarfdump-22 --name="$1" --show-children "$OUT/proto" 2>/dev/null |
	python3 -c '
import re, sys
name = sys.argv[1]
ret, params, proto, level = "void", [], False, None
for line in sys.stdin:
    m = re.match(r"0x[0-9a-f]+:( *)(DW_TAG_\w+|NULL)", line)
    if m:
        depth = len(m.group(1))
        if level is None and m.group(2) == "DW_TAG_subprogram":
            level, cur = depth, "sub"
        elif level is not None and depth <= level:
            break
        elif level is not None and depth == level + 2:
            cur = m.group(2)
            if cur == "DW_TAG_unspecified_parameters":
                params.append("...")
        else:
            cur = None
        continue
    if level is None:
        continue
    t = re.match(r"\s+DW_AT_type\s+\(0x[0-9a-f]+ \"(.*)\"\)", line)
    if t and cur == "sub":
        ret = t.group(1)
    elif t and cur == "DW_TAG_formal_parameter":
        params.append(t.group(1))
    if cur == "sub" and re.match(r"\s+DW_AT_prototyped\s+\(true\)", line):
        proto = True
sep = "" if ret.endswith("*") else " "
print("%s%s%s(%s)" % (ret, sep, name, ", ".join(params) or ("void" if proto else "")))
' "$1"
}

# llvm-dwarfdump names struct/union/enum types without the keyword.
tag_less() { sed -E 's/\b(struct|union|enum) //g' <<<"$1"; }

# run NAME CFI ARG: sets RC, ERR (stderr) and LOG (the FINEIBT_LOG file).
run() {
	rm -f "$OUT/$1.log"
	{ FINEIBT_CFI=$2 FINEIBT_LOG=$OUT/$1.log "$OUT/${4:-proto}" "$3" \
		>"$OUT/$1.out" 2>"$OUT/$1.err" </dev/null; RC=$?; } 2>/dev/null
	ERR=$(cat "$OUT/$1.err")
	LOG=$OUT/$1.log
}

# The oracle agrees with the source on every signature first.
for pair in \
	"by_value|int by_value(struct item, struct item)" \
	"cmp_asc|int cmp_asc(const struct item *, const struct item *)" \
	"with_cb|long with_cb(long (*)(char *, unsigned int), const char *const *)" \
	"sized|my_size sized(my_size, volatile char *, ...)"; do
	f=${pair%%|*} want=${pair#*|}
	got=$(oracle "$f")
	if [ "$got" = "$(tag_less "$want")" ]; then
		pass "report_proto_oracle[$f]"
	else
		fail "report_proto_oracle[$f]" "llvm-dwarfdump gives '$got', source says '$want'"
	fi
done

# check CASE ARG TARGET EXPECTED_RE: the report of a confused call.
check() {
	local case=$1 arg=$2 target=$3 exp_re=$4 m want_t line_t line_e
	want_t=$(oracle "$target")
	for m in $(fi_with_sets auto kcfi fineibt fineibt,bhi); do
		run "$case-$m" "$m" "$arg"
		if [ "$RC" != 132 ] || ! grep -q "^fineibt: CFI failure at .*(target: $target+0x0; " <<<"$ERR"; then
			fail "report_proto_$case[caught,$m]" "rc=$RC err='$ERR'"
			continue
		fi
		line_t=$(sed -n 's/^fineibt:   target: //p' <<<"$ERR")
		line_e=$(sed -n 's/^fineibt:   expected: //p' <<<"$ERR")
		if [ "$(tag_less "$line_t")" = "$want_t" ]; then
			pass "report_proto_$case[target,$m]"
		else
			fail "report_proto_$case[target,$m]" "report '$line_t', llvm-dwarfdump '$want_t'"
		fi
		# The expected prototype is that of the first "as in" function.
		local first
		first=$(sed -n 's/^fineibt:   expected type 0x[0-9a-f]*, as in: \([^,]*\).*/\1/p' <<<"$ERR")
		if [ -n "$first" ] && [ "$(tag_less "$line_e")" = "$(oracle "$first")" ] &&
		   grep -Eq "^$exp_re\$" <<<"$line_e"; then
			pass "report_proto_$case[expected,$m]"
		else
			fail "report_proto_$case[expected,$m]" "as in '$first', report '$line_e', llvm-dwarfdump '$(oracle "$first")'"
		fi
		if python3 - "$LOG" "$line_t" "$line_e" <<'PY' 2>/dev/null
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["target_prototype"] == sys.argv[2] and r["expected_prototype"] == sys.argv[3]
PY
		then
			pass "report_proto_$case[log,$m]"
		else
			fail "report_proto_$case[log,$m]" "record: $(cat "$LOG" 2>&1)"
		fi
	done
}

check cmp cmp by_value 'int cmp_(asc|desc)\(const struct item \*, const struct item \*\)'
check cb cb sized 'long (with_cb|other_cb)\(long \(\*\)\(char \*, unsigned int\), const char \*const \*\)'

# Without DWARF: no prototype lines, the rest as before, JSON nulls.
run nog-auto auto cmp proto_nog
if [ "$RC" = 132 ] && grep -q '^fineibt: CFI failure at ' <<<"$ERR" &&
   grep -q '^fineibt:   expected type 0x[0-9a-f]*, as in: cmp_' <<<"$ERR" &&
   ! grep -q '^fineibt:   \(target\|expected\): ' <<<"$ERR" &&
   grep -q '"target_prototype":null,"expected_prototype":null' "$LOG"; then
	pass "report_proto_no_dwarf"
else
	fail "report_proto_no_dwarf" "rc=$RC err='$ERR' log='$(cat "$LOG" 2>&1)'"
fi
exit 0
