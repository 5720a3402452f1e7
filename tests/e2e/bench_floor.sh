#!/usr/bin/env bash
# The runtime's output against an independent oracle: bench/floor.S writes
# the sequences of every mode by hand around the same loops and callees as
# bench/calls_kernel.c. Built with fineibt-cc and patched at load time, the
# loop and a callee must be byte-identical to the hand-written ones except
# for hash / rel32 immediates (differing runs of at most 4 bytes), and the
# calls must all happen (calls exits 1 on a wrong sum). A mode compared
# with another mode's floor must differ (the comparison discriminates).
# Both sequence sets: FINEIBT_SEQ=v6.18 against the MODE-v618 floors.
# No timing is asserted. Needs BUILD (fineibt-cc built) and FINEIBT_ROOT.
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
out=$BUILD/e2e/bench_floor
mkdir -p "$out"
if ! make -s -f bench/bench.mk BUILD="$BUILD" B="$out" NFUNCS=64 calls >"$out/build.log" 2>&1; then
	echo "FAIL: bench_floor/build: see $out/build.log"
	exit 1
fi

# same_code A B: the two "-d" outputs differ only in runs of <= 4 bytes
same_code() {
	python3 - "$1" "$2" <<'PY'
import re, sys
def dumps(s):
    return dict(re.findall(r"(\w+_code)=([0-9a-f]+)", s))
a, b = dumps(sys.argv[1]), dumps(sys.argv[2])
if set(a) != {"hot_code", "callee_code"} or set(b) != set(a):
    print("no dumps"); sys.exit(1)
for k in a:
    x, y = bytes.fromhex(a[k]), bytes.fromhex(b[k])
    i = 0
    while i < len(x):
        if x[i] == y[i]:
            i += 1
            continue
        j = i
        while j < len(x) and x[j] != y[j]:
            j += 1
        if j - i > 4:
            print("%s differs at +%d..+%d: %s vs %s" % (k, i, j, x[i:j].hex(), y[i:j].hex()))
            sys.exit(1)
        i = j
PY
}

check() {	# MODE FLOOR EXPECT(same|differ); $set: the sequence set
	local mode=$1 floor=$2 want=$3 a b why
	a=$(FINEIBT_SEQ=$set FINEIBT_CFI=$mode "$out/calls-cc" -d -H 100 -C 64 -r 1 2>&1) ||
		{ echo "FAIL: bench_floor/$mode: calls-cc: $a"; return; }
	b=$("$out/calls-floor-$floor" -d -H 100 -C 64 -r 1 2>&1) ||
		{ echo "FAIL: bench_floor/$mode: floor $floor: $b"; return; }
	mode=$mode/$set
	# A run of at most 4 bytes passes as an immediate, so a structural
	# difference next to a hash (kcfi's `41 ba` against off's `eb 0c`,
	# then the hash) reads as "same" when a byte of this process's random
	# hash happens to equal the floor's (about 1 in 256): a difference is
	# looked for in up to three processes, each with its own hash.
	local try=1
	while [ "$want" = differ ] && [ $try -lt 3 ] && same_code "$a" "$b" >/dev/null; do
		try=$((try + 1))
		a=$(FINEIBT_SEQ=$set FINEIBT_CFI=${mode%/*} "$out/calls-cc" -d -H 100 -C 64 -r 1 2>&1) ||
			{ echo "FAIL: bench_floor/$mode: calls-cc: $a"; return; }
	done
	if why=$(same_code "$a" "$b"); then
		[ "$want" = same ] && echo "PASS: bench_floor/$mode=hand-$floor" ||
			echo "FAIL: bench_floor/$mode vs hand-$floor: identical, expected a difference"
	else
		[ "$want" = differ ] && echo "PASS: bench_floor/$mode!=hand-$floor" ||
			echo "FAIL: bench_floor/$mode vs hand-$floor: $why"
	fi
}

for set in v4 v6.18; do
	s=""		# the floors' suffix of the set
	[ "$set" = v6.18 ] && s=-v618
	check off off$s same
	check kcfi kcfi$s same
	check fineibt fineibt$s same
	check fineibt,paranoid paranoid$s same
	check fineibt,bhi bhi$s same
	check fineibt,paranoid,bhi paranoid-bhi$s same
	check auto kcfi$s same		# the kernel's rule without user IBT
	check fineibt,norand fineibt$s same
	check fineibt paranoid$s differ
	check kcfi off$s differ
	check fineibt,bhi fineibt$s differ
done
# Each set's patched code against the other set's floor of the same mode.
for m in fineibt:fineibt fineibt,paranoid:paranoid \
	 fineibt,bhi:bhi fineibt,paranoid,bhi:paranoid-bhi; do
	set=v4 check "${m%%:*}" "${m#*:}-v618" differ
	set=v6.18 check "${m%%:*}" "${m#*:}" differ
done
# kcfi and off: both sets end the caller with the same CS-padded call, so
# the sets differ only in the 4 bytes of the check's failure branch, a run
# the immediate tolerance above cannot tell from a hash. Look for each
# set's check and call bytes (addl -15(%r11),%r10d; je .+2; ud2 or
# jne .+3; test $0xd6,%al; cs cs cs call *%r11) in the patched loop.
check_set() {	# MODE SET OWN OTHER (hex)
	local a
	a=$(FINEIBT_SEQ=$2 FINEIBT_CFI=$1 "$out/calls-cc" -d -H 100 -C 64 -r 1 2>&1) ||
		{ echo "FAIL: bench_floor/$1/$2 check bytes: calls-cc: $a"; return; }
	a=$(grep -o 'hot_code=[0-9a-f]*' <<<"$a")
	if [[ $a == *"$3"* && $a != *"$4"* ]]; then
		echo "PASS: bench_floor/$1/$2 check bytes"
	else
		echo "FAIL: bench_floor/$1/$2 check bytes: want $3 and not $4 in $a"
	fi
}
v4_check=450353f174020f0b2e2e2e41ffd3
v618_check=450353f17501a8d62e2e2e41ffd3
for m in off kcfi; do
	check_set $m v4 $v4_check $v618_check
	check_set $m v6.18 $v618_check $v4_check
done

# The peers of bench/peers.py and the independent-call loop: every build
# from C runs all three loops to the right sums (calls exits 1 otherwise)
# and prints the indep loop; the floors, which have none, do not.
peer() {
	local name=$1 out
	shift
	out=$("$@" -r 1 -H 1000 -C 256 2>&1)
	if [ $? = 0 ] && grep -q 'indep_min=' <<<"$out"; then
		echo "PASS: bench_floor/peer-$name"
	else
		echo "FAIL: bench_floor/peer-$name: $out"
	fi
}
peer nocfi "$out/calls-nocfi"
peer lto "$out/calls-lto"
peer cfi-icall "$out/calls-cfi-icall"
peer kcfi-nort "$out/calls-cc-nort"
for m in off kcfi auto; do
	peer "cc-$m" env FINEIBT_CFI=$m "$out/calls-cc"
done
if "$out/calls-floor-kcfi" -r 1 -H 1000 -C 256 | grep -q indep_; then
	echo "FAIL: bench_floor/floor-no-indep: a floor printed an indep loop"
else
	echo "PASS: bench_floor/floor-no-indep"
fi
