#!/usr/bin/env bash
# cache_regs: a hit of the shared text cache maps its module's registered
# arrays from the entry (docs/protection.md "The shared text cache",
# docs/runtime.md "Shared text"), and they are a private rewrite's.
#  - a hit (rt_cache with 1,000 generated functions linked in): its
#    /proc/PID/maps shows the entry mapped twice (the text, and
#    the arrays read-only), the registered module's entries, arities,
#    fingerprint sample and coarse bitmap lie in the second mapping, not
#    in anonymous memory, and their bytes, counts and ranges are those of
#    the same program rewritten privately (FINEIBT_CACHE=off), read from
#    both processes by gdb (skipped without gdb), in auto and in fineibt
#    (whose bitmap marks each preamble too); a confused call on a hit is
#    reported;
#  - a bad entry is a private rewrite with its reason, never a crash: the
#    arrays cut off (truncated), a record of the old format (its magic),
#    a header whose counts do not fit the record.
# Needs root (the service, writes to root's entries) and setpriv; skips
# otherwise.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"
cache_setup cache_regs

# rt_cache with 1,000 more address-taken functions (bench/gen_big.py):
# arrays of several pages, a record of thousands of sites.
python3 "$ROOT/bench/gen_big.py" "$T/gen" 1000 1 >/dev/null &&
"$FCC" -O1 -Dmain=gen_main -c -o "$T/gen/main.o" "$T/gen/main.c" &&
"$FCC" -O1 -c -o "$T/gen/part_00.o" "$T/gen/part_00.c" &&
"$FCC" -O2 -o "$T/rt_cache" "$RT_SRC/rt_cache.c" "$T/gen/part_00.o" \
	"$T/gen/main.o" -ldl ||
	{ rt_fail cache-regs-build "fineibt-cc could not build rt_cache"; exit 1; }
chmod 755 "$T/rt_cache"
P=$T/rt_cache
HIT='mapped from the cache'

start_svc || { rt_fail cache-regs-service "$(cat "$T/svc.log")"; exit 1; }

# cr NAME CMD...: CMD as nobody, the cache at $D, auto,debug.
cr() {
	local name=$1
	shift
	rt_run "cache-regs-$name" auto,debug env FINEIBT_CACHE="$D" "${NOBODY[@]}" "$@"
}

# The first start makes the key and asks for the entry, the second fills it.
for _ in 1 2; do
	cr fill "$P" run
	for _ in $(seq 100); do [ -n "$(entry_of)" ] && break; sleep 0.05; done
done
E=$U/$(entry_of)
[ -f "$E" ] || { rt_fail cache-regs-fill "no entry: $(cat "$T/svc.log")"; exit 1; }
cp "$E" "$T/entry.good"

# The executable's registered module, read by gdb: its counts and ranges,
# where its arrays are, and their bytes into $T/NAME.*.
GDB_REGS='
set $rt = &fi_rt_area.s.rt
set $i = 0
set $m = 0
while $i < $rt->nmods
  set $c = $rt->mods[$i]
  if $c != 0 && $c->text_lo <= (unsigned long)&main && (unsigned long)&main < $c->text_hi
    set $m = $c
  end
  set $i = $i + 1
end
set $b = $m->img.bias
set $w = (($m->text_hi - ($m->text_lo & ~15ul) + 15) / 16 + 63) / 64
printf "counts nfunc %lu nfp %lu base %#lx text %#lx %#lx words %lu\n", $m->nfunc, $m->nfp, $m->func_base, $m->text_lo - $b, $m->text_hi - $b, $w
printf "at %lx %lx %lx %lx %lx\n", $m, $m->func_off, $m->func_arity, $m->fp_site, $m->coarse_bits
dump binary memory OUT.off $m->func_off $m->func_off + $m->nfunc
dump binary memory OUT.arity $m->func_arity $m->func_arity + $m->nfunc
dump binary memory OUT.fp $m->fp_site $m->fp_site + $m->nfp
dump binary memory OUT.coarse $m->coarse_bits $m->coarse_bits + $w
set $j = 0
set $sfp = 0
while $j < sizeof($rt->seen) / sizeof($rt->seen[0])
  if $rt->seen[$j].mod == $m && $rt->seen[$j].fp_set
    set $sfp = $rt->seen[$j].fp
  end
  set $j = $j + 1
end
printf "fp %#lx\n", $sfp
'
# gdb_regs NAME: GDB_REGS on WPID, its three lines into $T/NAME.gdb.
gdb_regs() {
	printf '%s\n' "${GDB_REGS//OUT/$T/$1}" >"$T/$1.cmd"
	gdb -batch -nx -p "$WPID" -x "$T/$1.cmd" >"$T/$1.gdbraw" 2>&1
	grep -E '^(counts|at|fp) ' "$T/$1.gdbraw" >"$T/$1.gdb"
}
# in_map ADDR(hex) MAPS-LINE...: is ADDR in one of the lines' ranges?
in_map() {
	local a lo hi
	[ -n "$1" ] || return 1
	a=$((16#$1))
	shift
	for l in "$@"; do
		[[ $l =~ ^[0-9a-f]+-[0-9a-f]+\  ]] || continue
		lo=$((16#${l%%-*}))
		hi=${l#*-}
		hi=$((16#${hi%% *}))
		[ "$a" -ge "$lo" ] && [ "$a" -lt "$hi" ] && return 0
	done
	return 1
}

# ------------------------------------------------------------------- hit
run_wait hit auto "$P" wait
mapfile -t EM < <(grep -F " $E" "/proc/$WPID/maps")
have_gdb=false
command -v gdb >/dev/null && have_gdb=true
$have_gdb && gdb_regs hit
wait_go
perms=$(for l in "${EM[@]}"; do awk '{print $2}' <<<"$l"; done | sort | tr '\n' ' ')
if [ "$WRC" = 0 ] && grep -q "rt_cache: $HIT" "$T/hit.err" && [ "${#EM[@]}" = 2 ] &&
   [ "$perms" = "r--p r-xp " ]; then
	rt_pass "cache-regs-maps: a hit maps the entry twice, its text and its arrays read-only"
else
	rt_fail cache-regs-maps "rc=$WRC maps='${EM[*]}' err=$(cat "$T/hit.err")"
fi

if $have_gdb; then
	ro=$(printf '%s\n' "${EM[@]}" | grep ' r--p ')
	read -r _ mod off ar fp co <<<"$(grep '^at ' "$T/hit.gdb")"
	where=ok
	for a in "$off" "$ar" "$fp" "$co"; do
		in_map "$a" "$ro" || where="$a not in the entry's mapping"
	done
	in_map "$mod" "${EM[@]}" && where="the module itself ($mod) in the entry"
	if [ -n "$mod" ] && [ "$where" = ok ]; then
		rt_pass "cache-regs-where: the registered arrays are the entry's mapping, not anonymous memory"
	else
		rt_fail cache-regs-where "$where: $(cat "$T/hit.gdb") maps='${EM[*]}'"
	fi

	# same_as_own NAME CFI: the hit $T/NAME.* (taken in CFI) against a
	# private rewrite's in CFI.
	same_as_own() {
		local nf same=true
		run_wait "own-$1" "$2" env FINEIBT_CACHE=off "$P" wait
		gdb_regs "own-$1"
		wait_go
		for x in off arity fp coarse; do
			cmp -s "$T/$1.$x" "$T/own-$1.$x" || same=false
			[ -s "$T/own-$1.$x" ] || same=false
		done
		read -r _ _ nf _ <<<"$(grep '^counts' "$T/$1.gdb")"
		if [ "$WRC" = 0 ] && $same && grep -q 'rewritten to' "$T/own-$1.err" &&
		   [ "${nf:-0}" -gt 1000 ] &&
		   [ "$(grep '^counts' "$T/$1.gdb")" = "$(grep '^counts' "$T/own-$1.gdb")" ]; then
			rt_pass "cache-regs-same[$2]: a hit's registered arrays ($nf entries) are a private rewrite's, byte for byte"
		else
			rt_fail "cache-regs-same[$2]" "same=$same hit: $(cat "$T/$1.gdb") own: $(cat "$T/own-$1.gdb") $(cat "$T/own-$1.err")"
		fi
	}
	same_as_own hit auto

	# The fingerprint a hit registers is the one the service stored in
	# the arrays' header (struct fi_cache_regs: fp after 64 bytes), not
	# read from the text's pages, and the one a miss of the same key
	# reads from its own rewrite (the entry's text, byte for byte).
	hfp=$(python3 - "$E" "$(stat -c %s "$P")" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
copy = (int(sys.argv[2]) + 4095) & ~4095
regs = copy + struct.unpack_from("<Q", b, copy + 64)[0]
print("%#x" % struct.unpack_from("<Q", b, regs + 64)[0])
EOF
)
	mv "$E" "$T/entry.aside"
	run_wait miss auto "$P" wait
	gdb_regs miss
	wait_go
	mv -f "$T/entry.aside" "$E"
	fp_hit=$(awk '/^fp /{print $2}' "$T/hit.gdb")
	fp_miss=$(awk '/^fp /{print $2}' "$T/miss.gdb")
	if [ "$WRC" = 0 ] && grep -q "no entry yet; rewritten privately" "$T/miss.err" &&
	   [ -n "$fp_hit" ] && [ "$fp_hit" != 0x0 ] && [ "$fp_hit" = "$hfp" ] &&
	   [ "$fp_hit" = "$fp_miss" ]; then
		rt_pass "cache-regs-fp: a hit registers the entry's stored fingerprint, a miss's own"
	else
		rt_fail cache-regs-fp "hit=$fp_hit stored=$hfp miss=$fp_miss $(cat "$T/miss.err") $(tail -5 "$T/hit.gdbraw")"
	fi
	# FineIBT's bitmap marks each preamble too: a mode of its own entry.
	n0=$(ls "$U" | grep -cE '^[0-9a-f]{32}$')
	FINEIBT_CFI=fineibt FINEIBT_CACHE=$D "${NOBODY[@]}" "$P" run >/dev/null 2>&1
	for _ in $(seq 100); do
		[ "$(ls "$U" | grep -cE '^[0-9a-f]{32}$')" -gt "$n0" ] && break
		sleep 0.05
	done
	run_wait hit-fi fineibt "$P" wait
	gdb_regs hit-fi
	wait_go
	if grep -q "rt_cache: $HIT" "$T/hit-fi.err"; then
		same_as_own hit-fi fineibt
	else
		rt_fail "cache-regs-same[fineibt]" "not a hit: $(cat "$T/hit-fi.err")"
	fi
else
	echo "SKIP: cache-regs-where, cache-regs-same: no gdb"
fi

cr confuse "$P" confuse
if [ "$RT_RC" = 132 ] && grep -q "rt_cache: $HIT" <<<"$RT_ERR_TXT" &&
   grep -Eq "$RT_REPORT_RE" <<<"$RT_ERR_TXT" && grep -q 'as in: c1' <<<"$RT_ERR_TXT"; then
	rt_pass "cache-regs-confuse: a confused call on a hit is reported, its type found in the mapped entries"
else
	rt_fail cache-regs-confuse "rc=$RT_RC err='$RT_ERR_TXT'"
fi

# ------------------------------------------------------------- bad entries
# bad NAME WHY-RE PYTHON: the entry rewritten in place by PYTHON (b: its
# bytes, copy: the module copy's size; the record at b[copy:]), then a
# start: a private rewrite saying WHY-RE, calls working.
SIZE=$(stat -c %s "$P")
bad() {
	local name=$1 why=$2
	python3 - "$T/entry.good" "$E" "$SIZE" <<EOF || { rt_fail "cache-regs-$name" "cannot write the entry"; return; }
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
copy = (int(sys.argv[3]) + 4095) & ~4095
$3
with open(sys.argv[2], "r+b") as f:
    f.truncate(0)
    f.write(b)
EOF
	cr "$name" "$P" where
	if [ "$RT_RC" = 0 ] && grep -Eq "cache: .*$why[^;]*; rewritten privately" <<<"$RT_ERR_TXT" &&
	   ! grep -q "$HIT" <<<"$RT_ERR_TXT" && ! grep -q "^text $U" <<<"$RT_OUT_TXT"; then
		rt_pass "cache-regs-$name: a private rewrite, the reason said"
	else
		rt_fail "cache-regs-$name" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
}
# struct fi_cache_rec: magic 8, 3 counts, 8 arity counts, pad, base,
# regs_off, regs_len (src/elf/cacheid.h).
bad truncated 'no site record of this format with registered arrays' 'del b[copy + struct.unpack_from("<Q", b, copy + 64)[0]:]'
bad oldformat 'no site record of this format' 'b[copy:copy + 8] = b"FIBTREC1"'
bad counts 'do not fit their header' '
at = copy + struct.unpack_from("<Q", b, copy + 64)[0]
struct.pack_into("<I", b, at + 32, struct.unpack_from("<I", b, at + 32)[0] + 1)'
# and the entry put back is a hit again (the cases above were its bytes)
cp "$T/entry.good" "$E"
cr again "$P" where
if [ "$RT_RC" = 0 ] && grep -q "rt_cache: $HIT" <<<"$RT_ERR_TXT" && grep -q "^text $U" <<<"$RT_OUT_TXT"; then
	rt_pass "cache-regs-again: the entry restored is a hit again"
else
	rt_fail cache-regs-again "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
fi
