#!/usr/bin/env bash
# rt_index_tcalls: what the module index says of the thunk calls without
# a kCFI check (src/elf/index.h, docs/index.md). fineibt-cc's own scan of
# the linked output sets NO_TCALLS when there is none, and TCALL_LIST with
# their offsets when there are 1 to 16; the runtime then takes exactly the
# listed calls (each checked in the text) instead of scanning the whole
# text. Checked:
# - flags: set for a module without such a call, a list for one with one
#   (no_sanitize("kcfi")), the same for a link with -s (no symbols: the
#   driver's scan takes the thunks the index names, as the runtime does),
#   a list of 3 for rt_tcall_many, none past the capacity (20: scan);
# - the list the driver wrote equals what `fineibt inspect` finds by
#   scanning the same file (addresses compared);
# - the runtime follows the list, not a scan: in cfi=off (the mode that
#   makes these calls direct; the others leave them to the thunks' coarse
#   check), FINEIBT_VERBOSE's
#   "dethunked" count of a file whose list is emptied (a forged index) is
#   one less than the real one, the same as with NO_TCALLS forced; a list
#   with a bad entry (not a thunk call, out of order, over the capacity)
#   is refused with a warning and the text scanned (the real count);
# - a version 1 note (22 words, no list; rewritten from the real one)
#   is still read: the text scanned, and its NO_TCALLS still followed;
# - every program runs correctly in every mode.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/index_tcalls
mkdir -p "$D"
{ rt_build "$D/plain" -O2 "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/unchecked" -O2 -DFI_UNCHECKED "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/stripped" -O2 -s "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/unchecked-stripped" -O2 -s -DFI_UNCHECKED "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/many3" -O2 -DFI_N=3 "$RT_SRC/rt_tcall_many.c" &&
  rt_build "$D/many20" -O2 -DFI_N=20 "$RT_SRC/rt_tcall_many.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

# ix CMD FILE [OUT]: the index of FILE (python below).
#   flags: the flags word; list: the listed calls, link-time hex, one a line
#   force OUT: NO_TCALLS set; empty OUT: TCALL_LIST kept, count 0
#   bad OUT: the first entry moved one byte; order OUT: two entries swapped
#   over OUT: count 17; v1 OUT / v1-force OUT: a version 1 note (22 words,
#   the rest a padding note), flags as is / with NO_TCALLS
ix() {
	python3 - "$@" <<'PY'
import struct, sys
cmd, path = sys.argv[1], sys.argv[2]
b = bytearray(open(path, 'rb').read())
i = b.find(b'FineIBT\0')
assert i > 12 and struct.unpack_from('<I', b, i - 4)[0] == 0x46490001
d = i + 8                       # the descriptor, in the file
shoff, = struct.unpack_from('<Q', b, 0x28)
shnum, = struct.unpack_from('<H', b, 0x3c)
addr = None
for k in range(shnum):
    _, _, _, sa, so, sz = struct.unpack_from('<IIQQQQ', b, shoff + 64 * k)
    if sa and so <= d < so + sz:
        addr = sa + d - so      # its link-time address
w = lambda n: struct.unpack_from('<I', b, d + 4 * n)[0]
def put(n, v):
    struct.pack_into('<I', b, d + 4 * n, v & 0xffffffff)
if cmd == 'flags':
    print(w(1))
    sys.exit()
if cmd == 'list':
    if w(0) == 2 and w(1) & 4:
        for k in range(w(22)):
            off, = struct.unpack_from('<i', b, d + 4 * (23 + k))
            print(hex(addr + off))
    sys.exit()
if cmd == 'force':
    put(1, w(1) | 2)
elif cmd == 'empty':
    put(22, 0)
elif cmd == 'bad':
    put(23, w(23) + 1)
elif cmd == 'order':
    a, c = w(23), w(24)
    put(23, c)
    put(24, a)
elif cmd == 'over':
    put(22, 17)
elif cmd in ('v1', 'v1-force'):
    assert struct.unpack_from('<I', b, i - 8)[0] == 156
    struct.pack_into('<I', b, i - 8, 88)
    put(0, 1)
    put(1, (w(1) & ~4) | (2 if cmd == 'v1-force' else 0))
    # words 22-38 become a note of its own: namesz 0, type 0, 56 bytes
    struct.pack_into('<III', b, d + 88, 0, 56, 0)
    b[d + 100:d + 156] = bytes(56)
else:
    sys.exit('ix: ' + cmd)
open(sys.argv[3], 'wb').write(b)
PY
	[ -z "${3:-}" ] || chmod +x "$3"
}

expect_flags() {
	local f want=$2
	f=$(ix flags "$D/$1")
	if [ "$f" = "$want" ]; then
		rt_pass "index-flags[$1]: $f"
	else
		rt_fail "index-flags[$1]" "flags $f, want $want"
	fi
}
# Each also PFE_LINK (16): linked with DT_RELR, the entries' relocations
# taken out (docs/index.md, "Entries at link-time values").
expect_flags plain 19		# FILLED | NO_TCALLS
expect_flags unchecked 21	# FILLED | TCALL_LIST: a thunk call without a check
expect_flags stripped 19	# FILLED | NO_TCALLS: thunks from the index
expect_flags unchecked-stripped 21	# FILLED | TCALL_LIST: found with the index's thunks
expect_flags many3 21		# FILLED | TCALL_LIST: three
expect_flags many20 17		# FILLED: 20 do not fit in the list, the runtime scans

# The list the driver wrote is what a scan of the same file finds.
for p in unchecked many3; do
	want=$("$FIBT" inspect --list "$D/$p" |
	       sed -nE 's/^  thunk +(0x[0-9a-f]+) .*/\1/p')
	got=$(ix list "$D/$p")
	n=$(grep -c . <<<"$got")
	if [ -n "$got" ] && [ "$got" = "$want" ]; then
		rt_pass "index-list[$p]: $n listed, as inspect's scan finds"
	else
		rt_fail "index-list[$p]" "listed '$got', inspect finds '$want'"
	fi
done

# dethunked N of the executable's verbose line.
dethunked() {
	sed -nE 's/.*rewritten to .* ([0-9]+) dethunked.*/\1/p' <<<"$1" | head -1
}

ix force "$D/unchecked" "$D/unchecked-forced"
for f in empty bad v1 v1-force; do ix "$f" "$D/unchecked" "$D/unchecked-$f"; done
for f in empty bad order over v1; do ix "$f" "$D/many3" "$D/many3-$f"; done
V=(unchecked-empty unchecked-bad unchecked-v1 unchecked-v1-force
   many3-empty many3-bad many3-order many3-over many3-v1)
for m in "${RT_MODES[@]}"; do
	for p in plain unchecked stripped unchecked-stripped unchecked-forced; do
		rt_run tcall-$p "$m" "$D/$p"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "tcall 6 8" ]; then
			rt_pass "runs[$p,$m]"
		else
			rt_fail "runs[$p,$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	done
	# Only off makes the unchecked calls direct: every other mode leaves
	# them to the thunks' coarse check (compat_coarse.sh).
	rt_is_off "$m" || continue
	FINEIBT_VERBOSE=1 rt_run tcall-v "$m" "$D/unchecked"
	a=$(dethunked "$RT_ERR_TXT")
	FINEIBT_VERBOSE=1 rt_run tcall-vf "$m" "$D/unchecked-forced"
	b=$(dethunked "$RT_ERR_TXT")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$a" = $((b + 1)) ]; then
		rt_pass "dethunk[$m]: the unchecked call is found ($a vs $b with the flag forced)"
	else
		rt_fail "dethunk[$m]" "dethunked '$a' (flag clear) vs '$b' (forced)"
	fi
	# The variants: they run, and dethunk what the list or scan says.
	FINEIBT_VERBOSE=1 rt_run tcall-v3 "$m" "$D/many3"
	c=$(dethunked "$RT_ERR_TXT")
	for p in "${V[@]}"; do
		FINEIBT_VERBOSE=1 rt_run tcall-$p "$m" "$D/$p"
		got=$(dethunked "$RT_ERR_TXT")
		case $p in
		unchecked-empty|unchecked-v1-force) want=$b why="one less: the list (or flag) is followed, no scan" ;;
		many3-empty) want=$((c - 3)) why="three less: the empty list is followed, no scan" ;;
		unchecked-*) want=$a why="the real count: the text scanned" ;;
		*) want=$c why="the real count: the text scanned" ;;
		esac
		warn=no
		grep -q "list of thunk calls is refused" <<<"$RT_ERR_TXT" && warn=yes
		case $p in *-bad|*-order|*-over) wwant=yes ;; *) wwant=no ;; esac
		if [ "$RT_RC" = 0 ] && [[ $RT_OUT_TXT == tcall* ]] &&
		   [ -n "$got" ] && [ -n "$a" ] && [ -n "$c" ] &&
		   [ "$got" = "$want" ] && [ "$warn" = "$wwant" ]; then
			rt_pass "list[$p,$m]: dethunked $got, $why"
		else
			rt_fail "list[$p,$m]" "rc=$RT_RC dethunked '$got', want '$want' ($why); refused warning $warn, want $wwant; err='$RT_ERR_TXT'"
		fi
	done
done
