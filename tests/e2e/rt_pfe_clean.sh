#!/usr/bin/env bash
# rt_pfe_clean: the entries of __patchable_function_entries at link-time
# values (docs/index.md, "Entries at link-time values"). fineibt-cc links
# with DT_RELR and takes the entries' relative relocations out of the
# table, so that the loader never writes the section's pages; the module
# index says so (FI_INDEX_PFE_LINK) and the runtime reads the entries
# adding the load bias. A library of 2,000 functions (16,000 bytes of
# entries), built with DT_RELR and with -z nopack-relative-relocs (RELA):
# - the files: RELR names no entry, DT_RELRSZ is the .relr.dyn section's
#   size and the other relative places are still there, the flag is set;
#   RELA keeps a record per entry and the flag clear, and so does a RELR
#   module without a module index (fineibt-ld without libfineibt_crt.a);
# - processes in kcfi, fineibt and fineibt,paranoid,bhi (private: a key of
#   their own): the calls work, the runtime rewrote as many preambles as
#   `fineibt inspect` finds in the file, and every page wholly inside the
#   RELR library's section is still the file's (/proc/self/pagemap); the
#   RELA library's were all written (what the RELR one's were before);
# - as root with setpriv: the same library from the shared text cache (a
#   hit, as nobody): calls work, the entry mapped, the pages clean.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/pfe_clean
mkdir -p "$D/relr" "$D/rela"
{ rt_build "$D/relr/libpfe.so" -O1 -fPIC -shared "$RT_SRC/rt_pfe_lib.c" &&
  rt_build "$D/relr/main" -O1 "$RT_SRC/rt_pfe_main.c" "$D/relr/libpfe.so" \
	-Wl,-rpath,"$D/relr" &&
  rt_build "$D/rela/libpfe.so" -O1 -fPIC -shared -Wl,-z,nopack-relative-relocs \
	"$RT_SRC/rt_pfe_lib.c" &&
  rt_build "$D/rela/main" -O1 -Wl,-z,nopack-relative-relocs \
	"$RT_SRC/rt_pfe_main.c" "$D/rela/libpfe.so" -Wl,-rpath,"$D/rela"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }

# relocs FILE: "relr_in relr_out rela_in relrsz_ok flag" for the entries.
relocs() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', b, 0x28)
shnum, shstr = struct.unpack_from('<HH', b, 0x3c)
sh = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + 64 * k) for k in range(shnum)]
names = sh[shstr][4]
name = lambda s: b[names + s[0]:b.index(b'\0', names + s[0])].decode()
pfe = [s for s in sh if name(s) == '__patchable_function_entries'][0]
lo, hi = pfe[3], pfe[3] + pfe[5]
dyn = [s for s in sh if s[1] == 6][0]
relrsz = 0
for o in range(dyn[4], dyn[4] + dyn[5], 16):
    tag, val = struct.unpack_from('<qQ', b, o)
    if tag == 35:
        relrsz = val
rin = rout = ain = 0
sized = 1
for s in sh:
    if s[1] == 19:                      # SHT_RELR
        sized = int(s[5] == relrsz)
        nxt = 0
        for o in range(s[4], s[4] + s[5], 8):
            w, = struct.unpack_from('<Q', b, o)
            at = [w] if not w & 1 else \
                 [nxt + (i - 1) * 8 for i in range(1, 64) if w >> i & 1]
            nxt = w + 8 if not w & 1 else nxt + 63 * 8
            for a in at:
                if lo <= a < hi: rin += 1
                else: rout += 1
    if s[1] == 4 and s[2] & 2:          # SHT_RELA, allocated
        for o in range(s[4], s[4] + s[5], 24):
            off, = struct.unpack_from('<Q', b, o)
            ain += lo <= off < hi
i = b.find(b'FineIBT\0')
flags, = struct.unpack_from('<I', b, i + 12) if i > 0 else (0,)
print(rin, rout, ain, sized, (flags >> 4) & 1)
PY
}

read -r rin rout ain sized flag < <(relocs "$D/relr/libpfe.so")
if [ "$rin" = 0 ] && [ "$ain" = 0 ] && [ "$rout" -ge 3 ] && [ "$sized" = 1 ] &&
   [ "$flag" = 1 ]; then
	rt_pass "pfe-relr-file: no relocation of an entry left, the others kept, the index flag set"
else
	rt_fail pfe-relr-file "relr in/out $rin/$rout, rela in $ain, size kept $sized, flag $flag"
fi
read -r rin rout ain sized flag < <(relocs "$D/rela/libpfe.so")
if [ "$rin" = 0 ] && [ "$ain" -ge 2000 ] && [ "$flag" = 0 ]; then
	rt_pass "pfe-rela-file: RELA output left with its $ain relocations of entries, no flag"
else
	rt_fail pfe-rela-file "relr in $rin, rela in $ain, flag $flag"
fi

# A stock-clang link through fineibt-ld without libfineibt_crt.a: RELR,
# no module index to say the entries are link-time, so they keep theirs.
KCFI=(-fsanitize=kcfi -fsanitize-kcfi-arity -fpatchable-function-entry=11,11
      -falign-functions=16 -fcf-protection=branch -mretpoline-external-thunk
      -mindirect-branch-cs-prefix)
if clang-22 -O1 "${KCFI[@]}" -fPIC -shared --ld-path="$ROOT/$BUILD/fineibt-ld" \
	-Wl,-z,pack-relative-relocs "$RT_SRC/rt_pfe_lib.c" -o "$D/libnoindex.so" &&
   read -r rin rout ain sized flag < <(relocs "$D/libnoindex.so") &&
   [ "$rin" -ge 2000 ] && [ "$flag" = 0 ]; then
	rt_pass "pfe-noindex-file: a RELR module without an index keeps its $rin relocations of entries"
else
	rt_fail pfe-noindex-file "relr in ${rin:-?}, flag ${flag:-?}"
fi

npre=$("$FIBT" inspect "$D/relr/libpfe.so" | awk '$1 == "preambles:" { print $2 }')
[ "${npre:-0}" -ge 2000 ] || rt_fail pfe-inspect "inspect finds ${npre:-no} preambles"
CALLS='calls 101 2001 1235'
for m in kcfi fineibt fineibt,paranoid,bhi; do
	for k in relr rela; do
		rt_run "pfe-$k-$m" "$m,debug" env FINEIBT_CACHE=off "$D/$k/main"
		read -r _ n _ c < <(grep '^pages' <<<"$RT_OUT_TXT")
		if [ "$k" = relr ]; then
			want=$n
		else
			want=0
		fi
		if [ "$RT_RC" = 0 ] && grep -qx "$CALLS" <<<"$RT_OUT_TXT" &&
		   grep -q "libpfe.so: rewritten to $m,debug (.* $npre preambles," <<<"$RT_ERR_TXT" &&
		   [ "${n:-0}" -ge 3 ] && [ "$c" = "$want" ]; then
			rt_pass "pfe-$k[$m]: $npre preambles rewritten, $c of $n entry pages clean"
		else
			rt_fail "pfe-$k[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$(head -c 600 <<<"$RT_ERR_TXT")'"
		fi
	done
done

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: pfe-hit: needs root and setpriv (the cache service)"
	exit 0
fi
C=$(mktemp -d /dev/shm/fineibt-pfe-test.XXXXXX)
chmod 711 "$C"
SVC_PID=
cleanup() {
	[ -n "$SVC_PID" ] && { kill "$SVC_PID" 2>/dev/null; wait "$SVC_PID" 2>/dev/null; }
	chattr -i "$C"/u*/key 2>/dev/null
	rm -rf "$C"
}
trap cleanup EXIT
chmod 755 "$D" "$D/relr"
"$FIBT" cached --dir "$C" 2>"$D/svc.log" &
SVC_PID=$!
for _ in $(seq 100); do [ -S "$C/sock" ] && break; sleep 0.05; done
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
ok=
for i in $(seq 40); do
	rt_run pfe-hit kcfi,debug env FINEIBT_CACHE="$C" "${NOBODY[@]}" "$D/relr/main"
	if grep -q "libpfe.so: mapped from the cache" <<<"$RT_ERR_TXT"; then
		ok=1
		break
	fi
	sleep 0.1
done
read -r _ n _ c < <(grep '^pages' <<<"$RT_OUT_TXT")
if [ -n "$ok" ] && [ "$RT_RC" = 0 ] && grep -qx "$CALLS" <<<"$RT_OUT_TXT" &&
   [ "${n:-0}" -ge 3 ] && [ "$c" = "$n" ]; then
	rt_pass "pfe-hit: the library mapped from the cache, $c of $n entry pages clean"
else
	rt_fail pfe-hit "out='$RT_OUT_TXT' err='$(head -c 600 <<<"$RT_ERR_TXT")' svc='$(head -c 300 "$D/svc.log")'"
fi
