#!/usr/bin/env bash
# rt_index_tcalls: the module index's NO_TCALLS flag (src/index.h,
# docs/index.md). fineibt-cc sets it only when its own scan of the linked
# output finds no call through a thunk without a kCFI check, and knew every
# thunk the index names; the runtime then skips its scan of the whole text
# for such calls. Checked: the flag is set for a module without such a
# call, clear for one with one (no_sanitize("kcfi")), set for a link with
# -s (no symbols: the driver's scan takes the thunks the index names, as
# the runtime does) and clear for such a link with the unchecked call; the runtime
# dethunks the unchecked call when the flag is clear (FINEIBT_VERBOSE's
# "dethunked" count is one more than with the flag forced on the same
# file, which shows the flag is what the runtime follows); every program
# runs correctly in every mode.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/index_tcalls
mkdir -p "$D"
{ rt_build "$D/plain" -O2 "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/unchecked" -O2 -DFI_UNCHECKED "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/stripped" -O2 -s "$RT_SRC/rt_tcall.c" &&
  rt_build "$D/unchecked-stripped" -O2 -s -DFI_UNCHECKED "$RT_SRC/rt_tcall.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

# flags FILE: the index's flags word (word 1 of the descriptor).
flags() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
i = b.find(b'FineIBT\0')
assert i > 12 and struct.unpack_from('<I', b, i - 4)[0] == 0x46490001
print(struct.unpack_from('<I', b, i + 8 + 4)[0])
PY
}

# force FILE OUT: a copy of FILE with NO_TCALLS set (a wrong index).
force() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.find(b'FineIBT\0')
w = struct.unpack_from('<I', b, i + 12)[0]
struct.pack_into('<I', b, i + 12, w | 2)
open(sys.argv[2], 'wb').write(b)
PY
	chmod +x "$2"
}

expect_flags() {
	local f want=$2
	f=$(flags "$D/$1")
	if [ "$f" = "$want" ]; then
		rt_pass "index-flags[$1]: $f"
	else
		rt_fail "index-flags[$1]" "flags $f, want $want"
	fi
}
expect_flags plain 3		# FILLED | NO_TCALLS
expect_flags unchecked 1	# FILLED: a thunk call without a check
expect_flags stripped 3		# FILLED | NO_TCALLS: thunks from the index
expect_flags unchecked-stripped 1	# FILLED: found with the index's thunks

# dethunked N of the executable's verbose line.
dethunked() {
	sed -nE 's/.*rewritten to .* ([0-9]+) dethunked.*/\1/p' <<<"$1" | head -1
}

force "$D/unchecked" "$D/unchecked-forced"
for m in "${RT_MODES[@]}"; do
	for p in plain unchecked stripped unchecked-stripped unchecked-forced; do
		rt_run tcall-$p "$m" "$D/$p"
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "tcall 6 8" ]; then
			rt_pass "runs[$p,$m]"
		else
			rt_fail "runs[$p,$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	done
	rt_is_fineibt "$m" || continue
	FINEIBT_VERBOSE=1 rt_run tcall-v "$m" "$D/unchecked"
	a=$(dethunked "$RT_ERR_TXT")
	FINEIBT_VERBOSE=1 rt_run tcall-vf "$m" "$D/unchecked-forced"
	b=$(dethunked "$RT_ERR_TXT")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$a" = $((b + 1)) ]; then
		rt_pass "dethunk[$m]: the unchecked call is found ($a vs $b with the flag forced)"
	else
		rt_fail "dethunk[$m]" "dethunked '$a' (flag clear) vs '$b' (forced)"
	fi
done
